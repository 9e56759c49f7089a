#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Tenants kept apart (issue 12, class 5): a Service is a namespace AND a workload. Two
# namespaces, team-a and team-b, each run a Deployment named billing on this node; each pod is a
# real container (pid 1 of its own pid+mount+net namespaces, a busybox root, in the cgroup the
# kubelet gives a pod container), with a different hot function:
#
#   team-a/billing   hot2  (build_report)
#   team-b/billing   spin  (checkout_loop)
#
# The agent runs against the fake API server (tests/fake-kube/), driven by real kubectl, with
# retention_per_service 1 and a store that already holds one older profile of each tenant.
#
#  1. kubectl -n team-a annotate pod ... capture: the status, the Event (in team-a) and the
#     stored profile name build_report and never checkout_loop; team-b's pod gets no status and
#     no Event; the cluster API's metadata carries namespace team-a.
#  2. Retention is per (namespace, service): team-a's capture removed team-a's older profile
#     only; team-b's is still there. ?service=team-a/billing lists team-a's only.
#  3. The same the other way round: team-b's capture names checkout_loop, not build_report.
#  4. The audit trail names the Service with its namespace.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd kubectl curl flock
fail()
{
	[ -n "${DLOG:-}" ] && [ -f "$DLOG" ] && tail -n 25 "$DLOG" | sed 's/^/  agent| /' >&2
	printf 'FAIL %s: %s\n' "$TEST_NAME" "$*" >&2
	exit 1
}

NODE=node-1
HASH_A=5d8f9c7b6
HASH_B=7c9d8b4f5
POD_A=billing-$HASH_A-aaaaa
POD_B=billing-$HASH_B-bbbbb
KTOKEN=s3cr3t-kube-token
VIEWER=viewer-token-0123456789abcdef
CAPTURE_KEY=profiling.slideops.io/capture
HOT2=$OUTPUT/workloads/hot2
SPIN=$OUTPUT/workloads/spin
[ -x "$HOT2" ] && [ -x "$SPIN" ] || fail "$HOT2 or $SPIN is missing (make all)"

# --- the fake Kubernetes API server ------------------------------------------------------------
"$PYTHON" "$REPO_ROOT/tests/fake-kube/fake_apiserver.py" --port 0 --port-file "$TMP/kport" \
	--token "$KTOKEN" --state "$TMP/kstate.json" --bookmark-seconds 1 2>>"$TMP/kube.log" &
echo $! >>"$LIB_STATE/pids"
wait_for "[ -s '$TMP/kport' ]" 10 || fail "fake API server did not start: $(tail -3 "$TMP/kube.log")"
KAPI=http://127.0.0.1:$(cat "$TMP/kport")
kadmin() { curl -sf -X "$1" "$KAPI$2" ${3:+-d "$3"} >/dev/null || fail "fake kube $1 $2 failed"; }
cat >"$TMP/kubeconfig" <<EOF
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: fake
  cluster:
    server: $KAPI
contexts:
- name: test
  context: {cluster: fake, user: agent, namespace: default}
users:
- name: agent
  user:
    token: $KTOKEN
EOF
K() { kubectl --kubeconfig "$TMP/kubeconfig" --request-timeout=10s "$@"; }

# --- the fake cluster API ------------------------------------------------------------------------
echo "cluster-token" >"$TMP/ctoken"
"$PYTHON" "$REPO_ROOT/tests/fake-cluster/fake_cluster_api.py" --port 0 --port-file "$TMP/cport" \
	--log "$TMP/deliveries.jsonl" --token cluster-token </dev/null >>"$TMP/cluster.log" 2>&1 &
echo $! >>"$LIB_STATE/pids"
wait_for "[ -s '$TMP/cport' ]" 10 || fail "fake cluster API did not start: $(tail -3 "$TMP/cluster.log")"

# --- two tenants: the same Deployment name, real containers, different hot functions -------------
make_busybox_rootfs "$TMP/rootfs" "$HOT2" "$SPIN" || exit 1
pod_json() # NS NAME UID CID HASH
{
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$2", "namespace": "$1", "uid": "$3",
   "labels": {"app": "billing", "pod-template-hash": "$5"},
   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "billing-$5",
                        "uid": "rs-$1", "controller": true, "blockOwnerDeletion": true}]},
 "spec": {"nodeName": "$NODE", "containers": [{"name": "app", "image": "billing:1"}]},
 "status": {"phase": "Running",
   "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                          "containerID": "containerd://$4"}]}}
EOF
}
start_pod() # NS NAME HASH PROGRAM: prints the container's host pid
{
	local uid cid cg
	uid=$(cat /proc/sys/kernel/random/uuid)
	cid=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	cg=$(cg_make_pod burstable "$uid" "$cid")
	kadmin POST /fake/pods "$(pod_json "$1" "$2" "$uid" "$cid" "$3")"
	ns_container_run "$TMP/rootfs" "$cg" "/usr/local/bin/$4"
}
kadmin POST /fake/nodes '{"metadata": {"name": "'$NODE'"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}'
pid_a=$(start_pod team-a "$POD_A" "$HASH_A" hot2) || exit 1
pid_b=$(start_pod team-b "$POD_B" "$HASH_B" spin) || exit 1
log "team-a/$POD_A: hot2 pid $pid_a; team-b/$POD_B: spin pid $pid_b"

# --- config, tokens, and a store with one older profile of each tenant --------------------------
STORE=$TMP/store
APORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$TMP/tokens.yaml" <<EOF
tokens:
  - {name: vera, token: "$VIEWER", role: viewer}
EOF
cat >"$TMP/profiler.yaml" <<EOF
node_name: $NODE
listen: 127.0.0.1:$APORT
store_dir: $STORE
retention_per_service: 1
log_level: info
kubernetes:
  enabled: true
  kubeconfig: $TMP/kubeconfig
cluster_api:
  url: http://127.0.0.1:$(cat "$TMP/cport")
  token_file: $TMP/ctoken
tokens_file: $TMP/tokens.yaml
EOF
"$PYTHON" - "$STORE/profiles" <<'EOF' || fail "cannot seed the store"
import json, os, sys
base = sys.argv[1]
for i, ns in enumerate(("team-a", "team-b")):
    pid = "20200101T00000%dZ-00000%d" % (i, i)
    d = os.path.join(base, pid)
    os.makedirs(d)
    for f in ("profile.pb.gz", "profile.collapsed", "summary.json"):
        open(os.path.join(d, f), "w").write("{}" if f == "summary.json" else "x")
    t = 1577836800 * 10**9 + i * 10**9
    json.dump({"version": 1, "id": pid, "service": "billing", "namespace": ns, "question": "cpu",
               "target": {"kind": "service", "description": "Service billing"},
               "start": "2020-01-01T00:00:00Z", "start_ns": t, "duration_seconds": 10,
               "answer": "seeded", "languages": ["native"], "sample_count": 1,
               "continuous": False, "created": "2020-01-01T00:00:00Z", "created_ns": t},
              open(os.path.join(d, "meta.json"), "w"))
EOF
SEED_A=20200101T000000Z-000000
SEED_B=20200101T000001Z-000001

# --- the agent -------------------------------------------------------------------------------------
wait_lock() { wait_for "flock -n /run/slideops-profiler.lock true" 120 || fail "another capture holds the lock"; }
DLOG=$TMP/daemon.log
wait_lock
"$BIN" daemon --config "$TMP/profiler.yaml" </dev/null >"$DLOG" 2>&1 &
DAEMON_PID=$!
echo "$DAEMON_PID" >>"$LIB_STATE/pids"
wait_for "grep -q 'daemon ready' '$DLOG' || ! kill -0 $DAEMON_PID 2>/dev/null" 20
grep -q 'daemon ready' "$DLOG" || fail "the agent did not start: $(tail -5 "$DLOG")"
API=http://127.0.0.1:$APORT
api() # PATH: prints the status code; the body goes to $TMP/body
{
	curl -s -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $VIEWER" "$API$1"
}
status_of() # NS POD: the capture-status annotation into $TMP/status.json (empty when none)
{
	K -n "$1" get pod "$2" \
		-o jsonpath='{.metadata.annotations.profiling\.slideops\.io/capture-status}' \
		>"$TMP/status.json" 2>/dev/null
}
settled() # NS POD VALUE
{
	status_of "$1" "$2" &&
		[ "$(json_get "$TMP/status.json" 'd["request"]' 2>/dev/null)" = "$3" ] &&
		[ "$(json_get "$TMP/status.json" 'd["state"]' 2>/dev/null)" != running ]
}
# capture NS POD: annotates with kubectl until the capture ran (another test's capture on this
# machine refuses it: asked again in a form that reads the same); the answer in $ANSWER, the
# profile in $PROFILE
capture()
{
	local v
	for v in "question=cpu,duration=10" "question=cpu, duration=10" "question=cpu ,duration=10"; do
		wait_lock
		K -n "$1" annotate --overwrite pod "$2" "$CAPTURE_KEY=$v" >/dev/null ||
			fail "kubectl -n $1 annotate pod $2"
		wait_for "settled $1 $2 '$v'" 60 ||
			fail "$1/$2: no final status: $(cat "$TMP/status.json")"
		case $(json_get "$TMP/status.json" 'd["state"]') in
		done)
			ANSWER=$(json_get "$TMP/status.json" 'd["answer"]')
			PROFILE=$(json_get "$TMP/status.json" 'd["profile_id"]')
			log "$1/$2: $PROFILE: $ANSWER"
			return 0 ;;
		refused) log "$1/$2 '$v' refused (another capture ran); again" ;;
		*) fail "$1/$2: $(cat "$TMP/status.json")" ;;
		esac
	done
	fail "$1/$2: no capture could run"
}
collapsed_of() # PROFILE: its collapsed stacks into $TMP/collapsed.txt
{
	[ "$(api "/v1/profiles/$1/download?format=collapsed")" = 200 ] || fail "download $1: $(cat "$TMP/body")"
	mv "$TMP/body" "$TMP/collapsed.txt"
}
events_of() # NS: "reason message" lines of the Events in NS
{
	K -n "$1" get events -o jsonpath='{range .items[*]}{.reason} {.involvedObject.name} {.message}{"\n"}{end}'
}

# --- 1. team-a's request samples, names and tells team-a only -------------------------------------
capture team-a "$POD_A"
PROFILE_A=$PROFILE
case $ANSWER in
*"Service billing"*build_report*) ;;
*) fail "team-a's answer does not name build_report: $ANSWER" ;;
esac
case $ANSWER in *checkout_loop*) fail "team-a's answer names team-b's checkout_loop: $ANSWER" ;; esac
collapsed_of "$PROFILE_A"
grep -q build_report "$TMP/collapsed.txt" || fail "team-a's profile lacks build_report: $(head -5 "$TMP/collapsed.txt")"
! grep -q checkout_loop "$TMP/collapsed.txt" || fail "team-a's profile sampled team-b's pod: $(grep checkout_loop "$TMP/collapsed.txt" | head -3)"
events_of team-a >"$TMP/ev_a.txt" || fail "kubectl -n team-a get events"
grep -q "^ProfileCaptured $POD_A .*build_report" "$TMP/ev_a.txt" || fail "no ProfileCaptured in team-a: $(cat "$TMP/ev_a.txt")"
! grep -q checkout_loop "$TMP/ev_a.txt" || fail "team-a's Event names checkout_loop: $(cat "$TMP/ev_a.txt")"
events_of team-b >"$TMP/ev_b.txt" || fail "kubectl -n team-b get events"
[ ! -s "$TMP/ev_b.txt" ] || fail "team-b got an Event for team-a's request: $(cat "$TMP/ev_b.txt")"
status_of team-b "$POD_B"
[ ! -s "$TMP/status.json" ] || fail "team-b's pod got a status: $(cat "$TMP/status.json")"
wait_for "[ -s '$TMP/deliveries.jsonl' ]" 20 || fail "nothing reached the cluster API"
"$PYTHON" - "$TMP/deliveries.jsonl" "$PROFILE_A" <<'EOF' || fail "cluster API metadata: $(cat "$TMP/deliveries.jsonl")"
import json, sys
m = [json.loads(l)["metadata"] for l in open(sys.argv[1])]
m = [x for x in m if x["id"] == sys.argv[2]][0]
assert m["namespace"] == "team-a" and m["target"]["namespace"] == "team-a", m
assert m["target"]["service"] == "billing" and m["target"]["pod"].startswith("billing-"), m
EOF

# --- 2. retention per (namespace, service) -----------------------------------------------------------
[ ! -e "$STORE/profiles/$SEED_A" ] || fail "team-a's older profile survived retention 1"
[ -e "$STORE/profiles/$SEED_B" ] || fail "team-a's capture evicted team-b's profile"
[ "$(api "/v1/profiles?service=team-a/billing")" = 200 ] || fail "list team-a: $(cat "$TMP/body")"
[ "$(json_get "$TMP/body" '" ".join(p["id"] for p in d["profiles"])')" = "$PROFILE_A" ] ||
	fail "team-a/billing lists $(cat "$TMP/body")"
[ "$(api "/v1/profiles?service=team-b/billing")" = 200 ] || fail "list team-b: $(cat "$TMP/body")"
[ "$(json_get "$TMP/body" '" ".join(p["id"] for p in d["profiles"])')" = "$SEED_B" ] ||
	fail "team-b/billing lists $(cat "$TMP/body")"
[ "$(api "/v1/profiles?service=Team_A/billing")" = 400 ] || fail "a bad namespace is not a 400: $(cat "$TMP/body")"

# --- 3. the other way round ------------------------------------------------------------------------
capture team-b "$POD_B"
PROFILE_B=$PROFILE
case $ANSWER in
*"Service billing"*checkout_loop*) ;;
*) fail "team-b's answer does not name checkout_loop: $ANSWER" ;;
esac
case $ANSWER in *build_report*) fail "team-b's answer names team-a's build_report: $ANSWER" ;; esac
collapsed_of "$PROFILE_B"
! grep -q build_report "$TMP/collapsed.txt" || fail "team-b's profile sampled team-a's pod"
[ ! -e "$STORE/profiles/$SEED_B" ] || fail "team-b's older profile survived retention 1"
[ -e "$STORE/profiles/$PROFILE_A" ] || fail "team-b's capture evicted team-a's profile"
status_of team-a "$POD_A"
[ "$(json_get "$TMP/status.json" 'd["profile_id"]')" = "$PROFILE_A" ] || fail "team-a's status changed: $(cat "$TMP/status.json")"

# --- 4. the audit trail names the Service with its namespace -----------------------------------------
"$PYTHON" - "$STORE/audit.log" "$POD_A" "$POD_B" <<'EOF' || fail "audit trail: $(cat "$STORE/audit.log")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for ns, pod in (("team-a", sys.argv[2]), ("team-b", sys.argv[3])):
    mine = [r for r in rows if r["who"] == "pod/%s/%s" % (ns, pod) and r["result"] == "ok"]
    assert mine and all(r["target"] == "service:%s/billing" % ns for r in mine), mine
EOF

kill -TERM "$DAEMON_PID"
wait_for "! kill -0 $DAEMON_PID 2>/dev/null" 20 || fail "the agent did not stop on SIGTERM"
log "ok: team-a $PROFILE_A (build_report), team-b $PROFILE_B (checkout_loop), kept apart"
exit 0
