# CPU-bound, for tests/integration/test_python_frames.sh: hot_leaf() under middle() under outer()
# under Worker.run() under main(), for SECONDS (argv[1], default 30), DEPTH (argv[2], default 0)
# calls of descend() deeper (the cost per frame). Its line numbers are part of the test.
import sys
import time


def hot_leaf(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def middle(n):
    return hot_leaf(n)


def outer(n):
    return middle(n)


class Worker:
    def run(self, until):
        while time.time() < until:
            outer(20000)


def descend(depth, until):
    if depth > 0:
        return descend(depth - 1, until)
    return Worker().run(until)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    descend(depth, time.time() + seconds)


main()
