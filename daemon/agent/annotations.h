/* SPDX-License-Identifier: Apache-2.0 */
/*
 * annotations: capture requests written as the annotation profiling.slideops.io/capture on a
 * pod of this node (that pod's Service) or on the node (a whole-server profile), acted on
 * exactly once, also across restarts. kube reports a request on its watch thread
 * (annotations__on_request() copies it into a bounded inbox); one request thread reads the
 * object's capture-status annotation from the API server, skips a request whose value it
 * already reports as done, refused or failed, marks one it reports as running (the agent died
 * during it) failed, and hands the rest to the capture worker (jobs.h). The status annotation
 * and an Event tell the user how it went.
 */
#ifndef SLIDEOPS_AGENT_ANNOTATIONS_H
#define SLIDEOPS_AGENT_ANNOTATIONS_H

#include <stddef.h>

#include "daemon/agent/jobs.h"
#include "daemon/agent/kube.h"

/* Annotation requests waiting for the request thread; more are refused with a status
 * (ANNOTATIONS_BUSY_FMT, the number waiting). */
#define ANNOTATIONS_INBOX_MAX 64
#define ANNOTATIONS_BUSY_FMT "the agent is busy: %zu requests are waiting; try again later"

/* What the capture-status annotation says about a request value (annotation_decide()). */
enum annotation_verdict {
	ANNOTATION_ACT = 0, /* no status for this value: run it */
	ANNOTATION_HANDLED, /* done, refused or failed: never run again */
	ANNOTATION_RUNNING, /* running: ours now, or the agent died during it */
};

/*
 * The exactly-once rule, pure: @get_err is what reading the status annotation returned (0
 * with @status its value; -ENODATA when there is none, -EOVERFLOW when it is longer than the
 * agent reads), @request the capture annotation's value. A status that is not JSON, names
 * another request value or has another state is no status: ANNOTATION_ACT. An over-long
 * status counts as handled (state "done"): never run again, also after a restart. Returns a verdict, or @get_err for
 * any other error (the status cannot be read: leave the request for the next start). On
 * ANNOTATION_HANDLED the status's state is copied to @state (at most @size bytes).
 */
int annotation_decide(int get_err, const char *status, const char *request, char *state,
		      size_t size);

struct annotations_opts {
	const char *node_name;	     /* for messages */
	struct jobs *jobs;	     /* required, borrowed */
	struct audit *audit;	     /* required, borrowed */
	struct api_metrics *metrics; /* required, borrowed */
};

struct annotations;

/* Starts the request thread; it acts on nothing before annotations__start(). Returns 0,
 * -EINVAL, -ENOMEM or the -errno of pthread_create. */
int annotations__new(const struct annotations_opts *opts, struct annotations **out);

/* kube_request_fn_t (kube.h), @ctx the annotations: queues the request; when the inbox is
 * full, refuses it (status "refused", an Event, the audit trail: this blocks on the API
 * server, as kube allows); drops it when the agent stops. */
void annotations__on_request(void *ctx, const struct kube_request *r);

/* Acts on the requests through @kube (borrowed until annotations__stop()). */
void annotations__start(struct annotations *a, struct kube *kube);

/* jobs_opts.on_start and .on_end, @ctx the annotations: the status annotation ("running",
 * then "done", "refused" or "failed") and the Event of a finished request. Jobs of the API
 * are left alone. */
void annotations__job_started(void *ctx, const struct job *j, const char *message);
void annotations__job_ended(void *ctx, const struct job *j, const struct job_outcome *res);

/* Stops and joins the request thread; requests kube reports from now on are dropped. */
void annotations__stop(struct annotations *a);

/* Stops and frees; call after kube__free(), which may still report. NULL is fine. */
void annotations__free(struct annotations *a);

#endif
