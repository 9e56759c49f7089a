#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench (the continuous row, issue 18): what continuous profiling costs, side by side in one
# run, under the main bench's fixed workload (bench/burn.c, two processes, one per core), each
# for CONT_DURATION (300) s, in sequence:
#
#   baseline  no profiler
#   ours      $BIN daemon with continuous: true, continuous_hz: 19, continuous_window_seconds:
#             CONT_WINDOW (60). The agent is started, loaded ("daemon ready": its load CPU is
#             reported apart, it is paid once per agent) and takes one warm-up window before
#             the interval; the interval then runs from that window stored to
#             CONT_DURATION / CONT_WINDOW windows later (each window stored is a profile in
#             STORE/profiles/ with "continuous": true). Measured: utime+stime of the agent
#             (/proc/PID/stat) and run_time_ns of its BPF programs (/proc/PID/fdinfo,
#             kernel.bpf_stats_enabled=1), both as deltas over the interval.
#   perf      perf record -F 19 -a -g --switch-output=${CONT_WINDOW}s -- sleep CONT_DURATION,
#             and perf script of each window's file as soon as perf has written it (GNU time:
#             record plus every script).
#   bpftrace  bpftrace -e 'profile:hz:19 { @[kstack, ustack, comm] = count(); }
#                          interval:s:CONT_DURATION { exit(); }' (GNU time, plus its BPF run time)
#
# then (CONT_CAPTURE=1, the default) two requested captures in a row, the agent's API with
# continuous still on (POST /v1/captures {"target": "server", "question": "cpu", "duration": 30},
# 99 Hz; the first may load the agent's capture sampler, the second shows what every later one
# costs): the agent's CPU and BPF run time from the POST to the state "done" (the continuous
# windows' share of those seconds included), against perf record -F 99 -a -g -- sleep 30 +
# perf script.
#
# Results: $OUTPUT/bench/continuous.md (printed too); raw files under
# $OUTPUT/bench/continuous/runs/. See docs/benchmarks.md, "The continuous row".
#
# Env: BIN, OUTPUT (set by make), CONT_DURATION (default 300), CONT_WINDOW (default 60, 5-60),
# CONT_HZ (default 19), CONT_CAPTURE (default 1: also the requested capture; 0 skips it),
# CONT_CAPTURE_DURATION (default 30: 10, 30 or 60).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${CONT_DURATION:-300}
WINDOW=${CONT_WINDOW:-60}
HZ=${CONT_HZ:-19}
CAPTURE=${CONT_CAPTURE:-1}
CAPD=${CONT_CAPTURE_DURATION:-30}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
W=$OUTPUT/bench/continuous
RUNS=$W/runs
STORE=$W/store

log() { printf '  BENCH    %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (BPF, perf -a, kernel.bpf_stats_enabled)"
[ -x "$BIN" ] || die "no binary at $BIN (run: make bench)"
command -v perf >/dev/null || die "perf not installed (bench/run.sh installs it)"
command -v bpftrace >/dev/null || die "bpftrace not installed (bench/run.sh installs it)"
command -v curl >/dev/null || die "curl not installed"
[ -x /usr/bin/time ] || die "GNU time not installed (bench/run.sh installs it)"
case $WINDOW in *[!0-9]* | '') die "CONT_WINDOW must be a whole number" ;; esac
case $DURATION in *[!0-9]* | '') die "CONT_DURATION must be a whole number" ;; esac
{ [ "$WINDOW" -ge 5 ] && [ "$WINDOW" -le 60 ]; } || die "CONT_WINDOW must be 5 to 60 (the agent's range)"
[ "$DURATION" -ge "$WINDOW" ] || die "CONT_DURATION ($DURATION) must be at least CONT_WINDOW ($WINDOW)"
NWIN=$((DURATION / WINDOW))
[ $((NWIN * WINDOW)) -eq "$DURATION" ] ||
	log "CONT_DURATION is not a multiple of CONT_WINDOW: the agent's interval is $NWIN windows"

# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_prepare # a fresh $RUNS, $W/burn, kernel.bpf_stats_enabled on until exit

# --- helpers (the polling ones fork nothing: they run beside the measured processes) ---------

# kill_tree PID: PID's descendants, then PID (SIGTERM).
kill_tree() {
	local p=$1 c k kids=()
	for c in /proc/"$p"/task/*/children; do
		kids=()
		[ -r "$c" ] || continue
		read -ra kids 2>/dev/null <"$c" || true # "PID PID " without a newline
		for k in "${kids[@]}"; do kill_tree "$k"; done
	done
	kill "$p" 2>/dev/null || true
}

AGENT_PID=
cont_cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill_tree "$p"; done
	bg_pids=()
	if [ -n "$AGENT_PID" ] && kill -0 "$AGENT_PID" 2>/dev/null; then
		kill "$AGENT_PID" 2>/dev/null || true
		for p in $(seq 1 100); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$AGENT_PID" 2>/dev/null || true
	fi
	bench_cleanup
}
trap cont_cleanup EXIT

# a file descriptor to time out on: `read -t S -u $tick` sleeps S seconds without a fork
mkfifo "$W/tick.fifo" 2>/dev/null || [ -p "$W/tick.fifo" ]
exec {tick}<>"$W/tick.fifo"
nap() { read -r -t "$1" -u "$tick" _ || true; }

# proc_cpu PID: CPU_TICKS = utime + stime of PID in clock ticks (getconf CLK_TCK).
proc_cpu() {
	local s a
	CPU_TICKS=
	read -r s 2>/dev/null <"/proc/$1/stat" || return 1
	s=${s##*) }
	read -ra a <<<"$s"
	CPU_TICKS=$((a[11] + a[12]))
}

# bpf_fds PID: BPF_FDS = the fds of PID that hold a BPF program (forks a readlink per fd).
bpf_fds() {
	local f l
	BPF_FDS=()
	for f in /proc/"$1"/fd/*; do
		l=$(readlink "$f" 2>/dev/null) || continue
		[[ $l == *bpf-prog* ]] && BPF_FDS+=("${f##*/}")
	done
	return 0
}

# bpf_read PID: BPF_LINES = "prog_id run_time_ns run_cnt" of the programs of BPF_FDS (each id
# once), BPF_NS and BPF_CNT = their run time and runs summed.
bpf_read() {
	local fd k v id t c
	declare -A seen=()
	BPF_LINES=()
	BPF_NS=0
	BPF_CNT=0
	for fd in "${BPF_FDS[@]}"; do
		id='' t=0 c=0
		{ while read -r k v; do
			case $k in
			prog_id:) id=$v ;;
			run_time_ns:) t=$v ;;
			run_cnt:) c=$v ;;
			esac
		done <"/proc/$1/fdinfo/$fd"; } 2>/dev/null || continue
		if [ -z "$id" ] || [ -n "${seen[$id]:-}" ]; then continue; fi
		seen[$id]=1
		BPF_LINES+=("$id $t $c")
		BPF_NS=$((BPF_NS + t))
		BPF_CNT=$((BPF_CNT + c))
	done
}

# nwindows: NWINDOWS = the profiles in the agent's store.
nwindows() {
	local dirs=("$STORE"/profiles/*/)
	NWINDOWS=${#dirs[@]}
	[ -d "${dirs[0]}" ] || NWINDOWS=0
}

# burners DIR SECONDS: two bench/burn.c processes (pids in BURNERS), /proc/stat to DIR/stat.0.
burners() {
	local i
	BURNERS=()
	head -1 /proc/stat >"$1/stat.0"
	for i in 0 1; do
		"$W/burn" "$2" >"$1/burn.$i" &
		BURNERS+=($!)
		bg_pids+=($!)
	done
}
burners_wait() {
	local p
	for p in "${BURNERS[@]}"; do wait "$p" || true; done
	head -1 /proc/stat >"$1/stat.1"
}

# api METHOD PATH [BODY]: the agent's answer on stdout (loopback only)
api() {
	local body=()
	[ $# -lt 3 ] || body=(-H 'Content-Type: application/json' -d "$3")
	curl -sS --max-time 10 -X "$1" -H "Authorization: Bearer $TOKEN" "${body[@]}" \
		"http://127.0.0.1:$PORT$2"
}

# api_poll PATH: the body of the agent's answer to GET PATH in $ANSWER, through bash's /dev/tcp,
# so polling starts no process: curl every 0.25 s was 120 new processes in a 30 s capture, each
# one announced to and named by the agent it measures (a cost of the bench, not of profiling)
api_poll() {
	local fd line
	ANSWER=
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' \
		"$1" "$TOKEN" >&"$fd"
	# the headers, up to the empty line, then the body
	while IFS= read -r -t 10 -u "$fd" line && [ -n "${line%$'\r'}" ]; do :; done
	while IFS= read -r -t 10 -u "$fd" line || [ -n "$line" ]; do ANSWER+=$line$'\n'; done
	exec {fd}>&-
}

# --- the runs ---------------------------------------------------------------------------------

run_baseline() {
	local d=$RUNS/baseline
	mkdir -p "$d"
	log "continuous: baseline, $DURATION s"
	burners "$d" "$DURATION"
	burners_wait "$d"
	: >"$d/ok"
}

# The agent: started, loaded, one warm-up window; then the interval of NWIN windows; then the
# requested capture (CAPTURE=1); then stopped.
run_ours() {
	local d=$RUNS/ours t_start n0 limit now
	mkdir -p "$d"
	rm -rf "$STORE"
	PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	TOKEN=bench-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	printf 'tokens:\n  - {name: bench, token: "%s", role: operator}\n' "$TOKEN" >"$W/tokens.yaml"
	chmod 600 "$W/tokens.yaml"
	cat >"$W/agent.yaml" <<-EOF
		node_name: bench
		listen: 127.0.0.1:$PORT
		store_dir: $STORE
		log_level: info
		tokens_file: $W/tokens.yaml
		continuous: true
		continuous_hz: $HZ
		continuous_window_seconds: $WINDOW
		kubernetes:
		  enabled: false
	EOF
	log "continuous: ours, the agent loading (continuous_hz $HZ, windows of $WINDOW s)"
	t_start=$EPOCHREALTIME
	"$BIN" daemon --config "$W/agent.yaml" </dev/null >"$W/agent.log" 2>&1 &
	AGENT_PID=$!
	# loaded: "daemon ready" and "continuous profiling: the whole server at ..." (the sampler
	# loaded, on the agent's start or on its continuous thread: whichever the binary does)
	limit=$((SECONDS + 180))
	until grep -q 'daemon ready' "$W/agent.log" &&
		grep -q 'continuous profiling: the whole server' "$W/agent.log"; do
		kill -0 "$AGENT_PID" 2>/dev/null || die "the agent died: see $W/agent.log"
		[ "$SECONDS" -lt "$limit" ] || die "the agent not loaded in 180 s: see $W/agent.log"
		! grep -q 'continuous profiling cannot start' "$W/agent.log" ||
			die "the agent could not start continuous profiling: see $W/agent.log"
		nap 0.1
	done
	proc_cpu "$AGENT_PID"
	bpf_fds "$AGENT_PID"
	bpf_read "$AGENT_PID"
	echo "$CPU_TICKS $BPF_NS $(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" >"$d/load"
	# the warm-up window: its CPU is the first naming of every process (cold caches)
	log "continuous: ours, the warm-up window ($WINDOW s)"
	limit=$((SECONDS + WINDOW + 120))
	nwindows
	until [ "$NWINDOWS" -ge 1 ]; do
		kill -0 "$AGENT_PID" 2>/dev/null || die "the agent died: see $W/agent.log"
		[ "$SECONDS" -lt "$limit" ] || die "no window stored in $((WINDOW + 120)) s: see $W/agent.log"
		nap 0.25
		nwindows
	done
	n0=$NWINDOWS
	proc_cpu "$AGENT_PID"
	echo "$CPU_TICKS" >"$d/cpu.warm"
	# the interval: from this window stored to NWIN windows later
	log "continuous: ours, $NWIN windows of $WINDOW s (the interval)"
	bpf_fds "$AGENT_PID"
	burners "$d" "$DURATION"
	proc_cpu "$AGENT_PID"
	bpf_read "$AGENT_PID"
	echo "$EPOCHREALTIME" >"$d/t0"
	echo "$CPU_TICKS" >"$d/cpu.0"
	printf '%s\n' "${BPF_LINES[@]}" >"$d/bpf.0"
	echo "$n0" >"$d/n0"
	limit=$((SECONDS + DURATION + WINDOW + 60))
	: >"$d/trace"
	while :; do
		now=$EPOCHREALTIME
		proc_cpu "$AGENT_PID" || { log "the agent died during the interval"; break; }
		bpf_read "$AGENT_PID"
		nwindows
		echo "$now $CPU_TICKS $BPF_NS $NWINDOWS $BPF_CNT" >>"$d/trace"
		[ "$NWINDOWS" -lt $((n0 + NWIN)) ] || break
		if [ "$SECONDS" -ge "$limit" ]; then
			log "WARNING: only $((NWINDOWS - n0)) of $NWIN windows stored in $((DURATION + WINDOW + 60)) s"
			break
		fi
		nap 0.25
	done
	bpf_fds "$AGENT_PID" # programs loaded since t0, if any
	proc_cpu "$AGENT_PID" || true
	bpf_read "$AGENT_PID"
	echo "$EPOCHREALTIME" >"$d/t1"
	echo "$CPU_TICKS" >"$d/cpu.1"
	printf '%s\n' "${BPF_LINES[@]}" >"$d/bpf.1"
	awk '/^VmHWM/ { print $2 }' "/proc/$AGENT_PID/status" >"$d/rss_kb"
	bpftool prog show -j >"$d/progs.json" 2>/dev/null || true # the programs' names
	api GET /metrics >"$d/metrics.txt" 2>/dev/null || true        # after t1: not in the figures
	burners_wait "$d"
	: >"$d/ok"
	if [ "$CAPTURE" = 1 ]; then
		run_ours_capture 1 # the agent's first capture: it may load the capture sampler
		run_ours_capture 2 # the next one: what every later capture costs
	fi
	# stopped: the rows that follow run alone
	kill "$AGENT_PID"
	for _ in $(seq 1 150); do kill -0 "$AGENT_PID" 2>/dev/null || break; nap 0.2; done
	wait "$AGENT_PID" || log "the agent exited with status $?: see $W/agent.log"
	AGENT_PID=
	cp "$W/agent.log" "$d/agent.log"
}

# run_ours_capture N: requested capture N while continuous profiling runs: the agent's CPU and
# BPF run time from the POST to "done", every program counted (report.py watch keeps the last
# value of a program closed before the end).
run_ours_capture() {
	local d=$RUNS/capture-ours.$1 wpid body state limit
	mkdir -p "$d"
	nap 2
	log "continuous: requested capture $1 of 2, $CAPD s, through the agent's API (continuous on)"
	bpf_fds "$AGENT_PID"
	"$PY" "$here/report.py" watch "$AGENT_PID" "$d/bpf.json" &
	wpid=$!
	bg_pids+=("$wpid")
	nap 1
	burners "$d" $((CAPD + 10))
	limit=$((SECONDS + 120))
	while :; do
		proc_cpu "$AGENT_PID"
		bpf_read "$AGENT_PID"
		echo "$EPOCHREALTIME" >"$d/t0"
		echo "$CPU_TICKS" >"$d/cpu.0"
		printf '%s\n' "${BPF_LINES[@]}" >"$d/bpf.0"
		nwindows
		echo "$NWINDOWS" >"$d/n0"
		body=$(api POST /v1/captures "{\"target\": \"server\", \"question\": \"cpu\", \"duration\": $CAPD}" || true)
		echo "$body" >"$d/post.json"
		case $body in *'"running"'*) break ;; esac
		# another capture holds the machine's lock: try again
		[ "$SECONDS" -lt "$limit" ] || { log "capture refused: $body"; return 0; }
		nap 2
	done
	limit=$((SECONDS + CAPD + 180))
	: >"$d/trace"
	while :; do
		nap 0.25
		proc_cpu "$AGENT_PID" && echo "$EPOCHREALTIME $CPU_TICKS" >>"$d/trace"
		api_poll /v1/captures/current || true
		state=$ANSWER
		case $state in *'"state":"running"'* | *'"state": "running"'*) ;; *) break ;; esac
		[ "$SECONDS" -lt "$limit" ] || { log "the capture did not end in $((CAPD + 180)) s"; break; }
	done
	bpf_fds "$AGENT_PID"
	proc_cpu "$AGENT_PID"
	bpf_read "$AGENT_PID"
	echo "$EPOCHREALTIME" >"$d/t1"
	echo "$CPU_TICKS" >"$d/cpu.1"
	printf '%s\n' "${BPF_LINES[@]}" >"$d/bpf.1"
	nwindows
	echo "$NWINDOWS" >"$d/n1"
	echo "$state" >"$d/state.json"
	kill "$wpid" 2>/dev/null || true
	wait "$wpid" || true
	awk '/^VmHWM/ { print $2 }' "/proc/$AGENT_PID/status" >"$d/rss_kb"
	bpftool prog show -j >"$d/progs.json" 2>/dev/null || true
	burners_wait "$d"
	case $state in *'"done"'*) : >"$d/ok" ;; *) log "capture FAILED: $state" ;; esac
}

# perf record at HZ for DURATION, a file per window, perf script of each as soon as it is written.
run_perf() {
	local d=$RUNS/perf tpid k=0 f line files=() lines alive
	mkdir -p "$d"
	log "continuous: perf record -F $HZ -a -g --switch-output=${WINDOW}s, $DURATION s, perf script per window"
	burners "$d" "$DURATION"
	: >"$d/record.err"
	/usr/bin/time -f "$TIMEFMT" -o "$d/time.record" \
		perf record -F "$HZ" -a -g --switch-output="${WINDOW}s" -o "$d/perf.data" -- \
		sleep "$DURATION" >/dev/null 2>"$d/record.err" &
	tpid=$!
	bg_pids+=("$tpid")
	while :; do
		alive=1
		kill -0 "$tpid" 2>/dev/null || alive=0
		mapfile -t lines <"$d/record.err"
		files=()
		for line in "${lines[@]}"; do
			[[ $line =~ Dump\ (/[^ ]+)\ \] ]] && files+=("${BASH_REMATCH[1]}")
		done
		while [ "$k" -lt "${#files[@]}" ]; do
			f=${files[$k]}
			/usr/bin/time -f "$TIMEFMT" -o "$d/time.script.$k" \
				perf script -i "$f" >/dev/null 2>>"$d/script.err" || true
			k=$((k + 1))
		done
		[ "$alive" = 1 ] || break
		nap 0.5
	done
	wait "$tpid" || true
	burners_wait "$d"
	# not timed: the samples of each window's file
	for f in "${files[@]}"; do
		perf report -i "$f" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }' >>"$d/samples" || true
		rm -f "$f"
	done
	echo "$k" >"$d/nfiles"
	[ "$k" -gt 0 ] && : >"$d/ok"
}

# bpftrace's one-liner at HZ for DURATION: its CPU (GNU time), its start-up CPU (until it prints
# "Attaching 2 probes..."), its BPF run time (report.py watch).
run_bpftrace() {
	local d=$RUNS/bpftrace tpid wpid bt='' limit c line
	mkdir -p "$d"
	log "continuous: bpftrace profile:hz:$HZ, $DURATION s"
	burners "$d" "$DURATION"
	/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
		bpftrace -e "profile:hz:$HZ { @[kstack, ustack, comm] = count(); }
			interval:s:$DURATION { exit(); }" >"$d/bpftrace.out" 2>"$d/log" &
	tpid=$!
	bg_pids+=("$tpid")
	"$PY" "$here/report.py" watch "$tpid" "$d/bpf.json" &
	wpid=$!
	bg_pids+=("$wpid")
	# its start-up ends when it prints "Attaching N probes..." (flushed at once)
	limit=$((SECONDS + 120))
	while kill -0 "$tpid" 2>/dev/null && [ "$SECONDS" -lt "$limit" ]; do
		line=''
		read -r line 2>/dev/null <"$d/bpftrace.out" || true
		if [[ $line == Attaching* ]]; then
			for c in /proc/"$tpid"/task/*/children; do read -r bt _ 2>/dev/null <"$c" || true; done
			[ -n "$bt" ] && proc_cpu "$bt" && echo "$CPU_TICKS" >"$d/load"
			break
		fi
		nap 0.05
	done
	wait "$tpid" && : >"$d/ok"
	wait "$wpid" || true
	burners_wait "$d"
	gzip -f "$d/bpftrace.out" 2>/dev/null || true
}

# The requested capture's perf counterpart: 99 Hz for CAPD s, then perf script.
run_perf_capture() {
	local d=$RUNS/capture-perf
	mkdir -p "$d"
	log "continuous: perf record -F 99 -a -g -- sleep $CAPD + perf script"
	burners "$d" $((CAPD + 10))
	/usr/bin/time -f "$TIMEFMT" -o "$d/time.0" \
		perf record -F 99 -a -g -o "$d/perf.data" -- sleep "$CAPD" >/dev/null 2>"$d/log" &&
		/usr/bin/time -f "$TIMEFMT" -o "$d/time.1" \
			perf script -i "$d/perf.data" >/dev/null 2>>"$d/log" && : >"$d/ok"
	burners_wait "$d"
	perf report -i "$d/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }' >"$d/samples" || true
	rm -f "$d/perf.data" "$d/perf.data.old"
}

idle_busy=$(busy_pct)
read -r load1 load5 _ </proc/loadavg
if [ "$idle_busy" -gt 10 ]; then
	log "WARNING: the machine is ${idle_busy}% busy before the bench starts; figures will be noisy"
fi
start=$(date +%s)
log "continuous: CONT_DURATION=$DURATION s, CONT_WINDOW=$WINDOW s, ${HZ} Hz; about $(((4 * DURATION + WINDOW + 3 * CAPD + 60) / 60)) minutes"
run_baseline
nap 2
run_ours
nap 2
run_perf
nap 2
run_bpftrace
if [ "$CAPTURE" = 1 ]; then
	nap 2
	run_perf_capture
fi
took=$(($(date +%s) - start))

# --- the table --------------------------------------------------------------------------------
{
	echo "## The continuous row: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make bench\` (bench/continuous.sh, CONT_DURATION=$DURATION CONT_WINDOW=$WINDOW" \
		"CONT_HZ=$HZ); machine: $(nproc) CPUs, $(uname -r); took $took s. Machine busy before the" \
		"start: ${idle_busy}% of all CPUs, load average $load1 $load5 (above 10% busy: noisy figures)."
	echo
	"$PY" - "$RUNS" "$DURATION" "$WINDOW" "$HZ" "$CAPD" "$STORE" <<'PY'
import json, os, re, statistics, sys

runs, duration, window, hz, capd, store = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
TCK = os.sysconf("SC_CLK_TCK")


def rd(d, name, conv=float):
    try:
        with open(os.path.join(runs, d, name)) as f:
            return conv(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def gnu_time(d, name):
    try:
        with open(os.path.join(runs, d, name)) as f:
            lines = [l for l in f.read().splitlines() if re.match(r"^[\d.]+ [\d.]+ \d+ [\d.]+$", l)]
        u, s, m, e = lines[-1].split()
        return float(u) + float(s), int(m) / 1024.0, float(e)
    except (OSError, IndexError, ValueError):
        return None


def bpf_lines(d, name):
    out = {}
    try:
        with open(os.path.join(runs, d, name)) as f:
            for l in f:
                p = l.split()
                if len(p) == 3:
                    out[int(p[0])] = (int(p[1]), int(p[2]))
    except (OSError, ValueError):
        pass
    return out


def bpf_json(d):
    try:
        with open(os.path.join(runs, d, "bpf.json")) as f:
            return {int(k): (v["run_time_ns"], v["run_cnt"], v.get("name", ""))
                    for k, v in json.load(f).items()}
    except (OSError, ValueError):
        return {}


def bpf_names(d):
    try:
        with open(os.path.join(runs, d, "progs.json")) as f:
            return {p["id"]: p.get("name", "") for p in json.load(f)}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def bpf_by_name(d):
    """{program name: (seconds, runs)} between bpf.0 and bpf.1 (programs open at both)."""
    a, b, names = bpf_lines(d, "bpf.0"), bpf_lines(d, "bpf.1"), bpf_names(d)
    out = {}
    for i, (t, c) in b.items():
        n = names.get(i, str(i))
        s0, c0 = out.get(n, (0.0, 0))
        out[n] = (s0 + (t - a.get(i, (0, 0))[0]) / 1e9, c0 + c - a.get(i, (0, 0))[1])
    return out


def bpf_delta(d):
    """(seconds, runs) of the BPF programs between bpf.0 and bpf.1 (and bpf.json, the watcher's
    last values, for programs closed before bpf.1 was read)."""
    a, b, w = bpf_lines(d, "bpf.0"), bpf_lines(d, "bpf.1"), bpf_json(d)
    ids = set(b) | set(w)
    ns = cnt = 0
    for i in ids:
        t = max(b.get(i, (0, 0))[0], w.get(i, (0, 0, ""))[0])
        c = max(b.get(i, (0, 0))[1], w.get(i, (0, 0, ""))[1])
        ns += t - a.get(i, (0, 0))[0]
        cnt += c - a.get(i, (0, 0))[1]
    return ns / 1e9, cnt


def burners(d):
    out = []
    for name in sorted(os.listdir(os.path.join(runs, d))):
        if name.startswith("burn."):
            with open(os.path.join(runs, d, name)) as f:
                out.append(dict((k, float(v)) for k, v in
                                re.findall(r"(iters|wall|cpu|rate)=([\d.]+)", f.read())))
    return out


def rates(d):
    bs = burners(d)
    rate = sum(b.get("rate", 0) for b in bs) or None
    cpu = sum(b.get("cpu", 0) for b in bs)
    rate_cpu = sum(b.get("iters", 0) for b in bs) / cpu if cpu else None
    return rate, rate_cpu, cpu


def machine(d):
    try:
        v = []
        for n in ("stat.0", "stat.1"):
            with open(os.path.join(runs, d, n)) as f:
                v.append([int(x) for x in f.read().split()[1:]])
        delta = [b - a for a, b in zip(*v)]
        user, nice, system, idle, iowait, irq, softirq, steal = (delta + [0] * 8)[:8]
        return (user + nice + system + irq + softirq) / TCK, steal / TCK
    except (OSError, ValueError):
        return None, None


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def ok(d):
    return os.path.exists(os.path.join(runs, d, "ok"))


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


R = {}
base_rate, base_rate_cpu, _ = rates("baseline") if os.path.isdir(os.path.join(runs, "baseline")) else (None, None, None)

# ours: the interval's deltas, the windows stored in it
if os.path.isdir(os.path.join(runs, "ours")):
    t0, t1 = rd("ours", "t0"), rd("ours", "t1")
    c0, c1 = rd("ours", "cpu.0", int), rd("ours", "cpu.1", int)
    bpf_s, bpf_cnt = bpf_delta("ours")
    load = None
    try:
        with open(os.path.join(runs, "ours", "load")) as f:
            lt, lns, lwall = f.read().split()
            load = (int(lt) / TCK + int(lns) / 1e9, float(lwall))
    except (OSError, ValueError):
        pass
    wins = []
    pdir = os.path.join(store, "profiles")
    for e in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
        try:
            with open(os.path.join(pdir, e, "meta.json")) as f:
                m = json.load(f)
        except (OSError, ValueError):
            continue
        wins.append(m)
    interval_wins = [m for m in wins if m.get("continuous") and t0 and t1 and
                     t0 * 1e9 <= m.get("created_ns", 0) <= t1 * 1e9 + 1e9]
    cpu = (c1 - c0) / TCK if c0 is not None and c1 is not None else None
    # per window: the agent's CPU between two windows stored (the trace, every 0.25 s)
    per_win = []
    try:
        with open(os.path.join(runs, "ours", "trace")) as f:
            tr = [l.split()[:4] for l in f if len(l.split()) >= 4]
        last = None
        for t, ticks, ns, n in tr:
            if last is None or int(n) != last[3]:
                if last is not None:
                    per_win.append(((int(ticks) - last[1]) / TCK, (int(ns) - last[2]) / 1e9,
                                    float(t) - last[0]))
                last = (float(t), int(ticks), int(ns), int(n))
    except (OSError, ValueError):
        tr = []
    # where the agent's user+sys went: the 3 s before each window stored (drain, naming,
    # writing) against the rest (sampling); the busiest seconds of the rest, with the BPF runs
    # (samples and process execs) around them
    split = None
    try:
        pts = [(float(t), int(c), int(n)) for t, c, _, n in tr]
        runs_at = [(float(l.split()[0]), int(l.split()[4])) for l in
                   open(os.path.join(runs, "ours", "trace")) if len(l.split()) >= 5]
        stored = [pts[i][0] for i in range(1, len(pts)) if pts[i][2] != pts[i - 1][2]]
        at_end = rest = 0
        secs = {}
        for (ta, ca, _), (tb, cb, _) in zip(pts, pts[1:]):
            d = (cb - ca) / TCK
            if any(s_ - 3.0 <= tb <= s_ + 0.3 for s_ in stored):
                at_end += d
            else:
                rest += d
                k = int(tb - pts[0][0])
                secs[k] = secs.get(k, 0.0) + d
        bursts = []
        for k, v in sorted(secs.items(), key=lambda x: -x[1])[:3]:
            if v < 0.05:
                break
            t = pts[0][0] + k
            win = [r for tt, r in runs_at if t - 5 <= tt <= t + 6]
            bursts.append((k, v, (win[-1] - win[0]) if len(win) > 1 else None))
        split = (at_end, rest, bursts)
    except (OSError, ValueError, IndexError):
        pass
    rate, rate_cpu, burn_cpu = rates("ours")
    R["ours"] = dict(load=load, cpu=cpu, bpf=bpf_s, bpf_cnt=bpf_cnt, split=split,
                     total=cpu + bpf_s if cpu is not None else None,
                     interval=(t1 - t0) if t0 and t1 else None,
                     windows=len(interval_wins),
                     samples=sum(m.get("sample_count", 0) for m in interval_wins),
                     rss=(rd("ours", "rss_kb", int) or 0) / 1024 or None, rate=rate,
                     rate_cpu=rate_cpu, ok=ok("ours"), per_win=per_win, wins=interval_wins)

if os.path.isdir(os.path.join(runs, "perf")):
    tr = gnu_time("perf", "time.record")
    scripts = [gnu_time("perf", n) for n in sorted(os.listdir(os.path.join(runs, "perf")))
               if n.startswith("time.script.")]
    scripts = [s for s in scripts if s]
    cpu = (tr[0] + sum(s[0] for s in scripts)) if tr else None
    samples = None
    try:
        with open(os.path.join(runs, "perf", "samples")) as f:
            samples = sum(int(x) for x in f.read().split())
    except (OSError, ValueError):
        pass
    rate, rate_cpu, _ = rates("perf")
    R["perf"] = dict(load=None, cpu=cpu, bpf=None, total=cpu, interval=tr and tr[2],
                     windows=len(scripts), samples=samples,
                     rss=max([tr[1]] + [s[1] for s in scripts]) if tr else None,
                     rate=rate, rate_cpu=rate_cpu, ok=ok("perf"),
                     script_cpu=sum(s[0] for s in scripts), record_cpu=tr and tr[0])

if os.path.isdir(os.path.join(runs, "bpftrace")):
    t = gnu_time("bpftrace", "time.0")
    bj = bpf_json("bpftrace")
    bpf_s = sum(v[0] for v in bj.values()) / 1e9
    prof_runs = max([v[1] for v in bj.values()] or [0])
    lt = rd("bpftrace", "load", int)
    load = lt / TCK if lt is not None else None
    cpu = (t[0] - (load or 0)) if t else None
    rate, rate_cpu, _ = rates("bpftrace")
    R["bpftrace"] = dict(load=(load, None), cpu=cpu, bpf=bpf_s, total=cpu + bpf_s if cpu is not None else None,
                         interval=t and t[2], windows=1 if ok("bpftrace") else 0,
                         samples=prof_runs or None, rss=t and t[1], rate=rate, rate_cpu=rate_cpu,
                         ok=ok("bpftrace"), full=t and t[0] + bpf_s)

lines = []
lines.append(f"Continuous whole-server CPU profiling at {hz} Hz for {duration:g} s (windows of {window} s), "
             f"2 burn processes (one per core), one run each.")
lines.append("")
ours = R.get("ours", {})
rows = [["none (baseline)"] + ["-"] * 10 + [f"0.0 (rate {fmt(base_rate and base_rate / 1e6, '.1f')} M it/s)", "-"]]
labels = {"ours": f"slideops-profiler daemon, continuous {hz} Hz",
          "perf": f"perf record -F {hz} -a -g --switch-output={window}s + perf script per window",
          "bpftrace": f"bpftrace profile:hz:{hz} kstack,ustack,comm"}
for name in ("ours", "perf", "bpftrace"):
    m = R.get(name)
    if not m:
        continue
    share = (m["total"] / m["interval"] * 100) if m["total"] is not None and m["interval"] else None
    ratio = (ours.get("total") / m["total"]) if ours.get("total") is not None and m["total"] else None
    load = m["load"] and m["load"][0]
    slow = (1 - m["rate"] / base_rate) * 100 if base_rate and m["rate"] else None
    slow_cpu = (1 - m["rate_cpu"] / base_rate_cpu) * 100 if base_rate_cpu and m["rate_cpu"] else None
    rows.append([labels[name] + ("" if m["ok"] else " (FAILED)"),
                 fmt(load, ".3f") if name != "perf" else "n/a (in its CPU s)",
                 fmt(m["interval"], ".1f"), fmt(m["cpu"], ".3f"),
                 "n/a (in-kernel, not measured)" if name == "perf" else fmt(m["bpf"], ".3f"),
                 fmt(m["total"], ".3f"), "-" if name == "ours" else fmt(ratio, ".3f"),
                 fmt(share, ".3f"), str(m["windows"]), fmt(m["samples"], ".0f"),
                 fmt(m["rss"], ".1f"), fmt(slow, ".1f"), fmt(slow_cpu, ".1f")])
lines += table(["profiler", "load CPU s (apart)", "interval s", "CPU s (user+sys)", "BPF prog CPU s",
                "total CPU s", "ours / this", "% of one CPU", "windows stored", "samples",
                "peak RSS MB", "workload slowdown %", "slowdown per CPU s %"], rows)
lines.append("")
lines.append("load CPU s: paid once, before the interval and not in total CPU s: the agent's CPU until "
             "\"daemon ready\" and its continuous sampler loaded (opening, verifying and attaching it, the first "
             "scan of /proc) "
             "and bpftrace's until it printed \"Attaching 2 probes...\" (its LLVM compile, loading); perf's start-up is "
             "in its CPU s. total CPU s = CPU s + BPF prog CPU s over the interval; % of one CPU = "
             "total CPU s / interval s. The agent's interval runs from a window stored to "
             f"{int(duration // window)} windows later; perf's and bpftrace's are their wall time.")
if ours:
    lines.append("")
    det = []
    if ours.get("load"):
        det.append(f"load: {ours['load'][0]:.3f} CPU s in {ours['load'][1]:.1f} s to \"daemon ready\" and "
                   f"the sampler loaded")
    warm = rd("ours", "cpu.warm", int)
    if warm is not None and ours.get("load"):
        det.append(f"the warm-up window (before the interval, every process named the first time): "
                   f"{warm / TCK - ours['load'][0]:.3f} CPU s")
    pw = ours.get("per_win") or []
    if pw:
        cpus = [p[0] + p[1] for p in pw]
        det.append(f"per window stored in the interval (agent CPU + BPF between two windows stored, "
                   f"{len(pw)} windows): min {min(cpus):.3f}, median {statistics.median(cpus):.3f}, "
                   f"max {max(cpus):.3f} s; BPF {statistics.median([p[1] for p in pw]):.4f} s a window "
                   f"(median); window period {statistics.median([p[2] for p in pw]):.2f} s (median)")
    if ours.get("bpf_cnt"):
        byname = bpf_by_name("ours")
        det.append(f"BPF runs {ours['bpf_cnt']}: " + "; ".join(
            f"{n} {c} runs, {sec:.4f} s, {sec * 1e9 / c:.0f} ns a run" if c else f"{n} 0 runs"
            for n, (sec, c) in sorted(byname.items())))
    if ours.get("wins"):
        det.append("samples per window: " + ", ".join(str(m.get("sample_count")) for m in ours["wins"]))
    p = R.get("perf")
    if p:
        det.append(f"perf: record {fmt(p['record_cpu'], '.3f')} CPU s, perf script of its "
                   f"{p['windows']} files {fmt(p['script_cpu'], '.3f')} CPU s")
    b = R.get("bpftrace")
    if b:
        det.append(f"bpftrace: {fmt(b['full'], '.3f')} CPU s with its start-up "
                   f"({fmt(b['load'][0], '.3f')} s); one map printed at the end, not one a window")
    mrows = []
    for name in ("baseline", "ours", "perf", "bpftrace"):
        if os.path.isdir(os.path.join(runs, name)):
            busy, steal = machine(name)
            _, _, bc = rates(name)
            mrows.append(f"{name} {fmt(busy, '.1f')} busy / {fmt(bc, '.1f')} burners / {fmt(steal, '.1f')} steal")
    det.append("machine CPU s over each run (/proc/stat): " + "; ".join(mrows))
    if ours.get("split"):
        at_end, rest, bursts = ours["split"]
        det.append(f"the agent's user+sys over the interval: {at_end:.3f} s in the 3 s before each window "
                   f"stored (drain, naming, writing), {rest:.3f} s while sampling"
                   + ("; its busiest seconds while sampling: " + ", ".join(
                       f"{v:.2f} s at +{k} s ({'n/a' if r is None else r} BPF runs in the 11 s around it, "
                       f"{'n/a' if r is None else max(0, r - 11 * 2 * hz)} beyond the samples: process execs)"
                       for k, v, r in bursts) if bursts else ""))
    try:
        with open(os.path.join(runs, "ours", "agent.log")) as f:
            lg = f.read()
        det.append(f"agent log: {lg.count('not stored')} window(s) not stored, "
                   f"{lg.count('level=warn')} warning(s), {lg.count('level=error')} error(s)")
    except OSError:
        pass
    try:
        with open(os.path.join(runs, "ours", "metrics.txt")) as f:
            mt = [l.strip() for l in f if l.startswith("slideops_profiler_continuous")]
        if mt:
            det.append("/metrics after the interval: " + "; ".join(mt))
    except OSError:
        pass
    lines += ["- " + x for x in det]

def cap_phases(d):
    """The agent's user+sys in the first 3 s after the POST, the last 3 s before "done", and
    between (from the trace, every 0.25 s)."""
    try:
        with open(os.path.join(runs, d, "trace")) as f:
            pts = [(float(l.split()[0]), int(l.split()[1])) for l in f if len(l.split()) == 2]
        t0, c0 = rd(d, "t0"), rd(d, "cpu.0", int)
        t1, c1 = rd(d, "t1"), rd(d, "cpu.1", int)
        pts = [(t0, c0)] + pts + [(t1, c1)]
        first = last = mid = 0
        for (ta, ca), (tb, cb) in zip(pts, pts[1:]):
            v = (cb - ca) / TCK
            if tb <= t0 + 3:
                first += v
            elif ta >= t1 - 3:
                last += v
            else:
                mid += v
        return first, mid, last
    except (OSError, ValueError, IndexError, TypeError):
        return None


# the requested captures
cont_rate = (ours["total"] / ours["interval"]) if ours.get("total") is not None and ours.get("interval") else None
caps = []
for n in (1, 2):
    d = f"capture-ours.{n}"
    if not os.path.isdir(os.path.join(runs, d)):
        continue
    t0, t1 = rd(d, "t0"), rd(d, "t1")
    c0, c1 = rd(d, "cpu.0", int), rd(d, "cpu.1", int)
    bpf_s, bpf_cnt = bpf_delta(d)
    cpu = (c1 - c0) / TCK if c0 is not None and c1 is not None else None
    samples, ttr = None, None
    try:
        with open(os.path.join(runs, d, "state.json")) as f:
            st = json.load(f)
        with open(os.path.join(store, "profiles", st.get("profile_id", st.get("id", "")), "summary.json")) as f:
            sm = json.load(f)
        samples, ttr = sm.get("sample_count"), sm.get("time_to_result_seconds")
    except (OSError, ValueError, TypeError):
        pass
    # the programs loaded for this capture (absent from bpf.0): a load
    loaded = sorted(set(bpf_lines(d, "bpf.1")) - set(bpf_lines(d, "bpf.0")))
    names = bpf_names(d)
    n0, n1 = rd(d, "n0", int), rd(d, "n1", int)
    wall = t1 - t0 if t0 and t1 else None
    caps.append(dict(n=n, cpu=cpu, bpf=bpf_s, total=cpu + bpf_s if cpu is not None else None,
                     wall=wall, samples=samples, ttr=ttr, ok=ok(d),
                     rss=(rd(d, "rss_kb", int) or 0) / 1024 or None,
                     cont=cont_rate * wall if cont_rate is not None and wall else None,
                     windows=(n1 - n0 - 1) if n0 is not None and n1 is not None else None,
                     loaded=[names.get(i, str(i)) for i in loaded], phases=cap_phases(d)))
pcap = None
if os.path.isdir(os.path.join(runs, "capture-perf")):
    a, b = gnu_time("capture-perf", "time.0"), gnu_time("capture-perf", "time.1")
    pcap = dict(total=a[0] + b[0] if a and b else None, wall=a[2] + b[2] if a and b else None,
                rss=max(a[1], b[1]) if a and b else None, samples=rd("capture-perf", "samples"),
                ok=ok("capture-perf"))
for c in caps:
    c["ratio"] = c["total"] / pcap["total"] if pcap and pcap["total"] and c["total"] is not None else None
    c["own"] = c["total"] - c["cont"] if c["cont"] is not None and c["total"] is not None else None
if caps or pcap:
    lines.append("")
    lines.append(f"Requested {capd} s whole-server cpu captures (99 Hz) through the agent's API while "
                 "continuous profiling runs, one after the other, against perf:")
    lines.append("")
    rows = []
    for c in caps:
        what = ("first capture of the agent" if c["n"] == 1 else "second capture") + \
            (f" (loaded: {', '.join(c['loaded'])})" if c["loaded"] else " (no BPF program loaded)")
        rows.append([f"slideops-profiler, {what}" + ("" if c["ok"] else " (FAILED)"),
                     fmt(c["cpu"], ".3f"), fmt(c["bpf"], ".3f"), fmt(c["total"], ".3f"),
                     fmt(c["cont"], ".3f"), fmt(c["own"], ".3f"), fmt(c["ratio"], ".3f"),
                     fmt(c["wall"], ".1f"), fmt(c["samples"], ".0f"), fmt(c["ttr"], ".3f"),
                     fmt(c["rss"], ".1f")])
    if pcap:
        rows.append([f"perf record -F 99 -a -g -- sleep {capd} + perf script" + ("" if pcap["ok"] else " (FAILED)"),
                     fmt(pcap["total"], ".3f"), "n/a", fmt(pcap["total"], ".3f"), "-", "-", "1.000",
                     fmt(pcap["wall"], ".1f"), fmt(pcap["samples"], ".0f"), "-", fmt(pcap["rss"], ".1f")])
    lines += table(["run", "CPU s (user+sys)", "BPF prog CPU s", "total CPU s",
                    "of which continuous (est.)", "without it", "ratio to perf", "wall s", "samples",
                    "time-to-result s", "peak RSS MB"], rows)
    for c in caps:
        if c["phases"]:
            f_, m_, l_ = c["phases"]
            lines.append("")
            lines.append(f"- capture {c['n']}: the agent's user+sys {f_:.3f} s in the first 3 s after the POST "
                         f"(loading or attaching the sampler), {m_:.3f} s between, {l_:.3f} s in the last 3 s "
                         f"before \"done\" (naming, writing)")
    lines.append("")
    lines.append("Ours: the agent's whole CPU (utime+stime) and the run time of all its BPF programs from "
                 "the POST to the state \"done\", so the continuous windows' share of those seconds is "
                 "included; \"of which continuous\" estimates it at the interval's rate above, \"without "
                 "it\" is the rest. The ratio to perf is on the whole figure. perf: record plus script "
                 "(GNU time); wall s is the POST to \"done\" for ours, record plus script for perf.")

lines.append("")
lines.append("Targets (issue 18):")
lines.append("")


def verdict(v, limit):
    return "n/a" if v is None else ("met" if v <= limit else "NOT met")


p = R.get("perf")
r = ours.get("total") / p["total"] if ours.get("total") is not None and p and p["total"] else None
lines.append(f"- continuous at most a tenth of perf's CPU: {fmt(ours.get('total'), '.3f')} s against "
             f"{fmt(p and p['total'], '.3f')} s, ratio {fmt(r, '.3f')} -> {verdict(r, 0.1)}")
share = ours["total"] / ours["interval"] * 100 if ours.get("total") is not None and ours.get("interval") else None
lines.append(f"- continuous at most 0.5% of one CPU at {hz} Hz: {fmt(share, '.3f')}% -> {verdict(share, 0.5)}")
for c in caps:
    lines.append(f"- a requested capture at most 0.2 of perf's CPU ({'first' if c['n'] == 1 else 'second'} "
                 f"capture): ratio {fmt(c['ratio'], '.3f')} -> {verdict(c['ratio'], 0.2)} (without the "
                 f"continuous share: {fmt(c['own'] / pcap['total'] if c['own'] is not None and pcap and pcap['total'] else None, '.3f')})")
# like for like: perf's figure has no in-kernel sampling in it (its callchain walks run in the
# sampled tasks' interrupts, uncounted), so user space against user space as well
lines.append("")
us = ours.get("cpu") / p["cpu"] if ours.get("cpu") is not None and p and p["cpu"] else None
lines.append(f"For reference, user space against user space (perf's in-kernel sampling is in no figure, "
             f"our BPF program left out here too): continuous {fmt(ours.get('cpu'), '.3f')} s against "
             f"{fmt(p and p['cpu'], '.3f')} s, ratio {fmt(us, '.3f')}" + "".join(
                 f"; {'first' if c['n'] == 1 else 'second'} capture "
                 f"{fmt(c['cpu'] / pcap['total'] if c['cpu'] is not None and pcap and pcap['total'] else None, '.3f')}"
                 for c in caps))
print("\n".join(lines))
PY
} >"$OUTPUT/bench/continuous.md"
cat "$OUTPUT/bench/continuous.md"
