#!/usr/bin/env bash
# Search of one user holding MEMORIES (100000) memories through a 3-node cluster (scripts/cluster.sh; 16 shards ×
# 3 replicas), the builds taking turns on one data dir: loaded once by the first build, then for each build in
# each of ROUNDS (2) rounds the nodes are stopped, started again with that build's memnode, left to load their
# indexes (every node's memcluster_replica_indexes_loading at 0) and to settle (bench/lib.sh), and `memctl bench
# search --skip-load` runs at each of CLIENTS ("1 8") clients for DUR (10s) after a 2 s warm-up. One data dir for
# every build: the shard's segments and its settled index are the same for all, which fresh clusters' loads are
# not; every other round runs the builds in reverse order. Usage: bench/search-ab.sh DIR [...], each DIR holding a
# build's memnode and memctl (e.g. bin; the first's memctl loads and measures). Prints one line per run. Name the
# oldest build first: the records are in the newest format the loading build writes, which an older build cannot
# read (every search of it fails). With JSON_DIR set, each run's memctl report is kept there as
# search-cCLIENTS-rROUND.json (make bench reads them; meant for one build). BASE_PORT (7480) moves the nodes'
# ports (scripts/cluster.sh); the script refuses to start where something answers already.
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/search-ab.sh DIR [DIR...]" >&2; exit 2; }
for d in "$@"; do
  [ -x "$d/memnode" ] || { echo "$d: no memnode there" >&2; exit 2; }
done
CTL=$1/memctl
BASE_PORT=${BASE_PORT:-7480}
PORTS="$BASE_PORT $((BASE_PORT + 10)) $((BASE_PORT + 20))"
ADDRS=http://127.0.0.1:$BASE_PORT,http://127.0.0.1:$((BASE_PORT + 10)),http://127.0.0.1:$((BASE_PORT + 20))
for p in $PORTS; do
  # A node already there (make run, a dev cluster) would answer for ours, and take the load.
  if curl -s -o /dev/null "http://127.0.0.1:$p/readyz"; then
    echo "127.0.0.1:$p is taken: stop what serves there or set BASE_PORT" >&2
    exit 1
  fi
done
DATA=$(mktemp -d)
export DATA BASE_PORT MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local"
stop_nodes() {
  scripts/cluster.sh stop
  while pgrep -f "data-dir $DATA" >/dev/null; do sleep 0.2; done
}
trap 'stop_nodes; rm -rf "$DATA"' EXIT
start_nodes() { # build dir
  BIN=$1 scripts/cluster.sh start >/dev/null || { echo "$1: the cluster did not start; see $DATA/n*.log" >&2; exit 1; }
  local p t=$((SECONDS + 300))
  for p in $PORTS; do
    until curl -fsS "http://127.0.0.1:$p/metrics" 2>/dev/null | grep -q '^memcluster_replica_indexes_loading 0'; do
      kill -0 $(cat "$DATA"/n*.pid) 2>/dev/null || { echo "$1: a node exited; see $DATA/n*.log" >&2; exit 1; }
      [ $SECONDS -lt $t ] || { echo "$1: indexes still loading after 300 s; see $DATA/n*.log" >&2; exit 1; }
      sleep 0.5
    done
  done
  SETTLE_MIN=${SETTLE_MIN:-10} settle $(cat "$DATA"/n*.pid) >/dev/null || exit 1
}
start_nodes "$1"
"$CTL" -o json bench search --memories "${MEMORIES:-100000}" --users 1 --user-prefix s100- --addr-list "$ADDRS" \
  --clients 1 --duration 1s --warmup 0s >/dev/null 2>&1 || { echo "loading failed" >&2; exit 1; }
# Idle past fulltext's SettleAfter (30 s), so every build searches the settled index an idle shard has.
SETTLE_MIN=45 settle $(cat "$DATA"/n*.pid) >/dev/null || exit 1
stop_nodes
for r in $(seq "${ROUNDS:-2}"); do
  for dir in $(round_order "$r" "$@"); do
    start_nodes "$dir"
    for c in ${CLIENTS:-1 8}; do
      j=$("$CTL" -o json bench search --skip-load --users 1 --user-prefix s100- --addr-list "$ADDRS" --clients "$c" \
        --duration "${DUR:-10s}" --warmup 2s 2>/dev/null)
      [ -z "${JSON_DIR:-}" ] || echo "$j" >"$JSON_DIR/search-c$c-r$r.json"
      echo "$j" |
        python3 -c "import json,sys; r=json.load(sys.stdin); l=r['latency_ms']; print(f\"build=$dir round=$r clients=$c ops_per_s={r['ops_per_s']:.1f} p50_ms={l['p50']} p99_ms={l['p99']} errors={r['errors']}\")"
    done
    stop_nodes
  done
done
