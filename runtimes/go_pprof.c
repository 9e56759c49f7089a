// SPDX-License-Identifier: Apache-2.0
#include "runtimes/go_pprof.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/fileio.h"
#include "daemon/log.h"

#define STAT_MAX (16u << 10)
#define PROC_NET_MAX (64u << 20)	/* about 400000 sockets in one network namespace */
#define LISTEN_MAX 512			/* listening sockets of one namespace looked at */
#define FD_SCAN_MAX (1u << 17)		/* fds of the process looked at */
#define GET_MAX_BYTES (1ul << 30)	/* largest @max_bytes go_pprof_get() accepts */
#define GET_MAX_TIMEOUT_MS (10 * 60 * 1000)
#define PATH_LEN_MAX 1024
#define ERR_BODY_MAX 128		/* bytes of a non-200 body kept for the message */
#define NOTE_MAX 160
#define WHY_MAX 512
#define STATUS_LINE_MAX 80
#define DEADLINE_SLACK_MS 1000		/* beyond curl's own timeouts, in case they slip */
#define INDEX_PATH "/debug/pprof/"
#define USER_AGENT "slideops-profiler"

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
		return -1;	/* link-local: needs a scope id */
	return 2;
}

/* The host of the URL that reaches socket @e from inside its namespace. */
static int endpoint_of(const struct procnet_entry *e, struct go_endpoint *ep)
{
	struct procnet_entry v4 = { .v6 = false };
	int rank = addr_rank(e);

	ep->port = e->port;
	if (rank == 1) {
		snprintf(ep->host, sizeof(ep->host), "%s", e->v6 && !is_v4_mapped(e->addr) ?
			 "[::1]" : "127.0.0.1");
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
			continue;	/* listed with an earlier port */
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

void go_pprof_why_none(const uint16_t *ports, const char *const *notes, size_t n,
		       size_t not_probed, char *why, size_t size)
{
	char buf[4096];
	size_t shown;

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
		if (strlen(buf) < size || !shown)
			break;
	}
	snprintf(why, size, "%s", buf);
}

void go_pprof_http_why(long status, const char *body, size_t len, char *why, size_t size)
{
	char line[STATUS_LINE_MAX + 1];
	size_t i, n = 0;

	if (!why || !size)
		return;
	for (i = 0; body && i < len && body[i] != '\n' && n < STATUS_LINE_MAX; i++) {
		unsigned char c = (unsigned char)body[i];

		if (c == '\r' && (i + 1 == len || body[i + 1] == '\n'))
			break;
		line[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	while (n && line[n - 1] == ' ')
		n--;
	line[n] = '\0';
	for (i = 0; i < n && line[i] == ' '; i++)
		;
	if (i < n)
		snprintf(why, size, "HTTP %ld: %s", status, line + i);
	else
		snprintf(why, size, "HTTP %ld", status);
}

/* --- one HTTP exchange ---------------------------------------------------------------------- */

struct req {
	char url[64 + PATH_LEN_MAX];
	long timeout_ms, connect_ms;
	size_t max_bytes;
	CURL *h;
	bool added, done;
	/* the answer */
	int err;
	long status;
	char *body;
	size_t len, cap;
	char errbody[ERR_BODY_MAX];	/* the start of a non-200 body */
	size_t errbody_len;
	size_t header_bytes;
	bool too_big, headers_too_big;
	char errbuf[CURL_ERROR_SIZE];
	char note[NOTE_MAX];		/* "HTTP 404", "no answer within 500 ms" */
	char why[WHY_MAX];		/* for go_pprof_get(): the note, or "HTTP 404: <line>" */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct req *r = ctx;
	size_t len = size * n;

	(void)p;
	r->header_bytes += len;
	if (r->header_bytes > GO_PPROF_HEADER_MAX_BYTES) {
		r->headers_too_big = true;
		return 0;	/* aborts the transfer */
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct req *r = ctx;
	size_t len = size * n, room, ncap;
	long status = 0;
	char *tmp;

	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		/* Only the start is kept for the message; past that, stop reading. */
		room = sizeof(r->errbody) - r->errbody_len;
		memcpy(r->errbody + r->errbody_len, p, len < room ? len : room);
		r->errbody_len += len < room ? len : room;
		return r->errbody_len < sizeof(r->errbody) ? len : 0;
	}
	if (len > r->max_bytes - r->len) {
		r->too_big = true;
		return 0;
	}
	if (r->len + len + 1 > r->cap) {
		ncap = r->cap ? r->cap : 16384;
		while (ncap < r->len + len + 1)
			ncap *= 2;
		if (ncap > r->max_bytes + 1)
			ncap = r->max_bytes + 1;
		tmp = realloc(r->body, ncap);
		if (!tmp)
			return 0;	/* r->err becomes -ENOMEM: too_big is not set */
		r->body = tmp;
		r->cap = ncap;
	}
	memcpy(r->body + r->len, p, len);
	r->len += len;
	r->body[r->len] = '\0';
	return len;
}

static int req_setup(struct req *r)
{
	CURL *h = curl_easy_init();

	if (!h)
		return -ENOMEM;
	r->h = h;
	/* HTTP only, never through a proxy (CURLOPT_PROXY "" overrides the environment), no
	 * redirects, no Accept-Encoding (bodies are taken as sent), fresh connection. */
	if (curl_easy_setopt(h, CURLOPT_URL, r->url) ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http") ||
	    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http") ||
	    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) ||
	    curl_easy_setopt(h, CURLOPT_PROXY, "") ||
	    curl_easy_setopt(h, CURLOPT_NOPROXY, "*") ||
	    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) ||
	    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L) ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, r->connect_ms) ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms) ||
	    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->max_bytes) ||
	    curl_easy_setopt(h, CURLOPT_USERAGENT, USER_AGENT) ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->errbuf) ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, r) ||
	    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) ||
	    curl_easy_setopt(h, CURLOPT_HEADERDATA, r))
		return -EINVAL;
	return 0;
}

/* Printable, one line. */
static void clean_text(char *t)
{
	for (; *t; t++) {
		if ((unsigned char)*t < 0x20 || (unsigned char)*t >= 0x7f)
			*t = ' ';
	}
}

/* Sets r->err, r->note and r->why from curl's result. */
static void req_finish(struct req *r, CURLcode rc)
{
	curl_off_t connect_us = 0;
	long status = 0, oserr = 0;

	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(r->h, CURLINFO_OS_ERRNO, &oserr);
	curl_easy_getinfo(r->h, CURLINFO_CONNECT_TIME_T, &connect_us);
	r->status = status;
	r->err = 0;
	if (rc == CURLE_OK && status == 200)
		return;
	if (r->headers_too_big) {
		r->err = -EFBIG;
		snprintf(r->note, sizeof(r->note), "response headers larger than %u bytes",
			 GO_PPROF_HEADER_MAX_BYTES);
	} else if (status && status != 200) {
		r->err = -EPROTO;
		snprintf(r->note, sizeof(r->note), "HTTP %ld", status);
		go_pprof_http_why(status, r->errbody, r->errbody_len, r->why, sizeof(r->why));
		return;
	} else if (r->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		r->err = -EFBIG;
		snprintf(r->note, sizeof(r->note), "an answer larger than %zu bytes", r->max_bytes);
	} else {
		switch (rc) {
		case CURLE_OPERATION_TIMEDOUT:
			r->err = -ETIMEDOUT;
			if (connect_us > 0)
				snprintf(r->note, sizeof(r->note),
					 "no complete answer within %ld ms", r->timeout_ms);
			else
				snprintf(r->note, sizeof(r->note), "no connection within %ld ms",
					 r->connect_ms);
			break;
		case CURLE_COULDNT_CONNECT:
			r->err = oserr > 0 ? -(int)oserr : -ECONNREFUSED;
			snprintf(r->note, sizeof(r->note), "cannot connect (%s)",
				 strerror(-r->err));
			break;
		case CURLE_GOT_NOTHING:
			r->err = -EPROTO;
			snprintf(r->note, sizeof(r->note),
				 "the connection closed without an answer");
			break;
		case CURLE_PARTIAL_FILE:
			r->err = -EPROTO;
			snprintf(r->note, sizeof(r->note), "the answer was cut short");
			break;
		case CURLE_UNSUPPORTED_PROTOCOL:	/* "Received HTTP/0.9 when not allowed" */
		case CURLE_WEIRD_SERVER_REPLY:
		case CURLE_BAD_CONTENT_ENCODING:
		case CURLE_HTTP2:
		case CURLE_HTTP_RETURNED_ERROR:
			r->err = -EPROTO;
			snprintf(r->note, sizeof(r->note), "not an HTTP answer (%.100s)",
				 r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
			break;
		case CURLE_RECV_ERROR:
		case CURLE_SEND_ERROR:
			if (oserr > 0) {
				r->err = -(int)oserr;
				snprintf(r->note, sizeof(r->note), "the connection failed (%s)",
					 strerror(-r->err));
			} else {	/* e.g. a malformed chunked body */
				r->err = -EPROTO;
				snprintf(r->note, sizeof(r->note), "a malformed answer (%.100s)",
					 r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
			}
			break;
		case CURLE_OUT_OF_MEMORY:
			r->err = -ENOMEM;
			snprintf(r->note, sizeof(r->note), "out of memory");
			break;
		case CURLE_WRITE_ERROR:		/* on_body() could not grow the buffer */
			r->err = -ENOMEM;
			snprintf(r->note, sizeof(r->note), "out of memory for the answer");
			break;
		default:
			r->err = -EIO;
			snprintf(r->note, sizeof(r->note), "%.120s",
				 r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
			break;
		}
	}
	clean_text(r->note);
	snprintf(r->why, sizeof(r->why), "%s", r->note);
}

/* Request @i has answered 200 and every request before it is done: nothing better can come. */
static bool decided(const struct req *r, size_t n, bool (*good)(const struct req *))
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!r[i].done)
			return false;
		if (good(&r[i]))
			return true;
	}
	return false;
}

/*
 * Runs the @n requests at once (in the calling thread: the caller is the namespace thread).
 * With @good, stops as soon as the first good request in order is known. Every request ends
 * with r->err set (-ECANCELED: stopped early). Returns 0 or -errno when curl cannot run.
 */
static int run_requests(struct req *r, size_t n, bool (*good)(const struct req *))
{
	uint64_t deadline = 0;
	long max_ms = 0;
	CURLMsg *msg;
	CURLM *m;
	int still = 0, left, err = 0;
	size_t i;

	m = curl_multi_init();
	if (!m)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = req_setup(&r[i]);
		if (!err && curl_multi_add_handle(m, r[i].h) != CURLM_OK)
			err = -ENOMEM;
		if (err)
			goto out;
		r[i].added = true;
		if (r[i].timeout_ms > max_ms)
			max_ms = r[i].timeout_ms;
	}
	deadline = now_ms() + (uint64_t)max_ms + DEADLINE_SLACK_MS;
	for (;;) {
		if (curl_multi_perform(m, &still) != CURLM_OK) {
			err = -EIO;
			break;
		}
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (i = 0; i < n && r[i].h != msg->easy_handle; i++)
				;
			if (i == n || r[i].done)
				continue;
			req_finish(&r[i], msg->data.result);
			r[i].done = true;
			curl_multi_remove_handle(m, r[i].h);
			r[i].added = false;
		}
		if (!still || (good && decided(r, n, good)) || now_ms() >= deadline)
			break;
		if (curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK) {
			err = -EIO;
			break;
		}
	}
out:
	for (i = 0; i < n; i++) {
		if (!r[i].done) {
			r[i].err = still && !err && now_ms() >= deadline ? -ETIMEDOUT : -ECANCELED;
			snprintf(r[i].note, sizeof(r[i].note), "%s", r[i].err == -ETIMEDOUT ?
				 "no answer in time" : "not probed");
			snprintf(r[i].why, sizeof(r[i].why), "%s", r[i].note);
		}
		if (r[i].added)
			curl_multi_remove_handle(m, r[i].h);
		curl_easy_cleanup(r[i].h);
		r[i].h = NULL;
		r[i].added = false;
	}
	curl_multi_cleanup(m);
	return err;
}

/* --- the network namespace thread ----------------------------------------------------------- */

struct ns_job {
	int pid_fd;			/* /proc/PID */
	struct req *r;
	size_t n;
	bool (*good)(const struct req *);
	int err;
};

static void *ns_main(void *arg)
{
	struct ns_job *j = arg;
	int fd;

	fd = openat(j->pid_fd, "ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		j->err = errno == ENOENT ? -ESRCH : -errno;
		return NULL;
	}
	/* Only this thread moves, and it exits afterwards. CLONE_NEWNS is never used: a
	 * process with threads cannot change its mount namespace (EINVAL). */
	if (setns(fd, CLONE_NEWNET) < 0) {
		j->err = -errno;
		close(fd);
		return NULL;
	}
	close(fd);
	j->err = run_requests(j->r, j->n, j->good);
	return NULL;
}

static int in_netns(struct ns_job *j)
{
	sigset_t all, old;
	pthread_t t;
	int err;

	err = pthread_once(&curl_once, curl_init);
	if (err || curl_init_rc != CURLE_OK)
		return -ENOMEM;
	/* The thread takes no signals: they stay with the threads that handle them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t, NULL, ns_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	pthread_join(t, NULL);
	return j->err;
}

static int open_pid_dir(const char *proc_root, int pid)
{
	char path[4096];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%d", proc_root ? proc_root : "/proc", pid) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

static void set_why(char *why, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

static void why_pid_dir(char *why, size_t size, int err)
{
	if (err == -ESRCH)
		set_why(why, size, "the process is gone");
	else
		set_why(why, size, "cannot open its /proc directory (%s)", strerror(-err));
}

/* --- the cache -------------------------------------------------------------------------------- */

struct cache_entry {
	uint64_t used;			/* LRU tick; 0: free */
	int pid;
	uint64_t start;			/* process start time, clock ticks after boot */
	int err;			/* 0 or -ENOENT */
	uint64_t expires_ms;		/* 0: until the process is replaced */
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
	uint64_t now = now_ms();
	int found = 0;
	size_t i;

	pthread_mutex_lock(&cache_lock);
	for (i = 0; i < GO_PPROF_CACHE_ENTRIES; i++) {
		struct cache_entry *c = &cache[i];

		if (!c->used || c->pid != pid)
			continue;
		if (c->start != start || (c->expires_ms && now >= c->expires_ms)) {
			c->used = 0;	/* another process with this pid, or expired */
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
			slot = c;	/* replaces this process's (or a stale) entry */
			break;
		}
		if (!slot || (slot->used && c->used < slot->used))
			slot = c;	/* a free slot, else the least recently used */
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

static int cmp_inode(const void *a, const void *b)
{
	const struct procnet_entry *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

/* Reads the listening sockets of the process's network namespace into @l (LISTEN_MAX). */
static int read_listening(int pid_fd, struct procnet_entry *l, size_t *n)
{
	static const char *const files[2] = { "net/tcp", "net/tcp6" };
	size_t len, got = 0;
	char *buf;
	int i, k, err;

	for (i = 0; i < 2; i++) {
		err = read_file_bounded(pid_fd, files[i], PROC_NET_MAX, &buf, &len);
		if (err == -ENOENT && i == 1)
			continue;	/* a kernel without IPv6 */
		if (err)
			return err == -ENOENT ? -ESRCH : err;
		k = procnet_listening(buf, len, i == 1, l + got, LISTEN_MAX - got, NULL);
		free(buf);
		if (k < 0)
			return k;
		got += (size_t)k;
	}
	*n = got;
	return 0;
}

/*
 * Keeps in @l (sorted by inode) the sockets that are the process's own: its fds that are
 * "socket:[N]" links. Returns how many are kept, or -errno.
 */
static int keep_owned(int pid_fd, struct procnet_entry *l, size_t n)
{
	struct procnet_entry key, *hit;
	bool *owned;
	size_t scanned = 0, matched = 0, i, kept = 0;
	char link[64], *end;
	struct dirent *de;
	DIR *d;
	int fd, err = 0;
	ssize_t k;

	if (!n)
		return 0;
	qsort(l, n, sizeof(*l), cmp_inode);
	owned = calloc(n, sizeof(*owned));
	if (!owned)
		return -ENOMEM;
	fd = openat(pid_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT ? -ESRCH : -errno;
		goto out;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		goto out;
	}
	while (matched < n && scanned < FD_SCAN_MAX && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		scanned++;
		k = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (k < 9)
			continue;	/* closed meanwhile, or not a socket */
		link[k] = '\0';
		if (strncmp(link, "socket:[", 8) || link[k - 1] != ']')
			continue;
		errno = 0;
		key.inode = strtoull(link + 8, &end, 10);
		if (errno || end != link + k - 1 || end == link + 8)
			continue;
		hit = bsearch(&key, l, n, sizeof(*l), cmp_inode);
		if (hit && !owned[hit - l]) {
			owned[hit - l] = true;
			matched++;
		}
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		if (owned[i])
			l[kept++] = l[i];
	}
	err = (int)kept;
out:
	free(owned);
	return err;
}

static bool probe_good(const struct req *r)
{
	return !r->err && go_pprof_is_index(r->body, r->len);
}

/* Probes @cand (@n) in the namespace; the first good one in order wins. */
static int probe(int pid_fd, const struct go_endpoint *cand, size_t n, size_t total,
		 struct cache_entry *res)
{
	const char *notes[GO_PPROF_MAX_PROBES];
	uint16_t ports[GO_PPROF_MAX_PROBES];
	struct ns_job j = { .pid_fd = pid_fd, .n = n, .good = probe_good };
	struct req *r;
	size_t i;
	int err;

	r = calloc(n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		snprintf(r[i].url, sizeof(r[i].url), "http://%s:%u" INDEX_PATH, cand[i].host,
			 cand[i].port);
		r[i].timeout_ms = GO_PPROF_PROBE_TIMEOUT_MS;
		r[i].connect_ms = GO_PPROF_PROBE_TIMEOUT_MS;
		r[i].max_bytes = GO_PPROF_PROBE_MAX_BYTES;
	}
	j.r = r;
	err = in_netns(&j);
	if (err)
		goto out;
	res->err = -ENOENT;
	for (i = 0; i < n; i++) {
		if (!r[i].err && !go_pprof_is_index(r[i].body, r[i].len))
			snprintf(r[i].note, sizeof(r[i].note), "not the pprof index");
		pr_debug("go_pprof: probe %s: %s", r[i].url, r[i].err ? r[i].note :
			 probe_good(&r[i]) ? "pprof index" : r[i].note);
		if (res->err && probe_good(&r[i])) {
			res->err = 0;
			res->ep = cand[i];
		}
		ports[i] = cand[i].port;
		notes[i] = r[i].note;
	}
	if (res->err)
		go_pprof_why_none(ports, notes, n, total - n, res->why, sizeof(res->why));
out:
	for (i = 0; i < n; i++)
		free(r[i].body);
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
	err = read_listening(pid_fd, l, &n);
	if (err) {
		snprintf(res->why, sizeof(res->why), "cannot read its TCP sockets (%s)",
			 strerror(-err));
		goto out;
	}
	k = keep_owned(pid_fd, l, n);
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

int go_pprof_find(const char *proc_root, int pid, struct go_endpoint *ep, char *why,
		  size_t size)
{
	struct cache_entry res = { .pid = pid, .why = "out of memory" };
	size_t len;
	char *stat;
	int pid_fd, err;

	if (pid <= 0 || !ep) {
		set_why(why, size, "no process given");
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
		set_why(why, size, "cannot read its start time (%s)", strerror(-err));
		goto out;
	}
	if (cache_get(pid, res.start, &res)) {
		err = res.err;
		goto answer;
	}
	err = find_uncached(pid_fd, &res);
	if (err) {
		set_why(why, size, "%s", res.why);
		goto out;
	}
	res.expires_ms = res.err ? now_ms() + GO_PPROF_MISS_TTL_MS : 0;
	cache_put(&res);
	err = res.err;
answer:
	if (err)
		set_why(why, size, "%s", res.why);
	else
		*ep = res.ep;
out:
	close(pid_fd);
	return err;
}

/* --- fetching --------------------------------------------------------------------------------- */

static bool valid_host(const char *h)
{
	size_t i, n = strnlen(h, sizeof(((struct go_endpoint *)0)->host));

	if (!n || n == sizeof(((struct go_endpoint *)0)->host))
		return false;
	for (i = 0; i < n; i++) {
		if (!strchr("0123456789abcdefABCDEF.:[]", h[i]))
			return false;
	}
	return true;
}

static bool valid_path(const char *p)
{
	size_t i;

	if (!p || p[0] != '/')
		return false;
	for (i = 0; p[i]; i++) {
		if (i >= PATH_LEN_MAX || (unsigned char)p[i] <= 0x20 ||
		    (unsigned char)p[i] >= 0x7f || p[i] == '#')
			return false;
	}
	return true;
}

int go_pprof_get(const char *proc_root, int pid, const struct go_endpoint *ep, const char *path,
		 int timeout_ms, size_t max_bytes, char **body, size_t *len, char *why,
		 size_t size)
{
	struct ns_job j = { .n = 1 };
	struct req *r;
	int err;

	if (pid <= 0 || !ep || !ep->port || !valid_host(ep->host) || !valid_path(path) ||
	    timeout_ms <= 0 || timeout_ms > GET_MAX_TIMEOUT_MS || !max_bytes ||
	    max_bytes > GET_MAX_BYTES || !body || !len) {
		set_why(why, size, "invalid request");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		set_why(why, size, "out of memory");
		return -ENOMEM;
	}
	snprintf(r->url, sizeof(r->url), "http://%s:%u%s", ep->host, ep->port, path);
	r->timeout_ms = timeout_ms;
	r->connect_ms = timeout_ms < GO_PPROF_CONNECT_TIMEOUT_MS ? timeout_ms :
							       GO_PPROF_CONNECT_TIMEOUT_MS;
	r->max_bytes = max_bytes;
	j.r = r;
	j.pid_fd = open_pid_dir(proc_root, pid);
	if (j.pid_fd < 0) {
		err = j.pid_fd;
		why_pid_dir(why, size, err);
		goto out;
	}
	err = in_netns(&j);
	close(j.pid_fd);
	if (err) {
		set_why(why, size, "cannot reach its network namespace (%s)", strerror(-err));
		goto out;
	}
	err = r->err;
	if (err) {
		/* The port closed: the next find probes again. */
		if (err == -ECONNREFUSED)
			cache_forget(pid);
		set_why(why, size, "%s", r->why);
		goto out;
	}
	if (!r->body) {
		r->body = malloc(1);
		if (!r->body) {
			err = -ENOMEM;
			set_why(why, size, "out of memory");
			goto out;
		}
		r->body[0] = '\0';
	}
	*body = r->body;
	*len = r->len;
	r->body = NULL;
out:
	free(r->body);
	free(r);
	return err;
}
