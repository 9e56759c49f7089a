// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for api_parse.c, the HTTP API's request parsing. The first byte picks the
 * parser, the rest is its input: a capture body (raw bytes, NULs included), a route (method and
 * path split at the first space), an Authorization header, a target, a plan query (three
 * values split at NUL bytes), a format, a service name, a number, a time, the continuous
 * query (four values split at NUL bytes). Checks what the server relies on: only the
 * documented returns; on failure a terminated, printable-ASCII message and the out-param
 * untouched; on success values in range (duration 10/30/60, or 5 for threads; at most 64 pids,
 * none 0; names terminated and without control characters; a profile id that is a safe path
 * segment; a token inside the header without spaces; a time from 1970 to API_TIME_MAX_S, a
 * continuous range from < until at most API_CONTINUOUS_MAX_S long, a service without '/').
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/api_parse.h"

#define TERMINATED(a) memchr((a), '\0', sizeof(a))

static void check_msg(const char *err, size_t size)
{
	size_t i;

	if (!memchr(err, '\0', size))
		abort();
	for (i = 0; err[i]; i++)
		if (err[i] < 0x20 || err[i] >= 0x7f)
			abort();
}

static void check_target(const struct capture_target *t)
{
	size_t i;

	if (!TERMINATED(t->name))
		abort();
	switch (t->kind) {
	case TARGET_SERVER:
		if (t->name[0] || t->npids)
			abort();
		break;
	case TARGET_PIDS:
		if (!t->npids || t->npids > 64)
			abort();
		for (i = 0; i < t->npids; i++)
			if (!t->pids[i] || t->pids[i] > INT32_MAX)
				abort();
		break;
	case TARGET_SERVICE:
	case TARGET_UNIT:
	case TARGET_CONTAINER:
		if (!t->name[0])
			abort();
		for (i = 0; t->name[i]; i++)
			if ((unsigned char)t->name[i] < 0x20 || t->name[i] == 0x7f)
				abort();
		break;
	default:
		abort();
	}
}

static void check_req(const struct api_capture_req *r)
{
	const struct question_info *qi = question_info(r->question);
	struct capture_target back;
	char buf[TARGET_NAME_MAX + 1024];

	check_target(&r->target);
	if (!qi)
		abort();
	if (r->question == Q_THREADS ? r->duration_s != 5 :
	    (r->duration_s != 10 && r->duration_s != 30 && r->duration_s != 60))
		abort();
	if (r->target.kind == TARGET_SERVER && !qi->server)
		abort();
	/* the formatted target parses back to the same target */
	api_format_target(&r->target, buf, sizeof(buf));
	if (api_parse_target(buf, &back, NULL, 0) || back.kind != r->target.kind ||
	    back.npids != r->target.npids || strcmp(back.name, r->target.name) ||
	    memcmp(back.pids, r->target.pids, r->target.npids * sizeof(back.pids[0])))
		abort();
}

/* A parse into @r (*@r0 before it) returned @ret: a whole request, or -EINVAL with @r untouched
 * and a message in @err. */
static void check_req_ret(int ret, const struct api_capture_req *r,
			  const struct api_capture_req *r0, const char *err, size_t size)
{
	if (ret == 0)
		check_req(r);
	else if (ret != -EINVAL || memcmp(r, r0, sizeof(*r)))
		abort();
	else
		check_msg(err, size);
}

/* Up to @n values separated by NUL bytes in the @len bytes at @s (the rest NULL). */
static void split(const char *s, size_t len, const char **v, size_t n)
{
	size_t k = 0, i = 0;

	for (k = 0; k < n; k++)
		v[k] = NULL;
	for (k = 0; k < n && i <= len; k++) {
		v[k] = s + i;
		i += strlen(s + i) + 1;
	}
}

static void check_time(const char *s)
{
	char err[256];
	int64_t t = -1;
	int ret;

	ret = api_parse_time(s, "from", &t, err, sizeof(err));
	if (ret == 0 && (t < 0 || t / 1000000000LL > API_TIME_MAX_S))
		abort();
	if (ret && (ret != -EINVAL || t != -1))
		abort();
	if (ret)
		check_msg(err, sizeof(err));
}

static void check_continuous(const char *s, size_t len, int64_t now)
{
	struct api_continuous_req q, q0;
	const char *v[4];
	char err[256];
	int ret;

	split(s, len, v, 4);
	memset(&q, 0xa5, sizeof(q));
	q0 = q;
	ret = api_parse_continuous_query(v[0], v[1], v[2], v[3], now, &q, err, sizeof(err));
	if (ret) {
		if (ret != -EINVAL || memcmp(&q, &q0, sizeof(q)))
			abort();
		check_msg(err, sizeof(err));
		return;
	}
	if (q.from_ns < 0 || q.from_ns >= q.until_ns ||
	    q.until_ns - q.from_ns > API_CONTINUOUS_MAX_S * 1000000000LL ||
	    q.format > API_FORMAT_HTML || !TERMINATED(q.service) || strchr(q.service, '/'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_capture_req req, req0;
	struct api_route_match m;
	char err[256], allow[64], *s, *sp;
	const char *tok;
	size_t len;
	int ret;

	if (size < 1)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	len = size - 1;
	memset(err, 'x', sizeof(err));
	memset(&req, 0xa5, sizeof(req));
	req0 = req;

	switch (data[0] % 10) {
	case 0:
		ret = api_parse_capture_body(s, len, &req, err, sizeof(err));
		check_req_ret(ret, &req, &req0, err, sizeof(err));
		break;
	case 1:
		sp = strchr(s, ' ');
		if (sp)
			*sp++ = '\0';
		ret = api_parse_route(s, sp ? sp : "", &m, allow, sizeof(allow));
		if (ret == 0) {
			if (m.route >= API_ROUTE_COUNT || !TERMINATED(m.id) ||
			    m.need > TOKEN_ROLE_ADMIN || strchr(m.id, '/') || strchr(m.id, '.'))
				abort();
			/* no token: counts, the page's files and signing in only */
			if (m.need == TOKEN_ROLE_NONE && m.route != API_METRICS &&
			    m.route != API_PAGE && m.route != API_SESSION &&
			    m.route != API_SESSION_START)
				abort();
		} else if (ret == -EOPNOTSUPP) {
			if (!TERMINATED(allow) || !allow[0])
				abort();
		} else if (ret != -ENOENT) {
			abort();
		}
		break;
	case 2:
		ret = api_parse_bearer(s, &tok, &len);
		if (ret == 0) {
			if (tok < s || tok + len > s + strlen(s) || !len)
				abort();
			for (size_t i = 0; i < len; i++)
				if (tok[i] <= 0x20 || tok[i] >= 0x7f)
					abort();
		} else if (ret != -EINVAL) {
			abort();
		}
		break;
	case 3:
		ret = api_parse_target(s, &req.target, err, sizeof(err));
		if (ret == 0)
			check_target(&req.target);
		else if (ret != -EINVAL)
			abort();
		else
			check_msg(err, sizeof(err));
		break;
	case 4: {
		/* three values separated by NUL bytes in the input */
		const char *v[3];

		split(s, len, v, 3);
		ret = api_parse_plan_query(v[0], v[1], v[2], &req, err, sizeof(err));
		check_req_ret(ret, &req, &req0, err, sizeof(err));
		break;
	}
	case 5: {
		enum api_format f = 99;

		ret = api_parse_format(s, &f, err, sizeof(err));
		if ((ret == 0 && f > API_FORMAT_COLLAPSED) || (ret && (ret != -EINVAL || f != 99)))
			abort();
		if (ret)
			check_msg(err, sizeof(err));
		break;
	}
	case 6: {
		char out[STORE_NAME_MAX], tiny[4];

		ret = api_parse_service(s, out, sizeof(out), err, sizeof(err));
		if (ret == 0 && (!TERMINATED(out) || strcmp(out, s)))
			abort();
		if (ret && ret != -EINVAL)
			abort();
		/* a small output buffer is never overrun */
		ret = api_parse_service(s, tiny, sizeof(tiny), NULL, 0);
		if (ret == 0 && !TERMINATED(tiny))
			abort();
		break;
	}
	case 7: {
		unsigned long v = 12345, max = data[0] >> 3;

		ret = api_parse_uint(s, "n", max, 0, &v, err, sizeof(err));
		if ((ret == 0 && v > max) || (ret && (ret != -EINVAL || v != 12345)))
			abort();
		if (ret)
			check_msg(err, sizeof(err));
		break;
	}
	case 8:
		check_time(s);
		break;
	case 9:
		/* "now" from the first byte too: the epoch, 2026, the last second there is */
		check_continuous(s, len,
				 data[0] < 100 ? 0 :
				 data[0] < 200 ? 1796637600LL * 1000000000LL :
						 API_TIME_MAX_S * 1000000000LL);
		break;
	}
	free(s);
	return 0;
}
