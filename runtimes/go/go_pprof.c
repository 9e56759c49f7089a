// SPDX-License-Identifier: Apache-2.0
#include "runtimes/go/go_pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/text.h"
#include "runtimes/nshttp.h"
#include "runtimes/proclisten.h"

#define STAT_MAX (16u << 10)
#define LISTEN_MAX PROC_LISTEN_MAX
#define WHY_MAX 512
#define INDEX_PATH "/debug/pprof/"

/* go_pprof_get() hands nshttp the endpoint's host array: nshttp reads at most
 * NSHTTP_HOST_MAX bytes of it. */
_Static_assert(sizeof(((struct go_endpoint *)0)->host) >= NSHTTP_HOST_MAX,
	       "nshttp_req_check() could read past go_endpoint.host");
_Static_assert(GO_PPROF_MAX_PROBES <= NSHTTP_MAX_REQUESTS, "one nshttp_get_all() probes all");

/* --- pure helpers ------------------------------------------------------------------------- */

bool go_pprof_is_index(const char *body, size_t len)
{
	return body && memmem(body, len, "goroutine?debug=", 16) &&
	       memmem(body, len, "heap?debug=", 11);
}

int go_pprof_parse_starttime(const char *stat, size_t len, uint64_t *out)
{
	const char *p, *end = stat + len;
	uint64_t v = 0;
	int field;

	if (!stat)
		return -EINVAL;
	/* The command name (field 2) may hold spaces and parentheses: start after the last ')'. */
	p = memrchr(stat, ')', len);
	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < 22; field++) {
		if (p >= end || *p != ' ')
			return -EINVAL;
		p++;
		if (p >= end || *p == ' ' || *p == '\n')
			return -EINVAL;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
	}
	if (p >= end || *p != ' ')
		return -EINVAL;
	p++;
	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p < end && *p != ' ' && *p != '\n')
		return -EINVAL;
	*out = v;
	return 0;
}

static bool is_v4_mapped(const uint8_t a[16])
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a, prefix, sizeof(prefix));
}

/* Lower is better; -1: cannot be reached. */
static int addr_rank(const struct procnet_entry *e)
{
	static const uint8_t any6[16], loop6[16] = { [15] = 1 };
	const uint8_t *v4 = NULL;

	if (!e->v6)
		v4 = e->addr;
	else if (is_v4_mapped(e->addr))
		v4 = e->addr + 12;
	if (v4) {
		if (v4[0] == 127)
			return 0;
		return !v4[0] && !v4[1] && !v4[2] && !v4[3] ? 1 : 2;
	}
	if (!memcmp(e->addr, loop6, 16))
		return 0;
	if (!memcmp(e->addr, any6, 16))
		return 1;
	if (e->addr[0] == 0xfe && (e->addr[1] & 0xc0) == 0x80)
		return -1; /* link-local: needs a scope id */
	return 2;
}

/* The host of the URL that reaches socket @e from inside its namespace. */
static int endpoint_of(const struct procnet_entry *e, struct go_endpoint *ep)
{
	struct procnet_entry v4 = { .v6 = false };
	int rank = addr_rank(e);

	ep->port = e->port;
	if (rank == 1) {
		snprintf(ep->host, sizeof(ep->host), "%s",
			 e->v6 && !is_v4_mapped(e->addr) ? "[::1]" : "127.0.0.1");
		return 0;
	}
	if (e->v6 && is_v4_mapped(e->addr)) {
		memcpy(v4.addr, e->addr + 12, 4);
		return procnet_format_addr(&v4, ep->host, sizeof(ep->host));
	}
	return procnet_format_addr(e, ep->host, sizeof(ep->host));
}

static uint32_t port_key(uint16_t port)
{
	return port == GO_PPROF_COMMON_PORT ? 0 : (uint32_t)port + 1;
}

/* Entry @i stands for its port: reachable and no better entry of the same port before it. */
static bool is_representative(const struct procnet_entry *e, size_t n, size_t i)
{
	int ri = addr_rank(&e[i]), rj;
	size_t j;

	if (ri < 0)
		return false;
	for (j = 0; j < n; j++) {
		if (j == i || e[j].port != e[i].port)
			continue;
		rj = addr_rank(&e[j]);
		if (rj >= 0 && (rj < ri || (rj == ri && j < i)))
			return false;
	}
	return true;
}

size_t go_pprof_candidates(const struct procnet_entry *e, size_t n, struct go_endpoint *out,
			   size_t max, size_t *total)
{
	size_t i, best, ports = 0, stored = 0;
	uint32_t last = 0, key;
	bool first = true, found;

	if (total)
		*total = 0;
	if (!e)
		return 0;
	for (i = 0; i < n; i++)
		ports += is_representative(e, n, i);
	/* Selection in port order: at most @max passes over at most LISTEN_MAX entries. */
	while (out && stored < max) {
		found = false;
		best = 0;
		for (i = 0; i < n; i++) {
			key = port_key(e[i].port);
			if ((!first && key <= last) || (found && key >= port_key(e[best].port)) ||
			    !is_representative(e, n, i))
				continue;
			best = i;
			found = true;
		}
		if (!found)
			break;
		if (!endpoint_of(&e[best], &out[stored]))
			stored++;
		last = port_key(e[best].port);
		first = false;
	}
	if (total)
		*total = ports;
	return stored;
}

/* Appends to @buf (@size bytes) at *@off; stops at the end of @buf. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t size, size_t *off,
							 const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, size - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off = *off + (size_t)n < size ? *off + (size_t)n : size - 1;
}

static const char *note_of(const char *const *notes, size_t i)
{
	return notes && notes[i] ? notes[i] : "no answer";
}

/* The first @shown ports, grouped by note in order of first appearance: "80, 81: HTTP 404". */
static void why_build(char *buf, size_t size, const uint16_t *ports, const char *const *notes,
		      size_t n, size_t shown, size_t not_probed)
{
	size_t i, j, off = 0;
	const char *sep = "", *psep;

	buf[0] = '\0';
	append(buf, size, &off, "none of its TCP ports (");
	for (i = 0; i < shown; i++) {
		for (j = 0; j < i && strcmp(note_of(notes, j), note_of(notes, i)); j++)
			;
		if (j < i)
			continue; /* listed with an earlier port */
		append(buf, size, &off, "%s", sep);
		for (j = i, psep = ""; j < shown; j++) {
			if (strcmp(note_of(notes, j), note_of(notes, i)))
				continue;
			append(buf, size, &off, "%s%u", psep, ports[j]);
			psep = ", ";
		}
		append(buf, size, &off, ": %s", note_of(notes, i));
		sep = "; ";
	}
	if (shown < n) {
		append(buf, size, &off, "%s%zu %s", sep, n - shown, shown ? "more" : "probed");
		sep = "; ";
	}
	if (not_probed)
		append(buf, size, &off, "%s%zu more not probed", sep, not_probed);
	append(buf, size, &off, ") serves " INDEX_PATH);
}

void go_pprof_why_none(const uint16_t *ports, const char *const *notes, size_t n, size_t not_probed,
		       char *why, size_t size)
{
	char buf[4096];
	size_t shown, len;

	if (!why || !size)
		return;
	if (!n && !not_probed) {
		snprintf(why, size, "it listens on no TCP port");
		return;
	}
	if (!ports)
		n = 0;
	for (shown = n;; shown--) {
		why_build(buf, sizeof(buf), ports, notes, n, shown, not_probed);
		len = strlen(buf);
		if (len < size || !shown)
			break;
	}
	/* Even the shortest form may not fit: cut it. memcpy, not snprintf: inlined into
	 * probe(), gcc's -Wformat-truncation would flag the cut that is meant. */
	if (len >= size)
		len = size - 1;
	memcpy(why, buf, len);
	why[len] = '\0';
}

void go_pprof_http_why(long status, const char *body, size_t len, char *why, size_t size)
{
	nshttp_status_why(status, body, len, why, size);
}

static int open_pid_dir(const char *proc_root, int pid)
{
	char path[4096];
	int fd, err;

	err = proc_path(path, sizeof(path), proc_root, (uint32_t)pid, "");
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return proc_gone(-errno);
	return fd;
}

static void why_pid_dir(char *why, size_t size, int err)
{
	if (err == -ESRCH)
		text_setf(why, size, "the process is gone");
	else
		text_setf(why, size, "cannot open its /proc directory (%s)", strerror(-err));
}

/* --- the cache -------------------------------------------------------------------------------- */

struct cache_entry {
	uint64_t used; /* LRU tick; 0: free */
	int pid;
	uint64_t start;	     /* process start time, clock ticks after boot */
	int err;	     /* 0 or -ENOENT */
	uint64_t expires_ms; /* 0: until the process is replaced */
	struct go_endpoint ep;
	char why[WHY_MAX];
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cache_entry cache[GO_PPROF_CACHE_ENTRIES];
static uint64_t cache_tick;

void go_pprof_cache_clear(void)
{
	pthread_mutex_lock(&cache_lock);
	memset(cache, 0, sizeof(cache));
	pthread_mutex_unlock(&cache_lock);
}

/* Returns 1 with the cached answer in *@e, or 0. Drops stale entries of @pid. */
static int cache_get(int pid, uint64_t start, struct cache_entry *e)
{
	uint64_t now = clock_mono_ms();
	int found = 0;
	size_t i;

	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < GO_PPROF_CACHE_ENTRIES; i++) {
		struct cache_entry *c = &cache[i];

		if (!c->used || c->pid != pid)
			continue;
		if (c->start != start || (c->expires_ms && now >= c->expires_ms)) {
			c->used = 0; /* another process with this pid, or expired */
			continue;
		}
		c->used = ++cache_tick;
		*e = *c;
		found = 1;
	}
	pthread_mutex_unlock(&cache_lock);
	return found;
}

static void cache_put(const struct cache_entry *e)
{
	struct cache_entry *slot = NULL;
	size_t i;

	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < GO_PPROF_CACHE_ENTRIES; i++) {
		struct cache_entry *c = &cache[i];

		if (c->used && c->pid == e->pid) {
			slot = c; /* replaces this process's (or a stale) entry */
			break;
		}
		if (!slot || (slot->used && c->used < slot->used))
			slot = c; /* a free slot, else the least recently used */
	}
	*slot = *e;
	slot->used = ++cache_tick;
	pthread_mutex_unlock(&cache_lock);
}

static void cache_forget(int pid)
{
	size_t i;

	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < GO_PPROF_CACHE_ENTRIES; i++) {
		if (cache[i].pid == pid)
			cache[i].used = 0;
	}
	pthread_mutex_unlock(&cache_lock);
}

/* --- finding ---------------------------------------------------------------------------------- */

static bool probe_wanted(void *ctx, size_t i, const struct nshttp_res *res)
{
	(void)ctx;
	(void)i;
	return go_pprof_is_index(res->body, res->len);
}

/* Probes @cand (@n) in the namespace; the first good one in order wins. */
static int probe(int pid_fd, const struct go_endpoint *cand, size_t n, size_t total,
		 struct cache_entry *res)
{
	static const struct nshttp_opts opts = { .wanted = probe_wanted };
	struct nshttp_req req[GO_PPROF_MAX_PROBES];
	const char *notes[GO_PPROF_MAX_PROBES];
	uint16_t ports[GO_PPROF_MAX_PROBES];
	struct nshttp_res *r;
	bool good;
	size_t i;
	int err;

	r = calloc(n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		req[i] = (struct nshttp_req){
			.host = cand[i].host,
			.port = cand[i].port,
			.path = INDEX_PATH,
			.timeout_ms = GO_PPROF_PROBE_TIMEOUT_MS,
			.connect_ms = GO_PPROF_PROBE_TIMEOUT_MS,
			.max_bytes = GO_PPROF_PROBE_MAX_BYTES,
			.max_header_bytes = GO_PPROF_HEADER_MAX_BYTES,
		};
	}
	err = nshttp_get_all(pid_fd, req, r, n, &opts);
	if (err)
		goto out;
	res->err = -ENOENT;
	for (i = 0; i < n; i++) {
		good = !r[i].err && go_pprof_is_index(r[i].body, r[i].len);
		if (!r[i].err && !good)
			snprintf(r[i].note, sizeof(r[i].note), "not the pprof index");
		pr_debug("go_pprof: probe http://%s:%u" INDEX_PATH ": %s", cand[i].host,
			 cand[i].port, good ? "pprof index" : r[i].note);
		if (res->err && good) {
			res->err = 0;
			res->ep = cand[i];
		}
		ports[i] = cand[i].port;
		notes[i] = r[i].note;
	}
	if (res->err)
		go_pprof_why_none(ports, notes, n, total - n, res->why, sizeof(res->why));
	for (i = 0; i < n; i++)
		free(r[i].body);
out:
	free(r);
	return err;
}

static int find_uncached(int pid_fd, struct cache_entry *res)
{
	struct go_endpoint cand[GO_PPROF_MAX_PROBES];
	struct procnet_entry *l;
	size_t n = 0, ncand, total;
	int k, err;

	l = calloc(LISTEN_MAX, sizeof(*l));
	if (!l)
		return -ENOMEM;
	err = proc_listening_read(pid_fd, l, LISTEN_MAX, &n);
	if (err) {
		snprintf(res->why, sizeof(res->why), "cannot read its TCP sockets (%s)",
			 strerror(-err));
		goto out;
	}
	k = proc_listening_owned(pid_fd, l, n);
	if (k < 0) {
		err = k;
		snprintf(res->why, sizeof(res->why), "cannot read its file descriptors (%s)",
			 strerror(-err));
		goto out;
	}
	ncand = go_pprof_candidates(l, (size_t)k, cand, GO_PPROF_MAX_PROBES, &total);
	if (!ncand) {
		res->err = -ENOENT;
		go_pprof_why_none(NULL, NULL, 0, 0, res->why, sizeof(res->why));
		goto out;
	}
	err = probe(pid_fd, cand, ncand, total, res);
	if (err)
		snprintf(res->why, sizeof(res->why), "cannot reach its network namespace (%s)",
			 strerror(-err));
out:
	free(l);
	return err;
}

int go_pprof_find(const char *proc_root, int pid, struct go_endpoint *ep, char *why, size_t size)
{
	struct cache_entry res = { .pid = pid, .why = "out of memory" };
	size_t len;
	char *stat;
	int pid_fd, err;

	if (pid <= 0 || !ep) {
		text_setf(why, size, "no process given");
		return -EINVAL;
	}
	pid_fd = open_pid_dir(proc_root, pid);
	if (pid_fd < 0) {
		why_pid_dir(why, size, pid_fd);
		return pid_fd;
	}
	/* Everything below reads through pid_fd: if the pid is reused meanwhile, the reads fail
	 * instead of describing another process. */
	err = read_file_bounded(pid_fd, "stat", STAT_MAX, &stat, &len);
	if (!err) {
		err = go_pprof_parse_starttime(stat, len, &res.start);
		free(stat);
	} else if (err == -ENOENT) {
		err = -ESRCH;
	}
	if (err == -ESRCH) {
		why_pid_dir(why, size, err);
		goto out;
	}
	if (err) {
		text_setf(why, size, "cannot read its start time (%s)", strerror(-err));
		goto out;
	}
	if (cache_get(pid, res.start, &res)) {
		err = res.err;
		goto answer;
	}
	err = find_uncached(pid_fd, &res);
	if (err) {
		text_setf(why, size, "%s", res.why);
		goto out;
	}
	res.expires_ms = res.err ? clock_mono_ms() + GO_PPROF_MISS_TTL_MS : 0;
	cache_put(&res);
	err = res.err;
answer:
	if (err)
		text_setf(why, size, "%s", res.why);
	else
		*ep = res.ep;
out:
	close(pid_fd);
	return err;
}

/* --- fetching --------------------------------------------------------------------------------- */

int go_pprof_get(const char *proc_root, int pid, const struct go_endpoint *ep, const char *path,
		 int timeout_ms, size_t max_bytes, char **body, size_t *len, char *why, size_t size)
{
	struct nshttp_req req = {
		.host = ep ? ep->host : NULL,
		.port = ep ? ep->port : 0,
		.path = path,
		.timeout_ms = timeout_ms,
		.connect_ms = timeout_ms < GO_PPROF_CONNECT_TIMEOUT_MS ?
				      timeout_ms :
				      GO_PPROF_CONNECT_TIMEOUT_MS,
		.max_bytes = max_bytes,
		.max_header_bytes = GO_PPROF_HEADER_MAX_BYTES,
	};
	struct nshttp_res res;
	int pid_fd, err;

	if (pid <= 0 || nshttp_req_check(&req) || !body || !len) {
		text_setf(why, size, "invalid request");
		return -EINVAL;
	}
	pid_fd = open_pid_dir(proc_root, pid);
	if (pid_fd < 0) {
		why_pid_dir(why, size, pid_fd);
		return pid_fd;
	}
	err = nshttp_get_all(pid_fd, &req, &res, 1, NULL);
	close(pid_fd);
	if (err) {
		text_setf(why, size, "cannot reach its network namespace (%s)", strerror(-err));
		return err;
	}
	if (res.err) {
		/* The port closed: the next find probes again. */
		if (res.err == -ECONNREFUSED)
			cache_forget(pid);
		text_setf(why, size, "%s", res.why);
		return res.err;
	}
	*body = res.body;
	*len = res.len;
	return 0;
}
