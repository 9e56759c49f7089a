#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Go programs without net/http/pprof, and endpoints that are hostile or broken (issue 6), each
# as pid 1 of its own pid, mount and net namespaces:
#   - tests/workloads/go/nopprof.go listens on a port that is not pprof: check says memory-held
#     is unavailable and why (the program must serve net/http/pprof on a local port); capture
#     memory-held is refused with that reason; cpu still names main.hotLoop
#   - tests/workloads/go/badpprof.go: an index page that never ends (endless) and a port that
#     accepts and never answers (silent) are not taken as the endpoint: memory-held and locks
#     are refused at once naming the port and what it did, threads shows OS threads with a
#     note; profiles of random bytes (garbage): the captures end on time, exit 0, with notes;
#     an endpoint that is found and then never answers (hang): one note, the capture on time
. "$(dirname "$0")/lib.sh"

need_root
need_cmd flock timeout curl nsenter
need_bin

need_go
go_build nopprof -ldflags='-s -w'
go_build badpprof -ldflags='-s -w'
make_busybox_rootfs "$TMP/root" "$TMP/nopprof" "$TMP/badpprof" || exit 1

# start NAME PORT CMD ARGS...: CMD in a container of its own; prints its pid once PORT listens
# inside the container.
start()
{
	local name=$1 port=$2 cg pid
	shift 2
	cg=$(cg_make_unit "$name.service") || exit 1
	pid=$(ns_container_run "$TMP/root" "$cg" "$@") || exit 1
	wait_for "nsenter -t $pid -n cat /proc/net/tcp | awk '\$4 == \"0A\"' | grep -qi ':$(printf %04X "$port") '" 20 ||
		fail "$* (pid $pid) does not listen on $port inside its container"
	echo "$pid"
}

# capture OUT MAXSECONDS ARGS...: one capture (when no other holds the lock) that must end
# within MAXSECONDS; exit status in OUT.rc, output in OUT.stdout and OUT.stderr.
capture()
{
	local out=$1 max=$2 rc t
	shift 2
	capture_retry "$out" 90 "$@"
	rc=$CAPTURE_RC t=$CAPTURE_MS
	echo "$rc" >"$out.rc"
	log "capture $* -> exit $rc in $t ms"
	sed -n '/^Notes:/,/^$/p' "$out.stdout" | sed 's/^/    /' >&2
	[ "$rc" -eq 0 ] || sed 's/^/    stderr: /' "$out.stderr" >&2
	[ "$t" -le $((max * 1000)) ] || fail "capture $* took $t ms, more than $max s"
}

# --- a Go program without pprof ------------------------------------------------------------
nop=$(start go-nopprof 8080 /usr/local/bin/nopprof) || exit 1
"$BIN" check --pid "$nop" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out" >&2; fail "check exited non-zero"; }
grep -Eq "^ +memory-held +What is holding memory +unavailable: .*must serve net/http/pprof on a local port" "$TMP/check.out" ||
	{ cat "$TMP/check.out" >&2; fail "check does not say why memory-held is unavailable"; }
grep -q "Go pprof: process $nop does not serve net/http/pprof: .*8080" "$TMP/check.out" ||
	{ cat "$TMP/check.out" >&2; fail "check does not say which port it tried"; }
grep -Eq '^ +cpu +What is using the CPU +available$' "$TMP/check.out" || fail "cpu is not available"
grep -Eq '^ +memory-growth +Where memory grows +available$' "$TMP/check.out" || fail "memory-growth is not available"
grep -Eq '^ +threads .* +available$' "$TMP/check.out" || fail "threads is not available"
grep -Eq '^ +wall .* +available$' "$TMP/check.out" || fail "wall is not available"
grep -Eq "^ +locks +What is waiting on locks +unavailable: a Go program waits on locks in the Go scheduler, not in the kernel.*must serve net/http/pprof" "$TMP/check.out" ||
	{ cat "$TMP/check.out" >&2; fail "check does not say why locks is unavailable for a Go program without pprof"; }

capture "$TMP/nheld" 20 --pid "$nop" --question memory-held --duration 2
[ "$(cat "$TMP/nheld.rc")" -ne 0 ] || fail "memory-held of a Go program without pprof succeeded"
grep -q 'must serve net/http/pprof on a local port' "$TMP/nheld.stderr" ||
	{ cat "$TMP/nheld.stderr" >&2; fail "memory-held was refused without the reason"; }

capture "$TMP/ncpu" 30 --pid "$nop" --question cpu --duration 3
[ "$(cat "$TMP/ncpu.rc")" -eq 0 ] || { cat "$TMP/ncpu.stderr" >&2; fail "cpu of the Go program failed"; }
grep -q 'main\.hotLoop' "$TMP/ncpu/profile.collapsed" || fail "cpu does not name main.hotLoop"
kill -KILL "$nop"

# --- hostile endpoints ---------------------------------------------------------------------
# endless: the index page never ends; silent: the port accepts and never answers. Neither is
# taken as the endpoint: memory-held and locks (a target of Go programs only) are refused at
# once with what went wrong; threads shows the OS threads, with a note.
for mode in endless silent; do
	pid=$(start "go-$mode" 6060 /usr/local/bin/badpprof -mode "$mode") || exit 1
	case $mode in
	endless) what='6060: an answer larger than 65536 bytes' ;;
	silent) what='6060: no complete answer within 500 ms' ;;
	esac
	for q in memory-held locks; do
		capture "$TMP/$mode-$q" 10 --pid "$pid" --question "$q" --duration 2
		[ "$(cat "$TMP/$mode-$q.rc")" -ne 0 ] || fail "$q with a $mode endpoint was not refused"
		grep -q "must serve net/http/pprof on a local port, and it does not (process $pid (badpprof): none of its TCP ports ($what) serves /debug/pprof/)" "$TMP/$mode-$q.stderr" ||
			{ cat "$TMP/$mode-$q.stderr" >&2; fail "$q with a $mode endpoint: no reason naming the port"; }
	done
	capture "$TMP/$mode-threads" 20 --pid "$pid" --question threads
	[ "$(cat "$TMP/$mode-threads.rc")" -eq 0 ] || { cat "$TMP/$mode-threads.stderr" >&2; fail "threads with a $mode endpoint failed"; }
	grep -q "does not serve net/http/pprof (process $pid (badpprof): none of its TCP ports ($what)" "$TMP/$mode-threads.stdout" ||
		{ cat "$TMP/$mode-threads.stdout" >&2; fail "threads with a $mode endpoint: no note"; }
	"$BIN" check --pid "$pid" >"$TMP/check-$mode.out" 2>&1
	grep -q "Go pprof: process $pid does not serve net/http/pprof: none of its TCP ports ($what)" "$TMP/check-$mode.out" ||
		{ cat "$TMP/check-$mode.out" >&2; fail "check does not report the $mode port"; }
	kill -0 "$pid" || fail "the $mode server died"
	kill -KILL "$pid"
done

# garbage: a real-looking index, profiles of random bytes: the capture ends on time with notes.
garbage=$(start go-garbage 6060 /usr/local/bin/badpprof -mode garbage) || exit 1
capture "$TMP/garbage" 25 --pid "$garbage" --question memory-held --duration 2
[ "$(cat "$TMP/garbage.rc")" -eq 0 ] || { cat "$TMP/garbage.stderr" >&2; fail "memory-held with a garbage endpoint failed"; }
grep -q "its heap profile from 127.0.0.1:6060/debug/pprof/heap?gc=1 is not a pprof profile" "$TMP/garbage.stdout" ||
	{ cat "$TMP/garbage.stdout" >&2; fail "no note about the garbage heap profile"; }
capture "$TMP/garbage-locks" 25 --pid "$garbage" --question locks --duration 2
[ "$(cat "$TMP/garbage-locks.rc")" -eq 0 ] || { cat "$TMP/garbage-locks.stderr" >&2; fail "locks with a garbage endpoint failed"; }
grep -q 'is not a pprof profile' "$TMP/garbage-locks.stdout" ||
	{ cat "$TMP/garbage-locks.stdout" >&2; fail "no note about the garbage mutex/block profiles"; }
capture "$TMP/garbage-threads" 25 --pid "$garbage" --question threads
[ "$(cat "$TMP/garbage-threads.rc")" -eq 0 ] || { cat "$TMP/garbage-threads.stderr" >&2; fail "threads with a garbage endpoint failed"; }
grep -q 'sent as its goroutine dump is not one' "$TMP/garbage-threads.stdout" ||
	{ cat "$TMP/garbage-threads.stdout" >&2; fail "no note about the garbage goroutine dump"; }
kill -0 "$garbage" || fail "the garbage server died"

# hang: found (its index is real), then every profile request is held open: the first one
# times out (5 s), the process gets one note and no more requests; the capture ends on time.
kill -KILL "$garbage"
hang=$(start go-hang 6060 /usr/local/bin/badpprof -mode hang) || exit 1
capture "$TMP/hang" 15 --pid "$hang" --question locks --duration 2
[ "$(cat "$TMP/hang.rc")" -eq 0 ] || { cat "$TMP/hang.stderr" >&2; fail "locks with a hanging endpoint failed"; }
n=$(grep -c "Process $hang (badpprof): its .* could not be read from 127.0.0.1:6060" "$TMP/hang.stdout")
[ "$n" -eq 1 ] || { cat "$TMP/hang.stdout" >&2; fail "$n notes about the hanging endpoint, want exactly 1"; }
grep -q 'no complete answer within' "$TMP/hang.stdout" ||
	{ cat "$TMP/hang.stdout" >&2; fail "the note does not say the endpoint did not answer"; }

log "PASS: no pprof and hostile endpoints: clear reasons and notes, every capture on time"
exit 0
