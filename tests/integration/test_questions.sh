#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# wall, threads, locks and memory-growth on real programs built without frame pointers
# (issue 4); their stacks come through glibc's frameless frames by DWARF unwinding (issue 7).
#
#   wall: pipewait computes ~20% and waits in read ~80%: the [off-CPU: read] leaf holds 80%
#         (+-5 points) of its time, under wait_for_input; compute is its on-CPU function; a cpu
#         capture of the same program shows only the compute
#   threads: threeway's spinner, sleeper and blocked threads are listed by name with the right
#         state (running / clock_nanosleep / futex) and function (spin_forever, nap,
#         wait_for_lock)
#   locks: contend's four threads: [lock wait: futex_wait] leaves, waits counted, the time
#         under contended_update, which the answer names
#   memory-growth: grow touches 32 MiB during the capture: the growth total is within 20%; the
#         answer names keep, the helper the compiler inlined into grow_cache (DWARF inline
#         frames, issue 19), and grow_cache is its caller in the stacks
#   server: each under its owner (Unit ...)
. "$(dirname "$0")/lib.sh"

need_root
need_bin
for w in pipewait threeway contend grow; do
	[ -x "$OUTPUT/workloads/$w" ] || fail "workload $w not built (make)"
done
LOCK=/run/slideops-profiler.lock

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# cap NAME ARGS...: one capture into $TMP/NAME (waits for the lock: one capture at a time)
cap()
{
	local name=$1
	shift
	wait_for "flock -n $LOCK true" 120 || fail "another capture held $LOCK for 2 min"
	"$BIN" capture "$@" --out "$TMP/$name" >"$TMP/$name.out" 2>&1 ||
		fail "capture $name failed: $(tail -1 "$TMP/$name.out")"
	log "$name: $(grep '^Over' "$TMP/$name.out")"
}

# share FILE LEAF_REGEX: percent of the collapsed total whose leaf matches
share()
{
	"$PYTHON" - "$1" "$2" <<'PY'
import re, sys
tot = hit = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    n = int(n)
    tot += n
    if re.search(sys.argv[2], stack.split(';')[-1]):
        hit += n
print(round(100.0 * hit / tot, 1) if tot else 0)
PY
}

cg=$(cg_make_unit question-test.service)

# wall
p=$(cg_run "$cg" "$OUTPUT/workloads/pipewait" 30)
sleep 1
cap wall --pid "$p" --question wall --duration 5
r=$(share "$TMP/wall/profile.collapsed" '^\[off-CPU: read\]$')
log "wall: read leaf $r%"
"$PYTHON" -c "import sys; sys.exit(0 if 75 <= $r <= 85 else 1)" ||
	bad "wall: [off-CPU: read] holds $r% of pipewait's time, expected 80 +-5"
grep -q ';compute [0-9]*$' "$TMP/wall/profile.collapsed" ||
	bad "wall: compute is not an on-CPU leaf"
r=$(share "$TMP/wall/profile.collapsed" '^\[off-CPU: read\]$')
u=$("$PYTHON" - "$TMP/wall/profile.collapsed" <<'PY'
import sys
tot = hit = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    f = stack.split(';')
    if f[-1] == '[off-CPU: read]':
        tot += int(n)
        hit += int(n) if 'wait_for_input' in f else 0
print(round(100.0 * hit / tot, 1) if tot else 0)
PY
)
"$PYTHON" -c "import sys; sys.exit(0 if $u >= 90 else 1)" ||
	bad "wall: only $u% of the read wait is under wait_for_input"
grep -q 'spent [0-9]*% of its time waiting, most of it in read from wait_for_input' "$TMP/wall.out" ||
	bad "wall: the answer does not name read: $(grep '^Over' "$TMP/wall.out")"
cap cpu --pid "$p" --question cpu --duration 3
top=$(json_get "$TMP/cpu/summary.json" "d['top_functions'][0]['name']")
[ "$top" = compute ] || bad "cpu: pipewait's top function is '$top', expected compute"
if grep -q 'wait_for_input' "$TMP/cpu/profile.collapsed"; then
	w=$("$PYTHON" - "$TMP/cpu/profile.collapsed" <<'PY'
import sys
tot = hit = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    tot += int(n)
    hit += int(n) if 'wait_for_input' in stack.split(';') else 0
print(round(100.0 * hit / tot, 1) if tot else 0)
PY
)
	"$PYTHON" -c "import sys; sys.exit(0 if $w <= 5 else 1)" ||
		bad "cpu: $w% of pipewait's CPU samples are under wait_for_input (it only waits there)"
fi
kill "$p"

# threads
p=$(cg_run "$cg" "$OUTPUT/workloads/threeway" 30)
sleep 1
cap threads --pid "$p" --question threads
json_get "$TMP/threads/summary.json" "d['duration_seconds']" | grep -qx 5 ||
	bad "threads: not a 5 s capture"
for want in "spinner running spin_forever spin_forever" "sleeper waiting clock_nanosleep nap" \
	"blocked waiting futex wait_for_lock"; do
	set -- $want
	got=$(json_get "$TMP/threads/summary.json" \
		"[(t['running'] + t['runnable'], t['waiting'], t['waits'][0]['reason'] if t['waits'] else '', t['function']) for t in d['threads'] if t['name'] == '$1']")
	case $2 in
	running)
		"$PYTHON" -c "import sys; t = $got; sys.exit(0 if t and t[0][0] >= 80 and t[0][3] == '$3' else 1)" ||
			bad "threads: $1 should be running in $3: $got" ;;
	waiting)
		"$PYTHON" -c "import sys; t = $got; sys.exit(0 if t and t[0][1] >= 80 and t[0][2] == '$3' and t[0][3] == '$4' else 1)" ||
			bad "threads: $1 should be waiting in $3 from $4: $got" ;;
	esac
done
grep -q '<th>Thread</th>' "$TMP/threads/flamegraph.html" || bad "threads: no table in the page"
kill "$p"

# locks
p=$(cg_run "$cg" "$OUTPUT/workloads/contend" 30)
sleep 1
cap locks --pid "$p" --question locks --duration 3
r=$(share "$TMP/locks/profile.collapsed" '^\[lock wait: futex_wait\]$')
"$PYTHON" -c "import sys; sys.exit(0 if $r >= 90 else 1)" ||
	bad "locks: futex_wait leaves hold $r%, expected nearly all"
ev=$(json_get "$TMP/locks/summary.json" "d['events']")
[ "${ev:-0}" -gt 10 ] || bad "locks: only ${ev:-0} waits counted"
grep -q 'waited [0-9.]* s on locks in all, in [0-9]* waits, most of it in contended_update' "$TMP/locks.out" ||
	bad "locks: answer: $(grep '^Over' "$TMP/locks.out")"
kill "$p"

# memory-growth: grow waits 1 s, then touches 32 MiB
# (2 s under ASan, where starting the capture takes longer)
gdelay=1
[ "$MEM_FACTOR" -gt 1 ] && gdelay=2
p=$(cg_run "$cg" "$OUTPUT/workloads/grow" 32 "$gdelay")
cap growth --pid "$p" --question memory-growth --duration 4
b=$(json_get "$TMP/growth/summary.json" "sum(g['samples'] for g in d['groups'])")
"$PYTHON" -c "import sys; sys.exit(0 if abs($b - 32 * 2**20) <= 0.2 * 32 * 2**20 else 1)" ||
	bad "memory-growth: $b bytes, expected 32 MiB +-20%"
grep -q 'touched [0-9.]* MiB of new memory, most of it in keep' "$TMP/growth.out" ||
	bad "memory-growth: answer: $(grep '^Over' "$TMP/growth.out")"
grep -q 'grow_cache;keep[; ]' "$TMP/growth/profile.collapsed" ||
	bad "memory-growth: no grow_cache;keep stack: $(head -3 "$TMP/growth/profile.collapsed")"
kill "$p" 2>/dev/null

# server variants: the same programs under their owner (WORKLOAD:QUESTION)
for row in contend:locks pipewait:wall; do
	q=${row#*:}
	p=$(cg_run "$cg" "$OUTPUT/workloads/${row%:*}" 30)
	sleep 1
	cap "server-$q" --server --question "$q" --duration 3
	json_get "$TMP/server-$q/summary.json" "[g['owner'] for g in d['groups']]" |
		grep -q "Unit question-test.service" || bad "server $q: no Unit question-test.service group"
	kill "$p"
done

p=$(cg_run "$cg" "$OUTPUT/workloads/threeway" 30)
sleep 1
cap server-threads --server --question threads
json_get "$TMP/server-threads/summary.json" \
	"[t['owner'] for t in d['threads'] if t['name'] == 'spinner']" |
	grep -q "Unit question-test.service" || bad "server threads: spinner not under its Unit"
kill "$p"
p=$(cg_run "$cg" "$OUTPUT/workloads/grow" 16 1)
cap server-growth --server --question memory-growth --duration 4
json_get "$TMP/server-growth/summary.json" \
	"[(g['owner'], g['top_function']) for g in d['groups']]" |
	grep -q '"Unit question-test.service", "keep"' ||
	bad "server memory-growth: keep not under its Unit: $(json_get "$TMP/server-growth/summary.json" "[(g['owner'], g['top_function']) for g in d['groups']]")"
kill "$p" 2>/dev/null

[ "$failures" -eq 0 ] || fail "$failures check(s) failed (above)"
log "all checks passed"
