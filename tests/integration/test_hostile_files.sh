#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Issue 12, classes 1 and 2: a hostile container's files never lead the profiler out of the
# container's root and never make it wait. tests/integration/hostile_mapper.c is pid 1 of its
# own pid, mount and net namespaces with a busybox root; it maps files and then, at the very
# paths /proc/PID/maps names, puts an absolute link to a host canary file, a FIFO, a device
# node and a link loop (a tmpfs over their directory), while a thread maps and unmaps a file
# over and over so that /proc/PID/map_files fails and the path is tried. Beside its
# libjvm.so-named file, the JDK `release` files (each level the detector looks at) are a FIFO,
# a device node, a link loop and an absolute link to the canary. Then:
#   - check --pid, capture --pid --question cpu --duration 3 and capture --server --question
#     cpu --duration 3 each end on time (their duration + 20 s at most), exit 0;
#   - the host canary is never opened or read (inotify: tests/integration/hostile_watch.c);
#   - summary.json is valid JSON; the profiler's peak RSS stays <= 128 MiB.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd gcc timeout unshare
need_bin
[ -x /usr/bin/time ] || skip "GNU time not installed (apt-get install time)"

gcc -O2 -static -pthread -o "$TMP/hostile_mapper" "$LIB_DIR/hostile_mapper.c" 2>"$TMP/cc.log" ||
	fail "cannot build hostile_mapper: $(tail -3 "$TMP/cc.log")"
gcc -O2 -o "$TMP/hostile_watch" "$LIB_DIR/hostile_watch.c" 2>"$TMP/cc.log" ||
	fail "cannot build hostile_watch: $(tail -3 "$TMP/cc.log")"

# The canary: on the host, at the path every hostile link names. The container has none.
CANARY=/etc/slideops-canary.$$
echo "host secret" >"$CANARY" || fail "cannot create $CANARY"
echo "$CANARY" >>"$LIB_STATE/dirs"

ROOT=$TMP/root
make_busybox_rootfs "$ROOT" "$TMP/hostile_mapper" || exit 1
mkdir -p "$ROOT/opt/jdk/lib/server" "$ROOT/usr/lib/hostile"
cp "$TMP/hostile_mapper" "$ROOT/opt/jdk/lib/server/libjvm.so"
for l in libvictim libfifo libdev libloop libracy; do
	cp "$TMP/hostile_mapper" "$ROOT/usr/lib/hostile/$l.so"
done
ln -s release2 "$ROOT/opt/jdk/lib/server/release"		# a loop
ln -s release "$ROOT/opt/jdk/lib/server/release2"
mknod "$ROOT/opt/jdk/lib/release" c 1 5				# like /dev/zero
mkfifo "$ROOT/opt/jdk/release"					# open(O_RDONLY) waits forever
ln -s "$CANARY" "$ROOT/opt/release"				# absolute, to the host's file
[ ! -e "$ROOT$CANARY" ] || fail "the container root holds the canary"

"$TMP/hostile_watch" "$CANARY" >"$TMP/watch.out" 2>&1 &
disown
echo $! >>"$LIB_STATE/pids"
wait_for "grep -q watching $TMP/watch.out" 5 || fail "the canary watch did not start"

cg=$(cg_make_unit hostile-files.service) || exit 1
pid=$(ns_container_run "$ROOT" "$cg" /usr/local/bin/hostile_mapper "$CANARY") || exit 1
wait_for "grep -qs ready $LIB_STATE/logs/hostile_mapper.log" 10 ||
	fail "hostile_mapper did not get ready: $(tail -3 "$LIB_STATE/logs/hostile_mapper.log")"
grep -q ' /usr/lib/hostile/libvictim.so$' "/proc/$pid/maps" || fail "libvictim.so is not mapped"
[ "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
	fail "hostile_mapper is not in its own mount namespace"
[ -L "/proc/$pid/root/usr/lib/hostile/libvictim.so" ] ||
	fail "the mapped path is not a link inside the container"
[ -p "/proc/$pid/root/usr/lib/hostile/libfifo.so" ] || fail "the mapped path is not a FIFO"
: >"$TMP/watch.out"	# the setup's own opens of the canary are not the profiler's
log "hostile_mapper pid $pid (pid 1 of its namespaces)"

valid_summary()
{
	"$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$1/summary.json" ||
		fail "$1/summary.json is not valid JSON"
}

profiler_run check 20 check --pid "$pid"
# detection went through every hostile `release` file and fell back to the path: "JVM"
grep -q '^Runtimes:.*JVM' "$TMP/check.stdout" ||
	{ cat "$TMP/check.stdout" >&2; fail "check does not report the JVM-named process"; }

profiler_run pidcpu 23 capture --pid "$pid" --question cpu --duration 3 --out "$TMP/pidcpu"
valid_summary "$TMP/pidcpu"

profiler_run servercpu 23 capture --server --question cpu --duration 3 --out "$TMP/servercpu"
valid_summary "$TMP/servercpu"

kill -0 "$pid" || fail "hostile_mapper died"
sleep 0.5
if [ -s "$TMP/watch.out" ]; then
	fail "the host canary $CANARY was opened: $(sort "$TMP/watch.out" | uniq -c | tr '\n' ' ')"
fi
log "PASS: links, FIFOs, devices and loops in a container's root: never followed out, never waited on"
exit 0
