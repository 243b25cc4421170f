#!/usr/bin/env python3
"""Checks an installed trafficgeo as an operator meets it (scripts/install-check runs this after
installing the .deb with the build tree gone): from a folder that is not the source tree, it runs
`--version`, an ingest of a shipped sample feed, `near`, a place-name `near Köln` (the gazetteer
from the install), `serve` with /health, /ready (ready, then 503 once the source is stale) and
/metrics parsed by prometheus_client's parser, the feed loop with its metrics textfile, and
`systemd-analyze verify` on the installed units.

    python3 scripts/install-check.py --binary /usr/bin/trafficgeo --share /usr/share/trafficgeo --units /lib/systemd/system
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, file=sys.stderr)
    if not condition:
        failures.append(what)
    return condition


def run(binary, *arguments, cwd):
    result = subprocess.run([binary, *arguments], cwd=cwd, capture_output=True, text=True, timeout=300,
                            env={k: v for k, v in os.environ.items() if not k.startswith("TRAFFICGEO_")})
    return result


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def samples(text):
    """{(name, frozenset(labels)): value} from the exposition, through prometheus_client's parser."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(parsed, name, **labels):
    return parsed.get((name, frozenset(labels.items())))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--share", required=True, help="where the install put places.tsv and sample/")
    parser.add_argument("--units", help="where the install put the systemd units (skipped without)")
    parser.add_argument("--version", help="the version the binary must report")
    a = parser.parse_args()
    binary, sample = a.binary, os.path.join(a.share, "sample")
    work = tempfile.mkdtemp(prefix="trafficgeo-install-check-")
    db = os.path.join(work, "desk.sqlite")

    version = run(binary, "--version", cwd=work)
    check(version.returncode == 0 and (a.version is None or version.stdout.strip() == a.version),
          f"trafficgeo --version: {version.stdout.strip()!r}")
    check(os.path.exists(os.path.join(a.share, "places.tsv")), "the gazetteer is installed")

    ingest = run(binary, "ingest", "--db", db, os.path.join(sample, "lmst.de_DE.xml"), cwd=work)
    check(ingest.returncode == 0 and "12 new" in ingest.stderr, f"ingest of a sample feed: {ingest.stderr.strip()}")
    near = run(binary, "near", "--db", db, "--lat", "50.94", "--lon", "6.96", "--limit", "3", "--format", "json", cwd=work)
    rows = json.loads(near.stdout) if near.returncode == 0 else []
    check(len(rows) == 3, f"near --lat 50.94 --lon 6.96: {len(rows)} rows")
    by_name = run(binary, "near", "Köln", "--db", db, "--limit", "3", "--format", "json", cwd=work)
    check(by_name.returncode == 0 and len(json.loads(by_name.stdout or "[]")) == 3,
          f"near Köln (the installed gazetteer): exit {by_name.returncode} {by_name.stderr.strip()}")
    # The world's towns, offline, for places a user types (an English and an American desk).
    for place, lat, lon in (("London", 51.5, -0.13), ("Denver", 39.74, -104.98), ("Lyon", 45.75, 4.85)):
        found = run(binary, "geocode", "--db", db, "--json", place, cwd=work)
        answer = json.loads(found.stdout or "{}") if found.returncode == 0 else {}
        best = (answer.get("candidates") or [{}])[0].get("coordinate", {})
        check(abs(best.get("latitude", 0) - lat) < 0.2 and abs(best.get("longitude", 0) - lon) < 0.2,
              f"geocode {place} offline: exit {found.returncode} {found.stdout.strip()[:200]} {found.stderr.strip()[:200]}")
        near = run(binary, "near", place, "--db", db, "--limit", "1", "--format", "json", cwd=work)
        check(near.returncode == 0, f"near {place} offline: exit {near.returncode} {near.stderr.strip()}")
    titles = run(binary, "ingest", "--db", db, os.path.join(sample, "titles.xml"), cwd=work)
    check(titles.returncode == 0 and re.search(r"geocoded 6: [1-6] found", titles.stderr) is not None,
          f"titles without positions placed by the gazetteer: {titles.stderr.strip()}")

    # serve: /health, /ready, /metrics. Both sources read again just before, so that /ready is
    # asked within --ready-max-age of their last read however long the steps above took.
    for feed in ("lmst.de_DE.xml", "titles.xml"):
        again = run(binary, "ingest", "--db", db, "--no-geocode", os.path.join(sample, feed), cwd=work)
        check(again.returncode == 0, f"{feed} read again: {again.stderr.strip()}")
    log = open(os.path.join(work, "serve.log"), "w+")
    serve = subprocess.Popen([binary, "serve", "--db", db, "--port", "0", "--ready-max-age", "6s"], cwd=work,
                             stdout=subprocess.DEVNULL, stderr=log)
    try:
        port = None
        for _ in range(300):
            log.seek(0)
            found = re.search(r"http://127\.0\.0\.1:(\d+)/", log.read())
            if found:
                port = int(found.group(1))
                break
            time.sleep(0.1)
        check(port is not None, "serve started")
        base = f"http://127.0.0.1:{port}"
        status, body = get(base + "/health")
        check(status == 200 and json.loads(body).get("status") == "alive", f"/health: {status} {body}")
        status, body = get(base + "/ready")
        check(status == 200 and json.loads(body).get("ready") is True, f"/ready while fresh: {status} {body}")
        returned = 0
        for limit in (2, 4, 6):
            status, body = get(f"{base}/collections/incidents/items?lat=50.94&lon=6.96&limit={limit}&f=json")
            returned += len(json.loads(body)["features"])
        # An event stream held open while metrics are read.
        stream = urllib.request.urlopen(base + "/collections/incidents/events", timeout=30)
        stream.readline()
        status, text = get(base + "/metrics")
        stream.close()
        check(status == 200, "/metrics answers")
        parsed = samples(text)
        stats = json.loads(run(binary, "stats", "--db", db, "--format", "json", cwd=work).stdout)
        route = "/collections/incidents/items"
        check(value(parsed, "trafficgeo_http_requests_total", route=route, status="200") == 3, "requests counted by route and status")
        check(value(parsed, "trafficgeo_http_request_duration_seconds_count", route=route) == 3, "latency histogram counts them")
        check(value(parsed, "trafficgeo_http_request_duration_seconds_bucket", route=route, le="+Inf") == 3, "latency histogram buckets")
        check(value(parsed, "trafficgeo_items_returned_total") == returned == 12, f"items returned: {returned}")
        check(value(parsed, "trafficgeo_sse_clients") == 1, "the open event stream is counted")
        check(value(parsed, "trafficgeo_store_incidents", state="all") == stats["incidents"], "store incidents, all")
        check(value(parsed, "trafficgeo_store_incidents", state="active") == stats["active"], "store incidents, active")
        check(value(parsed, "trafficgeo_change_feed_head") == stats["change_feed"]["latest"], "change-feed head")
        sources = [h["source"] for h in stats["feed_health"]]
        check(len(sources) == 2 and all(value(parsed, "trafficgeo_source_last_success_age_seconds", source=s) is not None for s in sources),
              "each source's age")
        check(all(value(parsed, "trafficgeo_source_consecutive_failures", source=s) == 0 for s in sources), "each source's failures")
        time.sleep(6.5)
        status, body = get(base + "/ready")
        stale = [s.get("source") for s in json.loads(body).get("stale", [])]
        check(status == 503 and sorted(stale) == sorted(sources), f"/ready once the sources are stale: {status} {body}")
        serve.send_signal(signal.SIGTERM)
        check(serve.wait(timeout=30) == 0, "serve stops on SIGTERM with exit 0")
    finally:
        if serve.poll() is None:
            serve.kill()

    # The feed loop and its textfile.
    prom = os.path.join(work, "trafficgeo.prom")
    loop = subprocess.Popen([binary, "ingest", "--db", os.path.join(work, "loop.sqlite"), "--every", "1s", "--metrics-file", prom,
                             "--log-format", "json", os.path.join(sample, "titles.xml"), os.path.join(sample, "incidents.rss")],
                            cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(3.5)
    loop.send_signal(signal.SIGTERM)
    _, loop_log = loop.communicate(timeout=60)
    check(loop.returncode == 0, f"the feed loop stops on SIGTERM with exit 0 ({loop.returncode})")
    check(all(json.loads(line).get("message") for line in loop_log.splitlines()), "its log is JSON lines")
    parsed = samples(open(prom).read())
    titles_source = os.path.join(sample, "titles.xml")
    check((value(parsed, "trafficgeo_feed_reads_total", source=titles_source, outcome="success") or 0) >= 2,
          "the loop's textfile counts reads")
    check((value(parsed, "trafficgeo_geocoder_requests_total", provider="gazetteer") or 0) >= 1, "and geocoder requests")
    check(value(parsed, "trafficgeo_feed_consecutive_failures", source=titles_source) == 0, "and failures in a row")

    if a.units:
        units = [os.path.join(a.units, name) for name in ("trafficgeo-serve.service", "trafficgeo-ingest.service")]
        verify = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True)
        complaints = [line for line in verify.stderr.splitlines() if "trafficgeo" in line]
        check(verify.returncode == 0 and not complaints, f"systemd-analyze verify: {verify.returncode} {complaints}")

    if failures:
        print(f"install-check: {len(failures)} failed", file=sys.stderr)
        sys.exit(1)
    print("install-check: all passed", file=sys.stderr)


if __name__ == "__main__":
    main()
