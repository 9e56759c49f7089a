#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# One capture at a time (SPEC 5), and a capture that is killed or stopped leaves nothing behind:
#   - while a capture samples, a second `capture` exits 3 with exactly
#     "slideops-profiler: a capture is already running on this server" (and creates no --out);
#     `plan` and `check` still work
#   - kill -9 of the running capture: the kernel drops its lock and its BPF programs
#     (`bpftool prog show` has no on_cpu_sample left), and the next capture works
#   - SIGTERM, then SIGINT, while sampling: the capture stops within about a second, exits
#     non-zero with "the capture was stopped before it finished; nothing was written", writes no
#     file into --out and leaves no BPF program loaded
. "$(dirname "$0")/lib.sh"

need_root
need_cmd bpftool timeout flock
need_bin

LOCK=/run/slideops-profiler.lock
BUSY='slideops-profiler: a capture is already running on this server'
STOPPED='slideops-profiler: the capture was stopped before it finished; nothing was written'
PROG=on_cpu_sample

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# Our BPF programs that are loaded now, one "id name pids" line each.
our_progs() { bpftool prog show 2>/dev/null | grep -A3 -E "^[0-9]+: .* name $PROG( |$)" | tr '\n' ' '; }

# start_capture NAME DURATION: starts `capture --server` in the background (into
# $TMP/NAME.{stdout,stderr}, --out $TMP/NAME) and waits until it samples (step 3 printed).
# Sets CAP_PID.
start_capture()
{
	local name=$1 duration=$2
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	"$BIN" capture --server --question cpu --duration "$duration" --out "$TMP/$name" \
		</dev/null >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" &
	CAP_PID=$!
	echo "$CAP_PID" >>"$LIB_STATE/pids"
	wait_for "grep -q '^\[3/' '$TMP/$name.stdout' || ! kill -0 $CAP_PID 2>/dev/null" 30 ||
		fail "$name: the capture did not start sampling within 30 s: $(tail -2 "$TMP/$name.stderr")"
	kill -0 "$CAP_PID" 2>/dev/null ||
		fail "$name: the capture exited before sampling: $(tail -2 "$TMP/$name.stderr")"
}

# --- busy ----------------------------------------------------------------------------------
[ -z "$(our_progs)" ] || log "note: $PROG already loaded before the test (another session?): $(our_progs)"
start_capture first 30
first_pid=$CAP_PID
[ -n "$(our_progs)" ] || bad "no BPF program $PROG is loaded while a capture samples (bpftool prog show)"

timeout -k 5 30 "$BIN" capture --server --question cpu --duration 1 --out "$TMP/second" \
	>"$TMP/second.stdout" 2>"$TMP/second.stderr"
rc=$?
[ "$rc" -eq 3 ] || bad "second capture exited $rc, expected 3"
[ "$(cat "$TMP/second.stderr")" = "$BUSY" ] ||
	bad "second capture's stderr is '$(cat "$TMP/second.stderr")', expected '$BUSY'"
[ ! -e "$TMP/second" ] || bad "the refused capture created its --out directory"
# Other targets are refused the same way: the lock is per server.
timeout -k 5 30 "$BIN" capture --pid "$first_pid" --question cpu --duration 1 --out "$TMP/third" \
	>/dev/null 2>"$TMP/third.stderr"
rc=$?
if [ "$rc" -ne 3 ] || [ "$(cat "$TMP/third.stderr")" != "$BUSY" ]; then
	bad "capture --pid while busy: exit $rc, stderr '$(cat "$TMP/third.stderr")'"
fi
timeout -k 5 30 "$BIN" plan --server --question cpu --duration 1 --out "$TMP/p" >/dev/null 2>&1 ||
	bad "plan fails while a capture runs (exit $?)"
timeout -k 5 30 "$BIN" check >/dev/null 2>&1 || bad "check fails while a capture runs (exit $?)"

# --- kill -9: the kernel releases the lock and the programs ------------------------------------
kill -KILL "$first_pid"
wait "$first_pid" 2>/dev/null
wait_for "[ -z \"\$(our_progs)\" ]" 10 || bad "after kill -9, $PROG is still loaded: $(our_progs)"
wait_for "flock -n $LOCK true" 5 || bad "after kill -9, $LOCK is still locked"
timeout -k 5 60 "$BIN" capture --server --question cpu --duration 1 --out "$TMP/after-kill" \
	>"$TMP/after-kill.stdout" 2>"$TMP/after-kill.stderr"
rc=$?
[ "$rc" -eq 0 ] || bad "the capture after kill -9 exited $rc: $(tail -1 "$TMP/after-kill.stderr")"
[ -s "$TMP/after-kill/summary.json" ] || bad "the capture after kill -9 wrote no summary.json"

# --- SIGTERM and SIGINT: a clean stop ----------------------------------------------------------
for sig in TERM INT; do
	name=stop-$sig
	start_capture "$name" 30
	sleep 1
	t0=$(date +%s%N)
	kill -"$sig" "$CAP_PID"
	wait_for "! kill -0 $CAP_PID 2>/dev/null" 10
	wait "$CAP_PID" 2>/dev/null
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	log "$name: exited $rc after $ms ms: $(tail -1 "$TMP/$name.stderr")"
	[ "$ms" -le 1500 ] || bad "$name: the capture took $ms ms to stop after SIG$sig (expected about 1 s)"
	[ "$rc" -ne 0 ] || bad "$name: the stopped capture exited 0"
	[ "$rc" -lt 128 ] || bad "$name: the capture died of the signal (exit $rc) instead of stopping"
	[ "$(tail -1 "$TMP/$name.stderr")" = "$STOPPED" ] ||
		bad "$name: the last line of stderr is '$(tail -1 "$TMP/$name.stderr")', expected '$STOPPED'"
	files=$(ls -A "$TMP/$name" 2>/dev/null)
	[ -z "$files" ] || bad "$name: the stopped capture wrote into --out: $files"
	wait_for "[ -z \"\$(our_progs)\" ]" 5 || bad "$name: $PROG is still loaded after the stop: $(our_progs)"
	wait_for "flock -n $LOCK true" 5 || bad "$name: $LOCK is still locked after the stop"
done

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"
