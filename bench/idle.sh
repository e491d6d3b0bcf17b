#!/usr/bin/env bash
# Idle cost of shard replicas: 3 memnode processes on loopback form a cluster of SHARDS shards × 3 replicas
# (so each node hosts SHARDS replicas), wait until healthy, then measure each node's CPU (utime+stime from
# /proc) and RSS over IDLE seconds with no traffic. One line per size:
#   idle: replicas_per_node=N cpu_per_node=X% cpu_per_replica_us_per_s=Y rss_per_node_mib=Z rss_per_replica_kib=W
# Usage: bench/idle.sh [SIZES (64 512 2048)]; env IDLE (30), OUT (bench/out/idle), FORM_TIMEOUT (seconds a size
# may take to become healthy before the run gives up on it; 900), NODE_FLAGS (extra flags for every node).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${*:-64 512 2048}
IDLE=${IDLE:-30}
FORM_TIMEOUT=${FORM_TIMEOUT:-900}
OUT=${OUT:-bench/out/idle}
mkdir -p "$OUT"
make build >/dev/null
HZ=$(getconf CLK_TCK)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
trap cleanup EXIT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
for n in $SIZES; do
  rm -rf "$OUT/data" && mkdir -p "$OUT/data"
  for i in 1 2 3; do
    base=$((28470 + 10 * i))
    ./bin/memnode --node-id "n$i" --data-dir "$OUT/data/n$i" --http-addr "127.0.0.1:$base" \
      --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" \
      --bootstrap-expect 3 --join 127.0.0.1:28482 --shards "$n" --replicas 3 ${NODE_FLAGS:-} >"$OUT/n$i-$n.log" 2>&1 &
    PIDS+=($!)
  done
  t0=$(date +%s)
  until ./bin/memctl --addr http://127.0.0.1:28480 --timeout 30s cluster status --check >/dev/null 2>&1; do
    if (($(date +%s) - t0 > FORM_TIMEOUT)); then
      echo "idle: replicas_per_node=$n not healthy after ${FORM_TIMEOUT}s" >&2
      cleanup
      continue 2
    fi
    sleep 2
  done
  formed=$(($(date +%s) - t0))
  sleep 10 # let the formation's snapshots and index creation settle
  declare -A c0
  for p in "${PIDS[@]}"; do c0[$p]=$(cpu_ticks "$p"); done
  sleep "$IDLE"
  total=0 rss=0
  for p in "${PIDS[@]}"; do
    total=$((total + $(cpu_ticks "$p") - ${c0[$p]}))
    rss=$((rss + $(rss_kib "$p")))
  done
  awk -v n="$n" -v ticks="$total" -v hz="$HZ" -v idle="$IDLE" -v rss="$rss" -v formed="$formed" 'BEGIN {
    cpu = ticks / hz / idle / 3            # cores per node
    printf "idle: replicas_per_node=%d formed_in=%ds cpu_per_node=%.1f%% cpu_per_replica_us_per_s=%.1f rss_per_node_mib=%.0f rss_per_replica_kib=%.0f\n",
      n, formed, 100 * cpu, 1e6 * cpu / n, rss / 3 / 1024, rss / 3 / n }'
  cleanup
done
