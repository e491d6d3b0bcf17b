#!/usr/bin/env bash
# Single puts through a fresh 3-node cluster (scripts/cluster.sh; 16 shards × 3 replicas) per build, ROUNDS
# rounds of the builds in the order given: `memctl bench write` at 1 and 64 clients for 5 s each, with the CPU
# the three nodes spent per acknowledged put (from /proc/PID/stat). Compares two builds on a busy machine.
# Usage: bench/write-ab.sh DIR [DIR ...], each DIR holding a build's memnode and memctl (e.g. bin); env ROUNDS (2).
set -u
cd "$(dirname "$0")/.."
ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
run() { # dir
  local data pids
  data=$(mktemp -d)
  export DATA=$data BIN=$1 MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local"
  scripts/cluster.sh start >/dev/null || return
  pids=$(cat "$data"/n*.pid)
  for c in 1 64; do
    local t0 t1
    t0=$(ticks $pids)
    "$BIN/memctl" -o json bench write --clients $c --duration 5s \
      --addr-list http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500 >"$data/c$c.json" 2>/dev/null
    t1=$(ticks $pids)
    python3 - "$data/c$c.json" "$BIN" "$c" "$((t1 - t0))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ms = int(sys.argv[4]) * 1000 / int(sys.argv[5])
print(f"build={sys.argv[2]} clients={sys.argv[3]} ops_per_s={r['ops_per_s']:.0f} p50_ms={r['latency_ms']['p50']} "
      f"p99_ms={r['latency_ms']['p99']} cpu_ms_per_put={ms / max(r['ops'], 1):.2f}")
PY
  done
  scripts/cluster.sh stop
  while pgrep -f "data-dir $data" >/dev/null; do sleep 0.2; done
  rm -rf "$data"
}
for _ in $(seq "${ROUNDS:-2}"); do
  for dir in "$@"; do run "$dir"; done
done
