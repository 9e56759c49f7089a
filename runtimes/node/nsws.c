// SPDX-License-Identifier: Apache-2.0
#include "runtimes/node/nsws.h"

#include <errno.h>
#include <fcntl.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"

#define DEFAULT_CONNECT_MS 2000
#define DEFAULT_MAX_MESSAGE (16u << 20)
#define DEFAULT_MAX_QUEUED (64u << 20)
#define DEFAULT_MAX_SEND (1u << 20)
#define OPEN_SLACK_MS 1000 /* nsws_open() waits this beyond connect_ms for the thread */
/* Bytes counted against max_queued per message beyond its buffer: the node, malloc's headers. */
#define MSG_OVERHEAD (sizeof(struct rmsg) + 32)
#define FD_LIMIT 16	      /* fds of one context: its socket, the cancel eventfd, and spare */
#define HEADER_MAX 4096	      /* bytes of the handshake's answer headers */
#define LWS_TIMEOUT_SLACK_S 3 /* libwebsockets' own timeouts come after ours */

/* --- pure helpers ------------------------------------------------------------------------- */

static bool loopback(const char *h)
{
	return h && (!strcmp(h, "127.0.0.1") || !strcmp(h, "::1"));
}

static bool valid_path(const char *p)
{
	size_t i;

	if (!p || p[0] != '/' || !p[1])
		return false;
	for (i = 1; p[i]; i++) {
		if (i >= NSWS_PATH_LEN_MAX ||
		    !(strchr("-_/.", p[i]) || (p[i] >= 'a' && p[i] <= 'z') ||
		      (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9')))
			return false;
	}
	return true;
}

int nsws_opts_check(const struct nsws_opts *o)
{
	size_t max_message;

	if (!o || !loopback(o->host) || !o->port || !valid_path(o->path) || o->connect_ms < 0 ||
	    o->connect_ms > NSWS_CONNECT_MAX_MS || o->max_message > NSWS_MAX_MESSAGE_MAX ||
	    o->max_queued > NSWS_MAX_QUEUED_MAX || o->max_send_queued > NSWS_MAX_SEND_MAX)
		return -EINVAL;
	max_message = o->max_message ? o->max_message : DEFAULT_MAX_MESSAGE;
	if (o->max_queued && o->max_queued < max_message)
		return -EINVAL;
	return 0;
}

int nsws_host_header(const char *host, uint16_t port, char *buf, size_t size)
{
	char tmp[NSWS_HOST_HEADER_MAX];
	int n;

	if (!loopback(host) || !port || !buf)
		return -EINVAL;
	n = snprintf(tmp, sizeof(tmp), strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	if ((size_t)n >= size)
		return -ENOSPC;
	memcpy(buf, tmp, (size_t)n + 1);
	return n;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int nsws_handshake_error(const char *why, int status, char *note, size_t size)
{
	char dummy[1];
	int err;

	if (!note || !size) {
		note = dummy;
		size = sizeof(dummy);
	}
	if (!why)
		why = "";
	if (status && status != 101) {
		snprintf(note, size, "HTTP %d instead of a WebSocket", status);
		return -EPROTO;
	}
	if (starts(why, "Unable to connect")) {
		snprintf(note, size, "cannot connect: connection refused");
		return -ECONNREFUSED;
	}
	if (starts(why, "Timed out") || starts(why, "timeout")) {
		snprintf(note, size, "no WebSocket handshake in time (%.60s)", why);
		return -ETIMEDOUT;
	}
	if (!strcmp(why, "HS: OOM")) {
		snprintf(note, size, "out of memory for the handshake");
		return -ENOMEM;
	}
	if (starts(why, "closed before established") || starts(why, "Peer hung up") ||
	    starts(why, "read failed") || starts(why, "Closed before conn")) {
		snprintf(note, size, "the connection closed before a WebSocket handshake");
		return -EPROTO;
	}
	if (starts(why, "problems parsing header") || starts(why, "HS: URI missing") ||
	    starts(why, "HS: :status missing")) {
		snprintf(note, size, "not an HTTP answer");
		return -EPROTO;
	}
	err = -EPROTO;
	snprintf(note, size, "not a WebSocket handshake (%.80s)", why[0] ? why : "no reason");
	return err;
}

/* --- the connection ------------------------------------------------------------------------ */

/* A whole received message; or the message being received (@data growing). */
struct rmsg {
	struct rmsg *next;
	char *data; /* @len bytes and a NUL */
	size_t len, cap;
};

/* A message to send, with the LWS_PRE bytes libwebsockets writes its frame header into. */
struct smsg {
	struct smsg *next;
	size_t len;
	unsigned char buf[]; /* LWS_PRE + len */
};

enum state {
	ST_CONNECTING,
	ST_OPEN,
	ST_DONE, /* the service loop has ended */
};

struct nsws {
	/* set before the thread starts, then read only */
	struct nsws_opts o; /* defaults filled in; host and path point into the fields below */
	char host[sizeof("127.0.0.1")];
	char path[NSWS_PATH_LEN_MAX + 1];
	char host_header[NSWS_HOST_HEADER_MAX];
	int pid_dir_fd; /* only until nsws_open() returns */
	pthread_t thread;
	bool joinable;

	/* shared with the thread, under @mu; @cv is signalled on every change */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum state state;
	int open_err; /* why the handshake failed */
	int end_err;  /* why an open connection ended: what nsws_recv() returns at last */
	char note[NSWS_NOTE_MAX]; /* why the handshake failed: written by the thread, read after
				   * it is joined */
	bool close_req;
	struct lws_context *ctx; /* non-NULL while lws_cancel_service() may be called */
	struct rmsg *rq, **rq_tail;
	size_t rq_bytes;
	struct smsg *sq, **sq_tail;
	size_t sq_bytes;

	/* the thread's own */
	struct lws_protocols protocols[2];
	struct lws *wsi;
	struct rmsg *cur; /* the message being received */
	bool done, close_armed;
	lws_sorted_usec_list_t sul_connect, sul_close;
};

static void set_note(struct nsws *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_note(struct nsws *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->note, sizeof(c->note), fmt, ap);
	va_end(ap);
}

static void rmsg_free(struct rmsg *m)
{
	if (m) {
		free(m->data);
		free(m);
	}
}

/*
 * The service loop is to end. A callback that runs before lws_service()'s poll (a timer) would
 * otherwise sit in that poll until the next event: wake it.
 */
static void set_done(struct nsws *c)
{
	c->done = true;
	if (c->ctx)
		lws_cancel_service(c->ctx);
}

/* The handshake is over: 0 (open) or why not. Called by the thread, under no lock. */
static void open_done(struct nsws *c, int err)
{
	pthread_mutex_lock(&c->mu);
	if (c->state == ST_CONNECTING) {
		c->state = err ? ST_DONE : ST_OPEN;
		c->open_err = err;
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (err)
		set_done(c);
}

/*
 * The open connection ends with @err (the first reason is kept) and @note. From a
 * CLIENT_RECEIVE callback it must not be closed by returning nonzero: libwebsockets 4.1.6's
 * client parser then returns without resetting rx_ubuf_head (lib/roles/ws/client-parser-ws.c,
 * "if (m) return 1;" skips "already_done:"), and the rest of the bytes already read are stored
 * past the end of its receive buffer (a heap overflow, seen with valgrind: a frame larger than
 * the buffer, then -1). So the close frame goes from the WRITEABLE callback, and a timeout
 * closes the socket if that cannot happen within NSWS_CLOSE_MS (a peer that does not read).
 * @status LWS_CLOSE_STATUS_NOSTATUS: the connection is closing already. Returns 0.
 */
static int end(struct nsws *c, int err, enum lws_close_status status, const char *note)
{
	pthread_mutex_lock(&c->mu);
	if (!c->end_err) {
		c->end_err = err;
		pr_debug("nsws: port %u: %s", c->o.port, note);
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (c->wsi && status) {
		lws_close_reason(c->wsi, status, NULL, 0);
		lws_callback_on_writable(c->wsi);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_REASON_BASE,
				(NSWS_CLOSE_MS + 999) / 1000);
	}
	return 0;
}

static int queue_message(struct nsws *c, struct rmsg *m);

/* A chunk of a received frame: gathered into c->cur until the message's last chunk. */
static int on_receive(struct nsws *c, struct lws *wsi, const void *in, size_t len)
{
	struct rmsg *m = c->cur;
	size_t ncap;
	bool final;
	char *tmp;

	if (c->end_err) /* ending: libwebsockets may still deliver what it has read */
		return 0;
	if (lws_frame_is_binary(wsi))
		return end(c, -EPROTO, LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE, "a binary message");
	if (!m) {
		m = c->cur = calloc(1, sizeof(*m));
		if (!m)
			return end(c, -ENOMEM, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
				   "out of memory");
	}
	if (len > c->o.max_message - m->len)
		return end(c, -EFBIG, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "a message too large");
	final = lws_is_final_fragment(wsi);
	if (m->len + len + 1 > m->cap) {
		/* a message in one chunk takes what it needs, a longer one doubles */
		ncap = final ? m->len + len + 1 : m->cap ? m->cap * 2 : 4096;
		while (ncap < m->len + len + 1)
			ncap *= 2;
		if (ncap > c->o.max_message + 1)
			ncap = c->o.max_message + 1;
		tmp = realloc(m->data, ncap);
		if (!tmp)
			return end(c, -ENOMEM, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION,
				   "out of memory");
		m->data = tmp;
		m->cap = ncap;
	}
	if (len)
		memcpy(m->data + m->len, in, len);
	m->len += len;
	m->data[m->len] = '\0';
	if (!final)
		return 0;
	c->cur = NULL;
	return queue_message(c, m);
}

/* A whole message @m (now ours) for nsws_recv(), unless that would exceed max_queued. */
static int queue_message(struct nsws *c, struct rmsg *m)
{
	bool full;
	char *tmp;

	if (m->cap > m->len + 1) { /* what it holds is what it costs */
		tmp = realloc(m->data, m->len + 1);
		if (tmp) {
			m->data = tmp;
			m->cap = m->len + 1;
		}
	}
	pthread_mutex_lock(&c->mu);
	full = c->rq_bytes + m->cap + MSG_OVERHEAD > c->o.max_queued;
	if (!full) {
		*c->rq_tail = m;
		c->rq_tail = &m->next;
		c->rq_bytes += m->cap + MSG_OVERHEAD;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	if (!full)
		return 0;
	rmsg_free(m);
	return end(c, -ENOBUFS, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "too many messages not taken");
}

/* Writable: the close if one was asked for, else the next queued message. */
static int on_writable(struct nsws *c, struct lws *wsi)
{
	struct smsg *m;
	bool close_req, more;
	int n;

	pthread_mutex_lock(&c->mu);
	close_req = c->close_req || c->end_err;
	m = close_req ? NULL : c->sq;
	if (m) {
		c->sq = m->next;
		if (!c->sq)
			c->sq_tail = &c->sq;
		c->sq_bytes -= m->len;
	}
	more = c->sq != NULL;
	pthread_mutex_unlock(&c->mu);
	if (close_req) {
		if (!c->end_err)
			lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
		return -1;
	}
	if (!m)
		return 0;
	/* A short write is buffered by libwebsockets, which calls back only when it is out. */
	n = lws_write(wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_TEXT);
	free(m);
	if (n < 0) {
		end(c, -EPIPE, LWS_CLOSE_STATUS_NOSTATUS, "the connection broke");
		return -1;
	}
	if (more)
		lws_callback_on_writable(wsi);
	return 0;
}

static void on_close_deadline(lws_sorted_usec_list_t *sul)
{
	struct nsws *c = lws_container_of(sul, struct nsws, sul_close);

	set_done(c);
}

static void on_connect_deadline(lws_sorted_usec_list_t *sul)
{
	struct nsws *c = lws_container_of(sul, struct nsws, sul_connect);

	set_note(c, "no WebSocket handshake within %d ms", c->o.connect_ms);
	open_done(c, -ETIMEDOUT);
}

/* The caller queued a message or asked for the close (lws_cancel_service()). */
static void on_wakeup(struct nsws *c, struct lws_context *ctx)
{
	bool close_req, pending;

	pthread_mutex_lock(&c->mu);
	close_req = c->close_req;
	pending = c->sq != NULL;
	pthread_mutex_unlock(&c->mu);
	if (close_req && !c->close_armed) {
		c->close_armed = true;
		lws_sul_schedule(ctx, 0, &c->sul_close, on_close_deadline,
				 (lws_usec_t)NSWS_CLOSE_MS * LWS_US_PER_MS);
		if (!c->wsi || c->state == ST_CONNECTING) {
			set_note(c, "closed before the handshake");
			open_done(c, -ECANCELED);
			set_done(c);
		}
	}
	if (c->wsi && (close_req || pending))
		lws_callback_on_writable(c->wsi);
}

static int on_event(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
		    size_t len)
{
	struct nsws *c;
	char note[NSWS_NOTE_MAX];
	int err;

	(void)user;
	if (!wsi)
		return 0;
	c = lws_context_user(lws_get_context(wsi));
	switch (reason) {
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		/* also after our own deadline, as the context goes: the first reason stays */
		err = nsws_handshake_error(in, (int)lws_http_client_http_response(wsi), note,
					   sizeof(note));
		if (c->state == ST_CONNECTING) {
			memcpy(c->note, note, sizeof(note));
			open_done(c, err);
		}
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		lws_sul_cancel(&c->sul_connect);
		open_done(c, 0);
		on_wakeup(c, lws_get_context(wsi)); /* what was asked for meanwhile */
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return on_receive(c, wsi, in, len);
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		return on_writable(c, wsi);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		on_wakeup(c, lws_get_context(wsi));
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		c->wsi = NULL;
		end(c, -EPIPE, LWS_CLOSE_STATUS_NOSTATUS, "the connection closed");
		set_done(c);
		break;
	case LWS_CALLBACK_WSI_DESTROY:
		if (wsi == c->wsi) {
			c->wsi = NULL;
			set_done(c);
		}
		break;
	default:
		break;
	}
	return 0;
}

/* --- the network namespace thread ----------------------------------------------------------- */

static void lws_log(int level, const char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	pr_debug("libwebsockets(%d): %.*s", level, (int)n, line);
}

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* Process-wide in libwebsockets; set once, before any context exists. */
static void lws_log_init(void)
{
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log);
}

static struct lws_context *context_new(struct nsws *c)
{
	struct lws_context_creation_info info = { 0 };

	c->protocols[0] = (struct lws_protocols){ .name = "nsws", .callback = on_event };
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = c->protocols;
	info.user = c;
	info.gid = -1;
	info.uid = -1;
	/* No LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT: no TLS is set up at all. No hostname lookup
	 * for a server name. No lws_system states (nothing waits for them). */
	info.options = LWS_SERVER_OPTION_SKIP_SERVER_CANONICAL_NAME |
		       LWS_SERVER_OPTION_NO_LWS_SYSTEM_STATES;
	/* A proxy address given here overrides $http_proxy; "" sets none (lws_set_proxy()
	 * refuses it and logs, at debug here). */
	info.http_proxy_address = "";
	/* The default sizes its fd table by RLIMIT_NOFILE, which can be a million for root. */
	info.fd_limit_per_thread = FD_LIMIT;
	info.max_http_header_data = HEADER_MAX;
	info.max_http_header_pool = 1;
	/* libwebsockets' own timeouts (connect, the closing handshake) end after ours. */
	info.timeout_secs = (unsigned int)(c->o.connect_ms / 1000 + LWS_TIMEOUT_SLACK_S);
	info.connect_timeout_secs = info.timeout_secs;
	/* no extensions: permessage-deflate is never offered */
	return lws_create_context(&info);
}

static int connect_start(struct nsws *c)
{
	struct lws_client_connect_info ci = { 0 };

	ci.context = c->ctx;
	ci.address = c->o.host;
	ci.port = c->o.port;
	ci.path = c->o.path;
	ci.host = c->host_header;
	ci.origin = NULL;   /* Node's inspector checks an Origin when one is sent */
	ci.protocol = NULL; /* no Sec-WebSocket-Protocol: Node answers none */
	ci.ietf_version_or_minus_one = -1;
	ci.ssl_connection = LCCSCF_HTTP_NO_FOLLOW_REDIRECT;
	ci.pwsi = &c->wsi;
	lws_sul_schedule(c->ctx, 0, &c->sul_connect, on_connect_deadline,
			 (lws_usec_t)c->o.connect_ms * LWS_US_PER_MS);
	if (!lws_client_connect_via_info(&ci)) {
		/* a failure reported through CLIENT_CONNECTION_ERROR already keeps its reason */
		if (c->state == ST_CONNECTING) {
			set_note(c, "cannot connect: connection refused");
			open_done(c, -ECONNREFUSED);
		}
		return -ECONNREFUSED;
	}
	return 0;
}

static int enter_netns(int pid_dir_fd)
{
	int fd, err = 0;

	fd = openat(pid_dir_fd, "ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	/* Only this thread moves. CLONE_NEWNS is never used: a process with threads cannot
	 * change its mount namespace (EINVAL). */
	if (setns(fd, CLONE_NEWNET) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void run(struct nsws *c)
{
	struct lws_context *ctx;
	bool close_req;

	ctx = context_new(c);
	if (!ctx) {
		set_note(c, "cannot create a libwebsockets context");
		open_done(c, -ENOMEM);
		return;
	}
	pthread_mutex_lock(&c->mu);
	c->ctx = ctx;
	close_req = c->close_req;
	pthread_mutex_unlock(&c->mu);
	if (close_req) {
		set_note(c, "closed before the handshake");
		open_done(c, -ECANCELED);
	} else if (!connect_start(c)) {
		while (!c->done && lws_service(ctx, 0) >= 0)
			;
	}
	pthread_mutex_lock(&c->mu);
	c->ctx = NULL; /* no lws_cancel_service() from now on */
	pthread_mutex_unlock(&c->mu);
	lws_sul_cancel(&c->sul_connect);
	lws_sul_cancel(&c->sul_close);
	lws_context_destroy(ctx);
	c->wsi = NULL;
}

static void *ns_main(void *arg)
{
	struct nsws *c = arg;
	int err;

	err = enter_netns(c->pid_dir_fd);
	if (err) {
		set_note(c, "cannot enter the network namespace (%s)", strerror(-err));
		open_done(c, err);
	} else {
		run(c);
	}
	rmsg_free(c->cur);
	c->cur = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->state == ST_CONNECTING) { /* cannot happen: every path above decides */
		c->open_err = -EIO;
		set_note(c, "the connection ended without a result");
	}
	if (!c->end_err)
		c->end_err = -EPIPE;
	c->state = ST_DONE;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* --- the caller's side ---------------------------------------------------------------------- */

static void nsws_free(struct nsws *c)
{
	struct rmsg *r;
	struct smsg *s;

	while ((r = c->rq)) {
		c->rq = r->next;
		rmsg_free(r);
	}
	while ((s = c->sq)) {
		c->sq = s->next;
		free(s);
	}
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Wakes the service loop; under c->mu. */
static void wake(struct nsws *c)
{
	if (c->ctx)
		lws_cancel_service(c->ctx);
}

static int nsws_new(int pid_dir_fd, const struct nsws_opts *o, struct nsws **out)
{
	pthread_condattr_t ca;
	struct nsws *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->o = *o;
	snprintf(c->host, sizeof(c->host), "%s", o->host);
	snprintf(c->path, sizeof(c->path), "%s", o->path);
	c->o.host = c->host;
	c->o.path = c->path;
	if (!c->o.connect_ms)
		c->o.connect_ms = DEFAULT_CONNECT_MS;
	if (!c->o.max_message)
		c->o.max_message = DEFAULT_MAX_MESSAGE;
	if (!c->o.max_queued)
		c->o.max_queued = c->o.max_message > DEFAULT_MAX_QUEUED ? c->o.max_message :
									  DEFAULT_MAX_QUEUED;
	/* a message of max_message bytes must fit with its overhead */
	if (c->o.max_queued < c->o.max_message + 1 + MSG_OVERHEAD)
		c->o.max_queued = c->o.max_message + 1 + MSG_OVERHEAD;
	if (!c->o.max_send_queued)
		c->o.max_send_queued = DEFAULT_MAX_SEND;
	nsws_host_header(o->host, o->port, c->host_header, sizeof(c->host_header));
	c->pid_dir_fd = pid_dir_fd;
	c->rq_tail = &c->rq;
	c->sq_tail = &c->sq;
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	*out = c;
	return 0;
}

static int start_thread(struct nsws *c)
{
	sigset_t all, old;
	int err;

	/* The thread takes no signals: they stay with the threads that handle them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&c->thread, NULL, ns_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	c->joinable = !err;
	return err;
}

/* Waits for the handshake's end; returns its result. */
static int wait_open(struct nsws *c)
{
	struct timespec ts;
	int err;

	clock_deadline(&ts, CLOCK_MONOTONIC, (uint64_t)c->o.connect_ms + OPEN_SLACK_MS);
	pthread_mutex_lock(&c->mu);
	while (c->state == ST_CONNECTING) {
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
			break;
	}
	if (c->state == ST_CONNECTING) { /* the thread's own deadline slipped */
		c->close_req = true;
		wake(c);
		err = -ETIMEDOUT;
	} else {
		err = c->state == ST_OPEN ? 0 : c->open_err;
	}
	pthread_mutex_unlock(&c->mu);
	return err;
}

int nsws_open_note(int pid_dir_fd, const struct nsws_opts *o, struct nsws **out, char *note,
		   size_t size)
{
	struct nsws *c = NULL;
	int err;

	if (note && size)
		note[0] = '\0';
	if (pid_dir_fd < 0 || !out || nsws_opts_check(o)) {
		if (note && size)
			snprintf(note, size, "invalid options");
		return -EINVAL;
	}
	pthread_once(&log_once, lws_log_init);
	err = nsws_new(pid_dir_fd, o, &c);
	if (!err)
		err = start_thread(c);
	if (!err)
		err = wait_open(c);
	if (!err) {
		c->pid_dir_fd = -1;
		*out = c;
		return 0;
	}
	if (c && c->joinable)
		pthread_join(c->thread, NULL);
	if (c && err == -ETIMEDOUT) /* also when the thread's deadline slipped */
		set_note(c, "no WebSocket handshake within %d ms", c->o.connect_ms);
	if (note && size)
		snprintf(note, size, "%s", c && c->note[0] ? c->note : strerror(-err));
	if (c)
		nsws_free(c);
	return err;
}

int nsws_open(int pid_dir_fd, const struct nsws_opts *o, struct nsws **out)
{
	return nsws_open_note(pid_dir_fd, o, out, NULL, 0);
}

int nsws_send(struct nsws *c, const char *text, size_t len)
{
	struct smsg *m;
	int err = 0;

	if (!c || (!text && len))
		return -EINVAL;
	if (len > c->o.max_send_queued)
		return -ENOBUFS;
	m = malloc(sizeof(*m) + LWS_PRE + len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = len;
	if (len)
		memcpy(m->buf + LWS_PRE, text, len);
	pthread_mutex_lock(&c->mu);
	if (c->state != ST_OPEN || c->end_err || c->close_req)
		err = -EPIPE;
	else if (c->sq_bytes + len > c->o.max_send_queued)
		err = -ENOBUFS;
	if (!err) {
		*c->sq_tail = m;
		c->sq_tail = &m->next;
		c->sq_bytes += len;
		wake(c);
	}
	pthread_mutex_unlock(&c->mu);
	if (err)
		free(m);
	return err;
}

int nsws_recv(struct nsws *c, int timeout_ms, char **msg, size_t *len)
{
	struct rmsg *m = NULL;
	struct timespec ts;
	int err = 0;

	if (!c || !msg || !len || timeout_ms < 0)
		return -EINVAL;
	clock_deadline(&ts, CLOCK_MONOTONIC, (uint64_t)timeout_ms);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		if (c->rq) {
			m = c->rq;
			c->rq = m->next;
			if (!c->rq)
				c->rq_tail = &c->rq;
			c->rq_bytes -= m->cap + MSG_OVERHEAD;
			break;
		}
		if (c->end_err || c->state == ST_DONE) {
			err = c->end_err ? c->end_err : -EPIPE;
			break;
		}
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT && !c->rq &&
		    !c->end_err && c->state != ST_DONE) {
			err = -ETIMEDOUT;
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (err)
		return err;
	*msg = m->data;
	*len = m->len;
	free(m);
	return 0;
}

void nsws_close(struct nsws *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->close_req = true;
	wake(c);
	pthread_mutex_unlock(&c->mu);
	/* bounded: the thread's loop ends NSWS_CLOSE_MS after it sees close_req */
	if (c->joinable)
		pthread_join(c->thread, NULL);
	nsws_free(c);
}
