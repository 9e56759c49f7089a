#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Java frames from eBPF with no JVM flags (issue 14): the kernel unwinder walks HotSpot's code
# heaps (bpf/hotspot.bpf.h) and the capture names the frames from the JVM's VMStructs
# (runtimes/jvm/jvm_names.c). A program of ours (tests/workloads/java/JavaWork.java) spends its
# time in mixStep(), which C1 and C2 inline into its caller spinLoop(); it runs under Java 17
# (Debian) and Java 25 (Temurin, where the machine has it), each with no flags, with -Xint
# (interpreted frames) and with -XX:TieredStopAtLevel=1 (C1 only), as a non-root user in its
# own pid, mount and net namespaces with a private /tmp. For each, a 2-second cpu capture of
# the JVM's pid must:
# - name JavaWork.spinLoop;JavaWork.mixStep (the inlined method under its caller) in >= 90% of
#   the process's samples, and name JavaWork.mixStep in the answer;
# - reach the thread's entry (java.lang.Thread.run) in >= 90% of the samples with Java frames;
# - label the samples java and leave nothing in the JVM's /tmp;
# and `check` must list the JDK in its language table.
# Under ASan (MEM_FACTOR > 1) only Java 17 with no flags runs (the time of .ci/run: the plain
# pass has run every case).
. "$(dirname "$0")/lib.sh"

need_root
need_bin
jvm_setup
jvm_compile JavaWork
JVM_MAIN="JavaWork cpu 60"

# shares COLLAPSED: "HOT ENTRY JAVA TOTAL" sample counts of the collapsed stacks.
shares()
{
	awk '{ n = $NF; t += n; if (index($0, "JavaWork.spinLoop;JavaWork.mixStep")) h += n
		if (index($0, "JavaWork.")) { j += n; if (index($0, "java.lang.Thread.run")) e += n } }
		END { printf "%.0f %.0f %.0f %.0f\n", h, e, j, t }' "$1"
}

flag_sets=("" "-Xint" "-XX:TieredStopAtLevel=1")
[ "$MEM_FACTOR" -gt 1 ] && flag_sets=("") && JDKS=$JDK17
for jdk in $JDKS; do
	for flags in "${flag_sets[@]}"; do
		name="$(basename "$jdk")${flags:+ $flags}"
		# shellcheck disable=SC2086
		jvm_start "$jdk" $flags
		before=$(tmp_files)
		sleep 2 # the JIT compiles the hot methods
		out=$TMP/cap.$RANDOM
		profiler_run jvm 30 capture --pid "$JVM_PID" --question cpu --duration 2 --out "$out"
		read -r hot entry java total < <(shares "$out/profile.collapsed")
		log "$name: $total samples, $hot with spinLoop;mixStep, $java with Java frames, $entry of them from Thread.run"
		[ "$total" -gt 100 ] || fail "$name: only $total samples"
		[ $((hot * 100)) -ge $((total * 90)) ] ||
			fail "$name: spinLoop;mixStep in $hot of $total samples: $(sort -t' ' -k2 -nr "$out/profile.collapsed" | head -3)"
		[ $((entry * 100)) -ge $((java * 90)) ] ||
			fail "$name: $entry of $java Java samples reach Thread.run"
		answer=$(json_get "$out/summary.json" "d['answer']")
		case $answer in *JavaWork.mixStep*) ;; *) fail "$name: the answer is: $answer" ;; esac
		json_get "$out/summary.json" "d['languages']" | grep -q java || fail "$name: no java in languages"
		check_tmp "$before" "$name"
		if [ -z "$flags" ]; then
			"$BIN" check --pid "$JVM_PID" >"$TMP/check.out" 2>&1 || fail "$name: check failed"
			grep -q "Java (HotSpot) $("$jdk/bin/java" -XshowSettings:properties -version 2>&1 |
				sed -n 's/.*java.specification.version = //p')" "$TMP/check.out" ||
				fail "$name: the language table has no row for it"
		fi
		jvm_stop
	done
done
log "ok"
