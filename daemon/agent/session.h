/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session: the page's sign-in sessions (docs/api.md "Sessions"). POST /v1/session turns an API
 * token into a session the browser keeps as an HttpOnly, SameSite=Strict cookie, so no token
 * sits in a URL or in the page's script. Each session has its own CSRF secret, which the page
 * sends back in X-SlideOps-CSRF on every mutating request.
 *
 * Only a SHA-256 digest of each session id is kept, and lookups compare it with every entry in
 * constant time, like tokens. The table is bounded (SESSION_MAX): a new session past it
 * replaces the one that expires first. Sessions expire SESSION_TTL_S after sign-in and do not
 * survive the agent. All functions are thread-safe.
 */
#ifndef SLIDEOPS_SESSION_H
#define SLIDEOPS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/agent/tokens.h"

#define SESSION_MAX 256
#define SESSION_TTL_S (8 * 3600)
#define SESSION_COOKIE "slideops_session"
#define SESSION_CSRF_HEADER "X-SlideOps-CSRF"
/* A session id and a CSRF secret: 32 random bytes in lower-case hex. */
#define SESSION_HEX_LEN 64

struct session_info {
	char name[TOKENS_NAME_MAX + 1]; /* the token's name */
	enum token_role role;		/* the token's role */
	char csrf[SESSION_HEX_LEN + 1]; /* the session's CSRF secret */
	int64_t expires_ns;		/* CLOCK_REALTIME */
};

struct sessions;

/* A table of at most @max sessions (0: SESSION_MAX) living @ttl_s seconds (0: SESSION_TTL_S).
 * Returns 0 or -ENOMEM. */
int sessions__new(size_t max, unsigned int ttl_s, struct sessions **out);
/* Accepts NULL. */
void sessions__free(struct sessions *s);

/*
 * Starts a session for @name with @role: its id (the cookie's value) into @id, and @info.
 * Returns 0, -EINVAL (role NONE, an empty name), or -errno from getrandom().
 */
int sessions__create(struct sessions *s, const char *name, enum token_role role,
		     char id[SESSION_HEX_LEN + 1], struct session_info *info);

/* The session of cookie value @id (@len bytes): 0 with @info, -ENOENT (unknown, expired, or not
 * SESSION_HEX_LEN hex digits). */
int sessions__lookup(struct sessions *s, const char *id, size_t len, struct session_info *info);

/* Ends the session @id. Returns 0 or -ENOENT. */
int sessions__remove(struct sessions *s, const char *id, size_t len);

/* Live sessions (for tests and /metrics). */
size_t sessions__count(struct sessions *s);

/* True when @a and @b (@len bytes each) are equal; takes the same time wherever they differ. */
bool session_equal(const char *a, const char *b, size_t len);

#endif
