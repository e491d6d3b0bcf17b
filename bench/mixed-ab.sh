#!/usr/bin/env bash
# Linearizable searches beside a write load, per build: a fresh 3-node cluster (scripts/cluster.sh; 16 shards ×
# 3 replicas), 4 users × 2,000 memories loaded, then WRITERS (48) clients putting for 20 s while searches of
# those users arrive at RATE (40) a second, open loop (`memctl bench search --rate`), for 15 s from the
# writes' third second. Prints the writes' puts/s and p99 and the searches' p50 and p99. Usage:
# bench/mixed-ab.sh DIR [DIR ...], each DIR holding a build's memnode and memctl (e.g. bin); builds run in the
# order given, so alternate them (A B A B) on a busy machine. WRITE_RATE (puts/s in all) holds the writers to
# that rate, open loop, so that builds of different write throughput give the searches the same load.
set -u
cd "$(dirname "$0")/.."
ADDRS=http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500
for BIN in "$@"; do
  data=$(mktemp -d)
  export DATA=$data BIN MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local"
  scripts/cluster.sh start >/dev/null || exit 1
  "$BIN/memctl" -o json bench search --memories 2000 --users 4 --user-prefix mix- --load-clients 16 --clients 1 \
    --duration 1s --addr-list $ADDRS >/dev/null 2>&1
  sleep 3 # the load's last batches indexed
  "$BIN/memctl" -o json bench write --clients "${WRITERS:-48}" ${WRITE_RATE:+--rate $WRITE_RATE} --duration 20s --addr-list $ADDRS >"$data/w.json" 2>/dev/null &
  sleep 2
  "$BIN/memctl" -o json bench search --skip-load --user-prefix mix- --users 4 --clients 8 --rate "${RATE:-40}" \
    --duration 15s --warmup 0 --addr-list $ADDRS >"$data/s.json" 2>/dev/null
  wait
  python3 - "$data" "$BIN" <<'PY'
import json, sys
w = json.load(open(sys.argv[1] + '/w.json'))
s = json.load(open(sys.argv[1] + '/s.json'))
print(f"build={sys.argv[2]} puts_per_s={w['ops_per_s']:.0f} put_p99_ms={w['latency_ms']['p99']} "
      f"searches={s['ops']} search_errors={s.get('errors')} search_p50_ms={s['latency_ms']['p50']} "
      f"search_p99_ms={s['latency_ms']['p99']}")
PY
  scripts/cluster.sh stop
  while pgrep -f "data-dir $data" >/dev/null; do sleep 0.2; done
  rm -rf "$data"
done
