// SPDX-License-Identifier: Apache-2.0
/*
 * The pure request parsing of the HTTP API, table-driven with error rows: routes (404/405),
 * the Authorization header, targets, the plan query, the capture body, formats, numbers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/agent/api_parse.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ID "20261129T174501Z-a1b2c3"

static void test_route(void **state)
{
	static const struct {
		const char *method, *path;
		int ret;
		enum api_route route;
		enum token_role need;
		const char *id_or_allow;
	} cases[] = {
#define BID40 "e7f804e707aede4a4891398866d99a0213915d57"
#define BID128 BID40 BID40 BID40 "0123456a"
		{ "GET", "/v1/status", 0, API_STATUS, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/status/", 0, API_STATUS, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/plan", 0, API_PLAN, TOKEN_ROLE_VIEWER, "" },
		{ "POST", "/v1/captures", 0, API_CAPTURE_START, TOKEN_ROLE_OPERATOR, "" },
		{ "GET", "/v1/captures/current", 0, API_CAPTURE_CURRENT, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/profiles", 0, API_PROFILES, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/profiles/" ID, 0, API_PROFILE, TOKEN_ROLE_VIEWER, ID },
		{ "DELETE", "/v1/profiles/" ID, 0, API_PROFILE_DELETE, TOKEN_ROLE_OPERATOR, ID },
		{ "GET", "/v1/profiles/" ID "/download", 0, API_PROFILE_DOWNLOAD, TOKEN_ROLE_VIEWER,
		  ID },
		{ "POST", "/v1/remove", 0, API_REMOVE, TOKEN_ROLE_ADMIN, "" },
		{ "POST", "/v1/symbols", 0, API_SYMBOLS_UPLOAD, TOKEN_ROLE_OPERATOR, "" },
		{ "GET", "/v1/symbols", 0, API_SYMBOLS_LIST, TOKEN_ROLE_VIEWER, "" },
		{ "DELETE", "/v1/symbols/" BID40, 0, API_SYMBOLS_DELETE, TOKEN_ROLE_OPERATOR,
		  BID40 },
		{ "DELETE", "/v1/symbols/" BID128, 0, API_SYMBOLS_DELETE, TOKEN_ROLE_OPERATOR,
		  BID128 },
		{ "DELETE", "/v1/symbols/" BID128 "0", -ENOENT, 0, 0, NULL },
		{ "DELETE", "/v1/symbols/..", -ENOENT, 0, 0, NULL },
		{ "DELETE", "/v1/symbols/a%2fb", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/symbols/" BID40, -EOPNOTSUPP, 0, 0, "DELETE" },
		{ "PUT", "/v1/symbols", -EOPNOTSUPP, 0, 0, "POST, GET" },
		/* a profile id keeps its own bound */
		{ "GET", "/v1/profiles/" BID40, -ENOENT, 0, 0, NULL },
		{ "GET", "/metrics", 0, API_METRICS, TOKEN_ROLE_NONE, "" },
		/* a well-formed but unknown id is found by the route, refused by the store */
		{ "GET", "/v1/profiles/abc", 0, API_PROFILE, TOKEN_ROLE_VIEWER, "abc" },
		/* errors */
		{ "POST", "/v1/status", -EOPNOTSUPP, 0, 0, "GET" },
		{ "PUT", "/v1/profiles/" ID, -EOPNOTSUPP, 0, 0, "GET, DELETE" },
		{ "GET", "/v1/captures", -EOPNOTSUPP, 0, 0, "POST" },
		{ "GET", "/v1/remove", -EOPNOTSUPP, 0, 0, "POST" },
		{ "HEAD", "/metrics", -EOPNOTSUPP, 0, 0, "GET" },
		{ "GET", "/v1/profiles/../../etc/passwd", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/profiles/..", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/profiles/a%2fb", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/profiles/" ID "0000000000", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/profiles//download", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/statusx", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/status//", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/session", 0, API_SESSION, TOKEN_ROLE_NONE, "" },
		{ "POST", "/v1/session", 0, API_SESSION_START, TOKEN_ROLE_NONE, "" },
		{ "DELETE", "/v1/session", 0, API_SESSION_END, TOKEN_ROLE_VIEWER, "" },
		{ "PUT", "/v1/session", -EOPNOTSUPP, 0, 0, "GET, POST, DELETE" },
		{ "GET", "/v1/processes", 0, API_PROCESSES, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/compare", 0, API_COMPARE, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/continuous", 0, API_CONTINUOUS, TOKEN_ROLE_VIEWER, "" },
		{ "GET", "/v1/continuous/", 0, API_CONTINUOUS, TOKEN_ROLE_VIEWER, "" },
		{ "POST", "/v1/continuous", -EOPNOTSUPP, 0, 0, "GET" },
		{ "GET", "/v1/continuous/x", -ENOENT, 0, 0, NULL },
		{ "GET", "/v1/profiles/" ID "/flamegraph", 0, API_PROFILE_FLAMEGRAPH,
		  TOKEN_ROLE_VIEWER, ID },
		{ "GET", "/", 0, API_PAGE, TOKEN_ROLE_NONE, "" },
		{ "GET", "/ui/app.js", 0, API_PAGE, TOKEN_ROLE_NONE, "" },
		{ "POST", "/", -EOPNOTSUPP, 0, 0, "GET" },
		{ "GET", "/ui/other.js", -ENOENT, 0, 0, NULL },
		{ "GET", "/ui/../etc/passwd", -ENOENT, 0, 0, NULL },
		{ "GET", "", -ENOENT, 0, 0, NULL },
		{ "GET", "/V1/STATUS", -ENOENT, 0, 0, NULL },
	};
	struct api_route_match m;
	char allow[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s %s\n", i, cases[i].method, cases[i].path);
		memset(&m, 0xa5, sizeof(m));
		assert_int_equal(api_parse_route(cases[i].method, cases[i].path, &m, allow,
						 sizeof(allow)),
				 cases[i].ret);
		if (cases[i].ret == 0) {
			assert_int_equal(m.route, cases[i].route);
			assert_int_equal(m.need, cases[i].need);
			assert_string_equal(m.id, cases[i].id_or_allow);
		} else if (cases[i].ret == -EOPNOTSUPP) {
			assert_string_equal(allow, cases[i].id_or_allow);
		}
	}
	assert_int_equal(api_parse_route(NULL, "/v1/status", &m, NULL, 0), -ENOENT);
	assert_int_equal(api_parse_route("POST", "/v1/status", &m, NULL, 0), -EOPNOTSUPP);
}

static void test_bearer(void **state)
{
	static const struct {
		const char *header;
		int ret;
		const char *token;
	} cases[] = {
		{ "Bearer abc", 0, "abc" },
		{ "bearer abc", 0, "abc" },
		{ "BEARER   abc  ", 0, "abc" },
		{ "Bearer\tabc", 0, "abc" },
		{ "Bearer", -EINVAL, NULL },
		{ "Bearer ", -EINVAL, NULL },
		{ "Bearerabc", -EINVAL, NULL },
		{ "Basic YWxhZGRpbjpvcGVuc2VzYW1l", -EINVAL, NULL },
		{ "Bearer a b", -EINVAL, NULL },
		{ "Bearer a\x01", -EINVAL, NULL },
		{ "Bearer \xc3\xa9t\xc3\xa9", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ NULL, -EINVAL, NULL },
	};
	const char *tok;
	size_t i, len;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(api_parse_bearer(cases[i].header, &tok, &len), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(len, strlen(cases[i].token));
			assert_memory_equal(tok, cases[i].token, len);
		}
	}
}

static void test_target(void **state)
{
	static const struct {
		const char *s;
		int ret;
		enum target_kind kind;
		const char *name_or_err;
		size_t npids;
	} cases[] = {
		{ "server", 0, TARGET_SERVER, "", 0 },
		{ "service:billing", 0, TARGET_SERVICE, "billing", 0 },
		/* a Service of one tenant: the namespace is kept apart (checked below) */
		{ "service:team-a/billing", 0, TARGET_SERVICE, "billing", 0 },
		{ "service:Team/billing", -EINVAL, 0,
		  "bad target 'service:Team/billing': write "
		  "service:NAME, or service:NAMESPACE/NAME",
		  0 },
		{ "service:team-a/", -EINVAL, 0, "bad target 'service:team-a/'", 0 },
		{ "service:/billing", -EINVAL, 0, "bad target 'service:/billing'", 0 },
		{ "service:a/b/c", -EINVAL, 0, "bad target 'service:a/b/c'", 0 },
		{ "unit:nginx.service", 0, TARGET_UNIT, "nginx.service", 0 },
		{ "container:3f2a", 0, TARGET_CONTAINER, "3f2a", 0 },
		{ "pid:1", 0, TARGET_PIDS, "", 1 },
		{ "pid:12,34,56", 0, TARGET_PIDS, "", 3 },
		{ "pid:2147483647", 0, TARGET_PIDS, "", 1 },
		{ "", -EINVAL, 0, "target is required", 0 },
		{ NULL, -EINVAL, 0, "target is required", 0 },
		{ "Server", -EINVAL, 0, "unknown target 'Server'", 0 },
		{ "service:", -EINVAL, 0, "bad target 'service:'", 0 },
		{ "service:a\nb", -EINVAL, 0, "bad target 'service:a?b'", 0 },
		{ "pid:", -EINVAL, 0, "bad target 'pid:'", 0 },
		{ "pid:0", -EINVAL, 0, "bad target", 0 },
		{ "pid:-1", -EINVAL, 0, "bad target", 0 },
		{ "pid:1,", -EINVAL, 0, "bad target", 0 },
		{ "pid:1,,2", -EINVAL, 0, "bad target", 0 },
		{ "pid:2147483648", -EINVAL, 0, "bad target", 0 },
		{ "pid:99999999999999999999", -EINVAL, 0, "bad target", 0 },
		{ "pid:1x", -EINVAL, 0, "bad target", 0 },
		{ "pod:x", -EINVAL, 0, "unknown target 'pod:x'", 0 },
		{ "\xff\xfe", -EINVAL, 0,
		  "unknown target '?"
		  "?'",
		  0 },
	};
	struct capture_target t;
	char err[256], buf[300];
	size_t i;

	(void)state;
	assert_int_equal(api_parse_target("service:team-a/billing", &t, err, sizeof(err)), 0);
	assert_string_equal(t.ns, "team-a");
	assert_string_equal(api_format_target(&t, buf, sizeof(buf)), "service:team-a/billing");
	assert_int_equal(api_parse_target("service:billing", &t, err, sizeof(err)), 0);
	assert_string_equal(t.ns, "");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		err[0] = '\0';
		assert_int_equal(api_parse_target(cases[i].s, &t, err, sizeof(err)), cases[i].ret);
		if (cases[i].ret == 0) {
			assert_int_equal(t.kind, cases[i].kind);
			assert_string_equal(t.name, cases[i].name_or_err);
			assert_int_equal(t.npids, cases[i].npids);
			/* the formatted form parses back to itself */
			assert_string_equal(api_format_target(&t, buf, sizeof(buf)), cases[i].s);
		} else {
			assert_non_null(strstr(err, cases[i].name_or_err));
		}
	}
	/* 64 pids, not 65 */
	{
		char s[1024] = "pid:";
		int k;

		for (k = 1; k <= 64; k++)
			snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%d", k > 1 ? "," : "", k);
		assert_int_equal(api_parse_target(s, &t, err, sizeof(err)), 0);
		assert_int_equal(t.npids, 64);
		strcat(s, ",65");
		assert_int_equal(api_parse_target(s, &t, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "at most 64"));
	}
	/* a name of the largest size, and one byte more */
	{
		char s[TARGET_NAME_MAX + 16] = "service:";

		memset(s + 8, 'a', TARGET_NAME_MAX - 1);
		s[8 + TARGET_NAME_MAX - 1] = '\0';
		assert_int_equal(api_parse_target(s, &t, err, sizeof(err)), 0);
		strcat(s, "a");
		assert_int_equal(api_parse_target(s, &t, err, sizeof(err)), -EINVAL);
	}
}

static void test_plan_query(void **state)
{
	static const struct {
		const char *target, *question, *duration;
		int ret;
		enum question q;
		unsigned int duration_s;
		const char *err;
	} cases[] = {
		{ "service:billing", "cpu", "30", 0, Q_CPU, 30, NULL },
		{ "service:billing", "cpu", NULL, 0, Q_CPU, 30, NULL },
		{ "service:billing", "cpu", "", 0, Q_CPU, 30, NULL },
		{ "server", "wall", "10", 0, Q_WALL, 10, NULL },
		{ "server", "memory-growth", "60", 0, Q_MEMORY_GROWTH, 60, NULL },
		{ "service:billing", "threads", "60", 0, Q_THREADS, 5, NULL },
		{ "service:billing", "memory-held", "30", 0, Q_MEMORY_HELD, 30, NULL },
		{ "server", "memory-held", "30", -EINVAL, 0, 0, "a server profile offers" },
		{ "service:billing", "cpu", "20", -EINVAL, 0, 0, "10, 30 or 60" },
		{ "service:billing", "cpu", "5", -EINVAL, 0, 0, "10, 30 or 60" },
		{ "service:billing", "cpu", "30s", -EINVAL, 0, 0, "10, 30 or 60" },
		{ "service:billing", "cpu", "-30", -EINVAL, 0, 0, "10, 30 or 60" },
		{ "service:billing", "cpu", "99999999999999999999999", -EINVAL, 0, 0, "10, 30" },
		{ "service:billing", "disk", "30", -EINVAL, 0, 0, "unknown question 'disk'" },
		{ "service:billing", NULL, "30", -EINVAL, 0, 0, "question is required" },
		{ NULL, "cpu", "30", -EINVAL, 0, 0, "target is required" },
	};
	struct api_capture_req r;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		err[0] = '\0';
		assert_int_equal(api_parse_plan_query(cases[i].target, cases[i].question,
						      cases[i].duration, &r, err, sizeof(err)),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(r.question, cases[i].q);
			assert_int_equal(r.duration_s, cases[i].duration_s);
		} else {
			assert_non_null(strstr(err, cases[i].err));
		}
	}
}

static void test_capture_body(void **state)
{
	static const struct {
		const char *body;
		int ret;
		enum target_kind kind;
		unsigned int duration_s;
		const char *err;
	} cases[] = {
		{ "{\"target\":\"service:billing\",\"question\":\"cpu\",\"duration\":30}", 0,
		  TARGET_SERVICE, 30, NULL },
		{ "{\"target\":\"server\",\"question\":\"cpu\"}", 0, TARGET_SERVER, 30, NULL },
		{ " {\"question\":\"locks\", \"target\":\"pid:7\", \"duration\":60}\n", 0,
		  TARGET_PIDS, 60, NULL },
		{ "{\"target\":\"server\",\"question\":\"threads\",\"duration\":10}", 0,
		  TARGET_SERVER, 5, NULL },
		{ "", -EINVAL, 0, 0, "a JSON body is required" },
		{ "{", -EINVAL, 0, 0, "invalid JSON at line 1" },
		{ "[]", -EINVAL, 0, 0, "must be a JSON object" },
		{ "\"server\"", -EINVAL, 0, 0, "invalid JSON" },
		{ "{\"target\":\"server\",\"question\":\"cpu\",\"extra\":1}", -EINVAL, 0, 0,
		  "unknown key 'extra'" },
		{ "{\"target\":\"server\",\"target\":\"server\",\"question\":\"cpu\"}", -EINVAL, 0,
		  0, "invalid JSON" },
		{ "{\"target\":7,\"question\":\"cpu\"}", -EINVAL, 0, 0, "target must be a string" },
		{ "{\"target\":\"server\",\"question\":[\"cpu\"]}", -EINVAL, 0, 0,
		  "question must be a string" },
		{ "{\"target\":\"server\",\"question\":\"cpu\",\"duration\":\"30\"}", -EINVAL, 0, 0,
		  "10, 30 or 60" },
		{ "{\"target\":\"server\",\"question\":\"cpu\",\"duration\":30.0}", -EINVAL, 0, 0,
		  "10, 30 or 60" },
		{ "{\"target\":\"server\",\"question\":\"cpu\",\"duration\":45}", -EINVAL, 0, 0,
		  "not 45" },
		{ "{\"target\":\"server\",\"question\":\"cpu\",\"duration\":-10}", -EINVAL, 0, 0,
		  "10, 30 or 60" },
		{ "{\"question\":\"cpu\"}", -EINVAL, 0, 0, "target is required" },
		{ "{\"target\":\"server\"}", -EINVAL, 0, 0, "question is required" },
		{ "{\"target\":\"server\",\"question\":\"memory-alloc\"}", -EINVAL, 0, 0,
		  "a server profile offers" },
		{ "{\"target\":\"server\",\"question\":\"cpu\"} x", -EINVAL, 0, 0, "invalid JSON" },
	};
	struct api_capture_req r;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		err[0] = '\0';
		assert_int_equal(api_parse_capture_body(cases[i].body, strlen(cases[i].body), &r,
							err, sizeof(err)),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(r.target.kind, cases[i].kind);
			assert_int_equal(r.duration_s, cases[i].duration_s);
		} else {
			print_message("  %s\n", err);
			assert_non_null(strstr(err, cases[i].err));
		}
	}
	/* too large, and a tiny message buffer */
	{
		size_t n = API_JSON_BODY_MAX + 1;
		char *big = malloc(n), small[8];

		memset(big, ' ', n);
		assert_int_equal(api_parse_capture_body(big, n, &r, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "too large"));
		assert_int_equal(api_parse_capture_body("{", 1, &r, small, sizeof(small)), -EINVAL);
		assert_int_equal(strlen(small), sizeof(small) - 1);
		assert_int_equal(api_parse_capture_body("{", 1, &r, NULL, 0), -EINVAL);
		free(big);
	}
}

static void test_format_service(void **state)
{
	enum api_format f;
	char err[128], out[STORE_NAME_MAX], big[STORE_NAME_MAX + 1];

	(void)state;
	assert_int_equal(api_parse_format(NULL, &f, err, sizeof(err)), 0);
	assert_int_equal(f, API_FORMAT_PPROF);
	assert_int_equal(api_parse_format("collapsed", &f, err, sizeof(err)), 0);
	assert_int_equal(f, API_FORMAT_COLLAPSED);
	assert_int_equal(api_parse_format("svg", &f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "format must be pprof or collapsed, not 'svg'");

	assert_int_equal(api_parse_service("billing", out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "billing");
	assert_int_equal(api_parse_service("", out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(api_parse_service("a\tb", out, sizeof(out), err, sizeof(err)), -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(api_parse_service(big, out, sizeof(out), err, sizeof(err)), -EINVAL);
	big[sizeof(big) - 2] = '\0';
	assert_int_equal(api_parse_service(big, out, sizeof(out), err, sizeof(err)), 0);
}

/* NAME or NAMESPACE/NAME, for ?service= and service: targets. */
static void test_service_namespace(void **state)
{
	static const struct {
		const char *in;
		int ret;
		const char *ns, *name;
	} cases[] = {
		{ "billing", 0, "", "billing" },
		{ "team-a/billing", 0, "team-a", "billing" },
		{ "a/b", 0, "a", "b" },
		{ "0ns9/Service x", 0, "0ns9", "Service x" },
		/* errors */
		{ "/billing", -EINVAL, NULL, NULL },
		{ "team-a/", -EINVAL, NULL, NULL },
		{ "Team/billing", -EINVAL, NULL, NULL },
		{ "-a/billing", -EINVAL, NULL, NULL },
		{ "a-/billing", -EINVAL, NULL, NULL },
		{ "a_b/billing", -EINVAL, NULL, NULL },
		{ "a/b/c", -EINVAL, NULL, NULL },
		{ "a.b/billing", -EINVAL, NULL, NULL },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x", -EINVAL,
		  NULL, NULL }, /* 64 */
		{ NULL, -EINVAL, NULL, NULL },
	};
	char ns[64], out[STORE_NAME_MAX], err[256];
	const char *name;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(api_split_service(cases[i].in, ns, sizeof(ns), &name),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_string_equal(ns, cases[i].ns);
			assert_string_equal(name, cases[i].name);
		}
		if (cases[i].in)
			assert_int_equal(api_parse_service(cases[i].in, out, sizeof(out), err,
							   sizeof(err)),
					 cases[i].ret);
	}
	assert_int_equal(api_parse_service("a/b/c", out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad service 'a/b/c': write NAME, or NAMESPACE/NAME with a "
				 "Kubernetes namespace (1 to 63 of a-z, 0-9 and '-')");
	/* a 63-byte namespace fits */
	assert_int_equal(api_split_service(
				 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x",
				 ns, sizeof(ns), &name),
			 0);
	assert_int_equal(strlen(ns), 63);
	assert_int_equal(api_split_service("ab/x", ns, 2, &name), -EINVAL);
}

static void test_parse_uint(void **state)
{
	unsigned long v;
	char err[256];

	(void)state;
	assert_int_equal(api_parse_uint(NULL, "limit", 500, 50, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 50);
	assert_int_equal(api_parse_uint("500", "limit", 500, 50, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 500);
	assert_int_equal(api_parse_uint("501", "limit", 500, 50, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(api_parse_uint("0", "limit", 0, 50, &v, err, sizeof(err)), 0);
	assert_int_equal(api_parse_uint("5", "limit", 0, 50, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(api_parse_uint("", "limit", 500, 50, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(api_parse_uint("+1", "limit", 500, 50, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(api_parse_uint("18446744073709551616", "offset", ~0UL, 0, &v, err,
					sizeof(err)),
			 -EINVAL);
	assert_int_equal(api_parse_uint("18446744073709551615", "offset", ~0UL, 0, &v, err,
					sizeof(err)),
			 0);
	assert_true(v == ~0UL);
}

#define S(x) ((x)*1000000000LL)
#define T0 S(1796637600LL) /* 2026-12-07T10:00:00Z */

/* RFC 3339 and unix seconds, with error rows: bad forms, out of range. */
static void test_time(void **state)
{
	static const struct {
		const char *in;
		int ret;
		int64_t ns;
		const char *err;
	} cases[] = {
		{ "2026-12-07T10:00:00Z", 0, T0, NULL },
		{ "2026-12-07t10:00:00z", 0, T0, NULL },
		{ "2026-12-07T11:00:00+01:00", 0, T0, NULL },
		{ "2026-12-07T11:00:00 01:00", 0, T0, NULL }, /* '+' decoded to ' ' */
		{ "2026-12-07T09:30:00-00:30", 0, T0, NULL },
		{ "2026-12-07T10:00:00.5Z", 0, T0 + 500000000, NULL },
		{ "2026-12-07T10:00:00.123456789Z", 0, T0 + 123456789, NULL },
		{ "1796637600", 0, T0, NULL },
		{ "01796637600", 0, T0, NULL },
		{ "0", 0, 0, NULL },
		{ "1970-01-01T00:00:00Z", 0, 0, NULL },
		{ "2024-02-29T00:00:00Z", 0, S(1709164800LL), NULL },
		{ "2000-02-29T12:00:00Z", 0, S(951825600LL), NULL },
		{ "2016-12-31T23:59:60Z", 0, S(1483228800LL), NULL }, /* a leap second */
		{ "2262-04-11T23:47:15Z", 0, S(9223372035LL), NULL },
		{ "9223372035", 0, S(9223372035LL), NULL },
		/* errors */
		{ NULL, -EINVAL, 0, "from is empty" },
		{ "", -EINVAL, 0, "from is empty" },
		{ "yesterday", -EINVAL, 0, "from must be a time: RFC 3339" },
		{ "2026-12-07", -EINVAL, 0, "not '2026-12-07'" },
		{ "2026-12-07T10:00:00", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07 10:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-13-01T00:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-00-01T00:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-02-29T00:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "1900-02-29T00:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-00T00:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T24:00:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:60:00Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:61Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00.Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00.1234567890Z", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00+24:00", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00+01:60", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00+0100", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00+01:00x", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:00Zx", -EINVAL, 0, "RFC 3339" },
		{ "2026-12-07T10:00:0", -EINVAL, 0, "RFC 3339" },
		{ "2026-1", -EINVAL, 0, "RFC 3339" },
		{ "-5", -EINVAL, 0, "RFC 3339" },
		{ "+1796637600", -EINVAL, 0, "RFC 3339" },
		{ "1e9", -EINVAL, 0, "RFC 3339" },
		{ "1969-12-31T23:59:59Z", -EINVAL, 0, "from must be a time from 1970 to 2262" },
		{ "1970-01-01T00:30:00+01:00", -EINVAL, 0, "from 1970 to 2262" },
		{ "2262-04-11T23:47:16Z", -EINVAL, 0, "from 1970 to 2262" },
		{ "9999-12-31T23:59:59Z", -EINVAL, 0, "from 1970 to 2262" },
		{ "9223372036", -EINVAL, 0, "from 1970 to 2262" },
		{ "99999999999999999999999", -EINVAL, 0, "from 1970 to 2262, not '9999" },
		{ "2026-12-07T10:00:00\x01Z", -EINVAL, 0, "not '2026-12-07T10:00:00?Z'" },
	};
	char err[256];
	int64_t ns;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: %s\n", i, cases[i].in ? cases[i].in : "(null)");
		ns = -1;
		err[0] = '\0';
		assert_int_equal(api_parse_time(cases[i].in, "from", &ns, err, sizeof(err)),
				 cases[i].ret);
		if (!cases[i].ret) {
			assert_true(ns == cases[i].ns);
			continue;
		}
		print_message("  %s\n", err);
		assert_true(ns == -1);
		assert_non_null(strstr(err, cases[i].err));
	}
}

/* The query of GET /v1/continuous: defaults, the range checks, service and format. */
static void test_continuous_query(void **state)
{
	static const struct {
		const char *service, *from, *until, *format;
		int ret;
		int64_t from_ns, until_ns;
		enum api_format fmt;
		const char *service_or_err;
	} cases[] = {
		{ NULL, NULL, NULL, NULL, 0, T0 - S(3600), T0, API_FORMAT_HTML, "" },
		{ "", "", "", "", 0, T0 - S(3600), T0, API_FORMAT_HTML, "" },
		{ "billing", NULL, NULL, "pprof", 0, T0 - S(3600), T0, API_FORMAT_PPROF,
		  "billing" },
		{ NULL, NULL, "2026-12-07T09:00:00Z", "collapsed", 0, T0 - S(7200), T0 - S(3600),
		  API_FORMAT_COLLAPSED, "" },
		{ NULL, "2026-12-07T09:00:00Z", NULL, "html", 0, T0 - S(3600), T0, API_FORMAT_HTML,
		  "" },
		{ NULL, "2026-11-30T10:00:00Z", NULL, NULL, 0, T0 - S(7 * 86400), T0,
		  API_FORMAT_HTML, "" }, /* 7 days: the most */
		{ NULL, "1796634000", "1796637600", NULL, 0, T0 - S(3600), T0, API_FORMAT_HTML,
		  "" },
		{ "Service x", "2026-12-07T09:59:59Z", NULL, NULL, 0, T0 - S(1), T0,
		  API_FORMAT_HTML, "Service x" },
		/* errors */
		{ NULL, "2026-12-07T10:00:00Z", NULL, NULL, -EINVAL, 0, 0, 0,
		  "from (2026-12-07T10:00:00Z) must be before until (2026-12-07T10:00:00Z)" },
		{ NULL, "2026-12-07T11:00:00Z", "2026-12-07T10:00:00Z", NULL, -EINVAL, 0, 0, 0,
		  "must be before until" },
		{ NULL, "2026-11-30T09:59:59Z", NULL, NULL, -EINVAL, 0, 0, 0,
		  "2026-11-30T09:59:59Z to 2026-12-07T10:00:00Z is longer than 7 days (168 hours)" },
		{ NULL, "0", NULL, NULL, -EINVAL, 0, 0, 0, "longer than 7 days" },
		{ NULL, "soon", NULL, NULL, -EINVAL, 0, 0, 0, "from must be a time" },
		{ NULL, NULL, "later", NULL, -EINVAL, 0, 0, 0, "until must be a time" },
		{ NULL, NULL, NULL, "svg", -EINVAL, 0, 0, 0,
		  "format must be html, pprof or collapsed, not 'svg'" },
		{ "shop/billing", NULL, NULL, NULL, -EINVAL, 0, 0, 0,
		  "without its namespace: ask service=billing" },
		{ "a/b/c", NULL, NULL, NULL, -EINVAL, 0, 0, 0, "bad service 'a/b/c'" },
		{ "a\tb", NULL, NULL, NULL, -EINVAL, 0, 0, 0, "service must be 1 to" },
	};
	struct api_continuous_req q, q0;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&q, 0x5a, sizeof(q));
		q0 = q;
		err[0] = '\0';
		assert_int_equal(api_parse_continuous_query(cases[i].service, cases[i].from,
							    cases[i].until, cases[i].format, T0, &q,
							    err, sizeof(err)),
				 cases[i].ret);
		if (cases[i].ret) {
			print_message("  %s\n", err);
			assert_non_null(strstr(err, cases[i].service_or_err));
			assert_memory_equal(&q, &q0, sizeof(q));
			continue;
		}
		assert_true(q.from_ns == cases[i].from_ns);
		assert_true(q.until_ns == cases[i].until_ns);
		assert_int_equal(q.format, cases[i].fmt);
		assert_string_equal(q.service, cases[i].service_or_err);
	}
	/* a clock near the epoch: the default range starts at 0 */
	assert_int_equal(api_parse_continuous_query(NULL, NULL, NULL, NULL, S(60), &q, err,
						    sizeof(err)),
			 0);
	assert_true(q.from_ns == 0 && q.until_ns == S(60));
	assert_int_equal(api_parse_continuous_query(NULL, NULL, NULL, NULL, 0, &q, err,
						    sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_plan_query),
		cmocka_unit_test(test_capture_body),
		cmocka_unit_test(test_format_service),
		cmocka_unit_test(test_service_namespace),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_continuous_query),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
