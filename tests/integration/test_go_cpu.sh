#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `capture --pid P --question cpu` of a stripped Go program (go build -ldflags='-s -w': no
# .symtab, no DWARF) in a container names its functions from the binary's .gopclntab, read
# through the container's root (issue 6):
#   - tests/workloads/go/hot.go, runtime.main -> main.main -> main.work -> main.hotLoop, runs as
#     pid 1 of its own pid, mount and net namespaces with a busybox root; the binary exists only
#     in that root
#   - profile.collapsed: most samples of the process have the stack ...;main.main;main.work;
#     main.hotLoop (root first): the names come from the pclntab, the callers from Go's frame
#     pointers through the eBPF sampler
#   - profile.pb.gz (go tool pprof -lines): main.hotLoop with its file:line, one of the two
#     lines of its loop
. "$(dirname "$0")/lib.sh"

need_root
need_cmd readelf flock timeout
need_bin

LOCK=/run/slideops-profiler.lock
DURATION=5
need_go

# --- the workload, stripped ----------------------------------------------------------------
go_build hot -ldflags='-s -w'
readelf -SW "$TMP/hot" | grep -q '\.symtab' && fail "the workload still has .symtab"
readelf -SW "$TMP/hot" | grep -q '\.debug_' && fail "the workload still has DWARF"
readelf -SW "$TMP/hot" | grep -q '\.gopclntab' || fail "the workload has no .gopclntab"
GO_VER=$("$GO" version | sed -n 's/.* go\([0-9]*\.[0-9]*\).*/\1/p')
# The loop's two lines: the for statement and the marked body.
HOTLINE=$(grep -n '// HOTLINE' "$TMP/src/hot.go" | cut -d: -f1)
[ -n "$HOTLINE" ] || fail "no HOTLINE marker in hot.go"
log "Go $GO_VER, main.hotLoop's loop at hot.go:$((HOTLINE - 1))-$HOTLINE"

# --- in a container ------------------------------------------------------------------------
cg=$(cg_make_unit go-cpu.service) || exit 1
make_busybox_rootfs "$TMP/root" "$TMP/hot" || exit 1
pid=$(ns_container_run "$TMP/root" "$cg" /usr/local/bin/hot) || exit 1
for ns in pid mnt net; do
	[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink /proc/self/ns/$ns)" ] ||
		fail "hot (pid $pid) is not in its own $ns namespace"
done
[ -e /usr/local/bin/hot ] && fail "/usr/local/bin/hot exists on the host: the binary must be read through the root"
log "hot pid $pid (pid 1 of its namespaces) in $cg"
sleep 1

# --- capture, when no other capture holds the lock -----------------------------------------
OUT=$TMP/out
for try in 1 2 3; do
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	rm -rf "$OUT"
	timeout -k 5 $((DURATION + 55)) "$BIN" capture --pid "$pid" --question cpu \
		--duration "$DURATION" --out "$OUT" </dev/null >"$TMP/capture.stdout" 2>"$TMP/capture.stderr"
	rc=$?
	# Another capture may have taken the lock between the check and ours: try again.
	[ "$rc" -ne 0 ] && grep -qi 'lock\|another capture\|already' "$TMP/capture.stderr" && continue
	break
done
if [ "$rc" -ne 0 ]; then
	sed 's/^/  stdout: /' "$TMP/capture.stdout" >&2
	sed 's/^/  stderr: /' "$TMP/capture.stderr" >&2
	fail "capture exited $rc (try $try)"
fi
for f in profile.pb.gz profile.collapsed summary.json; do
	[ -s "$OUT/$f" ] || fail "$f missing or empty in $OUT"
done
kill -0 "$pid" 2>/dev/null || fail "hot died during the capture"

# --- the stacks ----------------------------------------------------------------------------
"$PYTHON" - "$OUT/profile.collapsed" >"$TMP/stacks.out" <<'EOF' || { cat "$TMP/stacks.out" >&2; fail "profile.collapsed: wrong stacks"; }
import re, sys

total = hot = full = 0
top = {}
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    n = int(n)
    frames = stack.split(";")
    total += n
    top[stack] = top.get(stack, 0) + n
    if "main.hotLoop" in frames:
        hot += n
        if re.search(r"(^|;)main\.main;main\.work;main\.hotLoop(;|$)", stack):
            full += n
print("samples %d, in main.hotLoop %d, of which under main.main;main.work %d" % (total, hot, full))
for s, n in sorted(top.items(), key=lambda kv: -kv[1])[:5]:
    print("  %6d %s" % (n, s))
ok = total >= 50 and hot >= 0.5 * total and full >= 0.8 * hot
sys.exit(0 if ok else 1)
EOF
sed 's/^/  /' "$TMP/stacks.out" >&2

# --- file:line in the pprof profile --------------------------------------------------------
"$GO" tool pprof -lines -top "$OUT/profile.pb.gz" >"$TMP/pprof.out" 2>"$TMP/pprof.err" ||
	fail "go tool pprof failed: $(tail -3 "$TMP/pprof.err")"
grep -E "main\.hotLoop .*/hot\.go:($((HOTLINE - 1))|$HOTLINE)\$" "$TMP/pprof.out" >"$TMP/pprof.hot" || {
	head -20 "$TMP/pprof.out" >&2
	fail "go tool pprof -lines shows no main.hotLoop at hot.go:$((HOTLINE - 1)) or :$HOTLINE"
}
sed 's/^/  pprof: /' "$TMP/pprof.hot" >&2
log "PASS: stripped Go $GO_VER in a container named from .gopclntab, with callers and file:line"
exit 0
