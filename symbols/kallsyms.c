// SPDX-License-Identifier: Apache-2.0
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"

struct kallsyms {
	char *buf; /* the file, cut into NUL-terminated names in place */
	struct ksym *syms;
	size_t n;
};

/* Parses "addr type name[\t[module]]" in place. Returns 0, or -EINVAL for a malformed line. */
static int parse_line(char *line, uint64_t *addr, char *type, char **name, char **module)
{
	char *p = line, *end;
	uint64_t v = 0;
	unsigned digits = 0;
	int d;

	for (;; p++, digits++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (digits >= 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || p[0] != ' ' || !p[1] || p[2] != ' ' || !p[3])
		return -EINVAL;
	*type = p[1];
	*name = p + 3;
	*module = NULL;
	end = strchr(*name, '\t');
	if (end) {
		*end = '\0';
		if (end[1] == '[')
			*module = end + 1;
	}
	if (!(*name)[0])
		return -EINVAL;
	*addr = v;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer core symbols, then the first alphabetically, for a stable choice among aliases. */
	if (!x->module != !y->module)
		return x->module ? 1 : -1;
	return strcmp(x->name, y->name);
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	char *line, *nl, *name, *module, type;
	bool any_nonzero = false, any_parsed = false;
	size_t len, cap = 0, n;
	struct kallsyms *k;
	struct ksym *tmp;
	uint64_t addr;
	int err;

	if (!out)
		return -EINVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	err = read_file_bounded(AT_FDCWD, path ? path : "/proc/kallsyms", KALLSYMS_MAX_BYTES,
				&k->buf, &len);
	if (err)
		goto err_free;
	for (line = k->buf; line < k->buf + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(k->buf + len - line));
		if (!nl)
			nl = k->buf + len;
		*nl = '\0';
		if (parse_line(line, &addr, &type, &name, &module))
			continue;
		any_parsed = true;
		if (addr)
			any_nonzero = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 4096;
			tmp = realloc(k->syms, cap * sizeof(*tmp));
			if (!tmp) {
				err = -ENOMEM;
				goto err_free;
			}
			k->syms = tmp;
		}
		k->syms[k->n++] = (struct ksym){ .addr = addr, .name = name, .module = module };
	}
	if (any_parsed && !any_nonzero) {
		err = -EPERM;
		goto err_free;
	}
	if (!k->n) {
		err = -ENOENT;
		goto err_free;
	}
	/* The core kernel is listed in address order: skip the sort when everything is. */
	for (n = 1; n < k->n && ksym_cmp(&k->syms[n - 1], &k->syms[n]) <= 0; n++)
		;
	if (n < k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	for (n = 1, cap = 1; cap < k->n; cap++)
		if (k->syms[cap].addr != k->syms[n - 1].addr)
			k->syms[n++] = k->syms[cap];
	k->n = n;
	*out = k;
	return 0;

err_free:
	kallsyms__free(k);
	return err;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->buf);
	free(k);
}

const struct ksym *kallsyms__find(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0, hi, mid;

	if (!k || !k->n)
		return NULL;
	hi = k->n;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (lo == k->n && addr - k->syms[lo - 1].addr >= KALLSYMS_LAST_SPAN)
		return NULL;
	return &k->syms[lo - 1];
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k ? k->n : 0;
}
