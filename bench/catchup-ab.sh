#!/usr/bin/env bash
# Recovery under load for builds side by side, on the data dir bench/catchup.sh left (OUT of that run): its three
# nodes are started again (c0 and c1 with bin/memnode), then, REPS rounds, for each memnode binary in turn:
# 15 s of puts (CLIENTS clients through c0 and c1), SIGKILL c2, 10 s of puts, restart c2 with that binary while
# 25 s of puts run, wait until every index of c2 has loaded (memcluster_replica_indexes_loading at 0) and
# `memctl cluster status --check` passes, then 20 s idle. One line per restart:
#   B rep R ready_s=S loaded_s=L p99_before=… p99_down=… p99_catchup=… ratio=… ops_before=… ops_catchup=…
# Usage: OUT=/tmp/catchup2 bench/catchup-ab.sh BIN [BIN...]; env REPS (2), CLIENTS (16). Ports 31540-31562.
set -u
cd "$(dirname "$0")/.."
: "${OUT:?OUT: the OUT of a bench/catchup.sh run}"
REPS=${REPS:-2}
CLIENTS=${CLIENTS:-16}
CTL=./bin/memctl
start() { # bin name base
  $1 --node-id "$2" --data-dir "$OUT/data/$2" --http-addr "127.0.0.1:$3" --raft-addr "127.0.0.1:$(($3 + 1))" \
    --gossip-addr "127.0.0.1:$(($3 + 2))" --bootstrap-expect 3 --join 127.0.0.1:31542 --shards 16 --replicas 3 \
    >>"$OUT/ab-$2.log" 2>&1 &
  echo $!
}
puts() { # phase duration
  $CTL --addr http://127.0.0.1:31540 -o json bench write --addr-list http://127.0.0.1:31540,http://127.0.0.1:31550 \
    --clients "$CLIENTS" --duration "$2" --warmup 0 >"$OUT/ab-$1.json" 2>/dev/null
}
loaded() { ! curl -fsS http://127.0.0.1:31560/metrics 2>/dev/null | grep -q '^memcluster_replica_indexes_loading [1-9]'; }
settled() { until loaded && $CTL --addr http://127.0.0.1:31540 cluster status --check >/dev/null 2>&1; do sleep 0.2; done; }
P0=$(start ./bin/memnode c0 31540)
P1=$(start ./bin/memnode c1 31550)
P2=$(start ./bin/memnode c2 31560)
trap 'kill $P0 $P1 $P2 2>/dev/null' EXIT
settled
sleep 40 # past the peers' idle full-text settling
for rep in $(seq "$REPS"); do
  for bin in "$@"; do
    puts before 15s
    kill -9 "$P2"
    wait "$P2" 2>/dev/null
    puts down 10s
    puts catchup 25s &
    FG=$!
    t0=$(date +%s.%N)
    P2=$(start "$bin" c2 31560)
    until curl -fsS http://127.0.0.1:31560/readyz >/dev/null 2>&1; do sleep 0.05; done
    t1=$(date +%s.%N)
    settled
    t2=$(date +%s.%N)
    wait $FG
    python3 - "$OUT" "$(basename "$bin")" "$rep" "$t0" "$t1" "$t2" <<'PY'
import json, sys
out, b, rep, t0, t1, t2 = sys.argv[1], sys.argv[2], sys.argv[3], *map(float, sys.argv[4:7])
r = {t: json.load(open(f"{out}/ab-{t}.json")) for t in ("before", "down", "catchup")}
p = {t: r[t]["latency_ms"]["p99"] for t in r}
print(f"{b} rep {rep} ready_s={t1 - t0:.1f} loaded_s={t2 - t0:.1f} p99_before={p['before']:.0f} "
      f"p99_down={p['down']:.0f} p99_catchup={p['catchup']:.0f} ratio={p['catchup'] / p['before']:.2f} "
      f"ops_before={r['before']['ops_per_s']:.0f} ops_catchup={r['catchup']['ops_per_s']:.0f}")
PY
    settled
    sleep 20
  done
done
