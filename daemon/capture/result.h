/* SPDX-License-Identifier: Apache-2.0 */
/*
 * result: what a capture is asked (struct capture_opts) and what it found (struct
 * capture_result), shared by the capture and the writers of its files (summary). Types only,
 * and the result's destructor.
 */
#ifndef SLIDEOPS_CAPTURE_RESULT_H
#define SLIDEOPS_CAPTURE_RESULT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroups/resolver.h"
#include "daemon/capture/question.h"
#include "daemon/capture/source.h"
#include "daemon/capture/target.h"

struct go_goroutine_group;
struct capture_kept;
struct sampler;
struct symbolizer;
struct symstore;

#define CAPTURE_MAX_NOTES 16

/* Progress: called when a step starts and about once a second while it runs. */
typedef void (*capture_progress_fn_t)(void *ctx, int step, int nsteps, const char *text,
				      double elapsed_s);

struct capture_opts {
	enum question question;
	struct capture_target target;
	unsigned int duration_s; /* 1..60 */
	unsigned int freq_hz;	 /* default 99 */
	const char *out_dir;	 /* where the four files go */
	/* the agent: the files go on to its store, and the plan says so in words instead of
	 * naming its working directory */
	bool to_store;
	capture_progress_fn_t progress; /* may be NULL */
	void *progress_ctx;
	volatile sig_atomic_t *stop; /* set to stop early (SIGINT/SIGTERM); may be NULL */
	const char *lock_path;	     /* default /run/slideops-profiler.lock */
	const char *proc_root;	     /* default /proc */
	owner_name_fn_t name_fn;     /* names Services (Kubernetes, config rules); may be NULL */
	void *name_ctx;
	/* async-profiler's library for the JVM memory and lock questions (config key
	 * async_profiler); NULL: CAPTURE_ASYNC_PROFILER; "" or absent: the JVM's Flight Recorder */
	const char *async_profiler;
	/* continuous profiling: a window of this sampler kept loaded (daemon/capture/kept.h), a
	 * cpu profile of the server at its rate, taken without the capture lock; NULL: a capture
	 * that loads its own */
	struct capture_kept *kept;
	/* the agent's slot of a sampler kept loaded between captures (source_opts.keep_sampler):
	 * cpu, wall and threads load it once and begin on it after; NULL: each loads its own */
	struct sampler **keep_sampler;
	/* likewise a symbolizer (its ELF tables, kallsyms, perf maps) kept between captures: made
	 * by the first, then each capture forgets the processes that exited and the last one's
	 * refused files; NULL: each capture makes its own */
	struct symbolizer **keep_symbolizer;
	/* debug symbols uploaded for stripped builds (symbols/symstore.h): they name the frames
	 * the binary on the node cannot; NULL: none (borrowed) */
	struct symstore *symbols;
};

/* One thread of a `threads` capture: how its time split, and what it was doing. */
struct capture_thread {
	uint32_t tid, pid;
	char name[16]; /* thread name */
	char process[16];
	char owner[OWNER_NAME_MAX + 32];
	double running, runnable, waiting; /* percent of the snapshots that saw it */
	struct {
		char reason[40]; /* "futex", "read", "clock_nanosleep" */
		double share;	 /* percent of the snapshots */
	} waits[4];
	size_t nwaits;
	char function[256]; /* its dominant function */
	/* a Java thread (daemon/capture/jvmthreads.h): from the JVM's own thread dump, "" else */
	char java_name[128];  /* its Java name, whole */
	char java_state[96];  /* "BLOCKED (on object monitor)" */
	char java_lock[200];  /* "waiting to lock java.lang.Object <0x...>" or "holds ..." */
	char java_frame[352]; /* its innermost Java frame: "JavaWork.holdLock (JavaWork.java:54)" */
};

struct capture_result {
	struct profile *profile;
	struct report *report;
	char answer[1024];
	char *notes[CAPTURE_MAX_NOTES];
	size_t nnotes;
	struct source_stats stats;
	int64_t start_ns; /* wall clock */
	double sampled_s; /* how long sampling ran */
	double result_s;  /* end of sampling -> files written */
	uint64_t samples; /* on-CPU samples of the target */
	uint64_t lost;	  /* samples lost to full maps */
	uint64_t others;  /* on-CPU samples of processes outside the target */
	uint32_t *pids;	  /* the target's processes seen during the capture */
	size_t npids;
	size_t nexited;			/* how many of them exited during the capture */
	struct capture_thread *threads; /* threads: every thread seen */
	size_t nthreads;
	/* threads of Go programs that serve pprof: their goroutines, grouped (a copy) */
	struct go_goroutine_group *goroutines;
	size_t ngoroutines;
};

/* Frees @r and everything it owns; accepts NULL. */
void capture_result__free(struct capture_result *r);

#endif
