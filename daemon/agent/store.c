// SPDX-License-Identifier: Apache-2.0
/*
 * store: a directory per profile, made atomic by building it under a .tmp- name and renaming
 * it (renameat2 RENAME_NOREPLACE, so two adds can never swap one another's profile), and an
 * array of entries sorted by created_ns, oldest first, behind one mutex. Files are copied
 * outside the lock; only the rename, the index update and retention hold it.
 */
#include "daemon/agent/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PROFILES "profiles"
#define META_NAME "meta.json"
#define TMP_PREFIX ".tmp-"
#define META_VERSION 1
#define NS_PER_S 1000000000LL
/* Nested directories rm_tree() descends into; a profile has none, this only bounds the walk. */
#define RM_MAX_DEPTH 4

struct store {
	pthread_mutex_t lock;
	struct symstore *symbols; /* borrowed, or NULL */
	int pfd;		  /* DIR/profiles, O_DIRECTORY */
	char *dir;
	char *pdir; /* DIR/profiles */
	unsigned int retention;
	int64_t continuous_ns;
	size_t max_entries;
	store_clock_fn_t clock;
	void *clock_ctx;
	int64_t last_created;  /* created_ns handed out last (strictly increasing) */
	struct store_meta **v; /* oldest first by (created_ns, id) */
	size_t n, cap;
};

static const char *const file_names[STORE_FILE_COUNT] = {
	[STORE_FILE_PPROF] = "profile.pb.gz",
	[STORE_FILE_COLLAPSED] = "profile.collapsed",
	[STORE_FILE_SUMMARY] = "summary.json",
	[STORE_FILE_FLAMEGRAPH] = "flamegraph.html",
};

const char *store_file_name(enum store_file f)
{
	return (unsigned)f < STORE_FILE_COUNT ? file_names[f] : NULL;
}

static int64_t realtime_ns(void *ctx)
{
	(void)ctx;
	return clock_real_ns();
}

bool store_id_valid(const char *id)
{
	/* YYYYMMDDTHHMMSSZ-hhhhhh */
	static const char form[] = "DDDDDDDDTDDDDDDZ-hhhhhh";
	size_t i;

	if (!id)
		return false;
	for (i = 0; form[i]; i++) {
		char c = id[i];

		switch (form[i]) {
		case 'D':
			if (c < '0' || c > '9')
				return false;
			break;
		case 'h':
			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return false;
			break;
		default:
			if (c != form[i])
				return false;
		}
	}
	return id[i] == '\0';
}

void store_make_id(int64_t now_ns, char id[STORE_ID_SIZE])
{
	time_t secs = (time_t)(now_ns / NS_PER_S);
	unsigned char r[3] = { 0 };
	struct tm tm;

	/* Not a secret (ids are listed to every Viewer); only unique within a second. */
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		uint64_t x = (uint64_t)now_ns * 0x9e3779b97f4a7c15ULL;

		r[0] = x >> 40;
		r[1] = x >> 48;
		r[2] = x >> 56;
	}
	char stamp[32];

	gmtime_r(&secs, &tm);
	if (tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0)
		tm.tm_year = 9999 - 1900;
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(id, STORE_ID_SIZE, "%.16s-%02x%02x%02x", stamp, r[0], r[1], r[2]);
}

static void format_time(int64_t ns, char *buf, size_t size)
{
	clock_rfc3339(buf, size, ns, 0);
}

char *store_meta_json(const struct store_meta *m)
{
	char start[CLOCK_RFC3339_MAX], created[CLOCK_RFC3339_MAX];
	json_t *doc, *langs;
	char *text;
	size_t i;

	format_time(m->start_ns, start, sizeof(start));
	format_time(m->created_ns, created, sizeof(created));
	langs = json_array();
	for (i = 0; langs && i < m->nlanguages && i < STORE_MAX_LANGUAGES; i++)
		json_array_append_new(langs, json_string(m->languages[i]));
	doc = json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:I, s:i, s:s, s:o*, s:I, s:b,"
			" s:s, s:I}",
			"version", META_VERSION, "id", m->id, "service", m->service, "question",
			m->question, "target", "kind", m->target_kind, "description", m->target,
			"start", start, "start_ns", (json_int_t)m->start_ns, "duration_seconds",
			(int)m->duration_s, "answer", m->answer, "languages", langs, "sample_count",
			(json_int_t)m->samples, "continuous", m->continuous, "created", created,
			"created_ns", (json_int_t)m->created_ns);
	if (doc && m->ns[0])
		json_object_set_new(doc, "namespace", json_string(m->ns));
	if (!doc)
		return NULL;
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

static int copy_str(char *dst, size_t size, json_t *v)
{
	const char *s = json_string_value(v);

	if (!s || strlen(s) >= size)
		return -EINVAL;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

int store_meta_parse(const char *text, size_t len, struct store_meta *out)
{
	struct store_meta m;
	json_t *doc, *target, *langs, *v;
	json_int_t version, start_ns, duration, samples, created_ns;
	int cont = 0, err = -EINVAL;
	size_t i;

	memset(&m, 0, sizeof(m));
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return -EINVAL;
	if (json_unpack(doc, "{s:I, s:o, s:I, s:I, s:o, s:I, s:I, s?b}", "version", &version,
			"target", &target, "start_ns", &start_ns, "duration_seconds", &duration,
			"languages", &langs, "sample_count", &samples, "created_ns", &created_ns,
			"continuous", &cont))
		goto out;
	if (version != META_VERSION || !json_is_array(langs) || start_ns < 0 || created_ns < 0 ||
	    duration < 0 || duration > 24 * 3600 || samples < 0)
		goto out;
	if (copy_str(m.id, sizeof(m.id), json_object_get(doc, "id")) || !store_id_valid(m.id) ||
	    copy_str(m.service, sizeof(m.service), json_object_get(doc, "service")) ||
	    copy_str(m.question, sizeof(m.question), json_object_get(doc, "question")) ||
	    copy_str(m.answer, sizeof(m.answer), json_object_get(doc, "answer")) ||
	    copy_str(m.target_kind, sizeof(m.target_kind), json_object_get(target, "kind")) ||
	    copy_str(m.target, sizeof(m.target), json_object_get(target, "description")))
		goto out;
	/* optional: profiles stored before namespaces were kept have none */
	v = json_object_get(doc, "namespace");
	if (v && copy_str(m.ns, sizeof(m.ns), v))
		goto out;
	json_array_foreach(langs, i, v) {
		if (i >= STORE_MAX_LANGUAGES)
			break;
		if (copy_str(m.languages[i], sizeof(m.languages[i]), v))
			goto out;
		m.nlanguages = i + 1;
	}
	m.start_ns = start_ns;
	m.duration_s = (unsigned int)duration;
	m.samples = (uint64_t)samples;
	m.continuous = cont;
	m.created_ns = created_ns;
	*out = m;
	err = 0;
out:
	json_decref(doc);
	return err;
}

/* Removes @name (a file or a directory tree of bounded depth) under @dfd. */
static int rm_tree(int dfd, const char *name)
{
	return rm_tree_at(dfd, name, RM_MAX_DEPTH - 1);
}

/* Copies @name from @sfd to @dfd (new file), fsynced. -ENOENT when the source is missing. */
static int copy_file(int sfd, int dfd, const char *name)
{
	char buf[65536];
	struct stat st;
	int in, out = -1, err;
	ssize_t n;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > STORE_MAX_FILE_BYTES) {
		err = -EFBIG;
		goto out;
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		goto out;
	}
	for (uint64_t total = 0;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0) {
			err = -errno;
			if (err == -EINTR)
				continue;
			goto out;
		}
		if (n == 0)
			break;
		total += n;
		if (total > STORE_MAX_FILE_BYTES) {
			err = -EFBIG;
			goto out;
		}
		err = write_all(out, buf, (size_t)n);
		if (err)
			goto out;
	}
	if (fsync(out) < 0) {
		err = -errno;
		goto out;
	}
	err = 0;
out:
	if (out >= 0 && close(out) < 0 && !err)
		err = -errno;
	close(in);
	return err;
}

static int write_meta(int dfd, const struct store_meta *m)
{
	char *text;
	int fd, err;

	text = store_meta_json(m);
	if (!text)
		return -ENOMEM;
	fd = openat(dfd, META_NAME, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		free(text);
		return err;
	}
	err = write_all(fd, text, strlen(text));
	if (!err)
		err = write_all(fd, "\n", 1);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	free(text);
	return err;
}

static int cmp_entry(const struct store_meta *a, const struct store_meta *b)
{
	if (a->created_ns != b->created_ns)
		return a->created_ns < b->created_ns ? -1 : 1;
	return strcmp(a->id, b->id);
}

static int cmp_entry_p(const void *a, const void *b)
{
	return cmp_entry(*(struct store_meta *const *)a, *(struct store_meta *const *)b);
}

static ssize_t find_locked(struct store *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i]->id, id))
			return (ssize_t)i;
	return -1;
}

/* Removes entry @i from disk (through a .tmp- name, so a crash leaves no half entry) and from
 * the index. On failure the entry stays. */
static int remove_locked(struct store *s, size_t i)
{
	char tmp[64];
	int err;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "rm-%s", s->v[i]->id);
	if (renameat(s->pfd, s->v[i]->id, s->pfd, tmp) < 0) {
		err = -errno;
		if (err != -ENOENT)
			return pr_warn_errno(err, "store: rename %s/%s", s->pdir, s->v[i]->id);
	} else {
		err = rm_tree(s->pfd, tmp);
		if (err)
			/* gone from the index; the .tmp- leftover is removed at the next start */
			pr_warn_errno(err, "store: remove %s/%s", s->pdir, tmp);
	}
	free(s->v[i]);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
	s->n--;
	return 0;
}

static int cmp_service_newest(const void *a, const void *b, void *arg)
{
	struct store_meta **v = arg;
	const struct store_meta *x = v[*(const size_t *)a], *y = v[*(const size_t *)b];
	int c = strcmp(x->ns, y->ns);

	if (!c)
		c = strcmp(x->service, y->service);
	return c ? c : -cmp_entry(x, y);
}

/* The same retention group: (namespace, service). */
static bool same_group(const struct store_meta *x, const struct store_meta *y)
{
	return !strcmp(x->ns, y->ns) && !strcmp(x->service, y->service);
}

bool store_meta_of_service(const struct store_meta *m, const char *service)
{
	const char *slash;

	if (!service)
		return true;
	slash = strchr(service, '/');
	if (!slash)
		return !strcmp(m->service, service);
	return strlen(m->ns) == (size_t)(slash - service) &&
	       !strncmp(m->ns, service, slash - service) && !strcmp(m->service, slash + 1);
}

/* Every service at once (at start, when retention may have been lowered): sort the listed
 * entries by (service, newest first), doom each past the first N of its run, then remove the
 * doomed ones, newest index first so earlier indices stay valid. */
static void retention_all_locked(struct store *s)
{
	size_t *idx, i, k = 0, run = 0;
	bool *doomed;

	idx = calloc(s->n ? s->n : 1, sizeof(*idx));
	doomed = calloc(s->n ? s->n : 1, sizeof(*doomed));
	if (!idx || !doomed)
		goto out;
	for (i = 0; i < s->n; i++)
		if (!s->v[i]->continuous)
			idx[k++] = i;
	qsort_r(idx, k, sizeof(*idx), cmp_service_newest, s->v);
	for (i = 0; i < k; i++) {
		run = i && same_group(s->v[idx[i]], s->v[idx[i - 1]]) ? run + 1 : 1;
		doomed[idx[i]] = run > s->retention;
	}
	for (i = s->n; i-- > 0;)
		if (doomed[i])
			remove_locked(s, i);
out:
	free(idx);
	free(doomed);
}

/* What the bound on entries removes first: the oldest continuous window, then the oldest
 * entry. Short windows make many entries (5 s ones, 17280 a day): they must not push out the
 * profiles people asked for. */
static size_t oldest_locked(struct store *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i]->continuous)
			return i;
	return 0;
}

/* Retention after @added (NULL: every group) was stored. */
static void retention_locked(struct store *s, const struct store_meta *added)
{
	char ns[STORE_NS_MAX], service[STORE_NAME_MAX];
	int64_t now = s->clock(s->clock_ctx);
	size_t i, count = 0;

	/* a copy: removing entries below must not pull the group from under us */
	if (added) {
		snprintf(ns, sizeof(ns), "%s", added->ns);
		snprintf(service, sizeof(service), "%s", added->service);
	}

	/* continuous entries expire by age */
	for (i = 0; i < s->n;) {
		if (s->v[i]->continuous && s->v[i]->created_ns < now - s->continuous_ns &&
		    !remove_locked(s, i))
			continue;
		i++;
	}
	/* the latest N listed entries of (@ns, @service): walk newest first, remove past N */
	if (added) {
		for (i = s->n; i-- > 0;) {
			if (s->v[i]->continuous || strcmp(s->v[i]->ns, ns) ||
			    strcmp(s->v[i]->service, service))
				continue;
			if (++count > s->retention)
				remove_locked(s, i);
		}
	} else {
		retention_all_locked(s);
	}
	while (s->n > s->max_entries)
		if (remove_locked(s, oldest_locked(s)))
			break;
}

static int insert_locked(struct store *s, struct store_meta *m)
{
	size_t i;

	if (array_ensure((void **)&s->v, &s->cap, sizeof(*s->v), s->n + 1))
		return -ENOMEM;
	for (i = s->n; i > 0 && cmp_entry(s->v[i - 1], m) > 0; i--)
		;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i] = m;
	s->n++;
	return 0;
}

static int load_entry(struct store *s, const char *name)
{
	struct store_meta *m;
	char path[NAME_MAX + sizeof(META_NAME) + 2], *text = NULL;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/" META_NAME, name);
	err = read_file_bounded(s->pfd, path, STORE_META_MAX_BYTES, &text, &len);
	if (err)
		return pr_warn_errno(err, "store: skipping %s/%s", s->pdir, path);
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(text);
		return -ENOMEM;
	}
	err = store_meta_parse(text, len, m);
	free(text);
	if (err || strcmp(m->id, name)) {
		free(m);
		pr_warn("store: skipping %s/%s: not a valid meta.json of this profile", s->pdir,
			path);
		return -EINVAL;
	}
	if (m->created_ns > s->last_created)
		s->last_created = m->created_ns;
	/* appended; scan() sorts once at the end */
	if (array_ensure((void **)&s->v, &s->cap, sizeof(*s->v), s->n + 1)) {
		free(m);
		return -ENOMEM;
	}
	s->v[s->n++] = m;
	return 0;
}

static int scan(struct store *s)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	fd = openat(s->pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			/* a profile being written or deleted when the agent stopped */
			pr_info("store: removing unfinished %s/%s", s->pdir, de->d_name);
			rm_tree(s->pfd, de->d_name);
			continue;
		}
		if (!store_id_valid(de->d_name))
			continue;
		err = load_entry(s, de->d_name);
		if (err == -ENOMEM)
			break;
		err = 0;
	}
	closedir(d);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_entry_p);
	if (!err)
		fsync(s->pfd);
	return err;
}

void store__free(struct store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	if (s->pfd >= 0)
		close(s->pfd);
	free(s->dir);
	free(s->pdir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int store__new(const struct store_opts *opts, struct store **out)
{
	struct store *s;
	int err;

	if (!opts || !opts->dir || !opts->dir[0])
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pfd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->retention = opts->retention_per_service ?: STORE_DEFAULT_RETENTION;
	s->continuous_ns = (int64_t)(opts->continuous_retention_hours ?:
					     STORE_DEFAULT_CONTINUOUS_HOURS) *
			   3600 * NS_PER_S;
	s->max_entries = opts->max_entries ?: STORE_DEFAULT_MAX_ENTRIES;
	s->clock = opts->clock ?: realtime_ns;
	s->clock_ctx = opts->clock_ctx;
	s->symbols = opts->symbols;
	s->dir = strdup(opts->dir);
	if (!s->dir || asprintf(&s->pdir, "%s/" PROFILES, opts->dir) < 0) {
		s->pdir = NULL;
		err = -ENOMEM;
		goto err_free;
	}
	err = mkdir_p(s->pdir);
	if (err) {
		pr_err_errno(err, "store: mkdir %s", s->pdir);
		goto err_free;
	}
	s->pfd = open(s->pdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->pfd < 0) {
		err = pr_err_errno(-errno, "store: open %s", s->pdir);
		goto err_free;
	}
	err = scan(s);
	if (err) {
		pr_err_errno(err, "store: reading %s", s->pdir);
		goto err_free;
	}
	retention_locked(s, NULL);
	pr_info("store: %zu profiles in %s", s->n, s->pdir);
	*out = s;
	return 0;

err_free:
	store__free(s);
	return err;
}

static void next_created(struct store *s)
{
	int64_t now = s->clock(s->clock_ctx);

	if (now <= s->last_created)
		now = s->last_created + 1;
	s->last_created = now;
}

/* Every string of @meta terminated, and a valid id when one is set. */
static bool meta_valid(const struct store_meta *meta)
{
	size_t i;

	if ((meta->id[0] && !store_id_valid(meta->id)) || !meta->service[0] ||
	    !memchr(meta->service, '\0', sizeof(meta->service)) ||
	    !memchr(meta->ns, '\0', sizeof(meta->ns)) ||
	    !memchr(meta->answer, '\0', sizeof(meta->answer)) ||
	    !memchr(meta->target, '\0', sizeof(meta->target)) ||
	    !memchr(meta->question, '\0', sizeof(meta->question)) ||
	    !memchr(meta->target_kind, '\0', sizeof(meta->target_kind)) ||
	    meta->nlanguages > STORE_MAX_LANGUAGES)
		return false;
	for (i = 0; i < meta->nlanguages; i++)
		if (!memchr(meta->languages[i], '\0', STORE_LANGUAGE_MAX))
			return false;
	return true;
}

/* A copy of @meta whose strings jansson accepts and none of which can break a line. */
static struct store_meta *sanitized_copy(const struct store_meta *meta)
{
	struct store_meta *m = malloc(sizeof(*m));
	size_t i;

	if (!m)
		return NULL;
	*m = *meta;
	text_utf8_sanitize(m->service);
	text_utf8_sanitize(m->ns);
	text_utf8_sanitize(m->question);
	text_utf8_sanitize(m->target_kind);
	text_utf8_sanitize(m->target);
	text_utf8_sanitize(m->answer);
	for (i = 0; i < m->nlanguages; i++)
		text_utf8_sanitize(m->languages[i]);
	return m;
}

/* Stamps @m with its creation time and, unless @preset, a new id. Returns 0, or -EEXIST
 * when the preset id is taken. */
static int claim_id(struct store *s, struct store_meta *m, bool preset)
{
	int err = 0;

	pthread_mutex_lock(&s->lock);
	next_created(s);
	m->created_ns = s->last_created;
	if (preset && find_locked(s, m->id) >= 0)
		err = -EEXIST;
	pthread_mutex_unlock(&s->lock);
	if (!err && !preset)
		store_make_id(m->created_ns, m->id);
	return err;
}

/* Copies the files of @files_dir and meta.json into the new directory @tmp, fsynced. Returns
 * 0 or -errno (what it created of @tmp is then removed again). */
static int write_tmp(struct store *s, const struct store_meta *m, const char *files_dir,
		     const char *tmp)
{
	int sfd, tfd = -1, err;
	size_t i;

	sfd = open(files_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return -errno;
	if (mkdirat(s->pfd, tmp, 0755) < 0) {
		err = -errno;
		close(sfd);
		return err;
	}
	tfd = openat(s->pfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = tfd < 0 ? -errno : 0;
	for (i = 0; !err && i < STORE_FILE_COUNT; i++) {
		err = copy_file(sfd, tfd, file_names[i]);
		if (err == -ENOENT && i == STORE_FILE_FLAMEGRAPH)
			err = 0;
	}
	if (!err)
		err = write_meta(tfd, m);
	if (!err && fsync(tfd) < 0)
		err = -errno;
	if (tfd >= 0)
		close(tfd);
	close(sfd);
	if (err)
		rm_tree(s->pfd, tmp);
	return err;
}

/* Renames @tmp to the id and indexes @m (owned by the index on success). Returns 0 or -errno;
 * disk and index agree either way. */
static int publish(struct store *s, struct store_meta *m, const char *tmp, char *id_out)
{
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (find_locked(s, m->id) >= 0) {
		err = -EEXIST;
	} else if (renameat2(s->pfd, tmp, s->pfd, m->id, RENAME_NOREPLACE) < 0) {
		err = -errno;
		/* a file system without RENAME_NOREPLACE */
		if (err == -EINVAL && faccessat(s->pfd, m->id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		    renameat(s->pfd, tmp, s->pfd, m->id) == 0)
			err = 0;
	}
	if (!err) {
		fsync(s->pfd);
		err = insert_locked(s, m);
		if (err) {
			/* undo, so disk and index agree */
			renameat(s->pfd, m->id, s->pfd, tmp);
		} else {
			if (id_out)
				memcpy(id_out, m->id, STORE_ID_SIZE);
			retention_locked(s, m->continuous ? NULL : m);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int store__add(struct store *s, const struct store_meta *meta, const char *files_dir, char *id_out)
{
	struct store_meta *m;
	char tmp[64];
	bool preset;
	int err;

	if (!s || !meta || !files_dir || !meta_valid(meta))
		return -EINVAL;
	preset = meta->id[0] != '\0';
	m = sanitized_copy(meta);
	if (!m)
		return -ENOMEM;
	err = claim_id(s, m, preset);
	if (err)
		goto out_free;
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s", m->id);
	err = write_tmp(s, m, files_dir, tmp);
	if (err)
		goto out_free;
	err = publish(s, m, tmp, id_out);
	if (!err)
		return 0; /* @m is the index's now */
	rm_tree(s->pfd, tmp);
out_free:
	free(m);
	return err;
}

size_t store__list(struct store *s, const char *service, size_t offset, struct store_meta *out,
		   size_t max, size_t *total)
{
	return store__list_q(s, service, NULL, offset, out, max, total);
}

size_t store__list_q(struct store *s, const char *service, const char *question, size_t offset,
		     struct store_meta *out, size_t max, size_t *total)
{
	size_t i, matches = 0, n = 0;

	pthread_mutex_lock(&s->lock);
	for (i = s->n; i-- > 0;) {
		const struct store_meta *m = s->v[i];

		if (m->continuous || !store_meta_of_service(m, service) ||
		    (question && strcmp(m->question, question)))
			continue;
		if (matches++ < offset)
			continue;
		if (n < max)
			out[n++] = *m;
	}
	pthread_mutex_unlock(&s->lock);
	if (total)
		*total = matches;
	return n;
}

/* True when continuous entry @m's window overlaps [@from, @until). */
static bool window_overlaps(const struct store_meta *m, int64_t from, int64_t until)
{
	int64_t len = (int64_t)m->duration_s * NS_PER_S;
	int64_t end = m->start_ns > INT64_MAX - len ? INT64_MAX : m->start_ns + len;

	if (!m->continuous || m->start_ns >= until)
		return false;
	return len ? end > from : m->start_ns >= from;
}

static int cmp_start(const void *a, const void *b)
{
	const struct store_meta *x = *(struct store_meta *const *)a;
	const struct store_meta *y = *(struct store_meta *const *)b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

ssize_t store__list_continuous(struct store *s, int64_t from_ns, int64_t until_ns,
			       bool oldest_first, struct store_meta *out, size_t max, size_t *total)
{
	const struct store_meta **v;
	size_t i, k = 0, n;

	pthread_mutex_lock(&s->lock);
	v = malloc((s->n ? s->n : 1) * sizeof(*v)); /* at most max_entries pointers */
	if (!v) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	for (i = 0; i < s->n && from_ns < until_ns; i++)
		if (window_overlaps(s->v[i], from_ns, until_ns))
			v[k++] = s->v[i];
	qsort(v, k, sizeof(*v), cmp_start);
	n = k < max ? k : max;
	for (i = 0; i < n; i++)
		out[i] = *v[oldest_first ? i : k - 1 - i];
	pthread_mutex_unlock(&s->lock);
	free(v);
	if (total)
		*total = k;
	return (ssize_t)n;
}

int store__get(struct store *s, const char *id, struct store_meta *out)
{
	ssize_t i;

	if (!store_id_valid(id))
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	i = find_locked(s, id);
	if (i >= 0)
		*out = *s->v[i];
	pthread_mutex_unlock(&s->lock);
	return i >= 0 ? 0 : -ENOENT;
}

int store__open_file(struct store *s, const char *id, enum store_file f, int *fd, uint64_t *size)
{
	char path[STORE_ID_SIZE + 32];
	struct stat st;
	int err = 0, ffd = -1;

	if (!store_id_valid(id) || (unsigned)f >= STORE_FILE_COUNT)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", id, file_names[f]);
	pthread_mutex_lock(&s->lock);
	if (find_locked(s, id) < 0) {
		err = -ENOENT;
	} else {
		ffd = openat(s->pfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (ffd < 0)
			err = -errno;
	}
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	if (fstat(ffd, &st) < 0) {
		err = -errno;
		close(ffd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(ffd);
		return -EINVAL;
	}
	*fd = ffd;
	*size = (uint64_t)st.st_size;
	return 0;
}

int store__delete(struct store *s, const char *id)
{
	ssize_t i;
	int err;

	if (!store_id_valid(id))
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	i = find_locked(s, id);
	err = i < 0 ? -ENOENT : remove_locked(s, (size_t)i);
	if (!err)
		fsync(s->pfd);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int store__remove_all(struct store *s)
{
	size_t i;
	int err;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
	err = rm_tree(AT_FDCWD, s->pdir);
	pthread_mutex_unlock(&s->lock);
	return err;
}

struct symstore *store__symbols(struct store *s)
{
	return s->symbols;
}

size_t store__count(struct store *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n;
	pthread_mutex_unlock(&s->lock);
	return n;
}
