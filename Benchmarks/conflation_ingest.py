#!/usr/bin/env python3
"""Three feeds of 50,000 reports each, ingested with merging into events and without, alternated.

The feeds (scripts/make-conflation-scenario.py --every-feed): 50,000 real Autobahn warnings as
the Autobahn API's JSON, the same as DATEX II v2 (moved points, other words and ids) and as an
Atom feed with its positions in the weblinks, each a report of every warning: 150,000 reports
of 50,000 events. Each round ingests the three into a fresh database, once with merging (the
default) and once with `trafficgeo events --set merging=off` first, in alternating order; the
medians, their spread and the ratio are printed. The target (issue 48): merging costs at most
1.3x the time without it. Optionally a second binary (--baseline, a build from before events)
joins the alternation without the settings step.

  Benchmarks/conflation_ingest.py [--rounds 5] [--binary .build/release/trafficgeo] [--baseline OLD_BINARY] [--events 50000]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEEDS = ["autobahn.json", "situations.datex2.xml", "police.atom"]


def ingest_all(binary, feeds, db, merging):
    """Seconds to ingest the three feeds into a new database (and the events it then holds)."""
    if merging is not None:
        subprocess.run([binary, "events", "--db", db, "--set", f"merging={'on' if merging else 'off'}"], check=True, capture_output=True)
    started = time.monotonic()
    for feed in feeds:
        subprocess.run([binary, "ingest", "-q", "--no-geocode", "--db", db, feed], check=True)
    seconds = time.monotonic() - started
    count = None
    if merging is not None:
        out = subprocess.run([binary, "events", "--db", db], check=True, capture_output=True, text=True).stdout
        count = out.strip().splitlines()[-1]
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    return seconds, count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--events", type=int, default=50000)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    ap.add_argument("--baseline", help="an older binary (before events) to alternate with as well")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trafficgeo-conflation-bench-")
    try:
        scenario = os.path.join(work, "feeds")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make-conflation-scenario.py"), "--out", scenario, "--fold", "all",
                        "--first-day", "2025-05-01", "--day-count", "60", "--events", str(a.events), "--every-feed", "--atom-positions",
                        "--no-us", "--opposite", "0", "--keep-ambiguous"], check=True)
        feeds = [os.path.join(scenario, f) for f in FEEDS]
        runs = {"merging": [], "no merging": []}
        if a.baseline:
            runs["baseline binary"] = []
        counts = {}
        for r in range(a.rounds):
            order = list(runs) if r % 2 == 0 else list(reversed(list(runs)))
            for name in order:
                binary = a.baseline if name == "baseline binary" else a.binary
                merging = None if name == "baseline binary" else name == "merging"
                seconds, count = ingest_all(binary, feeds, os.path.join(work, f"{name}-{r}.sqlite"), merging)
                runs[name].append(seconds)
                if count:
                    counts[name] = count
                print(f"round {r + 1}: {name}: {seconds:.2f} s", file=sys.stderr)
        median = {name: statistics.median(v) for name, v in runs.items()}
        for name, values in runs.items():
            print(f"{name:16} median {median[name]:.2f} s (spread {min(values):.2f}–{max(values):.2f}) {counts.get(name, '')}")
        ratios = sorted(m / n for m, n in zip(runs["merging"], runs["no merging"]))
        print(f"merging / no merging: {median['merging'] / median['no merging']:.2f}x (per round {ratios[0]:.2f}–{ratios[-1]:.2f}; target ≤ 1.3x)")
        if a.baseline:
            print(f"no merging / baseline binary: {median['no merging'] / median['baseline binary']:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
