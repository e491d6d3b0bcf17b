#!/usr/bin/env bash
# Local 3-node memcluster on loopback: HTTP on 127.0.0.1:7480/7490/7500, data in ./memdata-cluster/nN.
# Usage: scripts/cluster.sh start|stop|status
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-./memdata-cluster}
BIN=${BIN:-./bin}
cmd=${1:-start}
case "$cmd" in
start)
  mkdir -p "$DATA"
  for i in 1 2 3; do
    base=$((7470 + 10 * i))
    "$BIN/memnode" --node-id "n$i" --data-dir "$DATA/n$i" \
      --http-addr "127.0.0.1:$base" --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" \
      --bootstrap-expect 3 --join 127.0.0.1:7482 ${MEMNODE_EXTRA:-} >"$DATA/n$i.log" 2>&1 &
    echo $! >"$DATA/n$i.pid"
  done
  for _ in $(seq 1 60); do
    if "$BIN/memctl" cluster status --check >/dev/null 2>&1; then
      "$BIN/memctl" cluster status
      echo "cluster up: try  $BIN/memctl --addr http://127.0.0.1:7490 put --user alice 'hello'"
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
  "$BIN/memctl" cluster status
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
