// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/sink.h"

#include <ctype.h>
#include <curl/curl.h>
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

#include "base/fileio.h"
#include "base/log.h"

#define SEQ_DIGITS 20
#define TMP_PREFIX ".tmp-"
#define META_FILE "metadata.json"
#define PROF_FILE "profile.pb.gz"
#define REASON_FILE "reason.txt"
#define DEAD_DIR "dead"
#define SEQ_FILE "seq"
#define DROPPED_LOG "dropped.log"
#define DROPPED_LOG_MAX (64 * 1024)
#define TOKEN_MAX 16384
#define REASON_MAX 1024
#define USER_AGENT "slideops-profiler"

struct item {
	struct item *next;
	uint64_t seq;
	uint64_t bytes;
	bool in_flight;
	char id[SINK_ID_MAX + 1];
	char name[SINK_NAME_MAX];
};

struct sink {
	char *cluster_url;	/* <base>/v1/profiles, or NULL */
	char *pyro_url;		/* <base>/ingest, or NULL */
	char *token_file;	/* or NULL */
	char *app;
	char *dir;
	int dirfd;
	unsigned long long max_bytes;
	unsigned base_ms, cap_ms, connect_ms, timeout_ms;
	struct sink_clock clock;

	pthread_mutex_t submit_lock;	/* serializes sink__submit(): sequence order = spool order */
	pthread_mutex_t lock;		/* the queue, the counters, next_attempt_ms */
	pthread_cond_t cond;		/* work arrived, or stop */
	pthread_cond_t idle;		/* an item left the queue */
	bool sync_init;
	struct item *head, *tail;
	uint64_t next_seq;		/* only under submit_lock (or before the thread starts) */
	struct sink_stats st;
	uint64_t next_attempt_ms;
	atomic_bool stop;
	pthread_t thread;
	bool thread_started;
	bool curl_init;
};

/* ---- Stateless helpers ------------------------------------------------------------------- */

static bool id_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

bool sink_valid_id(const char *id)
{
	size_t i;

	if (!id || !id[0] || id[0] == '.')
		return false;
	for (i = 0; id[i]; i++)
		if (i >= SINK_ID_MAX || !id_char(id[i]))
			return false;
	return true;
}

int sink_item_name(uint64_t seq, const char *id, char *buf, size_t size)
{
	int n;

	if (!sink_valid_id(id))
		return -EINVAL;
	n = snprintf(buf, size, "%0*" PRIu64 "-%s", SEQ_DIGITS, seq, id);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return n;
}

int sink_parse_item_name(const char *name, uint64_t *seq, char *id)
{
	uint64_t v = 0;
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < SEQ_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(name[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	if (name[SEQ_DIGITS] != '-' || !sink_valid_id(name + SEQ_DIGITS + 1))
		return -EINVAL;
	*seq = v;
	strcpy(id, name + SEQ_DIGITS + 1);
	return 0;
}

enum sink_verdict sink_classify(long status)
{
	if (status >= 200 && status < 300)
		return SINK_OK;
	if (status < 400 || status >= 500)
		return SINK_RETRY;	/* no answer, 1xx/3xx (we follow no redirects), 5xx */
	switch (status) {
	case 401:	/* the token may be rotated: the file is re-read before every attempt */
	case 403:
	case 404:	/* a wrong URL or a missing route is fixed by the operator, not by the item */
	case 405:
	case 408:
	case 409:	/* same Idempotency-Key still being processed */
	case 425:
	case 429:
		return SINK_RETRY;
	default:
		return SINK_PERMANENT;
	}
}

uint64_t sink_backoff_ms(unsigned attempt, unsigned base_ms, unsigned cap_ms,
			 long long retry_after_s, uint32_t rnd)
{
	uint64_t ceil = base_ms, delay;
	unsigned i;

	for (i = 1; i < attempt && ceil < cap_ms; i++)
		ceil *= 2;
	if (ceil > cap_ms)
		ceil = cap_ms;
	/* Uniform in [0, ceil]: ceil < 2^32, so the product fits in 64 bits. */
	delay = ((uint64_t)rnd * (ceil + 1)) >> 32;
	if (retry_after_s >= 0) {
		if (retry_after_s > SINK_RETRY_AFTER_MAX_S)
			retry_after_s = SINK_RETRY_AFTER_MAX_S;
		if (delay < (uint64_t)retry_after_s * 1000)
			delay = (uint64_t)retry_after_s * 1000;
	}
	return delay;
}

long long sink_parse_retry_after(const char *value, time_t now)
{
	char buf[128];
	size_t n;
	long long v = 0;
	time_t t;
	const char *p;

	if (!value)
		return -EINVAL;
	while (*value == ' ' || *value == '\t')
		value++;
	n = strlen(value);
	while (n && isspace((unsigned char)value[n - 1]))
		n--;
	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, value, n);
	buf[n] = '\0';
	if (isdigit((unsigned char)buf[0])) {
		for (p = buf; *p; p++) {
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			if (v < SINK_RETRY_AFTER_MAX_S)
				v = v * 10 + (*p - '0');
		}
		return v > SINK_RETRY_AFTER_MAX_S ? SINK_RETRY_AFTER_MAX_S : v;
	}
	/* The three HTTP-date forms all start with a day name (RFC 9110 5.6.7). */
	if (!isalpha((unsigned char)buf[0]))
		return -EINVAL;
	t = curl_getdate(buf, NULL);
	if (t == (time_t)-1)
		return -EINVAL;
	if (t <= now)
		return 0;
	return t - now > SINK_RETRY_AFTER_MAX_S ? SINK_RETRY_AFTER_MAX_S : (long long)(t - now);
}

static int two(const char *p)
{
	if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1]))
		return -1;
	return (p[0] - '0') * 10 + (p[1] - '0');
}

/* "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)" (RFC 3339; 't'/'z'/' ' accepted too). */
static int parse_rfc3339(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	int y, off = 0, oh, om;
	const char *p;
	time_t t;

	if (strlen(s) < 20 || two(s) < 0 || two(s + 2) < 0 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		return -EINVAL;
	y = two(s) * 100 + two(s + 2);
	tm.tm_mon = two(s + 5) - 1;
	tm.tm_mday = two(s + 8);
	tm.tm_hour = two(s + 11);
	tm.tm_min = two(s + 14);
	tm.tm_sec = two(s + 17);
	if (y < 1970 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
	    tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	p = s + 19;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++)
			;
		if (p[-1] == '.')
			return -EINVAL;
	}
	if ((*p == 'Z' || *p == 'z') && !p[1]) {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		   (oh = two(p + 1)) >= 0 && (om = two(p + 4)) >= 0 && oh < 24 && om < 60) {
		off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
	} else {
		return -EINVAL;
	}
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = t - off;
	return 0;
}

int sink_metadata_range(const char *metadata_json, time_t *from, time_t *until)
{
	json_t *root, *v;
	time_t start;
	double dur = 0;
	int err = -EINVAL;

	root = json_loads(metadata_json ? metadata_json : "", 0, NULL);
	if (!json_is_object(root))
		goto out;
	v = json_object_get(root, "start");
	if (json_is_integer(v) && json_integer_value(v) > 0)
		start = (time_t)json_integer_value(v);
	else if (json_is_real(v) && json_real_value(v) > 0 && json_real_value(v) < 1e12)
		start = (time_t)json_real_value(v);
	else if (!json_is_string(v) || parse_rfc3339(json_string_value(v), &start))
		goto out;
	v = json_object_get(root, "duration");
	if (!json_is_number(v))
		v = json_object_get(root, "duration_seconds");
	if (json_is_number(v))
		dur = json_number_value(v);
	if (!(dur >= 1 && dur < 1e7))	/* Pyroscope wants a non-empty range */
		dur = 1;
	*from = start;
	*until = start + (time_t)(dur + 0.5);
	err = 0;
out:
	json_decref(root);
	return err;
}

/* Appends ",key=value" (value reduced to the characters Pyroscope label values allow). */
static void add_label(char *buf, size_t size, size_t *len, bool *first, const char *key,
		      const char *value)
{
	size_t i;
	int n;

	if (!value || !value[0] || *len >= size)
		return;
	n = snprintf(buf + *len, size - *len, "%s%s=", *first ? "" : ",", key);
	if (n < 0 || (size_t)n >= size - *len) {
		*len = size;
		return;
	}
	*len += n;
	*first = false;
	for (i = 0; value[i] && i < 128; i++) {
		char c = value[i];

		if (*len + 1 >= size) {
			*len = size;
			return;
		}
		buf[(*len)++] = (isalnum((unsigned char)c) || strchr("._:/-", c)) ? c : '_';
	}
	buf[*len] = '\0';
}

int sink_pyroscope_name(const char *app, const char *metadata_json, char *buf, size_t size)
{
	json_t *root, *target;
	const char *service = NULL;
	bool first = true;
	size_t len;
	int n, err;

	root = json_loads(metadata_json ? metadata_json : "", 0, NULL);
	if (!json_is_object(root)) {
		err = -EINVAL;
		goto out;
	}
	n = snprintf(buf, size, "%s{", app && app[0] ? app : SINK_DEFAULT_APP);
	if (n < 0 || (size_t)n >= size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	len = n;
	target = json_object_get(root, "target");
	if (json_is_string(target)) {
		service = json_string_value(target);
	} else if (json_is_object(target)) {
		service = json_string_value(json_object_get(target, "service"));
		if (!service)
			service = json_string_value(json_object_get(target, "name"));
		if (!service)
			service = json_string_value(json_object_get(target, "description"));
	}
	add_label(buf, size, &len, &first, "node", json_string_value(json_object_get(root, "node")));
	add_label(buf, size, &len, &first, "service", service);
	add_label(buf, size, &len, &first, "question",
		  json_string_value(json_object_get(root, "question")));
	if (len + 2 > size) {
		err = -ENAMETOOLONG;
		goto out;
	}
	buf[len++] = '}';
	buf[len] = '\0';
	err = (int)len;
out:
	json_decref(root);
	return err;
}

/* ---- Clock ---------------------------------------------------------------------------------- */

static uint64_t real_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t now_ms(struct sink *s)
{
	return s->clock.now_ms ? s->clock.now_ms(s->clock.ctx) : real_now_ms();
}

static time_t wall(struct sink *s)
{
	return s->clock.wall ? s->clock.wall(s->clock.ctx) : time(NULL);
}

static uint32_t rnd32(struct sink *s)
{
	uint32_t r;

	if (s->clock.random)
		return s->clock.random(s->clock.ctx);
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	return (uint32_t)(real_now_ms() * 2654435761u);
}

/* ---- Spool files ---------------------------------------------------------------------------- */

static void fsync_dirfd(int dfd)
{
	if (dfd >= 0)
		fsync(dfd);
}

/* Removes @name (relative to @dfd): a file, or a directory of files (one level of subdirs). */
static int rm_tree(int dfd, const char *name, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT) {
			if (depth < 2 && (errno == EISDIR || errno == EPERM))
				err = rm_tree(fd, de->d_name, depth + 1);
			else
				err = -errno;
		}
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !err)
		err = -errno;
	return err;
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
	rm_tree(s->dirfd, tmpname, 0);
	return err;
}

static void format_utc(time_t t, char *buf, size_t size)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One line per dropped item in dropped.log (rotated once at DROPPED_LOG_MAX). */
static void note_dropped(struct sink *s, const struct item *it, const char *why)
{
	char line[512], when[32];
	struct stat st;
	int fd, n;

	if (fstatat(s->dirfd, DROPPED_LOG, &st, 0) == 0 && st.st_size > DROPPED_LOG_MAX)
		renameat(s->dirfd, DROPPED_LOG, s->dirfd, DROPPED_LOG ".1");
	format_utc(wall(s), when, sizeof(when));
	n = snprintf(line, sizeof(line), "%s dropped id=%s seq=%" PRIu64 " bytes=%" PRIu64
		     " reason=\"%s\"\n", when, it->id, it->seq, it->bytes, why);
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
	struct item **v = NULL, **tmp, *it;
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
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			tmp = realloc(v, cap * sizeof(*v));
			if (!tmp) {
				free(it);
				break;
			}
			v = tmp;
		}
		v[n++] = it;
	}
	if (n > SINK_DEAD_MAX) {
		qsort(v, n, sizeof(*v), cmp_seq);
		for (i = 0; i < n - SINK_DEAD_MAX; i++) {
			pr_info("sink: removing old refused item %s/%s/%s", s->dir, DEAD_DIR,
				v[i]->name);
			rm_tree(dirfd(d), v[i]->name, 0);
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
	char rel[PATH_MAX], text[REASON_MAX + 128], when[32];
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
	rm_tree(s->dirfd, it->name, 0);
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
		rm_tree(s->dirfd, it->name, 0);
		note_dropped(s, it, why);
		free(it);
	}
	fsync(s->dirfd);
}

/* ---- HTTP ----------------------------------------------------------------------------------- */

struct payload {
	char *meta;
	size_t meta_len;
	char *prof;
	size_t prof_len;
};

struct outcome {
	enum sink_verdict verdict;
	long status;
	long long retry_after_s;	/* -1 = not given */
	bool aborted;
	char reason[REASON_MAX];
};

struct xfer {
	struct sink *s;
	struct outcome *out;
	char body[512];
	size_t body_len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	size_t len = size * n, room = sizeof(x->body) - 1 - x->body_len;

	memcpy(x->body + x->body_len, p, len < room ? len : room);
	x->body_len += len < room ? len : room;
	x->body[x->body_len] = '\0';
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	static const char name[] = "retry-after:";
	struct xfer *x = ctx;
	size_t len = size * n;
	char value[128];
	long long v;

	if (len > sizeof(name) - 1 && len - (sizeof(name) - 1) < sizeof(value) &&
	    !strncasecmp(p, name, sizeof(name) - 1)) {
		memcpy(value, p + sizeof(name) - 1, len - (sizeof(name) - 1));
		value[len - (sizeof(name) - 1)] = '\0';
		v = sink_parse_retry_after(value, wall(x->s));
		if (v >= 0)
			x->out->retry_after_s = v;
	} else if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		x->out->retry_after_s = -1;	/* a new response (after 100 Continue) */
	}
	return len;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct sink *s = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(&s->stop) ? 1 : 0;
}

/* Printable, one line, no double quotes (it goes inside a logfmt msg="..."). */
static void clean_text(char *t)
{
	for (; *t; t++) {
		if ((unsigned char)*t < 0x20 || *t == 0x7f)
			*t = ' ';
		else if (*t == '"' || *t == '\\')
			*t = '\'';
	}
}

static void perform(struct sink *s, CURL *h, const char *url, unsigned timeout_ms,
		    struct outcome *out)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct xfer x = { .s = s, .out = out };
	CURLcode rc;

	out->status = 0;
	out->retry_after_s = -1;
	out->aborted = false;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)s->connect_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, s);
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK) {
		out->verdict = SINK_RETRY;
		out->aborted = rc == CURLE_ABORTED_BY_CALLBACK;
		snprintf(out->reason, sizeof(out->reason), "%s", errbuf[0] ? errbuf :
			 curl_easy_strerror(rc));
		clean_text(out->reason);
		return;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
	out->verdict = sink_classify(out->status);
	snprintf(out->reason, sizeof(out->reason), "HTTP %ld%s%s", out->status,
		 x.body_len ? ": " : "", x.body);
	clean_text(out->reason);
}

/* Reads the token (whitespace trimmed). Returns 0, or -errno / -EINVAL with out->reason set. */
static int read_token(struct sink *s, char **token, struct outcome *out)
{
	char *t, *p;
	size_t len;
	int err;

	*token = NULL;
	if (!s->token_file)
		return 0;
	err = read_file_bounded(AT_FDCWD, s->token_file, TOKEN_MAX, &t, &len);
	if (err) {
		snprintf(out->reason, sizeof(out->reason), "token file %s: %s", s->token_file,
			 strerror(-err));
		return err;
	}
	while (len && isspace((unsigned char)t[len - 1]))
		t[--len] = '\0';
	for (p = t; isspace((unsigned char)*p); p++)
		;
	for (len = 0; p[len]; len++) {
		if ((unsigned char)p[len] < 0x21 || p[len] == 0x7f) {
			free(t);
			snprintf(out->reason, sizeof(out->reason),
				 "token file %s: not a single-line token", s->token_file);
			return -EINVAL;
		}
	}
	if (!len) {
		free(t);
		snprintf(out->reason, sizeof(out->reason), "token file %s is empty", s->token_file);
		return -EINVAL;
	}
	memmove(t, p, len + 1);
	*token = t;
	return 0;
}

static void post_cluster(struct sink *s, const struct item *it, const struct payload *pl,
			 struct outcome *out)
{
	struct curl_slist *hdrs = NULL, *tmp;
	char *token = NULL, *line = NULL;
	curl_mimepart *part;
	curl_mime *mime = NULL;
	CURL *h;

	out->verdict = SINK_RETRY;
	if (read_token(s, &token, out))
		return;
	h = curl_easy_init();
	if (!h) {
		snprintf(out->reason, sizeof(out->reason), "curl_easy_init failed");
		goto out;
	}
	mime = curl_mime_init(h);
	if (!mime)
		goto oom;
	part = curl_mime_addpart(mime);
	if (!part || curl_mime_name(part, "metadata") ||
	    curl_mime_data(part, pl->meta, pl->meta_len) ||
	    curl_mime_type(part, "application/json"))
		goto oom;
	part = curl_mime_addpart(mime);
	if (!part || curl_mime_name(part, "profile") ||
	    curl_mime_data(part, pl->prof, pl->prof_len) ||
	    curl_mime_filename(part, PROF_FILE) ||
	    curl_mime_type(part, "application/octet-stream"))
		goto oom;
	if (token) {
		if (asprintf(&line, "Authorization: Bearer %s", token) < 0) {
			line = NULL;
			goto oom;
		}
		tmp = curl_slist_append(hdrs, line);
		free(line);
		if (!tmp)
			goto oom;
		hdrs = tmp;
	}
	if (asprintf(&line, "Idempotency-Key: %s", it->id) < 0) {
		line = NULL;
		goto oom;
	}
	tmp = curl_slist_append(hdrs, line);
	free(line);
	if (!tmp)
		goto oom;
	hdrs = tmp;
	/* No "Expect: 100-continue" round trip (and its 1 s wait on servers that ignore it). */
	tmp = curl_slist_append(hdrs, "Expect:");
	if (!tmp)
		goto oom;
	hdrs = tmp;
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	perform(s, h, s->cluster_url, s->timeout_ms, out);
	goto out;
oom:
	snprintf(out->reason, sizeof(out->reason), "out of memory building the request");
out:
	curl_easy_cleanup(h);
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	if (token)
		explicit_bzero(token, strlen(token));
	free(token);
}

/* Percent-encodes everything but RFC 3986 unreserved characters. */
static int url_escape(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
			if (n + 1 >= size)
				return -ENAMETOOLONG;
			out[n++] = (char)c;
		} else {
			if (n + 3 >= size)
				return -ENAMETOOLONG;
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

static void post_pyroscope(struct sink *s, const struct payload *pl, unsigned timeout_ms,
			   struct outcome *out)
{
	char name[512], esc[1536], *url = NULL;
	struct curl_slist *hdrs = NULL;
	time_t from, until;
	curl_mimepart *part;
	curl_mime *mime = NULL;
	CURL *h = NULL;

	out->verdict = SINK_RETRY;
	if (sink_pyroscope_name(s->app, pl->meta, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "%s{}", s->app);
	if (url_escape(name, esc, sizeof(esc)) < 0) {
		snprintf(out->reason, sizeof(out->reason), "application name too long");
		out->verdict = SINK_PERMANENT;
		return;
	}
	if (sink_metadata_range(pl->meta, &from, &until)) {
		until = wall(s);
		from = until - 1;
	}
	if (asprintf(&url, "%s?name=%s&from=%lld&until=%lld&format=pprof", s->pyro_url, esc,
		     (long long)from, (long long)until) < 0) {
		url = NULL;
		goto oom;
	}
	h = curl_easy_init();
	if (!h)
		goto oom;
	/* The documented multipart form: the pprof in a file field named "profile". */
	mime = curl_mime_init(h);
	part = mime ? curl_mime_addpart(mime) : NULL;
	if (!part || curl_mime_name(part, "profile") ||
	    curl_mime_data(part, pl->prof, pl->prof_len) || curl_mime_filename(part, PROF_FILE) ||
	    curl_mime_type(part, "application/octet-stream"))
		goto oom;
	hdrs = curl_slist_append(NULL, "Expect:");
	if (!hdrs)
		goto oom;
	curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	perform(s, h, url, timeout_ms, out);
	goto out;
oom:
	snprintf(out->reason, sizeof(out->reason), "out of memory building the request");
out:
	curl_easy_cleanup(h);
	curl_mime_free(mime);
	curl_slist_free_all(hdrs);
	free(url);
}

/* ---- Sender --------------------------------------------------------------------------------- */

static void payload_free(struct payload *pl)
{
	free(pl->meta);
	free(pl->prof);
	memset(pl, 0, sizeof(*pl));
}

static int payload_load(struct sink *s, const struct item *it, struct payload *pl)
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

	log_msg(lvl, 0, "sink: %s: delivering id=%s failed (attempt %u): %s; retrying in %" PRIu64
		".%01" PRIu64 " s", sinkname, it->id, attempt, reason, delay_ms / 1000,
		delay_ms % 1000 / 100);
}

/* The secondary sink: one attempt, bounded in time, counted, never retried. */
static void push_secondary(struct sink *s, const struct payload *pl)
{
	struct outcome out = { 0 };

	post_pyroscope(s, pl, SINK_PYROSCOPE_TIMEOUT_MS, &out);
	if (out.verdict != SINK_OK && !out.aborted)
		pr_warn("sink: pyroscope push failed (not retried): %s", out.reason);
	pthread_mutex_lock(&s->lock);
	if (out.verdict == SINK_OK)
		s->st.pyroscope_pushed++;
	else if (!out.aborted)
		s->st.pyroscope_failures++;
	pthread_mutex_unlock(&s->lock);
}

static void *sender_main(void *arg)
{
	struct sink *s = arg;
	const char *sinkname = s->cluster_url ? "cluster API" : "pyroscope";
	struct payload pl = { 0 };
	struct outcome out;
	struct timespec ts;
	struct item *it;
	uint64_t now, wait, delay;
	int err;

	pthread_mutex_lock(&s->lock);
	while (!atomic_load(&s->stop)) {
		it = s->head;
		if (!it) {
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		now = now_ms(s);
		if (s->next_attempt_ms > now) {
			wait = s->next_attempt_ms - now;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += wait / 1000;
			ts.tv_nsec += (long)(wait % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
			/* A fake clock may not move: count the wait as done. */
			if (s->clock.now_ms && now_ms(s) == now)
				s->next_attempt_ms = now;
			continue;
		}
		it->in_flight = true;
		pthread_mutex_unlock(&s->lock);

		memset(&out, 0, sizeof(out));
		out.retry_after_s = -1;
		err = payload_load(s, it, &pl);
		if (err == -ENOENT) {
			pr_err("sink: spool item %s/%s vanished; it is lost", s->dir, it->name);
			pthread_mutex_lock(&s->lock);
			queue_unlink(s, it);
			s->st.dropped++;
			free(it);
			continue;
		}
		if (err) {
			/* Too large (a spool written by hand) never gets better; EIO might. */
			out.verdict = err == -EFBIG ? SINK_PERMANENT : SINK_RETRY;
			snprintf(out.reason, sizeof(out.reason), "reading the spool: %s",
				 strerror(-err));
		} else if (s->cluster_url) {
			post_cluster(s, it, &pl, &out);
		} else {
			post_pyroscope(s, &pl, s->timeout_ms, &out);
		}

		if (out.verdict == SINK_OK) {
			/* Delete first: a crash from here on re-sends at most this one item, and
			 * the Idempotency-Key makes that harmless. */
			err = rm_tree(s->dirfd, it->name, 0);
			if (err)
				pr_err_errno(err, "sink: cannot remove delivered item %s/%s", s->dir,
					     it->name);
			fsync(s->dirfd);
			pr_debug("sink: %s accepted id=%s seq=%" PRIu64, sinkname, it->id, it->seq);
			if (s->cluster_url && s->pyro_url)
				push_secondary(s, &pl);
		} else if (out.verdict == SINK_PERMANENT) {
			pr_err("sink: %s refused id=%s for good: %s; kept in %s/%s/", sinkname, it->id,
			       out.reason, s->dir, DEAD_DIR);
			bury(s, it, out.reason);
		}

		pthread_mutex_lock(&s->lock);
		it->in_flight = false;
		if (out.verdict == SINK_RETRY) {
			if (!out.aborted) {
				s->st.failures++;
				s->st.attempt++;
				delay = sink_backoff_ms((unsigned)s->st.attempt, s->base_ms, s->cap_ms,
							out.retry_after_s, rnd32(s));
				s->next_attempt_ms = now_ms(s) + delay;
				log_failure(sinkname, it, (unsigned)s->st.attempt, delay, out.reason);
			}
			payload_free(&pl);
			continue;
		}
		if (out.verdict == SINK_OK) {
			s->st.delivered++;
			if (s->st.attempt)
				pr_info("sink: %s reachable again: id=%s delivered after %" PRIu64
					" failed attempts", sinkname, it->id, s->st.attempt);
		} else {
			s->st.dead++;
		}
		s->st.attempt = 0;
		s->next_attempt_ms = 0;
		queue_unlink(s, it);
		free(it);
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

static int add_scanned(struct item ***v, size_t *n, size_t *cap, struct item *it)
{
	struct item **tmp;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		tmp = realloc(*v, *cap * sizeof(**v));
		if (!tmp)
			return -ENOMEM;
		*v = tmp;
	}
	(*v)[(*n)++] = it;
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

static int rescan(struct sink *s)
{
	struct item **v = NULL, *it, *victims;
	size_t n = 0, cap = 0, i, removed = 0;
	uint64_t next = 1, seq;
	char *text = NULL;
	struct dirent *de;
	long long bytes;
	int fd, err = 0;
	DIR *d;

	if (!read_file_bounded(s->dirfd, SEQ_FILE, 64, &text, NULL)) {
		char *end;
		unsigned long long v = strtoull(text, &end, 10);

		if (end != text && (*end == '\n' || !*end) && v > next)
			next = v;
		else if (end == text || (*end != '\n' && *end))
			pr_warn("sink: ignoring malformed %s/%s", s->dir, SEQ_FILE);
		free(text);
	}
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
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			pr_info("sink: removing %s/%s, an item a crash left half-written", s->dir,
				de->d_name);
			rm_tree(s->dirfd, de->d_name, 0);
			removed++;
			continue;
		}
		it = calloc(1, sizeof(*it));
		if (!it) {
			err = -ENOMEM;
			break;
		}
		if (sink_parse_item_name(de->d_name, &it->seq, it->id)) {
			free(it);	/* seq, dead/, dropped.log, anything else: left alone */
			continue;
		}
		sink_item_name(it->seq, it->id, it->name, sizeof(it->name));
		bytes = item_bytes(s->dirfd, it->name);
		if (bytes < 0) {
			pr_warn("sink: removing incomplete spool item %s/%s", s->dir, it->name);
			rm_tree(s->dirfd, it->name, 0);
			removed++;
			free(it);
			continue;
		}
		it->bytes = (uint64_t)bytes;
		if (it->seq + 1 > next)
			next = it->seq + 1;
		err = add_scanned(&v, &n, &cap, it);
		if (err) {
			free(it);
			break;
		}
	}
	closedir(d);
	if (removed)
		fsync(s->dirfd);
	if (!err) {
		if (n)
			qsort(v, n, sizeof(*v), cmp_seq);
		pthread_mutex_lock(&s->lock);
		for (i = 0; i < n; i++)
			queue_append(s, v[i]);
		victims = queue_make_room(s, 0);
		pthread_mutex_unlock(&s->lock);
		drop_victims(s, victims, "spool over spool_max_bytes at start");
		seq = max_dead_seq(s);
		s->next_seq = next > seq ? next : seq;
	} else {
		for (i = 0; i < n; i++)
			free(v[i]);
	}
	free(v);
	return err;
}

static int str_dup(const char *in, char **out)
{
	*out = NULL;
	if (!in || !in[0])
		return 0;
	*out = strdup(in);
	return *out ? 0 : -ENOMEM;
}

int sink__new(const struct sink_opts *opts, struct sink **out)
{
	pthread_condattr_t ca;
	struct sink *s;
	int err;

	if (!opts || !opts->spool_dir || !opts->spool_dir[0] || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = -1;
	atomic_init(&s->stop, false);
	err = make_url(opts->cluster_api_url, "/v1/profiles", &s->cluster_url);
	if (err)
		goto err_free;
	err = make_url(opts->pyroscope_url, "/ingest", &s->pyro_url);
	if (err)
		goto err_free;
	err = str_dup(opts->token_file, &s->token_file);
	if (err)
		goto err_free;
	err = str_dup(opts->pyroscope_app && opts->pyroscope_app[0] ? opts->pyroscope_app :
		      SINK_DEFAULT_APP, &s->app);
	if (err)
		goto err_free;
	err = str_dup(opts->spool_dir, &s->dir);
	if (err)
		goto err_free;
	s->max_bytes = opts->spool_max_bytes ? opts->spool_max_bytes : SINK_DEFAULT_MAX_BYTES;
	s->base_ms = opts->backoff_base_ms ? opts->backoff_base_ms : SINK_DEFAULT_BACKOFF_BASE_MS;
	s->cap_ms = opts->backoff_cap_ms ? opts->backoff_cap_ms : SINK_DEFAULT_BACKOFF_CAP_MS;
	if (s->cap_ms < s->base_ms)
		s->cap_ms = s->base_ms;
	s->connect_ms = opts->connect_timeout_ms ? opts->connect_timeout_ms :
						   SINK_DEFAULT_CONNECT_TIMEOUT_MS;
	s->timeout_ms = opts->timeout_ms ? opts->timeout_ms : SINK_DEFAULT_TIMEOUT_MS;
	if (opts->clock)
		s->clock = *opts->clock;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&s->submit_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, &ca);
	pthread_cond_init(&s->idle, &ca);
	pthread_condattr_destroy(&ca);
	s->sync_init = true;

	err = mkdir_p(s->dir);
	if (err) {
		pr_err_errno(err, "sink: cannot create the spool %s", s->dir);
		goto err_free;
	}
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		err = pr_err_errno(-errno, "sink: cannot open the spool %s", s->dir);
		goto err_free;
	}
	err = rescan(s);
	if (err) {
		pr_err_errno(err, "sink: cannot read the spool %s", s->dir);
		goto err_free;
	}
	pr_info("sink: spool %s: %" PRIu64 " profiles (%" PRIu64 " bytes) waiting, next seq %" PRIu64,
		s->dir, s->st.queued, s->st.queued_bytes, s->next_seq);

	if (!opts->no_sender && (s->cluster_url || s->pyro_url)) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
			err = pr_err_errno(-EIO, "sink: curl_global_init failed");
			goto err_free;
		}
		s->curl_init = true;
		err = -pthread_create(&s->thread, NULL, sender_main, s);
		if (err) {
			pr_err_errno(err, "sink: cannot start the sender thread");
			goto err_free;
		}
		s->thread_started = true;
	}
	*out = s;
	return 0;

err_free:
	sink__free(s);
	return err;
}

int sink__submit(struct sink *s, const char *metadata_json, const char *pprof_path)
{
	char id[SINK_ID_MAX + 1], name[SINK_NAME_MAX], *text = NULL, *prof = NULL;
	struct item *it = NULL, *victims;
	unsigned char rnd[16];
	struct buf meta, pb;
	size_t prof_len, i;
	json_t *root, *jid;
	uint64_t seq;
	int err;

	if (!s || !metadata_json || !pprof_path)
		return -EINVAL;
	if (strlen(metadata_json) > SINK_MAX_METADATA_BYTES)
		return -EFBIG;
	root = json_loads(metadata_json, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return -EINVAL;
	}
	jid = json_object_get(root, "id");
	if (json_is_string(jid) && sink_valid_id(json_string_value(jid))) {
		snprintf(id, sizeof(id), "%s", json_string_value(jid));
	} else {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
			json_decref(root);
			return -EAGAIN;
		}
		for (i = 0; i < sizeof(rnd); i++)
			snprintf(id + 2 * i, 3, "%02x", rnd[i]);
		if (json_object_set_new(root, "id", json_string(id))) {
			json_decref(root);
			return -ENOMEM;
		}
	}
	text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return -ENOMEM;
	if (strlen(text) > SINK_MAX_METADATA_BYTES) {
		err = -EFBIG;
		goto out;
	}
	err = read_file_bounded(AT_FDCWD, pprof_path, SINK_MAX_PROFILE_BYTES, &prof, &prof_len);
	if (err)
		goto out;
	if (prof_len < 2 || (unsigned char)prof[0] != 0x1f || (unsigned char)prof[1] != 0x8b) {
		err = -EINVAL;	/* not gzip: not what pprof writers produce */
		goto out;
	}
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
	pthread_mutex_lock(&s->lock);
	victims = queue_make_room(s, it->bytes);
	pthread_mutex_unlock(&s->lock);
	drop_victims(s, victims, "spool over spool_max_bytes");

	seq = s->next_seq;
	err = sink_item_name(seq, id, name, sizeof(name));
	if (err < 0)
		goto out_unlock;
	/* The sequence is on disk before the item: a crash leaves a gap, never a reuse. */
	err = persist_seq(s, seq + 1);
	if (err)
		goto out_unlock;
	s->next_seq = seq + 1;
	err = write_item(s, name, &meta, &pb);
	if (err)
		goto out_unlock;
	it->seq = seq;
	snprintf(it->name, sizeof(it->name), "%s", name);
	pthread_mutex_lock(&s->lock);
	queue_append(s, it);
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	it = NULL;
	pr_debug("sink: spooled id=%s seq=%" PRIu64, id, seq);
out_unlock:
	pthread_mutex_unlock(&s->submit_lock);
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

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
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
	if (s->curl_init)
		curl_global_cleanup();
	free(s->cluster_url);
	free(s->pyro_url);
	free(s->token_file);
	free(s->app);
	free(s->dir);
	free(s);
}
