# Threads for tests/integration/test_python_threads.sh: each thread spends its whole time in
# one named Python function, so each function is ~1/3 of the workers' wall time by
# construction, whatever the thread is doing:
#   compute_loop -> compute: pure Python arithmetic (on the CPU, holding the GIL)
#   sleep_loop   -> nap: time.sleep(0.02) (off the CPU, in clock_nanosleep)
#   hash_loop    -> digest: hashlib.sha256 over 4 MiB (on the CPU in C with the GIL released)
# MODE (argv[2]) "grow" runs only grow_loop -> grow, which appends 64 KiB bytearrays to a list
# (new memory, touched as it is zeroed) up to 256 MiB, then sleeps. "locks" runs hold_loop and
# wait_loop -> wait_for_lock: a thread that waits on a threading.Lock another one holds.
# Runs for SECONDS (argv[1], default 30). Python 3.6 and later.
import hashlib
import sys
import threading
import time


def compute(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def compute_loop(until):
    while time.time() < until:
        compute(10000)


def nap():
    time.sleep(0.02)


def sleep_loop(until):
    while time.time() < until:
        nap()


def digest(buf):
    return hashlib.sha256(buf).digest()


def hash_loop(until):
    buf = b"x" * (4 << 20)
    while time.time() < until:
        digest(buf)


def grow(data):
    data.append(bytearray(64 << 10))


def grow_loop(until):
    data = []
    while time.time() < until:
        if len(data) < 4096:
            grow(data)
            time.sleep(0.0005)
        else:
            time.sleep(0.1)


LOCK = threading.Lock()


def hold_loop(until):
    while time.time() < until:
        with LOCK:
            time.sleep(0.02)
        time.sleep(0.001)


def wait_for_lock():
    with LOCK:
        pass


def wait_loop(until):
    while time.time() < until:
        wait_for_lock()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    mode = sys.argv[2] if len(sys.argv) > 2 else "wall"
    until = time.time() + seconds
    loops = {
        "wall": (compute_loop, sleep_loop, hash_loop),
        "grow": (grow_loop,),
        "locks": (hold_loop, wait_loop),
    }[mode]
    threads = [threading.Thread(target=f, args=(until,), name=f.__name__) for f in loops]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
