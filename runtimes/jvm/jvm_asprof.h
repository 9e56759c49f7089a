/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_asprof: the words we say to async-profiler's agent library (libasyncProfiler.so) through
 * HotSpot's "load" attach command (jvm_attach.h: "load" <lib> "true" <options>), and what we read
 * back: the agent's return code and its collapsed-stack output. Pure; no I/O; thread-safe.
 *
 * The three questions and their start options (async-profiler's agent syntax: key[=value]
 * separated by ','; numbers in plain bytes and nanoseconds, the one form every release takes):
 *   JVM_ASPROF_ALLOC  "start,event=alloc,alloc=524288,loglevel=none"
 *                     JVMTI SampledObjectAlloc, one sample per JVM_ASPROF_ALLOC_BYTES allocated
 *                     on average; each sample weighs max(its size, the interval), so the total
 *                     estimates the bytes allocated
 *   JVM_ASPROF_LIVE   "start,event=alloc,alloc=524288,live,loglevel=none"
 *                     the same samples, of which only the objects still reachable at the stop
 *                     are reported; each weighs its own size (async-profiler keeps at most 1024
 *                     of them at once), so the total is a sample of the held bytes, exact for
 *                     objects of JVM_ASPROF_ALLOC_BYTES and more
 *   JVM_ASPROF_LOCK   "start,event=lock,lock=10000000,loglevel=none"
 *                     contended monitor enters and ReentrantLock/Semaphore parks; every wait of
 *                     JVM_ASPROF_LOCK_NS or longer is recorded with its duration (a threshold
 *                     before async-profiler 4.0; since 4.0 an interval on the summed wait, which
 *                     also samples shorter waits in proportion to their length)
 * No CPU engine runs in any of them (event= names only alloc or lock), so no interval= is set.
 * "loglevel=none" keeps async-profiler's messages ("Profiling started", warnings) out of the
 * application's stdout, where its log goes by default; it must be given on every load, as each
 * load sets the level again. The stop options, "stop,file=@file,collapsed,total,loglevel=none",
 * dump the stacks with their summed weights (bytes or nanoseconds) rather than sample counts
 * (async-profiler reads the counter from the dump's own options).
 *
 * Collapsed output, as async-profiler writes it (src/profiler.cpp dumpCollapsed,
 * src/frameName.cpp): one line per stack, root first, "frame;frame;...;leaf VALUE\n".
 *  - Java frames are "java/util/HashMap.put": the class in internal form, slashes kept, unless
 *    the "dot" option was given; "_[j]" (JIT), "_[i]" (inlined), "_[0]" (interpreted) and "_[1]"
 *    (C1) follow only with the "ann" option, which we never give;
 *  - the leaf of an allocation, live-object or lock stack is the class (allocated, or of the
 *    lock or park blocker), always dotted ("byte[]", "java.lang.String[]",
 *    "java.util.concurrent.locks.ReentrantLock$NonfairSync") and, unless "dot", followed by
 *    "_[i]", or "_[k]" for an allocation outside a TLAB (the TLAB engine);
 *  - kernel frames end in "_[k]"; async-profiler's own pseudo frames are in brackets
 *    ("[unknown]", "[no_Java_frame]", "[truncated]").
 */
#ifndef SLIDEOPS_JVM_ASPROF_H
#define SLIDEOPS_JVM_ASPROF_H

#include <stddef.h>
#include <stdint.h>

enum jvm_asprof_mode {
	JVM_ASPROF_ALLOC, /* memory-alloc: allocation samples, in bytes */
	JVM_ASPROF_LIVE,  /* memory-held: sampled objects still alive at the stop, in bytes */
	JVM_ASPROF_LOCK,  /* locks: lock waits, in nanoseconds */
	JVM_ASPROF_MODE_COUNT,
};

/* async-profiler's own default (512 KiB), as HotSpot's heap sampling and Grafana Alloy use. */
#define JVM_ASPROF_ALLOC_BYTES 524288
/*
 * 10 ms: the threshold of the JDK's profile.jfc for monitor enters and parks, and Grafana
 * Alloy's --lock; it bounds the recorded waits to 100 per thread-second of waiting (each one a
 * JVMTI stack walk done while the lock is held) where async-profiler's default of 10 us would
 * record nearly every wait.
 */
#define JVM_ASPROF_LOCK_NS 10000000

/* Agent_OnAttach's return codes in async-profiler (src/vmEntry.cpp). */
#define JVM_ASPROF_CODE_OK 0
#define JVM_ASPROF_CODE_ARGUMENTS 100 /* the options did not parse */
#define JVM_ASPROF_CODE_COMMAND 200   /* the command failed: already started, not started ... */

/* Bounds of the collapsed parser. */
#define JVM_ASPROF_FRAMES_MAX 4096u    /* frames per stack; deeper: the root end is cut */
#define JVM_ASPROF_LINE_MAX (1u << 20) /* bytes per line, '\n' not counted; longer: malformed */
#define JVM_ASPROF_NAME_MAX 4096u      /* bytes per name; longer: cut on a character boundary */
#define JVM_ASPROF_VALUE_MAX (1ull << 63)

/*
 * The start options of @mode into @buf (@size bytes, NUL-terminated). Returns the length,
 * -EINVAL for a mode out of range, -ENOSPC when it does not fit.
 */
int jvm_asprof_start_options(enum jvm_asprof_mode mode, char *buf, size_t size);

/*
 * The stop options of @mode, which dump to @file: a path as the JVM sees it (its mount
 * namespace and cwd), absolute and made of [A-Za-z0-9._/-] only (async-profiler splits options
 * on ',' and expands '%' patterns in file names). Returns the length, -EINVAL for a mode out of
 * range or another @file, -ENOSPC when it does not fit @size.
 */
int jvm_asprof_stop_options(enum jvm_asprof_mode mode, const char *file, char *buf, size_t size);

/*
 * The agent's return code from HotSpot's answer to "load" (@body, @len bytes: the answer after
 * its status line, jvm_attach_parse_answer()). JDK 9 and later print "return code: N" once the
 * agent ran (the last such line counts; other text may come before it); JDK 8 answers the bare
 * number. Returns 0 and the code in @rc (JVM_ASPROF_CODE_*, or whatever the agent returned);
 * -ENOMSG when there is none (the agent never ran: the library did not load, has no
 * Agent_OnAttach, or dynamic loading is off, and the body says why), -EBADMSG for a
 * "return code:" line that is not a number of int range, -EILSEQ for a NUL byte, -EINVAL for
 * a NULL @body with a length. @rc is written only on success.
 */
int jvm_asprof_parse_code(const char *body, size_t len, int *rc);

enum jvm_asprof_kind {
	JVM_ASPROF_JAVA,
	JVM_ASPROF_NATIVE, /* also async-profiler's bracketed pseudo frames */
	JVM_ASPROF_KERNEL,
	JVM_ASPROF_CLASS, /* the allocated class or the lock's class: the leaf */
};

struct jvm_asprof_frame {
	const char *name; /* NUL-terminated, valid UTF-8, no control characters */
	size_t len;
	enum jvm_asprof_kind kind;
};

/*
 * One stack: @frames[0] is the leaf, @frames[@nframes - 1] the root; names are valid only during
 * the call. Returns 0 to go on, anything else (a -errno) to stop the parse with that value.
 */
typedef int (*jvm_asprof_stack_fn_t)(void *ctx, const struct jvm_asprof_frame *frames,
				     size_t nframes, uint64_t value);

/* What the parser skipped or changed, for a note. */
struct jvm_asprof_counts {
	size_t lines;	    /* non-empty lines */
	size_t malformed;   /* of them, skipped */
	size_t cut_stacks;  /* stacks cut to JVM_ASPROF_FRAMES_MAX */
	size_t cut_names;   /* names cut to JVM_ASPROF_NAME_MAX */
	size_t fixed_names; /* names with bytes replaced by '?' (not UTF-8, control characters) */
};

/*
 * Parses async-profiler's collapsed output (@buf, @len bytes) and calls @fn once per stack, in
 * file order. Each frame's kind comes from its suffix, which is removed: on the leaf "_[i]" and
 * "_[k]" mark the class (JVM_ASPROF_CLASS), elsewhere an inlined Java frame and a kernel frame;
 * "_[j]", "_[0]", "_[1]" a Java frame. A frame without one is Java when it reads "Class.method"
 * (no spaces, parentheses, "::" or '`'; not bracketed; the method not starting with a digit),
 * else native. Java and class names are dotted ("java/util/HashMap.put" ->
 * "java.util.HashMap.put") and a hidden class's address is dropped ("Foo$$Lambda.0x1f2c.run" ->
 * "Foo$$Lambda.run"), as jvm_names names them. Names are made valid UTF-8 without control
 * characters (base/text.h) and cut to JVM_ASPROF_NAME_MAX bytes.
 *
 * The value is the digits after the line's last space (read saturating), at most
 * JVM_ASPROF_VALUE_MAX. A line without one, with a signed, empty or larger value, an empty stack or frame, or
 * longer than JVM_ASPROF_LINE_MAX is malformed: counted and skipped. Empty lines are skipped.
 *
 * Returns the number of stacks delivered and, when @counts is not NULL, the counts; -EINVAL for
 * a NULL @fn (or @buf with a length), -EILSEQ for a NUL byte anywhere (nothing is delivered),
 * -EFBIG for more than INT_MAX bytes, -ENOMEM, or the first nonzero value of @fn.
 */
int jvm_asprof_parse_collapsed(const char *buf, size_t len, jvm_asprof_stack_fn_t fn, void *ctx,
			       struct jvm_asprof_counts *counts);

#endif
