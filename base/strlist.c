// SPDX-License-Identifier: Apache-2.0
#include "base/strlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strlist_addf(struct strlist *l, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (l->n >= STRLIST_MAX)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		l->s[l->n++] = s;
	va_end(ap);
}

void strlist_clear(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->s[i]);
	l->n = 0;
}

size_t strlist_get(const struct strlist *l, const char *const **out)
{
	*out = (const char *const *)l->s;
	return l->n;
}
