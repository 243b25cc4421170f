#!/usr/bin/env python3
"""DATEX II ingest against libxml2's own parse of the same file, side by side in one run.

Writes a 50,000-record DATEX II v2 publication (scripts/make-datex-feed.py, ~165 MB), then
alternates `xmllint --stream --noout FILE` (libxml2 reading the document and nothing else: the
floor) with `trafficgeo ingest --no-geocode FILE` into a fresh database (release build), and
reports the median wall time of each, their spread, the ratio, and trafficgeo's peak RSS (from
wait4's rusage). The target (issue 40): ingest within 2.5x xmllint, peak memory under 200 MB.

  Benchmarks/datex_ingest.py [--records 50000] [--rounds 5] [--plain-comments] [--binary .build/release/trafficgeo]

--plain-comments: comments that name no German junctions (as a Dutch or French feed's), so
ingest learns none; by default they do, and ingest learns where the junctions are, as it would
from a German feed.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from ingest_scaling import run_measured  # wall time and peak RSS (KiB) of one command, from wait4

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spread(values):
    return f"{min(values):.2f}–{max(values):.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--plain-comments", action="store_true")
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    a = ap.parse_args()
    if not shutil.which("xmllint"):
        sys.exit("xmllint is missing (apt install libxml2-utils)")
    if not os.path.exists(a.binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="trafficgeo-datex-")
    try:
        feed = os.path.join(work, "datex.xml")
        extra = ["--plain-comments"] if a.plain_comments else []
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make-datex-feed.py"), str(a.records), "-o", feed] + extra, check=True)
        size = os.path.getsize(feed) / 1e6
        floor, ingest, memory = [], [], []
        for r in range(a.rounds):
            wall, _ = run_measured(["xmllint", "--stream", "--noout", feed])
            floor.append(wall)
            db = os.path.join(work, f"r{r}.sqlite")
            wall, rss = run_measured([a.binary, "ingest", "-q", "--no-geocode", "--db", db, feed])
            ingest.append(wall)
            memory.append(rss / 1024)  # MiB
            for suffix in ["", "-wal", "-shm"]:
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
        ratios = [i / f for i, f in zip(ingest, floor)]
        print(f"{a.records} records, {size:.0f} MB{' (plain comments)' if a.plain_comments else ''}, {a.rounds} rounds alternating")
        print(f"xmllint --stream --noout: median {statistics.median(floor):.2f} s ({spread(floor)})")
        print(f"trafficgeo ingest:        median {statistics.median(ingest):.2f} s ({spread(ingest)}), peak RSS median {statistics.median(memory):.0f} MiB (max {max(memory):.0f})")
        print(f"ratio per round: median {statistics.median(ratios):.2f} ({spread(ratios)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
