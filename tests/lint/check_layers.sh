#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The layer rule of docs/architecture.md, checked: every `#include "DIR/file.h"` in a source
# folder must name a folder that this folder may use. Prints each offending line as
# FILE:LINE: ... and exits 1 if there is one. Run by `make test` (make check-layers).
#
#   base <- bpf headers, cgroups, symbols, profile <- runtimes <- daemon/collectors
#        <- daemon/capture <- daemon (main, cli, config) and daemon/agent
set -u
cd "$(dirname "$0")/../.."

LOW="base"
LIBS="$LOW bpf cgroups symbols profile"
RUNTIMES="$LIBS runtimes runtimes/go runtimes/python runtimes/jvm runtimes/node runtimes/ruby"
COLLECTORS="$RUNTIMES daemon/collectors"
CAPTURE="$COLLECTORS daemon/capture"

# allowed FOLDER: the folders its files may include from (its own is always allowed).
allowed() {
	case $1 in
	base) echo "" ;;
	bpf) echo "" ;;
	cgroups) echo "$LOW" ;;
	symbols) echo "$LOW bpf" ;;
	profile) echo "$LOW" ;;
	runtimes | runtimes/*) echo "$RUNTIMES" ;;
	daemon/collectors) echo "$COLLECTORS" ;;
	daemon/capture) echo "$CAPTURE" ;;
	# the agent may use the config (daemon/config.h), never the CLI
	daemon/agent) echo "$CAPTURE daemon:config.h" ;;
	daemon) echo "$CAPTURE daemon/agent" ;;
	*) echo "?" ;;
	esac
}

bad=0
declare -A allowed_of	# allowed() of each folder, computed once
mapfile -t files < <(git ls-files -co --exclude-standard -- base bpf cgroups symbols profile runtimes \
	daemon | grep '\.[ch]$' | grep -v '^bpf/vmlinux\.h$')
for f in "${files[@]}"; do
	dir=${f%/*}
	[ -n "${allowed_of[$dir]+x}" ] || allowed_of[$dir]=$(allowed "$dir")
	if [ "${allowed_of[$dir]}" = "?" ]; then
		echo "$f: a source folder that docs/architecture.md does not place" >&2
		bad=1
	fi
done
# one grep for every file: FILE:LINE:#include "DIR/file.h"
while IFS=: read -r f line inc; do
	dir=${f%/*}
	ok=${allowed_of[$dir]}
	[ "$ok" = "?" ] && continue
	inc=${inc#*\"}
	inc=${inc%%\"*}
	case $inc in */*) ;; *) continue ;; esac	# same folder, skeletons, vmlinux.h
	idir=${inc%/*}
	[ "$idir" = "$dir" ] && continue
	hit=0
	for a in $ok; do
		case $a in
		*:*) [ "$idir" = "${a%%:*}" ] && [ "${inc##*/}" = "${a#*:}" ] && hit=1 ;;
		*) [ "$idir" = "$a" ] && hit=1 ;;
		esac
	done
	if [ $hit -eq 0 ]; then
		echo "$f:$line: #include \"$inc\": $dir/ may not include $idir/ (docs/architecture.md)" >&2
		bad=1
	fi
done < <(grep -n -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${files[@]}")
if [ $bad -eq 0 ]; then
	echo "  LAYERS   every include follows docs/architecture.md"
fi
exit $bad
