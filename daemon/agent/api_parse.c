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

#include "base/clock.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SHOW_MAX 40
#define PIDS_MAX 64
#define NS_PER_S 1000000000LL

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
	size_t seg_size; /* the "*" segment's buffer: STORE_ID_SIZE unless set */
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
	{ "GET", "/v1/continuous", API_CONTINUOUS, TOKEN_ROLE_VIEWER, false },
	{ "GET", "/v1/symbols", API_SYMBOLS_LIST, TOKEN_ROLE_VIEWER, false },
	{ "DELETE", "/v1/symbols/*", API_SYMBOLS_DELETE, TOKEN_ROLE_OPERATOR, false, API_SEG_SIZE },
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
	char seg[API_SEG_SIZE];
	size_t i, n = 0;
	bool found = false, seg_ok;

	if (!method || !path)
		return -ENOENT;
	if (allow && allow_size)
		allow[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(routes); i++) {
		seg_ok = true;
		if (!path_match(path, routes[i].path, seg,
				routes[i].seg_size ? routes[i].seg_size : STORE_ID_SIZE, &seg_ok))
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

/* @n decimal digits at @p (stopping at a NUL: it is no digit) into *@v. */
static bool digits(const char *p, size_t n, unsigned int *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		*v = *v * 10 + (unsigned int)(p[i] - '0');
	}
	return true;
}

static unsigned int days_in_month(unsigned int y, unsigned int m)
{
	static const unsigned char days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return days[m - 1] + (m == 2 && leap);
}

/* Days from 1970-01-01 to @y-@m-@d, proleptic Gregorian (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* ".F" (1 to 9 digits) at *@p, if any, into *@ns, moving *@p past it. */
static bool fraction(const char **p, int64_t *ns)
{
	const char *q = *p;
	unsigned int n;

	*ns = 0;
	if (*q != '.')
		return true;
	for (q++, n = 0; *q >= '0' && *q <= '9'; q++, n++)
		if (n < 9)
			*ns = *ns * 10 + (*q - '0');
	if (!n || n > 9)
		return false;
	for (; n < 9; n++)
		*ns *= 10;
	*p = q;
	return true;
}

/* "Z" or "+HH:MM" / "-HH:MM" (or " HH:MM": a '+' a query string decoded) ending @p. */
static bool zone(const char *p, int64_t *off_s)
{
	unsigned int h, m;

	if ((p[0] == 'Z' || p[0] == 'z') && !p[1]) {
		*off_s = 0;
		return true;
	}
	if ((p[0] != '+' && p[0] != '-' && p[0] != ' ') || !digits(p + 1, 2, &h) || p[3] != ':' ||
	    !digits(p + 4, 2, &m) || p[6] || h > 23 || m > 59)
		return false;
	*off_s = (p[0] == '-' ? -1 : 1) * (int64_t)(h * 3600 + m * 60);
	return true;
}

/* "YYYY-MM-DDTHH:MM:SS[.F]" and a zone: the seconds since the epoch (any year 0000 to 9999,
 * range unchecked) and the fraction in ns. */
static bool rfc3339(const char *s, int64_t *secs, int64_t *frac_ns)
{
	unsigned int y, mo, d, h, mi, sec;
	const char *p = s + 19;
	int64_t off;

	if (!digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) || s[7] != '-' ||
	    !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
		return false;
	/* second 60: a leap second, as RFC 3339 allows */
	if (!mo || mo > 12 || !d || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
		return false;
	if (!fraction(&p, frac_ns) || !zone(p, &off))
		return false;
	*secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	return true;
}

int api_parse_time(const char *s, const char *what, int64_t *out, char *err, size_t size)
{
	char b[SHOW_MAX + 4];
	int64_t secs = -1, frac = 0;
	unsigned long v;

	if (!s || !*s)
		return fail(err, size,
			    "%s is empty: write RFC 3339 (2026-12-07T10:00:00Z) or unix "
			    "seconds",
			    what);
	if (!s[strspn(s, "0123456789")]) {
		if (!api_parse_uint(s, what, (unsigned long)API_TIME_MAX_S, 0, &v, NULL, 0))
			secs = (int64_t)v;
	} else if (!rfc3339(s, &secs, &frac)) {
		return fail(err, size,
			    "%s must be a time: RFC 3339 (2026-12-07T10:00:00Z) or unix seconds, "
			    "not '%s'",
			    what, show(s, strlen(s), b));
	}
	if (secs < 0 || secs > API_TIME_MAX_S)
		return fail(err, size, "%s must be a time from 1970 to 2262, not '%s'", what,
			    show(s, strlen(s), b));
	*out = secs * NS_PER_S + frac;
	return 0;
}

/* A query value: NULL and "" both mean "the default". */
static const char *given(const char *s)
{
	return s && *s ? s : NULL;
}

static int view_format(const char *s, enum api_format *out, char *err, size_t size)
{
	char b[SHOW_MAX + 4];

	if (!s || !strcmp(s, "html"))
		*out = API_FORMAT_HTML;
	else if (!strcmp(s, "pprof"))
		*out = API_FORMAT_PPROF;
	else if (!strcmp(s, "collapsed"))
		*out = API_FORMAT_COLLAPSED;
	else
		return fail(err, size, "format must be html, pprof or collapsed, not '%s'",
			    show(s, strlen(s), b));
	return 0;
}

/* NAME; NAMESPACE/NAME is refused: a continuous profile's samples name the Service only. */
static int continuous_service(const char *s, char *out, size_t out_size, char *err, size_t size)
{
	const char *slash;
	char b[SHOW_MAX + 4];

	out[0] = '\0';
	if (!s)
		return 0;
	if (api_parse_service(s, out, out_size, err, size))
		return -EINVAL;
	slash = strchr(s, '/');
	if (slash) {
		out[0] = '\0';
		return fail(err, size,
			    "a continuous profile names a Service as its samples do, without its "
			    "namespace: ask service=%s (every Service of that name on this server)",
			    show(slash + 1, strlen(slash + 1), b));
	}
	return 0;
}

/* from < until, at most API_CONTINUOUS_MAX_S apart. */
static int check_range(int64_t from, int64_t until, char *err, size_t size)
{
	char a[CLOCK_RFC3339_MAX], b[CLOCK_RFC3339_MAX];

	clock_rfc3339(a, sizeof(a), from, 0);
	clock_rfc3339(b, sizeof(b), until, 0);
	if (from >= until)
		return fail(err, size, "from (%s) must be before until (%s)", a, b);
	if (until - from > API_CONTINUOUS_MAX_S * NS_PER_S)
		return fail(err, size,
			    "the range from %s to %s is longer than %d days (%d hours), the most "
			    "that is merged: ask a shorter one",
			    a, b, API_CONTINUOUS_MAX_S / 86400, API_CONTINUOUS_MAX_S / 3600);
	return 0;
}

int api_parse_continuous_query(const char *service, const char *from, const char *until,
			       const char *format, int64_t now_ns, struct api_continuous_req *out,
			       char *err, size_t size)
{
	const int64_t dflt = API_CONTINUOUS_DEFAULT_S * NS_PER_S;
	struct api_continuous_req r;

	memset(&r, 0, sizeof(r));
	if (continuous_service(given(service), r.service, sizeof(r.service), err, size) ||
	    view_format(given(format), &r.format, err, size))
		return -EINVAL;
	r.until_ns = now_ns;
	if (given(until) && api_parse_time(until, "until", &r.until_ns, err, size))
		return -EINVAL;
	r.from_ns = r.until_ns > dflt ? r.until_ns - dflt : 0;
	if (given(from) && api_parse_time(from, "from", &r.from_ns, err, size))
		return -EINVAL;
	if (check_range(r.from_ns, r.until_ns, err, size))
		return -EINVAL;
	*out = r;
	return 0;
}
