/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request: the value of the capture annotation profiling.slideops.io/capture (SPEC 7,
 * docs/daemon.md), a pure parser:
 *
 *   question=cpu,duration=30
 *
 * Comma-separated key=value pairs in any order; spaces around keys and values are ignored.
 * Keys: `question` (required: cpu, wall, threads, locks, memory-growth, ... as SPEC 3 names
 * them) and `duration` (10, 30 or 60 seconds as the daemon's form offers; default 30; a
 * threads capture is always a 5 s snapshot and accepts any allowed duration). On a Node (a
 * whole-server profile) only the questions a server profile offers are allowed.
 *
 * No I/O, no globals: thread-safe; fuzzed by tests/fuzz/fuzz_request.c.
 */
#ifndef SLIDEOPS_REQUEST_H
#define SLIDEOPS_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/capture/question.h"

#define REQUEST_DEFAULT_DURATION 30
/* The longest value looked at (the annotation's bound, kube_parse.h KUBE_ANNOTATION_MAX). */
#define REQUEST_MAX_LEN 1023

struct capture_request {
	enum question question;
	unsigned int duration_s; /* 10, 30 or 60; 5 for threads */
};

/*
 * Parses @value (NUL-terminated) for a pod (@server false: the pod's Service) or the node
 * (@server true). Returns 0 with @out filled; -EINVAL with a one-line message in @err (@size
 * bytes, truncated to fit, may be NULL) that says what is wrong and what is allowed, in
 * printable ASCII, quoting at most a short piece of the input; @out untouched then.
 */
int request_parse(const char *value, bool server, struct capture_request *out, char *err,
		  size_t size);

/* The canonical form "question=cpu,duration=30" of @r into @buf ("question=threads" for
 * threads, whose duration is fixed): request_parse() reads it back the same. Returns @buf. */
const char *request_format(const struct capture_request *r, char *buf, size_t size);

#endif
