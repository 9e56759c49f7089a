/* SPDX-License-Identifier: Apache-2.0 */
/*
 * web_parse: the pure part of the page's sign-in (docs/api.md "Sessions"): the Cookie header,
 * the Origin check and the body of POST /v1/session. No I/O, no globals: thread-safe and fuzzed
 * (tests/fuzz/fuzz_web_parse.c). Messages follow api_parse.h: one line, printable ASCII, never
 * quoting a token.
 */
#ifndef SLIDEOPS_WEB_PARSE_H
#define SLIDEOPS_WEB_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest Cookie header looked at (libmicrohttpd bounds all headers to 32 KiB anyway). */
#define WEB_COOKIE_MAX 8192

/*
 * Finds cookie @name in a Cookie header value ("a=1; slideops_session=ab12"; RFC 6265 5.4:
 * pairs split by ';', spaces around them ignored, the first pair of that name wins, a value may
 * be in double quotes). Returns 0 with *@value pointing into @header and *@len; -ENOENT when it
 * is absent or @header is NULL; -EINVAL for a header longer than WEB_COOKIE_MAX.
 */
int web_parse_cookie(const char *header, const char *name, const char **value, size_t *len);

/*
 * True when @origin (an Origin header: "http://127.0.0.1:7070") names this agent as the browser
 * reached it, that is "http://" or "https://" followed by the Host header @host (host compared
 * without case). NULL, "null", an empty host, or any other origin: false.
 */
bool web_origin_is(const char *origin, const char *host);

/*
 * The body of POST /v1/session: a JSON object {"token": "..."} with no other key (@len bytes, at
 * most API_JSON_BODY_MAX). The token (1..TOKENS_MAX_LEN visible ASCII characters) is copied to
 * @token (@tsize bytes, at least TOKENS_MAX_LEN + 1), with its length in *@tlen.
 * Returns 0 or -EINVAL with the reason in @err.
 */
int web_parse_session_body(const char *body, size_t len, char *token, size_t tsize, size_t *tlen,
			   char *err, size_t size);

#endif
