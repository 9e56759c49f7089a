// SPDX-License-Identifier: Apache-2.0
#include "symbols/debugfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/safe_open.h"
#include "symbols/elf_file.h"

/* .gnu_debuglink: the name, NUL, padding to 4 bytes, the CRC32: a section this size is plenty. */
#define LINK_SECTION_MAX (DEBUGFILE_LINK_MAX + 8)
#define CRC_CHUNK (64u << 10)
#define BID_MIN_BYTES 2
#define BID_MAX_BYTES 64

static bool plain_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int debugfile_read_link(const struct elf_file *ef, struct debuglink *out)
{
	const Elf64_Shdr *sh;
	uint8_t buf[LINK_SECTION_MAX];
	size_t len, off;
	uint32_t crc;
	int err;

	if (!ef || !out)
		return -EINVAL;
	if (elf_file__section(ef, ".gnu_debuglink", &sh) < 0)
		return -ENOENT;
	if (sh->sh_type == SHT_NOBITS || sh->sh_size < 6)
		return -EINVAL;
	if (sh->sh_size > sizeof(buf))
		return -ENAMETOOLONG;
	err = elf_file__read_into(ef, sh->sh_offset, sh->sh_size, buf);
	if (err)
		return err;
	len = strnlen((const char *)buf, (size_t)sh->sh_size);
	off = (len + 1 + 3) & ~(size_t)3;
	if (len == sh->sh_size || off + 4 > sh->sh_size)
		return -EINVAL;
	if (len >= sizeof(out->name))
		return -ENAMETOOLONG;
	if (!plain_name((const char *)buf))
		return -EINVAL;
	crc = elf_file__word(ef, buf + off);
	memcpy(out->name, buf, len + 1);
	out->crc = crc;
	return 0;
}

int debugfile_build_id_path(const char *bid, char *buf, size_t size)
{
	size_t i, n = bid ? strlen(bid) : 0;
	int len;

	if (n < 2 * BID_MIN_BYTES || n > 2 * BID_MAX_BYTES || n % 2)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!((bid[i] >= '0' && bid[i] <= '9') || (bid[i] >= 'a' && bid[i] <= 'f')))
			return -EINVAL;
	len = snprintf(buf, size, DEBUGFILE_DIR "/.build-id/%.2s/%s.debug", bid, bid + 2);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

/* Whether the directory part [@path, @end) has a "." or ".." component. */
static bool has_dot_component(const char *path, const char *end)
{
	const char *p = path, *c;

	while (p < end) {
		while (p < end && *p == '/')
			p++;
		for (c = p; c < end && *c != '/'; c++)
			;
		if ((c - p == 1 && p[0] == '.') || (c - p == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p = c;
	}
	return false;
}

int debugfile_link_path(const char *path, const char *name, unsigned i, char *buf, size_t size)
{
	const char *slash;
	int dirlen, len;

	if (i >= DEBUGFILE_LINK_PATHS)
		return -ENOENT;
	if (!path || path[0] != '/' || !name || !plain_name(name))
		return -EINVAL;
	slash = strrchr(path, '/');
	if (has_dot_component(path, slash))
		return -EINVAL;
	dirlen = (int)(slash - path); /* "/app" gives the directory "" */
	if (i == 0)
		len = snprintf(buf, size, "%.*s/%s", dirlen, path, name);
	else if (i == 1)
		len = snprintf(buf, size, "%.*s/.debug/%s", dirlen, path, name);
	else
		len = snprintf(buf, size, DEBUGFILE_DIR "%.*s/%s", dirlen, path, name);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

int debugfile_crc32(int fd, uint64_t max, int timeout_ms, uint32_t *out)
{
	uint64_t deadline = timeout_ms > 0 ? clock_mono_ms() + (uint64_t)timeout_ms : 0, off = 0;
	uLong crc = crc32(0L, Z_NULL, 0);
	unsigned char *buf;
	ssize_t n;
	int err = 0;

	if (fd < 0 || !out)
		return -EINVAL;
	buf = malloc(CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (deadline && clock_mono_ms() > deadline) {
			err = -ETIMEDOUT;
			break;
		}
		n = pread(fd, buf, CRC_CHUNK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		if ((uint64_t)n > max - off) {
			err = -EFBIG;
			break;
		}
		crc = crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
	}
	free(buf);
	if (err)
		return err;
	*out = (uint32_t)crc;
	return 0;
}

int debugfile_check(int fd, const char *bid, const struct debuglink *link)
{
	struct elf_ident id;
	uint32_t crc;
	int err;

	if (fd < 0)
		return -EINVAL;
	err = elf_read_ident(fd, &id);
	if (err)
		return err;
	if (bid && bid[0]) {
		if (strcmp(id.build_id, bid))
			return -EBADMSG;
	} else if (link) {
		err = debugfile_crc32(fd, DEBUGFILE_CRC_MAX_BYTES, DEBUGFILE_CRC_TIMEOUT_MS, &crc);
		if (err)
			return err;
		if (crc != link->crc)
			return -EBADMSG;
	} else {
		return -EBADMSG;
	}
	/* The stripped binary itself, or a debug file without names: nothing to gain. */
	return id.has_symtab ? 0 : -ENODATA;
}

/* The candidate opened as @fd (or an open error): accepted into @out (0), or closed. */
static int take(int fd, const struct debugfile_query *q, const struct debuglink *link,
		enum debugfile_where where, const char *path, struct debugfile_found *out,
		struct debugfile_stats *st)
{
	struct stat sb;
	int err;

	if (fd == -ENOENT || fd == -ENOTDIR || fd == -ESRCH)
		return fd;
	st->tried++;
	err = fd < 0 ? fd : debugfile_check(fd, q->build_id, link);
	if (!err && fstat(fd, &sb) < 0)
		err = -errno;
	if (err) {
		st->refused++;
		pr_debug_errno(err, "debugfile: tgid=%u %s refused for %s (%s)", q->tgid, path,
			       q->path, where == DEBUGFILE_ON_HOST ? "host" : "root");
		if (fd >= 0)
			close(fd);
		return err;
	}
	out->fd = fd;
	out->where = where;
	snprintf(out->path, sizeof(out->path), "%s", path);
	out->dev = (uint64_t)sb.st_dev;
	out->ino = (uint64_t)sb.st_ino;
	return 0;
}

static int open_in(const struct debugfile_query *q, enum debugfile_where where, const char *path)
{
	const struct safe_open_opts o = { .max_size = DEBUGFILE_MAX_SIZE };

	if (where == DEBUGFILE_ON_HOST)
		return safe_open_in_root_path(q->host_root ? q->host_root : "/", path, &o);
	return safe_open_in_proc_root(q->proc_root, q->tgid, path, &o);
}

/* Lookup 1: by build id, in the root, then on the host. */
static int find_by_build_id(const struct debugfile_query *q, struct debugfile_found *out,
			    struct debugfile_stats *st)
{
	char path[sizeof(out->path)];

	if (!q->build_id || debugfile_build_id_path(q->build_id, path, sizeof(path)))
		return -ENOENT;
	if (!take(open_in(q, DEBUGFILE_IN_ROOT, path), q, NULL, DEBUGFILE_IN_ROOT, path, out, st))
		return 0;
	if (q->host_root && !q->host_root[0])
		return -ENOENT;
	return take(open_in(q, DEBUGFILE_ON_HOST, path), q, NULL, DEBUGFILE_ON_HOST, path, out,
		    st) ?
		       -ENOENT :
		       0;
}

/* Lookup 2: by .gnu_debuglink, inside the root only. */
static int find_by_link(const struct debugfile_query *q, struct debugfile_found *out,
			struct debugfile_stats *st)
{
	char path[sizeof(out->path)];
	struct debuglink link;
	struct elf_file *ef;
	unsigned i;
	int err;

	if (q->bin_fd < 0 || elf_file__open(q->bin_fd, NULL, &ef))
		return -ENOENT;
	err = debugfile_read_link(ef, &link);
	elf_file__free(ef);
	if (err)
		return -ENOENT;
	for (i = 0; i < DEBUGFILE_LINK_PATHS; i++) {
		if (debugfile_link_path(q->path, link.name, i, path, sizeof(path)))
			continue;
		if (!take(open_in(q, DEBUGFILE_IN_ROOT, path), q, &link, DEBUGFILE_IN_ROOT, path,
			  out, st))
			return 0;
	}
	return -ENOENT;
}

int debugfile_find(const struct debugfile_query *q, struct debugfile_found *out,
		   struct debugfile_stats *stats)
{
	struct debugfile_stats st = { 0 };
	int err;

	if (!q || !out || !q->tgid || !q->path || q->path[0] != '/')
		return -EINVAL;
	err = find_by_build_id(q, out, &st);
	if (err)
		err = find_by_link(q, out, &st);
	if (stats)
		*stats = st;
	return err;
}
