#!/usr/bin/env python3
"""Measure geocoding on roads it was not tuned on: the road folds of ../shared/data/autobahn.

  scripts/geocode-folds.py [--folds 0,1,2,3,4] [--situations offline,history,nominatim] [--nominatim-url URL]

Cuts the data with ../shared/tools/geocode-eval/make-folds.py (5 folds, seed 1; each fold's roads are
unseen in the others' sense: the code was tuned on none of them) and, per fold, runs the CLI as a
user would, in a fresh database each time:

  offline    ingest titles.xml (Atom, no coordinates) with the offline gazetteer; score vs titles.truth.csv
  history    ingest history.autobahn.json (positioned Autobahn API warnings: the store learns its
             junctions), then later-titles.xml; score vs later.truth.csv and later-new.truth.csv
             (titles never in the history)
  nominatim  the titles of all folds whose truth lies inside the OSM extracts of ../shared/data/osm,
             ingested with `--geocoder nominatim=URL,gazetteer` against the local Nominatim
             (../shared/tools/nominatim/setup.sh); scored on all of them and on those whose junction
             OSM has (../shared/data/osm/motorway_junctions.tsv)

Scores come from ../shared/tools/geocode-eval/truthcheck.py (within 1/2/5/10 km of all truth rows;
gross = placed more than 25 km off, as a share of the placed). Prints one Markdown table per
situation with each fold, the median over folds and the range; --json FILE keeps the raw numbers.
Also times the offline geocoding (`geocode pending` of titles.xml) and the history ingest.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from autobahn_eval import filter_atom, geodesic_m, inside_extracts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
EVAL = os.path.join(SHARED, "tools", "geocode-eval")
TUNING_FOLD = [0]
METRICS = ["within_1km", "within_2km", "within_5km", "within_10km", "gross_over_25km_of_positioned", "median_km"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def timed(cmd):
    start = time.monotonic()
    run(cmd, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def report_flag(binary):
    """`--reports` where the binary merges reports into events (docs/conflation.md): geocoding is
    scored on each report as it was placed, not on the event a positioned warning leads."""
    help_text = subprocess.run([binary, "export", "--help"], capture_output=True, text=True).stdout
    return ["--reports"] if "--reports" in help_text else []


def score(binary, db, truth, work, name):
    export = os.path.join(work, f"{name}.geojson")
    run([binary, "export", "--db", db, "--format", "geojson", "-o", export] + report_flag(binary), stderr=subprocess.DEVNULL)
    out = run([sys.executable, os.path.join(EVAL, "truthcheck.py"), export, truth], capture_output=True, text=True).stdout
    return json.loads(out)


def calibration_rows(export_path, truth_path):
    """(confidence, precision, error km) of each geocoded incident of an export that has a truth row."""
    truth = {r["id"]: r for r in csv.DictReader(open(truth_path, encoding="utf-8"))}
    out = []
    for f in json.load(open(export_path, encoding="utf-8")).get("features", []):
        p = f.get("properties") or {}
        # Feature ids are "SOURCE#ID" (the feed's id after the source's name).
        fid = str(f.get("id"))
        r = truth.get(fid) or truth.get(fid.rsplit("#", 1)[-1])
        if r is None or p.get("positionSource") != "geocoder" or p.get("confidence") is None:
            continue
        g = f["geometry"]
        lon, lat = g["coordinates"][0] if g["type"] == "LineString" else g["coordinates"]
        out.append((p["confidence"], p.get("precision"), geodesic_m(float(r["lat"]), float(r["lon"]), lat, lon) / 1000))
    return out


def calibration_table(rows):
    """Confidence band → observed error: what a confidence means."""
    print("\n### Confidence band → observed error (geocoded incidents of the folds reported above)\n")
    print("| confidence | incidents | median error km | ≤ 2 km | ≤ 5 km | ≤ 10 km | > 25 km | precisions |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for lo, hi in [(0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)]:
        band = [r for r in rows if lo <= r[0] < hi]
        if not band:
            continue
        errs = [r[2] for r in band]
        share = lambda f: f"{sum(1 for e in errs if f(e)) / len(errs) * 100:.1f}%"
        precisions = {}
        for r in band:
            precisions[r[1]] = precisions.get(r[1], 0) + 1
        label = f"{lo:.1f} – {min(hi, 1):.1f}" + ("" if hi < 1 else " (incl.)")
        print(f"| {label} | {len(band)} | {statistics.median(errs):.2f} | {share(lambda e: e <= 2)} | {share(lambda e: e <= 5)} | "
              f"{share(lambda e: e <= 10)} | {share(lambda e: e > 25)} | "
              + ", ".join(f"{k} {v}" for k, v in sorted(precisions.items(), key=lambda kv: -kv[1])) + " |")


def fmt(v, key):
    if v is None:
        return "–"
    if key == "median_km":
        return f"{v:.2f}"
    return f"{v * 100:.1f}%"


def table(title, rows):
    """rows: [(label, metrics dict)]; adds the median and range over the folds."""
    print(f"\n### {title}\n")
    print("| fold | truth | placed | ≤ 1 km | ≤ 2 km | ≤ 5 km | ≤ 10 km | > 25 km (of placed) | median km |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, m in rows:
        shown = label + (" (tuning fold)" if label == f"fold-{TUNING_FOLD[0]}" else "")
        print(f"| {shown} | {m['truth']} | {m['positioned']} | " + " | ".join(fmt(m.get(k), k) for k in METRICS) + " |")
    reported = [(label, m) for label, m in rows if label != f"fold-{TUNING_FOLD[0]}"]
    if len(reported) > 1:
        cells = []
        for k in METRICS:
            values = [m[k] for _, m in reported if m.get(k) is not None]
            cells.append(f"{fmt(statistics.median(values), k)} ({fmt(min(values), k)}–{fmt(max(values), k)})" if values else "–")
        print(f"| **median (range) of the {len(reported)} unseen folds** | | | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", default="0,1,2,3,4")
    ap.add_argument("--situations", default="offline,history")
    ap.add_argument("--nominatim-url", default="http://127.0.0.1:8088")
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    ap.add_argument("--work", help="folder for the folds and databases (default: a new temporary one)")
    ap.add_argument("--json", help="write the raw numbers here")
    ap.add_argument("--tuning-fold", type=int, default=0,
                    help="the fold the resolver was tuned on: shown, but left out of the median and the calibration (default 0)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(EVAL, "make-folds.py")):
        sys.exit(f"needs {EVAL} (../shared beside the repository)")
    if not os.path.exists(a.binary):
        run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT)
    work = a.work or tempfile.mkdtemp(prefix="trafficgeo-folds-")
    folds_dir = os.path.join(work, "folds")
    if not os.path.exists(os.path.join(folds_dir, "fold-4", "later-new.truth.csv")):
        run([sys.executable, os.path.join(EVAL, "make-folds.py"), folds_dir], stdout=subprocess.DEVNULL)
    folds = [int(f) for f in a.folds.split(",")]
    TUNING_FOLD[0] = a.tuning_fold
    situations = a.situations.split(",")
    results = {"offline": [], "history": [], "history-new": [], "nominatim": [], "nominatim-osm": [], "timings": {}}
    calibration = []

    for k in folds:
        d = os.path.join(folds_dir, f"fold-{k}")
        if "offline" in situations:
            db = os.path.join(work, f"offline-{k}.sqlite")
            if os.path.exists(db):
                os.remove(db)
            run([a.binary, "ingest", "--quiet", "--db", db, "--no-geocode", os.path.join(d, "titles.xml")])
            seconds = timed([a.binary, "geocode", "pending", "--quiet", "--db", db, "--geocoder", "gazetteer"])
            results["timings"][f"offline-geocode-{k}"] = seconds
            results["offline"].append((f"fold-{k}", score(a.binary, db, os.path.join(d, "titles.truth.csv"), work, f"offline-{k}")))
            if k != a.tuning_fold:
                calibration += calibration_rows(os.path.join(work, f"offline-{k}.geojson"), os.path.join(d, "titles.truth.csv"))
            print(f"fold-{k} offline: {results['offline'][-1][1]} ({seconds:.2f} s geocoding)", file=sys.stderr)
        if "history" in situations:
            db = os.path.join(work, f"history-{k}.sqlite")
            if os.path.exists(db):
                os.remove(db)
            seconds = timed([a.binary, "ingest", "--quiet", "--db", db, "--no-geocode", os.path.join(d, "history.autobahn.json")])
            results["timings"][f"history-ingest-{k}"] = seconds
            run([a.binary, "ingest", "--quiet", "--db", db, "--geocoder", "gazetteer", os.path.join(d, "later-titles.xml")])
            results["history"].append((f"fold-{k}", score(a.binary, db, os.path.join(d, "later.truth.csv"), work, f"history-{k}")))
            results["history-new"].append((f"fold-{k}", score(a.binary, db, os.path.join(d, "later-new.truth.csv"), work, f"history-{k}")))
            if k != a.tuning_fold:
                calibration += calibration_rows(os.path.join(work, f"history-{k}.geojson"), os.path.join(d, "later.truth.csv"))
            print(f"fold-{k} history: {results['history'][-1][1]} ({seconds:.2f} s history ingest)", file=sys.stderr)

    if "nominatim" in situations:
        # Every title of the data inside the extracts: the folds' titles are capped at 1,500 per
        # fold, so the truth comes from all warnings of the roads that cross the extracts.
        feed, truth = os.path.join(work, "osm-titles.xml"), os.path.join(work, "osm-titles.truth.csv")
        run([sys.executable, os.path.join(SHARED, "tools", "autobahn2atom.py"), os.path.join(SHARED, "data/autobahn/warnings-dev.csv.xz"),
             "--unique-titles", "--atom", feed, "--truth", truth, "--roads", "A5,A6,A656,A61,A659,A9,A70"], stderr=subprocess.DEVNULL)
        rows = list(csv.DictReader(open(truth, encoding="utf-8")))
        rows = [r for r in rows if inside_extracts(r)]
        osm_names = {row["name"] for row in csv.DictReader(open(os.path.join(SHARED, "data/osm/motorway_junctions.tsv"), encoding="utf-8"), delimiter="\t")}
        fold_name = lambda n: n.lower().replace(" ", "").replace("kreuz", "").replace("dreieck", "")
        osm_folded = {fold_name(n) for n in osm_names}

        def osm_has(title):
            # The first junction of "A5 | Heidelberg/Dossenheim - Kreuz Heidelberg" (the one a position hangs on).
            names = title.split("|", 1)[-1].split(" - ")
            first = fold_name(names[0]) if names else ""
            return any(part in osm_folded for part in [first] + first.split("/"))

        for path, subset in ((truth + ".inside.csv", rows), (truth + ".osm.csv", [r for r in rows if osm_has(r["title"])])):
            with open(path, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(subset)
        inside_feed = os.path.join(work, "osm-titles.inside.xml")
        filter_atom(feed, {r["id"] for r in rows}, inside_feed)
        db = os.path.join(work, "nominatim.sqlite")
        if os.path.exists(db):
            os.remove(db)
        run([a.binary, "ingest", "--quiet", "--db", db, "--geocoder", f"nominatim={a.nominatim_url},gazetteer", inside_feed])
        results["nominatim"].append(("all", score(a.binary, db, truth + ".inside.csv", work, "nominatim")))
        results["nominatim-osm"].append(("all", score(a.binary, db, truth + ".osm.csv", work, "nominatim")))

    if results["offline"]:
        table("Offline gazetteer, no history (titles.xml → titles.truth.csv)", results["offline"])
    if results["history"]:
        table("History, then titles (later-titles.xml → later.truth.csv)", results["history"])
        table("… titles never in the history (later-new.truth.csv)", results["history-new"])
    if results["nominatim"]:
        table("Local Nominatim + gazetteer, incidents inside the OSM extracts", results["nominatim"])
        table("… where OSM has the first junction", results["nominatim-osm"])
    if calibration:
        calibration_table(calibration)
    if results["timings"]:
        print("\nTimings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(results["timings"].items())))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
