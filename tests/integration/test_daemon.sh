#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The DaemonSet mode end to end (daemon/agent/agent.c, docs/daemon.md): the real binary
# (`$BIN daemon --config FILE`), the fake Kubernetes API server driven by real kubectl, the
# fake cluster API, and a real process (hot2) in a cgroup named as the kubelet names a pod
# container of Deployment billing (ReplicaSet billing-5d8f9c7b6):
#
#  1. kubectl annotate pod ... capture=question=cpu,duration=10 -> status running, then done
#     with an answer naming "Service billing" and build_report; an Event ProfileCaptured; the
#     fake cluster API receives the metadata and the pprof, which `go tool pprof` reads.
#     While it runs, a Node request and an API capture are refused with the busy message.
#     Retention: 50 older billing profiles were in the store; this 51st removed the oldest.
#  2. A Node annotation gives a server profile grouped by owner (Service billing among them).
#  3. Bad values get a failed status that says what is wrong and what is allowed.
#  4. Exactly once: the agent restarted (SIGTERM, exit 0) runs nothing again; a request left
#     `running` by a dead agent is marked failed.
#  5. Nothing lost: cluster API down, three captures, kill -9 during a fourth, both started
#     again: the three are delivered in order, once; the fourth left no entry behind.
#  6. Roles: a Viewer lists and downloads but gets 403 on capture, delete and upload; every
#     such action is in the audit trail; /metrics counts.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd kubectl curl flock

NODE=node-1
NS=shop
HASH=5d8f9c7b6
POD=billing-$HASH-x7k2p
POD2=billing-$HASH-q9w8e
KTOKEN=s3cr3t-kube-token
CTOKEN=s3cr3t-cluster-token
VIEWER=viewer-token-0123456789abcdef
OPERATOR=operator-token-0123456789abcdef
CAPTURE_KEY=profiling.slideops.io/capture
STATUS_KEY=profiling.slideops.io/capture-status
GO=$(command -v go || echo /usr/lib/go/bin/go)
[ -x "$GO" ] || skip "go not found (apt-get install golang-go)"
export HOME=${HOME:-$TMP} PPROF_TMPDIR=$TMP PPROF_BINARY_PATH=$TMP/nonexistent

HOT2=$OUTPUT/workloads/hot2
[ -x "$HOT2" ] || fail "$HOT2 is missing (make all)"

# --- the fake Kubernetes API server and the fake cluster API -------------------------------------
fake_kube_start 0 --token "$KTOKEN" --state "$TMP/kstate.json" --bookmark-seconds 1
kubeconfig_write "$TMP/kubeconfig" "$KAPI" "$KTOKEN" "$NS"
K() { kubectl --kubeconfig "$TMP/kubeconfig" --request-timeout=10s "$@"; }
echo "$CTOKEN" >"$TMP/ctoken"
cluster_start() # again on the same port
{
	fake_cluster_start "${CPORT:-0}" --log "$TMP/deliveries.jsonl" --token "$CTOKEN"
	CPORT=$SERVE_PORT
}
cluster_start
delivered_ids() { "$PYTHON" -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$TMP/deliveries.jsonl" 2>/dev/null; }

# --- the pod: hot2 in a kubelet-named cgroup, its Pod object, the Node -----------------------------
POD_UID=$(cat /proc/sys/kernel/random/uuid)
CID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
cg=$(cg_make_pod burstable "$POD_UID" "$CID")
hot_pid=$(cg_run "$cg" "$HOT2")
log "hot2 pid $hot_pid in $cg"
kube_admin POST /fake/nodes '{"metadata": {"name": "'$NODE'"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}'
kube_admin POST /fake/pods "$(kube_pod_json "$NS" "$POD" "$POD_UID" "$NODE" "$CID")"

# --- config, tokens, and a store that already holds 50 billing profiles ---------------------------
STORE=$TMP/store
APORT=$(free_port)	# the config wants a real port: take a free one from the kernel
cat >"$TMP/tokens.yaml" <<EOF
tokens:
  - {name: vera, token: "$VIEWER", role: viewer}
  - {name: otto, token: "$OPERATOR", role: operator}
EOF
agent_yaml "$NODE" "$APORT" "$STORE" "$TMP/kubeconfig" "http://127.0.0.1:$CPORT" >"$TMP/profiler.yaml"
# shellcheck disable=SC2046
store_seed "$STORE/profiles" $(printf "$NS %.0s" {1..50})
# what a kill -9 in the middle of store__add leaves: a .tmp- directory without meta.json
mkdir -p "$STORE/profiles/.tmp-20200102T000000Z-0000ff"
echo half >"$STORE/profiles/.tmp-20200102T000000Z-0000ff/profile.pb.gz"

# --- the agent -------------------------------------------------------------------------------------
NSTART=0
daemon_start()
{
	NSTART=$((NSTART + 1))
	# Only one capture runs on a machine: wait for any other one to end (the agent holds the
	# lock only while it captures).
	wait_lock
	agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.$NSTART.log" ||
		fail "the agent did not start: $(tail -5 "$DLOG")"
	API=http://127.0.0.1:$APORT
	log "agent $NSTART (pid $DAEMON_PID) serving $API"
}
status_of() # pod NAME | node NAME: the capture-status annotation, into $TMP/status.json
{
	K get "$1" "$2" -o jsonpath='{.metadata.annotations.profiling\.slideops\.io/capture-status}' \
		>"$TMP/status.json" 2>/dev/null
}
state_is() # pod NAME | node NAME, STATE
{
	status_of "$1" "$2" && [ "$(json_get "$TMP/status.json" 'd["state"]' 2>/dev/null)" = "$3" ]
}
# Other tests may capture on this machine at the same time (one capture per machine): a
# request refused because of one of them is asked again (after wait_lock), in a form that
# reads the same.
settled() { status_of "$1" "$2" && status_settled "$3"; } # pod|node NAME VALUE

audit_count() # PYTHON-CONDITION on r: number of audit lines that satisfy it
{
	"$PYTHON" -c '
import json, sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    n += bool(eval(sys.argv[2], {"r": r}))
print(n)' "$STORE/audit.log" "$1"
}

daemon_start
[ ! -e "$STORE/profiles/.tmp-20200102T000000Z-0000ff" ] || fail "the half-written entry survived the start"

# --- 1. a pod annotation: running, done, answer, event, delivery, pprof ------------------------------
checked_busy=
for v in "question=cpu,duration=10" "question=cpu, duration=10" "question=cpu ,duration=10" \
	"question= cpu,duration=10"; do
	wait_lock
	K annotate --overwrite pod "$POD" "$CAPTURE_KEY=$v" >/dev/null || fail "kubectl annotate pod"
	wait_for "state_is pod $POD running || settled pod $POD '$v'" 15 ||
		fail "no status for '$v': $(cat "$TMP/status.json"); $(tail -5 "$DLOG")"
	[ "$(json_get "$TMP/status.json" 'd["request"]')" = "$v" ] || fail "status request: $(cat "$TMP/status.json")"
	if [ -z "$checked_busy" ] && state_is pod "$POD" running; then
		# While it runs: a Node request and an API capture are refused with the seed's message.
		K annotate node "$NODE" "$CAPTURE_KEY=question=cpu,duration=10" >/dev/null ||
			fail "kubectl annotate node"
		wait_for "state_is node $NODE refused" 10 || fail "node request not refused: $(cat "$TMP/status.json")"
		[ "$(json_get "$TMP/status.json" 'd["message"]')" = "a capture is already running on this server" ] ||
			fail "refusal message: $(cat "$TMP/status.json")"
		code=$(api "$OPERATOR" POST /v1/captures '{"target": "server", "question": "cpu", "duration": 10}')
		[ "$code" = 409 ] || fail "API capture while one runs: HTTP $code $(cat "$TMP/body")"
		grep -q 'a capture is already running on this server' "$TMP/body" || fail "409 body: $(cat "$TMP/body")"
		checked_busy=1
	fi
	wait_for "settled pod $POD '$v'" 60 || fail "pod capture not done: $(cat "$TMP/status.json"); $(tail -5 "$DLOG")"
	state_is pod "$POD" done && break
	state_is pod "$POD" refused || fail "pod capture: $(cat "$TMP/status.json")"
	log "'$v' was refused (another capture ran); again"
done
state_is pod "$POD" done || fail "the pod capture never ran: $(cat "$TMP/status.json")"
[ -n "$checked_busy" ] || fail "never saw the pod capture running"
cp "$TMP/status.json" "$TMP/pod_status.json"
answer=$(json_get "$TMP/status.json" 'd["answer"]')
PID1=$(json_get "$TMP/status.json" 'd["profile_id"]')
log "pod capture $PID1: $answer"
case $answer in
*"Service billing used"*build_report*) ;;
*) fail "answer does not name Service billing and build_report: $answer" ;;
esac
K get events >"$TMP/events.txt" || fail "kubectl get events"
grep -q "ProfileCaptured.*pod/$POD" "$TMP/events.txt" || fail "no ProfileCaptured event: $(cat "$TMP/events.txt")"
K -n default get events -o jsonpath='{range .items[*]}{.reason}{"\n"}{end}' >"$TMP/nev.txt"
grep -q CaptureRefused "$TMP/nev.txt" || fail "no CaptureRefused event on the node: $(cat "$TMP/nev.txt")"

wait_for "[ \"\$(delivered_ids)\" = $PID1 ]" 20 || fail "cluster API got '$(delivered_ids)', want $PID1"
code=$(api "$VIEWER" GET "/v1/profiles/$PID1/download?format=pprof")
[ "$code" = 200 ] || fail "viewer download: HTTP $code"
mv "$TMP/body" "$TMP/pod.pb.gz"
"$PYTHON" - "$TMP/deliveries.jsonl" "$(stat -c %s "$TMP/pod.pb.gz")" "$NODE" <<'EOF' || fail "delivery metadata"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
m = r["metadata"]
for k in ("id", "node", "target", "question", "duration", "start", "answer", "groups", "notes"):
    assert k in m, "metadata lacks %s: %s" % (k, m)
assert m["node"] == sys.argv[3] and m["question"] == "cpu" and m["duration"] == 10, m
assert m["target"]["service"] == "billing" and "Service billing" in m["answer"], m
assert r["profile_bytes"] == int(sys.argv[2]), (r["profile_bytes"], sys.argv[2])
assert m["groups"] and m["groups"][0]["owner"] == "Service billing", m["groups"]
EOF
"$GO" tool pprof -top -symbolize=none "$TMP/pod.pb.gz" >"$TMP/pprof.top" 2>"$TMP/pprof.err" ||
	fail "go tool pprof -top failed: $(tail -3 "$TMP/pprof.err")"
grep -q build_report "$TMP/pprof.top" || fail "pprof top lacks build_report: $(head -12 "$TMP/pprof.top")"

# Retention: 50 seeded + this one = 51 billing profiles: the oldest seed went.
code=$(api "$VIEWER" GET "/v1/profiles?service=billing&limit=500")
[ "$code" = 200 ] || fail "list: HTTP $code"
[ "$(json_get "$TMP/body" 'd["total"]')" = 50 ] || fail "billing profiles: $(json_get "$TMP/body" 'd["total"]'), want 50"
[ "$(json_get "$TMP/body" 'd["profiles"][0]["id"]')" = "$PID1" ] || fail "newest is not $PID1"
json_get "$TMP/body" '[p["id"] for p in d["profiles"]]' | grep -q '20200101T000000Z-000000' &&
	fail "the oldest profile was kept past retention"
json_get "$TMP/body" '[p["id"] for p in d["profiles"]]' | grep -q '20200101T000001Z-000001' ||
	fail "the second oldest profile was removed"
[ ! -e "$STORE/profiles/20200101T000000Z-000000" ] || fail "the oldest profile is still on disk"
# a Service is a namespace and a workload: NAMESPACE/NAME lists that tenant's only
code=$(api "$VIEWER" GET "/v1/profiles?service=$NS/billing&limit=500")
[ "$code" = 200 ] && [ "$(json_get "$TMP/body" 'd["total"]')" = 50 ] ||
	fail "$NS/billing profiles: HTTP $code $(head -c 300 "$TMP/body")"
[ "$(json_get "$TMP/body" 'd["profiles"][0]["namespace"]')" = "$NS" ] || fail "no namespace in the profile"
code=$(api "$VIEWER" GET "/v1/profiles?service=other/billing")
[ "$code" = 200 ] && [ "$(json_get "$TMP/body" 'd["total"]')" = 0 ] || fail "other/billing: $(cat "$TMP/body")"

# --- 2. the Node: a server profile grouped by owner -------------------------------------------------
for v in "duration=10,question=cpu" "duration=10, question=cpu" "duration=10 ,question=cpu"; do
	wait_lock
	K annotate --overwrite node "$NODE" "$CAPTURE_KEY=$v" >/dev/null || fail "annotate node"
	wait_for "settled node $NODE '$v'" 60 || fail "node capture not done: $(cat "$TMP/status.json"); $(tail -5 "$DLOG")"
	state_is node "$NODE" refused || break
	log "'$v' was refused (another capture ran); again"
done
state_is node "$NODE" done || fail "node capture: $(cat "$TMP/status.json")"
cp "$TMP/status.json" "$TMP/node_status.json"
PID2=$(json_get "$TMP/status.json" 'd["profile_id"]')
log "node capture $PID2: $(json_get "$TMP/status.json" 'd["answer"]')"
code=$(api "$VIEWER" GET "/v1/profiles/$PID2")
[ "$code" = 200 ] || fail "GET profile $PID2: HTTP $code"
[ "$(json_get "$TMP/body" 'd["profile"]["service"]')" = server ] || fail "node profile service: $(cat "$TMP/body" | head -c 300)"
[ "$(json_get "$TMP/body" 'd["summary"]["target"]["kind"]')" = server ] || fail "node profile is not a server profile"
json_get "$TMP/body" '[g["owner"] for g in d["summary"]["groups"]]' | grep -q '"Service billing"' ||
	fail "server profile groups lack Service billing: $(json_get "$TMP/body" '[g["owner"] for g in d["summary"]["groups"]]')"

# --- 3. bad values: failed, saying what is wrong and what is allowed -------------------------------
K annotate --overwrite pod "$POD" "$CAPTURE_KEY=question=disk,duration=10" >/dev/null || fail "annotate pod"
wait_for "state_is pod $POD failed" 15 || fail "bad question not failed: $(cat "$TMP/status.json")"
msg=$(json_get "$TMP/status.json" 'd["message"]')
case $msg in *"unknown question 'disk'; choose one of: cpu, wall, threads, locks, memory-growth"*) ;;
*) fail "bad question message: $msg" ;; esac
K annotate --overwrite pod "$POD" "$CAPTURE_KEY=question=cpu,duration=45" >/dev/null || fail "annotate pod"
wait_for "state_is pod $POD failed && grep -q 45 '$TMP/status.json'" 15 || fail "bad duration not failed: $(cat "$TMP/status.json")"
msg=$(json_get "$TMP/status.json" 'd["message"]')
[ "$msg" = "duration must be 10, 30 or 60 seconds, not '45'" ] || fail "bad duration message: $msg"
cp "$TMP/status.json" "$TMP/pod_status.json"

# --- 4. exactly once across restarts ---------------------------------------------------------------
agent_stop TERM
[ "$DAEMON_RC" = 0 ] || fail "SIGTERM: exit $DAEMON_RC: $(tail -5 "$DLOG")"
captures_before=$(audit_count 'r["what"] == "capture"')
# A dead agent left this request running (a second pod of the Service, annotated meanwhile).
POD2_UID=$(cat /proc/sys/kernel/random/uuid)
kube_admin POST /fake/pods "$(kube_pod_json "$NS" "$POD2" "$POD2_UID" "$NODE" "$(printf 'd%.0s' {1..64})" \
	'{"'$CAPTURE_KEY'": "question=cpu,duration=30", "'$STATUS_KEY'": "{\"request\":\"question=cpu,duration=30\",\"state\":\"running\"}"}')"
daemon_start
wait_for "state_is pod $POD2 failed" 15 || fail "a running request of a dead agent was not failed: $(cat "$TMP/status.json")"
[ "$(json_get "$TMP/status.json" 'd["message"]')" = "the agent restarted during the capture; annotate again to retry" ] ||
	fail "restart message: $(cat "$TMP/status.json")"
sleep 2
status_of node "$NODE"
cmp -s "$TMP/status.json" "$TMP/node_status.json" || fail "the node's done request changed: $(cat "$TMP/status.json")"
status_of pod "$POD"
cmp -s "$TMP/status.json" "$TMP/pod_status.json" || fail "the pod's failed request changed: $(cat "$TMP/status.json")"
[ "$(audit_count 'r["what"] == "capture"')" = $((captures_before + 1)) ] ||
	fail "captures after the restart: $(tail -3 "$STORE/audit.log")"
grep -q 'already handled: done; not run again' "$DLOG" || fail "the restart did not skip the done request"

# --- 5. nothing lost: cluster API down, 3 captures, kill -9, both back -------------------------------
kill "$CLUSTER_PID"
wait "$CLUSTER_PID" 2>/dev/null
ids=
for i in 1 2 3; do
	api_capture "$OPERATOR" '{"target": "service:billing", "question": "cpu", "duration": 10}'
	ids="$ids $ID"
done
ids=${ids# }
log "captured while the cluster API was down: $ids"
# a fourth, killed while it samples: it must leave nothing behind
wait_lock
code=$(api "$OPERATOR" POST /v1/captures '{"target": "service:billing", "question": "cpu", "duration": 10}')
[ "$code" = 202 ] || fail "capture 4: HTTP $code"
ID4=$(json_get "$TMP/body" 'd["id"]')
wait_for "[ \"\$(api $OPERATOR GET /v1/captures/current)\" = 200 ] && [ \"\$(json_get $TMP/body 'd.get(\"step\", 0)')\" -ge 3 ]" 20 ||
	fail "capture 4 did not start sampling: $(cat "$TMP/body")"
agent_stop KILL
n=$(ls "$STORE/spool" | grep -cE '^[0-9]{20}-')
[ "$n" = 3 ] || fail "spool holds $n items after kill -9, want 3: $(ls "$STORE/spool")"
cluster_start
daemon_start
want="$PID1 $PID2 $ids"
wait_for "[ \"\$(delivered_ids)\" = \"$want\" ]" 30 || fail "delivered '$(delivered_ids)', want '$want'"
"$PYTHON" - "$TMP/deliveries.jsonl" <<'EOF' || fail "a duplicate delivery"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert all(not r["duplicate"] and r["idempotency_key"] == r["id"] for r in recs), recs
EOF
code=$(api "$VIEWER" GET "/v1/profiles/$ID4")
[ "$code" = 404 ] || fail "the killed capture left profile $ID4 (HTTP $code)"
[ -z "$(ls -A "$STORE/captures")" ] || fail "capture files left: $(ls "$STORE/captures")"
ls -a "$STORE/profiles" | grep -q '^\.tmp-' && fail "a .tmp- entry is left in the store"
for id in $ids; do
	[ "$(api "$VIEWER" GET "/v1/profiles/$id")" = 200 ] || fail "profile $id is gone"
done

# --- 6. roles and the audit trail ------------------------------------------------------------------
first=${ids%% *}
[ "$(api "$VIEWER" GET /v1/profiles)" = 200 ] || fail "viewer list"
[ "$(api "$VIEWER" GET "/v1/profiles/$first/download?format=collapsed")" = 200 ] || fail "viewer download"
grep -q build_report "$TMP/body" || fail "collapsed download lacks build_report"
[ "$(api "$VIEWER" POST /v1/captures '{"target": "server", "question": "cpu"}')" = 403 ] || fail "viewer capture not 403"
[ "$(api "$VIEWER" DELETE "/v1/profiles/$first")" = 403 ] || fail "viewer delete not 403"
[ "$(api "$VIEWER" POST /v1/symbols '{}')" = 403 ] || fail "viewer upload not 403"
[ "$(api "$OPERATOR" DELETE "/v1/profiles/$first")" = 200 ] || fail "operator delete: $(cat "$TMP/body")"
[ "$(api "$VIEWER" GET "/v1/profiles/$first")" = 404 ] || fail "deleted profile still there"
for cond in \
	'r["who"] == "vera" and r["what"] == "download" and r["result"] == "ok"' \
	'r["who"] == "vera" and r["what"] == "capture" and r["result"] == "denied" and "request=" in r["detail"]' \
	'r["who"] == "vera" and r["what"] == "delete" and r["result"] == "denied"' \
	'r["who"] == "vera" and r["what"] == "upload" and r["result"] == "denied"' \
	'r["who"] == "otto" and r["what"] == "delete" and r["result"] == "ok"' \
	'r["who"] == "otto" and r["what"] == "capture" and r["result"] == "accepted"' \
	'r["who"] == "otto" and r["what"] == "capture" and r["result"] == "refused"' \
	'r["who"] == "pod/'$NS/$POD'" and r["what"] == "capture" and r["result"] == "accepted" and r["target"] == "service:'$NS'/billing"' \
	'r["who"] == "pod/'$NS/$POD'" and r["what"] == "capture" and r["result"] == "ok"' \
	'r["who"] == "pod/'$NS/$POD'" and r["what"] == "capture" and r["result"] == "invalid" and r["target"] == "service:'$NS'/billing" and r["detail"].startswith("request=question=")' \
	'r["who"] == "node/'$NODE'" and r["what"] == "capture" and r["result"] == "refused"' \
	'r["who"] == "node/'$NODE'" and r["what"] == "capture" and r["result"] == "ok" and r["target"] == "server"'; do
	[ "$(audit_count "$cond")" -ge 1 ] || fail "no audit line with $cond: $(cat "$STORE/audit.log")"
done
curl -sf "$API/metrics" >"$TMP/metrics" || fail "GET /metrics"
grep -q '^slideops_profiler_captures_total{result="done"} 0$' "$TMP/metrics" ||
	fail "this agent life captured nothing: $(grep captures_total "$TMP/metrics")"
grep -q '^slideops_profiler_spool_depth 0$' "$TMP/metrics" || fail "spool_depth: $(grep spool "$TMP/metrics")"
grep -q '^slideops_profiler_profiles_stored ' "$TMP/metrics" || fail "no profiles_stored"

agent_stop TERM
[ "$DAEMON_RC" = 0 ] || fail "SIGTERM: exit $DAEMON_RC"
grep -q 'signal 15: stopping' "$DLOG" || fail "no stop message"
log "all daemon checks passed"
exit 0
