#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# C++ and Rust, named as their users read them (perf, addr2line -C, rustfilt):
#   - tests/workloads/native/ledger.cpp, Debian 12's g++ 12 -O2 -g (no frame pointers), and
#     ledger.rs, Debian 12's rustc 1.63 -O (no frame pointers, no DWARF of its own): each runs
#     as /usr/local/bin/ledger, pid 1 of its own namespaces with a busybox root, in a pod
#     container's cgroup, and `capture --pid P --question cpu` of it:
#   - C++: the answer names billing::Ledger<long>::settle(unsigned long), the stacks go
#     main -> billing::run_day(billing::Ledger<long>&) -> settle, and the std::vector code
#     inlined into settle is named in full from its DWARF linkage name
#     (std::vector<long, std::allocator<long> >::...), never by its short DW_AT_name;
#   - Rust: the answer names ledger::billing::Ledger::settle, the stacks go ledger::main ->
#     ledger::billing::run_day -> settle, and no frame keeps the ::h<16 hex digits> hash or a
#     $-escape of the legacy mangling.
# The language rows of runtimes/languages.c that cite this test name these two compilers:
# their versions are checked here.
. "$(dirname "$0")/lib.sh"

need_root
need_bin
need_cmd g++ timeout

RUSTC=/usr/bin/rustc # Debian's: the row says 1.63 (make deps installs it)
[ -x "$RUSTC" ] || skip "$RUSTC missing (apt-get install rustc)"
gv=$(g++ -dumpversion)
rv=$("$RUSTC" --version | awk '{ print $2 }')
[ "${gv%%.*}" = 12 ] || fail "g++ $gv: the language row says g++ 12"
[ "${rv%.*}" = 1.63 ] || fail "rustc $rv: the language row says rustc 1.63"

SRC=$REPO_ROOT/tests/workloads/native
g++ -O2 -g -Wall -Wextra -Werror "$SRC/ledger.cpp" -o "$TMP/ledger-cpp" || fail "cannot build ledger.cpp"
"$RUSTC" -O --edition 2018 "$SRC/ledger.rs" -o "$TMP/ledger-rs" || fail "cannot build ledger.rs"
log "built with g++ $gv and rustc $rv"

# capture_lang NAME BINARY: BINARY as /usr/local/bin/ledger in a container, captured into
# $TMP/NAME.
capture_lang()
{
	local name=$1 root=$TMP/root-$1 cg pid
	mkdir -p "$TMP/bin-$name" && cp "$2" "$TMP/bin-$name/ledger" || fail "cannot stage $2"
	make_busybox_rootfs "$root" "$TMP/bin-$name/ledger" || exit 1
	cg=$(cg_make_pod burstable "$(cat /proc/sys/kernel/random/uuid)") || exit 1
	pid=$(ns_container_run "$root" "$cg" /usr/local/bin/ledger) || exit 1
	need_own_ns "$pid" "ledger ($name)" pid mnt
	sleep 1
	profiler_run "$name" 60 capture --pid "$pid" --question cpu --duration 4 --out "$TMP/$name"
	kill -0 "$pid" 2>/dev/null || fail "$name: ledger died during the capture"
	kill -KILL "$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")" "$pid" 2>/dev/null
	[ -s "$TMP/$name/profile.collapsed" ] || fail "$name: profile.collapsed missing or empty"
}

# check NAME HOT CHAIN PY-CHECK: the answer names HOT, a stack holds CHAIN (";"-joined frames
# in order), and PY-CHECK (Python, on `frames`, the set of frame names) holds.
check()
{
	"$PYTHON" - "$TMP/$1" "$2" "$3" "$4" <<'PY' || fail "$1: $(cat "$TMP/$1.why" 2>/dev/null)"
import json, re, sys
out, hot, chain, cond = sys.argv[1:]
frames, total, in_hot, chained = set(), 0, 0, 0
for line in open(out + "/profile.collapsed"):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    n = int(n)
    total += n
    fs = stack.split(";")
    frames.update(fs)
    if hot in fs:
        in_hot += n
    if chain in stack:
        chained += n
answer = json.load(open(out + "/summary.json")).get("answer", "")
why = []
if ("most of it in " + hot) not in answer:
    why.append("answer: %r" % answer)
if total == 0 or in_hot < 0.5 * total:
    why.append("%s in %d of %d samples" % (hot, in_hot, total))
if chained < 0.5 * total:
    why.append("%r in %d of %d samples" % (chain, chained, total))
if not eval("(" + cond + ")", {"frames": frames, "re": re}):
    why.append("%s fails; frames: %s" % (cond, sorted(frames)[:40]))
open(out + ".why", "w").write("; ".join(why))
print("%s: %s in %d of %d samples; answer: %s" % (out.rsplit("/", 1)[1], hot, in_hot, total, answer))
sys.exit(1 if why else 0)
PY
}

capture_lang cpp "$TMP/ledger-cpp"
check cpp 'billing::Ledger<long>::settle(unsigned long)' \
	'main;billing::run_day(billing::Ledger<long>&);billing::Ledger<long>::settle(unsigned long)' \
	'any(f.startswith("std::vector<long, std::allocator<long> >::") for f in frames) and
	 not frames & {"size", "operator[]"}' >&2

capture_lang rust "$TMP/ledger-rs"
check rust 'ledger::billing::Ledger::settle' \
	'ledger::main;ledger::billing::run_day;ledger::billing::Ledger::settle' \
	'not [f for f in frames if re.search(r"::h[0-9a-f]{16}$|\$(LT|GT|u[0-9a-f]+)\$", f)]' >&2

log "PASS: C++ and Rust named as written, through their frameless stacks, in containers"
