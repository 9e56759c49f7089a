/* SPDX-License-Identifier: Apache-2.0 */
/*
 * go_pprof: a Go process's net/http/pprof endpoint, found without being told the port, and
 * fetched without trusting it.
 *
 * Finding: the process's listening TCP sockets are its socket inodes (/proc/PID/fd links
 * "socket:[N]") that /proc/PID/net/tcp and tcp6 (its own network namespace) list in state
 * LISTEN; at most GO_PPROF_MAX_PROBES ports, 6060 first then ascending, are probed at once
 * with GET /debug/pprof/, each within GO_PPROF_PROBE_TIMEOUT_MS and GO_PPROF_PROBE_MAX_BYTES.
 *
 * Reaching: a socket inside a container's network namespace is not reachable from the host,
 * so every request goes through runtimes/nshttp, which runs it in a short-lived thread that
 * enters the process's network namespace (the calling thread's namespaces never change):
 * HTTP only, no proxy, no redirects, no content decoding, header and body bytes capped, the
 * whole exchange under a timeout: a port that is not pprof, a server that never answers, an
 * endless or malformed answer cost bounded time and memory.
 *
 * All functions are thread-safe (the cache is under a mutex). The agent must run with
 * CAP_SYS_ADMIN and CAP_SYS_PTRACE (reading another process's fd links).
 */
#ifndef SLIDEOPS_RUNTIMES_GO_PPROF_H
#define SLIDEOPS_RUNTIMES_GO_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/procnet.h"

#define GO_PPROF_MAX_PROBES 16		      /* ports probed per process */
#define GO_PPROF_PROBE_TIMEOUT_MS 500	      /* one probe, connect included */
#define GO_PPROF_PROBE_MAX_BYTES (64u << 10)  /* the index page is about 3 KiB */
#define GO_PPROF_HEADER_MAX_BYTES (64u << 10) /* all response headers of one request */
#define GO_PPROF_CONNECT_TIMEOUT_MS 1000      /* go_pprof_get(): at most this for connect */
#define GO_PPROF_CACHE_ENTRIES 64	      /* processes remembered (LRU) */
#define GO_PPROF_MISS_TTL_MS 30000	      /* how long "no endpoint" is remembered */
#define GO_PPROF_COMMON_PORT 6060	      /* the port of the net/http/pprof examples */

struct go_endpoint {
	uint16_t port;
	char host[48]; /* as used in the URL: "127.0.0.1", "[::1]", "10.1.2.3" */
};

/*
 * Finds the net/http/pprof endpoint of process @pid (@proc_root NULL means "/proc"): the
 * first of its listening ports, in probe order, that answers GET /debug/pprof/ with 200 and
 * the pprof index page. A socket bound to 0.0.0.0 / :: is reached on 127.0.0.1 / [::1].
 * Returns 0 with *@ep filled; -ENOENT with @why (a sentence fragment for a user, e.g. "it
 * listens on no TCP port", "none of its TCP ports (8080: HTTP 404; 9000: no answer within
 * 500 ms) serves /debug/pprof/"); -ESRCH if the process is gone; -EACCES/-EPERM without the
 * privileges; -EINVAL; -ENOMEM. @why (@size bytes, may be NULL) is written on every failure.
 *
 * Results are cached per (pid, start time of the process), GO_PPROF_CACHE_ENTRIES at most
 * (least recently used evicted): a found endpoint until the process is replaced or
 * go_pprof_get() finds its port closed, a -ENOENT for GO_PPROF_MISS_TTL_MS. Other errors are
 * not cached.
 */
int go_pprof_find(const char *proc_root, int pid, struct go_endpoint *ep, char *why, size_t size);

/*
 * GET @path ("/debug/pprof/heap", "/debug/pprof/goroutine?debug=2") from @ep inside @pid's
 * network namespace. The whole request takes at most @timeout_ms (connecting at most
 * min(@timeout_ms, GO_PPROF_CONNECT_TIMEOUT_MS)). Returns 0 with *@body a new NUL-terminated
 * buffer the caller frees and *@len its length without the NUL; or, with @why set:
 *   -EFBIG      the body is longer than @max_bytes (or the headers than
 *               GO_PPROF_HEADER_MAX_BYTES)
 *   -ETIMEDOUT  no connection or no complete answer in time
 *   -EPROTO     an HTTP status other than 200 ("HTTP 404: 404 page not found", the first
 *               line of the body sanitized to short printable ASCII) or an answer that is
 *               not HTTP
 *   -ECONNREFUSED (also -ENETUNREACH, -EHOSTUNREACH, -ECONNRESET) from the network
 *   -ESRCH (process gone), -EPERM (setns refused), -EINVAL (bad arguments), -ENOMEM, -EIO
 * The response body is never decoded (Go sends gzipped protobuf as is).
 */
int go_pprof_get(const char *proc_root, int pid, const struct go_endpoint *ep, const char *path,
		 int timeout_ms, size_t max_bytes, char **body, size_t *len, char *why,
		 size_t size);

/* Forgets every cached result. */
void go_pprof_cache_clear(void);

/* --- pure helpers, no I/O (used above; exposed for the unit tests) ------------------------ */

/* True when @body (@len bytes) is net/http/pprof's index page: it links the goroutine and the
 * heap profiles ("goroutine?debug=", "heap?debug="). */
bool go_pprof_is_index(const char *body, size_t len);

/*
 * Turns listening sockets into endpoints to probe, in probe order: GO_PPROF_COMMON_PORT
 * first, then ascending ports; one endpoint per port (a loopback or wildcard socket preferred
 * over one bound to another address); 0.0.0.0 becomes 127.0.0.1 and :: becomes [::1]; IPv6
 * link-local sockets (unreachable without an interface) are left out. Stores at most @max in
 * @out and returns how many; *@total (may be NULL) is the number of distinct ports.
 */
size_t go_pprof_candidates(const struct procnet_entry *e, size_t n, struct go_endpoint *out,
			   size_t max, size_t *total);

/*
 * Writes "none of its TCP ports (8080: HTTP 404; 9000: no answer within 500 ms) serves
 * /debug/pprof/" for the @n probed @ports and their @notes; @not_probed more ports are
 * mentioned as "and N more not probed". Items that do not fit in @size become "N more".
 */
void go_pprof_why_none(const uint16_t *ports, const char *const *notes, size_t n, size_t not_probed,
		       char *why, size_t size);

/* nshttp_status_why(): "HTTP 404: 404 page not found" (kept here for go_pprof's callers). */
void go_pprof_http_why(long status, const char *body, size_t len, char *why, size_t size);

/* The start time (field 22, in clock ticks) of /proc/PID/stat text. Returns 0 or -EINVAL. */
int go_pprof_parse_starttime(const char *stat, size_t len, uint64_t *out);

#endif
