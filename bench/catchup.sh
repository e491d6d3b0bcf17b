#!/usr/bin/env bash
# Recovery under load: 3 memnode processes (16 shards × 3) are loaded with batch puts in rounds of LOAD until they
# hold TARGET memories; then single puts run from CLIENTS clients through the first two nodes, phase after phase:
#   before   DUR of puts, every node up (the baseline)
#   down     the third node is SIGKILLed and stays down for DOWN while the puts go on (its shards elect, and it
#            falls behind by what is written meanwhile)
#   catchup  the node is restarted and the puts run for DUR from that moment: it loads its indexes, answers
#            /readyz and catches up from its peers' logs or snapshots
#   after    DUR of puts once the cluster reports healthy again
# The baseline starts once the nodes are back near idle after the load (bench/lib.sh's settle, up to 10 minutes).
# Prints one line:
#   catchup: memories=M ready_s=R healthy_s=H p99_before_ms=A p99_down_ms=D p99_catchup_ms=C p99_after_ms=F
#            ratio_catchup=C/A ops_before=… ops_catchup=…
# ready_s: restart to the node's /readyz; healthy_s: restart to `memctl cluster status --check` passing.
# Keeps every memctl JSON report and the nodes' logs in $OUT. Ports 31540-31562.
# Env: TARGET (1000000), LOAD (120s), DUR (20s), DOWN (10s), CLIENTS (16), OUT (bench/out/catchup), MEMNODE (the
# nodes' binary; default ./bin/memnode, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
TARGET=${TARGET:-1000000}
LOAD=${LOAD:-120s}
DUR=${DUR:-20s}
DOWN=${DOWN:-10s}
CLIENTS=${CLIENTS:-16}
OUT=${OUT:-bench/out/catchup}
bench_init catchup
start_node() { # name base
  local name=$1 base=$2
  ${MEMNODE:-./bin/memnode} --node-id "$name" --data-dir "$OUT/data/$name" --http-addr "127.0.0.1:$base" \
    --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" --bootstrap-expect 3 \
    --join 127.0.0.1:31542 --shards 16 --replicas 3 >>"$OUT/$name.log" 2>&1 &
  PIDS+=($!)
  LAST=$!
}
for i in 0 1 2; do start_node "c$i" $((31540 + 10 * i)); done
VICTIM=$LAST
A=http://127.0.0.1:31540
ADDRS=http://127.0.0.1:31540,http://127.0.0.1:31550,http://127.0.0.1:31560
until $CTL --addr $A cluster status --check >/dev/null 2>&1; do sleep 1; done
load_memories "$TARGET" "$LOAD"
# The baseline is the cluster at rest with what it holds. A fast load leaves the replicas indexing, merging and
# compacting for minutes after its last round (on a slow host, 16 put clients got 4 puts a second and 32
# timeouts in a baseline taken then), and a catch-up compared with that is not compared with the steady state.
s=$(SETTLE_MIN=10 SETTLE_MAX=600 settle "${PIDS[@]}")
say "the nodes were back near idle after ${s%% *}s"
# The puts never go to the node that is killed: a load balancer takes it out of rotation until /readyz.
puts() { # tag duration
  $CTL --addr $A -o json bench write --addr-list http://127.0.0.1:31540,http://127.0.0.1:31550 --clients "$CLIENTS" \
    --duration "$2" --warmup 0 >"$OUT/put-$1.json"
}
say "baseline: $CLIENTS put clients for $DUR"
puts before "$DUR"
say "SIGKILL c2; puts for $DOWN while it is down"
kill -9 "$VICTIM"
wait "$VICTIM" 2>/dev/null || true
puts down "$DOWN"
say "restart c2; puts for $DUR from the restart"
puts catchup "$DUR" &
FG=$!
t0=$(date +%s.%N)
start_node c2 31560
until curl -fsS http://127.0.0.1:31560/readyz >/dev/null 2>&1; do sleep 0.05; done
t1=$(date +%s.%N)
until $CTL --addr $A cluster status --check >/dev/null 2>&1; do sleep 0.2; done
t2=$(date +%s.%N)
wait $FG
say "healthy; puts for $DUR"
puts after "$DUR"
python3 - "$OUT" "$MEMORIES" "$t0" "$t1" "$t2" <<'PY'
import json, sys
out, mem, t0, t1, t2 = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:6])
r = {t: json.load(open(f"{out}/put-{t}.json")) for t in ("before", "down", "catchup", "after")}
p99 = {t: r[t]["latency_ms"]["p99"] for t in r}
print(f"catchup: memories={mem} ready_s={t1 - t0:.1f} healthy_s={t2 - t0:.1f} "
      + " ".join(f"p99_{t}_ms={p99[t]:.1f}" for t in r)
      + f" ratio_catchup={p99['catchup'] / p99['before']:.2f} "
      + " ".join(f"ops_{t}={r[t]['ops_per_s']:.0f}" for t in ("before", "catchup"))
      + " errors=" + "/".join(str(r[t].get("errors", 0)) for t in r))
PY
