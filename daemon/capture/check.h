/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check: the Performance tab as data — ready or not and why, the runtime of each process of
 * the target, kernel and processor, every question with available/unavailable and the reason,
 * and the languages table. The CLI prints it; the daemon's API serves the same JSON.
 */
#ifndef SLIDEOPS_CHECK_H
#define SLIDEOPS_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroups/resolver.h"
#include "daemon/capture/question.h"
#include "daemon/capture/target.h"

struct check_opts {
	struct capture_target target;
	const char *proc_root;	 /* default /proc */
	owner_name_fn_t name_fn; /* may be NULL */
	void *name_ctx;
};

/* With the runtime bits: a Go program of the target serves net/http/pprof (runtimes/go_pprof). */
#define CHECK_GO_PPROF (1u << 31)
/* With the runtime bits: a JVM of the target disables its attach mechanism. */
#define CHECK_JVM_NO_ATTACH (1u << 30)
/* With the runtime bits: a Node.js of the target cannot have its inspector opened (it does not
 * catch SIGUSR1, or it is older than NODE_SOURCE_MIN_MAJOR). */
#define CHECK_NODE_NO_INSPECTOR (1u << 29)

/*
 * Why @q cannot be answered for a target whose processes run these runtimes (bit per
 * enum runtime_kind, plus CHECK_GO_PPROF, CHECK_JVM_NO_ATTACH and CHECK_NODE_NO_INSPECTOR), or
 * NULL when it can. memory-held and memory-alloc need a JVM that lets us attach
 * (daemon/capture/jvm_source.h), a Node.js whose inspector can be opened, or
 * a Go program that serves net/http/pprof; so does locks for a target of Go programs only
 * (their waits on a sync.Mutex never reach the kernel). @go_missing says why a Go
 * program has no endpoint ("process 12 (app): it listens on no TCP port"; may be NULL). The
 * reason is a constant or written to @buf.
 */
const char *check_question_reason(enum question q, enum target_kind kind, unsigned int runtimes,
				  const char *go_missing, char *buf, size_t size);

/* What check found: one JSON document (fields in docs/cli.md) and what `check` prints. */
struct check_result {
	char *json; /* malloc'd */
	char *text; /* malloc'd */
	bool ready; /* false: the server cannot profile now (the text says why) */
};

/*
 * Runs the checks. Returns 0 with @out filled (free with check_result__fini), whether the
 * server is ready or not (@out->ready). Returns -ENOENT with @err filled when the target matches
 * nothing, -ENOMEM, or another -errno; @out is untouched then.
 */
int check_run(const struct check_opts *o, struct check_result *out, char *err, size_t size);
/* Frees what @r holds (not @r). */
void check_result__fini(struct check_result *r);

#endif
