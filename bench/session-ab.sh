#!/usr/bin/env bash
# Consolidation (`memctl bench session`: 20 turns appended, then flushed) through a fresh 3-node cluster
# (scripts/cluster.sh; 16 shards × 3 replicas) per build, ROUNDS rounds of the builds in the order given (every
# other round reversed): one run at RATES sessions a second in all ("55 0": make bench's open loop, then a closed
# loop; 0 is closed), DUR (20s) each after 3 s of warm-up, 16 clients, with the CPU the three nodes spent per
# consolidated message, during the run and until they are back near idle (bench/lib.sh's settle).
# PRELOAD (a duration; none by default) first puts single memories at 64 clients for that long, then waits for
# idle: make bench's sessions meet a cluster holding its write runs' puts.
# Usage: bench/session-ab.sh DIR [...], each DIR holding a build's memnode and memctl; env ROUNDS (2), RATES, DUR,
# PRELOAD.
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
run() { # dir
  local data pids rate t0 t1 drain a flags addrs=http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500
  data=$(mktemp -d)
  export DATA=$data BIN=$1 MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local"
  scripts/cluster.sh start >/dev/null || return
  pids=$(cat "$data"/n*.pid)
  if [ -n "${PRELOAD:-}" ]; then
    "$BIN/memctl" -o json bench write --clients 64 --duration "$PRELOAD" --route leader \
      --addr-list "$addrs" >/dev/null 2>"$data/preload.err" ||
      echo "$1: the preload failed: $(tail -1 "$data/preload.err")" >&2
    SETTLE_MAX=600 settle $pids >/dev/null
  fi
  for rate in ${RATES:-55 0}; do
    flags=
    [ "$rate" = 0 ] || flags="--rate $rate"
    t0=$(ticks $pids)
    "$BIN/memctl" -o json bench session --clients 16 --turns 20 --duration "${DUR:-20s}" --warmup 3s $flags \
      --route leader --addr-list "$addrs" \
      >"$data/r$rate.json" 2>/dev/null
    t1=$(ticks $pids)
    read -r drain a < <(settle $pids) || echo "$1: a node exited during the run; see $data/n*.log" >&2
    python3 - "$data/r$rate.json" "$1" "$rate" "$((t1 - t0))" "$(getconf CLK_TCK)" "$((a - t0))" "$drain" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tck = int(sys.argv[5])
ms, drained = int(sys.argv[4]) * 1000 / tck, int(sys.argv[6]) * 1000 / tck
n = max(r['ops'] * r['turns'], 1)
f = r['flush_latency_ms']
print(f"build={sys.argv[2]} rate={sys.argv[3]} messages_per_s={r['messages_per_s']:.0f} flush_p50_ms={f['p50']} "
      f"flush_p99_ms={f['p99']} errors={r['errors']} cpu_ms_per_message={ms / n:.3f} drain_s={sys.argv[7]} "
      f"cpu_ms_per_message_drained={drained / n:.3f}")
PY
  done
  scripts/cluster.sh stop
  while pgrep -f "data-dir $data" >/dev/null; do sleep 0.2; done
  rm -rf "$data"
}
for r in $(seq "${ROUNDS:-2}"); do
  for dir in $(round_order "$r" "$@"); do run "$dir"; done
done
