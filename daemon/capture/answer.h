/* SPDX-License-Identifier: Apache-2.0 */
/*
 * answer: the answer and the verification notes of a capture (SPEC section 5, "The answer" and
 * "Notes"), and the tables of the flame graph page (threads, goroutines). Pure: everything it
 * says comes from its arguments (no /proc, no files); thread-safe on distinct results.
 */
#ifndef SLIDEOPS_CAPTURE_ANSWER_H
#define SLIDEOPS_CAPTURE_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/capture.h"

struct flamegraph_opts;

/* A process of the target, as the capture watched it. */
struct answer_proc {
	uint32_t pid;
	char comm[16];
	double exited_at; /* seconds into sampling; < 0 while running */
};

/* A process whose functions could not be named, and why. */
struct answer_unreadable {
	uint32_t pid;
	char comm[16]; /* "" when unknown */
	int err;       /* -errno */
};

/* What the capture saw besides @r (all may be zero / NULL). */
struct answer_input {
	const struct answer_proc *procs; /* the target's processes, in the order seen */
	size_t nprocs;
	const struct answer_unreadable *unreadable;
	size_t nunreadable;
	uint64_t unattributed; /* samples of processes gone before they were read */
	bool goroutines;       /* threads of Go programs: @groups answers */
	size_t ngo;	       /* Go programs read */
	size_t njvm;	       /* JVMs read through their attach mechanism (memory, locks) */
	size_t nnode;	       /* Node.js processes read through V8's inspector */
	const struct go_goroutine_group *groups;
	size_t ngroups;
	uint64_t total;	 /* goroutines */
	size_t nrefused; /* files not read for names (symbolizer__refused()):
					 * unnamed frames are then not all "built without symbols" */
};

/* Most processes named one by one in the notes about processes that exited. */
#define ANSWER_MAX_EXIT_NOTES 4
/* Fewer on-CPU samples than this per second is "almost idle". */
#define ANSWER_FEW_SAMPLES_PER_SECOND 5

/* "process 12 (pipewait)", "Unit nginx.service", "Service billing" into @buf; returns @buf. */
const char *answer_target_who(const struct capture_opts *o, const struct answer_input *in,
			      char *buf, size_t size);

/*
 * Writes @r->answer (and @r->others) from @r->report, @r->samples, @r->stats, @r->threads and
 * @in. Never fails: a NULL report reads as an empty profile.
 */
void answer_write(const struct capture_opts *o, const struct answer_input *in,
		  struct capture_result *r);

/*
 * Adds the verification notes to @r (exited processes, few samples, unnamed frames, unreadable
 * processes, unattributed and lost samples, incomplete stacks) and sets @r->nexited, @r->lost.
 * Notes past CAPTURE_MAX_NOTES, or that cannot be allocated, are left out.
 */
void answer_notes(const struct capture_opts *o, const struct answer_input *in,
		  struct capture_result *r);

/* Adds one note to @r. Returns 0, -ENOSPC past CAPTURE_MAX_NOTES, -ENOMEM. */
int answer_add_note(struct capture_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The table of the flame graph page: one row per thread of @r (threads), or per goroutine group
 * of @in (goroutines). Fills @fg's table fields with cells the caller frees with
 * answer_table_free(). Returns 0 or -ENOMEM (@fg then holds no table).
 */
int answer_threads_table(const struct capture_result *r, struct flamegraph_opts *fg);
int answer_goroutines_table(const struct answer_input *in, struct flamegraph_opts *fg);
/* Frees the cells of the table of @fg (none: nothing). */
void answer_table_free(struct flamegraph_opts *fg);

#endif
