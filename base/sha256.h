/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha256: FIPS 180-4 SHA-256, for checksums shown in plans and verified on install.
 */
#ifndef SLIDEOPS_SHA256_H
#define SLIDEOPS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_DIGEST_LEN]);
/* One call over a buffer. */
void sha256(const void *data, size_t len, uint8_t out[SHA256_DIGEST_LEN]);
/* Hashes what is left of @fd (at most @max bytes). Returns 0, -EFBIG past @max, -errno. */
int sha256_fd(int fd, uint64_t max, uint8_t out[SHA256_DIGEST_LEN]);
/* Lower-case hex of a digest into @hex (65 bytes). Returns @hex. */
char *sha256_hex(const uint8_t digest[SHA256_DIGEST_LEN], char hex[2 * SHA256_DIGEST_LEN + 1]);

#endif
