#!/usr/bin/env python3
"""trafficgeo adapter for ../shared/tools/spatial-anchors (contract: ExternalEngine in its bench.py).

  ENGINES="spatialite postgis ext:trafficgeo=$PWD/scripts/spatial-anchors-adapter.py" ../shared/tools/spatial-anchors/run.sh

Uses the release CLI (`swift build -c release`, or $TRAFFICGEO_BIN):
  build   `trafficgeo ingest --format csv` of points.csv (id,name,lat,lon) into WORKDIR/trafficgeo.sqlite
  size    the bytes of the database files
  noop    `trafficgeo near --queries <empty file>`: open the store, answer nothing (start-up cost)
  q1/q2   `trafficgeo near|within --queries QUERIES --timing`: all queries in one process; rows
          qid,id,dist_m; the per-query latencies (measured inside trafficgeo) as the last JSON line
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("TRAFFICGEO_BIN", os.path.join(ROOT, ".build/release/trafficgeo"))


def db(work):
    return os.path.join(work, "trafficgeo.sqlite")


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"trafficgeo {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()}")
    return p


def main():
    cmd = sys.argv[1]
    if cmd == "version":
        print("trafficgeo " + run(["--version"]).stdout.strip())
    elif cmd == "build":
        points, work = sys.argv[2], sys.argv[3]
        run(["ingest", "--quiet", "--no-geocode", "--format", "csv", "--source-name", "anchors", "--db", db(work), points])
        with open(os.path.join(work, "no-queries.csv"), "w") as f:
            f.write("qid,lat,lon\n")
    elif cmd == "size":
        work = sys.argv[2]
        print(sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work) if f.startswith("trafficgeo.sqlite")))
    elif cmd == "noop":
        work = sys.argv[2]
        run(["near", "--db", db(work), "--queries", os.path.join(work, "no-queries.csv"), "--format", "csv", "-o", os.devnull])
    elif cmd in ("q1", "q2"):
        queries, out, arg, work = sys.argv[2:6]
        tmp = out + ".trafficgeo"
        if cmd == "q1":
            p = run(["near", "--db", db(work), "--queries", queries, "--limit", arg, "--timing", "--format", "csv", "-o", tmp])
        else:
            p = run(["within", "--db", db(work), "--queries", queries, "--radius", f"{arg}m", "--timing", "--format", "csv", "-o", tmp])
        with open(tmp) as src, open(out, "w") as dst:
            next(src)  # header
            dst.writelines(src)
        os.remove(tmp)
        timing = [l for l in p.stderr.splitlines() if l.startswith("{")][-1]
        t = json.loads(timing)
        print(json.dumps({"total_s": t["total_s"], "lat_ms": t["lat_ms"]}))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
