#!/usr/bin/env bash
# Backup and restore throughput, and what a backup costs the foreground: 3 memnode processes (16 shards × 3) are
# loaded with batch puts in rounds of LOAD until they hold TARGET memories; puts and searches run for DUR as the
# baseline, then again for DUR while backups run back to back (memctl backup create); the first backup is
# restored into 3 fresh processes (memctl backup restore). Prints one line:
#   backup: memories=M file_bytes=B backup_s=T backup_mb_s=R backup_mem_s=N restore_s=T restore_mb_s=R
#           restore_mem_s=N put_p99_ratio=X search_p99_ratio=Y backups_during=K
# MB/s count the backup file's bytes (zstd-compressed shard streams). Keeps every memctl JSON report in $OUT.
# Ports 31480-31502 (source) and 31510-31532 (target). Env: TARGET (1000000), LOAD (120s), DUR (30s),
# OUT (bench/out/backup).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
TARGET=${TARGET:-1000000}
LOAD=${LOAD:-120s}
DUR=${DUR:-30s}
OUT=${OUT:-bench/out/backup}
bench_init backup
start_node() { # name base [flags]
  local name=$1 base=$2
  shift 2
  ./bin/memnode --node-id "$name" --data-dir "$OUT/data/$name" --http-addr "127.0.0.1:$base" \
    --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" "$@" >"$OUT/$name.log" 2>&1 &
  PIDS+=($!)
}
for i in 0 1 2; do start_node "s$i" $((31480 + 10 * i)) --bootstrap-expect 3 --join 127.0.0.1:31482 --shards 16 --replicas 3; done
A=http://127.0.0.1:31480
ADDRS=http://127.0.0.1:31480,http://127.0.0.1:31490,http://127.0.0.1:31500
until $CTL --addr $A cluster status --check >/dev/null 2>&1; do sleep 1; done
load_memories "$TARGET" "$LOAD"
say "baseline: puts and searches for $DUR"
foreground before
say "puts and searches for $DUR with backups running back to back"
foreground during &
FG=$!
k=0
while kill -0 $FG 2>/dev/null; do
  rm -f "$OUT/backup-$k.mcbak"
  $CTL --addr $A -o json backup create --out "$OUT/backup-$k.mcbak" | tail -1 >"$OUT/backup-$k.json"
  k=$((k + 1))
done
wait $FG
for ((j = 1; j < k; j++)); do rm -f "$OUT/backup-$j.mcbak"; done
say "$k backups during the foreground run; restoring the first into 3 fresh nodes"
for i in 0 1 2; do start_node "t$i" $((31510 + 10 * i)) --bootstrap-expect 3 --join 127.0.0.1:31512 --shards 16 --replicas 3; done
B=http://127.0.0.1:31510
until $CTL --addr $B cluster status --check >/dev/null 2>&1; do sleep 1; done
$CTL --addr $B -o json backup restore --in "$OUT/backup-0.mcbak" | tail -1 >"$OUT/restore.json"
FILE=$(stat -c %s "$OUT/backup-0.mcbak")
rm -f "$OUT/backup-0.mcbak"
python3 - "$OUT" "$FILE" "$k" <<'PY'
import json, sys
out, size, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b, r = json.load(open(f"{out}/backup-0.json")), json.load(open(f"{out}/restore.json"))
def p99(kind, tag): return json.load(open(f"{out}/{kind}-{tag}.json"))["latency_ms"]["p99"]
print(f"backup: memories={b['memories']} file_bytes={size} backup_s={b['seconds']:.1f} "
      f"backup_mb_s={size/1e6/b['seconds']:.1f} backup_mem_s={b['memories']/b['seconds']:.0f} "
      f"restore_s={r['seconds']:.1f} restore_mb_s={size/1e6/r['seconds']:.1f} restore_mem_s={r['memories']/r['seconds']:.0f} "
      f"put_p99_ratio={p99('put','during')/p99('put','before'):.2f} "
      f"search_p99_ratio={p99('search','during')/p99('search','before'):.2f} backups_during={k}")
PY
