/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan: the numbered steps of a capture in plain words (what `plan` prints and `capture` shows
 * as progress), and what a capture will read from the target's runtimes (capture_inspect).
 * Every plan has the same five phases in the same order (enum capture_phase); the step of a
 * phase is looked up with capture_plan_step(), never assumed from its position.
 */
#ifndef SLIDEOPS_CAPTURE_PLAN_H
#define SLIDEOPS_CAPTURE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/go_source.h"
#include "daemon/capture/jvm_source.h"
#include "daemon/capture/node_source.h"

struct capture_opts;

#define CAPTURE_MAX_STEPS 8
/* What plan says about overhead: the figure measured by bench/ (docs/benchmarks.md). */
#define CAPTURE_OVERHEAD_TEXT "about 1% of one CPU while sampling"
/* wall adds work at every context switch: it grows with the switch rate (bench/, issue 4). */
#define CAPTURE_OVERHEAD_WALL_TEXT                                                             \
	"about 1% of one CPU while sampling, plus about 6 microseconds per context switch of " \
	"the target"
/* Measured per event with kernel.bpf_stats_enabled (docs/benchmarks.md). */
#define CAPTURE_OVERHEAD_LOCKS_TEXT "about 6 microseconds per lock wait that sleeps"
#define CAPTURE_OVERHEAD_MEMORY_TEXT \
	"about 6 microseconds per 4 KiB page touched for the first time"

/* What a step does; each plan has exactly one step per phase, in this order. */
enum capture_phase {
	CAPTURE_PHASE_BINARY,  /* the profiler binary is here */
	CAPTURE_PHASE_PREPARE, /* load the eBPF programs, or find the Go endpoint */
	CAPTURE_PHASE_SAMPLE,  /* sample, or wait and read the runtime's profiles */
	CAPTURE_PHASE_READ,    /* read back, name, group, verify */
	CAPTURE_PHASE_WRITE,   /* write the four files */
	CAPTURE_PHASE_COUNT,
};

struct capture_step {
	char text[1024];
	enum capture_phase phase;
};

/* What a capture will read from the target's runtimes (Go programs' net/http/pprof). */
struct capture_target_info {
	int nprocs; /* the target's processes now; -1 unknown */
	size_t ngo; /* Go programs whose pprof endpoint was found */
	struct {
		uint32_t pid;
		char comm[16];
		char host[48];
		uint16_t port;
	} go[GO_SOURCE_MAX_PROCS];
	size_t ngo_missing;   /* Go programs without one */
	char go_missing[320]; /* the first: "process 12 (app): it listens on no TCP port" */
	size_t nother;	      /* processes that are not Go programs */
	bool goroutines;      /* threads: every process is Go with an endpoint */
	/* HotSpot JVMs read through their attach mechanism (memory-alloc, memory-held, locks;
	 * daemon/capture/jvm_source.h) */
	size_t njvm;
	struct {
		uint32_t pid;
		char comm[16];
		char version[32]; /* "17" */
	} jvm[JVM_SOURCE_MAX_PROCS];
	/* Node.js processes read through their inspector (cpu, wall, memory-alloc, memory-held;
	 * daemon/capture/node_source.h) */
	size_t nnode;
	struct {
		uint32_t pid;
		char comm[16];
		char version[32]; /* "20.20.2" */
	} node[NODE_SOURCE_MAX_PROCS];
	/* async-profiler is copied in (else the JVMs' Flight Recorder is used): its size, sha256 */
	bool asprof;
	size_t asprof_size;
	char asprof_sha[65];
	char refuse[768]; /* non-empty: why the question cannot be answered */
};

/*
 * The numbered steps in plain words; @info (from capture_inspect(); NULL: not known) says how
 * many processes the target has and which Go endpoints will be read. Returns the number of
 * steps (at most @max; CAPTURE_MAX_STEPS always holds them all).
 */
int capture_plan(const struct capture_opts *opts, const struct capture_target_info *info,
		 struct capture_step *steps, int max);

/* The 1-based number of the step of @phase among @steps[0..@n), or 0 when none is. */
int capture_plan_step(const struct capture_step *steps, int n, enum capture_phase phase);

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
int capture_inspect(const struct capture_opts *opts, struct capture_target_info *info, char *err,
		    size_t size);

/*
 * The runtime of each of @pids and, for Go programs, their pprof endpoint (added to @gs, when
 * not NULL), the JVMs and Node.js processes the question reads;
 * fills @info (zeroed by the caller), with info->refuse when the question cannot be answered
 * for this target. Reads /proc and probes the endpoints.
 */
void capture_inspect_go(const struct capture_opts *opts, const uint32_t *pids, size_t n,
			struct go_source *gs, struct capture_target_info *info);

#endif
