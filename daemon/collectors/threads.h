/* SPDX-License-Identifier: Apache-2.0 */
/*
 * threads: snapshots of every thread of the target from a BPF task iterator (bpf/threads.bpf.c):
 * state, where it sleeps in the kernel, user registers. daemon/capture/source.c takes one every 100 ms
 * during a `threads` capture. Not thread-safe.
 */
#ifndef SLIDEOPS_THREADS_H
#define SLIDEOPS_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/threads.h"

struct threads_opts {
	bool filter_tgids; /* only the tgids added with threads__add_tgid() */
	bool kthreads;	   /* include kernel threads */
};

/* Called for each thread of a snapshot; return 0 or -errno (stops the snapshot). */
typedef int (*threads_rec_fn_t)(void *ctx, const struct threads_rec *rec);

struct threads;

/* Opens, loads and attaches the iterator (CO-RE: the kernel's BTF is read). Returns 0 or
 * -errno (logged). */
int threads__new(const struct threads_opts *opts, struct threads **out);
void threads__free(struct threads *t);
int threads__add_tgid(struct threads *t, uint32_t tgid);
/* Takes one snapshot. Returns the number of threads or -errno. */
int threads__snapshot(struct threads *t, threads_rec_fn_t fn, void *ctx);

#endif
