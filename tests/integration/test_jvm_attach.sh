#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The JVM from outside (issue 14, the foundation): runtimes/jvm/jvm_vmstructs.c reads HotSpot's
# exported VMStructs and runtimes/jvm/jvm_attach.c speaks the attach protocol, each against a
# real JVM (Java 17, and Java 25 where the machine has it) that runs a program of our own
# (tests/workloads/java/AttachTarget.java) as a non-root user in its own pid, mount and net
# namespaces with a private /tmp. tests/integration/jvm_probe.c, built against the objects of
# `make`, drives them. Asserted:
# - every VMStructs field the frame walk needs is found, in both JDKs;
# - Thread.print through the protocol names the program's own threads and methods;
# - the JVM's /tmp holds no file we made afterwards (no .attach_pid*), and the JVM lives on;
# - -XX:+DisableAttachMechanism is refused at once (read from the VMStructs flags), without a
#   signal, and leaves nothing; `check` keeps cpu available and says threads lacks the Java
#   thread states, and why; a stopped JVM fails within the start bound (5 s), its trigger
#   file removed;
# - -Xrs (no SIGQUIT handler: the listener starts with the JVM) is answered, and -Xrs with the
#   listener disabled is refused at once, without a signal that would end the JVM.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare setpriv useradd

jvm_setup
jvm_compile AttachTarget

# --- the probe, built against the objects of `make` ------------------------------------------
jvm_probe_build

# --- the JDKs ----------------------------------------------------------------------------------
for jdk in $JDKS; do
	name=$(basename "$jdk")
	jvm_start "$jdk"
	before=$(tmp_files)

	"$JVM_PROBE" vmstructs "$JVM_PID" >"$TMP/vms.$name" 2>"$TMP/vms.$name.err"
	rc=$?
	cat "$TMP/vms.$name.err" "$TMP/vms.$name" >&2
	[ "$rc" -eq 0 ] || fail "$name: VMStructs fields missing (rc $rc): $(grep MISSING "$TMP/vms.$name" | tr '\n' ' ')"
	# CodeBlob::_frame_complete_offset narrowed from int to int16_t in JDK 23: its width must
	# come from the table's type string (read as an int, JDK 25's stacks lost their callers)
	spec=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = //p')
	want=4 && [ "${spec%%.*}" -ge 23 ] && want=2
	grep -q "^CodeBlob::_frame_complete_offset = .* ($want bytes)\$" "$TMP/vms.$name" ||
		fail "$name (Java $spec): _frame_complete_offset is not $want bytes: $(grep _frame_complete "$TMP/vms.$name")"

	t0=$(date +%s%N)
	"$JVM_PROBE" attach "$JVM_PID" threaddump >"$TMP/dump.$name" 2>"$TMP/dump.$name.err" ||
		fail "$name: threaddump failed: $(cat "$TMP/dump.$name.err")"
	ms=$((($(date +%s%N) - t0) / 1000000))
	log "$name: $(cat "$TMP/dump.$name.err") (wall $ms ms); first lines:"
	head -n 12 "$TMP/dump.$name" | sed "s/^/  $name| /" >&2
	for want in '"slideops-compute"' '"slideops-sleeper"' 'AttachTarget.computeLoop' \
		'AttachTarget.sleepLoop' 'java.lang.Thread.State: TIMED_WAITING' '"main"'; do
		grep -qF "$want" "$TMP/dump.$name" || fail "$name: the thread dump does not name $want"
	done
	check_tmp "$before" "$name after threaddump"

	# The listener is up now: a second command (jcmd) connects without trigger or signal.
	"$JVM_PROBE" attach "$JVM_PID" jcmd VM.version >"$TMP/ver.$name" 2>&1 ||
		fail "$name: jcmd VM.version failed: $(cat "$TMP/ver.$name")"
	grep -q 'JDK [0-9]' "$TMP/ver.$name" || fail "$name: VM.version says: $(head -3 "$TMP/ver.$name")"
	check_tmp "$before" "$name after jcmd"
	kill -0 "$JVM_PID" || fail "$name: the JVM died"
	jvm_stop
done

# --- a JVM whose attach mechanism is disabled: refused at once, from its VMStructs ------------
jvm_start "$JDK17" -XX:+DisableAttachMechanism
before=$(tmp_files)
t0=$(date +%s%N)
"$JVM_PROBE" attach "$JVM_PID" threaddump >"$TMP/disabled" 2>&1 && fail "attach to a JVM with -XX:+DisableAttachMechanism succeeded"
ms=$((($(date +%s%N) - t0) / 1000000))
log "DisableAttachMechanism: $(cat "$TMP/disabled") (wall $ms ms)"
grep -q 'Operation not supported' "$TMP/disabled" || fail "DisableAttachMechanism: not the expected error: $(cat "$TMP/disabled")"
[ "$ms" -lt 2000 ] || fail "DisableAttachMechanism: the refusal took $ms ms"
sleep 0.3
# No SIGQUIT was sent: the JVM would have printed a thread dump to its output.
! grep -q 'Full thread dump' "$JVM_LOG" || fail "DisableAttachMechanism: the JVM was sent SIGQUIT"
check_tmp "$before" "DisableAttachMechanism"
kill -0 "$JVM_PID" || fail "DisableAttachMechanism: the JVM died"
# check: every eBPF question stays available; threads says what it lacks and why
"$BIN" check --pid "$JVM_PID" >"$TMP/check.noattach" 2>&1 || fail "check failed: $(cat "$TMP/check.noattach")"
grep -q '^Runtimes: JVM (Java 17)$' "$TMP/check.noattach" || fail "check: $(grep Runtimes "$TMP/check.noattach")"
grep -q '^  threads .* available: without Java thread states: .*DisableAttachMechanism' "$TMP/check.noattach" ||
	fail "check: threads does not say what it lacks: $(grep '^  threads' "$TMP/check.noattach")"
grep -q '^  cpu .* available$' "$TMP/check.noattach" || fail "check: cpu is not available"
! grep -q 'Full thread dump' "$JVM_LOG" || fail "check: the JVM was sent SIGQUIT"
# threads: the eBPF rows stay, the note says why they have no Java states
profiler_run noattach 30 capture --pid "$JVM_PID" --question threads --out "$TMP/noattach"
grep -q "disabled (-XX:+DisableAttachMechanism): its threads show their eBPF stacks" \
	"$TMP/noattach.stdout" || fail "threads: no note on the disabled attach mechanism"
[ "$(json_get "$TMP/noattach/summary.json" "len(d['threads'])")" -gt 5 ] || fail "threads: no rows"
[ "$(json_get "$TMP/noattach/summary.json" "len([t for t in d['threads'] if t['java']])")" = 0 ] ||
	fail "threads: Java states without a thread dump"
! grep -q 'Full thread dump' "$JVM_LOG" || fail "threads: the JVM was sent SIGQUIT"
check_tmp "$before" "DisableAttachMechanism, threads"
jvm_stop

# --- a JVM that cannot answer (stopped): the start bound holds, the trigger is removed --------
jvm_start "$JDK17"
before=$(tmp_files)
kill -STOP "$JVM_PID"
t0=$(date +%s%N)
"$JVM_PROBE" attach "$JVM_PID" threaddump >"$TMP/stopped" 2>&1 && fail "attach to a stopped JVM succeeded"
ms=$((($(date +%s%N) - t0) / 1000000))
log "stopped JVM: $(cat "$TMP/stopped") (wall $ms ms)"
grep -q 'Timer expired' "$TMP/stopped" || fail "stopped JVM: not the expected error: $(cat "$TMP/stopped")"
[ "$ms" -ge 4500 ] && [ "$ms" -lt 6500 ] || fail "stopped JVM: took $ms ms (bound 5 s)"
check_tmp "$before" "stopped JVM"
kill -CONT "$JVM_PID"
sleep 0.5
kill -0 "$JVM_PID" || fail "stopped JVM: the JVM died after SIGCONT"
check_tmp "$before" "stopped JVM, continued"
jvm_stop

# --- -Xrs: no SIGQUIT handler. The listener starts with the JVM and is used as it is ----------
last_jdk=${JDKS##* }
jvm_start "$last_jdk" -Xrs
before=$(tmp_files)
"$JVM_PROBE" attach "$JVM_PID" threaddump >"$TMP/xrs" 2>"$TMP/xrs.err" ||
	fail "-Xrs: threaddump failed: $(cat "$TMP/xrs.err")"
grep -qF '"slideops-compute"' "$TMP/xrs" || fail "-Xrs: the dump does not name slideops-compute"
check_tmp "$before" "-Xrs"
jvm_stop

# ... and with the listener disabled too: refused at once, no signal (it would end the JVM).
jvm_start "$last_jdk" -Xrs -XX:+DisableAttachMechanism
before=$(tmp_files)
t0=$(date +%s%N)
"$JVM_PROBE" attach "$JVM_PID" threaddump >"$TMP/xrs2" 2>&1 && fail "-Xrs -XX:+DisableAttachMechanism: attach succeeded"
ms=$((($(date +%s%N) - t0) / 1000000))
log "-Xrs -XX:+DisableAttachMechanism: $(cat "$TMP/xrs2") (wall $ms ms)"
grep -q 'Operation not permitted' "$TMP/xrs2" || fail "-Xrs: not the expected error: $(cat "$TMP/xrs2")"
[ "$ms" -lt 1000 ] || fail "-Xrs: the refusal took $ms ms"
sleep 0.3
kill -0 "$JVM_PID" || fail "-Xrs: the JVM died"
check_tmp "$before" "-Xrs -XX:+DisableAttachMechanism"
jvm_stop

log "passed: $(for j in $JDKS; do basename "$j"; done | tr '\n' ' ')"
