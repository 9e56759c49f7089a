// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_asprof.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define QUIET "loglevel=none"

static const char *const start_opts[JVM_ASPROF_MODE_COUNT] = {
	[JVM_ASPROF_ALLOC] = "start,event=alloc,alloc=" STR(JVM_ASPROF_ALLOC_BYTES) "," QUIET,
	[JVM_ASPROF_LIVE] = "start,event=alloc,alloc=" STR(JVM_ASPROF_ALLOC_BYTES) ",live," QUIET,
	[JVM_ASPROF_LOCK] = "start,event=lock,lock=" STR(JVM_ASPROF_LOCK_NS) "," QUIET,
};

static int put(size_t size, int n)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size ? -ENOSPC : n;
}

int jvm_asprof_start_options(enum jvm_asprof_mode mode, char *buf, size_t size)
{
	if ((unsigned)mode >= JVM_ASPROF_MODE_COUNT)
		return -EINVAL;
	if (!buf || !size)
		return -ENOSPC;
	return put(size, snprintf(buf, size, "%s", start_opts[mode]));
}

/* An absolute path of [A-Za-z0-9._/-]: nothing async-profiler splits on or expands. */
static bool path_ok(const char *s)
{
	return text_plain_path(s, 4096);
}

int jvm_asprof_stop_options(enum jvm_asprof_mode mode, const char *file, char *buf, size_t size)
{
	if ((unsigned)mode >= JVM_ASPROF_MODE_COUNT || !path_ok(file))
		return -EINVAL;
	if (!buf || !size)
		return -ENOSPC;
	/* the same for every mode: the counter and format are the dump's, the events the start's */
	return put(size, snprintf(buf, size, "stop,file=%s,collapsed,total," QUIET, file));
}

/* --- the answer to "load" ------------------------------------------------------------------ */

/* An optional '-' and 1..10 digits filling [s, s + n), in int range, into @v. */
static bool parse_int(const char *s, size_t n, int *v)
{
	bool neg = n && s[0] == '-';
	long long x = 0;
	size_t i = neg;

	if (i == n || n - i > 10)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	x = neg ? -x : x;
	if (x < INT_MIN || x > INT_MAX)
		return false;
	*v = (int)x;
	return true;
}

#define RC_PREFIX "return code: "

int jvm_asprof_parse_code(const char *body, size_t len, int *rc)
{
	const size_t plen = sizeof(RC_PREFIX) - 1;
	bool found = false, bad = false, first = true;
	const char *p = body, *end;
	int code = 0, v;

	if (!body && len)
		return -EINVAL;
	if (!len)
		return -ENOMSG;
	if (memchr(body, '\0', len))
		return -EILSEQ;
	end = body + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n >= plen && !memcmp(p, RC_PREFIX, plen)) {
			found = true;
			bad = !parse_int(p + plen, n - plen, &v);
			if (!bad)
				code = v;
		} else if (first && parse_int(p, n, &v)) { /* JDK 8: the bare number */
			found = true;
			code = v;
		}
		first = false;
		p += n + (nl != NULL);
	}
	if (!found)
		return -ENOMSG;
	if (bad)
		return -EBADMSG;
	*rc = code;
	return 0;
}

/* --- collapsed stacks ---------------------------------------------------------------------- */

struct parser {
	struct jvm_asprof_frame *frames; /* JVM_ASPROF_FRAMES_MAX */
	char *names;			 /* the names of one line, each NUL-terminated */
	size_t used;
	struct jvm_asprof_counts counts;
};

/* Digits only filling [s, s + n), saturating, at most JVM_ASPROF_VALUE_MAX. */
static bool parse_value(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return false;
		x = x > (UINT64_MAX - d) / 10 ? UINT64_MAX : x * 10 + d;
	}
	if (x > JVM_ASPROF_VALUE_MAX)
		return false;
	*v = x;
	return true;
}

/* "Class.method" without what only native (C, C++, library-qualified) names hold. */
static bool looks_java(const char *s, size_t n)
{
	const char *dot = memrchr(s, '.', n);
	size_t i;

	if (s[0] == '[' || !dot || dot == s || dot + 1 == s + n)
		return false;
	if (dot[1] >= '0' && dot[1] <= '9') /* "memcpy.part.0", "_dl_start.isra.0" */
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] == ' ' || s[i] == '(' || s[i] == '`' ||
		    (s[i] == ':' && i + 1 < n && s[i + 1] == ':'))
			return false;
	}
	return true;
}

/* The kind of the frame [s, s + *n) (@leaf: the stack's last), its suffix cut off @n. */
static enum jvm_asprof_kind classify(const char *s, size_t *n, bool leaf)
{
	size_t k = *n;

	if (k > 4 && s[k - 4] == '_' && s[k - 3] == '[' && s[k - 1] == ']') {
		switch (s[k - 2]) {
		case 'j':
		case '0':
		case '1':
			*n = k - 4;
			return JVM_ASPROF_JAVA;
		case 'i':
			*n = k - 4;
			return leaf ? JVM_ASPROF_CLASS : JVM_ASPROF_JAVA;
		case 'k':
			*n = k - 4;
			return leaf ? JVM_ASPROF_CLASS : JVM_ASPROF_KERNEL;
		}
	}
	return looks_java(s, k) ? JVM_ASPROF_JAVA : JVM_ASPROF_NATIVE;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The length of a hidden class's address at @s (@n bytes): "0x" and hex digits, followed by
 * '.' (what follows is the method), or for a class also by '[' or the end; else 0.
 */
static size_t hidden_addr(const char *s, size_t n, bool class)
{
	size_t i = 2;

	if (n < 3 || s[0] != '0' || s[1] != 'x' || !is_hex(s[2]))
		return 0;
	while (i < n && is_hex(s[i]))
		i++;
	if (i < n && s[i] == '.')
		return i;
	return class && (i == n || s[i] == '[') ? i : 0;
}

/* Dots the Java or class name @s (@n bytes) in place, dropping hidden-class addresses. */
static size_t dot_name(char *s, size_t n, bool class)
{
	size_t i, o = 0, skip;

	for (i = 0; i < n; i++) {
		char c = s[i];

		/* an address follows a class name: never the whole name */
		if (o && (c == '/' || c == '.' || c == '+') &&
		    (skip = hidden_addr(s + i + 1, n - i - 1, class))) {
			i += skip;
			continue;
		}
		s[o++] = c == '/' ? '.' : c;
	}
	s[o] = '\0';
	return o;
}

/* Adds the frame [s, s + n) as the parser's next (@leaf: the first of its stack). */
static void add_frame(struct parser *p, size_t nf, const char *s, size_t n, bool leaf)
{
	enum jvm_asprof_kind kind = classify(s, &n, leaf);
	char *dst = p->names + p->used;
	size_t w, room = (n < JVM_ASPROF_NAME_MAX ? n : JVM_ASPROF_NAME_MAX) + 1;

	if (n > JVM_ASPROF_NAME_MAX)
		p->counts.cut_names++;
	if (!text_utf8_is_clean(s, n))
		p->counts.fixed_names++;
	w = text_utf8_sanitize_copy(dst, room, s, n);
	if (kind == JVM_ASPROF_JAVA || kind == JVM_ASPROF_CLASS)
		w = dot_name(dst, w, kind == JVM_ASPROF_CLASS);
	p->frames[nf] = (struct jvm_asprof_frame){ .name = dst, .len = w, .kind = kind };
	p->used += w + 1;
}

/*
 * Parses the line [s, s + n) (no '\n') into the parser's frames, leaf first. Returns the
 * number of frames and the value in @value, or -EBADMSG (malformed).
 */
static int parse_line(struct parser *p, const char *s, size_t n, uint64_t *value)
{
	const char *sp, *semi;
	size_t end, start, nf = 0;

	if (n > JVM_ASPROF_LINE_MAX)
		return -EBADMSG;
	sp = memrchr(s, ' ', n);
	if (!sp || !parse_value(sp + 1, (size_t)(s + n - sp - 1), value))
		return -EBADMSG;
	end = (size_t)(sp - s);
	/* no empty frame anywhere, also in the part cut off */
	if (!end || s[0] == ';' || s[end - 1] == ';' || memmem(s, end, ";;", 2))
		return -EBADMSG;
	p->used = 0;
	for (;;) {
		semi = memrchr(s, ';', end);
		start = semi ? (size_t)(semi - s) + 1 : 0;

		add_frame(p, nf, s + start, end - start, nf == 0);
		nf++;
		if (!semi)
			break;
		if (nf == JVM_ASPROF_FRAMES_MAX) {
			p->counts.cut_stacks++;
			break;
		}
		end = (size_t)(semi - s);
	}
	return (int)nf;
}

static int parser_init(struct parser *p, size_t len)
{
	size_t line = len < JVM_ASPROF_LINE_MAX ? len : JVM_ASPROF_LINE_MAX;

	/* a line's names, each with its NUL, never take more than the line and one byte a frame */
	p->names = malloc(line + JVM_ASPROF_FRAMES_MAX + 1);
	p->frames = calloc(JVM_ASPROF_FRAMES_MAX, sizeof(*p->frames));
	if (!p->names || !p->frames) {
		free(p->names);
		free(p->frames);
		return -ENOMEM;
	}
	return 0;
}

/* Delivers the stacks of [s, end) to @fn. Returns their number or @fn's first nonzero value. */
static int parse_lines(struct parser *p, const char *s, const char *end, jvm_asprof_stack_fn_t fn,
		       void *ctx)
{
	int err, nf, delivered = 0;
	uint64_t value;

	while (s < end) {
		const char *line = s, *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - line);

		s += n + (nl != NULL);
		if (!n)
			continue;
		p->counts.lines++;
		nf = parse_line(p, line, n, &value);
		if (nf < 0) {
			p->counts.malformed++;
			continue;
		}
		err = fn(ctx, p->frames, (size_t)nf, value);
		if (err)
			return err;
		delivered++;
	}
	return delivered;
}

int jvm_asprof_parse_collapsed(const char *buf, size_t len, jvm_asprof_stack_fn_t fn, void *ctx,
			       struct jvm_asprof_counts *counts)
{
	struct parser p = { 0 };
	int ret;

	if (!fn || (!buf && len))
		return -EINVAL;
	if (len > INT_MAX)
		return -EFBIG;
	if (len && memchr(buf, '\0', len))
		return -EILSEQ;
	ret = len ? parser_init(&p, len) : 0;
	if (ret)
		return ret;
	if (len)
		ret = parse_lines(&p, buf, buf + len, fn, ctx);
	if (ret >= 0 && counts)
		*counts = p.counts;
	free(p.names);
	free(p.frames);
	return ret;
}
