#!/usr/bin/env python3
"""SIGKILL trafficgeo at random moments of ingest, `geocode pending` and `geocode batch`, and
check that nothing is lost (docs/robustness.md).

  scripts/crash-trials.py [--trials 20] [--bin .build/debug/trafficgeo] [--seed 1] [ingest pending batch]

Each kind first makes a reference: the same work, uninterrupted. Then, per trial, it starts the
work on a fresh copy of the starting state, kills it with SIGKILL after a random delay, and checks:
  - `trafficgeo stats --check` passes: PRAGMA integrity_check ok, rtreecheck ok, the spatial index finds
    exactly the located incidents;
  - the interrupted state is whole: for ingest, the database is the state before or after the feed
    (one transaction), never a mix; for batch, the output file is absent or complete;
  - running the same command again completes, and the final state equals the reference.
The geocoder is a real HTTP server on loopback (answers in a few ms, deterministic per query).
Exit status 0 when every trial passed, 1 otherwise.
"""
import argparse
import hashlib
import http.server
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Geocoder(http.server.BaseHTTPRequestHandler):
    """Nominatim jsonv2: a deterministic point in Germany per query, after 2 ms."""
    def do_GET(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query).get("q", [""])[0]
        h = hashlib.sha256(q.encode()).digest()
        lat = 48 + h[0] / 255 * 6
        lon = 7 + h[1] / 255 * 7
        time.sleep(0.002)
        body = json.dumps([{"place_id": int.from_bytes(h[:4], "big"), "lat": f"{lat:.6f}", "lon": f"{lon:.6f}",
                            "display_name": q, "name": q, "category": "highway", "type": "motorway_junction",
                            "addresstype": "road", "importance": 0.5}]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed mid-request: that is the point

    def log_message(self, *args):
        pass


def atom(path, count, coords, seed, prefix):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n<title>t</title>\n')
        for i in range(count):
            href = f"https://traffic.example/?id={prefix}{i}"
            if coords:
                href += f"&amp;lat={rnd.uniform(47.3, 55):.6f}&amp;lon={rnd.uniform(5.9, 15):.6f}"
            f.write(f"<entry><id>{prefix}{i}</id><title>A{i % 9 + 1} : Ort{i} - Stadt{i}</title>"
                    f'<link rel="alternate" href="{href}"/><updated>2025-05-19T04:{i % 60:02d}:00Z</updated>'
                    f"<summary>zwischen AS Ort{i} und AS Dorf{i} Stau</summary></entry>\n")
        f.write("</feed>\n")


def state(db):
    """Every incident's stored fields and geocoding status, as one digest plus a row count."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("""SELECT s.name, i.external_id, i.title, i.summary, i.latitude, i.longitude, i.content_hash,
                          i.geocode_status, i.position_source FROM incidents i JOIN sources s ON s.id = i.source_id
                          ORDER BY s.name, i.external_id""").fetchall()
    con.close()
    return len(rows), hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def check_db(binary, db):
    p = subprocess.run([binary, "stats", "--check", "--db", db], capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip().splitlines()[-1:] if p.returncode else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kinds", nargs="*", default=["ingest", "pending", "batch"])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--bin", default=os.environ.get("TRAFFICGEO_BIN", os.path.join(ROOT, ".build/debug/trafficgeo")))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--entries", type=int, default=20000, help="entries of the ingest feed")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"crash-trials: no trafficgeo binary at {binary} (swift build, or --bin)")
    rnd = random.Random(a.seed)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Geocoder)
    server.handle_error = lambda request, address: None  # killed clients drop connections
    threading.Thread(target=server.serve_forever, daemon=True).start()
    geocoder = ["--geocoder", f"nominatim=http://127.0.0.1:{server.server_address[1]}", "--concurrency", "4", "--timeout", "5s"]
    work = tempfile.mkdtemp(prefix="trafficgeo-crash-")
    failures = []

    def tg(*args, check=True):
        p = subprocess.run([binary, *args, "-q"], capture_output=True, text=True)
        if check and p.returncode not in (0, 3):
            raise RuntimeError(f"trafficgeo {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
        return p

    def run_killed(args, low, high):
        delay = rnd.uniform(low, high)
        p = subprocess.Popen([binary, *args, "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=delay)
            return delay, False  # finished before the kill
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
            return delay, True

    def copy_db(src, dst):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(src + suffix):
                shutil.copyfile(src + suffix, dst + suffix)
            elif os.path.exists(dst + suffix):
                os.remove(dst + suffix)

    try:
        for kind in a.kinds:
            start = time.time()
            killed = 0
            base = os.path.join(work, f"{kind}-base.sqlite")
            ref = os.path.join(work, f"{kind}-ref.sqlite")
            if kind == "ingest":
                first, second = os.path.join(work, "first.xml"), os.path.join(work, "second.xml")
                atom(first, a.entries // 2, True, 1, "e")
                atom(second, a.entries, True, 2, "e")  # updates every old entry (moved), adds as many new
                tg("ingest", "--no-geocode", "--db", base, first)
                command = ["ingest", "--no-geocode", second]
            elif kind == "pending":
                feed = os.path.join(work, "unlocated.xml")
                atom(feed, 1500, False, 3, "u")
                tg("ingest", "--no-geocode", "--db", base, feed)
                command = ["geocode", "pending", *geocoder]
            else:
                batch_in = os.path.join(work, "batch.csv")
                with open(batch_in, "w") as f:
                    f.write("id,place\n" + "".join(f"{i},Ort{i} Kreis{i % 50}\n" for i in range(1500)))
                command = ["geocode", "batch", batch_in, "--column", "place", "--mode", "query", *geocoder]
                if os.path.exists(base):
                    os.remove(base)
            before = state(base) if os.path.exists(base) else None
            if os.path.exists(base):
                copy_db(base, ref)
            t0 = time.time()
            ref_out = os.path.join(work, f"{kind}-ref.out")
            tg(*command, "--db", ref, *(["-o", ref_out] if kind == "batch" else []))
            full = time.time() - t0
            after = state(ref)
            ref_text = open(ref_out).read() if kind == "batch" else None

            for trial in range(1, a.trials + 1):
                db = os.path.join(work, f"{kind}-trial.sqlite")
                out = os.path.join(work, f"{kind}-trial.out")
                for path in (out,):
                    if os.path.exists(path):
                        os.remove(path)
                if os.path.exists(base):
                    copy_db(base, db)
                else:
                    for suffix in ("", "-wal", "-shm"):
                        if os.path.exists(db + suffix):
                            os.remove(db + suffix)
                extra = ["--db", db] + (["-o", out] if kind == "batch" else [])
                delay, was_killed = run_killed(command + extra, 0.05, max(0.1, full * 0.8))
                killed += was_killed
                problems = []
                if os.path.exists(db):
                    ok, why = check_db(binary, db)
                    if not ok:
                        problems.append(f"check failed after the kill: {why}")
                    mid = state(db)
                    if kind == "ingest" and mid not in (before, after):
                        problems.append(f"half-written ingest: {mid}, expected {before} or {after}")
                if kind == "batch" and os.path.exists(out) and open(out).read() != ref_text:
                    problems.append("a partial batch output file")
                tg(*command, *extra)
                ok, why = check_db(binary, db)
                if not ok:
                    problems.append(f"check failed after the re-run: {why}")
                if state(db) != after:
                    problems.append(f"final state {state(db)} differs from the uninterrupted run {after}")
                if kind == "batch" and (not os.path.exists(out) or open(out).read() != ref_text):
                    problems.append("the re-run's batch output differs from the uninterrupted run's")
                if problems:
                    failures.append((kind, trial, delay, problems))
                    print(f"  {kind} trial {trial} (kill at {delay:.2f} s): " + "; ".join(problems), file=sys.stderr)
            print(f"crash-trials: {kind}: {a.trials} trials, {killed} killed mid-run (uninterrupted run {full:.1f} s, "
                  f"{after[0]} incidents), {sum(1 for f in failures if f[0] == kind)} failed ({time.time() - start:.0f} s)",
                  file=sys.stderr)
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
