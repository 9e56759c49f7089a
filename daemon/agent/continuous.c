// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/continuous.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "daemon/capture/kept.h"

#define CONTINUOUS_MSG_MAX 1024
/* A window's directory holds its four files. */
#define WINDOW_DIR_DEPTH 4
/* After a window that failed, the next one waits this long (no busy loop on a broken disk). */
#define RETRY_WAIT_MS 5000

struct continuous {
	struct continuous_opts o;
	struct jobs_opts jobs; /* copied: the thread outlives the caller's stack */
	struct capture_kept *kept;
	pthread_t thread;
	bool started;
	volatile sig_atomic_t stop;
};

/* The stored window's job: a cpu profile of the server, asked by nobody but the config. */
static void window_job(const struct continuous *c, struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->origin = JOB_NODE;
	j->target.kind = TARGET_SERVER;
	j->question = Q_CPU;
	j->duration_s = c->o.window_s;
	snprintf(j->who, sizeof(j->who), "continuous");
	snprintf(j->service, sizeof(j->service), "server");
	store_make_id(clock_real_ns(), j->id);
}

/* One window: sampled (the sampler runs since the last one), named, written, stored, spooled.
 * Returns 0 or -errno (logged). */
static int one_window(struct continuous *c, struct job *j)
{
	struct capture_opts o = {
		.question = Q_CPU,
		.target = { .kind = TARGET_SERVER },
		.duration_s = c->o.window_s,
		.to_store = true,
		.stop = &c->stop,
		.name_fn = c->jobs.name_fn,
		.name_ctx = c->jobs.name_ctx,
		.kept = c->kept,
	};
	char dir[600], err[CONTINUOUS_MSG_MAX] = "";
	struct capture_result *r = NULL;
	struct store_meta *m = NULL;
	int ret, rm;

	window_job(c, j);
	snprintf(dir, sizeof(dir), "%s/continuous-%s", c->jobs.captures_dir, j->id);
	o.out_dir = dir;
	ret = capture_run(&o, &r, err, sizeof(err));
	if (!ret && !c->stop)
		ret = jobs_keep(&c->jobs, j, c->o.window_s, r, dir, true, &m, err, sizeof(err));
	if (ret && !c->stop)
		pr_warn("continuous profiling: window %s not stored: %s", j->id,
			err[0] ? err : strerror(-ret));
	else if (!ret && !c->stop)
		pr_debug("continuous profiling: window %s stored (%llu samples)", m->id,
			 (unsigned long long)r->samples);
	rm = rm_tree_at(AT_FDCWD, dir, WINDOW_DIR_DEPTH);
	if (rm && rm != -ENOENT)
		pr_warn_errno(rm, "cannot remove %s", dir);
	free(m);
	capture_result__free(r);
	return ret;
}

/* Sleeps @ms or until stopped. */
static void wait_ms(struct continuous *c, int ms)
{
	struct timespec ts = { 0, 100 * 1000000L };

	for (; ms > 0 && !c->stop; ms -= 100)
		nanosleep(&ts, NULL);
}

/* /metrics: how the window ended (@ret), and what the caches hold now. */
static void publish(struct continuous *c, int ret)
{
	struct api_metrics *m = c->jobs.metrics;
	struct capture_kept_stats st;

	if (!m)
		return;
	__atomic_add_fetch(ret ? &m->continuous_failed : &m->continuous_stored, 1,
			   __ATOMIC_RELAXED);
	capture_kept__stats(c->kept, &st);
	__atomic_store_n(&m->continuous_processes, (uint64_t)st.sym_processes, __ATOMIC_RELAXED);
	__atomic_store_n(&m->continuous_unwind_bytes, st.unwind_table_bytes, __ATOMIC_RELAXED);
}

/* Loads the sampler (seconds of the kernel's verifier: on this thread, not the agent's start).
 * Returns 0 or -errno (logged). */
static int load(struct continuous *c)
{
	struct capture_kept_opts ko = { .freq_hz = c->o.freq_hz,
					.name_fn = c->jobs.name_fn,
					.name_ctx = c->jobs.name_ctx };
	char err[CONTINUOUS_MSG_MAX];
	int ret;

	ret = capture_kept__new(&ko, &c->kept, err, sizeof(err));
	if (ret) {
		pr_err("continuous profiling cannot start: %s", err);
		return ret;
	}
	pr_info("continuous profiling: the whole server at %u Hz, a profile every %u s",
		capture_kept__hz(c->kept), c->o.window_s);
	return 0;
}

static void *thread_main(void *arg)
{
	struct continuous *c = arg;
	struct job *j = malloc(sizeof(*j));
	int ret;

	if (!j || load(c)) {
		if (!j)
			pr_err("continuous profiling: out of memory, stopped");
		free(j);
		return NULL;
	}
	while (!c->stop) {
		ret = one_window(c, j);
		if (c->stop)
			break;
		publish(c, ret);
		if (ret)
			wait_ms(c, RETRY_WAIT_MS);
	}
	free(j);
	return NULL;
}

int continuous__new(const struct continuous_opts *opts, struct continuous **out)
{
	struct continuous *c;
	int ret;

	if (!opts || !opts->jobs || !opts->jobs->store || !opts->jobs->captures_dir)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *opts;
	c->jobs = *opts->jobs;
	c->o.jobs = &c->jobs;
	if (!c->o.window_s)
		c->o.window_s = 60;
	ret = -pthread_create(&c->thread, NULL, thread_main, c);
	if (ret) {
		pr_err_errno(ret, "continuous profiling: cannot start its thread");
		continuous__free(c);
		return ret;
	}
	c->started = true;
	*out = c;
	return 0;
}

void continuous__free(struct continuous *c)
{
	if (!c)
		return;
	c->stop = 1;
	if (c->started)
		pthread_join(c->thread, NULL);
	capture_kept__free(c->kept);
	free(c);
}
