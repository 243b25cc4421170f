#!/usr/bin/env python3
"""A fresh `trafficgeo near` process, timed: binaries take turns, medians compared in one run
(the machine's speed wanders). `--preload LIB` adds a run of the first binary with LIB preloaded
(what linking it would cost at start).

    Benchmarks/near-launch.py --db STORE.sqlite OLD_BINARY NEW_BINARY [--preload /usr/lib/x86_64-linux-gnu/libproj.so.25]
"""
import argparse, os, statistics, subprocess, time

parser = argparse.ArgumentParser()
parser.add_argument("binaries", nargs="+")
parser.add_argument("--db", required=True)
parser.add_argument("--runs", type=int, default=40)
parser.add_argument("--preload")
args = parser.parse_args()

runs = {b: (b, dict(os.environ)) for b in args.binaries}
if args.preload:
    runs[f"{args.binaries[0]} + LD_PRELOAD={args.preload}"] = (args.binaries[0], dict(os.environ, LD_PRELOAD=args.preload))
times = {name: [] for name in runs}
for _ in range(args.runs):
    for name, (binary, env) in runs.items():
        start = time.perf_counter()
        subprocess.run([binary, "near", "--lat", "50.94", "--lon", "6.96", "--db", args.db, "--limit", "10", "--format", "json"],
                       env=env, stdout=subprocess.DEVNULL, check=True)
        times[name].append(time.perf_counter() - start)
first = statistics.median(times[next(iter(times))])
for name, values in times.items():
    median = statistics.median(values)
    print(f"{median * 1000:7.2f} ms  {median / first:5.2f}×  {name}")
