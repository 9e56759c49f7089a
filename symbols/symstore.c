// SPDX-License-Identifier: Apache-2.0
#include "symbols/symstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"
#include "symbols/demangle.h"

#define SUFFIX ".sym"
#define TMP_PREFIX ".tmp."
/* "<build id>.sym" and the temp names fit this. */
#define NAME_BUF (SYMINDEX_BUILD_ID_MAX + 64)

struct rec {
	struct symindex_info info;
	uint64_t bytes;
	bool bad; /* its index failed to decode: logged once, then -ENOENT without reading */
};

struct cent {
	char build_id[SYMINDEX_BUILD_ID_MAX + 1];
	struct symindex *ix;
	uint64_t used; /* s->tick when last used */
};

struct symstore {
	pthread_mutex_t lock;
	bool lock_init;
	int dirfd;
	char *dir;
	size_t max_builds, cache_builds;
	uint64_t max_bytes, cache_bytes;
	struct rec *recs; /* sorted by build id */
	size_t n, cap;
	uint64_t bytes; /* of all index files */
	struct cent *cache;
	size_t ncache;
	uint64_t cache_mem, tick, tmp_seq;
	size_t skipped;
};

/* ---- the records ---- */

/* The index of @bid in s->recs, or where it would go (*@found false). */
static size_t rec_find(const struct symstore *s, const char *bid, bool *found)
{
	size_t lo = 0, hi = s->n, mid;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(s->recs[mid].info.build_id, bid);
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Inserts or replaces the record of @info->build_id. */
static int rec_set(struct symstore *s, const struct symindex_info *info, uint64_t bytes)
{
	bool found;
	size_t i = rec_find(s, info->build_id, &found);

	if (found) {
		s->bytes -= s->recs[i].bytes;
	} else {
		if (array_ensure((void **)&s->recs, &s->cap, sizeof(*s->recs), s->n + 1))
			return -ENOMEM;
		memmove(s->recs + i + 1, s->recs + i, (s->n - i) * sizeof(*s->recs));
		s->n++;
	}
	s->recs[i] = (struct rec){ .info = *info, .bytes = bytes };
	s->bytes += bytes;
	return 0;
}

static void rec_del(struct symstore *s, size_t i)
{
	s->bytes -= s->recs[i].bytes;
	memmove(s->recs + i, s->recs + i + 1, (s->n - i - 1) * sizeof(*s->recs));
	s->n--;
}

static void rec_entry(const struct rec *r, bool replaced, struct symstore_entry *e)
{
	memset(e, 0, sizeof(*e));
	strcpy(e->build_id, r->info.build_id);
	strcpy(e->file_name, r->info.file_name);
	strcpy(e->uploaded_by, r->info.uploaded_by);
	e->uploaded_at = r->info.uploaded_at;
	e->functions = r->info.functions;
	e->bytes = r->bytes;
	e->replaced = replaced;
}

/* ---- the cache of decoded indexes ---- */

static void cache_drop(struct symstore *s, size_t i)
{
	s->cache_mem -= symindex__mem(s->cache[i].ix);
	symindex__free(s->cache[i].ix);
	s->cache[i] = s->cache[--s->ncache];
}

static void cache_forget(struct symstore *s, const char *bid)
{
	size_t i;

	for (i = 0; i < s->ncache; i++)
		if (!strcmp(s->cache[i].build_id, bid)) {
			cache_drop(s, i);
			return;
		}
}

static struct symindex *cache_get(struct symstore *s, const char *bid)
{
	size_t i;

	for (i = 0; i < s->ncache; i++)
		if (!strcmp(s->cache[i].build_id, bid)) {
			s->cache[i].used = ++s->tick;
			return s->cache[i].ix;
		}
	return NULL;
}

/* Adds @ix (owned from here on) and evicts the least recently used others over the budget. */
static void cache_put(struct symstore *s, const char *bid, struct symindex *ix)
{
	size_t i, lru;

	while (s->ncache && (s->ncache + 1 > s->cache_builds ||
			     s->cache_mem + symindex__mem(ix) > s->cache_bytes)) {
		for (lru = 0, i = 1; i < s->ncache; i++)
			if (s->cache[i].used < s->cache[lru].used)
				lru = i;
		cache_drop(s, lru);
	}
	strcpy(s->cache[s->ncache].build_id, bid);
	s->cache[s->ncache].ix = ix;
	s->cache[s->ncache].used = ++s->tick;
	s->ncache++;
	s->cache_mem += symindex__mem(ix);
}

/* ---- files ---- */

static void file_name_of(const char *bid, char *buf)
{
	snprintf(buf, NAME_BUF, "%s" SUFFIX, bid);
}

/* The build id of index file name @name, or false. */
static bool parse_file_name(const char *name, char *bid)
{
	size_t len = strlen(name), sl = strlen(SUFFIX);

	if (len <= sl || len - sl > SYMINDEX_BUILD_ID_MAX || strcmp(name + len - sl, SUFFIX))
		return false;
	memcpy(bid, name, len - sl);
	bid[len - sl] = '\0';
	return symindex_valid_build_id(bid);
}

/* Reads the header of index file @name of build @bid. */
static int peek_file(int dirfd, const char *name, const char *bid, struct symindex_info *info,
		     uint64_t *bytes)
{
	uint8_t hdr[SYMINDEX_HEADER_MAX];
	struct stat st;
	ssize_t n;
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	err = -EBADMSG;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > SYMINDEX_MAX_BYTES)
		goto out_close;
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (n < 0) {
		err = -errno;
		goto out_close;
	}
	err = symindex_peek(hdr, (size_t)n, (uint64_t)st.st_size, info);
	if (!err && strcmp(info->build_id, bid))
		err = -EBADMSG;
	*bytes = (uint64_t)st.st_size;
out_close:
	close(fd);
	return err;
}

/* One directory entry at open: a stale temp file is removed, an index file read. */
static int scan_entry(struct symstore *s, const char *name)
{
	char bid[SYMINDEX_BUILD_ID_MAX + 1];
	struct symindex_info info;
	uint64_t bytes = 0;

	if (!strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX))) {
		unlinkat(s->dirfd, name, 0);
		return 0;
	}
	if (!parse_file_name(name, bid))
		return 0;
	if (s->n >= s->max_builds || peek_file(s->dirfd, name, bid, &info, &bytes)) {
		s->skipped++;
		return 0;
	}
	return rec_set(s, &info, bytes);
}

static int scan_dir(struct symstore *s)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while (!err && (de = readdir(d)))
		err = scan_entry(s, de->d_name);
	closedir(d);
	if (s->skipped)
		pr_warn("symstore: %zu index files in %s could not be read and are skipped",
			s->skipped, s->dir);
	return err;
}

static int open_dir(const char *dir)
{
	int fd, err;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		err = -errno;
		if (err != -ENOENT)
			return err;
		err = mkdir_p(dir);
		if (err)
			return err;
		if (chmod(dir, 0700) < 0)
			return -errno;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int symstore__open(const struct symstore_opts *o, struct symstore **out)
{
	struct symstore *s;
	int err;

	if (!o || !o->dir || !o->dir[0] || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = -1;
	s->max_builds = o->max_builds ? o->max_builds : SYMSTORE_DEFAULT_MAX_BUILDS;
	s->max_bytes = o->max_bytes ? o->max_bytes : SYMSTORE_DEFAULT_MAX_BYTES;
	s->cache_builds = o->cache_builds ? o->cache_builds : SYMSTORE_DEFAULT_CACHE_BUILDS;
	s->cache_bytes = o->cache_bytes ? o->cache_bytes : SYMSTORE_DEFAULT_CACHE_BYTES;
	err = -ENOMEM;
	s->dir = strdup(o->dir);
	s->cache = calloc(s->cache_builds, sizeof(*s->cache));
	if (!s->dir || !s->cache || pthread_mutex_init(&s->lock, NULL))
		goto err_free;
	s->lock_init = true;
	err = s->dirfd = open_dir(o->dir);
	if (err < 0)
		goto err_free;
	err = scan_dir(s);
	if (err)
		goto err_free;
	*out = s;
	return 0;

err_free:
	symstore__free(s);
	return err;
}

void symstore__free(struct symstore *s)
{
	if (!s)
		return;
	while (s->ncache)
		cache_drop(s, 0);
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->lock_init)
		pthread_mutex_destroy(&s->lock);
	free(s->cache);
	free(s->recs);
	free(s->dir);
	free(s);
}

size_t symstore__skipped(const struct symstore *s)
{
	return s ? s->skipped : 0;
}

/* ---- put ---- */

/*
 * Whether a build of @functions functions and @bytes index bytes may be stored now (lock
 * held): -EEXIST (a richer one is, its facts in @res), -ENOSPC or 0; @replaces says whether
 * one is replaced.
 */
static int check_put(struct symstore *s, const char *bid, uint64_t functions, uint64_t bytes,
		     bool *replaces, struct symstore_entry *res)
{
	bool found;
	size_t i = rec_find(s, bid, &found);
	uint64_t old = found ? s->recs[i].bytes : 0;

	if (found && s->recs[i].info.functions > functions) {
		if (res)
			rec_entry(&s->recs[i], false, res);
		return -EEXIST;
	}
	if ((!found && s->n >= s->max_builds) || s->bytes - old + bytes > s->max_bytes)
		return -ENOSPC;
	*replaces = found;
	return 0;
}

/* Writes @len bytes at @p to a new temp file of the directory, named in @tmp, fsync'd. */
static int write_temp(struct symstore *s, const char *bid, const void *p, size_t len, char *tmp)
{
	uint64_t seq;
	int fd, err;

	pthread_mutex_lock(&s->lock);
	seq = ++s->tmp_seq;
	pthread_mutex_unlock(&s->lock);
	snprintf(tmp, NAME_BUF, TMP_PREFIX "%s.%d.%llu", bid, (int)getpid(),
		 (unsigned long long)seq);
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, p, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err)
		unlinkat(s->dirfd, tmp, 0);
	return err;
}

/* Moves temp file @tmp into place as the index of @info (lock held). */
static int commit(struct symstore *s, const char *tmp, const struct symindex_info *info,
		  uint64_t bytes)
{
	char name[NAME_BUF];

	file_name_of(info->build_id, name);
	/* room first: once renamed, the record must be set */
	if (array_ensure((void **)&s->recs, &s->cap, sizeof(*s->recs), s->n + 1))
		return -ENOMEM;
	if (renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		return -errno;
	cache_forget(s, info->build_id);
	return rec_set(s, info, bytes);
}

static int put_locked(struct symstore *s, const char *tmp, const struct symindex_info *info,
		      uint64_t bytes, struct symstore_entry *res)
{
	bool replaces = false, found;
	int err;

	err = check_put(s, info->build_id, info->functions, bytes, &replaces, res);
	if (!err)
		err = commit(s, tmp, info, bytes);
	if (!err && res)
		rec_entry(&s->recs[rec_find(s, info->build_id, &found)], replaces, res);
	return err;
}

int symstore__put(struct symstore *s, const struct symindex_build *b, const char *file_name,
		  const char *by, int64_t at, struct symstore_entry *res)
{
	struct symindex_meta meta = { .file_name = file_name,
				      .uploaded_by = by,
				      .uploaded_at = at };
	struct symindex_info info;
	char tmp[NAME_BUF];
	bool replaces;
	void *data;
	size_t len;
	int err;

	if (!s || !symindex_build__sealed(b))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	err = check_put(s, symindex_build__build_id(b), symindex_build__count(b), 0, &replaces,
			res);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	err = symindex__encode(b, &meta, &data, &len);
	if (err)
		return err;
	err = symindex_peek(data, len, len, &info);
	if (!err)
		err = write_temp(s, info.build_id, data, len, tmp);
	free(data);
	if (err)
		return err;
	pthread_mutex_lock(&s->lock);
	err = put_locked(s, tmp, &info, len, res);
	pthread_mutex_unlock(&s->lock);
	if (err) {
		unlinkat(s->dirfd, tmp, 0);
		return err;
	}
	fsync(s->dirfd);
	return 0;
}

/* ---- list, delete, has ---- */

static int cmp_entry(const void *pa, const void *pb)
{
	const struct symstore_entry *a = pa, *b = pb;

	if (a->uploaded_at != b->uploaded_at)
		return a->uploaded_at > b->uploaded_at ? -1 : 1;
	return strcmp(a->build_id, b->build_id);
}

int symstore__list(struct symstore *s, struct symstore_entry **out, size_t *n)
{
	struct symstore_entry *list;
	size_t i, count;

	if (!s || !out || !n)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	count = s->n;
	list = calloc(count ? count : 1, sizeof(*list));
	for (i = 0; list && i < count; i++)
		rec_entry(&s->recs[i], false, &list[i]);
	pthread_mutex_unlock(&s->lock);
	if (!list)
		return -ENOMEM;
	qsort(list, count, sizeof(*list), cmp_entry);
	*out = list;
	*n = count;
	return 0;
}

void symstore_list_free(struct symstore_entry *list)
{
	free(list);
}

int symstore__delete(struct symstore *s, const char *build_id)
{
	char name[NAME_BUF];
	bool found;
	size_t i;
	int err = 0;

	if (!s || !symindex_valid_build_id(build_id))
		return -EINVAL;
	file_name_of(build_id, name);
	pthread_mutex_lock(&s->lock);
	i = rec_find(s, build_id, &found);
	if (!found)
		err = -ENOENT;
	else if (unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
		err = -errno;
	if (!err) {
		rec_del(s, i);
		cache_forget(s, build_id);
	}
	pthread_mutex_unlock(&s->lock);
	if (!err)
		fsync(s->dirfd);
	return err;
}

bool symstore__has(struct symstore *s, const char *build_id)
{
	bool found = false;

	if (!s || !symindex_valid_build_id(build_id))
		return false;
	pthread_mutex_lock(&s->lock);
	rec_find(s, build_id, &found);
	pthread_mutex_unlock(&s->lock);
	return found;
}

size_t symstore__count(struct symstore *s)
{
	size_t n;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	n = s->n;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* ---- name ---- */

/* Reads and decodes the index of record @r (lock held); a failure is logged once. */
static int load(struct symstore *s, struct rec *r, struct symindex **out)
{
	char name[NAME_BUF];
	size_t len;
	char *data;
	int err;

	file_name_of(r->info.build_id, name);
	err = read_file_bounded(s->dirfd, name, SYMINDEX_MAX_BYTES, &data, &len);
	if (!err) {
		err = symindex__decode(data, len, out);
		free(data);
	}
	if (err == -ENOMEM)
		return err;
	if (err) {
		r->bad = true;
		pr_warn_errno(err,
			      "symstore: the index of build %s in %s cannot be read; its "
			      "frames stay unnamed",
			      r->info.build_id, s->dir);
		return -ENOENT;
	}
	return 0;
}

static int name_locked(struct symstore *s, const char *bid, uint64_t addr, char *buf, size_t size)
{
	struct symindex *ix;
	const char *name;
	bool found;
	size_t i = rec_find(s, bid, &found);
	int err;

	if (!found || s->recs[i].bad)
		return -ENOENT;
	ix = cache_get(s, bid);
	if (!ix) {
		err = load(s, &s->recs[i], &ix);
		if (err)
			return err;
		cache_put(s, bid, ix);
	}
	name = symindex__lookup(ix, addr);
	if (!name)
		return -ENOENT;
	text_utf8_valid_copy(buf, size, name, strlen(name));
	return 0;
}

int symstore__name(struct symstore *s, const char *build_id, uint64_t addr, char *buf, size_t size)
{
	char *dem;
	int err;

	if (!s || !buf || !size || !symindex_valid_build_id(build_id))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	err = name_locked(s, build_id, addr, buf, size);
	pthread_mutex_unlock(&s->lock);
	/* indexes keep names as the file had them: C++ and Rust ones are made readable here */
	if (!err && demangle_wanted(buf) && (dem = demangle(buf)) != NULL) {
		text_utf8_valid_copy(buf, size, dem, strlen(dem));
		free(dem);
	}
	return err;
}
