#!/usr/bin/env bash
# gotest.sh ARGS...: `go test ARGS...`, its output shown as it comes and kept in a file; when it fails, the lines
# that say which test failed or hung (a timeout's "running tests:" list and the stacks through test code, each
# "--- FAIL" with the lines around it) are printed again at the end, where a CI log's tail shows them: a
# timeout's goroutine dump is thousands of lines.
set -uo pipefail
GO=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/gotest.XXXXXX")
trap 'rm -f "$log"' EXIT
"$GO" test "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "=== go test $* failed (exit $rc); what failed:"
	awk '/^panic: test timed out/ {on = 1} on && /^[[:space:]]*$/ {on = 0} on' "$log" | head -20
	# A hang: the stacks that run through test code (the test's own goroutine, its cleanups, its workers).
	if grep -q '^panic: test timed out' "$log"; then
		awk 'BEGIN {RS = ""; ORS = "\n\n"} /^goroutine / && /_test\.go:/' "$log" | head -150
	fi
	grep -E -B4 -A4 '^\s*--- FAIL' "$log" | tail -60
	grep -E '^(FAIL|ok) ' "$log"
fi
exit "$rc"
