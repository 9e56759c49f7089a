#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for Node's inspector that misbehaves (python3 stdlib only, raw sockets).

    hostile_inspector.py MODE [PORT]     (PORT 9229; listens on 127.0.0.1)

Like Node, it answers GET /json/list (and /json) with one target whose webSocketDebuggerUrl is
ws://127.0.0.1:PORT/<uuid> on itself, in every mode. Any other request is taken as the
WebSocket upgrade, and answered according to MODE:

  ok           a correct handshake; each text message with an "id" gets {"id":N,"result":{}}
  garbage      non-HTTP bytes instead of the handshake answer, and the connection kept open
  nohandshake  nothing: the connection is kept open and never answered
  http404      HTTP/1.1 404 Not Found
  endless      a correct handshake, then text fragments without FIN, forever
  huge         a correct handshake, then a text frame announcing 1 GiB, streamed
  flood        a correct handshake, then thousands of small text messages a second, forever
  slowloris    the correct handshake answer, one byte a second
  binary       a correct handshake, then binary messages
  deaf         a correct handshake, then nothing: never reads, never writes

Prints "listening PORT" on stdout once it accepts connections.
"""
import base64
import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
UUID = "0f3e0c6a-9d1b-4c55-8a2e-5b7c1d2e3f40"
MODES = ("ok", "garbage", "nohandshake", "http404", "endless", "huge", "flood", "slowloris",
         "binary", "deaf")
REQUEST_MAX = 64 << 10


def read_request(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk or len(buf) > REQUEST_MAX:
            return None, {}
        buf += chunk
    head = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return lines[0], headers


def frame(opcode, payload, fin=True):
    b0 = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        return struct.pack("!BB", b0, n) + payload
    if n < 1 << 16:
        return struct.pack("!BBH", b0, 126, n) + payload
    return struct.pack("!BBQ", b0, 127, n) + payload


def read_frame(s):
    """One client frame (masked): (opcode, payload), or None at the end."""
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b
    h = exact(2)
    if h is None:
        return None
    opcode, n = h[0] & 0x0F, h[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", exact(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", exact(8))[0]
    mask = exact(4) if h[1] & 0x80 else b"\0\0\0\0"
    data = exact(n) if n else b""
    if data is None:
        return None
    return opcode, bytes(c ^ mask[i % 4] for i, c in enumerate(data))


def handshake(headers):
    key = headers.get("sec-websocket-key", "").encode()
    accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % accept).encode()


def json_list(port):
    body = json.dumps([{
        "description": "node.js instance", "id": UUID, "title": "hostile", "type": "node",
        "url": "file://",
        "webSocketDebuggerUrl": "ws://127.0.0.1:%d/%s" % (port, UUID),
    }]).encode()
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


def serve_ok(s):
    while True:
        f = read_frame(s)
        if f is None or f[0] == 8:
            if f is not None:
                s.sendall(frame(8, f[1][:2]))
            return
        if f[0] == 1:
            try:
                msg = json.loads(f[1])
            except ValueError:
                continue
            if isinstance(msg, dict) and "id" in msg:
                s.sendall(frame(1, json.dumps({"id": msg["id"], "result": {}}, separators=(",", ":")).encode()))


def after_handshake(s, mode):
    if mode == "ok":
        serve_ok(s)
    elif mode == "endless":
        s.sendall(frame(1, b"[" * 4096, fin=False))
        while True:
            s.sendall(frame(0, b"1," * 2048, fin=False))
    elif mode == "huge":
        s.sendall(struct.pack("!BBQ", 0x81, 127, 1 << 30))
        chunk = b"x" * 65536
        for _ in range((1 << 30) // len(chunk)):
            s.sendall(chunk)
    elif mode == "flood":
        n = 0
        while True:
            batch = b"".join(frame(1, b'{"method":"Flood.tick","params":{"n":%d}}' % (n + i))
                             for i in range(100))
            s.sendall(batch)
            n += 100
            time.sleep(0.01)  # about 10000 messages a second
    elif mode == "deaf":
        time.sleep(3600)
    elif mode == "binary":
        while True:
            s.sendall(frame(2, b"\x00\x01\x02\x03"))
            time.sleep(0.01)


def serve(s, mode, port):
    try:
        line, headers = read_request(s)
        if line is None:
            return
        path = line.split(" ")[1] if line.count(" ") >= 2 else ""
        if path in ("/json/list", "/json", "/json/list/", "/json/"):
            s.sendall(json_list(port))
            return
        if mode == "garbage":
            s.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" + os.urandom(8192))
            time.sleep(3600)
        elif mode == "nohandshake":
            time.sleep(3600)
        elif mode == "http404":
            s.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                      b"Content-Length: 10\r\n\r\nnot found\n")
        elif mode == "slowloris":
            for b in handshake(headers):
                s.sendall(bytes([b]))
                time.sleep(1)
        else:
            s.sendall(handshake(headers))
            after_handshake(s, mode)
    except OSError:
        pass
    finally:
        s.close()


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in MODES:
        sys.stderr.write("usage: hostile_inspector.py %s [PORT]\n" % "|".join(MODES))
        return 2
    mode = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) == 3 else 9229
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(16)
    print("listening %d" % port, flush=True)
    while True:
        s, _ = ls.accept()
        threading.Thread(target=serve, args=(s, mode, port), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
