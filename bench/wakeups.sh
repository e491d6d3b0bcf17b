#!/usr/bin/env bash
# Where a write's goroutines wait to run: a fresh 3-node cluster (scripts/cluster.sh; 16 shards × 3 replicas, with
# --pprof), CLIENTS (1) writing clients for WARM (5) + TRACE (2) seconds, a Go execution trace of each node over the
# last TRACE seconds, and each node's scheduler latency grouped by what woke the goroutines (bench/wakeups.py: the
# wake-ups, the time they waited in run queues in total and on average). The largest on one client's path so far:
# the replicators the leader's dispatchLogs wakes (docs/benchmarks.md, "where one client's put waits, by execution
# trace"). Env: BIN (a directory with memnode and memctl; unset: make build, ./bin), CLIENTS, WARM, TRACE, TOP (15), OUT (a temporary directory; the
# traces and profiles stay there). Usage: bench/wakeups.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-1} WARM=${WARM:-5} TRACE=${TRACE:-2} TOP=${TOP:-15}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
  make build >/dev/null
  BIN=./bin
fi
export DATA=$OUT/data BIN
trap 'scripts/cluster.sh stop >/dev/null 2>&1 || true' EXIT
MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local --pprof" scripts/cluster.sh start >/dev/null
ADDRS=http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500
"$BIN/memctl" -o json bench write --clients "$CLIENTS" --duration "$((WARM + TRACE + 2))s" --route leader \
  --addr-list "$ADDRS" >"$OUT/write.json" 2>/dev/null &
load=$!
sleep "$WARM"
for port in 7480 7490 7500; do
  curl -sf -o "$OUT/n$port.trace" "http://127.0.0.1:$port/debug/pprof/trace?seconds=$TRACE" &
done
wait $(jobs -p | grep -v "^$load$")
wait "$load"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("puts/s %.0f, p50 %.2f ms, p99 %.2f ms" % (r["ops_per_s"], r["latency_ms"]["p50"], r["latency_ms"]["p99"]))' "$OUT/write.json"
for port in 7480 7490 7500; do
  go tool trace -pprof=sched "$OUT/n$port.trace" >"$OUT/n$port.sched"
  echo "== node at :$port"
  python3 bench/wakeups.py "$OUT/n$port.sched" "$TOP"
done
echo "traces and profiles in $OUT" >&2
