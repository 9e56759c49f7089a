/* SPDX-License-Identifier: Apache-2.0 */
/*
 * go_source: what Go programs say about themselves through net/http/pprof, for the questions
 * eBPF cannot answer (memory-held: heap in use; memory-alloc: allocations) or answers only in
 * part (locks: a goroutine waiting on a sync.Mutex parks without a futex; threads: goroutines
 * are not threads). The endpoint of each process is found by runtimes/go_pprof, inside the
 * process's network namespace; profiles are decoded and merged into the capture's profile by
 * runtimes/go/profiles, labelled with the process, its owner and language Go.
 *
 *   memory-held    /debug/pprof/heap?gc=1 at the end: inuse_space, inuse_objects
 *   memory-alloc   /debug/pprof/allocs at the start and at the end: the difference
 *   locks          /debug/pprof/mutex and /debug/pprof/block at the start and at the end: the
 *                  differences (sync.Mutex waits of the block profile are left out when the
 *                  mutex profile is on: it holds the same waits, seen from the holder)
 *   threads        /debug/pprof/goroutine?debug=2 at the end: every goroutine, its state and
 *                  stack
 */
#ifndef SLIDEOPS_GO_SOURCE_H
#define SLIDEOPS_GO_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"
#include "runtimes/go/profiles.h"

struct profile;
struct prof_labels;

/* Most Go processes of one capture whose profiles are read. */
#define GO_SOURCE_MAX_PROCS 16
/* Bounds of one profile fetch. */
#define GO_SOURCE_FETCH_TIMEOUT_MS 5000
#define GO_SOURCE_MAX_BYTES (32u << 20)
#define GO_SOURCE_MAX_DECODED (64u << 20) /* a profile once ungzipped */

struct go_source;

/* True when @q reads a Go program's own profiles. */
bool go_source_question(enum question q);

int go_source__new(enum question q, const char *proc_root, struct go_source **out);
void go_source__free(struct go_source *g);

/*
 * Adds Go process @pid (named @comm) if its net/http/pprof endpoint is found. Returns 0 (added,
 * @port set), -ENOENT with @why (a fragment: "none of its TCP ports serves /debug/pprof/"),
 * -E2BIG past GO_SOURCE_MAX_PROCS, -EEXIST when already added, -ENOMEM.
 */
int go_source__add(struct go_source *g, uint32_t pid, const char *comm, uint16_t *port, char *why,
		   size_t size);
size_t go_source__count(const struct go_source *g);
/* The host of @pid's endpoint as used in URLs ("127.0.0.1", "[::1]") into @buf; "" if none. */
void go_source__endpoint(const struct go_source *g, uint32_t pid, char *buf, size_t size);

/* Takes the start snapshots (memory-alloc, locks). Failures become notes. */
void go_source__start(struct go_source *g);

typedef void (*go_labels_fn_t)(void *ctx, uint32_t pid, struct prof_labels *labels);

/*
 * Takes the end snapshots and adds what they say to @dst (whose sample types are the
 * question's: source_profile_types()). @labels fills each process's labels (owner, process;
 * language is set to Go). Failures of one process become notes; a process that stops
 * answering gets one note and no more requests. Returns 0 or -ENOMEM.
 */
int go_source__finish(struct go_source *g, struct profile *dst, go_labels_fn_t labels, void *ctx);

/* The notes of the capture (borrowed). */
size_t go_source__notes(const struct go_source *g, const char *const **notes);

/* Goroutines seen by a `threads` capture (runtimes/go/profiles.h), grouped by process, state
 * and function, most first. */
const struct go_goroutine_group *go_source__goroutines(const struct go_source *g, size_t *n,
						       uint64_t *total);

#endif
