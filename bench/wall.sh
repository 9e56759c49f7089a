#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench (part 2): the cost of `wall` under heavy context switching. A two-thread ping-pong
# over pipes (bench/pingpong.c, >100k switches/s here) is profiled for its off-CPU time, in one
# run and in sequence, by:
#
#   baseline  nothing
#   ours      $BIN capture --pid P --question wall --duration $DURATION --out DIR
#   bpftrace  bpftrace -e 'tracepoint:sched:sched_switch /pid == P/ { @[ustack, kstack] = count(); }'
#             (a stack at every switch-out of the target, as our switch-out does)
#
# For each: the profiler's CPU seconds (user+sys, GNU time) plus its BPF programs' run time
# (kernel.bpf_stats_enabled), the number of program runs, the cost per run, and the ping-pong's
# round trips per second against the baseline. Results: $OUTPUT/bench/wall.md (printed too).
# Env: BIN, OUTPUT (set by make), DURATION (default 10).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${WALL_DURATION:-10}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$OUTPUT/bench/wall
log() { printf '  BENCH    %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || { apt-get update -qq && apt-get install -y -qq bpftrace >/dev/null; }
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
rm -rf "$W"
mkdir -p "$W"
cc -O2 -g -Wall -Wextra -Werror "$here/pingpong.c" -o "$W/pingpong" -lpthread

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats" || true' EXIT
sysctl -qw kernel.bpf_stats_enabled=1

# run NAME: the ping-pong for DURATION+2 s, the profiler for DURATION s inside it
run() {
	local name=$1 d=$W/$1 wl pid wpid
	mkdir -p "$d"
	"$W/pingpong" $((DURATION + 2)) >"$d/rate" &
	wl=$!
	sleep 1
	case $name in
	baseline)
		sleep "$DURATION"
		;;
	ours)
		/usr/bin/time -f '%U %S %M %e' -o "$d/time" "$BIN" capture --pid "$wl" \
			--question wall --duration "$DURATION" --out "$d/out" >"$d/log" 2>&1 &
		pid=$!
		;;
	bpftrace)
		/usr/bin/time -f '%U %S %M %e' -o "$d/time" bpftrace -e \
			"tracepoint:sched:sched_switch /pid == $wl/ { @[ustack, kstack] = count(); }
			 interval:s:$DURATION { exit(); }" >"$d/out.txt" 2>"$d/log" &
		pid=$!
		;;
	esac
	if [ "$name" != baseline ]; then
		"$PY" "$here/report.py" watch "$pid" "$d/bpf.json" &
		wpid=$!
		wait "$pid" || log "$name failed: see $d/log"
		wait "$wpid" || true
	fi
	wait "$wl" || true
}

for p in baseline ours bpftrace; do
	log "wall: $p"
	run "$p"
done

"$PY" - "$W" "$DURATION" <<'PY' | tee "$W/../wall.md"
import json, os, sys
w, dur = sys.argv[1], float(sys.argv[2])
base = float(open(f"{w}/baseline/rate").read() or 0)
print(f"Wall under heavy context switching: ping-pong at {base:,.0f} round trips/s "
      f"(baseline), {dur:.0f} s capture of its process\n")
print("| profiler | CPU s (user+sys) | BPF prog s | BPF runs | µs per run | total CPU s | "
      "workload slowdown % | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name in ("ours", "bpftrace"):
    d = f"{w}/{name}"
    try:
        u, s, m, e = open(f"{d}/time").read().split()[-4:]
        cpu = float(u) + float(s)
        progs = json.load(open(f"{d}/bpf.json"))
        ns = sum(p["run_time_ns"] for p in progs.values())
        cnt = sum(p["run_cnt"] for p in progs.values())
        rate = float(open(f"{d}/rate").read() or 0)
    except (OSError, ValueError):
        print(f"| {name} | failed | | | | | | |")
        continue
    slow = 100.0 * (base - rate) / base if base else 0
    print(f"| {name} | {cpu:.3f} | {ns / 1e9:.3f} | {cnt:,} | {ns / 1e3 / cnt if cnt else 0:.2f} "
          f"| {cpu + ns / 1e9:.3f} | {slow:.1f} | {int(m) / 1024:.1f} |")
PY
