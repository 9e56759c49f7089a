/* SPDX-License-Identifier: Apache-2.0 */
/*
 * continuous: the agent's continuous profiling (config `continuous: true`, docs/continuous.md).
 * One thread samples the whole server at continuous_hz with a sampler loaded once
 * (daemon/capture/kept.h) and, every continuous_window_seconds, stores the window as a profile
 * of its own (kept continuous_retention_hours, never listed in past profiles) and spools it to
 * the cluster API and Pyroscope like any profile. It takes no capture lock: a requested capture
 * runs at once beside it, at its own rate. /metrics counts the windows and shows what its
 * caches hold (jobs_opts.metrics).
 */
#ifndef SLIDEOPS_AGENT_CONTINUOUS_H
#define SLIDEOPS_AGENT_CONTINUOUS_H

#include "daemon/agent/jobs.h"

struct continuous_opts {
	unsigned int freq_hz;  /* 0: 19 */
	unsigned int window_s; /* 5..60; 0: 60 */
	/* the store, the sink, the node's name, the captures' directory and the Service namer
	 * (the requested captures' own) */
	const struct jobs_opts *jobs;
};

struct continuous;

/* Starts the thread, which loads the sampler (a failure to load is logged, and the agent runs
 * on without continuous profiling) and then takes window after window. Returns 0, or -errno
 * (logged). */
int continuous__new(const struct continuous_opts *opts, struct continuous **out);

/* Stops the window running (it is not stored), joins the thread and unloads. Accepts NULL. */
void continuous__free(struct continuous *c);

#endif
