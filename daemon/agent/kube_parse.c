// SPDX-License-Identifier: Apache-2.0
/*
 * kube_parse: container ids, workload names, objects, watch events, the line splitter and
 * credentials (kube_parse.h). jansson and libyaml stay inside this file.
 */
#include "daemon/agent/kube_parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "base/fileio.h"
#include "base/log.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- container ids and workloads ----------------------------------------------------------- */

static const char *const known_runtimes[] = { "containerd", "cri-o", "docker" };

int kube_parse_container_id(const char *s, char *runtime, size_t rsize, char *id, size_t isize)
{
	const char *sep, *hex;
	size_t slen, i;
	bool known = false;

	if (!s)
		return -EINVAL;
	sep = strstr(s, "://");
	if (!sep || sep == s)
		return -EINVAL;
	slen = sep - s;
	for (i = 0; i < slen; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.')
			return -EINVAL;
	hex = sep + 3;
	if (strlen(hex) != 64)
		return -EINVAL;
	for (i = 0; i < 64; i++)
		if (!isdigit((unsigned char)hex[i]) && !(hex[i] >= 'a' && hex[i] <= 'f'))
			return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(known_runtimes); i++)
		if (strlen(known_runtimes[i]) == slen && !memcmp(s, known_runtimes[i], slen))
			known = true;
	if (!known)
		return -EPROTONOSUPPORT;
	if (slen >= rsize || isize < 65)
		return -ENAMETOOLONG;
	memcpy(runtime, s, slen);
	runtime[slen] = '\0';
	memcpy(id, hex, 65);
	return 0;
}

/* k8s.io/apimachinery/pkg/util/rand.SafeEncodeString: no vowels, no 0/1/3 (no bad words). */
static bool is_hash_like(const char *s, size_t n)
{
	size_t i;

	if (n < 6 || n > 10)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("bcdfghjklmnpqrstvwxz2456789", s[i]) || !s[i])
			return false;
	return true;
}

/*
 * The CronJob controller names a Job "<cronjob>-<scheduled time in unix minutes>"
 * (getJobName() in pkg/controller/cronjob/utils.go). Minutes between 2015 and 2100 keep
 * "migrate-20240101" (a date) a Job name.
 */
static size_t cronjob_prefix_len(const char *name)
{
	const char *dash = strrchr(name, '-');
	unsigned long long v = 0;
	const char *p;

	if (!dash || dash == name || !dash[1] || strlen(dash + 1) > 10)
		return 0;
	for (p = dash + 1; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return 0;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v < 23667840ULL /* 2015-01-01 */ || v > 68374080ULL /* 2100-01-01 */)
		return 0;
	return dash - name;
}

static int copy_n(char *out, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int kube_workload_name(const struct kube_object *o, char *out, size_t size)
{
	const char *on = o->owner_name, *kind = o->owner_kind;
	size_t n = strlen(on), h = strlen(o->template_hash), c;

	if (on[0] && !strcmp(kind, "ReplicaSet")) {
		if (h && n > h + 1 && on[n - h - 1] == '-' && !strcmp(on + n - h, o->template_hash))
			return copy_n(out, size, on, n - h - 1);
		if (!h) {
			const char *dash = strrchr(on, '-');

			if (dash && dash != on && is_hash_like(dash + 1, strlen(dash + 1)))
				return copy_n(out, size, on, dash - on);
		}
		return copy_n(out, size, on, n); /* a bare ReplicaSet is the workload */
	}
	if (on[0] && !strcmp(kind, "Job")) {
		c = cronjob_prefix_len(on);
		return copy_n(out, size, on, c ? c : n);
	}
	if (on[0] && (!strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet")))
		return copy_n(out, size, on, n);
	if (!o->name[0])
		return -EINVAL;
	return copy_n(out, size, o->name, strlen(o->name));
}

/* --- JSON objects ---------------------------------------------------------------------------- */

/* Copies an optional string member; absent or not a string gives "". */
static int get_str(json_t *obj, const char *key, char *out, size_t size)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	out[0] = '\0';
	if (!json_is_string(v))
		return 0;
	s = json_string_value(v);
	return copy_n(out, size, s, strlen(s));
}

/*
 * The controller owner reference of @o. A kind or name too long to keep is dropped with a log
 * line (the pod is then its own workload), never the whole pod: one bad object must not
 * abort the watch into a relist loop.
 */
static void parse_owner(json_t *refs, struct kube_object *o)
{
	json_t *ref;
	size_t i;

	if (!json_is_array(refs))
		return;
	json_array_foreach(refs, i, ref) {
		if (!json_is_true(json_object_get(ref, "controller")))
			continue;
		if (get_str(ref, "kind", o->owner_kind, sizeof(o->owner_kind)) ||
		    get_str(ref, "name", o->owner_name, sizeof(o->owner_name))) {
			/* base/log makes the names valid UTF-8 and bounds the line */
			pr_warn("kube: pod %s/%s: its controller ownerReference is too long to "
				"keep (kind at most %d, name at most %d bytes); the pod is named "
				"by itself",
				o->ns, o->name, KUBE_KIND_MAX - 1, KUBE_NAME_MAX - 1);
			o->owner_kind[0] = o->owner_name[0] = '\0';
		}
		return;
	}
}

static void parse_statuses(json_t *arr, struct kube_object *o)
{
	struct kube_container *c;
	json_t *st;
	size_t i;

	if (!json_is_array(arr))
		return;
	json_array_foreach(arr, i, st) {
		const char *cid = json_string_value(json_object_get(st, "containerID"));
		const char *name = json_string_value(json_object_get(st, "name"));

		if (o->ncontainers >= KUBE_POD_MAX_CONTAINERS || !cid || !name ||
		    strlen(name) >= KUBE_CONTAINER_NAME_MAX) {
			o->dropped_containers++;
			continue;
		}
		c = &o->containers[o->ncontainers];
		if (kube_parse_container_id(cid, c->runtime, sizeof(c->runtime), c->id,
					    sizeof(c->id))) {
			o->dropped_containers++;
			continue;
		}
		strcpy(c->name, name);
		o->ncontainers++;
	}
}

/* Fills @o (zeroed by the caller) from a Pod or Node object. */
static int object_from_json(json_t *obj, struct kube_object *o)
{
	json_t *md, *v;
	int err;

	md = json_object_get(obj, "metadata");
	if (!json_is_object(md))
		return -EINVAL;
	if ((err = get_str(md, "name", o->name, sizeof(o->name))) ||
	    (err = get_str(md, "namespace", o->ns, sizeof(o->ns))) ||
	    (err = get_str(md, "uid", o->uid, sizeof(o->uid))) ||
	    (err = get_str(md, "resourceVersion", o->rv, sizeof(o->rv))))
		return err;
	if (!o->name[0])
		return -EINVAL;

	v = json_object_get(json_object_get(md, "annotations"), KUBE_CAPTURE_ANNOTATION);
	if (json_is_string(v)) {
		o->has_capture = true;
		if (copy_n(o->capture, sizeof(o->capture), json_string_value(v),
			   strlen(json_string_value(v))))
			o->capture_too_long = true;
	}
	/* a label value is at most 63 bytes in a real cluster; a longer one is not a hash */
	if (get_str(json_object_get(md, "labels"), KUBE_TEMPLATE_HASH_LABEL, o->template_hash,
		    sizeof(o->template_hash)))
		o->template_hash[0] = '\0';

	parse_owner(json_object_get(md, "ownerReferences"), o);

	v = json_object_get(obj, "status");
	parse_statuses(json_object_get(v, "containerStatuses"), o);
	parse_statuses(json_object_get(v, "initContainerStatuses"), o);
	parse_statuses(json_object_get(v, "ephemeralContainerStatuses"), o);

	return kube_workload_name(o, o->workload, sizeof(o->workload));
}

int kube_parse_object(const char *text, size_t len, struct kube_object *out)
{
	struct kube_object *o;
	json_t *root;
	int err;

	if (!text || len > KUBE_MAX_EVENT_BYTES)
		return text ? -EMSGSIZE : -EINVAL;
	root = json_loadb(text, len, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return -EINVAL;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		json_decref(root);
		return -ENOMEM;
	}
	err = object_from_json(root, o);
	if (!err)
		memcpy(out, o, sizeof(*o));
	free(o);
	json_decref(root);
	return err;
}

static const struct {
	const char *name;
	enum kube_event_type type;
} event_types[] = {
	{ "ADDED", KUBE_EV_ADDED },	{ "MODIFIED", KUBE_EV_MODIFIED },
	{ "DELETED", KUBE_EV_DELETED }, { "BOOKMARK", KUBE_EV_BOOKMARK },
	{ "ERROR", KUBE_EV_ERROR },
};

int kube_parse_event(const char *line, size_t len, struct kube_event *out)
{
	struct kube_event *ev = NULL;
	json_t *root, *obj, *code;
	const char *type, *msg;
	size_t i;
	int err;

	if (!line)
		return -EINVAL;
	if (len > KUBE_MAX_EVENT_BYTES)
		return -EMSGSIZE;
	root = json_loadb(line, len, 0, NULL);
	type = json_string_value(json_object_get(root, "type"));
	obj = json_object_get(root, "object");
	err = -EINVAL;
	if (!type || !json_is_object(obj))
		goto out;
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(event_types); i++)
		if (!strcmp(type, event_types[i].name))
			ev->type = event_types[i].type;
	switch (ev->type) {
	case KUBE_EV_ERROR:
		code = json_object_get(obj, "code");
		if (!json_is_integer(code) || json_integer_value(code) < 0 ||
		    json_integer_value(code) > 999) {
			err = -EINVAL;
			goto out;
		}
		ev->code = (int)json_integer_value(code);
		msg = json_string_value(json_object_get(obj, "message"));
		snprintf(ev->message, sizeof(ev->message), "%s", msg ? msg : "");
		break;
	case KUBE_EV_BOOKMARK:
		err = get_str(json_object_get(obj, "metadata"), "resourceVersion", ev->rv,
			      sizeof(ev->rv));
		if (err)
			goto out;
		break;
	case KUBE_EV_ADDED:
	case KUBE_EV_MODIFIED:
	case KUBE_EV_DELETED:
		err = object_from_json(obj, &ev->obj);
		if (err)
			goto out;
		memcpy(ev->rv, ev->obj.rv, sizeof(ev->rv));
		break;
	default:
		err = -EINVAL;
		goto out;
	}
	if (ev->type != KUBE_EV_ERROR && !ev->rv[0]) {
		err = -EINVAL;
		goto out;
	}
	memcpy(out, ev, sizeof(*ev));
	err = 0;
out:
	free(ev);
	json_decref(root);
	return err;
}

int kube_parse_list(const char *text, size_t len, kube_object_fn_t fn, void *ctx, char *rv,
		    size_t rvsize, unsigned *skipped)
{
	struct kube_object *o = NULL;
	char lrv[KUBE_RV_MAX];
	json_t *root, *items, *it;
	size_t i;
	int err, n = 0;

	if (skipped)
		*skipped = 0;
	if (!text)
		return -EINVAL;
	if (len > KUBE_MAX_LIST_BYTES)
		return -EMSGSIZE;
	root = json_loadb(text, len, 0, NULL);
	items = json_object_get(root, "items");
	err = -EINVAL;
	/* "items": null is how the server writes an empty list in some versions */
	if (!json_is_object(root) || !(json_is_array(items) || json_is_null(items)))
		goto out;
	err = get_str(json_object_get(root, "metadata"), "resourceVersion", lrv, sizeof(lrv));
	if (err)
		goto out;
	err = -EINVAL;
	if (!lrv[0])
		goto out;
	err = copy_n(rv, rvsize, lrv, strlen(lrv));
	if (err)
		goto out;
	o = malloc(sizeof(*o));
	if (!o) {
		err = -ENOMEM;
		goto out;
	}
	json_array_foreach(items, i, it) {
		memset(o, 0, sizeof(*o));
		if (!json_is_object(it) || object_from_json(it, o)) {
			if (skipped)
				(*skipped)++;
			continue;
		}
		err = fn(ctx, o);
		if (err)
			goto out;
		if (n < INT_MAX)
			n++;
	}
	err = n;
out:
	free(o);
	json_decref(root);
	return err;
}

/* --- the line splitter ------------------------------------------------------------------- */

int kube_linebuf_init(struct kube_linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof(*lb));
	lb->max = max ? max : KUBE_MAX_EVENT_BYTES;
	return 0;
}

void kube_linebuf_reset(struct kube_linebuf *lb)
{
	lb->len = 0;
}

void kube_linebuf_free(struct kube_linebuf *lb)
{
	if (!lb)
		return;
	free(lb->buf);
	lb->buf = NULL;
	lb->len = lb->cap = 0;
}

static int emit(const char *line, size_t len, kube_line_fn_t fn, void *ctx)
{
	if (len && line[len - 1] == '\r')
		len--;
	return len ? fn(ctx, line, len) : 0;
}

static int lb_append(struct kube_linebuf *lb, const char *data, size_t n)
{
	size_t cap;
	char *p;

	if (n > lb->max - lb->len) {
		lb->len = 0;
		return -EMSGSIZE;
	}
	if (lb->len + n > lb->cap) {
		cap = lb->cap ? lb->cap : 4096;
		while (cap < lb->len + n)
			cap *= 2;
		if (cap > lb->max)
			cap = lb->max;
		p = realloc(lb->buf, cap);
		if (!p)
			return -ENOMEM;
		lb->buf = p;
		lb->cap = cap;
	}
	memcpy(lb->buf + lb->len, data, n);
	lb->len += n;
	return 0;
}

int kube_linebuf_feed(struct kube_linebuf *lb, const char *data, size_t n, kube_line_fn_t fn,
		      void *ctx)
{
	const char *nl;
	size_t take, len;
	int err;

	while (n) {
		nl = memchr(data, '\n', n);
		if (!nl)
			return lb_append(lb, data, n);
		take = nl - data;
		if (lb->len) {
			err = lb_append(lb, data, take);
			if (err)
				return err;
			len = lb->len;
			lb->len = 0; /* consumed, whatever fn says */
			err = emit(lb->buf, len, fn, ctx);
		} else if (take > lb->max) {
			return -EMSGSIZE;
		} else {
			err = emit(data, take, fn, ctx); /* a whole line in @data: no copy */
		}
		if (err)
			return err;
		data = nl + 1;
		n -= take + 1;
	}
	return 0;
}

/* --- credentials --------------------------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static int set_err(char *err, size_t size, int ret,
							 const char *fmt, ...)
{
	va_list ap;

	if (err && size) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

void kube_creds_free(struct kube_creds *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->ca_file);
	free(c->ca_data);
	free(c->token);
	free(c->token_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_data);
	free(c->key_data);
	free(c->ns);
	memset(c, 0, sizeof(*c));
}

/* RFC 4648 base64, padding optional, whitespace refused. Returns the length or -EINVAL. */
static long b64_decode(const char *in, char **out)
{
	size_t n = strlen(in), i, o = 0;
	unsigned acc = 0, bits = 0;
	char *buf;
	int v;

	while (n && in[n - 1] == '=')
		n--;
	if (n % 4 == 1)
		return -EINVAL;
	buf = malloc(n / 4 * 3 + 3 + 1);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		char ch = in[i];

		if (ch >= 'A' && ch <= 'Z')
			v = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			v = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			v = ch - '0' + 52;
		else if (ch == '+')
			v = 62;
		else if (ch == '/')
			v = 63;
		else {
			free(buf);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	buf[o] = '\0';
	*out = buf;
	return (long)o;
}

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;
	yaml_node_t *k;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(d, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, key))
			return yaml_document_get_node(d, p->value);
	}
	return NULL;
}

/* A scalar's value; NULL for anything else. Embedded NULs end the string (libyaml keeps
 * them): a name with one matches nothing, a path with one is shorter, never longer. */
static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The @field mapping of the item named @name in the sequence @key of the root. */
static yaml_node_t *named(yaml_document_t *d, const char *key, const char *name, const char *field)
{
	yaml_node_t *seq = map_get(d, yaml_document_get_root_node(d), key);
	yaml_node_item_t *it;
	const char *n;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(d, *it);

		n = scalar(map_get(d, item, "name"));
		if (n && !strcmp(n, name))
			return map_get(d, item, field);
	}
	return NULL;
}

/* strdup of a path, made absolute against @base when relative. NULL @s gives 0 and NULL. */
static int dup_path(const char *s, const char *base, char **out)
{
	*out = NULL;
	if (!s || !s[0])
		return 0;
	if (s[0] == '/' || !base || !base[0])
		*out = strdup(s);
	else if (asprintf(out, "%s/%s", base, s) < 0)
		*out = NULL;
	return *out ? 0 : -ENOMEM;
}

static int dup_str(const char *s, char **out)
{
	*out = NULL;
	if (!s || !s[0])
		return 0;
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

static int dup_b64(const char *s, char **out, size_t *len)
{
	long n;

	*out = NULL;
	*len = 0;
	if (!s || !s[0])
		return 0;
	n = b64_decode(s, out);
	if (n < 0)
		return (int)n;
	*len = (size_t)n;
	return 0;
}

static bool is_true(const char *s)
{
	return s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"));
}

static int creds_from_doc(yaml_document_t *d, const char *base, struct kube_creds *c, char *err,
			  size_t errsize)
{
	yaml_node_t *root = yaml_document_get_root_node(d), *ctx, *cl, *us = NULL;
	const char *cur, *clname, *usname, *server, *ns;
	int ret;

	if (!root || root->type != YAML_MAPPING_NODE)
		return set_err(err, errsize, -EINVAL, "kubeconfig: not a mapping");
	cur = scalar(map_get(d, root, "current-context"));
	if (!cur || !cur[0])
		return set_err(err, errsize, -EINVAL, "kubeconfig: no current-context");
	ctx = named(d, "contexts", cur, "context");
	if (!ctx)
		return set_err(err, errsize, -EINVAL, "kubeconfig: context \"%.64s\" not found",
			       cur);
	clname = scalar(map_get(d, ctx, "cluster"));
	usname = scalar(map_get(d, ctx, "user"));
	ns = scalar(map_get(d, ctx, "namespace"));
	if (!clname || !clname[0])
		return set_err(err, errsize, -EINVAL,
			       "kubeconfig: context \"%.64s\" has no cluster", cur);
	cl = named(d, "clusters", clname, "cluster");
	if (!cl)
		return set_err(err, errsize, -EINVAL, "kubeconfig: cluster \"%.64s\" not found",
			       clname);
	server = scalar(map_get(d, cl, "server"));
	if (!server || (strncmp(server, "https://", 8) && strncmp(server, "http://", 7)) ||
	    !server[strncmp(server, "https://", 8) ? 7 : 8])
		return set_err(err, errsize, -EINVAL,
			       "kubeconfig: cluster \"%.64s\": server is not an http(s) URL",
			       clname);
	if (usname && usname[0]) {
		us = named(d, "users", usname, "user");
		if (!us)
			return set_err(err, errsize, -EINVAL,
				       "kubeconfig: user \"%.64s\" not found", usname);
		if (map_get(d, us, "exec") || map_get(d, us, "auth-provider"))
			return set_err(
				err, errsize, -EOPNOTSUPP,
				"kubeconfig: user \"%.64s\": exec and auth-provider plugins are "
				"not supported (use a token or a client certificate)",
				usname);
		if (map_get(d, us, "username") || map_get(d, us, "password"))
			return set_err(err, errsize, -EOPNOTSUPP,
				       "kubeconfig: user \"%.64s\": basic auth is not supported",
				       usname);
	}

	if ((ret = dup_str(server, &c->server)) ||
	    (ret = dup_path(scalar(map_get(d, cl, "certificate-authority")), base, &c->ca_file)) ||
	    (ret = dup_str(ns && ns[0] ? ns : "default", &c->ns)) ||
	    (ret = dup_str(scalar(map_get(d, us, "token")), &c->token)) ||
	    (ret = dup_path(scalar(map_get(d, us, "tokenFile")), base, &c->token_file)) ||
	    (ret = dup_path(scalar(map_get(d, us, "client-certificate")), base, &c->cert_file)) ||
	    (ret = dup_path(scalar(map_get(d, us, "client-key")), base, &c->key_file)))
		return set_err(err, errsize, ret, "kubeconfig: out of memory");
	c->insecure = is_true(scalar(map_get(d, cl, "insecure-skip-tls-verify")));
	if ((ret = dup_b64(scalar(map_get(d, cl, "certificate-authority-data")), &c->ca_data,
			   &c->ca_data_len)) ||
	    (ret = dup_b64(scalar(map_get(d, us, "client-certificate-data")), &c->cert_data,
			   &c->cert_data_len)) ||
	    (ret = dup_b64(scalar(map_get(d, us, "client-key-data")), &c->key_data,
			   &c->key_data_len)))
		return set_err(err, errsize, ret, "kubeconfig: %s in a *-data field",
			       ret == -ENOMEM ? "out of memory" : "bad base64");
	if (!(c->cert_file || c->cert_data) != !(c->key_file || c->key_data))
		return set_err(err, errsize, -EINVAL,
			       "kubeconfig: user \"%.64s\": a client certificate needs its key and "
			       "the other way round",
			       usname ? usname : "");
	/* the server's URL without a trailing '/': paths are appended */
	while (strlen(c->server) > 8 && c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	return 0;
}

int kube_parse_kubeconfig(const char *text, size_t len, const char *base_dir,
			  struct kube_creds *out, char *err, size_t errsize)
{
	struct kube_creds c = {};
	yaml_parser_t p;
	yaml_document_t d;
	int ret;

	if (!text || !out)
		return set_err(err, errsize, -EINVAL, "kubeconfig: no input");
	if (len > KUBE_MAX_FILE_BYTES)
		return set_err(err, errsize, -EINVAL, "kubeconfig: larger than %u bytes",
			       KUBE_MAX_FILE_BYTES);
	if (memchr(text, '\0', len))
		return set_err(err, errsize, -EINVAL, "kubeconfig: holds a NUL byte");
	if (!yaml_parser_initialize(&p))
		return set_err(err, errsize, -ENOMEM, "kubeconfig: out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &d)) {
		ret = set_err(err, errsize, p.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL,
			      "kubeconfig:%zu: %s", p.problem_mark.line + 1,
			      p.problem ? p.problem : "bad YAML");
		yaml_parser_delete(&p);
		return ret;
	}
	ret = creds_from_doc(&d, base_dir, &c, err, errsize);
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	if (ret) {
		kube_creds_free(&c);
		return ret;
	}
	*out = c;
	return 0;
}

int kube_creds_in_cluster(const char *sa_dir, const char *host, const char *port,
			  struct kube_creds *out, char *err, size_t errsize)
{
	struct kube_creds c = {};
	char *nsbuf = NULL, *end;
	size_t nslen;
	long pn;
	int ret;

	if (!host || !host[0] || !port || !port[0])
		return set_err(err, errsize, -ENOENT,
			       "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
	errno = 0;
	pn = strtol(port, &end, 10);
	if (errno || *end || pn < 1 || pn > 65535)
		return set_err(err, errsize, -EINVAL, "KUBERNETES_SERVICE_PORT: bad port \"%.16s\"",
			       port);
	if (strlen(host) > 255 || strpbrk(host, "/@?#[] "))
		return set_err(err, errsize, -EINVAL, "KUBERNETES_SERVICE_HOST: bad host");
	if (!sa_dir || !sa_dir[0])
		sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
	if (asprintf(&c.server, strchr(host, ':') ? "https://[%s]:%ld" : "https://%s:%ld", host,
		     pn) < 0) {
		c.server = NULL;
		ret = set_err(err, errsize, -ENOMEM, "out of memory");
		goto fail;
	}
	if (asprintf(&c.token_file, "%s/token", sa_dir) < 0) {
		c.token_file = NULL;
		ret = set_err(err, errsize, -ENOMEM, "out of memory");
		goto fail;
	}
	if (asprintf(&c.ca_file, "%s/ca.crt", sa_dir) < 0) {
		c.ca_file = NULL;
		ret = set_err(err, errsize, -ENOMEM, "out of memory");
		goto fail;
	}
	if (access(c.token_file, R_OK)) {
		ret = -errno;
		ret = set_err(err, errsize, ret, "%s: %s", c.token_file, strerror(-ret));
		goto fail;
	}
	if (access(c.ca_file, R_OK)) {
		ret = -errno;
		ret = set_err(err, errsize, ret, "%s: %s", c.ca_file, strerror(-ret));
		goto fail;
	}
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/namespace", sa_dir);
		ret = read_file_bounded(AT_FDCWD, path, 256, &nsbuf, &nslen);
	}
	if (!ret) {
		while (nslen && isspace((unsigned char)nsbuf[nslen - 1]))
			nsbuf[--nslen] = '\0';
		if (nslen && nslen < KUBE_NS_MAX && !strchr(nsbuf, '\n')) {
			c.ns = nsbuf;
			nsbuf = NULL;
		}
	}
	free(nsbuf);
	if (!c.ns && !(c.ns = strdup("default"))) {
		ret = set_err(err, errsize, -ENOMEM, "out of memory");
		goto fail;
	}
	*out = c;
	return 0;
fail:
	kube_creds_free(&c);
	return ret;
}
