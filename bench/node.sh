#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# make bench (the Node.js row, issue 16): what a capture costs a Node.js program. One CPU-bound
# Node.js process (tests/workloads/node/app.js cpu, the machine's node) counts its loops; for
# NODE_DURATION (10) s it runs under, in sequence:
#
#   baseline   no profiler
#   server     $BIN capture --server --question cpu: eBPF only (its JIT frames unnamed)
#   inspector  $BIN capture --pid PID --question cpu: eBPF plus V8's CPU profiler through the
#              inspector (opened for the capture, closed after)
#   perf       perf record -F 99 -a -g + perf script
#
# For each: the profiler's CPU seconds (GNU time), the program's loops per second over the
# window against the baseline. Results: $OUTPUT/bench/node/node.md (printed too).
# Env: BIN, OUTPUT (set by make), NODE_DURATION (default 10).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
OUTPUT=${OUTPUT:-$repo/.output}
BIN=${BIN:-$OUTPUT/slideops-profiler}
DURATION=${NODE_DURATION:-10}
W=$OUTPUT/bench/node
mkdir -p "$W"

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
command -v node >/dev/null || die "no node"
command -v perf >/dev/null || die "perf not installed (bench/run.sh installs it)"

# the loop counter: outerCaller() calls per second, printed each second
cat >"$W/count.js" <<'JS'
const app = require(process.argv[2]);
let n = 0, last = Date.now();
function tick() {
	const end = Date.now() + 50;
	while (Date.now() < end) { app.outerCaller(1); n++; }
	const now = Date.now();
	if (now - last >= 1000) { console.log(now, n); n = 0; last = now; }
	setImmediate(tick);
}
tick();
JS
sed 's/^if (mode === .mem.)$/module.exports = { outerCaller };\nif (require.main !== module) {} else if (mode === "mem")/' \
	"$repo/tests/workloads/node/app.js" >"$W/app.js"

# rate FILE T0 T1: loops per second between epoch ms T0 and T1
rate() { awk -v a="$2" -v b="$3" '$1 > a && $1 <= b { s += $2; k++ } END { printf "%.1f", k ? s / k : 0 }' "$1"; }

echo "| run | profiler CPU s | loops/s | slowdown % |" >"$W/node.md"
echo "|---|---|---|---|" >>"$W/node.md"
base=
for mode in baseline server inspector perf; do
	node "$W/count.js" "$W/app.js" >"$W/$mode.rate" &
	pid=$!
	sleep 3
	t0=$(date +%s%3N)
	case $mode in
	baseline) sleep "$DURATION"; cpu=0 ;;
	server | inspector)
		target=--server
		[ "$mode" = inspector ] && target="--pid $pid"
		# shellcheck disable=SC2086
		/usr/bin/time -f '%U %S' -o "$W/$mode.time" "$BIN" capture $target --question cpu \
			--duration "$DURATION" --out "$W/$mode" >/dev/null 2>&1
		cpu=$(awk '{ print $1 + $2 }' "$W/$mode.time") ;;
	perf)
		/usr/bin/time -f '%U %S' -o "$W/perf.time" sh -c "perf record -q -F 99 -a -g -o '$W/perf.data' -- sleep $DURATION && perf script -i '$W/perf.data' >/dev/null" 2>/dev/null
		cpu=$(awk '{ print $1 + $2 }' "$W/perf.time") ;;
	esac
	t1=$(date +%s%3N)
	kill "$pid"; wait "$pid" 2>/dev/null || true
	r=$(rate "$W/$mode.rate" "$t0" "$t1")
	[ -z "$base" ] && base=$r
	slow=$(awk -v b="$base" -v r="$r" 'BEGIN { printf "%.1f", (b > 0 ? 100 * (b - r) / b : 0) }')
	echo "| $mode | $cpu | $r | $slow |" >>"$W/node.md"
done
cat "$W/node.md"
