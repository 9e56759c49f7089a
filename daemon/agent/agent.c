// SPDX-License-Identifier: Apache-2.0
/*
 * daemon: wiring of the DaemonSet mode (daemon.h, docs/daemon.md). Everything it calls is a
 * tested module; what is here is the order things start and stop in, the one-capture worker,
 * and the exactly-once handling of the capture annotation.
 */
#include "daemon/agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "daemon/agent/api.h"
#include "daemon/agent/audit.h"
#include "daemon/capture/capture.h"
#include "daemon/capture/check.h"
#include "daemon/config.h"
#include "base/fileio.h"
#include "daemon/agent/kube.h"
#include "base/log.h"
#include "daemon/capture/preflight.h"
#include "daemon/agent/request.h"
#include "cgroups/rules.h"
#include "daemon/agent/sink.h"
#include "daemon/agent/store.h"
#include "daemon/agent/tokens.h"

#define EXIT_CONFIG 2
#define LOCK_PATH "/run/slideops-profiler.lock"
#define SUMMARY_MAX_BYTES (16u << 20)
#define MSG_MAX 1024
#define WHO_MAX (KUBE_NS_MAX + KUBE_NAME_MAX + 8)
#define STATUS_GET_TRIES 3
#define RESTARTED_MSG "the agent restarted during the capture; annotate again to retry"
#define STOPPED_MSG "the agent stopped during the capture; annotate again to retry"

enum job_origin {
	JOB_API = 0,
	JOB_POD,
	JOB_NODE,
};

struct job {
	enum job_origin origin;
	struct capture_target target;
	enum question question;
	unsigned int duration_s;
	char id[STORE_ID_SIZE];
	char who[WHO_MAX];			/* token name, pod/NS/NAME or node/NAME */
	char service[STORE_NAME_MAX];		/* the store's retention group */
	/* annotation requests */
	char ns[KUBE_NS_MAX];
	char name[KUBE_NAME_MAX];
	char uid[KUBE_UID_MAX];
	char request[KUBE_ANNOTATION_MAX];	/* the annotation's value, as written */
};

/* An annotation request, copied off the watch thread. */
struct inbox_item {
	enum kube_kind kind;
	bool too_long;
	char ns[KUBE_NS_MAX];
	char name[KUBE_NAME_MAX];
	char uid[KUBE_UID_MAX];
	char value[KUBE_ANNOTATION_MAX];
};

struct daemon {
	struct config cfg;
	bool cfg_loaded;
	struct service_rules_ctx rules;
	struct kube *kube;
	struct store *store;
	struct tokens *tokens;
	struct audit *audit;
	struct sink *sink;
	struct api *api;
	struct api_metrics metrics;
	char captures_dir[528];

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ready;			/* kube synced (or gave up waiting): act on requests */
	bool stopping;
	struct job *job;		/* queued or running; NULL when idle */
	bool have_progress;
	struct api_progress progress;
	struct inbox_item *inbox;	/* DAEMON_INBOX_MAX slots, a FIFO */
	size_t inbox_head, ninbox;
	pthread_t worker, requester;
	bool worker_started, requester_started;
	volatile sig_atomic_t stop_capture;
	atomic_bool remove_requested;
};

/* --- small helpers --------------------------------------------------------------------- */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Removes @path and everything under it (never across a mount or through a link). */
static int rm_tree(const char *path)
{
	int ret = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);

	if (ret == -1)
		return errno == ENOENT ? 0 : -errno;
	return ret;
}

/* Whether another capture holds the machine's lock now (a CLI capture, say). capture_run()
 * takes the lock itself; this only answers a request early with the right message. */
static bool machine_busy(void)
{
	int fd = open(LOCK_PATH, O_RDONLY | O_CLOEXEC);
	bool busy = false;

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		busy = errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

static void audit_capture(struct daemon *d, const struct job *j, const char *result,
			  const char *detail)
{
	char target[TARGET_NAME_MAX + 16], det[MSG_MAX + 64];
	struct audit_entry e = { .what = AUDIT_CAPTURE, .who = j->who, .target = target,
				 .result = result, .detail = det };
	int err;

	api_format_target(&j->target, target, sizeof(target));
	snprintf(det, sizeof(det), "question=%s duration=%u%s%s", question_info(j->question)->id,
		 j->duration_s, detail ? ": " : "", detail ? detail : "");
	err = audit__log(d->audit, &e);
	if (err)
		pr_err_errno(err, "audit: cannot record the capture of %s by %s", target, j->who);
}

static void count(uint64_t *counter, uint64_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

/* --- names: Kubernetes first, then the config's Service rules --------------------------- */

static int name_owner(void *ctx, int tgid, struct owner *o)
{
	struct daemon *d = ctx;
	int err;

	if (d->kube && (o->pod_uid[0] || o->container_id[0])) {
		err = kube__owner_name(d->kube, tgid, o);
		if (err != -ENOENT)
			return err;
	}
	if (d->cfg.nservices)
		return service_rules_apply(&d->rules, tgid, o);
	return 0;
}

/* --- status annotations and events ------------------------------------------------------ */

/*
 * Writes the capture-status annotation of the job's object:
 * {"request", "state", "message", "answer", "profile_id", "node", "time"}.
 */
static void set_status(struct daemon *d, const struct job *j, const char *state,
		       const char *message, const char *answer, const char *profile_id)
{
	char when[32], *status = NULL, *patch = NULL;
	json_t *s, *p = NULL;
	time_t t = time(NULL);
	struct tm tm;
	int err = -ENOMEM;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	s = json_pack("{s:s, s:s, s:s, s:s, s:s}", "request", j->request, "state", state,
		      "message", message ? message : "", "node", d->cfg.node_name, "time", when);
	if (s && answer && answer[0])
		json_object_set_new(s, "answer", json_string(answer));
	if (s && profile_id && profile_id[0])
		json_object_set_new(s, "profile_id", json_string(profile_id));
	status = s ? json_dumps(s, JSON_COMPACT) : NULL;
	p = status ? json_pack("{s:s}", KUBE_STATUS_ANNOTATION, status) : NULL;
	patch = p ? json_dumps(p, JSON_COMPACT) : NULL;
	if (patch)
		err = j->origin == JOB_NODE ? kube__patch_node_annotations(d->kube, patch) :
					      kube__patch_pod_annotations(d->kube, j->ns, j->name,
									  patch);
	if (err)
		pr_warn_errno(err, "kube: cannot write the capture status (%s) of %s", state,
			      j->who);
	else
		pr_info("capture %s of %s: %s", state, j->who, message ? message : "");
	free(patch);
	free(status);
	json_decref(p);
	json_decref(s);
}

static void event(struct daemon *d, const struct job *j, const char *type, const char *reason,
		  const char *message)
{
	struct kube_event_spec e = {
		.kind = j->origin == JOB_NODE ? KUBE_KIND_NODE : KUBE_KIND_POD,
		.ns = j->ns, .name = j->name, .uid = j->uid[0] ? j->uid : NULL,
		.type = type, .reason = reason, .message = message,
	};
	int err = kube__create_event(d->kube, &e);

	if (err)
		pr_warn_errno(err, "kube: cannot create the %s event of %s", reason, j->who);
}

/* --- the capture worker ----------------------------------------------------------------- */

/* Queues @j unless a capture is queued or running. Returns 0 (the worker owns @j now: it may
 * already be freed), -EBUSY or -ESHUTDOWN (the caller still owns @j). */
static int enqueue(struct daemon *d, struct job *j)
{
	int err = 0;

	pthread_mutex_lock(&d->lock);
	if (d->stopping)
		err = -ESHUTDOWN;
	else if (d->job)
		err = -EBUSY;
	if (!err) {
		d->job = j;
		memset(&d->progress, 0, sizeof(d->progress));
		snprintf(d->progress.id, sizeof(d->progress.id), "%s", j->id);
		snprintf(d->progress.state, sizeof(d->progress.state), "running");
		api_format_target(&j->target, d->progress.target, sizeof(d->progress.target));
		snprintf(d->progress.question, sizeof(d->progress.question), "%s",
			 question_info(j->question)->id);
		d->progress.duration_s = j->duration_s;
		snprintf(d->progress.text, sizeof(d->progress.text), "Waiting to start.");
		d->have_progress = true;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

static void on_progress(void *ctx, int step, int nsteps, const char *text, double elapsed_s)
{
	struct daemon *d = ctx;

	pthread_mutex_lock(&d->lock);
	d->progress.step = step;
	d->progress.nsteps = nsteps;
	snprintf(d->progress.text, sizeof(d->progress.text), "%s", text);
	d->progress.elapsed_s = elapsed_s;
	pthread_mutex_unlock(&d->lock);
}

/* How a job ended, for GET /v1/captures/current. It is published when the worker is free
 * again (worker_main()), so a client that sees "done" can start the next capture at once. */
struct outcome {
	char state[16];
	char message[MSG_MAX];
	char profile_id[STORE_ID_SIZE];
};

static void set_outcome(struct outcome *out, const char *state, const char *message,
			const char *profile_id)
{
	snprintf(out->state, sizeof(out->state), "%s", state);
	snprintf(out->message, sizeof(out->message), "%s", message);
	snprintf(out->profile_id, sizeof(out->profile_id), "%s", profile_id ? profile_id : "");
}

/* Fills @m from the capture and its summary.json (@summary, may be NULL). */
static void fill_meta(const struct job *j, const struct capture_opts *o,
		      const struct capture_result *r, json_t *summary, struct store_meta *m)
{
	json_t *langs = json_object_get(summary, "languages"), *v;
	size_t i;

	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s", j->id);
	snprintf(m->service, sizeof(m->service), "%s", j->service);
	snprintf(m->question, sizeof(m->question), "%s", question_info(j->question)->id);
	snprintf(m->target_kind, sizeof(m->target_kind), "%s", target_kind_name(j->target.kind));
	target_describe(&j->target, m->target, sizeof(m->target));
	m->start_ns = r->start_ns;
	m->duration_s = capture_duration(o);
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

/* The cluster API's metadata (docs/cluster-api.md) from the summary. malloc'd, or NULL. */
static char *sink_metadata(struct daemon *d, const struct job *j, const struct store_meta *m,
			   json_t *summary)
{
	json_t *doc, *target, *v;
	char *text;

	target = json_pack("{s:s, s:s}", "kind", m->target_kind, "description", m->target);
	if (target && (j->target.kind == TARGET_SERVICE))
		json_object_set_new(target, "service", json_string(j->target.name));
	if (target && j->origin == JOB_POD) {
		json_object_set_new(target, "namespace", json_string(j->ns));
		json_object_set_new(target, "pod", json_string(j->name));
	}
	doc = json_pack("{s:s, s:s, s:o*, s:s, s:i, s:s, s:I, s:s, s:s}", "id", m->id, "node",
			d->cfg.node_name, "target", target, "question", m->question, "duration",
			(int)m->duration_s, "service", m->service, "start_ns",
			(json_int_t)m->start_ns, "answer", m->answer, "requested_by", j->who);
	if (!doc)
		return NULL;
	v = json_object_get(summary, "start");
	json_object_set_new(doc, "start", json_is_string(v) ? json_incref(v) :
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

/* Runs @j: capture, store, sink, audit. What it ended as goes to @res; the annotation's status
 * and the Event follow in notify(), once the worker is free again. */
static void run_job(struct daemon *d, struct job *j, struct outcome *res)
{
	struct capture_opts o = {
		.question = j->question, .target = j->target, .duration_s = j->duration_s,
		.progress = on_progress, .progress_ctx = d, .stop = &d->stop_capture,
		.name_fn = name_owner, .name_ctx = d,
	};
	struct capture_result *r = NULL;
	char dir[600], err[MSG_MAX] = "", msg[MSG_MAX + 64], pprof[640], *meta_json;
	char target[TARGET_NAME_MAX + 16];
	struct store_meta *m = NULL;
	json_t *summary = NULL;
	int ret;

	snprintf(dir, sizeof(dir), "%s/capture-%s", d->captures_dir, j->id);
	o.out_dir = dir;
	if (j->origin != JOB_API && d->kube) {
		snprintf(msg, sizeof(msg), "capturing %s for %u s", question_info(j->question)->id,
			 capture_duration(&o));
		set_status(d, j, "running", msg, NULL, NULL);
	}
	pr_info("capture %s: %s of %s for %u s, asked by %s", j->id,
		question_info(j->question)->id,
		api_format_target(&j->target, target, sizeof(target)), capture_duration(&o), j->who);
	ret = capture_run(&o, &r, err, sizeof(err));
	if (!ret && d->stop_capture) {
		ret = -ECANCELED;
		snprintf(err, sizeof(err), "%s", STOPPED_MSG);
	}
	if (ret == -EBUSY) {
		count(&d->metrics.captures_refused, 1);
		set_outcome(res, "refused", CAPTURE_BUSY_MSG, NULL);
		audit_capture(d, j, "refused", CAPTURE_BUSY_MSG);
		goto out;
	}
	if (ret) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		goto failed;
	}
	count(&d->metrics.samples_lost, r->lost);
	summary = load_summary(dir);
	m = calloc(1, sizeof(*m));
	if (!m) {
		ret = -ENOMEM;
		snprintf(err, sizeof(err), "out of memory");
		goto failed;
	}
	fill_meta(j, &o, r, summary, m);
	ret = store__add(d->store, m, dir, m->id);
	if (ret) {
		snprintf(err, sizeof(err), "cannot store the profile: %s", strerror(-ret));
		goto failed;
	}
	if (d->sink) {
		meta_json = sink_metadata(d, j, m, summary);
		snprintf(pprof, sizeof(pprof), "%s/profile.pb.gz", dir);
		ret = meta_json ? sink__submit(d->sink, meta_json, pprof) : -ENOMEM;
		free(meta_json);
		if (ret)
			/* stored locally all the same: a failed spool write is not a failed capture */
			pr_err_errno(ret, "sink: cannot spool profile %s", m->id);
	}
	count(&d->metrics.captures_done, 1);
	set_outcome(res, "done", r->answer, m->id);
	snprintf(msg, sizeof(msg), "profile %s", m->id);
	audit_capture(d, j, "ok", msg);
	pr_info("capture %s done: %s", m->id, r->answer);
	goto out;

failed:
	count(&d->metrics.captures_failed, 1);
	set_outcome(res, "failed", err, NULL);
	audit_capture(d, j, "failed", err);
	pr_warn("capture %s failed: %s", j->id, err);
out:
	ret = rm_tree(dir);
	if (ret)
		pr_warn_errno(ret, "cannot remove %s", dir);
	json_decref(summary);
	free(m);
	capture_result__free(r);
}

/* The annotation's final status and the Event of a finished annotation request. */
static void notify(struct daemon *d, const struct job *j, const struct outcome *res)
{
	char msg[MSG_MAX + 64];

	if (j->origin == JOB_API || !d->kube)
		return;
	if (!strcmp(res->state, "done")) {
		set_status(d, j, "done", "profile captured", res->message, res->profile_id);
		snprintf(msg, sizeof(msg), "%s Profile %s.", res->message, res->profile_id);
		event(d, j, "Normal", "ProfileCaptured", msg);
	} else if (!strcmp(res->state, "refused")) {
		set_status(d, j, "refused", res->message, NULL, NULL);
		event(d, j, "Warning", "CaptureRefused", res->message);
	} else {
		set_status(d, j, "failed", res->message, NULL, NULL);
		event(d, j, "Warning", "CaptureFailed", res->message);
	}
}

static void *worker_main(void *arg)
{
	struct daemon *d = arg;
	struct outcome *res;
	struct job *j;

	res = malloc(sizeof(*res));
	if (!res) {
		pr_err("out of memory: the capture worker cannot start");
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stopping && (!d->ready || !d->job))
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stopping)
			break;
		j = d->job;
		pthread_mutex_unlock(&d->lock);
		set_outcome(res, "failed", "the capture ended without a result", NULL);
		run_job(d, j, res);
		pthread_mutex_lock(&d->lock);
		snprintf(d->progress.state, sizeof(d->progress.state), "%s", res->state);
		snprintf(d->progress.message, sizeof(d->progress.message), "%s", res->message);
		snprintf(d->progress.profile_id, sizeof(d->progress.profile_id), "%s",
			 res->profile_id);
		d->job = NULL;
		pthread_mutex_unlock(&d->lock);
		/* the slot is free before the status says so: a client that reads "done" can
		 * ask for the next capture at once */
		notify(d, j, res);
		free(j);
		pthread_mutex_lock(&d->lock);
	}
	/* a job queued but never started: it has no status yet, so it is seen again at the
	 * next start */
	free(d->job);
	d->job = NULL;
	pthread_mutex_unlock(&d->lock);
	free(res);
	return NULL;
}

/* --- annotation requests ---------------------------------------------------------------- */

static void on_request(void *ctx, const struct kube_request *r)
{
	struct daemon *d = ctx;
	struct inbox_item *it;

	pthread_mutex_lock(&d->lock);
	if (d->stopping) {
		pthread_mutex_unlock(&d->lock);
		return;
	}
	if (d->ninbox == DAEMON_INBOX_MAX) {
		pthread_mutex_unlock(&d->lock);
		pr_warn("kube: too many capture requests waiting; %s %s/%s is left for the next "
			"start", r->kind == KUBE_KIND_NODE ? "node" : "pod", r->ns, r->name);
		return;
	}
	it = &d->inbox[(d->inbox_head + d->ninbox++) % DAEMON_INBOX_MAX];
	memset(it, 0, sizeof(*it));
	it->kind = r->kind;
	it->too_long = r->too_long;
	snprintf(it->ns, sizeof(it->ns), "%s", r->ns);
	snprintf(it->name, sizeof(it->name), "%s", r->name);
	snprintf(it->uid, sizeof(it->uid), "%s", r->uid ? r->uid : "");
	snprintf(it->value, sizeof(it->value), "%s", r->value);
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* True when the running job is this request (its object and value). */
static bool is_current(struct daemon *d, const struct job *j)
{
	bool same;

	pthread_mutex_lock(&d->lock);
	same = d->job && d->job->origin == j->origin && !strcmp(d->job->ns, j->ns) &&
	       !strcmp(d->job->name, j->name) && !strcmp(d->job->request, j->request);
	pthread_mutex_unlock(&d->lock);
	return same;
}

/*
 * Exactly once: what the object's capture-status says about this request value. Returns 1
 * (already handled: skip), 0 (act on it), or -errno (the status cannot be read).
 */
static int already_handled(struct daemon *d, const struct job *j)
{
	char *buf, state[16] = "";
	const char *req = NULL, *st;
	json_t *doc = NULL;
	int err = 0, i, done = 0;

	buf = malloc(KUBE_ANNOTATION_MAX * 4);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < STATUS_GET_TRIES; i++) {
		err = kube__get_annotation(d->kube, j->origin == JOB_NODE ? KUBE_KIND_NODE :
									    KUBE_KIND_POD,
					   j->ns, j->name, KUBE_STATUS_ANNOTATION, buf,
					   KUBE_ANNOTATION_MAX * 4);
		if (!err || err == -ENODATA || err == -ENOENT || err == -EOVERFLOW)
			break;
		sleep(1);
	}
	if (err == -ENODATA || err == -EOVERFLOW) {
		/* no status, or not one of ours: act on the request */
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	doc = json_loads(buf, 0, NULL);
	req = json_string_value(json_object_get(doc, "request"));
	st = json_string_value(json_object_get(doc, "state"));
	if (!req || !st || strcmp(req, j->request))
		goto out;
	snprintf(state, sizeof(state), "%s", st);
	if (!strcmp(state, "done") || !strcmp(state, "refused") || !strcmp(state, "failed")) {
		pr_info("capture request of %s (%s) was already handled: %s; not run again",
			j->who, j->request, state);
		done = 1;
	} else if (!strcmp(state, "running")) {
		if (is_current(d, j)) {
			done = 1;
		} else {
			/* a previous life of this agent died during it */
			set_status(d, j, "failed", RESTARTED_MSG, NULL, NULL);
			event(d, j, "Warning", "CaptureFailed", RESTARTED_MSG);
			audit_capture(d, j, "failed", RESTARTED_MSG);
			done = 1;
		}
	}
out:
	json_decref(doc);
	free(buf);
	return err ? err : done;
}

static void handle_request(struct daemon *d, const struct inbox_item *it)
{
	struct capture_request cr = {};
	struct kube_object *pod = NULL;
	char err[MSG_MAX] = "";
	struct job *j, accepted;
	int ret;

	j = calloc(1, sizeof(*j));
	if (!j) {
		pr_err("out of memory: capture request of %s/%s dropped", it->ns, it->name);
		return;
	}
	j->origin = it->kind == KUBE_KIND_NODE ? JOB_NODE : JOB_POD;
	snprintf(j->ns, sizeof(j->ns), "%s", it->ns);
	snprintf(j->name, sizeof(j->name), "%s", it->name);
	snprintf(j->uid, sizeof(j->uid), "%s", it->uid);
	snprintf(j->request, sizeof(j->request), "%s", it->value);
	if (j->origin == JOB_NODE)
		snprintf(j->who, sizeof(j->who), "node/%s", it->name);
	else
		snprintf(j->who, sizeof(j->who), "pod/%s/%s", it->ns, it->name);
	store_make_id(now_ns(), j->id);

	ret = already_handled(d, j);
	if (ret) {
		if (ret < 0)
			pr_err_errno(ret, "kube: cannot read the capture status of %s; its request "
					  "(%s) is left for the next start", j->who, j->request);
		free(j);
		return;
	}
	/* parse errors are reported against a target we know */
	if (j->origin == JOB_NODE) {
		j->target.kind = TARGET_SERVER;
		snprintf(j->service, sizeof(j->service), "server");
	}
	if (it->too_long) {
		snprintf(err, sizeof(err), "the request is longer than %d bytes; write "
			 "question=Q,duration=S, e.g. question=cpu,duration=30",
			 KUBE_ANNOTATION_MAX - 1);
		ret = -EINVAL;
	} else {
		ret = request_parse(it->value, j->origin == JOB_NODE, &cr, err, sizeof(err));
	}
	j->question = cr.question;
	j->duration_s = cr.duration_s;
	if (!ret && j->origin == JOB_POD) {
		pod = malloc(sizeof(*pod));
		ret = pod ? kube__pod_by_uid(d->kube, it->uid, pod) : -ENOMEM;
		if (ret == -ENOENT)
			snprintf(err, sizeof(err), "pod %s/%s is not in this agent's table (node %s)",
				 it->ns, it->name, d->cfg.node_name);
		if (!ret) {
			j->target.kind = TARGET_SERVICE;
			snprintf(j->target.name, sizeof(j->target.name), "%s", pod->workload);
			snprintf(j->service, sizeof(j->service), "%s", pod->workload);
		}
		free(pod);
	}
	if (ret) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		count(&d->metrics.captures_failed, 1);
		audit_capture(d, j, "invalid", err);
		set_status(d, j, "failed", err, NULL, NULL);
		event(d, j, "Warning", "CaptureFailed", err);
		free(j);
		return;
	}
	/* the worker may run and free @j as soon as it is queued: keep what the audit needs */
	accepted = *j;
	ret = machine_busy() ? -EBUSY : enqueue(d, j);
	if (!ret) {
		audit_capture(d, &accepted, "accepted", NULL);
		return;
	}
	if (ret == -EBUSY) {
		count(&d->metrics.captures_refused, 1);
		audit_capture(d, j, "refused", CAPTURE_BUSY_MSG);
		set_status(d, j, "refused", CAPTURE_BUSY_MSG, NULL, NULL);
		event(d, j, "Warning", "CaptureRefused", CAPTURE_BUSY_MSG);
	}
	free(j);
}

static void *requester_main(void *arg)
{
	struct daemon *d = arg;
	struct inbox_item *it;

	it = malloc(sizeof(*it));
	if (!it) {
		pr_err("out of memory: annotation requests are not handled");
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->stopping && (!d->ready || !d->ninbox))
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stopping)
			break;
		*it = d->inbox[d->inbox_head];
		d->inbox_head = (d->inbox_head + 1) % DAEMON_INBOX_MAX;
		d->ninbox--;
		pthread_mutex_unlock(&d->lock);
		handle_request(d, it);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	free(it);
	return NULL;
}

/* --- the API's operations --------------------------------------------------------------- */

static int op_status(void *ctx, char **json)
{
	struct daemon *d = ctx;
	struct check_opts co = { .target = { .kind = TARGET_SERVER }, .name_fn = name_owner,
				 .name_ctx = d };
	char *text = NULL, err[MSG_MAX];
	int ret;

	ret = check_run(&co, json, &text, err, sizeof(err));
	free(text);
	return ret == -EPERM ? 0 : ret;
}

static void req_opts(struct daemon *d, const struct api_capture_req *req, struct capture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->question = req->question;
	o->target = req->target;
	o->duration_s = req->duration_s;
	o->out_dir = d->captures_dir;
	o->name_fn = name_owner;
	o->name_ctx = d;
}

static int op_plan(void *ctx, const struct api_capture_req *req, struct capture_step *steps,
		   int max, char *err, size_t size)
{
	struct capture_target_info info;
	struct capture_opts o;
	int n;

	req_opts(ctx, req, &o);
	if (capture_validate(&o, err, size))
		return -EINVAL;
	n = capture_inspect(&o, &info, err, size);
	if (n < 0)
		return n;
	if (info.refuse[0]) {
		snprintf(err, size, "%s", info.refuse);
		return -EINVAL;
	}
	return capture_plan(&o, &info, steps, max);
}

static int op_start_capture(void *ctx, const struct api_capture_req *req, const char *who,
			    char id[STORE_ID_SIZE], char *err, size_t size)
{
	struct daemon *d = ctx;
	struct capture_opts o;
	struct preflight pf;
	struct job *j;
	int ret;

	req_opts(d, req, &o);
	if (capture_validate(&o, err, size))
		return -EINVAL;
	if (preflight_check(&pf)) {
		preflight_message(&pf, err, size);
		return -EPERM;
	}
	ret = capture_count_target(&o, err, size);
	if (ret < 0)
		return ret;
	if (machine_busy())
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->origin = JOB_API;
	j->target = req->target;
	j->question = req->question;
	j->duration_s = req->duration_s;
	snprintf(j->who, sizeof(j->who), "%s", who);
	if (req->target.kind == TARGET_SERVER)
		snprintf(j->service, sizeof(j->service), "server");
	else if (req->target.kind == TARGET_SERVICE)
		snprintf(j->service, sizeof(j->service), "%s", req->target.name);
	else
		target_describe(&req->target, j->service, sizeof(j->service));
	store_make_id(now_ns(), j->id);
	memcpy(id, j->id, STORE_ID_SIZE);
	ret = enqueue(d, j);
	if (ret == -ESHUTDOWN)
		snprintf(err, size, "the agent is stopping");
	if (ret)
		free(j);
	return ret;
}

static int op_progress(void *ctx, struct api_progress *out)
{
	struct daemon *d = ctx;
	int ret = -ENOENT;

	pthread_mutex_lock(&d->lock);
	if (d->have_progress) {
		*out = d->progress;
		ret = 0;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* The store is gone already (api.c); what is left is to stop. The spool stays, so profiles
 * finished before the removal still reach the cluster API; the binary and the DaemonSet are
 * removed by whoever installed them (docs/daemon.md). */
static int op_remove(void *ctx, char *err, size_t size)
{
	struct daemon *d = ctx;

	(void)err;
	(void)size;
	atomic_store(&d->remove_requested, true);
	return 0;
}

static const struct api_ops ops = {
	.status = op_status,
	.plan = op_plan,
	.start_capture = op_start_capture,
	.progress = op_progress,
	.remove = op_remove,
};

/* --- start and stop --------------------------------------------------------------------- */

static int load_tokens(struct daemon *d)
{
	char err[MSG_MAX];
	int ret;

	ret = tokens__load(d->cfg.tokens_file, &d->tokens, err, sizeof(err));
	if (ret == -ENOENT) {
		pr_warn("no tokens file %s: every API request but /metrics is refused (401)",
			d->cfg.tokens_file);
		return tokens__parse("tokens: []\n", strlen("tokens: []\n"), d->cfg.tokens_file,
				     &d->tokens, err, sizeof(err));
	}
	if (ret)
		pr_err("%s", err);
	return ret;
}

static int start(struct daemon *d)
{
	struct store_opts so = { .dir = d->cfg.store_dir,
				 .retention_per_service = d->cfg.retention_per_service,
				 .continuous_retention_hours = d->cfg.continuous_retention_hours };
	struct audit_opts ao = { .path = d->cfg.audit_log };
	struct api_opts apo = { .listen = d->cfg.listen, .ops = &ops, .ops_ctx = d,
				.metrics = &d->metrics };
	int err;

	err = store__new(&so, &d->store);
	if (err)
		return pr_err_errno(err, "cannot open the profile store %s", d->cfg.store_dir);
	snprintf(d->captures_dir, sizeof(d->captures_dir), "%s/captures", d->cfg.store_dir);
	/* captures interrupted by a crash: their files never reached the store */
	err = rm_tree(d->captures_dir);
	if (!err)
		err = mkdir_p(d->captures_dir);
	if (err)
		return pr_err_errno(err, "cannot prepare %s", d->captures_dir);
	err = load_tokens(d);
	if (err)
		return err;
	err = audit__new(&ao, &d->audit);
	if (err)
		return pr_err_errno(err, "cannot open the audit trail %s", d->cfg.audit_log);
	if (d->cfg.cluster_api_url[0] || d->cfg.pyroscope_url[0]) {
		struct sink_opts sk = { .cluster_api_url = d->cfg.cluster_api_url,
					.token_file = d->cfg.cluster_api_token_file,
					.pyroscope_url = d->cfg.pyroscope_url,
					.spool_dir = d->cfg.spool_dir,
					.spool_max_bytes = d->cfg.spool_max_bytes };

		err = sink__new(&sk, &d->sink);
		if (err)
			return pr_err_errno(err, "cannot start the cluster API sink (spool %s)",
					    d->cfg.spool_dir);
	}
	err = pthread_create(&d->worker, NULL, worker_main, d);
	if (err)
		return pr_err_errno(err, "cannot start the capture worker");
	d->worker_started = true;
	if (d->cfg.kube_enabled) {
		struct kube_opts ko = { .node_name = d->cfg.node_name,
					.kubeconfig = d->cfg.kubeconfig, .on_request = on_request,
					.ctx = d };

		err = pthread_create(&d->requester, NULL, requester_main, d);
		if (err)
			return pr_err_errno(err, "cannot start the request thread");
		d->requester_started = true;
		err = kube__new(&ko, &d->kube);
		if (err)
			return err;	/* logged by kube__new() */
		if (kube__wait_synced(d->kube, DAEMON_SYNC_TIMEOUT_MS))
			pr_warn("kube: no pod list from the API server after %d s; serving anyway, "
				"Services are named once it answers", DAEMON_SYNC_TIMEOUT_MS / 1000);
	}
	pthread_mutex_lock(&d->lock);
	d->ready = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);

	apo.store = d->store;
	apo.tokens = d->tokens;
	apo.audit = d->audit;
	err = api__new(&apo, &d->api);
	if (err)
		return pr_err_errno(err, "cannot serve the API on %s", d->cfg.listen);
	pr_info("daemon ready on node %s: API on %s (port %u), store %s%s%s", d->cfg.node_name,
		d->cfg.listen, api__port(d->api), d->cfg.store_dir,
		d->kube ? ", Kubernetes on" : "", d->sink ? ", cluster API sink on" : "");
	return 0;
}

static void stop(struct daemon *d)
{
	/* no new API requests; connection threads are joined */
	api__free(d->api);
	d->api = NULL;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	d->stop_capture = 1;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (d->requester_started)
		pthread_join(d->requester, NULL);
	if (d->worker_started)
		pthread_join(d->worker, NULL);
	kube__free(d->kube);
	d->kube = NULL;
	if (d->sink && sink__drain(d->sink, DAEMON_DRAIN_MS))
		pr_info("sink: profiles still spooled at exit are sent at the next start");
	sink__free(d->sink);
	d->sink = NULL;
	store__free(d->store);
	d->store = NULL;
	audit__free(d->audit);
	d->audit = NULL;
	tokens__free(d->tokens);
	d->tokens = NULL;
	free(d->inbox);
	d->inbox = NULL;
	if (d->cfg_loaded)
		config_free(&d->cfg);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
}

/* Refreshes the gauges /metrics reads from other modules. */
static void refresh_metrics(struct daemon *d)
{
	struct sink_stats st;

	if (!d->sink)
		return;
	sink__stats(d->sink, &st);
	__atomic_store_n(&d->metrics.spool_depth, st.queued, __ATOMIC_RELAXED);
}

int daemon_main(const char *config_path)
{
	const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	struct timespec tick = { 1, 0 };
	struct daemon *d;
	sigset_t stopset;
	char err[MSG_MAX];
	int ret, sig, level;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fprintf(stderr, "slideops-profiler: out of memory\n");
		return EXIT_FAILURE;
	}
	ret = config_load(path, &d->cfg, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "slideops-profiler: %s\n", err);
		free(d);
		return EXIT_CONFIG;
	}
	d->cfg_loaded = true;
	d->rules.rules = d->cfg.services;
	d->rules.nrules = d->cfg.nservices;
	level = log_parse_level(d->cfg.log_level);
	if (!getenv("SLIDEOPS_LOG") && level >= 0)
		log_set_level(level);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	d->inbox = calloc(DAEMON_INBOX_MAX, sizeof(*d->inbox));

	/* Before any thread: signals are taken by this thread only (sigtimedwait), a closed
	 * connection is an error return rather than a death, and libcurl is initialised once. */
	sigemptyset(&stopset);
	sigaddset(&stopset, SIGTERM);
	sigaddset(&stopset, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopset, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !d->inbox) {
		pr_err("cannot initialise libcurl");
		stop(d);
		free(d);
		return EXIT_FAILURE;
	}

	ret = start(d);
	if (ret) {
		stop(d);
		free(d);
		curl_global_cleanup();
		return EXIT_FAILURE;
	}
	for (;;) {
		sig = sigtimedwait(&stopset, NULL, &tick);
		if (sig > 0) {
			pr_info("signal %d: stopping", sig);
			break;
		}
		refresh_metrics(d);
		if (atomic_load(&d->remove_requested)) {
			pr_info("the profiler was removed through the API: stopping");
			break;
		}
	}
	stop(d);
	free(d);
	curl_global_cleanup();
	return EXIT_SUCCESS;
}
