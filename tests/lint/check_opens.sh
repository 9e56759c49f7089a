#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Issue 12: every file a process controls (under /proc/PID/root, or behind
# /proc/PID/map_files) is opened by base/safe_open.c and nowhere else: inside the process's
# root, never a FIFO, socket or device, size capped, non-blocking. Outside base/ this fails on
# - open_in_root(), openat2 and RESOLVE_* (resolving a path inside a root by hand), and
# - a string literal naming "/root" or "map_files" (building such a path to open it).
# Comments are skipped. Prints each offending line as FILE:LINE: ... and exits 1 if there is
# one. Run by `make test` (make check-layers).
set -u
cd "${CHECK_OPENS_TREE:-$(dirname "$0")/../..}"

DIRS="bpf cgroups symbols profile runtimes daemon"
bad=0

# FILE:LINE:text of every line of the C sources under $DIRS (bpf/vmlinux.h aside) that
# matches $1 once its comments are removed.
scan() {
	find $DIRS -name '*.[ch]' ! -name vmlinux.h -print0 | xargs -0 grep -nE "$1" /dev/null |
		while IFS= read -r hit; do
			loc=${hit%%:[0-9]*}
			rest=${hit#"$loc":}
			num=${rest%%:*}
			code=$(printf '%s\n' "${rest#*:}" | sed -E 's|/\*.*\*/||g; s|/\*.*$||; s|//.*$||; s|^[[:space:]]*\*.*$||')
			printf '%s\n' "$code" | grep -qE "$1" && printf '%s:%s: %s\n' "$loc" "$num" "$code"
		done
}

OPENERS='\<open_in_root[[:space:]]*\(|\<openat2\>|SYS_openat2|\<RESOLVE_(IN_ROOT|BENEATH|NO_MAGICLINKS|NO_SYMLINKS|NO_XDEV|CACHED)\>'
PATHS='"[^"]*(/root\>|map_files)[^"]*"'

while IFS= read -r line; do
	[ -n "$line" ] || continue
	echo "$line  <- open a process's file with base/safe_open.h" >&2
	bad=1
done < <(scan "$OPENERS"; scan "$PATHS")

exit $bad
