/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tokens: the bearer tokens of the local HTTP API, each with a name and a role, read from a
 * YAML file (docs/api.md):
 *
 *   tokens:
 *     - name: alice
 *       token: "0c5f...e1"        # at least TOKENS_MIN_LEN characters
 *       role: viewer              # viewer | operator | admin
 *
 * Only a SHA-256 digest of each token is kept in memory, and a presented token is compared
 * with every entry in constant time (no early exit), so neither the comparison nor a crash
 * dump gives a token away. Messages never quote a token.
 *
 * A loaded struct tokens is immutable: lookups are thread-safe.
 */
#ifndef SLIDEOPS_TOKENS_H
#define SLIDEOPS_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#define TOKENS_MAX 256
#define TOKENS_MIN_LEN 16
#define TOKENS_MAX_LEN 512
#define TOKENS_NAME_MAX 64
#define TOKENS_MAX_BYTES (256 * 1024)

/* Ordered: a role allows everything the roles below it allow. */
enum token_role {
	TOKEN_ROLE_NONE = 0,	 /* no token, or an unknown one */
	TOKEN_ROLE_VIEWER = 1,	 /* reads: status, plan, progress, profiles, downloads */
	TOKEN_ROLE_OPERATOR = 2, /* and captures, deletes, symbol uploads */
	TOKEN_ROLE_ADMIN = 3,	 /* and settings, removing the profiler */
};

struct tokens;

/* "viewer", "operator", "admin" ("none" for TOKEN_ROLE_NONE). */
const char *token_role_name(enum token_role r);
/* Parses a role name. Returns the role or -EINVAL. */
int token_role_parse(const char *s);
/* True when @have is at least @need. */
bool token_role_allows(enum token_role have, enum token_role need);

/*
 * Parses the YAML text @text (@len bytes). @filename names the file in messages (NULL:
 * "<tokens>"). Returns 0 with @out (free with tokens__free); -EINVAL with "FILE:LINE: ..." in
 * @err (@errsize bytes; may be NULL) for bad input: not a mapping with one key `tokens`, an
 * entry without name, token or role, an unknown key or role, a duplicate name or token, a
 * token shorter than TOKENS_MIN_LEN, more than TOKENS_MAX entries, anchors/aliases/tags;
 * -ENOMEM. An empty list is valid (every request is then refused with 401).
 */
int tokens__parse(const char *text, size_t len, const char *filename, struct tokens **out,
		  char *err, size_t errsize);

/* Reads @path (at most TOKENS_MAX_BYTES) and parses it. Returns 0, -errno from reading (with
 * "PATH: reason" in @err) or what tokens__parse() returns. */
int tokens__load(const char *path, struct tokens **out, char *err, size_t errsize);

/* Accepts NULL. */
void tokens__free(struct tokens *t);

/* Number of tokens. */
size_t tokens__count(const struct tokens *t);

/*
 * Looks up the token @token (@len bytes, not terminated). Returns its role (>= VIEWER) and
 * copies its name into @name (@size bytes; may be NULL), or TOKEN_ROLE_NONE (name untouched).
 * Takes the same time whichever entry matches, or none.
 */
enum token_role tokens__lookup(const struct tokens *t, const char *token, size_t len, char *name,
			       size_t size);

#endif
