// SPDX-License-Identifier: Apache-2.0
#include "runtimes/node/node_perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/* The kinds of JavaScript code, as V8's code event logger tags them. */
static const char *const js_kinds[] = { "JS:",	   "Function:", "LazyCompile:",
					"Script:", "Eval:",	"InterpretedFunction:" };

static size_t kind_len(const char *name)
{
	size_t i, n;

	for (i = 0; i < sizeof(js_kinds) / sizeof(js_kinds[0]); i++) {
		n = strlen(js_kinds[i]);
		if (!strncmp(name, js_kinds[i], n))
			return n;
	}
	return 0;
}

/* All digits, at least one. */
static bool digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

/* The last ':' in the @n bytes at @s, or NULL. */
static const char *last_colon(const char *s, size_t n)
{
	return memrchr(s, ':', n);
}

/*
 * Splits "<script>:<line>[:<column>]" at @loc (@n bytes): the script's length and the line.
 * Returns false when it does not end in a line number.
 */
static bool split_location(const char *loc, size_t n, size_t *script_len, uint32_t *line)
{
	const char *c2 = last_colon(loc, n), *c1;
	unsigned long v;

	if (!c2 || !digits(c2 + 1, (size_t)(loc + n - c2 - 1)))
		return false;
	c1 = last_colon(loc, (size_t)(c2 - loc));
	if (c1 && digits(c1 + 1, (size_t)(c2 - c1 - 1)))
		c2 = c1; /* the line, then the column */
	v = strtoul(c2 + 1, NULL, 10);
	*script_len = (size_t)(c2 - loc);
	*line = v > UINT32_MAX ? 0 : (uint32_t)v;
	return *script_len > 0;
}

/* True when @s starts like a script: a path, or a URL's scheme ("node:", "file:"). */
static bool script_start(const char *s)
{
	const char *p = s;

	if (*s == '/')
		return true;
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (*p >= '0' && *p <= '9' && p > s))
		p++;
	return p > s && *p == ':';
}

/* The space between the name and the script: the first one followed by what starts like a
 * script (a name may hold spaces, "get x", and so may a path), else the last one. */
static const char *name_end(const char *rest, size_t n)
{
	const char *sp;

	for (sp = memchr(rest, ' ', n); sp; sp = memchr(sp + 1, ' ', (size_t)(rest + n - sp - 1)))
		if (script_start(sp + 1))
			return sp;
	return memrchr(rest, ' ', n);
}

int node_perfmap_parse(const char *name, struct node_pm_name *out)
{
	size_t k, n, script_len = 0;
	const char *rest, *sp;
	uint32_t line = 0;

	if (!name || !out)
		return -EINVAL;
	k = kind_len(name);
	if (!k)
		return -ENOENT;
	rest = name + k;
	if (*rest == '~' || *rest == '^' || *rest == '+' || *rest == '*')
		rest++;
	n = strlen(rest);
	sp = name_end(rest, n);
	memset(out, 0, sizeof(*out));
	if (sp && (split_location(sp + 1, (size_t)(rest + n - sp - 1), &script_len, &line) ||
		   (script_start(sp + 1) && (script_len = (size_t)(rest + n - sp - 1))))) {
		text_utf8_sanitize_copy(out->script, sizeof(out->script), sp + 1, script_len);
		out->line = line;
		n = (size_t)(sp - rest);
	}
	if (n)
		text_utf8_sanitize_copy(out->function, sizeof(out->function), rest, n);
	if (!out->function[0])
		strcpy(out->function, "(anonymous)");
	return 0;
}
