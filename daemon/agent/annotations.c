// SPDX-License-Identifier: Apache-2.0
/*
 * annotations: the exactly-once handling of the capture annotation (annotations.h). The inbox
 * is under a->lock; the request thread acts on one request at a time outside it.
 */
#include "daemon/agent/annotations.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/text.h"
#include "daemon/agent/request.h"

#define STATUS_GET_TRIES 3
/* the pod table's bound (kube.h): one request per pod */
#define ANNOTATIONS_EARLY_MAX 4096
#define STATUS_BUF_MAX (KUBE_ANNOTATION_MAX * 4)
#define RESTARTED_MSG "the agent restarted during the capture; annotate again to retry"

/* An annotation request, copied off the watch thread. */
struct inbox_item {
	enum kube_kind kind;
	bool too_long;
	char ns[KUBE_NS_MAX];
	char name[KUBE_NAME_MAX];
	char uid[KUBE_UID_MAX];
	char value[KUBE_ANNOTATION_MAX];
};

struct annotations {
	struct annotations_opts o;
	struct kube *kube; /* set by annotations__start() */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool sync_init;
	bool ready, stopping;
	struct inbox_item *inbox; /* ANNOTATIONS_INBOX_MAX slots, a FIFO */
	size_t inbox_head, ninbox;
	/* before annotations__start(): what the full inbox could not take (the first pod list
	 * fires every request at once), kept and run after the inbox; at most one per pod */
	struct inbox_item *early;
	size_t early_head, nearly, early_cap;
	pthread_t requester;
	bool requester_started;
};

static void count(uint64_t *counter, uint64_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

/* --- the exactly-once rule -------------------------------------------------------------- */

int annotation_decide(int get_err, const char *status, const char *request, char *state,
		      size_t size)
{
	const char *req, *st;
	json_t *doc;
	int ret = ANNOTATION_ACT;

	if (get_err == -ENODATA)
		return ANNOTATION_ACT; /* no status */
	if (get_err == -EOVERFLOW) {
		/* Longer than we read: ours can be (a long request value, escaped, and the
		 * answer). Running it again after every restart is worse than skipping it. */
		if (state && size)
			snprintf(state, size, "done");
		return ANNOTATION_HANDLED;
	}
	if (get_err)
		return get_err;
	doc = status ? json_loads(status, 0, NULL) : NULL;
	req = json_string_value(json_object_get(doc, "request"));
	st = json_string_value(json_object_get(doc, "state"));
	if (!req || !st || !request || strcmp(req, request))
		goto out;
	if (!strcmp(st, "done") || !strcmp(st, "refused") || !strcmp(st, "failed")) {
		if (state && size)
			snprintf(state, size, "%s", st);
		ret = ANNOTATION_HANDLED;
	} else if (!strcmp(st, "running")) {
		ret = ANNOTATION_RUNNING;
	}
out:
	json_decref(doc);
	return ret;
}

/* --- status annotations and events ------------------------------------------------------ */

static enum kube_kind kind_of(const struct job *j)
{
	return j->origin == JOB_NODE ? KUBE_KIND_NODE : KUBE_KIND_POD;
}

/* @s (NULL: "") cut to @size bytes, controls and invalid UTF-8 made '?', into @buf. */
static const char *clean(const char *s, char *buf, size_t size)
{
	/* cut at a character boundary, never mid-character (json_pack refuses invalid UTF-8) */
	s = s ? s : "";
	text_utf8_sanitize_copy(buf, size, s, strlen(s));
	return buf;
}

/* {"metadata":{"annotations":{KUBE_STATUS_ANNOTATION: "<status JSON>"}}}, or NULL. */
static char *status_patch(const struct annotations *a, const struct job *j, const char *state,
			  const char *message, const char *answer, const char *profile_id)
{
	char when[CLOCK_RFC3339_MAX], *status = NULL, *patch = NULL;
	json_t *s, *p = NULL;

	char msg[JOB_MSG_MAX], ans[JOB_MSG_MAX];

	clock_rfc3339(when, sizeof(when), clock_real_ns(), 0);
	/* valid UTF-8 or jansson refuses it, and the request would have no status */
	s = json_pack("{s:s, s:s, s:s, s:s, s:s}", "request", j->request, "state", state, "message",
		      clean(message, msg, sizeof(msg)), "node", a->o.node_name, "time", when);
	if (s && answer && answer[0])
		json_object_set_new(s, "answer", json_string(clean(answer, ans, sizeof(ans))));
	if (s && profile_id && profile_id[0])
		json_object_set_new(s, "profile_id", json_string(profile_id));
	status = s ? json_dumps(s, JSON_COMPACT) : NULL;
	p = status ? json_pack("{s:s}", KUBE_STATUS_ANNOTATION, status) : NULL;
	patch = p ? json_dumps(p, JSON_COMPACT) : NULL;
	free(status);
	json_decref(p);
	json_decref(s);
	return patch;
}

/*
 * Writes the capture-status annotation of the job's object:
 * {"request", "state", "message", "answer", "profile_id", "node", "time"}.
 */
static void set_status(struct annotations *a, const struct job *j, const char *state,
		       const char *message, const char *answer, const char *profile_id)
{
	char *patch = status_patch(a, j, state, message, answer, profile_id), msg[JOB_MSG_MAX];
	int err = -ENOMEM;

	if (patch)
		err = j->origin == JOB_NODE ?
			      kube__patch_node_annotations(a->kube, patch) :
			      kube__patch_pod_annotations(a->kube, j->ns, j->name, patch);
	if (err)
		pr_warn_errno(err, "kube: cannot write the capture status (%s) of %s", state,
			      j->who);
	else
		pr_info("capture %s of %s: %s", state, j->who, clean(message, msg, sizeof(msg)));
	free(patch);
}

static void event(struct annotations *a, const struct job *j, const char *type, const char *reason,
		  const char *message)
{
	char msg[JOB_MSG_MAX];
	struct kube_event_spec e = {
		.kind = kind_of(j),
		.ns = j->ns,
		.name = j->name,
		.uid = j->uid[0] ? j->uid : NULL,
		.type = type,
		.reason = reason,
		.message = clean(message, msg, sizeof(msg)),
	};
	int err = kube__create_event(a->kube, &e);

	if (err)
		pr_warn_errno(err, "kube: cannot create the %s event of %s", reason, j->who);
}

/* The status, the Event and the audit record of a request that ends before it runs. */
static void end_early(struct annotations *a, const struct job *j, const char *state,
		      const char *audit_result, const char *message)
{
	bool refused = !strcmp(state, "refused");

	if (!strcmp(audit_result, "invalid"))
		jobs_audit_raw(a->o.audit, j, audit_result, message);
	else
		jobs_audit(a->o.audit, j, audit_result, message);
	set_status(a, j, state, message, NULL, NULL);
	event(a, j, "Warning", refused ? "CaptureRefused" : "CaptureFailed", message);
}

void annotations__job_started(void *ctx, const struct job *j, const char *message)
{
	struct annotations *a = ctx;

	if (j->origin != JOB_API && a && a->kube)
		set_status(a, j, "running", message, NULL, NULL);
}

void annotations__job_ended(void *ctx, const struct job *j, const struct job_outcome *res)
{
	struct annotations *a = ctx;
	char msg[JOB_MSG_MAX + 64], text[JOB_MSG_MAX + 64];

	if (j->origin == JOB_API || !a || !a->kube)
		return;
	if (!strcmp(res->state, "done")) {
		set_status(a, j, "done", "profile captured", res->message, res->profile_id);
		snprintf(text, sizeof(text), "%s Profile %s.", res->message, res->profile_id);
		event(a, j, "Normal", "ProfileCaptured", clean(text, msg, sizeof(msg)));
	} else if (!strcmp(res->state, "refused")) {
		set_status(a, j, "refused", res->message, NULL, NULL);
		event(a, j, "Warning", "CaptureRefused", res->message);
	} else {
		set_status(a, j, "failed", res->message, NULL, NULL);
		event(a, j, "Warning", "CaptureFailed", res->message);
	}
}

/* --- one request ------------------------------------------------------------------------ */

/*
 * Exactly once: what the object's capture-status says about this request value. Returns 1
 * (already handled: skip), 0 (act on it), or -errno (the status cannot be read).
 */
static int already_handled(struct annotations *a, const struct job *j)
{
	char *buf, state[16] = "";
	int err = 0, i, verdict;

	buf = malloc(STATUS_BUF_MAX);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < STATUS_GET_TRIES; i++) {
		err = kube__get_annotation(a->kube, kind_of(j), j->ns, j->name,
					   KUBE_STATUS_ANNOTATION, buf, STATUS_BUF_MAX);
		if (!err || err == -ENODATA || err == -ENOENT || err == -EOVERFLOW)
			break;
		sleep(1);
	}
	verdict = annotation_decide(err, buf, j->request, state, sizeof(state));
	free(buf);
	if (verdict < 0 || verdict == ANNOTATION_ACT)
		return verdict;
	if (verdict == ANNOTATION_HANDLED) {
		pr_info("capture request of %s (%s) was already handled: %s; not run again", j->who,
			j->request, state);
	} else if (!jobs__is_current(a->o.jobs, j)) {
		/* a previous life of this agent died during it */
		set_status(a, j, "failed", RESTARTED_MSG, NULL, NULL);
		event(a, j, "Warning", "CaptureFailed", RESTARTED_MSG);
		jobs_audit(a->o.audit, j, "failed", RESTARTED_MSG);
	}
	return 1;
}

/* A new job for request @it: its object and who asked; no target yet. */
static struct job *job_of(const struct inbox_item *it)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->origin = it->kind == KUBE_KIND_NODE ? JOB_NODE : JOB_POD;
	snprintf(j->ns, sizeof(j->ns), "%s", it->ns);
	snprintf(j->name, sizeof(j->name), "%s", it->name);
	snprintf(j->uid, sizeof(j->uid), "%s", it->uid);
	snprintf(j->request, sizeof(j->request), "%s", it->value);
	if (j->origin == JOB_NODE)
		snprintf(j->who, sizeof(j->who), "node/%s", it->name);
	else
		snprintf(j->who, sizeof(j->who), "pod/%s/%s", it->ns, it->name);
	store_make_id(clock_real_ns(), j->id);
	return j;
}

/* The pod's Service as the target of @j. Returns 0 or -errno (with @err for a pod not here). */
static int pod_target(struct annotations *a, const struct inbox_item *it, struct job *j, char *err,
		      size_t size)
{
	struct kube_object *pod = malloc(sizeof(*pod));
	int ret = pod ? kube__pod_by_uid(a->kube, it->uid, pod) : -ENOMEM;

	if (ret == -ENOENT)
		snprintf(err, size, "pod %s/%s is not in this agent's table (node %s)", it->ns,
			 it->name, a->o.node_name);
	if (!ret) {
		j->target.kind = TARGET_SERVICE;
		snprintf(j->target.name, sizeof(j->target.name), "%s", pod->workload);
		snprintf(j->target.ns, sizeof(j->target.ns), "%s", pod->ns);
		j->target.ns_fn = kube__owner_namespace;
		j->target.ns_ctx = a->kube;
		snprintf(j->service, sizeof(j->service), "%s", pod->workload);
		/* a Service is a namespace and a workload: another tenant's pods of the same
		 * workload name are neither sampled, named nor evicted by this request */
		snprintf(j->service_ns, sizeof(j->service_ns), "%s", pod->ns);
	}
	free(pod);
	return ret;
}

/* Parses the request into @j (question, duration, target). Returns 0 or -errno with @err. */
static int parse_request(struct annotations *a, const struct inbox_item *it, struct job *j,
			 char *err, size_t size)
{
	struct capture_request cr = {};
	int ret;

	/* parse errors are reported against a target we know */
	if (j->origin == JOB_NODE) {
		j->target.kind = TARGET_SERVER;
		snprintf(j->service, sizeof(j->service), "server");
	}
	if (it->too_long) {
		snprintf(err, size,
			 "the request is longer than %d bytes; write "
			 "question=Q,duration=S, e.g. question=cpu,duration=30",
			 KUBE_ANNOTATION_MAX - 1);
		ret = -EINVAL;
	} else {
		ret = request_parse(it->value, j->origin == JOB_NODE, &cr, err, size);
	}
	j->question = cr.question;
	j->duration_s = cr.duration_s;
	if (j->origin == JOB_POD) {
		/* also for a bad value: the audit trail names the Service that was asked for */
		char ignored[JOB_MSG_MAX];
		int pret = pod_target(a, it, j, ret ? ignored : err, ret ? sizeof(ignored) : size);

		if (!ret)
			ret = pret;
	}
	if (ret && !err[0])
		snprintf(err, size, "%s", strerror(-ret));
	return ret;
}

static void handle_request(struct annotations *a, const struct inbox_item *it)
{
	char err[JOB_MSG_MAX] = "";
	struct job *j, accepted;
	int ret;

	j = job_of(it);
	if (!j) {
		pr_err("out of memory: capture request of %s/%s dropped", it->ns, it->name);
		return;
	}
	ret = already_handled(a, j);
	if (ret < 0)
		pr_err_errno(ret,
			     "kube: cannot read the capture status of %s; its request "
			     "(%s) is left for the next start",
			     j->who, j->request);
	if (ret)
		goto out;
	ret = parse_request(a, it, j, err, sizeof(err));
	if (ret) {
		count(&a->o.metrics->captures_failed, 1);
		end_early(a, j, "failed", "invalid", err);
		goto out;
	}
	/* the worker may run and free @j as soon as it is queued: keep what the audit needs */
	accepted = *j;
	ret = jobs__submit(a->o.jobs, j);
	if (!ret) {
		jobs_audit(a->o.audit, &accepted, "accepted", NULL);
		return;
	}
	if (ret == -EBUSY) {
		count(&a->o.metrics->captures_refused, 1);
		end_early(a, j, "refused", "refused", CAPTURE_BUSY_MSG);
	}
out:
	free(j);
}

/* --- the inbox and the request thread --------------------------------------------------- */

static void copy_request(struct inbox_item *it, const struct kube_request *r)
{
	memset(it, 0, sizeof(*it));
	it->kind = r->kind;
	it->too_long = r->too_long;
	snprintf(it->ns, sizeof(it->ns), "%s", r->ns);
	snprintf(it->name, sizeof(it->name), "%s", r->name);
	snprintf(it->uid, sizeof(it->uid), "%s", r->uid ? r->uid : "");
	snprintf(it->value, sizeof(it->value), "%s", r->value);
}

/*
 * The inbox is full: the request is refused with a status (so the user hears it, and it is
 * not run later behind everyone's back), on the watch thread. Before annotations__start()
 * there is no client yet: it is left, without a status, for the next start.
 */
static void refuse_busy(struct annotations *a, struct kube *kube, const struct kube_request *r,
			size_t waiting)
{
	struct inbox_item *it = malloc(sizeof(*it));
	char msg[128];
	struct job *j;

	if (!it)
		return;
	copy_request(it, r);
	j = job_of(it);
	free(it);
	if (!j)
		return;
	if (!kube) {
		pr_warn("kube: too many capture requests waiting; that of %s is left for the next "
			"start",
			j->who);
		free(j);
		return;
	}
	/* exactly once: a request settled before (a previous life of the agent refused or ran
	 * it) keeps its status and gets no second Event */
	if (already_handled(a, j)) {
		free(j);
		return;
	}
	snprintf(msg, sizeof(msg), ANNOTATIONS_BUSY_FMT, waiting);
	count(&a->o.metrics->captures_refused, 1);
	jobs_audit_raw(a->o.audit, j, "refused", msg);
	set_status(a, j, "refused", msg, NULL, NULL);
	event(a, j, "Warning", "CaptureRefused", msg);
	free(j);
}

void annotations__on_request(void *ctx, const struct kube_request *r)
{
	struct annotations *a = ctx;
	struct kube *kube;
	size_t waiting;

	pthread_mutex_lock(&a->lock);
	if (a->stopping) {
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (a->ninbox == ANNOTATIONS_INBOX_MAX && !a->kube && a->nearly < ANNOTATIONS_EARLY_MAX &&
	    !array_ensure((void **)&a->early, &a->early_cap, sizeof(*a->early), a->nearly + 1)) {
		copy_request(&a->early[a->nearly++], r);
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (a->ninbox == ANNOTATIONS_INBOX_MAX) {
		kube = a->kube;
		waiting = a->ninbox;
		pthread_mutex_unlock(&a->lock);
		refuse_busy(a, kube, r, waiting);
		return;
	}
	copy_request(&a->inbox[(a->inbox_head + a->ninbox++) % ANNOTATIONS_INBOX_MAX], r);
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

static void *requester_main(void *arg)
{
	struct annotations *a = arg;
	struct inbox_item *it;

	it = malloc(sizeof(*it));
	if (!it) {
		pr_err("out of memory: annotation requests are not handled");
		return NULL;
	}
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->stopping && (!a->ready || (!a->ninbox && a->early_head == a->nearly)))
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stopping)
			break;
		if (a->ninbox) {
			*it = a->inbox[a->inbox_head];
			a->inbox_head = (a->inbox_head + 1) % ANNOTATIONS_INBOX_MAX;
			a->ninbox--;
		} else {
			*it = a->early[a->early_head++];
		}
		pthread_mutex_unlock(&a->lock);
		handle_request(a, it);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	free(it);
	return NULL;
}

/* --- lifecycle -------------------------------------------------------------------------- */

int annotations__new(const struct annotations_opts *opts, struct annotations **out)
{
	struct annotations *a;
	int err;

	if (!opts || !opts->jobs || !opts->audit || !opts->metrics || !out)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->o = *opts;
	if (!a->o.node_name)
		a->o.node_name = "";
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	a->sync_init = true;
	a->inbox = calloc(ANNOTATIONS_INBOX_MAX, sizeof(*a->inbox));
	if (!a->inbox) {
		annotations__free(a);
		return -ENOMEM;
	}
	err = -pthread_create(&a->requester, NULL, requester_main, a);
	if (err) {
		annotations__free(a);
		return err;
	}
	a->requester_started = true;
	*out = a;
	return 0;
}

void annotations__start(struct annotations *a, struct kube *kube)
{
	pthread_mutex_lock(&a->lock);
	a->kube = kube;
	a->ready = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

void annotations__stop(struct annotations *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->requester_started) {
		pthread_join(a->requester, NULL);
		a->requester_started = false;
	}
}

void annotations__free(struct annotations *a)
{
	if (!a)
		return;
	annotations__stop(a);
	if (a->sync_init) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
	}
	free(a->inbox);
	free(a->early);
	free(a);
}
