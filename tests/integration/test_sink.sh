#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The cluster API sink (daemon/sink.[ch], docs/cluster-api.md) against the fake cluster API
# (tests/fake-cluster/fake_cluster_api.py), through a small driver (sink_driver.c) built from
# the objects of the build:
#   1. nothing lost: API down, 3 submitted, the agent killed -9; API and agent started again:
#      all 3 delivered, in order, exactly once, with Idempotency-Key = id
#   2. a 503 with Retry-After, then success: retried, and not before Retry-After
#   3. a permanent 400 goes to dead/ with its reason; the items around it are delivered
#   4. the spool bound drops the oldest items, says so in dropped.log, keeps the newest
#   5. a lost response: the retry carries the same Idempotency-Key (the fake sees a duplicate)
#   6. token rotation: a 401 is retried with the token file read again
#   7. Pyroscope receives each delivered profile with its name, from and until; a Pyroscope
#      that is down holds nothing up; with no cluster API, Pyroscope is the spooled sink
#   8. stopping the sink aborts a request in progress promptly (a server that never answers)
# Needs no root: loopback only.
. "$(dirname "$0")/lib.sh"

need_cmd cc timeout
FAKE=$REPO_ROOT/tests/fake-cluster/fake_cluster_api.py
DRIVER=$TMP/sink_driver
TOKEN=s3cr3t-token

# --- build the driver ----------------------------------------------------------------------
# the sink's files and all of base/ (the bottom layer: any of it may be used)
build_driver "$DRIVER" sink_driver.c daemon/agent/sink daemon/agent/sink_http daemon/agent/sink_parse \
	daemon/agent/http base -- -Wno-missing-field-initializers -lcurl -ljansson -lpthread

# A gzip "pprof" (the sink only insists on the gzip magic; the fake checks it too).
PROFILE=$TMP/profile.pb.gz
"$PYTHON" -c 'import gzip, os, sys; open(sys.argv[1], "wb").write(gzip.compress(os.urandom(1500)))' \
	"$PROFILE" || fail "cannot write the profile fixture"
echo "$TOKEN" >"$TMP/token"

failures=0
bad() { log "FAILED: $*"; failures=$((failures + 1)); }

# fake_start NAME ARGS...: starts the fake; sets FAKE_PID and FAKE_PORT. Its deliveries go to
# $TMP/NAME.jsonl, its Pyroscope pushes to $TMP/NAME.ingest.jsonl.
fake_start()
{
	local name=$1 port=0
	shift
	if [ "${1:-}" = --port ]; then
		port=$2
		shift 2
	fi
	serve_start "$name.fake" "$port" "$PYTHON" "$FAKE" --log "$TMP/$name.jsonl" \
		--pyroscope-log "$TMP/$name.ingest.jsonl" --token "$TOKEN" "$@"
	FAKE_PID=$SERVE_PID FAKE_PORT=$SERVE_PORT
}

fake_stop()
{
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
}

# ids FILE: the delivered ids in order, one line, space separated.
ids() { "$PYTHON" -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$1" 2>/dev/null; }
items() { ls "$1" 2>/dev/null | grep -E '^[0-9]{20}-' | tr '\n' ' ' | sed 's/ $//'; }

# --- 1. nothing lost across an outage and a kill -9 -----------------------------------------
log "1. API down, 3 submitted, kill -9, both started again"
fake_start s1
port=$FAKE_PORT
fake_stop			# the API is now down; its port is known
spool=$TMP/spool1
"$DRIVER" --spool "$spool" --url "http://127.0.0.1:$port" --token-file "$TMP/token" \
	--base-ms 100 --cap-ms 400 --submit 3 --profile "$PROFILE" --prefix cap --hold \
	>"$TMP/d1.out" 2>"$TMP/d1.err" &
dpid=$!
echo "$dpid" >>"$LIB_STATE/pids"
wait_for "grep -q '^submitted 3' '$TMP/d1.out'" 20 || fail "driver did not submit: $(cat "$TMP/d1.err")"
wait_for "grep -q 'delivering id=cap-1 failed' '$TMP/d1.err'" 10 ||
	bad "no failed attempt logged while the API was down"
[ "$(items "$spool" | wc -w)" = 3 ] || bad "spool holds $(items "$spool"), want 3 items"
kill -KILL "$dpid"
wait "$dpid" 2>/dev/null
[ "$(items "$spool" | wc -w)" = 3 ] || bad "after kill -9 the spool holds $(items "$spool")"
fake_start s1 --port "$port"
SLIDEOPS_LOG=info timeout 30 "$DRIVER" --spool "$spool" --url "http://127.0.0.1:$port" \
	--token-file "$TMP/token" --base-ms 100 --cap-ms 400 --wait-ms 20000 \
	>"$TMP/d1b.out" 2>"$TMP/d1b.err" || bad "restarted driver did not empty the spool: $(cat "$TMP/d1b.err")"
got=$(ids "$TMP/s1.jsonl")
[ "$got" = "cap-1 cap-2 cap-3" ] || bad "delivered '$got', want 'cap-1 cap-2 cap-3' (in order, once)"
"$PYTHON" - "$TMP/s1.jsonl" <<'PY' || bad "deliveries are not exactly once with Idempotency-Key = id"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["idempotency_key"] == r["id"] and not r["duplicate"] for r in recs), recs
m = recs[0]["metadata"]
for k in ("node", "target", "question", "duration", "start", "answer", "groups", "notes"):
    assert k in m, k
PY
[ -z "$(items "$spool")" ] || bad "spool not empty after delivery: $(items "$spool")"
[ "$(cat "$spool/seq")" = 4 ] || bad "spool/seq is $(cat "$spool/seq"), want 4"
grep -q 'waiting' "$TMP/d1b.err" || bad "restart did not report the waiting items"
fake_stop

# --- 2. 503 + Retry-After, then success ------------------------------------------------------
log "2. 503 with Retry-After: 1, then 200"
fake_start s2 --fail-first 1 --retry-after 1
start=$(date +%s%N)
timeout 30 "$DRIVER" --spool "$TMP/spool2" --url "http://127.0.0.1:$FAKE_PORT/" \
	--token-file "$TMP/token" --base-ms 50 --cap-ms 100 --submit 1 --profile "$PROFILE" \
	--prefix retry --wait-ms 20000 >"$TMP/d2.out" 2>"$TMP/d2.err" || bad "503 then 200: not delivered"
ms=$((($(date +%s%N) - start) / 1000000))
[ "$(ids "$TMP/s2.jsonl")" = retry-1 ] || bad "503 then 200: delivered '$(ids "$TMP/s2.jsonl")'"
grep -q '"failures":1' "$TMP/d2.out" || bad "503 then 200: want 1 failure: $(tail -1 "$TMP/d2.out")"
grep -q 'HTTP 503' "$TMP/d2.err" || bad "the 503 was not logged"
[ "$ms" -ge 1000 ] || bad "retried after $ms ms, before Retry-After (1 s)"
fake_stop

# --- 3. permanent 400 -> dead/ --------------------------------------------------------------
log "3. a 400 is permanent: dead/ with its reason; the others delivered in order"
fake_start s3 --reject-id perm-2
timeout 30 "$DRIVER" --spool "$TMP/spool3" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token" --base-ms 50 --cap-ms 100 --submit 3 --profile "$PROFILE" \
	--prefix perm --wait-ms 20000 >"$TMP/d3.out" 2>"$TMP/d3.err" || bad "400: spool not emptied"
[ "$(ids "$TMP/s3.jsonl")" = "perm-1 perm-3" ] || bad "400: delivered '$(ids "$TMP/s3.jsonl")'"
dead=$(items "$TMP/spool3/dead")
case $dead in *-perm-2) ;; *) bad "dead/ holds '$dead', want the perm-2 item" ;; esac
grep -q 'HTTP 400' "$TMP/spool3/dead/$dead/reason.txt" 2>/dev/null || bad "no reason.txt with HTTP 400"
[ -s "$TMP/spool3/dead/$dead/profile.pb.gz" ] || bad "dead item lost its profile"
grep -q '"dead":1' "$TMP/d3.out" || bad "400: want dead=1: $(tail -1 "$TMP/d3.out")"
fake_stop

# --- 4. bounded spool ------------------------------------------------------------------------
log "4. the bound drops the oldest and says so"
"$DRIVER" --spool "$TMP/probe" --submit 1 --profile "$PROFILE" --prefix bound >/dev/null 2>&1
one=$(cat "$TMP"/probe/*-bound-1/* | wc -c)
max=$((one * 5 / 2))		# room for two items
"$DRIVER" --spool "$TMP/spool4" --max-bytes "$max" --submit 5 --profile "$PROFILE" \
	--prefix bound >"$TMP/d4.out" 2>"$TMP/d4.err"
[ $? = 1 ] || bad "bound: want exit 1 (items left, no sender): $(cat "$TMP/d4.err")"
got=$(items "$TMP/spool4")
case $got in *-bound-4\ *-bound-5) ;; *) bad "bound: spool holds '$got', want bound-4 and bound-5" ;; esac
for i in 1 2 3; do
	grep -q "dropped id=bound-$i " "$TMP/spool4/dropped.log" 2>/dev/null || bad "dropped.log does not name bound-$i"
done
grep -q '"dropped":3' "$TMP/d4.out" || bad "bound: want dropped=3: $(tail -1 "$TMP/d4.out")"
grep -q 'spool full' "$TMP/d4.err" || bad "bound: drops not logged"
fake_start s4
timeout 30 "$DRIVER" --spool "$TMP/spool4" --url "http://127.0.0.1:$FAKE_PORT" --token-file "$TMP/token" \
	--wait-ms 20000 >/dev/null 2>"$TMP/d4b.err" || bad "bound: survivors not delivered"
[ "$(ids "$TMP/s4.jsonl")" = "bound-4 bound-5" ] || bad "bound: delivered '$(ids "$TMP/s4.jsonl")'"
fake_stop

# --- 5. lost response -> same Idempotency-Key ------------------------------------------------
log "5. a lost response is retried with the same Idempotency-Key"
fake_start s5 --lose-response-first 1
timeout 30 "$DRIVER" --spool "$TMP/spool5" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token" --base-ms 50 --cap-ms 100 --submit 1 --profile "$PROFILE" \
	--prefix lost --wait-ms 20000 >"$TMP/d5.out" 2>"$TMP/d5.err" || bad "lost response: not delivered"
"$PYTHON" - "$TMP/s5.jsonl" <<'PY' || bad "lost response: want 2 requests with key lost-1, the second a duplicate"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [(r["idempotency_key"], r["duplicate"]) for r in recs] == [("lost-1", False), ("lost-1", True)], recs
PY
fake_stop

# --- 6. token rotation ----------------------------------------------------------------------
log "6. a 401 is retried, reading the token file again"
echo old-token >"$TMP/token6"
fake_start s6
timeout 30 "$DRIVER" --spool "$TMP/spool6" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token6" --base-ms 200 --cap-ms 300 --submit 1 --profile "$PROFILE" \
	--prefix rot --wait-ms 20000 >"$TMP/d6.out" 2>"$TMP/d6.err" &
dpid=$!
echo "$dpid" >>"$LIB_STATE/pids"
wait_for "grep -q 'HTTP 401' '$TMP/d6.err'" 10 || bad "rotation: no 401 seen"
echo "$TOKEN" >"$TMP/token6.new" && mv "$TMP/token6.new" "$TMP/token6"
wait "$dpid" || bad "rotation: not delivered after the token changed"
[ "$(ids "$TMP/s6.jsonl")" = rot-1 ] || bad "rotation: delivered '$(ids "$TMP/s6.jsonl")'"
fake_stop

# --- 7. Pyroscope ---------------------------------------------------------------------------
log "7. Pyroscope receives each delivered profile"
fake_start s7
timeout 30 "$DRIVER" --spool "$TMP/spool7" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token" --pyroscope "http://127.0.0.1:$FAKE_PORT" --submit 2 \
	--profile "$PROFILE" --prefix pyro --wait-ms 20000 >"$TMP/d7.out" 2>"$TMP/d7.err" ||
	bad "pyroscope: not delivered"
"$PYTHON" - "$TMP/s7.ingest.jsonl" "$(wc -c <"$PROFILE")" <<'PY' || bad "pyroscope: wrong pushes: $(cat "$TMP/s7.ingest.jsonl" 2>/dev/null)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 2, recs
for i, r in enumerate(recs, 1):
    assert r["name"] == "slideops-test{node=node-a,service=billing-worker,question=cpu}", r
    assert r["from"] == 1714557600 + i and r["until"] == r["from"] + 10, r
    assert r["format"] == "pprof" and r["profile_bytes"] == int(sys.argv[2]), r
PY
grep -q '"pyroscope_pushed":2' "$TMP/d7.out" || bad "pyroscope: want pushed=2: $(tail -1 "$TMP/d7.out")"
fake_stop
# Pyroscope down: the cluster API still gets everything; the failure is counted.
fake_start s7b
timeout 30 "$DRIVER" --spool "$TMP/spool7b" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token" --pyroscope "http://127.0.0.1:$port" --submit 1 \
	--profile "$PROFILE" --prefix pyrodown --wait-ms 20000 >"$TMP/d7b.out" 2>"$TMP/d7b.err" ||
	bad "pyroscope down: cluster API delivery held up"
[ "$(ids "$TMP/s7b.jsonl")" = pyrodown-1 ] || bad "pyroscope down: delivered '$(ids "$TMP/s7b.jsonl")'"
grep -q '"pyroscope_failures":1' "$TMP/d7b.out" || bad "pyroscope down: want failures=1: $(tail -1 "$TMP/d7b.out")"
fake_stop

# Pyroscope only (no cluster API): it becomes the spooled, retried sink.
fake_start s7c --fail-first 0
timeout 30 "$DRIVER" --spool "$TMP/spool7c" --pyroscope "http://127.0.0.1:$FAKE_PORT" \
	--submit 2 --profile "$PROFILE" --prefix pyroonly --wait-ms 20000 >"$TMP/d7c.out" \
	2>"$TMP/d7c.err" || bad "pyroscope only: not delivered: $(cat "$TMP/d7c.err")"
[ "$(wc -l <"$TMP/s7c.ingest.jsonl" 2>/dev/null)" = 2 ] || bad "pyroscope only: want 2 pushes"
grep -q '"delivered":2' "$TMP/d7c.out" || bad "pyroscope only: want delivered=2: $(tail -1 "$TMP/d7c.out")"
fake_stop

# --- 8. prompt stop -------------------------------------------------------------------------
log "8. stopping aborts a request in progress"
fake_start s8 --hang
start=$(date +%s%N)
timeout 30 "$DRIVER" --spool "$TMP/spool8" --url "http://127.0.0.1:$FAKE_PORT" \
	--token-file "$TMP/token" --submit 1 --profile "$PROFILE" --prefix hang --wait-ms 500 \
	>"$TMP/d8.out" 2>"$TMP/d8.err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" = 1 ] || bad "hang: want exit 1 (item still queued), got $rc: $(cat "$TMP/d8.err")"
[ "$ms" -lt 3000 ] || bad "hang: stopping took $ms ms (want < 3 s)"
[ "$(items "$TMP/spool8" | wc -w)" = 1 ] || bad "hang: the aborted item must stay spooled"
grep -q '"failures":0' "$TMP/d8.out" || bad "hang: an abort is not a failure: $(tail -1 "$TMP/d8.out")"
fake_stop

[ "$failures" -eq 0 ] || fail "$failures check(s) failed"
log "all sink checks passed"
