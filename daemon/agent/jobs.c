// SPDX-License-Identifier: Apache-2.0
/*
 * jobs: the one-capture worker (jobs.h). The slot, the progress and the stop flags are under
 * js->lock; the worker runs a job outside it.
 */
#include "daemon/agent/jobs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>

#include "base/fileio.h"
#include "base/log.h"
#include "daemon/agent/audit.h"
#include "daemon/agent/sink.h"
#include "daemon/collectors/sampler.h"
#include "symbols/symbolizer.h"

#define SUMMARY_MAX_BYTES (16u << 20)
#define STOPPED_MSG "the agent stopped during the capture; annotate again to retry"
/* A capture's directory holds its files; a few levels are room enough. */
#define CAPTURE_DIR_DEPTH 16

struct jobs {
	struct jobs_opts o;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool sync_init;
	bool ready; /* the agent is up: run what is queued */
	bool stopping;
	struct job *job; /* queued or running; NULL when idle */
	bool have_progress;
	struct api_progress progress;
	pthread_t worker;
	bool worker_started;
	/* the worker's, kept loaded between captures (jobs_opts.keep_sampler) */
	struct sampler *sampler;
	struct symbolizer *sym;
	volatile sig_atomic_t stop_capture;
};

static void count(uint64_t *counter, uint64_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

/* capture_run() takes the lock itself; this only answers a request early with the right
 * message. */
bool jobs_machine_busy(void)
{
	int fd = open(CAPTURE_LOCK_PATH, O_RDONLY | O_CLOEXEC);
	bool busy = false;

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		busy = errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

void jobs_audit(struct audit *a, const struct job *j, const char *result, const char *detail)
{
	char target[TARGET_NAME_MAX + 16], det[JOB_MSG_MAX + 64];
	struct audit_entry e = { .what = AUDIT_CAPTURE,
				 .who = j->who,
				 .target = target,
				 .result = result,
				 .detail = det };
	int err;

	api_format_target(&j->target, target, sizeof(target));
	snprintf(det, sizeof(det), "question=%s duration=%u%s%s", question_info(j->question)->id,
		 j->duration_s, detail ? ": " : "", detail ? detail : "");
	err = audit__log(a, &e);
	if (err)
		pr_err_errno(err, "audit: cannot record the capture of %s by %s", target, j->who);
}

void jobs_audit_raw(struct audit *a, const struct job *j, const char *result, const char *detail)
{
	char target[TARGET_NAME_MAX + 16], raw[AUDIT_RAW_MAX + 1], det[JOB_MSG_MAX + 64];
	struct audit_entry e = { .what = AUDIT_CAPTURE,
				 .who = j->who,
				 .target = target,
				 .result = result,
				 .detail = det };
	int err;

	api_format_target(&j->target, target, sizeof(target));
	if (j->target.kind == TARGET_SERVER && j->origin == JOB_POD)
		snprintf(target, sizeof(target), "-"); /* the pod's Service is not known */
	snprintf(det, sizeof(det), "request=%s%s%s",
		 audit_raw_request(j->request, strlen(j->request), raw, sizeof(raw)),
		 detail ? ": " : "", detail ? detail : "");
	err = audit__log(a, &e);
	if (err)
		pr_err_errno(err, "audit: cannot record the capture of %s by %s", target, j->who);
}

/* --- the queue -------------------------------------------------------------------------- */

/* A new job's progress: "running", waiting to start. Called under js->lock. */
static void reset_progress(struct jobs *js, const struct job *j)
{
	struct api_progress *p = &js->progress;

	memset(p, 0, sizeof(*p));
	snprintf(p->id, sizeof(p->id), "%s", j->id);
	snprintf(p->state, sizeof(p->state), "running");
	api_format_target(&j->target, p->target, sizeof(p->target));
	snprintf(p->question, sizeof(p->question), "%s", question_info(j->question)->id);
	p->duration_s = j->duration_s;
	snprintf(p->text, sizeof(p->text), "Waiting to start.");
	js->have_progress = true;
}

int jobs__submit(struct jobs *js, struct job *j)
{
	int err = 0;

	if (jobs_machine_busy())
		return -EBUSY;
	pthread_mutex_lock(&js->lock);
	if (js->stopping)
		err = -ESHUTDOWN;
	else if (js->job)
		err = -EBUSY;
	if (!err) {
		js->job = j;
		reset_progress(js, j);
		pthread_cond_broadcast(&js->cond);
	}
	pthread_mutex_unlock(&js->lock);
	return err;
}

bool jobs__is_current(struct jobs *js, const struct job *j)
{
	bool same;

	pthread_mutex_lock(&js->lock);
	same = js->job && js->job->origin == j->origin && !strcmp(js->job->ns, j->ns) &&
	       !strcmp(js->job->name, j->name) && !strcmp(js->job->request, j->request);
	pthread_mutex_unlock(&js->lock);
	return same;
}

int jobs__progress(struct jobs *js, struct api_progress *out)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&js->lock);
	if (js->have_progress) {
		*out = js->progress;
		ret = 0;
	}
	pthread_mutex_unlock(&js->lock);
	return ret;
}

static void on_progress(void *ctx, int step, int nsteps, const char *text, double elapsed_s)
{
	struct jobs *js = ctx;

	pthread_mutex_lock(&js->lock);
	js->progress.step = step;
	js->progress.nsteps = nsteps;
	snprintf(js->progress.text, sizeof(js->progress.text), "%s", text);
	js->progress.elapsed_s = elapsed_s;
	pthread_mutex_unlock(&js->lock);
}

/* --- one job ---------------------------------------------------------------------------- */

static void set_outcome(struct job_outcome *out, const char *state, const char *message,
			const char *profile_id)
{
	snprintf(out->state, sizeof(out->state), "%s", state);
	snprintf(out->message, sizeof(out->message), "%s", message);
	snprintf(out->profile_id, sizeof(out->profile_id), "%s", profile_id ? profile_id : "");
}

/* Fills @m from the capture and its summary.json (@summary, may be NULL). */
static void fill_meta(const struct job *j, unsigned int duration_s, const struct capture_result *r,
		      json_t *summary, struct store_meta *m)
{
	json_t *langs = json_object_get(summary, "languages"), *v;
	size_t i;

	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s", j->id);
	snprintf(m->service, sizeof(m->service), "%s", j->service);
	snprintf(m->ns, sizeof(m->ns), "%s", j->service_ns);
	snprintf(m->question, sizeof(m->question), "%s", question_info(j->question)->id);
	snprintf(m->target_kind, sizeof(m->target_kind), "%s", target_kind_name(j->target.kind));
	target_describe(&j->target, m->target, sizeof(m->target));
	m->start_ns = r->start_ns;
	m->duration_s = duration_s;
	snprintf(m->answer, sizeof(m->answer), "%s", r->answer);
	json_array_foreach(langs, i, v) {
		if (m->nlanguages >= STORE_MAX_LANGUAGES)
			break;
		if (json_is_string(v))
			snprintf(m->languages[m->nlanguages++], STORE_LANGUAGE_MAX, "%s",
				 json_string_value(v));
	}
	m->samples = r->samples;
}

/* The "target" object of the cluster API's metadata, or NULL. */
static json_t *meta_target(const struct job *j, const struct store_meta *m)
{
	json_t *target = json_pack("{s:s, s:s}", "kind", m->target_kind, "description", m->target);

	if (target && (j->target.kind == TARGET_SERVICE))
		json_object_set_new(target, "service", json_string(j->target.name));
	/* the Service's tenant: the pod's namespace, or the one an API request named */
	if (target && j->service_ns[0])
		json_object_set_new(target, "namespace", json_string(j->service_ns));
	if (target && j->origin == JOB_POD) {
		json_object_set_new(target, "namespace", json_string(j->ns));
		json_object_set_new(target, "pod", json_string(j->name));
	}
	return target;
}

/* The cluster API's metadata (docs/cluster-api.md) from the summary. malloc'd, or NULL. */
static char *sink_metadata(const struct job *j, const char *node, const struct store_meta *m,
			   json_t *summary)
{
	json_t *doc, *v;
	char *text;

	doc = json_pack("{s:s, s:s, s:o*, s:s, s:i, s:s, s:I, s:s, s:s}", "id", m->id, "node", node,
			"target", meta_target(j, m), "question", m->question, "duration",
			(int)m->duration_s, "service", m->service, "start_ns",
			(json_int_t)m->start_ns, "answer", m->answer, "requested_by", j->who);
	if (!doc)
		return NULL;
	if (j->service_ns[0])
		json_object_set_new(doc, "namespace", json_string(j->service_ns));
	json_object_set_new(doc, "continuous", json_boolean(m->continuous));
	v = json_object_get(summary, "start");
	json_object_set_new(doc, "start",
			    json_is_string(v) ? json_incref(v) :
						json_integer(m->start_ns / 1000000000));
	v = json_object_get(summary, "groups");
	json_object_set_new(doc, "groups", json_is_array(v) ? json_incref(v) : json_array());
	v = json_object_get(summary, "notes");
	json_object_set_new(doc, "notes", json_is_array(v) ? json_incref(v) : json_array());
	v = json_object_get(summary, "sample_count");
	if (v)
		json_object_set(doc, "sample_count", v);
	v = json_object_get(summary, "languages");
	if (v)
		json_object_set(doc, "languages", v);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

static json_t *load_summary(const char *dir)
{
	char path[640], *text = NULL;
	size_t len = 0;
	json_t *doc;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	if (read_file_bounded(AT_FDCWD, path, SUMMARY_MAX_BYTES, &text, &len))
		return NULL;
	doc = json_loadb(text, len, 0, NULL);
	free(text);
	return doc;
}

/* Spools the stored profile @m (in @dir) to the sink; a failure is logged, not returned: the
 * profile is stored locally all the same. */
static void spool(const struct jobs_opts *o, const struct job *j, const struct store_meta *m,
		  json_t *summary, const char *dir)
{
	char pprof[640], *meta_json;
	int ret;

	meta_json = sink_metadata(j, o->node_name, m, summary);
	snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
	ret = meta_json ? sink__submit(o->sink, meta_json, pprof) : -ENOMEM;
	free(meta_json);
	if (ret)
		pr_err_errno(ret, "sink: cannot spool profile %s", m->id);
}

int jobs_keep(const struct jobs_opts *o, const struct job *j, unsigned int duration_s,
	      const struct capture_result *r, const char *dir, bool continuous,
	      struct store_meta **mp, char *err, size_t size)
{
	json_t *summary = load_summary(dir);
	struct store_meta *m;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m) {
		json_decref(summary);
		snprintf(err, size, "out of memory");
		return -ENOMEM;
	}
	fill_meta(j, duration_s, r, summary, m);
	m->continuous = continuous;
	ret = store__add(o->store, m, dir, m->id);
	if (ret)
		snprintf(err, size, "cannot store the profile: %s", strerror(-ret));
	else if (o->sink)
		spool(o, j, m, summary, dir);
	json_decref(summary);
	*mp = m;
	return ret;
}

/* Runs the capture of @j into @dir. Returns 0 with @r, or -errno with @err filled. */
static int capture(struct jobs *js, const struct job *j, const char *dir, struct capture_result **r,
		   char *err, size_t size)
{
	struct capture_opts o = {
		.question = j->question,
		.target = j->target,
		.duration_s = j->duration_s,
		.out_dir = dir,
		.to_store = true,
		.progress = on_progress,
		.progress_ctx = js,
		.stop = &js->stop_capture,
		.name_fn = js->o.name_fn,
		.name_ctx = js->o.name_ctx,
		.async_profiler = js->o.async_profiler,
		.keep_sampler = js->o.keep_sampler ? &js->sampler : NULL,
		.keep_symbolizer = js->o.keep_sampler ? &js->sym : NULL,
		.symbols = js->o.symbols,
	};
	char target[TARGET_NAME_MAX + 16], msg[JOB_MSG_MAX + 64];
	int ret;

	if (js->o.on_start) {
		snprintf(msg, sizeof(msg), "capturing %s for %u s", question_info(j->question)->id,
			 capture_duration(&o));
		js->o.on_start(js->o.ctx, j, msg);
	}
	api_format_target(&j->target, target, sizeof(target));
	pr_info("capture %s: %s of %s for %u s, asked by %s", j->id, question_info(j->question)->id,
		target, capture_duration(&o), j->who);
	ret = capture_run(&o, r, err, size);
	if (!ret && js->stop_capture) {
		ret = -ECANCELED;
		snprintf(err, size, "%s", STOPPED_MSG);
	}
	if (ret && ret != -EBUSY && !err[0])
		snprintf(err, size, "%s", strerror(-ret));
	return ret;
}

/* Runs @j: capture, store, sink, audit. What it ended as goes to @res; the annotation's status
 * and the Event follow in on_end(), once the worker is free again. */
static void run_job(struct jobs *js, struct job *j, struct job_outcome *res)
{
	struct capture_opts d = { .question = j->question, .duration_s = j->duration_s };
	char dir[600], err[JOB_MSG_MAX] = "", msg[JOB_MSG_MAX + 64];
	struct capture_result *r = NULL;
	struct store_meta *m = NULL;
	int ret;

	snprintf(dir, sizeof(dir), "%s/capture-%s", js->o.captures_dir, j->id);
	ret = capture(js, j, dir, &r, err, sizeof(err));
	if (ret == -EBUSY) {
		count(&js->o.metrics->captures_refused, 1);
		set_outcome(res, "refused", CAPTURE_BUSY_MSG, NULL);
		jobs_audit(js->o.audit, j, "refused", CAPTURE_BUSY_MSG);
		goto out;
	}
	if (!ret) {
		count(&js->o.metrics->samples_lost, r->lost);
		ret = jobs_keep(&js->o, j, capture_duration(&d), r, dir, false, &m, err,
				sizeof(err));
	}
	if (ret) {
		count(&js->o.metrics->captures_failed, 1);
		set_outcome(res, "failed", err, NULL);
		jobs_audit(js->o.audit, j, "failed", err);
		pr_warn("capture %s failed: %s", j->id, err);
		goto out;
	}
	count(&js->o.metrics->captures_done, 1);
	set_outcome(res, "done", r->answer, m->id);
	snprintf(msg, sizeof(msg), "profile %s", m->id);
	jobs_audit(js->o.audit, j, "ok", msg);
	pr_info("capture %s done: %s", m->id, r->answer);
out:
	ret = rm_tree_at(AT_FDCWD, dir, CAPTURE_DIR_DEPTH);
	if (ret)
		pr_warn_errno(ret, "cannot remove %s", dir);
	free(m);
	capture_result__free(r);
}

/* --- the worker ------------------------------------------------------------------------- */

/* Publishes how the job ended and frees the slot. Called under js->lock. */
static void finish(struct jobs *js, const struct job_outcome *res)
{
	struct api_progress *p = &js->progress;

	snprintf(p->state, sizeof(p->state), "%s", res->state);
	snprintf(p->message, sizeof(p->message), "%s", res->message);
	snprintf(p->profile_id, sizeof(p->profile_id), "%s", res->profile_id);
	js->job = NULL;
}

static void *worker_main(void *arg)
{
	struct jobs *js = arg;
	struct job_outcome *res;
	struct job *j;

	res = malloc(sizeof(*res));
	if (!res) {
		pr_err("out of memory: the capture worker cannot start");
		return NULL;
	}
	pthread_mutex_lock(&js->lock);
	for (;;) {
		while (!js->stopping && (!js->ready || !js->job))
			pthread_cond_wait(&js->cond, &js->lock);
		if (js->stopping)
			break;
		j = js->job;
		pthread_mutex_unlock(&js->lock);
		set_outcome(res, "failed", "the capture ended without a result", NULL);
		run_job(js, j, res);
		pthread_mutex_lock(&js->lock);
		finish(js, res);
		pthread_mutex_unlock(&js->lock);
		/* the slot is free before the status says so */
		if (js->o.on_end)
			js->o.on_end(js->o.ctx, j, res);
		free(j);
		pthread_mutex_lock(&js->lock);
	}
	/* a job queued but never started: it has no status yet, so it is seen again at the
	 * next start */
	free(js->job);
	js->job = NULL;
	pthread_mutex_unlock(&js->lock);
	free(res);
	sampler__free(js->sampler);
	js->sampler = NULL;
	symbolizer__free(js->sym);
	js->sym = NULL;
	return NULL;
}

/* --- lifecycle -------------------------------------------------------------------------- */

int jobs__new(const struct jobs_opts *opts, struct jobs **out)
{
	struct jobs *js;
	int err;

	if (!opts || !opts->store || !opts->audit || !opts->metrics || !opts->captures_dir || !out)
		return -EINVAL;
	js = calloc(1, sizeof(*js));
	if (!js)
		return -ENOMEM;
	js->o = *opts;
	pthread_mutex_init(&js->lock, NULL);
	pthread_cond_init(&js->cond, NULL);
	js->sync_init = true;
	err = -pthread_create(&js->worker, NULL, worker_main, js);
	if (err) {
		jobs__free(js);
		return err;
	}
	js->worker_started = true;
	*out = js;
	return 0;
}

void jobs__start(struct jobs *js)
{
	pthread_mutex_lock(&js->lock);
	js->ready = true;
	pthread_cond_broadcast(&js->cond);
	pthread_mutex_unlock(&js->lock);
}

void jobs__stop(struct jobs *js)
{
	if (!js)
		return;
	pthread_mutex_lock(&js->lock);
	js->stopping = true;
	js->stop_capture = 1;
	pthread_cond_broadcast(&js->cond);
	pthread_mutex_unlock(&js->lock);
}

void jobs__free(struct jobs *js)
{
	if (!js)
		return;
	if (js->worker_started) {
		jobs__stop(js);
		pthread_join(js->worker, NULL);
	}
	if (js->sync_init) {
		pthread_cond_destroy(&js->cond);
		pthread_mutex_destroy(&js->lock);
	}
	free(js->job);
	free(js);
}
