// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/api_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SHOW_MAX 40
#define PIDS_MAX 64

_Static_assert(ARRAY_SIZE(((struct capture_target *)0)->pids) == PIDS_MAX, "pids");

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err && size) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
		/* printable ASCII only: jansson's messages quote the input */
		for (char *p = err; *p; p++)
			if (*p < 0x20 || *p >= 0x7f)
				*p = '?';
	}
	return -EINVAL;
}

/* A short printable-ASCII copy of untrusted input for a message. */
static const char *show(const char *s, size_t len, char buf[SHOW_MAX + 4])
{
	size_t i, n = len < SHOW_MAX ? len : SHOW_MAX;

	for (i = 0; i < n; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	strcpy(buf + n, len > SHOW_MAX ? "..." : "");
	return buf;
}

/* Matches @path against @pattern, where "*" is one path segment copied to @seg. */
static bool path_match(const char *path, const char *pattern, char *seg, size_t seg_size,
		       bool *seg_ok)
{
	const char *p = path, *q = pattern;

	while (*q) {
		if (*q == '*') {
			size_t n = strcspn(p, "/");
			size_t i;

			if (n == 0)
				return false;
			*seg_ok = n < seg_size;
			for (i = 0; i < n && *seg_ok; i++)
				if (!((p[i] >= '0' && p[i] <= '9') ||
				      (p[i] >= 'a' && p[i] <= 'z') ||
				      (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '-'))
					*seg_ok = false;
			if (*seg_ok) {
				memcpy(seg, p, n);
				seg[n] = '\0';
			}
			p += n;
			q++;
			continue;
		}
		if (*p != *q)
			return false;
		p++;
		q++;
	}
	/* one trailing slash is forgiven */
	return !*p || (p[0] == '/' && !p[1]);
}

static const struct {
	const char *method, *path;
	enum api_route route;
	enum token_role need;
	bool body;
} routes[] = {
	{ "GET", "/v1/status", API_STATUS, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/plan", API_PLAN, TOKEN_ROLE_VIEWER, false },
	{ "POST", "/v1/captures", API_CAPTURE_START, TOKEN_ROLE_OPERATOR, true },
	{ "GET", "/v1/captures/current", API_CAPTURE_CURRENT, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/profiles", API_PROFILES, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/profiles/*", API_PROFILE, TOKEN_ROLE_VIEWER, false },
	{ "DELETE", "/v1/profiles/*", API_PROFILE_DELETE, TOKEN_ROLE_OPERATOR, false },
	{ "GET", "/v1/profiles/*/download", API_PROFILE_DOWNLOAD, TOKEN_ROLE_VIEWER, false },
	{ "POST", "/v1/remove", API_REMOVE, TOKEN_ROLE_ADMIN, true },
	{ "POST", "/v1/symbols", API_SYMBOLS_UPLOAD, TOKEN_ROLE_OPERATOR, false },
	{ "GET", "/v1/profiles/*/flamegraph", API_PROFILE_FLAMEGRAPH, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/compare", API_COMPARE, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/processes", API_PROCESSES, TOKEN_ROLE_VIEWER, false },
	/* signing in needs no token, nor does asking who is signed in; signing out does */
	{ "GET", "/v1/session", API_SESSION, TOKEN_ROLE_NONE, false },
	{ "POST", "/v1/session", API_SESSION_START, TOKEN_ROLE_NONE, true },
	{ "DELETE", "/v1/session", API_SESSION_END, TOKEN_ROLE_VIEWER, false },
	/* the page's files: no token (nothing in them is secret), no data */
	{ "GET", "/", API_PAGE, TOKEN_ROLE_NONE, false },
	{ "GET", "/index.html", API_PAGE, TOKEN_ROLE_NONE, false },
	{ "GET", "/ui/app.js", API_PAGE, TOKEN_ROLE_NONE, false },
	{ "GET", "/ui/app.css", API_PAGE, TOKEN_ROLE_NONE, false },
	{ "GET", "/ui/flamegraph.js", API_PAGE, TOKEN_ROLE_NONE, false },
	{ "GET", "/ui/flamegraph.css", API_PAGE, TOKEN_ROLE_NONE, false },
	/* counts only, no names: scraped by Prometheus without a token (docs/api.md) */
	{ "GET", "/metrics", API_METRICS, TOKEN_ROLE_NONE, false },
};

int api_parse_route(const char *method, const char *path, struct api_route_match *out, char *allow,
		    size_t allow_size)
{
	char seg[STORE_ID_SIZE];
	size_t i, n = 0;
	bool found = false, seg_ok;

	if (!method || !path)
		return -ENOENT;
	if (allow && allow_size)
		allow[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(routes); i++) {
		seg_ok = true;
		if (!path_match(path, routes[i].path, seg, sizeof(seg), &seg_ok))
			continue;
		if (!seg_ok)
			return -ENOENT;
		/* HEAD is not offered: every GET here has a body worth its cost */
		if (!strcmp(method, routes[i].method)) {
			out->route = routes[i].route;
			out->need = routes[i].need;
			out->body = routes[i].body;
			if (strchr(routes[i].path, '*'))
				memcpy(out->id, seg, sizeof(seg));
			else
				out->id[0] = '\0';
			return 0;
		}
		if (allow && allow_size > n)
			n += snprintf(allow + n, allow_size - n, "%s%s", found ? ", " : "",
				      routes[i].method);
		found = true;
	}
	return found ? -EOPNOTSUPP : -ENOENT;
}

int api_parse_bearer(const char *header, const char **token, size_t *len)
{
	const char *p, *end;

	if (!header || strncasecmp(header, "Bearer", 6) || (header[6] != ' ' && header[6] != '\t'))
		return -EINVAL;
	for (p = header + 6; *p == ' ' || *p == '\t'; p++)
		;
	for (end = p; *end > 0x20 && *end < 0x7f; end++)
		;
	if (end == p)
		return -EINVAL;
	for (const char *q = end; *q; q++)
		if (*q != ' ' && *q != '\t')
			return -EINVAL;
	*token = p;
	*len = (size_t)(end - p);
	return 0;
}

static bool name_ok(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* "service:NAMESPACE/NAME": @t->name (as given) split into @t->ns and @t->name. */
static int service_target(struct capture_target *t, char *err, size_t size)
{
	char ns[TARGET_NS_MAX], b[SHOW_MAX + 4];
	const char *name;

	if (api_split_service(t->name, ns, sizeof(ns), &name))
		return fail(err, size,
			    "bad target 'service:%s': write service:NAME, or "
			    "service:NAMESPACE/NAME with a Kubernetes namespace (1 to 63 "
			    "of a-z, 0-9 and '-')",
			    show(t->name, strlen(t->name), b));
	memcpy(t->ns, ns, sizeof(ns));
	memmove(t->name, name, strlen(name) + 1);
	return 0;
}

int api_parse_target(const char *s, struct capture_target *out, char *err, size_t size)
{
	static const struct {
		const char *prefix;
		enum target_kind kind;
	} kinds[] = {
		{ "service:", TARGET_SERVICE },
		{ "unit:", TARGET_UNIT },
		{ "container:", TARGET_CONTAINER },
	};
	struct capture_target t;
	char b[SHOW_MAX + 4];
	size_t i;

	if (!s || !*s)
		return fail(err, size,
			    "target is required: server, service:NAME, unit:NAME, "
			    "container:ID or pid:N[,N...]");
	memset(&t, 0, sizeof(t));
	if (!strcmp(s, "server")) {
		t.kind = TARGET_SERVER;
		*out = t;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		size_t pl = strlen(kinds[i].prefix);

		if (strncmp(s, kinds[i].prefix, pl))
			continue;
		if (!name_ok(s + pl, sizeof(t.name)))
			return fail(err, size,
				    "bad target '%s': the name must be 1 to %zu "
				    "characters without control characters",
				    show(s, strlen(s), b), sizeof(t.name) - 1);
		t.kind = kinds[i].kind;
		memcpy(t.name, s + pl, strlen(s + pl) + 1);
		if (t.kind == TARGET_SERVICE && service_target(&t, err, size))
			return -EINVAL;
		*out = t;
		return 0;
	}
	if (!strncmp(s, "pid:", 4)) {
		const char *p = s + 4;

		t.kind = TARGET_PIDS;
		for (;;) {
			unsigned long v = 0;
			const char *start = p;

			while (*p >= '0' && *p <= '9' && p - start < 10)
				v = v * 10 + (unsigned long)(*p++ - '0');
			if (p == start || v == 0 || v > INT32_MAX || (*p && *p != ','))
				return fail(err, size,
					    "bad target '%s': pid:N[,N...] takes process "
					    "ids from 1 to %d",
					    show(s, strlen(s), b), INT32_MAX);
			if (t.npids == PIDS_MAX)
				return fail(err, size, "bad target: at most %d pids", PIDS_MAX);
			t.pids[t.npids++] = (uint32_t)v;
			if (!*p)
				break;
			p++;
		}
		*out = t;
		return 0;
	}
	return fail(err, size,
		    "unknown target '%s' (server, service:NAME, unit:NAME, "
		    "container:ID or pid:N[,N...])",
		    show(s, strlen(s), b));
}

static int parse_question(const char *s, enum question *out, char *err, size_t size)
{
	char b[SHOW_MAX + 4], list[256];
	int q;

	if (!s || !*s)
		return fail(err, size, "question is required (%s)",
			    question_list(list, sizeof(list)));
	q = question_parse(s);
	if (q < 0 || !question_info(q))
		return fail(err, size, "unknown question '%s' (%s)", show(s, strlen(s), b),
			    question_list(list, sizeof(list)));
	*out = (enum question)q;
	return 0;
}

static int check_req(struct api_capture_req *r, char *err, size_t size)
{
	const struct question_info *qi = question_info(r->question);

	if (r->duration_s != 10 && r->duration_s != 30 && r->duration_s != 60)
		return fail(err, size, "duration must be 10, 30 or 60 seconds, not %u",
			    r->duration_s);
	if (r->target.kind == TARGET_SERVER && !qi->server)
		return fail(err, size,
			    "a server profile offers cpu, wall, threads, locks and "
			    "memory-growth, not %s",
			    qi->id);
	if (r->question == Q_THREADS)
		r->duration_s = 5;
	return 0;
}

int api_parse_uint(const char *s, const char *what, unsigned long max, unsigned long dflt,
		   unsigned long *out, char *err, size_t size)
{
	char b[SHOW_MAX + 4];
	unsigned long v = 0;
	const char *p;

	if (!s) {
		*out = dflt;
		return 0;
	}
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		unsigned long d = (unsigned long)(*p - '0');

		if (v > max / 10 || (v == max / 10 && d > max % 10))
			return fail(err, size, "%s must be a number from 0 to %lu", what, max);
		v = v * 10 + d;
	}
	if (p == s || *p)
		return fail(err, size, "%s must be a number from 0 to %lu, not '%s'", what, max,
			    show(s, strlen(s), b));
	*out = v;
	return 0;
}

int api_parse_plan_query(const char *target, const char *question, const char *duration,
			 struct api_capture_req *out, char *err, size_t size)
{
	struct api_capture_req r;
	unsigned long d;
	int ret;

	memset(&r, 0, sizeof(r));
	if ((ret = api_parse_target(target, &r.target, err, size)) ||
	    (ret = parse_question(question, &r.question, err, size)))
		return ret;
	if (duration && !*duration)
		duration = NULL;
	if (api_parse_uint(duration, "duration", 3600, API_DEFAULT_DURATION, &d, NULL, 0))
		return fail(err, size, "duration must be 10, 30 or 60 seconds");
	r.duration_s = (unsigned int)d;
	if ((ret = check_req(&r, err, size)))
		return ret;
	*out = r;
	return 0;
}

int api_parse_capture_body(const char *body, size_t len, struct api_capture_req *out, char *err,
			   size_t size)
{
	struct api_capture_req r;
	json_error_t jerr;
	const char *key;
	json_t *doc, *v;
	int ret = -EINVAL;

	if (!body || len == 0)
		return fail(err, size,
			    "a JSON body is required: {\"target\": \"server\", "
			    "\"question\": \"cpu\", \"duration\": 30}");
	if (len > API_JSON_BODY_MAX)
		return fail(err, size, "the body is too large: the maximum is %d bytes",
			    API_JSON_BODY_MAX);
	memset(&r, 0, sizeof(r));
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return fail(err, size, "invalid JSON at line %d column %d: %.80s", jerr.line,
			    jerr.column, jerr.text);
	if (!json_is_object(doc)) {
		fail(err, size, "the body must be a JSON object");
		goto out;
	}
	json_object_foreach(doc, key, v) {
		char b[SHOW_MAX + 4];

		if (strcmp(key, "target") && strcmp(key, "question") && strcmp(key, "duration")) {
			fail(err, size, "unknown key '%s' (known: target, question, duration)",
			     show(key, strlen(key), b));
			goto out;
		}
	}
	v = json_object_get(doc, "target");
	if (v && !json_is_string(v)) {
		fail(err, size, "target must be a string such as \"service:billing\"");
		goto out;
	}
	if ((ret = api_parse_target(json_string_value(v), &r.target, err, size)))
		goto out;
	v = json_object_get(doc, "question");
	if (v && !json_is_string(v)) {
		ret = fail(err, size, "question must be a string such as \"cpu\"");
		goto out;
	}
	if ((ret = parse_question(json_string_value(v), &r.question, err, size)))
		goto out;
	v = json_object_get(doc, "duration");
	if (v &&
	    (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 3600)) {
		ret = fail(err, size, "duration must be 10, 30 or 60 seconds");
		goto out;
	}
	r.duration_s = v ? (unsigned int)json_integer_value(v) : API_DEFAULT_DURATION;
	if ((ret = check_req(&r, err, size)))
		goto out;
	*out = r;
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

int api_parse_format(const char *s, enum api_format *out, char *err, size_t size)
{
	char b[SHOW_MAX + 4];

	if (!s || !strcmp(s, "pprof")) {
		*out = API_FORMAT_PPROF;
		return 0;
	}
	if (!strcmp(s, "collapsed")) {
		*out = API_FORMAT_COLLAPSED;
		return 0;
	}
	return fail(err, size, "format must be pprof or collapsed, not '%s'",
		    show(s, strlen(s), b));
}

/* A Kubernetes namespace: a DNS label, 1..63 of [a-z0-9-], alphanumeric at both ends. */
static bool ns_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

int api_split_service(const char *s, char *ns, size_t ns_size, const char **name)
{
	const char *slash = s ? strchr(s, '/') : NULL;
	size_t n;

	if (!s)
		return -EINVAL;
	if (!slash) {
		if (ns_size)
			ns[0] = '\0';
		*name = s;
		return 0;
	}
	n = (size_t)(slash - s);
	if (!ns_ok(s, n) || n >= ns_size || !slash[1] || strchr(slash + 1, '/'))
		return -EINVAL;
	memcpy(ns, s, n);
	ns[n] = '\0';
	*name = slash + 1;
	return 0;
}

int api_parse_service(const char *s, char *out, size_t out_size, char *err, size_t size)
{
	size_t max = out_size < STORE_NAME_MAX ? out_size : STORE_NAME_MAX;
	const char *name;
	char ns[64], b[SHOW_MAX + 4];

	if (!s || !name_ok(s, max))
		return fail(err, size,
			    "service must be 1 to %zu characters without control "
			    "characters",
			    max - 1);
	if (api_split_service(s, ns, sizeof(ns), &name))
		return fail(err, size,
			    "bad service '%s': write NAME, or NAMESPACE/NAME with a "
			    "Kubernetes namespace (1 to 63 of a-z, 0-9 and '-')",
			    show(s, strlen(s), b));
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

const char *api_format_target(const struct capture_target *t, char *buf, size_t size)
{
	size_t i, n;

	switch (t->kind) {
	case TARGET_SERVICE:
		snprintf(buf, size, "service:%s%s%s", t->ns, t->ns[0] ? "/" : "", t->name);
		break;
	case TARGET_UNIT:
		snprintf(buf, size, "unit:%s", t->name);
		break;
	case TARGET_CONTAINER:
		snprintf(buf, size, "container:%s", t->name);
		break;
	case TARGET_PIDS:
		n = (size_t)snprintf(buf, size, "pid:");
		for (i = 0; i < t->npids && i < PIDS_MAX && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, "%s%u", i ? "," : "", t->pids[i]);
		break;
	default:
		snprintf(buf, size, "server");
	}
	return buf;
}
