/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capture: one capture from request to files, the steps of which `plan` prints and `capture`
 * runs (the same list, from capture_plan()). Used by the CLI and the daemon alike.
 *
 * Only one capture runs on a server at a time (a lock under /run that the kernel releases
 * when its holder dies, so a killed capture never blocks the next).
 */
#ifndef SLIDEOPS_CAPTURE_H
#define SLIDEOPS_CAPTURE_H

#include <stddef.h>

#include "daemon/capture/plan.h"
#include "daemon/capture/result.h"

#define CAPTURE_BUSY_MSG "a capture is already running on this server"
#define CAPTURE_LOCK_PATH "/run/slideops-profiler.lock" /* the default of opts->lock_path */
/* Where the image installs async-profiler (Dockerfile), the default of opts->async_profiler. */
#define CAPTURE_ASYNC_PROFILER "/opt/slideops/async-profiler/lib/libasyncProfiler.so"
/* The placement journal (daemon/capture/jvm_journal.h): the lock path and this. */
#define CAPTURE_JOURNAL_SUFFIX ".placed"
/* Exit status of `capture` when another capture holds the lock. */
#define CAPTURE_EXIT_BUSY 3

/* The effective duration: `threads` is always a 5 s snapshot series. */
#define CAPTURE_THREADS_SECONDS 5
unsigned int capture_duration(const struct capture_opts *opts);

/* Validates options: question, duration, target. Returns 0 or -EINVAL with @err (a one-line
 * reason) filled. */
int capture_validate(const struct capture_opts *opts, char *err, size_t size);

/*
 * Removes what a capture killed before its end left in JVMs' containers (the placement journal
 * beside @lock_path, NULL: CAPTURE_LOCK_PATH; daemon/capture/jvm_source.h), when no capture
 * runs: the agent calls it as it starts, and every capture does once it holds the lock.
 * Returns the number of leftovers handled, -EBUSY (a capture runs: it will do it) or -errno.
 */
int capture_leftovers(const char *lock_path, const char *proc_root);

/*
 * Runs the capture and writes the four files. Returns 0 with @out (caller frees with
 * capture_result__free); -EBUSY when another capture runs; -EPERM when the server is not
 * ready; another -errno with @err filled with a one-line reason (nothing is logged:
 * the caller says it once).
 */
int capture_run(const struct capture_opts *opts, struct capture_result **out, char *err,
		size_t size);

#endif
