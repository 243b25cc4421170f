#!/usr/bin/env bash
# trafficgeo's PostGIS store against raw PostGIS, on the spatial-anchors harness's 1M points and
# 1,000 queries (../shared/tools/spatial-anchors/gen.py), in one run on one private cluster:
#
#   build  raw: the harness's build (\copy into a staging table, CREATE TABLE AS … geography,
#               primary key, GiST, VACUUM ANALYZE);
#          trafficgeo: `trafficgeo ingest --no-geocode` of points.csv into an empty store.
#   Q1     the 10 nearest to each query point, exact: raw = the harness's q1_cand20 (20 by <->,
#          re-ranked by ST_Distance) through psql; trafficgeo = `near --queries -k 10`.
#   Q2     every point within 10 km: raw = the harness's q2 (ST_DWithin, ST_Distance) through
#          psql; trafficgeo = `within --queries --radius 10km`.
#
# Each side is a whole process with its 1,000 queries (psql, or trafficgeo): seconds / 1,000 =
# ms per query, as the harness's "cli" driver counts. ROUNDS rounds alternate the two sides; the
# table shows each side's median and the ratio of medians.
#
#   swift build -c release --product trafficgeo && Benchmarks/postgis/run.sh     (~4 min)
#   ROUNDS=5 POSTGIS_BENCH_DIR=/tmp/trafficgeo-postgis-bench
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BIN="${TRAFFICGEO_BIN:-$ROOT/.build/release/trafficgeo}"
WORK="${POSTGIS_BENCH_DIR:-/tmp/trafficgeo-postgis-bench}"
ROUNDS="${ROUNDS:-5}"
GEN="$ROOT/../shared/tools/spatial-anchors/gen.py"
PGVER=15
say() { printf '### %s\n' "$*" >&2; }

[ -x "$BIN" ] || { echo "run.sh: build first: swift build -c release --product trafficgeo" >&2; exit 1; }
[ -f "$GEN" ] || { echo "run.sh: needs ../shared/tools/spatial-anchors (the harness's data generator)" >&2; exit 1; }
need=()
for p in postgresql-$PGVER postgresql-$PGVER-postgis-3 iproute2 bc; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if ((${#need[@]})); then
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
mkdir -p "$WORK"
chmod 755 "$WORK"
say "data: 1M points, 1,000 queries (spatial-anchors gen.py)"
[ -f "$WORK/points.csv" ] && [ -f "$WORK/queries.csv" ] || python3 "$GEN" --out "$WORK" >&2

say "private PostgreSQL cluster (the harness's settings)"
cluster=tgpostgis
port=5460
while pg_lsclusters -h | awk '{print $3}' | grep -qx "$port" || ss -ltnH | awk '{print $4}' | grep -q ":$port\$" \
      || [ -e /var/run/postgresql/.s.PGSQL.$port ]; do port=$((port + 1)); done
if pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$PGVER $cluster"; then pg_dropcluster --stop $PGVER $cluster; fi
trap 'pg_dropcluster --stop $PGVER $cluster 2>/dev/null || true' EXIT
rm -rf "$WORK/pgdata"
pg_createcluster $PGVER $cluster -p "$port" -d "$WORK/pgdata" --start-conf=manual --locale=C.UTF-8 \
  -o shared_buffers=1GB -o maintenance_work_mem=512MB -o max_wal_size=4GB -o jit=off -- --auth-local=trust >/dev/null
pg_conftool $PGVER $cluster set listen_addresses '' >/dev/null
pg_ctlcluster $PGVER $cluster start
export PGHOST=/var/run/postgresql PGPORT="$port" PGUSER=postgres
URL="postgresql://postgres@/tg?host=/var/run/postgresql&port=$port"

# The harness's statements, one per query (its bench.py cli_stmt).
python3 - "$WORK" <<'PY'
import csv, sys
work = sys.argv[1]
rows = list(csv.DictReader(open(work + "/queries.csv")))
with open(work + "/q1_cand20.sql", "w") as q1, open(work + "/q2.sql", "w") as q2:
    for r in rows:
        p = f"'SRID=4326;POINT({r['lon']} {r['lat']})'::geography"
        q1.write(f"SELECT {r['qid']}, id, d FROM (SELECT id, ST_Distance(geog, {p}) AS d FROM pts ORDER BY geog <-> {p} LIMIT 20) s ORDER BY d LIMIT 10;\n")
        q2.write(f"SELECT {r['qid']}, id, ST_Distance(geog, {p}) FROM pts WHERE ST_DWithin(geog, {p}, 10000.0);\n")
PY

now() { date +%s.%N; }
since() { printf '%.3f' "$(echo "$(now) - $1" | bc)"; }   # seconds since $1, as a JSON number
fresh() {  # database
  psql -X -q -d postgres -c "SET client_min_messages=warning" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
  psql -X -q -d "$1" -c "CREATE EXTENSION postgis"
}
raw_build() {
  fresh raw
  local t0; t0=$(now)
  psql -X -q -d raw -v ON_ERROR_STOP=1 <<SQL
CREATE UNLOGGED TABLE stage (id integer, name text, lat float8, lon float8);
\copy stage FROM '$WORK/points.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE pts AS SELECT id, name, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography(Point,4326) AS geog FROM stage;
ALTER TABLE pts ADD PRIMARY KEY (id);
DROP TABLE stage;
CREATE INDEX pts_geog_gist ON pts USING gist (geog);
VACUUM ANALYZE pts;
SQL
  since "$t0"
  psql -X -q -d raw -c "CHECKPOINT"
}
tg_build() {
  fresh tg
  local t0; t0=$(now)
  "$BIN" ingest --quiet --no-geocode --format csv --source-name anchors --db "$URL" "$WORK/points.csv"
  since "$t0"
  psql -X -q -d tg -c "CHECKPOINT"
}
timed() { local t0; t0=$(now); "$@" >/dev/null; since "$t0"; }

results="$WORK/results.ndjson"
: >"$results"
for r in $(seq 1 "$ROUNDS"); do
  say "round $r of $ROUNDS"
  if [ $((r % 2)) = 1 ]; then rb=$(raw_build); tb=$(tg_build); else tb=$(tg_build); rb=$(raw_build); fi
  psql -X -q -d raw -f "$WORK/q1_cand20.sql" >/dev/null; "$BIN" near --db "$URL" --queries "$WORK/queries.csv" -k 10 >/dev/null  # warm
  rq1=$(timed psql -X -q -At -d raw -f "$WORK/q1_cand20.sql"); tq1=$(timed "$BIN" near --db "$URL" --queries "$WORK/queries.csv" -k 10)
  tq2=$(timed "$BIN" within --db "$URL" --queries "$WORK/queries.csv" --radius 10km); rq2=$(timed psql -X -q -At -d raw -f "$WORK/q2.sql")
  echo "{\"round\":$r,\"build_s\":{\"raw\":$rb,\"trafficgeo\":$tb},\"q1_s\":{\"raw\":$rq1,\"trafficgeo\":$tq1},\"q2_s\":{\"raw\":$rq2,\"trafficgeo\":$tq2}}" | tee -a "$results" >&2
done
# The answers agree: the same ids for every query (Q1; Q2 by count, it is large).
"$BIN" near --db "$URL" --queries "$WORK/queries.csv" -k 10 | tail -n +2 | cut -d, -f1,2 | sort >"$WORK/tg_q1.txt"
psql -X -q -At -F, -d raw -f "$WORK/q1_cand20.sql" | cut -d, -f1,2 | sort >"$WORK/raw_q1.txt"
same_q1=$(cmp -s "$WORK/tg_q1.txt" "$WORK/raw_q1.txt" && echo yes || echo no)
tg_q2=$("$BIN" within --db "$URL" --queries "$WORK/queries.csv" --radius 10km | tail -n +2 | wc -l)
raw_q2=$(psql -X -q -At -d raw -f "$WORK/q2.sql" | wc -l)

python3 - "$results" "$same_q1" "$tg_q2" "$raw_q2" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"| | raw PostGIS (median) | trafficgeo PostGIS store (median) | ratio | rounds |")
print(f"|---|---:|---:|---:|---|")
for key, name, unit in [("build_s", "build 1M (s)", 1), ("q1_s", "Q1 10-NN (ms/query)", 1), ("q2_s", "Q2 10 km (ms/query)", 1)]:
    raw = statistics.median(r[key]["raw"] for r in rows); tg = statistics.median(r[key]["trafficgeo"] for r in rows)
    each = ", ".join(f"{r[key]['trafficgeo'] / r[key]['raw']:.2f}" for r in rows)
    print(f"| {name} | {raw:.2f} | {tg:.2f} | {tg / raw:.2f}× | {each} |")
print(f"\nQ1 answers (query, id) identical to raw q1_cand20: {sys.argv[2]}; Q2 rows: trafficgeo {sys.argv[3]}, raw {sys.argv[4]}")
PY
