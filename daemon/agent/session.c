// SPDX-License-Identifier: Apache-2.0
/*
 * session: a fixed table of digests under one mutex. Lookups scan every slot and compare each
 * digest in constant time, so the time taken says nothing about which session (if any) matched.
 */
#include "daemon/agent/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/sha256.h"

#define NS_PER_S 1000000000LL

struct slot {
	bool used;
	uint8_t digest[SHA256_DIGEST_LEN];
	struct session_info info;
};

struct sessions {
	pthread_mutex_t lock;
	size_t max;
	int64_t ttl_ns;
	struct slot *slots;
};

bool session_equal(const char *a, const char *b, size_t len)
{
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < len; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return d == 0;
}

int sessions__new(size_t max, unsigned int ttl_s, struct sessions **out)
{
	struct sessions *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->max = max ? max : SESSION_MAX;
	s->ttl_ns = (int64_t)(ttl_s ? ttl_s : SESSION_TTL_S) * NS_PER_S;
	s->slots = calloc(s->max, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void sessions__free(struct sessions *s)
{
	if (!s)
		return;
	explicit_bzero(s->slots, s->max * sizeof(*s->slots));
	free(s->slots);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int random_hex(char out[SESSION_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[SESSION_HEX_LEN / 2];
	size_t i;
	ssize_t n;

	n = getrandom(b, sizeof(b), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(b))
		return -EIO;
	for (i = 0; i < sizeof(b); i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[SESSION_HEX_LEN] = '\0';
	explicit_bzero(b, sizeof(b));
	return 0;
}

static bool is_hex_id(const char *id, size_t len)
{
	size_t i;

	if (!id || len != SESSION_HEX_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

/* A free or expired slot, else the one that expires first. Called locked. */
static struct slot *slot_for_new(struct sessions *s, int64_t now)
{
	struct slot *best = &s->slots[0];
	size_t i;

	for (i = 0; i < s->max; i++) {
		struct slot *e = &s->slots[i];

		if (!e->used || e->info.expires_ns <= now)
			return e;
		if (e->info.expires_ns < best->info.expires_ns)
			best = e;
	}
	return best;
}

int sessions__create(struct sessions *s, const char *name, enum token_role role,
		     char id[SESSION_HEX_LEN + 1], struct session_info *info)
{
	struct slot n = { .used = true };
	int64_t now = clock_real_ns();
	int err;

	if (!s || !name || !*name || strlen(name) > TOKENS_NAME_MAX || role == TOKEN_ROLE_NONE)
		return -EINVAL;
	err = random_hex(id);
	if (!err)
		err = random_hex(n.info.csrf);
	if (err)
		return err;
	sha256(id, SESSION_HEX_LEN, n.digest);
	strcpy(n.info.name, name);
	n.info.role = role;
	n.info.expires_ns = now + s->ttl_ns;
	pthread_mutex_lock(&s->lock);
	*slot_for_new(s, now) = n;
	pthread_mutex_unlock(&s->lock);
	*info = n.info;
	explicit_bzero(&n, sizeof(n));
	return 0;
}

/* The live slot of @digest, or NULL, after looking at every slot. Called locked. */
static struct slot *find(struct sessions *s, const uint8_t digest[SHA256_DIGEST_LEN], int64_t now)
{
	struct slot *hit = NULL;
	size_t i;

	for (i = 0; i < s->max; i++) {
		struct slot *e = &s->slots[i];
		bool eq = session_equal((const char *)e->digest, (const char *)digest,
					SHA256_DIGEST_LEN);

		if (eq && e->used && e->info.expires_ns > now)
			hit = e;
	}
	return hit;
}

/* The live session of @id: copied to @info (may be NULL), and ended when @end is set. */
static int take(struct sessions *s, const char *id, size_t len, struct session_info *info, bool end)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct slot *e;
	int err = -ENOENT;

	if (!s || !is_hex_id(id, len))
		return -ENOENT;
	sha256(id, len, digest);
	pthread_mutex_lock(&s->lock);
	e = find(s, digest, clock_real_ns());
	if (e) {
		if (info)
			*info = e->info;
		if (end)
			explicit_bzero(e, sizeof(*e));
		err = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int sessions__lookup(struct sessions *s, const char *id, size_t len, struct session_info *info)
{
	return take(s, id, len, info, false);
}

int sessions__remove(struct sessions *s, const char *id, size_t len)
{
	return take(s, id, len, NULL, true);
}

size_t sessions__count(struct sessions *s)
{
	int64_t now = clock_real_ns();
	size_t i, n = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->max; i++)
		n += s->slots[i].used && s->slots[i].info.expires_ns > now;
	pthread_mutex_unlock(&s->lock);
	return n;
}
