#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The verification notes of a capture (SPEC 5, docs/files.md "Notes"), printed after "Notes:"
# and kept in summary.json "notes":
#   - a --pid target that exits mid-capture: "Process PID (spin) exited during the capture, about
#     N s after sampling started; ...", and when every process of the target exited, "The target
#     is no longer running: ..."; the capture still exits 0 with a profile go tool pprof reads
#   - an idle target (sleep): "Very few samples: the process was almost idle. ...", and for a
#     --service, "the Service"
#   - a stripped copy of spin: "Many native frames have no names, because the binaries were built
#     without symbols (N% of the samples)." and summary.json "stripped_binaries" lists it with
#     its build id; the unstripped spin never gets that note nor a stripped_binaries entry
. "$(dirname "$0")/lib.sh"

need_root
need_cmd strip readelf timeout
need_bin

LOCK=/run/slideops-profiler.lock
POD_UID=3f9d2c71-8a4b-4e5f-a6b7-c8d9e0f1a2b3
SPIN=$(workload spin) || exit 1
need_go

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# bg CMD...: starts CMD in the background as a child of this shell, which reaps it as soon as
# it exits (not in a $(...) subshell: the orphan would stay a zombie until PID 1 reaps it).
# Sets BG_PID once CMD runs; cleanup kills it.
bg() { bg_start "$@"; }

# capture NAME DURATION ARGS...: runs capture ARGS in the background into $TMP/NAME; sets
# CAP_PID and returns once it samples. finish NAME waits for it; its status is in CAP_RC.
capture()
{
	local name=$1 duration=$2
	shift 2
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	timeout -k 5 60 "$BIN" capture "$@" --question cpu --duration "$duration" --out "$TMP/$name" \
		</dev/null >"$TMP/$name.stdout" 2>"$TMP/$name.stderr" &
	CAP_PID=$!
	wait_for "grep -q '^\[3/' '$TMP/$name.stdout' || ! kill -0 $CAP_PID 2>/dev/null" 30 ||
		fail "$name: the capture did not start sampling within 30 s"
}
finish()
{
	wait "$CAP_PID"
	CAP_RC=$?
	sed 's/^/    '"$1"': /' "$TMP/$1.stdout" >&2
	if [ "$CAP_RC" -ne 0 ] || [ ! -s "$TMP/$1/summary.json" ]; then
		sed 's/^/    '"$1"' stderr: /' "$TMP/$1.stderr" >&2
		bad "$1: capture exited $CAP_RC"
		return 1
	fi
	return 0
}

# finished NAME: finish NAME, then its notes (notes) into $TMP/NAME.notes and on stderr; returns 1
# when the capture failed.
finished()
{
	finish "$1" || return 1
	notes "$1" >"$TMP/$1.notes" || bad "$1: notes printed and in summary.json differ"
	sed 's/^/    note: /' "$TMP/$1.notes" >&2
}

# killed_during NAME DURATION PID ARGS...: capture NAME DURATION ARGS, PID killed 1 s after
# sampling started; then finished NAME.
killed_during()
{
	local name=$1 duration=$2 victim=$3
	shift 3
	capture "$name" "$duration" "$@"
	sleep 1
	kill -KILL "$victim"
	finished "$name"
}

# notes NAME: the capture's notes from summary.json, one a line; also checks that the printed
# output lists the same notes after "Notes:".
notes()
{
	"$PYTHON" - "$TMP/$1/summary.json" "$TMP/$1.stdout" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read().split("\n")
notes = s.get("notes", [])
printed = []
if "Notes:" in out:
    for line in out[out.index("Notes:") + 1:]:
        if not line.startswith("  - "):
            break
        printed.append(line[4:])
print("\n".join(notes))
if printed != notes:
    sys.stderr.write("printed notes %r differ from summary.json notes %r\n" % (printed, notes))
    sys.exit(1)
EOF
}

# has_note NAME ERE: some note of NAME matches the extended regular expression ERE (whole line).
has_note() { notes "$1" | grep -qxE -- "$2"; }

EXIT_RE='Process %s \(spin\) exited during the capture, about ([0-3]) s after sampling started; the profile holds what it did until then\.'
GONE='The target is no longer running: every process of it exited during the capture.'
STRIPPED_RE='Many native frames have no names, because the binaries were built without symbols \(([0-9]+)% of the samples\)\.'

# --- a target process exits mid-capture ----------------------------------------------------
bg "$SPIN"; a=$BG_PID
bg "$SPIN"; b=$BG_PID
if killed_during exit-one 4 "$a" --pid "$a" --pid "$b"; then
	# shellcheck disable=SC2059
	grep -qxE "$(printf "$EXIT_RE" "$a")" "$TMP/exit-one.notes" ||
		bad "exit-one: no note that process $a (spin) exited about 1 s after sampling started (0-3 s)"
	grep -q "Process $b " "$TMP/exit-one.notes" && bad "exit-one: process $b is noted though it ran on"
	grep -qxF "$GONE" "$TMP/exit-one.notes" && bad "exit-one: 'no longer running' though $b ran on"
	grep -qE "$STRIPPED_RE" "$TMP/exit-one.notes" && bad "exit-one: spin (with symbols) got the stripped note"
	[ "$(json_get "$TMP/exit-one/summary.json" 'd["stripped_binaries"]')" = "[]" ] ||
		bad "exit-one: spin (with symbols) is in stripped_binaries"
fi

bg "$SPIN"; c=$BG_PID
if killed_during exit-all 4 "$c" --pid "$c"; then
	# shellcheck disable=SC2059
	grep -qxE "$(printf "$EXIT_RE" "$c")" "$TMP/exit-all.notes" ||
		bad "exit-all: no note that process $c (spin) exited about 1 s after sampling started (0-3 s)"
	grep -qxF "$GONE" "$TMP/exit-all.notes" || bad "exit-all: no note '$GONE'"
	ans=$(json_get "$TMP/exit-all/summary.json" 'd["answer"]')
	[[ $ans =~ ^Over\ 4\ seconds,\ process\ $c\ \(spin\)\ used\ [0-9]+%\ of\ the\ CPU\ time\ on\ this\ server,\ most\ of\ it\ in\ checkout_loop\.$ ]] ||
		bad "exit-all: answer '$ans'"
	"$GO" tool pprof -top -symbolize=none "$TMP/exit-all/profile.pb.gz" >"$TMP/pprof.top" 2>"$TMP/pprof.err" ||
		bad "exit-all: go tool pprof -top cannot read the profile: $(tail -2 "$TMP/pprof.err")"
	grep -q checkout_loop "$TMP/pprof.top" || bad "exit-all: pprof -top has no checkout_loop"
fi

# A process that exited but that its parent has not reaped yet (a zombie) has exited too: here
# its parent (sh, exec'd into sleep) never reaps it.
sh -c '"$1" </dev/null >/dev/null 2>&1 & echo $! >"$2"; exec sleep 100' zparent "$SPIN" "$TMP/z.pid" &
echo $! >>"$LIB_STATE/pids"
wait_for "[ -s '$TMP/z.pid' ]" 10 || fail "the zombie's parent did not start"
z=$(cat "$TMP/z.pid")
echo "$z" >>"$LIB_STATE/pids"
if killed_during exit-zombie 3 "$z" --pid "$z"; then
	grep -q '^State:.*Z' "/proc/$z/status" 2>/dev/null || log "exit-zombie: note: $z is not a zombie (reaped?)"
	# shellcheck disable=SC2059
	grep -qxE "$(printf "$EXIT_RE" "$z")" "$TMP/exit-zombie.notes" ||
		bad "exit-zombie: no note that process $z (spin), killed 1 s in but not yet reaped, exited"
	grep -qxF "$GONE" "$TMP/exit-zombie.notes" || bad "exit-zombie: no note '$GONE'"
fi

# --- idle targets ------------------------------------------------------------------------------
IDLE_RE='Very few samples: %s was almost idle\. Capture again while it is under the load you want to understand\.'
bg sleep 100; s=$BG_PID
capture idle-pid 2 --pid "$s"
if finished idle-pid; then
	# shellcheck disable=SC2059
	grep -qxE "$(printf "$IDLE_RE" 'the process')" "$TMP/idle-pid.notes" ||
		bad "idle-pid: no note 'Very few samples: the process was almost idle. ...'"
	grep -q 'exited during the capture' "$TMP/idle-pid.notes" && bad "idle-pid: the sleeping process is noted as exited"
fi

pod_cg=$(cg_make_pod besteffort "$POD_UID") || exit 1
cg_run "$pod_cg" sleep 100 >/dev/null || exit 1
capture idle-service 2 --service "${POD_UID:0:8}"
if finished idle-service; then
	# shellcheck disable=SC2059
	grep -qxE "$(printf "$IDLE_RE" 'the Service')" "$TMP/idle-service.notes" ||
		bad "idle-service: no note 'Very few samples: the Service was almost idle. ...'"
fi

# --- a stripped binary -----------------------------------------------------------------------
mkdir -p "$TMP/bin"
cp "$SPIN" "$TMP/bin/spin-stripped"
strip "$TMP/bin/spin-stripped" || fail "strip failed"
readelf -S "$TMP/bin/spin-stripped" | grep -q '\.symtab' && fail "spin-stripped still has .symtab"
build_id=$(readelf -n "$TMP/bin/spin-stripped" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)/\1/p')
[ -n "$build_id" ] || fail "spin-stripped has no GNU build id"
bg "$TMP/bin/spin-stripped"; st=$BG_PID
capture stripped 2 --pid "$st"
if finished stripped; then
	pct=$(sed -nE "s/^$STRIPPED_RE\$/\\1/p" "$TMP/stripped.notes")
	if [ -z "$pct" ]; then
		bad "stripped: no note 'Many native frames have no names, ... (N% of the samples).'"
	elif [ "$pct" -lt 10 ] || [ "$pct" -gt 100 ]; then
		bad "stripped: the note says $pct% of the samples (expected 10-100)"
	fi
	"$PYTHON" - "$TMP/stripped/summary.json" "$TMP/bin/spin-stripped" "$build_id" "$SPIN" <<'EOF' ||
import json, sys
s = json.load(open(sys.argv[1]))
path, build_id, unstripped = sys.argv[2:]
sb = s.get("stripped_binaries", [])
mine = [b for b in sb if b.get("path") == path]
errors = []
if not mine:
    errors.append("stripped_binaries has no %s: %r" % (path, sb))
else:
    b = mine[0]
    if not (isinstance(b.get("share"), (int, float)) and 1 <= b["share"] <= 100):
        errors.append("share of %s is %r, expected 1-100" % (path, b.get("share")))
    if b.get("build_id") != build_id:
        errors.append("build_id of %s is %r, expected %r" % (path, b.get("build_id"), build_id))
if [b for b in sb if b.get("path", "").endswith("/spin")]:
    errors.append("the unstripped spin is listed as stripped: %r" % sb)
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
		bad "stripped: summary.json stripped_binaries is wrong (above)"
	grep -qF "$TMP/bin/spin-stripped " "$TMP/stripped.stdout" ||
		bad "stripped: the printed card of stripped binaries does not list $TMP/bin/spin-stripped"
fi

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"
