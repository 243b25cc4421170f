#!/usr/bin/env python3
"""Measure how close geocoding from road titles comes to the true positions.

Uses ../shared/data/autobahn (real Autobahn warnings with true coordinates) and
../shared/tools/autobahn2atom.py to make a freiefahrt-shaped Atom feed WITHOUT coordinates (one
entry per unique title), ingests it with `trafficgeo ingest` (which geocodes), exports the result
and compares each position with the warning's true point.

  scripts/measure-accuracy.py gazetteer [--limit N]                       # offline gazetteer, all of Germany
  scripts/measure-accuracy.py nominatim --url http://127.0.0.1:8088       # incidents inside the Nominatim extracts

Prints a Markdown table: share within 1, 2, 5, 10 km (unplaced incidents count as misses), the
median error of the placed ones, and the share placed per precision. The baseline row is the
naive method: the first title name looked up in the gazetteer, most populous match.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

from autobahn_eval import filter_atom, geodesic_m, inside_extracts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def load_gazetteer():
    by_name = {}
    with open(os.path.join(ROOT, "data/gazetteer/places.tsv"), encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["country"] != "DE":
                continue
            place = (float(row["latitude"]), float(row["longitude"]), int(row["population"]))
            for name in [row["name"]] + row["alternatenames"].split("|"):
                key = name.strip().lower()
                if key and (key not in by_name or by_name[key][2] < place[2]):
                    by_name[key] = place
    return by_name


def baseline(title, gazetteer):
    """The first name after the road: 'A4 : Krombach - Wenden' -> Krombach, most populous match."""
    rest = title.split(":", 1)[-1] if ":" in title else title.split("|", 1)[-1]
    first = rest.split(" - ")[0].strip()
    hit = gazetteer.get(first.lower())
    return (hit[0], hit[1]) if hit else None


def summarise(label, errors, total, precisions=None):
    within = lambda km: sum(1 for e in errors if e is not None and e <= km * 1000) / total * 100
    placed = [e for e in errors if e is not None]
    median = statistics.median(placed) / 1000 if placed else float("nan")
    prec = ""
    if precisions:
        prec = ", ".join(f"{k} {v / total * 100:.0f}%" for k, v in sorted(precisions.items(), key=lambda kv: -kv[1]))
    return (f"| {label} | {total} | {len(placed) / total * 100:.1f}% | {within(1):.1f}% | {within(2):.1f}% | "
            f"{within(5):.1f}% | {within(10):.1f}% | {median:.2f} | {prec} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("geocoder", choices=["gazetteer", "nominatim"])
    ap.add_argument("--url", default="http://127.0.0.1:8088")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    a = ap.parse_args()
    data = os.path.join(SHARED, "data/autobahn/warnings-dev.csv.xz")
    if not os.path.exists(data):
        sys.exit(f"needs {data} (../shared beside the repository)")
    if not os.path.exists(a.binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="trafficgeo-accuracy-")
    feed, truth = os.path.join(work, "feed.xml"), os.path.join(work, "truth.csv")
    cmd = [sys.executable, os.path.join(SHARED, "tools/autobahn2atom.py"), data, "--unique-titles", "--atom", feed, "--truth", truth]
    if a.limit:
        cmd += ["--limit", str(a.limit)]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    rows = list(csv.DictReader(open(truth, encoding="utf-8")))
    if a.geocoder == "nominatim":
        keep = {r["id"] for r in rows if inside_extracts(r)}
        # Rewrite the feed with only the incidents inside the extracts.
        cmd = [sys.executable, os.path.join(SHARED, "tools/autobahn2atom.py"), data, "--unique-titles", "--atom", feed,
               "--truth", truth, "--roads", "A5,A6,A656,A61,A659,A9,A70"]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        rows = [r for r in csv.DictReader(open(truth, encoding="utf-8")) if inside_extracts(r)]
        keep = {r["id"] for r in rows}
        filtered = os.path.join(work, "feed-inside.xml")
        filter_atom(feed, keep, filtered)
        feed = filtered
        geocoder = f"nominatim={a.url},gazetteer"
    else:
        geocoder = "gazetteer"
    db = os.path.join(work, "db.sqlite")
    subprocess.run([a.binary, "ingest", "--db", db, "--geocoder", geocoder, feed], check=True)
    # Each report as it was placed (a binary that merges reports into events answers events otherwise).
    reports = ["--reports"] if "--reports" in subprocess.run([a.binary, "export", "--help"], capture_output=True, text=True).stdout else []
    out = subprocess.run([a.binary, "export", "--db", db, "--include-unlocated", "--format", "json"] + reports, check=True,
                         capture_output=True, text=True).stdout
    found = {x["id"]: x for x in json.loads(out)}
    gazetteer = load_gazetteer()
    errors, base_errors, precisions = [], [], {}
    for r in rows:
        lat, lon = float(r["lat"]), float(r["lon"])
        x = found.get(r["id"])
        if x and x.get("coordinate"):
            c = x["coordinate"]
            errors.append(geodesic_m(lat, lon, c["latitude"], c["longitude"]))
            precisions[x.get("precision") or "?"] = precisions.get(x.get("precision") or "?", 0) + 1
        else:
            errors.append(None)
            precisions["none"] = precisions.get("none", 0) + 1
        title = r["title"]
        b = baseline(title.replace("|", ":"), gazetteer)
        base_errors.append(geodesic_m(lat, lon, b[0], b[1]) if b else None)
    print("| method | incidents | placed | ≤ 1 km | ≤ 2 km | ≤ 5 km | ≤ 10 km | median error km (placed) | precision |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print(summarise(f"trafficgeo, {geocoder.split('=')[0]}" + (" + gazetteer" if a.geocoder == "nominatim" else ""),
                    errors, len(rows), precisions))
    print(summarise("baseline: first title name, most populous GeoNames place", base_errors, len(rows)))


if __name__ == "__main__":
    main()
