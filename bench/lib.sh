# Shared by the cluster benchmarks (source it): setup, loading memories and the foreground workload, for which the
# caller sets OUT and DUR, calls bench_init, and sets A (one node's address) and ADDRS (every node's,
# comma-separated); and ticks and settle, which need none of that (bench/run.sh, bench/write-ab.sh).

# bench_init NAME: builds the binaries, makes OUT absolute and empties its data, defines say (log lines prefixed
# with NAME and the seconds since start) and kills the processes whose pids the script adds to PIDS on exit.
bench_init() {
  BENCH_NAME=$1
  mkdir -p "$OUT"
  OUT=$(cd "$OUT" && pwd)
  make build >/dev/null
  CTL=./bin/memctl
  T0=$(date +%s)
  PIDS=()
  trap bench_cleanup EXIT
  rm -rf "$OUT/data"
}

say() { echo "[$BENCH_NAME $(($(date +%s) - T0))s] $*" >&2; }

bench_cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# load_memories TARGET LOAD: batch puts (100 a request, 32 clients, 1000 users) in rounds of LOAD until the
# cluster holds TARGET memories; sets MEMORIES and PREFIX (the users' prefix), and waits for the indexes.
load_memories() {
  local target=$1 load=$2 round=0
  say "loading $target memories in rounds of $load (batch puts of 100, 32 clients, 1000 users)"
  MEMORIES=0
  rm -f "$OUT"/load-*.json # a longer load of an earlier run would leave rounds this one did not make
  while ((MEMORIES < target)); do
    $CTL --addr "$A" -o json --timeout 60s bench write --addr-list "$ADDRS" --batch 100 --clients 32 --users 1000 \
      --duration "$load" --warmup 0 >"$OUT/load-$round.json"
    MEMORIES=$((MEMORIES + $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ops"]*r["batch"])' "$OUT/load-$round.json")))
    say "loaded $MEMORIES so far"
    round=$((round + 1))
  done
  PREFIX=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user_prefix"])' "$OUT/load-0.json")
  say "loaded $MEMORIES memories; waiting for the indexes to catch up"
  # A linearizable search waits for its shard leader's index; after a fast load that can take longer than a
  # request may (memnode's 15 s), so ask again while the answer is "unavailable" (503), for up to 10 minutes.
  local deadline=$((SECONDS + 600))
  until $CTL --addr "$A" --timeout 60s search --user "${PREFIX}0" "warm up" >/dev/null 2>"$OUT/warmup.err"; do
    if ! grep -q '503 unavailable' "$OUT/warmup.err" || [ $SECONDS -ge $deadline ]; then
      say "the indexes did not catch up: $(cat "$OUT/warmup.err")"
      return 1
    fi
    sleep 1
  done
  rm -f "$OUT/warmup.err"
}

# foreground TAG: 4 put clients and 4 search clients for DUR; reports in $OUT/put-TAG.json and search-TAG.json.
foreground() {
  $CTL --addr "$A" -o json bench write --addr-list "$ADDRS" --clients 4 --duration "$DUR" >"$OUT/put-$1.json" &
  local w=$!
  $CTL --addr "$A" -o json bench search --addr-list "$ADDRS" --skip-load --user-prefix "$PREFIX" --users 1000 \
    --clients 4 --duration "$DUR" >"$OUT/search-$1.json"
  wait $w
}

# ticks PID...: the CPU ticks (user and system) the processes have used so far; fails, naming it, if one has
# exited.
ticks() {
  local t=0 p v
  for p in "$@"; do
    v=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) && [ -n "$v" ] || {
      echo "ticks: process $p has exited" >&2
      return 1
    }
    t=$((t + v))
  done
  echo $t
}

# settle PID...: waits until the processes are back near idle after a run: two seconds in a row under 0.4 of a
# core, and at least SETTLE_MIN seconds (default 6: memnode builds the full-text batches a follower deferred up
# to 5 s after a write), at most SETTLE_MAX (60) s. Prints the seconds waited and the processes' ticks when it
# returned; fails if one of them has exited.
settle() {
  local quiet=0 waited=0 min=${SETTLE_MIN:-6} max=${SETTLE_MAX:-60} a b
  a=$(ticks "$@") || return 1
  while { [ $quiet -lt 2 ] || [ $waited -lt "$min" ]; } && [ $waited -lt "$max" ]; do
    sleep 1
    waited=$((waited + 1))
    b=$(ticks "$@") || return 1
    if [ $((b - a)) -lt $(($(getconf CLK_TCK) * 4 / 10)) ]; then quiet=$((quiet + 1)); else quiet=0; fi
    a=$b
  done
  echo "$waited $a"
}

# round_order ROUND DIR...: the DIRs one a line, reversed in every even round: the build run first in a round was
# measured 5–10 % faster at one client (docs/benchmarks.md, 2026-11-29), so a fixed order biases a comparison.
round_order() {
  local r=$1 i
  shift
  if [ $((r % 2)) -eq 0 ]; then
    for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
  else
    printf '%s\n' "$@"
  fi
}
