#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `compare OLD NEW --out DIR` (docs/cli.md) on real captures of --pid, 2 s each:
#   old   cpu of hot2 (build_report ~75%, compress_chunk ~25%)
#   new   cpu of spin (checkout_loop ~100%)
#   wall  wall of hot2
# - compare old new: diff.html's data marks checkout_loop as grown and build_report as shrunk,
#   diff.collapsed holds "stack old new" lines, the answer names both;
# - a pprof file compares with a profile directory;
# - compare old wall exits 1 with the one-line refusal and writes nothing;
# - compare old old: no change anywhere.
. "$(dirname "$0")/lib.sh"

need_root
need_bin

DURATION=2
HOT2=$(workload hot2) || exit 1
SPIN=$(workload spin) || exit 1
bg_start "$HOT2"
hot2_pid=$BG_PID
bg_start "$SPIN"
spin_pid=$BG_PID
sleep 0.5 # both at full speed before sampling starts

# capture NAME QUESTION PID: a capture into $TMP/NAME that must succeed.
capture()
{
	capture_retry "$TMP/$1" 60 --pid "$3" --question "$2" --duration "$DURATION"
	if [ "$CAPTURE_RC" -ne 0 ] || [ ! -s "$TMP/$1/profile.pb.gz" ]; then
		sed 's/^/  stderr: /' "$TMP/$1.stderr" >&2
		fail "capture $1 ($2 of $3) exited $CAPTURE_RC"
	fi
	log "captured $1 ($2 of pid $3) in $CAPTURE_MS ms"
}
capture old cpu "$hot2_pid"
capture new cpu "$spin_pid"
capture wall wall "$hot2_pid"

# compare NAME ARGS...: `$BIN compare ARGS --out $TMP/NAME`, its status in RC.
compare()
{
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	timeout -k 5 30 "$BIN" compare "$@" --out "$TMP/$name" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	RC=$?
	log "compare $name exited $RC in $((($(date +%s%N) - t0) / 1000000)) ms"
}

# check_diff NAME MODE: diff.html's data and diff.collapsed of $TMP/NAME; MODE "moved" (hot2
# then spin) or "same" (a profile with itself).
check_diff()
{
	"$PYTHON" - "$TMP/$1" "$2" <<'EOF'
import json, re, sys
out, mode = sys.argv[1:]
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)
html = open(out + "/diff.html").read()
d = json.loads(re.search(r'id="fg-data">(.*?)</script>', html, re.S).group(1))
check(d.get("diff") is True, "the page's data is not a diff")
bt, nt, names = d["base_total"], d["next_total"], d["names"]
check(bt >= 50 and nt >= 50, "too few samples: %d and %d" % (bt, nt))
delta = {}  # frame name -> change of its inclusive share, in points, over all its boxes
def walk(n, top):
    name = names[n[0]]
    if name not in top:
        delta[name] = delta.get(name, 0) + 100.0 * (n[5] / nt - n[4] / bt)
    for c in n[3]:
        walk(c, top | {name})
    check(sum(c[1] for c in n[3]) <= n[1], "children wider than %s" % name)
walk(d["tree"], frozenset())
lines = open(out + "/diff.collapsed").read().splitlines()
check(lines, "diff.collapsed is empty")
rows = {}
for l in lines:
    m = re.match(r"^(.+) ([0-9]+) ([0-9]+)$", l)
    check(m, "not a 'stack old new' line: %r" % l)
    if m:
        rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
if mode == "moved":
    check(delta.get("checkout_loop", 0) > 50, "checkout_loop did not grow: %r" % delta.get("checkout_loop"))
    check(delta.get("build_report", 0) < -40, "build_report did not shrink: %r" % delta.get("build_report"))
    leaf = lambda f: [v for s, v in rows.items() if s.split(";")[-1] == f]
    check(leaf("checkout_loop") and all(b == 0 and n > 0 for b, n in leaf("checkout_loop")),
          "diff.collapsed: checkout_loop is not new: %r" % leaf("checkout_loop"))
    check(leaf("build_report") and all(b > 0 and n == 0 for b, n in leaf("build_report")),
          "diff.collapsed: build_report is not gone: %r" % leaf("build_report"))
    # normalised as difffolded.pl -n: the new column sums to about the old one's total
    check(abs(sum(n for _, n in rows.values()) - bt) <= len(rows), "diff.collapsed is not normalised")
else:
    check(all(abs(v) < 1e-9 for v in delta.values()), "a frame changed: %r" %
          {k: v for k, v in delta.items() if abs(v) >= 1e-9})
    check(all(b == n for b, n in rows.values()), "diff.collapsed has a line with two numbers")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
}

MINUS=$'\xe2\x88\x92'

# --- hot2, then spin ---------------------------------------------------------------------------
compare moved "$TMP/old" "$TMP/new"
[ "$RC" -eq 0 ] || fail "compare old new exited $RC: $(cat "$TMP/moved.stderr")"
sed 's/^/  compare: /' "$TMP/moved.stdout" >&2
for f in diff.html diff.collapsed; do
	[ -s "$TMP/moved/$f" ] || fail "$f missing or empty"
done
head -1 "$TMP/moved.stdout" | grep -q "^Compared with old (.*), new (.*) spends more in checkout_loop (+[0-9.]* points) and less in build_report (${MINUS}[0-9.]* points)\." ||
	fail "the answer does not name checkout_loop and build_report: $(head -1 "$TMP/moved.stdout")"
check_diff moved moved || fail "diff.html or diff.collapsed of old and new is wrong"

# --- a pprof file against a profile directory --------------------------------------------------
compare file "$TMP/old/profile.pb.gz" "$TMP/new"
[ "$RC" -eq 0 ] || fail "compare FILE DIR exited $RC: $(cat "$TMP/file.stderr")"
grep -q "^Compared with old/profile.pb.gz (" "$TMP/file.stdout" ||
	fail "the answer does not name the file: $(head -1 "$TMP/file.stdout")"

# --- two questions -----------------------------------------------------------------------------
compare questions "$TMP/old" "$TMP/wall"
[ "$RC" -eq 1 ] || fail "compare cpu wall exited $RC, not 1"
want="slideops-profiler: these profiles answer different questions (cpu and wall): compare two profiles of the same question"
[ "$(cat "$TMP/questions.stderr")" = "$want" ] || fail "unexpected refusal: $(cat "$TMP/questions.stderr")"
[ ! -e "$TMP/questions" ] || fail "a refused comparison wrote $TMP/questions"

# --- a profile with itself ---------------------------------------------------------------------
compare same "$TMP/old" "$TMP/old"
[ "$RC" -eq 0 ] || fail "compare old old exited $RC: $(cat "$TMP/same.stderr")"
grep -q "spends its time in the same places: no function's share changed" "$TMP/same.stdout" ||
	fail "old against itself: $(head -1 "$TMP/same.stdout")"
check_diff same same || fail "old against itself is not unchanged"

kill -0 "$hot2_pid" 2>/dev/null || fail "hot2 died"
kill -0 "$spin_pid" 2>/dev/null || fail "spin died"
log "ok"
