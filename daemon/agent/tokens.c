// SPDX-License-Identifier: Apache-2.0
/*
 * tokens: libyaml's event API read by a fixed descent (mapping -> `tokens` -> sequence ->
 * mappings of scalars), refusing any other node at its line; anchors, aliases and tags are
 * refused at the event that carries them.
 */
#include "daemon/agent/tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/fileio.h"
#include "base/sha256.h"
#include "base/text.h"

struct token_entry {
	char name[TOKENS_NAME_MAX + 1];
	enum token_role role;
	uint8_t digest[SHA256_DIGEST_LEN];
};

struct tokens {
	struct token_entry *v;
	size_t n;
};

struct tp {
	yaml_parser_t yp;
	yaml_event_t ev;
	bool have_ev;
	const char *file;
	char *err;
	size_t errsize;
};

static const char *const role_names[] = { "none", "viewer", "operator", "admin" };

const char *token_role_name(enum token_role r)
{
	return (unsigned)r <= TOKEN_ROLE_ADMIN ? role_names[r] : "none";
}

int token_role_parse(const char *s)
{
	int i;

	for (i = TOKEN_ROLE_VIEWER; i <= TOKEN_ROLE_ADMIN; i++)
		if (s && !strcmp(s, role_names[i]))
			return i;
	return -EINVAL;
}

bool token_role_allows(enum token_role have, enum token_role need)
{
	return have >= need && have > TOKEN_ROLE_NONE;
}

__attribute__((format(printf, 3, 4))) static int fail(struct tp *p, size_t line, const char *fmt,
						      ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = text_file_error(p->err, p->errsize, p->file, line, fmt, ap);
	va_end(ap);
	return ret;
}

static size_t ev_line(const yaml_event_t *e)
{
	return e->start_mark.line + 1;
}

/* Reads the next event into p->ev. */
static int next(struct tp *p)
{
	yaml_event_t *e = &p->ev;

	if (p->have_ev) {
		yaml_event_delete(e);
		p->have_ev = false;
	}
	if (!yaml_parser_parse(&p->yp, e)) {
		if (p->yp.error == YAML_MEMORY_ERROR)
			return -ENOMEM;
		return fail(p, p->yp.problem_mark.line + 1, "invalid YAML: %s",
			    p->yp.problem ? p->yp.problem : "syntax error");
	}
	p->have_ev = true;
	switch (e->type) {
	case YAML_ALIAS_EVENT:
		return fail(p, ev_line(e), "aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if (e->data.scalar.anchor)
			return fail(p, ev_line(e), "anchors are not allowed");
		if (e->data.scalar.tag)
			return fail(p, ev_line(e), "tags are not allowed");
		break;
	case YAML_SEQUENCE_START_EVENT:
		if (e->data.sequence_start.anchor || e->data.sequence_start.tag)
			return fail(p, ev_line(e), "anchors and tags are not allowed");
		break;
	case YAML_MAPPING_START_EVENT:
		if (e->data.mapping_start.anchor || e->data.mapping_start.tag)
			return fail(p, ev_line(e), "anchors and tags are not allowed");
		break;
	default:
		break;
	}
	return 0;
}

static const char *scalar(const struct tp *p)
{
	return (const char *)p->ev.data.scalar.value;
}

static bool scalar_is_null(const struct tp *p)
{
	const char *s = scalar(p);

	return p->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!s[0] || !strcmp(s, "~") || !strcmp(s, "null"));
}

/* A scalar value of key @key in an entry: no NUL inside, at most @max bytes. */
static int take_value(struct tp *p, const char *key, char *dst, size_t max)
{
	size_t len, i;

	if (p->ev.type != YAML_SCALAR_EVENT)
		return fail(p, ev_line(&p->ev), "'%s' must be a string", key);
	len = p->ev.data.scalar.length;
	if (memchr(scalar(p), '\0', len))
		return fail(p, ev_line(&p->ev), "'%s' must not contain NUL bytes", key);
	if (len > max)
		return fail(p, ev_line(&p->ev), "'%s' is too long: %zu bytes, the maximum is %zu",
			    key, len, max);
	for (i = 0; i < len; i++)
		if ((unsigned char)scalar(p)[i] < 0x20 || scalar(p)[i] == 0x7f)
			return fail(p, ev_line(&p->ev), "'%s' must not contain control characters",
				    key);
	memcpy(dst, scalar(p), len);
	dst[len] = '\0';
	return 0;
}

/* One entry of 'tokens' as read, before it is checked. */
struct draft {
	char name[TOKENS_NAME_MAX + 1], role[16], token[TOKENS_MAX_LEN + 1];
	bool seen_name, seen_token, seen_role;
};

/* Reads one key and its value into @dr. */
static int parse_entry_key(struct tp *p, struct draft *dr)
{
	char key[16];
	bool *seen;
	size_t tlen;
	int err;

	if (p->ev.type != YAML_SCALAR_EVENT)
		return fail(p, ev_line(&p->ev), "keys must be strings");
	snprintf(key, sizeof(key), "%.*s", (int)p->ev.data.scalar.length, scalar(p));
	if (!strcmp(scalar(p), "name"))
		seen = &dr->seen_name;
	else if (!strcmp(scalar(p), "token"))
		seen = &dr->seen_token;
	else if (!strcmp(scalar(p), "role"))
		seen = &dr->seen_role;
	else
		return fail(p, ev_line(&p->ev), "unknown key '%.40s' (known: name, token, role)",
			    scalar(p));
	if (*seen)
		return fail(p, ev_line(&p->ev), "duplicate key '%s'", key);
	*seen = true;
	err = next(p);
	if (err)
		return err;
	if (seen == &dr->seen_name)
		return take_value(p, "name", dr->name, TOKENS_NAME_MAX);
	if (seen == &dr->seen_role)
		return take_value(p, "role", dr->role, sizeof(dr->role) - 1);
	err = take_value(p, "token", dr->token, TOKENS_MAX_LEN);
	tlen = strlen(dr->token);
	if (!err && tlen < TOKENS_MIN_LEN)
		err = fail(p, ev_line(&p->ev),
			   "the token of this entry is too short: %zu characters, the minimum is %d",
			   tlen, TOKENS_MIN_LEN);
	return err;
}

/* Checks the complete entry @dr (read at @line) against @t and adds it. */
static int add_entry(struct tp *p, size_t line, const struct draft *dr, struct tokens *t)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct token_entry *e;
	size_t i;
	int r;

	if (!dr->seen_name || !dr->seen_token || !dr->seen_role || !dr->name[0])
		return fail(p, line, "entry without %s (each entry needs name, token and role)",
			    !dr->seen_name || !dr->name[0] ? "a name" :
			    !dr->seen_token		   ? "a token" :
							     "a role");
	r = token_role_parse(dr->role);
	if (r < 0)
		return fail(p, line,
			    "entry '%s': unknown role '%.20s' (known: viewer, operator, admin)",
			    dr->name, dr->role);
	sha256(dr->token, strlen(dr->token), digest);
	for (i = 0; i < t->n; i++) {
		if (!strcmp(t->v[i].name, dr->name))
			return fail(p, line, "duplicate name '%s'", dr->name);
		if (!memcmp(t->v[i].digest, digest, sizeof(digest)))
			return fail(p, line, "entry '%s' has the same token as '%s'", dr->name,
				    t->v[i].name);
	}
	if (t->n >= TOKENS_MAX)
		return fail(p, line, "too many tokens: the maximum is %d", TOKENS_MAX);
	e = &t->v[t->n++];
	snprintf(e->name, sizeof(e->name), "%s", dr->name);
	e->role = r;
	memcpy(e->digest, digest, sizeof(digest));
	explicit_bzero(digest, sizeof(digest));
	return 0;
}

static int parse_entry(struct tp *p, struct tokens *t)
{
	size_t line = ev_line(&p->ev);
	struct draft dr = { 0 };
	int err;

	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return fail(p, line,
			    "each entry of 'tokens' must be a mapping with name, token "
			    "and role");
	for (;;) {
		err = next(p);
		if (err || p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		err = parse_entry_key(p, &dr);
		if (err)
			break;
	}
	if (!err)
		err = add_entry(p, line, &dr, t);
	/* the secret leaves no copy on the stack */
	explicit_bzero(dr.token, sizeof(dr.token));
	return err;
}

static int parse_doc(struct tp *p, struct tokens *t)
{
	bool seen = false;
	int err;

	if ((err = next(p)) || (err = next(p))) /* stream start, document start */
		return err;
	if (p->ev.type == YAML_STREAM_END_EVENT)
		return fail(p, 0, "empty file: expected a mapping with the key 'tokens'");
	if ((err = next(p)))
		return err;
	if (p->ev.type != YAML_MAPPING_START_EVENT)
		return fail(p, ev_line(&p->ev), "expected a mapping with the key 'tokens'");
	for (;;) {
		if ((err = next(p)))
			return err;
		if (p->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (p->ev.type != YAML_SCALAR_EVENT || strcmp(scalar(p), "tokens"))
			return fail(p, ev_line(&p->ev), "unknown key '%.40s' (known: tokens)",
				    p->ev.type == YAML_SCALAR_EVENT ? scalar(p) : "?");
		if (seen)
			return fail(p, ev_line(&p->ev), "duplicate key 'tokens'");
		seen = true;
		if ((err = next(p)))
			return err;
		if (p->ev.type == YAML_SCALAR_EVENT && scalar_is_null(p))
			continue;
		if (p->ev.type != YAML_SEQUENCE_START_EVENT)
			return fail(p, ev_line(&p->ev), "'tokens' must be a list");
		for (;;) {
			if ((err = next(p)))
				return err;
			if (p->ev.type == YAML_SEQUENCE_END_EVENT)
				break;
			if ((err = parse_entry(p, t)))
				return err;
		}
	}
	if (!seen)
		return fail(p, ev_line(&p->ev), "missing key 'tokens'");
	if ((err = next(p))) /* document end */
		return err;
	if ((err = next(p)))
		return err;
	if (p->ev.type != YAML_STREAM_END_EVENT)
		return fail(p, ev_line(&p->ev), "only one YAML document is allowed");
	return 0;
}

int tokens__parse(const char *text, size_t len, const char *filename, struct tokens **out,
		  char *err, size_t errsize)
{
	struct tp p = { .file = filename ? filename : "<tokens>", .err = err, .errsize = errsize };
	struct tokens *t;
	int ret;

	if (err && errsize)
		err[0] = '\0';
	if (memchr(text, '\0', len))
		return fail(&p, 0, "NUL bytes are not allowed");
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->v = calloc(TOKENS_MAX, sizeof(*t->v));
	if (!t->v || !yaml_parser_initialize(&p.yp)) {
		tokens__free(t);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)text, len);
	ret = parse_doc(&p, t);
	if (p.have_ev)
		yaml_event_delete(&p.ev);
	yaml_parser_delete(&p.yp);
	if (ret) {
		tokens__free(t);
		if (ret == -ENOMEM)
			fail(&p, 0, "out of memory");
		return ret;
	}
	*out = t;
	return 0;
}

int tokens__load(const char *path, struct tokens **out, char *err, size_t errsize)
{
	char *text;
	size_t len;
	int ret;

	ret = read_file_bounded(AT_FDCWD, path, TOKENS_MAX_BYTES, &text, &len);
	if (ret) {
		if (err && errsize)
			snprintf(err, errsize, "%s: %s", path,
				 ret == -EFBIG ? "file too large" : strerror(-ret));
		return ret;
	}
	ret = tokens__parse(text, len, path, out, err, errsize);
	explicit_bzero(text, len);
	free(text);
	return ret;
}

void tokens__free(struct tokens *t)
{
	if (!t)
		return;
	if (t->v)
		explicit_bzero(t->v, TOKENS_MAX * sizeof(*t->v));
	free(t->v);
	free(t);
}

size_t tokens__count(const struct tokens *t)
{
	return t ? t->n : 0;
}

enum token_role tokens__lookup(const struct tokens *t, const char *token, size_t len, char *name,
			       size_t size)
{
	uint8_t digest[SHA256_DIGEST_LEN], diff;
	size_t i, k, hit = 0;
	unsigned int found = 0;

	if (!t || !token || len < TOKENS_MIN_LEN || len > TOKENS_MAX_LEN)
		return TOKEN_ROLE_NONE;
	sha256(token, len, digest);
	for (i = 0; i < t->n; i++) {
		unsigned int eq;

		diff = 0;
		for (k = 0; k < SHA256_DIGEST_LEN; k++)
			diff |= digest[k] ^ t->v[i].digest[k];
		/* eq = 1 when diff == 0, without a branch on it */
		eq = 1 & (((unsigned int)diff - 1) >> 8);
		hit |= (size_t)(-(long)eq) & i;
		found |= eq;
	}
	explicit_bzero(digest, sizeof(digest));
	if (!found)
		return TOKEN_ROLE_NONE;
	if (name && size)
		snprintf(name, size, "%s", t->v[hit].name);
	return t->v[hit].role;
}
