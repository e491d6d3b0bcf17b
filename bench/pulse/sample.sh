#!/usr/bin/env bash
# Samples the nodes' metrics about once a second (0.7 s apart, plus the scrapes' time) into DIR (one file a sample, named by its Unix time), until
# killed: what bench/pulse/report.py turns into one line a second, to find what a latency spike coincides with
# (the nodes' CPU, collections, Pebble flushes and compactions, full-text batches waiting, vector checkpoints).
# Usage: bench/pulse/sample.sh DIR HOST:PORT [...]   e.g. bench/pulse/sample.sh /tmp/p 127.0.0.1:27480 127.0.0.1:27490 127.0.0.1:27500
set -u
dir=$1
shift
mkdir -p "$dir"
keep='^(process_cpu_seconds_total|go_gc_duration_seconds_count|memcluster_storage_compactions_total|memcluster_storage_flushes_total|memcluster_index_batches_waiting|memcluster_index_checkpoint(s_total|_seconds_total)|memcluster_shard_op_seconds_(sum|count)|memcluster_api_request_seconds_(sum|count))'
while true; do
  t=$(date +%s.%N)
  for a in "$@"; do
    # A node's lines only when its whole answer came: report.py compares the nodes each pair of samples holds.
    if m=$(curl -fsS --max-time 2 "http://$a/metrics" 2>/dev/null); then
      grep -E "$keep" <<<"$m" | sed "s/^/$a /"
    fi
  done >"$dir/.$t.tmp"
  mv "$dir/.$t.tmp" "$dir/$t.txt"
  sleep 0.7
done
