# CPU-bound, for tests/integration/test_python_cpu.sh: run() calls caller_a() -> hot_a() three
# times for each call of caller_b() -> hot_b(), and the two hot functions have the same body, so
# by construction ~75% of the CPU time is in hot_a and ~25% in hot_b (each round of four calls
# in a shuffled order, so that a sampling period cannot line up with the loop). Runs for SECONDS (argv[1],
# default 30) in PROCS processes (argv[2], default 1: the first forks the others, as a pre-fork
# server does). Python 3.6 and later. The test reads the line ranges of hot_a and hot_b from
# this file (the lines between "def hot_a" and "return total").
import os
import random
import sys
import time


def hot_a(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def hot_b(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def caller_a(n):
    return hot_a(n)


def caller_b(n):
    return hot_b(n)


def run(until):
    calls = [caller_a, caller_a, caller_a, caller_b]
    while time.time() < until:
        random.shuffle(calls)
        for call in calls:
            call(20000)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    procs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    until = time.time() + seconds
    children = []
    for _ in range(procs - 1):
        pid = os.fork()
        if pid == 0:
            run(until)
            os._exit(0)
        children.append(pid)
    run(until)
    for pid in children:
        os.waitpid(pid, 0)


main()
