#!/usr/bin/env bash
# `make bench`: Go benchmarks, then the peer comparisons in one run, the footprint, then the report.
#   1. Go benchmarks of vector, fulltext and raftstore (short benchtime)        -> $OUT/gobench.txt
#      a shard's search at 100k memories of one user (BenchmarkShardSearch, pipeline) -> $OUT/shardsearch.txt
#      and tenant independence: a 200-memory user alone in its shard vs beside TENANT_OTHERS, both shards asked
#      alternately                                                                -> $OUT/tenant.txt
#   2. bench/cmd/peers: vector index vs chromem-go vs stream bandwidth, fulltext vs plain bleve
#                                                                                -> $OUT/peers.json
#   3. 3-replica acknowledged writes: memcluster (3 memnode processes) vs etcd (3 embedded members,
#      bench/etcdpeer, a throwaway nested module), WRITE_CLIENTS clients (1 16 64), REPS runs of DUR each;
#      memcluster's clients send each user's puts to its shard's leader (WRITE_ROUTE=leader; node: to their
#      node, which forwards), etcd's to their member, which forwards to its leader; each side starts once the
#      other is back near idle (bench/lib.sh's settle: memnode's deferred full-text batches fall in its own time)
#                                                                                -> $OUT/{memcluster,etcd}-cN-rR.json
#   3a. consolidation on the same memcluster: 16 clients appending SESSION_TURNS (20) turns and flushing, REPS
#       runs open loop at SESSION_RATE (55) sessions/s in all, then one closed loop -> $OUT/session-rR.json
#   3s. then, on the same clusters, one SUSTAIN_DUR (120s) run at 64 clients a side, and how long each side stayed
#       busy after it (memnode's replicas defer full-text batches under a saturated write path; a DUR run is a
#       burst)                                             -> $OUT/{memcluster,etcd}-sustained-c64.json, $OUT/sustained.txt
#   3b. footprint: one memnode --dev holding FOOTPRINT_TARGET memories (1000000), RSS against raw bytes,
#       after the load and after a restart (bench/footprint.sh)                   -> $OUT/footprint/footprint.txt
#   3c. recovery under load: 3 memnode processes holding CATCHUP_TARGET memories (1000000), one SIGKILLed for
#       10 s and restarted while 16 clients put; its /readyz time and the put p99 while it catches up against
#       the baseline's (bench/catchup.sh)                                       -> $OUT/catchup/catchup.txt
#   3d. search at 100k memories of one user through 3 memnode processes, REPS rounds of 1 and 8 clients
#       (bench/search-ab.sh with this build alone)                             -> $OUT/search/search-cN-rR.json
#   3e. LongMemEval's query latency, REPS evals on fresh memnode --dev nodes (bench/longmemeval-ab.sh; skipped
#       when LONGMEMEVAL_FILE, ../shared/data/longmemeval/longmemeval-s-dev60.json, is absent: a 60-question
#       sample of LongMemEval-S in memctl eval longmemeval's format, kept outside the repository)
#                                                                                -> $OUT/longmemeval/*.json
#   4. bench/cmd/report: rewrites the "peers" section of docs/benchmarks.md (with a table of the performance
#      aims against these figures), draws docs/search-latency.png and docs/write-scaling.png
# Ports: memcluster 27480-27502 (HTTP/raft/gossip per node), etcd 27510-27515, footprint 27600-27602,
#        recovery 31540-31562, search 27700-27722, LongMemEval 27800.
# Environment: OUT (bench/out), REPS (3), DUR (5s), GOBENCHTIME (100ms), SKIP_GOBENCH=1, SKIP_PEERS=1 (reuse $OUT/peers.json), SKIP_REPORT=1 (leave docs/ alone),
#              SKIP_WRITES=1, WRITE_ROUTE (leader), MEMNODE_EXTRA (more memnode flags for the write and session clusters), SKIP_SUSTAINED=1, SUSTAIN_DUR (120s), SKIP_FOOTPRINT=1, FOOTPRINT_TARGET (1000000), SKIP_CATCHUP=1, CATCHUP_TARGET (1000000), SKIP_SESSIONS=1, SESSION_RATE (55), SESSION_TURNS (20), SKIP_SEARCH=1, SKIP_LONGMEMEVAL=1, LONGMEMEVAL_FILE, WRITE_CLIENTS ("1 16 64"), TENANT_OTHERS (memories/users beside the small user, 1000000/10000: the aim's case, about 2.5 minutes a repetition).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh # ticks, settle
OUT=${OUT:-bench/out}
REPS=${REPS:-3}
DUR=${DUR:-5s}
GOBENCHTIME=${GOBENCHTIME:-100ms}
GO=${GO:-go}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s)
echo "$T0" >"$OUT/started" # the report marks figures older than this run (a part skipped here) as such
say() { echo "[bench $(($(date +%s) - T0))s] $*" >&2; }
# begin PART ... made PART: records when this run measured PART (made/PART: when it began, Unix seconds), once PART
# has finished, so a part cut short leaves the last complete one's date; the report reads it to date a part a later
# run skipped. Files' times would not do, since a clone of the repository gives every file its own.
declare -A BEGUN=()
begin() { BEGUN[$1]=$(date +%s); }
made() { mkdir -p "$OUT/made" && echo "${BEGUN[$1]}" >"$OUT/made/$1"; }
# busy_after NAME WAITED CAP: what settle's WAITED seconds say of NAME's processes after a run, as key=value: the
# seconds they stayed busy (settle's two quiet seconds taken off) and, when settle gave up at CAP, still_busy=1.
busy_after() {
  local b=$(($2 - 2))
  [ $b -ge 0 ] || b=0
  echo -n "$1_busy_after_s=$b"
  [ "$2" -lt "$3" ] || echo -n " $1_still_busy=1"
  echo
}

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# 1. Go benchmarks (the package benchmarks; figures land in the report's Go-benchmark table).
if [ -z "${SKIP_GOBENCH:-}" ]; then
  begin gobench
  say "go benchmarks (benchtime $GOBENCHTIME)"
  $GO test -run '^$' -bench . -benchmem -benchtime "$GOBENCHTIME" ./vector/ ./fulltext/ ./raftstore/ >"$OUT/gobench.txt"
  say "shard-side search at 100k memories of one user (BenchmarkShardSearch, pipeline)"
  $GO test -run '^$' -bench 'ShardSearch/memories=100k/vocab=zipf20k/mode=pipeline$' -benchtime 1000x -count "$REPS" \
    -timeout 60m ./retrieval/ >"$OUT/shardsearch.txt"
  say "tenant independence (${TENANT_OTHERS:-1000000/10000} other memories/users)"
  $GO test -run '^$' -bench TenantIndependence -benchtime 5000x -count "$REPS" -timeout 60m ./retrieval/ \
    -args -tenant-others="${TENANT_OTHERS:-1000000/10000}" >"$OUT/tenant.txt"
  made gobench
fi

# 2. Search peers, in one process.
# The report needs peers.json: SKIP_PEERS reuses one, and runs the peers when there is none unless the report is
# skipped too.
if [ -z "${SKIP_PEERS:-}" ] || { [ ! -f "$OUT/peers.json" ] && [ -z "${SKIP_REPORT:-}" ]; }; then
  begin peers
  say "search peers (bench/cmd/peers -reps $REPS)"
  $GO build -o "$OUT/peers" ./bench/cmd/peers
  "$OUT/peers" -reps "$REPS" -tmp "$OUT/tmp" -out "$OUT/peers.json"
  made peers
fi

# build_bins: memnode and memctl into $OUT/bin, once (a stable copy: bin/ is shared with other work).
build_bins() {
  [ -z "${BUILT:-}" ] || return 0
  say "building memnode/memctl (make build)"
  make build >/dev/null
  mkdir -p "$OUT/bin"
  cp bin/memnode bin/memctl "$OUT/bin/"
  BUILT=1
}

# 3. Replicated writes, then consolidation on the same cluster.
if [ -z "${SKIP_WRITES:-}" ]; then
  begin writes
  build_bins
  say "building etcdpeer"
  rm -f "$OUT/etcd-error.txt"
  (cd bench/etcdpeer && CGO_ENABLED=0 $GO build -o "$OUT/bin/etcdpeer" .) 2>"$OUT/etcd-build.log" || {
    echo "bench/etcdpeer did not build: $(tail -3 "$OUT/etcd-build.log" | tr '\n' ' ')" >"$OUT/etcd-error.txt"
    rm -f "$OUT/bin/etcdpeer"
  }
  CTL="$OUT/bin/memctl"

  # Both systems run side by side and each repetition measures them back to back, so a change in the
  # machine's load (other work shares it) falls on both sides of a ratio; the idle one costs little CPU.
  say "memcluster: 3 nodes on 127.0.0.1:27480/27490/27500"
  rm -rf "$OUT/memdata" && mkdir -p "$OUT/memdata"
  ADDRS="" MEMPIDS=()
  for i in 1 2 3; do
    base=$((27470 + 10 * i))
    "$OUT/bin/memnode" --node-id "n$i" --data-dir "$OUT/memdata/n$i" --http-addr "127.0.0.1:$base" \
      --raft-addr "127.0.0.1:$((base + 1))" --gossip-addr "127.0.0.1:$((base + 2))" \
      --bootstrap-expect 3 --join 127.0.0.1:27482 --gossip-profile local ${MEMNODE_EXTRA:-} >"$OUT/memdata/n$i.log" 2>&1 &
    PIDS+=($!) MEMPIDS+=($!)
    ADDRS="$ADDRS${ADDRS:+,}http://127.0.0.1:$base"
  done
  ok=
  for _ in $(seq 1 90); do
    if "$CTL" --addr http://127.0.0.1:27480 cluster status --check >/dev/null 2>&1; then ok=1; break; fi
    sleep 1
  done
  [ -n "$ok" ] || { echo "memcluster did not become healthy; see $OUT/memdata/n*.log" >&2; exit 1; }
  ETCD=
  if [ -x "$OUT/bin/etcdpeer" ]; then
    say "etcd: 3 embedded members, clients on 127.0.0.1:27510/27512/27514"
    rm -rf "$OUT/etcd-data"
    "$OUT/bin/etcdpeer" serve --dir "$OUT/etcd-data" --base 27510 >"$OUT/etcd.log" 2>&1 &
    PIDS+=($!) ETCDPID=$!
    for _ in $(seq 1 60); do grep -q '^ready' "$OUT/etcd.log" && break; sleep 1; done
    if grep -q '^ready' "$OUT/etcd.log"; then
      ETCD=1
    else
      echo "etcd members did not become ready; see $OUT/etcd.log" >"$OUT/etcd-error.txt"
    fi
  fi
  summary() { jq -r '"\(.ops_per_s|floor) ops/s p50=\(.latency_ms.p50) p99=\(.latency_ms.p99) errors=\(.errors)"' "$1" 2>/dev/null || echo '?'; }
  rm -f "$OUT"/memcluster-c*-r*.json "$OUT"/memcluster-c*-r*.err "$OUT"/etcd-c*-r*.json # the report plots every client count it finds
  for c in ${WRITE_CLIENTS:-1 16 64}; do
    for r in $(seq 1 "$REPS"); do
      "$CTL" -o json bench write --clients "$c" --duration "$DUR" --route "${WRITE_ROUTE:-leader}" --addr-list "$ADDRS" \
        >"$OUT/memcluster-c$c-r$r.json" 2>"$OUT/memcluster-c$c-r$r.err" || say "memcluster clients=$c rep=$r failed: $(tail -1 "$OUT/memcluster-c$c-r$r.err")"
      # Each run starts once the other side is back near idle: memnode builds the full-text batches its
      # followers deferred up to 5 s after the run, which would otherwise fall in the next runs of both sides.
      s=$(settle "${MEMPIDS[@]}") || { echo "a memnode exited; see $OUT/memdata/n*.log" >&2; exit 1; }
      say "memcluster clients=$c rep=$r: $(summary "$OUT/memcluster-c$c-r$r.json") (idle again after ${s%% *}s)"
      [ -n "$ETCD" ] || continue
      "$OUT/bin/etcdpeer" load --endpoints 127.0.0.1:27510,127.0.0.1:27512,127.0.0.1:27514 \
        --clients "$c" --duration "$DUR" --warmup 1s --size 200 >"$OUT/etcd-c$c-r$r.json"
      s=$(SETTLE_MIN=0 settle "$ETCDPID") || { echo "etcdpeer exited; see $OUT/etcd.log" >&2; exit 1; }
      say "etcd clients=$c rep=$r: $(summary "$OUT/etcd-c$c-r$r.json") (idle again after ${s%% *}s)"
    done
  done
  made writes
  # Consolidation: 16 clients each appending SESSION_TURNS (20) turns and flushing, open loop at SESSION_RATE
  # (55) sessions a second in all (1,100 messages/s asked: memctl divides by the run's whole time, the last
  # requests' tail included, so the aim's 1,000 needs a margin); then once closed loop (as fast as the cluster goes).
  if [ -z "${SKIP_SESSIONS:-}" ]; then
    begin sessions
    rm -f "$OUT"/session-*.json "$OUT"/session-*.err # a skipped part keeps its last figures, which the report dates
    ssummary() { jq -r '"\(.messages_per_s|floor) messages/s flush p50=\(.flush_latency_ms.p50) p99=\(.flush_latency_ms.p99) errors=\(.errors)"' "$1" 2>/dev/null || echo '?'; }
    for r in $(seq 1 "$REPS") closed; do
      rate=${SESSION_RATE:-55}
      [ "$r" != closed ] || rate=0
      "$CTL" -o json bench session --clients 16 --turns "${SESSION_TURNS:-20}" --duration 20s --warmup 3s \
        --rate "$rate" --route "${WRITE_ROUTE:-leader}" --addr-list "$ADDRS" >"$OUT/session-r$r.json" \
        2>"$OUT/session-r$r.err" || say "consolidation rep=$r failed: $(tail -1 "$OUT/session-r$r.err")"
      s=$(settle "${MEMPIDS[@]}") || { echo "a memnode exited; see $OUT/memdata/n*.log" >&2; exit 1; }
      say "consolidation rep=$r rate=$rate: $(ssummary "$OUT/session-r$r.json") (idle again after ${s%% *}s)"
    done
    made sessions
  fi
  # Sustained: one long run at 64 clients a side, after the sessions (it leaves the cluster holding its puts).
  # memnode's replicas build their full-text batches at a lower priority than the write path and defer them under
  # a saturated one, so a DUR run measures a burst whose indexing falls after it; over SUSTAIN_DUR that work, the
  # compactions and the collector's marking of what the nodes hold compete with the puts. How long each side
  # stays busy after its run (settle's two quiet seconds taken off; up to 10 minutes, then "still busy") goes to
  # sustained.txt.
  if [ -z "${SKIP_SUSTAINED:-}" ]; then
    begin sustained
    rm -f "$OUT"/memcluster-sustained-c*.json "$OUT"/etcd-sustained-c*.json "$OUT"/memcluster-sustained-c*.err "$OUT/sustained.txt"
    sd=${SUSTAIN_DUR:-120s}
    "$CTL" -o json bench write --clients 64 --duration "$sd" --route "${WRITE_ROUTE:-leader}" --addr-list "$ADDRS" \
      >"$OUT/memcluster-sustained-c64.json" 2>"$OUT/memcluster-sustained-c64.err" || say "memcluster sustained run failed: $(tail -1 "$OUT/memcluster-sustained-c64.err")"
    s=$(SETTLE_MAX=600 settle "${MEMPIDS[@]}") || { echo "a memnode exited; see $OUT/memdata/n*.log" >&2; exit 1; }
    say "memcluster sustained, 64 clients for $sd: $(summary "$OUT/memcluster-sustained-c64.json") (idle again after ${s%% *}s)"
    mbusy=$(busy_after memcluster "${s%% *}" 600)
    echo "sustained: clients=64 duration=$sd $mbusy" >"$OUT/sustained.txt"
    if [ -n "$ETCD" ]; then
      "$OUT/bin/etcdpeer" load --endpoints 127.0.0.1:27510,127.0.0.1:27512,127.0.0.1:27514 \
        --clients 64 --duration "$sd" --warmup 1s --size 200 >"$OUT/etcd-sustained-c64.json" || say "etcd sustained run failed"
      s=$(SETTLE_MIN=0 SETTLE_MAX=600 settle "$ETCDPID") || { echo "etcdpeer exited; see $OUT/etcd.log" >&2; exit 1; }
      say "etcd sustained, 64 clients for $sd: $(summary "$OUT/etcd-sustained-c64.json") (idle again after ${s%% *}s)"
      echo "sustained: clients=64 duration=$sd $mbusy $(busy_after etcd "${s%% *}" 600)" >"$OUT/sustained.txt"
    fi
    made sustained
  fi
  cleanup
  PIDS=()
fi

# 3b. Footprint.
if [ -z "${SKIP_FOOTPRINT:-}" ]; then
  begin footprint
  say "footprint at ${FOOTPRINT_TARGET:-1000000} memories (bench/footprint.sh)"
  OUT="$OUT/footprint" TARGET="${FOOTPRINT_TARGET:-1000000}" bench/footprint.sh
  rm -rf "$OUT/footprint/data"
  made footprint
fi

# 3c. Recovery under load.
if [ -z "${SKIP_CATCHUP:-}" ]; then
  begin catchup
  say "recovery under load at ${CATCHUP_TARGET:-1000000} memories (bench/catchup.sh)"
  mkdir -p "$OUT/catchup"
  OUT="$OUT/catchup" TARGET="${CATCHUP_TARGET:-1000000}" LOAD=60s bench/catchup.sh | tee "$OUT/catchup/catchup.txt"
  rm -rf "$OUT/catchup/data"
  made catchup
fi

# 3d. Search at 100k memories of one user through a 3-node cluster (bench/search-ab.sh with this build alone:
# loaded once, then REPS rounds of a restart and 1 and 8 clients for 10 s).
if [ -z "${SKIP_SEARCH:-}" ]; then
  begin search
  build_bins
  say "search at 100k memories of one user, 3 nodes (bench/search-ab.sh, ports 27700-27722)"
  rm -rf "$OUT/search" && mkdir -p "$OUT/search"
  JSON_DIR="$OUT/search" ROUNDS="$REPS" BASE_PORT=27700 DUR=10s CLIENTS="1 8" MEMORIES=100000 SETTLE_MIN=10 \
    bench/search-ab.sh "$OUT/bin" >&2 || say "search at 100k failed (above)"
  made search
fi

# 3e. LongMemEval's query latency: REPS evals, each on a fresh memnode --dev (bench/longmemeval-ab.sh).
LME=${LONGMEMEVAL_FILE:-../shared/data/longmemeval/longmemeval-s-dev60.json}
if [ -z "${SKIP_LONGMEMEVAL:-}" ]; then
  begin longmemeval
  rm -rf "$OUT/longmemeval"
  if [ -f "$LME" ]; then
    build_bins
    say "LongMemEval ($LME), $REPS evals (bench/longmemeval-ab.sh)"
    mkdir -p "$OUT/longmemeval"
    FILE="$LME" JSON_DIR="$OUT/longmemeval" ROUNDS="$REPS" PASSES=1 PORT=27800 bench/longmemeval-ab.sh "$OUT/bin" >&2 ||
      say "LongMemEval failed (above)"
  else
    say "LongMemEval skipped: $LME not found (set LONGMEMEVAL_FILE)"
  fi
  made longmemeval
fi

# 4. Report.
# A run's stderr is kept, whole, only when it said something besides memctl's progress lines ("bench write: 4s/5s
# 2798 ops …", "bench write: warming up").
for e in "$OUT"/*.err; do
  [ -f "$e" ] || continue
  grep -qvE '^bench [a-z]+: (warming up|[0-9hms.]+/[0-9hms.]+ [0-9]+ ops )' "$e" || rm -f "$e"
done
if [ -n "${SKIP_REPORT:-}" ]; then
  say "done (report skipped: docs/ untouched; results in $OUT)"
  exit 0
fi
say "report"
$GO run ./bench/cmd/report -in "$OUT" -reps "$REPS" -dur "$DUR" -gobenchtime "$GOBENCHTIME" \
  -doc docs/benchmarks.md -png docs/search-latency.png -write-png docs/write-scaling.png
rm -rf "$OUT/tmp" "$OUT/memdata" "$OUT/etcd-data"
say "done"
