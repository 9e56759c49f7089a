/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodeframes: the JavaScript frames of a Node.js process's samples, from its V8 CPU profile
 * (daemon/capture/node_source.h), matched with our own samples by time.
 *
 * Our sampler keeps each on-CPU sample of such a process's main thread (V8's isolate thread,
 * the one V8's profiler samples) with its CLOCK_MONOTONIC time (source__add_timed()). V8 samples
 * the same thread every NODE_SOURCE_INTERVAL_US on the same clock (base::TimeTicks; a time
 * namespace's offset, /proc/PID/timens_offsets, is taken off). The V8 sample nearest in time,
 * within NODEFRAMES_TOLERANCE_US, gives the JavaScript stack that ran; it takes the place of the
 * frames eBPF saw in V8's generated code (anonymous executable memory, V8's builtins), between
 * the native frames that called into JavaScript and those it called. So the shares stay those of
 * our 99 Hz sampling, and native frames stay where they are. A sample with no V8 sample near it,
 * or one in which V8 was not running JavaScript (idle, GC, its own work), keeps its native stack.
 * Not thread-safe.
 */
#ifndef SLIDEOPS_CAPTURE_NODEFRAMES_H
#define SLIDEOPS_CAPTURE_NODEFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct v8prof;
struct prof_frame_info;
struct capture_result;

#define NODEFRAMES_MAX_PROCS 8
#define NODEFRAMES_TOLERANCE_US 2000
/* JavaScript frames of one sample (deeper stacks keep their innermost frames). */
#define NODEFRAMES_MAX_DEPTH 128

struct nodeframes;

/* Returns 0 and an empty set in @out, or -ENOMEM. */
int nodeframes__new(struct nodeframes **out);
void nodeframes__free(struct nodeframes *nf);

/*
 * Takes @prof (V8's CPU profile of process @tgid; owned from now on, also on error) whose clock
 * runs @offset_ns ahead of ours. Returns 0, -EEXIST, -E2BIG past NODEFRAMES_MAX_PROCS.
 */
int nodeframes__add(struct nodeframes *nf, uint32_t tgid, struct v8prof *prof, int64_t offset_ns);

/* True when @tgid has a profile. */
bool nodeframes__has(const struct nodeframes *nf, uint32_t tgid);

/*
 * The JavaScript frames (leaf first, named, language Node.js) that ran in @tgid's main thread
 * at @time_ns into @out (room for @max), or 0 when none did or none is known. The names are
 * borrowed until nodeframes__free(). Counts matched and unmatched samples for the notes.
 */
size_t nodeframes__stack(struct nodeframes *nf, uint32_t tgid, uint64_t time_ns,
			 struct prof_frame_info *out, size_t max);

/* True for a native frame eBPF saw inside V8's generated code: a builtin ("Builtins_*"), code
 * in anonymous memory, or a frame named by a perf map. */
bool nodeframes_in_v8(const struct prof_frame_info *fi);

/* Samples given V8's JavaScript frames so far. */
uint64_t nodeframes__matched(const struct nodeframes *nf);

/* The merged samples' and the unmatched samples' notes. */
void nodeframes__notes(const struct nodeframes *nf, struct capture_result *r);

#endif
