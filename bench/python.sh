#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench (the Python row, issue 13): what naming CPython frames costs. The same
# whole-server 99 Hz CPU capture as bench/run.sh, under two CPU-bound processes (one per core)
# of one of three workloads, in one run and in sequence:
#
#   native  bench/burn.c                                   no Python: the walker is not entered
#   py10    bench/pyburn.py under Debian's python3.11, its loop 10 Python frames deep
#   py50    the same, 50 frames deep
#
# each with no profiler (baseline), ours ($BIN capture --server --question cpu --duration
# $PY_DURATION) and, for the Python ones, perf (perf record -F 99 -a -g + perf script). For each:
# CPU seconds (GNU time), BPF program run time and runs (kernel.bpf_stats_enabled, from
# /proc/PID/fdinfo: report.py watch), BPF ns per run (per sample: both cores are busy, every
# sample is a workload's), the ratio to perf, the workload's iterations per second against its
# baseline, and the Python frames per sample the capture recorded. Results:
# $OUTPUT/bench/python.md (printed too). See docs/benchmarks.md.
#
# Env: BIN, OUTPUT (set by make), PY_DURATION (default 10), PY_REPEAT (default 1; the table
# shows medians), PY_WORKLOADS (default "native py10 py50"), PYTHON (default /usr/bin/python3.11).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${PY_DURATION:-10}
REPEAT=${PY_REPEAT:-1}
WORKLOADS=${PY_WORKLOADS:-native py10 py50}
PYTHON=${PYTHON:-/usr/bin/python3.11}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$OUTPUT/bench/python
RUNS=$W/runs

log() { printf '  BENCH    %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (BPF, perf -a, kernel.bpf_stats_enabled)"
[ -x "$BIN" ] || die "no binary at $BIN (run: make bench)"
[ -x "$PYTHON" ] || die "no CPython at $PYTHON"
command -v perf >/dev/null || die "perf not installed (bench/run.sh installs it)"
[ -x /usr/bin/time ] || die "GNU time not installed (bench/run.sh installs it)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_prepare	# kernel.bpf_stats_enabled on until exit

# burner WORKLOAD OUT: one workload process for DURATION seconds, its rate line to OUT.
burner() {
	case $1 in
	native) "$W/burn" "$DURATION" >"$2" & ;;
	# alive 3 s past its loop: the capture reads the code objects once sampling ends
	py*) "$PYTHON" "$here/pyburn.py" "$DURATION" "${1#py}" 3 >"$2" & ;;
	esac
	bg_pids+=($!)
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
	sleep 0.3	# past the interpreter's start-up, as a capture of a running server would be
	profiler_start "$name" "$d" || die "unknown profiler $name"
	profiler_finish "$name" "$d"
	for i in "${burners[@]}"; do wait "$i" || true; done
	head -1 /proc/stat >"$d/stat.1"
	[ -e "$d/ok" ] || log "$wl/$name FAILED: see $d/log"
}

start=$(date +%s)
log "python: DURATION=$DURATION s, REPEAT=$REPEAT, workloads: $WORKLOADS ($PYTHON)"
for r in $(seq 1 "$REPEAT"); do
	for wl in $WORKLOADS; do
		profilers="baseline ours perf"
		[ "$wl" = native ] && profilers="baseline ours"
		for p in $profilers; do
			log "run $r/$REPEAT: $wl $p"
			run_one "$wl" "$p" "$RUNS/$wl-$p.$r"
			sleep 1
		done
	done
done
{
	echo "## The Python row: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make bench\` (bench/python.sh, PY_DURATION=$DURATION PY_REPEAT=$REPEAT," \
		"$($PYTHON -c 'import sys; print("CPython %d.%d.%d" % sys.version_info[:3])'));" \
		"took $(($(date +%s) - start)) s."
	echo
	"$PY" "$here/report.py" python "$RUNS" "$DURATION"
} >"$W/python.md"
cat "$W/python.md"
