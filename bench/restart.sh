#!/usr/bin/env bash
# Restart time of one node on a given data dir, for builds side by side: each repetition copies DATA afresh and
# starts each memnode binary in turn (alternating, so a change in the machine's load falls on every build), and
# times it to /readyz. One line per start:
#   restart: bin=B rep=R ready_s=S rss_mib=M shards_open_s=O   (O: the sum of the shards' "indexes loaded" times)
# Usage: DATA=bench/out/footprint/data bench/restart.sh BIN [BIN...]; env REPS (3), OUT (bench/out/restart).
# bench/footprint.sh leaves a data dir of TARGET memories under its OUT to restart from.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATA:?DATA: the data dir of a stopped memnode --dev}"
REPS=${REPS:-3}
OUT=${OUT:-bench/out/restart}
mkdir -p "$OUT"
P=
trap '[ -z "$P" ] || kill "$P" 2>/dev/null || true' EXIT
for r in $(seq 1 "$REPS"); do
  for bin in "$@"; do
    rm -rf "$OUT/data" && cp -a "$DATA" "$OUT/data" && sync
    log="$OUT/$(basename "$bin")-$r.log"
    t0=$(date +%s.%N)
    "$bin" --dev --data-dir "$OUT/data" --http-addr 127.0.0.1:27630 --raft-addr 127.0.0.1:27631 \
      --gossip-addr 127.0.0.1:27632 >"$log" 2>&1 &
    P=$!
    until curl -fsS http://127.0.0.1:27630/readyz >/dev/null 2>&1; do
      kill -0 "$P" 2>/dev/null || { echo "restart: $bin exited; see $log" >&2; exit 1; }
      sleep 0.05
    done
    t1=$(date +%s.%N)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$P/status")
    kill "$P" && wait "$P" 2>/dev/null || true
    P=
    open=$(grep -o 'took=[0-9.]*[mµ]*s' "$log" | sed 's/took=//' |
      awk '/µs$/ {s += $1 / 1e6; next} /ms$/ {s += $1 / 1e3; next} {s += $1} END {printf "%.1f", s}')
    awk -v b="$bin" -v r="$r" -v t0="$t0" -v t1="$t1" -v rss="$rss" -v o="$open" \
      'BEGIN {printf "restart: bin=%s rep=%d ready_s=%.1f rss_mib=%.0f shards_open_s=%s\n", b, r, t1 - t0, rss / 1024, o}'
  done
done
