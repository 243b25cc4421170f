#!/usr/bin/env python3
"""Ten million incidents against one million: how trafficgeo's ingest and queries grow (issue 52).

    Benchmarks/ten-million.py                                  # the checkout's release binary
    Benchmarks/ten-million.py --binary /path/to/trafficgeo --rounds 2
    Benchmarks/ten-million.py --postgres "$(scripts/postgres-test-cluster start)"
    Benchmarks/ten-million.py --sizes 1000000,3000000         # a shorter look

Writes the points with the spatial-anchors harness's generator (`gen.py --points N`: the same
uniform points in Germany's box, the same bytes everywhere), then for each size, in each round:
  ingest  `trafficgeo ingest --format csv` into a fresh store: wall time and peak RSS
  q1      3,000 batch 10-nearest queries (`near --queries`, one process, start-up included)
  q2      the same 3,000 points, everything within 10 km (`within --queries`): wall time and the
          number of answers (at 10M there are ten times as many: Q2 may grow with them)
  postgis with --postgres: the harness's PostGIS build of the same points (COPY, the geography
          table and primary key, the GiST index, VACUUM ANALYZE), in a schema of its own of the
          URL's database (the cluster's settings are its own: the harness tunes its cluster)
It prints each size's medians and the ratios the issue sets targets for:
  ingest 10M ÷ 1M (≤ 10.5), peak RSS 10M ÷ 1M (≤ 1.2), Q1 10M ÷ 1M (≤ 1.5),
  Q2 per answer 10M ÷ 1M, and ingest ÷ PostGIS build at 10M (≤ 1.0).

Run it alone on the machine: ~15 minutes a round at 10M on 2 cores (the 10M CSV is 420 MB and
the store ~2 GB, under --work, default /tmp/trafficgeo-10m; the points are kept between runs).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from ingest_scaling import run_measured  # noqa: E402  wall time and peak RSS (KiB), from wait4
from ab import GEN, queries_file, remove_store  # noqa: E402


def say(text):
    print(f"ten-million: {text}", file=sys.stderr, flush=True)


def points_file(work, size):
    folder = os.path.join(work, f"points-{size}")
    path = os.path.join(folder, "points.csv")
    if not os.path.exists(path):
        say(f"writing {size:,} points with the harness's generator")
        subprocess.run([sys.executable, GEN, "--out", folder, "--points", str(size), "--queries", "1"], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def answers_in(path):
    with open(path) as f:
        return sum(1 for _ in f) - 1


def postgis_build(url, points):
    """The harness's PostGIS build (bench.py `PostGIS.build`), timed as a whole, in a schema of
    its own in the database the URL names (dropped afterwards)."""
    psql = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url]
    schema = "trafficgeo_ten_million"
    subprocess.run(psql + ["-c", "SET client_min_messages=warning", "-c", "CREATE EXTENSION IF NOT EXISTS postgis",
                           "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE", "-c", f"CREATE SCHEMA {schema}"], check=True, capture_output=True)
    steps = [
        f"CREATE UNLOGGED TABLE {schema}.stage (id integer, name text, lat float8, lon float8);\n"
        f"\\copy {schema}.stage FROM '{points}' WITH (FORMAT csv, HEADER true)\n",
        f"CREATE TABLE {schema}.pts AS SELECT id, name, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography(Point,4326) AS geog FROM {schema}.stage;\n"
        f"ALTER TABLE {schema}.pts ADD PRIMARY KEY (id);\nDROP TABLE {schema}.stage;\n",
        f"CREATE INDEX pts_geog_gist ON {schema}.pts USING gist (geog);\n",
        f"VACUUM ANALYZE {schema}.pts;\n",
    ]
    start = time.perf_counter()
    for step in steps:
        subprocess.run(psql, input=step.encode(), check=True, capture_output=True)
    wall = time.perf_counter() - start
    subprocess.run(psql + ["-c", "SET client_min_messages=warning", "-c", f"DROP SCHEMA {schema} CASCADE"], check=True, capture_output=True)
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/trafficgeo"))
    ap.add_argument("--work", default="/tmp/trafficgeo-10m")
    ap.add_argument("--sizes", default="1000000,10000000", help="the small size first")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--postgres", help="a PostgreSQL URL with PostGIS installed (scripts/postgres-test-cluster start)")
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        sys.exit(f"ten-million: no binary at {a.binary}: swift build -c release --product trafficgeo")
    os.makedirs(a.work, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    queries = queries_file(a.work)
    points = {size: points_file(a.work, size) for size in sizes}
    results = {size: {} for size in sizes}

    def record(size, name, value):
        results[size].setdefault(name, []).append(value)

    for round_number in range(1, a.rounds + 1):
        for size in sizes:
            store = os.path.join(a.work, "store.sqlite")
            remove_store(store)
            say(f"round {round_number}: ingesting {size:,}")
            wall, rss = run_measured([a.binary, "ingest", "--quiet", "--no-geocode", "--format", "csv", "--source-name", "anchors",
                                      "--db", store, points[size]])
            record(size, "ingest s", wall)
            record(size, "ingest peak RSS MiB", rss / 1024)
            wall, _ = run_measured([a.binary, "near", "--db", store, "--queries", queries, "-k", "10", "-o", os.devnull])
            record(size, "Q1 3,000 10-nearest s", wall)
            within = os.path.join(a.work, "within.csv")
            wall, _ = run_measured([a.binary, "within", "--db", store, "--queries", queries, "--radius", "10km", "-o", within])
            record(size, "Q2 3,000 within 10 km s", wall)
            record(size, "Q2 answers", answers_in(within))
            remove_store(store)
            if a.postgres:
                say(f"round {round_number}: PostGIS building {size:,}")
                record(size, "PostGIS build s", postgis_build(a.postgres, points[size]))

    def median(size, name):
        values = results[size].get(name)
        return statistics.median(values) if values else None

    names = list(results[sizes[0]].keys())
    print("| measure | " + " | ".join(f"{s:,}: median (range)" for s in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in names:
        cells = []
        for size in sizes:
            values = results[size][name]
            shown = "{:,.0f}" if name == "Q2 answers" else "{:,.2f}"
            cells.append(f"{shown.format(statistics.median(values))} ({shown.format(min(values))}–{shown.format(max(values))})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    small, big = sizes[0], sizes[-1]
    factor = big / small
    print()
    print(f"| ratio, {big:,} ÷ {small:,} (sizes ×{factor:g}) | value | issue 52's target |")
    print("|---|---:|---:|")
    print(f"| ingest time | {median(big, 'ingest s') / median(small, 'ingest s'):.2f} | ≤ {factor * 1.05:g} |")
    print(f"| ingest peak RSS | {median(big, 'ingest peak RSS MiB') / median(small, 'ingest peak RSS MiB'):.2f} | ≤ 1.2 |")
    print(f"| Q1 | {median(big, 'Q1 3,000 10-nearest s') / median(small, 'Q1 3,000 10-nearest s'):.2f} | ≤ 1.5 |")
    per_answer = [median(s, "Q2 3,000 within 10 km s") / max(1, median(s, "Q2 answers")) for s in (small, big)]
    print(f"| Q2 per answer | {per_answer[1] / per_answer[0]:.2f} | grows only with the answers (≈ 1) |")
    if a.postgres:
        print(f"| ingest ÷ PostGIS build, {big:,} | {median(big, 'ingest s') / median(big, 'PostGIS build s'):.2f} | ≤ 1.0 |")
        print(f"| ingest ÷ PostGIS build, {small:,} | {median(small, 'ingest s') / median(small, 'PostGIS build s'):.2f} | ≤ 1.0 |")


if __name__ == "__main__":
    main()
