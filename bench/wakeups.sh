#!/usr/bin/env bash
# Where a write's goroutines wait to run. Starts a fresh 3-node cluster (scripts/cluster.sh on ports 7480/7490/7500,
# which must be free; 16 shards × 3 replicas, with --pprof), runs CLIENTS (1) writing clients (`memctl bench write
# --route leader`: its 1 s warm-up, then WARM + TRACE + 2 seconds), takes a Go execution trace of each node over
# TRACE (2) seconds once WARM (5) seconds of the run have passed, and prints the run's puts/s and latency (the
# whole run, not only the traced seconds) and then each node's scheduler latency grouped by what woke the
# goroutines (bench/wakeups.py: the wake-ups, and the time they waited in run queues in total and on average). The
# largest on one client's path so far: the replicators that the leader's dispatchLogs wakes (docs/benchmarks.md,
# "where one client's put waits, by execution trace"). Needs go and python3.
# Env: BIN (a directory with memnode and memctl; unset: make build, ./bin), CLIENTS, WARM, TRACE, TOP (15 lines a
# node), OUT (a new temporary directory; the traces, profiles, the run's JSON and the cluster's data stay there).
# Usage: bench/wakeups.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-1} WARM=${WARM:-5} TRACE=${TRACE:-2} TOP=${TOP:-15}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
  make build >/dev/null
  BIN=./bin
fi
PORTS=(7480 7490 7500)
for port in "${PORTS[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "port $port is in use: stop what serves it (scripts/cluster.sh stop?) first" >&2
    exit 2
  fi
done
export DATA=$OUT/data BIN BASE_PORT=${PORTS[0]}
load=
stop() {
  [ -n "$load" ] && kill "$load" 2>/dev/null
  local pids
  pids=$(cat "$DATA"/n*.pid 2>/dev/null || true)
  scripts/cluster.sh stop >/dev/null 2>&1 || true
  for pid in $pids; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  done
}
trap stop EXIT
MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local --pprof" scripts/cluster.sh start >/dev/null
ADDRS=$(printf 'http://127.0.0.1:%s,' "${PORTS[@]}")
"$BIN/memctl" -o json bench write --clients "$CLIENTS" --duration "$((WARM + TRACE + 2))s" --route leader \
  --addr-list "${ADDRS%,}" >"$OUT/write.json" 2>"$OUT/write.err" &
load=$!
sleep "$WARM"
curls=()
for port in "${PORTS[@]}"; do
  curl -fsS -o "$OUT/n$port.trace" "http://127.0.0.1:$port/debug/pprof/trace?seconds=$TRACE" &
  curls+=($!)
done
for i in "${!PORTS[@]}"; do
  wait "${curls[$i]}" || { echo "no trace from the node at :${PORTS[$i]}" >&2; exit 1; }
done
wait "$load" || { echo "memctl bench write failed: $(cat "$OUT/write.err")" >&2; exit 1; }
load=
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("puts/s %.0f, p50 %.2f ms, p99 %.2f ms (the whole run)" % (r["ops_per_s"], r["latency_ms"]["p50"], r["latency_ms"]["p99"]))' "$OUT/write.json"
for port in "${PORTS[@]}"; do
  go tool trace -pprof=sched "$OUT/n$port.trace" >"$OUT/n$port.sched"
  echo "== node at :$port"
  python3 bench/wakeups.py "$OUT/n$port.sched" "$TOP"
done
echo "traces, profiles and the cluster's data in $OUT" >&2
