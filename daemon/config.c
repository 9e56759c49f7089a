// SPDX-License-Identifier: Apache-2.0
/*
 * config: libyaml's event API read by a small recursive descent over tables of keys. Each
 * mapping of the schema is a table (name, kind, where the value goes, limits); the descent
 * refuses a node as soon as its type differs from what the table expects, so nesting never
 * goes deeper than the schema and nothing unknown is read past. Anchors and aliases are
 * refused at the event that carries them (no alias expansion, no bombs).
 */
#include "daemon/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <yaml.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"

#define SHOW_MAX 40		/* bytes of a bad value quoted in a message */
#define SHOW_BUF (SHOW_MAX + 4) /* plus "..." and the NUL */
#define PATH_BUF 64		/* "services[255].match.cgroup" and the like */
#define MAX_KEYS 24		/* keys of the largest table */
#define AUDIT_NAME "/audit.log" /* appended to store_dir for the default audit_log */
#define SPOOL_NAME "/spool"	/* appended to store_dir for the default spool_dir */

enum kind {
	K_STR,	  /* text without control characters */
	K_PATH,	  /* an absolute path */
	K_URL,	  /* http:// or https:// */
	K_LISTEN, /* host:port */
	K_LEVEL,  /* log level */
	K_UINT,	  /* unsigned in [min, max] */
	K_ULL,	  /* unsigned long long in [min, max] */
	K_BOOL,
	K_MAP,	    /* a nested mapping described by ->sub */
	K_SERVICES, /* the list of service rules */
};

enum {
	F_NONEMPTY = 1 << 0,  /* "" is refused (null still means: keep the default) */
	F_SET_SPOOL = 1 << 1, /* marks given in the file, for the derived defaults */
	F_SET_AUDIT = 1 << 2,
	F_SET_KUBE_ENABLED = 1 << 3,
	F_MARKS = F_SET_SPOOL | F_SET_AUDIT | F_SET_KUBE_ENABLED,
};

struct table;

struct key {
	const char *name;
	enum kind kind;
	unsigned flags;
	size_t off;  /* offset of the value in the object the table describes */
	size_t size; /* buffer size of a string (max length + 1) */
	unsigned long long min, max;
	const struct table *sub;
};

struct table {
	const struct key *keys;
	size_t n;
};

#define TABLE(k)                   \
	{                          \
		(k), ARRAY_SIZE(k) \
	}
#define STR(T, n, f, k, fl)                                               \
	{                                                                 \
		n, k, fl, offsetof(T, f), sizeof(((T *)0)->f), 0, 0, NULL \
	}
#define NUM(T, n, f, k, lo, hi)                                            \
	{                                                                  \
		n, k, 0, offsetof(T, f), sizeof(((T *)0)->f), lo, hi, NULL \
	}

static const struct key match_keys[] = {
	STR(struct service_rule, "unit", unit, K_STR, 0),
	STR(struct service_rule, "cgroup", cgroup, K_STR, 0),
	STR(struct service_rule, "exe", exe, K_STR, 0),
	STR(struct service_rule, "comm", comm, K_STR, 0),
};
static const struct table match_table = TABLE(match_keys);

static const struct key service_keys[] = {
	STR(struct service_rule, "name", name, K_STR, F_NONEMPTY),
	{ "match", K_MAP, 0, 0, 0, 0, 0, &match_table },
};
static const struct table service_table = TABLE(service_keys);

static const struct key kube_keys[] = {
	{ "enabled", K_BOOL, F_SET_KUBE_ENABLED, offsetof(struct config, kube_enabled),
	  sizeof(bool), 0, 0, NULL },
	STR(struct config, "kubeconfig", kubeconfig, K_PATH, 0),
};
static const struct table kube_table = TABLE(kube_keys);

static const struct key cluster_keys[] = {
	STR(struct config, "url", cluster_api_url, K_URL, 0),
	STR(struct config, "token_file", cluster_api_token_file, K_PATH, 0),
	STR(struct config, "spool_dir", spool_dir, K_PATH, F_NONEMPTY | F_SET_SPOOL),
	NUM(struct config, "spool_max_bytes", spool_max_bytes, K_ULL, 1ULL << 20, 1ULL << 40),
};
static const struct table cluster_table = TABLE(cluster_keys);

static const struct key pyroscope_keys[] = {
	STR(struct config, "url", pyroscope_url, K_URL, 0),
};
static const struct table pyroscope_table = TABLE(pyroscope_keys);

static const struct key root_keys[] = {
	STR(struct config, "node_name", node_name, K_STR, F_NONEMPTY),
	STR(struct config, "listen", listen, K_LISTEN, F_NONEMPTY),
	/* short enough for the derived "<store_dir>/audit.log" to fit audit_log */
	{ "store_dir", K_PATH, F_NONEMPTY, offsetof(struct config, store_dir),
	  sizeof(((struct config *)0)->audit_log) - (sizeof(AUDIT_NAME) - 1), 0, 0, NULL },
	NUM(struct config, "retention_per_service", retention_per_service, K_UINT, 1, 1000),
	{ "continuous", K_BOOL, 0, offsetof(struct config, continuous), sizeof(bool), 0, 0, NULL },
	NUM(struct config, "continuous_hz", continuous_hz, K_UINT, 1, 1000),
	NUM(struct config, "continuous_window_seconds", continuous_window_s, K_UINT, 5, 60),
	NUM(struct config, "continuous_retention_hours", continuous_retention_hours, K_UINT, 1,
	    720),
	STR(struct config, "log_level", log_level, K_LEVEL, F_NONEMPTY),
	STR(struct config, "async_profiler", async_profiler, K_PATH, 0),
	{ "kubernetes", K_MAP, 0, 0, 0, 0, 0, &kube_table },
	{ "cluster_api", K_MAP, 0, 0, 0, 0, 0, &cluster_table },
	{ "pyroscope", K_MAP, 0, 0, 0, 0, 0, &pyroscope_table },
	STR(struct config, "tokens_file", tokens_file, K_PATH, F_NONEMPTY),
	STR(struct config, "audit_log", audit_log, K_PATH, F_NONEMPTY | F_SET_AUDIT),
	{ "services", K_SERVICES, 0, 0, 0, 0, 0, NULL },
};
static const struct table root_table = TABLE(root_keys);

_Static_assert(ARRAY_SIZE(root_keys) <= MAX_KEYS, "raise MAX_KEYS");
_Static_assert(sizeof(((struct config *)0)->spool_dir) >= sizeof(((struct config *)0)->audit_log) -
								  (sizeof(AUDIT_NAME) - 1) +
								  sizeof(SPOOL_NAME) - 1,
	       "the derived spool_dir must fit");

static const char *const level_names[] = { "error", "warn", "info", "debug" };

/* parser state */
struct cp {
	yaml_parser_t yp;
	yaml_event_t ev; /* the current event, valid when have_ev */
	bool have_ev;
	const char *text;
	size_t len;
	const char *file;
	char *err;
	size_t errsize;
	struct config *c;
	size_t cap; /* allocated entries of c->services */
	unsigned marks;
};

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errsize,
							  const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsize)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
}

/* Writes "FILE:LINE: message" (line 0: "FILE: message") and returns -EINVAL. */
__attribute__((format(printf, 3, 4))) static int fail(struct cp *p, size_t line, const char *fmt,
						      ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = text_file_error(p->err, p->errsize, p->file, line, fmt, ap);
	va_end(ap);
	return ret;
}

/* A bad value as a message shows it: control characters as '?', cut after SHOW_MAX bytes. */
static const char *show(const void *data, size_t len, char buf[SHOW_BUF])
{
	const unsigned char *s = data;
	size_t i, n = len;

	if (n > SHOW_MAX) {
		n = SHOW_MAX;
		while (n && (s[n] & 0xc0) == 0x80) /* not inside a UTF-8 sequence */
			n--;
	}
	for (i = 0; i < n; i++)
		buf[i] = s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
	strcpy(buf + n, n < len ? "..." : "");
	return buf;
}

static size_t ev_line(const yaml_event_t *e)
{
	return e->start_mark.line + 1;
}

static const char *scalar(const yaml_event_t *e)
{
	return (const char *)e->data.scalar.value;
}

/* How an unexpected node is named in "X must be ..., not <this>". */
static const char *node_desc(const yaml_event_t *e, char buf[SHOW_BUF + 2])
{
	char v[SHOW_BUF];

	switch (e->type) {
	case YAML_SCALAR_EVENT:
		show(e->data.scalar.value, e->data.scalar.length, v);
		snprintf(buf, SHOW_BUF + 2, "'%s'", v);
		return buf;
	case YAML_SEQUENCE_START_EVENT:
		return "a list";
	default:
		return "a mapping";
	}
}

static int syntax_error(struct cp *p)
{
	const yaml_parser_t *yp = &p->yp;
	const char *problem = yp->problem ? yp->problem : "syntax error";
	size_t i, line = 1, end;

	switch (yp->error) {
	case YAML_MEMORY_ERROR:
		set_err(p->err, p->errsize, "%s: out of memory", p->file);
		return -ENOMEM;
	case YAML_READER_ERROR:
		/* the reader reports a byte offset, no mark */
		end = yp->problem_offset < p->len ? yp->problem_offset : p->len;
		for (i = 0; i < end; i++)
			line += p->text[i] == '\n';
		return fail(p, line, "invalid YAML: %s", problem);
	default:
		if (yp->context)
			return fail(p, yp->problem_mark.line + 1, "invalid YAML: %s, %s",
				    yp->context, problem);
		return fail(p, yp->problem_mark.line + 1, "invalid YAML: %s", problem);
	}
}

/* Replaces the current event with the next one; refuses aliases, anchors and tags. */
static int next(struct cp *p)
{
	yaml_event_t *e = &p->ev;
	const yaml_char_t *anchor, *tag;
	char b[SHOW_BUF];

	if (p->have_ev) {
		yaml_event_delete(e);
		p->have_ev = false;
	}
	if (!yaml_parser_parse(&p->yp, e))
		return syntax_error(p);
	p->have_ev = true;
	switch (e->type) {
	case YAML_ALIAS_EVENT:
		anchor = e->data.alias.anchor;
		return fail(p, ev_line(e), "aliases (*%s) are not allowed",
			    show(anchor, strlen((const char *)anchor), b));
	case YAML_SCALAR_EVENT:
		anchor = e->data.scalar.anchor;
		tag = e->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = e->data.sequence_start.anchor;
		tag = e->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = e->data.mapping_start.anchor;
		tag = e->data.mapping_start.tag;
		break;
	default:
		return 0;
	}
	if (anchor)
		return fail(p, ev_line(e), "anchors (&%s) are not allowed",
			    show(anchor, strlen((const char *)anchor), b));
	if (tag)
		return fail(p, ev_line(e), "tags (%s) are not allowed",
			    show(tag, strlen((const char *)tag), b));
	return 0;
}

/* A plain empty, "~" or "null" value: the key keeps its default. */
static bool is_null(const yaml_event_t *e)
{
	const char *v = scalar(e);

	if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !v[0] || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* What a key's value must be, for messages. */
static const char *want(const struct key *k, char *buf, size_t size)
{
	switch (k->kind) {
	case K_STR:
		return "a string";
	case K_PATH:
		return "an absolute path";
	case K_URL:
		return "an http:// or https:// URL";
	case K_LISTEN:
		return "host:port with a port from 1 to 65535 (\":7070\" for all addresses)";
	case K_LEVEL:
		return "one of error, warn, info, debug";
	case K_UINT:
	case K_ULL:
		snprintf(buf, size, "a whole number from %llu to %llu", k->min, k->max);
		return buf;
	case K_BOOL:
		return "true or false";
	case K_MAP:
		return "a mapping";
	case K_SERVICES:
		return "a list of services";
	}
	return "?";
}

/* Strictly decimal, no sign, no leading zero, no overflow; false when outside [0, max]. */
static bool parse_number(const char *s, size_t len, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (!len || (len > 1 && s[0] == '0'))
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > max) /* max < ULLONG_MAX / 10, so the next step cannot wrap */
			return false;
	}
	*out = v;
	return true;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return true;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

static bool url_ok(const char *s)
{
	const char *host;

	if (!strncmp(s, "http://", 7))
		host = s + 7;
	else if (!strncmp(s, "https://", 8))
		host = s + 8;
	else
		return false;
	if (!*host || *host == '/')
		return false;
	return !strpbrk(s, " ");
}

/* host:port; the host is empty, a name or IPv4 address, or a bracketed IPv6 address. */
static bool listen_ok(const char *s)
{
	const char *colon = strrchr(s, ':'), *c;
	unsigned long long port;

	if (!colon || !parse_number(colon + 1, strlen(colon + 1), 65535, &port) || !port)
		return false;
	if (s[0] == '[') {
		if (colon - s < 3 || colon[-1] != ']')
			return false;
		for (c = s + 1; c < colon - 1; c++)
			if (!strchr("0123456789abcdefABCDEF:.", *c))
				return false;
		return true;
	}
	for (c = s; c < colon; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.", *c))
			return false;
	return true;
}

/* Stores the scalar of the current event (not null) into @base as @k says. */
static int set_scalar(struct cp *p, const struct key *k, void *base, const char *path)
{
	const yaml_event_t *e = &p->ev;
	const char *v = scalar(e);
	size_t i, len = e->data.scalar.length, line = ev_line(e);
	char *dst = (char *)base + k->off;
	unsigned long long num;
	char b[SHOW_BUF], w[80];
	bool bval;
	int lvl;

	switch (k->kind) {
	case K_UINT:
	case K_ULL:
		if (!parse_number(v, len, k->max, &num) || num < k->min)
			goto bad;
		if (k->kind == K_UINT)
			*(unsigned *)dst = (unsigned)num;
		else
			*(unsigned long long *)dst = num;
		goto done;
	case K_BOOL:
		if (strlen(v) != len || !parse_bool(v, &bval))
			goto bad;
		*(bool *)dst = bval;
		goto done;
	default:
		break;
	}

	/* text: NUL bytes count as control characters */
	for (i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return fail(p, line, "%s must not contain control characters", path);
	if (!len && (k->flags & F_NONEMPTY))
		return fail(p, line, "%s must not be empty", path);
	if (len >= k->size)
		return fail(p, line, "%s is too long: %zu bytes, the maximum is %zu", path, len,
			    k->size - 1);
	switch (k->kind) {
	case K_PATH:
		if (len && v[0] != '/')
			goto bad;
		break;
	case K_URL:
		if (len && !url_ok(v))
			goto bad;
		break;
	case K_LISTEN:
		if (!listen_ok(v))
			goto bad;
		break;
	case K_LEVEL:
		lvl = log_parse_level(v);
		if (lvl < 0 || (size_t)lvl >= ARRAY_SIZE(level_names))
			goto bad;
		v = level_names[lvl];
		len = strlen(v);
		break;
	default:
		break;
	}
	memcpy(dst, v, len);
	dst[len] = '\0';
done:
	p->marks |= k->flags & F_MARKS;
	return 0;
bad:
	return fail(p, line, "%s must be %s, not '%s'", path, want(k, w, sizeof(w)),
		    show(v, len, b));
}

static int parse_mapping(struct cp *p, const struct table *t, void *base, const char *path);
static int parse_services(struct cp *p);

/* Parses the value node that is the current event. */
static int parse_value(struct cp *p, const struct key *k, void *base, const char *path)
{
	const yaml_event_t *e = &p->ev;
	char w[80], d[SHOW_BUF + 2];

	switch (e->type) {
	case YAML_SCALAR_EVENT:
		if (is_null(e))
			return 0;
		if (k->kind != K_MAP && k->kind != K_SERVICES)
			return set_scalar(p, k, base, path);
		break;
	case YAML_SEQUENCE_START_EVENT:
		if (k->kind == K_SERVICES)
			return parse_services(p);
		break;
	case YAML_MAPPING_START_EVENT:
		if (k->kind == K_MAP)
			return parse_mapping(p, k->sub, base, path);
		break;
	default:
		break;
	}
	return fail(p, ev_line(e), "%s must be %s, not %s", path, want(k, w, sizeof(w)),
		    node_desc(e, d));
}

static const struct key *lookup(const struct table *t, const yaml_event_t *e)
{
	size_t i, len = e->data.scalar.length;

	for (i = 0; i < t->n; i++)
		if (strlen(t->keys[i].name) == len && !memcmp(t->keys[i].name, scalar(e), len))
			return &t->keys[i];
	return NULL;
}

static int unknown_key(struct cp *p, const struct table *t, const char *path)
{
	const yaml_event_t *e = &p->ev;
	char known[256], b[SHOW_BUF];
	size_t i, n = 0;

	known[0] = '\0';
	for (i = 0; i < t->n && n < sizeof(known); i++)
		n += snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", t->keys[i].name);
	show(e->data.scalar.value, e->data.scalar.length, b);
	if (!*path)
		return fail(p, ev_line(e), "unknown key '%s' (known: %s)", b, known);
	return fail(p, ev_line(e), "unknown key '%s' in %s (known: %s)", b, path, known);
}

/* The current event is the MAPPING-START of a mapping described by @t. */
static int parse_mapping(struct cp *p, const struct table *t, void *base, const char *path)
{
	size_t seen[MAX_KEYS] = { 0 }; /* line of each key's first appearance */
	char sub[PATH_BUF], d[SHOW_BUF + 2];
	const struct key *k;
	size_t line;
	int err;

	for (;;) {
		err = next(p);
		if (err)
			return err;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			return 0;
		line = ev_line(&p->ev);
		if (p->ev.type != YAML_SCALAR_EVENT)
			return fail(p, line, "keys%s%s must be words, not %s", *path ? " of " : "",
				    path, node_desc(&p->ev, d));
		k = lookup(t, &p->ev);
		if (!k)
			return unknown_key(p, t, path);
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k->name);
		if (seen[k - t->keys])
			return fail(p, line, "duplicate key '%s' (first on line %zu)", sub,
				    seen[k - t->keys]);
		seen[k - t->keys] = line;
		err = next(p);
		if (err)
			return err;
		err = parse_value(p, k, base, sub);
		if (err)
			return err;
	}
}

/* The current event is the SEQUENCE-START of the services list. */
static int parse_services(struct cp *p)
{
	struct config *c = p->c;
	struct service_rule *r;
	char item[PATH_BUF], d[SHOW_BUF + 2];
	size_t line, cap;
	int err;

	for (;;) {
		err = next(p);
		if (err)
			return err;
		if (p->ev.type == YAML_SEQUENCE_END_EVENT)
			return 0;
		line = ev_line(&p->ev);
		snprintf(item, sizeof(item), "services[%zu]", c->nservices);
		if (c->nservices == CONFIG_MAX_SERVICES)
			return fail(p, line, "%s: more than %d services", item,
				    CONFIG_MAX_SERVICES);
		if (p->ev.type != YAML_MAPPING_START_EVENT)
			return fail(p, line, "%s must be a mapping with name and match, not %s",
				    item, node_desc(&p->ev, d));
		if (c->nservices == p->cap) {
			cap = p->cap ? p->cap * 2 : 8;
			r = realloc(c->services, cap * sizeof(*r));
			if (!r) {
				set_err(p->err, p->errsize, "%s: out of memory", p->file);
				return -ENOMEM;
			}
			c->services = r;
			p->cap = cap;
		}
		r = &c->services[c->nservices];
		memset(r, 0, sizeof(*r));
		err = parse_mapping(p, &service_table, r, item);
		if (err)
			return err;
		if (!r->name[0])
			return fail(p, line, "%s has no name", item);
		if (!r->unit[0] && !r->cgroup[0] && !r->exe[0] && !r->comm[0])
			return fail(
				p, line,
				"%s (%s) needs a match with at least one of unit, cgroup, exe, comm",
				item, r->name);
		c->nservices++;
	}
}

static int parse_stream(struct cp *p)
{
	char d[SHOW_BUF + 2];
	int err;

	err = next(p); /* STREAM-START */
	if (err)
		return err;
	err = next(p);
	if (err || p->ev.type == YAML_STREAM_END_EVENT) /* no document at all */
		return err;
	err = next(p); /* past DOCUMENT-START: the root node */
	if (err)
		return err;
	if (p->ev.type == YAML_MAPPING_START_EVENT)
		err = parse_mapping(p, &root_table, p->c, "");
	else if (p->ev.type != YAML_SCALAR_EVENT || !is_null(&p->ev))
		err = fail(
			p, ev_line(&p->ev),
			"the top level must be a mapping of keys (listen: ..., services: ...), not %s",
			node_desc(&p->ev, d));
	if (err)
		return err;
	err = next(p); /* DOCUMENT-END */
	if (err)
		return err;
	err = next(p);
	if (err)
		return err;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return fail(p, ev_line(&p->ev), "a second YAML document; the file must hold one");
	return 0;
}

/*
 * "<dir>/<name>" into @dst; the caller made sure it fits (store_dir's maximum length leaves
 * room for AUDIT_NAME and SPOOL_NAME).
 */
static void derive_path(char *dst, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	memcpy(dst, dir, n);
	if (n && dir[n - 1] == '/')
		name++;
	strcpy(dst + n, name);
}

/* Defaults that follow other keys, filled when the file did not set them. */
static void derive(struct cp *p)
{
	struct config *c = p->c;

	if (!(p->marks & F_SET_SPOOL))
		derive_path(c->spool_dir, c->store_dir, SPOOL_NAME);
	if (!(p->marks & F_SET_AUDIT))
		derive_path(c->audit_log, c->store_dir, AUDIT_NAME);
	if (!(p->marks & F_SET_KUBE_ENABLED) && c->kubeconfig[0])
		c->kube_enabled = true;
}

void config_defaults(struct config *c)
{
	const char *env;

	memset(c, 0, sizeof(*c));
	env = getenv("NODE_NAME");
	if (env && *env && strlen(env) < sizeof(c->node_name))
		strcpy(c->node_name, env);
	else if (gethostname(c->node_name, sizeof(c->node_name) - 1) || !c->node_name[0])
		strcpy(c->node_name, "localhost");
	strcpy(c->listen, "127.0.0.1:7070");
	strcpy(c->store_dir, "/var/lib/slideops/profiler");
	c->retention_per_service = 50;
	c->continuous_retention_hours = 24;
	c->continuous = false;
	c->continuous_hz = 19;
	c->continuous_window_s = 60;
	env = getenv("KUBERNETES_SERVICE_HOST");
	c->kube_enabled = env && *env;
	derive_path(c->spool_dir, c->store_dir, SPOOL_NAME);
	c->spool_max_bytes = 256ULL << 20;
	strcpy(c->tokens_file, "/etc/slideops/tokens.yaml");
	derive_path(c->audit_log, c->store_dir, AUDIT_NAME);
	strcpy(c->log_level, "info");
	strcpy(c->async_profiler, "/opt/slideops/async-profiler/lib/libasyncProfiler.so");
}

int config_parse(const char *text, size_t len, const char *filename, struct config *out, char *err,
		 size_t errsize)
{
	struct config c;
	struct cp p = {
		.text = text,
		.len = len,
		.file = filename ? filename : "<config>",
		.err = err,
		.errsize = errsize,
		.c = &c,
	};
	int ret;

	if (err && errsize)
		err[0] = '\0';
	if (!text && len)
		return fail(&p, 0, "no text");
	if (len > CONFIG_MAX_BYTES)
		return fail(&p, 0, "larger than %d bytes", CONFIG_MAX_BYTES);
	config_defaults(&c);
	if (!yaml_parser_initialize(&p.yp)) {
		set_err(err, errsize, "%s: out of memory", p.file);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)(text ? text : ""), len);
	ret = parse_stream(&p);
	if (p.have_ev)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.yp);
	if (ret) {
		free(c.services);
		return ret;
	}
	derive(&p);
	*out = c;
	return 0;
}

int config_load(const char *path, struct config *out, char *err, size_t errsize)
{
	char *text, eb[128];
	size_t len;
	int ret;

	if (err && errsize)
		err[0] = '\0';
	ret = read_file_bounded(AT_FDCWD, path, CONFIG_MAX_BYTES, &text, &len);
	if (ret == -ENOENT) {
		set_err(err, errsize, "%s: no such file", path);
		return ret;
	}
	if (ret == -EFBIG) {
		set_err(err, errsize, "%s: larger than %d bytes", path, CONFIG_MAX_BYTES);
		return ret;
	}
	if (ret) {
		set_err(err, errsize, "%s: %s", path, strerror_r(-ret, eb, sizeof(eb)));
		return ret;
	}
	ret = config_parse(text, len, path, out, err, errsize);
	free(text);
	return ret;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	free(c->services);
	c->services = NULL;
	c->nservices = 0;
}

int config_match_service(const struct config *c, const char *unit, const char *cgroup_path,
			 const char *exe, const char *comm)
{
	if (!c)
		return -ENOENT;
	return rules_match(c->services, c->nservices, unit, cgroup_path, exe, comm);
}
