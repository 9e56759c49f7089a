#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# A whole-server CPU profile of a mixed server names each language's hot function and colours
# it by language (issue 13). Three busy programs, each in its own pid, mount and net namespaces
# and its own owner, run at once:
#   - Python: tests/workloads/python/webapp.py under Debian's /usr/bin/python3.11, host files,
#     in system.slice/py-web.service: handle_request -> render_page (~2/3) and json.dumps
#     called by handle_request (~1/3, the standard library)           -> "Unit py-web.service"
#   - Go: tests/workloads/go/hot.go (main.work -> main.hotLoop), built here, in a busybox root,
#     in a Kubernetes pod container's cgroup                            -> "Service 5e6f7a8b"
#   - native: tests/workloads/spin.c (checkout_loop) in a busybox root,
#     in system.slice/native-worker.service                            -> "Unit native-worker.service"
# then `capture --server --question cpu` for a few seconds, and checks:
#   - summary.json: each program's group and process, with its hot function as top_function
#     (render_page, main.hotLoop, checkout_loop); each program has >= 15% of the three
#     programs' samples together (1/3 each on 2 CPUs, by construction; shares among
#     themselves, so that other load on the machine does not matter); "python", "go" and
#     "native" in languages; no Python standard-library function is ever a top function, and
#     json.dumps' time is handle_request's
#   - profile.collapsed: the hot function right under its caller in >= 90% of each program's
#     samples that have it
#   - flamegraph.html (its embedded tree) and profile.pb.gz (each location's language):
#     render_page and handle_request are Python, main.hotLoop and main.work Go, checkout_loop
#     native, everywhere they appear; each sample's "language" label is its process's
#   - the answer names the top group's top function, which is one of the three when the top
#     group is one of ours
# About 15 s.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare pgrep
need_bin

POD_UID=5e6f7a8b-1a2b-4c3d-8e9f-0a1b2c3d4e5f
PY_UNIT=py-web.service
C_UNIT=native-worker.service
DURATION=${SERVER_DURATION:-4}
PY=/usr/bin/python3.11
PY_WORKLOAD=$LIB_DIR/../workloads/python/webapp.py
[ -x "$PY" ] || fail "the system CPython $PY is missing"
[ -f "$PY_WORKLOAD" ] || fail "no $PY_WORKLOAD"

need_go

# --- the three programs ----------------------------------------------------------------------
go_build hot
SPIN=$(workload spin) || exit 1

py_cg=$(cg_make_unit "$PY_UNIT") || exit 1
c_cg=$(cg_make_unit "$C_UNIT") || exit 1
go_cg=$(cg_make_pod burstable "$POD_UID") || exit 1
make_busybox_rootfs "$TMP/root-go" "$TMP/hot" || exit 1
make_busybox_rootfs "$TMP/root-c" "$SPIN" || exit 1
py_pid=$(ns_python "$py_cg" "$PY" "$PY_WORKLOAD" $((DURATION + 40))) || exit 1
go_pid=$(ns_container_run "$TMP/root-go" "$go_cg" /usr/local/bin/hot $((DURATION + 40))) || exit 1
c_pid=$(ns_container_run "$TMP/root-c" "$c_cg" /usr/local/bin/spin) || exit 1
log "python pid $py_pid in $py_cg, go pid $go_pid in $go_cg, native pid $c_pid in $c_cg"
for p in "$py_pid" "$go_pid" "$c_pid"; do
	need_own_ns "$p" "process $p" pid mnt net
done
sleep 1	# all three at full speed before sampling starts

OUT=$TMP/out
timeout -k 5 $((DURATION + 55)) "$BIN" capture --server --question cpu --duration "$DURATION" \
	--freq 199 --out "$OUT" >"$TMP/capture.stdout" 2>"$TMP/capture.stderr"
rc=$?
if [ "$rc" -ne 0 ]; then
	sed 's/^/  stdout: /' "$TMP/capture.stdout" >&2
	sed 's/^/  stderr: /' "$TMP/capture.stderr" >&2
	fail "capture exited $rc"
fi
sed 's/^/  capture: /' "$TMP/capture.stdout" >&2
for p in "$py_pid" "$go_pid" "$c_pid"; do
	kill -0 "$p" 2>/dev/null || fail "process $p died during the capture"
done
for f in profile.pb.gz profile.collapsed flamegraph.html summary.json; do
	[ -s "$OUT/$f" ] || fail "$f missing or empty in $OUT"
done

"$PYTHON" - "$OUT" "$PY_UNIT" "Service ${POD_UID:0:8}" "$C_UNIT" "$py_pid" "$go_pid" "$c_pid" \
	"$LIB_DIR/../workloads/python" >"$TMP/check.out" 2>&1 <<'PYEOF'
import json, re, sys

out, py_unit, go_owner, c_unit = sys.argv[1:5]
py_pid, go_pid, c_pid = (int(x) for x in sys.argv[5:8])
sys.path.insert(0, sys.argv[8])
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import pprof_read
errors = []
# owner, pid, hot function, its caller, language
PROGS = [("Unit " + py_unit, py_pid, "render_page", "handle_request", "python"),
         (go_owner, go_pid, "main.hotLoop", "main.work", "go"),
         ("Unit " + c_unit, c_pid, "checkout_loop", None, "native")]
LANG_OF = {"render_page": "python", "handle_request": "python", "main.hotLoop": "go",
           "main.work": "go", "checkout_loop": "native"}

# --- summary.json ------------------------------------------------------------------------------
s = json.load(open(out + "/summary.json"))
groups = dict((g["owner"], g) for g in s["groups"])
for g in sorted(s["groups"], key=lambda g: -g["samples"])[:6]:
    print("group %-34s %5d samples %5.1f%%  top %s" % (g["owner"], g["samples"], g["share"],
                                                      g["top_function"]))
mine = {}
for owner, pid, hot, _, lang in PROGS:
    g = groups.get(owner)
    if not g:
        errors.append("no group %r: %r" % (owner, sorted(groups)))
        continue
    procs = dict((p["pid"], p) for p in g["processes"])
    p = procs.get(pid)
    if not p:
        errors.append("%s has no process %d: %r" % (owner, pid, g["processes"]))
        continue
    mine[owner] = p["samples"]
    if g["top_function"] != hot or p["top_function"] != hot:
        errors.append("%s: top_function %r (process %r), not %s"
                      % (owner, g["top_function"], p["top_function"], hot))
together = sum(mine.values())
for owner, n in sorted(mine.items()):
    share = 100.0 * n / together if together else 0
    print("share among the three: %-34s %5d samples %5.1f%%" % (owner, n, share))
    if share < 15:
        errors.append("%s has only %.1f%% of the three programs' samples" % (owner, share))
if together < 200:
    errors.append("only %d samples of the three programs" % together)
for lang in ("python", "go", "native"):
    if lang not in s["languages"]:
        errors.append("languages has no %r: %r" % (lang, s["languages"]))

# --- profile.pb.gz -----------------------------------------------------------------------------
prof = pprof_read.read(out + "/profile.pb.gz")
seen, stdlib = {}, set()
for loc in prof.locs.values():
    for fid, _ in loc["lines"]:
        name, fil = prof.funcs[fid]
        if name in LANG_OF:
            seen.setdefault(name, set()).add(prof.lang(loc))
        if prof.lang(loc) == "python" and re.search(r"/lib/python3\.\d+/", fil) and \
                "-packages/" not in fil:
            stdlib.add(name)
for name, want in sorted(LANG_OF.items()):
    print("pprof: %-15s language %s" % (name, ", ".join(sorted(map(str, seen.get(name, []))))))
    if seen.get(name) != {want}:
        errors.append("pprof: %s has language %r, not %s" % (name, seen.get(name), want))
# each sample's language label is its process's
bad, labels = 0, {}
for smp in prof.samples:
    lab = prof.label(smp, "language")
    names = set(f[0] for f in prof.frames(smp))
    for hot in ("render_page", "main.hotLoop", "checkout_loop"):
        if hot in names:
            labels[(hot, lab)] = labels.get((hot, lab), 0) + 1
            bad += lab != LANG_OF[hot]
for (hot, lab), n in sorted(labels.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
    print("pprof: %d stacks with %s are labelled language=%s" % (n, hot, lab))
if bad:
    errors.append("pprof: %d stacks with a hot function carry another language label" % bad)
print("pprof: Python standard-library functions seen: %s" % ", ".join(sorted(stdlib)))
if not stdlib:
    errors.append("pprof: no frame of the Python standard library (json.dumps) was seen")

# --- the function of yours: never the standard library ---------------------------------------
named = [f["name"] for f in s["top_functions"]] + [g["top_function"] for g in s["groups"]] + \
    [p["top_function"] for g in s["groups"] for p in g["processes"]]
wrong = sorted(set(named) & stdlib)
if wrong:
    errors.append("standard-library functions named as the application's: %r" % wrong)
top = dict((f["name"], f["samples"]) for f in s["top_functions"])
py_n = mine.get("Unit " + py_unit, 0)
print("top functions: render_page %d, handle_request %d of the Python program's %d samples"
      % (top.get("render_page", 0), top.get("handle_request", 0), py_n))
if py_n and top.get("handle_request", 0) < 0.1 * py_n:
    errors.append("handle_request has %d of %d samples: json.dumps' time is not its"
                  % (top.get("handle_request", 0), py_n))

# --- profile.collapsed: callers ----------------------------------------------------------------
for owner, _, hot, caller, _ in PROGS:
    have = good = 0
    for line in open(out + "/profile.collapsed"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0] != owner or hot not in frames:
            continue
        have += int(n)
        if caller is None or any(frames[i] == caller and frames[i + 1] == hot
                                 for i in range(len(frames) - 1)):
            good += int(n)
    print("collapsed: %-34s %s in %d samples, under %s in %d" % (owner, hot, have, caller, good))
    if not have or good < 0.9 * have:
        errors.append("%s: %s under %s in %d of %d samples" % (owner, hot, caller, good, have))

# --- flamegraph.html: the language of every box ------------------------------------------------
page = open(out + "/flamegraph.html").read()
start = page.find('{"version":1,"unit":')
data, _ = json.JSONDecoder().raw_decode(page[start:]) if start >= 0 else (None, 0)
boxes = {}
def walk(node):
    name, lang = data["names"][node[0]], data["langs"][node[2]]
    if name in LANG_OF:
        boxes.setdefault(name, set()).add(lang)
    for c in (node[3] if len(node) > 3 else []):
        walk(c)
if data:
    walk(data["tree"])
for name, want in sorted(LANG_OF.items()):
    print("flamegraph: %-15s coloured as %s" % (name, ", ".join(sorted(boxes.get(name, [])))))
    if boxes.get(name) != {want}:
        errors.append("flamegraph: %s is coloured as %r, not %s" % (name, boxes.get(name), want))

# --- the answer --------------------------------------------------------------------------------
print("answer: %s" % s["answer"])
ranked = sorted(s["groups"], key=lambda g: -g["samples"])
m = re.search(r"^Over \d+ seconds, (.*?) used \d+% of the CPU time on this server, most of it "
              r"in (.*?)\.( |$)", s["answer"])
if not m:
    errors.append("the answer is not the server sentence: %r" % s["answer"])
elif ranked and ranked[0]["owner"] in mine:
    hot = [h for o, _, h, _, _ in PROGS if o == m.group(1)]
    if m.group(2) != ranked[0]["top_function"] or hot != [m.group(2)]:
        errors.append("the answer names %r in %r: the top group %r has %r"
                      % (m.group(2), m.group(1), ranked[0]["owner"], ranked[0]["top_function"]))
for n in s.get("notes", []):
    print("note: %s" % n)
for e in errors:
    print("FAIL: %s" % e)
sys.exit(1 if errors else 0)
PYEOF
rc=$?
sed 's/^/  /' "$TMP/check.out" >&2
[ "$rc" -eq 0 ] || fail "checks failed (above)"
log "PASS"
exit 0
