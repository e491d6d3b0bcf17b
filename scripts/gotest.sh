#!/usr/bin/env bash
# gotest.sh ARGS...: `go test ARGS...`, its output shown as it comes and kept in a file. When it fails, what says
# which test failed or hung is printed again at the end, the most telling last, where a CI log's tail shows it: a
# hang's goroutine dump is thousands of lines. A hang is go test's -timeout ("panic: test timed out", then the
# tests running) or the cluster tests' watchdog ("HUNG: <test>", a dump, the cluster's log, "HUNG: <test>").
set -uo pipefail
GO=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/gotest.XXXXXX")
trap 'rm -f "$log"' EXIT
"$GO" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "=== go test $* failed (exit $rc); what failed:"
	if grep -q -E '^panic: test timed out|^HUNG: ' "$log"; then
		echo "--- the goroutines running through test code:"
		awk 'BEGIN {RS = ""; ORS = "\n\n"} /^goroutine / && /_test\.go:/' "$log" | head -120
	fi
	if last=$(grep -n '^HUNG: ' "$log" | tail -1 | cut -d: -f1) && [ -n "$last" ]; then
		echo "--- the hung cluster's last log lines:"
		sed -n "$((last > 40 ? last - 40 : 1)),${last}p" "$log"
	fi
	grep -E -B4 -A4 '^[[:space:]]*--- FAIL' "$log" | tail -40
	awk '/^panic: test timed out/ {on = 1} on && /^[[:space:]]*$/ {on = 0} on' "$log" | head -20
	grep -E '^(FAIL|ok) ' "$log"
fi
exit "$rc"
