#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Full user stacks without frame pointers (issue 7): the DWARF unwinder (bpf/unwind.bpf.h,
# symbols/unwinder.c) through the CLI, on programs built with -O2 and no frame pointers:
#   - deep (PIE), deep built -no-pie, and a program whose hot chain runs in a shared library
#     built without frame pointers: >= 99% of the cpu samples carry the whole chain
#     main -> a -> b -> leaf
#   - fpcall, built WITH frame pointers, spending its time in libc's frameless memset: the
#     caller fill_buffer is not skipped (>= 95% of the samples)
#   - blockers: wall puts the time blocked in read() under wait_for_input and the time blocked
#     in pthread_mutex_lock under take_the_lock, through the libc frames; locks puts the lock
#     wait under take_the_lock
. "$(dirname "$0")/lib.sh"

need_root
need_cmd cc timeout flock
need_bin

LOCK=/run/slideops-profiler.lock
WL=$LIB_DIR/../workloads
CFLAGS_NOFP="-O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE"

# workload NAME [EXTRA CFLAGS]: the Makefile's build when there is one, else built here
workload()
{
	local name=$1 out
	shift
	if [ $# -eq 0 ] && [ -x "$OUTPUT/workloads/$name" ]; then
		echo "$OUTPUT/workloads/$name"
		return
	fi
	out=$TMP/$name$(echo "$*" | tr -dc 'a-z')
	cc $CFLAGS_NOFP "$@" "$WL/$name.c" -o "$out" -lpthread || fail "cannot build $name $*"
	echo "$out"
}

DEEP=$(workload deep)
DEEP_NOPIE=$(workload deep -no-pie -fno-pie)
BLOCKERS=$(workload blockers)
FPCALL=$OUTPUT/workloads/fpcall
[ -x "$FPCALL" ] || FPCALL=$(workload fpcall -fno-omit-frame-pointer)
file "$DEEP_NOPIE" 2>/dev/null | grep -q 'LSB executable' || log "note: deep -no-pie: $(file -b "$DEEP_NOPIE")"

# A shared library without frame pointers, called from the main binary.
cat >"$TMP/libchain.c" <<'EOF'
#include <stdint.h>
#define NOINLINE __attribute__((noinline, noipa))
static volatile uint64_t lib_sink;
NOINLINE static uint64_t lib_leaf(uint64_t x)
{
	int i;

	for (i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}
NOINLINE static uint64_t lib_b(uint64_t x)
{
	uint64_t y = x ^ lib_sink, r = lib_leaf(x + 1);

	lib_sink = y;
	return r + y;
}
NOINLINE uint64_t lib_a(uint64_t x)
{
	uint64_t y = x * 3, r = lib_b(x ^ 5);

	lib_sink = y;
	return r - y;
}
EOF
cat >"$TMP/libmain.c" <<'EOF'
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
uint64_t lib_a(uint64_t x);
static volatile uint64_t sink;
int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3600);
	uint64_t x = 1;

	while (time(NULL) < end)
		x = lib_a(x) + 1;
	sink = x;
	return 0;
}
EOF
cc $CFLAGS_NOFP -fPIC -shared "$TMP/libchain.c" -o "$TMP/libchain.so" || fail "cannot build libchain.so"
cc $CFLAGS_NOFP "$TMP/libmain.c" -o "$TMP/libmain" -L"$TMP" -lchain -Wl,-rpath,"$TMP" ||
	fail "cannot build libmain"

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# bg CMD...: starts CMD as a child of this shell; sets BG_PID once CMD runs.
bg() { bg_start "$@"; }

# capture NAME PID QUESTION: a 5 s capture into $TMP/NAME; fails the test when it fails.
capture()
{
	local name=$1 pid=$2 q=$3 rc
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	timeout -k 5 90 "$BIN" capture --pid "$pid" --question "$q" --duration 5 \
		--out "$TMP/$name" </dev/null >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$TMP/$name/profile.collapsed" ]; then
		sed 's/^/    '"$name"': /' "$TMP/$name.stdout" "$TMP/$name.stderr" >&2
		bad "$name: capture exited $rc or wrote no profile.collapsed"
		return 1
	fi
	return 0
}

# share NAME REGEX: percent of the weight of profile.collapsed whose stack matches REGEX
# (Python re.search on the frames, root first, ';'-separated); also prints the total weight.
share()
{
	"$PYTHON" - "$TMP/$1/profile.collapsed" "$2" <<'EOF'
import re, sys
total = hit = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if not stack:
        continue
    total += int(n)
    if re.search(sys.argv[2], stack):
        hit += int(n)
print("%.2f %d" % (100.0 * hit / total if total else 0.0, total))
EOF
}

# expect NAME REGEX MIN_PCT MIN_TOTAL WHAT
expect()
{
	local name=$1 re=$2 min=$3 mintotal=$4 what=$5 pct total
	read -r pct total < <(share "$name" "$re")
	log "$name: $pct% of $total match $what"
	if [ "${total:-0}" -lt "$mintotal" ]; then
		bad "$name: only $total in the profile (want >= $mintotal): $(head -3 "$TMP/$name/profile.collapsed")"
		return
	fi
	if ! "$PYTHON" -c "import sys; sys.exit(0 if float('$pct') >= $min else 1)"; then
		bad "$name: $pct% of the profile has $what (want >= $min%); heaviest stacks:"
		sort -t' ' -k2 -rn "$TMP/$name/profile.collapsed" |
			awk '{print $NF, $0}' | sort -rn | head -5 | cut -d' ' -f2- | cut -c1-300 >&2
	fi
}

# 1. cpu: the whole chain below main, PIE, non-PIE, and through a shared library.
for prog in "$DEEP" "$DEEP_NOPIE"; do
	bg "$prog" 60
	name=cpu-$(basename "$prog")
	capture "$name" "$BG_PID" cpu &&
		expect "$name" '(^|;)main;deep_a;deep_b;deep_leaf(;|$)' 99 20 "main;deep_a;deep_b;deep_leaf"
	kill "$BG_PID" 2>/dev/null
done
bg "$TMP/libmain" 60
capture cpu-shlib "$BG_PID" cpu &&
	expect cpu-shlib '(^|;)main;lib_a;lib_b;lib_leaf(;|$)' 99 20 "main;lib_a;lib_b;lib_leaf"
kill "$BG_PID" 2>/dev/null

# 2. A frame-pointer program in a frameless libc function: its caller is not skipped.
bg "$FPCALL" 60
capture cpu-fpcall "$BG_PID" cpu &&
	expect cpu-fpcall '(^|;)main;fill_buffer;' 95 20 "main;fill_buffer;<libc>"
kill "$BG_PID" 2>/dev/null

# 3. wall and locks: blocked in libc, under the named callers, through the libc frames.
bg "$BLOCKERS" 60
if capture wall-blockers "$BG_PID" wall; then
	# each blocked thread is off-CPU nearly all of the 5 s; the weights are ns
	expect wall-blockers ';wait_for_input;[^;]+(;[^;]+)*;\[off-CPU: [^]]*\]$' 10 1 \
		"wait_for_input;<libc read>;[off-CPU]"
	expect wall-blockers ';take_the_lock;[^;]*pthread_mutex_lock[^;]*(;[^;]+)*;\[off-CPU: [^]]*\]$' 10 1 \
		"take_the_lock;pthread_mutex_lock;...;[off-CPU]"
	read -r pct _ < <(share wall-blockers ';read;\[off-CPU: [^]]*\]$')
	read -r pct_named _ < <(share wall-blockers ';wait_for_input;read;\[off-CPU: [^]]*\]$')
	[ "$pct" = "$pct_named" ] ||
		bad "wall-blockers: off-CPU time in read() not under wait_for_input: $pct% vs $pct_named%"
fi
if capture locks-blockers "$BG_PID" locks; then
	expect locks-blockers ';take_the_lock;[^;]*pthread_mutex_lock[^;]*(;[^;]+)*;\[lock wait: futex_wait\]$' \
		80 1 "take_the_lock;pthread_mutex_lock;...;[lock wait: futex_wait]"
fi
kill "$BG_PID" 2>/dev/null

[ "$failures" -eq 0 ] || fail "$failures check(s) failed"
log "all unwinding checks passed"
