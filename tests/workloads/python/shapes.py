# CPU-bound, for tests/integration/test_python_shapes.sh: one hot function per shape of Python
# code a stack walker can get wrong, each right under a named caller, taken in turn for SECONDS
# (argv[1], default 30). The test looks for "caller;hot" in the samples of each:
#   generator   consume_gen;gen_hot          gen_hot is a generator, resumed by consume_gen's loop
#   coroutine   coro_main;coro_hot           async def, awaited, run by an asyncio event loop
#   recursion   recurse;deep_leaf            deep_leaf under DEPTH (150) recurse frames: past the
#                                            walker's 128, so the root end of the stack is cut
#   exceptions  exc_loop;exc_in_except       called in an except block, after a raise, in a loop
#               exc_loop;exc_in_finally      called in the finally block of the same try
#   exec        run_exec;exec_hot            defined by exec(compile(src, "<generated>", "exec"))
# Python 3.6 and later (asyncio.run: 3.7).
import asyncio
import sys
import time

DEPTH = 150
WORK = 3000  # inner iterations per shape and round: a few ms each


def gen_hot(n):
    for j in range(n):
        total = 0
        for i in range(100):
            total += i * i
        yield total


def consume_gen(n):
    s = 0
    for v in gen_hot(n):
        s += v
    return s


async def coro_hot(n):
    total = 0
    for j in range(n):
        for i in range(100):
            total += i * i
        if j % 500 == 0:
            await asyncio.sleep(0)  # back to the event loop now and then
    return total


async def coro_main(n):
    return await coro_hot(n)


def deep_leaf(n):
    total = 0
    for j in range(n):
        for i in range(100):
            total += i * i
    return total


def recurse(depth, n):
    if depth > 0:
        return recurse(depth - 1, n)
    return deep_leaf(n)


def exc_in_except(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def exc_in_finally(n):
    total = 0
    for i in range(n):
        total += i * i
    return total


def exc_loop(n):
    s = 0
    for j in range(n // 20):
        try:
            raise ValueError(j)
        except ValueError:
            s += exc_in_except(1000)
        finally:
            s += exc_in_finally(1000)
    return s


SRC = """
def exec_hot(n):
    total = 0
    for j in range(n):
        for i in range(100):
            total += i * i
    return total
"""
GENERATED = {}
exec(compile(SRC, "<generated>", "exec"), GENERATED)


def run_exec(n):
    return GENERATED["exec_hot"](n)


def run_round():
    consume_gen(WORK)
    asyncio.run(coro_main(WORK))
    recurse(DEPTH, WORK)
    exc_loop(WORK)
    run_exec(WORK)


def main():
    until = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 30.0)
    while time.time() < until:
        run_round()


main()
