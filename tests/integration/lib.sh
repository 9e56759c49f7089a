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
# ASan's quarantine of freed memory (256 MiB by default) is capped at 64 MiB: a hostile peer
# that makes the process allocate and free a lot (a WebSocket message that never ends) would
# otherwise measure the quarantine, not the process.
MEM_FACTOR=1
if [ -x "$BIN" ] && nm "$BIN" 2>/dev/null | grep __asan_init >/dev/null; then
	MEM_FACTOR=4
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64
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

# fail MESSAGE: the test fails. When DLOG names a file (the log of the agent a test started,
# agent_spawn), its last DLOG_TAIL (25) lines are shown first.
fail()
{
	[ -n "${DLOG:-}" ] && [ -f "$DLOG" ] && tail -n "${DLOG_TAIL:-25}" "$DLOG" | sed 's/^/  agent| /' >&2
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

# need_bin: fails unless the profiler ($BIN) is built.
need_bin()
{
	[ -x "$BIN" ] || fail "binary not found: $BIN (make, or set BIN)"
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

# need_own_ns PID WHAT NS...: fails unless PID is in a namespace of its own (not this shell's)
# of each kind NS (pid, mnt, net, ...): "WHAT is not in its own mount namespace".
need_own_ns()
{
	local pid=$1 what=$2 ns
	shift 2
	for ns in "$@"; do
		[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] ||
			fail "$what is not in its own ${ns/#mnt/mount} namespace"
	done
}

# ns_python CGPATH PYTHON ARGS...: runs PYTHON in its own pid, mount and net namespaces (the
# host's file system, a fresh /proc), inside CGPATH ("" for none); prints its pid as the host
# sees it, once PYTHON has been exec'd.
ns_python()
{
	local cg=$1 upid pid procs='' log=$LIB_STATE/logs/python.$$.$RANDOM.log
	shift
	[ -z "$cg" ] || procs=$(cg_procs_files "$cg") || exit 1
	LIB_CG_PROCS=$procs sh -c "$LIB_CG_ENTER"'; exec "$@"' ns_python \
		unshare --pid --mount --net --fork --propagation private \
		sh -c 'mount -t proc proc /proc && exec "$@"' ns_python "$@" </dev/null >>"$log" 2>&1 &
	upid=$!
	echo "$upid" >>"$LIB_STATE/pids"
	wait_for "pid=\$(pgrep -P $upid | head -1); [ -n \"\$pid\" ] && \
		[ \"\$(readlink /proc/\$pid/exe)\" = \"\$(readlink -f $1)\" ]" 10 ||
		fail "ns_python: $1 did not start (log: $log): $(tail -3 "$log")"
	pid=$(pgrep -P "$upid" | head -1)
	echo "$pid" >>"$LIB_STATE/pids"
	echo "$pid"
}

# python3_versions: the CPython 3 interpreters to try, one a line: the system one
# (/usr/bin/python3.11, which a test may insist on) and every /root/.pyenv/versions/3.*. Under
# ASan (MEM_FACTOR > 1) the system one and the oldest and newest pyenv ones only: the plain
# pass has profiled every version, the ASan pass looks for memory errors in the same code
# (two layouts' extremes), and .ci/run must stay under 40 minutes.
python3_versions()
{
	local v all=()
	for v in /root/.pyenv/versions/3.*; do
		[ -d "$v" ] && all+=("$v/bin/python$(basename "$v" | cut -d. -f1-2)")
	done
	echo /usr/bin/python3.11
	if [ "$MEM_FACTOR" -gt 1 ] && [ ${#all[@]} -gt 2 ]; then
		printf '%s\n' "$(printf '%s\n' "${all[@]}" | sort -V | head -1)" \
			"$(printf '%s\n' "${all[@]}" | sort -V | tail -1)"
	else
		[ ${#all[@]} -gt 0 ] && printf '%s\n' "${all[@]}"
	fi
	return 0
}

# python3_start PYTHON ARGS...: when PYTHON is installed, runs it with ARGS in its own pid, mount
# and net namespaces (ns_python, no cgroup) and lets it start up for 1 s; its version (x.y.z)
# in PY_VERSION, its pid in PY_PID (call it directly, not in $(...)). Returns 1 when PYTHON is
# not installed; fails when that is the system one (/usr/bin/python3.11).
# shellcheck disable=SC2034
python3_start()
{
	local py=$1
	if [ ! -x "$py" ]; then
		[ "$py" = /usr/bin/python3.11 ] && fail "the system CPython $py is missing"
		return 1
	fi
	PY_VERSION=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') ||
		fail "$py does not run"
	PY_PID=$(ns_python "" "$@") || exit 1
	need_own_ns "$PY_PID" "$py" pid mnt net
	sleep 1	# past start-up, at full speed
}

# --- programs ------------------------------------------------------------------------------

# workload NAME: prints the path of tests/workloads/NAME.c built: by `make` into
# $OUTPUT/workloads, or here the same way when it is not there.
workload()
{
	local w=$OUTPUT/workloads/$1
	if [ ! -x "$w" ]; then
		w=$TMP/$1
		cc -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE "$LIB_DIR/../workloads/$1.c" -o "$w" \
			-lpthread || fail "cannot build workload $1"
	fi
	echo "$w"
}

# bg_start CMD...: starts CMD in the background (no input, no output) and returns once it
# runs CMD's program; its pid in BG_PID (call it directly, not in $(...)). cleanup kills it.
# shellcheck disable=SC2034
bg_start()
{
	local exe
	exe=$(readlink -f "$(command -v "$1")") || fail "no program $1"
	"$@" </dev/null >/dev/null 2>&1 &
	BG_PID=$!
	echo "$BG_PID" >>"$LIB_STATE/pids"
	wait_for "[ \"\$(readlink /proc/$BG_PID/exe 2>/dev/null)\" = '$exe' ]" 10 ||
		fail "$1 did not start"
}

# need_go: the Go toolchain in GO (go on PATH, else Debian's Go 1.19, else /usr/lib/go), and an
# environment of this test's own for it (build cache, GOPATH, no modules, no cgo; go tool pprof
# writes into $TMP and looks for no binaries). Fails when there is none.
need_go()
{
	GO=$(command -v go || echo /usr/lib/go-1.19/bin/go)
	[ -x "$GO" ] || GO=/usr/lib/go/bin/go
	[ -x "$GO" ] || fail "go not found (apt-get install golang-go)"
	export HOME=${HOME:-$TMP} GOCACHE=$TMP/gocache GOPATH=$TMP/gopath GO111MODULE=off GOFLAGS='' \
		CGO_ENABLED=0 PPROF_TMPDIR=$TMP PPROF_BINARY_PATH=$TMP/nonexistent
}

# go_build NAME [GO BUILD FLAGS...]: copies tests/workloads/go/NAME.go into $TMP/src and builds
# it there into $TMP/NAME (call need_go first).
go_build()
{
	local name=$1
	shift
	mkdir -p "$TMP/src"
	cp "$LIB_DIR/../workloads/go/$name.go" "$TMP/src/" || fail "no workload $name.go"
	(cd "$TMP/src" && "$GO" build "$@" -o "$TMP/$name" "$name.go") >"$TMP/go.log" 2>&1 ||
		fail "go build $* $name.go failed: $(tail -3 "$TMP/go.log")"
}

# build_driver OUT SOURCE MODULE... [-- CC ARGS...]: compiles tests/integration/SOURCE into OUT
# against what `make` built of each MODULE (a source path without .c, e.g. daemon/agent/sink;
# `base` stands for every base/*.c): its object, or its source while that is newer or not built.
# With the sanitizers when the objects have them (then DRIVER_SAN holds their flags). CC ARGS
# (libraries, flags) come last.
# shellcheck disable=SC2034
build_driver()
{
	local out=$1 src=$2 m o
	local mods=() objs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		if [ "$1" = base ]; then
			for o in "$REPO_ROOT"/base/*.c; do
				o=${o#"$REPO_ROOT"/}
				mods+=("${o%.c}")
			done
		else
			mods+=("$1")
		fi
		shift
	done
	[ $# -eq 0 ] || shift
	for m in "${mods[@]}"; do
		o=$OUTPUT/obj/$m.o
		if [ -f "$o" ] && [ "$o" -nt "$REPO_ROOT/$m.c" ]; then
			objs+=("$o")
		else
			objs+=("$REPO_ROOT/$m.c")	# not built yet: compile the source
		fi
	done
	DRIVER_SAN=
	# (grep reads all of nm's output: -q would SIGPIPE it and fail the pipeline under pipefail)
	nm "${objs[0]}" 2>/dev/null | grep __asan_ >/dev/null && DRIVER_SAN="-fsanitize=address,undefined"
	# shellcheck disable=SC2086
	cc -O1 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror $DRIVER_SAN -I"$REPO_ROOT" \
		"$LIB_DIR/$src" "${objs[@]}" "$@" -o "$out" || fail "cannot build $src"
}

# --- JVMs (test_jvm_*.sh) ---------------------------------------------------------------------
# jvm_setup: the JDKs (JDK17, the Debian one, must be there; JDK25 where the machine has it; both
# in JDKS) and the non-root user the JVMs run as (JUSER, JUID, JGID).
# shellcheck disable=SC2034
jvm_setup()
{
	need_cmd unshare setpriv useradd
	JDK17=/usr/lib/jvm/java-17-openjdk-amd64
	JDK25=/usr/lib/jvm/temurin-25-jdk-amd64
	[ -x "$JDK17/bin/javac" ] || fail "no Java 17 at $JDK17"
	JDKS=$JDK17
	if [ -x "$JDK25/bin/java" ]; then
		JDKS="$JDK17 $JDK25"
	else
		log "Java 25 is not installed at $JDK25: only Java 17 is checked"
	fi
	JUSER=slideops-test
	id -u "$JUSER" >/dev/null 2>&1 || useradd -r -M -d / -s /usr/sbin/nologin "$JUSER" ||
		fail "cannot create user $JUSER"
	JUID=$(id -u "$JUSER")
	JGID=$(id -g "$JUSER")
}

# jvm_compile NAME: tests/workloads/java/NAME.java compiled into $OUTPUT/java (CLASSES), which
# jvm_start binds at /mnt of the JVM's namespace.
jvm_compile()
{
	local src=$LIB_DIR/../workloads/java/$1.java
	CLASSES=$OUTPUT/java
	if [ ! -f "$CLASSES/$1.class" ] || [ "$src" -nt "$CLASSES/$1.class" ]; then
		mkdir -p "$CLASSES" && "$JDK17/bin/javac" --release 17 -d "$CLASSES" "$src" ||
			fail "javac $1 failed"
	fi
	chmod -R a+rX "$CLASSES"
}

# jvm_start JDK FLAGS...: runs $JVM_MAIN (class and arguments; default "AttachTarget 120")
# under JDK as $JUSER in its own pid, mount and net namespaces with a private /tmp and / as its
# cwd; the namespace's pid 1 is a shell (so the JVM is not init, which the kernel would shield
# from signals it does not handle). Waits for its "ready"; its host pid in JVM_PID, its /tmp
# (as the host reaches it) in JVM_TMP. JVM_TMP_OPTS: the mount options of that /tmp (a tmpfs;
# default mode=1777,size=16m).
# shellcheck disable=SC2034
jvm_start()
{
	local jdk=$1 upid init log=$LIB_STATE/logs/jvm.$RANDOM.log
	shift
	unshare --pid --mount --net --fork --propagation private sh -c '
		u=$1 g=$2 jdk=$3 cp=$4 main=$5 tmpopts=$6
		shift 6
		# the classes may live under /tmp (a clone in mktemp -d): bound to /mnt of this
		# namespace before its own /tmp hides them
		mount -t proc proc /proc && mount --bind "$cp" /mnt &&
		mount -t tmpfs -o "$tmpopts" tmpfs /tmp &&
		cd / && setpriv --reuid="$u" --regid="$g" --clear-groups -- "$jdk/bin/java" \
			-Xmx64m -XX:+UseSerialGC -cp /mnt "$@" $main &
		wait' jvm_start "$JUID" "$JGID" "$jdk" "$CLASSES" \
		"${JVM_MAIN:-AttachTarget 120}" "${JVM_TMP_OPTS:-mode=1777,size=16m}" "$@" \
		</dev/null >"$log" 2>&1 &
	upid=$!
	echo "$upid" >>"$LIB_STATE/pids"
	wait_for "init=\$(pgrep -P $upid | head -1); [ -n \"\$init\" ] && \
		JVM_PID=\$(pgrep -P \$init | head -1) && [ -n \"\$JVM_PID\" ] && \
		grep -q '^ready' $log" 20 || fail "the JVM of $jdk did not start: $(tail -3 "$log")"
	init=$(pgrep -P "$upid" | head -1)
	JVM_PID=$(pgrep -P "$init" | head -1)
	echo "$init" >>"$LIB_STATE/pids"
	echo "$JVM_PID" >>"$LIB_STATE/pids"
	need_own_ns "$JVM_PID" "the JVM" pid mnt net
	[ "$(stat -c %u /proc/"$JVM_PID")" = "$JUID" ] || fail "the JVM does not run as $JUSER"
	JVM_TMP=/proc/$JVM_PID/root/tmp
	JVM_LOG=$log
}

# jvm_probe_build: tests/integration/jvm_probe.c built against the profiler's objects (with
# their sanitizers), into JVM_PROBE.
# shellcheck disable=SC2034
jvm_probe_build()
{
	local objs libbpf= san= d
	[ -d "$OUTPUT/obj" ] || fail "$OUTPUT/obj is missing (run make first)"
	objs=$(find "$OUTPUT/obj" -name '*.o' ! -path '*/daemon/main.o' | sort)
	for d in /usr/lib/$(gcc -print-multiarch) /usr/lib64 /usr/lib; do
		[ -f "$d/libbpf.a" ] && libbpf=$d/libbpf.a && break
	done
	[ -n "$libbpf" ] || fail "no libbpf.a"
	nm "$OUTPUT/obj/runtimes/jvm/jvm_attach.o" | grep __asan >/dev/null &&
		san="-fsanitize=address,undefined"
	JVM_PROBE=$TMP/jvm_probe
	# shellcheck disable=SC2086
	cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $san -I"$REPO_ROOT" -I"$OUTPUT" \
		-o "$JVM_PROBE" "$LIB_DIR/jvm_probe.c" $objs "$libbpf" \
		$(pkg-config --libs libelf libdw zlib jansson yaml-0.1 libcurl libmicrohttpd libwebsockets) \
		-lpthread -lm -lstdc++ || fail "cannot build jvm_probe"
}

# collapsed_value COLLAPSED PATTERN [regex]: the summed value of the stacks of a collapsed file
# that contain PATTERN (with "regex": that match it as an awk regex; "": every stack).
collapsed_value()
{
	awk -v pat="$2" -v re="${3:-}" '{ n = $NF; $NF = ""
		if (pat == "" || (re != "" && $0 ~ pat) || (re == "" && index($0, pat))) v += n }
		END { printf "%.0f\n", v }' "$1"
}

# answer_has OUT WHAT TEXT: the answer of OUT/summary.json names TEXT (logged).
answer_has()
{
	local answer
	answer=$(json_get "$1/summary.json" "d['answer']")
	log "$2: $answer"
	case $answer in *"$3"*) ;; *) fail "$2: the answer does not name $3: $answer" ;; esac
}

# ws_probe_build: tests/integration/ws_probe.c built against the WebSocket client and base/
# (with their sanitizers), into WS_PROBE.
# shellcheck disable=SC2034
ws_probe_build()
{
	local san=
	[ -f "$OUTPUT/obj/runtimes/node/nsws.o" ] || fail "$OUTPUT/obj is missing (run make first)"
	nm "$OUTPUT/obj/runtimes/node/nsws.o" | grep __asan >/dev/null &&
		san="-fsanitize=address,undefined"
	WS_PROBE=$TMP/ws_probe
	# shellcheck disable=SC2086
	cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $san -I"$REPO_ROOT" -I"$OUTPUT" \
		-o "$WS_PROBE" "$LIB_DIR/ws_probe.c" "$OUTPUT/obj/runtimes/node/nsws.o" \
		"$OUTPUT"/obj/base/*.o $(pkg-config --libs libwebsockets) -lpthread ||
		fail "cannot build ws_probe"
}

# jvm_stop: kills the JVM's namespace (its pid 1, and with it everything in it).
jvm_stop()
{
	local init
	init=$(awk '/^PPid:/ { print $2 }' /proc/"$JVM_PID"/status 2>/dev/null)
	[ -n "$init" ] && kill -KILL "$init" 2>/dev/null
	wait_for "[ ! -e /proc/$JVM_PID ]" 5 || fail "the JVM $JVM_PID did not stop"
}

# tmp_files: the names in the JVM's /tmp, one a line, sorted.
tmp_files() { ls -A "$JVM_TMP" | sort; }

# check_tmp BEFORE WHAT: the JVM's /tmp holds nothing but what it held before and the JVM's
# own socket (.java_pid<nspid>, which the JVM makes).
check_tmp()
{
	local before=$1 what=$2 nspid extra
	nspid=$(awk '/^NSpid:/ { print $NF }' /proc/"$JVM_PID"/status)
	extra=$(comm -13 <(printf '%s\n' "$before") <(tmp_files) | grep -vx ".java_pid$nspid")
	[ -z "$extra" ] || fail "$what: the JVM's /tmp holds files we made: $extra"
	! tmp_files | grep -q '^\.attach_pid' || fail "$what: an .attach_pid file was left"
}

# capture_retry OUT SECONDS ARGS...: `$BIN capture ARGS --out OUT` (stopped after SECONDS), once
# no other capture holds the machine's lock, and again (3 tries) while another capture that
# started meanwhile refuses it; its exit status in CAPTURE_RC, the milliseconds the last try took
# in CAPTURE_MS, output in OUT.stdout and OUT.stderr.
# shellcheck disable=SC2034
capture_retry()
{
	local out=$1 secs=$2 t0
	shift 2
	for _ in 1 2 3; do
		wait_lock
		rm -rf "$out"
		t0=$(date +%s%N)
		timeout -k 5 "$secs" "$BIN" capture "$@" --out "$out" </dev/null >"$out.stdout" 2>"$out.stderr"
		CAPTURE_RC=$?
		CAPTURE_MS=$((($(date +%s%N) - t0) / 1000000))
		[ "$CAPTURE_RC" -ne 0 ] && grep -qi 'already running' "$out.stderr" && continue
		break
	done
}

# profiler_run NAME MAXSECONDS ARGS...: `$BIN ARGS` once no capture holds the machine's lock
# (wait_lock), which must exit 0 within MAXSECONDS (it is killed at MAXSECONDS + 30) with a peak
# RSS of 128 MiB (times MEM_FACTOR) at the most; output in $TMP/NAME.stdout and .stderr (the
# Notes: of stdout are shown, stderr when it fails), peak RSS (KiB, GNU time) in $TMP/NAME.rss.
profiler_run()
{
	local name=$1 max=$2 rc t0 t rss
	shift 2
	wait_lock
	t0=$(date +%s%N)
	timeout -k 5 $((max + 30)) /usr/bin/time -f %M -o "$TMP/$name.rss" "$BIN" "$@" \
		</dev/null >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	t=$((($(date +%s%N) - t0) / 1000000))
	rss=$(tail -1 "$TMP/$name.rss")
	log "$* -> exit $rc in $t ms, peak RSS $rss KiB"
	sed -n '/^Notes:/,/^$/p' "$TMP/$name.stdout" | sed 's/^/    /' >&2
	[ "$rc" -eq 0 ] || { sed 's/^/    stderr: /' "$TMP/$name.stderr" >&2; fail "$name exited $rc"; }
	[ "$t" -le $((max * 1000)) ] || fail "$name took $t ms, more than $max s"
	[ "$rss" -le $((128 * 1024 * MEM_FACTOR)) ] ||
		fail "$name peak RSS $rss KiB > $((128 * MEM_FACTOR)) MiB"
}

# --- fake servers and the agent --------------------------------------------------------------

# free_port: a TCP port of 127.0.0.1 that the kernel had free a moment ago.
free_port()
{
	"$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_lock: waits (2 min at the most) until no capture holds the machine's capture lock.
wait_lock()
{
	wait_for "flock -n /run/slideops-profiler.lock true" 120 || fail "another capture holds the lock"
}

# api TOKEN METHOD PATH [BODY]: a request to the agent at $API (JSON body); prints the status
# code, the response body goes to $TMP/body.
api()
{
	curl -s -m 20 -o "$TMP/body" -w '%{http_code}' -X "$2" -H "Authorization: Bearer $1" \
		${4:+-H 'Content-Type: application/json' -d "$4"} "$API$3"
}

# api_capture TOKEN BODY: one capture through the agent's API, run to its end; the capture's id
# in $ID, its profile's in $PROFILE_ID. Other tests may capture on this machine at the same
# time (one capture per machine): a request refused because of one of them is asked again
# (after wait_lock), for 2 min at the most.
# shellcheck disable=SC2034
api_capture()
{
	local end=$(($(date +%s) + 120)) code
	while [ "$(date +%s)" -lt "$end" ]; do
		wait_lock
		code=$(api "$1" POST /v1/captures "$2")
		if [ "$code" = 409 ]; then sleep 1; continue; fi
		[ "$code" = 202 ] || fail "capture: HTTP $code $(cat "$TMP/body")"
		ID=$(json_get "$TMP/body" 'd["id"]')
		wait_for "[ \"\$(api $1 GET /v1/captures/current)\" = 200 ] &&
			[ \"\$(json_get $TMP/body 'd[\"id\"]')\" = $ID ] &&
			[ \"\$(json_get $TMP/body 'd[\"state\"]')\" != running ]" 60 ||
			fail "capture $ID did not finish: $(cat "$TMP/body")"
		case $(json_get "$TMP/body" 'd["state"]') in
		done) PROFILE_ID=$(json_get "$TMP/body" 'd["profile_id"]'); return 0 ;;
		refused) log "capture $ID refused (another capture ran); again"; continue ;;
		*) fail "capture $ID: $(cat "$TMP/body")" ;;
		esac
	done
	fail "no capture could run in 120 s"
}

# serve_start NAME PORT CMD...: starts a server CMD that takes `--port PORT --port-file FILE`
# (0: any free port) in the background, output appended to $TMP/NAME.log, and waits until it
# listens. Sets SERVE_PID and SERVE_PORT (call it directly, not in $(...)); cleanup kills it.
# shellcheck disable=SC2034
serve_start()
{
	local name=$1 port=$2
	shift 2
	rm -f "$TMP/$name.port"
	"$@" --port "$port" --port-file "$TMP/$name.port" </dev/null >>"$TMP/$name.log" 2>&1 &
	SERVE_PID=$!
	echo "$SERVE_PID" >>"$LIB_STATE/pids"
	wait_for "[ -s '$TMP/$name.port' ]" 10 || fail "$name did not start: $(tail -3 "$TMP/$name.log")"
	SERVE_PORT=$(cat "$TMP/$name.port")
}

# fake_kube_start PORT [ARGS...]: the fake Kubernetes API server (tests/fake-kube/) on PORT (0:
# any), with its ARGS (--token, --state, --log ...). Sets KUBE_PID and KAPI (its URL).
# shellcheck disable=SC2034
fake_kube_start()
{
	serve_start fake-kube "$1" "$PYTHON" "$REPO_ROOT/tests/fake-kube/fake_apiserver.py" "${@:2}"
	KUBE_PID=$SERVE_PID KAPI=http://127.0.0.1:$SERVE_PORT
}

# kube_admin METHOD PATH [BODY]: one request to the fake API server's own /fake/ API at $KAPI.
kube_admin()
{
	curl -sf -X "$1" "$KAPI$2" ${3:+-d "$3"} >/dev/null || fail "fake kube $1 $2 failed"
}

# fake_cluster_start PORT [ARGS...]: the fake cluster API (tests/fake-cluster/) on PORT (0: any),
# with its ARGS (--token, --log ...). Sets CLUSTER_PID and CLUSTER_URL.
# shellcheck disable=SC2034
fake_cluster_start()
{
	serve_start fake-cluster "$1" "$PYTHON" "$REPO_ROOT/tests/fake-cluster/fake_cluster_api.py" "${@:2}"
	CLUSTER_PID=$SERVE_PID CLUSTER_URL=http://127.0.0.1:$SERVE_PORT
}

# kubeconfig_write FILE SERVER [TOKEN [NAMESPACE]]: a kubeconfig for SERVER, with a bearer TOKEN
# (none when empty) and a default NAMESPACE.
kubeconfig_write()
{
	local user='{}'
	[ -z "${3:-}" ] || user="{token: $3}"
	cat >"$1" <<KC
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: fake
  cluster:
    server: $2
contexts:
- name: test
  context: {cluster: fake, user: agent${4:+, namespace: $4}}
users:
- name: agent
  user: $user
KC
}

# kube_pod_json NS POD UID NODE CID [ANNOTATIONS_JSON]: a running Pod of NODE as a Deployment
# makes it: POD is <deployment>-<hash>-<suffix>, owned by ReplicaSet <deployment>-<hash>, one
# container "app" whose containerID is containerd://CID.
kube_pod_json()
{
	local rs=${2%-*}
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$2", "namespace": "$1", "uid": "$3", "annotations": ${6:-{\}},
   "labels": {"app": "${rs%-*}", "pod-template-hash": "${rs##*-}"},
   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "$rs",
                        "uid": "rs-$1-$rs", "controller": true, "blockOwnerDeletion": true}]},
 "spec": {"nodeName": "$4", "containers": [{"name": "app", "image": "${rs%-*}:1"}]},
 "status": {"phase": "Running",
   "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                          "containerID": "containerd://$5"}]}}
EOF
}

# status_settled VALUE: the capture-status annotation in $TMP/status.json is about the request
# VALUE, and that request no longer runs.
status_settled()
{
	[ "$(json_get "$TMP/status.json" 'd["request"]' 2>/dev/null)" = "$1" ] &&
		[ "$(json_get "$TMP/status.json" 'd["state"]' 2>/dev/null)" != running ]
}

# agent_yaml NODE PORT STORE [KUBECONFIG [CLUSTER_URL [LINE...]]]: prints an agent config: node
# NODE, listening on 127.0.0.1:PORT, STORE, log level info, tokens from $TMP/tokens.yaml;
# Kubernetes through KUBECONFIG (off when empty), the cluster API at CLUSTER_URL with the token
# in $TMP/ctoken (none when empty), then each LINE as it is.
agent_yaml()
{
	printf 'node_name: %s\nlisten: 127.0.0.1:%s\nstore_dir: %s\nlog_level: info\n' "$1" "$2" "$3"
	printf 'tokens_file: %s\nkubernetes:\n' "$TMP/tokens.yaml"
	if [ -n "${4:-}" ]; then
		printf '  enabled: true\n  kubeconfig: %s\n' "$4"
	else
		printf '  enabled: false\n'
	fi
	[ -z "${5:-}" ] || printf 'cluster_api:\n  url: %s\n  token_file: %s\n' "$5" "$TMP/ctoken"
	[ $# -le 5 ] || printf '%s\n' "${@:6}"
}

# agent_tokens NAME TOKEN ROLE [NAME TOKEN ROLE...]: writes $TMP/tokens.yaml (the tokens file of
# agent_yaml), one API token a triple.
agent_tokens()
{
	echo tokens: >"$TMP/tokens.yaml"
	while [ $# -ge 3 ]; do
		printf '  - {name: %s, token: "%s", role: %s}\n' "$1" "$2" "$3" >>"$TMP/tokens.yaml"
		shift 3
	done
}

# agent_spawn CONFIG LOG [WRAPPER...]: starts `$BIN daemon --config CONFIG` (through WRAPPER,
# e.g. `env VAR=...`), output in LOG, and waits (30 s at the most) until it is ready or dead.
# Sets DAEMON_PID and DLOG (call it directly, not in $(...)); returns 1 when it is not ready.
# shellcheck disable=SC2034
agent_spawn()
{
	local config=$1
	DLOG=$2
	shift 2
	"$@" "$BIN" daemon --config "$config" </dev/null >"$DLOG" 2>&1 &
	DAEMON_PID=$!
	echo "$DAEMON_PID" >>"$LIB_STATE/pids"
	wait_for "grep -q 'daemon ready' '$DLOG' || ! kill -0 $DAEMON_PID 2>/dev/null" 30
	grep -q 'daemon ready' "$DLOG"
}

# agent_stop SIGNAL: sends SIGNAL to the agent of agent_spawn and waits (20 s) until it ended;
# its exit status in DAEMON_RC.
# shellcheck disable=SC2034
agent_stop()
{
	kill "-$1" "$DAEMON_PID"
	wait_for "! kill -0 $DAEMON_PID 2>/dev/null" 20 || fail "the agent did not stop on SIG$1"
	wait "$DAEMON_PID"
	DAEMON_RC=$?
}

# store_seed DIR NAMESPACE...: one stored profile of Service billing per NAMESPACE under DIR
# (a store's profiles/), the i-th (from 0) with id 20200101T0000<ii>Z-<i, 6 hex digits>, made
# at 2020-01-01T00:00:<i>Z.
store_seed()
{
	"$PYTHON" - "$@" <<'PY' || fail "cannot seed the store"
import json, os, sys
base = sys.argv[1]
for i, ns in enumerate(sys.argv[2:]):
    pid = "20200101T0000%02dZ-%06x" % (i, i)
    d = os.path.join(base, pid)
    os.makedirs(d)
    for f in ("profile.pb.gz", "profile.collapsed", "summary.json"):
        open(os.path.join(d, f), "w").write("{}" if f == "summary.json" else "x")
    t = 1577836800 * 10**9 + i * 10**9
    json.dump({"version": 1, "id": pid, "service": "billing", "namespace": ns, "question": "cpu",
               "target": {"kind": "service", "description": "Service billing"},
               "start": "2020-01-01T00:00:00Z", "start_ns": t, "duration_seconds": 10,
               "answer": "seeded", "languages": ["native"], "sample_count": 1,
               "continuous": False, "created": "2020-01-01T00:00:00Z", "created_ns": t},
              open(os.path.join(d, "meta.json"), "w"))
PY
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
