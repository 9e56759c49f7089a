// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_linetable.h"

#include <errno.h>

#include "runtimes/python/py_offsets.h"

/* 3.6-3.9: (address increment, signed line increment) pairs; the line of @off is the sum of the
 * increments of every pair whose address is <= @off. */
static int line_lnotab(const uint8_t *tab, size_t len, int line, uint32_t off, int *out)
{
	uint64_t addr = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > off)
			break;
		line += (int8_t)tab[i + 1];
	}
	*out = line;
	return 0;
}

/* 3.10: each pair closes a range [start, start + delta) whose line moves by the signed second
 * byte; -128 means "no line" for that range only. */
static int line_310(const uint8_t *tab, size_t len, int line, uint32_t off, int *out)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t ldelta = (int8_t)tab[i + 1];
		int range_line = -1;

		end += tab[i];
		if (ldelta != -128) {
			line += ldelta;
			range_line = line;
		}
		if (off < end) {
			if (range_line < 0)
				return -ENOENT;
			*out = range_line;
			return 0;
		}
	}
	return -ENOENT;
}

/* A 6-bit-chunk varint of the location table (bit 6: more follows). */
static int read_varint(const uint8_t *tab, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (*i >= len || shift > 30)
			return -EINVAL;
		v |= (uint32_t)(tab[*i] & 63) << shift;
		shift += 6;
		if (!(tab[(*i)++] & 64))
			break;
	}
	*out = v;
	return 0;
}

static int read_svarint(const uint8_t *tab, size_t len, size_t *i, int *out)
{
	uint32_t v;
	int err = read_varint(tab, len, i, &v);

	if (err)
		return err;
	*out = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
	return 0;
}

/* Skips the bytes after an entry's first byte and returns its line delta, or 0 with @none set
 * for "no location" entries. */
static int entry_delta(unsigned code, const uint8_t *tab, size_t len, size_t *i, int *delta,
		       int *none)
{
	uint32_t skip;
	int err = 0;

	*delta = 0;
	*none = 0;
	if (code == 15) {
		*none = 1;
	} else if (code == 14) { /* long form: line delta, end line, column, end column */
		err = read_svarint(tab, len, i, delta);
		for (int k = 0; !err && k < 3; k++)
			err = read_varint(tab, len, i, &skip);
	} else if (code == 13) { /* no column */
		err = read_svarint(tab, len, i, delta);
	} else if (code >= 10) { /* one line: delta in the code, two column bytes */
		*delta = (int)code - 10;
		*i += 2;
	} else { /* short form: same line, one column byte */
		*i += 1;
	}
	if (!err && *i > len)
		err = -EINVAL;
	return err;
}

/* 3.11+: entries of a first byte 1CCCCLLL (code, length - 1 in code units) and their data. */
static int line_311(const uint8_t *tab, size_t len, int line, uint32_t off, int *out)
{
	uint64_t unit = off / 2, end = 0;
	size_t i = 0;
	int delta, none, err;

	while (i < len) {
		uint8_t b = tab[i++];

		if (!(b & 0x80))
			return -EINVAL;
		err = entry_delta((b >> 3) & 15, tab, len, &i, &delta, &none);
		if (err)
			return err;
		line += delta;
		end += (b & 7) + 1;
		if (unit < end) {
			if (none)
				return -ENOENT;
			*out = line;
			return 0;
		}
	}
	return -ENOENT;
}

int py_linetable_line(unsigned format, const uint8_t *tab, size_t len, int firstlineno,
		      uint32_t byte_off, int *line)
{
	switch (format) {
	case PY_LINES_LNOTAB:
		return line_lnotab(tab, len, firstlineno, byte_off, line);
	case PY_LINES_310:
		return line_310(tab, len, firstlineno, byte_off, line);
	case PY_LINES_311:
		return line_311(tab, len, firstlineno, byte_off, line);
	default:
		return -EINVAL;
	}
}
