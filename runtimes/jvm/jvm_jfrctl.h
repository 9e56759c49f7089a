/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_jfrctl: the words we say to a HotSpot JVM's Flight Recorder through the attach protocol's
 * "jcmd" command (jvm_attach.h), where async-profiler is not installed: the settings file of
 * each question, the JFR.start and JFR.stop command lines, and what the JVM's answer
 * to each means. Pure; no I/O; thread-safe.
 *
 * The settings are our own .jfc file, placed in our directory inside the container
 * (base/safe_place.h) and named by its path there: the JVM reads it. JDK 17's inline
 * "event#setting=value" options of JFR.start do not set an event's throttle, and a .jfc file
 * reads the same in 17 and 25. Only the events of the question are on:
 *   JVM_JFR_ALLOC  jdk.ObjectAllocationSample, throttled to JVM_JFR_ALLOC_RATE a second (the
 *                  JDK's own "high" allocation profiling), with stack traces
 *   JVM_JFR_HELD   jdk.OldObjectSample with stack traces (the allocation stack of each sampled
 *                  object the JVM still holds at the dump), cutoff 0 (no paths to GC roots)
 *   JVM_JFR_LOCKS  jdk.JavaMonitorEnter and jdk.ThreadPark that last JVM_JFR_LOCK_THRESHOLD_MS
 *                  or longer, with stack traces
 * The recording is in memory (disk=false): the JVM writes nothing but the file JFR.stop writes
 * into our directory. (It still makes its empty repository directory, "<date>_<pid>", in its
 * java.io.tmpdir the first time JFR starts, and removes it when it exits; that directory is
 * the JVM's own, docs/jvm.md.)
 */
#ifndef SLIDEOPS_JVM_JFRCTL_H
#define SLIDEOPS_JVM_JFRCTL_H

#include <stddef.h>

enum jvm_jfr_mode {
	JVM_JFR_ALLOC,
	JVM_JFR_HELD,
	JVM_JFR_LOCKS,
	JVM_JFR_MODE_COUNT,
};

#define JVM_JFR_ALLOC_RATE 1000
/* 1 ms: each event is written by the thread that waited, once it holds the lock (a stack walk
 * of some microseconds: at most 2% more of the lock's hold time per wait); async-profiler's
 * own, 10 ms, is an interval on the summed wait in its 4.x, which samples shorter waits too. */
#define JVM_JFR_LOCK_THRESHOLD_MS 1

/* The .jfc text of @mode (a constant), or NULL for a mode out of range. */
const char *jvm_jfrctl_settings(enum jvm_jfr_mode mode);

/*
 * The command lines, into @buf (@size bytes): "JFR.start name=@name settings=@settings
 * disk=false duration=@secs s filename=@file" and "JFR.stop name=@name", which writes the
 * recording to @file (in our directory). The duration (1 s at least) is a safety net: a
 * recording a killed agent left ends by itself (and is written to @file, which the next
 * capture removes with our directory), so give the capture's length and room to spare. @name is
 * [A-Za-z0-9_-] and not all digits (HotSpot takes a number for a recording id); @settings and
 * @file are absolute paths of [A-Za-z0-9._/-] (nothing the JVM's option parser splits on).
 * Returns the length, -EINVAL (a name or path outside those rules) or -ENOSPC.
 */
int jvm_jfrctl_start(char *buf, size_t size, const char *name, const char *settings,
		     unsigned int secs, const char *file);
int jvm_jfrctl_stop(char *buf, size_t size, const char *name);

enum jvm_jfr_step {
	JVM_JFR_STEP_START,
	JVM_JFR_STEP_STOP,
};

/*
 * Whether the JVM's answer (@text, @len bytes: the body after the return code) to @step says
 * it was done: "Started recording N", "Stopped recording" (JDK 21 and
 * later answer 0 whatever happened and put the error in the text, so the text decides). On
 * failure, writes the answer's first non-empty line (at most 200 bytes, valid UTF-8) to
 * @why. Returns 0 or -EREMOTEIO.
 */
int jvm_jfrctl_answer(enum jvm_jfr_step step, const char *text, size_t len, char *why, size_t size);

#endif
