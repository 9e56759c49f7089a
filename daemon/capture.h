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

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/question.h"
#include "daemon/sampler.h"

#define CAPTURE_MAX_STEPS 8
#define CAPTURE_MAX_NOTES 16
#define CAPTURE_MAX_PIDS 64
#define CAPTURE_BUSY_MSG "a capture is already running on this server"
/* Exit status of `capture` when another capture holds the lock. */
#define CAPTURE_EXIT_BUSY 3

enum target_kind {
	TARGET_SERVER = 0,
	TARGET_PIDS,
};

struct capture_target {
	enum target_kind kind;
	uint32_t pids[CAPTURE_MAX_PIDS];
	size_t npids;
};

struct capture_step {
	char text[512];
};

/* Progress: called when a step starts and about once a second while it runs. */
typedef void (*capture_progress_fn_t)(void *ctx, int step, int nsteps, const char *text,
				      double elapsed_s);

struct capture_opts {
	enum question question;
	struct capture_target target;
	unsigned int duration_s;	/* 1..60 */
	unsigned int freq_hz;		/* default 99 */
	const char *out_dir;		/* where the four files go */
	capture_progress_fn_t progress;	/* may be NULL */
	void *progress_ctx;
	volatile sig_atomic_t *stop;	/* set to stop early (SIGINT/SIGTERM); may be NULL */
	const char *lock_path;		/* default /run/slideops-profiler.lock */
	const char *proc_root;		/* default /proc */
};

struct capture_result {
	struct profile *profile;
	struct report *report;
	char answer[1024];
	char *notes[CAPTURE_MAX_NOTES];
	size_t nnotes;
	struct sampler_stats stats;
	int64_t start_ns;		/* wall clock */
	double sampled_s;		/* how long sampling ran */
	double result_s;		/* end of sampling -> files written */
	uint64_t samples;		/* on-CPU samples of the target */
	uint64_t lost;			/* samples lost to full maps */
};

/* Validates options: question, duration, target. Returns 0 or -EINVAL with @err (a one-line
 * reason) filled. */
int capture_validate(const struct capture_opts *opts, char *err, size_t size);

/* The numbered steps in plain words. Returns the number of steps. */
int capture_plan(const struct capture_opts *opts, struct capture_step *steps, int max);

/*
 * Runs the capture and writes the four files. Returns 0 with @out (caller frees with
 * capture_result__free); -EBUSY when another capture runs; -EPERM when the server is not
 * ready; another -errno with @err filled with a one-line reason.
 */
int capture_run(const struct capture_opts *opts, struct capture_result **out, char *err,
		size_t size);

void capture_result__free(struct capture_result *r);

/* "this server", "process 1234", "3 processes" into @buf. Returns @buf. */
const char *capture_target_text(const struct capture_target *t, char *buf, size_t size);

#endif
