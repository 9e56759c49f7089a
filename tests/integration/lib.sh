# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for the integration tests (tests/integration/test_*.sh). Source it first:
#
#   . "$(dirname "$0")/lib.sh"
#   need_root
#   cg=$(cg_make_unit billing-worker.service)
#   pid=$(cg_run "$cg" "$OUTPUT/workloads/hot2")
#
# Everything a helper creates (processes, cgroups, mounts, temp dirs) is recorded in a state
# directory, so it is found again even when the helper ran in a $(...) subshell, and `cleanup`
# (trapped on EXIT, INT, TERM, HUP) removes all of it whether the test passed or failed.
#
# Exit codes of a test: 0 pass, 1 fail (`fail`), 77 skip (`skip`, `need_root`).

set -u
set -o pipefail

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$LIB_DIR/../.." && pwd)
: "${OUTPUT:=$REPO_ROOT/.output}"
: "${BIN:=$OUTPUT/slideops-profiler}"
export OUTPUT BIN

# MEM_FACTOR: ASan's shadow memory and quarantine multiply a process's memory, so the memory
# bounds of the tests (a capture's 128 MiB, the agent's 256 MiB) are scaled by it in the
# `make test SANITIZE=1` build; the plain build checks the real bounds.
MEM_FACTOR=1
if [ -x "$BIN" ] && nm "$BIN" 2>/dev/null | grep __asan_init >/dev/null; then
	MEM_FACTOR=4
fi

TEST_NAME=$(basename "$0" .sh)
LIB_MAIN_PID=$$

# State: one file per kind of thing to undo, one entry a line. TMP is the test's scratch dir.
LIB_STATE=$(mktemp -d "/tmp/slideops-it.${TEST_NAME}.XXXXXX") || exit 1
TMP=$LIB_STATE/tmp
mkdir -p "$TMP" "$LIB_STATE/logs"
: >"$LIB_STATE/pids"
: >"$LIB_STATE/cgroups"
: >"$LIB_STATE/mounts"
: >"$LIB_STATE/dirs"

# Python: the system one when present (CI has no pyenv), else whatever is on PATH.
if [ -x /usr/bin/python3 ]; then
	PYTHON=/usr/bin/python3
else
	PYTHON=$(command -v python3 || echo python3)
fi

log() { printf '%s: %s\n' "$TEST_NAME" "$*" >&2; }

fail()
{
	printf 'FAIL %s: %s\n' "$TEST_NAME" "$*" >&2
	exit 1
}

skip()
{
	printf 'SKIP %s: %s\n' "$TEST_NAME" "$*" >&2
	exit 77
}

need_root()
{
	[ "$(id -u)" -eq 0 ] || skip "needs root (eBPF, cgroups, namespaces)"
}

need_cmd()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "command not found: $c"
	done
}

# wait_for COND TIMEOUT: evaluates the shell condition COND every 0.1 s until it is true
# (returns 0) or TIMEOUT seconds have passed (returns 1).
wait_for()
{
	local cond=$1 timeout=${2:-10}
	local deadline=$(($(date +%s%N) + timeout * 1000000000))

	while :; do
		eval "$cond" && return 0
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

# json_get FILE EXPR: evaluates the Python expression EXPR with `d` bound to the parsed JSON
# of FILE (e.g. 'd["groups"][0]["owner"]', 'len(d["groups"])'). Prints strings raw and other
# values as JSON. Fails (status 1) when the file does not parse or EXPR raises.
json_get()
{
	"$PYTHON" -c '
import json, sys
try:
    with open(sys.argv[1]) as f:
        d = json.load(f)
    v = eval(sys.argv[2], {"d": d, "len": len, "sum": sum, "max": max, "min": min})
except Exception as e:
    sys.stderr.write("json_get %s %s: %s: %s\n" % (sys.argv[1], sys.argv[2], type(e).__name__, e))
    sys.exit(1)
print(v if isinstance(v, str) else json.dumps(v))
' "$1" "$2"
}

# mount_tracefs: mounts tracefs at /sys/kernel/tracing unless it is already there; when this
# test mounted it, cleanup unmounts it again.
mount_tracefs()
{
	if grep -qs ' /sys/kernel/tracing tracefs ' /proc/self/mounts ||
	   [ -e /sys/kernel/tracing/events ]; then
		return 0
	fi
	mount -t tracefs nodev /sys/kernel/tracing || fail "cannot mount tracefs"
	echo /sys/kernel/tracing >>"$LIB_STATE/mounts"
}

# --- cgroups -------------------------------------------------------------------------------
#
# The hierarchies a test cgroup is made in: cgroup v2 (the unified mount of a hybrid host, or
# /sys/fs/cgroup on a unified host) and the v1 name=systemd, cpu and pids hierarchies when they
# are mounted, as systemd does on a hybrid host. Memory is left alone (only the sandbox's own
# memory cgroup may be written here).

cg_hierarchies()
{
	local mnt type opts
	while read -r _ mnt type opts _; do
		case $type in
		cgroup2)
			case $mnt in /sys/fs/cgroup/unified|/sys/fs/cgroup) echo "$mnt" ;; esac
			;;
		cgroup)
			case ",$opts," in
			*,name=systemd,*|*,cpu,*|*,pids,*) echo "$mnt" ;;
			esac
			;;
		esac
	done </proc/self/mounts | sort -u
}

# Every created directory, in creation order (cleanup removes them in reverse: leaf first).
cg_mkdir_all()
{
	local rel=$1 h path part
	for h in $(cg_hierarchies); do
		path=$h
		local IFS=/
		for part in $rel; do
			[ -n "$part" ] || continue
			path=$path/$part
			if [ ! -d "$path" ]; then
				mkdir "$path" || fail "cannot create cgroup $path"
				echo "$path" >>"$LIB_STATE/cgroups"
			fi
		done
		unset IFS
	done
}

# cg_make_unit NAME: creates system.slice/NAME (a systemd unit's cgroup, e.g.
# billing-worker.service) in every hierarchy; prints its relative path, the argument cg_run
# and ns_container_run take.
cg_make_unit()
{
	local rel=system.slice/$1
	cg_mkdir_all "$rel"
	echo "$rel"
}

# cg_make_pod QOS PODUID [CONTAINERID]: a Kubernetes pod container's cgroup as the kubelet's
# systemd driver with containerd names it:
#   kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid_underscored>.slice/
#     cri-containerd-<64hex>.scope
# (guaranteed pods sit directly under kubepods.slice: kubepods-pod<uid>.slice). CONTAINERID
# defaults to 64 random hex digits. Prints the relative path.
cg_make_pod()
{
	local qos=$1 uid=$2 cid=${3:-}
	local uid_=${uid//-/_} rel

	[ -n "$cid" ] || cid=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	case $qos in
	guaranteed) rel=kubepods.slice/kubepods-pod$uid_.slice/cri-containerd-$cid.scope ;;
	burstable|besteffort)
		rel=kubepods.slice/kubepods-$qos.slice/kubepods-$qos-pod$uid_.slice/cri-containerd-$cid.scope ;;
	*) fail "cg_make_pod: unknown QoS class '$qos' (burstable, besteffort or guaranteed)" ;;
	esac
	cg_mkdir_all "$rel"
	echo "$rel"
}

# The cgroup.procs files of CGPATH in every hierarchy, space separated.
cg_procs_files()
{
	local h out=
	for h in $(cg_hierarchies); do
		[ -d "$h/$1" ] || fail "cgroup $h/$1 does not exist (make it with cg_make_*)"
		out="$out $h/$1/cgroup.procs"
	done
	echo "$out"
}

# The shell snippet that moves the current shell into every file of $LIB_CG_PROCS.
LIB_CG_ENTER='for f in $LIB_CG_PROCS; do echo $$ >"$f" || { echo "cannot enter $f" >&2; exit 126; }; done'

# cg_run CGPATH CMD...: starts CMD in the background, already inside CGPATH in every hierarchy
# (the shell moves itself in, then execs CMD, so CMD's first instruction runs there). Prints
# its pid; output goes to $LIB_STATE/logs/<cmd>.log. cleanup kills it.
cg_run()
{
	local cg=$1 pid log procs
	shift
	log=$LIB_STATE/logs/$(basename "$1").log
	procs=$(cg_procs_files "$cg") || exit 1
	LIB_CG_PROCS=$procs \
		sh -c "$LIB_CG_ENTER"'; exec "$@"' cg_run "$@" </dev/null >>"$log" 2>&1 &
	pid=$!
	echo "$pid" >>"$LIB_STATE/pids"
	# Wait for the exec, so the caller sees the program, not the shell.
	wait_for "[ \"\$(readlink /proc/$pid/exe 2>/dev/null)\" != \"\$(readlink -f /bin/sh)\" ]" 10 ||
		fail "cg_run: $1 did not start (log: $log)"
	kill -0 "$pid" 2>/dev/null || fail "cg_run: $1 exited at once: $(tail -3 "$log")"
	echo "$pid"
}

# --- containers ----------------------------------------------------------------------------

# make_busybox_rootfs DIR [BINARY...]: a minimal root file system in DIR: busybox-static with
# its applets installed as symlinks (`busybox --install -s`), and each BINARY copied to
# DIR/usr/local/bin/<name> with the shared libraries ldd lists for it (at the same paths, so the
# dynamic loader finds them). DIR is removed by cleanup.
make_busybox_rootfs()
{
	local dir=$1 bb bin lib
	shift
	bb=$(command -v busybox) || skip "busybox not installed (apt-get install busybox-static)"
	file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
		ldd "$bb" 2>&1 | grep -q 'not a dynamic' || skip "busybox is not static (busybox-static)"

	mkdir -p "$dir" || fail "cannot create $dir"
	echo "$dir" >>"$LIB_STATE/dirs"
	mkdir -p "$dir"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,proc,sys,dev,tmp,etc,root}
	chmod 1777 "$dir/tmp"
	cp "$bb" "$dir/bin/busybox"
	chroot "$dir" /bin/busybox --install -s 2>/dev/null
	[ -L "$dir/bin/sh" ] || fail "busybox --install -s did not create /bin/sh in $dir"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$dir/etc/passwd"
	echo 'root:x:0:' >"$dir/etc/group"

	for bin in "$@"; do
		cp "$bin" "$dir/usr/local/bin/" || fail "cannot copy $bin into $dir"
		# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
		for lib in $(ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
			mkdir -p "$dir$(dirname "$lib")"
			cp -L "$lib" "$dir$lib" || fail "cannot copy $lib into $dir"
		done
	done
}

# ns_container_run ROOTFS CGPATH CMD...: runs CMD as a container would: in CGPATH (every
# hierarchy, entered before anything starts), in its own pid, mount, net, uts and ipc
# namespaces, with ROOTFS as its root (bind mount + pivot_root), a fresh /proc, a private tmpfs
# /tmp and the loopback up. CMD is pid 1 of its pid namespace. Prints CMD's pid as the HOST sees
# it (not unshare's), once CMD has been exec'd. CMD is resolved inside ROOTFS.
ns_container_run()
{
	local rootfs=$1 cg=$2 upid pid log procs
	shift 2
	need_cmd unshare pivot_root
	rootfs=$(cd "$rootfs" && pwd) || fail "no rootfs $1"
	log=$LIB_STATE/logs/$(basename "$1").log

	# Runs as pid 1 of the new namespaces, with the host's tools until pivot_root, then the
	# rootfs' busybox. /proc is mounted before the old root goes (the kernel only allows a new
	# proc mount where a full one is visible).
	local setup='
set -e
root=$1; shift
mount --bind "$root" "$root"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t tmpfs -o mode=1777,size=64m tmpfs "$root/tmp"
ip link set lo up
hostname container 2>/dev/null || true
cd "$root"
mkdir -p .oldroot
pivot_root . .oldroot
cd /
/bin/busybox umount -l /.oldroot
/bin/busybox rmdir /.oldroot
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root
exec "$@"
'
	procs=$(cg_procs_files "$cg") || exit 1
	LIB_CG_PROCS=$procs \
		sh -c "$LIB_CG_ENTER"'; exec "$@"' ns_container_run \
		unshare --pid --mount --net --uts --ipc --fork --propagation private \
		sh -c "$setup" container "$rootfs" "$@" </dev/null >>"$log" 2>&1 &
	upid=$!
	echo "$upid" >>"$LIB_STATE/pids"

	# unshare --fork has exactly one child: the namespace's pid 1, which execs CMD.
	wait_for "pid=\$(pgrep -P $upid | head -1); [ -n \"\$pid\" ]" 10 ||
		fail "ns_container_run: unshare started no child (log: $log): $(tail -3 "$log")"
	echo "$pid" >>"$LIB_STATE/pids"
	local want
	want=$(basename "$1" | cut -c1-15)
	wait_for "[ \"\$(cat /proc/$pid/comm 2>/dev/null)\" = \"$want\" ]" 10 ||
		fail "ns_container_run: $1 did not start in the container (log: $log): $(tail -3 "$log")"
	# It is the namespace's pid 1: NSpid is "<host pid> 1".
	grep -q "^NSpid:[[:space:]]*${pid}[[:space:]]\+1\$" "/proc/$pid/status" ||
		fail "ns_container_run: pid $pid is not pid 1 of a new pid namespace"
	echo "$pid"
}

# --- cleanup -------------------------------------------------------------------------------

# Kills every process of a cgroup directory (cgroup.kill on v2, SIGKILL each pid on v1).
cg_kill_all()
{
	local d=$1 p
	[ -d "$d" ] || return 0
	if [ -e "$d/cgroup.kill" ]; then
		echo 1 >"$d/cgroup.kill" 2>/dev/null
	fi
	for p in $(cat "$d/cgroup.procs" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
}

cleanup()
{
	local rc=$? p d m i
	# Only the test's own shell cleans up, never a $(...) or ( ) subshell.
	[ "${BASHPID:-$$}" = "$LIB_MAIN_PID" ] || return 0
	trap - EXIT INT TERM HUP
	set +e

	# 1. Processes: those started, then whatever else is left in the cgroups made.
	for p in $(tac "$LIB_STATE/pids" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		local busy=0
		for d in $(tac "$LIB_STATE/cgroups" 2>/dev/null); do
			[ -s "$d/cgroup.procs" ] && { busy=1; cg_kill_all "$d"; }
		done
		[ "$busy" = 0 ] && break
		sleep 0.25
	done
	for p in $(cat "$LIB_STATE/pids" 2>/dev/null); do
		wait "$p" 2>/dev/null	# our children; the others are reaped by init: give it 2 s
		wait_for "[ ! -e /proc/$p ]" 2
	done

	# 2. Cgroups, leaf first (reverse creation order). rmdir fails only while a process is
	#    still exiting: retry a little.
	for d in $(tac "$LIB_STATE/cgroups" 2>/dev/null); do
		[ -d "$d" ] || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$d" 2>/dev/null && break
			cg_kill_all "$d"
			sleep 0.2
		done
		[ -d "$d" ] && echo "cleanup: could not remove cgroup $d" >&2
	done

	# 3. Mounts made in the host's namespace, then the directories (never across a mount).
	for m in $(tac "$LIB_STATE/mounts" 2>/dev/null); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for d in $(tac "$LIB_STATE/dirs" 2>/dev/null) "$LIB_STATE"; do
		[ -e "$d" ] || continue
		for m in $(awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
			umount -l "$m" 2>/dev/null
		done
		rm -rf --one-file-system "$d"
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
