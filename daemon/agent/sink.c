// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/sink.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "daemon/agent/http.h"
#include "daemon/agent/sink_http.h"

#define SEQ_DIGITS 20
#define TMP_PREFIX ".tmp-"
#define META_FILE "metadata.json"
#define PROF_FILE SINK_PROFILE_FILE
#define REASON_FILE "reason.txt"
#define DEAD_DIR "dead"
#define SEQ_FILE "seq"
#define DROPPED_LOG "dropped.log"
#define DROPPED_LOG_MAX (64 * 1024)
/* An item is a directory of files; dead/ holds such directories. */
#define ITEM_DEPTH 2

struct item {
	struct item *next;
	uint64_t seq;
	uint64_t bytes;
	bool in_flight;
	char id[SINK_ID_MAX + 1];
	char name[SINK_NAME_MAX];
};

struct sink {
	char *cluster_url; /* <base>/v1/profiles, or NULL */
	char *pyro_url;	   /* <base>/ingest, or NULL */
	char *token_file;  /* or NULL */
	char *app;
	char *dir;
	int dirfd;
	unsigned long long max_bytes;
	unsigned base_ms, cap_ms, timeout_ms;
	struct sink_clock clock;
	struct sink_http http; /* the transports' view of the above */

	pthread_mutex_t submit_lock; /* serializes sink__submit(): sequence order = spool order */
	pthread_mutex_t lock;	     /* the queue, the counters, next_attempt_ms */
	pthread_cond_t cond;	     /* work arrived, or stop */
	pthread_cond_t idle;	     /* an item left the queue */
	bool sync_init;
	struct item *head, *tail;
	uint64_t next_seq; /* only under submit_lock (or before the thread starts) */
	struct sink_stats st;
	uint64_t next_attempt_ms;
	atomic_bool stop;
	pthread_t thread;
	bool thread_started;
};

/* ---- Clock ---------------------------------------------------------------------------------- */

static uint64_t now_ms(struct sink *s)
{
	return s->clock.now_ms ? s->clock.now_ms(s->clock.ctx) : clock_mono_ms();
}

static time_t wall(struct sink *s)
{
	return sink_wall(&s->clock);
}

static uint32_t rnd32(struct sink *s)
{
	uint32_t r;

	if (s->clock.random)
		return s->clock.random(s->clock.ctx);
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	return (uint32_t)(clock_mono_ms() * 2654435761u);
}

/* ---- Spool files ---------------------------------------------------------------------------- */

static void fsync_dirfd(int dfd)
{
	if (dfd >= 0)
		fsync(dfd);
}

/* Removes @name (relative to @dfd): a file, or an item's directory. */
static int rm_tree(int dfd, const char *name)
{
	return rm_tree_at(dfd, name, ITEM_DEPTH);
}

struct buf {
	const void *p;
	size_t len;
};

static int write_buf(void *ctx, FILE *f)
{
	const struct buf *b = ctx;

	if (b->len && fwrite(b->p, 1, b->len, f) != b->len)
		return -EIO;
	return 0;
}

static int write_at(struct sink *s, const char *rel, const void *p, size_t len)
{
	char path[PATH_MAX];
	struct buf b = { p, len };

	if (snprintf(path, sizeof(path), "%s/%s", s->dir, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return atomic_write_file(path, write_buf, &b);
}

static int persist_seq(struct sink *s, uint64_t next)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "%" PRIu64 "\n", next);

	return write_at(s, SEQ_FILE, text, (size_t)n);
}

/* Writes the item into .tmp-<name>-XXXXXX, then renames the whole directory into place. */
static int write_item(struct sink *s, const char *name, const struct buf *meta,
		      const struct buf *prof)
{
	char tmp[PATH_MAX], rel[PATH_MAX], *tmpname;
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s/" TMP_PREFIX "%s-XXXXXX", s->dir, name) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (!mkdtemp(tmp))
		return -errno;
	tmpname = tmp + strlen(s->dir) + 1;
	snprintf(rel, sizeof(rel), "%s/" META_FILE, tmpname);
	err = write_at(s, rel, meta->p, meta->len);
	if (err)
		goto out_rm;
	snprintf(rel, sizeof(rel), "%s/" PROF_FILE, tmpname);
	err = write_at(s, rel, prof->p, prof->len);
	if (err)
		goto out_rm;
	fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_rm;
	}
	if (fsync(fd) < 0) {
		err = -errno;
		close(fd);
		goto out_rm;
	}
	close(fd);
	if (renameat(s->dirfd, tmpname, s->dirfd, name) < 0) {
		err = -errno;
		goto out_rm;
	}
	if (fsync(s->dirfd) < 0)
		return -errno;
	return 0;

out_rm:
	rm_tree(s->dirfd, tmpname);
	return err;
}

static void format_utc(time_t t, char *buf, size_t size)
{
	clock_rfc3339(buf, size, (int64_t)t * 1000000000, 0);
}

/* One line per dropped item in dropped.log (rotated once at DROPPED_LOG_MAX). */
static void note_dropped(struct sink *s, const struct item *it, const char *why)
{
	char line[512], when[CLOCK_RFC3339_MAX];
	struct stat st;
	int fd, n;

	if (fstatat(s->dirfd, DROPPED_LOG, &st, 0) == 0 && st.st_size > DROPPED_LOG_MAX)
		renameat(s->dirfd, DROPPED_LOG, s->dirfd, DROPPED_LOG ".1");
	format_utc(wall(s), when, sizeof(when));
	n = snprintf(line, sizeof(line),
		     "%s dropped id=%s seq=%" PRIu64 " bytes=%" PRIu64 " reason=\"%s\"\n", when,
		     it->id, it->seq, it->bytes, why);
	if (n < 0 || n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	fd = openat(s->dirfd, DROPPED_LOG, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		pr_warn_errno(-errno, "sink: cannot write %s/%s", s->dir, DROPPED_LOG);
		return;
	}
	if (write(fd, line, (size_t)n) < 0 || fdatasync(fd) < 0)
		pr_warn_errno(-errno, "sink: cannot write %s/%s", s->dir, DROPPED_LOG);
	close(fd);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keeps the newest SINK_DEAD_MAX items of dead/. */
static void prune_dead(struct sink *s)
{
	struct item **v = NULL, *it;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int fd;
	DIR *d;

	fd = openat(s->dirfd, DEAD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		it = calloc(1, sizeof(*it));
		if (!it)
			break;
		if (sink_parse_item_name(de->d_name, &it->seq, it->id)) {
			free(it);
			continue;
		}
		sink_item_name(it->seq, it->id, it->name, sizeof(it->name));
		if (array_ensure((void **)&v, &cap, sizeof(*v), n + 1)) {
			free(it);
			break;
		}
		v[n++] = it;
	}
	if (n > SINK_DEAD_MAX) {
		qsort(v, n, sizeof(*v), cmp_seq);
		for (i = 0; i < n - SINK_DEAD_MAX; i++) {
			pr_info("sink: removing old refused item %s/%s/%s", s->dir, DEAD_DIR,
				v[i]->name);
			rm_tree(dirfd(d), v[i]->name);
		}
		fsync(dirfd(d));
	}
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	closedir(d);
}

/* Moves an item to dead/ with why it was refused. */
static void bury(struct sink *s, const struct item *it, const char *reason)
{
	char rel[PATH_MAX], text[SINK_REASON_MAX + 128], when[CLOCK_RFC3339_MAX];
	int dfd, n;

	if (mkdirat(s->dirfd, DEAD_DIR, 0755) < 0 && errno != EEXIST) {
		pr_err_errno(-errno, "sink: mkdir %s/%s", s->dir, DEAD_DIR);
		goto remove;
	}
	snprintf(rel, sizeof(rel), DEAD_DIR "/%s", it->name);
	if (renameat(s->dirfd, it->name, s->dirfd, rel) < 0) {
		pr_err_errno(-errno, "sink: cannot move %s to %s/%s", it->name, s->dir, rel);
		goto remove;
	}
	format_utc(wall(s), when, sizeof(when));
	n = snprintf(text, sizeof(text), "%s id=%s seq=%" PRIu64 "\n%s\n", when, it->id, it->seq,
		     reason);
	snprintf(rel, sizeof(rel), DEAD_DIR "/%s/" REASON_FILE, it->name);
	write_at(s, rel, text, n < 0 || n >= (int)sizeof(text) ? sizeof(text) - 1 : (size_t)n);
	dfd = openat(s->dirfd, DEAD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fsync_dirfd(dfd);
	if (dfd >= 0)
		close(dfd);
	fsync(s->dirfd);
	prune_dead(s);
	return;
remove:
	rm_tree(s->dirfd, it->name);
	fsync(s->dirfd);
}

/* ---- Queue (callers hold s->lock) ----------------------------------------------------------- */

static void queue_append(struct sink *s, struct item *it)
{
	it->next = NULL;
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	s->st.queued++;
	s->st.queued_bytes += it->bytes;
}

static void queue_unlink(struct sink *s, struct item *it)
{
	struct item **pp, *prev = NULL;

	for (pp = &s->head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != it)
			continue;
		*pp = it->next;
		if (s->tail == it)
			s->tail = prev;
		s->st.queued--;
		s->st.queued_bytes -= it->bytes;
		it->next = NULL;
		pthread_cond_broadcast(&s->idle);
		return;
	}
}

/*
 * Unlinks the oldest items (not the one being sent) until @incoming more bytes fit; returns
 * them as a list for the caller to delete outside the lock.
 */
static struct item *queue_make_room(struct sink *s, uint64_t incoming)
{
	struct item *victims = NULL, **vt = &victims, *it, *next;

	for (it = s->head; it && s->st.queued_bytes + incoming > s->max_bytes; it = next) {
		next = it->next;
		if (it->in_flight)
			continue;
		queue_unlink(s, it);
		s->st.dropped++;
		*vt = it;
		vt = &it->next;
	}
	return victims;
}

static void drop_victims(struct sink *s, struct item *victims, const char *why)
{
	struct item *it;

	while ((it = victims)) {
		victims = it->next;
		pr_warn("sink: spool full, dropped the oldest profile id=%s seq=%" PRIu64
			" (%" PRIu64 " bytes): %s",
			it->id, it->seq, it->bytes, why);
		rm_tree(s->dirfd, it->name);
		note_dropped(s, it, why);
		free(it);
	}
	fsync(s->dirfd);
}

/* ---- Sender --------------------------------------------------------------------------------- */

static void payload_free(struct sink_payload *pl)
{
	free(pl->meta);
	free(pl->prof);
	memset(pl, 0, sizeof(*pl));
}

static int payload_load(struct sink *s, const struct item *it, struct sink_payload *pl)
{
	char rel[PATH_MAX];
	int err;

	snprintf(rel, sizeof(rel), "%s/" META_FILE, it->name);
	err = read_file_bounded(s->dirfd, rel, SINK_MAX_METADATA_BYTES, &pl->meta, &pl->meta_len);
	if (err)
		return err;
	snprintf(rel, sizeof(rel), "%s/" PROF_FILE, it->name);
	err = read_file_bounded(s->dirfd, rel, SINK_MAX_PROFILE_BYTES, &pl->prof, &pl->prof_len);
	if (err)
		payload_free(pl);
	return err;
}

/* Logs a failed attempt: the first of a streak and every power of two at warn, others debug. */
static void log_failure(const char *sinkname, const struct item *it, unsigned attempt,
			uint64_t delay_ms, const char *reason)
{
	enum log_level lvl = (attempt & (attempt - 1)) == 0 ? LOG_WARN : LOG_DEBUG;

	log_msg(lvl, 0,
		"sink: %s: delivering id=%s failed (attempt %u): %s; retrying in %" PRIu64
		".%01" PRIu64 " s",
		sinkname, it->id, attempt, reason, delay_ms / 1000, delay_ms % 1000 / 100);
}

/* The secondary sink: one attempt, bounded in time, counted, never retried. */
static void push_secondary(struct sink *s, const struct sink_payload *pl)
{
	struct sink_result out = { 0 };

	sink_http_post_pyroscope(&s->http, pl, SINK_PYROSCOPE_TIMEOUT_MS, &out);
	if (out.verdict != SINK_OK && !out.aborted)
		pr_warn("sink: pyroscope push failed (not retried): %s", out.reason);
	pthread_mutex_lock(&s->lock);
	if (out.verdict == SINK_OK)
		s->st.pyroscope_pushed++;
	else if (!out.aborted)
		s->st.pyroscope_failures++;
	pthread_mutex_unlock(&s->lock);
}

static const char *sink_name(const struct sink *s)
{
	return s->cluster_url ? "cluster API" : "pyroscope";
}

/* The oldest item, once its attempt is due; NULL when stopping. Called, and returns, with
 * s->lock held. */
static struct item *next_due(struct sink *s)
{
	struct timespec ts;
	uint64_t now;

	while (!atomic_load(&s->stop)) {
		if (!s->head) {
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		now = now_ms(s);
		if (s->next_attempt_ms <= now)
			return s->head;
		clock_deadline(&ts, CLOCK_MONOTONIC, s->next_attempt_ms - now);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		/* A fake clock may not move: count the wait as done. */
		if (s->clock.now_ms && now_ms(s) == now)
			s->next_attempt_ms = now;
	}
	return NULL;
}

/* One attempt at @it through the primary sink. Returns 0 (the verdict in @out) or -ENOENT
 * when the item vanished from the spool. */
static int attempt(struct sink *s, const struct item *it, struct sink_payload *pl,
		   struct sink_result *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->retry_after_s = -1;
	err = payload_load(s, it, pl);
	if (err == -ENOENT)
		return err;
	if (err) {
		/* Too large (a spool written by hand) never gets better; EIO might. */
		out->verdict = err == -EFBIG ? SINK_PERMANENT : SINK_RETRY;
		snprintf(out->reason, sizeof(out->reason), "reading the spool: %s", strerror(-err));
	} else if (s->cluster_url) {
		sink_http_post_cluster(&s->http, it->id, pl, s->timeout_ms, out);
	} else {
		sink_http_post_pyroscope(&s->http, pl, s->timeout_ms, out);
	}
	return 0;
}

/* The spool after an attempt: a delivered item is deleted (then pushed to the secondary sink),
 * a refused one buried; a retried one stays. Outside s->lock. */
static void settle_spool(struct sink *s, const struct item *it, const struct sink_payload *pl,
			 const struct sink_result *out)
{
	int err;

	if (out->verdict == SINK_OK) {
		/* Delete first: a crash from here on re-sends at most this one item, and
		 * the Idempotency-Key makes that harmless. */
		err = rm_tree(s->dirfd, it->name);
		if (err)
			pr_err_errno(err, "sink: cannot remove delivered item %s/%s", s->dir,
				     it->name);
		fsync(s->dirfd);
		pr_debug("sink: %s accepted id=%s seq=%" PRIu64, sink_name(s), it->id, it->seq);
		if (s->cluster_url && s->pyro_url)
			push_secondary(s, pl);
	} else if (out->verdict == SINK_PERMANENT) {
		pr_err("sink: %s refused id=%s for good: %s; kept in %s/%s/", sink_name(s), it->id,
		       out->reason, s->dir, DEAD_DIR);
		bury(s, it, out->reason);
	}
}

/* The queue and the counters after an attempt: a retry schedules the next attempt, anything
 * else ends the item (freed). Under s->lock. */
static void settle_queue(struct sink *s, struct item *it, const struct sink_result *out)
{
	uint64_t delay;

	it->in_flight = false;
	if (out->verdict == SINK_RETRY) {
		if (!out->aborted) {
			s->st.failures++;
			s->st.attempt++;
			delay = sink_backoff_ms((unsigned)s->st.attempt, s->base_ms, s->cap_ms,
						out->retry_after_s, rnd32(s));
			s->next_attempt_ms = now_ms(s) + delay;
			log_failure(sink_name(s), it, (unsigned)s->st.attempt, delay, out->reason);
		}
		return;
	}
	if (out->verdict == SINK_OK) {
		s->st.delivered++;
		if (s->st.attempt)
			pr_info("sink: %s reachable again: id=%s delivered after %" PRIu64
				" failed attempts",
				sink_name(s), it->id, s->st.attempt);
	} else {
		s->st.dead++;
	}
	s->st.attempt = 0;
	s->next_attempt_ms = 0;
	queue_unlink(s, it);
	free(it);
}

static void *sender_main(void *arg)
{
	struct sink *s = arg;
	struct sink_payload pl = { 0 };
	struct sink_result out;
	struct item *it;

	pthread_mutex_lock(&s->lock);
	while ((it = next_due(s))) {
		it->in_flight = true;
		pthread_mutex_unlock(&s->lock);
		if (attempt(s, it, &pl, &out) == -ENOENT) {
			pr_err("sink: spool item %s/%s vanished; it is lost", s->dir, it->name);
			pthread_mutex_lock(&s->lock);
			queue_unlink(s, it);
			s->st.dropped++;
			free(it);
			continue;
		}
		settle_spool(s, it, &pl, &out);
		pthread_mutex_lock(&s->lock);
		settle_queue(s, it, &out);
		payload_free(&pl);
	}
	pthread_mutex_unlock(&s->lock);
	payload_free(&pl);
	return NULL;
}

/* ---- Public API ----------------------------------------------------------------------------- */

/* "<base without trailing '/'><suffix>" for an http(s) URL, or NULL in *out for an empty one. */
static int make_url(const char *base, const char *suffix, char **out)
{
	size_t len;

	*out = NULL;
	if (!base || !base[0])
		return 0;
	if (strncasecmp(base, "http://", 7) && strncasecmp(base, "https://", 8))
		return -EINVAL;
	len = strlen(base);
	while (len && base[len - 1] == '/')
		len--;
	if (asprintf(out, "%.*s%s", (int)len, base, suffix) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Size of a complete item's two files, or -errno/-EINVAL when one is missing. */
static long long item_bytes(int dfd, const char *name)
{
	char rel[PATH_MAX];
	struct stat a, b;

	snprintf(rel, sizeof(rel), "%s/" META_FILE, name);
	if (fstatat(dfd, rel, &a, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	snprintf(rel, sizeof(rel), "%s/" PROF_FILE, name);
	if (fstatat(dfd, rel, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(a.st_mode) || !S_ISREG(b.st_mode))
		return -EINVAL;
	return (long long)a.st_size + b.st_size;
}

static uint64_t max_dead_seq(struct sink *s)
{
	char id[SINK_ID_MAX + 1];
	struct dirent *de;
	uint64_t seq, max = 0;
	DIR *d;
	int fd;

	fd = openat(s->dirfd, DEAD_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)))
		if (!sink_parse_item_name(de->d_name, &seq, id) && seq + 1 > max)
			max = seq + 1;
	closedir(d);
	return max;
}

/* The sequence number saved in the spool's seq file, or 1. */
static uint64_t read_seq(struct sink *s)
{
	unsigned long long v;
	uint64_t next = 1;
	char *text, *end;

	if (read_file_bounded(s->dirfd, SEQ_FILE, 64, &text, NULL))
		return next;
	v = strtoull(text, &end, 10);
	if (end != text && (*end == '\n' || !*end) && v > next)
		next = v;
	else if (end == text || (*end != '\n' && *end))
		pr_warn("sink: ignoring malformed %s/%s", s->dir, SEQ_FILE);
	free(text);
	return next;
}

/* The spool item called @name (NULL for anything else: seq, dead/, dropped.log, ...), or
 * -ENOMEM in *@err. An incomplete item (a crash) is removed and *@removed counted. */
static struct item *scan_entry(struct sink *s, const char *name, size_t *removed, int *err)
{
	struct item *it;
	long long bytes;

	if (!strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX))) {
		pr_info("sink: removing %s/%s, an item a crash left half-written", s->dir, name);
		rm_tree(s->dirfd, name);
		++*removed;
		return NULL;
	}
	/* atomic_write_file()'s temp file of the sequence number, left by a crash before its
	 * rename (tests/integration/test_crash_safety.sh found them piling up) */
	if (!strncmp(name, SEQ_FILE ".tmp.", strlen(SEQ_FILE ".tmp."))) {
		pr_info("sink: removing %s/%s, a sequence file a crash left unrenamed", s->dir,
			name);
		if (unlinkat(s->dirfd, name, 0) < 0 && errno != ENOENT)
			pr_warn_errno(-errno, "sink: cannot remove %s/%s", s->dir, name);
		return NULL;
	}
	it = calloc(1, sizeof(*it));
	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	if (sink_parse_item_name(name, &it->seq, it->id)) {
		free(it); /* left alone */
		return NULL;
	}
	sink_item_name(it->seq, it->id, it->name, sizeof(it->name));
	bytes = item_bytes(s->dirfd, it->name);
	if (bytes < 0) {
		pr_warn("sink: removing incomplete spool item %s/%s", s->dir, it->name);
		rm_tree(s->dirfd, it->name);
		++*removed;
		free(it);
		return NULL;
	}
	it->bytes = (uint64_t)bytes;
	return it;
}

/* Reads the spool's items into *@v (*@n of them, unordered) and raises *@next past them. */
static int scan_items(struct sink *s, struct item ***v, size_t *n, uint64_t *next)
{
	size_t cap = 0, removed = 0;
	struct dirent *de;
	struct item *it;
	int fd, err = 0;
	DIR *d;

	fd = dup(s->dirfd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	rewinddir(d);
	while (!err && (de = readdir(d))) {
		it = scan_entry(s, de->d_name, &removed, &err);
		if (!it)
			continue;
		if (it->seq + 1 > *next)
			*next = it->seq + 1;
		err = array_ensure((void **)v, &cap, sizeof(**v), *n + 1);
		if (err)
			free(it);
		else
			(*v)[(*n)++] = it;
	}
	closedir(d);
	if (removed)
		fsync(s->dirfd);
	return err;
}

static int rescan(struct sink *s)
{
	struct item **v = NULL, *victims;
	uint64_t next = read_seq(s), seq;
	size_t n = 0, i;
	int err;

	err = scan_items(s, &v, &n, &next);
	if (err) {
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_seq);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < n; i++)
		queue_append(s, v[i]);
	victims = queue_make_room(s, 0);
	pthread_mutex_unlock(&s->lock);
	free(v);
	drop_victims(s, victims, "spool over spool_max_bytes at start");
	seq = max_dead_seq(s);
	s->next_seq = next > seq ? next : seq;
	return 0;
}

static int str_dup(const char *in, char **out)
{
	*out = NULL;
	if (!in || !in[0])
		return 0;
	*out = strdup(in);
	return *out ? 0 : -ENOMEM;
}

/* The options' values (strings copied) and their defaults. Returns 0, -EINVAL or -ENOMEM. */
static int set_opts(struct sink *s, const struct sink_opts *opts)
{
	int err;

	err = make_url(opts->cluster_api_url, "/v1/profiles", &s->cluster_url);
	if (!err)
		err = make_url(opts->pyroscope_url, "/ingest", &s->pyro_url);
	if (!err)
		err = str_dup(opts->token_file, &s->token_file);
	if (!err)
		err = str_dup(opts->pyroscope_app && opts->pyroscope_app[0] ? opts->pyroscope_app :
									      SINK_DEFAULT_APP,
			      &s->app);
	if (!err)
		err = str_dup(opts->spool_dir, &s->dir);
	if (err)
		return err;
	s->max_bytes = opts->spool_max_bytes ? opts->spool_max_bytes : SINK_DEFAULT_MAX_BYTES;
	s->base_ms = opts->backoff_base_ms ? opts->backoff_base_ms : SINK_DEFAULT_BACKOFF_BASE_MS;
	s->cap_ms = opts->backoff_cap_ms ? opts->backoff_cap_ms : SINK_DEFAULT_BACKOFF_CAP_MS;
	if (s->cap_ms < s->base_ms)
		s->cap_ms = s->base_ms;
	s->timeout_ms = opts->timeout_ms ? opts->timeout_ms : SINK_DEFAULT_TIMEOUT_MS;
	if (opts->clock)
		s->clock = *opts->clock;
	s->http = (struct sink_http){
		.cluster_url = s->cluster_url,
		.pyro_url = s->pyro_url,
		.token_file = s->token_file,
		.app = s->app,
		.stop = &s->stop,
		.clock = &s->clock,
		.connect_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms :
							 SINK_DEFAULT_CONNECT_TIMEOUT_MS,
	};
	return 0;
}

static void init_sync(struct sink *s)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->submit_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, &ca);
	pthread_cond_init(&s->idle, &ca);
	pthread_condattr_destroy(&ca);
	s->sync_init = true;
}

/* Creates, opens and rescans the spool. Returns 0 or -errno (logged). */
static int open_spool(struct sink *s)
{
	int err;

	err = mkdir_p(s->dir);
	if (err)
		return pr_err_errno(err, "sink: cannot create the spool %s", s->dir);
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		return pr_err_errno(-errno, "sink: cannot open the spool %s", s->dir);
	err = rescan(s);
	if (err)
		return pr_err_errno(err, "sink: cannot read the spool %s", s->dir);
	pr_info("sink: spool %s: %" PRIu64 " profiles (%" PRIu64
		" bytes) waiting, next seq %" PRIu64,
		s->dir, s->st.queued, s->st.queued_bytes, s->next_seq);
	return 0;
}

static int start_sender(struct sink *s)
{
	const char *why;
	int err;

	if (http_init(&why))
		return pr_err_errno(-EIO, "sink: curl_global_init failed: %s", why);
	err = -pthread_create(&s->thread, NULL, sender_main, s);
	if (err)
		return pr_err_errno(err, "sink: cannot start the sender thread");
	s->thread_started = true;
	return 0;
}

int sink__new(const struct sink_opts *opts, struct sink **out)
{
	struct sink *s;
	int err;

	if (!opts || !opts->spool_dir || !opts->spool_dir[0] || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = -1;
	atomic_init(&s->stop, false);
	err = set_opts(s, opts);
	if (err)
		goto err_free;
	init_sync(s);
	err = open_spool(s);
	if (err)
		goto err_free;
	if (!opts->no_sender && (s->cluster_url || s->pyro_url)) {
		err = start_sender(s);
		if (err)
			goto err_free;
	}
	*out = s;
	return 0;

err_free:
	sink__free(s);
	return err;
}

/* The metadata as spooled: compact, with a valid "id" (generated when missing or invalid),
 * which is copied to @id. Returns 0 with *@text (malloc'd), -EINVAL, -EAGAIN, -ENOMEM. */
static int spool_metadata(const char *metadata_json, char id[SINK_ID_MAX + 1], char **text)
{
	unsigned char rnd[16];
	json_t *root, *jid;
	int err = 0;
	size_t i;

	root = json_loads(metadata_json, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return -EINVAL;
	}
	jid = json_object_get(root, "id");
	if (json_is_string(jid) && sink_valid_id(json_string_value(jid))) {
		snprintf(id, SINK_ID_MAX + 1, "%s", json_string_value(jid));
	} else if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		err = -EAGAIN;
	} else {
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(id + 2 * i, 3, "%02x", rnd[i]);
		if (json_object_set_new(root, "id", json_string(id)))
			err = -ENOMEM;
	}
	*text = err ? NULL : json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!err && !*text)
		err = -ENOMEM;
	if (!err && strlen(*text) > SINK_MAX_METADATA_BYTES)
		err = -EFBIG;
	return err;
}

/* Reads the gzip pprof at @path. Returns 0 with *@prof (malloc'd), -EINVAL (not gzip), -errno. */
static int load_profile(const char *path, char **prof, size_t *len)
{
	int err = read_file_bounded(AT_FDCWD, path, SINK_MAX_PROFILE_BYTES, prof, len);

	if (err)
		return err;
	if (*len < 2 || (unsigned char)(*prof)[0] != 0x1f || (unsigned char)(*prof)[1] != 0x8b)
		return -EINVAL; /* not gzip: not what pprof writers produce */
	return 0;
}

/* Makes room for @it, writes it under the next sequence number and queues it. Returns 0 (@it
 * is the queue's now) or -errno. Under s->submit_lock: sequence order = spool order. */
static int spool_item(struct sink *s, struct item *it, const struct buf *meta, const struct buf *pb)
{
	struct item *victims;
	uint64_t seq;
	int err;

	pthread_mutex_lock(&s->lock);
	victims = queue_make_room(s, it->bytes);
	pthread_mutex_unlock(&s->lock);
	drop_victims(s, victims, "spool over spool_max_bytes");

	seq = s->next_seq;
	err = sink_item_name(seq, it->id, it->name, sizeof(it->name));
	if (err < 0)
		return err;
	/* The sequence is on disk before the item: a crash leaves a gap, never a reuse. */
	err = persist_seq(s, seq + 1);
	if (err)
		return err;
	s->next_seq = seq + 1;
	err = write_item(s, it->name, meta, pb);
	if (err)
		return err;
	it->seq = seq;
	pthread_mutex_lock(&s->lock);
	queue_append(s, it);
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pr_debug("sink: spooled id=%s seq=%" PRIu64, it->id, seq);
	return 0;
}

int sink__submit(struct sink *s, const char *metadata_json, const char *pprof_path)
{
	char id[SINK_ID_MAX + 1], *text = NULL, *prof = NULL;
	struct item *it = NULL;
	struct buf meta, pb;
	size_t prof_len = 0;
	int err;

	if (!s || !metadata_json || !pprof_path)
		return -EINVAL;
	if (strlen(metadata_json) > SINK_MAX_METADATA_BYTES)
		return -EFBIG;
	err = spool_metadata(metadata_json, id, &text);
	if (!err)
		err = load_profile(pprof_path, &prof, &prof_len);
	if (err)
		goto out;
	meta = (struct buf){ text, strlen(text) };
	pb = (struct buf){ prof, prof_len };
	if (meta.len + pb.len > s->max_bytes) {
		err = -EFBIG;
		goto out;
	}
	it = calloc(1, sizeof(*it));
	if (!it) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(it->id, sizeof(it->id), "%s", id);
	it->bytes = meta.len + pb.len;
	pthread_mutex_lock(&s->submit_lock);
	err = spool_item(s, it, &meta, &pb);
	pthread_mutex_unlock(&s->submit_lock);
	if (!err)
		it = NULL;
out:
	free(it);
	free(text);
	free(prof);
	return err < 0 ? err : 0;
}

void sink__stats(struct sink *s, struct sink_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

int sink__drain(struct sink *s, unsigned timeout_ms)
{
	struct timespec ts;
	int err = 0;

	clock_deadline(&ts, CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&s->lock);
	while (s->head && !err) {
		if (!s->thread_started) {
			err = -ETIMEDOUT;
			break;
		}
		err = -pthread_cond_timedwait(&s->idle, &s->lock, &ts);
	}
	if (!s->head)
		err = 0;
	pthread_mutex_unlock(&s->lock);
	return err;
}

void sink__free(struct sink *s)
{
	struct item *it;

	if (!s)
		return;
	if (s->thread_started) {
		pthread_mutex_lock(&s->lock);
		atomic_store(&s->stop, true);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	while ((it = s->head)) {
		s->head = it->next;
		free(it);
	}
	if (s->sync_init) {
		pthread_mutex_destroy(&s->submit_lock);
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
		pthread_cond_destroy(&s->idle);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->cluster_url);
	free(s->pyro_url);
	free(s->token_file);
	free(s->app);
	free(s->dir);
	free(s);
}
