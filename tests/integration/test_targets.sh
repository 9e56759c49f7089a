#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Every kind of TARGET (SPEC 5) profiles the right processes, for 2 s each:
#   --pid PID                     hot2                       -> build_report, "process PID"
#   --unit billing-worker.service hot2 in system.slice/...   -> build_report, "Unit billing-worker.service"
#   --unit billing-worker         the same unit, as systemctl takes it
#   --container <12-hex prefix>   spin in a kubepods cri-containerd cgroup -> checkout_loop
#   --service <pod uid, 8 chars>  the same pod container (no Kubernetes: Service <uid8>)
#   --service billing             a config rule (--config FILE) that matches the unit
# checked through summary.json (target, answer, groups, top function); `check` resolves
# short container ids and config rules by exe glob and comm; unknown targets fail with one
# line that lists what exists.
. "$(dirname "$0")/lib.sh"

need_root
need_bin

POD_UID=7c3e9a51-2b4d-4f60-9e8a-1d2c3b4a5f60
CONTAINER_ID=5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b
UNIT=billing-worker.service
DURATION=2
LOCK=/run/slideops-profiler.lock

# workload: lib.sh
HOT2=$(workload hot2) || exit 1
SPIN=$(workload spin) || exit 1

unit_cg=$(cg_make_unit "$UNIT") || exit 1
hot2_pid=$(cg_run "$unit_cg" "$HOT2") || exit 1
pod_cg=$(cg_make_pod burstable "$POD_UID" "$CONTAINER_ID") || exit 1
# spin under a name of its own (comm "tgt-podspin"), so a config rule can name it and no
# other spin on the machine matches that rule.
cp "$SPIN" "$TMP/tgt-podspin"
spin_pid=$(cg_run "$pod_cg" "$TMP/tgt-podspin") || exit 1
log "hot2 pid $hot2_pid in $unit_cg; spin pid $spin_pid in $pod_cg"
grep -qx "0::/$unit_cg" "/proc/$hot2_pid/cgroup" || fail "hot2 is not in $unit_cg"
grep -qx "0::/$pod_cg" "/proc/$spin_pid/cgroup" || fail "spin is not in $pod_cg"

# A process outside any unit or pod, for the config rules by exe and comm: a copy of spin
# named "ledger-job" (comm "ledger-job").
mkdir -p "$TMP/opt/ledger/bin"
cp "$SPIN" "$TMP/opt/ledger/bin/ledger-job"
"$TMP/opt/ledger/bin/ledger-job" </dev/null >/dev/null 2>&1 &
ledger_pid=$!
echo "$ledger_pid" >>"$LIB_STATE/pids"
wait_for "[ \"\$(cat /proc/$ledger_pid/comm 2>/dev/null)\" = ledger-job ]" 10 ||
	fail "ledger-job did not start"

cat >"$TMP/profiler.yaml" <<EOF
services:
  - name: billing
    match:
      unit: $UNIT
  - name: ledger
    match:
      exe: "*/opt/ledger/bin/*"
  - name: spinner
    match:
      comm: tgt-podspin
EOF
# Rules are tried in order, first match wins: the rule by comm gets a file of its own.
cat >"$TMP/by-comm.yaml" <<EOF
services:
  - name: ledger-by-comm
    match:
      comm: ledger-job
EOF
sleep 0.5	# the workloads are at full speed before sampling starts

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# Another session's capture holds the lock for a while: wait for it rather than fail.
wait_lock() { wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"; }

# capture_ok NAME ARGS...: a capture of DURATION seconds into $TMP/NAME that must exit 0 and
# write summary.json.
capture_ok()
{
	local name=$1 rc
	shift
	wait_lock
	timeout -k 5 60 "$BIN" capture "$@" --question cpu --duration "$DURATION" \
		--out "$TMP/$name" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	if [ "$rc" -ne 0 ] || [ ! -s "$TMP/$name/summary.json" ]; then
		sed 's/^/    stdout: /' "$TMP/$name.stdout" >&2
		sed 's/^/    stderr: /' "$TMP/$name.stderr" >&2
		bad "$name: capture $* exited $rc"
		return 1
	fi
	sed 's/^/    '"$name"': /' "$TMP/$name.stdout" | grep -v '^\s*'"$name"': *$' >&2
	return 0
}

# check_summary NAME KIND DESCRIPTION WHO TOPFN PID: summary.json's target, answer and groups.
# WHO is what the answer names ("process 42 (hot2)", "Unit billing-worker.service").
check_summary()
{
	"$PYTHON" - "$TMP/$1/summary.json" "$2" "$3" "$4" "$5" "$6" "$DURATION" <<'EOF'
import json, re, sys
path, kind, desc, who, topfn, pid, duration = sys.argv[1:]
pid, duration = int(pid), int(duration)
s = json.load(open(path))
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)
check(s.get("target") == {"kind": kind, "description": desc},
      "target is %r, expected kind %r description %r" % (s.get("target"), kind, desc))
ans = s.get("answer", "")
m = re.match(r"^Over %d seconds, (.+) used ([0-9]+)%% of the CPU time on this server, most of "
             r"it in ([^ ]+)\.$" % duration, ans)
if m:
    check(m.group(1) == who, "answer names %r, expected %r: %r" % (m.group(1), who, ans))
    check(m.group(3) == topfn, "answer says most of it in %r, expected %r" % (m.group(3), topfn))
else:
    check(False, "answer does not match the expected sentence: %r" % ans)
check(s.get("sample_count", 0) >= 20, "only %r samples" % s.get("sample_count"))
tops = s.get("top_functions") or [{}]
check(tops[0].get("name") == topfn, "top function is %r, expected %r" % (tops[0].get("name"), topfn))
pids = sorted(p["pid"] for g in s.get("groups", []) for p in g.get("processes", []))
check(pids == [pid], "the profile holds processes %r, expected only %d" % (pids, pid))
check(not [n for n in s.get("notes", []) if "exited" in n or "few samples" in n],
      "unexpected notes: %r" % s.get("notes"))
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
}

# --- the captures --------------------------------------------------------------------------
if capture_ok pid --pid "$hot2_pid"; then
	check_summary pid pids "process $hot2_pid" "process $hot2_pid (hot2)" build_report "$hot2_pid" ||
		bad "pid: summary.json checks failed"
fi
if capture_ok unit --unit "$UNIT"; then
	check_summary unit unit "Unit $UNIT" "Unit $UNIT" build_report "$hot2_pid" ||
		bad "unit: summary.json checks failed"
fi
# "billing-worker" names billing-worker.service; the summary and answer name the unit itself.
if capture_ok unit-short --unit billing-worker; then
	check_summary unit-short unit "Unit $UNIT" "Unit $UNIT" build_report "$hot2_pid" ||
		bad "unit-short (--unit billing-worker): summary.json checks failed"
fi
if capture_ok container --container "${CONTAINER_ID:0:12}"; then
	check_summary container container "Container ${CONTAINER_ID:0:12}" \
		"Container ${CONTAINER_ID:0:12}" checkout_loop "$spin_pid" ||
		bad "container: summary.json checks failed"
fi
if capture_ok service --service "${POD_UID:0:8}"; then
	check_summary service service "Service ${POD_UID:0:8}" "Service ${POD_UID:0:8}" \
		checkout_loop "$spin_pid" || bad "service: summary.json checks failed"
fi
if capture_ok service-rule --service billing --config "$TMP/profiler.yaml"; then
	check_summary service-rule service "Service billing" "Service billing" build_report \
		"$hot2_pid" || bad "service-rule: summary.json checks failed"
fi

# --- check: which processes a target resolves to --------------------------------------------
# expect_pids NAME PIDS ARGS...: `check ARGS --json` lists exactly the processes PIDS.
expect_pids()
{
	local name=$1 want=$2 got
	shift 2
	timeout -k 5 30 "$BIN" check "$@" --json >"$TMP/$name.json" 2>"$TMP/$name.stderr"
	got=$(json_get "$TMP/$name.json" '" ".join(str(p) for p in sorted(p["pid"] for p in d["processes"]))') ||
		{ bad "$name: check $* printed no JSON: $(tail -2 "$TMP/$name.stderr")"; return; }
	[ "$got" = "$want" ] || bad "$name: check $* resolved to processes '$got', expected '$want'"
}
expect_pids container-full "$spin_pid" --container "$CONTAINER_ID"
expect_pids container-4 "$spin_pid" --container "${CONTAINER_ID:0:4}"
expect_pids unit-both "$hot2_pid" --unit billing-worker
expect_pids rule-exe "$ledger_pid" --service ledger --config "$TMP/profiler.yaml"
expect_pids rule-comm "$ledger_pid" --service ledger-by-comm --config "$TMP/by-comm.yaml"
# The unit rule makes the unit's process Service billing.
expect_pids rule-unit "$hot2_pid" --service billing --config "$TMP/profiler.yaml"

# --- unknown targets: exit 1 and one line that says what exists ------------------------------
# expect_unknown NAME PATTERN ARGS...: `ARGS` (a whole command line) exits 1, prints nothing on
# stdout and exactly one stderr line matching the extended regular expression PATTERN.
expect_unknown()
{
	local name=$1 pattern=$2 rc
	shift 2
	timeout -k 5 30 "$BIN" "$@" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	if [ "$rc" -ne 1 ]; then
		bad "$name: '$*' exited $rc, expected 1"
	elif [ -s "$TMP/$name.stdout" ]; then
		bad "$name: '$*' printed on stdout: $(head -2 "$TMP/$name.stdout")"
	elif [ "$(wc -l <"$TMP/$name.stderr")" -ne 1 ]; then
		bad "$name: '$*' printed $(wc -l <"$TMP/$name.stderr") lines on stderr, expected 1"
	elif ! grep -qE -- "$pattern" "$TMP/$name.stderr"; then
		bad "$name: '$*': '$(cat "$TMP/$name.stderr")' does not match /$pattern/"
	else
		log "$name: ok: $(cat "$TMP/$name.stderr")"
		return 0
	fi
	sed 's/^/    stderr: /' "$TMP/$name.stderr" >&2
}
P='^slideops-profiler: '
LIST_UNIT='(.*, )?billing-worker\.service(, .*)?$'
expect_unknown unit-check "${P}no process of Unit nosuch\.service is running; units seen on this server: $LIST_UNIT" \
	check --unit nosuch.service
expect_unknown unit-plan "${P}no process of Unit nosuch\.service is running; units seen on this server: $LIST_UNIT" \
	plan --unit nosuch.service --question cpu --duration 1 --out "$TMP/never1"
expect_unknown unit-capture "${P}no process of Unit nosuch\.service is running; units seen on this server: $LIST_UNIT" \
	capture --unit nosuch.service --question cpu --duration 1 --out "$TMP/never2"
expect_unknown service-check "${P}no process of Service nosuch is running; services seen on this server: (.*, )?${POD_UID:0:8}(, .*)?\$" \
	check --service nosuch
expect_unknown service-rule-check "${P}no process of Service nosuch is running; services seen on this server: (.*, )?billing(, .*)?\$" \
	check --service nosuch --config "$TMP/profiler.yaml"
# A pod container keeps its Kubernetes name (Service <pod uid>) even when a rule matches it.
expect_unknown rule-pod "${P}no process of Service spinner is running; services seen on this server: (.*, )?${POD_UID:0:8}(, .*)?\$" \
	check --service spinner --config "$TMP/profiler.yaml"
expect_unknown container-3 "${P}no process of Container ${CONTAINER_ID:0:3} is running; containers seen on this server: " \
	check --container "${CONTAINER_ID:0:3}"
expect_unknown container-capture "${P}no process of Container ffffeeee is running; containers seen on this server: " \
	capture --container ffffeeee --question cpu --duration 1 --out "$TMP/never3"
nopid=$(($(cat /proc/sys/kernel/pid_max) + 1))
expect_unknown pid-check "${P}no process with pid $nopid is running\$" check --pid "$nopid"
expect_unknown pid-capture "${P}no process with pid $nopid is running\$" \
	capture --pid "$hot2_pid" --pid "$nopid" --question cpu --duration 1 --out "$TMP/never4"
for d in never1 never2 never3 never4; do
	[ ! -e "$TMP/$d" ] || bad "a refused capture or plan created its --out directory $d"
done

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"
