#!/usr/bin/env python3
"""One commit against another: two release binaries alternated on the measures a change to
feeds, stores, queries or serve must not make worse, printed as ratios with their spread.

    Benchmarks/ab.py                          # HEAD~1 against the working tree's HEAD
    Benchmarks/ab.py --base 4eb8e32           # a base commit against HEAD
    Benchmarks/ab.py --base-binary OLD --new-binary NEW --only ingest,q1
    Benchmarks/ab.py --rounds 5 --work /tmp/trafficgeo-ab

A commit is built once, in a worktree of its own under WORK (`swift build -c release --product
trafficgeo`, ~10 min the first time on 2 cores, then kept); HEAD is the checkout's own
`.build/release/trafficgeo`, built if missing. Each binary answers from a store it ingested
itself, so two schema versions compare as well as one.

Measures, each round running base then new then new then base... (the order alternates, since
these machines drift by a third between minutes):
  ingest  the 1M points of the spatial-anchors harness (its gen.py), CSV, into a fresh store:
          wall time and peak RSS
  q1      3,000 batch 10-nearest queries (`near --queries`, one process, start-up included)
  q2      3,000 batch 10 km radius queries (`within --radius 10km --queries`)
  datex   a 50,000-record DATEX II v2 publication (scripts/make-datex-feed.py) into a fresh store
  serve   `serve` asked for the 10 nearest at random points by wrk (64 connections, 10 s):
          requests per second

It is not part of CI (too noisy for a gate); a change's note shows its table. ~10 minutes for
3 rounds once both binaries exist. Needs wrk and ../shared/tools/spatial-anchors.
"""
import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from ingest_scaling import run_measured  # noqa: E402  wall time and peak RSS (KiB), from wait4

GEN = os.path.join(ROOT, "..", "shared", "tools", "spatial-anchors", "gen.py")
MEASURES = ["ingest", "q1", "q2", "datex", "serve"]


def say(text):
    print(f"ab: {text}", file=sys.stderr, flush=True)


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), check=True, capture_output=True, text=True).stdout.strip()


def binary_of(rev, work):
    """The release binary of a commit: HEAD is the checkout's own build; another commit is built in
    a worktree under WORK, once."""
    sha = git("rev-parse", "--verify", rev + "^{commit}")
    if sha == git("rev-parse", "HEAD"):
        path = os.path.join(ROOT, ".build/release/trafficgeo")
        if not os.path.exists(path):
            say("building HEAD (release)")
            subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=ROOT, check=True, stdout=sys.stderr)
        return path, sha[:10]
    tree = os.path.join(work, "src-" + sha[:12])
    path = os.path.join(tree, ".build/release/trafficgeo")
    if not os.path.exists(path):
        if not os.path.isdir(tree):
            git("worktree", "add", "--detach", tree, sha)
        say(f"building {sha[:10]} (release) in {tree}: about 10 minutes the first time")
        # Its output to stderr: stdout is the table.
        subprocess.run(["swift", "build", "-c", "release", "--product", "trafficgeo"], cwd=tree, check=True, stdout=sys.stderr)
    return path, sha[:10]


def remove_store(path):
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def queries_file(work):
    path = os.path.join(work, "queries.csv")
    if not os.path.exists(path):
        r = random.Random(3)
        with open(path, "w") as f:
            f.write("qid,lat,lon\n")
            for i in range(3000):
                f.write(f"q{i},{r.uniform(47.5, 54.5):.5f},{r.uniform(6, 14.5):.5f}\n")
    return path


def serve_rate(binary, store, seconds):
    """Requests per second of `serve` over wrk's 10-nearest requests (nearest.lua)."""
    proc = subprocess.Popen([binary, "serve", "--quiet", "--db", store, "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port = None
        for _ in range(200):
            out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
            m = re.search(r":(\d+)\s.*pid=%d," % proc.pid, out)
            if m:
                port = m.group(1)
                break
            time.sleep(0.1)
        if port is None:
            sys.exit(f"ab: {binary} serve did not start")
        lua = os.path.join(HERE, "serve", "nearest.lua")
        env = dict(os.environ)
        env.pop("THINK_MS", None)
        subprocess.run(["wrk", "-t", "2", "-c", "8", "-d", "2s", "-s", lua, f"http://127.0.0.1:{port}"], capture_output=True, env=env)
        out = subprocess.run(["wrk", "-t", "2", "-c", "64", "-d", f"{seconds}s", "-s", lua, f"http://127.0.0.1:{port}"],
                             capture_output=True, text=True, env=env).stdout
        m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
        return float(m.group(1)) if m else float("nan")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="HEAD~1", help="the base commit (default HEAD~1)")
    ap.add_argument("--new", default="HEAD", help="the new commit (default HEAD)")
    ap.add_argument("--base-binary", help="a base binary instead of building --base")
    ap.add_argument("--new-binary", help="a new binary instead of building --new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default=",".join(MEASURES), help="measures, comma-separated: " + ", ".join(MEASURES))
    ap.add_argument("--work", default="/tmp/trafficgeo-ab", help="data, stores and built commits")
    ap.add_argument("--serve-seconds", type=int, default=10)
    a = ap.parse_args()
    measures = [m for m in a.only.split(",") if m]
    unknown = set(measures) - set(MEASURES)
    if unknown:
        sys.exit(f"ab: no measure {', '.join(sorted(unknown))} (there are {', '.join(MEASURES)})")
    os.makedirs(a.work, exist_ok=True)
    base, base_label = (a.base_binary, "base") if a.base_binary else binary_of(a.base, a.work)
    new, new_label = (a.new_binary, "new") if a.new_binary else binary_of(a.new, a.work)
    sides = {"base": base, "new": new}

    points = os.path.join(a.work, "points.csv")
    if not os.path.exists(points):
        if not os.path.exists(GEN):
            sys.exit("ab: needs ../shared/tools/spatial-anchors/gen.py for the 1M points")
        say("data: 1M points (spatial-anchors gen.py)")
        subprocess.run([sys.executable, GEN, "--out", a.work], check=True, stdout=subprocess.DEVNULL)
    datex = os.path.join(a.work, "datex.xml")
    if "datex" in measures and not os.path.exists(datex):
        say("data: 50,000 DATEX II records")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/make-datex-feed.py"), "50000", "-o", datex], check=True, stdout=sys.stderr)
    if "serve" in measures and not shutil.which("wrk"):
        sys.exit("ab: serve needs wrk (apt install wrk)")
    queries = queries_file(a.work)

    def store(side):
        return os.path.join(a.work, f"{side}.sqlite")

    def ingest_points(side):
        remove_store(store(side))
        return run_measured([sides[side], "ingest", "--quiet", "--no-geocode", "--format", "csv", "--source-name", "anchors",
                             "--db", store(side), points])

    results = {}  # (measure, side) -> [values]

    def record(measure, side, value):
        results.setdefault((measure, side), []).append(value)

    # A store per side for the queries and serve, made by that side's binary (a store left by
    # another binary may have a schema this one cannot open); the ingest rounds remake them.
    if "ingest" not in measures:
        for side in sides:
            say(f"store for {side}")
            ingest_points(side)
    for r in range(a.rounds):
        order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
        say(f"round {r + 1} of {a.rounds} ({' then '.join(order)})")
        for measure in measures:
            for side in order:
                b = sides[side]
                if measure == "ingest":
                    wall, rss = ingest_points(side)
                    record("ingest 1M points, s", side, wall)
                    record("ingest 1M points, peak RSS MiB", side, rss / 1024)
                elif measure in ("q1", "q2"):
                    extra = ["--limit", "10"] if measure == "q1" else ["--radius", "10km"]
                    cmd = [b, "near" if measure == "q1" else "within", "--db", store(side), "--queries", queries, "-o", os.devnull] + extra
                    wall, _ = run_measured(cmd)
                    record(("Q1: 3,000 10-nearest, s" if measure == "q1" else "Q2: 3,000 within 10 km, s"), side, wall)
                elif measure == "datex":
                    db = os.path.join(a.work, f"datex-{side}.sqlite")
                    remove_store(db)
                    wall, rss = run_measured([b, "ingest", "-q", "--no-geocode", "--db", db, datex])
                    remove_store(db)
                    record("DATEX II 50,000 records, s", side, wall)
                    record("DATEX II peak RSS MiB", side, rss / 1024)
                elif measure == "serve":
                    record("serve 10-nearest, requests/s", side, serve_rate(b, store(side), a.serve_seconds))

    print(f"base {base_label}: {base}\nnew  {new_label}: {new}\n{a.rounds} rounds, alternated\n")
    print("(times and memory: lower is better; requests/s: higher is better)\n")
    print("| measure | base: median (range) | new: median (range) | new ÷ base |")
    print("|---|---:|---:|---:|")
    seen = []
    for (measure, _side) in results:
        if measure not in seen:
            seen.append(measure)
    for measure in seen:
        b, n = results[(measure, "base")], results[(measure, "new")]
        mb, mn = statistics.median(b), statistics.median(n)
        fmt = (lambda v: f"{v:.0f}") if "MiB" in measure or "requests" in measure else (lambda v: f"{v:.2f}")
        print(f"| {measure} | {fmt(mb)} ({fmt(min(b))}–{fmt(max(b))}) | {fmt(mn)} ({fmt(min(n))}–{fmt(max(n))}) | {mn / mb:.2f} |")


if __name__ == "__main__":
    main()
