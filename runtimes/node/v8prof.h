/* SPDX-License-Identifier: Apache-2.0 */
/*
 * v8prof: the two profiles V8's inspector hands over, parsed into one model: a tree of nodes
 * (index 0..n-1, each with its parent's index) and samples referring to node indices.
 *   CPU   the result of Profiler.stop: {"profile":{"nodes":[...],"startTime","endTime",
 *         "samples":[node ids],"timeDeltas":[us]}}, a flat node list linked by child ids
 *   heap  the result of HeapProfiler.getSamplingProfile / stopSampling: {"profile":{"head":
 *         {nested nodes},"samples":[{"size","nodeId","ordinal"}]}}
 * The input is hostile: ids are arbitrary (mapped through a sorted array, never used as an
 * index), every count is capped, the nested heap tree is walked with an explicit stack, and
 * every name is sanitized UTF-8 without control characters, cut to V8PROF_NAME_MAX bytes.
 * Names live in one arena owned by the profile (equal names are mostly shared); it never
 * holds more bytes than the message did. Pure (no I/O); a profile is immutable once parsed,
 * so its readers may share it between threads.
 */
#ifndef SLIDEOPS_RUNTIMES_NODE_V8PROF_H
#define SLIDEOPS_RUNTIMES_NODE_V8PROF_H

#include <stddef.h>
#include <stdint.h>

#define V8PROF_MAX_NODES (1u << 20)
#define V8PROF_MAX_SAMPLES (1u << 22)
/* Frames of one stack: v8prof_stack() returns at most this many, cutting at the root side. */
#define V8PROF_MAX_DEPTH 1024
/* Bytes of a function name or URL kept (cut at a character boundary). */
#define V8PROF_NAME_MAX 512
#define V8PROF_NONE UINT32_MAX

enum v8prof_kind {
	V8PROF_JS = 0,
	V8PROF_ROOT,	/* "(root)" */
	V8PROF_PROGRAM, /* "(program)": native code V8 does not attribute */
	V8PROF_IDLE,	/* "(idle)" */
	V8PROF_GC,	/* "(garbage collector)" */
	/* url "" and scriptId "0": a builtin or native function, or another "(name)" */
	V8PROF_NATIVE,
};

struct v8prof_node {
	uint32_t parent; /* index; V8PROF_NONE for the root */
	uint32_t depth;	 /* the root is 0, its children 1 */
	enum v8prof_kind kind;
	const char *function; /* never empty: "" becomes "(anonymous)" */
	const char *url;      /* "" when none */
	int32_t line, column; /* 1-based; 0 when unknown (CDP's are 0-based, -1 unknown) */
	uint64_t self_bytes;  /* heap profiles: selfSize (at most 2^53); 0 in CPU profiles */
};

struct v8prof_stats {
	uint64_t nodes, samples;
	uint64_t cut_depth; /* nodes deeper than V8PROF_MAX_DEPTH: their stacks are cut */
	/*
	 * values out of range that were replaced rather than refused: a line or column beyond
	 * int32 (made 0, unknown), a selfSize or sample size above 2^53 (capped)
	 */
	uint64_t bad_refs;
	/* heap samples of a node id the tree does not have (V8 adds a node after building the
	 * tree it sends): left out */
	uint64_t orphan_samples;
};

struct v8prof;

/*
 * Parses a CPU profile into @out (the caller frees it with v8prof_free()). @buf (@len bytes,
 * need not be NUL-terminated) is either the whole CDP response to Profiler.stop,
 * {"id":N,"result":{"profile":{...}}}, or just its result object {"profile":{...}}. Exactly
 * one node is no one's child (the root); each other node is listed as a child once and is
 * reachable from the root. Sample i's time is startTime + timeDeltas[0] + ... + timeDeltas[i]
 * (us; deltas may be negative). Returns 0, -EINVAL (NULL pointers), -EFBIG (@len over
 * CDP_MAX_MESSAGE, more than V8PROF_MAX_NODES nodes or V8PROF_MAX_SAMPLES samples), -EPROTO
 * (not JSON; an error response; a field missing or of the wrong type; a duplicate id; an
 * unknown child or sample id; a node listed as a child twice; no single root or a cycle;
 * samples and timeDeltas of different lengths; a time beyond int64), -ENOMEM.
 */
int v8prof_cpu_parse(const char *buf, size_t len, struct v8prof **out);

/*
 * Parses a heap sampling profile, the same two forms of input (the response to
 * HeapProfiler.stopSampling or getSamplingProfile, or its result), into @out. selfSize and a
 * sample's size are integers or reals >= 0 (capped at 2^53). The nesting the JSON decoder
 * accepts (JSON_PARSER_MAX_DEPTH, 2048 levels: about 1020 levels of nodes) bounds the tree's
 * depth; a deeper text is -EPROTO. A sample of a node id the tree does not have is left out and
 * counted (stats.orphan_samples: V8 sends such samples). Returns as v8prof_cpu_parse() (-EPROTO
 * also for a sample whose nodeId is not an integer id, a negative or non-number size).
 */
int v8prof_heap_parse(const char *buf, size_t len, struct v8prof **out);

/* Frees @p; accepts NULL. */
void v8prof_free(struct v8prof *p);

/* The nodes (borrowed, valid until v8prof_free()) in @out; returns their count (>= 1). */
size_t v8prof_nodes(const struct v8prof *p, const struct v8prof_node **out);

/*
 * The samples: per sample its node's index in @node_idx and, for a CPU profile, its absolute
 * time (us, V8's monotonic clock) in @time_us (NULL for a heap profile); either pointer may
 * be NULL. Returns the count. Borrowed, in the order of the input.
 */
size_t v8prof_samples(const struct v8prof *p, const uint32_t **node_idx, const int64_t **time_us);

/* Per heap sample its size in bytes (NULL for a CPU profile); v8prof_samples() is the count. */
const uint64_t *v8prof_sample_bytes(const struct v8prof *p);

/* A CPU profile's startTime and endTime (us); 0 for a heap profile. */
int64_t v8prof_start_us(const struct v8prof *p);
int64_t v8prof_end_us(const struct v8prof *p);

void v8prof_get_stats(const struct v8prof *p, struct v8prof_stats *out);

/*
 * Writes the frames of node @idx, leaf first (@idx itself first), into @out as node indices,
 * at most @max (and V8PROF_MAX_DEPTH) of them: a deeper stack is cut at the root side. The
 * root is not included. Returns the count: 0 for the root or an @idx out of range. O(count).
 */
size_t v8prof_stack(const struct v8prof *p, uint32_t idx, uint32_t *out, size_t max);

/*
 * The index of the CPU sample whose time is nearest @t_us, within @tol_us (inclusive) of it,
 * into @sample; of two as near, the earlier in time (then in input order). O(log n). Returns 0,
 * -ENOENT (none within @tol_us; a heap profile), -EINVAL (@tol_us < 0).
 */
int v8prof_nearest(const struct v8prof *p, int64_t t_us, int64_t tol_us, uint32_t *sample);

#endif
