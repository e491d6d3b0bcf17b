#!/usr/bin/env bash
# Rebalance 3 → 6 nodes under load: 3 memnode processes (16 shards × 3) are loaded with batch puts for LOAD
# (about 3,000 memories/s here: 330s ≈ 1,000,000), then puts and searches run for DUR as the baseline; 3 more
# nodes join while the same puts and searches run, until every node holds 8 ± 1 replicas with no move under
# way. Prints one line:
#   rebalance: memories=M seconds=T moved_bytes=B bytes_per_s=R put_p99_ratio=X search_p99_ratio=Y
# and keeps every memctl JSON report in $OUT. Ports 30480-30542. Env: LOAD (330s), DUR (30s), OUT (bench/out/rebalance),
# NODE_FLAGS (extra memnode flags on every node, e.g. "--rebalance-max-moves 2 --rebalance-moves-per-node 1").
set -euo pipefail
cd "$(dirname "$0")/.."
LOAD=${LOAD:-330s}
DUR=${DUR:-30s}
OUT=${OUT:-bench/out/rebalance}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
make build >/dev/null
CTL=./bin/memctl
T0=$(date +%s)
say() { echo "[rebalance $(($(date +%s) - T0))s] $*" >&2; }
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
rm -rf "$OUT/data"
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
say "loading for $LOAD (batch puts of 100, 32 clients, 1000 users)"
$CTL --addr $A -o json --timeout 60s bench write --addr-list $ADDRS --batch 100 --clients 32 --users 1000 \
  --duration "$LOAD" --warmup 0 >"$OUT/load.json"
PREFIX=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user_prefix"])' "$OUT/load.json")
MEMORIES=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ops"]*r["batch"])' "$OUT/load.json")
say "loaded $MEMORIES memories; waiting for the indexes to catch up"
$CTL --addr $A --timeout 300s search --user "${PREFIX}0" "warm up" >/dev/null
foreground() { # tag
  $CTL --addr $A -o json bench write --addr-list $ADDRS --clients 4 --duration "$DUR" >"$OUT/put-$1.json" &
  local w=$!
  $CTL --addr $A -o json bench search --addr-list $ADDRS --skip-load --user-prefix "$PREFIX" --users 1000 \
    --clients 4 --duration "$DUR" >"$OUT/search-$1.json"
  wait $w
}
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
