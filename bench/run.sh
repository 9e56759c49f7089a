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
# else 3; the table shows medians), PROFILERS (default "baseline ours perf bpftrace").
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

mkdir -p "$W"
rm -rf "$RUNS"
mkdir -p "$RUNS"
cc -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror "$here/burn.c" -o "$W/burn"

# --- kernel settings, restored on exit ----------------------------------------------------------
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
bg_pids=()
cleanup() {
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	sysctl -qw kernel.bpf_stats_enabled="$old_stats" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sysctl -qw kernel.bpf_stats_enabled=1

TIMEFMT='%U %S %M %e'
now() { date +%s.%N; }

# run_one NAME DIR: the profiler NAME for DURATION seconds while 2 burners run.
run_one() {
	local name=$1 d=$2 pid wpid i
	local burners=()
	mkdir -p "$d"
	head -1 /proc/stat >"$d/stat.0"
	for i in 0 1; do
		"$W/burn" "$DURATION" >"$d/burn.$i" &
		burners+=($!)
	done
	case $name in
	baseline)
		sleep "$DURATION"
		: >"$d/ok"
		;;
	ours)
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				"$BIN" capture --server --question cpu --duration "$DURATION" --out "$d/out" \
				>"$d/log" 2>&1 && : >"$d/ok"
		) &
		pid=$!
		;;
	perf)
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				perf record -F 99 -a -g -o "$d/perf.data" -- \
				sh -c "sleep $DURATION; date +%s.%N > '$d/sleep_end'" >"$d/log" 2>&1 &&
				now >"$d/record_end" &&
				/usr/bin/time -f "$TIMEFMT" -o "$d/time.1" \
					perf script -i "$d/perf.data" >/dev/null 2>>"$d/log" && : >"$d/ok"
		) &
		pid=$!
		;;
	bpftrace)
		# bpftrace's system() takes a format string: stamp the end of sampling from a script
		printf '#!/bin/sh\ndate +%%s.%%N > %s/bt_end\n' "$d" >"$d/stamp.sh"
		chmod +x "$d/stamp.sh"
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				bpftrace --unsafe -e "profile:hz:99 { @[kstack, ustack, comm] = count(); }
					interval:s:$DURATION { system(\"$d/stamp.sh\"); exit(); }" \
				>"$d/bpftrace.out" 2>"$d/log" && now >"$d/exit_end" && : >"$d/ok"
		) &
		pid=$!
		;;
	*) die "unknown profiler $name" ;;
	esac
	if [ "$name" != baseline ]; then
		"$PY" "$here/report.py" watch "$pid" "$d/bpf.json" &
		wpid=$!
		bg_pids+=("$wpid")
		wait "$pid" || true
		wait "$wpid" || true
	fi
	for i in "${burners[@]}"; do wait "$i" || true; done
	head -1 /proc/stat >"$d/stat.1"
	[ -e "$d/ok" ] || log "$name FAILED: see $d/log"
	if [ "$name" = perf ] && [ -e "$d/perf.data" ]; then
		# not timed: the number of samples, for the details table
		perf report -i "$d/perf.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { print $3; exit }' >"$d/samples" || true
		rm -f "$d/perf.data" "$d/perf.data.old"
	fi
	if [ "$name" = bpftrace ]; then gzip -f "$d/bpftrace.out" 2>/dev/null || true; fi
}

# The figures mean something only on an otherwise idle machine: say so when it is not.
busy_pct() {
	local a b
	read -ra a </proc/stat
	sleep 2
	read -ra b </proc/stat
	local busy=$(((b[1] + b[2] + b[3] + b[6] + b[7]) - (a[1] + a[2] + a[3] + a[6] + a[7])))
	local all=$((busy + b[4] + b[5] - a[4] - a[5]))
	echo $((all > 0 ? busy * 100 / all : 0))
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
cat "$W/results.md"
