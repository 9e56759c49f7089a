#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# CPython code of every shape a stack walker can get wrong is named (issue 13):
# tests/workloads/python/shapes.py runs, in turn, a generator (consume_gen;gen_hot), a coroutine
# on an asyncio event loop (coro_main;coro_hot), recursion 150 deep (recurse;deep_leaf: past the
# walker's PY_MAX_FRAMES of 128), a raise caught in a loop with work in the except and the
# finally blocks (exc_loop;exc_in_except, exc_loop;exc_in_finally) and a function made by
# exec(compile(src, "<generated>", "exec")) (run_exec;exec_hot). Each CPython below runs it in
# its own pid, mount and net namespaces, captured with `capture --pid PID --question cpu`:
#   - profile.collapsed: every hot function is in >= 3% of the process's samples (by
#     construction 10-25% each), right under its caller in >= 90% of the samples it is in; the
#     coroutine under the event loop (BaseEventLoop._run_once / Handle._run)
#   - recursion: deep_leaf under >= 100 recurse frames, and the cut root end has no <module>;
#     that the stack was cut is said (a frame or a note saying "truncated")
#   - profile.pb.gz: exec_hot's file is <generated>, the others' shapes.py
#   - summary.json: the answer names one of the hot functions (never the stdlib, the
#     interpreter or asyncio)
# CPythons: Debian's /usr/bin/python3.11 (must be there) and pyenv's 3.12 (left out when not
# installed). About 10 s a version.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare

DURATION=${PY_DURATION:-4}
WORKLOAD=$LIB_DIR/../workloads/python/shapes.py
[ -f "$WORKLOAD" ] || fail "no $WORKLOAD"
need_bin

# check_shapes DIR: checks a capture of shapes.py (see the top of this file).
check_shapes()
{
	"$PYTHON" - "$1" "$LIB_DIR/../workloads/python" <<'PYEOF'
import json, re, sys

out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pprof_read
errors = []
SHAPES = [("generator", "consume_gen", "gen_hot"), ("coroutine", "coro_main", "coro_hot"),
          ("recursion", "recurse", "deep_leaf"), ("except", "exc_loop", "exc_in_except"),
          ("finally", "exc_loop", "exc_in_finally"), ("exec", "run_exec", "exec_hot")]
HOT = set(h for _, _, h in SHAPES)

stacks = []
for line in open(out + "/profile.collapsed"):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    stacks.append((stack.split(";"), int(n)))
total = sum(n for _, n in stacks)
if total < 200:
    errors.append("only %d samples" % total)

def under(frames, caller, hot):
    return any(frames[i] == caller and frames[i + 1] == hot for i in range(len(frames) - 1))

for shape, caller, hot in SHAPES:
    have = sum(n for f, n in stacks if hot in f)
    good = sum(n for f, n in stacks if hot in f and under(f, caller, hot))
    share = 100.0 * have / total if total else 0
    pct = 100.0 * good / have if have else 0
    print("%-9s %-15s %5d samples (%4.1f%%), under %s in %5.1f%%"
          % (shape, hot, have, share, caller, pct))
    if share < 3:
        errors.append("%s: %s in only %.1f%% of the samples" % (shape, hot, share))
    elif pct < 90:
        errors.append("%s: %s under %s in only %.1f%% of its samples" % (shape, hot, caller, pct))
        for f, n in sorted(((f, n) for f, n in stacks if hot in f and not under(f, caller, hot)),
                           key=lambda x: -x[1])[:3]:
            print("   not under %s: %d %s" % (caller, n, ";".join(f[-8:])))

# the coroutine runs on an event loop: asyncio's frames are under it
coro = [(f, n) for f, n in stacks if "coro_hot" in f]
loop = sum(n for f, n in coro if any(x.endswith(("_run_once", "Handle._run")) for x in f))
have = sum(n for _, n in coro)
print("coroutine: %d of %d samples under the event loop" % (loop, have))
if have and loop < 0.9 * have:
    errors.append("coro_hot under the event loop in only %d of %d samples" % (loop, have))

# recursion past the walker's limit: the leaf side is kept, the root side cut
deep = [(f, n) for f, n in stacks if "deep_leaf" in f]
have = sum(n for _, n in deep)
deep_ok = sum(n for f, n in deep if f.count("recurse") >= 100)
rooted = sum(n for f, n in deep if "<module>" in f)
marked = sum(n for f, n in deep if any(re.search("truncat", x, re.I) for x in f))
print("recursion: %d samples, %d under >= 100 recurse frames (max %d), %d reach <module>, "
      "%d with a truncation frame" % (have, deep_ok, max([f.count("recurse") for f, _ in deep] or [0]),
                                       rooted, marked))
if have and deep_ok < 0.9 * have:
    errors.append("deep_leaf under >= 100 recurse frames in only %d of %d samples" % (deep_ok, have))
if have and rooted > 0.1 * have:
    errors.append("%d of %d deep_leaf samples reach <module>: the stack is not cut at %d frames?"
                  % (rooted, have, 128))

s = json.load(open(out + "/summary.json"))
notes = s.get("notes", [])
for n in notes:
    print("note: %s" % n)
noted = [n for n in notes if re.search("truncat|deeper than|frames deep", n, re.I)]
if not marked and not noted:
    errors.append("the cut stack is not said: no frame and no note says 'truncated'")

# --- profile.pb.gz: the file of each hot function ------------------------------------------
files = {}
for name, fil in pprof_read.read(out + "/profile.pb.gz").funcs.values():
    if name in HOT:
        files.setdefault(name, set()).add(fil)
for hot in sorted(HOT):
    want = "<generated>" if hot == "exec_hot" else "/shapes.py"
    got = files.get(hot, set())
    print("pprof: %s in %s" % (hot, ", ".join(sorted(got)) or "no function"))
    if not got or not all(x.endswith(want) for x in got):
        errors.append("pprof: %s's file is %r, not ...%s" % (hot, sorted(got), want))

m = re.search(r"most of it in (.*?)\.( |$)", s["answer"])
print("answer: %s" % s["answer"])
if not m or m.group(1) not in HOT:
    errors.append("the answer does not name a hot function: %r" % s["answer"])
for e in errors:
    print("FAIL: %s" % e)
sys.exit(1 if errors else 0)
PYEOF
}

# of python3_versions: the system CPython and the first installed pyenv 3.12
PYTHONS=/usr/bin/python3.11
for py in $(python3_versions); do
	case $py in
	*/versions/3.12.*/bin/python3.12) [ -x "$py" ] && PYTHONS="$PYTHONS $py" && break ;;
	esac
done

passed=
failed=
for py in $PYTHONS; do
	python3_start "$py" "$WORKLOAD" $((DURATION + 30)) || fail "$py is not installed"
	name=$PY_VERSION pid=$PY_PID
	dir=$TMP/cap.$name
	# 497 Hz: ~2000 samples, a few hundred per shape
	"$BIN" capture --pid "$pid" --question cpu --duration "$DURATION" --freq 497 --out "$dir" \
		>"$dir.out" 2>&1
	rc=$?
	kill -KILL "$pid" 2>/dev/null
	if [ $rc -ne 0 ]; then
		log "$name ($py): capture failed (rc $rc): $(tail -3 "$dir.out")"
		failed="$failed $name"
		continue
	fi
	if check_shapes "$dir" >"$dir.check" 2>&1; then
		passed="$passed $name"
		log "$name ($py): PASS"
	else
		failed="$failed $name"
		log "$name ($py): FAIL"
	fi
	sed 's/^/  /' "$dir.check" >&2
done

log "passed:${passed:- none}"
[ -z "$failed" ] || fail "failed:$failed"
log "PASS"
exit 0
