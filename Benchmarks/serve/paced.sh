#!/usr/bin/env bash
# `trafficgeo serve` asked less than it can answer: latency at a given load, where run.sh and
# ab.sh measure it flat out. Same store and requests as run.sh (10 nearest at random points in
# Germany, 64 connections); each connection waits a random think time (exponential, THINK_MS on
# average, nearest.lua) before each next request. First a flat-out run, then one per think time;
# the table gives each run's rate as a share of the flat-out one.
#
# Why: with every connection asking again at once, the mean latency is connections ÷ throughput
# (64 ÷ 9,000 req/s = 7.1 ms), so a flat-out p99 is mostly a throughput figure. This shows how
# the tail grows as the load nears what the server can do.
#
# Load generator and server share the machine's cores, as in run.sh. wrk paces in a closed loop:
# a connection waiting for a slow answer sends nothing meanwhile, so a stall is counted once,
# not for every request it would have held up (coordinated omission); the flat-out runs have the
# same limit.
#
#   Benchmarks/serve/paced.sh [BINARY]        (run.sh first: it builds the store; ~1 min)
#   CONNECTIONS=64 DURATION=10 THINKS="13 8 5 3" SERVE_BENCH_DIR=/tmp/trafficgeo-serve-bench
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${SERVE_BENCH_DIR:-/tmp/trafficgeo-serve-bench}"
CONNECTIONS="${CONNECTIONS:-64}"
DURATION="${DURATION:-10}"
THINKS="${THINKS:-13 8 5 3}"
BIN="${1:-$ROOT/.build/release/trafficgeo}"
[ -x "$BIN" ] || { echo "paced.sh: no binary at $BIN (swift build -c release --product trafficgeo)" >&2; exit 66; }
[ -f "$WORK/trafficgeo.sqlite" ] || { echo "paced.sh: no store in $WORK: run Benchmarks/serve/run.sh once first" >&2; exit 66; }
command -v wrk >/dev/null || { echo "paced.sh: needs wrk (apt install wrk)" >&2; exit 69; }

. "$HERE/start-serve.sh"
server=""
results="$(mktemp)"
trap 'rm -f "$results"; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
start_serve "$BIN" "$WORK/trafficgeo.sqlite" || exit 1
url="http://127.0.0.1:$port"

wrk -t 2 -c 8 -d 5s -s "$HERE/nearest.lua" "$url" >/dev/null   # warm-up
for think in 0 $THINKS; do
  if [ "$think" = 0 ]; then
    echo "### flat out ($CONNECTIONS connections, $DURATION s)" >&2
    out="$(env -u THINK_MS wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$HERE/nearest.lua" "$url" | tail -1)"
  else
    echo "### think time $think ms ($CONNECTIONS connections, $DURATION s)" >&2
    out="$(THINK_MS="$think" wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$HERE/nearest.lua" "$url" | tail -1)"
  fi
  echo "$out" >&2
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["think_ms"]=float(sys.argv[2]); print(json.dumps(r))' "$out" "$think" >>"$results"
done

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
full = rows[0]["rps"]
print("| think time ms | req/s | share of flat out | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    think = "flat out" if r["think_ms"] == 0 else f"{r['think_ms']:g}"
    print(f"| {think} | {r['rps']:.0f} | {100 * r['rps'] / full:.0f} % | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | {r['p99_ms']:.2f} "
          f"| {r['p999_ms']:.2f} | {r['max_ms']:.1f} | {r['errors']} |")
PY
