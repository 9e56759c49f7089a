// SPDX-License-Identifier: Apache-2.0
/*
 * cdp: CDP commands, messages and the /json/list target list (cdp.h). jansson decodes (it
 * rejects invalid UTF-8, NUL in strings and nesting deeper than JSON_PARSER_MAX_DEPTH without
 * recursing past it); what we keep or hand out is capped and sanitized here.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/node/cdp.h"

#define CDP_PATH_MAX 256
#define CDP_KEY_MAX 63
/* Reals with an integral value up to 2^53 are exact. */
#define CDP_EXACT_MAX 9007199254740992.0

struct cdp_msg {
	json_t *root;
	json_t *result; /* borrowed from root; NULL for errors and events */
	uint32_t id;
	bool event;
	bool has_error;
	char method[CDP_METHOD_MAX + 1];
	char error[CDP_ERROR_MAX + 1];
};

static bool method_ok(const char *m)
{
	size_t i;

	for (i = 0; m[i]; i++) {
		if (i >= CDP_METHOD_MAX)
			return false;
		if (!((m[i] >= 'A' && m[i] <= 'Z') || (m[i] >= 'a' && m[i] <= 'z') || m[i] == '.'))
			return false;
	}
	return i > 0;
}

int cdp_command(char *buf, size_t size, uint32_t id, const char *method, const char *params_json)
{
	int n;

	if (!buf || !method || !method_ok(method) || (params_json && params_json[0] != '{'))
		return -EINVAL;
	if (!size)
		return -ENOSPC;
	if (size > INT_MAX)
		size = INT_MAX;
	if (params_json)
		n = snprintf(buf, size, "{\"id\":%" PRIu32 ",\"method\":\"%s\",\"params\":%s}", id,
			     method, params_json);
	else
		n = snprintf(buf, size, "{\"id\":%" PRIu32 ",\"method\":\"%s\"}", id, method);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/* jansson's error for json_loadb(): out of memory or a malformed text. */
static int load_error(const json_error_t *e)
{
	return json_error_code(e) == json_error_out_of_memory ? -ENOMEM : -EPROTO;
}

/* "CODE message" of an error object, or -EPROTO when it is not {"code":int,"message":str}. */
static int parse_error(struct cdp_msg *m, const json_t *err)
{
	const json_t *code = json_object_get(err, "code"), *msg = json_object_get(err, "message");
	char text[CDP_ERROR_MAX + 1];
	int n;

	if (!json_is_object(err) || !json_is_integer(code) || !json_is_string(msg))
		return -EPROTO;
	n = snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT " %.*s", json_integer_value(code),
		     (int)(json_string_length(msg) < CDP_ERROR_MAX ? json_string_length(msg) :
								     CDP_ERROR_MAX),
		     json_string_value(msg));
	if (n < 0)
		return -EPROTO;
	/* a cut message ends on a character boundary, not in a '?' */
	text_utf8_sanitize_copy(m->error, sizeof(m->error), text, text_utf8_trim_partial(text));
	m->has_error = true;
	return 0;
}

static int parse_response(struct cdp_msg *m, const json_t *id)
{
	json_t *result = json_object_get(m->root, "result");
	const json_t *err = json_object_get(m->root, "error");
	json_int_t v = json_integer_value(id);

	if (!json_is_integer(id) || v < 1 || v > UINT32_MAX || (result && err) || (!result && !err))
		return -EPROTO;
	m->id = (uint32_t)v;
	if (err)
		return parse_error(m, err);
	if (!json_is_object(result))
		return -EPROTO;
	m->result = result;
	return 0;
}

static int parse_event(struct cdp_msg *m, const json_t *method)
{
	const json_t *params = json_object_get(m->root, "params");

	if (!json_is_string(method) || !json_string_length(method) ||
	    (params && !json_is_object(params)))
		return -EPROTO;
	text_utf8_sanitize_copy(m->method, sizeof(m->method), json_string_value(method),
				json_string_length(method));
	m->event = true;
	return 0;
}

int cdp_parse(const char *buf, size_t len, struct cdp_msg **out)
{
	struct cdp_msg *m;
	const json_t *id;
	json_error_t e;
	int err;

	if (!buf || !out)
		return -EINVAL;
	if (len > CDP_MAX_MESSAGE)
		return -EFBIG;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &e);
	if (!m->root) {
		err = load_error(&e);
		goto err_free;
	}
	if (!json_is_object(m->root)) {
		err = -EPROTO;
		goto err_free;
	}
	id = json_object_get(m->root, "id");
	if (id)
		err = parse_response(m, id);
	else
		err = parse_event(m, json_object_get(m->root, "method"));
	if (err)
		goto err_free;
	*out = m;
	return 0;
err_free:
	cdp_msg_free(m);
	return err;
}

uint32_t cdp_msg_id(const struct cdp_msg *m)
{
	return m->id;
}

bool cdp_msg_is_event(const struct cdp_msg *m)
{
	return m->event;
}

const char *cdp_msg_method(const struct cdp_msg *m)
{
	return m->event ? m->method : NULL;
}

const char *cdp_msg_error(const struct cdp_msg *m)
{
	return m->has_error ? m->error : NULL;
}

/*
 * The value at dotted @path under the result of @m into @out. Returns 0, -ENOENT, -EINVAL.
 * Each step is one hash lookup: the cost is the length of @path (at most CDP_PATH_MAX).
 */
static int result_lookup(const struct cdp_msg *m, const char *path, const json_t **out)
{
	const json_t *v = m->result;
	const char *p = path, *dot;
	size_t n;

	if (!path || !*path || strnlen(path, CDP_PATH_MAX + 1) > CDP_PATH_MAX)
		return -EINVAL;
	if (!v)
		return -ENOENT;
	for (;;) {
		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (!n || n > CDP_KEY_MAX)
			return -EINVAL;
		if (!json_is_object(v))
			return -ENOENT;
		v = json_object_getn(v, p, n);
		if (!v)
			return -ENOENT;
		if (!dot)
			break;
		p = dot + 1;
	}
	*out = v;
	return 0;
}

int cdp_msg_result_string(const struct cdp_msg *m, const char *path, char *buf, size_t size)
{
	const json_t *v;
	size_t len;
	int err;

	if (!buf)
		return -EINVAL;
	err = result_lookup(m, path, &v);
	if (err)
		return err;
	if (!json_is_string(v))
		return -EPROTO;
	len = json_string_length(v);
	if (len >= size || len > INT_MAX)
		return -ENOSPC;
	return (int)text_utf8_sanitize_copy(buf, size, json_string_value(v), len);
}

int cdp_msg_result_int(const struct cdp_msg *m, const char *path, int64_t *out)
{
	const json_t *v;
	double d;
	int err;

	if (!out)
		return -EINVAL;
	err = result_lookup(m, path, &v);
	if (err)
		return err;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -EPROTO;
	d = json_real_value(v);
	if (!(d >= -CDP_EXACT_MAX && d <= CDP_EXACT_MAX) || d != floor(d))
		return -EPROTO;
	*out = (int64_t)d;
	return 0;
}

void cdp_msg_free(struct cdp_msg *m)
{
	if (!m)
		return;
	json_decref(m->root);
	free(m);
}

/* Skips @prefix at *@p; true when it was there. */
static bool skip(const char **p, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(*p, prefix, n))
		return false;
	*p += n;
	return true;
}

static bool path_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

/*
 * Returns the "/PATH" part of @url (@len bytes, no NUL among them: jansson's strings have
 * none) when it is ws://LOOPBACK:@port/PATH, or NULL.
 */
static const char *loopback_path(const char *url, size_t len, uint16_t port)
{
	static const char *const hosts[] = { "127.0.0.1:", "localhost:", "[::1]:" };
	char digits[8];
	const char *p = url, *path;
	size_t i;

	if (len > 5 + 16 + 6 + 1 + CDP_WS_PATH_MAX || !skip(&p, "ws://"))
		return NULL;
	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++)
		if (skip(&p, hosts[i]))
			break;
	if (i == sizeof(hosts) / sizeof(hosts[0]))
		return NULL;
	snprintf(digits, sizeof(digits), "%u/", port);
	if (!skip(&p, digits))
		return NULL;
	path = p - 1;
	for (; *p; p++)
		if (!path_char(*p))
			return NULL;
	if (p == path + 1 || p - path - 1 > CDP_WS_PATH_MAX)
		return NULL;
	return path;
}

int cdp_targets_parse(const char *body, size_t len, uint16_t port, char *ws_path, size_t size)
{
	const char *path = NULL;
	const json_t *t, *url;
	json_error_t e;
	json_t *root;
	size_t i;
	int err;

	if (!body || !ws_path || !port)
		return -EINVAL;
	if (len > CDP_MAX_TARGETS)
		return -EFBIG;
	root = json_loadb(body, len, 0, &e);
	if (!root)
		return load_error(&e);
	err = -EPROTO;
	if (!json_is_array(root))
		goto out;
	err = -ENOENT;
	json_array_foreach(root, i, t) {
		url = json_object_get(t, "webSocketDebuggerUrl");
		if (!json_is_string(url))
			continue;
		path = loopback_path(json_string_value(url), json_string_length(url), port);
		if (path)
			break;
	}
	if (!path)
		goto out;
	err = -ENOSPC;
	if (strlen(path) >= size)
		goto out;
	strcpy(ws_path, path);
	err = 0;
out:
	json_decref(root);
	return err;
}
