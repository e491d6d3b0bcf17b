#!/usr/bin/env bash
# Footprint: resident memory of one node per memory held, against the raw bytes of what it holds (the texts plus
# their 256-d float32 embeddings). One `memnode --dev` (16 shards, 1 replica) is loaded by batch puts until it
# holds TARGET memories, left idle for SETTLE seconds (indexes absorb the load, scorch merges), and measured; then
# it is stopped, restarted on the same data, measured again once /readyz answers and after SETTLE idle seconds.
# Prints one line per phase:
# Phases: loaded (after the load and SETTLE idle seconds), restarted (every replica's indexes loaded),
# restarted-idle (SETTLE seconds later).
#   footprint: phase=P memories=N rss_mib=R anon_mib=A file_mib=F hwm_mib=H heap_inuse_mib=G disk_mib=D raw_mib=W
#              rss_per_raw=X anon_per_raw=Y bytes_per_memory=B
# anon is the process's own memory (Go heap, Pebble's cache and memtables); file is the mapped files it touched
# (bleve's segments), which the kernel can drop under pressure and read back.
# raw = memories × (mean text bytes, sampled from 20 users through the paged listings, + 256 × 4).
# Usage: bench/footprint.sh; env TARGET (1000000), LOAD (60s: one loading round), SETTLE (60), OUT
# (bench/out/footprint), NODE_FLAGS (extra memnode flags; --pprof saves a heap profile per phase), MEMNODE (the
# binary; default ./bin/memnode, built here). GOMEMLIMIT in the
# environment reaches the node. Texts are bench write's (200 bytes asked, cut at a word).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/footprint}
TARGET=${TARGET:-1000000}
LOAD=${LOAD:-60s}
SETTLE=${SETTLE:-60}
DIM=256
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_init footprint
A=http://127.0.0.1:27600
ADDRS=$A

start_node() {
  ${MEMNODE:-./bin/memnode} --dev --data-dir "$OUT/data" --http-addr 127.0.0.1:27600 --raft-addr 127.0.0.1:27601 \
    --gossip-addr 127.0.0.1:27602 ${NODE_FLAGS:-} >>"$OUT/node.log" 2>&1 &
  NODE=$!
  PIDS+=("$NODE")
  local t0
  t0=$(date +%s)
  until curl -fsS "$A/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$NODE" 2>/dev/null; then say "memnode exited; see $OUT/node.log"; exit 1; fi
    sleep 0.2
  done
  say "ready in $(($(date +%s) - t0))s"
}

kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
metric() { curl -fsS "$A/metrics" | awk -v m="$1" '$1 == m {printf "%.0f", $2}'; }

# measure PHASE: one line for the node as it is now.
measure() {
  local rss anon file hwm heap disk cpu
  rss=$(kib "$NODE" VmRSS)
  anon=$(kib "$NODE" RssAnon)
  file=$(kib "$NODE" RssFile)
  hwm=$(kib "$NODE" VmHWM)
  heap=$(metric go_memstats_heap_inuse_bytes)
  disk=$(du -sk "$OUT/data" | awk '{print $1}')
  cpu=$(curl -fsS "$A/metrics" | awk '$1 == "process_cpu_seconds_total" {print $2}')
  awk -v p="$1" -v n="$MEMORIES" -v rss="$rss" -v anon="$anon" -v file="$file" -v hwm="$hwm" -v heap="$heap" -v disk="$disk" -v cpu="$cpu" -v text="$TEXT_MEAN" -v dim="$DIM" 'BEGIN {
    raw = n * (text + 4 * dim)
    printf "footprint: phase=%s memories=%d rss_mib=%.0f anon_mib=%.0f file_mib=%.0f hwm_mib=%.0f heap_inuse_mib=%.0f disk_mib=%.0f raw_mib=%.0f rss_per_raw=%.2f anon_per_raw=%.2f bytes_per_memory=%.0f cpu_s=%.1f\n",
      p, n, rss / 1024, anon / 1024, file / 1024, hwm / 1024, heap / 1048576, disk / 1024, raw / 1048576, rss * 1024 / raw, anon * 1024 / raw, rss * 1024 / n, cpu }' |
    tee -a "$OUT/footprint.txt"
  # With NODE_FLAGS=--pprof, a heap profile of each phase for `go tool pprof`.
  curl -fsS "$A/debug/pprof/heap" >"$OUT/heap-$1.pb" 2>/dev/null || rm -f "$OUT/heap-$1.pb"
}

: >"$OUT/node.log"
: >"$OUT/footprint.txt"
start_node
load_memories "$TARGET" "$LOAD"
# What the node holds, from its shards (the bench counts the puts it sent).
MEMORIES=$($CTL --addr "$A" -o json cluster status | python3 -c 'import json,sys; print(sum(s.get("memories", 0) for s in json.load(sys.stdin)["shards"]))')
TEXT_MEAN=$(python3 - "$A" <<'PY'
import json, sys, urllib.request
a = sys.argv[1]
get = lambda path: json.load(urllib.request.urlopen(a + path, timeout=60))
n = size = 0
for u in get("/v1/users?limit=20")["users"]:
    for m in get("/v1/users/%s/memories?limit=100" % u)["memories"]:
        n, size = n + 1, size + len(m["text"].encode())
print(size / n)
PY
)
say "mean text bytes $TEXT_MEAN; idle for ${SETTLE}s"
sleep "$SETTLE"
measure loaded
kill "$NODE"
wait "$NODE" 2>/dev/null || true
start_node
# A restarted node is ready before its replicas' indexes have loaded (they load behind their raft groups):
# measure once they have.
t0=$(date +%s)
until [ "$(metric memcluster_replica_indexes_loading)" = 0 ]; do sleep 0.2; done
say "indexes loaded $(($(date +%s) - t0))s after ready"
measure restarted
sleep "$SETTLE"
measure restarted-idle
