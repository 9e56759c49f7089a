/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube_parse: the pure half of the Kubernetes client (kube.h): container ids, workload names,
 * pod and node objects, watch events, the watch stream's line splitter, kubeconfig and
 * in-cluster credentials. No network; the only I/O is reading the service-account files in
 * kube_creds_in_cluster(). Every function is thread-safe on distinct objects.
 *
 * Input is untrusted: every string is bounded by the fixed sizes below (a longer value is an
 * error, never a truncation, except where said), JSON goes through jansson (nesting bounded by
 * jansson's parser depth limit), YAML through libyaml's document loader (aliases are node
 * references, never expanded copies).
 */
#ifndef SLIDEOPS_KUBE_PARSE_H
#define SLIDEOPS_KUBE_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroups/owner.h"

#define KUBE_CAPTURE_ANNOTATION "profiling.slideops.io/capture"
#define KUBE_STATUS_ANNOTATION "profiling.slideops.io/capture-status"
#define KUBE_TEMPLATE_HASH_LABEL "pod-template-hash"

#define KUBE_UID_MAX OWNER_POD_UID_MAX /* 36 chars + NUL */
#define KUBE_NS_MAX 64		       /* a DNS label: 63 + NUL */
#define KUBE_NAME_MAX 254	       /* a DNS subdomain: 253 + NUL */
#define KUBE_KIND_MAX 64
#define KUBE_RV_MAX 32		   /* resourceVersion: opaque, etcd revisions are 64-bit */
#define KUBE_LABEL_MAX 64	   /* a label value: 63 + NUL */
#define KUBE_CONTAINER_NAME_MAX 64 /* a DNS label */
#define KUBE_ANNOTATION_MAX 1024   /* the capture request value */
#define KUBE_POD_MAX_CONTAINERS 32 /* containers + init + ephemeral with an id; more are dropped */
#define KUBE_MAX_EVENT_BYTES (4u << 20) /* one watch event line */
#define KUBE_MAX_LIST_BYTES (64u << 20) /* one list response */
#define KUBE_MAX_FILE_BYTES (1u << 20)	/* kubeconfig, token, ca.crt */

struct kube_container {
	char id[OWNER_CONTAINER_ID_MAX]; /* bare 64-hex id, as the cgroup path names it */
	char runtime[16];		 /* "containerd", "cri-o", "docker" */
	char name[KUBE_CONTAINER_NAME_MAX];
};

/*
 * A pod, or the node (then ns, owner, template_hash, workload and containers are empty).
 * About 6.8 KiB.
 */
struct kube_object {
	char uid[KUBE_UID_MAX];
	char ns[KUBE_NS_MAX];
	char name[KUBE_NAME_MAX];
	char rv[KUBE_RV_MAX];
	char owner_kind[KUBE_KIND_MAX]; /* the controller owner reference; "" if none */
	char owner_name[KUBE_NAME_MAX];
	char template_hash[KUBE_LABEL_MAX]; /* label pod-template-hash; "" if none */
	char workload[KUBE_NAME_MAX];	    /* kube_workload_name(); the pod name at worst */
	bool has_capture;		    /* annotation profiling.slideops.io/capture is set */
	bool capture_too_long;		    /* ... but longer than KUBE_ANNOTATION_MAX - 1:
						 * capture is "" and the request must be refused */
	char capture[KUBE_ANNOTATION_MAX];
	unsigned ncontainers;
	unsigned dropped_containers; /* statuses beyond KUBE_POD_MAX_CONTAINERS or with
						 * an id that does not parse (yet: waiting ones) */
	struct kube_container containers[KUBE_POD_MAX_CONTAINERS];
};

enum kube_event_type {
	KUBE_EV_ADDED = 1,
	KUBE_EV_MODIFIED,
	KUBE_EV_DELETED,
	KUBE_EV_BOOKMARK,
	KUBE_EV_ERROR,
};

/* One watch event. About 7.1 KiB: allocate it, don't put it on a small stack. */
struct kube_event {
	enum kube_event_type type;
	int code;		/* ERROR: the Status code (410 = resourceVersion too old) */
	char message[256];	/* ERROR: the Status message, truncated */
	char rv[KUBE_RV_MAX];	/* every type but ERROR: the new resourceVersion */
	struct kube_object obj; /* ADDED, MODIFIED, DELETED */
};

/*
 * Splits "containerd://<64 hex>" (also "cri-o://", "docker://") into @runtime and the bare
 * @id. Returns 0; -EPROTONOSUPPORT for another well-formed scheme ("rkt://..."); -EINVAL for
 * garbage (no scheme, an id that is not 64 lowercase hex digits, NULL); -ENAMETOOLONG if a
 * buffer is too small. Outputs are written only on success.
 */
int kube_parse_container_id(const char *s, char *runtime, size_t rsize, char *id, size_t isize);

/*
 * The Service name of a pod (SPEC 4): the Deployment of a ReplicaSet owner (the ReplicaSet's
 * name less "-<pod-template-hash>", the label being the reliable source; without the label,
 * less a last dash segment that looks like a hash: 6 to 10 characters of Kubernetes'
 * SafeEncodeString alphabet "bcdfghjklmnpqrstvwxz2456789"), the StatefulSet, DaemonSet or Job
 * name as is, a CronJob's name for a Job named "<cronjob>-<scheduled minute>" (a unix time in
 * minutes between 2015 and 2100, as the CronJob controller names its Jobs), else the pod
 * name. Uses owner_kind, owner_name, template_hash and name of @o. Returns 0; -EINVAL if
 * neither an owner nor the pod name is there; -ENAMETOOLONG if @out is too small.
 */
int kube_workload_name(const struct kube_object *o, char *out, size_t size);

/*
 * Parses one object (a Pod or Node as JSON text, @len bytes) into @out, workload included.
 * Returns 0; -EINVAL for malformed JSON, a non-object, a missing metadata.name; -ENAMETOOLONG
 * for a field longer than its buffer (the capture annotation is the exception: see
 * capture_too_long). @out is written only on success.
 */
int kube_parse_object(const char *text, size_t len, struct kube_object *out);

/*
 * Parses one watch event line ({"type":...,"object":{...}}) into @out. Returns 0; -EMSGSIZE
 * if @len > KUBE_MAX_EVENT_BYTES; -EINVAL for malformed JSON, an unknown type, an object that
 * is not one, a missing resourceVersion (ADDED/MODIFIED/DELETED/BOOKMARK) or ERROR without a
 * Status code; -ENAMETOOLONG as kube_parse_object(). @out is written only on success.
 */
int kube_parse_event(const char *line, size_t len, struct kube_event *out);

/*
 * Called for each item of a list; @obj is valid during the call. Return 0 to go on, anything
 * else stops the walk and is returned by kube_parse_list().
 */
typedef int (*kube_object_fn_t)(void *ctx, const struct kube_object *obj);

/*
 * Parses a list response ({"metadata":{"resourceVersion":..},"items":[...]}, @len bytes,
 * at most KUBE_MAX_LIST_BYTES) and calls @fn per item that parses (others are skipped and
 * counted in *@skipped, which may be NULL). Copies the list's resourceVersion to @rv.
 * Returns the number of items passed to @fn (>= 0); -EMSGSIZE, -EINVAL (malformed, no items
 * array, no resourceVersion), -ENAMETOOLONG (@rv too small), or what @fn returned.
 */
int kube_parse_list(const char *text, size_t len, kube_object_fn_t fn, void *ctx, char *rv,
		    size_t rvsize, unsigned *skipped);

/*
 * The watch stream's splitter: bytes in, complete lines out (without "\n" or "\r\n"; empty
 * lines are skipped). The buffer grows as needed up to @max bytes per line.
 */
struct kube_linebuf {
	char *buf;
	size_t len, cap, max;
};

typedef int (*kube_line_fn_t)(void *ctx, const char *line, size_t len);

/* Initializes @lb for lines of at most @max bytes (0: KUBE_MAX_EVENT_BYTES). Returns 0. */
int kube_linebuf_init(struct kube_linebuf *lb, size_t max);

/* Drops a partial line (a new connection starts a new stream). */
void kube_linebuf_reset(struct kube_linebuf *lb);

/* Frees the buffer; @lb may be reused after kube_linebuf_init(). Accepts NULL. */
void kube_linebuf_free(struct kube_linebuf *lb);

/*
 * Feeds @n bytes and calls @fn for every line they complete. Returns 0; -EMSGSIZE when a line
 * grows beyond max (the partial line is dropped); -ENOMEM; or the first non-zero value @fn
 * returned (the rest of @data is dropped). After an error, call kube_linebuf_reset().
 */
int kube_linebuf_feed(struct kube_linebuf *lb, const char *data, size_t n, kube_line_fn_t fn,
		      void *ctx);

/* Credentials and address of an API server. Strings are owned (kube_creds_free()). */
struct kube_creds {
	char *server;  /* "https://10.0.0.1:443" or a kubeconfig URL, no trailing '/' */
	char *ca_file; /* PEM bundle path, or NULL */
	char *ca_data; /* PEM bytes (decoded certificate-authority-data), or NULL */
	size_t ca_data_len;
	bool insecure;		    /* insecure-skip-tls-verify */
	char *token;		    /* a bearer token, or NULL */
	char *token_file;	    /* a file holding it (re-read: service-account tokens rotate) */
	char *cert_file, *key_file; /* client certificate and key paths, or NULL */
	char *cert_data, *key_data; /* ... or their PEM bytes */
	size_t cert_data_len, key_data_len;
	char *ns; /* the context's namespace or the pod's; "default" if none */
};

/*
 * Parses a kubeconfig (@len bytes) for its current context: the cluster's server,
 * certificate-authority(-data), insecure-skip-tls-verify; the user's token, tokenFile,
 * client-certificate(-data) and client-key(-data); the context's namespace. Relative paths are
 * taken relative to @base_dir (the kubeconfig's directory; NULL: as is). Returns 0 and fills
 * @out (the caller calls kube_creds_free()); -EINVAL for bad YAML, a missing current-context,
 * context, cluster or server, bad base64, a non-http(s) server; -EOPNOTSUPP for exec and
 * auth-provider plugins and basic auth; -ENOMEM. On failure a one-line message goes to @err
 * (@errsize bytes, may be NULL) and @out is untouched.
 */
int kube_parse_kubeconfig(const char *text, size_t len, const char *base_dir,
			  struct kube_creds *out, char *err, size_t errsize);

/*
 * In-cluster credentials: server https://@host:@port (brackets added for an IPv6 @host),
 * token file and CA at @sa_dir/token and @sa_dir/ca.crt (checked to be readable), namespace
 * from @sa_dir/namespace when present. Returns 0; -ENOENT if @host or @port is empty/NULL
 * (not in a cluster) or the token is missing; -EINVAL for a bad port; -EACCES, ... from the
 * files. Message and ownership as kube_parse_kubeconfig().
 */
int kube_creds_in_cluster(const char *sa_dir, const char *host, const char *port,
			  struct kube_creds *out, char *err, size_t errsize);

/* Frees the strings of @c and zeroes it. Accepts NULL. */
void kube_creds_free(struct kube_creds *c);

#endif
