#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# timeout: 420
#
# Crash safety of the store (daemon/agent/store.c) and of the sink's spool (daemon/agent/sink.c),
# tested by killing the writer at each of its fault points (issue 12, class 7), not by building
# the leftovers by hand. faultshim.c (LD_PRELOAD) numbers the calls of write, pwrite, writev,
# fsync, fdatasync, rename*, linkat, unlink*, rmdir and stream flushes on files under one
# directory, and kills the process (SIGKILL) just before call N.
#
#  1. The store: the real agent (`$BIN daemon`, store_dir in a temp dir) takes one API capture
#     (threads of a spin process, 5 s) and is stopped. A run without a fault counts the fault
#     points; then, for N over them, a copy of a store that already holds one finished profile
#     P0 is given to an agent killed at point N. A clean agent started on that store must list
#     P0 unchanged, list the new profile if its directory had been renamed into place before
#     the kill (and nothing else), and every entry on disk must be whole: meta.json and
#     summary.json valid JSON, profile.collapsed present, profile.pb.gz read by
#     `go tool pprof -raw`. No .tmp- entry, no capture directory is left after the restart,
#     and every audit.log line is valid JSON.
#  2. The spool: sink_driver (as test_sink.sh builds it) submits 3 items with no cluster API
#     and is killed at point N; a clean driver then delivers the spool to the fake cluster API.
#     Every item whose rename into place happened before the kill is delivered, each item at
#     most once, in sequence order, with its whole metadata and pprof; nothing but seq (and
#     dead/, dropped.log) is left in the spool.
#  3. The delivering side: a driver delivering 3 spooled items is killed at each of its fault
#     points (removing a delivered item); a clean driver delivers the rest: every item arrives
#     (a repeat carries the same Idempotency-Key) and the spool ends empty.
#
# CRASH_STORE_RUNS (default 8) and CRASH_SINK_RUNS (default 16; 8 under ASan) cap the runs per
# writer; N is
# then spread over the range, keeping the first and last points, and in the store's profiles/
# the first write, every rename and every directory fsync (in the spool: every item rename). Each
# store run takes about 8 s (the capture), a spool run well under 1 s.
# CRASH_PARTS: which parts to run (default "store spool deliver"; "spool deliver" under ASan).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd cc curl timeout cmp
DLOG_TAIL=15	# fail (lib.sh) shows the end of the agent's log
GO=$(command -v go || echo /usr/lib/go/bin/go)
[ -x "$GO" ] || skip "go not found (apt-get install golang-go)"
export HOME=${HOME:-$TMP} PPROF_TMPDIR=$TMP PPROF_BINARY_PATH=$TMP/nonexistent
store_runs=8 sink_runs=16 parts="store spool deliver"
# Under ASan the store part is left out: its crash points are the order of its syscalls, the
# same in both builds, and the plain pass kills it at each of them; the recovery code it checks
# still runs under ASan at every agent start (test_daemon seeds a half-written .tmp- directory).
[ "$MEM_FACTOR" -gt 1 ] && sink_runs=8 parts="spool deliver"
: "${CRASH_STORE_RUNS:=$store_runs}" "${CRASH_SINK_RUNS:=$sink_runs}" "${CRASH_PARTS:=$parts}"
ulimit -c 0
SPIN=$OUTPUT/workloads/spin
[ -x "$SPIN" ] || fail "$SPIN is missing (make all)"

failures=0
bad() { log "FAILED: $*"; failures=$((failures + 1)); }

# --- the shim and the sink driver ---------------------------------------------------------
SHIM=$TMP/faultshim.so
cc -shared -fPIC -O1 -Wall -Wextra -Werror -o "$SHIM" "$LIB_DIR/faultshim.c" -ldl ||
	fail "cannot build faultshim.so"
DRIVER=$TMP/sink_driver
build_driver "$DRIVER" sink_driver.c daemon/agent/sink daemon/agent/sink_http daemon/agent/sink_parse \
	daemon/agent/http base -- -Wno-missing-field-initializers -lcurl -ljansson -lpthread
# under ASan the shim must come after the sanitizer's runtime
preload=$SHIM
[ -n "$DRIVER_SAN" ] && preload="$(cc -print-file-name=libasan.so) $SHIM"

# quiet CMD...: runs CMD with no output, and no "Killed" line from the shell when the shim kills it
quiet() { ( "$@"; true ) >/dev/null 2>&1; }

# pick COUNT MAX [KEEP...]: MAX numbers spread over 1..COUNT (all when COUNT <= MAX), always
# including the KEEP ones (and 1 and COUNT).
pick()
{
	"$PYTHON" - "$@" <<'EOF'
import sys
count, cap = int(sys.argv[1]), int(sys.argv[2])
keep = {int(k) for k in sys.argv[3:] if 1 <= int(k) <= count} | {1, count}
if count <= cap:
    sel = set(range(1, count + 1))
else:
    sel = set(keep)
    rest = [n for n in range(1, count + 1) if n not in sel]
    want = max(0, cap - len(sel))
    for i in range(want):
        sel.add(rest[(i * len(rest)) // want])
print(" ".join(str(n) for n in sorted(sel)))
EOF
}
# renamed TRACE PATTERN: the destinations of the renames the trace shows made (all but the
# call that killed) that match PATTERN (a grep -E regex of the whole path).
renamed() { grep -v ' FAULT$' "$1" | grep -E "^[0-9]+ rename[a-z0-9]* .* -> $2\$" | sed 's/.* -> //'; }

# --- 1. the store -------------------------------------------------------------------------
OPERATOR=operator-token-0123456789abcdef
cat >"$TMP/tokens.yaml" <<EOF
tokens:
  - {name: otto, token: "$OPERATOR", role: operator}
EOF
api() # METHOD PATH [BODY]: prints the status code; the body goes to $TMP/body
{
	curl -s -m 10 -o "$TMP/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $OPERATOR" \
		${3:+-H 'Content-Type: application/json' -d "$3"} "$API$2"
}
# agent_start STORE LOG [ENV...]: starts the agent on STORE (a fresh port); DAEMON_PID, API.
# Returns 1 when it died before it was ready (a fault at start).
agent_start()
{
	local store=$1 port
	DLOG=$2
	shift 2
	port=$(free_port)
	agent_yaml node-crash "$port" "$store" >"$TMP/agent.yaml"
	env "$@" "$BIN" daemon --config "$TMP/agent.yaml" </dev/null >"$DLOG" 2>&1 &
	DAEMON_PID=$!
	echo "$DAEMON_PID" >>"$LIB_STATE/pids"
	disown "$DAEMON_PID"	# no "Killed" line from the shell when the shim kills it
	API=http://127.0.0.1:$port
	wait_for "grep -q 'daemon ready' '$DLOG' || ! kill -0 $DAEMON_PID 2>/dev/null" 20
	grep -q 'daemon ready' "$DLOG"
}
agent_stop() # waits for the agent to end after SIGTERM (KILL after 10 s)
{
	kill -TERM "$DAEMON_PID" 2>/dev/null
	wait_for "! kill -0 $DAEMON_PID 2>/dev/null" 10 || { kill -KILL "$DAEMON_PID"; bad "$1: the agent did not stop on SIGTERM"; }
	wait "$DAEMON_PID" 2>/dev/null
}
# capture: one threads capture of the spin process; returns when it is done, or the agent died.
capture()
{
	local code
	wait_lock
	code=$(api POST /v1/captures "{\"target\": \"pid:$spin_pid\", \"question\": \"threads\"}")
	case $code in
	202) ;;
	000) return 0 ;;	# killed while it answered
	*) kill -0 "$DAEMON_PID" 2>/dev/null && fail "capture: HTTP $code $(cat "$TMP/body")"; return 0 ;;
	esac
	wait_for "! kill -0 $DAEMON_PID 2>/dev/null || { [ \"\$(api GET /v1/captures/current)\" = 200 ] &&
		! grep -q '\"state\": *\"running\"' '$TMP/body'; }" 60 ||
		fail "the capture did not finish: $(cat "$TMP/body")"
	# a capture the API called done names a profile that must outlive any kill after that
	if grep -q '"state": *"done"' "$TMP/body" 2>/dev/null; then
		DONE_ID=$(sed -n 's/.*"profile_id": *"\([^"]*\)".*/\1/p' "$TMP/body")
	fi
}
# check_store LABEL STORE MUST_IDS...: a clean agent on STORE; the checks of part 1.
check_store()
{
	local label=$1 store=$2 out id
	shift 2
	if ! agent_start "$store" "$TMP/reader.log"; then
		bad "$label: a clean agent did not start on the store: $(tail -3 "$DLOG")"
		return
	fi
	[ "$(api GET '/v1/profiles?limit=500')" = 200 ] || { bad "$label: list: HTTP $(cat "$TMP/body")"; agent_stop "$label"; return; }
	cp "$TMP/body" "$TMP/list.json"
	# every listed id is one listed, a whole entry on disk, and every entry on disk is listed
	out=$("$PYTHON" - "$TMP/list.json" "$store" "$BASE_ID" "$@" <<'EOF'
import json, os, re, sys
lst, store, base, must = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ids = [p["id"] for p in json.load(open(lst))["profiles"]]
errs = []
pdir = os.path.join(store, "profiles")
disk = [d for d in os.listdir(pdir) if re.match(r"^\d{8}T\d{6}Z-[0-9a-f]{6}$", d)]
left = [d for d in os.listdir(pdir) if d.startswith(".tmp-")]
if left:
    errs.append("left in profiles/: %s" % left)
cdir = os.path.join(store, "captures")
if os.path.isdir(cdir) and os.listdir(cdir):
    errs.append("left in captures/: %s" % os.listdir(cdir))
if len(ids) != len(set(ids)):
    errs.append("listed twice: %s" % ids)
if sorted(ids) != sorted(disk):
    errs.append("listed %s, on disk %s" % (sorted(ids), sorted(disk)))
for m in [base] + must:
    if m not in ids:
        errs.append("profile %s is lost" % m)
for d in disk:
    e = os.path.join(pdir, d)
    for f in ("meta.json", "summary.json", "profile.pb.gz", "profile.collapsed"):
        if not os.path.isfile(os.path.join(e, f)):
            errs.append("%s lacks %s" % (d, f))
    for f in ("meta.json", "summary.json"):
        try:
            json.load(open(os.path.join(e, f)))
        except Exception as x:
            errs.append("%s/%s: %s" % (d, f, x))
audit = os.path.join(store, "audit.log")
if os.path.exists(audit):
    for i, l in enumerate(open(audit, "rb"), 1):
        try:
            json.loads(l)
        except Exception as x:
            errs.append("audit.log:%d: %s: %r" % (i, x, l[:80]))
for e in errs:
    print(e)
for d in disk:
    if d != base:
        print("NEW " + d)
EOF
	)
	while read -r line; do
		case $line in
		"NEW "*)
			id=${line#NEW }
			"$GO" tool pprof -raw "$store/profiles/$id/profile.pb.gz" >/dev/null 2>"$TMP/pprof.err" ||
				bad "$label: $id/profile.pb.gz: $(tail -1 "$TMP/pprof.err")"
			;;
		?*) bad "$label: $line" ;;
		esac
	done <<<"$out"
	for f in meta.json summary.json profile.pb.gz profile.collapsed; do
		cmp -s "$BASE/profiles/$BASE_ID/$f" "$store/profiles/$BASE_ID/$f" ||
			bad "$label: the finished profile $BASE_ID changed: $f"
	done
	agent_stop "$label"
}

store_part()
{
	local n runs count keep store trace done_ids
	spin_pid=$(cg_run "$(cg_make_unit crash-spin.service)" "$SPIN")
	# P0: a store with one finished profile
	BASE=$TMP/base
	agent_start "$BASE" "$TMP/base.log" || fail "the agent did not start: $(tail -5 "$DLOG")"
	capture
	agent_stop base
	BASE_ID=$(ls "$BASE/profiles" | grep -E '^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$' | head -1)
	[ -n "$BASE_ID" ] || fail "the first capture stored no profile: $(tail -5 "$TMP/base.log")"
	rm -f "$BASE/audit.log"
	# the count: the same run, with the shim counting
	store=$TMP/s0
	cp -a "$BASE" "$store"
	agent_start "$store" "$TMP/s0.log" LD_PRELOAD="$preload" FAULT_DIR="$store" \
		FAULT_TRACE="$TMP/s0.trace" || fail "the agent did not start with the shim: $(tail -5 "$DLOG")"
	capture
	agent_stop count
	count=$(wc -l <"$TMP/s0.trace")
	[ "$count" -gt 10 ] || fail "only $count fault points in the store: $(cat "$TMP/s0.trace")"
	# kept: in profiles/, the first write, every rename and every fsync of a directory
	keep=$(awk -v p="$store/profiles" 'index($3, p) == 1 && (($2 == "write" && !w++) ||
		$2 ~ /^rename/ || ($2 == "fsync" && $3 !~ /\/[^\/]*\.[a-z]+$/)) { print $1 }' "$TMP/s0.trace")
	runs=$(pick "$count" "$CRASH_STORE_RUNS" $keep)
	log "store: $count fault points; killing the agent at $runs"
	check_store "store without a fault" "$store" "$(renamed "$TMP/s0.trace" "$store/profiles/[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}" | xargs -r -n1 basename)"
	for n in $runs; do
		store=$TMP/s$n
		trace=$TMP/s$n.trace
		cp -a "$BASE" "$store"
		DONE_ID=
		if agent_start "$store" "$TMP/s$n.log" LD_PRELOAD="$preload" FAULT_DIR="$store" \
			FAULT_TRACE="$trace" FAULT_AT="$n"; then
			capture
			kill -0 "$DAEMON_PID" 2>/dev/null && agent_stop "N=$n"
		fi
		wait "$DAEMON_PID" 2>/dev/null
		grep -q ' FAULT$' "$trace" 2>/dev/null || log "store N=$n: no fault (this run had fewer points)"
		done_ids=$(renamed "$trace" "$store/profiles/[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}" | xargs -r -n1 basename)
		[ -n "$DONE_ID" ] && done_ids="$done_ids $DONE_ID"
		check_store "store N=$n ($(grep ' FAULT$' "$trace" | cut -d' ' -f2- | sed "s|$store/||g"))" \
			"$store" $done_ids
		rm -rf "$store"
	done
}

# --- 2. the spool -------------------------------------------------------------------------
TOKEN=s3cr3t-token
echo "$TOKEN" >"$TMP/token"
fake_start()
{
	fake_cluster_start 0 --log "$TMP/deliveries.jsonl" --token "$TOKEN"
	FAKE_PID=$CLUSTER_PID URL=$CLUSTER_URL
}
# check_delivered LABEL PREFIX SPOOL MUST...: the deliveries of PREFIX-* are whole, in order,
# first deliveries once each; every MUST id delivered; the spool holds no item and no stray file.
check_delivered()
{
	local label=$1 prefix=$2 spool=$3 out
	shift 3
	out=$("$PYTHON" - "$TMP/deliveries.jsonl" "$prefix" "$(wc -c <"$PROFILE")" "$spool" \
		"${ALLOW_DUP:-0}" "$@" <<'EOF'
import json, os, sys
log, prefix, size, spool, allow_dup, must = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1", sys.argv[6:]
recs = []
if os.path.exists(log):
    recs = [json.loads(l) for l in open(log)]
recs = [r for r in recs if r["id"].startswith(prefix + "-")]
errs = []
first = [r["id"] for r in recs if not r["duplicate"]]
if len(first) != len(set(first)):
    errs.append("delivered twice: %s" % first)
if first != sorted(first, key=lambda i: int(i.rsplit("-", 1)[1])):
    errs.append("out of order: %s" % first)
for r in recs:
    if r["idempotency_key"] != r["id"]:
        errs.append("key %s for %s" % (r["idempotency_key"], r["id"]))
    if r["profile_bytes"] != size:
        errs.append("%s: profile of %d bytes, want %d" % (r["id"], r["profile_bytes"], size))
    m = r["metadata"]
    if m.get("id") != r["id"] or m.get("question") != "cpu" or "groups" not in m:
        errs.append("%s: metadata %s" % (r["id"], m))
    if r["duplicate"] and not allow_dup:
        errs.append("%s delivered again" % r["id"])
for m in must:
    if m not in first:
        errs.append("%s was spooled before the kill and is lost (delivered: %s)" % (m, first))
left = sorted(set(os.listdir(spool)) - {"seq", "dead", "dropped.log", "dropped.log.1"})
if left:
    errs.append("left in the spool: %s" % left)
if os.path.isdir(os.path.join(spool, "dead")) and os.listdir(os.path.join(spool, "dead")):
    errs.append("dead/: %s" % os.listdir(os.path.join(spool, "dead")))
print("\n".join(errs))
EOF
	)
	[ -z "$out" ] && return 0
	while read -r line; do
		case $line in
		"left in the spool: ['seq.tmp."*\'])
			bad "$label: $line (a kill inside atomic_write_file of seq: the spool's start must remove the temp file)" ;;
		?*) bad "$label: $line" ;;
		esac
	done <<<"$out"
}
# spool_whole LABEL SPOOL [DELIVERED_OK]: every item SPOOL holds is whole: metadata.json and
# profile.pb.gz byte for byte what the driver submits (the metadata of the same item of the
# count run, with its id). With DELIVERED_OK, an item may lack files (its removal was cut short)
# when the fake cluster API has it.
spool_whole()
{
	local label=$1 spool=$2 ok=${3:-} d name id idx
	for d in "$spool"/[0-9]*-*; do
		[ -d "$d" ] || continue
		name=$(basename "$d")
		id=${name#*-}
		idx=${id##*-}
		if sed "s/\"id\":\"c0-$idx\"/\"id\":\"$id\"/" "$REF/$idx.json" | cmp -s - "$d/metadata.json" &&
			cmp -s "$d/profile.pb.gz" "$PROFILE"; then
			continue
		fi
		[ -n "$ok" ] && grep -q "\"id\": \"$id\"" "$TMP/deliveries.jsonl" 2>/dev/null && continue
		bad "$label: $name is not whole: $(ls "$d" | tr '\n' ' ')"
	done
}

spool_part()
{
	local n count runs spool trace must
	fake_start
	# the count
	spool=$TMP/spool0
	env LD_PRELOAD="$preload" FAULT_DIR="$spool" FAULT_TRACE="$TMP/spool0.trace" \
		"$DRIVER" --spool "$spool" --submit 3 --profile "$PROFILE" --prefix c0 >/dev/null 2>&1
	[ $? = 1 ] || fail "the sink driver did not spool 3 items"
	count=$(wc -l <"$TMP/spool0.trace")
	[ "$count" -gt 10 ] || fail "only $count fault points in the spool: $(cat "$TMP/spool0.trace")"
	runs=$(pick "$count" "$CRASH_SINK_RUNS" $(grep -n 'renameat .*/\.tmp-' "$TMP/spool0.trace" | cut -d: -f1))
	log "spool: $count fault points; killing the driver at $runs"
	for n in $runs; do
		spool=$TMP/spool$n
		trace=$TMP/spool$n.trace
		quiet env LD_PRELOAD="$preload" FAULT_DIR="$spool" FAULT_TRACE="$trace" FAULT_AT="$n" \
			"$DRIVER" --spool "$spool" --submit 3 --profile "$PROFILE" --prefix "c$n"
		grep -q ' FAULT$' "$trace" || bad "spool N=$n: the driver was not killed"
		spool_whole "spool N=$n" "$spool"
		must=$(renamed "$trace" "$spool/[0-9]{20}-c$n-[0-9]+" | sed 's|.*/[0-9]*-||')
		timeout 30 "$DRIVER" --spool "$spool" --url "$URL" --token-file "$TMP/token" \
			--base-ms 50 --cap-ms 100 --wait-ms 10000 >"$TMP/r$n.out" 2>"$TMP/r$n.err" ||
			bad "spool N=$n: the clean driver did not empty the spool: $(tail -2 "$TMP/r$n.err")"
		check_delivered "spool N=$n ($(grep ' FAULT$' "$trace" | cut -d' ' -f2- | sed "s|$spool/||g"))" \
			"c$n" "$spool" $must
	done
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
}

# --- 3. the delivering side ---------------------------------------------------------------
deliver_part()
{
	local n count runs spool trace
	fake_start
	make_spool() { rm -rf "$1"; "$DRIVER" --spool "$1" --submit 3 --profile "$PROFILE" --prefix "$2" >/dev/null 2>&1; }
	spool=$TMP/dspool0
	make_spool "$spool" d0
	timeout 30 env LD_PRELOAD="$preload" FAULT_DIR="$spool" FAULT_TRACE="$TMP/dspool0.trace" \
		"$DRIVER" --spool "$spool" --url "$URL" --token-file "$TMP/token" \
		--wait-ms 10000 >/dev/null 2>&1 || fail "the driver did not deliver the spool"
	count=$(wc -l <"$TMP/dspool0.trace")
	runs=$(pick "$count" "$CRASH_SINK_RUNS")
	log "delivery: $count fault points; killing the driver at $runs"
	for n in $runs; do
		spool=$TMP/dspool$n
		trace=$TMP/dspool$n.trace
		make_spool "$spool" "d$n"
		quiet timeout 30 env LD_PRELOAD="$preload" FAULT_DIR="$spool" FAULT_TRACE="$trace" \
			FAULT_AT="$n" "$DRIVER" --spool "$spool" --url "$URL" --token-file "$TMP/token" \
			--wait-ms 10000
		grep -q ' FAULT$' "$trace" || log "delivery N=$n: no fault (this run had fewer points)"
		spool_whole "delivery N=$n" "$spool" delivered-ok
		timeout 30 "$DRIVER" --spool "$spool" --url "$URL" --token-file "$TMP/token" \
			--base-ms 50 --cap-ms 100 --wait-ms 10000 >"$TMP/dr$n.out" 2>"$TMP/dr$n.err" ||
			bad "delivery N=$n: the clean driver did not empty the spool: $(tail -2 "$TMP/dr$n.err")"
		ALLOW_DUP=1 check_delivered "delivery N=$n ($(grep ' FAULT$' "$trace" | cut -d' ' -f2- | sed "s|$spool/||g"))" \
			"d$n" "$spool" "d$n-1" "d$n-2" "d$n-3"
	done
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
}

PROFILE=$TMP/profile.pb.gz
for part in $CRASH_PARTS; do
	case $part in
	store) store_part; cp "$BASE/profiles/$BASE_ID/profile.pb.gz" "$PROFILE" ;;
	spool|deliver)
		# a real pprof when the store part made one, else a gzip stand-in
		[ -s "$PROFILE" ] || "$PYTHON" -c 'import gzip, os, sys; open(sys.argv[1], "wb").write(gzip.compress(os.urandom(1500)))' "$PROFILE"
		if [ ! -d "$TMP/ref" ]; then
			# what the driver writes for items c0-1..3, to compare spooled items with
			"$DRIVER" --spool "$TMP/refspool" --submit 3 --profile "$PROFILE" --prefix c0 >/dev/null 2>&1
			REF=$TMP/ref
			mkdir -p "$REF"
			for d in "$TMP"/refspool/[0-9]*-c0-*; do
				cp "$d/metadata.json" "$REF/${d##*-}.json" || fail "no reference spool item"
			done
		fi
		"${part}_part"
		;;
	*) fail "CRASH_PARTS: unknown part '$part'" ;;
	esac
done
[ "$failures" -eq 0 ] || fail "$failures check(s) failed"
log "all crash-safety checks passed"
