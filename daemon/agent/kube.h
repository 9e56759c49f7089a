/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube: the Kubernetes client of the DaemonSet mode (SPEC 7), over libcurl.
 *
 * kube__new() reads the credentials (a kubeconfig, or the in-cluster service account) and
 * starts one thread that keeps, for this node only, a table of its pods and the node object:
 *
 *   pods  GET /api/v1/pods?fieldSelector=spec.nodeName%3DNODE, then
 *         GET /api/v1/pods?fieldSelector=...&watch=1&resourceVersion=RV&allowWatchBookmarks=true
 *         &timeoutSeconds=T (T jittered between 5 and 10 minutes, as client-go's reflector)
 *   node  the same on /api/v1/nodes with fieldSelector=metadata.name%3DNODE (a list, so the
 *         watch starts from a collection resourceVersion, and a missing node is an empty list)
 *
 * Both streams run on one curl multi handle. A watch that ends is resumed from the last
 * resourceVersion seen (events and bookmarks); an ERROR event with code 410 (or HTTP 410)
 * relists at once; an event line over KUBE_MAX_EVENT_BYTES, a malformed event or a list that
 * fails to parse relists after a backoff; connection and HTTP errors retry after an
 * exponential backoff with equal jitter (backoff_min_ms doubling up to backoff_max_ms, 30 s),
 * reset by a list that succeeds or a watch that delivered an event.
 *
 * RBAC the agent needs: pods get/list/watch/patch, nodes get/list/watch/patch, events create.
 * Not supported: exec/auth-provider credential plugins, list paging (one list response may be
 * at most KUBE_MAX_LIST_BYTES), websockets, protobuf.
 */
#ifndef SLIDEOPS_KUBE_H
#define SLIDEOPS_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroups/owner.h"
#include "daemon/agent/kube_parse.h"

#define KUBE_DEFAULT_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_DEFAULT_MAX_PODS 4096

enum kube_kind {
	KUBE_KIND_POD = 1,
	KUBE_KIND_NODE,
};

/* A capture request: the annotation profiling.slideops.io/capture on a pod or the node. */
struct kube_request {
	enum kube_kind kind;
	const char *ns; /* "" for the node */
	const char *name;
	const char *uid;
	const char *value; /* the annotation's value; "" when capture_too_long */
	bool too_long;	   /* the value was longer than KUBE_ANNOTATION_MAX - 1: refuse it */
	const char *rv;	   /* the object's resourceVersion when the value was seen */
};

/*
 * Called on the watch thread when an object's capture annotation gets a value this client has
 * not reported for that object (uid) before: at the first list for every annotated object,
 * then for each new value. A relist does not repeat a value already reported; a restart of the
 * agent does, so the daemon dedups with the capture-status annotation (SPEC 7: once, also
 * across restarts). The strings are valid during the call. It runs outside libcurl's
 * callbacks and should return quickly; it may call any kube__ function but kube__free() (a
 * patch blocks this thread, and so both watches, for its duration).
 */
typedef void (*kube_request_fn_t)(void *ctx, const struct kube_request *r);

struct kube_opts {
	const char *node_name;	      /* required: the node whose pods are watched */
	const char *kubeconfig;	      /* NULL or "": in-cluster credentials */
	const char *sa_dir;	      /* in-cluster files; default KUBE_DEFAULT_SA_DIR */
	size_t max_pods;	      /* table bound; default KUBE_DEFAULT_MAX_PODS */
	kube_request_fn_t on_request; /* may be NULL */
	void *ctx;
	unsigned backoff_min_ms;  /* default 500 */
	unsigned backoff_max_ms;  /* default 30000 */
	unsigned watch_timeout_s; /* timeoutSeconds of a watch; default 300..600, jittered */
	const char *user_agent;	  /* default "slideops-profiler" */
};

struct kube;

struct kube_stats {
	unsigned long lists;	    /* list requests that succeeded (both streams) */
	unsigned long watches;	    /* watch requests started */
	unsigned long events;	    /* watch events applied (bookmarks included) */
	unsigned long relists;	    /* relists forced by 410 Gone, malformed or oversized events */
	unsigned long errors;	    /* failed requests (connection, HTTP status, parse) */
	unsigned long dropped_pods; /* pods not kept: the table was full */
	unsigned long requests;	    /* on_request calls */
	size_t pods;		    /* in the table now */
	bool synced;		    /* the first pod list has been applied */
	bool node_seen;		    /* the node object is known */
};

/*
 * Reads the credentials and starts the watch thread. Returns 0 with *@out owned by the caller
 * (kube__free()); -EINVAL (no node name, or one that is not a DNS subdomain), -ENOENT (no
 * kubeconfig file; not in a cluster), -EOPNOTSUPP (credential plugins), -ENOMEM, or what
 * pthread_create() failed with. Logs the reason of a failure. Does not wait for the API
 * server: an unreachable server is retried by the thread (kube__wait_synced()).
 */
int kube__new(const struct kube_opts *opts, struct kube **out);

/*
 * Stops the watch thread (it wakes at once, whatever it waits for) and frees everything.
 * Accepts NULL. Must not be called from on_request.
 */
void kube__free(struct kube *k);

/* Waits until the first pod list is applied. Returns 0, or -ETIMEDOUT after @timeout_ms. */
int kube__wait_synced(struct kube *k, int timeout_ms);

/*
 * Copies the pod with this uid (dashed, as in struct owner) to @out. Returns 0; -ENOENT if it
 * is not in the table (not on this node, not listed yet, or deleted). Thread-safe.
 */
int kube__pod_by_uid(struct kube *k, const char *uid, struct kube_object *out);

/*
 * Copies the pod running the container @id (bare 64 hex, or "containerd://<id>") to @out
 * and the container's name to @container (@size bytes; may be NULL). Returns 0; -ENOENT;
 * -EINVAL for an id that does not parse. Thread-safe.
 */
int kube__pod_by_container_id(struct kube *k, const char *id, struct kube_object *out,
			      char *container, size_t size);

/* Copies the node object to @out. Returns 0; -ENOENT if not seen yet. Thread-safe. */
int kube__node(struct kube *k, struct kube_object *out);

/* Counters and state. Thread-safe. */
void kube__stats(struct kube *k, struct kube_stats *out);

/*
 * owner_name_fn_t for owner_resolver (@ctx is the struct kube): a process whose owner has a
 * pod uid (or, without one, a container id) of a pod in the table becomes "Service
 * <workload>". Returns 0; -ENOENT when the pod is unknown (the owner stays as the cgroup
 * said: the short pod uid); -EINVAL for NULL arguments. Thread-safe; never blocks on the
 * network (a table lookup under a mutex the watch thread holds only to swap entries).
 */
int kube__owner_name(void *ctx, int tgid, struct owner *o);

/*
 * The namespace of the pod that owner @o (as owner_resolver gave it: a pod uid or a container
 * id) belongs to, into @ns (@size bytes), for a Service target of one namespace (@ctx is the
 * struct kube). Returns 0; -ENOENT when no pod of the table is @o's (or its namespace does
 * not fit); -EINVAL for NULL arguments. Thread-safe; never blocks on the network.
 */
int kube__owner_namespace(void *ctx, const struct owner *o, char *ns, size_t size);

/*
 * Merge-patches (application/merge-patch+json) the annotations of the pod @ns/@name, or of
 * this node: @annotations_json is a JSON object of annotation names to string values, or null
 * to remove one: {"profiling.slideops.io/capture-status": "{\"state\":\"running\"}"}.
 * Blocking (at most 30 s); thread-safe. Returns 0; -EINVAL for bad arguments (not an object,
 * a non-string value, a name or namespace that is not a DNS name) or HTTP 400/422; -ENOENT
 * (404); -EACCES (401/403); -EEXIST (409); -EAGAIN (429); -EIO (5xx, other statuses);
 * -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH from the transport; -ENOMEM.
 */
int kube__patch_pod_annotations(struct kube *k, const char *ns, const char *name,
				const char *annotations_json);
int kube__patch_node_annotations(struct kube *k, const char *annotations_json);

/*
 * Reads the annotation @key of the pod @ns/@name (@kind KUBE_KIND_POD) or of this node
 * (KUBE_KIND_NODE; @ns and @name ignored) from the API server now (GET, not the table, which
 * may lag behind this agent's own patches), into @buf (@size bytes). The daemon reads the
 * capture-status annotation this way before it acts on a request (exactly once across
 * restarts). Blocking (at most 30 s); thread-safe. Returns 0; -ENODATA when the object has no
 * such annotation; -EOVERFLOW when the value does not fit @buf; -EIO for a response that is
 * not an object; otherwise as kube__patch_pod_annotations().
 */
int kube__get_annotation(struct kube *k, enum kube_kind kind, const char *ns, const char *name,
			 const char *key, char *buf, size_t size);

/* A core/v1 Event about a pod or this node. */
struct kube_event_spec {
	enum kube_kind kind;
	const char *ns;	     /* the pod's namespace; ignored for the node ("default" is used) */
	const char *name;    /* the pod's name; ignored for the node */
	const char *uid;     /* the object's uid; may be NULL */
	const char *type;    /* "Normal" or "Warning" */
	const char *reason;  /* UpperCamelCase, e.g. "CaptureDone" */
	const char *message; /* truncated to 1024 bytes */
};

/*
 * Creates the Event (POST /api/v1/namespaces/NS/events; source.component "slideops-profiler",
 * source.host the node). Blocking and thread-safe; returns as kube__patch_pod_annotations().
 */
int kube__create_event(struct kube *k, const struct kube_event_spec *e);

#endif
