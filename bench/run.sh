#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench: the same whole-server 99 Hz CPU capture, side by side in one run, under a fixed CPU
# workload on both cores (bench/burn.c, one process per core):
#
#   baseline  no profiler
#   ours      $BIN capture --server --question cpu --duration $DURATION --out DIR
#   perf      perf record -F 99 -a -g -o X -- sleep $DURATION; perf script -i X > /dev/null
#   bpftrace  bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }
#                          interval:s:$DURATION { exit(); }'
#
# For each: CPU seconds user+sys and peak RSS (GNU time), BPF program run time (kernel.bpf_stats_enabled
# = 1, run_time_ns read from /proc/PID/fdinfo of the profiler's BPF program fds), time from the end
# of sampling to the result being written, and the workload's iterations per second against the
# baseline. Results: $OUTPUT/bench/results.md (printed too); raw files under $OUTPUT/bench/runs/.
# See docs/benchmarks.md.
#
# Env: BIN, OUTPUT (set by make), DURATION (default 30), REPEAT (default 1 when DURATION >= 20,
# else 3; the table shows medians), PROFILERS (default "baseline ours perf bpftrace"),
# UNWINDER (default 1: also run the unwinder comparison, unwinder_bench below; 0 skips it),
# PYTHON_BENCH (default 1: also run the Python row, bench/python.sh; 0 skips it),
# JVM_BENCH (default 1: also run the JVM row, bench/jvm.sh; 0 skips it),
# NODE_BENCH (default 1: also run the Node.js row, bench/node.sh; 0 skips it),
# CONT_BENCH (default 1: also run the continuous row, bench/continuous.sh, about 23 minutes with
# its defaults; 0 skips it), NAMING (default 1: also run naming_bench below, a few seconds;
# 0 skips it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${DURATION:-30}
PROFILERS=${PROFILERS:-baseline ours perf bpftrace}
if [ -z "${REPEAT:-}" ]; then
	if [ "${DURATION%.*}" -ge 20 ]; then REPEAT=1; else REPEAT=3; fi
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$OUTPUT/bench
RUNS=$W/runs

log() { printf '  BENCH    %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (BPF, perf -a, kernel.bpf_stats_enabled)"

# --- tools ------------------------------------------------------------------------------------
missing=()
command -v bpftrace >/dev/null || missing+=(bpftrace)
[ -x /usr/bin/time ] || missing+=(time)
command -v perf >/dev/null || missing+=(linux-perf)
command -v bpftool >/dev/null || missing+=(bpftool)
command -v cc >/dev/null || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for p in $PROFILERS; do
	if [ "$p" = ours ] && [ ! -x "$BIN" ]; then die "no binary at $BIN (run: make bench)"; fi
done

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_prepare	# kernel.bpf_stats_enabled on until exit

# run_one NAME DIR: the profiler NAME for DURATION seconds while 2 burners run.
run_one() {
	local name=$1 d=$2 i
	local burners=()
	mkdir -p "$d"
	head -1 /proc/stat >"$d/stat.0"
	for i in 0 1; do
		"$W/burn" "$DURATION" >"$d/burn.$i" &
		burners+=($!)
	done
	profiler_start "$name" "$d" || die "unknown profiler $name"
	profiler_finish "$name" "$d"
	for i in "${burners[@]}"; do wait "$i" || true; done
	head -1 /proc/stat >"$d/stat.1"
	[ -e "$d/ok" ] || log "$name FAILED: see $d/log"
}

idle_busy=$(busy_pct)
if [ "$idle_busy" -gt 10 ]; then
	log "WARNING: the machine is ${idle_busy}% busy before the bench starts; figures will be noisy"
fi

start=$(date +%s)
log "DURATION=$DURATION s, REPEAT=$REPEAT, profilers: $PROFILERS"
for r in $(seq 1 "$REPEAT"); do
	for p in $PROFILERS; do
		log "run $r/$REPEAT: $p"
		run_one "$p" "$RUNS/$p.$r"
		sleep 2
	done
done

{
	echo "# make bench: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make bench\` (bench/run.sh, DURATION=$DURATION REPEAT=$REPEAT);" \
		"machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)."
	echo "Took $(($(date +%s) - start)) s. Machine busy before the start: ${idle_busy}% of all CPUs" \
		"(above 10%: noisy figures)."
	echo
} >"$W/results.md.head"
"$PY" "$here/report.py" report "$RUNS" "$DURATION" "$W/results.md.body" >/dev/null
cat "$W/results.md.head" "$W/results.md.body" >"$W/results.md"
rm -f "$W/results.md.head" "$W/results.md.body"

# --- the DWARF unwinder against the frame-pointer walk (issue 7) ------------------------------
#
# bench/unwind_bench.c, built against the profiler's objects, in the same run:
#   1. the unwind tables of every process on this machine: files, rows, kernel memory, build CPU
#   2. a whole-server sampler for DURATION seconds (cpu, then wall with sched_switch) with
#      frame-pointer user stacks, then with the DWARF unwinder: BPF ns per event, BPF CPU s,
#      the collector's CPU (loading tables), frames per stack, share of stacks completed
# with bench/burn.c on one core and the test workloads deep (a 7-frame stack without frame
# pointers) and blockers (threads blocked in libc) running. It holds the capture lock, as a
# capture does, so it never runs beside one.
unwinder_bench() {
	local ub=$W/unwind_bench objs out=$W/unwinder.md pids=() p
	objs=$(find "$OUTPUT/obj" -name '*.o' ! -path '*/daemon/main.o')
	# shellcheck disable=SC2086
	cc -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
		-I"$repo" -I"$OUTPUT" "$here/unwind_bench.c" $objs -o "$ub" \
		$(for d in /usr/lib/$(gcc -print-multiarch) /usr/lib64 /usr/lib; do
			[ -f $d/libbpf.a ] && echo $d/libbpf.a && break; done) \
		$(pkg-config --libs libelf libdw zlib jansson yaml-0.1 libcurl libmicrohttpd libwebsockets) \
		-lpthread -lm -lstdc++ || die "cannot build bench/unwind_bench.c (make builds it too: run make)"
	for p in deep blockers; do
		[ -x "$OUTPUT/workloads/$p" ] || continue
		"$OUTPUT/workloads/$p" $((3 * DURATION + 30)) >/dev/null 2>&1 &
		pids+=($!)
		bg_pids+=($!)
	done
	"$W/burn" $((2 * DURATION + 30)) >/dev/null &
	pids+=($!)
	bg_pids+=($!)
	{
		echo
		echo "## The DWARF unwinder against the frame-pointer walk"
		echo
		echo "Unwind tables of the processes on this machine (as a whole-server capture loads them):"
		echo
		"$ub" tables
		echo
		echo "Whole-server sampler, $DURATION s each, same run (burn on one core, deep and blockers running):"
		echo
		flock -w 300 /run/slideops-profiler.lock "$ub" walk "$DURATION" 2>"$W/unwinder.cpu.log"
		flock -w 300 /run/slideops-profiler.lock "$ub" walk "$DURATION" wall 2>"$W/unwinder.wall.log" |
			tail -n +3
		echo
		sed 's/^/- /' "$W/unwinder.cpu.log" "$W/unwinder.wall.log"
	} >"$out"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	cat "$out" >>"$W/results.md"
}
if [ "${UNWINDER:-1}" = 1 ]; then
	log "unwinder: tables, then frame pointers vs DWARF ($DURATION s each, cpu and wall)"
	unwinder_bench
fi
# --- naming native frames in user space (issue 19) ----------------------------------------
#
# bench/naming_bench.c (built by make): DWARF file:line and inlined frames per distinct address
# (first time, cached), and demangling per name of libstdc++'s C++ names and of the Rust
# names of tests/workloads/native/ledger.rs (when rustc is there). Once per distinct frame of
# a capture, after sampling: not a per-sample cost.
naming_bench() {
	local nb=$OUTPUT/bench/naming_bench cxx=$W/names.cxx rust=$W/names.rust lib rustc
	[ -x "$nb" ] || die "no $nb (run make)"
	lib=$(gcc -print-file-name=libstdc++.so.6)
	nm -D --defined-only "$lib" | awk '$3 ~ /^_Z/ { sub(/@.*/, "", $3); print $3 }' >"$cxx"
	: >"$rust"
	# Debian's rustc (test_native_langs' row) when it is there: its std keeps its local names
	rustc=/usr/bin/rustc
	[ -x "$rustc" ] || rustc=$(command -v rustc) || rustc=
	if [ -n "$rustc" ] &&
		"$rustc" -O --edition 2018 "$repo/tests/workloads/native/ledger.rs" -o "$W/ledger-rs" 2>/dev/null; then
		nm "$W/ledger-rs" | awk '$3 ~ /^_ZN/ { print $3 }' >"$rust"
	fi
	{
		echo
		echo "## Naming native frames in user space"
		echo
		"$nb" "$cxx" "$rust"
	} >>"$W/results.md"
}
if [ "${NAMING:-1}" = 1 ]; then
	log "naming: DWARF lines and inlined frames, demangling"
	naming_bench
fi
# The Python row (issue 13): bench/python.sh, appended to the results.
if [ "${PYTHON_BENCH:-1}" = 1 ]; then
	BIN=$BIN OUTPUT=$OUTPUT "$here/python.sh"
	{ echo; cat "$W/python/python.md"; } >>"$W/results.md"
fi
# The JVM row (issue 14): bench/jvm.sh, appended to the results.
if [ "${JVM_BENCH:-1}" = 1 ]; then
	BIN=$BIN OUTPUT=$OUTPUT "$here/jvm.sh"
	{ echo; cat "$W/jvm/jvm.md"; } >>"$W/results.md"
fi
# The Node.js row (issue 16): bench/node.sh, appended to the results.
if [ "${NODE_BENCH:-1}" = 1 ]; then
	BIN=$BIN OUTPUT=$OUTPUT "$here/node.sh"
	{ echo; cat "$W/node/node.md"; } >>"$W/results.md"
fi
# The continuous row (issue 18): bench/continuous.sh, appended to the results.
if [ "${CONT_BENCH:-1}" = 1 ]; then
	BIN=$BIN OUTPUT=$OUTPUT "$here/continuous.sh"
	{ echo; cat "$W/continuous.md"; } >>"$W/results.md"
fi
cat "$W/results.md"
