// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the code-object reader (runtimes/python/py_code.c). The input is the
 * fake process memory: byte 0 picks the CPython minor version, the rest is mapped at 0x1000,
 * with the code object at its start, so pointers inside it reach strings and tables of any
 * declared size (the 256-byte name and 64 KiB table limits). Every name must come out as valid,
 * NUL-terminated UTF-8 within its bound, and every line lookup must return. The type to accept
 * as PyCode_Type is the memory's first 8 bytes (the code object's own ob_refcnt).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/python/py_code.h"

#define BASE 0x1000ull

struct mem {
	const uint8_t *buf;
	size_t len;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->len || n > m->len - (addr - BASE))
		return -14; /* EFAULT */
	memcpy(buf, m->buf + (addr - BASE), n);
	return 0;
}

static void check_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, PY_CODE_NAME_MAX + 1);

	if (len > PY_CODE_NAME_MAX)
		abort();
	while (*p) {
		int n = *p < 0x80	? 1 :
			(*p >> 5) == 6	? 2 :
			(*p >> 4) == 14 ? 3 :
			(*p >> 3) == 30 ? 4 :
					  0;

		if (!n)
			abort();
		for (int i = 1; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				abort();
		}
		p += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct py_offsets *o;
	struct py_code_info ci;
	struct mem m;
	uint64_t type = 0;
	int line;

	if (size < 2 || py_offsets_for_version(3, 6 + data[0] % 8, &o))
		return 0;
	m.buf = data + 1;
	m.len = size - 1;
	if (m.len >= 8)
		memcpy(&type, m.buf, 8);
	if (py_code_read(o, type, mem_read, &m, BASE, &ci))
		return 0;
	check_utf8(ci.name);
	check_utf8(ci.file);
	if (ci.linetable_len > PY_CODE_TABLE_MAX)
		abort();
	for (uint64_t i = 0; i < 64; i++)
		py_code_line(o, &ci, BASE,
			     o->layout == PY_FRAMES_INTERP ? BASE + o->code_adaptive + i * 2 : i,
			     &line);
	py_code_info_clear(&ci);
	return 0;
}
