# Dumps the line table of sample() and the expected line at some offsets, as the C rows of
# tests/unit/test_py_linetable.c (run it with each CPython).
import sys
def sample(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i * 2
        else:
            total -= 1
    return total
c = sample.__code__
v = sys.version_info
tab = c.co_linetable if v >= (3, 10) else c.co_lnotab
fmt = "PY_LINES_311" if v >= (3, 11) else ("PY_LINES_310" if v >= (3, 10) else "PY_LINES_LNOTAB")
n = len(c.co_code)
if v >= (3, 10):
    lines = {}
    for s, e, l in c.co_lines():
        for b in range(s, e):
            lines[b] = l
else:
    import dis
    st = list(dis.findlinestarts(c)); lines = {}
    for b in range(n):
        l = c.co_firstlineno
        for off, ln in st:
            if off <= b: l = ln
        lines[b] = l
tabc = "".join("\\x%02x" % x for x in tab)
for b in range(0, n, 2):
    if b % 8 == 0 or b == n - 2:
        l = lines.get(b)
        print('\t{ "%d.%d", %s, "%s", %d, 2, %d, %s, %d },' % (v[0], v[1], fmt, tabc, len(tab), b, "0" if l is not None else "-ENOENT", l if l is not None else 0))
