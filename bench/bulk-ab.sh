#!/usr/bin/env bash
# Bulk loads through a fresh 3-node cluster (scripts/cluster.sh; 16 shards × 3 replicas) per build: LOADS (3)
# loads of DUR (60s) each, one after another on the same cluster, of 100-memory batches from 32 clients over 1000
# users (bench/lib.sh's load_memories, as make bench's recovery and footprint runs load). A load outruns what the
# nodes' compactions absorb after a minute or so; the report shows what each load got through, how its batches
# ended (errors by code: overloaded is a refusal before anything was proposed, outcome_unknown a batch caught in
# the cluster past the request's deadline), their latency, and per node the seconds Pebble stalled every write,
# the writes refused as overloaded and the raft appends that timed out. Usage: bench/bulk-ab.sh DIR [...], each
# DIR holding a build's memnode and memctl (e.g. bin); env ROUNDS (1; the builds' order reverses every other
# round), LOADS, DUR. Latencies are of the batches that succeeded; the per-node figures are totals over the loads,
# but for the peak resident memory (VmHWM) and the full-text backlog when the last load ends; then how long the
# cluster took to stop (SIGTERM) and how many of its nodes panicked.
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
ADDRS=http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500
run() { # dir
  local data i hwm t0
  if ! command -v ss >/dev/null; then
    echo "bulk-ab: needs ss (iproute2) to check the ports" >&2
    return 1
  fi
  if ss -ltn | grep -qE ':7(480|490|500) '; then
    echo "bulk-ab: a port of 7480/7490/7500 is in use: stop what listens there first" >&2
    return 1
  fi
  data=$(mktemp -d)
  export DATA=$data BIN=$1 MEMNODE_EXTRA="--shards 16 --replicas 3 --gossip-profile local"
  if ! scripts/cluster.sh start >/dev/null; then
    echo "bulk-ab: $1: the cluster did not start; see $data/n*.log" >&2
    scripts/cluster.sh stop
    return 1
  fi
  for i in $(seq "${LOADS:-3}"); do
    "$BIN/memctl" --addr http://127.0.0.1:7480 -o json --timeout 60s bench write --addr-list "$ADDRS" --batch 100 \
      --clients 32 --users 1000 --duration "${DUR:-60s}" --warmup 0 >"$data/load-$i.json" 2>"$data/load-$i.err"
    if [ ! -s "$data/load-$i.json" ]; then
      echo "bulk-ab: $1: load $i reported nothing: $(tail -1 "$data/load-$i.err")" >&2
      continue
    fi
    python3 - "$data/load-$i.json" "$1" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); l = r['latency_ms']
errs = ' '.join(f'{k}={v}' for k, v in sorted(r.get('errors_by_code', {}).items())) or 'none'
print(f"build={sys.argv[2]} load={sys.argv[3]} batches={r['ops']} memories_per_s={r['ops'] * r['batch'] / r['duration_s']:.0f} "
      f"errors: {errs} p50_ms={l['p50']:.0f} p99_ms={l['p99']:.0f} max_ms={l['max']:.0f} duration_s={r['duration_s']:.1f}")
PY
  done
  for i in 1 2 3; do
    hwm=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$(cat "$data/n$i.pid")/status" 2>/dev/null)
    curl -fsS "127.0.0.1:$((7470 + 10 * i))/metrics" | awk -v node="n$i" -v logf="$data/n$i.log" -v hwm="${hwm:-?}" '
      /^memcluster_storage_write_stall_seconds_total / { stall = $2 }
      /^memcluster_api_overloaded_total / { refused = $2 }
      /^memcluster_index_backlog / { backlog = $2 }
      END {
        cmd = "grep -c \"failed to appendEntries.*i/o timeout\" " logf; cmd | getline timeouts; close(cmd)
        printf "  %s: write stalls %.1f s, writes refused overloaded %d, raft appends timed out %d, peak RSS %s MiB, full-text backlog at the end %d\n", node, stall, refused, timeouts, hwm, backlog
      }'
  done
  t0=$SECONDS
  scripts/cluster.sh stop
  for i in $(seq 600); do pgrep -f "data-dir $data" >/dev/null || break; sleep 0.2; done
  echo "  stopped in $((SECONDS - t0)) s; nodes that panicked: $(grep -l '^panic:' "$data"/n*.log | wc -l)"
  pkill -9 -f "data-dir $data" # a node still shutting down after two minutes (a stalled store) is killed
  rm -rf "$data"
}
for r in $(seq "${ROUNDS:-1}"); do
  for dir in $(round_order "$r" "$@"); do run "$dir"; done
done
