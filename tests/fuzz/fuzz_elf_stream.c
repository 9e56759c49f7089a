// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the streamed ELF reader: the input's first byte picks how the rest (the
 * file) is cut into chunks (sizes 1..16 or 1..8192, taken from the input), the limits are small
 * (4 KiB ring, 64 KiB sections, 512 KiB file, 2000 functions) so that every refusal is reachable
 * under -max_len. A result is encoded, decoded (which checks every name) and looked up; every
 * refusal's sentence must be valid UTF-8.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "symbols/elf_stream.h"
#include "symbols/symindex.h"

static void check_result(struct symindex_build *b, const uint8_t *data, size_t size)
{
	struct symindex *ix;
	uint64_t addr;
	size_t len, i;
	void *enc;

	if (symindex__encode(b, NULL, &enc, &len))
		return;
	if (symindex__decode(enc, len, &ix))
		abort(); /* what we encode must decode */
	if (symindex__count(ix) != symindex_build__count(b) || !symindex__count(ix))
		abort();
	for (i = 0; i + 8 <= size && i < 512; i += 8) {
		memcpy(&addr, data + i, 8);
		(void)symindex__lookup(ix, addr);
		(void)symindex__lookup(ix, addr & 0xffffff);
	}
	symindex__free(ix);
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_stream_opts o = { .max_tail = 4096, .max_section = 64u << 10,
				     .max_bytes = 512u << 10, .max_functions = 2000 };
	struct symindex_build *b = NULL;
	struct elf_stream *s;
	size_t off = 1, n, i = 0, span;
	const char *why;
	int err = 0;

	if (!size || elf_stream__new(&o, &s))
		return 0;
	span = data[0] & 0x80 ? 8192 : 16;
	while (!err && off < size) {
		n = 1 + (size_t)(data[(data[0] + i * 31) % size] * 257 + i) % span;
		if (n > size - off)
			n = size - off;
		err = elf_stream__feed(s, data + off, n);
		off += n;
		i++;
	}
	if (!err)
		err = elf_stream__finish(s, &b);
	why = elf_stream__reason(s);
	if (!text_utf8_is_valid(why, strlen(why)) || (err && !why[0]))
		abort();
	if (!err) {
		check_result(b, data, size);
		symindex_build__free(b);
	}
	elf_stream__free(s);
	return 0;
}
