// SPDX-License-Identifier: Apache-2.0
#include "base/proc.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

int proc_gone(int err)
{
	return err == -ENOENT || err == -ESRCH ? -ESRCH : err;
}

int proc_path(char *buf, size_t size, const char *proc_root, uint32_t pid, const char *name)
{
	int n = snprintf(buf, size, "%s/%u/%s", proc_root ? proc_root : "/proc", pid, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

bool proc_exists(const char *proc_root, uint32_t pid)
{
	char path[512];

	if (proc_path(path, sizeof(path), proc_root, pid, ""))
		return true;
	return !access(path, F_OK) || errno != ENOENT;
}

int proc_read(const char *proc_root, uint32_t pid, const char *name, size_t max, char **out,
	      size_t *len)
{
	char path[512];
	int err;

	err = proc_path(path, sizeof(path), proc_root, pid, name);
	if (err)
		return err;
	return proc_gone(read_file_bounded(AT_FDCWD, path, max, out, len));
}

int proc_read_at(int dirfd, uint32_t pid, const char *name, size_t max, char **out, size_t *len)
{
	char path[256];
	int n;

	if (dirfd == AT_FDCWD)
		return proc_read(NULL, pid, name, max, out, len);
	n = snprintf(path, sizeof(path), "%u/%s", pid, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return proc_gone(read_file_bounded(dirfd, path, max, out, len));
}

static int parse_ll(const char **pp, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(*pp, &end, 10);
	if (errno || end == *pp || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*pp = end;
	return 0;
}

static int parse_ull(const char **pp, unsigned long long *out)
{
	char *end;

	while (**pp == ' ')
		(*pp)++;
	if (**pp == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(*pp, &end, 10);
	if (errno || end == *pp || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*pp = end;
	return 0;
}

int proc_parse_stat(const char *buf, size_t len, struct proc_stat *out)
{
	struct proc_stat st = { 0 };
	unsigned long long v;
	const char *p;
	long long ll;
	int field;

	if (memchr(buf, '\0', len))
		return -EINVAL;
	/* "pid (comm) S ppid ...": comm may hold spaces and ')', so start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[2] == ' ' || p[3] != ' ')
		return -EINVAL;
	st.state = p[2];
	p += 3; /* at the space after the state */
	for (field = 4; field <= 22; field++) {
		/* flags, fault counts, utime, stime and starttime are unsigned in proc(5) */
		if ((field >= 9 && field <= 15) || field == 22) {
			if (parse_ull(&p, &v))
				return -EINVAL;
			if (field == 9)
				st.flags = v;
			else if (field == 14)
				st.utime = v;
			else if (field == 15)
				st.stime = v;
			else if (field == 22)
				st.starttime = v;
			continue;
		}
		if (parse_ll(&p, &ll))
			return -EINVAL;
		if (field == 4)
			st.ppid = ll;
		else if (field == 6)
			st.session = ll;
		else if (field == 7)
			st.tty_nr = ll;
	}
	*out = st;
	return 0;
}

static int read_stat(int dirfd, const char *proc_root, uint32_t pid, struct proc_stat *st)
{
	size_t len;
	char *buf;
	int err;

	err = dirfd == AT_FDCWD ? proc_read(proc_root, pid, "stat", PROC_STAT_MAX, &buf, &len) :
				  proc_read_at(dirfd, pid, "stat", PROC_STAT_MAX, &buf, &len);
	if (err)
		return err;
	err = proc_parse_stat(buf, len, st);
	free(buf);
	return err;
}

int proc_read_stat(const char *proc_root, uint32_t pid, struct proc_stat *st)
{
	return read_stat(AT_FDCWD, proc_root, pid, st);
}

int proc_read_stat_at(int dirfd, uint32_t pid, struct proc_stat *st)
{
	return read_stat(dirfd, NULL, pid, st);
}

int proc_read_comm(const char *proc_root, uint32_t pid, char *buf, size_t size)
{
	char *text;
	int err;

	if (size)
		buf[0] = '\0';
	err = proc_read(proc_root, pid, "comm", 64, &text, NULL);
	if (err)
		return err;
	text[strcspn(text, "\n")] = '\0';
	if (size)
		snprintf(buf, size, "%s", text);
	free(text);
	return 0;
}

/* "Key:\tv1\tv2..." at the start of a line of @text: the value after the tab, or NULL. */
static const char *status_field(const char *text, const char *end, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if ((size_t)(end - p) > n && !memcmp(p, key, n) && p[n] == ':')
			return p + n + 1;
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

/*
 * The @idx-th (0-based) number of the field at @p (whitespace-separated, up to the end of
 * the line), or with @last the last one, in @base (10 or 16). Returns 0 or -EINVAL.
 */
static int field_num(const char *p, const char *end, unsigned idx, bool last, int base,
		     uint64_t *out)
{
	bool found = false;
	unsigned i = 0;
	uint64_t v = 0;

	while (p && p < end && *p != '\n') {
		const char *s;
		uint64_t x = 0;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p == '\n')
			break;
		for (s = p; p < end && *p != ' ' && *p != '\t' && *p != '\n'; p++) {
			int d = *p >= '0' && *p <= '9'		     ? *p - '0' :
				base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
								       -1;

			if (d < 0 || p - s >= 16)
				return -EINVAL;
			x = x * (uint64_t)base + (uint64_t)d;
		}
		if (last || i++ == idx) {
			v = x;
			found = true;
			if (!last)
				break;
		}
	}
	if (!found)
		return -EINVAL;
	*out = v;
	return 0;
}

int proc_parse_status(const char *text, size_t len, struct proc_status *st)
{
	const char *end = text + len, *ns;
	uint64_t nspid, uid, gid, sigcgt;

	if (!text || memchr(text, '\0', len))
		return -EINVAL;
	ns = status_field(text, end, "NSpid");
	if (!ns)
		ns = status_field(text, end, "Pid");
	if (field_num(ns, end, 0, true, 10, &nspid) ||
	    field_num(status_field(text, end, "Uid"), end, 1, false, 10, &uid) ||
	    field_num(status_field(text, end, "Gid"), end, 1, false, 10, &gid) ||
	    field_num(status_field(text, end, "SigCgt"), end, 0, false, 16, &sigcgt) || !nspid ||
	    nspid > INT32_MAX || uid > UINT32_MAX || gid > UINT32_MAX)
		return -EINVAL;
	st->nspid = (uint32_t)nspid;
	st->euid = (uint32_t)uid;
	st->egid = (uint32_t)gid;
	st->sigcgt = sigcgt;
	return 0;
}
