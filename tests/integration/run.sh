#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs the integration tests, one after the other (only one capture may run on a server at a
# time):
#
#   OUTPUT=<abs build dir> BIN=<abs path of slideops-profiler> tests/integration/run.sh [NAME...]
#
# NAME selects tests (test_server_cpu or server_cpu); default: every tests/integration/test_*.sh.
# Each test is a bash script: exit 0 passes, 77 skips (the machine lacks what it needs), anything
# else fails; with CI=true a skip fails too. It is stopped after TEST_TIMEOUT seconds (300), or after the SECONDS of a line
# "# timeout: SECONDS" in it when that is more. Prints one line per test with its time, then `N passed, N failed[, N skipped]`;
# exits non-zero if any failed. Each test's output goes to $OUTPUT/integration/<test>.log, and
# the end of it to stderr when the test fails.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${OUTPUT:=$repo/.output}"
: "${BIN:=$OUTPUT/slideops-profiler}"
: "${TEST_TIMEOUT:=300}"
export OUTPUT BIN

tests=()
if [ $# -gt 0 ]; then
	for n in "$@"; do
		n=${n%.sh}
		n=test_${n#test_}
		[ -f "$here/$n.sh" ] || { echo "run.sh: no test $n in $here" >&2; exit 2; }
		tests+=("$here/$n.sh")
	done
else
	for t in "$here"/test_*.sh; do
		[ -f "$t" ] && tests+=("$t")
	done
fi

logdir=$OUTPUT/integration
mkdir -p "$logdir" || exit 2
passed=0 failed=0 skipped=0

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	log=$logdir/$name.log
	start=$(date +%s%N)
	# TERM first (the test's trap cleans up), KILL 30 s later if it still hangs.
	# A test may ask for more time with a line "# timeout: SECONDS" (a cold image build).
	limit=$(sed -n 's/^# timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
	[ -n "$limit" ] && [ "$limit" -gt "$TEST_TIMEOUT" ] || limit=$TEST_TIMEOUT
	timeout -k 30 "$limit" bash "$t" </dev/null >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	time=$(printf '%d.%d s' $((ms / 1000)) $((ms % 1000 / 100)))
	case $rc in
	0)
		passed=$((passed + 1))
		printf '  PASS     %-32s %8s\n' "$name" "$time"
		;;
	77)
		if [ "${CI:-}" = true ]; then
			# In CI a skip fails the run: CI runs on the same machine kind as development,
			# so a test that skips there hides a broken test or a missing install step.
			failed=$((failed + 1))
			printf '  FAIL     %-32s %8s  (skipped under CI=true: %s)\n' "$name" "$time" \
				"$(grep -m1 '^SKIP ' "$log" | cut -d: -f2- | sed 's/^ //')"
			continue
		fi
		skipped=$((skipped + 1))
		printf '  SKIP     %-32s %8s  %s\n' "$name" "$time" "$(grep -m1 '^SKIP ' "$log" | cut -d: -f2- | sed 's/^ //')"
		;;
	*)
		failed=$((failed + 1))
		[ "$rc" -eq 124 ] && echo "timed out after $limit s" >>"$log"
		printf '  FAIL     %-32s %8s  (exit %d, log %s)\n' "$name" "$time" "$rc" "$log"
		tail -n 40 "$log" | sed "s/^/    $name| /" >&2
		;;
	esac
done

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
