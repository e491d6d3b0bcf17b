#!/usr/bin/env bash
# Single puts against a fresh 3-node cluster of each memnode build in turn (alternating, so a change in the
# machine's load falls on every build), REPS times. One line per run:
#   ab: bin=B rep=R clients=C ops=N p50=… p99=… errors=E
# Usage: bench/writes-ab.sh MEMNODE_A MEMNODE_B [...]; env REPS (3), CLIENTS ("1 64"), DUR (8s),
# OUT (bench/out/writes-ab). Ports 27480-27502 (as bench/run.sh: do not run both at once).
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
CLIENTS=${CLIENTS:-1 64}
DUR=${DUR:-8s}
OUT=${OUT:-bench/out/writes-ab}
mkdir -p "$OUT"
make build >/dev/null
CTL=./bin/memctl
A=http://127.0.0.1:27480
ADDRS=$A,http://127.0.0.1:27490,http://127.0.0.1:27500
P=()
trap 'kill "${P[@]}" 2>/dev/null || true' EXIT
for rep in $(seq 1 "$REPS"); do
  for bin in "$@"; do
    rm -rf "$OUT/data" && mkdir -p "$OUT/data"
    P=()
    for i in 1 2 3; do
      base=$((27470 + 10 * i))
      "$bin" --node-id "n$i" --data-dir "$OUT/data/n$i" --http-addr "127.0.0.1:$base" \
        --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" --bootstrap-expect 3 \
        --join 127.0.0.1:27482 --gossip-profile local >"$OUT/data/n$i.log" 2>&1 &
      P+=($!)
    done
    until $CTL --addr $A cluster status --check >/dev/null 2>&1; do sleep 0.5; done
    for c in $CLIENTS; do
      $CTL --addr $A -o json bench write --clients "$c" --duration "$DUR" --warmup 1s --size 200 --addr-list "$ADDRS" |
        jq -r --arg b "$bin" --arg r "$rep" --arg c "$c" \
          '"ab: bin=\($b) rep=\($r) clients=\($c) ops=\(.ops_per_s|floor) p50=\(.latency_ms.p50) p99=\(.latency_ms.p99) errors=\(.errors)"'
    done
    kill "${P[@]}"
    wait "${P[@]}" 2>/dev/null || true
  done
done
rm -rf "$OUT/data"
