// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/request.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define QUOTE_MAX 32
#define FORM "write question=Q,duration=S, e.g. question=cpu,duration=30"

static const unsigned int durations[] = { 10, 30, 60 };

/* A printable copy of at most QUOTE_MAX bytes of @s[0..len) for a message. */
static const char *quote(const char *s, size_t len, char *buf, size_t size)
{
	size_t i, n = len < QUOTE_MAX ? len : QUOTE_MAX;

	if (n >= size)
		n = size - 1;
	for (i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[n] = '\0';
	if (n < len && n + 3 < size)
		strcat(buf, "...");
	return buf;
}

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (err && size) {
		va_start(ap, fmt);
		vsnprintf(err, size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Trims spaces off [*s, *s + *len). */
static void trim(const char **s, size_t *len)
{
	while (*len && is_space(**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && is_space((*s)[*len - 1]))
		(*len)--;
}

/* The questions allowed here, "cpu, wall, ..." */
static const char *allowed_questions(bool server, char *buf, size_t size)
{
	size_t n = 0;
	int q;

	buf[0] = '\0';
	for (q = 0; q < Q_COUNT && n < size; q++) {
		const struct question_info *qi = question_info(q);

		if (!qi->implemented || (server && !qi->server))
			continue;
		n += snprintf(buf + n, size - n, "%s%s", n ? ", " : "", qi->id);
	}
	return buf;
}

static int parse_question(const char *v, size_t len, bool server, enum question *out, char *err,
			  size_t size)
{
	char id[32], q[QUOTE_MAX + 4], list[128];
	const struct question_info *qi;
	int n;

	allowed_questions(server, list, sizeof(list));
	if (!len)
		return fail(err, size, "question is empty; choose one of: %s", list);
	if (len >= sizeof(id))
		n = -EINVAL;
	else {
		memcpy(id, v, len);
		id[len] = '\0';
		n = question_parse(id);
	}
	if (n < 0)
		return fail(err, size, "unknown question '%s'; choose one of: %s",
			    quote(v, len, q, sizeof(q)), list);
	qi = question_info(n);
	if (!qi->implemented)
		return fail(err, size,
			    "%s (%s) cannot be captured by this version; choose one of: %s", qi->id,
			    qi->text, list);
	if (server && !qi->server)
		return fail(err, size,
			    "%s is not offered for a whole-server (Node) profile; choose "
			    "one of: %s",
			    qi->id, list);
	*out = n;
	return 0;
}

static int parse_duration(const char *v, size_t len, unsigned int *out, char *err, size_t size)
{
	char q[QUOTE_MAX + 4];
	unsigned long x = 0;
	size_t i;

	for (i = 0; i < len && i < 4; i++) {
		if (v[i] < '0' || v[i] > '9')
			break;
		x = x * 10 + (unsigned long)(v[i] - '0');
	}
	if (len && i == len && v[0] != '0')
		for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++)
			if (x == durations[i]) {
				*out = durations[i];
				return 0;
			}
	return fail(err, size, "duration must be 10, 30 or 60 seconds, not '%s'",
		    quote(v, len, q, sizeof(q)));
}

int request_parse(const char *value, bool server, struct capture_request *out, char *err,
		  size_t size)
{
	struct capture_request r = { .duration_s = REQUEST_DEFAULT_DURATION };
	bool have_q = false, have_d = false;
	char q[QUOTE_MAX + 4], list[128];
	const char *p, *end;
	size_t total;
	int ret;

	if (!value || !out)
		return fail(err, size, "no request; " FORM);
	total = strnlen(value, REQUEST_MAX_LEN + 1);
	if (total > REQUEST_MAX_LEN)
		return fail(err, size, "the request is longer than %d bytes; " FORM,
			    REQUEST_MAX_LEN);
	p = value;
	end = value + total;
	for (;;) {
		const char *item = p, *comma = memchr(p, ',', (size_t)(end - p)), *eq, *k, *v;
		size_t ilen = (size_t)((comma ? comma : end) - item), klen, vlen;

		trim(&item, &ilen);
		if (ilen) {
			eq = memchr(item, '=', ilen);
			if (!eq)
				return fail(err, size, "'%s' is not key=value; " FORM,
					    quote(item, ilen, q, sizeof(q)));
			k = item;
			klen = (size_t)(eq - item);
			v = eq + 1;
			vlen = ilen - klen - 1;
			trim(&k, &klen);
			trim(&v, &vlen);
			if (klen == 8 && !memcmp(k, "question", 8)) {
				if (have_q)
					return fail(err, size, "question is given twice; " FORM);
				ret = parse_question(v, vlen, server, &r.question, err, size);
				if (ret)
					return ret;
				have_q = true;
			} else if (klen == 8 && !memcmp(k, "duration", 8)) {
				if (have_d)
					return fail(err, size, "duration is given twice; " FORM);
				ret = parse_duration(v, vlen, &r.duration_s, err, size);
				if (ret)
					return ret;
				have_d = true;
			} else {
				return fail(err, size,
					    "unknown key '%s' (known: question, duration); " FORM,
					    quote(k, klen, q, sizeof(q)));
			}
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!have_q)
		return fail(err, size, "question is missing; " FORM " (questions: %s)",
			    allowed_questions(server, list, sizeof(list)));
	if (r.question == Q_THREADS)
		r.duration_s = 5;
	*out = r;
	return 0;
}

const char *request_format(const struct capture_request *r, char *buf, size_t size)
{
	const struct question_info *qi = question_info(r->question);

	if (r->question == Q_THREADS) /* its duration is fixed: any allowed one reads the same */
		snprintf(buf, size, "question=threads");
	else
		snprintf(buf, size, "question=%s,duration=%u", qi ? qi->id : "?", r->duration_s);
	return buf;
}
