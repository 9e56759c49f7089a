// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the symbol index: the input is decoded as an index (every corruption
 * must be refused, every accepted one looked up), and read as a list of functions (8-byte start,
 * 2-byte size, 1-byte flags, a name up to a NUL) that is built, sealed, encoded and decoded
 * again: what the encoder writes must decode, with the same count, and each function's start
 * must name a function.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "symbols/symindex.h"

static void lookups(const struct symindex *ix, const uint8_t *data, size_t size)
{
	uint64_t addr;
	const char *name;
	size_t i;

	for (i = 0; i + 8 <= size && i < 1024; i += 8) {
		memcpy(&addr, data + i, 8);
		name = symindex__lookup(ix, addr);
		if (name && (!name[0] || !text_utf8_is_clean(name, strlen(name))))
			abort();
	}
	(void)symindex__lookup(ix, 0);
	(void)symindex__lookup(ix, UINT64_MAX);
}

static void round_trip(const uint8_t *data, size_t size)
{
	struct symindex_build *b;
	struct symindex *ix;
	size_t off = 0, n, len;
	uint64_t start;
	void *enc;

	if (symindex_build__new("0123abcd", 4096, &b))
		return;
	while (size - off >= 12) {
		memcpy(&start, data + off, 8);
		n = strnlen((const char *)data + off + 11, size - off - 11);
		(void)symindex_build__add(b, start, data[off + 8] | data[off + 9] << 8,
					  (const char *)data + off + 11, n, data[off + 10] & 7);
		off += 11 + n + (off + 11 + n < size);
	}
	if (symindex_build__seal(b) ||
	    symindex__encode(b, &(struct symindex_meta){ "f\xff", "by", -1 }, &enc, &len))
		abort();
	if (symindex__decode(enc, len, &ix) || symindex__count(ix) != symindex_build__count(b))
		abort();
	lookups(ix, enc, len);
	symindex__free(ix);
	free(enc);
	symindex_build__free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symindex_info info;
	struct symindex *ix;

	(void)symindex_peek(data, size < SYMINDEX_HEADER_MAX ? size : SYMINDEX_HEADER_MAX, size,
			    &info);
	if (!symindex__decode(data, size, &ix)) {
		if (symindex_peek(data, size, size, &info) || info.functions != symindex__count(ix))
			abort();
		lookups(ix, data, size);
		symindex__free(ix);
	}
	round_trip(data, size);
	return 0;
}
