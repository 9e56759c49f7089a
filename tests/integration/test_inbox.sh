#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The agent cannot be made to lose requests (issue 12, class 6), in the real protocol: the
# agent (`slideops-profiler daemon`) against the fake API server (tests/fake-kube/), read back
# with real kubectl.
#
#  1. A full inbox. More annotated pods of this node than the annotation inbox holds
#     (ANNOTATIONS_INBOX_MAX, 64) are there when the agent starts, so its first pod list fires
#     every request at once, before the request thread takes any. Every request ends with a
#     final capture-status (done, failed or refused: none of these pods has a process, so
#     none can be captured), or the agent says it left it for its next start and the next
#     start settles it. None is lost without a word, and none runs twice.
#  2. A capture-status longer than the agent reads (4 KiB) names the request: it counts as
#     handled. The request is not run again, neither at this start nor after a restart: no
#     new status, no Event, no audit line for it.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd kubectl curl flock
# fail: lib.sh's (kept as lib_fail: the agent's log, the FAIL line), but first the agent's logs
# and the statuses are copied out of $TMP, for whoever reads the failure
eval "lib_$(declare -f fail)"
fail()
{
	mkdir -p "$OUTPUT/integration/test_inbox.fail" &&
		cp "$TMP"/daemon.*.log "$TMP"/statuses*.txt "$OUTPUT/integration/test_inbox.fail/" 2>/dev/null
	lib_fail "$* (logs in $OUTPUT/integration/test_inbox.fail)"
}

NODE=node-1
NS=crowd
NPODS=72		# > ANNOTATIONS_INBOX_MAX (daemon/agent/annotations.h)
KTOKEN=s3cr3t-kube-token
CAPTURE_KEY=profiling.slideops.io/capture
VALUE="question=cpu,duration=10"
LONG_POD=long-5d8f9c7b6-lllll

# --- the fake Kubernetes API server, the pods ----------------------------------------------------
fake_kube_start 0 --token "$KTOKEN" --state "$TMP/kstate.json" --bookmark-seconds 1
kubeconfig_write "$TMP/kubeconfig" "$KAPI" "$KTOKEN" "$NS"
K() { kubectl --kubeconfig "$TMP/kubeconfig" --request-timeout=10s "$@"; }
kube_admin POST /fake/nodes '{"metadata": {"name": "'$NODE'"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}'
cid() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
for i in $(seq -w 1 $NPODS); do
	kube_admin POST /fake/pods "$(kube_pod_json "$NS" "crowd-5d8f9c7b6-p$i" \
		"$(cat /proc/sys/kernel/random/uuid)" "$NODE" "$(cid)" "{\"$CAPTURE_KEY\": \"$VALUE\"}")"
done
# A status of 5000 bytes about the request: what an earlier life of the agent could have
# written for a long request value and answer.
LONG_STATUS=$("$PYTHON" -c 'import json, sys
print(json.dumps({"request": sys.argv[1], "state": "done", "answer": "x" * 5000}))' "$VALUE")
ann=$("$PYTHON" -c 'import json, sys; print(json.dumps({sys.argv[1]: sys.argv[2],
	sys.argv[1] + "-status": sys.argv[3]}))' "$CAPTURE_KEY" "$VALUE" "$LONG_STATUS")
kube_admin POST /fake/pods "$(kube_pod_json "$NS" "$LONG_POD" "$(cat /proc/sys/kernel/random/uuid)" \
	"$NODE" "$(cid)" "$ann")"
log "$NPODS annotated pods and one with a ${#LONG_STATUS}-byte status in $NS"

# --- the agent ----------------------------------------------------------------------------------
STORE=$TMP/store
APORT=$(free_port)
agent_tokens vera viewer-token-0123456789abcdef viewer
agent_yaml "$NODE" "$APORT" "$STORE" "$TMP/kubeconfig" >"$TMP/profiler.yaml"

# statuses: "POD STATE" of every pod of $NS with a capture-status about $VALUE (the long one
# is skipped: it is not JSON kubectl can cut), into $TMP/statuses.txt
statuses()
{
	K get pods -o json >"$TMP/pods.json" || return 1
	"$PYTHON" - "$TMP/pods.json" "$VALUE" "$LONG_POD" >"$TMP/statuses.txt" <<'EOF'
import json, sys
for p in json.load(open(sys.argv[1]))["items"]:
    m = p["metadata"]
    s = m.get("annotations", {}).get("profiling.slideops.io/capture-status")
    if m["name"] == sys.argv[3] or not s:
        continue
    d = json.loads(s)
    if d.get("request") == sys.argv[2] and d.get("state") != "running":
        print(m["name"], d["state"])
EOF
}
settled_count() { statuses >/dev/null 2>&1 && wc -l <"$TMP/statuses.txt"; }
# left: the pods the agent's log says it left for its next start
left() { grep -o "that of pod/$NS/[^ ]* is left for the next start" "$DLOG" | cut -d/ -f3 | sort -u; }

# run_agent N: one life of the agent, until every request is settled or said to be left
run_agent()
{
	wait_lock
	agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.$1.log" || fail "the agent did not start"
	wait_for "[ \$((\$(settled_count) + \$(left | wc -l))) -ge $NPODS ]" 40 ||
		fail "life $1: $(settled_count) of $NPODS requests settled, $(left | wc -l) left: lost without a status"
	# the long status is read, judged handled, and left alone
	wait_for "grep -q 'pod/$NS/$LONG_POD ($VALUE) was already handled' '$DLOG'" 10 ||
		fail "life $1: the request with the over-long status was not judged handled"
	agent_stop TERM
	[ "$DAEMON_RC" = 0 ] || fail "life $1: the agent exited $DAEMON_RC"
	statuses || fail "kubectl get pods"
	log "life $1: $(wc -l <"$TMP/statuses.txt") settled ($(cut -d' ' -f2 "$TMP/statuses.txt" | sort | uniq -c | tr -s ' \n' ' ')), $(left | wc -l) left for the next start"
}

# --- 1. the first start: every request settled or said to be left ----------------------------------
run_agent 1
left >"$TMP/left1.txt"
cp "$TMP/statuses.txt" "$TMP/statuses1.txt"
while read -r pod; do
	! grep -q "^$pod " "$TMP/statuses1.txt" || fail "$pod was left for the next start and settled too"
done <"$TMP/left1.txt"

# --- 2. the restart: what was left is settled now; nothing settled runs again --------------------
run_agent 2
[ "$(wc -l <"$TMP/statuses.txt")" = "$NPODS" ] ||
	fail "after the restart, $(wc -l <"$TMP/statuses.txt") of $NPODS requests have a final status; left again: $(left | tr '\n' ' ')"
while read -r pod state; do
	grep -qx "$pod $state" "$TMP/statuses.txt" || fail "$pod ($state) was run again after the restart"
done <"$TMP/statuses1.txt"

# --- 3. the over-long status: never run, in either life --------------------------------------------
K get pod "$LONG_POD" -o json >"$TMP/long.json" || fail "kubectl get pod $LONG_POD"
[ "$(json_get "$TMP/long.json" 'd["metadata"]["annotations"]["profiling.slideops.io/capture-status"]')" = "$LONG_STATUS" ] ||
	fail "the over-long status of $LONG_POD was overwritten: the request ran again"
! grep -q "$LONG_POD" "$STORE/audit.log" 2>/dev/null ||
	fail "the audit trail has the request of $LONG_POD: $(grep "$LONG_POD" "$STORE/audit.log")"
K get events -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' >"$TMP/events.txt" ||
	fail "kubectl get events"
! grep -qx "$LONG_POD" "$TMP/events.txt" || fail "$LONG_POD got an Event: its request ran again"
[ "$(grep -c . "$TMP/events.txt")" -le "$NPODS" ] ||
	fail "$(grep -c . "$TMP/events.txt") Events for $NPODS requests: some ran twice"
log "no request lost, none run twice; the over-long status was left alone"
exit 0
