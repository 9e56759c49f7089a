#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fake cluster API and a fake Pyroscope for the sink's tests (docs/cluster-api.md).

    fake_cluster_api.py --port-file F --log deliveries.jsonl --token TOKEN \
        [--port 0] [--pyroscope-log ingest.jsonl] [--fail-first N] [--fail-status 503] \
        [--retry-after S] [--reject-id ID] [--lose-response-first N]

POST /v1/profiles
    checks "Authorization: Bearer TOKEN" (401 otherwise), parses the multipart/form-data body:
    a `metadata` part (valid JSON object) and a `profile` part (gzip magic, filename
    profile.pb.gz); 400 when either is missing or bad. Each accepted request appends one JSON
    line to --log: {"n", "id", "idempotency_key", "duplicate", "metadata", "profile_bytes"}.
    A repeated Idempotency-Key is answered 200 again and logged with "duplicate": true (a
    well-behaved server stores it once).
    --fail-first N answers the first N requests with --fail-status (default 503) and, with
    --retry-after, a Retry-After header; --reject-id ID answers 400 for that metadata id
    (a permanent refusal); --lose-response-first N records the first N deliveries, then closes
    the connection without answering (a response lost on the way back); --hang never answers
    (to test that the agent aborts a request in progress when it stops).
POST /ingest?name=...&from=...&until=...&format=pprof
    a fake Pyroscope: needs the four parameters and a multipart `profile` part (gzip) or a raw
    gzip body; appends {"name", "from", "until", "format", "profile_bytes"} to --pyroscope-log.
POST /_control  {"fail_next": N, "fail_status": S, "retry_after": R}: changes the failure mode.
GET /_stats     the counters, as JSON.

Prints nothing on success paths; the chosen port goes to --port-file (written atomically).
"""
import argparse
import email.parser
import email.policy
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 256 << 20


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.requests = 0
        self.fail_next = args.fail_first
        self.fail_status = args.fail_status
        self.retry_after = args.retry_after
        self.lose_next = args.lose_response_first
        self.delivered = 0
        self.keys = set()
        self.ingested = 0

    def append(self, path, rec):
        line = json.dumps(rec, sort_keys=True) + "\n"
        with open(path, "a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def parse_multipart(content_type, body):
    """Returns {name: (filename, content_type, bytes)} or raises ValueError."""
    if not content_type or not content_type.lower().startswith("multipart/form-data"):
        raise ValueError("not multipart/form-data: %r" % content_type)
    head = ("Content-Type: %s\r\nMIME-Version: 1.0\r\n\r\n" % content_type).encode()
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not msg.is_multipart():
        raise ValueError("body is not multipart")
    parts = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            raise ValueError("a part without a name")
        if name in parts:
            raise ValueError("part %r twice" % name)
        parts[name] = (part.get_filename(), part.get_content_type(),
                       part.get_payload(decode=True) or b"")
    return parts


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-cluster-api/1"

    def log_message(self, fmt, *a):  # quiet unless asked
        if self.server.state.args.verbose:
            sys.stderr.write("fake: " + (fmt % a) + "\n")

    def reply(self, status, obj=None, headers=()):
        body = json.dumps(obj if obj is not None else {}).encode() + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_BODY:
            raise ValueError("bad Content-Length")
        return self.rfile.read(n)

    def do_GET(self):
        st = self.server.state
        if self.path == "/_stats":
            with st.lock:
                self.reply(200, {"requests": st.requests, "delivered": st.delivered,
                                 "ingested": st.ingested})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        try:
            body = self.read_body()
        except ValueError as e:
            return self.reply(400, {"error": str(e)})
        if url.path == "/_control":
            ctl = json.loads(body or b"{}")
            with st.lock:
                st.fail_next = int(ctl.get("fail_next", st.fail_next))
                st.fail_status = int(ctl.get("fail_status", st.fail_status))
                st.retry_after = ctl.get("retry_after", st.retry_after)
            return self.reply(200, {"ok": True})
        if url.path == "/v1/profiles":
            return self.profiles(st, body)
        if url.path == "/ingest":
            return self.ingest(st, url, body)
        return self.reply(404, {"error": "not found"})

    def profiles(self, st, body):
        if st.args.hang:
            time.sleep(3600)
            return
        with st.lock:
            st.requests += 1
            if st.fail_next > 0:
                st.fail_next -= 1
                hdrs = [("Retry-After", str(st.retry_after))] if st.retry_after is not None else []
                return self.reply(st.fail_status, {"error": "told to fail"}, hdrs)
        if self.headers.get("Authorization") != "Bearer " + st.args.token:
            return self.reply(401, {"error": "bad or missing bearer token"})
        try:
            parts = parse_multipart(self.headers.get("Content-Type"), body)
            if "metadata" not in parts or "profile" not in parts:
                raise ValueError("want parts metadata and profile, got %s" % sorted(parts))
            _, mtype, mdata = parts["metadata"]
            if mtype != "application/json":
                raise ValueError("metadata is %s" % mtype)
            meta = json.loads(mdata)
            if not isinstance(meta, dict):
                raise ValueError("metadata is not an object")
            pname, _, pdata = parts["profile"]
            if pname != "profile.pb.gz" or pdata[:2] != b"\x1f\x8b":
                raise ValueError("profile is not a gzip file named profile.pb.gz")
        except (ValueError, json.JSONDecodeError) as e:
            return self.reply(400, {"error": str(e)})
        if st.args.reject_id and meta.get("id") == st.args.reject_id:
            return self.reply(400, {"error": "rejected id %s" % meta.get("id")})
        key = self.headers.get("Idempotency-Key")
        with st.lock:
            dup = key in st.keys if key else False
            if key:
                st.keys.add(key)
            if not dup:
                st.delivered += 1
            rec = {"n": st.requests, "id": meta.get("id"), "idempotency_key": key,
                   "duplicate": dup, "metadata": meta, "profile_bytes": len(pdata)}
            st.append(st.args.log, rec)
            lose = st.lose_next > 0
            if lose:
                st.lose_next -= 1
        if lose:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.reply(200, {"id": meta.get("id"), "duplicate": dup})

    def ingest(self, st, url, body):
        q = urllib.parse.parse_qs(url.query)
        for k in ("name", "from", "until", "format"):
            if len(q.get(k, [])) != 1:
                return self.reply(400, {"error": "missing parameter %s" % k})
        if q["format"][0] != "pprof" or not q["from"][0].isdigit() or not q["until"][0].isdigit():
            return self.reply(400, {"error": "bad format/from/until"})
        ctype = self.headers.get("Content-Type") or ""
        try:
            if ctype.startswith("multipart/form-data"):
                parts = parse_multipart(ctype, body)
                if "profile" not in parts:
                    raise ValueError("no profile part")
                data = parts["profile"][2]
            else:
                data = body
            if data[:2] != b"\x1f\x8b":
                raise ValueError("profile is not gzip")
        except ValueError as e:
            return self.reply(400, {"error": str(e)})
        with st.lock:
            st.ingested += 1
            if st.args.pyroscope_log:
                st.append(st.args.pyroscope_log, {
                    "name": q["name"][0], "from": int(q["from"][0]),
                    "until": int(q["until"][0]), "format": q["format"][0],
                    "profile_bytes": len(data)})
        self.reply(200, {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--pyroscope-log")
    ap.add_argument("--token", required=True)
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--retry-after")
    ap.add_argument("--reject-id")
    ap.add_argument("--lose-response-first", type=int, default=0)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.state = State(args)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
