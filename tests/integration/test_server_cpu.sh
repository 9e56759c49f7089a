#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# A whole-server CPU profile names what owns the busy processes (SPEC 4, 5):
#   - hot2 (build_report ~75%, compress_chunk ~25%) in a systemd unit's cgroup,
#     system.slice/billing-worker.service                    -> "Unit billing-worker.service"
#   - spin (checkout_loop) in a container: own pid+mount+net namespaces, a busybox root, in a
#     Kubernetes pod container's cgroup (kubepods burstable, systemd driver, containerd)
#                                                            -> "Service 1a2b3c4d"
# then checks the four files of `capture --server --question cpu --duration 5 --out DIR`.
. "$(dirname "$0")/lib.sh"

need_root
need_bin

POD_UID=1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d
CONTAINER_ID=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0
UNIT=billing-worker.service
DURATION=5

# The workloads: built by `make` into $OUTPUT/workloads; built here the same way otherwise.
HOT2=$(workload hot2) || exit 1
SPIN=$(workload spin) || exit 1

unit_cg=$(cg_make_unit "$UNIT") || exit 1
hot2_pid=$(cg_run "$unit_cg" "$HOT2") || exit 1
log "hot2 pid $hot2_pid in $unit_cg"

pod_cg=$(cg_make_pod burstable "$POD_UID" "$CONTAINER_ID") || exit 1
make_busybox_rootfs "$TMP/rootfs" "$SPIN" || exit 1
spin_pid=$(ns_container_run "$TMP/rootfs" "$pod_cg" /usr/local/bin/spin) || exit 1
log "spin pid $spin_pid (pid 1 of its namespace) in $pod_cg"

# The setup is what the test claims it is.
grep -qx "0::/$unit_cg" "/proc/$hot2_pid/cgroup" || fail "hot2 is not in $unit_cg (v2)"
grep -q "name=systemd:/$unit_cg\$" "/proc/$hot2_pid/cgroup" || fail "hot2 is not in $unit_cg (name=systemd)"
grep -qx "0::/$pod_cg" "/proc/$spin_pid/cgroup" || fail "spin is not in $pod_cg (v2)"
need_own_ns "$spin_pid" spin pid mnt net
sleep 1	# both are at full speed before sampling starts

OUT=$TMP/out
start=$(date +%s%N)
timeout -k 5 $((DURATION + 55)) "$BIN" capture --server --question cpu --duration "$DURATION" \
	--out "$OUT" >"$TMP/capture.stdout" 2>"$TMP/capture.stderr"
rc=$?
log "capture exited $rc after $((($(date +%s%N) - start) / 1000000)) ms"
if [ "$rc" -ne 0 ]; then
	sed 's/^/  stdout: /' "$TMP/capture.stdout" >&2
	sed 's/^/  stderr: /' "$TMP/capture.stderr" >&2
	fail "capture exited $rc"
fi
sed 's/^/  capture: /' "$TMP/capture.stdout" >&2

for f in profile.pb.gz profile.collapsed flamegraph.html summary.json; do
	[ -s "$OUT/$f" ] || fail "$f missing or empty in $OUT"
done
kill -0 "$hot2_pid" 2>/dev/null || fail "hot2 died during the capture"
kill -0 "$spin_pid" 2>/dev/null || fail "spin died during the capture"

# summary.json and profile.collapsed, checked together.
"$PYTHON" - "$OUT" "$UNIT" "${POD_UID:0:8}" "$DURATION" "$hot2_pid" "$spin_pid" \
	>"$TMP/pycheck.out" <<'EOF'
import datetime, json, os, re, sys

out, unit, pod8, duration, hot2_pid, spin_pid = sys.argv[1:]
duration, hot2_pid, spin_pid = int(duration), int(hot2_pid), int(spin_pid)
UNIT_OWNER = "Unit " + unit
SVC_OWNER = "Service " + pod8
errors = []

def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)

def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)

def is_str(v):
    return isinstance(v, str)

def typed(obj, where, fields):
    """fields: name -> predicate; checks presence and type, returns whether all were right"""
    ok = check(isinstance(obj, dict), "%s is not an object" % where)
    if not ok:
        return False
    for name, pred in fields.items():
        if not check(name in obj, "%s has no field %r" % (where, name)):
            ok = False
        elif not check(pred(obj[name]), "%s.%s has the wrong type or value: %r"
                       % (where, name, obj[name])):
            ok = False
    return ok

with open(os.path.join(out, "summary.json")) as f:
    s = json.load(f)

# --- summary.json: every documented field, with its type -------------------------------------
typed(s, "summary", {
    "version": lambda v: v == 1,
    "question": lambda v: v == "cpu",
    "question_text": lambda v: v == "What is using the CPU",
    "target": lambda v: isinstance(v, dict),
    "start": is_str,
    "duration_seconds": lambda v: is_num(v) and v == duration,
    "sample_count": lambda v: is_int(v) and v > 0,
    "idle_samples": lambda v: is_int(v) and v >= 0,
    "busy_percent": lambda v: is_num(v) and 0 <= v <= 100,
    "answer": lambda v: is_str(v) and v,
    "groups": lambda v: isinstance(v, list) and v,
    "top_functions": lambda v: isinstance(v, list) and v,
    "notes": lambda v: isinstance(v, list) and all(is_str(n) for n in v),
    "stripped_binaries": lambda v: isinstance(v, list),
    "languages": lambda v: isinstance(v, list) and all(is_str(l) for l in v),
    "lost_samples": lambda v: is_int(v) and v >= 0,
    "files": lambda v: v == {"pprof": "profile.pb.gz", "collapsed": "profile.collapsed",
                             "flamegraph": "flamegraph.html", "summary": "summary.json"},
})
if errors:	# the rest reads these fields
    print("\n".join(errors))
    sys.exit(1)

typed(s["target"], "target", {"kind": lambda v: v == "server",
                              "description": lambda v: v == "this server"})
try:
    t = datetime.datetime.fromisoformat(s["start"].replace("Z", "+00:00"))
    check(t.tzinfo is not None, "start has no time zone: %r" % s["start"])
    check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", s["start"]),
          "start is not RFC 3339: %r" % s["start"])
    if t.tzinfo is not None:
        age = (datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()
        check(0 <= age < 120, "start is %.0f s ago, not this capture" % age)
except ValueError:
    check(False, "start is not RFC 3339: %r" % s["start"])
check("native" in s["languages"], "languages has no 'native': %r" % s["languages"])
total = s["sample_count"]
busy = 100.0 * total / (total + s["idle_samples"])
check(abs(s["busy_percent"] - busy) <= 1.0,
      "busy_percent %r is not sample_count/(sample_count+idle_samples) = %.1f"
      % (s["busy_percent"], busy))
for i, b in enumerate(s["stripped_binaries"]):
    typed(b, "stripped_binaries[%d]" % i, {"path": is_str, "share": is_num,
                                          "build_id": lambda v: v is None or is_str(v)})
    check(not b.get("path", "").endswith(("/hot2", "/spin")),
          "hot2/spin are built with symbols but listed as stripped: %r" % b)
for i, fn in enumerate(s["top_functions"]):
    typed(fn, "top_functions[%d]" % i, {"name": is_str, "samples": is_int, "share": is_num})

groups = {}
for i, g in enumerate(s["groups"]):
    where = "groups[%d]" % i
    if not typed(g, where, {"owner": is_str, "group": is_str, "name": is_str,
                            "samples": is_int, "share": is_num, "top_function": is_str,
                            "processes": lambda v: isinstance(v, list)}):
        continue
    groups[g["owner"]] = g
    if g["group"] in ("Service", "Container", "Unit"):
        check(g["owner"] == g["group"] + " " + g["name"],
              "%s: owner %r is not group %r + name %r" % (where, g["owner"], g["group"], g["name"]))
    check(abs(g["share"] - 100.0 * g["samples"] / total) <= 0.15,
          "%s (%s): share %r is not samples/sample_count" % (where, g["owner"], g["share"]))
    for j, p in enumerate(g["processes"]):
        typed(p, "%s.processes[%d]" % (where, j), {"pid": is_int, "name": is_str,
                                                  "samples": is_int, "share": is_num,
                                                  "top_function": is_str})
    check(sum(p.get("samples", 0) for p in g["processes"]) <= g["samples"],
          "%s: its processes have more samples than the group" % where)
check(sum(g["samples"] for g in s["groups"] if isinstance(g, dict)) == total,
      "the groups' samples add up to %d, not sample_count %d"
      % (sum(g.get("samples", 0) for g in s["groups"]), total))
ranked = sorted((g for g in s["groups"] if is_int(g.get("samples"))), key=lambda g: -g["samples"])
for g in ranked[:6]:	# for the log: what the machine was doing
    print("group %-40s %5d samples %5.1f%%  top %s  processes %s"
          % (g.get("owner"), g["samples"], g.get("share", 0), g.get("top_function"),
             ", ".join("%s[%s]" % (p.get("name"), p.get("pid")) for p in g.get("processes", [])[:4])))

# --- the two owners ----------------------------------------------------------------------------
unit_g, svc_g = groups.get(UNIT_OWNER), groups.get(SVC_OWNER)
for owner, g, kind, name, top, pid, comm in (
        (UNIT_OWNER, unit_g, "Unit", unit, "build_report", hot2_pid, "hot2"),
        (SVC_OWNER, svc_g, "Service", pod8, "checkout_loop", spin_pid, "spin")):
    check(g, "no group %r; groups: %r" % (owner, sorted(groups)))
    if not g:
        continue
    check(g["group"] == kind and g["name"] == name,
          "%s: group/name %r/%r" % (owner, g["group"], g["name"]))
    check(g["top_function"] == top, "%s: top_function %r, not %s" % (owner, g["top_function"], top))
    procs = {p.get("pid"): p for p in g["processes"]}
    check(pid in procs and procs[pid].get("name") == comm,
          "%s: no process %s with (host) pid %d: %r" % (owner, comm, pid, g["processes"]))
    check(g["share"] >= 10, "%s: only %r%% of the CPU" % (owner, g["share"]))

# --- the answer ----------------------------------------------------------------------------------
ans = s["answer"]
m = re.match(r"^Over %d seconds, (Unit billing-worker\.service|Service %s) used ([0-9]+)%% of "
             r"the CPU time on this server, most of it in (build_report|checkout_loop)\."
             r"( Next was (.+), at ([0-9]+)%%\.)?$" % (duration, re.escape(pod8)), ans)
if check(m, "answer does not match the expected sentence: %r" % ans) and ranked:
    top = ranked[0]
    named = groups.get(m.group(1))
    if named and named["samples"] == top["samples"]:
        top = named	# a tie: either may be named
    check(m.group(1) == top["owner"], "answer names %r, the top group is %r (%d samples)"
          % (m.group(1), top["owner"], top["samples"]))
    check(abs(int(m.group(2)) - top["share"]) <= 1,
          "answer says %s%%, the top group's share is %r" % (m.group(2), top["share"]))
    check(m.group(3) == top["top_function"], "answer says most of it in %r, top_function is %r"
          % (m.group(3), top["top_function"]))
    if len(ranked) > 1:
        second = ranked[1] if ranked[0] is top else ranked[0]
        nxt = groups.get(m.group(5)) if m.group(4) else None
        if nxt and nxt is not top and nxt["samples"] == second["samples"]:
            second = nxt	# a tie for second place
        # Both workloads keep a core busy: the second group is one of them, far above noise.
        check(m.group(4) or second["share"] < 10,
              "answer has no 'Next was' though %r had %r%%" % (second["owner"], second["share"]))
        if m.group(4):
            check(m.group(5) == second["owner"], "answer's next is %r, the second group is %r"
                  % (m.group(5), second["owner"]))
            check(abs(int(m.group(6)) - second["share"]) <= 1,
                  "answer's next is at %s%%, its share is %r" % (m.group(6), second["share"]))

# --- profile.collapsed -------------------------------------------------------------------------
coll_total, unit_total, br, cc, leaf_counts = 0, 0, 0, 0, {}
with open(os.path.join(out, "profile.collapsed")) as f:
    for n, line in enumerate(f, 1):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        if not check(stack and count.isdigit(), "profile.collapsed:%d malformed: %r" % (n, line)):
            continue
        frames, count = stack.split(";"), int(count)
        check(len(frames) >= 3, "profile.collapsed:%d has no owner;process;frame: %r" % (n, line))
        coll_total += count
        leaf_counts[frames[-1]] = leaf_counts.get(frames[-1], 0) + count
        if frames[0] == UNIT_OWNER:
            unit_total += count
            br += count if frames[-1] == "build_report" else 0
            cc += count if frames[-1] == "compress_chunk" else 0
check(coll_total == total, "profile.collapsed counts add up to %d, sample_count is %d"
      % (coll_total, total))
if unit_g:
    check(unit_total == unit_g["samples"], "profile.collapsed has %d samples for %s, summary %d"
          % (unit_total, UNIT_OWNER, unit_g["samples"]))
if check(unit_total >= 100, "only %d samples of %s in profile.collapsed" % (unit_total, UNIT_OWNER)):
    check(br + cc >= 0.8 * unit_total,
          "only %d of %s's %d samples end in build_report or compress_chunk"
          % (br + cc, UNIT_OWNER, unit_total))
    if br + cc:
        split = 100.0 * br / (br + cc)
        print("split: build_report %.1f%%, compress_chunk %.1f%% (%d/%d samples of %s)"
              % (split, 100 - split, br, cc, UNIT_OWNER))
        check(abs(split - 75) <= 5, "build_report/compress_chunk split is %.1f/%.1f, not 75/25 +-5"
              % (split, 100 - split))
# For the pprof check: which of the two busy functions the whole profile ranks first by self time.
print("TOP_LEAF=" + max(("build_report", "checkout_loop"), key=lambda k: leaf_counts.get(k, 0)))

if errors:
    print("\n".join(errors))
    sys.exit(1)
print("summary: %d samples, %r idle, answer: %s" % (total, s["idle_samples"], ans))
EOF
rc=$?
sed 's/^/  /' "$TMP/pycheck.out" >&2
[ "$rc" -eq 0 ] || fail "summary.json / profile.collapsed checks failed (above)"
top_leaf=$(sed -n 's/^TOP_LEAF=//p' "$TMP/pycheck.out")

# pprof: `go tool pprof` reads it; with symbolization off, the names come from the file itself.
GO=$(command -v go || echo /usr/lib/go/bin/go)
[ -x "$GO" ] || fail "go not found (apt-get install golang-go)"
export HOME=${HOME:-$TMP} PPROF_TMPDIR=$TMP PPROF_BINARY_PATH=$TMP/nonexistent
"$GO" tool pprof -top "$OUT/profile.pb.gz" >"$TMP/pprof.top" 2>"$TMP/pprof.err" ||
	fail "go tool pprof -top failed: $(tail -3 "$TMP/pprof.err")"
"$GO" tool pprof -top -symbolize=none "$OUT/profile.pb.gz" >"$TMP/pprof.top" 2>"$TMP/pprof.err" ||
	fail "go tool pprof -top -symbolize=none failed: $(tail -3 "$TMP/pprof.err")"
# "      flat  flat%   sum%        cum   cum%" then rows; the function name is column 6 on.
pprof_top=$(awk 'hdr { for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n"); exit }
	$1 == "flat" && $2 == "flat%" { hdr = 1 }' "$TMP/pprof.top")
head -12 "$TMP/pprof.top" | sed 's/^/  pprof: /' >&2
[ "$pprof_top" = "$top_leaf" ] ||
	fail "go tool pprof's top function by flat is '$pprof_top', expected '$top_leaf'"

# flamegraph.html: self-contained (nothing fetched from the network) and has the data.
# XML namespace names (http://www.w3.org/...) are identifiers, never fetched: allowed.
refs=$(grep -oE 'https?://[^"'\''<> )]*' "$OUT/flamegraph.html" | grep -vE '^http://www\.w3\.org/' | sort -u | head -5)
[ -z "$refs" ] || fail "flamegraph.html refers to the network: $refs"
grep -q build_report "$OUT/flamegraph.html" || fail "flamegraph.html does not contain build_report"
grep -q checkout_loop "$OUT/flamegraph.html" || fail "flamegraph.html does not contain checkout_loop"

log "ok"
