#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A fake Kubernetes API server for the tests: plain HTTP on 127.0.0.1, python3 stdlib only.

    fake_apiserver.py [--port N] [--port-file F] [--token T] [--log F] [--state F]

It serves what the real API server serves for the core/v1 objects the agent and kubectl use,
in the same shapes (checked against kubectl v1.32 with -v=8):

  discovery   GET /version, /api (APIVersions), /apis (APIGroupList: apps, rbac), /api/v1
              (APIResourceList: pods, pods/status, nodes, nodes/status, events, namespaces with
              their verbs and namespaced flags). kubectl 1.32 first asks for aggregated discovery
              (Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...);
              a plain application/json answer makes it fall back to this legacy discovery.
  lists       limit/continue paging (kubectl asks for limit=500).
  pods        list/get/watch (cluster-wide and per namespace), merge-patch, strategic-merge-patch
              and json-patch, delete; fieldSelector on any dotted field (spec.nodeName,
              metadata.name, ...; "=", "==", "!="), labelSelector (k=v, k!=v, k, !k).
  nodes       list/get/watch, the three patch types.
  events      list/get/watch (cluster-wide and per namespace), create (POST).
  namespaces  list/get (those created, every namespace that holds an object, plus default and
              kube-system).
  apply       what `kubectl apply -f manifests/` needs (client-side apply, checked with -v=8):
              /apis lists apps/v1 (daemonsets) and rbac.authorization.k8s.io/v1 (clusterroles,
              clusterrolebindings); /api/v1 also has serviceaccounts and configmaps; all of them
              get (404 when missing), list, create (POST, 409 when present), the three patch
              types, delete. /openapi/v3 and its per-group-version documents carry only each
              PATCH operation with the fieldValidation parameter, so kubectl sends
              fieldValidation=Strict instead of downloading /openapi/v2 (404 here) for
              client-side validation, and computes its strategic merge patch from its compiled-in
              types. A re-apply of unchanged manifests sends no write at all ("unchanged").
  namespaces  also create (POST): kubectl apply GETs the namespace before creating an object
              in it. Request bodies are JSON only: protobuf (what `kubectl create namespace`
              sends) gets 415; `kubectl apply` of a Namespace sends JSON.
  tables      a request that accepts as=Table (kubectl get without -o) gets a meta.k8s.io/v1
              Table with the columns kubectl prints for that resource.

resourceVersion: one cluster-wide counter, bumped by every write and stored in the object's
metadata.resourceVersion. A list answers with the current value. A watch without
resourceVersion (or "0") first sends a synthetic ADDED for every matching object; a watch from
RV replays the retained events newer than RV, then streams live ones; RV older than the
compaction point gets what the real server sends: HTTP 200 and one ERROR event whose object is
a Status with code 410 (reason Expired), then the end of the stream. allowWatchBookmarks=true
gets a BOOKMARK after the replay and every --bookmark-seconds. timeoutSeconds ends a watch.
A PATCH carrying metadata.resourceVersion that is not current fails with 409 Conflict.

Test endpoints (not part of Kubernetes), all JSON:
  POST   /fake/pods                  create or replace a pod (body: the Pod; uid, namespace,
                                     creationTimestamp filled in when missing)
  DELETE /fake/pods/NS/NAME          delete a pod (DELETED event)
  POST   /fake/nodes                 create or replace a node
  POST   /fake/compact               forget every event so far (watches from an older RV get
                                     410) and close every open watch, as an etcd compaction
                                     plus an apiserver restart would
  POST   /fake/close-watches         close every open watch (the clients resume from their RV)
  GET    /fake/requests              the request log: [{method, path, query, content_type}]
  GET    /fake/state                 every object and the current resourceVersion

--token T: a request with another Authorization header gets 401; with --require-token also
one without (client-go sends no bearer token over plain http, so kubectl's requests carry
none). The request log says which requests carried the token.
--state F loads objects from F at start and saves them at each write, so a restarted server
keeps its objects and its counter (the test kills and restarts it).

Deterministic: no randomness; uids of objects created without one come from the counter;
lists are sorted by namespace and name as etcd keys are.
"""

import argparse
import base64
import copy
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# --- discovery -----------------------------------------------------------------------------

VERBS_RW = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

RESOURCES = [
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
     "verbs": VERBS_RW, "shortNames": ["po"], "categories": ["all"]},
    {"name": "pods/status", "singularName": "", "namespaced": True, "kind": "Pod",
     "verbs": ["get", "patch", "update"]},
    {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
     "verbs": VERBS_RW, "shortNames": ["no"]},
    {"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node",
     "verbs": ["get", "patch", "update"]},
    {"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
     "verbs": VERBS_RW, "shortNames": ["ev"]},
    {"name": "namespaces", "singularName": "namespace", "namespaced": False,
     "kind": "Namespace", "verbs": ["create", "get", "list", "watch"], "shortNames": ["ns"]},
    {"name": "serviceaccounts", "singularName": "serviceaccount", "namespaced": True,
     "kind": "ServiceAccount", "verbs": VERBS_RW, "shortNames": ["sa"]},
    {"name": "configmaps", "singularName": "configmap", "namespaced": True,
     "kind": "ConfigMap", "verbs": VERBS_RW, "shortNames": ["cm"]},
]

# The API groups besides core/v1 (kubectl apply -f manifests/ needs these): group -> (version,
# resources).
GROUPS = {
    "apps": ("v1", [
        {"name": "daemonsets", "singularName": "daemonset", "namespaced": True,
         "kind": "DaemonSet", "verbs": VERBS_RW, "shortNames": ["ds"], "categories": ["all"]},
        {"name": "daemonsets/status", "singularName": "", "namespaced": True,
         "kind": "DaemonSet", "verbs": ["get", "patch", "update"]},
    ]),
    "rbac.authorization.k8s.io": ("v1", [
        {"name": "clusterroles", "singularName": "clusterrole", "namespaced": False,
         "kind": "ClusterRole", "verbs": VERBS_RW},
        {"name": "clusterrolebindings", "singularName": "clusterrolebinding",
         "namespaced": False, "kind": "ClusterRoleBinding", "verbs": VERBS_RW},
    ]),
}

# resource -> its kind, whether it is namespaced, its apiVersion ("v1" or "group/version").
KINDS, NAMESPACED, API_VERSION = {}, {}, {}
for _gv, _rs in [("v1", RESOURCES)] + [("%s/%s" % (g, v), rs) for g, (v, rs) in GROUPS.items()]:
    for _r in _rs:
        if "/" not in _r["name"]:
            KINDS[_r["name"]] = _r["kind"]
            NAMESPACED[_r["name"]] = _r["namespaced"]
            API_VERSION[_r["name"]] = _gv


def status_obj(code, reason, message, details=None):
    """A metav1.Status as the API server returns it for errors."""
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


class HTTPError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.status = status_obj(code, reason, message, details)


# --- selectors -----------------------------------------------------------------------------

def field_value(obj, path):
    """The value of a dotted field ("spec.nodeName") as a string; "" when absent."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return ""
        cur = cur[part]
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return "" if cur is None else str(cur)


def parse_field_selector(s):
    """"a=b,c!=d" -> [(field, op, value)]; the real server accepts =, == and !=."""
    out = []
    if not s:
        return out
    for term in s.split(","):
        m = re.fullmatch(r"([A-Za-z0-9_.\-/]+)\s*(!=|==|=)\s*(.*)", term.strip())
        if not m:
            raise HTTPError(400, "BadRequest",
                            "unable to parse requirement: invalid field selector: %r" % term)
        out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return out


def parse_label_selector(s):
    """"k=v,k!=v,k,!k" -> [(key, op, value)]. Set-based selectors (in, notin) are refused."""
    out = []
    if not s:
        return out
    for term in s.split(","):
        term = term.strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-/]+)\s*(!=|==|=)\s*([A-Za-z0-9_.\-]*)", term)
        if m:
            out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
        elif re.fullmatch(r"![A-Za-z0-9_.\-/]+", term):
            out.append((term[1:], "!exists", None))
        elif re.fullmatch(r"[A-Za-z0-9_.\-/]+", term):
            out.append((term, "exists", None))
        else:
            raise HTTPError(400, "BadRequest", "unable to parse requirement: %r" % term)
    return out


def matches(obj, fsel, lsel):
    for f, op, v in fsel:
        if (field_value(obj, f) == v) != (op == "="):
            return False
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for k, op, v in lsel:
        if op == "exists" and k not in labels:
            return False
        if op == "!exists" and k in labels:
            return False
        if op == "=" and labels.get(k) != v:
            return False
        if op == "!=" and labels.get(k) == v:
            return False
    return True


# --- patches -------------------------------------------------------------------------------

def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: objects merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    out = dict(target)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def strategic_merge_patch(target, patch):
    """The subset of strategic merge patch that core/v1 pods and nodes use: maps merge as in a
    merge patch; a list of objects that all have "name" (containers, env, ports, conditions by
    "type") merges item by item on that key; other lists replace. "$patch": "delete" on a map
    removes it, "$patch": "replace" replaces it."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and isinstance(out.get(k), list):
            out[k] = merge_list(out[k], v)
        else:
            r = strategic_merge_patch(out.get(k), v)
            if r is None:
                out.pop(k, None)
            else:
                out[k] = r
    return out


def merge_list(cur, patch):
    for key in ("name", "type"):
        if all(isinstance(i, dict) and key in i for i in cur + patch):
            out = [copy.deepcopy(i) for i in cur]
            for item in patch:
                idx = next((n for n, c in enumerate(out) if c[key] == item[key]), None)
                if item.get("$patch") == "delete":
                    if idx is not None:
                        del out[idx]
                elif idx is None:
                    out.append(copy.deepcopy(item))
                else:
                    out[idx] = strategic_merge_patch(out[idx], item)
            return out
    return copy.deepcopy(patch)


def json_patch(target, ops):
    """RFC 6902 JSON patch: add, remove, replace, test (kubectl patch --type json)."""
    doc = copy.deepcopy(target)
    if not isinstance(ops, list):
        raise HTTPError(400, "BadRequest", "json patch must be a list of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise HTTPError(400, "BadRequest", "malformed json patch operation")
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        if not parts:
            raise HTTPError(422, "Invalid", "json patch on the whole object")
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent.get(p)
            if parent is None:
                raise HTTPError(422, "Invalid", "path %s not found" % op["path"])
        last = parts[-1]
        o = op["op"]
        if o in ("add", "replace"):
            if isinstance(parent, list):
                i = len(parent) if last == "-" else int(last)
                if o == "add":
                    parent.insert(i, op.get("value"))
                else:
                    parent[i] = op.get("value")
            else:
                if o == "replace" and last not in parent:
                    raise HTTPError(422, "Invalid", "replace of missing %s" % op["path"])
                parent[last] = op.get("value")
        elif o == "remove":
            try:
                del parent[int(last) if isinstance(parent, list) else last]
            except (KeyError, IndexError):
                raise HTTPError(422, "Invalid", "remove of missing %s" % op["path"])
        elif o == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op.get("value"):
                raise HTTPError(422, "Invalid", "test failed at %s" % op["path"])
        else:
            raise HTTPError(400, "BadRequest", "unsupported json patch op %r" % o)
    return doc


# --- the store -----------------------------------------------------------------------------

class Store:
    """Objects by (resource, namespace, name), one resourceVersion counter, the event history
    since the last compaction, and the open watches (each a list its stream waits on)."""

    def __init__(self, state_file=None):
        self.lock = threading.Condition()
        self.rv = 1
        self.compacted = 0		# watches from an RV below this get 410
        self.objects = {}		# (resource, ns, name) -> object
        self.history = []		# (rv, resource, type, object)
        self.generation = 0		# bumped to close every open watch
        self.state_file = state_file
        self.requests = []
        if state_file and os.path.exists(state_file):
            with open(state_file) as f:
                st = json.load(f)
            self.rv = st["rv"]
            # A restarted server has no history: a watch from the current RV resumes (nothing
            # was missed), one from an older RV gets 410, as after an etcd compaction.
            self.compacted = st["rv"]
            for o in st["objects"]:
                self.objects[(o["resource"], o["namespace"], o["name"])] = o["object"]

    def save(self):
        if not self.state_file:
            return
        objs = [{"resource": r, "namespace": ns, "name": n, "object": o}
                for (r, ns, n), o in sorted(self.objects.items())]
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rv": self.rv, "objects": objs}, f)
        os.replace(tmp, self.state_file)

    def _record(self, resource, etype, obj):
        self.history.append((self.rv, resource, etype, copy.deepcopy(obj)))
        self.save()
        self.lock.notify_all()

    def put(self, resource, obj, create_only=False):
        """Creates or replaces an object; fills uid, namespace, timestamps; returns a copy."""
        with self.lock:
            md = obj.setdefault("metadata", {})
            if not md.get("name"):
                if md.get("generateName"):
                    md["name"] = "%s%05d" % (md["generateName"], self.rv + 1)
                else:
                    raise HTTPError(422, "Invalid", "metadata.name: Required value")
            ns = md.setdefault("namespace", "default") if NAMESPACED[resource] else ""
            if not NAMESPACED[resource]:
                md.pop("namespace", None)
            key = (resource, ns, md["name"])
            old = self.objects.get(key)
            if old is not None and create_only:
                raise HTTPError(409, "AlreadyExists", '%s "%s" already exists'
                                % (resource, md["name"]),
                                {"name": md["name"], "kind": resource})
            self.rv += 1
            if not md.get("uid"):
                md["uid"] = (old or {}).get("metadata", {}).get("uid") or \
                    "00000000-0000-4000-8000-%012d" % self.rv
            md.setdefault("creationTimestamp",
                          (old or {}).get("metadata", {}).get("creationTimestamp") or now())
            md["resourceVersion"] = str(self.rv)
            obj.setdefault("apiVersion", API_VERSION[resource])
            obj["kind"] = KINDS[resource]
            self.objects[key] = obj
            self._record(resource, "MODIFIED" if old else "ADDED", obj)
            return copy.deepcopy(obj)

    def delete(self, resource, ns, name):
        with self.lock:
            obj = self.objects.pop((resource, ns, name), None)
            if obj is None:
                raise HTTPError(404, "NotFound", '%s "%s" not found' % (resource, name),
                                {"name": name, "kind": resource})
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self._record(resource, "DELETED", obj)
            return copy.deepcopy(obj)

    def get(self, resource, ns, name):
        with self.lock:
            obj = self.objects.get((resource, ns, name))
            if obj is None:
                raise HTTPError(404, "NotFound", '%s "%s" not found' % (resource, name),
                                {"name": name, "kind": resource})
            return copy.deepcopy(obj)

    def patch(self, resource, ns, name, ctype, body):
        with self.lock:
            cur = self.get(resource, ns, name)
            try:
                p = json.loads(body)
            except ValueError as e:
                raise HTTPError(400, "BadRequest", "invalid patch body: %s" % e)
            if ctype == "application/merge-patch+json":
                new = merge_patch(cur, p)
            elif ctype == "application/strategic-merge-patch+json":
                new = strategic_merge_patch(cur, p)
            elif ctype == "application/json-patch+json":
                new = json_patch(cur, p)
            else:
                raise HTTPError(415, "UnsupportedMediaType",
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json-patch+json, "
                                "application/merge-patch+json, "
                                "application/apply-patch+yaml, "
                                "application/strategic-merge-patch+json")
            if not isinstance(new, dict):
                raise HTTPError(422, "Invalid", "patch does not give an object")
            want = (new.get("metadata") or {}).get("resourceVersion")
            if want is not None and want != cur["metadata"]["resourceVersion"]:
                raise HTTPError(409, "Conflict",
                                'Operation cannot be fulfilled on %s "%s": the object has been '
                                "modified; please apply your changes to the latest version and "
                                "try again" % (resource, name),
                                {"name": name, "kind": resource})
            md = new.setdefault("metadata", {})
            # Identity fields are the server's.
            for f in ("name", "namespace", "uid", "creationTimestamp"):
                if f in cur["metadata"]:
                    md[f] = cur["metadata"][f]
                else:
                    md.pop(f, None)
            return self.put(resource, new)

    def list(self, resource, ns, fsel, lsel):
        with self.lock:
            items = [copy.deepcopy(o) for (r, n, _), o in sorted(self.objects.items())
                     if r == resource and (ns is None or n == ns) and matches(o, fsel, lsel)]
            return items, str(self.rv)

    def namespaces(self):
        """The namespaces created (POST /api/v1/namespaces), and a synthetic one for default,
        kube-system and every other namespace that holds an object."""
        with self.lock:
            made = {n: copy.deepcopy(o) for (r, _, n), o in self.objects.items()
                    if r == "namespaces"}
            names = {"default", "kube-system"} | {n for (_, n, _) in self.objects if n}
        out = dict(made)
        for n in names - set(made):
            out[n] = {"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": n, "uid": "ns-" + n, "resourceVersion": "1"},
                      "status": {"phase": "Active"}}
        return [out[n] for n in sorted(out)]

    def compact(self):
        with self.lock:
            self.rv += 1
            self.compacted = self.rv
            self.history = []
            self.generation += 1
            self.save()
            self.lock.notify_all()

    def close_watches(self):
        with self.lock:
            self.generation += 1
            self.lock.notify_all()


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# --- tables (kubectl get without -o) -------------------------------------------------------

def age(ts):
    try:
        t = time.mktime(time.strptime(ts, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except (TypeError, ValueError):
        return "<unknown>"
    s = max(0, int(time.time() - t))
    return "%ds" % s if s < 120 else "%dm" % (s // 60) if s < 7200 else "%dh" % (s // 3600)


def table_columns(resource):
    if resource == "pods":
        return ["Name", "Ready", "Status", "Restarts", "Age"]
    if resource == "nodes":
        return ["Name", "Status", "Roles", "Age", "Version"]
    if resource == "events":
        return ["Last Seen", "Type", "Reason", "Object", "Message"]
    return ["Name", "Status", "Age"]


def table_cells(resource, o):
    md = o.get("metadata", {})
    if resource == "pods":
        cs = (o.get("status") or {}).get("containerStatuses") or []
        ready = sum(1 for c in cs if c.get("ready"))
        restarts = sum(int(c.get("restartCount", 0)) for c in cs)
        return [md.get("name"), "%d/%d" % (ready, len(cs)),
                (o.get("status") or {}).get("phase", "Unknown"), restarts,
                age(md.get("creationTimestamp"))]
    if resource == "nodes":
        return [md.get("name"), "Ready", "<none>", age(md.get("creationTimestamp")),
                ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")]
    if resource == "events":
        io = o.get("involvedObject") or {}
        return [age(o.get("lastTimestamp") or md.get("creationTimestamp")), o.get("type", ""),
                o.get("reason", ""), "%s/%s" % (io.get("kind", "").lower(), io.get("name", "")),
                o.get("message", "")]
    return [md.get("name"), (o.get("status") or {}).get("phase", ""),
            age(md.get("creationTimestamp"))]


def to_table(resource, items, rv, include):
    rows = []
    for o in items:
        if include == "Object":
            obj = o
        elif include == "None":
            obj = None
        else:
            obj = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": o.get("metadata", {})}
        row = {"cells": table_cells(resource, o)}
        if obj is not None:
            row["object"] = obj
        rows.append(row)
    cols = [{"name": c, "type": "integer" if c == "Restarts" else "string",
             "format": "name" if c == "Name" else "", "description": c, "priority": 0}
            for c in table_columns(resource)]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
            "columnDefinitions": cols, "rows": rows}


def paginate(items, rv, q):
    """limit/continue as the real server pages a list (kubectl asks for limit=500): the
    continue token is opaque to clients; here it is "RV:INDEX" in base64, and every page of
    one list carries the RV of its first page."""
    start = 0
    if q.get("continue"):
        try:
            rv, idx = base64.b64decode(q["continue"]).decode().split(":")
            start = int(idx)
        except (ValueError, UnicodeDecodeError):
            raise HTTPError(400, "BadRequest", "invalid continue token")
    meta = {"resourceVersion": rv}
    try:
        limit = int(q.get("limit") or 0)
    except ValueError:
        raise HTTPError(400, "BadRequest", "invalid limit")
    end = start + limit if limit > 0 else len(items)
    if end < len(items):
        meta["continue"] = base64.b64encode(("%s:%d" % (rv, end)).encode()).decode()
        meta["remainingItemCount"] = len(items) - end
    return items[start:end], meta


# --- OpenAPI v3 -----------------------------------------------------------------------------

def openapi_v3(gvpath):
    """The OpenAPI v3 document of one group version ("api/v1", "apis/apps/v1"), reduced to what
    kubectl reads from it: each resource's PATCH operation with its x-kubernetes-group-version-kind
    and the fieldValidation query parameter (kubectl's query-param verifier looks for it; found,
    kubectl sends fieldValidation=Strict and skips client-side schema validation). There are no
    schemas: kubectl apply then computes its strategic merge patch from its compiled-in types."""
    if gvpath == "api/v1":
        group, version, resources = "", "v1", RESOURCES
    else:
        parts = gvpath.split("/")
        if len(parts) != 3 or parts[0] != "apis" or \
                GROUPS.get(parts[1], ("",))[0] != parts[2]:
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        group, version, resources = parts[1], parts[2], GROUPS[parts[1]][1]
    params = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string"},
               "uniqueItems": True},
              {"name": "fieldManager", "in": "query", "schema": {"type": "string"},
               "uniqueItems": True}]
    paths = {}
    for r in resources:
        if "/" in r["name"]:
            continue
        base = "/" + gvpath + ("/namespaces/{namespace}" if r["namespaced"] else "")
        gvk = {"group": group, "version": version, "kind": r["kind"]}
        paths["%s/%s/{name}" % (base, r["name"])] = {
            "get": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "get"},
            "patch": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "patch",
                      "parameters": params}}
        paths["%s/%s" % (base, r["name"])] = {
            "post": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "post",
                     "parameters": params}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0-fake"},
            "paths": paths, "components": {"schemas": {}}}


# --- HTTP ----------------------------------------------------------------------------------

# /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]], /apis/GROUP/VERSION[/namespaces/NS]/RESOURCE...
PATH_RE = re.compile(r"^/(?:api/v1|apis/([^/]+)/([^/]+))(?:/namespaces/([^/]+))?/([a-z]+)"
                     r"(?:/([^/]+))?(?:/(status))?/?$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver"

    # quiet access log unless --log
    def log_message(self, fmt, *args):
        if self.server.logf:
            self.server.logf.write("%s %s\n" % (self.log_date_time_string(), fmt % args))
            self.server.logf.flush()

    @property
    def store(self):
        return self.server.store

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Audit-Id", "fake-%d" % self.store.rv)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def json_object_body(self):
        """The request's body, which must be a JSON object (else 400 BadRequest)."""
        try:
            obj = json.loads(self.body())
        except ValueError as e:
            raise HTTPError(400, "BadRequest", "invalid body: %s" % e)
        if not isinstance(obj, dict):
            raise HTTPError(400, "BadRequest", "body is not an object")
        return obj

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 16 << 20:
            raise HTTPError(413, "RequestEntityTooLarge", "request body too large")
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype == "application/vnd.kubernetes.protobuf":
            # JSON only here (kubectl create sends protobuf for built-in kinds).
            self.rfile.read(n)
            raise HTTPError(415, "UnsupportedMediaType", "the body of the request was in an "
                            "unknown format - accepted media types include: application/json")
        return self.rfile.read(n) if n else b""

    def handle_any(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        with self.store.lock:
            auth = self.headers.get("Authorization")
            self.store.requests.append({"method": method, "path": u.path, "query": q,
                                        "content_type": self.headers.get("Content-Type", ""),
                                        "user_agent": self.headers.get("User-Agent", ""),
                                        "auth": "none" if auth is None else
                                        "token" if auth == "Bearer %s" % self.server.token
                                        else "other"})
            del self.store.requests[:-1000]
        try:
            if u.path.startswith("/fake/"):
                return self.fake(method, u.path, q)
            # client-go never sends a bearer token over plain http, so kubectl's requests are
            # anonymous here; a wrong token, or none under --require-token, is refused.
            auth = self.headers.get("Authorization")
            tok = self.server.token
            if tok and (auth is not None and auth != "Bearer " + tok or
                        auth is None and self.server.require_token):
                raise HTTPError(401, "Unauthorized", "Unauthorized")
            return self.api(method, u.path, q)
        except HTTPError as e:
            if method == "HEAD":
                self.send_response(e.code)
                self.end_headers()
            else:
                self.send_json(e.code, e.status)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")

    # -- test endpoints --
    def fake(self, method, path, q):
        st = self.store
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/fake/pods":
            return self.send_json(201, st.put("pods", json.loads(self.body())))
        if method == "POST" and path == "/fake/nodes":
            return self.send_json(201, st.put("nodes", json.loads(self.body())))
        if method == "DELETE" and len(parts) == 4 and parts[1] == "pods":
            return self.send_json(200, st.delete("pods", parts[2], parts[3]))
        if method == "POST" and path == "/fake/compact":
            st.compact()
            return self.send_json(200, {"compacted": st.compacted})
        if method == "POST" and path == "/fake/close-watches":
            st.close_watches()
            return self.send_json(200, {})
        if method == "GET" and path == "/fake/requests":
            with st.lock:
                return self.send_json(200, list(st.requests))
        if method == "GET" and path == "/fake/state":
            with st.lock:
                return self.send_json(200, {"resourceVersion": str(st.rv),
                                            "compacted": st.compacted,
                                            "objects": list(st.objects.values())})
        raise HTTPError(404, "NotFound", "no test endpoint %s %s" % (method, path))

    # -- the API --
    def api(self, method, path, q):
        if path == "/version" and method == "GET":
            return self.send_json(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake",
                                        "gitCommit": "0", "gitTreeState": "clean",
                                        "buildDate": "2025-01-01T00:00:00Z",
                                        "goVersion": "go1.23", "compiler": "gc",
                                        "platform": "linux/amd64"})
        if path in ("/api", "/api/") and method == "GET":
            host = "%s:%d" % self.server.server_address[:2]
            return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"],
                                        "serverAddressByClientCIDRs": [
                                            {"clientCIDR": "0.0.0.0/0", "serverAddress": host}]})
        if path in ("/apis", "/apis/") and method == "GET":
            groups = [{"name": g, "versions": [{"groupVersion": "%s/%s" % (g, v), "version": v}],
                       "preferredVersion": {"groupVersion": "%s/%s" % (g, v), "version": v}}
                      for g, (v, _) in sorted(GROUPS.items())]
            return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                        "groups": groups})
        if path == "/openapi/v3" and method == "GET":
            return self.send_json(200, {"paths": {
                gv: {"serverRelativeURL": "/openapi/v3/%s?hash=fake" % gv}
                for gv in ["api/v1"] + ["apis/%s/%s" % (g, v) for g, (v, _) in GROUPS.items()]}})
        if path.startswith("/openapi/v3/") and method == "GET":
            return self.send_json(200, openapi_v3(path[len("/openapi/v3/"):]))
        gm = re.fullmatch(r"/apis/([^/]+)/([^/]+)/?", path)
        if gm and method == "GET" and GROUPS.get(gm.group(1), ("",))[0] == gm.group(2):
            return self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                        "groupVersion": "%s/%s" % gm.groups(),
                                        "resources": GROUPS[gm.group(1)][1]})
        if path in ("/api/v1", "/api/v1/") and method == "GET":
            return self.send_json(200, {"kind": "APIResourceList", "groupVersion": "v1",
                                        "resources": RESOURCES})
        m = PATH_RE.match(path)
        if not m:
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        group, version, ns, resource, name, sub = m.groups()
        gv = "v1" if group is None else "%s/%s" % (group, version)
        if API_VERSION.get(resource) != gv:
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        if ns is not None and not NAMESPACED[resource]:
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        if NAMESPACED[resource] and name is not None and ns is None:
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        if sub and resource not in ("pods", "nodes"):
            raise HTTPError(404, "NotFound", "the server could not find the requested resource")
        key_ns = ns if NAMESPACED[resource] else ""

        if resource == "namespaces":
            if method == "POST" and name is None:
                obj = self.json_object_body()
                n = (obj.get("metadata") or {}).get("name")
                if n and any(o["metadata"]["name"] == n for o in self.store.namespaces()):
                    raise HTTPError(409, "AlreadyExists", 'namespaces "%s" already exists' % n,
                                    {"name": n, "kind": "namespaces"})
                obj.setdefault("spec", {"finalizers": ["kubernetes"]})
                obj["status"] = {"phase": "Active"}
                return self.send_json(201, self.store.put("namespaces", obj, create_only=True))
            if method != "GET":
                raise HTTPError(405, "MethodNotAllowed", "namespaces can only be created and "
                                "read here")
            items = self.store.namespaces()
            if name:
                for n in items:
                    if n["metadata"]["name"] == name:
                        return self.send_json(200, n)
                raise HTTPError(404, "NotFound", 'namespaces "%s" not found' % name)
            return self.send_json(200, {"kind": "NamespaceList", "apiVersion": "v1",
                                        "metadata": {"resourceVersion": str(self.store.rv)},
                                        "items": items})

        if method == "GET" and name is None:
            fsel = parse_field_selector(q.get("fieldSelector", ""))
            lsel = parse_label_selector(q.get("labelSelector", ""))
            if q.get("watch") in ("1", "true"):
                return self.watch(resource, ns, fsel, lsel, q)
            items, rv = self.store.list(resource, ns, fsel, lsel)
            items, meta = paginate(items, rv, q)
            if "as=Table" in (self.headers.get("Accept") or ""):
                t = to_table(resource, items, meta["resourceVersion"],
                             q.get("includeObject", "Metadata"))
                t["metadata"] = meta
                return self.send_json(200, t)
            return self.send_json(200, {"kind": KINDS[resource] + "List",
                                        "apiVersion": API_VERSION[resource],
                                        "metadata": meta, "items": items})
        if method == "GET":
            obj = self.store.get(resource, key_ns, name)
            if "as=Table" in (self.headers.get("Accept") or ""):
                return self.send_json(200, to_table(resource, [obj],
                                                    obj["metadata"]["resourceVersion"],
                                                    q.get("includeObject", "Metadata")))
            return self.send_json(200, obj)
        if method == "PATCH" and name is not None:
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            return self.send_json(200, self.store.patch(resource, key_ns, name, ctype,
                                                        self.body()))
        if method == "POST" and name is None:
            obj = self.json_object_body()
            md = obj.setdefault("metadata", {})
            if NAMESPACED[resource]:
                if md.get("namespace", ns) != ns:
                    raise HTTPError(400, "BadRequest", "the namespace of the provided object "
                                    "does not match the namespace sent on the request")
                md["namespace"] = ns
            if resource == "events" and not obj.get("involvedObject"):
                raise HTTPError(422, "Invalid", "involvedObject: Required value")
            return self.send_json(201, self.store.put(resource, obj, create_only=True))
        if method == "DELETE" and name is not None:
            return self.send_json(200, self.store.delete(resource, key_ns, name))
        raise HTTPError(405, "MethodNotAllowed", "the server does not allow this method on "
                        "the requested resource")

    def chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, resource, ns, fsel, lsel, q):
        """A watch as the real server streams it: HTTP 200, chunked, one JSON event per line."""
        st = self.store
        rv_s = q.get("resourceVersion", "")
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true")
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            raise HTTPError(400, "BadRequest", "invalid timeoutSeconds")
        deadline = time.monotonic() + timeout
        try:
            from_rv = int(rv_s) if rv_s else 0
        except ValueError:
            raise HTTPError(400, "BadRequest", "invalid resourceVersion %r" % rv_s)

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True

        def visible(obj):
            md = obj.get("metadata", {})
            return (ns is None or md.get("namespace") == ns) and matches(obj, fsel, lsel)

        with st.lock:
            gen = st.generation
            if from_rv and from_rv < st.compacted:
                err = status_obj(410, "Expired", "too old resource version: %d (%d)"
                                 % (from_rv, st.compacted))
                pending = [{"type": "ERROR", "object": err}]
                from_rv = None
            elif from_rv == 0:
                items, _ = st.list(resource, ns, fsel, lsel)
                pending = [{"type": "ADDED", "object": o} for o in items]
                from_rv = st.rv
            else:
                pending = [{"type": t, "object": copy.deepcopy(o)}
                           for rv, r, t, o in st.history
                           if r == resource and rv > from_rv and visible(o)]
                from_rv = max([rv for rv, *_ in st.history] + [from_rv])
        for ev in pending:
            self.chunk(ev)
        if from_rv is None:		# the 410: the stream ends
            self.wfile.write(b"0\r\n\r\n")
            return
        last_bookmark = 0.0
        while True:
            with st.lock:
                while True:
                    new = [(rv, t, o) for rv, r, t, o in st.history
                           if rv > from_rv and r == resource]
                    remaining = deadline - time.monotonic()
                    if new or st.generation != gen or remaining <= 0 or \
                            bookmarks and time.monotonic() - last_bookmark >= \
                            self.server.bookmark_seconds:
                        break
                    st.lock.wait(min(remaining, 0.5))
                closed = st.generation != gen
                cur_rv = st.rv
            if closed or remaining <= 0:
                break
            for rv, t, o in new:
                from_rv = rv
                if visible(o):
                    self.chunk({"type": t, "object": copy.deepcopy(o)})
            if bookmarks and time.monotonic() - last_bookmark >= self.server.bookmark_seconds:
                last_bookmark = time.monotonic()
                self.chunk({"type": "BOOKMARK",
                            "object": {"kind": KINDS[resource],
                                       "apiVersion": API_VERSION[resource],
                                       "metadata": {"resourceVersion": str(max(from_rv,
                                                                               cur_rv))}}})
                from_rv = max(from_rv, cur_rv)
        self.wfile.write(b"0\r\n\r\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--token", help="the one valid bearer token (others get 401)")
    ap.add_argument("--require-token", action="store_true",
                    help="refuse requests without the token too (kubectl sends none over http)")
    ap.add_argument("--log", help="append an access log here")
    ap.add_argument("--state", help="persist objects here across restarts")
    ap.add_argument("--bookmark-seconds", type=float, default=30.0)
    a = ap.parse_args()

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.store = Store(a.state)
    srv.token = a.token
    srv.require_token = a.require_token
    srv.logf = open(a.log, "a") if a.log else None
    srv.bookmark_seconds = a.bookmark_seconds
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % srv.server_address[1])
        os.replace(tmp, a.port_file)
    sys.stderr.write("fake-apiserver listening on 127.0.0.1:%d\n" % srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
