#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The manifests (manifests/*.yaml) applied with real kubectl to the fake API server
# (tests/fake-kube/) and read back with `kubectl get -o json`:
#
#  - `kubectl apply -f manifests/` creates every object; a second apply changes nothing
#    (every object "unchanged", no write request, the resourceVersion stays);
#  - the DaemonSet: hostPID, not privileged, no privilege escalation, read-only root fs,
#    capabilities drop ALL and add exactly BPF PERFMON SYS_PTRACE SYS_ADMIN CHECKPOINT_RESTORE
#    SYS_RESOURCE DAC_READ_SEARCH (each with a comment in the YAML saying why), NODE_NAME from
#    the downward API (spec.nodeName), resource requests and limits, a toleration, the cgroup
#    fs, tracefs and store hostPath volumes (mounted), the ConfigMap as its config;
#  - the ClusterRole grants exactly pods and nodes get/list/watch/patch and events create;
#  - the ClusterRoleBinding binds it to the DaemonSet's ServiceAccount, which exists.
#
# No root, no BPF: only kubectl, curl and python3.

. "$(dirname "$0")/lib.sh"
need_cmd kubectl curl

# MANIFESTS: another directory of the same three files (to see the checks fail on a bad copy).
: "${MANIFESTS:=$REPO_ROOT/manifests}"
NS=slideops
CAPS="BPF PERFMON SYS_PTRACE SYS_ADMIN CHECKPOINT_RESTORE SYS_RESOURCE DAC_READ_SEARCH"

# --- the fake API server -----------------------------------------------------------------------
fake_kube_start 0 --log "$TMP/access.log"
API=$KAPI
log "fake API server on $API"
kubeconfig_write "$TMP/kubeconfig" "$API"
# Own discovery cache: nothing from another server or run.
K() { kubectl --kubeconfig "$TMP/kubeconfig" --cache-dir "$TMP/kube-cache" --request-timeout=10s "$@"; }

state_rv() { curl -sf "$API/fake/state" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["resourceVersion"])'; }
writes() # the write requests (POST, PUT, PATCH, DELETE) to the API so far
{
	curl -sf "$API/fake/requests" | "$PYTHON" -c '
import json, sys
for r in json.load(sys.stdin):
    if r["method"] != "GET" and not r["path"].startswith("/fake/"):
        print(r["method"], r["path"])'
}

# --- apply, twice --------------------------------------------------------------------------------
# The namespace first, as on a real cluster (kubectl apply checks it exists).
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NS" |
	K apply -f - >"$TMP/ns.out" 2>&1 || fail "kubectl apply of namespace $NS: $(cat "$TMP/ns.out")"

K apply -f "$MANIFESTS/" >"$TMP/apply1.out" 2>&1 || fail "first kubectl apply -f manifests/: $(cat "$TMP/apply1.out")"
log "first apply: $(tr '\n' ';' <"$TMP/apply1.out")"
for o in configmap/slideops-profiler daemonset.apps/slideops-profiler serviceaccount/slideops-profiler \
	clusterrole.rbac.authorization.k8s.io/slideops-profiler \
	clusterrolebinding.rbac.authorization.k8s.io/slideops-profiler; do
	grep -qx "$o created" "$TMP/apply1.out" || fail "first apply did not create $o: $(cat "$TMP/apply1.out")"
done
[ "$(wc -l <"$TMP/apply1.out")" -eq 5 ] || fail "first apply printed more than the 5 objects: $(cat "$TMP/apply1.out")"

rv1=$(state_rv) || fail "cannot read the server state"
writes1=$(writes | wc -l)
K apply -f "$MANIFESTS/" >"$TMP/apply2.out" 2>&1 || fail "second kubectl apply -f manifests/: $(cat "$TMP/apply2.out")"
log "second apply: $(tr '\n' ';' <"$TMP/apply2.out")"
if [ "$(grep -c ' unchanged$' "$TMP/apply2.out")" -ne 5 ] || [ "$(wc -l <"$TMP/apply2.out")" -ne 5 ]; then
	fail "second apply changed something: $(cat "$TMP/apply2.out")"
fi
[ "$(state_rv)" = "$rv1" ] || fail "second apply wrote: resourceVersion $rv1 -> $(state_rv)"
[ "$(writes | wc -l)" -eq "$writes1" ] || fail "second apply sent write requests: $(writes | tail -n +$((writes1 + 1)))"

# --- read back -------------------------------------------------------------------------------------
K get daemonset -n "$NS" slideops-profiler -o json >"$TMP/ds.json" || fail "kubectl get daemonset"
K get clusterrole slideops-profiler -o json >"$TMP/cr.json" || fail "kubectl get clusterrole"
K get clusterrolebinding slideops-profiler -o json >"$TMP/crb.json" || fail "kubectl get clusterrolebinding"
K get serviceaccount -n "$NS" -o json >"$TMP/sa.json" || fail "kubectl get serviceaccount"
K get configmap -n "$NS" slideops-profiler -o json >"$TMP/cm.json" || fail "kubectl get configmap"

# Every failed check is printed; the exit status is the number of failures (capped).
"$PYTHON" - "$TMP" "$MANIFESTS/daemonset.yaml" "$CAPS" <<'PY' >"$TMP/checks.out" 2>&1
import json, re, sys

tmp, ds_yaml, want_caps = sys.argv[1], sys.argv[2], sys.argv[3].split()
def load(n):
    with open("%s/%s.json" % (tmp, n)) as f:
        return json.load(f)
ds, cr, crb, sas, cm = (load(n) for n in ("ds", "cr", "crb", "sa", "cm"))
bad = []
def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        bad.append(what)

# DaemonSet
check(ds.get("kind") == "DaemonSet" and ds.get("apiVersion") == "apps/v1", "the object is an apps/v1 DaemonSet")
pod = ds["spec"]["template"]["spec"]
check(pod.get("hostPID") is True, "pod spec hostPID: true")
check(not pod.get("hostNetwork") and not pod.get("hostIPC"), "no hostNetwork, no hostIPC")
cs = pod.get("containers") or []
check(len(cs) == 1, "one container (%d)" % len(cs))
c = cs[0] if cs else {}
sc = c.get("securityContext") or {}
check(sc.get("privileged", False) is False, "container not privileged (%r)" % sc.get("privileged"))
check(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
check(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem: true")
caps = sc.get("capabilities") or {}
check(caps.get("drop") == ["ALL"], "capabilities drop [ALL] (%r)" % caps.get("drop"))
check(caps.get("add") == want_caps, "capabilities add exactly %s (%r)" % (want_caps, caps.get("add")))

# Each added capability's line in the YAML says why ("- CAP   # reason").
lines = open(ds_yaml).read().splitlines()
in_add, cap_lines = False, {}
for ln in lines:
    if re.match(r"^\s*add:\s*(#.*)?$", ln):
        in_add, indent = True, None
        continue
    if in_add:
        m = re.match(r"^(\s*)-\s*([A-Z_]+)\s*(?:#\s*(.*?))?\s*$", ln)
        if not m:
            in_add = False
            continue
        cap_lines[m.group(2)] = m.group(3) or ""
check(sorted(cap_lines) == sorted(want_caps),
      "the YAML's add: list is %s (%s)" % (want_caps, sorted(cap_lines)))
for cap in want_caps:
    why = cap_lines.get(cap, "")
    check(len(why.split()) >= 2, "capability %s has a comment saying why (%r)" % (cap, why))

env = {e["name"]: e for e in c.get("env") or []}
node = env.get("NODE_NAME", {})
check(((node.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == "spec.nodeName"
      and "value" not in node, "NODE_NAME from the downward API spec.nodeName (%r)" % node)
res = c.get("resources") or {}
for kind in ("requests", "limits"):
    r = res.get(kind) or {}
    check(r.get("cpu") and r.get("memory"), "resources %s cpu and memory set (%r)" % (kind, r))
check(len(pod.get("tolerations") or []) >= 1, "a toleration (%r)" % pod.get("tolerations"))

vols = {v["name"]: v for v in pod.get("volumes") or []}
mounts = {m["name"]: m for m in c.get("volumeMounts") or []}
def hostpath_vol(path, what):
    names = [n for n, v in vols.items() if (v.get("hostPath") or {}).get("path") == path]
    check(len(names) == 1, "%s: a hostPath volume of %s (%s)" % (what, path, names))
    for n in names:
        check(n in mounts, "%s: volume %s is mounted in the container" % (what, n))
    return names
hostpath_vol("/sys/kernel/tracing", "tracefs")
hostpath_vol("/var/lib/slideops/profiler", "store")
for n in hostpath_vol("/sys/fs/cgroup", "cgroup fs"):
    check(mounts[n].get("readOnly") is True, "cgroup fs mounted read-only")
cmv = [v["configMap"]["name"] for v in vols.values() if "configMap" in v]
check(cmv == [cm["metadata"]["name"]], "config volume is the applied ConfigMap (%r)" % cmv)

# ClusterRole: exactly these grants.
want = {("", r, v) for r in ("pods", "nodes") for v in ("get", "list", "watch", "patch")} | \
       {("", "events", "create")}
got = set()
extra = []
for rule in cr.get("rules") or []:
    for k in rule:
        if k not in ("apiGroups", "resources", "verbs"):
            extra.append(k)		# resourceNames, nonResourceURLs: not expected
    for g in rule.get("apiGroups") or []:
        for r in rule.get("resources") or []:
            for v in rule.get("verbs") or []:
                got.add((g, r, v))
check(cr.get("kind") == "ClusterRole", "a ClusterRole")
check(got == want, "ClusterRole grants exactly pods/nodes get,list,watch,patch and events create "
      "(extra %s, missing %s)" % (sorted(got - want), sorted(want - got)))
check(not extra and not any("*" in x for t in got for x in t), "no wildcards, no other rule fields (%r)" % extra)

# ClusterRoleBinding -> that ClusterRole, the DaemonSet's ServiceAccount.
ref = crb.get("roleRef") or {}
check(ref == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
              "name": cr["metadata"]["name"]}, "roleRef is the ClusterRole (%r)" % ref)
sa_name, ds_ns = pod.get("serviceAccountName"), ds["metadata"]["namespace"]
check(bool(sa_name), "the DaemonSet names its ServiceAccount (%r)" % sa_name)
check(crb.get("subjects") == [{"kind": "ServiceAccount", "name": sa_name, "namespace": ds_ns}],
      "the binding's one subject is ServiceAccount %s/%s (%r)" % (ds_ns, sa_name, crb.get("subjects")))
check([s["metadata"]["name"] for s in sas.get("items", [])] == [sa_name],
      "ServiceAccount %s exists in %s" % (sa_name, ds_ns))

sys.exit(min(len(bad), 100))
PY
rc=$?
cat "$TMP/checks.out" >&2
[ "$rc" -eq 0 ] || fail "$rc check(s) failed: $(grep '^FAIL' "$TMP/checks.out" | tr '\n' ';')"
log "all checks passed"
