#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# CPython frames named from eBPF (issue 13), for every CPython 3 on the machine: a CPU-bound
# program of our own (tests/workloads/python/nested.py: hot_leaf under middle under outer under
# Worker.run) runs in its own pid, mount and net namespaces; tests/integration/python_probe.c
# samples it for a few seconds through the sampler and prints the merged, named stacks. Each
# version must name hot_leaf under middle, with file:line inside their bodies, in >= 90% of the
# process's samples. Interpreters that are not installed are left out (the system one must be
# there); the versions that passed are listed at the end.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd unshare

DURATION=${PY_DURATION:-4}
WORKLOAD=$LIB_DIR/../workloads/python/nested.py
[ -f "$WORKLOAD" ] || fail "no $WORKLOAD"

# --- the probe, built against the objects of `make` ------------------------------------------
[ -d "$OUTPUT/obj" ] || fail "$OUTPUT/obj is missing (run make first)"
objs=$(find "$OUTPUT/obj" -name '*.o' ! -path '*/daemon/main.o' | sort)
libbpf=
for d in /usr/lib/$(gcc -print-multiarch) /usr/lib64 /usr/lib; do
	[ -f "$d/libbpf.a" ] && libbpf=$d/libbpf.a && break
done
[ -n "$libbpf" ] || fail "no libbpf.a"
san=
nm "$OUTPUT/obj/daemon/collectors/sampler.o" | grep __asan >/dev/null && san="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror $san -I"$REPO_ROOT" -I"$OUTPUT" \
	-o "$TMP/python_probe" "$LIB_DIR/python_probe.c" $objs "$libbpf" \
	$(pkg-config --libs libelf libdw zlib jansson yaml-0.1 libcurl libmicrohttpd libwebsockets) \
	-lpthread -lm -lstdc++ || fail "cannot build python_probe"

PYTHONS=$(python3_versions)

passed=
failed=
for py in $PYTHONS; do
	python3_start "$py" "$WORKLOAD" $((DURATION + 30)) || continue
	name=$PY_VERSION pid=$PY_PID
	out=$TMP/probe.$name.out
	"$TMP/python_probe" "$pid" "$DURATION" >"$out" 2>"$TMP/probe.$name.err"
	rc=$?
	kill -KILL "$pid" 2>/dev/null
	summary=$(grep '^python_probe: version=' "$TMP/probe.$name.err")
	if [ $rc -ne 0 ] || [ -z "$summary" ]; then
		log "$name ($py): probe failed (rc $rc): $(tail -3 "$TMP/probe.$name.err")"
		failed="$failed $name"
		continue
	fi
	total=$(echo "$summary" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')
	# hot_leaf (lines 8-12) right under middle (its call at line 16), under outer (line 20)
	good=$(grep -E 'outer \(nested\.py:20\);middle \(nested\.py:16\);hot_leaf \(nested\.py:(8|9|10|11|12)\)(;|$| )' "$out" |
		awk '{ n += $NF } END { print n + 0 }')
	pct=$(( total > 0 ? good * 100 / total : 0 ))
	log "$name ($py): $good of $total samples name hot_leaf under middle with file:line ($pct%)"
	log "  $summary"
	if [ "$total" -lt 50 ] || [ "$pct" -lt 90 ]; then
		log "  top stacks: $(sort -k2 -n -r "$out" | head -3)"
		failed="$failed $name"
	else
		passed="$passed $name"
	fi
done

log "passed:${passed:- none}"
[ -z "$failed" ] || fail "failed:$failed"
exit 0
