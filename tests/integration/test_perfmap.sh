#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Names from the perf map a JIT writes itself (issue 14): tests/workloads/jitmap.c copies a loop
# into anonymous executable memory and names it in /tmp/perf-<pid>.map, the pid as it sees it.
# It runs as pid 1 of its own pid, mount and net namespaces (ns_container_run: a busybox root
# of its own with a private /tmp), so its map is /tmp/perf-1.map inside that root only.
#   - capture --pid P --question cpu: jitted_hot_loop is named in >= 80% of its samples
#   - the map replaced by hostile files, each capture on time, exit 0, naming nothing from it
#     and reading nothing outside the container: a link to /etc/shadow, links (absolute and
#     relative) to a map on the host that names the loop HOST_DECOY, a FIFO, and a 200 MiB
#     sparse file that starts with the good lines
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare mkfifo truncate
need_bin

JIT=$(workload jitmap)
"$JIT" 0 >/dev/null 2>&1
[ $? -eq 77 ] && skip "jitmap has no JIT code for $(uname -m)"

make_busybox_rootfs "$TMP/root" "$JIT" || exit 1
cg=$(cg_make_unit jitmap.service) || exit 1
pid=$(ns_container_run "$TMP/root" "$cg" /usr/local/bin/jitmap 60) || exit 1
need_own_ns "$pid" "jitmap" pid mnt net
CTMP=/proc/$pid/root/tmp
wait_for "grep -q jitted_hot_loop $CTMP/perf-1.map 2>/dev/null" 10 || fail "jitmap wrote no /tmp/perf-1.map"
[ -e "/tmp/perf-$pid.map" ] && fail "/tmp/perf-$pid.map exists on the host: the map must be the container's"
cp "$CTMP/perf-1.map" "$TMP/good.map"
log "jitmap pid $pid (1 in its namespace): $(head -1 "$TMP/good.map")"

# counts DIR PATTERN: "MATCHING TOTAL" samples of DIR/profile.collapsed ("stack count" lines).
counts()
{
	awk -v pat="$2" '{ n = $NF; total += n; if (index($0, pat)) hot += n }
		END { print hot + 0, total + 0 }' "$1/profile.collapsed"
}

# capture NAME DURATION: one capture of the workload into $TMP/NAME, on time, exit 0.
capture()
{
	profiler_run "$1" $(($2 + 12)) capture --pid "$pid" --question cpu --duration "$2" \
		--out "$TMP/$1"
	[ -s "$TMP/$1/profile.collapsed" ] || fail "$1: no profile.collapsed"
	kill -0 "$pid" 2>/dev/null || fail "jitmap died during capture $1"
}

# --- named from the map -------------------------------------------------------------------
capture good 3
read -r hot total <<<"$(counts "$TMP/good" jitted_hot_loop)"
pct=$((total > 0 ? hot * 100 / total : 0))
log "good: jitted_hot_loop in $hot of $total samples ($pct%)"
if [ "$total" -lt 50 ] || [ "$pct" -lt 80 ]; then
	sort -k2 -n -r "$TMP/good/profile.collapsed" | head -3 >&2
	fail "jitted_hot_loop in $pct% of $total samples (want >= 80% of >= 50)"
fi
grep -q 'unrelated stub' "$TMP/good/profile.collapsed" && fail "the stub that never runs was sampled"

# --- hostile maps -------------------------------------------------------------------------
# A map on the host naming the loop: read only if a link led out of the container.
sed 's/jitted_hot_loop/HOST_DECOY/; s/unrelated stub/HOST_DECOY stub/' "$TMP/good.map" >"$TMP/decoy.map"
hostile()
{
	local name=$1 hot total
	capture "$name" 2
	read -r hot total <<<"$(counts "$TMP/$name" jitted_hot_loop)"
	[ "$total" -gt 0 ] || fail "$name: no samples"
	[ "$hot" -eq 0 ] || fail "$name: jitted_hot_loop named in $hot of $total samples"
	grep -q HOST_DECOY "$TMP/$name/profile.collapsed" && fail "$name: read the host's decoy map"
	log "$name: $total samples, none named from the map"
}

rm -f "$CTMP/perf-1.map"
ln -s /etc/shadow "$CTMP/perf-1.map"
hostile link_shadow
rm -f "$CTMP/perf-1.map"
ln -s "$TMP/decoy.map" "$CTMP/perf-1.map"
hostile link_abs
rm -f "$CTMP/perf-1.map"
ln -s "../../../../../../../../../..$TMP/decoy.map" "$CTMP/perf-1.map"
hostile link_rel
rm -f "$CTMP/perf-1.map"
mkfifo "$CTMP/perf-1.map"
hostile fifo
rm -f "$CTMP/perf-1.map"
cp "$TMP/good.map" "$CTMP/perf-1.map"
truncate -s 200M "$CTMP/perf-1.map"
hostile sparse
rm -f "$CTMP/perf-1.map"
exit 0
