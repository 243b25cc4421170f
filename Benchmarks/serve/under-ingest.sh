#!/usr/bin/env bash
# Readers while a large ingest writes (issue 52): `serve`'s 10-nearest latency on the 1M-point
# store, idle and while another process re-ingests 100,000 incidents into the same store, over
# and over (every round changes every one of them: the titles alternate, so each re-ingest
# updates 100,000 rows and records 100,000 change-feed events). Paced load (nearest.lua with
# THINK_MS, as paced.sh): the server asked less than it can answer, so the p99 is latency, not
# throughput. Rounds alternate idle and under ingest; the table gives each round and the ratio
# of the medians.
#
#   Benchmarks/serve/under-ingest.sh [BINARY]      (~2 min with the store built; building it ~15 s)
#   CONNECTIONS=16 THINK_MS=5 DURATION=10 ROUNDS=3 SERVE_BENCH_DIR=/tmp/trafficgeo-serve-bench
#
# Load generator, server and ingest share the machine's two cores: the ingest takes one of them
# from the server, which is part of what is measured.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${SERVE_BENCH_DIR:-/tmp/trafficgeo-serve-bench}"
CONNECTIONS="${CONNECTIONS:-16}"
THINK="${THINK_MS:-5}"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-3}"
BIN="${1:-$ROOT/.build/release/trafficgeo}"
GEN="$ROOT/../shared/tools/spatial-anchors/gen.py"
[ -x "$BIN" ] || { echo "under-ingest.sh: no binary at $BIN (swift build -c release --product trafficgeo)" >&2; exit 66; }
command -v wrk >/dev/null || { echo "under-ingest.sh: needs wrk (apt install wrk)" >&2; exit 69; }
say() { printf '### %s\n' "$*" >&2; }

mkdir -p "$WORK"
if [ ! -f "$WORK/points.csv" ]; then
  [ -f "$GEN" ] || { echo "under-ingest.sh: needs ../shared/tools/spatial-anchors (the harness's data generator)" >&2; exit 66; }
  say "data: 1M points (spatial-anchors gen.py)"
  python3 "$GEN" --out "$WORK" >&2
fi
if [ ! -f "$WORK/trafficgeo.sqlite" ]; then
  say "trafficgeo store"
  "$BIN" ingest --quiet --no-geocode --format csv --source-name anchors --db "$WORK/trafficgeo.sqlite" "$WORK/points.csv"
fi
# The re-ingested feed: 100,000 incidents of a source of their own, in two versions.
head -100001 "$WORK/points.csv" > "$WORK/reingest-a.csv"
awk -F, 'NR == 1 { print; next } { $2 = $2 " (again)"; print }' OFS=, "$WORK/reingest-a.csv" > "$WORK/reingest-b.csv"
"$BIN" ingest --quiet --no-geocode --format csv --source-name reingest --db "$WORK/trafficgeo.sqlite" "$WORK/reingest-a.csv"

. "$HERE/start-serve.sh"
server=""
writer=""
results="$(mktemp)"
trap 'rm -f "$results"; [ -z "$writer" ] || kill "$writer" 2>/dev/null || true; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
start_serve "$BIN" "$WORK/trafficgeo.sqlite" || exit 1
url="http://127.0.0.1:$port"
wrk -t 2 -c 8 -d 5s -s "$HERE/nearest.lua" "$url" >/dev/null   # warm-up

reingest_forever() {
  local n=0
  while true; do
    if ((n % 2)); then feed="$WORK/reingest-a.csv"; else feed="$WORK/reingest-b.csv"; fi
    "$BIN" ingest --quiet --no-geocode --format csv --source-name reingest --db "$WORK/trafficgeo.sqlite" "$feed" >/dev/null 2>&1
    n=$((n + 1))
    echo "$n" > "$WORK/reingests"
  done
}

for round in $(seq 1 "$ROUNDS"); do
  for mode in idle ingest; do
    if [ "$mode" = ingest ]; then
      echo 0 > "$WORK/reingests"
      reingest_forever &
      writer=$!
      sleep 1   # the ingest under way
    fi
    say "round $round, $mode ($CONNECTIONS connections, think $THINK ms, $DURATION s)"
    out="$(THINK_MS="$THINK" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$HERE/nearest.lua" "$url" | tail -1)"
    done_ingests=0
    if [ "$mode" = ingest ]; then
      kill "$writer" 2>/dev/null || true
      wait "$writer" 2>/dev/null || true
      writer=""
      pkill -f -- "--source-name reingest --db $WORK/trafficgeo.sqlite" 2>/dev/null || true
      sleep 1
      done_ingests="$(cat "$WORK/reingests")"
    fi
    echo "$out" >&2
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(round=int(sys.argv[2]), mode=sys.argv[3], reingests=int(sys.argv[4])); print(json.dumps(r))' \
      "$out" "$round" "$mode" "$done_ingests" >>"$results"
  done
done

python3 - "$results" "$CONNECTIONS" "$THINK" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{sys.argv[2]} connections, think time {sys.argv[3]} ms")
print("| round | mode | req/s | p50 ms | p99 ms | max ms | errors | re-ingests finished |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['round']} | {r['mode']} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['max_ms']:.1f} | {r['errors']} | {r['reingests'] if r['mode'] == 'ingest' else ''} |")
med = {m: statistics.median(r["p99_ms"] for r in rows if r["mode"] == m) for m in ("idle", "ingest")}
p50 = {m: statistics.median(r["p50_ms"] for r in rows if r["mode"] == m) for m in ("idle", "ingest")}
print(f"\np99 under ingest ÷ idle (medians): {med['ingest'] / med['idle']:.2f} ({med['ingest']:.2f} / {med['idle']:.2f} ms); "
      f"p50: {p50['ingest'] / p50['idle']:.2f}")
PY
