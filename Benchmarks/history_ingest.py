#!/usr/bin/env python3
"""Time `trafficgeo ingest` of a positioned Autobahn-API history, two binaries taking turns.

  Benchmarks/history_ingest.py --old OLD_BINARY [--new .build/release/trafficgeo] [--fold 2] [--rounds 9]

The history is `history.autobahn.json` of one road fold of ../shared/data/autobahn (fold 2: 14,310
warnings, the issue's "14,500-warning history"), cut by ../shared/tools/geocode-eval/make-folds.py.
Each round ingests it into a fresh database with each binary (`--no-geocode`: every warning has a
position), alternating so that the machine's drift falls on both. Prints both medians, the ratio
of the medians and the median and range of the per-round ratios. For the cost of learning
junctions: build the commit before it into another scratch path and pass that binary as --old.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL = os.path.join(os.path.dirname(ROOT), "shared", "tools", "geocode-eval")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="the binary to compare against")
    ap.add_argument("--new", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    ap.add_argument("--fold", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--work", help="folder for the folds (default: a new temporary one)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="trafficgeo-history-")
    folds = os.path.join(work, "folds")
    history = os.path.join(folds, f"fold-{a.fold}", "history.autobahn.json")
    if not os.path.exists(history):
        if not os.path.exists(os.path.join(EVAL, "make-folds.py")):
            sys.exit(f"needs {EVAL} (../shared beside the repository)")
        subprocess.run([sys.executable, os.path.join(EVAL, "make-folds.py"), folds], check=True, stdout=subprocess.DEVNULL)
    db = os.path.join(work, "bench.sqlite")
    times = {"old": [], "new": []}
    for _ in range(a.rounds):
        for name, binary in (("old", a.old), ("new", a.new)):
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            start = time.monotonic()
            subprocess.run([binary, "ingest", "--quiet", "--no-geocode", "--db", db, history], check=True)
            times[name].append(time.monotonic() - start)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    ratios = [n / o for o, n in zip(times["old"], times["new"])]
    print(f"history ingest of {history}: old {old:.3f} s, new {new:.3f} s (medians of {a.rounds}); "
          f"ratio of medians {new / old:.2f}; per round {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})")


if __name__ == "__main__":
    main()
