#!/usr/bin/env bash
# A/B timing of two trafficgeo binaries on the same store and the same queries, run alternately so
# that both see the same machine (these machines drift by ±30 % between minutes, which a single
# run of each cannot tell from a change):
#
#   Benchmarks/ab-queries.sh OLD_BINARY NEW_BINARY [DB] [RUNS]
#   OLD_DB=old.sqlite Benchmarks/ab-queries.sh OLD_BINARY NEW_BINARY new.sqlite   # a schema the old binary cannot open:
#                                                         # each binary on its own store, ingested from the same feed
#   QUERY_OPTIONS="--active-at now" Benchmarks/ab-queries.sh …   # the same options added to every query
#
# DB defaults to the benchmark's 1M-point store (/tmp/trafficgeo-bench-1M.sqlite, made by
# `trafficgeo-bench knn`). 3000 random query points in Germany (seeded); each run answers them all
# in one process (`near --limit 10` and `within --radius 10km`, `--timing`); printed: each run's
# median latency, the median over runs, and the sum of all latencies.
set -euo pipefail
old=$1 new=$2
db=${3:-/tmp/trafficgeo-bench-1M.sqlite}
runs=${4:-6}
queries=$(mktemp --suffix=.csv)
trap 'rm -f "$queries"' EXIT
python3 - "$queries" <<'PY'
import random, sys
r = random.Random(3)
with open(sys.argv[1], "w") as f:
    f.write("qid,lat,lon\n")
    for i in range(3000):
        f.write(f"q{i},{r.uniform(47.5, 54.5):.5f},{r.uniform(6, 14.5):.5f}\n")
PY
for _ in $(seq "$runs"); do
    for b in "$old" "$new"; do
        for mode in near within; do
            if [ "$mode" = near ]; then extra=(--limit 10); else extra=(--radius 10km); fi
            # shellcheck disable=SC2206 # options are words
            extra+=(${QUERY_OPTIONS:-})
            store="$db"
            if [ "$b" = "$old" ] && [ -n "${OLD_DB:-}" ]; then store="$OLD_DB"; fi
            "$b" "$mode" --db "$store" --queries "$queries" "${extra[@]}" --timing -o /dev/null 2>&1 | tail -1 |
                python3 -c 'import json, statistics, sys; d = json.loads(sys.stdin.read()); print(sys.argv[1], sys.argv[2], statistics.median(d["lat_ms"]), sum(d["lat_ms"]))' "$b" "$mode"
        done
    done
done | python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    binary, mode, median, total = line.split()
    runs[(mode, binary)].append((float(median), float(total)))
for (mode, binary), r in sorted(runs.items()):
    print(f"{mode:6} {binary}: run medians " + " ".join(f"{m:.4f}" for m, _ in r)
          + f" ms; median {statistics.median(m for m, _ in r):.4f} ms; all latencies {sum(t for _, t in r) / 1000:.2f} s")
'
