# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# What bench/run.sh and bench/python.sh share: the set-up, and one profiler's run beside a
# workload. Needs W, RUNS, BIN, DURATION and PY (a python3 for report.py) set.

bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# bench_prepare: a fresh $RUNS, bench/burn.c built into $W/burn, kernel.bpf_stats_enabled on
# (restored on exit, with every process in bg_pids killed). Sets TIMEFMT for GNU time.
bench_prepare() {
	mkdir -p "$W"
	rm -rf "$RUNS"
	mkdir -p "$RUNS"
	cc -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror "$bench_here/burn.c" -o "$W/burn"
	bench_old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	bg_pids=()
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	sysctl -qw kernel.bpf_stats_enabled=1
	TIMEFMT='%U %S %M %e'
}

bench_cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	sysctl -qw kernel.bpf_stats_enabled="$bench_old_stats" || true
}

# profiler_start NAME DIR: starts profiler NAME (baseline: none; ours, perf, bpftrace) for
# DURATION seconds in the background with its files in DIR; sets PROFILER_PID (empty for
# baseline, which sleeps DURATION here).
profiler_start() {
	local name=$1 d=$2
	PROFILER_PID=
	case $name in
	baseline)
		sleep "$DURATION"
		: >"$d/ok"
		return 0
		;;
	ours)
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				"$BIN" capture --server --question cpu --duration "$DURATION" --out "$d/out" \
				>"$d/log" 2>&1 && : >"$d/ok"
		) &
		;;
	perf)
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				perf record -F 99 -a -g -o "$d/perf.data" -- \
				sh -c "sleep $DURATION; date +%s.%N > '$d/sleep_end'" >"$d/log" 2>&1 &&
				date +%s.%N >"$d/record_end" &&
				/usr/bin/time -f "$TIMEFMT" -o "$d/time.1" \
					perf script -i "$d/perf.data" >/dev/null 2>>"$d/log" && : >"$d/ok"
		) &
		;;
	bpftrace)
		# bpftrace's system() takes a format string: stamp the end of sampling from a script
		printf '#!/bin/sh\ndate +%%s.%%N > %s/bt_end\n' "$d" >"$d/stamp.sh"
		chmod +x "$d/stamp.sh"
		(
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
				bpftrace --unsafe -e "profile:hz:99 { @[kstack, ustack, comm] = count(); }
					interval:s:$DURATION { system(\"$d/stamp.sh\"); exit(); }" \
				>"$d/bpftrace.out" 2>"$d/log" && date +%s.%N >"$d/exit_end" && : >"$d/ok"
		) &
		;;
	*)
		echo "bench: unknown profiler $name" >&2
		return 1
		;;
	esac
	PROFILER_PID=$!
}

# profiler_finish NAME DIR: waits for the profiler started last, reading its BPF programs' run
# time meanwhile (report.py watch -> DIR/bpf.json); then perf's sample count (not timed) and
# the bpftrace output compressed.
profiler_finish() {
	local name=$1 d=$2 wpid
	if [ -n "$PROFILER_PID" ]; then
		"$PY" "$bench_here/report.py" watch "$PROFILER_PID" "$d/bpf.json" &
		wpid=$!
		bg_pids+=("$wpid")
		wait "$PROFILER_PID" || true
		wait "$wpid" || true
	fi
	if [ "$name" = perf ] && [ -e "$d/perf.data" ]; then
		perf report -i "$d/perf.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { print $3; exit }' >"$d/samples" || true
		rm -f "$d/perf.data" "$d/perf.data.old"
	fi
	if [ "$name" = bpftrace ]; then gzip -f "$d/bpftrace.out" 2>/dev/null || true; fi
}

# busy_pct: how busy the machine is, in percent of all CPUs over 2 s (/proc/stat). The figures
# mean something only on an otherwise idle machine: the rows say so when it is not.
busy_pct() {
	local a b
	read -ra a </proc/stat
	sleep 2
	read -ra b </proc/stat
	local busy=$(((b[1] + b[2] + b[3] + b[6] + b[7]) - (a[1] + a[2] + a[3] + a[6] + a[7])))
	local all=$((busy + b[4] + b[5] - a[4] - a[5]))
	echo $((all > 0 ? busy * 100 / all : 0))
}
