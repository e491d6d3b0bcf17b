#!/usr/bin/env bash
# Rebalance 3 → 6 nodes under load: 3 memnode processes (16 shards × 3) are loaded with batch puts in rounds of
# LOAD until they hold TARGET memories (about 1,350 memories/s on this 2-core machine: 1,000,000 takes ~13 min),
# then puts and searches run for DUR as the baseline; 3 more
# nodes join while the same puts and searches run, until every node holds 8 ± 1 replicas with no move under
# way. Prints one line:
#   rebalance: memories=M seconds=T moved_bytes=B bytes_per_s=R put_p99_ratio=X search_p99_ratio=Y
# and keeps every memctl JSON report in $OUT. Ports 30480-30542. Env: TARGET (1000000), LOAD (120s), DUR (30s),
# OUT (bench/out/rebalance),
# NODE_FLAGS (extra memnode flags on every node, e.g. "--rebalance-max-moves 2 --rebalance-moves-per-node 1").
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
TARGET=${TARGET:-1000000}
LOAD=${LOAD:-120s}
DUR=${DUR:-30s}
OUT=${OUT:-bench/out/rebalance}
bench_init rebalance
start_node() { # i [extra flags]
  local i=$1 base=$((30470 + 10 * $1))
  shift
  ./bin/memnode --node-id "n$i" --data-dir "$OUT/data/n$i" --http-addr "127.0.0.1:$base" \
    --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" ${NODE_FLAGS:-} "$@" >"$OUT/n$i.log" 2>&1 &
  PIDS+=($!)
}
for i in 1 2 3; do start_node "$i" --bootstrap-expect 3 --join 127.0.0.1:30482 --shards 16 --replicas 3; done
A=http://127.0.0.1:30480
ADDRS=http://127.0.0.1:30480,http://127.0.0.1:30490,http://127.0.0.1:30500
until $CTL --addr $A cluster status --check >/dev/null 2>&1; do sleep 1; done
load_memories "$TARGET" "$LOAD"
say "baseline: puts and searches for $DUR"
foreground before
say "3 nodes join"
J0=$(date +%s.%N)
for i in 4 5 6; do start_node "$i" --join 127.0.0.1:30482; done
balanced() {
  $CTL --addr $A -o json node list 2>/dev/null | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["nodes"]
ok = len(nodes) == 6 and all(n["state"] == "alive" and 7 <= n["replicas"] <= 9 for n in nodes)
sys.exit(0 if ok else 1)' && $CTL --addr $A -o json cluster status | python3 -c '
import json, sys
s = json.load(sys.stdin); sys.exit(0 if s["healthy"] and not s["moves"] else 1)'
}
i=0
until balanced; do
  foreground "during-$i"
  i=$((i + 1))
done
J1=$(date +%s.%N)
MOVED=0
for n in 1 2 3 4 5 6; do
  b=$(curl -s "http://127.0.0.1:$((30470 + 10 * n))/metrics" | awk '/^memcluster_moved_bytes_total/ {print $2}')
  MOVED=$(python3 -c "print($MOVED + float('${b:-0}'))")
done
python3 - "$OUT" "$MEMORIES" "$J0" "$J1" "$MOVED" "$i" <<'PY'
import json, sys, glob
out, mem, j0, j1, moved, rounds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
def p99(kind, tags):
    vals = [json.load(open(f"{out}/{kind}-{t}.json"))["latency_ms"]["p99"] for t in tags]
    return max(vals) if vals else float("nan")
during = [f"during-{k}" for k in range(rounds)]
secs = j1 - j0
pr = p99("put", during) / p99("put", ["before"]) if during else float("nan")
sr = p99("search", during) / p99("search", ["before"]) if during else float("nan")
print(f"rebalance: memories={mem} seconds={secs:.1f} moved_bytes={moved:.0f} bytes_per_s={moved/secs:.0f} "
      f"put_p99_ratio={pr:.2f} search_p99_ratio={sr:.2f} foreground_rounds={rounds}")
PY
