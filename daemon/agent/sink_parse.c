// SPDX-License-Identifier: Apache-2.0
/* sink_parse: the sink's pure helpers (sink_parse.h). */
#include "daemon/agent/sink_parse.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define SEQ_DIGITS 20

static bool id_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

bool sink_valid_id(const char *id)
{
	size_t i;

	if (!id || !id[0] || id[0] == '.')
		return false;
	for (i = 0; id[i]; i++)
		if (i >= SINK_ID_MAX || !id_char(id[i]))
			return false;
	return true;
}

int sink_item_name(uint64_t seq, const char *id, char *buf, size_t size)
{
	int n;

	if (!sink_valid_id(id))
		return -EINVAL;
	n = snprintf(buf, size, "%0*" PRIu64 "-%s", SEQ_DIGITS, seq, id);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return n;
}

int sink_parse_item_name(const char *name, uint64_t *seq, char *id)
{
	uint64_t v = 0;
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < SEQ_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(name[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	if (name[SEQ_DIGITS] != '-' || !sink_valid_id(name + SEQ_DIGITS + 1))
		return -EINVAL;
	*seq = v;
	strcpy(id, name + SEQ_DIGITS + 1);
	return 0;
}

enum sink_verdict sink_classify(long status)
{
	if (status >= 200 && status < 300)
		return SINK_OK;
	if (status < 400 || status >= 500)
		return SINK_RETRY; /* no answer, 1xx/3xx (we follow no redirects), 5xx */
	switch (status) {
	case 401: /* the token may be rotated: the file is re-read before every attempt */
	case 403:
	case 404: /* a wrong URL or a missing route is fixed by the operator, not by the item */
	case 405:
	case 408:
	case 409: /* same Idempotency-Key still being processed */
	case 425:
	case 429:
		return SINK_RETRY;
	default:
		return SINK_PERMANENT;
	}
}

uint64_t sink_backoff_ms(unsigned attempt, unsigned base_ms, unsigned cap_ms,
			 long long retry_after_s, uint32_t rnd)
{
	uint64_t ceil = base_ms, delay;
	unsigned i;

	for (i = 1; i < attempt && ceil < cap_ms; i++)
		ceil *= 2;
	if (ceil > cap_ms)
		ceil = cap_ms;
	/* Uniform in [0, ceil]: ceil < 2^32, so the product fits in 64 bits. */
	delay = ((uint64_t)rnd * (ceil + 1)) >> 32;
	if (retry_after_s >= 0) {
		if (retry_after_s > SINK_RETRY_AFTER_MAX_S)
			retry_after_s = SINK_RETRY_AFTER_MAX_S;
		if (delay < (uint64_t)retry_after_s * 1000)
			delay = (uint64_t)retry_after_s * 1000;
	}
	return delay;
}

long long sink_parse_retry_after(const char *value, time_t now)
{
	char buf[128];
	size_t n;
	long long v = 0;
	time_t t;
	const char *p;

	if (!value)
		return -EINVAL;
	while (*value == ' ' || *value == '\t')
		value++;
	n = strlen(value);
	while (n && isspace((unsigned char)value[n - 1]))
		n--;
	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, value, n);
	buf[n] = '\0';
	if (isdigit((unsigned char)buf[0])) {
		for (p = buf; *p; p++) {
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			if (v < SINK_RETRY_AFTER_MAX_S)
				v = v * 10 + (*p - '0');
		}
		return v > SINK_RETRY_AFTER_MAX_S ? SINK_RETRY_AFTER_MAX_S : v;
	}
	/* The three HTTP-date forms all start with a day name (RFC 9110 5.6.7). */
	if (!isalpha((unsigned char)buf[0]))
		return -EINVAL;
	t = curl_getdate(buf, NULL);
	if (t == (time_t)-1)
		return -EINVAL;
	if (t <= now)
		return 0;
	return t - now > SINK_RETRY_AFTER_MAX_S ? SINK_RETRY_AFTER_MAX_S : (long long)(t - now);
}

static int two(const char *p)
{
	if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]))
		return -1;
	return (p[0] - '0') * 10 + (p[1] - '0');
}

int sink_parse_rfc3339(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	int y, off = 0, oh, om;
	const char *p;
	time_t t;

	if (strlen(s) < 20 || two(s) < 0 || two(s + 2) < 0 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		return -EINVAL;
	y = two(s) * 100 + two(s + 2);
	tm.tm_mon = two(s + 5) - 1;
	tm.tm_mday = two(s + 8);
	tm.tm_hour = two(s + 11);
	tm.tm_min = two(s + 14);
	tm.tm_sec = two(s + 17);
	if (y < 1970 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
	    tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	p = s + 19;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++)
			;
		if (p[-1] == '.')
			return -EINVAL;
	}
	if ((*p == 'Z' || *p == 'z') && !p[1]) {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		   (oh = two(p + 1)) >= 0 && (om = two(p + 4)) >= 0 && oh < 24 && om < 60) {
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
	} else {
		return -EINVAL;
	}
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = t - off;
	return 0;
}

int sink_metadata_range(const char *metadata_json, time_t *from, time_t *until)
{
	json_t *root, *v;
	time_t start;
	double dur = 0;
	int err = -EINVAL;

	root = json_loads(metadata_json ? metadata_json : "", 0, NULL);
	if (!json_is_object(root))
		goto out;
	v = json_object_get(root, "start");
	if (json_is_integer(v) && json_integer_value(v) > 0)
		start = (time_t)json_integer_value(v);
	else if (json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 1e12)
		start = (time_t)json_real_value(v);
	else if (!json_is_string(v) || sink_parse_rfc3339(json_string_value(v), &start))
		goto out;
	v = json_object_get(root, "duration");
	if (!json_is_number(v))
		v = json_object_get(root, "duration_seconds");
	if (json_is_number(v))
		dur = json_number_value(v);
	if (!(dur >= 1 && dur < 1e7)) /* Pyroscope wants a non-empty range */
		dur = 1;
	*from = start;
	*until = start + (time_t)(dur + 0.5);
	err = 0;
out:
	json_decref(root);
	return err;
}

/* Appends ",key=value" (value reduced to the characters Pyroscope label values allow). */
static void add_label(char *buf, size_t size, size_t *len, bool *first, const char *key,
		      const char *value)
{
	size_t i;
	int n;

	if (!value || !value[0] || *len >= size)
		return;
	n = snprintf(buf + *len, size - *len, "%s%s=", *first ? "" : ",", key);
	if (n < 0 || (size_t)n >= size - *len) {
		*len = size;
		return;
	}
	*len += n;
	*first = false;
	for (i = 0; value[i] && i < 128; i++) {
		char c = value[i];

		if (*len + 1 >= size) {
			*len = size;
			return;
		}
		buf[(*len)++] = (isalnum((unsigned char)c) || strchr("._:/-", c)) ? c : '_';
	}
	buf[*len] = '\0';
}

int sink_pyroscope_name(const char *app, const char *metadata_json, char *buf, size_t size)
{
	json_t *root, *target;
	const char *service = NULL, *ns = NULL;
	bool first = true;
	size_t len;
	int n, err;

	root = json_loads(metadata_json ? metadata_json : "", 0, NULL);
	if (!json_is_object(root)) {
		err = -EINVAL;
		goto out;
	}
	n = snprintf(buf, size, "%s{", app && app[0] ? app : SINK_DEFAULT_APP);
	if (n < 0 || (size_t)n >= size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	len = n;
	target = json_object_get(root, "target");
	if (json_is_string(target)) {
		service = json_string_value(target);
	} else if (json_is_object(target)) {
		service = json_string_value(json_object_get(target, "service"));
		if (!service)
			service = json_string_value(json_object_get(target, "name"));
		if (!service)
			service = json_string_value(json_object_get(target, "description"));
		/* two tenants' Services of one name stay two series */
		ns = json_string_value(json_object_get(target, "namespace"));
	}
	add_label(buf, size, &len, &first, "node",
		  json_string_value(json_object_get(root, "node")));
	add_label(buf, size, &len, &first, "namespace", ns);
	add_label(buf, size, &len, &first, "service", service);
	add_label(buf, size, &len, &first, "question",
		  json_string_value(json_object_get(root, "question")));
	if (len + 2 > size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	buf[len++] = '}';
	buf[len] = '\0';
	err = (int)len;
out:
	json_decref(root);
	return err;
}
