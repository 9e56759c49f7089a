#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Bounded memory whatever a file claims (issue 12, class 3). Real containers (pid 1 of their
# own pid, mount and net namespaces, a busybox root of their own), each running a hostile
# binary that still runs:
#   - explode: tests/workloads/hostile_mem_spin.c, whose hot function's C++ mangled name (213
#     bytes) demangles to 46 MB
#   - sparse: the same binary made 1.9 GiB sparse by tests/integration/hostile_mem_sparse.py:
#     .eh_frame claims 1.9 GB, .symtab 1 GiB, .strtab 200 MiB, all holes (20 KB on disk)
#   - gosparse: a Go program (tests/workloads/go/hot.go) whose .gopclntab claims 200 MiB of holes
# `capture --pid PID --question cpu --duration 3` of each, then a whole-server capture while
# all run: each ends on time with exit 0, its peak RSS (maxrss from /usr/bin/time -v: the
# profiler's VmHWM) stays <= 128 MiB, summary.json is valid JSON, and its notes (and the answer
# text) name each sparse file and the claim that was refused.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd flock timeout python3
[ -x "$BIN" ] || fail "binary not found: $BIN (make, or set BIN)"
[ -x /usr/bin/time ] || { apt-get install -y time >/dev/null 2>&1 || skip "no /usr/bin/time (apt-get install time)"; }

MAX_RSS_KB=$((128 * 1024 * MEM_FACTOR))	# MEM_FACTOR: lib.sh (ASan builds)
DURATION=3
LOCK=/run/slideops-profiler.lock
SPIN=$OUTPUT/workloads/hostile_mem_spin
[ -x "$SPIN" ] || fail "$SPIN not built (make O=... all)"
GO=$(command -v go || echo /usr/lib/go-1.19/bin/go)
[ -x "$GO" ] || fail "go not found (apt-get install golang-go)"
export HOME=${HOME:-$TMP} GOCACHE=$TMP/gocache GOPATH=$TMP/gopath GO111MODULE=off GOFLAGS= \
	CGO_ENABLED=0

mkdir -p "$TMP/src" "$TMP/bin"
cp "$LIB_DIR/../workloads/go/hot.go" "$TMP/src/"
(cd "$TMP/src" && "$GO" build -o "$TMP/hotgo" hot.go) >"$TMP/go.log" 2>&1 ||
	fail "go build hot.go failed: $(tail -3 "$TMP/go.log")"
cp "$SPIN" "$TMP/bin/explode"

make_busybox_rootfs "$TMP/root" "$TMP/bin/explode" || exit 1
# The sparse copies are made in place: cp would fill the holes of a file claiming 1.9 GiB.
log "sparse: $(python3 "$LIB_DIR/hostile_mem_sparse.py" "$SPIN" "$TMP/root/usr/local/bin/sparse")" ||
	fail "hostile_mem_sparse.py failed"
log "gosparse: $(python3 "$LIB_DIR/hostile_mem_sparse.py" "$TMP/hotgo" "$TMP/root/usr/local/bin/gosparse")" ||
	fail "hostile_mem_sparse.py failed on the Go binary"
disk=$(du -k "$TMP/root/usr/local/bin/sparse" | cut -f1)
[ "$disk" -lt 4096 ] || fail "the sparse copy takes $disk KiB on disk: not sparse"

# capture NAME MAXSECONDS ARGS...: one capture (when no other holds the lock) under
# /usr/bin/time -v that must end within MAXSECONDS with exit 0, peak RSS <= MAX_RSS_KB and a
# valid summary.json in $TMP/NAME.
capture()
{
	local name=$1 max=$2 out=$TMP/$1 try rc t0 t rss
	shift 2
	for try in 1 2 3; do
		wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
		rm -rf "$out"
		t0=$(date +%s%N)
		/usr/bin/time -v -o "$out.time" timeout -k 5 90 "$BIN" capture "$@" --out "$out" \
			</dev/null >"$out.stdout" 2>"$out.stderr"
		rc=$?
		[ "$rc" -ne 0 ] && grep -qi 'already running' "$out.stderr" && continue
		break
	done
	t=$((($(date +%s%N) - t0) / 1000000))
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$out.time")
	log "$name: capture $* -> exit $rc in $t ms, peak RSS ${rss:-?} KiB"
	sed -n '/^Notes:/,/^$/p' "$out.stdout" | sed 's/^/    /' >&2
	if [ "$rc" -ne 0 ]; then
		sed 's/^/    stderr: /' "$out.stderr" | tail -20 >&2
		fail "$name: capture exited $rc"
	fi
	[ "$t" -le $((max * 1000)) ] || fail "$name: capture took $t ms, more than $max s"
	[ -n "$rss" ] || fail "$name: no peak RSS in $out.time"
	[ "$rss" -le "$MAX_RSS_KB" ] || fail "$name: peak RSS $rss KiB is over $MAX_RSS_KB KiB"
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out/summary.json" ||
		fail "$name: summary.json is not valid JSON"
}

declare -A pids
for name in explode sparse gosparse; do
	cg=$(cg_make_unit "hostile-mem-$name.service") || exit 1
	if [ "$name" = gosparse ]; then
		pids[$name]=$(ns_container_run "$TMP/root" "$cg" /usr/local/bin/gosparse) || exit 1
	else
		pids[$name]=$(ns_container_run "$TMP/root" "$cg" "/usr/local/bin/$name") || exit 1
	fi
	pid=${pids[$name]}
	[ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] ||
		fail "$name is not in its own pid namespace"
	[ "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		fail "$name is not in its own mount namespace"
	log "$name: pid $pid in $cg"
done
sleep 1
for name in explode sparse gosparse; do
	kill -0 "${pids[$name]}" 2>/dev/null || fail "$name exited: the hostile binary must still run"
done

for name in explode sparse gosparse; do
	capture "$name" $((DURATION + 40)) --pid "${pids[$name]}" --question cpu --duration "$DURATION"
done
# The exploding name is shown mangled (never its 46 MB demangled form); the hot function is
# still found in the profile.
grep -q '_Z1fPFvvEPFvS0_S0_E' "$TMP/explode/profile.collapsed" ||
	fail "explode: the hot function's (mangled) name is not in the profile"
max=$(awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }' "$TMP/explode/profile.collapsed")
[ "$max" -lt 65536 ] || fail "explode: a stack line of $max bytes: the name was demangled"

# note_has NAME TEXT...: a note of $TMP/NAME/summary.json holds every TEXT (issue 12, class 3:
# what a limit kept from being read is said, never a crash or a kill).
note_has()
{
	python3 - "$TMP/$1/summary.json" "${@:2}" <<'PY' || fail "$1: no note in summary.json says: ${*:2}"
import json, sys
notes = json.load(open(sys.argv[1])).get("notes", [])
want = sys.argv[2:]
sys.exit(0 if any(all(w in n for w in want) for n in notes) else 1)
PY
}
# The sparse binaries' claims are refused, and the notes say which file and why.
note_has sparse "1 file was not read for names (over the size limits)" \
	"/usr/local/bin/sparse (.symtab claims 1 GiB, but the file has " "show as addresses"
note_has gosparse "/usr/local/bin/gosparse (" ".gopclntab claims 200 MiB, over the 48 MiB limit"
log "sparse: $(python3 -c 'import json, sys; print([n for n in json.load(open(sys.argv[1]))["notes"] if "not read for names" in n][0])' "$TMP/sparse/summary.json")"
grep -q 'not read for names' "$TMP/sparse.stdout" || fail "sparse: the note is not in the answer text"

capture server $((DURATION + 60)) --server --question cpu --duration "$DURATION"
# Only gosparse: sparse is a copy of explode (the same GNU build id), so when explode is read
# first, sparse's frames are named from explode's .symtab and nothing of it is refused.
note_has server "/usr/local/bin/gosparse (" ".gopclntab claims 200 MiB"
log "all captures bounded"
exit 0
