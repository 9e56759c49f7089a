#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The JVM's memory and lock questions (issue 15), read from the JVM itself through its attach
# mechanism. JavaMem (tests/workloads/java/JavaMem.java) runs as a non-root user in its own pid,
# mount and net namespaces with its own /tmp: "churner" drops 1 KiB arrays in churnArrays()
# (about 40 MB/s), "retainer" keeps 4 KiB arrays in retainBlocks() (about 1 MB/s, each held
# about 16 s), two "locker-N" take turns on one monitor in holdMonitor() (20 ms each).
# For Java 17 and 25, with the JVM's own Flight Recorder (no async-profiler installed):
# - memory-alloc (3 s): the answer names churnArrays, which allocated far more than
#   retainBlocks, under the class it allocated (byte[]);
# - memory-held (3 s): the answer names retainBlocks; the short-lived arrays of churnArrays are
#   (almost) not held;
# - locks (3 s): the answer names holdMonitor, waiting on a java.lang.Object monitor;
# after each: the JVM runs on and its /tmp holds nothing of ours (no settings file, no dump, no
# directory of ours, no JFR repository left empty by our recording, no .attach_pid); and a
# capture stopped half way (SIGINT) leaves no recording running (JFR.check) and nothing in /tmp;
# for Java 17, one killed half way (SIGKILL) leaves both, and the next capture removes them.
# Then, for Java 17, the injection path with a stand-in for async-profiler (a JVMTI agent built
# here from the JDK's jvmti.h that takes async-profiler's options and writes the JVM's real
# thread stacks in its collapsed format: tests/workloads/java/fake_asprof.c):
# - the plan says the library is copied, with its size and sha256;
# - memory-alloc: the agent ran inside the JVM as the JVM's user, loaded from a directory of
#   ours in the container's /tmp, was started and stopped, its output read back and named;
#   nothing is left in /tmp;
# - a noexec /tmp: the library goes to the next location (the container's /var/tmp) and is
#   removed from there too;
# - a library that does not load (no agent in it): the Flight Recorder answers, with a note;
# - a JVM that wrote a crash report after it: no agent is loaded into that program again (a
#   note), its Flight Recorder answers;
# - a full /tmp: the same; a read-only /tmp: no attach is possible, a clear note, the JVM
#   runs on.
. "$(dirname "$0")/lib.sh"

need_root
need_bin
need_cmd gcc sha256sum
jvm_setup
jvm_compile JavaMem
jvm_probe_build
# Under ASan (MEM_FACTOR > 1, lib.sh) only Java 17's Flight Recorder path (the time of .ci/run;
# the plain pass runs all of it; the placer and async-profiler's parser have their unit tests
# under ASan too).
[ "$MEM_FACTOR" -gt 1 ] && JDKS=$JDK17

# value COLLAPSED PATTERN: the summed value of the stacks that contain PATTERN ("": all).
value() { collapsed_value "$1" "$2"; }

alive() { kill -0 "$JVM_PID" 2>/dev/null || fail "$1: the JVM died"; }

for jdk in $JDKS; do
	v=$(basename "$jdk")
	JVM_MAIN="JavaMem 120" jvm_start "$jdk"
	before=$(tmp_files)
	sleep 1

	out=$TMP/alloc-$v
	profiler_run "alloc-$v" 30 capture --pid "$JVM_PID" --question memory-alloc --duration 3 \
		--out "$out"
	answer_has "$out" "memory-alloc $v" JavaMem.churnArrays
	churn=$(value "$out/profile.collapsed" JavaMem.churnArrays)
	keep=$(value "$out/profile.collapsed" JavaMem.retainBlocks)
	log "memory-alloc $v: churnArrays $churn bytes, retainBlocks $keep bytes"
	[ "$churn" -gt $((keep * 5)) ] || fail "memory-alloc $v: churnArrays does not lead"
	grep -q 'JavaMem.churnArrays;byte\[\] ' "$out/profile.collapsed" ||
		fail "memory-alloc $v: churnArrays' stacks do not end in the class it allocated"
	alive "memory-alloc $v"
	check_tmp "$before" "memory-alloc $v"

	out=$TMP/held-$v
	profiler_run "held-$v" 40 capture --pid "$JVM_PID" --question memory-held --duration 3 \
		--out "$out"
	answer_has "$out" "memory-held $v" JavaMem.retainBlocks
	keep=$(value "$out/profile.collapsed" JavaMem.retainBlocks)
	churn=$(value "$out/profile.collapsed" JavaMem.churnArrays)
	total=$(value "$out/profile.collapsed" "")
	log "memory-held $v: retainBlocks $keep bytes, churnArrays $churn, all $total"
	[ "$keep" -gt 0 ] && [ $((churn * 10)) -le "$total" ] ||
		fail "memory-held $v: the short-lived arrays count as held"
	alive "memory-held $v"
	check_tmp "$before" "memory-held $v"

	out=$TMP/locks-$v
	profiler_run "locks-$v" 30 capture --pid "$JVM_PID" --question locks --duration 3 --out "$out"
	answer_has "$out" "locks $v" JavaMem.holdMonitor
	grep -q 'JavaMem.holdMonitor;\[lock: java.lang.Object\] ' "$out/profile.collapsed" ||
		fail "locks $v: holdMonitor does not wait on its monitor"
	grep -q "The JVM's lock waits are the ones it recorded itself" "$TMP/locks-$v.stdout" ||
		fail "locks $v: no note on the JVM's own lock events"
	alive "locks $v"
	check_tmp "$before" "locks $v"

	# a capture stopped half way (SIGINT, as Ctrl-C): its recording is stopped and nothing is
	# left in /tmp
	wait_lock
	timeout -s INT 1.5 "$BIN" capture --pid "$JVM_PID" --question memory-held --duration 10 \
		--out "$TMP/stopped-$v" >"$TMP/stopped-$v.stdout" 2>&1
	grep -q "stopped before it finished" "$TMP/stopped-$v.stdout" ||
		fail "stopped $v: the capture was not stopped: $(cat "$TMP/stopped-$v.stdout")"
	"$JVM_PROBE" attach "$JVM_PID" jcmd JFR.check >"$TMP/check-$v" 2>&1 ||
		fail "stopped $v: JFR.check failed: $(cat "$TMP/check-$v")"
	grep -q "slideops-" "$TMP/check-$v" && fail "stopped $v: our recording still runs"
	alive "stopped $v"
	check_tmp "$before" "stopped $v"
	log "stopped $v: recording stopped, nothing left"

	# a capture killed half way (SIGKILL) leaves its directory and its recording; the next
	# capture removes and stops them (its placement journal), then runs as usual
	if [ "$jdk" = "$JDK17" ]; then
		wait_lock
		timeout -s KILL 1.5 "$BIN" capture --pid "$JVM_PID" --question memory-alloc \
			--duration 10 --out "$TMP/killed" >/dev/null 2>&1
		"$JVM_PROBE" attach "$JVM_PID" jcmd JFR.check >"$TMP/check-killed" 2>&1
		grep -q "slideops-" "$TMP/check-killed" ||
			fail "killed: no recording of ours ran when it was killed"
		tmp_files | grep -q '^\.slideops-' || fail "killed: no directory of ours was left"
		profiler_run after-kill 30 capture --pid "$JVM_PID" --question memory-alloc \
			--duration 1 --out "$TMP/after-kill"
		"$JVM_PROBE" attach "$JVM_PID" jcmd JFR.check >"$TMP/check-after" 2>&1
		grep -q "slideops-" "$TMP/check-after" && fail "killed: its recording still runs"
		check_tmp "$before" "after a killed capture"
		log "killed: the next capture stopped its recording and removed its directory"
	fi
	jvm_stop
done

if [ "$MEM_FACTOR" -gt 1 ]; then
	log "passed (ASan: Java 17, the Flight Recorder path)"
	exit 0
fi

# --- the injection path, with a stand-in for async-profiler ------------------------------------
lib=$OUTPUT/fake-asprof/libasyncProfiler.so
mkdir -p "$(dirname "$lib")"
gcc -shared -fPIC -O2 -Wall -Wextra -Werror -I"$JDK17/include" -I"$JDK17/include/linux" \
	"$LIB_DIR/../workloads/java/fake_asprof.c" -o "$lib" || fail "the stand-in does not build"
sha=$(sha256sum "$lib" | cut -c1-16)
printf 'async_profiler: %s\n' "$lib" >"$TMP/asprof.yaml"

# injected TAG [JVM_TMP_OPTS]: a memory-alloc capture through the stand-in; the JVM's log says
# where it was loaded from (LOADED_FROM) and as whom.
injected()
{
	local tag=$1 out=$TMP/inject-$1
	JVM_MAIN="JavaMem 60" JVM_TMP_OPTS=${2:-mode=1777,size=16m} jvm_start "$JDK17"
	before=$(tmp_files)
	profiler_run "plan-$tag" 20 plan --pid "$JVM_PID" --question memory-alloc --duration 2 \
		--config "$TMP/asprof.yaml"
	grep -q "Copy async-profiler ([0-9.]* [kM]B, checksum verified: sha256 $sha)" "$TMP/plan-$tag.stdout" ||
		fail "$tag: the plan does not say async-profiler is copied: $(cat "$TMP/plan-$tag.stdout")"
	profiler_run "inject-$tag" 30 capture --pid "$JVM_PID" --question memory-alloc --duration 2 \
		--out "$out" --config "$TMP/asprof.yaml"
	grep -q "^fake-asprof: start uid=$JUID lib=/[a-z/]*/\.slideops-[0-9a-f]\{16\}/libasyncProfiler\.so " "$JVM_LOG" ||
		fail "$tag: the stand-in was not started from a directory of ours as the JVM's user: $(grep fake-asprof "$JVM_LOG")"
	grep -q "^fake-asprof: stop uid=$JUID .*options=stop,file=/[a-z/]*/\.slideops-[0-9a-f]\{16\}/slideops\.collapsed" "$JVM_LOG" ||
		fail "$tag: the stand-in was not stopped with a file of ours"
	LOADED_FROM=$(sed -n 's/^fake-asprof: start .*lib=\(\/[a-z/]*\)\/\.slideops-.*/\1/p' "$JVM_LOG" | head -1)
	answer_has "$out" "$tag" JavaMem
	alive "$tag"
	check_tmp "$before" "$tag"
	ls -A "/proc/$JVM_PID/root/var/tmp" | grep -q '^\.slideops-' &&
		fail "$tag: a directory of ours is left in /var/tmp"
	log "$tag: loaded from $LOADED_FROM, nothing left"
}

injected plain
[ "$LOADED_FROM" = /tmp ] || fail "plain: the library was not placed in /tmp but $LOADED_FROM"

# a library that is not an agent (no Agent_OnAttach: as a build for another libc would fail to
# load): the JVM's Flight Recorder answers instead, with a note
zlib=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
[ -n "$zlib" ] || fail "no libz.so.1 to stand for a library that does not load"
printf 'async_profiler: %s\n' "$zlib" >"$TMP/notagent.yaml"
profiler_run notagent 30 capture --pid "$JVM_PID" --question memory-alloc --duration 2 \
	--out "$TMP/notagent" --config "$TMP/notagent.yaml"
grep -q "async-profiler could not be started in the JVM in process $JVM_PID (java): .*its own Flight Recorder is used instead" \
	"$TMP/notagent.stdout" || fail "notagent: no note on the fallback"
answer_has "$TMP/notagent" notagent JavaMem.churnArrays
check_tmp "$before" notagent

# the guard: this JVM "crashed" after the capture (a crash report of its own appears): the next
# capture loads no agent into this program, and its Flight Recorder answers instead
nspid=$(awk '/^NSpid:/ { print $NF }' /proc/"$JVM_PID"/status)
journal=/run/slideops-profiler.lock.placed
touch "$JVM_TMP/hs_err_pid$nspid.log"
starts=$(grep -c '^fake-asprof: start' "$JVM_LOG")
profiler_run guard 30 capture --pid "$JVM_PID" --question memory-alloc --duration 2 \
	--out "$TMP/guard" --config "$TMP/asprof.yaml"
rm -f "$JVM_TMP/hs_err_pid$nspid.log"
crashed=$(grep -l "hs_err_pid$nspid.log" "$journal"/crashed-* 2>/dev/null | head -1)
[ -n "$crashed" ] && rm -f "$crashed"
grep -q "async-profiler is not loaded into the JVM in process $JVM_PID (java) again: a JVM of this program wrote a crash report (hs_err_pid$nspid.log)" \
	"$TMP/guard.stdout" || fail "guard: no note says async-profiler is not loaded again"
[ "$(grep -c '^fake-asprof: start' "$JVM_LOG")" = "$starts" ] ||
	fail "guard: async-profiler was loaded again"
[ -n "$crashed" ] || fail "guard: no crash record in $journal"
answer_has "$TMP/guard" guard JavaMem.churnArrays
jvm_stop

injected noexec "mode=1777,size=16m,noexec"
[ "$LOADED_FROM" = /var/tmp ] || fail "noexec: the library went to $LOADED_FROM, not /var/tmp"
grep -q "/tmp is mounted noexec" "$TMP/inject-noexec.stdout" ||
	fail "noexec: no note says why /tmp was not used"
jvm_stop


# a full /tmp: filled up once the JVM runs (its own files are there already)
JVM_MAIN="JavaMem 60" jvm_start "$JDK17"
dd if=/dev/zero of="$JVM_TMP/fill" bs=64k 2>/dev/null
profiler_run full 30 capture --pid "$JVM_PID" --question memory-alloc --duration 2 \
	--out "$TMP/full" --config "$TMP/asprof.yaml"
grep -q "^fake-asprof: start .*lib=/var/tmp/\.slideops-" "$JVM_LOG" ||
	fail "full: the library did not go to /var/tmp"
alive full
ls -A "$JVM_TMP" | grep -q '^\.slideops-' && fail "full: a directory of ours is left in /tmp"
rm -f "$JVM_TMP/fill"
jvm_stop

# a read-only /tmp: the JVM cannot open its attach socket there; what was placed (in /var/tmp)
# is removed again
JVM_MAIN="JavaMem 60" JVM_TMP_OPTS="mode=1777,size=16m,ro" jvm_start "$JDK17" 2>/dev/null ||
	true
if [ -n "${JVM_PID:-}" ] && kill -0 "$JVM_PID" 2>/dev/null; then
	profiler_run ro 30 capture --pid "$JVM_PID" --question memory-alloc --duration 2 \
		--out "$TMP/ro" --config "$TMP/asprof.yaml"
	grep -q "could not be recorded with async-profiler: its /tmp is read-only" "$TMP/ro.stdout" ||
		fail "ro: no note says the JVM could not be recorded"
	alive ro
	ls -A "/proc/$JVM_PID/root/var/tmp" | grep -q '^\.slideops-' &&
		fail "ro: a directory of ours is left in /var/tmp"
	jvm_stop
fi
log "passed: $(for j in $JDKS; do basename "$j"; done | tr '\n' ' ') and the injection path"
