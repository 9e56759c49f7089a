// SPDX-License-Identifier: Apache-2.0
#include "runtimes/nshttp.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

#define ERR_BODY_MAX 128 /* bytes of a non-200 body kept for the message */
#define STATUS_LINE_MAX 80
#define URL_MAX (sizeof("http://:65535") + NSHTTP_HOST_MAX + NSHTTP_PATH_LEN_MAX)
#define DEADLINE_SLACK_MS 1000 /* beyond curl's own timeouts, in case they slip */
#define USER_AGENT "slideops-profiler"

/* --- pure helpers ------------------------------------------------------------------------- */

static bool valid_host(const char *h)
{
	size_t i, n;

	if (!h)
		return false;
	n = strnlen(h, NSHTTP_HOST_MAX);
	if (!n || n == NSHTTP_HOST_MAX)
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
		if (i >= NSHTTP_PATH_LEN_MAX || (unsigned char)p[i] <= 0x20 ||
		    (unsigned char)p[i] >= 0x7f || p[i] == '#')
			return false;
	}
	return true;
}

int nshttp_req_check(const struct nshttp_req *r)
{
	if (!r || !valid_host(r->host) || !r->port || !valid_path(r->path) || r->timeout_ms <= 0 ||
	    r->timeout_ms > NSHTTP_TIMEOUT_MAX_MS || r->connect_ms < 0 ||
	    r->connect_ms > r->timeout_ms || !r->max_bytes ||
	    r->max_bytes > NSHTTP_BODY_MAX_BYTES || !r->max_header_bytes ||
	    r->max_header_bytes > NSHTTP_HEADER_MAX_BYTES)
		return -EINVAL;
	return 0;
}

void nshttp_status_why(long status, const char *body, size_t len, char *why, size_t size)
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

/* A request in flight: its curl handle and what has arrived so far. */
struct xfer {
	const struct nshttp_req *req;
	char url[URL_MAX];
	long timeout_ms, connect_ms;
	CURL *h;
	bool added, done, wanted;
	struct nshttp_res res; /* copied out when the call succeeds */
	size_t cap;
	char errbody[ERR_BODY_MAX]; /* the start of a non-200 body */
	size_t errbody_len;
	size_t header_bytes;
	bool too_big, headers_too_big;
	char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	size_t len = size * n;

	(void)p;
	x->header_bytes += len;
	if (x->header_bytes > x->req->max_header_bytes) {
		x->headers_too_big = true;
		return 0; /* aborts the transfer */
	}
	return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct xfer *x = ctx;
	struct nshttp_res *r = &x->res;
	size_t len = size * n, room, ncap, max = x->req->max_bytes;
	long status = 0;
	char *tmp;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		/* Only the start is kept for the message; past that, stop reading. */
		room = sizeof(x->errbody) - x->errbody_len;
		memcpy(x->errbody + x->errbody_len, p, len < room ? len : room);
		x->errbody_len += len < room ? len : room;
		return x->errbody_len < sizeof(x->errbody) ? len : 0;
	}
	if (len > max - r->len) {
		x->too_big = true;
		return 0;
	}
	if (r->len + len + 1 > x->cap) {
		ncap = x->cap ? x->cap : 16384;
		while (ncap < r->len + len + 1)
			ncap *= 2;
		if (ncap > max + 1)
			ncap = max + 1;
		tmp = realloc(r->body, ncap);
		if (!tmp)
			return 0; /* res.err becomes -ENOMEM: too_big is not set */
		r->body = tmp;
		x->cap = ncap;
	}
	memcpy(r->body + r->len, p, len);
	r->len += len;
	r->body[r->len] = '\0';
	return len;
}

static int xfer_setup(struct xfer *x)
{
	CURL *h = curl_easy_init();

	if (!h)
		return -ENOMEM;
	x->h = h;
	/* HTTP only, never through a proxy (CURLOPT_PROXY "" overrides the environment), no
	 * redirects, no Accept-Encoding (bodies are taken as sent), fresh connection. */
	if (curl_easy_setopt(h, CURLOPT_URL, x->url) || curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http") ||
	    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http") ||
	    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) ||
	    curl_easy_setopt(h, CURLOPT_PROXY, "") || curl_easy_setopt(h, CURLOPT_NOPROXY, "*") ||
	    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) ||
	    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L) ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, x->connect_ms) ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, x->timeout_ms) ||
	    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->req->max_bytes) ||
	    curl_easy_setopt(h, CURLOPT_USERAGENT, USER_AGENT) ||
	    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf) ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, x) ||
	    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) ||
	    curl_easy_setopt(h, CURLOPT_HEADERDATA, x))
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

/* The error and note of a transfer that did not end with 200 and the whole body. */
static int xfer_error(struct xfer *x, CURLcode rc, long status, char *note, size_t size)
{
	const char *curl_why = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
	curl_off_t connect_us = 0;
	long oserr = 0;
	int err;

	curl_easy_getinfo(x->h, CURLINFO_OS_ERRNO, &oserr);
	curl_easy_getinfo(x->h, CURLINFO_CONNECT_TIME_T, &connect_us);
	if (x->headers_too_big) {
		snprintf(note, size, "response headers larger than %zu bytes",
			 x->req->max_header_bytes);
		return -EFBIG;
	}
	if (status && status != 200) {
		snprintf(note, size, "HTTP %ld", status);
		return -EPROTO;
	}
	if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
		snprintf(note, size, "an answer larger than %zu bytes", x->req->max_bytes);
		return -EFBIG;
	}
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		if (connect_us > 0)
			snprintf(note, size, "no complete answer within %ld ms", x->timeout_ms);
		else
			snprintf(note, size, "no connection within %ld ms", x->connect_ms);
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		err = oserr > 0 ? -(int)oserr : -ECONNREFUSED;
		snprintf(note, size, "cannot connect (%s)", strerror(-err));
		return err;
	case CURLE_GOT_NOTHING:
		snprintf(note, size, "the connection closed without an answer");
		return -EPROTO;
	case CURLE_PARTIAL_FILE:
		snprintf(note, size, "the answer was cut short");
		return -EPROTO;
	case CURLE_UNSUPPORTED_PROTOCOL: /* "Received HTTP/0.9 when not allowed" */
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_BAD_CONTENT_ENCODING:
	case CURLE_HTTP2:
	case CURLE_HTTP_RETURNED_ERROR:
		snprintf(note, size, "not an HTTP answer (%.100s)", curl_why);
		return -EPROTO;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
		if (oserr > 0) {
			snprintf(note, size, "the connection failed (%s)", strerror((int)oserr));
			return -(int)oserr;
		}
		/* e.g. a malformed chunked body */
		snprintf(note, size, "a malformed answer (%.100s)", curl_why);
		return -EPROTO;
	case CURLE_OUT_OF_MEMORY:
		snprintf(note, size, "out of memory");
		return -ENOMEM;
	case CURLE_WRITE_ERROR: /* on_body() could not grow the buffer */
		snprintf(note, size, "out of memory for the answer");
		return -ENOMEM;
	default:
		snprintf(note, size, "%.120s", curl_why);
		return -EIO;
	}
}

/* Sets x->res from curl's result: err, status, note, why; a body only on success. */
static void xfer_finish(struct xfer *x, CURLcode rc)
{
	struct nshttp_res *r = &x->res;
	long status = 0;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	r->status = status;
	r->err = 0;
	if (rc == CURLE_OK && status == 200 && !r->body) {
		r->body = malloc(1); /* an empty body is still a buffer */
		if (r->body)
			r->body[0] = '\0';
		else
			rc = CURLE_OUT_OF_MEMORY;
	}
	if (rc == CURLE_OK && status == 200)
		return;
	r->err = xfer_error(x, rc, status, r->note, sizeof(r->note));
	clean_text(r->note);
	if (status && status != 200 && !x->headers_too_big)
		nshttp_status_why(status, x->errbody, x->errbody_len, r->why, sizeof(r->why));
	else
		snprintf(r->why, sizeof(r->why), "%s", r->note);
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

/* The first wanted request in order is known: it is wanted and all before it are done. */
static bool decided(const struct xfer *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!x[i].done)
			return false;
		if (x[i].wanted)
			return true;
	}
	return false;
}

/* Ends request @x that did not finish, with @err. */
static void xfer_abandon(struct xfer *x, int err)
{
	struct nshttp_res *r = &x->res;

	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->err = err;
	snprintf(r->note, sizeof(r->note), "%s",
		 err == -ETIMEDOUT ? "no answer in time" : "cancelled");
	snprintf(r->why, sizeof(r->why), "%s", r->note);
}

/*
 * Runs the @n requests at once (in the calling thread: the caller is the namespace thread).
 * With @opts->wanted, stops as soon as the first wanted request in order is known. Every
 * request ends with x->res.err set. Returns 0 or -errno when curl cannot run.
 */
static int run_all(struct xfer *x, size_t n, const struct nshttp_opts *opts)
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
		err = xfer_setup(&x[i]);
		if (!err && curl_multi_add_handle(m, x[i].h) != CURLM_OK)
			err = -ENOMEM;
		if (err)
			goto out;
		x[i].added = true;
		if (x[i].timeout_ms > max_ms)
			max_ms = x[i].timeout_ms;
	}
	deadline = clock_mono_ms() + (uint64_t)max_ms + DEADLINE_SLACK_MS;
	for (;;) {
		if (curl_multi_perform(m, &still) != CURLM_OK) {
			err = -EIO;
			break;
		}
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (i = 0; i < n && x[i].h != msg->easy_handle; i++)
				;
			if (i == n || x[i].done)
				continue;
			xfer_finish(&x[i], msg->data.result);
			x[i].done = true;
			x[i].wanted = opts && opts->wanted && !x[i].res.err &&
				      opts->wanted(opts->ctx, i, &x[i].res);
			curl_multi_remove_handle(m, x[i].h);
			x[i].added = false;
		}
		if (!still || decided(x, n) || clock_mono_ms() >= deadline)
			break;
		if (curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK) {
			err = -EIO;
			break;
		}
	}
out:
	for (i = 0; i < n; i++) {
		if (!x[i].done)
			xfer_abandon(&x[i], still && !err && clock_mono_ms() >= deadline ?
						    -ETIMEDOUT :
						    -ECANCELED);
		if (x[i].added)
			curl_multi_remove_handle(m, x[i].h);
		curl_easy_cleanup(x[i].h);
		x[i].h = NULL;
		x[i].added = false;
	}
	curl_multi_cleanup(m);
	return err;
}

/* --- the network namespace thread ----------------------------------------------------------- */

struct ns_job {
	int pid_dir_fd; /* /proc/PID */
	struct xfer *x;
	size_t n;
	const struct nshttp_opts *opts;
	int err;
};

static void *ns_main(void *arg)
{
	struct ns_job *j = arg;
	int fd;

	fd = openat(j->pid_dir_fd, "ns/net", O_RDONLY | O_CLOEXEC);
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
	j->err = run_all(j->x, j->n, j->opts);
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

int nshttp_get_all(int pid_dir_fd, const struct nshttp_req *req, struct nshttp_res *res, size_t n,
		   const struct nshttp_opts *opts)
{
	struct ns_job j = { .pid_dir_fd = pid_dir_fd, .n = n, .opts = opts };
	const struct nshttp_req *q;
	size_t i;
	int err;

	if (pid_dir_fd < 0 || !req || !res || !n || n > NSHTTP_MAX_REQUESTS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (nshttp_req_check(&req[i]))
			return -EINVAL;
	}
	j.x = calloc(n, sizeof(*j.x));
	if (!j.x)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		q = &req[i];
		j.x[i].req = q;
		snprintf(j.x[i].url, sizeof(j.x[i].url), "http://%s:%u%s", q->host, q->port,
			 q->path);
		j.x[i].timeout_ms = q->timeout_ms;
		j.x[i].connect_ms = q->connect_ms ? q->connect_ms : q->timeout_ms;
	}
	err = in_netns(&j);
	for (i = 0; i < n; i++) {
		if (err)
			free(j.x[i].res.body);
		else
			res[i] = j.x[i].res;
	}
	free(j.x);
	return err;
}
