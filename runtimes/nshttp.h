/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nshttp: HTTP GETs performed inside another process's network namespace, none of which can
 * cost more than its bounds.
 *
 * A socket inside a container's network namespace is not reachable from the host, so the
 * requests run in a short-lived thread that enters the process's network namespace (setns
 * CLONE_NEWNET on /proc/PID/ns/net; never the mount namespace, which a threaded process cannot
 * enter) and exits after them; the calling thread's namespaces never change. The requests of
 * one call run at once (libcurl multi). Each is HTTP/1.1 only, to a literal address (a name
 * would be resolved with the agent's resolver, not the namespace's), on a fresh connection,
 * never through a proxy (whatever the environment says), without redirects or content
 * decoding, with its header and body bytes capped and the whole exchange under a timeout: a
 * port that is not HTTP, a server that never answers, an endless or malformed answer cost
 * bounded time and memory.
 *
 * All functions are thread-safe. nshttp_get_all() needs CAP_SYS_ADMIN (setns).
 */
#ifndef SLIDEOPS_RUNTIMES_NSHTTP_H
#define SLIDEOPS_RUNTIMES_NSHTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSHTTP_MAX_REQUESTS 64		       /* requests of one nshttp_get_all() */
#define NSHTTP_HOST_MAX 48		       /* host with its NUL: "[ffff:...:ffff]" fits */
#define NSHTTP_PATH_LEN_MAX 1024	       /* longest path, in characters */
#define NSHTTP_TIMEOUT_MAX_MS (10 * 60 * 1000) /* largest timeout_ms */
#define NSHTTP_BODY_MAX_BYTES (1ul << 30)      /* largest max_bytes */
#define NSHTTP_HEADER_MAX_BYTES (1u << 20)     /* largest max_header_bytes */
#define NSHTTP_NOTE_MAX 160
#define NSHTTP_WHY_MAX 512

/* One GET of http://@host:@port@path. */
struct nshttp_req {
	const char *host;	 /* a literal address as in a URL: "127.0.0.1", "[::1]" */
	uint16_t port;		 /* not 0 */
	const char *path;	 /* "/debug/pprof/heap?gc=1": '/' first, then printable ASCII
				 * without spaces or '#' */
	int timeout_ms;		 /* the whole exchange, connecting included */
	int connect_ms;		 /* connecting, at most timeout_ms; 0: timeout_ms */
	size_t max_bytes;	 /* a longer body is -EFBIG */
	size_t max_header_bytes; /* all response headers; more is -EFBIG */
};

/*
 * How one GET went. @err is 0 for status 200 with the whole body, else:
 *   -EFBIG      the body is longer than max_bytes, or the headers than max_header_bytes
 *   -ETIMEDOUT  no connection or no complete answer in time
 *   -EPROTO     an HTTP status other than 200, or an answer that is not (well-formed) HTTP
 *   -ECONNREFUSED (also -ENETUNREACH, -EHOSTUNREACH, -ECONNRESET, ...) from the network
 *   -ENOMEM, -EIO
 *   -ECANCELED  not finished: an earlier request was wanted (struct nshttp_opts)
 */
struct nshttp_res {
	int err;
	long status;		    /* the HTTP status; 0 when none arrived */
	char *body;		    /* @err 0: the body with a NUL after it (never NULL, the caller
				 * frees it); otherwise NULL */
	size_t len;		    /* bytes of @body without the NUL */
	char note[NSHTTP_NOTE_MAX]; /* @err != 0, short: "HTTP 404", "no complete answer
					 * within 500 ms", "cannot connect (Connection refused)" */
	char why[NSHTTP_WHY_MAX];   /* @err != 0, for a user: @note, or for a status
					 * "HTTP 404: 404 page not found" (nshttp_status_why()) */
};

/*
 * Called from the namespace thread as each request finishes with @res->err 0; returns true
 * when request @i is the one wanted. Must not keep @res->body.
 */
typedef bool (*nshttp_wanted_fn_t)(void *ctx, size_t i, const struct nshttp_res *res);

struct nshttp_opts {
	/* When set, the call ends as soon as the first wanted request in order is known: a
	 * wanted request whose predecessors have all finished. The requests still running then
	 * end with -ECANCELED. NULL: every request runs to its end. */
	nshttp_wanted_fn_t wanted;
	void *ctx;
};

/*
 * Runs the @n requests of @req at once inside the network namespace of the process whose
 * /proc/PID directory is open as @pid_dir_fd (an fd the call does not close), and writes how
 * each went to @res[i]. @opts may be NULL (all defaults). The call returns within the largest
 * timeout_ms plus a second.
 *
 * Returns 0 when the requests ran (their own failures are in @res); or, with @res untouched:
 * -EINVAL (@n is 0 or above NSHTTP_MAX_REQUESTS, a request fails nshttp_req_check()), -ESRCH
 * (the process is gone), -EPERM/-EACCES (setns refused), -ENOMEM, -EAGAIN (no thread), -EIO.
 */
int nshttp_get_all(int pid_dir_fd, const struct nshttp_req *req, struct nshttp_res *res, size_t n,
		   const struct nshttp_opts *opts);

/* --- pure helpers, no I/O ---------------------------------------------------------------- */

/*
 * Checks @r as nshttp_get_all() does: a host of 1 to NSHTTP_HOST_MAX - 1 characters among
 * hex digits, '.', ':', '[' and ']' (at most NSHTTP_HOST_MAX bytes of it are read), a port,
 * a path as described in struct nshttp_req of at most NSHTTP_PATH_LEN_MAX characters,
 * timeout_ms from 1 to NSHTTP_TIMEOUT_MAX_MS, connect_ms from 0 to timeout_ms, max_bytes
 * from 1 to NSHTTP_BODY_MAX_BYTES, max_header_bytes from 1 to NSHTTP_HEADER_MAX_BYTES.
 * Returns 0 or -EINVAL. Stateless.
 */
int nshttp_req_check(const struct nshttp_req *r);

/*
 * Writes "HTTP <status>" followed by ": " and the first line of @body (@len bytes) cut to 80
 * characters, with anything but printable ASCII replaced by '?', when the body has text.
 * Nothing is written when @why is NULL or @size 0.
 */
void nshttp_status_why(long status, const char *body, size_t len, char *why, size_t size);

#endif
