#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Every question that takes its stacks from eBPF names CPython functions (issue 13), off the
# CPU too. tests/workloads/python/threads.py runs three threads, each in one named function for
# its whole life: compute (pure Python), nap (time.sleep) and digest (hashlib.sha256 over 4 MiB,
# in C with the GIL released). In its own pid, mount and net namespaces, for Debian's
# /usr/bin/python3.11 (static, non-PIE) and pyenv's 3.12 when installed:
#   - `wall`: each thread's time is under its own function, right under its loop
#     (sleep_loop;nap, ...), each a third of the three threads' wall time (within 10 points),
#     and the sleeping thread's under nap ends in [off-CPU: clock_nanosleep]
#   - `cpu`: compute and digest only (>= 10% each); nap has at most 5% of the samples
# Then with the system CPython only:
#   - `memory-growth` of threads.py grow: most of the new memory is under grow (>= 80%)
#   - `locks` of threads.py locks: most of the wait time is in wait_for_lock (>= 60%)
#   - a CPython that starts during a whole-server `cpu` capture (in its namespaces, so it is
#     first seen as the shell that execs it) is walked: compute under compute_loop
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare
need_bin

WORKLOAD=$LIB_DIR/../workloads/python/threads.py
[ -f "$WORKLOAD" ] || fail "no $WORKLOAD"
DURATION=${PY_THREADS_DURATION:-3}

# check_stacks DIR MODE: checks profile.collapsed of DIR for MODE (wall, cpu, grow, locks,
# late); prints the shares.
check_stacks()
{
	"$PYTHON" - "$1" "$2" <<'PYEOF'
import json, sys

out, mode = sys.argv[1], sys.argv[2]
# function -> the loop it must sit right under
loops = {"compute": "compute_loop", "nap": "sleep_loop", "digest": "hash_loop"}
errors = []
by_fn, named, total = {}, 0, 0
stacks = []
for line in open(out + "/profile.collapsed"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames, n = stack.split(";"), int(n)
    stacks.append((frames, n))
    total += n
    for fn, loop in list(loops.items()) + [("grow", "grow_loop"), ("wait_for_lock", "wait_loop")]:
        if any(frames[i] == loop and frames[i + 1] == fn for i in range(len(frames) - 1)):
            by_fn[fn] = by_fn.get(fn, 0) + n
            named += n
            break

def share(fn, of):
    return 100.0 * by_fn.get(fn, 0) / of if of else 0.0

if mode in ("wall", "cpu"):
    three = sum(by_fn.get(f, 0) for f in loops)
    print("%s: %d in all, %.1f%% under a named function; of the three threads: %s" % (
        mode, total, 100.0 * named / total if total else 0,
        ", ".join("%s %.1f%%" % (f, share(f, three)) for f in loops)))
    if not three:
        errors.append("no thread under its function")
if mode == "wall":
    if 100.0 * named / total < 85:
        errors.append("only %.1f%% of the wall time is under a named function" % (100.0 * named / total))
    for f in loops:
        if abs(share(f, three) - 100.0 / 3) > 10:
            errors.append("%s has %.1f%% of the threads' wall time, not 33 +- 10" % (f, share(f, three)))
    slept = sum(n for fr, n in stacks if "nap" in fr and fr[-1] == "[off-CPU: clock_nanosleep]")
    if slept < 0.5 * by_fn.get("nap", 0):
        errors.append("nap's time is not off-CPU in clock_nanosleep (%d of %d)" % (slept, by_fn.get("nap", 0)))
elif mode == "cpu":
    if share("nap", total) > 5:
        errors.append("the sleeping thread has %.1f%% of the CPU samples" % share("nap", total))
    for f in ("compute", "digest"):
        if share(f, total) < 10:
            errors.append("%s has only %.1f%% of the CPU samples" % (f, share(f, total)))
elif mode in ("grow", "locks"):
    fn, least = ("grow", 80) if mode == "grow" else ("wait_for_lock", 60)
    print("%s: %s has %.1f%% of %d" % (mode, fn, share(fn, total), total))
    if share(fn, total) < least:
        errors.append("%s has %.1f%%, not >= %d%%" % (fn, share(fn, total), least))
elif mode == "late":
    late = by_fn.get("compute", 0)
    print("late: %d samples of compute under compute_loop" % late)
    if late < 10:
        errors.append("the CPython started during the capture is not walked (%d samples)" % late)
s = json.load(open(out + "/summary.json"))
print("answer: %s" % s["answer"])
for n in s.get("notes", []):
    print("note: %s" % n)
for e in errors:
    print("FAIL: %s" % e)
sys.exit(1 if errors else 0)
PYEOF
}

# capture_check NAME MODE CAPTURE-ARGS...: one capture, checked; records a failure in $failed.
capture_check()
{
	local name=$1 mode=$2 dir
	shift 2
	dir=$TMP/cap.$name.$mode
	capture_retry "$dir" 60 "$@"
	if [ "$CAPTURE_RC" -ne 0 ]; then
		log "$name $mode: capture failed (rc $CAPTURE_RC): $(tail -3 "$dir.stderr")"
		failed="$failed $name/$mode"
		return
	fi
	if check_stacks "$dir" "$mode" >"$dir.check" 2>&1; then
		passed="$passed $name/$mode"
		log "$name $mode: PASS"
	else
		failed="$failed $name/$mode"
		log "$name $mode: FAIL"
	fi
	sed 's/^/  /' "$dir.check" >&2
}

passed=
failed=
for py in $(python3_versions); do
	case $py in
	/usr/bin/python3.11 | */3.12.*/bin/python3.12) ;;
	*) continue ;;
	esac
	python3_start "$py" "$WORKLOAD" $((DURATION + 40)) wall || continue
	name=$PY_VERSION
	capture_check "$name" wall --pid "$PY_PID" --question wall --duration "$DURATION"
	capture_check "$name" cpu --pid "$PY_PID" --question cpu --duration 2
	kill -KILL "$PY_PID" 2>/dev/null
done

py=/usr/bin/python3.11
python3_start "$py" "$WORKLOAD" 30 grow || exit 1
capture_check "$PY_VERSION" grow --pid "$PY_PID" --question memory-growth --duration 2
kill -KILL "$PY_PID" 2>/dev/null

python3_start "$py" "$WORKLOAD" 30 locks || exit 1
capture_check "$PY_VERSION" locks --pid "$PY_PID" --question locks --duration 2
kill -KILL "$PY_PID" 2>/dev/null

# --- a CPython that starts while a whole-server capture runs -------------------------------
dir=$TMP/cap.late
wait_lock
rm -rf "$dir"
"$BIN" capture --server --question cpu --duration 3 --out "$dir" </dev/null >"$dir.stdout" \
	2>"$dir.stderr" &
cap=$!
sleep 1
late=$(ns_python "" "$py" "$WORKLOAD" 4 wall) || exit 1
wait "$cap"
rc=$?
kill -KILL "$late" 2>/dev/null
if [ $rc -ne 0 ]; then
	log "late: capture failed (rc $rc): $(tail -3 "$dir.stderr")"
	failed="$failed late"
elif check_stacks "$dir" late >"$dir.check" 2>&1; then
	passed="$passed late"
	log "late: PASS"
else
	failed="$failed late"
	log "late: FAIL"
fi
sed 's/^/  /' "$dir.check" >&2

log "passed:${passed:- none}"
[ -z "$failed" ] || fail "failed:$failed"
log "PASS"
exit 0
