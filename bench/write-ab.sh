#!/usr/bin/env bash
# Single puts through a fresh 3-node cluster (scripts/cluster.sh; 16 shards, or SHARDS, × 3 replicas) per build, ROUNDS
# rounds of the builds in the order given: `memctl bench write` at CLIENTS clients ("1 64") for DUR (5s) each,
# with the CPU the three nodes spent per acknowledged put (from /proc/PID/stat), during the run and until the
# nodes are back near idle after it (drain_s, cpu_ms_per_put_drained: work deferred past the run still counts).
# Compares two builds on a busy machine; every other round runs them in reverse order. Usage: bench/write-ab.sh
# DIR[:ROUTE[:SHARDS]] [...], each DIR holding a build's memnode and memctl (e.g. bin), ROUTE the clients'
# --route (node or leader; empty or none given: memctl's default, for builds older than the flag), SHARDS the
# cluster's --shards (16);
# env ROUNDS (2), CLIENTS, DUR.
# With ETCDPEER set to a built bench/etcdpeer (cd bench/etcdpeer && go build -o /tmp/etcdpeer .), etcd peers run
# beside the rounds and are loaded the same way after each round, for the ratio in the same minutes: env
# ETCD_PEERS lists them, each LAYOUT:ROUTE, LAYOUT one (three members in one process, the peer make bench uses)
# or three (one member per process, as etcd is deployed and as memnode runs), ROUTE any (clients round-robin over
# the members; a follower forwards) or leader (every client at the leader, as --route leader sends each put to
# its shard's leader; needs an etcdpeer built with --route). Default "one:any", reported as build=etcd; with
# ETCD_PEERS set each peer is reported as build=etcd-LAYOUT-ROUTE.
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
ETCD_DIRS=() ETCD_PIDS=()
etcd_base() { echo $((27510 + 10 * $1)); } # the first port of the I-th etcd peer ETCD_PEERS lists
etcd_start() {
  [ -n "${ETCDPEER:-}" ] || return 0
  local i=0 peer dir m
  for peer in ${ETCD_PEERS:-one:any}; do
    case $peer in one:any | one:leader | three:any | three:leader) ;; *)
      echo "ETCD_PEERS: $peer: give LAYOUT:ROUTE, LAYOUT one or three, ROUTE any or leader" >&2
      exit 2 ;;
    esac
  done
  trap 'kill "${ETCD_PIDS[@]}" 2>/dev/null; wait "${ETCD_PIDS[@]}" 2>/dev/null; rm -rf "${ETCD_DIRS[@]}"' EXIT
  for peer in ${ETCD_PEERS:-one:any}; do
    dir=$(mktemp -d)
    ETCD_DIRS+=("$dir")
    if [ "${peer%%:*}" = one ]; then
      "$ETCDPEER" serve --dir "$dir/data" --base "$(etcd_base $i)" >"$dir/log1" 2>&1 &
      ETCD_PIDS+=($!)
    else
      for m in 1 2 3; do
        "$ETCDPEER" serve --dir "$dir/data" --base "$(etcd_base $i)" --member $m >"$dir/log$m" 2>&1 &
        ETCD_PIDS+=($!)
      done
    fi
    i=$((i + 1))
  done
  for dir in "${ETCD_DIRS[@]}"; do
    for _ in $(seq 1 60); do
      [ "$(grep -l '^ready' "$dir"/log* | wc -l)" -eq "$(ls "$dir"/log* | wc -l)" ] && continue 2
      sleep 1
    done
    echo "etcd members did not become ready; see $dir/log*" >&2
    exit 1
  done
}
etcd_round() {
  [ -n "${ETCDPEER:-}" ] || return 0
  local i=0 peer b label route
  for peer in ${ETCD_PEERS:-one:any}; do
    b=$(etcd_base $i)
    label=etcd route=
    [ -z "${ETCD_PEERS:-}" ] || label=etcd-${peer/:/-}
    [ "${peer#*:}" = any ] || route="--route ${peer#*:}"
    for c in ${CLIENTS:-1 64}; do
      # --route only where it is not the default, so an etcdpeer built before the flag still runs one:any
      "$ETCDPEER" load --endpoints 127.0.0.1:$b,127.0.0.1:$((b + 2)),127.0.0.1:$((b + 4)) $route \
        --clients $c --duration "${DUR:-5s}" --warmup 1s --size 200 |
        python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"build=$label clients=$c ops_per_s={r['ops_per_s']:.0f} p50_ms={r['latency_ms']['p50']} p99_ms={r['latency_ms']['p99']}\")"
    done
    i=$((i + 1))
  done
}
run() { # dir[:route[:shards]]
  local data pids label=$1 route= shards=16 rest
  case $1 in *:*)
    rest=${1#*:}
    case $rest in *:*) shards=${rest#*:}; rest=${rest%%:*} ;; esac
    case ${shards:-x} in *[!0-9]*) echo "$1: SHARDS must be a number" >&2; return 1 ;; esac
    [ -n "$rest" ] && route="--route $rest" ;;
  esac
  data=$(mktemp -d)
  export DATA=$data BIN=${1%%:*} MEMNODE_EXTRA="--shards $shards --replicas 3 --gossip-profile local"
  scripts/cluster.sh start >/dev/null || return
  pids=$(cat "$data"/n*.pid)
  for c in ${CLIENTS:-1 64}; do
    local t0 t1
    t0=$(ticks $pids)
    "$BIN/memctl" -o json bench write --clients $c --duration "${DUR:-5s}" $route \
      --addr-list http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500 >"$data/c$c.json" 2>/dev/null
    t1=$(ticks $pids)
    # Work a build defers past the run (batches left to index) is still the puts' cost: wait until the
    # nodes are back near idle (bench/lib.sh's settle) and count their CPU until then.
    local drain a
    read -r drain a < <(settle $pids) || echo "$label: a node exited during the run; see $data/n*.log" >&2
    python3 - "$data/c$c.json" "$label" "$c" "$((t1 - t0))" "$(getconf CLK_TCK)" "$((a - t0))" "$drain" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tck = int(sys.argv[5])
ms, drained = int(sys.argv[4]) * 1000 / tck, int(sys.argv[6]) * 1000 / tck
n = max(r['ops'], 1)
print(f"build={sys.argv[2]} clients={sys.argv[3]} ops_per_s={r['ops_per_s']:.0f} p50_ms={r['latency_ms']['p50']} "
      f"p99_ms={r['latency_ms']['p99']} cpu_ms_per_put={ms / n:.2f} drain_s={sys.argv[7]} "
      f"cpu_ms_per_put_drained={drained / n:.2f} errors={r.get('errors', 0)}")
PY
  done
  scripts/cluster.sh stop
  while pgrep -f "data-dir $data" >/dev/null; do sleep 0.2; done
  rm -rf "$data"
}
etcd_start
for r in $(seq "${ROUNDS:-2}"); do
  for dir in $(round_order "$r" "$@"); do run "$dir"; done
  etcd_round
done
