/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobs: the agent's one-capture worker (agent.h). One thread runs at most one capture at a
 * time: a job is queued in the single slot (a second one while it is queued or running is
 * refused), run through capture_run(), stored, spooled to the sink, audited and published as
 * the progress GET /v1/captures/current reads. Whoever asked (an annotation, annotations.h)
 * hears how it ended through the callbacks of struct jobs_opts.
 */
#ifndef SLIDEOPS_AGENT_JOBS_H
#define SLIDEOPS_AGENT_JOBS_H

#include <stdbool.h>

#include "cgroups/resolver.h"
#include "daemon/agent/api.h"
#include "daemon/agent/kube_parse.h"
#include "daemon/agent/store.h"
#include "daemon/capture/capture.h"

struct audit;
struct sink;

#define JOB_MSG_MAX 1024
#define JOB_WHO_MAX (KUBE_NS_MAX + KUBE_NAME_MAX + 8)

enum job_origin {
	JOB_API = 0,
	JOB_POD,
	JOB_NODE,
};

/* One capture to run, and who asked for it. */
struct job {
	enum job_origin origin;
	struct capture_target target;
	enum question question;
	unsigned int duration_s;
	char id[STORE_ID_SIZE];
	char who[JOB_WHO_MAX];	       /* token name, pod/NS/NAME or node/NAME */
	char service[STORE_NAME_MAX];  /* the store's retention group ... */
	char service_ns[STORE_NS_MAX]; /* ... with its namespace ("" if none) */
	/* annotation requests */
	char ns[KUBE_NS_MAX];
	char name[KUBE_NAME_MAX];
	char uid[KUBE_UID_MAX];
	char request[KUBE_ANNOTATION_MAX]; /* the annotation's value, as written */
};

/* How a job ended: "done" (@message is the answer), "failed" or "refused" (the reason). */
struct job_outcome {
	char state[16];
	char message[JOB_MSG_MAX];
	char profile_id[STORE_ID_SIZE];
};

struct jobs_opts {
	const char *node_name;	  /* for the cluster API's metadata */
	const char *captures_dir; /* where captures write before the store takes them */
	struct store *store;	  /* required, borrowed */
	struct audit *audit;	  /* required, borrowed */
	struct symstore *symbols; /* uploaded debug symbols (capture_opts.symbols); may be NULL */
	struct sink *sink;	  /* may be NULL, borrowed */
	struct api_metrics *metrics; /* required, borrowed */
	owner_name_fn_t name_fn;     /* names Services; may be NULL */
	void *name_ctx;
	const char *async_profiler; /* capture_opts.async_profiler (the config's) */
	/* keep the on-CPU sampler loaded from the first cpu, wall or threads capture on, and
	 * begin the later ones on it (capture_opts.keep_sampler); keep the symbolizer's tables
	 * between captures too (capture_opts.keep_symbolizer) */
	bool keep_sampler;
	/* On the worker thread, may be NULL: a job starts (@message says what it captures), and
	 * a job ended (called once the slot is free again, so a client that hears "done" can
	 * ask for the next capture at once). */
	void (*on_start)(void *ctx, const struct job *j, const char *message);
	void (*on_end)(void *ctx, const struct job *j, const struct job_outcome *res);
	void *ctx;
};

struct jobs;
struct symstore;

/* Starts the worker thread; it runs nothing before jobs__start(). Returns 0, -ENOMEM or the
 * -errno of pthread_create. @opts is copied (its pointers are borrowed). */
int jobs__new(const struct jobs_opts *opts, struct jobs **out);

/* Lets the worker run the queued job (once the agent is ready). Thread-safe. */
void jobs__start(struct jobs *js);

/*
 * Queues @j (malloc'd). Returns 0 (the worker owns @j now: it may already be freed), -EBUSY
 * (another capture holds the machine's lock, or a job is queued or running) or -ESHUTDOWN
 * (stopping); the caller still owns @j on failure. Thread-safe.
 */
int jobs__submit(struct jobs *js, struct job *j);

/* True when the queued or running job is @j's request (same object and value). */
bool jobs__is_current(struct jobs *js, const struct job *j);

/* The progress of the job running or last run. Returns 0, or -ENOENT before the first job. */
int jobs__progress(struct jobs *js, struct api_progress *out);

/* Refuses new jobs and stops the running capture; returns at once (jobs__free() joins). */
void jobs__stop(struct jobs *js);

/* Stops, joins the worker and frees; a job queued but not started is dropped. NULL is fine. */
void jobs__free(struct jobs *js);

/*
 * Stores the capture files of @j written in @dir (the result @r, @duration_s long) in @o->store,
 * @continuous: a continuous window, kept continuous_retention_hours and never listed; then
 * spools them to @o->sink when there is one. *@mp gets the stored metadata (malloc'd, the
 * caller frees it; set on failure too, NULL only without memory). Returns 0 or -errno with
 * @err filled. Thread-safe (the store and the sink are).
 */
int jobs_keep(const struct jobs_opts *o, const struct job *j, unsigned int duration_s,
	      const struct capture_result *r, const char *dir, bool continuous,
	      struct store_meta **mp, char *err, size_t size);

/* Whether another capture holds the machine's lock now (a CLI capture, say). */
bool jobs_machine_busy(void);

/* Records @j in the audit trail: "question=Q duration=S[: @detail]"; logs a failure. */
void jobs_audit(struct audit *a, const struct job *j, const char *result, const char *detail);

/* Records a request that did not parse: what was asked, "request=<the value, sanitized and
 * bounded>[: @detail]", and the target when known ("-" for a pod whose Service is not). */
void jobs_audit_raw(struct audit *a, const struct job *j, const char *result, const char *detail);

#endif
