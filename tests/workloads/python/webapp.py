# CPU-bound, for tests/integration/test_python_server.sh: a request loop whose time goes to
# handle_request -> render_page (about two thirds) and to json.dumps called from handle_request
# (about a third, all of it in the standard library and its C encoder), for SECONDS (argv[1],
# default 30). The answer and the top functions name render_page and handle_request, never a
# frame of json/encoder.py.
import json
import sys
import time

PAYLOAD = {"items": [{"id": i, "name": "item%d" % i, "price": i * 1.25} for i in range(40)]}


def render_page(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def handle_request():
    body = render_page(6000)
    for _ in range(2):
        body += len(json.dumps(PAYLOAD))
    return body


def serve(until):
    while time.time() < until:
        handle_request()


serve(time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 30.0))
