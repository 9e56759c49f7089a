/* SPDX-License-Identifier: Apache-2.0 */
/*
 * node_source: what V8 says about a Node.js process of a Service or --pid target (never a
 * server profile), through its inspector opened inside the container for the capture and closed
 * again (runtimes/node/node_inspector.h), over the DevTools protocol:
 *
 *   cpu, wall     V8's CPU profiler (Profiler.start, every NODE_SOURCE_INTERVAL_US) for the
 *                 JavaScript stacks; our eBPF samples keep the shares, the two are matched by
 *                 time (daemon/capture/nodeframes.h)
 *   memory-alloc  V8's sampling heap profiler with the objects collected during the capture
 *                 kept: where the capture's allocations were made
 *   memory-held   the same, keeping only the sampled objects still live after a collection at
 *                 the end: what was allocated during the capture and is still held
 *
 * Each process that cannot be read this way (its inspector cannot be opened, is another's, or
 * answers badly) gets a note and keeps what eBPF reads. Everything started is stopped and the
 * inspector closed when the capture ends, fails or is stopped (node_source__free()); a journal
 * entry per inspector opened lets the next capture close one a killed agent left open
 * (node_source_leftovers()).
 */
#ifndef SLIDEOPS_NODE_SOURCE_H
#define SLIDEOPS_NODE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"

struct profile;
struct prof_labels;
struct nodeframes;

#define NODE_SOURCE_MAX_PROCS 8
/* V8's CPU profiler's interval: our 99 Hz samples are matched with its samples */
#define NODE_SOURCE_INTERVAL_US 1000
/* V8's sampling heap profiler: the mean bytes between samples (its default) */
#define NODE_SOURCE_HEAP_INTERVAL 32768
/* The oldest Node.js read this way (V8 11.3: the heap profiler's flags for collected objects) */
#define NODE_SOURCE_MIN_MAJOR 20

struct node_source_opts {
	enum question question;
	const char *proc_root; /* NULL: /proc */
	const char *journal;   /* host directory of the placement journal; NULL: none */
};

struct node_source;

/* True when @q is read from V8 for a target's Node.js processes. */
bool node_source_question(enum question q);

/* Returns 0 or -ENOMEM. */
int node_source__new(const struct node_source_opts *o, struct node_source **out);
/* Stops what runs in the processes and closes the inspectors opened; accepts NULL. */
void node_source__free(struct node_source *ns);

/* Adds process @pid (@comm, Node.js @version as detection found it: "20.20.2"). Returns 0,
 * -EEXIST, -E2BIG past NODE_SOURCE_MAX_PROCS. */
int node_source__add(struct node_source *ns, uint32_t pid, const char *comm, const char *version);
size_t node_source__count(const struct node_source *ns);

/* Opens each inspector and starts V8's profiler; failures become notes. */
void node_source__start(struct node_source *ns);

/* cpu, wall: the processes whose V8 profiler runs (their samples are to be timed); borrowed. */
size_t node_source__running(const struct node_source *ns, const uint32_t **pids);

typedef void (*node_labels_fn_t)(void *ctx, uint32_t pid, struct prof_labels *labels);
/*
 * Stops the profilers and closes the inspectors. cpu, wall: each V8 CPU profile goes to @nf,
 * for the samples' drain. memory: the samples are added to @dst (the question's sample types),
 * labelled by @labels (language Node.js). Failures of one process become notes. Returns 0 or
 * -ENOMEM.
 */
int node_source__finish(struct node_source *ns, struct profile *dst, node_labels_fn_t labels,
			void *ctx, struct nodeframes *nf);

size_t node_source__notes(const struct node_source *ns, const char *const **notes);

/*
 * Closes the inspectors a capture killed before its end left open, as the entries
 * "inspector-<pid>-<starttime>-<port>" of @journal say (written when one is opened, removed
 * when it is closed), in processes that still run with the same start time. Call with the
 * capture lock held. Returns the number of entries handled, or -errno.
 */
int node_source_leftovers(const char *journal, const char *proc_root);

/* Parses such an entry's name ("inspector-<pid>-<starttime>-<port>", pid and port not 0).
 * Returns 0 or -EINVAL. Pure. */
int node_source_parse_entry(const char *name, uint32_t *pid, unsigned long long *start,
			    uint16_t *port);

#endif
