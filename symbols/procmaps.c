// SPDX-License-Identifier: Apache-2.0
#include "symbols/procmaps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/proc.h"

/* Parses 1..16 hex digits at *p; advances *p. Returns 0 or -EINVAL. */
static int parse_hex(const char **p, uint64_t *out, unsigned max_digits)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned n = 0;
	int d;

	while ((d = hex_digit((unsigned char)*s)) >= 0) {
		if (++n > max_digits)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
		s++;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int procmaps_parse_line(char *line, struct procmaps_entry *out)
{
	static const char deleted_sfx[] = " (deleted)";
	const size_t sfx_len = sizeof(deleted_sfx) - 1;
	struct procmaps_entry e = { 0 };
	const char *p = line;
	uint64_t maj, min;
	char *path, *end;
	size_t len;

	if (!line)
		return -EINVAL;
	if (parse_hex(&p, &e.start, 16) || expect(&p, '-') || parse_hex(&p, &e.end, 16) ||
	    expect(&p, ' '))
		return -EINVAL;
	if (e.start >= e.end)
		return -EINVAL;
	if (p[0] == 'r')
		e.perms |= PROCMAPS_READ;
	else if (p[0] != '-')
		return -EINVAL;
	if (p[1] == 'w')
		e.perms |= PROCMAPS_WRITE;
	else if (p[1] != '-')
		return -EINVAL;
	if (p[2] == 'x')
		e.perms |= PROCMAPS_EXEC;
	else if (p[2] != '-')
		return -EINVAL;
	if (p[3] == 's')
		e.perms |= PROCMAPS_SHARED;
	else if (p[3] != 'p')
		return -EINVAL;
	p += 4;
	if (expect(&p, ' ') || parse_hex(&p, &e.offset, 16) || expect(&p, ' ') ||
	    parse_hex(&p, &maj, 8) || expect(&p, ':') || parse_hex(&p, &min, 8) ||
	    expect(&p, ' ') || parse_dec_u64(&p, UINT64_MAX, &e.inode))
		return -EINVAL;
	e.dev_major = (uint32_t)maj;
	e.dev_minor = (uint32_t)min;

	/* The kernel pads with spaces to a column, then the path (which may hold spaces). */
	if (*p != '\0' && *p != '\n' && *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	path = line + (p - line);
	end = strchr(path, '\n');
	if (end) {
		if (end[1] != '\0')
			return -EINVAL;
		*end = '\0';
	}
	len = strlen(path);
	if (len > sfx_len && !strcmp(path + len - sfx_len, deleted_sfx)) {
		e.deleted = true;
		path[len - sfx_len] = '\0';
	}
	e.path = path;
	*out = e;
	return 0;
}

int procmaps_foreach(const char *proc_root, int tgid, procmaps_fn_t fn, void *ctx)
{
	char *buf = NULL, *line, *nl;
	struct procmaps_entry e;
	size_t len;
	int err, n = 0;

	if (tgid <= 0 || !fn)
		return -EINVAL;
	err = proc_read(proc_root, (uint32_t)tgid, "maps", PROCMAPS_MAX_BYTES, &buf, &len);
	if (err)
		return err;
	for (line = buf; line < buf + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl)
			nl = buf + len;
		*nl = '\0';
		if (procmaps_parse_line(line, &e))
			continue;
		err = fn(ctx, &e);
		if (err < 0)
			goto out;
		n++;
	}
	err = n;
out:
	free(buf);
	return err;
}
