#!/usr/bin/env bash
# Single puts through a fresh 3-node cluster (16 shards × 3 replicas) per memnode binary, ROUNDS rounds of the
# binaries in the order given: `memctl bench write` at 1 and 64 clients for 5 s each, with the CPU the three
# nodes spent per acknowledged put (from /proc/PID/stat). Compares two builds on a busy machine.
# Usage: bench/write-ab.sh BIN [BIN ...]; env ROUNDS (2), CTL (bin/memctl).
set -u
CTL=${CTL:-bin/memctl}
ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
run() { # bin
  local bin=$1 d pids=() addrs=""
  d=$(mktemp -d)
  for i in 0 1 2; do
    local b=$((31640 + 10 * i))
    "$bin" --node-id "w$i" --data-dir "$d/w$i" --http-addr "127.0.0.1:$b" --raft-addr "127.0.0.1:$((b + 1))" \
      --gossip-addr "127.0.0.1:$((b + 2))" --bootstrap-expect 3 --join 127.0.0.1:31642 --shards 16 --replicas 3 \
      --gossip-profile local >"$d/w$i.log" 2>&1 &
    pids+=($!)
    addrs+="${addrs:+,}http://127.0.0.1:$b"
  done
  until $CTL --addr http://127.0.0.1:31640 cluster status --check >/dev/null 2>&1; do sleep 0.5; done
  for c in 1 64; do
    local t0 t1
    t0=$(ticks "${pids[@]}")
    $CTL -o json bench write --clients $c --duration 5s --addr-list "$addrs" >"$d/c$c.json" 2>/dev/null
    t1=$(ticks "${pids[@]}")
    python3 - "$d/c$c.json" "$bin" "$c" "$((t1 - t0))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ms = int(sys.argv[4]) * 1000 / int(sys.argv[5])
print(f"bin={sys.argv[2]} clients={sys.argv[3]} ops_per_s={r['ops_per_s']:.0f} p50_ms={r['latency_ms']['p50']} "
      f"p99_ms={r['latency_ms']['p99']} cpu_ms_per_put={ms / max(r['ops'], 1):.2f}")
PY
  done
  kill "${pids[@]}"
  wait 2>/dev/null
  rm -rf "$d"
}
for _ in $(seq "${ROUNDS:-2}"); do
  for bin in "$@"; do run "$bin"; done
done
