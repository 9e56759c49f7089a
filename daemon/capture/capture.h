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

#include "cgroups/resolver.h"
#include "daemon/capture/go_source.h"
#include "daemon/capture/question.h"
#include "daemon/capture/source.h"
#include "daemon/capture/target.h"

#define CAPTURE_MAX_STEPS 8
#define CAPTURE_MAX_NOTES 16
/* What plan says about overhead: the figure measured by bench/ (docs/benchmarks.md). */
#define CAPTURE_OVERHEAD_TEXT "about 1% of one CPU while sampling"
/* wall adds work at every context switch: it grows with the switch rate (bench/, issue 4). */
#define CAPTURE_OVERHEAD_WALL_TEXT                                                             \
	"about 1% of one CPU while sampling, plus about 6 microseconds per context switch of "  \
	"the target"
/* Measured per event with kernel.bpf_stats_enabled (docs/benchmarks.md). */
#define CAPTURE_OVERHEAD_LOCKS_TEXT "about 6 microseconds per lock wait that sleeps"
#define CAPTURE_OVERHEAD_MEMORY_TEXT "about 6 microseconds per 4 KiB page touched for the first time"
#define CAPTURE_BUSY_MSG "a capture is already running on this server"
/* Exit status of `capture` when another capture holds the lock. */
#define CAPTURE_EXIT_BUSY 3

struct capture_step {
	char text[1024];
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
	owner_name_fn_t name_fn;	/* names Services (Kubernetes, config rules); may be NULL */
	void *name_ctx;
};

/* One thread of a `threads` capture: how its time split, and what it was doing. */
struct capture_thread {
	uint32_t tid, pid;
	char name[16];			/* thread name */
	char process[16];
	char owner[OWNER_NAME_MAX + 32];
	double running, runnable, waiting;	/* percent of the snapshots that saw it */
	struct {
		char reason[40];	/* "futex", "read", "clock_nanosleep" */
		double share;		/* percent of the snapshots */
	} waits[4];
	size_t nwaits;
	char function[256];		/* its dominant function */
};

/* The effective duration: `threads` is always a 5 s snapshot series. */
#define CAPTURE_THREADS_SECONDS 5
unsigned int capture_duration(const struct capture_opts *opts);

struct capture_result {
	struct profile *profile;
	struct report *report;
	char answer[1024];
	char *notes[CAPTURE_MAX_NOTES];
	size_t nnotes;
	struct source_stats stats;
	int64_t start_ns;		/* wall clock */
	double sampled_s;		/* how long sampling ran */
	double result_s;		/* end of sampling -> files written */
	uint64_t samples;		/* on-CPU samples of the target */
	uint64_t lost;			/* samples lost to full maps */
	uint64_t others;		/* on-CPU samples of processes outside the target */
	uint32_t *pids;			/* the target's processes seen during the capture */
	size_t npids;
	size_t nexited;			/* how many of them exited during the capture */
	struct capture_thread *threads;	/* threads: every thread seen */
	size_t nthreads;
};

/* Validates options: question, duration, target. Returns 0 or -EINVAL with @err (a one-line
 * reason) filled. */
int capture_validate(const struct capture_opts *opts, char *err, size_t size);

/* What a capture will read from the target's runtimes (Go programs' net/http/pprof). */
struct capture_target_info {
	int nprocs;			/* the target's processes now; -1 unknown */
	size_t ngo;			/* Go programs whose pprof endpoint was found */
	struct {
		uint32_t pid;
		char comm[16];
		char host[48];
		uint16_t port;
	} go[GO_SOURCE_MAX_PROCS];
	size_t ngo_missing;		/* Go programs without one */
	char go_missing[320];		/* the first: "process 12 (app): it listens on no TCP port" */
	size_t nother;			/* processes that are not Go programs */
	bool goroutines;		/* threads: every process is Go with an endpoint */
	char refuse[768];		/* non-empty: why the question cannot be answered */
};

/*
 * The numbered steps in plain words; @info (from capture_inspect(); NULL: not known) says how
 * many processes the target has and which Go endpoints will be read. Returns the number of
 * steps.
 */
int capture_plan(const struct capture_opts *opts, const struct capture_target_info *info,
		 struct capture_step *steps, int max);

/*
 * Counts the target's processes now (0 for a server). Returns the count, or -ENOENT with @err
 * naming what exists, or -errno.
 */
int capture_count_target(const struct capture_opts *opts, char *err, size_t size);

/*
 * capture_count_target() and, for the questions Go programs answer themselves (memory-held,
 * memory-alloc, locks, threads), the runtime of each process and its pprof endpoint. Returns
 * the count as capture_count_target(); @info->refuse says when the question cannot be answered.
 */
int capture_inspect(const struct capture_opts *opts, struct capture_target_info *info,
		    char *err, size_t size);

/*
 * Runs the capture and writes the four files. Returns 0 with @out (caller frees with
 * capture_result__free); -EBUSY when another capture runs; -EPERM when the server is not
 * ready; another -errno with @err filled with a one-line reason.
 */
int capture_run(const struct capture_opts *opts, struct capture_result **out, char *err,
		size_t size);

void capture_result__free(struct capture_result *r);


#endif
