#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The questions Go programs answer themselves (issue 6), read from their net/http/pprof on a
# loopback port that exists only inside their container: each program runs as pid 1 of its own
# pid, mount and net namespaces (tests/workloads/go/pprofapp.go, stripped), so the host cannot
# reach the port; the profiler finds it by itself.
#   - check names the endpoint and offers memory-held; plan says which port it found
#   - memory-held names main.holdMemory (the 64 MiB map), also in go tool pprof
#   - memory-alloc names main.allocDuring and not main.allocEarly (which allocated only before
#     the capture)
#   - threads shows the 40 goroutines parked in main.parkHere in chan receive, and the 5 in
#     main.sleepHere
#   - locks names main.contend when mutex profiling is on, and gives the note that says how to
#     turn it on when it is off
. "$(dirname "$0")/lib.sh"

need_root
need_cmd flock timeout curl nsenter
need_bin

need_go
go_build pprofapp -ldflags='-s -w'
make_busybox_rootfs "$TMP/root" "$TMP/pprofapp" || exit 1

# start NAME ARGS...: pprofapp in a container of its own (cgroup system.slice/NAME.service);
# prints its pid once its pprof answers inside the container.
start()
{
	local name=$1 cg pid
	shift
	cg=$(cg_make_unit "$name.service") || exit 1
	pid=$(ns_container_run "$TMP/root" "$cg" /usr/local/bin/pprofapp "$@") || exit 1
	wait_for "nsenter -t $pid -n curl -sf --max-time 1 http://127.0.0.1:6060/debug/pprof/ | grep -q goroutine" 20 ||
		fail "pprofapp $* (pid $pid) does not serve pprof inside its container"
	echo "$pid"
}

# capture OUT ARGS...: one capture when no other holds the lock; stdout in OUT.stdout
capture()
{
	local out=$1
	shift
	capture_retry "$out" 60 "$@"
	if [ "$CAPTURE_RC" -ne 0 ]; then
		sed 's/^/  stdout: /' "$out.stdout" >&2
		sed 's/^/  stderr: /' "$out.stderr" >&2
		fail "capture $* exited $CAPTURE_RC"
	fi
	json_get "$out/summary.json" 'd["answer"]' >"$out.answer" || fail "no answer in $out/summary.json"
	log "capture $*: $(cat "$out.answer")"
}

# --- memory-held, with check and plan ------------------------------------------------------
held=$(start go-held -mode held) || exit 1
curl -s --max-time 1 http://127.0.0.1:6060/debug/pprof/ 2>/dev/null | grep -q goroutine &&
	fail "the host reaches 127.0.0.1:6060: the port must exist only inside the container"

"$BIN" check --pid "$held" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out" >&2; fail "check exited non-zero"; }
grep -q "Go pprof: process $held serves net/http/pprof on 127.0.0.1:6060" "$TMP/check.out" ||
	{ cat "$TMP/check.out" >&2; fail "check does not name the pprof endpoint"; }
grep -Eq '^ +memory-held +What is holding memory +available$' "$TMP/check.out" ||
	{ cat "$TMP/check.out" >&2; fail "check does not offer memory-held"; }
"$BIN" plan --pid "$held" --question memory-held >"$TMP/plan.out" 2>&1 ||
	{ cat "$TMP/plan.out" >&2; fail "plan exited non-zero"; }
grep -q "process $held (pprofapp) on 127.0.0.1:6060" "$TMP/plan.out" ||
	{ cat "$TMP/plan.out" >&2; fail "plan does not say which port it found"; }

capture "$TMP/held" --pid "$held" --question memory-held --duration 2
grep -Eq "held [0-9.]+ MiB of Go heap in use .*allocated in main\.holdMemory" "$TMP/held.answer" ||
	fail "memory-held answer does not name main.holdMemory: $(cat "$TMP/held.answer")"
"$GO" tool pprof -top -sample_index=inuse_space "$TMP/held/profile.pb.gz" >"$TMP/held.top" 2>&1 ||
	fail "go tool pprof cannot read the memory-held profile: $(tail -3 "$TMP/held.top")"
awk '/flat%/ { getline; print; exit }' "$TMP/held.top" | grep -q 'main\.holdMemory' ||
	{ head -12 "$TMP/held.top" >&2; fail "go tool pprof: main.holdMemory is not the top of inuse_space"; }
grep -q 'main\.holdMemory' "$TMP/held/profile.collapsed" || fail "profile.collapsed lacks main.holdMemory"
kill -KILL "$held"

# --- memory-alloc --------------------------------------------------------------------------
alloc=$(start go-alloc -mode alloc -delay 1) || exit 1
sleep 1.5	# main.allocDuring starts 1 s after ready
capture "$TMP/alloc" --pid "$alloc" --question memory-alloc --duration 3
grep -Eq "allocated [0-9.]+ [MG]iB on the Go heap .*in main\.allocDuring" "$TMP/alloc.answer" ||
	fail "memory-alloc answer does not name main.allocDuring: $(cat "$TMP/alloc.answer")"
grep -q 'main\.allocDuring' "$TMP/alloc/profile.collapsed" || fail "no main.allocDuring in the profile"
grep -q 'main\.allocEarly' "$TMP/alloc/profile.collapsed" &&
	fail "main.allocEarly allocated only before the capture, but is in its profile"

# --- threads: goroutines -------------------------------------------------------------------
gor=$(start go-goroutines -mode goroutines -n 40) || exit 1
capture "$TMP/gor" --pid "$gor" --question threads
grep -Eq "has [0-9]+ goroutines: 40 in chan receive in main\.parkHere; 5 in sleep in main\.sleepHere" "$TMP/gor.answer" ||
	fail "threads answer does not show the parked goroutines: $(cat "$TMP/gor.answer")"
# 40 goroutines under the synthetic state leaf, parked in main.parkHere
n=$(grep 'main\.parkHere' "$TMP/gor/profile.collapsed" | grep 'goroutine: chan receive' | awk '{ s += $NF } END { print s + 0 }')
[ "$n" -eq 40 ] || fail "profile.collapsed: $n goroutines in main.parkHere, want 40"
grep -q 'Goroutines' "$TMP/gor/flamegraph.html" || fail "flamegraph.html has no Goroutines table"
# summary.json keeps the same groups (the page's Goroutines table)
n=$(json_get "$TMP/gor/summary.json" 'sum(g["count"] for g in d["goroutines"] if g["function"] == "main.parkHere" and g["state"] == "chan receive")') ||
	fail "summary.json has no goroutines[]"
[ "$n" -eq 40 ] || fail "summary.json: $n goroutines in chan receive in main.parkHere, want 40"

# --- locks: mutex profile on, then off -----------------------------------------------------
mtx=$(start go-mutex -mode mutex -mutexfraction 1 -blockrate 1) || exit 1
capture "$TMP/mtx" --pid "$mtx" --question locks --duration 3
grep -q 'main\.contend' "$TMP/mtx.answer" ||
	fail "locks answer does not name main.contend: $(cat "$TMP/mtx.answer")"
grep -q 'Go sync.Mutex' "$TMP/mtx/profile.collapsed" || fail "no Go mutex-profile waits in the profile"
kill -KILL "$mtx"

off=$(start go-mutex-off -mode mutex -mutexfraction 0 -blockrate 0) || exit 1
capture "$TMP/off" --pid "$off" --question locks --duration 2
json_get "$TMP/off/summary.json" 'd["notes"]' >"$TMP/off.notes" || fail "no notes in summary.json"
grep -q 'runtime.SetMutexProfileFraction' "$TMP/off.notes" ||
	{ cat "$TMP/off.stdout" >&2; fail "no note saying how to turn on the mutex profile"; }

log "PASS: memory-held, memory-alloc, goroutines and locks read from Go's pprof inside containers"
exit 0
