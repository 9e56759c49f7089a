/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_parse: the pure part of the local HTTP API (docs/api.md): routes, the Authorization
 * header, targets, the capture request body and query values. No I/O, no globals: every
 * function is thread-safe and fuzzed (tests/fuzz/fuzz_api_parse.c).
 *
 * Every parser returns 0 or -EINVAL with a one-line message in @err (@size bytes, truncated to
 * fit, may be NULL) that can be shown to the client as is: printable ASCII only, quoting at
 * most a short piece of the input. Out-params are written only on success.
 */
#ifndef SLIDEOPS_API_PARSE_H
#define SLIDEOPS_API_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/capture/question.h"
#include "daemon/agent/store.h"
#include "daemon/capture/target.h"
#include "daemon/agent/tokens.h"

/* Request bodies: JSON requests, and (later) symbol uploads, which stream to a callback. */
#define API_JSON_BODY_MAX (64 * 1024)
#define API_UPLOAD_BODY_MAX (1024ULL * 1024 * 1024)
/* Durations the daemon's form offers (SPEC 3); threads is always 5 s. */
#define API_DEFAULT_DURATION 30
#define API_LIST_DEFAULT 50
#define API_LIST_MAX 500
/* Longest path segment a route takes, plus the NUL: a GNU build id of up to 64 bytes in hex. */
#define API_SEG_SIZE 129

enum api_route {
	API_STATUS = 0,		/* GET /v1/status */
	API_PLAN,		/* GET /v1/plan */
	API_CAPTURE_START,	/* POST /v1/captures */
	API_CAPTURE_CURRENT,	/* GET /v1/captures/current */
	API_PROFILES,		/* GET /v1/profiles */
	API_PROFILE,		/* GET /v1/profiles/ID */
	API_PROFILE_DOWNLOAD,	/* GET /v1/profiles/ID/download */
	API_PROFILE_DELETE,	/* DELETE /v1/profiles/ID */
	API_REMOVE,		/* POST /v1/remove */
	API_SYMBOLS_UPLOAD,	/* POST /v1/symbols: upload debug symbols (streamed) */
	API_METRICS,		/* GET /metrics */
	API_PAGE,		/* GET / and /ui/...: the page (daemon/agent/page.h) */
	API_SESSION,		/* GET /v1/session: who is signed in */
	API_SESSION_START,	/* POST /v1/session: sign in with a token */
	API_SESSION_END,	/* DELETE /v1/session: sign out */
	API_PROCESSES,		/* GET /v1/processes: busiest processes and Services */
	API_PROFILE_FLAMEGRAPH, /* GET /v1/profiles/ID/flamegraph */
	API_COMPARE,		/* GET /v1/compare?base=ID&new=ID */
	API_CONTINUOUS,		/* GET /v1/continuous: the continuous profile of a range */
	API_SYMBOLS_LIST,	/* GET /v1/symbols: the uploads */
	API_SYMBOLS_DELETE,	/* DELETE /v1/symbols/BUILD_ID */
	API_ROUTE_COUNT,
};

struct api_route_match {
	enum api_route route;
	/* the profile id of /v1/profiles/ID[/...] (< STORE_ID_SIZE bytes), or the build id of
	 * /v1/symbols/BUILD_ID (< API_SEG_SIZE): letters, digits and '-' only */
	char id[API_SEG_SIZE];
	enum token_role need; /* the least role allowed; NONE: no token needed */
	bool body;	      /* takes a JSON body */
};

/*
 * Matches @method and @path (without the query string). Returns 0; -ENOENT for an unknown
 * path (or a malformed profile id); -EOPNOTSUPP for a known path with another method, with the
 * methods it takes ("GET, DELETE") in @allow (@allow_size bytes; may be NULL).
 */
int api_parse_route(const char *method, const char *path, struct api_route_match *out, char *allow,
		    size_t allow_size);

/*
 * Finds the token in an Authorization header value "Bearer <token>" (scheme case-insensitive,
 * spaces around the token ignored). Returns 0 with *@token pointing into @header and *@len, or
 * -EINVAL (NULL header, another scheme, an empty token or one with characters other than
 * visible ASCII).
 */
int api_parse_bearer(const char *header, const char **token, size_t *len);

/*
 * Parses a target: "server", "service:NAME", "service:NAMESPACE/NAME" (into @out->ns and
 * @out->name; the caller sets @out->ns_fn), "unit:NAME", "container:ID" or "pid:N[,N...]"
 * (at most 64). Names are 1..TARGET_NAME_MAX-1 bytes without control characters.
 */
int api_parse_target(const char *s, struct capture_target *out, char *err, size_t size);

struct api_capture_req {
	struct capture_target target;
	enum question question;
	unsigned int duration_s; /* 10, 30 or 60; 5 for threads */
};

/*
 * The query of GET /v1/plan, or the fields of the capture body, as strings (any may be NULL:
 * target and question are required, duration defaults to 30). Checks the duration against the
 * form's 10/30/60 and that a server target is only asked what a server profile offers.
 */
int api_parse_plan_query(const char *target, const char *question, const char *duration,
			 struct api_capture_req *out, char *err, size_t size);

/*
 * Parses the body of POST /v1/captures: a JSON object {"target": "...", "question": "...",
 * "duration": 30} (duration optional; no other keys; @len bytes, at most API_JSON_BODY_MAX).
 */
int api_parse_capture_body(const char *body, size_t len, struct api_capture_req *out, char *err,
			   size_t size);

enum api_format {
	API_FORMAT_PPROF = 0,
	API_FORMAT_COLLAPSED,
	API_FORMAT_HTML, /* a view's page (GET /v1/continuous); never a download's format */
};

/* The target in the form api_parse_target() reads ("service:billing", "service:shop/billing")
 * into @buf. */
const char *api_format_target(const struct capture_target *t, char *buf, size_t size);

/* "pprof" (also the default for NULL) or "collapsed". */
int api_parse_format(const char *s, enum api_format *out, char *err, size_t size);

/* A Service name filter: 1..STORE_NAME_MAX-1 bytes without control characters; "NAME" (any
 * namespace) or "NAMESPACE/NAME" (that tenant's only; the namespace a DNS label). */
int api_parse_service(const char *s, char *out, size_t out_size, char *err, size_t size);

/*
 * Splits "NAMESPACE/NAME" into @ns (@ns_size bytes) and *@name (pointing into @s); "NAME"
 * gives "" and @s. Returns 0, or -EINVAL (NULL, a namespace that is not a DNS label or does
 * not fit, an empty name, a second '/'). Pure.
 */
int api_split_service(const char *s, char *ns, size_t ns_size, const char **name);

/* A decimal number in [0, @max] (no sign, no spaces); NULL gives @dflt. */
int api_parse_uint(const char *s, const char *what, unsigned long max, unsigned long dflt,
		   unsigned long *out, char *err, size_t size);

/* The last second whose nanoseconds since the epoch fit an int64_t: 2262-04-11T23:47:15Z. */
#define API_TIME_MAX_S 9223372035LL
/* GET /v1/continuous: the range when `from` is not given, and the longest one. */
#define API_CONTINUOUS_DEFAULT_S 3600
#define API_CONTINUOUS_MAX_S (7 * 24 * 3600)

/*
 * A time of a query, into ns since the epoch: RFC 3339 ("2026-12-07T10:00:00Z",
 * "2026-12-07T11:00:00.250+01:00"; 'T' or 't', 'Z' or 'z', up to 9 digits of fraction; a space
 * stands for the '+' of an offset, as a query string turns an unescaped '+' into one) or unix
 * seconds ("1796637600"), from 1970 to API_TIME_MAX_S. @what names it in messages ("from").
 */
int api_parse_time(const char *s, const char *what, int64_t *out, char *err, size_t size);

/* The query of GET /v1/continuous, checked. */
struct api_continuous_req {
	char service[STORE_NAME_MAX]; /* a Service NAME; "" the whole server */
	int64_t from_ns, until_ns;    /* from < until, at most API_CONTINUOUS_MAX_S apart */
	enum api_format format;	      /* html (the default), pprof or collapsed */
};

/*
 * Parses the values of GET /v1/continuous (each may be NULL or "": the default): @service NAME
 * (NAMESPACE/NAME is refused: the samples of a continuous profile name a Service, not its
 * namespace), @from and @until (api_parse_time(); until defaults to @now_ns, from to until -
 * API_CONTINUOUS_DEFAULT_S), @format "html", "pprof" or "collapsed". Refuses from >= until and a
 * range over API_CONTINUOUS_MAX_S.
 */
int api_parse_continuous_query(const char *service, const char *from, const char *until,
			       const char *format, int64_t now_ns, struct api_continuous_req *out,
			       char *err, size_t size);

#endif
