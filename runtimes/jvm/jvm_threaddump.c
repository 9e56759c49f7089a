// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_threaddump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/* Frames allocated for a thread at first, doubled up to JVM_TD_MAX_FRAMES. */
#define FRAMES_FIRST 8
#define THREADS_FIRST 64

/* A run of bytes of the text: never NUL-terminated, may hold NULs. */
struct span {
	const char *p;
	size_t n;
};

struct parser {
	struct jvm_threaddump *td;
	size_t cap;		   /* threads allocated */
	struct jvm_td_thread *cur; /* the thread whose lines these are, NULL between threads */
	size_t frames;		   /* frames kept in all threads (JVM_TD_MAX_TOTAL_FRAMES) */
};

static bool starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && !memcmp(s.p, lit, n);
}

static struct span skip(struct span s, size_t n)
{
	return (struct span){ s.p + n, s.n - n };
}

static struct span lstrip(struct span s)
{
	while (s.n && (s.p[0] == ' ' || s.p[0] == '\t'))
		s = skip(s, 1);
	return s;
}

/* The index of the last @c in @s, or -1. */
static long last_of(struct span s, char c)
{
	size_t i;

	for (i = s.n; i > 0; i--)
		if (s.p[i - 1] == c)
			return (long)(i - 1);
	return -1;
}

static bool all_digits(struct span s)
{
	size_t i;

	for (i = 0; i < s.n; i++)
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
	return s.n > 0;
}

/* Decimal, or hex after "0x"; 0 when empty, not all digits, or over 32 bits. */
static uint32_t parse_u32(struct span s)
{
	unsigned base = 10, d;
	uint64_t v = 0;
	size_t i;

	if (starts(s, "0x") || starts(s, "0X")) {
		base = 16;
		s = skip(s, 2);
	}
	if (!s.n)
		return 0;
	for (i = 0; i < s.n; i++) {
		char c = s.p[i];

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return 0;
		v = v * base + d;
		if (v > UINT32_MAX)
			return 0;
	}
	return (uint32_t)v;
}

/* Appends @s, made valid UTF-8, to the string in @dst (@size bytes) at *@at. */
static void put(char *dst, size_t size, size_t *at, struct span s)
{
	if (*at + 1 >= size)
		return;
	*at += text_utf8_sanitize_copy(dst + *at, size - *at, s.p, s.n);
}

static void put_str(char *dst, size_t size, struct span s)
{
	size_t at = 0;

	dst[0] = '\0';
	put(dst, size, &at, s);
}

/* --- thread headers ------------------------------------------------------------------ */

/* The index of the quote that ends the name in the header @l (l.p[0] == '"'), or 0. */
static size_t name_end(struct span l)
{
	static const char *const after[] = { " #", " daemon ", " prio=", " os_prio=" };
	size_t i, k;

	for (i = l.n - 1; i > 0; i--) {
		if (l.p[i] != '"')
			continue;
		for (k = 0; k < sizeof(after) / sizeof(after[0]); k++)
			if (starts(skip(l, i + 1), after[k]))
				return i;
	}
	return 0;
}

/* Reads the tokens after the name, up to nid=: "#N", "[N]", "daemon", ..., "nid=0x21f6". */
static void header_fields(struct jvm_td_thread *t, struct span rest)
{
	bool first = true;

	while ((rest = lstrip(rest)).n) {
		const char *sp = memchr(rest.p, ' ', rest.n);
		struct span tok = { rest.p, sp ? (size_t)(sp - rest.p) : rest.n };

		if (first && tok.n > 1 && tok.p[0] == '#')
			t->java = all_digits(skip(tok, 1));
		else if (tok.n == 6 && !memcmp(tok.p, "daemon", 6))
			t->daemon = true;
		else if (starts(tok, "nid=")) {
			t->nid = parse_u32(skip(tok, 4));
			return;
		}
		first = false;
		rest = skip(rest, tok.n);
	}
}

static int thread_new(struct parser *ps, struct span l)
{
	struct jvm_threaddump *td = ps->td;
	size_t end = name_end(l);
	struct jvm_td_thread *t;

	ps->cur = NULL;
	if (!end)
		return 0;
	if (td->nthreads == JVM_TD_MAX_THREADS) {
		td->truncated = true;
		return 1;
	}
	if (td->nthreads == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : THREADS_FIRST;
		void *p = realloc(td->threads, cap * sizeof(*td->threads));

		if (!p)
			return -ENOMEM;
		td->threads = p;
		ps->cap = cap;
	}
	t = &td->threads[td->nthreads++];
	memset(t, 0, sizeof(*t));
	put_str(t->name, sizeof(t->name), (struct span){ l.p + 1, end - 1 });
	header_fields(t, skip(l, end + 1));
	ps->cur = t;
	return 0;
}

/* --- lines inside a thread ------------------------------------------------------------ */

/* "java.lang.Thread.State: BLOCKED (on object monitor)" (@l stripped). */
static void state_line(struct jvm_td_thread *t, struct span l)
{
	const char *sp;
	size_t n;

	if (t->state[0])
		return;
	l = skip(l, strlen("java.lang.Thread.State:"));
	l = lstrip(l);
	sp = memchr(l.p, ' ', l.n);
	n = sp ? (size_t)(sp - l.p) : l.n;
	put_str(t->state, sizeof(t->state), (struct span){ l.p, n });
	l = skip(l, n);
	if (starts(l, " (") && l.p[l.n - 1] == ')')
		put_str(t->state_detail, sizeof(t->state_detail),
			(struct span){ l.p + 2, l.n - 3 });
}

/* The source of a frame: "File.java:54", "java.base@17.0.15/Thread.java:840", "Native Method". */
static void frame_source(struct jvm_td_frame *f, struct span src)
{
	long i = last_of(src, '/');

	if (i >= 0)
		src = skip(src, (size_t)i + 1);
	if (src.n == 13 && !memcmp(src.p, "Native Method", 13)) {
		f->native = true;
		return;
	}
	if (src.n == 14 && !memcmp(src.p, "Unknown Source", 14))
		return;
	i = last_of(src, ':');
	if (i >= 0 && all_digits(skip(src, (size_t)i + 1))) {
		f->line = parse_u32(skip(src, (size_t)i + 1));
		src.n = (size_t)i;
	}
	put_str(f->file, sizeof(f->file), src);
}

static int grow_frames(struct jvm_td_thread *t)
{
	size_t cap = t->nframes ? t->nframes * 2 : FRAMES_FIRST;
	void *p;

	if (cap > JVM_TD_MAX_FRAMES)
		cap = JVM_TD_MAX_FRAMES;
	p = realloc(t->frames, cap * sizeof(*t->frames));
	if (!p)
		return -ENOMEM;
	t->frames = p;
	return 0;
}

/* "at pkg.Cls.method(File.java:54)" (@l stripped, "at " gone). */
static int frame_line(struct parser *ps, struct span l)
{
	struct jvm_td_thread *t = ps->cur;
	struct jvm_td_frame *f;
	long open = last_of(l, '(');
	int err;

	t->nframes_total++;
	if (t->nframes == JVM_TD_MAX_FRAMES)
		return 0;
	/* the array holds nframes rounded up to FRAMES_FIRST times a power of 2 */
	if (t->nframes == 0 || (t->nframes >= FRAMES_FIRST && !(t->nframes & (t->nframes - 1)))) {
		err = grow_frames(t);
		if (err)
			return err;
	}
	f = &t->frames[t->nframes++];
	ps->frames++;
	memset(f, 0, sizeof(*f));
	if (open < 0 || l.p[l.n - 1] != ')') {
		put_str(f->method, sizeof(f->method), l);
		return 0;
	}
	put_str(f->method, sizeof(f->method), (struct span){ l.p, (size_t)open });
	frame_source(f, (struct span){ l.p + open + 1, l.n - (size_t)open - 2 });
	return 0;
}

/* "<0x...> (a java.lang.Object)" into "java.lang.Object <0x...>"; nothing without "<...>". */
static void lock_ref(char *dst, size_t size, struct span s)
{
	const char *gt;
	struct span ref, cls;
	size_t at = 0;

	s = lstrip(s);
	gt = s.n && s.p[0] == '<' ? memchr(s.p, '>', s.n) : NULL;
	if (!gt)
		return;
	ref = (struct span){ s.p, (size_t)(gt - s.p) + 1 };
	s = skip(s, ref.n);
	if (starts(s, " (a ") && s.n > 5 && s.p[s.n - 1] == ')') {
		cls = (struct span){ s.p + 4, s.n - 5 };
		put(dst, size, &at, cls);
		put(dst, size, &at, (struct span){ " ", 1 });
	}
	put(dst, size, &at, ref);
}

/* "- waiting to lock <0x...> (a X)", "- locked <0x...> (a X)", ... (@l stripped, "- " gone). */
static void lock_line(struct jvm_td_thread *t, struct span l)
{
	static const char *const waits[] = { "waiting to lock ", "waiting on ",
					     "parking to wait for ",
					     "waiting to re-lock in wait() " };
	size_t k;

	if (starts(l, "locked ")) {
		if (!t->holds[0])
			lock_ref(t->holds, sizeof(t->holds), skip(l, strlen("locked ")));
		return;
	}
	for (k = 0; k < sizeof(waits) / sizeof(waits[0]); k++)
		if (starts(l, waits[k]) && !t->waiting_for[0]) {
			lock_ref(t->waiting_for, sizeof(t->waiting_for), skip(l, strlen(waits[k])));
			return;
		}
}

/* One line, without its '\n'. Returns 0, 1 (stop: the thread cap) or -ENOMEM. */
static int parse_line(struct parser *ps, struct span l)
{
	if (l.n && l.p[l.n - 1] == '\r')
		l.n--;
	if (l.n > JVM_TD_LINE_MAX) {
		ps->cur = NULL;
		return 0;
	}
	if (l.n && l.p[0] == '"')
		return thread_new(ps, l);
	if (!l.n || (l.p[0] != ' ' && l.p[0] != '\t')) {
		ps->cur = NULL;
		return 0;
	}
	if (!ps->cur || !ps->cur->java)
		return 0;
	l = lstrip(l);
	if (starts(l, "java.lang.Thread.State:"))
		state_line(ps->cur, l);
	else if (starts(l, "at ") && ps->frames >= JVM_TD_MAX_TOTAL_FRAMES)
		ps->cur->nframes_total++; /* counted, not kept: the dump's memory is bounded */
	else if (starts(l, "at "))
		return frame_line(ps, lstrip(skip(l, 3)));
	else if (starts(l, "- "))
		lock_line(ps->cur, skip(l, 2));
	return 0;
}

int jvm_threaddump_parse(const char *text, size_t len, struct jvm_threaddump **out)
{
	struct parser ps = { 0 };
	const char *p = text, *end = text + len;
	int err = 0;

	if (!out)
		return -EINVAL;
	if (!text || !len)
		return -ENODATA;
	if (len > JVM_TD_TEXT_MAX)
		return -EFBIG;
	ps.td = calloc(1, sizeof(*ps.td));
	if (!ps.td)
		return -ENOMEM;
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		err = parse_line(&ps, (struct span){ p, n });
		if (!nl)
			break;
		p = nl + 1;
	}
	if (err < 0)
		goto err_free;
	err = -ENODATA;
	if (!ps.td->nthreads)
		goto err_free;
	*out = ps.td;
	return 0;

err_free:
	jvm_threaddump__free(ps.td);
	return err;
}

void jvm_threaddump__free(struct jvm_threaddump *td)
{
	size_t i;

	if (!td)
		return;
	for (i = 0; i < td->nthreads; i++)
		free(td->threads[i].frames);
	free(td->threads);
	free(td);
}

const struct jvm_td_thread *jvm_threaddump__find(const struct jvm_threaddump *td, uint32_t nid)
{
	size_t i;

	if (!td || !nid)
		return NULL;
	for (i = 0; i < td->nthreads; i++)
		if (td->threads[i].nid == nid)
			return &td->threads[i];
	return NULL;
}
