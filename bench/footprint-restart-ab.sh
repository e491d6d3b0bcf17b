#!/usr/bin/env bash
# Restarts of one data dir (a bench/footprint.sh run's OUT/data), one per memnode binary given, in the order given
# (alternate them): start `memnode --dev` on it, wait for /readyz and for every replica's indexes to load, print
# the RSS then and 30 s later, the heap in use and the GOGC the node runs with, stop.
# Usage: bench/footprint-restart-ab.sh DATA_DIR BIN [BIN ...]
set -u
DATA=$1
shift
A=http://127.0.0.1:27600
metric() { curl -fsS "$A/metrics" | awk -v m="$1" '$1 == m {printf "%.0f", $2}'; }
rss() { awk '$1 == "VmRSS:" {print int($2 / 1024)}' "/proc/$1/status"; }
for bin in "$@"; do
  "$bin" --dev --data-dir "$DATA" --http-addr 127.0.0.1:27600 --raft-addr 127.0.0.1:27601 \
    --gossip-addr 127.0.0.1:27602 >/tmp/footprint-restart-ab.log 2>&1 &
  pid=$!
  until curl -fsS "$A/readyz" >/dev/null 2>&1; do sleep 0.2; done
  until [ "$(metric memcluster_replica_indexes_loading)" = 0 ]; do sleep 0.2; done
  r1=$(rss $pid)
  sleep 30
  echo "bin=$bin rss_loaded_mib=$r1 rss_idle30_mib=$(rss $pid) heap_inuse_mib=$(($(metric go_memstats_heap_inuse_bytes) >> 20)) gc_percent=$(metric memcluster_gc_percent)"
  kill $pid
  wait $pid 2>/dev/null
done
