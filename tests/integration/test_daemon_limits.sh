#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The agent under the DaemonSet's memory limit with hostile containers on the node (issue 12,
# Evidence 2). `$BIN daemon` runs inside a cgroup v1 memory cgroup made below this test's own
# (memory.limit_in_bytes = 256M), while three real containers run (pid 1 of their own pid,
# mount and net namespaces, each with its own busybox root), programs of
# tests/workloads/limits_hostile.c:
#   jvm     maps /opt/java/lib/server/libjvm.so, a regular file, beside a FIFO named release
#           (and another in the java home above it): a reader that opens it blocks for good
#   sparse  an executable that runs but is 6 GiB long (a hole after its real content) and whose
#           section headers claim a .symtab, .dynsym, .strtab, .eh_frame, .gopclntab and
#           .debug_info of 4 GiB each
#   names   started as /usr/local/bin/АБВГДЕЖЗ (the kernel cuts its comm mid-character) with
#           a thread whose name is not UTF-8
# Checks: GET /v1/status answers within 10 s, polled every second for 15 s and during the
# capture; a whole-server cpu capture posted to the API finishes within 60 s and its summary is
# valid JSON; SIGTERM stops the agent within 5 s with exit 0; the memory cgroup never went
# under OOM and killed nothing (memory.oom_control), and the agent was never killed. The
# agent's peak RSS (VmHWM) and the cgroup's peak usage and failcnt are logged. Each container must
# be a group of its own in the capture's summary (the agent read all three).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd curl unshare pivot_root mkfifo
fail()
{
	[ -n "${DLOG:-}" ] && [ -f "$DLOG" ] && tail -n 20 "$DLOG" | sed 's/^/  agent| /' >&2
	printf 'FAIL %s: %s\n' "$TEST_NAME" "$*" >&2
	exit 1
}
HOSTILE=$OUTPUT/workloads/limits_hostile
[ -x "$HOSTILE" ] || fail "$HOSTILE is missing (make all)"
[ -x "$BIN" ] || fail "binary not found: $BIN"
LIMIT=$((256 * MEM_FACTOR << 20))	# MEM_FACTOR: lib.sh (ASan builds)

# --- the memory cgroup: below our own (the only place one may be made here) -------------------
MEMROOT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
[ -n "$MEMROOT" ] || skip "no cgroup v1 memory hierarchy (this test is for a v1 or hybrid host)"
own=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
MEMCG=$MEMROOT${own%/}/slideops-limits.$$
mkdir "$MEMCG" || fail "cannot create the memory cgroup $MEMCG"
echo "$MEMCG" >>"$LIB_STATE/cgroups"
echo "$LIMIT" >"$MEMCG/memory.limit_in_bytes" || fail "cannot set memory.limit_in_bytes"
[ "$(cat "$MEMCG/memory.limit_in_bytes")" = "$LIMIT" ] ||
	fail "memory.limit_in_bytes is $(cat "$MEMCG/memory.limit_in_bytes"), want $LIMIT"
log "memory cgroup $MEMCG, limit $((LIMIT >> 20)) MiB"

# --- the hostile containers ---------------------------------------------------------------------
# jvm: libjvm.so mapped, FIFOs named release beside it and in the java home
root=$TMP/jvmroot
make_busybox_rootfs "$root" "$HOSTILE" || exit 1
mkdir -p "$root/opt/java/lib/server"
head -c 65536 /dev/urandom >"$root/opt/java/lib/server/libjvm.so"
mkfifo "$root/opt/java/lib/server/release" "$root/opt/java/release" || fail "mkfifo"
jvm_pid=$(ns_container_run "$root" "$(cg_make_unit limits-jvm.service)" \
	limits_hostile map /opt/java/lib/server/libjvm.so) || exit 1
grep -q '/opt/java/lib/server/libjvm.so' "/proc/$jvm_pid/maps" || fail "the jvm container did not map libjvm.so"

# sparse: a 6 GiB executable that claims gigabytes of sections
root=$TMP/sparseroot
make_busybox_rootfs "$root" "$HOSTILE" || exit 1
"$HOSTILE" sparse "$HOSTILE" "$root/usr/local/bin/sparse_elf" 6 || fail "cannot make the sparse executable"
rm -f "$root/usr/local/bin/limits_hostile"
sparse_pid=$(ns_container_run "$root" "$(cg_make_unit limits-sparse.service)" sparse_elf) || exit 1

# names: a comm cut mid-character, a thread name that is not UTF-8
root=$TMP/namesroot
make_busybox_rootfs "$root" "$HOSTILE" || exit 1
NAME=АБВГДЕЖЗ
mv "$root/usr/local/bin/limits_hostile" "$root/usr/local/bin/$NAME"
names_pid=$(ns_container_run "$root" "$(cg_make_unit limits-names.service)" "$NAME" names) || exit 1
wait_for "[ \$(ls /proc/$names_pid/task | wc -l) -ge 2 ]" 10 || fail "the names container has no second thread"
log "containers: jvm $jvm_pid, sparse $sparse_pid, names $names_pid"

# --- the agent, in the memory cgroup -------------------------------------------------------------
OPERATOR=operator-token-0123456789abcdef
cat >"$TMP/tokens.yaml" <<EOF
tokens:
  - {name: otto, token: "$OPERATOR", role: operator}
EOF
APORT=$(free_port)
agent_yaml node-limits "$APORT" "$TMP/store" >"$TMP/profiler.yaml"
API=http://127.0.0.1:$APORT
# shellcheck disable=SC2016
agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.log" env MEMCG_PROCS="$MEMCG/cgroup.procs" \
	sh -c 'echo $$ >"$MEMCG_PROCS" || exit 126; exec "$@"' agent ||
	fail "the agent did not start: $(tail -5 "$DLOG")"
grep -q "^[0-9]*:memory:${own%/}/slideops-limits.$$\$" "/proc/$DAEMON_PID/cgroup" ||
	fail "the agent is not in the memory cgroup: $(grep memory "/proc/$DAEMON_PID/cgroup")"
log "agent pid $DAEMON_PID serving $API"

HWM=0
hwm() # the agent's VmHWM in KiB, the highest seen so far in HWM
{
	local v
	v=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$DAEMON_PID/status" 2>/dev/null)
	[ -n "$v" ] && [ "$v" -gt "$HWM" ] && HWM=$v
	return 0
}
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || fail "the agent died: $(tail -5 "$DLOG")"; }
api() # METHOD PATH [BODY]: "CODE SECONDS"; the body goes to $TMP/body
{
	curl -s -m 12 -o "$TMP/body" -w '%{http_code} %{time_total}' -X "$1" \
		-H "Authorization: Bearer $OPERATOR" \
		${3:+-H 'Content-Type: application/json' -d "$3"} "$API$2"
}
NPOLL=0 SLOWEST=0
poll_status() # one GET /v1/status: 200 within 10 s
{
	local r code secs
	alive
	r=$(api GET /v1/status)
	code=${r% *}
	secs=${r#* }
	NPOLL=$((NPOLL + 1))
	[ "$code" = 200 ] || fail "GET /v1/status #$NPOLL: HTTP $code after $secs s: $(head -c 300 "$TMP/body")"
	awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "GET /v1/status #$NPOLL took $secs s"
	awk -v s="$secs" -v m="$SLOWEST" 'BEGIN { exit !(s > m) }' && SLOWEST=$secs
	"$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/body" ||
		fail "GET /v1/status #$NPOLL is not JSON: $(head -c 300 "$TMP/body")"
	hwm
}

# --- 1. /v1/status every second for POLL_SECONDS (15; 10 under ASan, where the plain pass has
# done 15) -----------------------------------------------------------------------------------------
poll_s=15
[ "$MEM_FACTOR" -gt 1 ] && poll_s=10
: "${POLL_SECONDS:=$poll_s}"
end=$(($(date +%s) + POLL_SECONDS))
while [ "$(date +%s)" -lt "$end" ]; do
	t0=$(date +%s%N)
	poll_status
	left=$((1000000000 - ($(date +%s%N) - t0)))
	[ "$left" -gt 0 ] && sleep "0.$(printf %09d "$left")"
done
log "GET /v1/status: $NPOLL answers, the slowest in $SLOWEST s; agent VmHWM $((HWM / 1024)) MiB"
for p in $jvm_pid $sparse_pid $names_pid; do
	kill -0 "$p" 2>/dev/null || fail "hostile container pid $p is gone"
done

# --- 2. a whole-server capture, polling the status meanwhile --------------------------------------
wait_for "flock -n /run/slideops-profiler.lock true" 120 || fail "another capture holds the lock"
r=$(api POST /v1/captures '{"target": "server", "question": "cpu", "duration": 10}')
[ "${r% *}" = 202 ] || fail "capture: HTTP $r $(cat "$TMP/body")"
ID=$(json_get "$TMP/body" 'd["id"]') || fail "capture: no id: $(cat "$TMP/body")"
start=$(date +%s)
while :; do
	alive
	r=$(api GET /v1/captures/current)
	[ "${r% *}" = 200 ] || fail "GET /v1/captures/current: HTTP $r"
	cp "$TMP/body" "$TMP/current.json"
	state=$(json_get "$TMP/current.json" 'd["state"]')
	[ "$state" != running ] && break
	[ $(($(date +%s) - start)) -lt 60 ] || fail "the capture did not finish in 60 s: $(cat "$TMP/current.json")"
	poll_status
	sleep 1
done
secs=$(($(date +%s) - start))
[ "$state" = "done" ] || fail "the capture ended $state: $(cat "$TMP/current.json")"
log "capture $ID done in $secs s: $(json_get "$TMP/current.json" 'd.get("message", "")')"
r=$(api GET "/v1/profiles/$ID")
[ "${r% *}" = 200 ] || fail "GET /v1/profiles/$ID: HTTP $r"
json_get "$TMP/body" 'd["summary"]["notes"]' >"$TMP/notes.json" ||
	fail "the profile's summary.json is missing or not valid JSON: $(head -c 300 "$TMP/body")"
log "notes: $(cat "$TMP/notes.json")"
# the capture read every hostile process: each container is a group of its own
json_get "$TMP/body" '[g["owner"] for g in d["summary"]["groups"]]' >"$TMP/owners.json" ||
	fail "the summary has no groups"
for u in limits-jvm limits-sparse limits-names; do
	grep -q "\"Unit $u.service\"" "$TMP/owners.json" || fail "no group for Unit $u.service: $(cat "$TMP/owners.json")"
done
"$PYTHON" - "$TMP/store/profiles/$ID/summary.json" <<'EOF' || fail "summary.json on disk is not valid UTF-8 JSON"
import json, sys
json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
EOF
poll_status
hwm

# --- 3. SIGTERM within 5 s, never killed -----------------------------------------------------------
kill -TERM "$DAEMON_PID"
wait_for "! kill -0 $DAEMON_PID 2>/dev/null" 5 || fail "the agent did not stop within 5 s of SIGTERM"
wait "$DAEMON_PID"
rc=$?
[ "$rc" = 0 ] || fail "the agent exited $rc after SIGTERM (killed: $([ "$rc" -gt 128 ] && kill -l $((rc - 128))))"
oom=$(cat "$MEMCG/memory.oom_control")
under=$(awk '$1 == "under_oom" { print $2 }' <<<"$oom")
kills=$(awk '$1 == "oom_kill" { print $2 }' <<<"$oom")
[ "${under:-0}" = 0 ] || fail "the memory cgroup went under OOM: $oom"
[ "${kills:-0}" = 0 ] || fail "the memory cgroup OOM-killed $kills process(es): $oom"
log "agent VmHWM $((HWM / 1024)) MiB; cgroup max usage $(($(cat "$MEMCG/memory.max_usage_in_bytes") >> 20)) MiB," \
	"failcnt $(cat "$MEMCG/memory.failcnt")"
[ "$HWM" -lt $((LIMIT >> 10)) ] || fail "the agent's VmHWM $((HWM / 1024)) MiB reached the limit"
log "all daemon-limit checks passed"
exit 0
