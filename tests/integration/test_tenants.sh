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

# --- the fake Kubernetes API server and the fake cluster API -------------------------------------
fake_kube_start 0 --token "$KTOKEN" --state "$TMP/kstate.json" --bookmark-seconds 1
kubeconfig_write "$TMP/kubeconfig" "$KAPI" "$KTOKEN" default
K() { kubectl --kubeconfig "$TMP/kubeconfig" --request-timeout=10s "$@"; }
echo "cluster-token" >"$TMP/ctoken"
fake_cluster_start 0 --log "$TMP/deliveries.jsonl" --token cluster-token

# --- two tenants: the same Deployment name, real containers, different hot functions -------------
make_busybox_rootfs "$TMP/rootfs" "$HOT2" "$SPIN" || exit 1
start_pod() # NS NAME PROGRAM: prints the container's host pid
{
	local uid cid cg
	uid=$(cat /proc/sys/kernel/random/uuid)
	cid=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	cg=$(cg_make_pod burstable "$uid" "$cid")
	kube_admin POST /fake/pods "$(kube_pod_json "$1" "$2" "$uid" "$NODE" "$cid")"
	ns_container_run "$TMP/rootfs" "$cg" "/usr/local/bin/$3"
}
kube_admin POST /fake/nodes '{"metadata": {"name": "'$NODE'"}, "status": {"nodeInfo": {"kubeletVersion": "v1.32.0"}}}'
pid_a=$(start_pod team-a "$POD_A" hot2) || exit 1
pid_b=$(start_pod team-b "$POD_B" spin) || exit 1
log "team-a/$POD_A: hot2 pid $pid_a; team-b/$POD_B: spin pid $pid_b"

# --- config, tokens, and a store with one older profile of each tenant --------------------------
STORE=$TMP/store
APORT=$(free_port)
cat >"$TMP/tokens.yaml" <<EOF
tokens:
  - {name: vera, token: "$VIEWER", role: viewer}
EOF
agent_yaml "$NODE" "$APORT" "$STORE" "$TMP/kubeconfig" "$CLUSTER_URL" "retention_per_service: 1" \
	>"$TMP/profiler.yaml"
store_seed "$STORE/profiles" team-a team-b
SEED_A=20200101T000000Z-000000
SEED_B=20200101T000001Z-000001

# --- the agent -------------------------------------------------------------------------------------
wait_lock
agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.log" || fail "the agent did not start: $(tail -5 "$DLOG")"
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
settled() { status_of "$1" "$2" && status_settled "$3"; } # NS POD VALUE
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

# captured_alone NS POD MINE THEIRS: a capture of NS/POD (capture); its answer and its stored
# profile name MINE, the tenant's hot function, and never THEIRS, the other tenant's.
captured_alone()
{
	capture "$1" "$2"
	case $ANSWER in
	*"Service billing"*"$3"*) ;;
	*) fail "$1's answer does not name $3: $ANSWER" ;;
	esac
	case $ANSWER in *"$4"*) fail "$1's answer names the other tenant's $4: $ANSWER" ;; esac
	collapsed_of "$PROFILE"
	grep -q "$3" "$TMP/collapsed.txt" || fail "$1's profile lacks $3: $(head -5 "$TMP/collapsed.txt")"
	! grep -q "$4" "$TMP/collapsed.txt" ||
		fail "$1's profile sampled the other tenant's pod: $(grep "$4" "$TMP/collapsed.txt" | head -3)"
}

# --- 1. team-a's request samples, names and tells team-a only -------------------------------------
captured_alone team-a "$POD_A" build_report checkout_loop
PROFILE_A=$PROFILE
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
captured_alone team-b "$POD_B" checkout_loop build_report
PROFILE_B=$PROFILE
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

agent_stop TERM
log "ok: team-a $PROFILE_A (build_report), team-b $PROFILE_B (checkout_loop), kept apart"
exit 0
