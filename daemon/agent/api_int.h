/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_int: what the files of the local HTTP API share, and nothing else includes: the server's
 * and a request's state, the responders (api.c), and the routes of the page and its sign-in
 * (api_web.c). Every responder queues one response and returns what libmicrohttpd's access
 * handler returns; each takes ownership of the text or document it is given.
 */
#ifndef SLIDEOPS_API_INT_H
#define SLIDEOPS_API_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "daemon/agent/api.h"
#include "daemon/agent/audit.h"
#include "daemon/agent/session.h"

#define ERR_SIZE 512

struct symstore;
struct api_upload;
#define API_ERROR_CODES 10 /* the statuses counted one by one in /metrics (api.c) */

struct api {
	struct MHD_Daemon *d;
	struct store *store;
	const struct tokens *tokens;
	struct audit *audit;
	const struct api_ops *ops;
	void *ops_ctx;
	struct api_metrics *metrics;
	struct sessions *sessions; /* the page's sign-ins */
	unsigned short port;
	uint64_t errors[API_ERROR_CODES + 1]; /* by code (api.c); last: any other */
	uint64_t audit_errors;
	/* GET /v1/status: one check at a time serves every caller waiting for it, and its
	 * document is served again for status_ttl_ns (a check reads every process) */
	pthread_mutex_t status_lock;
	pthread_cond_t status_cond;
	bool status_running;
	char *status_json;     /* the last document, or NULL */
	int status_err;	       /* what the last check returned */
	uint64_t status_gen;   /* checks finished */
	uint64_t status_at_ns; /* when the last one finished (CLOCK_MONOTONIC) */
	uint64_t status_ttl_ns;
	struct symstore *symbols; /* the uploads (api_symbols.c); may be NULL */
	bool uploading;		  /* one upload streams at a time (under status_lock) */
};

struct req {
	struct api_route_match m;
	char who[TOKENS_NAME_MAX + 1];
	char *body;
	size_t len;
	bool too_big;
	size_t discarded;
	bool answered; /* a response was queued in the first call */
	bool denied;   /* a capture the role may not start: 403 once read */
	enum token_role role;
	bool via_session; /* signed in with the page's cookie, not a bearer token */
	struct session_info session;
	struct api_upload *upload; /* POST /v1/symbols: the streamed body (api_symbols.c) */
};

/* Queues @resp (destroyed here) with the headers every response carries. */
enum MHD_Result api_queue(struct MHD_Connection *c, unsigned int code, struct MHD_Response *resp);
/* Responds with @text (ownership taken), and one extra header when @hdr is set. */
enum MHD_Result api_respond_text_hdr(struct MHD_Connection *c, unsigned int code, char *text,
				     size_t len, const char *type, const char *hdr,
				     const char *hdr_value);
enum MHD_Result api_respond_text(struct MHD_Connection *c, unsigned int code, char *text,
				 size_t len, const char *type);
/* Responds with @doc (reference stolen), and one extra header when @hdr is set. */
enum MHD_Result api_respond_json_hdr(struct MHD_Connection *c, unsigned int code, json_t *doc,
				     const char *hdr, const char *hdr_value);
enum MHD_Result api_respond_json(struct MHD_Connection *c, unsigned int code, json_t *doc);
/* {"error": message} (counted in /metrics), with one extra header when @hdr is set. */
__attribute__((format(printf, 6, 7))) enum MHD_Result
api_respond_error_hdr(struct api *a, struct MHD_Connection *c, unsigned int code, const char *hdr,
		      const char *hdr_value, const char *fmt, ...);
#define api_respond_error(a, c, code, ...) \
	api_respond_error_hdr(a, c, code, NULL, NULL, __VA_ARGS__)
/* The HTTP status of an ops callback's -errno (400, 404, 409, 503, else 500). */
unsigned int api_errno_code(int err);
/* A short printable copy of @url for a message. */
const char *api_show_url(const char *url, char buf[104]);
/* The query argument @key, or NULL. */
const char *api_arg(struct MHD_Connection *c, const char *key);
/* Appends a line to the audit trail (audit.h); a failure is counted in /metrics and logged. */
void api_audit(struct api *a, enum audit_what what, const char *who, const char *target,
	       const char *result, const char *detail);

/* api_web.c: the page's files and sign-in, the views. */
enum MHD_Result api_page(struct api *a, struct MHD_Connection *c, const char *url);
enum MHD_Result api_session(struct api *a, struct MHD_Connection *c, struct req *r);
enum MHD_Result api_session_start(struct api *a, struct MHD_Connection *c, struct req *r);
enum MHD_Result api_session_end(struct api *a, struct MHD_Connection *c, struct req *r);
enum MHD_Result api_processes(struct api *a, struct MHD_Connection *c);
enum MHD_Result api_flamegraph(struct api *a, struct MHD_Connection *c, struct req *r);
enum MHD_Result api_compare(struct api *a, struct MHD_Connection *c);
enum MHD_Result api_continuous(struct api *a, struct MHD_Connection *c, struct req *r);
/* The role of the request's bearer token or page cookie; answers 401 when it has none. */
enum token_role api_authenticate(struct api *a, struct MHD_Connection *c, struct req *r,
				 enum MHD_Result *ret);
/* True when it answered 403: an Origin that is not this agent. */
bool api_cross_site(struct api *a, struct MHD_Connection *c, enum MHD_Result *ret);
/* True when it answered 403: a mutating request with the cookie but without its CSRF secret. */
bool api_csrf_refused(struct api *a, struct MHD_Connection *c, struct req *r, enum MHD_Result *ret);

#endif
