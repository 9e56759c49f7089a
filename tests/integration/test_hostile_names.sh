#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Issue 12, class 4: names are untrusted text. tests/workloads/hostile_names.c runs as pid 1 of
# its own pid, mount and net namespaces with a busybox root; its comm is eight Cyrillic letters
# cut by the kernel at 15 bytes (mid-character), a thread of it has a name that is not UTF-8,
# and its hot function's symbol is "hot\xff\xfe". For capture --pid and capture --server, each
# with the questions cpu and threads:
#   - exit 0, on time (duration + 20 s), peak RSS <= 128 MiB;
#   - summary.json parses with python's json; profile.collapsed, flamegraph.html and stdout
#     decode as strict UTF-8; `go tool pprof -raw` reads profile.pb.gz and its text decodes;
#   - the hot function appears (its bad bytes replaced), and so does the process.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd gcc timeout unshare
need_bin
[ -x /usr/bin/time ] || skip "GNU time not installed (apt-get install time)"
GO=$(command -v go || echo /usr/lib/go-1.19/bin/go)
[ -x "$GO" ] || skip "go not installed (apt-get install golang-go): go tool pprof reads the profile"

DURATION=3
W=$(workload hostile_names) || exit 1
nm "$W" | grep -qa $'hot\xff\xfe$' || fail "hostile_names has no symbol hot\\xff\\xfe"

ROOT=$TMP/root
make_busybox_rootfs "$ROOT" "$W" || exit 1
cg=$(cg_make_unit hostile-names.service) || exit 1
pid=$(ns_container_run "$ROOT" "$cg" /usr/local/bin/hostile_names) || exit 1
touch "/proc/$pid/root/tmp/go" || fail "cannot start hostile_names"
# (the container's output goes to a log in $LIB_STATE/logs/, named by lib.sh)
wait_for "cat $LIB_STATE/logs/*.log 2>/dev/null | grep -q ready" 10 ||
	fail "hostile_names did not get ready: $(tail -3 "$LIB_STATE"/logs/*.log)"
[ "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
	fail "hostile_names is not in its own mount namespace"
# The setup is what the test claims: comm cut mid-character, a thread name that is not UTF-8.
"$PYTHON" - "$pid" <<'PY' || fail "the names of hostile_names are not hostile"
import os, sys
pid = sys.argv[1]
comm = open(f"/proc/{pid}/comm", "rb").read().rstrip(b"\n")
assert comm == "абвгдежз".encode()[:15], comm
names = [open(f"/proc/{pid}/task/{t}/comm", "rb").read().rstrip(b"\n")
         for t in os.listdir(f"/proc/{pid}/task")]
bad = [n for n in names if n != comm]
assert bad, names
for n in names:
    try:
        n.decode("utf-8")
        raise AssertionError(f"{n!r} is valid UTF-8")
    except UnicodeDecodeError:
        pass
PY
sleep 0.5
log "hostile_names pid $pid (pid 1 of its namespaces)"

# check NAME QUESTION: every file of the capture in $TMP/NAME is valid UTF-8 / JSON / pprof.
check()
{
	local name=$1 question=$2 dir=$TMP/$1 f
	for f in "$dir"/*.pb.gz; do
		[ -e "$f" ] || continue
		"$GO" tool pprof -raw "$f" >"$f.raw" 2>"$TMP/$name.pprof.err" ||
			fail "$name: go tool pprof cannot read $f: $(tail -3 "$TMP/$name.pprof.err")"
	done
	"$PYTHON" - "$dir" "$question" "$TMP/$name.stdout" "$TMP/$name.stderr" <<'PY' ||
import glob, json, os, sys
d, question, stdout, stderr = sys.argv[1:]
def text(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit(f"{path} is not UTF-8: {e}: {data[max(0, e.start - 40):e.end + 40]!r}")
summary = json.loads(text(os.path.join(d, "summary.json")))
for p in (stdout, stderr):
    text(p)
files = sorted(glob.glob(os.path.join(d, "*")))
every = "".join(text(p) for p in files if not p.endswith(".gz"))
assert not any(p.endswith(".pb.gz") for p in files) or \
    any(p.endswith(".pb.gz.raw") for p in files), files
if question == "cpu":
    for f in ("profile.collapsed", "flamegraph.html", "profile.pb.gz.raw"):
        assert os.path.exists(os.path.join(d, f)), f"{f} missing: {files}"
        t = text(os.path.join(d, f))
        assert "hot??" in t, f"hot?? is not in {f}: {t[:600]!r}"
    for line in text(os.path.join(d, "profile.collapsed")).splitlines():
        stack, count = line.rsplit(" ", 1)
        assert count.isdigit() and not stack.endswith("\n"), line
    assert "hot??" in json.dumps(summary, ensure_ascii=False), "hot?? is not in summary.json"
# the process, by its cut comm (the half letter replaced) or by pid
assert "абвгдеж" in every or "абвгдеж" in text(stdout), "the process's name is nowhere"
PY
		fail "$name: the capture's files are not valid: see above"
	log "$name: valid UTF-8, JSON and pprof"
}

for q in cpu threads; do
	profiler_run "pid-$q" $((DURATION + 20)) capture --pid "$pid" --question "$q" \
		--duration "$DURATION" --out "$TMP/pid-$q"
	check "pid-$q" "$q"
	profiler_run "server-$q" $((DURATION + 20)) capture --server --question "$q" \
		--duration "$DURATION" --out "$TMP/server-$q"
	check "server-$q" "$q"
done

kill -0 "$pid" || fail "hostile_names died"
log "PASS: a comm cut mid-character, a thread and a hot symbol that are not UTF-8: valid files"
exit 0
