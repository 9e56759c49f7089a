/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http: the agent's one owner of libcurl (kube.c, sink_http.c): the process-wide init, the
 * options every easy handle needs, a bounded response body and the mapping of curl and HTTP
 * results to -errno. runtimes/nshttp.c keeps its own: it runs inside a network namespace, a
 * layer below. Unlike other headers this one names curl types: it exists only for the .c files
 * that drive curl, and hiding CURL * behind void * would help none of them.
 */
#ifndef SLIDEOPS_AGENT_HTTP_H
#define SLIDEOPS_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#define HTTP_USER_AGENT "slideops-profiler"
/* What a response body keeps by default: an error body's start is enough. */
#define HTTP_BODY_MAX (64u << 10)

/*
 * curl_global_init(), once per process (pthread_once; never cleaned up: the process exits).
 * Call it before starting threads that use curl. Returns 0 or -EIO, the same on every call.
 * Logs nothing; curl's reason is in *@why when @why is not NULL.
 */
int http_init(const char **why);

/*
 * The options of every request: @url, no signals, only http and https, the two timeouts
 * (milliseconds; 0 is curl's default) and the user agent (NULL: HTTP_USER_AGENT).
 */
void http_setup(CURL *h, const char *url, const char *user_agent, long connect_ms, long timeout_ms);

/*
 * A response body, kept up to @max bytes (0: HTTP_BODY_MAX) and NUL-terminated; the rest is
 * dropped (@truncated) while the transfer goes on. Zero-initialize it, set @max, pass
 * http_body_write and the body to CURLOPT_WRITEFUNCTION / CURLOPT_WRITEDATA, and free it with
 * http_body_free(). Not thread-safe: one body per transfer.
 */
struct http_body {
	char *buf; /* NULL until a byte arrives */
	size_t len;
	size_t max;
	bool truncated;
};

size_t http_body_write(char *p, size_t size, size_t n, void *body);
void http_body_free(struct http_body *b);

/* The body as a string: "" before a byte arrived. */
static inline const char *http_body_text(const struct http_body *b)
{
	return b->buf ? b->buf : "";
}

/*
 * A failed transfer as -errno: -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (name not resolved),
 * -ENOMEM, -ECANCELED (a callback stopped it), else -EIO; 0 for CURLE_OK.
 */
int http_curl_errno(CURLcode rc);

/*
 * An HTTP status as -errno: 0 (200, 201, 202), -EINVAL (400, 415, 422), -EACCES (401, 403),
 * -ENOENT (404), -EEXIST (409), -ESTALE (410), -E2BIG (413), -EAGAIN (429), else -EIO.
 */
int http_status_errno(long status);

#endif
