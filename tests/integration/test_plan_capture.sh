#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `plan` says step by step what `capture` will do, and `capture` does exactly that (SPEC 5):
# for --server and for --pid, `plan ARGS` prints "1. text" ... "n. text" and `capture ARGS`
# (stdout not a terminal) prints "[i/n] text" once per step, the same texts in the same order.
# The first step names this binary with its size and sha256; the sampling step names the
# target, frequency and duration; the last names --out DIR. A unit's plan counts its processes.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd sha256sum timeout
need_bin

DURATION=2
LOCK=/run/slideops-profiler.lock
SPIN=$OUTPUT/workloads/spin
if [ ! -x "$SPIN" ]; then
	SPIN=$TMP/spin
	cc -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE "$LIB_DIR/../workloads/spin.c" -o "$SPIN" \
		-lpthread || fail "cannot build workload spin"
fi
unit_cg=$(cg_make_unit plan-capture-test.service) || exit 1
spin_pid=$(cg_run "$unit_cg" "$SPIN") || exit 1
spin2_pid=$(cg_run "$unit_cg" "$SPIN") || exit 1
log "spin pids $spin_pid $spin2_pid in $unit_cg"

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

bin_path=$(readlink -f "$BIN")
bin_sha=$(sha256sum "$bin_path" | cut -c1-16)
bin_mb=$(stat -c %s "$bin_path" | awk '{ printf "%.1f", $1 / 1e6 }')

# agree NAME ARGS...: plan and capture with the same ARGS (and --out $TMP/NAME) agree step for
# step; the steps are left in $TMP/NAME.steps, one a line.
agree()
{
	local name=$1 rc
	shift
	local args=("$@" --question cpu --duration "$DURATION" --out "$TMP/$name")

	timeout -k 5 30 "$BIN" plan "${args[@]}" >"$TMP/$name.plan" 2>"$TMP/$name.plan.err"
	rc=$?
	[ "$rc" -eq 0 ] || { bad "$name: plan ${args[*]} exited $rc: $(tail -1 "$TMP/$name.plan.err")"; return 1; }
	[ ! -e "$TMP/$name" ] || bad "$name: plan created --out $TMP/$name"
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	timeout -k 5 60 "$BIN" capture "${args[@]}" >"$TMP/$name.capture" 2>"$TMP/$name.capture.err"
	rc=$?
	[ "$rc" -eq 0 ] || { bad "$name: capture ${args[*]} exited $rc: $(tail -1 "$TMP/$name.capture.err")"; return 1; }
	sed 's/^/    plan: /' "$TMP/$name.plan" >&2
	sed 's/^/    capture: /' "$TMP/$name.capture" >&2

	"$PYTHON" - "$TMP/$name.plan" "$TMP/$name.capture" "$TMP/$name.steps" >"$TMP/$name.cmp" <<'EOF' ||
import re, sys
plan_path, cap_path, steps_path = sys.argv[1:]
errors = []
plan = open(plan_path).read().split("\n")
if plan and plan[-1] == "":
    plan.pop()
steps = []
for i, line in enumerate(plan, 1):
    m = re.match(r"^(\d+)\. (.+)$", line)
    if not m or int(m.group(1)) != i:
        errors.append("plan line %d is not '%d. text': %r" % (i, i, line))
        continue
    steps.append(m.group(2))
if len(steps) < 3:
    errors.append("plan has %d steps" % len(steps))
n = len(steps)
progress = [l for l in open(cap_path).read().split("\n") if l.startswith("[")]
got = []
for line in progress:
    m = re.match(r"^\[(\d+)/(\d+)\] (.+)$", line)
    if not m:
        errors.append("capture progress line is not '[i/n] text': %r" % line)
        continue
    if int(m.group(2)) != n:
        errors.append("capture says %s steps, plan has %d: %r" % (m.group(2), n, line))
    if int(m.group(1)) != len(got) + 1:
        errors.append("capture step %s out of order (expected %d): %r" % (m.group(1), len(got) + 1, line))
    got.append(m.group(3))
if got != steps:
    errors.append("capture's steps differ from plan's:")
    for i in range(max(len(got), len(steps))):
        p = steps[i] if i < len(steps) else "(none)"
        c = got[i] if i < len(got) else "(none)"
        if p != c:
            errors.append("  step %d: plan    %r" % (i + 1, p))
            errors.append("  step %d: capture %r" % (i + 1, c))
with open(steps_path, "w") as f:
    f.write("\n".join(steps) + "\n")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
		{ cat "$TMP/$name.cmp" >&2; bad "$name: plan and capture disagree (above)"; return 1; }
	[ -s "$TMP/$name/summary.json" ] || bad "$name: capture wrote no summary.json"

	# What the steps say.
	local first last
	first=$(head -1 "$TMP/$name.steps")
	last=$(tail -1 "$TMP/$name.steps")
	case $first in
	*"$bin_path ($bin_mb MB, sha256 $bin_sha"*) ;;
	*) bad "$name: step 1 does not name $bin_path ($bin_mb MB, sha256 $bin_sha...): $first" ;;
	esac
	case $last in
	*"profile.pb.gz, profile.collapsed, flamegraph.html and summary.json to $TMP/$name."*) ;;
	*) bad "$name: the last step does not write the four files to --out $TMP/$name: $last" ;;
	esac
	grep -q "about 99 times a second for $DURATION seconds" "$TMP/$name.steps" ||
		bad "$name: no step samples about 99 times a second for $DURATION seconds"
	return 0
}

if agree server --server; then
	grep -q '^Sample every process on this server ' "$TMP/server.steps" ||
		bad "server: no step 'Sample every process on this server ...'"
fi
if agree pid --pid "$spin_pid"; then
	grep -q "^Sample process $spin_pid " "$TMP/pid.steps" ||
		bad "pid: no step 'Sample process $spin_pid ...'"
fi
if agree pids --pid "$spin_pid" --pid "$spin2_pid"; then
	grep -q "^Sample 2 processes " "$TMP/pids.steps" || bad "pids: no step 'Sample 2 processes ...'"
fi

# A unit's plan counts its processes (plan only: the captures above cover the agreement).
timeout -k 5 30 "$BIN" plan --unit plan-capture-test.service --question cpu --duration 5 \
	--out "$TMP/unit" >"$TMP/unit.plan" 2>&1 || bad "plan --unit exited $?: $(tail -1 "$TMP/unit.plan")"
grep -qE '^[0-9]+\. Sample the 2 processes of Unit plan-capture-test\.service about 99 times a second for 5 seconds' \
	"$TMP/unit.plan" || bad "plan --unit does not sample 'the 2 processes of Unit ...': $(cat "$TMP/unit.plan")"

# --freq shows in the plan.
timeout -k 5 30 "$BIN" plan --server --question cpu --duration 1 --freq 49 --out "$TMP/f" \
	>"$TMP/freq.plan" 2>&1 || bad "plan --freq 49 exited $?"
grep -qE '^[0-9]+\. Sample every process on this server about 49 times a second for 1 second,' \
	"$TMP/freq.plan" || bad "plan --freq 49 --duration 1: $(grep Sample "$TMP/freq.plan")"

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"
