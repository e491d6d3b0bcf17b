#!/usr/bin/env bash
# LongMemEval's query latency (aim 3) of several builds in turn: for each build in each of ROUNDS (2) rounds, a
# fresh `memnode --dev` on an empty data dir and `memctl eval longmemeval --file FILE`, which puts each question's
# haystack and then times its one search of k = 200 (query_p50_ms: the client's wall time, decoding the answer
# included). With PASSES (1) above 1 the eval runs again on the same node, each pass with users of its own (a
# warm node). Every other round runs the builds in reverse order. Usage: bench/longmemeval-ab.sh DIR [...], each
# DIR holding a build's memnode and memctl; env FILE (../shared/data/longmemeval/longmemeval-s-dev60.json),
# ROUNDS, PASSES, PORT (7580). Prints one line per eval: build, round, pass, query p50 and p99 (ms),
# recall_any@1/5/10/20. With JSON_DIR set, each eval's report is kept there as longmemeval-rROUND-pPASS.json
# (make bench reads them; meant for one build).
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 1 ] || { echo "usage: bench/longmemeval-ab.sh DIR [DIR...]" >&2; exit 2; }
for d in "$@"; do
  [ -x "$d/memnode" ] && [ -x "$d/memctl" ] || { echo "$d: no memnode and memctl there" >&2; exit 2; }
done
FILE=${FILE:-../shared/data/longmemeval/longmemeval-s-dev60.json}
PORT=${PORT:-7580}
[ -f "$FILE" ] || { echo "$FILE: no such file (set FILE)" >&2; exit 2; }
DATA= PID=
stop() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  [ -n "$DATA" ] && rm -rf "$DATA"
  PID= DATA=
}
trap stop EXIT
for r in $(seq "${ROUNDS:-2}"); do
  for dir in $(round_order "$r" "$@"); do
    DATA=$(mktemp -d)
    LOG=$DATA.log
    "$dir/memnode" --dev --node-id dev --data-dir "$DATA" --http-addr "127.0.0.1:$PORT" >"$LOG" 2>&1 &
    PID=$!
    until curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
      kill -0 "$PID" 2>/dev/null || { echo "$dir: memnode did not start; see $LOG" >&2; exit 1; }
      sleep 0.5
    done
    for pass in $(seq "${PASSES:-1}"); do
      j=$("$dir/memctl" --addr "http://127.0.0.1:$PORT" -o json eval longmemeval --file "$FILE" 2>/dev/null)
      [ -z "${JSON_DIR:-}" ] || echo "$j" >"$JSON_DIR/longmemeval-r$r-p$pass.json"
      echo "$j" |
        python3 -c "import json,sys; d=json.load(sys.stdin); ra=[round(x['value'],3) for x in d['overall']['recall_any']]; print(f\"build=$dir round=$r pass=$pass query_p50_ms={d['query_p50_ms']} query_p99_ms={d['query_p99_ms']} recall_any={ra}\")"
    done
    stop
    rm -f "$LOG"
  done
done
