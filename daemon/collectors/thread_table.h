/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thread_table: what every thread did during a `threads` capture: how its snapshots split
 * between running, runnable and each kind of wait, and its dominant stack (the stack with the
 * most time from the sampler). Bounded (THREAD_TABLE_MAX threads; more are counted, not kept).
 * Pure bookkeeping, no I/O. Not thread-safe.
 */
#ifndef SLIDEOPS_THREAD_TABLE_H
#define SLIDEOPS_THREAD_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct sampler_py_frame; /* daemon/collectors/collector.h */

#define THREAD_TABLE_MAX 16384
#define THREAD_MAX_WAITS 4
#define THREAD_REASON_LEN 40
#define THREAD_STACK_MAX 127

/* What a snapshot saw a thread doing. */
enum thread_state {
	THREAD_RUNNING = 0,
	THREAD_RUNNABLE,
	THREAD_WAITING, /* asleep; the reason says in what */
	THREAD_STATES,
};

struct thread_wait {
	char reason[THREAD_REASON_LEN]; /* "futex", "read", "clock_nanosleep", "disk" */
	uint32_t snapshots;
};

struct thread_entry {
	uint32_t tid, tgid;
	char comm[16];
	uint32_t snapshots;			    /* snapshots that saw it */
	uint32_t state[THREAD_STATES];		    /* of which in each state */
	struct thread_wait waits[THREAD_MAX_WAITS]; /* the commonest waits */
	size_t nwaits;
	/* dominant stack: the one with the most time in the sampler's counts */
	int64_t best_value;
	uint64_t ustack[THREAD_STACK_MAX];
	size_t nustack;
	uint64_t kstack[THREAD_STACK_MAX];
	size_t nkstack;
	int best_leaf; /* the sample's leaf kind (enum source_leaf) */
	char best_leaf_text[THREAD_REASON_LEN + 16];
	/* the dominant stack's CPython frames, leaf first (owned by the table; NULL: none) */
	struct sampler_py_frame *pyframes;
	size_t npyframes, cap_pyframes;
	uint32_t py_flags;
};

/* A stack offered for a thread (thread_table__offer()); pointers borrowed for the call. */
struct thread_stack {
	int64_t value; /* time it stands for */
	const uint64_t *ustack;
	size_t nustack;
	const uint64_t *kstack;
	size_t nkstack;
	int leaf;				 /* enum source_leaf */
	const char *leaf_text;			 /* may be NULL */
	const struct sampler_py_frame *pyframes; /* may be NULL */
	size_t npyframes;			 /* at most PY_MAX_FRAMES are kept */
	uint32_t py_flags;
};

struct thread_table;

int thread_table__new(struct thread_table **out);
void thread_table__free(struct thread_table *t);

/* Records one snapshot of thread @tid: its state and, when waiting, why. Returns 0, -ENOSPC
 * when the table is full (counted in thread_table__dropped), -ENOMEM. */
int thread_table__snapshot(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			   enum thread_state state, const char *reason);

/* Offers stack @st for @tid; kept, with its Python frames, if its value is the thread's
 * largest so far. Returns 0, -ENOSPC (table full, counted) or -ENOMEM. */
int thread_table__offer(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			const struct thread_stack *st);
/* thread_table__offer() of a stack without Python frames. */
int thread_table__offer_stack(struct thread_table *t, uint32_t tgid, uint32_t tid, const char *comm,
			      int64_t value, const uint64_t *ustack, size_t nustack,
			      const uint64_t *kstack, size_t nkstack, int leaf,
			      const char *leaf_text);

/* Entries sorted by tgid then tid; borrowed until the next change or free. */
const struct thread_entry *thread_table__entries(struct thread_table *t, size_t *n);
size_t thread_table__dropped(const struct thread_table *t);

#endif
