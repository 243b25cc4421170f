#!/usr/bin/env bash
# `trafficgeo serve` against PostGIS: the 10 nearest incidents to random points in Germany, on the
# 1M points of the spatial-anchors harness (../shared/tools/spatial-anchors/gen.py), at 1, 8 and
# 64 connections. trafficgeo is asked over HTTP by wrk (items?lat=&lon=&nearest=10, exact WGS84
# distances, GeoJSON out); PostGIS over its Unix socket by pgbench with prepared statements, with
# the harness's exact query q1_cand20 (Benchmarks/serve/q1_cand20.sql). Both sides share the
# machine's cores with their load generator. Requests/s and p99 latency, side by side.
#
#   swift build -c release --product trafficgeo && Benchmarks/serve/run.sh     (~5 min)
#   DURATION=10 ROUNDS=3 CONNECTIONS="1 8 64" SERVE_BENCH_DIR=/tmp/trafficgeo-serve-bench
#
# PostgreSQL runs as a private throw-away cluster (dropped at exit), like the harness's own.
set -euo pipefail
unset THINK_MS   # nearest.lua paces its requests when this is set (paced.sh); these run flat out
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${TRAFFICGEO_BIN:-$ROOT/.build/release/trafficgeo}"
WORK="${SERVE_BENCH_DIR:-/tmp/trafficgeo-serve-bench}"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-3}"
CONNECTIONS="${CONNECTIONS:-1 8 64}"
GEN="$ROOT/../shared/tools/spatial-anchors/gen.py"
PGVER=15
say() { printf '### %s\n' "$*" >&2; }

[ -x "$BIN" ] || { echo "run.sh: build first: swift build -c release --product trafficgeo" >&2; exit 1; }
[ -f "$GEN" ] || { echo "run.sh: needs ../shared/tools/spatial-anchors (the harness's data generator)" >&2; exit 1; }
need=()
for p in wrk postgresql-$PGVER postgresql-$PGVER-postgis-3 postgresql-contrib; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
mkdir -p "$WORK"
chmod 755 "$WORK"

say "data: 1M points (spatial-anchors gen.py)"
[ -f "$WORK/points.csv" ] || python3 "$GEN" --out "$WORK" >&2
if [ ! -f "$WORK/trafficgeo.sqlite" ]; then
  say "trafficgeo store"
  "$BIN" ingest --quiet --no-geocode --format csv --source-name anchors --db "$WORK/trafficgeo.sqlite" "$WORK/points.csv"
fi

say "private PostgreSQL cluster"
cluster=tgserve
port=5440
while pg_lsclusters -h | awk '{print $3}' | grep -qx "$port" || ss -ltnH | awk '{print $4}' | grep -q ":$port\$" \
      || [ -e /var/run/postgresql/.s.PGSQL.$port ]; do port=$((port + 1)); done
if pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$PGVER $cluster"; then pg_dropcluster --stop $PGVER $cluster; fi
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  pg_dropcluster --stop $PGVER $cluster 2>/dev/null || true
}
trap cleanup EXIT
rm -rf "$WORK/pgdata"
pg_createcluster $PGVER $cluster -p "$port" -d "$WORK/pgdata" --start-conf=manual --locale=C.UTF-8 \
  -o shared_buffers=1GB -o max_connections=120 -o jit=off -- --auth-local=trust >/dev/null
pg_conftool $PGVER $cluster set listen_addresses '' >/dev/null
pg_ctlcluster $PGVER $cluster start
export PGHOST=/var/run/postgresql PGPORT="$port" PGUSER=postgres
psql -X -q -d postgres -c "CREATE DATABASE anchors"
psql -X -q -d anchors -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION postgis;
CREATE TABLE stage (id integer, name text, lat double precision, lon double precision);
\copy stage FROM '$WORK/points.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE pts AS SELECT id, name, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography(Point,4326) AS geog FROM stage;
ALTER TABLE pts ADD PRIMARY KEY (id);
CREATE INDEX pts_geog_gist ON pts USING gist (geog);
DROP TABLE stage;
VACUUM ANALYZE pts;
SQL

say "trafficgeo serve"
. "$HERE/start-serve.sh"
start_serve "$BIN" "$WORK/trafficgeo.sqlite" "$WORK/serve.log" || exit 1
sport=$port

wrk_run() {  # connections seconds
  wrk -t "$(( $1 < 2 ? 1 : 2 ))" -c "$1" -d "$2s" -s "$HERE/nearest.lua" "http://127.0.0.1:$sport" | tail -1
}
pg_run() {  # connections seconds → JSON like wrk's
  rm -f "$WORK"/pgbench_log.*
  (cd "$WORK" && pgbench -n -M prepared -c "$1" -j "$(( $1 < 2 ? 1 : 2 ))" -T "$2" -l -f "$HERE/q1_cand20.sql" anchors >"$WORK/pgbench.out" 2>&1)
  python3 - "$WORK" "$2" <<'PY'
import glob, json, sys
lat = []
for path in glob.glob(sys.argv[1] + "/pgbench_log.*"):
    for line in open(path):
        f = line.split()
        lat.append(int(f[2]) / 1000.0)
lat.sort()
n, secs = len(lat), float(sys.argv[2])
tps = [l for l in open(sys.argv[1] + "/pgbench.out") if l.startswith("tps")]
rps = float(tps[0].split("=")[1].split()[0]) if tps else n / secs
print(json.dumps({"requests": n, "rps": round(rps, 1), "p50_ms": round(lat[n // 2], 3), "p99_ms": round(lat[min(n - 1, int(n * 0.99))], 3), "max_ms": lat[-1]}))
PY
}

say "warm-up (5 s each)"
wrk_run 8 5 >/dev/null
pg_run 8 5 >/dev/null

results="$WORK/results.ndjson"
: >"$results"
# The machine's neighbours come and go: each connection count runs ROUNDS rounds that alternate
# serve and PostGIS, and the table shows the median round of each side, with each round's ratio.
for c in $CONNECTIONS; do
  for r in $(seq 1 "$ROUNDS"); do
    say "$c connections, round $r of $ROUNDS: trafficgeo serve, then PostGIS ($DURATION s each)"
    t="$(wrk_run "$c" "$DURATION")"
    p="$(pg_run "$c" "$DURATION")"
    echo "{\"connections\":$c,\"round\":$r,\"trafficgeo\":$t,\"postgis\":$p}" | tee -a "$results" >&2
  done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| connections | serve req/s | serve p50 ms | serve p99 ms | PostGIS q/s | PostGIS p50 ms | PostGIS p99 ms | throughput ratio (each round) |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for c in dict.fromkeys(r["connections"] for r in rows):
    rounds = [r for r in rows if r["connections"] == c]
    med = lambda side, key: statistics.median(r[side][key] for r in rounds)
    ratios = [r["trafficgeo"]["rps"] / r["postgis"]["rps"] for r in rounds]
    print(f"| {c} | {med('trafficgeo', 'rps'):.0f} | {med('trafficgeo', 'p50_ms'):.2f} | {med('trafficgeo', 'p99_ms'):.2f} "
          f"| {med('postgis', 'rps'):.0f} | {med('postgis', 'p50_ms'):.2f} | {med('postgis', 'p99_ms'):.2f} "
          f"| {statistics.median(ratios):.2f}× ({', '.join(f'{x:.2f}' for x in ratios)}) |")
bad = [r for r in rows if r["trafficgeo"].get("errors", 0) or r["trafficgeo"].get("non2xx", 0)]
if bad:
    print("\nwrk saw errors or non-2xx answers: " + json.dumps(bad))
PY
