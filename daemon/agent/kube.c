// SPDX-License-Identifier: Apache-2.0
/*
 * kube: the Kubernetes client (kube.h). One thread drives both watches (pods of this node, the
 * node) on one curl multi handle, so kube__free() wakes it with curl_multi_wakeup() whatever it
 * waits for. The table is written only by that thread; other threads read it under k->lock and
 * get copies. Patches and events are blocking calls on the caller's thread, each with its own
 * easy handle.
 */
#include "daemon/agent/kube.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/text.h"
#include "base/fileio.h"
#include "base/log.h"
#include "daemon/agent/http.h"

#define CONNECT_TIMEOUT_S 10L
#define REQUEST_TIMEOUT_S 30L
#define LIST_TIMEOUT_S 120L
#define TOKEN_MAX (16u << 10)
#define TOKEN_REREAD_S 60 /* kubelet rotates projected tokens well before they expire */
#define EVENT_MESSAGE_MAX 1024
#define NS_LEN_MAX (KUBE_NS_MAX - 1)	 /* a namespace is a DNS label */
#define NAME_LEN_MAX (KUBE_NAME_MAX - 1) /* pod and node names are DNS subdomains */
/* An annotation key: a DNS-subdomain prefix, '/', a name of at most 63 characters. */
#define ANNOTATION_KEY_LEN_MAX 316
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

enum stream_state { ST_WAIT, ST_LIST, ST_WATCH };

struct stream {
	struct kube *k;
	bool node;	  /* the node stream, else the pods stream */
	const char *what; /* "pods" or "node", for messages */
	enum stream_state state;
	CURL *h; /* in k->multi while ST_LIST or ST_WATCH */
	struct curl_slist *hdrs;
	char *body; /* a list response, or an error response's start */
	size_t len, cap;
	struct kube_linebuf lb;
	struct kube_event *ev; /* scratch for on_line() */
	char rv[KUBE_RV_MAX];  /* "" = list first */
	uint64_t wake_at;      /* ST_WAIT: monotonic ms */
	uint64_t started;
	unsigned backoff; /* the last backoff's base, ms; 0 after a success */
	int err;	  /* from the write callback; aborts the transfer */
	bool delivered;	  /* this watch applied an event */
	bool failing;	  /* the last request failed: log the next failure at debug */
	char errbuf[CURL_ERROR_SIZE];
};

struct kube {
	char node[KUBE_NAME_MAX];
	struct kube_creds creds;
	char *ua;
	kube_request_fn_t on_request;
	void *ctx;
	unsigned backoff_min, backoff_max, watch_timeout_s;
	size_t max_pods;

	pthread_mutex_t lock; /* pods, node_obj, st */
	pthread_cond_t synced;
	bool lock_init, cond_init;
	struct kube_object **pods;
	size_t npods;
	struct kube_object *node_obj;
	struct kube_stats st;

	pthread_mutex_t tok_lock;
	bool tok_lock_init;
	char *tok;
	time_t tok_read;

	CURLM *multi;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	uint64_t rng; /* the watch thread's jitter */
	struct stream streams[2];
	/* requests seen inside curl callbacks, fired once curl_multi_perform() has returned */
	struct kube_object *pending;
	bool *pending_node;
	size_t npending, pending_cap, pending_node_cap;
};

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: jitter only */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* DNS subdomain (names, node) or DNS label (namespaces) characters and length. */
static bool is_dns_name(const char *s, size_t max, bool dots)
{
	size_t n, i;

	if (!s || !(n = strlen(s)) || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
		    !(dots && s[i] == '.'))
			return false;
	return true;
}

/* --- HTTP ------------------------------------------------------------------------------- */

/* "Authorization: Bearer ..." into a new string; NULL and 0 when there is no token. */
static int auth_header(struct kube *k, char **out)
{
	const char *tok = k->creds.token;
	char *buf = NULL;
	size_t len;
	time_t now = time(NULL);
	int err = 0;

	*out = NULL;
	if (!tok && !k->creds.token_file)
		return 0;
	pthread_mutex_lock(&k->tok_lock);
	if (!tok) {
		if (!k->tok || now - k->tok_read >= TOKEN_REREAD_S || now < k->tok_read) {
			err = read_file_bounded(AT_FDCWD, k->creds.token_file, TOKEN_MAX, &buf,
						&len);
			if (!err) {
				while (len && isspace((unsigned char)buf[len - 1]))
					buf[--len] = '\0';
				free(k->tok);
				k->tok = buf;
				k->tok_read = now;
			} else if (k->tok) {
				err = 0; /* keep the last token; the file is being replaced */
			}
		}
		tok = k->tok;
	}
	if (!err && tok && tok[0] && asprintf(out, "Authorization: Bearer %s", tok) < 0) {
		*out = NULL;
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&k->tok_lock);
	return err;
}

/* Sets what every request needs: URL, TLS, auth, headers, timeouts. */
static int setup_handle(struct kube *k, CURL *h, const char *url, const char *ctype, long timeout_s,
			struct curl_slist **hdrs)
{
	struct curl_blob blob;
	struct curl_slist *l = NULL, *t;
	char *auth = NULL, ct[96];
	int err;

	http_setup(h, url, k->ua, CONNECT_TIMEOUT_S * 1000, timeout_s * 1000);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	if (k->creds.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, k->creds.ca_file);
	if (k->creds.ca_data) {
		blob = (struct curl_blob){ k->creds.ca_data, k->creds.ca_data_len, CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (k->creds.insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	if (k->creds.cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, k->creds.cert_file);
	if (k->creds.cert_data) {
		blob = (struct curl_blob){ k->creds.cert_data, k->creds.cert_data_len,
					   CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
	}
	if (k->creds.key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, k->creds.key_file);
	if (k->creds.key_data) {
		blob = (struct curl_blob){ k->creds.key_data, k->creds.key_data_len,
					   CURL_BLOB_COPY };
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
	}

	err = auth_header(k, &auth);
	if (err)
		return err;
	t = curl_slist_append(l, "Accept: application/json");
	if (!t)
		goto nomem;
	l = t;
	if (auth) {
		t = curl_slist_append(l, auth);
		if (!t)
			goto nomem;
		l = t;
	}
	if (ctype) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		t = curl_slist_append(l, ct);
		if (!t)
			goto nomem;
		l = t;
	}
	free(auth);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
	*hdrs = l;
	return 0;
nomem:
	free(auth);
	curl_slist_free_all(l);
	return -ENOMEM;
}

/* The "message" of a Status body, for debug logs. */
static void status_message(const char *body, size_t len, char *out, size_t size)
{
	json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(root, "message"));

	snprintf(out, size, "%s", m ? m : "");
	json_decref(root);
}

/*
 * One blocking request (patch, event, get) on its own handle; @body NULL sends none. With
 * @resp, the response body (at most resp->max bytes) is left there for http_body_free().
 */
static int do_request(struct kube *k, const char *method, const char *path, const char *ctype,
		      const char *body, struct http_body *resp)
{
	struct curl_slist *hdrs = NULL;
	struct http_body s = { .max = resp ? resp->max : 0 };
	char *url = NULL, msg[256];
	long code = 0;
	CURLcode rc;
	CURL *h;
	int err;

	if (asprintf(&url, "%s%s", k->creds.server, path) < 0)
		return -ENOMEM;
	h = curl_easy_init();
	if (!h) {
		free(url);
		return -ENOMEM;
	}
	err = setup_handle(k, h, url, ctype, REQUEST_TIMEOUT_S, &hdrs);
	if (err)
		goto out;
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		err = http_curl_errno(rc);
		pr_debug("kube: %s %s: %s", method, path, curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	err = http_status_errno(code);
	if (err) {
		status_message(s.buf, s.len, msg, sizeof(msg));
		pr_debug("kube: %s %s: HTTP %ld: %s", method, path, code, msg);
	}
out:
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	if (resp && !err) {
		*resp = s;
		s.buf = NULL;
	}
	free(s.buf);
	free(url);
	return err;
}

/* --- requests from the daemon ------------------------------------------------------------- */

/* {"metadata":{"annotations":<object of string|null>}} or NULL for bad input. */
static char *annotations_patch(const char *annotations_json, int *err)
{
	json_t *ann, *v, *patch;
	const char *key;
	char *out;

	*err = -EINVAL;
	if (!annotations_json)
		return NULL;
	ann = json_loads(annotations_json, 0, NULL);
	if (!json_is_object(ann) || !json_object_size(ann)) {
		json_decref(ann);
		return NULL;
	}
	json_object_foreach(ann, key, v) {
		if (!key[0] || strlen(key) > ANNOTATION_KEY_LEN_MAX ||
		    !(json_is_string(v) || json_is_null(v))) {
			json_decref(ann);
			return NULL;
		}
	}
	patch = json_pack("{s:{s:o}}", "metadata", "annotations", ann);
	out = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	*err = out ? 0 : -ENOMEM;
	return out;
}

int kube__patch_pod_annotations(struct kube *k, const char *ns, const char *name,
				const char *annotations_json)
{
	char path[512], *body;
	int err;

	if (!k || !is_dns_name(ns, NS_LEN_MAX, false) || !is_dns_name(name, NAME_LEN_MAX, true))
		return -EINVAL;
	body = annotations_patch(annotations_json, &err);
	if (!body)
		return err;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	err = do_request(k, "PATCH", path, "application/merge-patch+json", body, NULL);
	free(body);
	return err;
}

int kube__patch_node_annotations(struct kube *k, const char *annotations_json)
{
	char path[512], *body;
	int err;

	if (!k)
		return -EINVAL;
	body = annotations_patch(annotations_json, &err);
	if (!body)
		return err;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", k->node);
	err = do_request(k, "PATCH", path, "application/merge-patch+json", body, NULL);
	free(body);
	return err;
}

int kube__get_annotation(struct kube *k, enum kube_kind kind, const char *ns, const char *name,
			 const char *key, char *buf, size_t size)
{
	struct http_body s = { .max = KUBE_MAX_EVENT_BYTES };
	json_t *root, *v;
	char path[512];
	size_t len;
	int err;

	if (!k || !key || !buf || !size)
		return -EINVAL;
	if (kind == KUBE_KIND_POD) {
		if (!is_dns_name(ns, NS_LEN_MAX, false) || !is_dns_name(name, NAME_LEN_MAX, true))
			return -EINVAL;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	} else if (kind == KUBE_KIND_NODE) {
		snprintf(path, sizeof(path), "/api/v1/nodes/%s", k->node);
	} else {
		return -EINVAL;
	}
	err = do_request(k, "GET", path, NULL, NULL, &s);
	if (err)
		return err;
	root = s.truncated ? NULL : json_loadb(s.buf ? s.buf : "", s.len, 0, NULL);
	http_body_free(&s);
	if (!json_is_object(root)) {
		json_decref(root);
		return -EIO;
	}
	v = json_object_get(json_object_get(json_object_get(root, "metadata"), "annotations"), key);
	if (!json_is_string(v)) {
		err = -ENODATA;
	} else {
		len = json_string_length(v);
		if (len >= size || memchr(json_string_value(v), '\0', len)) {
			err = -EOVERFLOW;
		} else {
			memcpy(buf, json_string_value(v), len + 1);
			err = 0;
		}
	}
	json_decref(root);
	return err;
}

int kube__create_event(struct kube *k, const struct kube_event_spec *e)
{
	char path[256], evname[KUBE_NAME_MAX], ts[CLOCK_RFC3339_MAX], msg[EVENT_MESSAGE_MAX + 1];
	const char *ns, *name, *kind;
	int64_t now_ns;
	json_t *ev;
	char *body;
	int err;

	if (!k || !e || !e->reason || !e->reason[0] || strlen(e->reason) > 128 || !e->type ||
	    (strcmp(e->type, "Normal") && strcmp(e->type, "Warning")))
		return -EINVAL;
	if (e->kind == KUBE_KIND_POD) {
		if (!is_dns_name(e->ns, NS_LEN_MAX, false) ||
		    !is_dns_name(e->name, NAME_LEN_MAX, true))
			return -EINVAL;
		ns = e->ns;
		name = e->name;
		kind = "Pod";
	} else if (e->kind == KUBE_KIND_NODE) {
		ns = "default"; /* as the kubelet files its node events */
		name = k->node;
		kind = "Node";
	} else {
		return -EINVAL;
	}
	now_ns = clock_real_ns();
	clock_rfc3339(ts, sizeof(ts), now_ns, 0);
	/* the kubelet's naming: "<object>.<unix nanoseconds in hex>" */
	snprintf(evname, sizeof(evname), "%.200s.%llx", name, (unsigned long long)now_ns);
	/* valid UTF-8, cut at a character boundary: json_pack refuses anything else */
	text_utf8_sanitize_copy(msg, sizeof(msg), e->message ? e->message : "",
				e->message ? strlen(e->message) : 0);

	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}, s:s, s:s, s:s, "
		       "s:{s:s, s:s}, s:s, s:s, s:i, s:s, s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "name", evname, "namespace",
		       ns, "involvedObject", "apiVersion", "v1", "kind", kind, "name", name,
		       "namespace", e->kind == KUBE_KIND_POD ? ns : "", "reason", e->reason,
		       "message", msg, "type", e->type, "source", "component", "slideops-profiler",
		       "host", k->node, "firstTimestamp", ts, "lastTimestamp", ts, "count", 1,
		       "reportingComponent", "slideops-profiler", "reportingInstance", k->node);
	if (!ev)
		return -EINVAL; /* a string that is not UTF-8 */
	if (e->uid && e->uid[0])
		json_object_set_new(json_object_get(ev, "involvedObject"), "uid",
				    json_string(e->uid));
	if (e->kind == KUBE_KIND_NODE)
		json_object_del(json_object_get(ev, "involvedObject"), "namespace");
	body = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	if (!body)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
	err = do_request(k, "POST", path, "application/json", body, NULL);
	free(body);
	return err;
}

/* --- the table ------------------------------------------------------------------------------ */

static ssize_t find_pod(struct kube *k, const struct kube_object *o)
{
	size_t i;

	for (i = 0; i < k->npods; i++) {
		const struct kube_object *p = k->pods[i];

		if (o->uid[0] ? !strcmp(p->uid, o->uid) :
				(!strcmp(p->ns, o->ns) && !strcmp(p->name, o->name)))
			return (ssize_t)i;
	}
	return -1;
}

/* Whether @new carries a capture value @old (NULL: not known before) did not have. */
static bool new_request(const struct kube_object *old, const struct kube_object *new)
{
	if (!new->has_capture)
		return false;
	return !old || !old->has_capture || old->capture_too_long != new->capture_too_long ||
	       strcmp(old->capture, new->capture);
}

static void fire(struct kube *k, const struct kube_object *o, bool node)
{
	struct kube_request r = {
		.kind = node ? KUBE_KIND_NODE : KUBE_KIND_POD,
		.ns = node ? "" : o->ns,
		.name = o->name,
		.uid = o->uid,
		.value = o->capture,
		.too_long = o->capture_too_long,
		.rv = o->rv,
	};

	if (!k->on_request)
		return;
	pthread_mutex_lock(&k->lock);
	k->st.requests++;
	pthread_mutex_unlock(&k->lock);
	pr_debug("kube: capture request on %s %s%s%s: %s", node ? "node" : "pod", r.ns,
		 node ? "" : "/", r.name, r.value);
	k->on_request(k->ctx, &r);
}

/*
 * Queues a request seen during a transfer: on_request runs outside curl's callbacks, so it may
 * make requests of its own. Bounded by the table size (one pending request per object at most
 * per curl_multi_perform() round, in practice a handful).
 */
static void defer(struct kube *k, const struct kube_object *o, bool node)
{
	if (k->npending > k->max_pods) {
		pr_warn("kube: too many capture requests at once: %s/%s dropped", o->ns, o->name);
		return;
	}
	if (array_ensure((void **)&k->pending, &k->pending_cap, sizeof(*k->pending),
			 k->npending + 1) ||
	    array_ensure((void **)&k->pending_node, &k->pending_node_cap, sizeof(*k->pending_node),
			 k->npending + 1))
		return;
	memcpy(&k->pending[k->npending], o, sizeof(*o));
	k->pending_node[k->npending++] = node;
}

static void fire_pending(struct kube *k)
{
	size_t i;

	for (i = 0; i < k->npending && !atomic_load(&k->stop); i++)
		fire(k, &k->pending[i], k->pending_node[i]);
	k->npending = 0;
}

/* Applies one watch event of the pods stream. Only the watch thread writes the table. */
static void apply_pod_event(struct kube *k, const struct kube_event *ev)
{
	const struct kube_object *o = &ev->obj;
	struct kube_object *p = NULL;
	bool req = false, warn = false;
	ssize_t i;

	pthread_mutex_lock(&k->lock);
	i = find_pod(k, o);
	if (ev->type == KUBE_EV_DELETED) {
		if (i >= 0) {
			free(k->pods[i]);
			k->pods[i] = k->pods[--k->npods];
		}
	} else if (i >= 0) {
		req = new_request(k->pods[i], o);
		memcpy(k->pods[i], o, sizeof(*o));
		p = k->pods[i];
	} else if (k->npods < k->max_pods && (p = malloc(sizeof(*p)))) {
		memcpy(p, o, sizeof(*p));
		k->pods[k->npods++] = p;
		req = new_request(NULL, o);
	} else {
		warn = !k->st.dropped_pods++;
	}
	k->st.pods = k->npods;
	pthread_mutex_unlock(&k->lock);
	if (warn)
		pr_warn("kube: pod table full (%zu pods) or out of memory: %s/%s not kept",
			k->max_pods, o->ns, o->name);
	if (req)
		defer(k, p, false); /* p stays valid: only this thread frees table entries */
}

static void apply_node(struct kube *k, const struct kube_object *o, bool deleted, bool now)
{
	struct kube_object *n = NULL, *old;
	bool req = false;

	if (!deleted && strcmp(o->name, k->node))
		return;
	if (!deleted && !(n = malloc(sizeof(*n))))
		return;
	if (n)
		memcpy(n, o, sizeof(*n));
	pthread_mutex_lock(&k->lock);
	old = k->node_obj;
	if (n)
		req = new_request(old, n);
	k->node_obj = n;
	k->st.node_seen = n != NULL;
	pthread_mutex_unlock(&k->lock);
	free(old);
	if (req && now)
		fire(k, n, true);
	else if (req)
		defer(k, n, true);
}

struct list_ctx {
	struct kube *k;
	struct kube_object **items;
	size_t n;
	unsigned long dropped;
};

static int collect_item(void *ctx, const struct kube_object *o)
{
	struct list_ctx *lc = ctx;
	struct kube_object *p;

	if (lc->n >= lc->k->max_pods) {
		lc->dropped++;
		return 0;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p, o, sizeof(*p));
	lc->items[lc->n++] = p;
	return 0;
}

/* Replaces the table (pods) or the node with a list response. */
static int apply_list(struct stream *s)
{
	struct kube *k = s->k;
	struct list_ctx lc = { .k = k };
	struct kube_object **old;
	size_t nold, i, j;
	unsigned skipped;
	bool *req = NULL;
	char rv[KUBE_RV_MAX];
	int n, err = 0;

	lc.items = calloc(k->max_pods ? k->max_pods : 1, sizeof(*lc.items));
	if (!lc.items)
		return -ENOMEM;
	n = kube_parse_list(s->body, s->len, collect_item, &lc, rv, sizeof(rv), &skipped);
	if (n < 0) {
		err = n;
		goto out;
	}
	if (skipped)
		pr_warn("kube: %s list: %u items did not parse", s->what, skipped);
	if (s->node) {
		/* apply_node() compares with the node known: a relist repeats no request */
		if (lc.n)
			apply_node(k, lc.items[0], false, true);
		else
			apply_node(k, NULL, true, true);
		goto done;
	}
	req = calloc(lc.n ? lc.n : 1, sizeof(*req));
	if (!req) {
		err = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&k->lock);
	for (i = 0; i < lc.n; i++) {
		ssize_t o = find_pod(k, lc.items[i]);

		req[i] = new_request(o >= 0 ? k->pods[o] : NULL, lc.items[i]);
	}
	old = k->pods;
	nold = k->npods;
	k->pods = lc.items;
	k->npods = lc.n;
	lc.items = old; /* freed below, outside the lock */
	k->st.pods = k->npods;
	k->st.dropped_pods += lc.dropped;
	if (!k->st.synced) {
		k->st.synced = true;
		pthread_cond_broadcast(&k->synced);
	}
	pthread_mutex_unlock(&k->lock);
	if (lc.dropped)
		pr_warn("kube: pod table full: %lu of %zu pods not kept", lc.dropped,
			lc.dropped + k->max_pods);
	for (j = 0; j < nold; j++)
		free(lc.items[j]);
	lc.n = 0;
	for (i = 0; i < k->npods; i++)
		if (req[i])
			fire(k, k->pods[i], false);
done:
	memcpy(s->rv, rv, sizeof(rv));
out:
	for (i = 0; i < lc.n; i++)
		free(lc.items[i]);
	free(lc.items);
	free(req);
	return err;
}

/* --- the watch thread ----------------------------------------------------------------------- */

static int on_line(void *ctx, const char *line, size_t len)
{
	struct stream *s = ctx;
	struct kube *k = s->k;
	struct kube_event *ev = s->ev;
	int err;

	err = kube_parse_event(line, len, ev);
	if (err)
		return err;
	switch (ev->type) {
	case KUBE_EV_ERROR:
		pr_debug("kube: %s watch: ERROR %d: %s", s->what, ev->code, ev->message);
		return ev->code == 410 ? -ESTALE : -EPROTO;
	case KUBE_EV_BOOKMARK:
		break;
	default:
		if (s->node)
			apply_node(k, &ev->obj, ev->type == KUBE_EV_DELETED, false);
		else
			apply_pod_event(k, ev);
		s->delivered = true;
	}
	memcpy(s->rv, ev->rv, sizeof(s->rv));
	pthread_mutex_lock(&k->lock);
	k->st.events++;
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static void stream_ok(struct stream *s);

static size_t on_data(char *p, size_t sz, size_t nm, void *ud)
{
	struct stream *s = ud;
	size_t n = sz * nm, max;
	long code = 0;

	if (atomic_load(&s->k->stop))
		return 0;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
	if (s->state == ST_WATCH && code == 200) {
		if (s->failing)
			stream_ok(s); /* the watch is back, even before its first event */
		s->err = kube_linebuf_feed(&s->lb, p, n, on_line, s);
		return s->err ? 0 : n;
	}
	max = s->state == ST_LIST && code == 200 ? KUBE_MAX_LIST_BYTES : HTTP_BODY_MAX;
	if (n > max - s->len) {
		if (code != 200)
			return n; /* an error body: its start is enough */
		s->err = -EMSGSIZE;
		return 0;
	}
	if (array_ensure((void **)&s->body, &s->cap, 1, s->len + n + 1)) {
		s->err = -ENOMEM;
		return 0;
	}
	memcpy(s->body + s->len, p, n);
	s->len += n;
	s->body[s->len] = '\0';
	return n;
}

static void stream_close(struct stream *s)
{
	if (s->h) {
		curl_multi_remove_handle(s->k->multi, s->h);
		curl_easy_cleanup(s->h);
		s->h = NULL;
	}
	curl_slist_free_all(s->hdrs);
	s->hdrs = NULL;
}

/* Schedules the next request after an error: equal jitter over an exponential backoff. */
static void stream_backoff(struct stream *s)
{
	struct kube *k = s->k;
	unsigned b;

	b = s->backoff ? s->backoff * 2 : k->backoff_min;
	if (b > k->backoff_max)
		b = k->backoff_max;
	s->backoff = b;
	s->state = ST_WAIT;
	s->wake_at = clock_mono_ms() + b / 2 + next_rand(&k->rng) % (b / 2 + 1);
}

static void stream_now(struct stream *s)
{
	s->state = ST_WAIT;
	s->wake_at = 0;
}

static int stream_start(struct stream *s)
{
	struct kube *k = s->k;
	char *url = NULL, *rv = NULL;
	unsigned timeout = k->watch_timeout_s;
	bool watch = s->rv[0];
	int err, n;

	s->h = curl_easy_init();
	if (!s->h)
		return -ENOMEM;
	if (watch) {
		rv = curl_easy_escape(s->h, s->rv, 0);
		if (!rv) {
			err = -ENOMEM;
			goto fail;
		}
		if (!timeout) /* client-go's reflector: between 5 and 10 minutes */
			timeout = 300 + next_rand(&k->rng) % 300;
	}
	n = asprintf(&url, "%s/api/v1/%s?fieldSelector=%s%%3D%s%s%s%s", k->creds.server,
		     s->node ? "nodes" : "pods", s->node ? "metadata.name" : "spec.nodeName",
		     k->node, watch ? "&watch=1&resourceVersion=" : "", watch ? rv : "",
		     watch ? "&allowWatchBookmarks=true" : "");
	curl_free(rv);
	if (n < 0) {
		url = NULL;
		err = -ENOMEM;
		goto fail;
	}
	if (watch) {
		char *u2;

		n = asprintf(&u2, "%s&timeoutSeconds=%u", url, timeout);
		free(url);
		if (n < 0) {
			err = -ENOMEM;
			goto fail;
		}
		url = u2;
	}
	err = setup_handle(k, s->h, url, NULL, watch ? (long)timeout + 30 : LIST_TIMEOUT_S,
			   &s->hdrs);
	free(url);
	if (err)
		goto fail;
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
	curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, s->errbuf);
	s->errbuf[0] = '\0';
	s->len = 0;
	s->err = 0;
	s->delivered = false;
	s->started = clock_mono_ms();
	kube_linebuf_reset(&s->lb);
	s->state = watch ? ST_WATCH : ST_LIST;
	if (curl_multi_add_handle(k->multi, s->h) != CURLM_OK) {
		err = -ENOMEM;
		goto fail;
	}
	pthread_mutex_lock(&k->lock);
	if (watch)
		k->st.watches++;
	pthread_mutex_unlock(&k->lock);
	return 0;
fail:
	stream_close(s);
	s->state = ST_WAIT;
	return err;
}

static void count(struct kube *k, bool error, bool relist)
{
	pthread_mutex_lock(&k->lock);
	k->st.errors += error;
	k->st.relists += relist;
	pthread_mutex_unlock(&k->lock);
}

/* A failure: logged once at warn when it starts, then at debug until a success. */
static void stream_fail(struct stream *s, const char *msg)
{
	if (s->failing) {
		pr_debug("kube: %s %s: %s", s->what, s->state == ST_LIST ? "list" : "watch", msg);
	} else {
		pr_warn("kube: %s %s: %s; retrying with backoff", s->what,
			s->state == ST_LIST ? "list" : "watch", msg);
		s->failing = true;
	}
}

static void stream_ok(struct stream *s)
{
	if (s->failing)
		pr_info("kube: %s %s: connected again", s->what,
			s->state == ST_LIST ? "list" : "watch");
	s->failing = false;
	s->backoff = 0;
}

static void stream_done(struct stream *s, CURLcode rc)
{
	struct kube *k = s->k;
	char msg[256], why[400];
	long code = 0;
	int err;

	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
	stream_close(s);
	if (rc != CURLE_OK)
		snprintf(why, sizeof(why), "%s",
			 s->err	      ? strerror(-s->err) :
			 s->errbuf[0] ? s->errbuf :
					curl_easy_strerror(rc));
	else if (s->err)
		snprintf(why, sizeof(why), "%s", strerror(-s->err));
	else {
		status_message(s->body, s->len, msg, sizeof(msg));
		snprintf(why, sizeof(why), "HTTP %ld%s%s", code, msg[0] ? ": " : "", msg);
	}

	if (s->state == ST_LIST) {
		if (rc == CURLE_OK && code == 200) {
			err = apply_list(s);
			if (!err) {
				pthread_mutex_lock(&k->lock);
				k->st.lists++;
				pthread_mutex_unlock(&k->lock);
				stream_ok(s);
				stream_now(s); /* s->rv is set: the watch starts at once */
				return;
			}
			snprintf(why, sizeof(why), "bad list response: %s", strerror(-err));
		}
		stream_fail(s, why);
		count(k, true, false);
		stream_backoff(s);
		return;
	}

	/* a watch ended */
	if (s->err == -ESTALE || (rc == CURLE_OK && code == 410)) {
		pr_info("kube: %s watch: resourceVersion %s is too old (410 Gone): relisting",
			s->what, s->rv);
		s->rv[0] = '\0';
		count(k, false, true);
		stream_now(s);
		return;
	}
	if (s->err && s->err != -EPROTO && s->err != -ENOMEM) {
		/* an oversized or malformed event: the table may have missed it */
		snprintf(msg, sizeof(msg), "bad event (%s): relisting", strerror(-s->err));
		stream_fail(s, msg);
		s->rv[0] = '\0';
		count(k, true, true);
		stream_backoff(s);
		return;
	}
	if (rc == CURLE_OK && code == 200 && !s->err) {
		/* the server's timeoutSeconds: resume; a watch that ends at once waits a little */
		if (s->delivered || clock_mono_ms() - s->started >= 1000) {
			stream_ok(s);
			stream_now(s);
		} else {
			stream_backoff(s);
		}
		return;
	}
	stream_fail(s, why);
	count(k, true, false);
	stream_backoff(s);
}

static void *watch_thread(void *arg)
{
	struct kube *k = arg;
	struct stream *s;
	CURLMsg *m;
	uint64_t now, next;
	int running, left, err;
	size_t i;

	while (!atomic_load(&k->stop)) {
		now = clock_mono_ms();
		for (i = 0; i < 2; i++) {
			s = &k->streams[i];
			if (s->state == ST_WAIT && now >= s->wake_at) {
				err = stream_start(s);
				if (err) {
					pr_warn_errno(err, "kube: %s: cannot start a request",
						      s->what);
					stream_backoff(s);
				}
			}
		}
		curl_multi_perform(k->multi, &running);
		while ((m = curl_multi_info_read(k->multi, &left))) {
			if (m->msg != CURLMSG_DONE)
				continue;
			char *priv = NULL;

			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
			if (priv)
				stream_done((struct stream *)priv, m->data.result);
		}
		fire_pending(k);
		if (atomic_load(&k->stop))
			break;
		/* sleep until the next scheduled request, a socket event or kube__free() */
		now = clock_mono_ms();
		next = 1000;
		for (i = 0; i < 2; i++) {
			s = &k->streams[i];
			if (s->state == ST_WAIT)
				next = s->wake_at <= now ?
					       0 :
					       (s->wake_at - now < next ? s->wake_at - now : next);
		}
		if (next)
			curl_multi_poll(k->multi, NULL, 0, (int)next, NULL);
	}
	return NULL;
}

/* --- lifecycle and lookups -------------------------------------------------------------------- */

static int load_creds(struct kube *k, const struct kube_opts *o)
{
	char err[512], *text = NULL, *dir = NULL, *slash;
	size_t len;
	int ret;

	if (!o->kubeconfig || !o->kubeconfig[0]) {
		ret = kube_creds_in_cluster(o->sa_dir, getenv("KUBERNETES_SERVICE_HOST"),
					    getenv("KUBERNETES_SERVICE_PORT"), &k->creds, err,
					    sizeof(err));
		if (ret)
			pr_err("kube: in-cluster credentials: %s", err);
		return ret;
	}
	ret = read_file_bounded(AT_FDCWD, o->kubeconfig, KUBE_MAX_FILE_BYTES, &text, &len);
	if (ret)
		return pr_err_errno(ret, "kube: read kubeconfig %s", o->kubeconfig);
	dir = strdup(o->kubeconfig);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		strcpy(dir, ".");
	ret = kube_parse_kubeconfig(text, len, dir, &k->creds, err, sizeof(err));
	if (ret)
		pr_err("kube: %s: %s", o->kubeconfig, err);
	free(dir);
	free(text);
	return ret;
}

/* The options' values and their defaults; the jitter's seed. */
static void set_opts(struct kube *k, const struct kube_opts *opts)
{
	snprintf(k->node, sizeof(k->node), "%s", opts->node_name);
	k->on_request = opts->on_request;
	k->ctx = opts->ctx;
	k->max_pods = opts->max_pods ? opts->max_pods : KUBE_DEFAULT_MAX_PODS;
	k->backoff_min = opts->backoff_min_ms ? opts->backoff_min_ms : BACKOFF_MIN_MS;
	k->backoff_max = opts->backoff_max_ms ? opts->backoff_max_ms : BACKOFF_MAX_MS;
	if (k->backoff_max < k->backoff_min)
		k->backoff_max = k->backoff_min;
	k->watch_timeout_s = opts->watch_timeout_s;
	k->rng = ((uint64_t)clock_real_ns() << 20) ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)k;
	if (!k->rng)
		k->rng = 1;
	atomic_init(&k->stop, false);
}

/* The two locks and the synced condition (on the monotonic clock). Returns 0 or -errno. */
static int init_sync(struct kube *k)
{
	pthread_condattr_t ca;
	int err;

	if ((err = -pthread_mutex_init(&k->lock, NULL)))
		return err;
	k->lock_init = true;
	if ((err = -pthread_mutex_init(&k->tok_lock, NULL)))
		return err;
	k->tok_lock_init = true;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = -pthread_cond_init(&k->synced, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return err;
	k->cond_init = true;
	return 0;
}

/* The multi handle and the pods and node streams, waiting to start. Returns 0 or -ENOMEM. */
static int init_streams(struct kube *k)
{
	size_t i;

	k->multi = curl_multi_init();
	if (!k->multi)
		return -ENOMEM;
	for (i = 0; i < 2; i++) {
		struct stream *s = &k->streams[i];

		s->k = k;
		s->node = i == 1;
		s->what = s->node ? "node" : "pods";
		s->state = ST_WAIT;
		kube_linebuf_init(&s->lb, KUBE_MAX_EVENT_BYTES);
		s->ev = malloc(sizeof(*s->ev));
		if (!s->ev)
			return -ENOMEM;
	}
	return 0;
}

int kube__new(const struct kube_opts *opts, struct kube **out)
{
	const char *why;
	struct kube *k;
	int err;

	if (!opts || !out || !is_dns_name(opts->node_name, NAME_LEN_MAX, true))
		return -EINVAL;
	if (http_init(&why))
		return pr_err_errno(-ENOMEM, "kube: curl_global_init: %s", why);
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	set_opts(k, opts);
	err = -ENOMEM;
	k->ua = strdup(opts->user_agent && opts->user_agent[0] ? opts->user_agent :
								 HTTP_USER_AGENT);
	k->pods = calloc(k->max_pods, sizeof(*k->pods));
	if (!k->ua || !k->pods)
		goto err_free;
	err = init_sync(k);
	if (err)
		goto err_free;
	err = load_creds(k, opts);
	if (err)
		goto err_free;
	err = init_streams(k);
	if (err)
		goto err_free;
	err = -pthread_create(&k->thread, NULL, watch_thread, k);
	if (err) {
		pr_err_errno(err, "kube: pthread_create");
		goto err_free;
	}
	k->thread_started = true;
	pr_info("kube: watching the pods of node %s at %s", k->node, k->creds.server);
	*out = k;
	return 0;
err_free:
	kube__free(k);
	return err;
}

void kube__free(struct kube *k)
{
	size_t i;

	if (!k)
		return;
	if (k->thread_started) {
		atomic_store(&k->stop, true);
		curl_multi_wakeup(k->multi);
		pthread_join(k->thread, NULL);
	}
	for (i = 0; i < 2; i++) {
		struct stream *s = &k->streams[i];

		if (s->k)
			stream_close(s);
		kube_linebuf_free(&s->lb);
		free(s->body);
		free(s->ev);
	}
	if (k->multi)
		curl_multi_cleanup(k->multi);
	for (i = 0; i < k->npods; i++)
		free(k->pods[i]);
	free(k->pods);
	free(k->node_obj);
	free(k->pending);
	free(k->pending_node);
	if (k->cond_init)
		pthread_cond_destroy(&k->synced);
	if (k->lock_init)
		pthread_mutex_destroy(&k->lock);
	if (k->tok_lock_init)
		pthread_mutex_destroy(&k->tok_lock);
	free(k->tok);
	free(k->ua);
	kube_creds_free(&k->creds);
	free(k);
}

int kube__wait_synced(struct kube *k, int timeout_ms)
{
	struct timespec ts;
	int err = 0;

	if (!k)
		return -EINVAL;
	clock_deadline(&ts, CLOCK_MONOTONIC, timeout_ms > 0 ? (uint64_t)timeout_ms : 0);
	pthread_mutex_lock(&k->lock);
	while (!k->st.synced && !err)
		err = pthread_cond_timedwait(&k->synced, &k->lock, &ts);
	err = k->st.synced ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__pod_by_uid(struct kube *k, const char *uid, struct kube_object *out)
{
	size_t i;
	int err = -ENOENT;

	if (!k || !uid || !out)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	for (i = 0; i < k->npods; i++) {
		if (!strcmp(k->pods[i]->uid, uid)) {
			memcpy(out, k->pods[i], sizeof(*out));
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__pod_by_container_id(struct kube *k, const char *id, struct kube_object *out,
			      char *container, size_t size)
{
	char rt[16], hex[OWNER_CONTAINER_ID_MAX];
	size_t i, j;
	int err = -ENOENT;

	if (!k || !id || !out)
		return -EINVAL;
	if (strstr(id, "://")) {
		err = kube_parse_container_id(id, rt, sizeof(rt), hex, sizeof(hex));
		if (err)
			return -EINVAL;
		id = hex;
		err = -ENOENT;
	}
	pthread_mutex_lock(&k->lock);
	for (i = 0; i < k->npods && err; i++) {
		const struct kube_object *p = k->pods[i];

		for (j = 0; j < p->ncontainers; j++) {
			if (strcmp(p->containers[j].id, id))
				continue;
			memcpy(out, p, sizeof(*out));
			if (container && size)
				snprintf(container, size, "%s", p->containers[j].name);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__node(struct kube *k, struct kube_object *out)
{
	int err = -ENOENT;

	if (!k || !out)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	if (k->node_obj) {
		memcpy(out, k->node_obj, sizeof(*out));
		err = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

void kube__stats(struct kube *k, struct kube_stats *out)
{
	if (!k || !out)
		return;
	pthread_mutex_lock(&k->lock);
	*out = k->st;
	pthread_mutex_unlock(&k->lock);
}

/* The pod of owner @o (by pod uid, else by container id), or NULL. Under k->lock. */
static const struct kube_object *owner_pod_locked(struct kube *k, const struct owner *o)
{
	const struct kube_object *p = NULL;
	size_t i, j;

	for (i = 0; i < k->npods && !p; i++) {
		if (o->pod_uid[0]) {
			if (!strcmp(k->pods[i]->uid, o->pod_uid))
				p = k->pods[i];
			continue;
		}
		for (j = 0; j < k->pods[i]->ncontainers; j++)
			if (!strcmp(k->pods[i]->containers[j].id, o->container_id))
				p = k->pods[i];
	}
	return p;
}

int kube__owner_namespace(void *ctx, const struct owner *o, char *ns, size_t size)
{
	struct kube *k = ctx;
	const struct kube_object *p;
	int err = -ENOENT;

	if (!k || !o || !ns || !size)
		return -EINVAL;
	if (!o->pod_uid[0] && !o->container_id[0])
		return -ENOENT;
	pthread_mutex_lock(&k->lock);
	p = owner_pod_locked(k, o);
	if (p && strlen(p->ns) < size) {
		memcpy(ns, p->ns, strlen(p->ns) + 1);
		err = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kube__owner_name(void *ctx, int tgid, struct owner *o)
{
	struct kube *k = ctx;
	const struct kube_object *p;
	int err = -ENOENT;

	(void)tgid;
	if (!k || !o)
		return -EINVAL;
	if (!o->pod_uid[0] && !o->container_id[0])
		return -ENOENT;
	pthread_mutex_lock(&k->lock);
	p = owner_pod_locked(k, o);
	if (p) {
		o->group = OWNER_SERVICE;
		snprintf(o->name, sizeof(o->name), "%s", p->workload);
		err = 0;
	}
	pthread_mutex_unlock(&k->lock);
	return err;
}
