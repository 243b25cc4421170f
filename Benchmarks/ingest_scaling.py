#!/usr/bin/env python3
"""Ingest throughput and peak memory against feed size, in one run.

Builds the release binary if needed, writes synthetic Atom feeds (scripts/make-big-feed.py) of
each size, ingests each into a fresh database, and reports wall time, entries/s and the peak RSS
of the trafficgeo process (from wait4's rusage). Streaming means peak RSS stays flat as the feed grows.

  Benchmarks/ingest_scaling.py [--sizes 10000,100000] [--repeat 3] [--binary .build/release/trafficgeo]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_measured(cmd):
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss  # KiB on Linux


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="trafficgeo-bench-")
    print(f"| entries | feed MiB | wall s (median of {a.repeat}) | entries/s | peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|")
    for size in [int(s) for s in a.sizes.split(",")]:
        feed = os.path.join(work, f"feed-{size}.xml")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make-big-feed.py"), str(size), "-o", feed], check=True)
        walls, rss = [], []
        for r in range(a.repeat):
            db = os.path.join(work, f"db-{size}-{r}.sqlite")
            wall, peak = run_measured([a.binary, "ingest", "--quiet", "--db", db, feed])
            walls.append(wall)
            rss.append(peak)
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
        wall = statistics.median(walls)
        mib = os.path.getsize(feed) / 2**20
        print(f"| {size} | {mib:.1f} | {wall:.2f} | {size / wall:,.0f} | {max(rss) / 1024:.1f} |")
        os.remove(feed)


if __name__ == "__main__":
    main()
