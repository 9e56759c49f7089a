// SPDX-License-Identifier: Apache-2.0
#include "base/safe_place.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/safe_open.h"
#include "base/sha256.h"

/* A JFR repository nests a few levels; a planted tree deeper than this is not walked. */
#define RM_MAX_DEPTH 16
/* Entries one removal unlinks at most: a process creating files as fast as we remove them. */
#define RM_MAX_ENTRIES 100000ul
/* Inside our directory: no link of any kind is followed and no mount is entered. */
#define RESOLVE_OURS \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

/* The locations safe_place_remove_path() accepts. */
static const char *const known_dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };

/* What the checks need of one mountinfo line. */
struct mount_line {
	uint64_t id;
	const char *point, *opts, *type, *super;
	size_t point_len, opts_len, type_len, super_len;
};

/* What a scan found out about one mount. */
struct mount_hit {
	bool found;
	size_t len; /* of its mount point, decoded */
	bool noexec, readonly, remote;
};

/*
 * Appends "; " (when @why holds a reason already) and the formatted reason to @why (@size
 * bytes, may be 0), cut at its end. Returns @err.
 */
__attribute__((format(printf, 4, 5))) static int note(char *why, size_t size, int err,
						      const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!why || !size)
		return err;
	n = strnlen(why, size);
	if (n) {
		if (n + 3 >= size)
			return err;
		memcpy(why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why + n, size - n, fmt, ap);
	va_end(ap);
	return err;
}

/* The next field of [*@p, @end), separated by one space, into @f/@n; false past the end. */
static bool next_field(const char **p, const char *end, const char **f, size_t *n)
{
	const char *s = *p, *e;

	if (s >= end)
		return false;
	e = memchr(s, ' ', (size_t)(end - s));
	if (!e)
		e = end;
	*f = s;
	*n = (size_t)(e - s);
	*p = e < end ? e + 1 : end;
	return true;
}

/* Whether [@s, @s + @n) is 1 to 20 decimal digits; the value (wrapped) in @out. */
static bool is_number(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n || n > 20)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* Whether "MAJ:MIN" is [@s, @s + @n). */
static bool is_dev(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	uint64_t v;

	return colon && is_number(s, (size_t)(colon - s), &v) &&
	       is_number(colon + 1, n - (size_t)(colon - s) - 1, &v);
}

/*
 * Splits mountinfo line [@line, @end) (proc(5): "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] -
 * TYPE SOURCE SUPEROPTS"; SOURCE may be empty) into @m. Returns 0 or -EINVAL.
 */
static int parse_line(const char *line, const char *end, struct mount_line *m)
{
	const char *p = line, *f[6], *src;
	size_t n[6], nsrc;
	uint64_t parent;
	int i;

	for (i = 0; i < 6; i++)
		if (!next_field(&p, end, &f[i], &n[i]) || !n[i])
			return -EINVAL;
	if (!is_number(f[0], n[0], &m->id) || !is_number(f[1], n[1], &parent) ||
	    !is_dev(f[2], n[2]) || f[4][0] != '/')
		return -EINVAL;
	m->point = f[4];
	m->point_len = n[4];
	m->opts = f[5];
	m->opts_len = n[5];
	do {
		if (!next_field(&p, end, &f[0], &n[0]) || !n[0])
			return -EINVAL;
	} while (n[0] != 1 || f[0][0] != '-');
	if (!next_field(&p, end, &m->type, &m->type_len) || !m->type_len ||
	    !next_field(&p, end, &src, &nsrc) || !next_field(&p, end, &m->super, &m->super_len) ||
	    !m->super_len || p != end || end[-1] == ' ')
		return -EINVAL;
	return 0;
}

/*
 * The next byte of an octal-escaped field at *@s (below @end), moving *@s past it. Returns the
 * byte, or -EINVAL for a backslash without three octal digits up to \377.
 */
static int decode_byte(const char **s, const char *end)
{
	const char *p = *s;
	int i, v = 0;

	if (*p != '\\') {
		*s = p + 1;
		return (unsigned char)*p;
	}
	if (end - p < 4 || p[1] < '0' || p[1] > '3')
		return -EINVAL;
	for (i = 1; i <= 3; i++) {
		if (p[i] < '0' || p[i] > '7')
			return -EINVAL;
		v = v * 8 + (p[i] - '0');
	}
	*s = p + 4;
	return v;
}

/*
 * Whether mount point @m (escaped) holds @dir (@dlen bytes): 1 (its decoded length in @mlen),
 * 0, or -EINVAL for a bad escape.
 */
static int point_holds(const struct mount_line *m, const char *dir, size_t dlen, size_t *mlen)
{
	const char *s = m->point, *end = m->point + m->point_len;
	bool same = true;
	size_t i = 0;
	int c;

	while (s < end) {
		c = decode_byte(&s, end);
		if (c < 0)
			return c;
		if (same && (i >= dlen || (unsigned char)dir[i] != c))
			same = false;
		i++;
	}
	*mlen = i;
	if (!dir || !same)
		return 0;
	return i == 1 || i == dlen || dir[i] == '/';
}

/* Whether comma-separated list [@s, @s + @n) holds option @opt. */
static bool has_opt(const char *s, size_t n, const char *opt)
{
	size_t len = strlen(opt), k;
	const char *end = s + n, *c;

	while (s < end) {
		c = memchr(s, ',', (size_t)(end - s));
		k = c ? (size_t)(c - s) : (size_t)(end - s);
		if (k == len && !memcmp(s, opt, len))
			return true;
		s += k + 1;
	}
	return false;
}

/* Fills @h from line @m, whose mount point is @len bytes long. */
static void hit_set(struct mount_hit *h, const struct mount_line *m, size_t len)
{
	char type[64];
	size_t n = m->type_len < sizeof(type) ? m->type_len : sizeof(type) - 1;

	/* A long "fuse.<name>" keeps the prefix that marks it. */
	memcpy(type, m->type, n);
	type[n] = '\0';
	h->found = true;
	h->len = len;
	h->noexec = has_opt(m->opts, m->opts_len, "noexec");
	h->readonly = has_opt(m->opts, m->opts_len, "ro") || has_opt(m->super, m->super_len, "ro");
	h->remote = safe_open_fs_remote(type);
}

/*
 * One pass over the @len bytes of mountinfo text at @mi: every line is checked; the mount
 * holding @dir (NULL: none wanted) into @by_dir, mount @id into @by_id (NULL: none wanted).
 * Returns 0 or -EINVAL (a malformed line, or a NUL byte).
 */
static int mount_scan(const char *mi, size_t len, const char *dir, uint64_t id,
		      struct mount_hit *by_dir, struct mount_hit *by_id)
{
	const char *line = mi, *end = mi + len, *nl;
	size_t dlen = dir ? strlen(dir) : 0, plen;
	struct mount_line m;
	int held;

	if (len && (!mi || memchr(mi, '\0', len)))
		return -EINVAL;
	for (; line < end; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		if (nl == line)
			continue;
		if (parse_line(line, nl, &m))
			return -EINVAL;
		held = point_holds(&m, dir, dlen, &plen);
		if (held < 0)
			return held;
		/* Of equal mount points the later line is the mount on top. */
		if (held && by_dir && (!by_dir->found || plen >= by_dir->len))
			hit_set(by_dir, &m, plen);
		if (by_id && m.id == id)
			hit_set(by_id, &m, plen);
	}
	return 0;
}

/* Whether @dir is absolute and canonical: no "//", no trailing '/', no "." or "..". */
static bool dir_ok(const char *dir)
{
	const char *c = dir;
	size_t n;

	if (!dir || dir[0] != '/' || strlen(dir) >= PATH_MAX)
		return false;
	if (!dir[1])
		return true;
	while (*c == '/') {
		c++;
		n = strcspn(c, "/");
		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += n;
	}
	return true;
}

int safe_place_mount_flags(const char *mountinfo, size_t len, const char *dir, bool *noexec,
			   bool *readonly)
{
	struct mount_hit h = { 0 };
	int err;

	if (!dir_ok(dir) || !noexec || !readonly)
		return -EINVAL;
	err = mount_scan(mountinfo, len, dir, 0, &h, NULL);
	if (err)
		return err;
	if (!h.found)
		return -ENOENT;
	*noexec = h.noexec;
	*readonly = h.readonly;
	return 0;
}

/* The statx of @name under @fd (with AT_EMPTY_PATH: of @fd) from the inode the kernel holds. */
static int stat_at(int fd, const char *name, int flags, struct statx *sx)
{
	if (statx(fd, name, flags | AT_STATX_DONT_SYNC, STATX_BASIC_STATS | STATX_MNT_ID, sx) < 0)
		return -errno;
	return 0;
}

/*
 * Refuses (-EREMOTE) directory @fd, shown as @shown, when its mount is of a FUSE or network
 * type by the mount table, or is not in it; a file system on a block device waits on no
 * process (base/safe_open.c's check_mount()). Nothing is asked of its file system.
 */
static int check_remote(int fd, const struct safe_place_opts *o, const char *shown, char *why,
			size_t size)
{
	struct mount_hit h = { 0 };
	struct statx sx;
	int err;

	err = stat_at(fd, "", AT_EMPTY_PATH, &sx);
	if (err)
		return note(why, size, err, "%s cannot be examined (%s)", shown, strerror(-err));
	if (!(sx.stx_mask & STATX_MNT_ID) || sx.stx_dev_major)
		return 0;
	err = mount_scan(o->mountinfo, o->mountinfo_len, NULL, sx.stx_mnt_id, NULL, &h);
	if (err)
		return err;
	if (!h.found)
		return note(why, size, -EREMOTE, "%s is on a mount its mount table does not list",
			    shown);
	if (h.remote)
		return note(why, size, -EREMOTE, "%s is on a FUSE or network file system", shown);
	return 0;
}

/*
 * Opens component @comp under directory @cur as O_PATH without following it, and checks it is a
 * directory on an acceptable mount; @shown is the path so far. Returns the fd or -errno.
 */
static int walk_one(int cur, const char *comp, const struct safe_place_opts *o, const char *shown,
		    char *why, size_t size)
{
	struct statx sx;
	int fd, err;

	fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			return note(why, size, err, "%s does not exist", shown);
		return note(why, size, err, "%s cannot be opened (%s)", shown, strerror(-err));
	}
	err = stat_at(fd, "", AT_EMPTY_PATH, &sx);
	if (err)
		err = note(why, size, err, "%s cannot be examined (%s)", shown, strerror(-err));
	else if (S_ISLNK(sx.stx_mode))
		err = note(why, size, -ELOOP, "%s is a symbolic link", shown);
	else if (!S_ISDIR(sx.stx_mode))
		err = note(why, size, -ENOTDIR, "%s is not a directory", shown);
	else
		err = check_remote(fd, o, shown, why, size);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Walks location @loc (dir_ok()) from @rootfd one component at a time (walk_one()). Returns an
 * O_PATH fd of it or -errno, with the reason in @why.
 */
static int walk(int rootfd, const struct safe_place_opts *o, const char *loc, char *why,
		size_t size)
{
	char shown[PATH_MAX], comp[NAME_MAX + 1];
	const char *c = loc;
	int cur = rootfd, fd, err;
	size_t n;

	/* A root on such a mount (fuse-overlayfs) cannot even be looked into. */
	err = check_remote(rootfd, o, "/", why, size);
	if (err)
		return err;
	while (*c == '/') {
		c++;
		n = strcspn(c, "/");
		if (n > NAME_MAX) {
			fd = note(why, size, -ENAMETOOLONG, "%s is too long", loc);
		} else {
			memcpy(comp, c, n);
			comp[n] = '\0';
			snprintf(shown, sizeof(shown), "%.*s", (int)(c + n - loc), loc);
			fd = walk_one(cur, comp, o, shown, why, size);
		}
		if (cur != rootfd)
			close(cur);
		if (fd < 0)
			return fd;
		cur = fd;
		c += n;
	}
	return cur;
}

/*
 * Refuses location @locfd (@loc) when the mount table (by its path and by the mount the fd is
 * on) or fstatvfs() says it is read-only, noexec (@o->need_exec) or short of @o->need_bytes.
 */
static int check_location(int locfd, const struct safe_place_opts *o, const char *loc, char *why,
			  size_t size)
{
	struct mount_hit by_dir = { 0 }, by_id = { 0 };
	uint64_t avail;
	struct statvfs vfs;
	struct statx sx;
	bool ro, noexec;
	int err;

	err = stat_at(locfd, "", AT_EMPTY_PATH, &sx);
	if (err)
		return note(why, size, err, "%s cannot be examined (%s)", loc, strerror(-err));
	err = mount_scan(o->mountinfo, o->mountinfo_len, loc, sx.stx_mnt_id, &by_dir,
			 (sx.stx_mask & STATX_MNT_ID) ? &by_id : NULL);
	if (err)
		return err;
	if (by_dir.remote)
		return note(why, size, -EREMOTE, "%s is on a FUSE or network file system", loc);
	if (fstatvfs(locfd, &vfs) < 0) {
		err = -errno;
		return note(why, size, err, "%s cannot be examined (%s)", loc, strerror(-err));
	}
	ro = by_dir.readonly || by_id.readonly || (vfs.f_flag & ST_RDONLY);
	noexec = by_dir.noexec || by_id.noexec || (vfs.f_flag & ST_NOEXEC);
	if (ro)
		return note(why, size, -EROFS, "%s is read-only", loc);
	if (o->need_exec && noexec)
		return note(why, size, -EPERM, "%s is mounted noexec", loc);
	avail = vfs.f_frsize && vfs.f_bavail > UINT64_MAX / vfs.f_frsize ?
			UINT64_MAX :
			(uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (o->need_bytes && avail < o->need_bytes)
		return note(why, size, -ENOSPC,
			    "no space left on %s (%llu bytes free, %llu needed)", loc,
			    (unsigned long long)avail, (unsigned long long)o->need_bytes);
	return 0;
}

/* Whether @s is 16 lower-case hex digits and its end. */
static bool is_hex16(const char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return !s[16];
}

/* The random part of name @attempt into @hex (@o->name_fn, else getrandom()). */
static int next_name(const struct safe_place_opts *o, unsigned int attempt, char hex[17])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t b[8];
	ssize_t n;
	int i, err;

	if (o->name_fn) {
		err = o->name_fn(o->name_ctx, attempt, hex);
		if (err)
			return err < 0 ? err : -EINVAL;
		return is_hex16(hex) ? 0 : -EINVAL;
	}
	do
		n = getrandom(b, sizeof(b), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(b))
		return -EIO;
	for (i = 0; i < 8; i++) {
		hex[2 * i] = digits[b[i] >> 4];
		hex[2 * i + 1] = digits[b[i] & 15];
	}
	hex[16] = '\0';
	return 0;
}

/* The reason for mkdirat() error @err in location @loc. Returns @err. */
static int mkdir_reason(int err, const char *loc, char *why, size_t size)
{
	switch (err) {
	case -EROFS:
		return note(why, size, err, "%s is read-only", loc);
	case -ENOSPC:
	case -EDQUOT:
		return note(why, size, err, "no space left on %s", loc);
	case -EACCES:
	case -EPERM:
		return note(why, size, err, "%s is not writable", loc);
	default:
		return note(why, size, err, "no directory can be made in %s (%s)", loc,
			    strerror(-err));
	}
}

/*
 * Whether @ds is a directory as mkdirat(0700) just made it in the location of stat @ps: owned
 * by us, on its device and mount, no entry (btrfs counts 1 link for a directory, others 2), no
 * group or other bits.
 */
static bool is_made(const struct statx *ds, const struct statx *ps)
{
	if (!S_ISDIR(ds->stx_mode) || ds->stx_uid != geteuid() || (ds->stx_mode & 077) ||
	    ds->stx_nlink > 2)
		return false;
	if (ds->stx_dev_major != ps->stx_dev_major || ds->stx_dev_minor != ps->stx_dev_minor)
		return false;
	return !(ds->stx_mask & ps->stx_mask & STATX_MNT_ID) || ds->stx_mnt_id == ps->stx_mnt_id;
}

/*
 * Opens the directory @name just made under @locfd and checks it is the one we made
 * (is_made()). Then gives it to @o's uid and gid, mode 0700, and fills @p (which takes @locfd).
 * Returns 0, -ESTALE (not ours), -errno.
 */
static int open_made(int locfd, const char *loc, const char *name, const struct safe_place_opts *o,
		     struct safe_place *p)
{
	struct statx ps, ds;
	int dfd, err;

	dfd = openat(locfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ELOOP || errno == ENOTDIR || errno == ENOENT ? -ESTALE : -errno;
	err = stat_at(locfd, "", AT_EMPTY_PATH, &ps);
	if (!err)
		err = stat_at(dfd, "", AT_EMPTY_PATH, &ds);
	if (!err && !is_made(&ds, &ps))
		err = -ESTALE;
	if (!err && fchown(dfd, o->uid, o->gid) < 0)
		err = -errno;
	if (!err && fchmod(dfd, 0700) < 0)
		err = -errno;
	if (err) {
		close(dfd);
		return err;
	}
	memset(p, 0, sizeof(*p));
	p->parentfd = locfd;
	p->dirfd = dfd;
	snprintf(p->path, sizeof(p->path), "%s/%s", loc, name);
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->uid = o->uid;
	p->gid = o->gid;
	p->dev = makedev(ds.stx_dev_major, ds.stx_dev_minor);
	p->ino = ds.stx_ino;
	return 0;
}

/*
 * Makes our directory under @locfd (location @loc) with a fresh name: a name taken in any way
 * (a directory, a link, a FIFO) is left alone and the next one tried, SAFE_PLACE_TRIES at most.
 * Fills @p, which takes @locfd, on success. Returns 0 or -errno.
 */
static int make_dir(int locfd, const char *loc, const struct safe_place_opts *o,
		    struct safe_place *p, char *why, size_t size)
{
	char hex[17], name[SAFE_PLACE_NAME_LEN + 1];
	unsigned int i;
	int err;

	for (i = 0; i < SAFE_PLACE_TRIES; i++) {
		err = next_name(o, i, hex);
		if (err)
			return note(why, size, err, "no name can be made (%s)", strerror(-err));
		snprintf(name, sizeof(name), SAFE_PLACE_PREFIX "%s", hex);
		if (!mkdirat(locfd, name, 0700))
			break;
		err = -errno;
		if (err != -EEXIST)
			return mkdir_reason(err, loc, why, size);
	}
	if (i == SAFE_PLACE_TRIES)
		return note(why, size, -EEXIST, "in %s, all %d names tried were taken", loc,
			    SAFE_PLACE_TRIES);
	err = open_made(locfd, loc, name, o, p);
	if (!err)
		return 0;
	/* Only an empty directory goes: if that is not ours, it is empty and in its container. */
	if (err != -ESTALE)
		unlinkat(locfd, name, AT_REMOVEDIR);
	if (err == -ESTALE)
		return note(why, size, err, "the directory made in %s was replaced", loc);
	return note(why, size, err, "the directory made in %s cannot be set up (%s)", loc,
		    strerror(-err));
}

/* One location: walk, check, make. Fills @p on success. Returns 0 or -errno. */
static int place_in(int rootfd, const struct safe_place_opts *o, const char *loc,
		    struct safe_place *p, char *why, size_t size)
{
	int locfd, err;

	locfd = walk(rootfd, o, loc, why, size);
	if (locfd < 0)
		return locfd;
	err = check_location(locfd, o, loc, why, size);
	if (!err)
		err = make_dir(locfd, loc, o, p, why, size);
	if (err)
		close(locfd);
	else
		p->rootfd = rootfd;
	return err;
}

int safe_place_dir_opts(int rootfd, const struct safe_place_opts *o, struct safe_place *out,
			char *why, size_t size)
{
	struct safe_place p;
	size_t i;
	int err = -EINVAL;

	if (why && size)
		why[0] = '\0';
	if (rootfd < 0 || !o || !o->mountinfo || !o->dirs || !o->ndirs || !out)
		return -EINVAL;
	for (i = 0; i < o->ndirs; i++)
		if (!dir_ok(o->dirs[i]) || !o->dirs[i][1] ||
		    strlen(o->dirs[i]) + 1 + SAFE_PLACE_NAME_LEN >= SAFE_PLACE_PATH_MAX)
			return note(why, size, -EINVAL,
				    "%s is not a location files can be placed in",
				    o->dirs[i] ? o->dirs[i] : "(null)");
	if (mount_scan(o->mountinfo, o->mountinfo_len, NULL, 0, NULL, NULL))
		return note(why, size, -EINVAL, "the mount table is malformed");
	for (i = 0; i < o->ndirs; i++) {
		err = place_in(rootfd, o, o->dirs[i], &p, why, size);
		if (!err) {
			*out = p;
			return 0;
		}
	}
	return err;
}

int safe_place_dir(int rootfd, const char *mountinfo, size_t milen, const char *const *dirs,
		   size_t ndirs, bool need_exec, uint32_t uid, uint32_t gid, struct safe_place *out,
		   char *why, size_t size)
{
	const struct safe_place_opts o = {
		.mountinfo = mountinfo,
		.mountinfo_len = milen,
		.dirs = dirs,
		.ndirs = ndirs,
		.need_exec = need_exec,
		.uid = uid,
		.gid = gid,
	};

	return safe_place_dir_opts(rootfd, &o, out, why, size);
}

/* Whether @name is one path component. */
static bool name_ok(const char *name)
{
	return name && name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) <= NAME_MAX;
}

/*
 * Opens @name in our directory for reading as safe_place_open() says; its statx (of the open
 * file) into @sx. Returns the fd or -errno.
 */
static int open_ours(const struct safe_place *p, const char *name, uint64_t max, struct statx *sx)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_OURS };
	struct statx ps;
	char self[64];
	int pfd, fd = -1, err;

	pfd = syscall(SYS_openat2, p->dirfd, name, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	err = stat_at(pfd, "", AT_EMPTY_PATH, &ps);
	if (!err && !S_ISREG(ps.stx_mode))
		err = -ENOTSUP;
	if (!err && ps.stx_nlink != 1)
		err = -EMLINK;
	if (!err && max && ps.stx_size > max)
		err = -EFBIG;
	if (err)
		goto out;
	/* The inode the O_PATH fd holds, through the kernel's link to it: never a path again. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = stat_at(fd, "", AT_EMPTY_PATH, sx);
	if (!err && (sx->stx_ino != ps.stx_ino || sx->stx_dev_major != ps.stx_dev_major ||
		     sx->stx_dev_minor != ps.stx_dev_minor))
		err = -ESTALE;
	if (err) {
		close(fd);
		goto out;
	}
	close(pfd);
	return fd;

out:
	close(pfd);
	return err;
}

int safe_place_open(struct safe_place *p, const char *name, uint64_t max)
{
	struct statx sx;

	if (!p || p->dirfd < 0 || !name_ok(name))
		return -EINVAL;
	return open_ours(p, name, max, &sx);
}

/*
 * Checks @name in our directory is the file written (@wrote, its statx) by a new open: same
 * inode, @len bytes, sha256 @sha. Returns 0, -ESTALE, -EBADMSG or -errno.
 */
static int verify(const struct safe_place *p, const char *name, const struct statx *wrote,
		  size_t len, const uint8_t sha[SHA256_DIGEST_LEN])
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct statx sx;
	int fd, err;

	fd = open_ours(p, name, 0, &sx);
	if (fd < 0)
		return fd == -ENOENT || fd == -ELOOP || fd == -ENOTSUP ? -ESTALE : fd;
	if (sx.stx_ino != wrote->stx_ino || sx.stx_dev_major != wrote->stx_dev_major ||
	    sx.stx_dev_minor != wrote->stx_dev_minor)
		err = -ESTALE;
	else if (sx.stx_size != len)
		err = -EBADMSG;
	else
		err = sha256_fd(fd, len, digest);
	if (err == -EFBIG || (!err && memcmp(digest, sha, SHA256_DIGEST_LEN)))
		err = -EBADMSG;
	close(fd);
	return err;
}

/* Writes, owns, syncs and stats new file @fd (@name: its statx into @sx). Returns 0 or -errno. */
static int fill_file(const struct safe_place *p, int fd, const void *data, size_t len, mode_t mode,
		     struct statx *sx)
{
	int err;

	err = write_all(fd, data, len);
	/* chown first: it clears set-id bits that a chmod before it would have set. */
	if (!err && fchown(fd, p->uid, p->gid) < 0)
		err = -errno;
	if (!err && fchmod(fd, mode & 0777) < 0)
		err = -errno;
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (!err)
		err = stat_at(fd, "", AT_EMPTY_PATH, sx);
	return err;
}

int safe_place_file(struct safe_place *p, const char *name, const void *data, size_t len,
		    mode_t mode, const uint8_t sha256[32])
{
	struct statx sx;
	int fd, err;

	if (!p || p->dirfd < 0 || !name_ok(name) || (!data && len) || !sha256)
		return -EINVAL;
	if (strlen(name) >= SAFE_PLACE_FILE_NAME_MAX)
		return -ENAMETOOLONG;
	if (p->nfiles >= SAFE_PLACE_MAX_FILES)
		return -ENOBUFS;
	/* O_EXCL: whatever holds the name already (a link too) is an error, never opened. */
	fd = openat(p->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = fill_file(p, fd, data, len, mode, &sx);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err)
		err = verify(p, name, &sx, len, sha256);
	if (err) {
		unlinkat(p->dirfd, name, 0);
		return err;
	}
	snprintf(p->files[p->nfiles++], SAFE_PLACE_FILE_NAME_MAX, "%s", name);
	return 0;
}

static int rm_contents(int fd, int depth, unsigned long *budget);

/*
 * Removes @name under @dfd: unlinked when it is not a directory (a link itself, never its
 * target), else emptied and removed; a mount point is not entered (-EXDEV, -EBUSY). Returns 0
 * (also when it is gone) or -errno.
 */
static int rm_entry(int dfd, const char *name, int depth, unsigned long *budget)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_OURS };
	int fd, err;

	if (!unlinkat(dfd, name, 0) || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth >= RM_MAX_DEPTH)
		return -ELOOP;
	fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = rm_contents(fd, depth + 1, budget);
	close(fd);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !err)
		err = -errno;
	return err;
}

/*
 * Removes every entry of directory @fd (kept open), at most *@budget of them in all (-E2BIG
 * past it). Returns 0 or the first -errno; what can be removed is.
 */
static int rm_contents(int fd, int depth, unsigned long *budget)
{
	struct dirent *de;
	int dfd, err = 0, e;
	DIR *d;

	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		err = -errno;
		close(dfd);
		return err;
	}
	/* The duplicate shares the offset of @fd, which may have been read before. */
	rewinddir(d);
	for (errno = 0; (de = readdir(d)); errno = 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!*budget) {
			err = err ? err : -E2BIG;
			break;
		}
		(*budget)--;
		e = rm_entry(dirfd(d), de->d_name, depth, budget);
		if (e && !err)
			err = e;
	}
	if (!de && errno && !err)
		err = -errno;
	closedir(d);
	return err;
}

/*
 * Removes our (emptied) directory @p->name from its location when that name still holds its
 * inode. Returns 0, -ESTALE (moved away) or -errno.
 */
static int rm_self(const struct safe_place *p)
{
	struct statx sx;
	int err;

	err = stat_at(p->parentfd, p->name, AT_SYMLINK_NOFOLLOW, &sx);
	if (err)
		return err == -ENOENT ? -ESTALE : err;
	if (sx.stx_ino != p->ino || makedev(sx.stx_dev_major, sx.stx_dev_minor) != p->dev)
		return -ESTALE;
	if (unlinkat(p->parentfd, p->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int safe_place_remove(struct safe_place *p)
{
	unsigned long budget = RM_MAX_ENTRIES;
	unsigned int i;
	int err;

	if (!p)
		return -EINVAL;
	if (p->dirfd < 0)
		return 0;
	/* Ours first: they go even when what the process made cannot be removed. */
	for (i = 0; i < p->nfiles; i++)
		unlinkat(p->dirfd, p->files[i], 0);
	err = rm_contents(p->dirfd, 0, &budget);
	if (!err)
		err = rm_self(p);
	close(p->dirfd);
	if (p->parentfd >= 0)
		close(p->parentfd);
	p->dirfd = -1;
	p->parentfd = -1;
	p->nfiles = 0;
	return err;
}

/* Whether @name is ".slideops-<16 lower-case hex>". */
static bool our_name(const char *name)
{
	return !strncmp(name, SAFE_PLACE_PREFIX, strlen(SAFE_PLACE_PREFIX)) &&
	       is_hex16(name + strlen(SAFE_PLACE_PREFIX));
}

/* The location of @path among known_dirs[] and its last component in @name; NULL: none. */
static const char *known_loc(const char *path, const char **name)
{
	size_t i, n;

	for (i = 0; i < sizeof(known_dirs) / sizeof(known_dirs[0]); i++) {
		n = strlen(known_dirs[i]);
		if (!strncmp(path, known_dirs[i], n) && path[n] == '/' && our_name(path + n + 1)) {
			*name = path + n + 1;
			return known_dirs[i];
		}
	}
	return NULL;
}

int safe_place_remove_path(int rootfd, const char *mountinfo, size_t milen, const char *path)
{
	const struct safe_place_opts o = { .mountinfo = mountinfo, .mountinfo_len = milen };
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_OURS };
	unsigned long budget = RM_MAX_ENTRIES;
	const char *loc, *name = NULL;
	int locfd, dfd, err;

	if (rootfd < 0 || !mountinfo || !path)
		return -EINVAL;
	loc = known_loc(path, &name);
	if (!loc || mount_scan(mountinfo, milen, NULL, 0, NULL, NULL))
		return -EINVAL;
	locfd = walk(rootfd, &o, loc, NULL, 0);
	if (locfd < 0)
		return locfd == -ENOENT ? 0 : locfd;
	dfd = syscall(SYS_openat2, locfd, name, &how, sizeof(how));
	if (dfd < 0) {
		err = errno == ENOENT ? 0 : -errno;
		close(locfd);
		return err;
	}
	err = rm_contents(dfd, 0, &budget);
	close(dfd);
	if (!err && unlinkat(locfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		err = -errno;
	close(locfd);
	return err;
}
