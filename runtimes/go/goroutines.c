// SPDX-License-Identifier: Apache-2.0
#include "runtimes/go/goroutines.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

/* The public result and the storage its pointers lead into. */
struct goroutines_priv {
	struct go_goroutines pub;
	char *text;			/* the parsed copy of the input; strings point into it */
	struct goroutine_frame *frames; /* every goroutine's frames, one after the other */
	size_t nframes, frames_cap;
	size_t g_cap, ff_cap;
	size_t *first_frame; /* per goroutine: its first frame in frames */
};

struct parser {
	struct goroutines_priv *p;
	struct go_goroutine *cur; /* NULL outside a goroutine or in a dropped one */
	bool in_block;		  /* after a header, before the blank line */
	bool in_ancestor;	  /* after "[originating from goroutine N]:" */
	bool want_created_file;	  /* after "created by": its file line follows */
	char *pending;		  /* a function line whose file line has not come yet */
};

#define PREFIX(s, lit) (!strncmp((s), (lit), sizeof(lit) - 1))

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exactly the @n (1..@max_digits) decimal digits at @s; no overflow of uint64_t. */
static int parse_u64(const char *s, size_t n, size_t max_digits, uint64_t *out)
{
	const char *end = s;
	uint64_t v;

	if (!n || n > max_digits || parse_dec_u64(&end, UINT64_MAX, &v) || (size_t)(end - s) != n)
		return -EINVAL;
	*out = v;
	return 0;
}

static size_t count_digits(const char *s)
{
	size_t n = 0;

	while (is_digit(s[n]))
		n++;
	return n;
}

static bool has_ctrl(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	}
	return false;
}

int go_goroutines_strip_args(char *line, size_t len)
{
	size_t i, k, depth = 0;

	if (!line || len < 3 || line[len - 1] != ')')
		return -EINVAL;
	for (i = len; i-- > 0;) {
		if (line[i] == ')') {
			depth++;
		} else if (line[i] == '(') {
			if (--depth == 0)
				break;
		}
	}
	if (depth || i == 0 || line[i - 1] == ' ')
		return -EINVAL;
	/* The name's own parentheses ("main.(*T).run") must balance. */
	for (k = 0; k < i; k++) {
		if (line[k] == '(')
			depth++;
		else if (line[k] == ')' && !depth--)
			return -EINVAL;
	}
	if (depth)
		return -EINVAL;
	line[i] = '\0';
	return (int)i;
}

/*
 * "goroutine 6 [chan receive, 2 minutes, locked to thread]:" (optionally "gp=.. m=.." before
 * the bracket; @line is NUL-terminated at @len). Checks everything first and only then cuts
 * the state in place, so a line that is not a header is left as it was.
 */
static int parse_header(char *line, size_t len, struct go_goroutine *g)
{
	char *s, *open, *end, *part, *comma;
	uint64_t id, v;
	size_t n;

	if (!PREFIX(line, "goroutine ") || len < 15 || line[len - 1] != ':' ||
	    line[len - 2] != ']' || has_ctrl(line, len))
		return -EINVAL;
	s = line + 10;
	n = count_digits(s);
	if (parse_u64(s, n, 20, &id) || s[n] != ' ')
		return -EINVAL;
	open = strchr(s + n, '[');
	end = line + len - 2;
	if (!open || open + 1 >= end || open[-1] != ' ' || memchr(s + n, ']', open - (s + n)) ||
	    memchr(open + 1, '[', end - open - 1) || memchr(open + 1, ']', end - open - 1) ||
	    (open[1] == ',' && open[2] == ' '))
		return -EINVAL;

	*end = '\0';
	g->id = id;
	g->state = open + 1;
	g->wait_minutes = -1;
	comma = strstr(open + 1, ", ");
	if (comma) {
		*comma = '\0';
		for (part = comma + 2; part; part = comma ? comma + 2 : NULL) {
			comma = strstr(part, ", ");
			if (comma)
				*comma = '\0';
			n = count_digits(part);
			if (n && !strcmp(part + n, " minutes") && !parse_u64(part, n, 9, &v))
				g->wait_minutes = (int32_t)v;
			else if (!strcmp(part, "locked to thread"))
				g->locked_to_thread = true;
		}
	}
	n = strlen(g->state);
	if (n > 7 && !strcmp(g->state + n - 7, " (scan)"))
		open[1 + n - 7] = '\0';
	return 0;
}

/* "\t/src/x.go:20 +0x30" (the tab already skipped): cuts the file in place. */
static int parse_file_line(char *s, size_t len, const char **file, uint32_t *line)
{
	size_t i, n;
	uint64_t v;

	for (i = len; i-- > 0;) {
		if (s[i] != ':')
			continue;
		n = count_digits(s + i + 1);
		if (n && (s[i + 1 + n] == '\0' || s[i + 1 + n] == ' ') &&
		    !parse_u64(s + i + 1, n, 10, &v) && v <= UINT32_MAX && i > 0) {
			s[i] = '\0';
			*file = s;
			*line = (uint32_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

static int add_goroutine(struct parser *ps, const struct go_goroutine *g)
{
	struct goroutines_priv *p = ps->p;
	int err;

	if (p->pub.n >= GO_GOROUTINES_MAX) {
		p->pub.goroutines_dropped++;
		ps->cur = NULL;
		return 0;
	}
	err = array_ensure((void **)&p->pub.g, &p->g_cap, sizeof(*p->pub.g), p->pub.n + 1);
	if (err)
		return err;
	err = array_ensure((void **)&p->first_frame, &p->ff_cap, sizeof(*p->first_frame),
			   p->pub.n + 1);
	if (err)
		return err;
	p->first_frame[p->pub.n] = p->nframes;
	p->pub.g[p->pub.n] = *g;
	ps->cur = &p->pub.g[p->pub.n++];
	return 0;
}

static int add_frame(struct parser *ps, const char *func, const char *file, uint32_t line)
{
	struct goroutines_priv *p = ps->p;
	struct go_goroutine *g = ps->cur;
	int err;

	if (!g)
		return 0;
	if (g->nframes >= GO_GOROUTINE_FRAMES_MAX) {
		if (g->frames_dropped < UINT32_MAX)
			g->frames_dropped++;
		return 0;
	}
	err = array_ensure((void **)&p->frames, &p->frames_cap, sizeof(*p->frames), p->nframes + 1);
	if (err)
		return err;
	p->frames[p->nframes++] = (struct goroutine_frame){ .func = func,
							    .file = file,
							    .line = line };
	g->nframes++;
	return 0;
}

/* A function line that got no file line: kept with an unknown file (a truncated dump). */
static int flush_pending(struct parser *ps)
{
	char *func = ps->pending;

	if (!func)
		return 0;
	ps->pending = NULL;
	return add_frame(ps, func, "", 0);
}

static void end_block(struct parser *ps)
{
	if (ps->pending)
		ps->p->pub.lines_skipped++; /* a function line without its file line */
	ps->cur = NULL;
	ps->in_block = false;
	ps->in_ancestor = false;
	ps->want_created_file = false;
	ps->pending = NULL;
}

static void parse_created_by(struct parser *ps, char *s)
{
	char *in = strstr(s, " in goroutine ");
	size_t n;
	uint64_t v;

	if (in) {
		n = count_digits(in + 14);
		if (n && in[14 + n] == '\0' && !parse_u64(in + 14, n, 20, &v)) {
			*in = '\0';
			if (ps->cur)
				ps->cur->created_in = v;
		}
	}
	if (!ps->cur)
		return; /* a goroutine past GO_GOROUTINES_MAX */
	if (*s && !has_ctrl(s, strlen(s)))
		ps->cur->created_by = s;
	else
		ps->p->pub.lines_skipped++;
}

/* "...additional frames elided..." or "...12 frames elided..." */
static bool parse_elided(struct parser *ps, const char *s, size_t len)
{
	size_t n;
	uint64_t v;

	if (len < 6 || !PREFIX(s, "...") || strcmp(s + len - 3, "..."))
		return false;
	if (ps->cur) {
		ps->cur->elided = true;
		n = count_digits(s + 3);
		if (n && PREFIX(s + 3 + n, " frames elided...") && !parse_u64(s + 3, n, 9, &v))
			ps->cur->frames_dropped += v > UINT32_MAX - ps->cur->frames_dropped ?
							   UINT32_MAX - ps->cur->frames_dropped :
							   (uint32_t)v;
	}
	return true;
}

static int parse_block_line(struct parser *ps, char *s, size_t len)
{
	struct goroutines_priv *p = ps->p;
	const char *file;
	uint32_t line;
	int n, err;

	if (ps->in_ancestor)
		return 0;
	if (s[0] == '\t') {
		if (ps->pending) {
			if (parse_file_line(s + 1, len - 1, &file, &line)) {
				p->pub.lines_skipped++;
				return flush_pending(ps);
			}
			err = add_frame(ps, ps->pending, file, line);
			ps->pending = NULL;
			return err;
		}
		if (ps->want_created_file)
			ps->want_created_file = false;
		else if (strcmp(s + 1, "goroutine running on other thread; stack unavailable"))
			p->pub.lines_skipped++;
		return 0;
	}
	/* A function line without its file line: malformed, dropped. */
	if (ps->pending) {
		ps->pending = NULL;
		p->pub.lines_skipped++;
	}
	ps->want_created_file = false;
	if (PREFIX(s, "created by ")) {
		parse_created_by(ps, s + 11);
		ps->want_created_file = true;
		return 0;
	}
	if (PREFIX(s, "[originating from goroutine ")) {
		ps->in_ancestor = true;
		return 0;
	}
	if (parse_elided(ps, s, len))
		return 0;
	n = has_ctrl(s, len) ? -EINVAL : go_goroutines_strip_args(s, len);
	if (n < 0) {
		p->pub.lines_skipped++;
		return 0;
	}
	ps->pending = s;
	return 0;
}

static int parse_line(struct parser *ps, char *s, size_t len)
{
	struct go_goroutine g = { 0 };

	if (!len) {
		end_block(ps);
		return 0;
	}
	if (PREFIX(s, "goroutine ") && !parse_header(s, len, &g)) {
		end_block(ps);
		ps->in_block = true;
		return add_goroutine(ps, &g);
	}
	if (!ps->in_block) {
		ps->p->pub.lines_skipped++;
		return 0;
	}
	return parse_block_line(ps, s, len);
}

void go_goroutines_free(struct go_goroutines *g)
{
	struct goroutines_priv *p = (struct goroutines_priv *)g;

	if (!p)
		return;
	free(p->text);
	free(p->frames);
	free(p->first_frame);
	free(p->pub.g);
	free(p);
}

/* The first non-blank line must be a header. */
static bool starts_as_dump(const char *text, size_t len)
{
	struct go_goroutine g = { 0 };
	char line[256];
	size_t i = 0, n;
	const char *nl;

	while (i < len && (text[i] == '\n' || text[i] == '\r' || text[i] == ' '))
		i++;
	nl = memchr(text + i, '\n', len - i);
	n = nl ? (size_t)(nl - (text + i)) : len - i;
	if (n && text[i + n - 1] == '\r')
		n--;
	if (n >= sizeof(line))
		return false;
	memcpy(line, text + i, n);
	line[n] = '\0';
	return !parse_header(line, n, &g);
}

int go_goroutines_parse(const char *text, size_t len, struct go_goroutines **out)
{
	struct goroutines_priv *p;
	struct parser ps = { 0 };
	size_t off = 0, n, i;
	char *s, *nl;
	int err;

	if (!text || !out)
		return -EINVAL;
	if (len > GO_GOROUTINES_TEXT_MAX)
		return -EFBIG;
	if (memchr(text, '\0', len) || !starts_as_dump(text, len))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->text = malloc(len + 1);
	if (!p->text) {
		err = -ENOMEM;
		goto err_free;
	}
	memcpy(p->text, text, len);
	p->text[len] = '\0';
	ps.p = p;
	while (off < len) {
		s = p->text + off;
		nl = memchr(s, '\n', len - off);
		n = nl ? (size_t)(nl - s) : len - off;
		off += n + (nl ? 1 : 0);
		s[n] = '\0';
		if (n && s[n - 1] == '\r')
			s[--n] = '\0';
		if (!nl && n)
			p->pub.truncated = true;
		err = parse_line(&ps, s, n);
		if (err)
			goto err_free;
	}
	if (ps.pending) {
		p->pub.truncated = true;
		err = flush_pending(&ps);
		if (err)
			goto err_free;
	}
	for (i = 0; i < p->pub.n; i++) {
		struct go_goroutine *g = &p->pub.g[i];

		g->frames = g->nframes ? p->frames + p->first_frame[i] : NULL;
		p->pub.frames_dropped += g->frames_dropped;
	}
	*out = &p->pub;
	return 0;

err_free:
	go_goroutines_free(&p->pub);
	return err;
}
