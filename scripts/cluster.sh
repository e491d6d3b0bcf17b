#!/usr/bin/env bash
# Local 3-node memcluster on loopback: HTTP on 127.0.0.1:7480/7490/7500 (raft and gossip on the next two ports of
# each), data in ./memdata-cluster/nN. Env: DATA, BIN (./bin), BASE_PORT (7480: the first node's HTTP port; the
# others are 10 and 20 above), MEMNODE_EXTRA (more memnode flags).
# Usage: scripts/cluster.sh start|stop|status
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-./memdata-cluster}
BIN=${BIN:-./bin}
BASE_PORT=${BASE_PORT:-7480}
CTL=("$BIN/memctl" --addr "http://127.0.0.1:$BASE_PORT")
cmd=${1:-start}
case "$cmd" in
start)
  mkdir -p "$DATA"
  for i in 1 2 3; do
    base=$((BASE_PORT - 10 + 10 * i))
    "$BIN/memnode" --node-id "n$i" --data-dir "$DATA/n$i" \
      --http-addr "127.0.0.1:$base" --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" \
      --bootstrap-expect 3 --join "127.0.0.1:$((BASE_PORT + 2))" ${MEMNODE_EXTRA:-} >"$DATA/n$i.log" 2>&1 &
    echo $! >"$DATA/n$i.pid"
  done
  for _ in $(seq 1 60); do
    if "${CTL[@]}" cluster status --check >/dev/null 2>&1; then
      "${CTL[@]}" cluster status
      echo "cluster up: try  $BIN/memctl --addr http://127.0.0.1:$((BASE_PORT + 10)) put --user alice 'hello'"
      exit 0
    fi
    sleep 1
  done
  echo "cluster did not become healthy; see $DATA/n*.log" >&2
  exit 1
  ;;
stop)
  for f in "$DATA"/n*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; rm -f "$f"; done
  ;;
status)
  "${CTL[@]}" cluster status
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
