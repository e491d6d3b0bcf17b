#!/usr/bin/env bash
# Core-store figures for docs/benchmarks.md: replicated writes at 1/16/64 clients through a 3-node cluster, the
# same against a single-replica node as a baseline in the same run, and search latency for one user holding 10k
# and 100k memories. Results land as JSON in $OUT (default bench-out/). Takes ~15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-out}
REPS=${REPS:-3}
DUR=${DUR:-10s}
command -v jq >/dev/null || { echo "bench-core.sh needs jq (apt-get install -y jq)" >&2; exit 1; }
mkdir -p "$OUT"
make build >/dev/null
CTL=./bin/memctl
ADDRS=http://127.0.0.1:7480,http://127.0.0.1:7490,http://127.0.0.1:7500

cleanup() { scripts/cluster.sh stop >/dev/null 2>&1 || true; [ -n "${DEVPID:-}" ] && kill "$DEVPID" 2>/dev/null || true; }
trap cleanup EXIT

write_round() { # label addrs
  for c in 1 16 64; do
    for r in $(seq 1 "$REPS"); do
      $CTL -o json bench write --clients "$c" --duration "$DUR" --addr-list "$2" >"$OUT/write-$1-c$c-r$r.json"
      echo "write $1 clients=$c rep=$r: $(jq -r '"\(.ops_per_s|floor) ops/s p50=\(.latency_ms.p50) p99=\(.latency_ms.p99)"' "$OUT/write-$1-c$c-r$r.json")"
    done
  done
}

# Baseline: one node, one replica per shard (same binary, same machine, same run).
rm -rf "$OUT/dev-data"
./bin/memnode --dev --node-id bench --data-dir "$OUT/dev-data" >"$OUT/dev.log" 2>&1 &
DEVPID=$!
for _ in $(seq 1 30); do $CTL health >/dev/null 2>&1 && break; sleep 1; done
write_round 1replica http://127.0.0.1:7480
kill "$DEVPID"; wait "$DEVPID" 2>/dev/null || true; DEVPID=

# Three nodes, three replicas per shard; clients spread over every node.
rm -rf memdata-cluster
scripts/cluster.sh start >/dev/null
write_round 3replica "$ADDRS"

# Search: one user with 10k, then 100k memories, through the cluster (linearizable reads).
for n in 10000 100000; do
  $CTL -o json bench search --memories "$n" --users 1 --k 6 --clients 8 --duration "$DUR" \
    --user-prefix "bench-search-$n-" >"$OUT/search-$n.json"
  echo "search $n memories: $(jq -r '"\(.ops_per_s|floor) ops/s p50=\(.latency_ms.p50) p99=\(.latency_ms.p99)"' "$OUT/search-$n.json")"
done
