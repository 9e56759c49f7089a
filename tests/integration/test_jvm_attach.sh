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
#   signal, and leaves nothing; a stopped JVM fails within the start bound (5 s), its trigger
#   file removed;
# - -Xrs (no SIGQUIT handler: the listener starts with the JVM) is answered, and -Xrs with the
#   listener disabled is refused at once, without a signal that would end the JVM.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare setpriv useradd

JDK17=/usr/lib/jvm/java-17-openjdk-amd64
JDK25=/usr/lib/jvm/temurin-25-jdk-amd64
[ -x "$JDK17/bin/javac" ] || fail "no Java 17 at $JDK17"
JDKS=$JDK17
if [ -x "$JDK25/bin/java" ]; then
	JDKS="$JDK17 $JDK25"
else
	log "Java 25 is not installed at $JDK25: only Java 17 is checked"
fi
JUSER=slideops-test
id -u "$JUSER" >/dev/null 2>&1 || useradd -r -M -d / -s /usr/sbin/nologin "$JUSER" ||
	fail "cannot create user $JUSER"
JUID=$(id -u "$JUSER")
JGID=$(id -g "$JUSER")

# --- the Java program, compiled into $OUTPUT (bound into the JVM's namespace at /mnt) -------
SRC=$LIB_DIR/../workloads/java/AttachTarget.java
CLASSES=$OUTPUT/java
if [ ! -f "$CLASSES/AttachTarget.class" ] || [ "$SRC" -nt "$CLASSES/AttachTarget.class" ]; then
	mkdir -p "$CLASSES" && "$JDK17/bin/javac" --release 17 -d "$CLASSES" "$SRC" ||
		fail "javac failed"
fi
chmod -R a+rX "$CLASSES"

# --- the probe, built against the objects of `make` ------------------------------------------
[ -d "$OUTPUT/obj" ] || fail "$OUTPUT/obj is missing (run make first)"
objs=$(find "$OUTPUT/obj" -name '*.o' ! -path '*/daemon/main.o' | sort)
libbpf=
for d in /usr/lib/$(gcc -print-multiarch) /usr/lib64 /usr/lib; do
	[ -f "$d/libbpf.a" ] && libbpf=$d/libbpf.a && break
done
[ -n "$libbpf" ] || fail "no libbpf.a"
san=
nm "$OUTPUT/obj/runtimes/jvm/jvm_attach.o" | grep __asan >/dev/null && san="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $san -I"$REPO_ROOT" -I"$OUTPUT" \
	-o "$TMP/jvm_probe" "$LIB_DIR/jvm_probe.c" $objs "$libbpf" \
	$(pkg-config --libs libelf libdw zlib jansson yaml-0.1 libcurl libmicrohttpd) \
	-lpthread -lm -lstdc++ || fail "cannot build jvm_probe"

# jvm_start JDK FLAGS...: runs AttachTarget under JDK as $JUSER in its own pid, mount and net
# namespaces with a private /tmp and / as its cwd; the namespace's pid 1 is a shell (so the
# JVM is not init, which the kernel would shield from signals it does not handle). Waits for
# its "ready"; its host pid in JVM_PID, its /tmp (as the host reaches it) in JVM_TMP.
# shellcheck disable=SC2034
jvm_start()
{
	local jdk=$1 upid init log=$LIB_STATE/logs/jvm.$RANDOM.log
	shift
	unshare --pid --mount --net --fork --propagation private sh -c '
		u=$1 g=$2 jdk=$3 cp=$4
		shift 4
		# the classes may live under /tmp (a clone in mktemp -d): bound to /mnt of this
		# namespace before its own /tmp hides them
		mount -t proc proc /proc && mount --bind "$cp" /mnt &&
		mount -t tmpfs -o mode=1777,size=16m tmpfs /tmp &&
		cd / && setpriv --reuid="$u" --regid="$g" --clear-groups -- "$jdk/bin/java" \
			-Xmx64m -XX:+UseSerialGC -cp /mnt "$@" AttachTarget 120 &
		wait' jvm_start "$JUID" "$JGID" "$jdk" "$CLASSES" "$@" </dev/null >"$log" 2>&1 &
	upid=$!
	echo "$upid" >>"$LIB_STATE/pids"
	wait_for "init=\$(pgrep -P $upid | head -1); [ -n \"\$init\" ] && \
		JVM_PID=\$(pgrep -P \$init | head -1) && [ -n \"\$JVM_PID\" ] && \
		grep -q '^ready' $log" 20 || fail "the JVM of $jdk did not start: $(tail -3 "$log")"
	init=$(pgrep -P "$upid" | head -1)
	JVM_PID=$(pgrep -P "$init" | head -1)
	echo "$init" >>"$LIB_STATE/pids"
	echo "$JVM_PID" >>"$LIB_STATE/pids"
	need_own_ns "$JVM_PID" "the JVM" pid mnt net
	[ "$(stat -c %u /proc/"$JVM_PID")" = "$JUID" ] || fail "the JVM does not run as $JUSER"
	JVM_TMP=/proc/$JVM_PID/root/tmp
	JVM_LOG=$log
}

# jvm_stop: kills the JVM's namespace (its pid 1, and with it everything in it).
jvm_stop()
{
	local init
	init=$(awk '/^PPid:/ { print $2 }' /proc/"$JVM_PID"/status 2>/dev/null)
	[ -n "$init" ] && kill -KILL "$init" 2>/dev/null
	wait_for "[ ! -e /proc/$JVM_PID ]" 5 || fail "the JVM $JVM_PID did not stop"
}

# tmp_files: the names in the JVM's /tmp, one a line, sorted.
tmp_files() { ls -A "$JVM_TMP" | sort; }

# check_tmp BEFORE WHAT: the JVM's /tmp holds nothing but what it held before and the JVM's
# own socket (.java_pid<nspid>, which the JVM makes).
check_tmp()
{
	local before=$1 what=$2 nspid extra
	nspid=$(awk '/^NSpid:/ { print $NF }' /proc/"$JVM_PID"/status)
	extra=$(comm -13 <(printf '%s\n' "$before") <(tmp_files) | grep -vx ".java_pid$nspid")
	[ -z "$extra" ] || fail "$what: the JVM's /tmp holds files we made: $extra"
	! tmp_files | grep -q '^\.attach_pid' || fail "$what: an .attach_pid file was left"
}

# --- the JDKs ----------------------------------------------------------------------------------
for jdk in $JDKS; do
	name=$(basename "$jdk")
	jvm_start "$jdk"
	before=$(tmp_files)

	"$TMP/jvm_probe" vmstructs "$JVM_PID" >"$TMP/vms.$name" 2>"$TMP/vms.$name.err"
	rc=$?
	cat "$TMP/vms.$name.err" "$TMP/vms.$name" >&2
	[ "$rc" -eq 0 ] || fail "$name: VMStructs fields missing (rc $rc): $(grep MISSING "$TMP/vms.$name" | tr '\n' ' ')"

	t0=$(date +%s%N)
	"$TMP/jvm_probe" attach "$JVM_PID" threaddump >"$TMP/dump.$name" 2>"$TMP/dump.$name.err" ||
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
	"$TMP/jvm_probe" attach "$JVM_PID" jcmd VM.version >"$TMP/ver.$name" 2>&1 ||
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
"$TMP/jvm_probe" attach "$JVM_PID" threaddump >"$TMP/disabled" 2>&1 && fail "attach to a JVM with -XX:+DisableAttachMechanism succeeded"
ms=$((($(date +%s%N) - t0) / 1000000))
log "DisableAttachMechanism: $(cat "$TMP/disabled") (wall $ms ms)"
grep -q 'Operation not supported' "$TMP/disabled" || fail "DisableAttachMechanism: not the expected error: $(cat "$TMP/disabled")"
[ "$ms" -lt 2000 ] || fail "DisableAttachMechanism: the refusal took $ms ms"
sleep 0.3
# No SIGQUIT was sent: the JVM would have printed a thread dump to its output.
! grep -q 'Full thread dump' "$JVM_LOG" || fail "DisableAttachMechanism: the JVM was sent SIGQUIT"
check_tmp "$before" "DisableAttachMechanism"
kill -0 "$JVM_PID" || fail "DisableAttachMechanism: the JVM died"
jvm_stop

# --- a JVM that cannot answer (stopped): the start bound holds, the trigger is removed --------
jvm_start "$JDK17"
before=$(tmp_files)
kill -STOP "$JVM_PID"
t0=$(date +%s%N)
"$TMP/jvm_probe" attach "$JVM_PID" threaddump >"$TMP/stopped" 2>&1 && fail "attach to a stopped JVM succeeded"
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
"$TMP/jvm_probe" attach "$JVM_PID" threaddump >"$TMP/xrs" 2>"$TMP/xrs.err" ||
	fail "-Xrs: threaddump failed: $(cat "$TMP/xrs.err")"
grep -qF '"slideops-compute"' "$TMP/xrs" || fail "-Xrs: the dump does not name slideops-compute"
check_tmp "$before" "-Xrs"
jvm_stop

# ... and with the listener disabled too: refused at once, no signal (it would end the JVM).
jvm_start "$last_jdk" -Xrs -XX:+DisableAttachMechanism
before=$(tmp_files)
t0=$(date +%s%N)
"$TMP/jvm_probe" attach "$JVM_PID" threaddump >"$TMP/xrs2" 2>&1 && fail "-Xrs -XX:+DisableAttachMechanism: attach succeeded"
ms=$((($(date +%s%N) - t0) / 1000000))
log "-Xrs -XX:+DisableAttachMechanism: $(cat "$TMP/xrs2") (wall $ms ms)"
grep -q 'Operation not permitted' "$TMP/xrs2" || fail "-Xrs: not the expected error: $(cat "$TMP/xrs2")"
[ "$ms" -lt 1000 ] || fail "-Xrs: the refusal took $ms ms"
sleep 0.3
kill -0 "$JVM_PID" || fail "-Xrs: the JVM died"
check_tmp "$before" "-Xrs -XX:+DisableAttachMechanism"
jvm_stop

log "passed: $(for j in $JDKS; do basename "$j"; done | tr '\n' ' ')"
