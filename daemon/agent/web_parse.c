// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/web_parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "base/text.h"
#include "daemon/agent/api_parse.h"
#include "daemon/agent/tokens.h"

/* The reason into @err, and -EINVAL. */
#define fail(err, size, ...) (text_setf((err), (size), __VA_ARGS__), -EINVAL)

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int web_parse_cookie(const char *header, const char *name, const char **value, size_t *len)
{
	size_t nlen = name ? strlen(name) : 0, hlen;
	const char *p, *end, *pair_end, *eq, *v, *ve;

	if (!header || !nlen)
		return -ENOENT;
	hlen = strnlen(header, WEB_COOKIE_MAX + 1);
	if (hlen > WEB_COOKIE_MAX)
		return -EINVAL;
	end = header + hlen;
	for (p = header; p < end; p = pair_end + 1) {
		pair_end = memchr(p, ';', (size_t)(end - p));
		if (!pair_end)
			pair_end = end;
		p = skip_ws(p, pair_end);
		eq = memchr(p, '=', (size_t)(pair_end - p));
		if (!eq || (size_t)(eq - p) != nlen || memcmp(p, name, nlen))
			continue;
		v = eq + 1;
		ve = pair_end;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (ve - v >= 2 && v[0] == '"' && ve[-1] == '"') {
			v++;
			ve--;
		}
		*value = v;
		*len = (size_t)(ve - v);
		return 0;
	}
	return -ENOENT;
}

bool web_origin_is(const char *origin, const char *host)
{
	size_t hlen;

	if (!origin || !host || !*host)
		return false;
	if (!strncmp(origin, "http://", 7))
		origin += 7;
	else if (!strncmp(origin, "https://", 8))
		origin += 8;
	else
		return false;
	hlen = strlen(host);
	return strlen(origin) == hlen && !strncasecmp(origin, host, hlen);
}

static int copy_token(json_t *v, char *token, size_t tsize, size_t *tlen, char *err, size_t size)
{
	const char *s;
	size_t n, i;

	if (!json_is_string(v))
		return fail(err, size, "token must be a string: {\"token\": \"...\"}");
	s = json_string_value(v);
	n = json_string_length(v);
	if (n == 0 || n > TOKENS_MAX_LEN || n >= tsize)
		return fail(err, size, "the token must be 1 to %d characters", TOKENS_MAX_LEN);
	for (i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return fail(err, size,
				    "the token has a character that is not visible ASCII");
	memcpy(token, s, n);
	token[n] = '\0';
	*tlen = n;
	return 0;
}

int web_parse_session_body(const char *body, size_t len, char *token, size_t tsize, size_t *tlen,
			   char *err, size_t size)
{
	json_error_t jerr;
	json_t *doc;
	int ret;

	if (!body || len == 0)
		return fail(err, size, "a JSON body is required: {\"token\": \"...\"}");
	if (len > API_JSON_BODY_MAX)
		return fail(err, size, "the body is too large: the maximum is %d bytes",
			    API_JSON_BODY_MAX);
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return fail(err, size, "invalid JSON at line %d column %d", jerr.line, jerr.column);
	if (!json_is_object(doc) || json_object_size(doc) != 1 || !json_object_get(doc, "token"))
		ret = fail(err, size, "the body must be {\"token\": \"...\"} and nothing else");
	else
		ret = copy_token(json_object_get(doc, "token"), token, tsize, tlen, err, size);
	json_decref(doc);
	return ret;
}
