// SPDX-License-Identifier: Apache-2.0
/*
 * faultshim: an LD_PRELOAD shim that kills its process at the Nth fault point, for
 * tests/integration/test_crash_safety.sh (crash safety of the store and the spool).
 *
 *   cc -shared -fPIC -O1 -o faultshim.so faultshim.c -ldl
 *   LD_PRELOAD=./faultshim.so FAULT_AT=N [FAULT_CALL=rename,fsync] [FAULT_DIR=/abs/dir] \
 *       [FAULT_TRACE=file] [FAULT_MODE=kill|abort|exit] program ...
 *
 * A fault point is a call of write, pwrite, writev, fsync, fdatasync, rename, renameat,
 * renameat2, linkat, unlink, unlinkat or rmdir, or an fflush/fclose of a stream open for
 * writing (glibc's stdio writes through its own internal write, which no shim sees: the data
 * of a FILE reaches the kernel there). Only these count:
 *   FAULT_CALL  a comma separated list of kinds (write, pwrite, writev, fsync, fdatasync,
 *               rename, renameat, renameat2, linkat, unlink, unlinkat, rmdir, fflush, fclose);
 *               default: all
 *   FAULT_DIR   only calls on a file whose path (of the fd, or of either name) starts with
 *               this directory; default: every file (sockets, pipes and ttys included)
 * Counted calls are numbered from 1 across all threads. At call number FAULT_AT the process
 * dies BEFORE the call is made: SIGKILL (default), abort() or _exit(99) (FAULT_MODE). Without
 * FAULT_AT (or 0) nothing dies: the shim only counts.
 * FAULT_TRACE appends one line per counted call, written before the call is made:
 *   "N KIND PATH [-> PATH2]" and, for the call that kills, "N KIND PATH [-> PATH2] FAULT"
 * so the number of lines of a run without a fault is the number of fault points.
 * The shim removes LD_PRELOAD from the environment at start, so programs the process runs are
 * not counted (FAULT_INHERIT=1 keeps it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind {
	K_WRITE, K_PWRITE, K_WRITEV, K_FSYNC, K_FDATASYNC, K_RENAME, K_RENAMEAT, K_RENAMEAT2,
	K_LINKAT, K_UNLINK, K_UNLINKAT, K_RMDIR, K_FFLUSH, K_FCLOSE, K_COUNT
};

static const char *const kind_names[K_COUNT] = {
	"write", "pwrite", "writev", "fsync", "fdatasync", "rename", "renameat", "renameat2",
	"linkat", "unlink", "unlinkat", "rmdir", "fflush", "fclose",
};

static unsigned long fault_at;		/* 0: never */
static unsigned long counter;		/* atomic */
static unsigned int kind_mask = ~0u;
static char fault_dir[PATH_MAX];
static size_t fault_dir_len;
static int trace_fd = -1;
static int mode;			/* 0 kill, 1 abort, 2 _exit */
static __thread int busy;		/* no counting inside the shim itself */

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned int);
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_rmdir)(const char *);
static int (*real_fflush)(FILE *);
static int (*real_fclose)(FILE *);

#define RESOLVE(name) (real_##name = dlsym(RTLD_NEXT, #name))

static void resolve_all(void)
{
	RESOLVE(write);
	RESOLVE(pwrite);
	RESOLVE(writev);
	RESOLVE(fsync);
	RESOLVE(fdatasync);
	RESOLVE(rename);
	RESOLVE(renameat);
	RESOLVE(renameat2);
	RESOLVE(linkat);
	RESOLVE(unlink);
	RESOLVE(unlinkat);
	RESOLVE(rmdir);
	RESOLVE(fflush);
	RESOLVE(fclose);
}

/* FAULT_CALL: the kinds to count. */
static void parse_kinds(const char *list)
{
	char buf[256], *tok, *save = NULL;
	int k;

	snprintf(buf, sizeof(buf), "%s", list);
	kind_mask = 0;
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
		for (k = 0; k < K_COUNT; k++)
			if (!strcmp(tok, kind_names[k]))
				kind_mask |= 1u << k;
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *v;

	busy = 1;
	resolve_all();
	v = getenv("FAULT_AT");
	if (v)
		fault_at = strtoul(v, NULL, 10);
	v = getenv("FAULT_CALL");
	if (v && *v)
		parse_kinds(v);
	v = getenv("FAULT_DIR");
	if (v && *v) {
		snprintf(fault_dir, sizeof(fault_dir), "%s", v);
		fault_dir_len = strlen(fault_dir);
		while (fault_dir_len > 1 && fault_dir[fault_dir_len - 1] == '/')
			fault_dir[--fault_dir_len] = '\0';
	}
	v = getenv("FAULT_MODE");
	if (v)
		mode = !strcmp(v, "abort") ? 1 : !strcmp(v, "exit") ? 2 : 0;
	v = getenv("FAULT_TRACE");
	if (v && *v)
		trace_fd = (int)syscall(SYS_openat, AT_FDCWD, v,
					O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	v = getenv("FAULT_INHERIT");
	if (!v || strcmp(v, "1"))
		unsetenv("LD_PRELOAD");
	busy = 0;
}

/* The path of @fd into @buf ("" when unknown). */
static void fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	buf[n < 0 ? 0 : n] = '\0';
}

/* The absolute path of @name relative to @dirfd into @buf. */
static void at_path(int dirfd, const char *name, char *buf, size_t size)
{
	char dir[PATH_MAX];

	if (!name) {
		buf[0] = '\0';
		return;
	}
	if (name[0] == '/') {
		snprintf(buf, size, "%s", name);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(dir, sizeof(dir)))
			dir[0] = '\0';
	} else {
		fd_path(dirfd, dir, sizeof(dir));
	}
	snprintf(buf, size, "%s/%s", dir, name);
}

static int in_dir(const char *path)
{
	if (!fault_dir_len)
		return 1;
	return !strncmp(path, fault_dir, fault_dir_len) &&
	       (path[fault_dir_len] == '/' || path[fault_dir_len] == '\0');
}

static void trace(unsigned long n, enum kind k, const char *p1, const char *p2, int fatal)
{
	char line[2 * PATH_MAX + 64];
	int len;

	if (trace_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%lu %s %s%s%s%s\n", n, kind_names[k], p1,
		       p2 ? " -> " : "", p2 ? p2 : "", fatal ? " FAULT" : "");
	if (len > (int)sizeof(line) - 1)
		len = (int)sizeof(line) - 1;
	syscall(SYS_write, trace_fd, line, (size_t)len);
}

static void die(void)
{
	switch (mode) {
	case 1:
		abort();
	case 2:
		_exit(99);
	default:
		syscall(SYS_kill, getpid(), SIGKILL);
		for (;;)
			pause();
	}
}

/* Counts one call of kind @k on @p1 (and @p2); dies when it is the FAULT_AT-th. */
static void point(enum kind k, const char *p1, const char *p2)
{
	unsigned long n;

	if (!(kind_mask & (1u << k)) || !(in_dir(p1) || (p2 && in_dir(p2))))
		return;
	n = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
	trace(n, k, p1, p2, n == fault_at);
	if (n == fault_at)
		die();
}

static void point_fd(enum kind k, int fd)
{
	char p[PATH_MAX];
	int saved = errno;

	if (busy)
		return;
	busy = 1;
	fd_path(fd, p, sizeof(p));
	point(k, p, NULL);
	busy = 0;
	errno = saved;
}

static void point_at(enum kind k, int d1, const char *n1, int d2, const char *n2)
{
	char p1[PATH_MAX], p2[PATH_MAX];
	int saved = errno;

	if (busy)
		return;
	busy = 1;
	at_path(d1, n1, p1, sizeof(p1));
	if (n2)
		at_path(d2, n2, p2, sizeof(p2));
	point(k, p1, n2 ? p2 : NULL);
	busy = 0;
	errno = saved;
}

/* A stream counts when it is open for writing. */
static void point_stream(enum kind k, FILE *f)
{
	int fd, fl;

	if (!f || busy)
		return;
	fd = fileno(f);
	if (fd < 0)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return;
	point_fd(k, fd);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	point_fd(K_WRITE, fd);
	return real_write(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	point_fd(K_PWRITE, fd);
	return real_pwrite(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	point_fd(K_WRITEV, fd);
	return real_writev(fd, iov, n);
}

int fsync(int fd)
{
	point_fd(K_FSYNC, fd);
	return real_fsync(fd);
}

int fdatasync(int fd)
{
	point_fd(K_FDATASYNC, fd);
	return real_fdatasync(fd);
}

int rename(const char *a, const char *b)
{
	point_at(K_RENAME, AT_FDCWD, a, AT_FDCWD, b);
	return real_rename(a, b);
}

int renameat(int da, const char *a, int db, const char *b)
{
	point_at(K_RENAMEAT, da, a, db, b);
	return real_renameat(da, a, db, b);
}

int renameat2(int da, const char *a, int db, const char *b, unsigned int flags)
{
	point_at(K_RENAMEAT2, da, a, db, b);
	return real_renameat2(da, a, db, b, flags);
}

int linkat(int da, const char *a, int db, const char *b, int flags)
{
	point_at(K_LINKAT, da, a, db, b);
	return real_linkat(da, a, db, b, flags);
}

int unlink(const char *p)
{
	point_at(K_UNLINK, AT_FDCWD, p, AT_FDCWD, NULL);
	return real_unlink(p);
}

int unlinkat(int d, const char *p, int flags)
{
	point_at(K_UNLINKAT, d, p, AT_FDCWD, NULL);
	return real_unlinkat(d, p, flags);
}

int rmdir(const char *p)
{
	point_at(K_RMDIR, AT_FDCWD, p, AT_FDCWD, NULL);
	return real_rmdir(p);
}

int fflush(FILE *f)
{
	point_stream(K_FFLUSH, f);
	return real_fflush(f);
}

int fclose(FILE *f)
{
	point_stream(K_FCLOSE, f);
	return real_fclose(f);
}
