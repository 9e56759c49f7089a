/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_source: what HotSpot JVMs say about themselves, for the questions eBPF cannot answer
 * (memory-alloc, memory-held) or answers without the JVM's names (locks): read through the
 * attach protocol (runtimes/jvm/jvm_attach.h) from each JVM of the target, merged into the
 * capture's profile with the process, its owner and language Java.
 *
 * Two ways, per JVM (docs/jvm.md, "Memory and locks"):
 * - async-profiler, when this agent has it (capture_opts.async_profiler): its library is copied
 *   into a directory of ours in the container's /tmp (base/safe_place.h: O_NOFOLLOW walk,
 *   O_EXCL, owned by the JVM's uid, sha256 checked after writing), loaded with the attach
 *   protocol's `load <path> true start,...`, stopped with `stop,file=...` at the end; its
 *   collapsed output is read back through the safe opener (runtimes/jvm/jvm_asprof.h);
 * - else the JVM's own Flight Recorder: a settings file of ours placed the same way,
 *   `JFR.start` at the start, `JFR.stop` at the end (which writes it into our directory)
 *   (runtimes/jvm/jvm_jfrctl.h), the file parsed in C (runtimes/jvm/jfr.h).
 *
 *   memory-alloc  allocation samples of the capture: bytes (and sampled objects) by stack,
 *                 under the allocated class
 *   memory-held   objects sampled as they were allocated during the capture and still held
 *                 after a garbage collection at its end, by allocation stack
 *   locks         monitor enters and parks on a lock (not on a condition: that is a wait for
 *                 a signal) by stack, under the lock's class; these replace the eBPF futex
 *                 waits of that JVM's Java threads (jvm_source__runtime_locks())
 *
 * Everything placed in a container is removed when the capture ends, fails or is stopped
 * (jvm_source__free()); a journal entry per placement (in @journal, on the host) lets the next
 * capture remove what a killed agent left (jvm_source_leftovers()), and stop its recording.
 */
#ifndef SLIDEOPS_JVM_SOURCE_H
#define SLIDEOPS_JVM_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"

struct profile;
struct prof_labels;

/* Most JVMs of one capture read this way. */
#define JVM_SOURCE_MAX_PROCS 8
/* Largest output file read back (a JFR dump, async-profiler's collapsed text). */
#define JVM_SOURCE_MAX_OUTPUT (64u << 20)
/* Names of the JVM's /tmp looked at for the JFR repository our recording made. */
#define JVM_SOURCE_MAX_TMP_NAMES 4096
/* Space a location must have free for our directory (the JVM writes its output there). */
#define JVM_SOURCE_NEED_BYTES (4u << 20)
/* Largest async-profiler library copied (the seed says "under 1 MB"; leave room). */
#define JVM_SOURCE_MAX_LIB (8u << 20)

struct jvm_source;

struct jvm_source_opts {
	enum question question;
	const char *proc_root;	    /* NULL: /proc */
	const char *async_profiler; /* host path of libasyncProfiler.so; NULL or absent: JFR */
	const char *journal;	    /* host directory of the placement journal; NULL: none */
	unsigned int duration_s;    /* the capture's: what runs in a JVM stops by itself after
				    * it and JVM_SOURCE_SPARE_S (if we were killed) */
};

#define JVM_SOURCE_SPARE_S 120
/* How long a JVM async-profiler was loaded into is watched for a crash (jvm_source_leftovers):
 * one that exits or writes hs_err_pid<N>.log within it gets no agent again. */
#define JVM_SOURCE_WATCH_S 600

/* True when @q is read from the JVM itself for a target's JVMs. */
bool jvm_source_question(enum question q);

/* Returns 0, -ENOMEM, or -errno reading the async-profiler library (a note then: JFR is used). */
int jvm_source__new(const struct jvm_source_opts *o, struct jvm_source **out);
/* Stops what still runs in the JVMs and removes everything placed; accepts NULL. */
void jvm_source__free(struct jvm_source *js);

/* Adds JVM process @pid (@comm, Java @version as runtime detection found it: "17"). Returns 0,
 * -EEXIST, -E2BIG past JVM_SOURCE_MAX_PROCS. */
int jvm_source__add(struct jvm_source *js, uint32_t pid, const char *comm, const char *version);
size_t jvm_source__count(const struct jvm_source *js);
/* True when the async-profiler library is used; its size and sha256 hex (for the plan). */
bool jvm_source__async_profiler(const struct jvm_source *js, size_t *size, const char **sha256);

/* Places our files and starts recording in each JVM; failures become notes. */
void jvm_source__start(struct jvm_source *js);

typedef void (*jvm_labels_fn_t)(void *ctx, uint32_t pid, struct prof_labels *labels);
/*
 * Ends the recordings and adds what each JVM recorded to @dst (the question's sample types,
 * source_profile_types()), labelled by @labels (language Java). Removes what was placed.
 * Failures of one JVM become notes. Returns 0 or -ENOMEM.
 */
int jvm_source__finish(struct jvm_source *js, struct profile *dst, jvm_labels_fn_t labels,
		       void *ctx);

/* locks: the JVMs whose own lock events were read (their Java threads' futex waits are left
 * out of the eBPF profile); @pids borrowed. */
size_t jvm_source__runtime_locks(const struct jvm_source *js, const uint32_t **pids);

size_t jvm_source__notes(const struct jvm_source *js, const char *const **notes);

/*
 * Removes what a capture killed before its end left in containers, as its journal entries in
 * @journal say: our directory (only names of ours, walked as base/safe_place.h does) and the
 * recording or profiler it started, in processes that still run with the same start time.
 * Also watches the JVMs async-profiler was loaded into (JVM_SOURCE_WATCH_S). Call with the
 * capture lock held (no capture runs). Returns the number of placement entries handled.
 */
int jvm_source_leftovers(const char *journal, const char *proc_root);

#endif
