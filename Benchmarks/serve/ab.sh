#!/usr/bin/env bash
# Two builds of `trafficgeo serve` against each other on the store of run.sh (the 1M points of
# the spatial-anchors harness): wrk with 10-nearest requests at random German points, rounds that
# alternate A and B (the machine's speed wanders, so compare the ratios of one run), and the CPU
# each server used per request.
#
#   Benchmarks/serve/ab.sh OLD_BINARY NEW_BINARY          (run.sh first: it builds the store)
#   CONNECTIONS=64 DURATION=10 ROUNDS=3 SERVE_BENCH_DIR=/tmp/trafficgeo-serve-bench
set -euo pipefail
unset THINK_MS   # nearest.lua paces its requests when this is set (paced.sh); these run flat out
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="${SERVE_BENCH_DIR:-/tmp/trafficgeo-serve-bench}"
CONNECTIONS="${CONNECTIONS:-64}"
DURATION="${DURATION:-10}"
ROUNDS="${ROUNDS:-3}"
[ $# -eq 2 ] || { echo "usage: ab.sh OLD_BINARY NEW_BINARY" >&2; exit 64; }
[ -f "$WORK/trafficgeo.sqlite" ] || { echo "ab.sh: no store in $WORK: run Benchmarks/serve/run.sh once first" >&2; exit 66; }
command -v wrk >/dev/null || { echo "ab.sh: needs wrk (apt install wrk)" >&2; exit 69; }
ticks="$(getconf CLK_TCK)"

. "$HERE/start-serve.sh"
server=""
one() {  # binary label → one JSON line
  start_serve "$1" "$WORK/trafficgeo.sqlite" || exit 1
  local pid=$server
  wrk -t 2 -c 8 -d 3s -s "$HERE/nearest.lua" "http://127.0.0.1:$port" >/dev/null   # warm-up
  local before after out
  before="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  out="$(wrk -t 2 -c "$CONNECTIONS" -d "${DURATION}s" -s "$HERE/nearest.lua" "http://127.0.0.1:$port" | tail -1)"
  after="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  server=""
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["side"]=sys.argv[2]; r["cpu_us_per_request"]=round((int(sys.argv[4])-int(sys.argv[3]))/int(sys.argv[5])*1e6/max(1,r["requests"]),1); print(json.dumps(r))' \
    "$out" "$2" "$before" "$after" "$ticks"
}

results="$(mktemp)"
# A failed step (wrk missing a server, ...) must not leave a server running.
trap 'rm -f "$results"; [ -z "$server" ] || kill "$server" 2>/dev/null || true' EXIT
for r in $(seq 1 "$ROUNDS"); do
  echo "### round $r of $ROUNDS ($CONNECTIONS connections, $DURATION s each)" >&2
  one "$1" A >>"$results"
  one "$2" B >>"$results"
  tail -2 "$results" >&2
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
a = [r for r in rows if r["side"] == "A"]; b = [r for r in rows if r["side"] == "B"]
med = lambda rs, k: statistics.median(r[k] for r in rs)
print("| side | req/s | p10 ms | p50 ms | p90 ms | p99 ms | p99.9 ms | sd ms | CPU µs/request |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, rs in (("A (old)", a), ("B (new)", b)):
    print(f"| {name} | {med(rs, 'rps'):.0f} | {med(rs, 'p10_ms'):.2f} | {med(rs, 'p50_ms'):.2f} | {med(rs, 'p90_ms'):.2f} | {med(rs, 'p99_ms'):.2f} "
          f"| {med(rs, 'p999_ms'):.2f} | {med(rs, 'sd_ms'):.2f} | {med(rs, 'cpu_us_per_request'):.0f} |")
ratios = [y["rps"] / x["rps"] for x, y in zip(a, b)]
print(f"\nB/A throughput, each round: {', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f}×)")
PY
