# SPDX-License-Identifier: Apache-2.0
# pyburn: the Python workload of `make bench` (bench/python.sh), the counterpart of burn.c. A
# deterministic integer loop in hot() runs at exactly FRAMES Python frames deep
# (<module>, main, descend x (FRAMES - 4), spin, hot) for SECONDS of wall time, then prints
# on stdout, as burn.c does,
#
#     burn iters=<N> wall=<seconds> cpu=<seconds> rate=<iterations per wall second>
#
# then sleeps LINGER seconds (default 0) before it exits: a capture names Python frames from
# the process's code objects after sampling ends, so a process gone by then has none.
#
# Usage: python3 pyburn.py SECONDS FRAMES [LINGER]   (FRAMES >= 5)
import sys
import time

BATCH = 2000  # iterations between clock reads: about 0.1 ms


def hot(n, h):
    for i in range(n):
        h = (h * 31 + i) & 0xFFFFFFFF
    return h


def spin(seconds):
    iters, h = 0, 0
    t0, c0 = time.monotonic(), time.process_time()
    end = t0 + seconds
    while True:
        h = hot(BATCH, h)
        iters += BATCH
        t1 = time.monotonic()
        if t1 >= end:
            break
    print("burn iters=%d wall=%.3f cpu=%.3f rate=%.0f h=%d"
          % (iters, t1 - t0, time.process_time() - c0, iters / (t1 - t0), h), flush=True)


def descend(k, seconds):
    if k > 0:
        return descend(k - 1, seconds)
    return spin(seconds)


def main():
    if len(sys.argv) not in (3, 4) or int(sys.argv[2]) < 5 or float(sys.argv[1]) <= 0:
        sys.stderr.write("usage: pyburn.py SECONDS FRAMES [LINGER] (FRAMES >= 5)\n")
        sys.exit(2)
    # descend(k) makes k + 1 frames: FRAMES - 4 of them with <module>, main, spin and hot
    descend(int(sys.argv[2]) - 5, float(sys.argv[1]))
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)


main()
