// SPDX-License-Identifier: Apache-2.0
#include "base/array.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

int array_ensure(void **data, size_t *cap, size_t elem, size_t need)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	if (!elem)
		return -ENOMEM;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*data, ncap * elem);
	if (!n)
		return -ENOMEM;
	*data = n;
	*cap = ncap;
	return 0;
}

/*
 * The tenth byte holds bit 63 only and ends the value: 0 or 1 unsigned; signed, bit 63 and its
 * six sign copies agree (0 or 0x7f). Anything else does not fit 64 bits.
 */
static int leb128(const uint8_t **p, const uint8_t *end, bool is_signed, uint64_t *out)
{
	const uint8_t *q = *p;
	unsigned shift = 0;
	uint64_t r = 0;
	uint8_t b;

	do {
		if (q >= end)
			return -EINVAL;
		b = *q++;
		if (shift == 63 && b && b != (is_signed ? 0x7f : 0x01))
			return -ERANGE;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		r |= ~0ull << shift;
	*p = q;
	*out = r;
	return 0;
}

int leb128_u64(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	return leb128(p, end, false, out);
}

int leb128_s64(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v;
	int err;

	err = leb128(p, end, true, &v);
	if (err)
		return err;
	*out = (int64_t)v;
	return 0;
}

int parse_dec_u64(const char **p, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
