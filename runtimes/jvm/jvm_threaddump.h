/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_threaddump: a parser of HotSpot's thread dump text, the answer of the attach protocol's
 * "threaddump" command (jvm_attach.h), the same text as `jcmd PID Thread.print`. Pure; no I/O;
 * thread-safe (no shared state).
 *
 * The text comes from a JVM in a container that may be hostile, so nothing in it is trusted:
 * the text is bounded (JVM_TD_TEXT_MAX), every line too (a line longer than JVM_TD_LINE_MAX
 * bytes is skipped and ends the thread it is in), threads and frames are capped (the rest is
 * counted, not kept), numbers that overflow become 0, and every string is made valid UTF-8
 * under base/text.h's rule (control characters and bad bytes become '?'). NUL bytes are bad
 * bytes like any other: they do not end the text.
 *
 * What is read of each thread (the rest, the SMR info, "JNI global refs", the "Locked ownable
 * synchronizers" after the blank line that ends a thread, is skipped):
 *   "contender-2" #15 daemon prio=5 os_prio=0 cpu=254.56ms ... nid=0x21f7 waiting for ...
 *      java.lang.Thread.State: BLOCKED (on object monitor)
 *   	at JavaWork.holdLock(JavaWork.java:54)
 *   	- waiting to lock <0x000000069ec19790> (a java.lang.Object)
 * The name runs from the line's first '"' to its last '"' that is followed by " #", " daemon ",
 * " prio=" or " os_prio=": HotSpot prints the name verbatim, so it may hold quotes, but what
 * follows it is the JVM's own text, which holds no '"'. A thread without "#N" is one of the
 * JVM's own (VM Thread, GC threads): kept, with java false and no state or frames.
 */
#ifndef SLIDEOPS_JVM_THREADDUMP_H
#define SLIDEOPS_JVM_THREADDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest text parsed (the attach answer's own cap, JVM_ATTACH_ANSWER_MAX). */
#define JVM_TD_TEXT_MAX (8u << 20)
/* Longest line read; a longer one is skipped. */
#define JVM_TD_LINE_MAX 4096
/* Threads kept; a dump with more keeps the first and sets truncated. */
#define JVM_TD_MAX_THREADS 4096
/* Frames kept per thread (more are counted in nframes_total). */
#define JVM_TD_MAX_FRAMES 64
/* Frames kept in all threads (about 21 MiB): past it frames are counted, not kept. */
#define JVM_TD_MAX_TOTAL_FRAMES 65536
#define JVM_TD_NAME_MAX 128
#define JVM_TD_FRAME_MAX 256

struct jvm_td_frame {
	char method[JVM_TD_FRAME_MAX]; /* "JavaWork.holdLock" */
	char file[64];		       /* "JavaWork.java", "" when unknown or native */
	uint32_t line;		       /* 0: unknown */
	bool native;		       /* "(Native Method)" */
};

struct jvm_td_thread {
	char name[JVM_TD_NAME_MAX];
	bool java; /* has "#N": a Java thread */
	bool daemon;
	uint32_t nid;	       /* the OS thread id in the JVM's own pid namespace; 0: unknown */
	char state[32];	       /* "RUNNABLE", "BLOCKED", "WAITING", "TIMED_WAITING", ..., "" */
	char state_detail[48]; /* "on object monitor", "sleeping", "parking", "" */
	/* The first lock line "waiting to lock", "waiting on", "parking to wait for" or "waiting to
	 * re-lock in wait()", as "java.lang.Object <0x000000069ec19790>"; "" */
	char waiting_for[160];
	char holds[160];	     /* the first "locked <0x...> (a X)": "X <0x...>"; "" */
	size_t nframes;		     /* kept in frames, at most JVM_TD_MAX_FRAMES */
	size_t nframes_total;	     /* all the frame lines of the thread */
	struct jvm_td_frame *frames; /* nframes entries, innermost first; owned */
};

struct jvm_threaddump {
	struct jvm_td_thread *threads; /* in the dump's order */
	size_t nthreads;
	bool truncated; /* there were more than JVM_TD_MAX_THREADS */
};

/*
 * Parses @text[0..@len) (need not be NUL-terminated; a NUL is a bad byte, see above). Returns
 * 0 and *@out (the caller's: free with jvm_threaddump__free); -ENODATA (no thread header in
 * it, @text NULL or @len 0), -EFBIG (@len over JVM_TD_TEXT_MAX), -EINVAL (@out NULL),
 * -ENOMEM. Memory is bounded by the caps: at most JVM_TD_MAX_THREADS threads and
 * JVM_TD_MAX_FRAMES frames each (sizeof(struct jvm_td_frame) = 328 bytes), whatever the text.
 */
int jvm_threaddump_parse(const char *text, size_t len, struct jvm_threaddump **out);
/* Accepts NULL. */
void jvm_threaddump__free(struct jvm_threaddump *td);
/*
 * The first thread whose nid is @nid (linear search), borrowed until @td is freed; NULL when
 * there is none, @td is NULL or @nid is 0 (unknown).
 */
const struct jvm_td_thread *jvm_threaddump__find(const struct jvm_threaddump *td, uint32_t nid);

#endif
