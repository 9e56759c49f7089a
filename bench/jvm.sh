#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench (the JVM row, issue 14): what walking and naming HotSpot frames costs. The same
# whole-server 99 Hz CPU capture as bench/run.sh, under two CPU-bound processes (one per core)
# of one of three workloads, in one run and in sequence:
#
#   native  bench/burn.c                                      no JVM: the HotSpot step is not entered
#   java10  bench/JavaBurn.java under OpenJDK 17 (no flags), its loop 10 Java frames deep
#   java50  the same, 50 frames deep
#
# each with no profiler (baseline), ours ($BIN capture --server --question cpu --duration
# $JVM_DURATION) and perf (perf record -F 99 -a -g + perf script; perf names no JIT frame without
# a perf map, which we do not ask the JVM for). A JVM runs JVM_WARMUP (3) s before the profiler
# starts (the JIT compiles the loop meanwhile) and its rate is measured over the JVM_DURATION s
# after that only (JavaBurn prints "warm" when they start; the profiler starts then). For each:
# CPU seconds (GNU time), BPF program run time and runs (kernel.bpf_stats_enabled, from
# /proc/PID/fdinfo: report.py watch), BPF ns per run (per sample: both cores are busy, every
# sample is a workload's), the ratio to perf, the workload's iterations per second against its
# baseline, and the Java frames per sample the capture named. Results:
# $OUTPUT/bench/jvm/jvm.md (printed too). See docs/benchmarks.md.
#
# Env: BIN, OUTPUT (set by make), JVM_DURATION (default 10), JVM_REPEAT (default 1; the table
# shows medians), JVM_WORKLOADS (default "native java10 java50"), JVM_WARMUP (default 3),
# JAVA_HOME (default /usr/lib/jvm/java-17-openjdk-amd64).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${JVM_DURATION:-10}
REPEAT=${JVM_REPEAT:-1}
WORKLOADS=${JVM_WORKLOADS:-native java10 java50}
WARMUP=${JVM_WARMUP:-3}
JDK=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
LINGER=4	# the JVM stays this long past its loop: the capture names its frames then
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$OUTPUT/bench/jvm
RUNS=$W/runs
CLASSES=$W/classes

log() { printf '  BENCH    %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (BPF, perf -a, kernel.bpf_stats_enabled)"
[ -x "$BIN" ] || die "no binary at $BIN (run: make bench)"
{ [ -x "$JDK/bin/java" ] && [ -x "$JDK/bin/javac" ]; } || die "no JDK at $JDK (set JAVA_HOME)"
command -v perf >/dev/null || die "perf not installed (bench/run.sh installs it)"
[ -x /usr/bin/time ] || die "GNU time not installed (bench/run.sh installs it)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_prepare	# kernel.bpf_stats_enabled on until exit

# JavaBurn, compiled when its source is newer than its class
if [ ! -e "$CLASSES/JavaBurn.class" ] || [ "$here/JavaBurn.java" -nt "$CLASSES/JavaBurn.class" ]; then
	mkdir -p "$CLASSES"
	"$JDK/bin/javac" -d "$CLASSES" "$here/JavaBurn.java" || die "cannot compile bench/JavaBurn.java"
fi

# burner WORKLOAD OUT: one workload process for DURATION seconds, its rate line to OUT.
burner() {
	case $1 in
	native) "$W/burn" "$DURATION" >"$2" & ;;
	java*) "$JDK/bin/java" -cp "$CLASSES" JavaBurn "$DURATION" "${1#java}" "$LINGER" "$WARMUP" \
		>"$2" 2>"$2.err" & ;;
	esac
	bg_pids+=($!)
}

# wait_warm OUT...: until every JavaBurn has printed "warm" (its measured window has started).
wait_warm() {
	local f deadline=$((SECONDS + 60))
	for f in "$@"; do
		until grep -q '^warm' "$f" 2>/dev/null; do
			[ "$SECONDS" -lt "$deadline" ] || { log "no 'warm' in $f"; return 1; }
			sleep 0.05
		done
	done
}

# run_one WORKLOAD PROFILER DIR: PROFILER for DURATION seconds while 2 WORKLOAD processes run.
run_one() {
	local wl=$1 name=$2 d=$3 i burners=()
	mkdir -p "$d"
	head -1 /proc/stat >"$d/stat.0"
	for i in 0 1; do
		burner "$wl" "$d/burn.$i"
		burners+=($!)
	done
	if [ "$wl" = native ]; then
		sleep 0.3	# as bench/python.sh
	else
		wait_warm "$d/burn.0" "$d/burn.1" || true
		# the machine's CPU from here: the warm-up (start-up, JIT) is not in the figures
		head -1 /proc/stat >"$d/stat.0"
	fi
	# one capture at a time on a server: wait for another one (a test's) to end
	[ "$name" != ours ] || flock -w 120 /run/slideops-profiler.lock true || true
	profiler_start "$name" "$d" || die "unknown profiler $name"
	profiler_finish "$name" "$d"
	for i in "${burners[@]}"; do wait "$i" || true; done
	head -1 /proc/stat >"$d/stat.1"
	[ -e "$d/ok" ] || log "$wl/$name FAILED: see $d/log"
}

start=$(date +%s)
log "jvm: DURATION=$DURATION s, REPEAT=$REPEAT, WARMUP=$WARMUP s, workloads: $WORKLOADS ($JDK)"
for r in $(seq 1 "$REPEAT"); do
	for wl in $WORKLOADS; do
		for p in baseline ours perf; do
			log "run $r/$REPEAT: $wl $p"
			run_one "$wl" "$p" "$RUNS/$wl-$p.$r"
			# another capture took the lock between the wait and ours: once more
			for try in 2 3; do
				grep -qs 'a capture is already running' "$RUNS/$wl-$p.$r/log" || break
				log "run $r/$REPEAT: $wl $p again (another capture was running), try $try"
				rm -rf "$RUNS/$wl-$p.$r"
				sleep 2
				run_one "$wl" "$p" "$RUNS/$wl-$p.$r"
			done
			sleep 1
		done
	done
done
{
	echo "## The JVM row: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make bench\` (bench/jvm.sh, JVM_DURATION=$DURATION JVM_REPEAT=$REPEAT" \
		"JVM_WARMUP=$WARMUP, $("$JDK/bin/java" -version 2>&1 | head -1 | tr -d '"'), no JVM flags);" \
		"took $(($(date +%s) - start)) s."
	echo
	"$PY" "$here/report.py" jvm "$RUNS" "$DURATION"
} >"$W/jvm.md"
cat "$W/jvm.md"
