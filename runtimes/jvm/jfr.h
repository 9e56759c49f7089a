/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jfr: a bounded parser of JFR (Java Flight Recorder) files, as HotSpot's JFR.dump and
 * async-profiler's jfr output write them (docs/design/jfr-format.md). It delivers the
 * allocation, held-object and lock events the JVM profiles need, with their stack traces,
 * threads and classes resolved. Pure (no I/O), thread-safe (no shared state).
 *
 * The file may come from a hostile container, so nothing in it is trusted: every size, count,
 * offset and index is checked against the bytes that hold it, the layout of every value is
 * taken from the chunk's own metadata (fields are found by name; a field that is missing or of
 * another shape is "unknown"), checkpoints must not overlap, and the memory used is bounded by
 * JFR_MEM_FACTOR times the size of the chunk (two chunks are alive at most). Only finished
 * chunks (file state 0, the only state of a dumped or stopped recording) with compressed
 * integers (what HotSpot and async-profiler write) of version 2.x are read.
 *
 * Constant pools are per chunk and resolved lazily, each entry once; a missing key, a pool of
 * another type, a reference cycle or a chain deeper than JFR_MAX_RESOLVE_DEPTH is "unknown",
 * not an error. A key the chunk lacks is looked up in the chunk just before it (never further):
 * HotSpot commits an event that spans a chunk rotation (a monitor entered before it) into the
 * new chunk with a stack trace the old chunk's checkpoints hold.
 *
 * Times: event timestamps are ticks, converted to epoch ns with the chunk's own header (start
 * ns, start ticks, ticks per second); durations are tick spans converted to ns (HotSpot writes
 * ticks for these fields). The JDK's `jfr` tool converts later chunks with the first chunk's
 * header: its times for them differ from ours by the drift of the two clocks (140 ns over 1.8 s
 * in tests/fixtures/jfr/java17-2chunks.jfr).
 */
#ifndef SLIDEOPS_JVM_JFR_H
#define SLIDEOPS_JVM_JFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest file parsed: -EFBIG above. */
#define JFR_MAX_BYTES (64u << 20)
/* Frames kept per stack (deeper: cut at the root end, truncated set). */
#define JFR_MAX_FRAMES 256
/* Longest string kept, in bytes of UTF-8 (a longer one is cut at a character boundary). */
#define JFR_MAX_STRING (64u << 10)
/* Strings in a chunk's metadata string table (-E2BIG above). */
#define JFR_MAX_META_STRINGS (1u << 16)
/* Nesting of the metadata's element tree (-E2BIG deeper; HotSpot's is 5). */
#define JFR_MAX_META_DEPTH 32
/* Classes declared in a chunk's metadata, and fields per class (-E2BIG above). */
#define JFR_MAX_CLASSES (1u << 15)
#define JFR_MAX_FIELDS 1024
/* Nesting of inline (not constant-pool) struct fields (-E2BIG deeper; -EBADMSG for a cycle). */
#define JFR_MAX_INLINE_DEPTH 16
/* Checkpoint events reached through a chunk's delta chain (-E2BIG above). */
#define JFR_MAX_CHECKPOINTS (1u << 16)
/* Constant-pool entries of a chunk, over all its checkpoints (-E2BIG above). */
#define JFR_MAX_POOL_ENTRIES (1u << 22)
/* References followed from one pool entry to the next while resolving (deeper: unknown). */
#define JFR_MAX_RESOLVE_DEPTH 8
/* Memory the parser may use per chunk: this many times the chunk's size, plus JFR_MEM_SLACK. */
#define JFR_MEM_FACTOR 16
#define JFR_MEM_SLACK (4u << 20)

enum jfr_kind {
	JFR_ALLOC_SAMPLE,  /* jdk.ObjectAllocationSample: weight = "weight" (bytes) */
	JFR_ALLOC_IN_TLAB, /* jdk.ObjectAllocationInNewTLAB: weight = tlabSize */
	JFR_ALLOC_OUTSIDE, /* jdk.ObjectAllocationOutsideTLAB: weight = allocationSize */
	JFR_OLD_OBJECT, /* jdk.OldObjectSample: weight = objectSize when the file has it (JDK 25),
			    * else 0; alloc_ns; array_elements */
	JFR_LIVE_OBJECT, /* async-profiler's profiler.LiveObject: weight = allocationSize, alloc_ns */
	JFR_MONITOR_ENTER, /* jdk.JavaMonitorEnter: duration_ns, object_class = monitorClass */
	JFR_THREAD_PARK,   /* jdk.ThreadPark: duration_ns, object_class = parkedClass */
	JFR_KIND_COUNT,
};

struct jfr_frame {
	const char *class_name; /* dotted Java name, "java.util.HashMap", "long[]" for "[J"; a hidden
				 * class keeps its last '/': "Foo$$Lambda/0x0000000033040210";
				 * NULL unknown */
	const char *method;	/* "put"; NULL unknown */
	int32_t line;		/* 0 unknown */
	int32_t bci;		/* -1 unknown */
	const char *type;	/* jdk.types.FrameType description: "Interpreted", "JIT compiled",
				 * "Inlined", "Native"; NULL unknown */
	bool hidden;		/* the method is hidden (lambdas, @Hidden): `jfr print` omits it */
};

struct jfr_event {
	enum jfr_kind kind;
	int64_t start_ns;	  /* epoch ns (ticks converted with the chunk header) */
	int64_t duration_ns;	  /* 0 for events without a duration */
	int64_t alloc_ns;	  /* allocationTime as epoch ns (old/live objects); 0 unknown */
	uint64_t weight;	  /* bytes, see the kinds */
	int64_t array_elements;	  /* old objects: the array's length, -1 not an array or unknown */
	uint64_t thread_os_id;	  /* java.lang.Thread osThreadId; 0 unknown */
	const char *thread_name;  /* javaName, else osName; NULL unknown */
	const char *object_class; /* the allocated object's class (objectClass, or OldObject.type),
				   * the monitor's or parked class; dotted; NULL unknown */
	const struct jfr_frame *frames; /* leaf first */
	size_t nframes;
	bool truncated; /* the stack trace says truncated, or we cut it */
};

/*
 * Called for each event. All strings in @ev are valid UTF-8 (no NUL, at most JFR_MAX_STRING
 * bytes) and, like @ev and its frames, borrowed until the callback returns. A nonzero return
 * stops the parse, which returns it.
 */
typedef int (*jfr_event_fn_t)(void *ctx, const struct jfr_event *ev);

struct jfr_stats {
	uint64_t chunks;	  /* chunks parsed */
	uint64_t events;	  /* event records read (metadata and checkpoints not counted) */
	uint64_t delivered;	  /* events given to the callback */
	uint64_t skipped_unknown; /* events of other types, skipped by their size */
	uint64_t bad_stacks;	  /* delivered events whose stack key is missing from its pool */
	uint64_t pool_entries;	  /* constant-pool entries indexed, over all chunks */
};

/*
 * Parses the @len bytes at @buf (a whole JFR file: one or more chunks) and calls @fn (may be
 * NULL: only checked and counted) for every event of the kinds above, in file order. Returns 0,
 * the first nonzero value @fn returned, or -EBADMSG (malformed: a size, offset, count or index
 * that does not fit, a bad magic, an unsupported version or flags, an unfinished chunk, a
 * varint past its record; an empty file or NULL @buf), -EFBIG (@len >
 * JFR_MAX_BYTES), -E2BIG (a declared count or nesting over one of the limits above), -ENOMEM
 * (allocation failed, or the chunk's memory budget is spent). Events of a chunk are delivered
 * only once its metadata and constant pools have been read, so a malformed chunk may fail
 * after the events of earlier chunks were delivered. @stats (may be NULL) is zeroed, then
 * filled as far as the parse went, also on failure. Pure (no I/O), thread-safe (no globals).
 */
int jfr_parse(const uint8_t *buf, size_t len, jfr_event_fn_t fn, void *ctx,
	      struct jfr_stats *stats);

#endif
