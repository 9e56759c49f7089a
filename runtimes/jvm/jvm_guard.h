/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_guard: the JVM versions an agent (async-profiler) is never loaded into, because a bug of
 * theirs can crash the JVM when an agent attaches: one table, each row with its bug id. Such a
 * JVM is read through its own Flight Recorder instead (no agent is loaded for that). Pure;
 * thread-safe.
 *
 *   JDK-8212155  "Race condition when posting dynamic_code_generated event leads to JVM crash":
 *                an agent that enables DynamicCodeGenerated events (async-profiler does, as it
 *                starts) while the JVM generates a vtable stub crashes it. Fixed in JDK 17;
 *                the 8u and 11u backports came in 2025, and which update releases carry them
 *                is not known here, so every JVM before 17 is refused.
 */
#ifndef SLIDEOPS_JVM_GUARD_H
#define SLIDEOPS_JVM_GUARD_H

struct jvm_guard_bug {
	const char *id;		  /* "JDK-8212155" */
	const char *what;	  /* a fragment: "a race when an agent enables ..." */
	unsigned int below_major; /* affects every major version below this one */
};

/*
 * The bug that keeps an agent out of a JVM of version @version ("17", "11.0.22", "1.8.0_392":
 * as runtime detection and HotSpot spell it), or NULL when none does. An unknown version ("",
 * NULL, not a number) is refused with the first row: we cannot tell it is safe.
 */
const struct jvm_guard_bug *jvm_guard_agent(const char *version);

#endif
