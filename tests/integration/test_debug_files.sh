#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# "Names on the node first": `capture --pid P --question cpu` of a stripped C program in a
# container finds its debug file on the node (symbols/debugfile.h) and its DWARF
# (symbols/dwarf_lines.h):
#   - tests/workloads/debug_hot.c built -O2 -g with a build id: dh_hot (static, noinline) with
#     dh_mix inlined; objcopy --only-keep-debug, strip, objcopy --add-gnu-debuglink; run as
#     /usr/local/bin/app, pid 1 of its own namespaces with a busybox root, four ways:
#     (i) the debug file at /usr/lib/debug/.build-id/xx/yyyy.debug inside the container,
#     (ii) found through .gnu_debuglink next to the binary inside the container,
#     (iii) nothing on the node: frames unnamed (app+0x...), summary.json stripped_binaries
#         lists the binary with its build id,
#     (iv) decoys: a debug file of another build at the build-id path and a debuglink target
#         with the wrong CRC: nothing named, listed as stripped.
#   - (i), (ii): profile.collapsed names dh_hot, the binary is not in stripped_binaries, the
#     pprof (go tool pprof -lines -traces) shows debug_hot.c:<line> and dh_mix as a frame of its own.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd gcc objcopy strip readelf timeout
need_bin
need_go

SRC=$REPO_ROOT/tests/workloads/debug_hot.c
CALLLINE=$(grep -n 'CALLLINE' "$SRC" | cut -d: -f1)
MIXLINES="$(grep -n 'MIXLINE' "$SRC" | cut -d: -f1)"

# --- the binaries --------------------------------------------------------------------------
gcc -O2 -g -Wl,--build-id=sha1 -o "$TMP/app.full" "$SRC" || fail "cannot build debug_hot"
gcc -O2 -g -Wl,--build-id=sha1 -DDECOY -o "$TMP/decoy.full" "$SRC" || fail "cannot build the decoy"
objcopy --only-keep-debug "$TMP/app.full" "$TMP/app.debug" || fail "objcopy --only-keep-debug"
objcopy --only-keep-debug "$TMP/decoy.full" "$TMP/decoy.debug" || fail "objcopy (decoy)"
strip --strip-all -o "$TMP/app" "$TMP/app.full" || fail "strip"
objcopy --add-gnu-debuglink="$TMP/app.debug" "$TMP/app" || fail "objcopy --add-gnu-debuglink"
readelf -SW "$TMP/app" | grep -q '\.symtab' && fail "app still has .symtab"
readelf -SW "$TMP/app" | grep -q '\.debug_info' && fail "app still has DWARF"
readelf -SW "$TMP/app" | grep -q '\.gnu_debuglink' || fail "app has no .gnu_debuglink"
bid=$(readelf -n "$TMP/app" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)/\1/p')
dbid=$(readelf -n "$TMP/decoy.full" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)/\1/p')
[ -n "$bid" ] && [ -n "$dbid" ] && [ "$bid" != "$dbid" ] || fail "build ids: app '$bid', decoy '$dbid'"
BIDPATH=usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -e "/$BIDPATH" ] && fail "/$BIDPATH exists on the host: case (iii) would find it"
log "app build id $bid, dh_hot calls dh_mix at debug_hot.c:$CALLLINE"

# capture_case NAME SETUP: a container whose root has the app and what SETUP (shell, run in
# the root) puts there; captured into $TMP/NAME.
capture_case()
{
	local name=$1 setup=$2 root=$TMP/root-$1 cg pid
	make_busybox_rootfs "$root" "$TMP/app" || exit 1
	(cd "$root" && eval "$setup") || fail "$name: setup failed"
	cg=$(cg_make_unit "debug-$name.service") || exit 1
	pid=$(ns_container_run "$root" "$cg" /usr/local/bin/app) || exit 1
	need_own_ns "$pid" "app ($name)" pid mnt
	[ -e /usr/local/bin/app ] && fail "/usr/local/bin/app exists on the host"
	sleep 1
	profiler_run "$name" 60 capture --pid "$pid" --question cpu --duration 5 --out "$TMP/$name"
	kill -0 "$pid" 2>/dev/null || fail "$name: app died during the capture"
	kill -KILL "$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")" "$pid" 2>/dev/null
	for f in profile.pb.gz profile.collapsed summary.json; do
		[ -s "$TMP/$name/$f" ] || fail "$name: $f missing or empty"
	done
}

# stripped_listed NAME: whether summary.json lists /usr/local/bin/app (with its build id).
stripped_listed()
{
	"$PYTHON" - "$TMP/$1/summary.json" "$bid" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sb = [b for b in s.get("stripped_binaries", []) if b.get("path") == "/usr/local/bin/app"]
sys.exit(0 if sb and sb[0].get("build_id") == sys.argv[2] else 1)
PY
}

# named NAME: dh_hot named in most samples, file:line and the inlined dh_mix in the pprof.
named()
{
	local name=$1 all hot
	all=$(collapsed_value "$TMP/$name/profile.collapsed" "")
	hot=$(collapsed_value "$TMP/$name/profile.collapsed" "dh_hot")
	log "$name: $hot of $all samples in dh_hot"
	[ "$all" -ge 50 ] && [ $((hot * 2)) -ge "$all" ] || {
		sort -k2 -nr -t' ' "$TMP/$name/profile.collapsed" | head -5 >&2
		fail "$name: dh_hot is not named in most samples"
	}
	stripped_listed "$name" && fail "$name: the binary is still listed in stripped_binaries"
	"$GO" tool pprof -lines -traces "$TMP/$name/profile.pb.gz" >"$TMP/$name.traces" 2>"$TMP/$name.err" ||
		fail "$name: go tool pprof failed: $(tail -3 "$TMP/$name.err")"
	grep -qE "dh_hot .*debug_hot\.c:$CALLLINE" "$TMP/$name.traces" || {
		head -40 "$TMP/$name.traces" >&2
		fail "$name: no dh_hot at debug_hot.c:$CALLLINE in the pprof traces"
	}
	grep -qE "dh_mix .*debug_hot\.c:[0-9]+" "$TMP/$name.traces" || {
		head -40 "$TMP/$name.traces" >&2
		fail "$name: the inlined dh_mix is not a frame of its own in the pprof traces"
	}
}

capture_case build-id "mkdir -p \$(dirname $BIDPATH); cp $TMP/app.debug $BIDPATH"
named build-id
capture_case debuglink "cp $TMP/app.debug usr/local/bin/app.debug"
named debuglink

capture_case nothing ":"
grep -q 'dh_hot' "$TMP/nothing/profile.collapsed" && fail "nothing: dh_hot named without a debug file"
grep -qE '(^|;)app\+0x[0-9a-f]+' "$TMP/nothing/profile.collapsed" ||
	grep -qE '(^|;)/usr/local/bin/app\+0x[0-9a-f]+' "$TMP/nothing/profile.collapsed" || {
	head -5 "$TMP/nothing/profile.collapsed" >&2
	fail "nothing: no unnamed app+0x... frame"
}
stripped_listed nothing || fail "nothing: stripped_binaries does not list the app with build id $bid"

capture_case decoy "mkdir -p \$(dirname $BIDPATH); cp $TMP/decoy.debug $BIDPATH; cp $TMP/decoy.debug usr/local/bin/app.debug"
grep -q 'dh_hot' "$TMP/decoy/profile.collapsed" && fail "decoy: a debug file of another build named dh_hot"
stripped_listed decoy || fail "decoy: stripped_binaries does not list the app"
log "PASS: debug files found by build id and by debuglink in the container, decoys refused (mix lines $MIXLINES)"
exit 0
