#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Continuous profiling in the agent (issue 18, docs/continuous.md, daemon/agent/continuous.c): the
# real agent (`$BIN daemon`) with `continuous: true`, 5 s windows and a 1 h retention, the fake
# cluster API as its sink, and hot2 (build_report) in system.slice/billing-worker.service:
#
#  1. Retention: the store held two continuous entries of 3 days ago, one whose hour ends 45 s
#     after the seeding, one of 10 minutes ago and a listed profile of 3 days ago. Once the first
#     window is stored the 3-day-old continuous ones are gone (the start's retention); the one
#     whose hour ends goes with the first window stored after that (the retention of each
#     store__add); the recent one and the listed one stay.
#  2. A requested capture (POST /v1/captures, server, cpu, 10 s, operator token) posted as soon
#     as continuous profiling runs starts at once beside it (202, never 409, never refused for a
#     lock of the windows'), ends "done" and is listed, while windows keep being stored.
#  3. Churn: 250 short-lived processes a second (tests/workloads/churn.c, fork + exec of itself,
#     1 ms of CPU time each) for 50 s in system.slice/churn.service. Measured after the warm-up
#     (the capture and at least 2 windows), halfway, and once a window stored after the churn
#     has forgotten the exited processes: the agent's VmRSS (the lowest over a window: between
#     namings), its open fds, its CPU time, the entries of the continuous sampler's BPF maps
#     uw_procs and python_procs (bpftool, through the programs of its perf links) and the
#     process snapshots and unwind-table bytes of /metrics. Fds +4 at the most; RSS growth under
#     8 MiB (times MEM_FACTOR, plus ASan's quarantine), or a step in one half only (a big program
#     another test started: the agent profiles the whole machine); uw_procs and the snapshots not
#     left holding the exited churners. Windows are stored during the churn, and its children
#     are in them.
#  4. Every window (at least 3): a continuous entry of the whole server (meta.json: continuous,
#     service server, question cpu, target kind server, 5 s) with its pprof, collapsed stacks and
#     summary (no flamegraph.html: drawn when asked, GET /v1/profiles/ID/flamegraph); its stacks
#     carry "Unit billing-worker.service;hot2;...;build_report"; windows start 5 s apart or more,
#     never overlapping, without stalls; none is in GET /v1/profiles; GET /v1/profiles/ID, its
#     collapsed download and its flame graph find one; /metrics counts the windows stored and
#     none failed; the log has no window that was not stored.
#  5. Deliveries: each window reaches the fake cluster API exactly once (by id, no duplicate),
#     its metadata with "continuous": true and requested_by "continuous"; the capture with
#     "continuous": false.
#  6. SIGTERM: exit 0 (under ASan: no leak at exit), no window's working directory or .tmp-
#     entry left behind.
. "$(dirname "$0")/lib.sh"
need_root
need_bin
need_cmd curl

WIN=5
UNIT=billing-worker.service
CHURN_UNIT=churn.service
CHURN_RATE=250
CHURN_SECONDS=50
CHURN_MAX=20000
EXPIRE_IN=45 # the seeded continuous entry that expires while the test runs: seconds after seeding
CTOKEN=s3cr3t-cluster-token
OPERATOR=operator-token-0123456789abcdef
VIEWER=viewer-token-0123456789abcdef
HOT2=$(workload hot2) || exit 1
CHURN=$(workload churn) || exit 1

# --- the fake cluster API, hot2 in its unit ----------------------------------------------------
echo "$CTOKEN" >"$TMP/ctoken"
fake_cluster_start 0 --log "$TMP/deliveries.jsonl" --token "$CTOKEN"
unit_cg=$(cg_make_unit "$UNIT") || exit 1
hot2_pid=$(cg_run "$unit_cg" "$HOT2") || exit 1
grep -qx "0::/$unit_cg" "/proc/$hot2_pid/cgroup" || fail "hot2 is not in $unit_cg"
log "hot2 pid $hot2_pid in $unit_cg"

# --- the store: old and recent continuous entries, a listed one ----------------------------------
STORE=$TMP/store
mkdir -p "$STORE/profiles"
# Prints KEY=ID lines: OLD1 OLD2 (continuous, 3 days ago), EXPIRING (continuous, its hour ends
# EXPIRE_IN s from now), RECENT (continuous, 10 min ago), LISTED (not continuous, 3 days ago).
"$PYTHON" - "$STORE/profiles" "$EXPIRE_IN" >"$TMP/seeded.sh" <<'PY' || fail "cannot seed the store"
import json, os, random, sys, time
base, expire_in = sys.argv[1], int(sys.argv[2])
now = time.time()
rows = [("OLD1", now - 3 * 86400, True), ("OLD2", now - 3 * 86400 + 60, True),
        ("EXPIRING", now - 3600 + expire_in, True), ("RECENT", now - 600, True),
        ("LISTED", now - 3 * 86400 + 120, False)]
for key, t, cont in rows:
    ns = int(t * 1e9)
    pid = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t)) + "-%06x" % random.randrange(1 << 24)
    d = os.path.join(base, pid)
    os.makedirs(d)
    for f in ("profile.pb.gz", "profile.collapsed", "summary.json"):
        open(os.path.join(d, f), "w").write("{}" if f == "summary.json" else "x")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    meta = {"version": 1, "id": pid, "question": "cpu", "start": stamp, "start_ns": ns,
            "duration_seconds": 5, "answer": "seeded", "languages": ["native"],
            "sample_count": 1, "continuous": cont, "created": stamp, "created_ns": ns}
    if cont:
        meta.update(service="server", target={"kind": "server", "description": "this server"})
    else:
        meta.update(service="billing", namespace="shop", duration_seconds=10,
                    target={"kind": "service", "description": "Service billing"})
    json.dump(meta, open(os.path.join(d, "meta.json"), "w"))
    print("%s=%s" % (key, pid))
print("EXPIRES_NS=%d" % int((now + expire_in) * 1e9))
PY
# shellcheck disable=SC1091
. "$TMP/seeded.sh"
SEEDED="$OLD1 $OLD2 $EXPIRING $RECENT $LISTED"

# --- the agent -----------------------------------------------------------------------------------
agent_tokens otto "$OPERATOR" operator vera "$VIEWER" viewer
APORT=$(free_port)
API=http://127.0.0.1:$APORT
agent_yaml node-cont "$APORT" "$STORE" "" "$CLUSTER_URL" "continuous: true" "continuous_hz: 19" \
	"continuous_window_seconds: $WIN" "continuous_retention_hours: 1" >"$TMP/profiler.yaml"
agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.log" || fail "the agent did not start: $(tail -5 "$DLOG")"
T_READY=$(date +%s%N)
log "agent pid $DAEMON_PID serving $API"
# the sampler is loaded on the windows' thread, after the start (seconds of the verifier)
wait_for "grep -q 'continuous profiling' '$DLOG'" 30 || fail "continuous profiling did not start in 30 s"
grep -q "continuous profiling: the whole server at 19 Hz, a profile every $WIN s" "$DLOG" ||
	fail "continuous profiling did not start: $(grep 'continuous profiling' "$DLOG" | head -3)"
[ "$(date +%s%N)" -lt "$EXPIRES_NS" ] ||
	fail "the agent took more than $EXPIRE_IN s to start: the expiring entry cannot be checked"
[ -e "$STORE/profiles/$EXPIRING" ] || fail "the continuous entry $EXPIRING was removed before its hour ended"

alive() { kill -0 "$DAEMON_PID" 2>/dev/null || fail "the agent died: $(tail -5 "$DLOG")"; }
# windows: the continuous entries the agent stored (not the seeded ones), oldest first, one a
# line: "ID START_NS CREATED_NS", into $TMP/windows.txt; prints their number.
windows()
{
	"$PYTHON" - "$STORE/profiles" "$SEEDED" >"$TMP/windows.txt" <<'PY'
import glob, json, os, sys
seeded = set(sys.argv[2].split())
rows = []
for f in glob.glob(os.path.join(sys.argv[1], "*", "meta.json")):
    try:
        m = json.load(open(f))
    except (OSError, ValueError):
        continue  # being removed
    if m.get("continuous") and m["id"] not in seeded:
        rows.append((m["start_ns"], m["id"], m["created_ns"]))
for s, i, c in sorted(rows):
    print(i, s, c)
PY
	wc -l <"$TMP/windows.txt"
}
# stored_after NS: the number of windows stored after NS (ns since the epoch).
stored_after() { windows >/dev/null; awk -v t="$1" '$3 > t' "$TMP/windows.txt" | wc -l; }
# bpf_maps: "uw_procs=N/M python_procs=N/M" (entries / of them, processes that exited) of the
# continuous sampler's maps: those of the programs attached to perf events through the agent's
# bpf_link fds (the requested captures' sampler stays loaded too, but detached between captures);
# "" without bpftool.
bpf_maps()
{
	command -v bpftool >/dev/null 2>&1 || return 0
	"$PYTHON" - "$DAEMON_PID" <<'PY'
import json, os, subprocess, sys
pid = sys.argv[1]
def bpftool(*a):
    r = subprocess.run(["bpftool", "-j"] + list(a), capture_output=True, text=True)
    return json.loads(r.stdout or "null")
progs = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        if os.readlink("/proc/%s/fd/%s" % (pid, fd)) != "anon_inode:bpf_link":
            continue
        info = dict(l.split(":", 1) for l in open("/proc/%s/fdinfo/%s" % (pid, fd)) if ":" in l)
    except OSError:
        continue
    if info.get("link_type", "").strip() == "perf":
        progs.add(int(info["prog_id"]))
maps = set()
for p in progs:
    maps.update((bpftool("prog", "show", "id", str(p)) or {}).get("map_ids", []))
out = []
for name in ("uw_procs", "python_procs"):
    n = stale = 0
    for i in sorted(maps):
        if (bpftool("map", "show", "id", str(i)) or {}).get("name") != name:
            continue
        for e in bpftool("map", "dump", "id", str(i)) or []:
            n += 1
            k = e.get("key")
            if isinstance(k, list):  # ["0x70", "0x3f", "0x00", "0x00"]: a little-endian tgid
                k = int.from_bytes(bytes(int(b, 16) for b in k), "little")
            if isinstance(k, int) and not os.path.exists("/proc/%d" % k):
                stale += 1
    out.append("%s=%d/%d" % (name, n, stale))
print(" ".join(out) if progs else "")
PY
}
# gauges: what continuous profiling's caches held after the last window (/metrics):
# "PROCESSES UNWIND_TABLE_BYTES"
gauges()
{
	curl -sf "$API/metrics" | awk '$1 == "slideops_profiler_continuous_processes" { p = $2 }
		$1 == "slideops_profiler_continuous_unwind_table_bytes" { u = $2 }
		END { print (p == "" ? "?" : p), (u == "" ? "?" : u) }'
}
# cpu_ticks: the agent's CPU time so far (user + system, clock ticks)
cpu_ticks() { sed 's/^.*) //' "/proc/$DAEMON_PID/stat" | awk '{ print $12 + $13 }'; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$DAEMON_PID/status"; }
# rss_low: the lowest VmRSS (kB) over one window and a second, sampled every 0.2 s: between
# windows, not in the middle of one's naming (which allocates and frees megabytes each time).
rss_low()
{
	local low r end=$(($(date +%s%N) + (WIN + 1) * 1000000000))
	low=$(rss)
	while [ "$(date +%s%N)" -lt "$end" ]; do
		r=$(rss)
		[ "$r" -lt "$low" ] && low=$r
		sleep 0.2
	done
	echo "$low"
}
nfds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }

# --- 2. a requested capture at once, beside the windows ------------------------------------------
# Another test may hold the machine's capture lock (one capture at a time): then this capture is
# refused and asked again. The windows never take that lock, so it is free at once otherwise.
CAP_ID=
for _ in 1 2 3; do
	wait_lock
	code=$(api "$OPERATOR" POST /v1/captures '{"target": "server", "question": "cpu", "duration": 10}')
	[ "$code" = 202 ] || fail "capture beside continuous profiling: HTTP $code $(cat "$TMP/body")"
	CAP_ID=$(json_get "$TMP/body" 'd["id"]')
	T_CAP=$(date +%s%N)
	wait_for "[ \"\$(api $VIEWER GET /v1/captures/current)\" = 200 ] &&
		[ \"\$(json_get $TMP/body 'd[\"state\"]')\" != running ]" 60 ||
		fail "capture $CAP_ID did not finish in 60 s: $(cat "$TMP/body")"
	T_CAP_END=$(date +%s%N)
	state=$(json_get "$TMP/body" 'd["state"]')
	[ "$state" = "done" ] && break
	[ "$state" = refused ] || fail "capture $CAP_ID ended $state: $(cat "$TMP/body")"
	# refused: whose lock was it? Never the agent's own for its windows.
	ino=$(stat -c %i /run/slideops-profiler.lock 2>/dev/null)
	holder=$(awk -v ino=":$ino\$" '$2 == "FLOCK" && $6 ~ ino { print $5 }' /proc/locks | tr '\n' ' ')
	log "capture $CAP_ID refused: $(json_get "$TMP/body" 'd.get("message", "")') (lock held by: ${holder:-nobody now}); again"
	case " $holder " in *" $DAEMON_PID "*) fail "the agent holds the capture lock for continuous profiling" ;; esac
done
[ "$state" = "done" ] || fail "capture $CAP_ID: $state 3 times: $(cat "$TMP/body")"
log "capture $CAP_ID done in $(((T_CAP_END - T_CAP) / 1000000)) ms: $(json_get "$TMP/body" 'd.get("message", "")')"
during=$(windows >/dev/null; awk -v a="$T_CAP" -v b="$T_CAP_END" '$3 > a && $3 < b' "$TMP/windows.txt" | wc -l)
[ "$during" -ge 1 ] || fail "no window was stored during the 10 s capture: $(cat "$TMP/windows.txt")"
log "$during window(s) stored during the capture"

# --- 1. retention of the seeded entries ------------------------------------------------------------
wait_for "[ \$(windows) -ge 1 ]" $((WIN * 3)) || fail "no window stored $((WIN * 3)) s after the start"
for id in $OLD1 $OLD2; do
	[ ! -e "$STORE/profiles/$id" ] || fail "the 3-day-old continuous entry $id is still on disk"
	[ "$(api "$VIEWER" GET "/v1/profiles/$id")" = 404 ] || fail "the 3-day-old continuous entry $id is still served"
done
[ "$(api "$VIEWER" GET "/v1/profiles/$RECENT")" = 200 ] || fail "the recent continuous entry $RECENT is gone"
[ "$(json_get "$TMP/body" 'd["profile"]["continuous"]')" = true ] || fail "GET $RECENT: $(head -c 300 "$TMP/body")"
[ -e "$STORE/profiles/$LISTED" ] || fail "the listed profile $LISTED of 3 days ago was removed"
log "retention: 3-day-old continuous entries gone, the recent one and the listed one kept"

# --- 3. churn, and the agent's figures before and after ----------------------------------------
wait_for "[ \$(windows) -ge 2 ]" $((WIN * 3)) || fail "fewer than 2 windows $((WIN * 3)) s after the capture"
alive
MAPS0=$(bpf_maps) FDS0=$(nfds) RSS0=$(rss_low) G0=$(gauges)
log "after the warm-up ($(windows) windows): RSS $RSS0 kB, fds $FDS0, maps ${MAPS0:-(no bpftool)}," \
	"process snapshots ${G0% *}, unwind tables ${G0#* } bytes"
T_CHURN=$(date +%s%N) CPU0=$(cpu_ticks)
churn_cg=$(cg_make_unit "$CHURN_UNIT") || exit 1
churn_pid=$(cg_run "$churn_cg" "$CHURN" "$CHURN_RATE" "$CHURN_SECONDS" "$CHURN_MAX") || exit 1
PEAK=$RSS0 RSS_MID=
while kill -0 "$churn_pid" 2>/dev/null; do
	alive
	r=$(rss)
	[ "$r" -gt "$PEAK" ] && PEAK=$r
	# halfway (the low of a window around the middle of the churn)
	[ -z "$RSS_MID" ] && [ $((($(date +%s%N) - T_CHURN) / 1000000000)) -ge $(((CHURN_SECONDS - WIN) / 2)) ] &&
		RSS_MID=$(rss_low)
	[ $((($(date +%s%N) - T_CHURN) / 1000000000)) -lt $((CHURN_SECONDS + 30)) ] ||
		fail "churn did not end $((CHURN_SECONDS + 30)) s after its start"
	sleep 1
done
T_CHURN_END=$(date +%s%N)
churn_out=$(tail -1 "$LIB_STATE/logs/churn.log")
case $churn_out in "started "*", failed 0, in "*) ;; *) fail "churn: $churn_out" ;; esac
STARTS=$(echo "$churn_out" | awk '{ print $2 + 0 }')
[ "$STARTS" -ge $((CHURN_RATE * CHURN_SECONDS / 4)) ] ||
	fail "churn started only $STARTS processes ($churn_out): the machine is too busy to test this"
in_churn=$(windows >/dev/null; awk -v a="$T_CHURN" -v b="$T_CHURN_END" '$3 > a && $3 < b' "$TMP/windows.txt" | wc -l)
CPU_CHURN=$(($(cpu_ticks) - CPU0))
# a window forgets the processes that exited before its end (its sweep), then it is stored:
# one stored after the churn ended has forgotten all of the churn's
wait_for "[ \$(stored_after $T_CHURN_END) -ge 1 ]" $((WIN * 2 + 5)) ||
	fail "no window stored in $((WIN * 2 + 5)) s after the churn: $(tail -3 "$TMP/windows.txt")"
alive
MAPS1=$(bpf_maps) FDS1=$(nfds) RSS1=$(rss_low) G1=$(gauges)
[ "$PEAK" -gt "$RSS1" ] || PEAK=$RSS1
[ -n "$RSS_MID" ] || RSS_MID=$RSS1
log "churn: RSS $RSS0 -> $RSS_MID -> $RSS1 kB (peak $PEAK), fds $FDS0 -> $FDS1, maps (entries/of exited)" \
	"${MAPS0:-?} -> ${MAPS1:-?}, $STARTS process starts in $(((T_CHURN_END - T_CHURN) / 1000000000)) s," \
	"$in_churn windows stored during it, the agent's CPU time $((CPU_CHURN * 1000 / $(getconf CLK_TCK))) ms;" \
	"process snapshots ${G0% *} -> ${G1% *}," \
	"unwind tables ${G0#* } -> ${G1#* } bytes"
[ "$FDS1" -le $((FDS0 + 4)) ] || fail "the agent's open fds grew from $FDS0 to $FDS1 over the churn: $(ls -l "/proc/$DAEMON_PID/fd" | tail -8)"
# What leaks with the processes started grows in both halves of the churn. The agent profiles
# the whole machine: a big program another test starts meanwhile (its symbols, kept while it
# lives) is a step, in one half only. Under ASan the quarantine of freed memory (64 MiB, lib.sh)
# fills and empties between the measures: it is no memory of the agent's, and is allowed for.
RSS_BOUND=$((8 * 1024 * MEM_FACTOR))
[ "$MEM_FACTOR" -gt 1 ] && RSS_BOUND=$((RSS_BOUND + 64 * 1024))
if [ $((RSS1 - RSS0)) -ge "$RSS_BOUND" ]; then
	h1=$((RSS_MID - RSS0)) h2=$((RSS1 - RSS_MID))
	[ "$h1" -lt $((2 * 1024 * MEM_FACTOR)) ] || [ "$h2" -lt $((2 * 1024 * MEM_FACTOR)) ] ||
		fail "the agent's RSS grew by $((RSS1 - RSS0)) kB over the churn ($RSS0 -> $RSS_MID -> $RSS1 kB)," \
			"$((RSS_BOUND / 1024)) MiB or more, in both halves"
	log "churn: RSS grew by $((RSS1 - RSS0)) kB, $h1 then $h2 kB: a step, not a growth with the churn"
fi
# at least one window every 4 (every one takes WIN s and its naming, longer on a loaded machine)
[ "$in_churn" -ge $((CHURN_SECONDS / (4 * WIN))) ] ||
	fail "only $in_churn windows were stored during the $CHURN_SECONDS s of churn: $(cat "$TMP/windows.txt")"
if [ -n "$MAPS0" ] && [ -n "$MAPS1" ]; then
	uw0=$(echo "$MAPS0" | sed -n 's/.*uw_procs=\([0-9]*\)\/.*/\1/p')
	uw1=$(echo "$MAPS1" | sed -n 's/.*uw_procs=\([0-9]*\)\/.*/\1/p')
	uwstale=$(echo "$MAPS1" | sed -n 's/.*uw_procs=[0-9]*\/\([0-9]*\).*/\1/p')
	# processes of other tests come and go too: a margin, but not the churn's thousands
	[ "$uw1" -le $((uw0 + 32)) ] && [ "$uwstale" -le 32 ] ||
		fail "uw_procs holds $uw1 entries ($uwstale of exited processes) after the churn, $uw0 before"
fi
# the symbol snapshots of the exited churners are forgotten (other tests' processes may come)
case "$G0 $G1" in *'?'*) fail "/metrics lacks continuous_processes or continuous_unwind_table_bytes" ;; esac
[ "${G1% *}" -le $((${G0% *} + 32)) ] ||
	fail "continuous profiling holds ${G1% *} process snapshots after the churn, ${G0% *} before"
# the churn's children were sampled (else the churn tested nothing)
seen=0
while read -r id _; do
	v=$(collapsed_value "$STORE/profiles/$id/profile.collapsed" \
		"^Unit churn\\.service;churn;.*churn_child_work" regex)
	seen=$((seen + v))
done <"$TMP/windows.txt"
log "churn: $seen samples in churn_child_work of Unit $CHURN_UNIT"
[ "$seen" -ge 1 ] || fail "no window has a sample of the churn's children (Unit $CHURN_UNIT;churn;...;churn_child_work)"

# --- 1 (end). the entry that expired went with a later window --------------------------------------
wait_for "[ \$(date +%s%N) -gt $EXPIRES_NS ] && [ \$(stored_after $EXPIRES_NS) -ge 1 ]" $((EXPIRE_IN + WIN * 3)) ||
	fail "no window stored after $EXPIRING's hour ended"
wait_for "[ ! -e '$STORE/profiles/$EXPIRING' ]" 2 ||
	fail "the continuous entry $EXPIRING, past its hour, survived a window's store"
[ "$(api "$VIEWER" GET "/v1/profiles/$EXPIRING")" = 404 ] || fail "the expired entry $EXPIRING is still served"
[ -e "$STORE/profiles/$RECENT" ] && [ -e "$STORE/profiles/$LISTED" ] || fail "retention removed $RECENT or $LISTED"
log "retention: $EXPIRING went with the first window stored after its hour"

# --- 4. every window ------------------------------------------------------------------------------
NWIN=$(windows)
[ "$NWIN" -ge 3 ] || fail "only $NWIN windows stored"
"$PYTHON" - "$STORE/profiles" "$TMP/windows.txt" "$WIN" <<'PY' || fail "the windows' metadata or timing"
import json, os, sys
base, win = sys.argv[1], int(sys.argv[3])
rows = [l.split() for l in open(sys.argv[2])]
gaps = []
for i, (wid, start, created) in enumerate(rows):
    d = os.path.join(base, wid)
    m = json.load(open(os.path.join(d, "meta.json")))
    want = {"continuous": True, "service": "server", "question": "cpu", "duration_seconds": win}
    for k, v in want.items():
        assert m.get(k) == v, "window %s: %s is %r, want %r" % (wid, k, m.get(k), v)
    assert m["target"]["kind"] == "server", "window %s: target %r" % (wid, m["target"])
    for f in ("profile.pb.gz", "profile.collapsed", "summary.json"):
        assert os.path.getsize(os.path.join(d, f)) > 0, "window %s: %s is empty" % (wid, f)
    # drawn from the pprof when asked (docs/continuous.md), not stored with every window
    assert not os.path.exists(os.path.join(d, "flamegraph.html")), "window %s has a flamegraph.html" % wid
    assert open(os.path.join(d, "profile.pb.gz"), "rb").read(2) == b"\x1f\x8b", wid
    json.load(open(os.path.join(d, "summary.json")))
    if i:
        gap = (int(start) - int(rows[i - 1][1])) / 1e9
        gaps.append(gap)
        # a window samples win s after its start: the next one cannot start earlier
        assert gap >= win - 0.05, "window %s started %.2f s after %s, less than %d s" % (
            wid, gap, rows[i - 1][0], win)
# a window's naming takes a fraction of a second, seconds on a loaded machine; a stall (or a
# window lost) leaves a gap of several windows
gaps_sorted = sorted(gaps)
median = gaps_sorted[len(gaps) // 2] if gaps else win
assert median <= 2 * win and max(gaps or [win]) <= 6 * win, \
    "windows %s s apart (median %.2f, want at most %d; longest at most %d)" % (
        " ".join("%.2f" % g for g in gaps), median, 2 * win, 6 * win)
print("continuous: %d windows, starts %s s apart" % (len(rows), " ".join("%.2f" % g for g in gaps)),
      file=sys.stderr)
PY
while read -r id _; do
	v=$(collapsed_value "$STORE/profiles/$id/profile.collapsed" \
		"^Unit billing-worker\\.service;hot2;.*build_report" regex)
	[ "$v" -ge 1 ] || fail "window $id has no stack of Unit $UNIT;hot2;...;build_report: $(sort -t' ' -k2 -nr "$STORE/profiles/$id/profile.collapsed" | head -3 | cut -c1-200)"
done <"$TMP/windows.txt"
log "every window has Unit $UNIT;hot2;...;build_report"
grep -q 'continuous profiling: window .* not stored' "$DLOG" &&
	fail "a window was not stored: $(grep 'continuous profiling: window' "$DLOG" | head -3)"

# API: never listed, found by id, downloadable
code=$(api "$VIEWER" GET "/v1/profiles?limit=500")
[ "$code" = 200 ] || fail "GET /v1/profiles: HTTP $code"
json_get "$TMP/body" '" ".join(p["id"] for p in d["profiles"])' >"$TMP/listed.txt"
for id in $(cut -d' ' -f1 "$TMP/windows.txt") $RECENT; do
	grep -qw "$id" "$TMP/listed.txt" && fail "continuous entry $id is listed in GET /v1/profiles"
done
grep -qw "$CAP_ID" "$TMP/listed.txt" || fail "the capture $CAP_ID is not listed: $(cat "$TMP/listed.txt")"
grep -qw "$LISTED" "$TMP/listed.txt" || fail "the seeded profile $LISTED is not listed"
[ "$(json_get "$TMP/body" 'd["total"]')" = 2 ] || fail "GET /v1/profiles lists $(json_get "$TMP/body" 'd["total"]'), want 2 (the capture and $LISTED)"
# the server capture's retention group is "server" (its page lists it there), never "this server"
[ "$(api "$VIEWER" GET "/v1/profiles?service=server")" = 200 ] &&
	json_get "$TMP/body" '" ".join(p["id"] for p in d["profiles"])' | grep -qw "$CAP_ID" ||
	fail "the server capture $CAP_ID is not among the profiles of service=server: $(cat "$TMP/body")"
W2=$(sed -n 2p "$TMP/windows.txt" | cut -d' ' -f1)
[ "$(api "$VIEWER" GET "/v1/profiles/$W2")" = 200 ] || fail "GET /v1/profiles/$W2: $(cat "$TMP/body")"
[ "$(json_get "$TMP/body" 'd["profile"]["continuous"]')" = true ] &&
	[ "$(json_get "$TMP/body" 'd["profile"]["id"]')" = "$W2" ] &&
	[ "$(json_get "$TMP/body" 'd["summary"]["target"]["kind"]')" = server ] ||
	fail "GET /v1/profiles/$W2: $(head -c 400 "$TMP/body")"
[ "$(api "$VIEWER" GET "/v1/profiles/$W2/download?format=collapsed")" = 200 ] || fail "download of window $W2: $(cat "$TMP/body")"
cmp -s "$TMP/body" "$STORE/profiles/$W2/profile.collapsed" || fail "the collapsed download of $W2 differs from the store's"
[ "$(api "$VIEWER" GET "/v1/profiles/$W2/flamegraph")" = 200 ] || fail "flame graph of window $W2: $(head -c 300 "$TMP/body")"
grep -q build_report "$TMP/body" || fail "the flame graph of window $W2 lacks build_report"
curl -sf "$API/metrics" >"$TMP/metrics" || fail "GET /metrics"
stored=$(awk '$1 == "slideops_profiler_continuous_windows_total{result=\"stored\"}" { print $2 }' "$TMP/metrics")
failed=$(awk '$1 == "slideops_profiler_continuous_windows_total{result=\"failed\"}" { print $2 }' "$TMP/metrics")
[ "${stored:-0}" -ge "$NWIN" ] && [ "${failed:-1}" = 0 ] ||
	fail "/metrics: continuous windows stored ${stored:-none}, failed ${failed:-none}; $NWIN on disk"

# --- 5. deliveries ----------------------------------------------------------------------------------
delivered() { "$PYTHON" -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$TMP/deliveries.jsonl" 2>/dev/null; }
all_delivered()
{
	local d id
	d=" $(delivered) "
	for id in $(cut -d' ' -f1 "$TMP/windows.txt") "$CAP_ID"; do
		case $d in *" $id "*) ;; *) return 1 ;; esac
	done
}
windows >/dev/null
wait_for all_delivered 30 || fail "not delivered: $(cut -d' ' -f1 "$TMP/windows.txt" | grep -vwF "$(delivered | tr ' ' '\n')" | tr '\n' ' ')"
"$PYTHON" - "$TMP/deliveries.jsonl" "$TMP/windows.txt" "$CAP_ID" "$SEEDED" <<'PY' || fail "deliveries"
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
wins = [l.split()[0] for l in open(sys.argv[2])]
cap, seeded = sys.argv[3], set(sys.argv[4].split())
n = collections.Counter(r["id"] for r in recs)
for r in recs:
    assert not r["duplicate"] and r["idempotency_key"] == r["id"], r
    assert r["id"] not in seeded, "a seeded entry was delivered: %s" % r["id"]
by_id = {r["id"]: r for r in recs}
for w in wins:
    assert n[w] == 1, "window %s delivered %d times" % (w, n[w])
    m = by_id[w]["metadata"]
    assert m.get("continuous") is True, "window %s delivered without continuous: true: %s" % (w, m)
    assert m["question"] == "cpu" and m["target"]["kind"] == "server", m
    assert m.get("requested_by") == "continuous", "window %s requested_by %r" % (w, m.get("requested_by"))
assert n[cap] == 1 and by_id[cap]["metadata"].get("continuous") is False, by_id.get(cap)
others = set(n) - set(wins) - {cap}
# a window stored after windows.txt was read may be there too; nothing else
print("deliveries: %d windows once each with continuous true, the capture with false, %d newer" %
      (len(wins), len(others)), file=sys.stderr)
PY

# --- 6. SIGTERM -----------------------------------------------------------------------------------
agent_stop TERM
[ "$DAEMON_RC" = 0 ] || fail "SIGTERM: exit $DAEMON_RC: $(tail -5 "$DLOG")"
ls -A "$STORE/captures" 2>/dev/null | grep -q . && fail "left in $STORE/captures: $(ls -A "$STORE/captures")"
ls -A "$STORE/profiles" | grep -q '^\.tmp-' && fail "a .tmp- entry is left in the store: $(ls -A "$STORE/profiles")"
log "$(windows) windows stored in $((($(date +%s%N) - T_READY) / 1000000000)) s; all continuous checks passed"
exit 0
