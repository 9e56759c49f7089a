#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The JVM in the other questions and in a whole-server profile (issue 14). JavaWork mixed
# (tests/workloads/java/JavaWork.java) runs four threads under Java 17, as a non-root user in
# its own pid, mount and net namespaces: "compute" in spinLoop;mixStep, "sleeper" in
# Thread.sleep under napLoop, and two "contender-N" that take turns on one monitor in holdLock.
# - wall (3 s, --pid): the sleeper's stacks (napLoop) are off-CPU; holdLock waits on a futex
#   (the monitor) in a good part of its time; mixStep runs on the CPU; the JVM's own threads'
#   waits are left out with their note;
# - locks (3 s, --pid): the answer names JavaWork.holdLock;
# - threads (--pid): every Java thread joined to its OS thread from the JVM's own thread dump
#   (through the attach protocol): compute RUNNABLE in mixStep, sleeper TIMED_WAITING
#   (sleeping), one contender BLOCKED waiting for the monitor the other holds; the answer says
#   so; nothing is left in the JVM's /tmp;
# - cpu of the whole server (3 s) with that JVM, a CPython (nested.py) and a native program
#   (spin) running: JavaWork.mixStep, hot_leaf and checkout_loop are each named, and in the
#   flame graph JavaWork.mixStep is a java box, hot_leaf a python one; a second JVM started
#   0.5 s into that capture (JavaWork late) is walked from then on: lateForever;spinLoop named;
# - memory-growth (3 s, --pid) of JavaWork grow (a thread keeping 64 KiB direct buffers): most
#   of the memory faulted in is under JavaWork.growHeap, which the answer names (the JDK's
#   own frames under it, Unsafe.setMemory0, are never the answer).
. "$(dirname "$0")/lib.sh"

need_root
need_bin
jvm_setup
jvm_compile JavaWork
JVM_MAIN="JavaWork mixed 60"
jvm_start "$JDK17"
before=$(tmp_files)
sleep 2

# value COLLAPSED PATTERN [LEAF]: the summed value of the stacks matching PATTERN ("": all; and whose
# leaf frame starts with LEAF).
value()
{
	awk -v pat="$2" -v leaf="${3:-}" '{ n = $NF; $NF = ""; sub(/ $/, "")
		k = split($0, f, ";")
		if ((pat == "" || index($0, pat)) && (leaf == "" || index(f[k], leaf) == 1)) v += n }
		END { printf "%.0f\n", v }' "$1"
}

# --- wall ----------------------------------------------------------------------------------
out=$TMP/wall
profiler_run wall 30 capture --pid "$JVM_PID" --question wall --duration 3 --out "$out"
c=$out/profile.collapsed
nap=$(value "$c" JavaWork.napLoop) nap_off=$(value "$c" JavaWork.napLoop "[off-CPU")
hold=$(value "$c" JavaWork.holdLock) hold_futex=$(value "$c" JavaWork.holdLock "[off-CPU: futex")
mix_on=$(value "$c" "JavaWork.spinLoop;JavaWork.mixStep" JavaWork.mixStep)
log "wall: napLoop $nap ns ($nap_off off-CPU), holdLock $hold ns ($hold_futex on a futex), mixStep on CPU $mix_on ns"
[ "$nap" -gt 0 ] && [ $((nap_off * 100)) -ge $((nap * 90)) ] || fail "wall: the sleeper is not off-CPU under napLoop"
[ "$hold" -gt 0 ] && [ $((hold_futex * 100)) -ge $((hold * 20)) ] || fail "wall: holdLock does not wait on its monitor"
[ "$mix_on" -gt 1000000000 ] || fail "wall: mixStep ran $mix_on ns on the CPU"
grep -q "The JVM's own threads" "$TMP/wall.stdout" || fail "wall: no note on the JVM's own threads"
check_tmp "$before" wall

# --- locks ---------------------------------------------------------------------------------
out=$TMP/locks
profiler_run locks 30 capture --pid "$JVM_PID" --question locks --duration 3 --out "$out"
answer=$(json_get "$out/summary.json" "d['answer']")
log "locks: $answer"
case $answer in *JavaWork.holdLock*) ;; *) fail "locks: the answer does not name holdLock: $answer" ;; esac
check_tmp "$before" locks

# --- threads: the JVM's own thread dump joined to the eBPF rows --------------------------------
out=$TMP/threads
profiler_run threads 30 capture --pid "$JVM_PID" --question threads --out "$out"
log "threads: $(json_get "$out/summary.json" "d['answer']")"
"$PYTHON" - "$out/summary.json" <<'PYEOF' || fail "threads: the Java threads are wrong"
import json, sys
d = json.load(open(sys.argv[1]))
java = {t["java"]["name"]: t for t in d["threads"] if t.get("java")}
def want(cond, what):
    if not cond:
        print("  threads: %s; java rows: %s" % (what, {k: v["java"] for k, v in java.items()}),
              file=sys.stderr)
        sys.exit(1)
want({"compute", "sleeper", "contender-1", "contender-2", "main"} <= set(java), "a thread is missing")
want(java["compute"]["java"]["state"] == "RUNNABLE", "compute is not RUNNABLE")
want(java["compute"]["function"] == "JavaWork.mixStep", "compute is not in mixStep")
want(java["sleeper"]["java"]["state"] == "TIMED_WAITING (sleeping)", "sleeper is not sleeping")
c = [java["contender-1"]["java"], java["contender-2"]["java"]]
blocked = [j for j in c if j["state"] == "BLOCKED (on object monitor)"]
want(len(blocked) == 1 and blocked[0]["lock"].startswith("waiting for java.lang.Object <0x"),
     "no contender BLOCKED on the monitor")
held = [j for j in c if j["lock"].startswith("holds java.lang.Object")]
want(len(held) == 1 and held[0]["lock"][len("holds "):] == blocked[0]["lock"][len("waiting for "):],
     "the other contender does not hold that monitor")
want(blocked[0]["frame"].startswith("JavaWork.holdLock (JavaWork.java:"), "BLOCKED not in holdLock")
want(all(t["tid"] != t["pid"] or t["name"] for t in d["threads"]), "a row without a name")
want("BLOCKED (on object monitor)" in d["answer"], "the answer does not say who is blocked")
PYEOF
check_tmp "$before" threads

# --- the whole server: Java, Python and native code ------------------------------------------
python3_start /usr/bin/python3.11 "$LIB_DIR/../workloads/python/nested.py" 40 ||
	fail "no /usr/bin/python3.11"
bg_start "$(workload spin)" 40
out=$TMP/server
first_jvm=$JVM_PID
(
	sleep 0.5
	JVM_MAIN="JavaWork late 30" jvm_start "$JDK17"
	echo "$JVM_PID" >"$TMP/late.pid"
) &
late=$!
# Under ASan the unwind tables of every process on the server (libjvm's 191 k rows twice)
# take seconds to build, and a stack sampled before its tables is walked by frame pointer
# (no Java frame): a longer capture there (8 s once gave the late JVM no walked sample on a
# loaded machine).
secs=3
[ "$MEM_FACTOR" -gt 1 ] && secs=10
profiler_run server 40 capture --server --question cpu --duration "$secs" --out "$out"
wait "$late" || fail "the late JVM did not start"
c=$out/profile.collapsed
for fn in JavaWork.mixStep hot_leaf checkout_loop "JavaWork.lateForever;JavaWork.spinLoop"; do
	v=$(value "$c" "$fn")
	log "server: $fn in $v samples"
	[ "$v" -ge 20 ] || fail "server: $fn in $v samples"
done
"$PYTHON" - "$out/flamegraph.html" <<'PYEOF' || fail "server: the flame graph's languages are wrong"
import json, re, sys
html = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="fg-data">(.*?)</script>', html, re.S).group(1))
names, langs = d["names"], d["langs"]
found = {}
def walk(n):
    name, lang = names[n[0]], langs[n[2]]
    found.setdefault(name, set()).add(lang)
    for c in (n[3] if len(n) > 3 else []):
        walk(c)
walk(d["tree"])
for fn, want in (("JavaWork.mixStep", "java"), ("hot_leaf", "python"), ("checkout_loop", "native")):
    print("  %s: %s" % (fn, sorted(found.get(fn, []))), file=sys.stderr)
    if found.get(fn) != {want}:
        sys.exit(1)
PYEOF
check_tmp "$before" server
jvm_stop
JVM_PID=$(cat "$TMP/late.pid")
jvm_stop

# --- memory-growth: the heap pages a Java method faults in ------------------------------------
JVM_MAIN="JavaWork grow 30" jvm_start "$JDK17"
before=$(tmp_files)
out=$TMP/grow
profiler_run grow 30 capture --pid "$JVM_PID" --question memory-growth --duration 3 --out "$out"
c=$out/profile.collapsed
total=$(value "$c" "") grow=$(value "$c" "JavaWork.growHeap")
log "memory-growth: $grow of $total bytes under JavaWork.growHeap; $(json_get "$out/summary.json" "d['answer']")"
[ "$total" -gt $((8 << 20)) ] || fail "memory-growth: only $total bytes"
[ $((grow * 100)) -ge $((total * 60)) ] || fail "memory-growth: growHeap has $grow of $total bytes"
case $(json_get "$out/summary.json" "d['answer']") in
*"most of it in JavaWork.growHeap"*) ;; # the JDK's own frames (Unsafe.setMemory0) go to it
*) fail "memory-growth: the answer does not name growHeap" ;;
esac
check_tmp "$before" memory-growth
jvm_stop
log "ok"
