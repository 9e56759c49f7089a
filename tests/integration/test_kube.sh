#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The Kubernetes client (daemon/agent/kube.c) against the fake API server (tests/fake-kube/), with
# real kubectl on the other side and a real process in a cgroup named as the kubelet names it:
#
#  - the client lists and watches only the pods of node-1 (fieldSelector, resourceVersion,
#    bookmarks, its bearer token) and maps the process (/proc/PID/cgroup -> owner ->
#    kube__owner_name) to "Service billing" (ReplicaSet billing-5d8f9c7b6);
#  - `kubectl annotate` of the pod and the node fires on_request with the value;
#  - the client's merge patch of capture-status is read back by `kubectl get -o jsonpath`,
#    its Event by `kubectl get events`;
#  - a forced compaction (410 Gone) makes it relist and keep up;
#  - the server killed and restarted: it reconnects with backoff, relists, keeps working;
#  - kube__free() stops the watch thread at once.
#
# The driver, tests/integration/kube_probe.c, is compiled here against the built objects.

. "$(dirname "$0")/lib.sh"
need_root
need_cmd kubectl curl cc pkg-config

NODE=node-1
NS=shop
POD=billing-5d8f9c7b6-x7k2p
TOKEN=s3cr3t-token
CAPTURE_KEY=profiling.slideops.io/capture
STATUS_KEY=profiling.slideops.io/capture-status

# --- the driver ------------------------------------------------------------------------------
# the client's files, cgroups/ and all of base/ (the bottom layer: any of it may be used)
# shellcheck disable=SC2046
build_driver "$TMP/kube_probe" kube_probe.c daemon/agent/kube daemon/agent/kube_parse \
	daemon/agent/http cgroups/owner cgroups/resolver base -- \
	$(pkg-config --libs libcurl jansson yaml-0.1) -lpthread

# --- the fake API server -----------------------------------------------------------------------
start_server() # again on the same port
{
	fake_kube_start "${PORT:-0}" --token "$TOKEN" --state "$TMP/state.json" --log "$TMP/access.log" \
		--bookmark-seconds 1
	SERVER_PID=$KUBE_PID PORT=$SERVE_PORT API=$KAPI
}
start_server
log "fake API server on $API"
kubeconfig_write "$TMP/kubeconfig" "$API" "$TOKEN" "$NS"
K() { kubectl --kubeconfig "$TMP/kubeconfig" --request-timeout=10s "$@"; }

# --- a pod of node-1 with a real process, and one of node-2 --------------------------------------
POD_UID=$(cat /proc/sys/kernel/random/uuid)
CID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
cg=$(cg_make_pod burstable "$POD_UID" "$CID")
pid=$(cg_run "$cg" sleep 600)
grep -q "cri-containerd-$CID.scope" "/proc/$pid/cgroup" || fail "process $pid is not in $cg"

kube_admin POST /fake/nodes '{"metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}'
kube_admin POST /fake/nodes '{"metadata": {"name": "node-2"}}'
kube_admin POST /fake/pods "$(kube_pod_json "$NS" "$POD" "$POD_UID" "$NODE" "$CID")"
OTHER_UID=$(cat /proc/sys/kernel/random/uuid)
kube_admin POST /fake/pods "$(kube_pod_json "$NS" billing-5d8f9c7b6-other "$OTHER_UID" node-2 "$(printf 'b%.0s' {1..64})")"

# --- the probe ---------------------------------------------------------------------------------
: >"$TMP/requests"
coproc PROBE { SLIDEOPS_LOG=info exec "$TMP/kube_probe" --kubeconfig "$TMP/kubeconfig" --node "$NODE" \
	--requests "$TMP/requests" --watch-timeout 30 2>"$TMP/probe.log"; }
PROBE_PROC=$PROBE_PID
echo "$PROBE_PROC" >>"$LIB_STATE/pids"
IN=${PROBE[1]}
OUT=${PROBE[0]}

# cmd ARGS...: one command to the probe; its answer in $R.
cmd()
{
	echo "$*" >&"$IN" || fail "probe is gone (log: $(tail -5 "$TMP/probe.log"))"
	read -r -t 60 R <&"$OUT" || fail "probe did not answer '$*' (log: $(tail -5 "$TMP/probe.log"))"
	log "> $* => $R"
}
expect() # WANT ARGS...
{
	local want=$1
	shift
	cmd "$@"
	[ "$R" = "$want" ] || fail "'$*': got '$R', want '$want'"
}
stat() # FIELD
{
	cmd stats
	echo "$R" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
requests_with() { grep -c -F -- "$1" "$TMP/requests"; }

expect ok sync 10000
expect "owner Service billing" owner "$pid"
expect "pod $NS $POD billing app" pod-cid "$CID"
expect "pod $NS $POD billing app" pod-cid "containerd://$CID"
expect "pod $NS $POD billing" pod-uid "$POD_UID"
expect "error -2" pod-uid "$OTHER_UID"		# node-2's pod is not ours
expect ok wait-stat watches 2 10000		# pods and node watches are open

# What the client asked for: only node-1's pods and node, watches from a resourceVersion, its token.
curl -sf "$API/fake/requests" >"$TMP/requests.json" || fail "GET /fake/requests"
n=$(json_get "$TMP/requests.json" 'len([r for r in d if r["user_agent"].startswith("slideops") and r["path"] == "/api/v1/pods" and r["query"].get("fieldSelector") == "spec.nodeName=node-1" and "watch" not in r["query"]])')
[ "$n" -ge 1 ] || fail "no pod list with fieldSelector=spec.nodeName=node-1"
n=$(json_get "$TMP/requests.json" 'len([r for r in d if r["user_agent"].startswith("slideops") and r["path"] == "/api/v1/pods" and r["query"].get("watch") == "1" and r["query"].get("resourceVersion", "") != "" and r["query"].get("allowWatchBookmarks") == "true" and r["query"].get("fieldSelector") == "spec.nodeName=node-1"])')
[ "$n" -ge 1 ] || fail "no pod watch from a resourceVersion with bookmarks"
n=$(json_get "$TMP/requests.json" 'len([r for r in d if r["user_agent"].startswith("slideops") and r["path"] == "/api/v1/nodes" and r["query"].get("fieldSelector") == "metadata.name=node-1"])')
[ "$n" -ge 2 ] || fail "no node list and watch with fieldSelector=metadata.name=node-1"
n=$(json_get "$TMP/requests.json" 'len([r for r in d if r["user_agent"].startswith("slideops") and r["auth"] != "token"])')
[ "$n" -eq 0 ] || fail "$n requests of the client without its bearer token"

# --- capture requests: kubectl annotates, on_request fires ---------------------------------------
K annotate pod "$POD" "$CAPTURE_KEY=question=cpu,duration=10" >/dev/null || fail "kubectl annotate pod"
wait_for "grep -q 'REQUEST pod $NS $POD $POD_UID [0-9]* question=cpu,duration=10\$' '$TMP/requests'" 10 ||
	fail "no on_request for the pod annotation: $(cat "$TMP/requests")"

# The status goes back as a merge patch; kubectl reads it.
expect ok patch-pod "$NS" "$POD" '{"'$STATUS_KEY'": "{\"request\":\"question=cpu,duration=10\",\"state\":\"running\"}"}'
got=$(K get pod "$POD" -o jsonpath='{.metadata.annotations.profiling\.slideops\.io/capture-status}') ||
	fail "kubectl get pod"
[ "$got" = '{"request":"question=cpu,duration=10","state":"running"}' ] || fail "capture-status read back as '$got'"
got=$(K get pod "$POD" -o jsonpath='{.metadata.annotations.profiling\.slideops\.io/capture}')
[ "$got" = "question=cpu,duration=10" ] || fail "the merge patch lost the capture annotation: '$got'"
# Our own patch (a new resourceVersion, the same capture value) is not a new request.
sleep 1
[ "$(requests_with "REQUEST pod")" -eq 1 ] || fail "the status patch fired a request again: $(cat "$TMP/requests")"
expect "error -2" patch-pod "$NS" no-such-pod '{"a": "b"}'
expect "error -22" patch-pod "$NS" "$POD" '{"a": 1}'
expect "error -22" patch-pod "$NS" "$POD" '["a"]'
expect "error -22" patch-pod "$NS" "Bad_Name" '{"a": "b"}'

# The node: kubectl annotates it, the client patches its status.
K annotate node "$NODE" "$CAPTURE_KEY=question=cpu,duration=5" >/dev/null || fail "kubectl annotate node"
wait_for "grep -q 'REQUEST node - $NODE .* question=cpu,duration=5\$' '$TMP/requests'" 10 ||
	fail "no on_request for the node annotation: $(cat "$TMP/requests")"
expect ok patch-node '{"'$STATUS_KEY'": "{\"state\":\"done\"}"}'
got=$(K get node "$NODE" -o jsonpath='{.metadata.annotations.profiling\.slideops\.io/capture-status}')
[ "$got" = '{"state":"done"}' ] || fail "node capture-status read back as '$got'"

# --- events ------------------------------------------------------------------------------------
expect ok event-pod "$NS" "$POD" "$POD_UID" Normal CaptureDone "cpu profile ready: 812 samples"
expect ok event-node Warning CaptureRefused "another capture is running"
expect "error -22" event-pod "$NS" "$POD" "$POD_UID" Fatal Nope "bad type"
K get events >"$TMP/events.txt" || fail "kubectl get events"
grep -q "CaptureDone.*pod/$POD.*cpu profile ready: 812 samples" "$TMP/events.txt" ||
	fail "kubectl get events does not show the event: $(cat "$TMP/events.txt")"
got=$(K get events -o jsonpath='{.items[0].involvedObject.uid} {.items[0].source.component} {.items[0].type}')
[ "$got" = "$POD_UID slideops-profiler Normal" ] || fail "event fields: '$got'"
K -n default get events -o jsonpath='{.items[0].involvedObject.kind}/{.items[0].involvedObject.name} {.items[0].reason}' >"$TMP/nev.txt"
[ "$(cat "$TMP/nev.txt")" = "Node/$NODE CaptureRefused" ] || fail "node event: $(cat "$TMP/nev.txt")"

# --- 410 Gone: compaction forces a relist ----------------------------------------------------------
lists=$(stat lists)
kube_admin POST /fake/compact
expect ok wait-stat relists 1 10000
expect ok wait-stat lists $((lists + 1)) 10000
# A pod added and removed after the relist is seen through the new watch.
NEW_UID=$(cat /proc/sys/kernel/random/uuid)
kube_admin POST /fake/pods "$(kube_pod_json "$NS" billing-5d8f9c7b6-later "$NEW_UID" "$NODE" "$(printf 'c%.0s' {1..64})")"
expect ok wait-uid "$NEW_UID" 10000
kube_admin DELETE "/fake/pods/$NS/billing-5d8f9c7b6-later"
expect ok wait-gone "$NEW_UID" 10000
expect "owner Service billing" owner "$pid"
# A relist does not repeat the requests already reported.
[ "$(requests_with REQUEST)" -eq 2 ] || fail "the relist repeated requests: $(cat "$TMP/requests")"

# --- the server dies and comes back: backoff, reconnect, relist -----------------------------------
errors=$(stat errors)
watches=$(stat watches)
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
expect ok wait-stat errors $((errors + 2)) 10000
sleep 3
down_errors=$(($(stat errors) - errors))
# 3+ s down with a 200 ms..2 s backoff per stream: a handful of attempts, not a busy loop
[ "$down_errors" -le 20 ] || fail "$down_errors failed requests in about 3 s: no backoff"
grep -q 'retrying with backoff' "$TMP/probe.log" || fail "the failure was not logged"
# While it is down, a pod changes: the restarted server has no history before its RV, so the
# client's pod watch (from an older RV) gets 410 and relists.
"$PYTHON" - "$TMP/state.json" "$POD" <<'EOF' || fail "cannot edit the server state"
import json, sys
st = json.load(open(sys.argv[1]))
for o in st["objects"]:
    if o["name"] == sys.argv[2]:
        o["object"]["metadata"].setdefault("labels", {})["edited"] = "offline"
        st["rv"] += 1
        o["object"]["metadata"]["resourceVersion"] = str(st["rv"])
json.dump(st, open(sys.argv[1], "w"))
EOF
relists=$(stat relists)
start_server
expect ok wait-stat watches $((watches + 2)) 15000
expect ok wait-stat relists $((relists + 1)) 15000
expect "pod $NS $POD billing app" pod-cid "$CID"
K annotate --overwrite pod "$POD" "$CAPTURE_KEY=question=wall,duration=5" >/dev/null || fail "kubectl annotate pod (2)"
wait_for "grep -q 'REQUEST pod $NS $POD $POD_UID [0-9]* question=wall,duration=5\$' '$TMP/requests'" 10 ||
	fail "no on_request after the restart: $(cat "$TMP/requests")"
grep -q 'connected again' "$TMP/probe.log" || fail "the reconnection was not logged"
cmd stats
log "$R"

# --- kube__free() stops the watch thread at once ----------------------------------------------------
start=$(date +%s%N)
echo quit >&"$IN"
wait_for "! kill -0 $PROBE_PROC 2>/dev/null" 5 || fail "the probe did not exit within 5 s of quit"
ms=$((($(date +%s%N) - start) / 1000000))
wait "$PROBE_PROC"
rc=$?
[ "$rc" -eq 0 ] || fail "probe exited $rc: $(tail -5 "$TMP/probe.log")"
[ "$ms" -lt 2000 ] || fail "kube__free took $ms ms"
! grep -q 'ERROR: AddressSanitizer\|runtime error' "$TMP/probe.log" || fail "sanitizer: $(cat "$TMP/probe.log")"
log "quit in $ms ms; all good"
exit 0
