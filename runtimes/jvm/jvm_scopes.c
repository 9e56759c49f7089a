// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_scopes.h"

#include <errno.h>
#include <string.h>

/* UNSIGNED5: a byte below 192 (X + L: 0 + 192 in JDK 17, 1 + 191 from JDK 20) ends a number;
 * at most 5 bytes, each worth 6 more bits. */
#define U5_END 192u
#define U5_LG_H 6
#define U5_MAX_BYTES 5

int jvm_u5_read(const uint8_t *buf, size_t len, size_t *pos, unsigned excl, uint32_t *v)
{
	uint64_t sum = 0;
	unsigned i;
	uint32_t b;

	for (i = 0; i < U5_MAX_BYTES; i++) {
		if (*pos >= len)
			return -EBADMSG;
		b = buf[(*pos)++];
		if (b < excl)
			return -EBADMSG; /* the excluded byte (0) never appears */
		sum += (uint64_t)(b - excl) << (U5_LG_H * i);
		if (b < U5_END || i == U5_MAX_BYTES - 1)
			break;
	}
	if (sum > UINT32_MAX)
		return -EBADMSG;
	*v = (uint32_t)sum;
	return 0;
}

static int32_t rd_i32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int jvm_pcdesc_find(const uint8_t *pcs, size_t len, size_t stride, int32_t pc_off, size_t *index)
{
	size_t n, i, found = SIZE_MAX;
	int32_t prev = INT32_MIN, cur;

	if (stride < 8)
		return -EINVAL;
	if (len % stride)
		return -EBADMSG;
	n = len / stride;
	/* one pass: the first entry at or after pc_off, and the order of all of them (a region
	 * reused while it was copied is refused, wherever the disorder lies); at most
	 * JVM_NAMES_PCS_MAX / 16 entries */
	for (i = 0; i < n; i++) {
		cur = rd_i32(pcs + i * stride);
		if (i && cur <= prev)
			return -EBADMSG;
		if (found == SIZE_MAX && cur >= pc_off)
			found = i;
		prev = cur;
	}
	if (found == SIZE_MAX)
		return -ENOENT;
	*index = found;
	return 0;
}

uint32_t jvm_pcdesc_scope(const uint8_t *pcs, size_t stride, size_t index)
{
	return (uint32_t)rd_i32(pcs + index * stride + 4);
}

int jvm_scopes_decode(const uint8_t *data, size_t len, unsigned excl, uint32_t off,
		      struct jvm_scope *out, size_t max)
{
	uint32_t sender, method, bci1;
	size_t n = 0, pos;
	int err;

	if (max > JVM_SCOPES_MAX)
		max = JVM_SCOPES_MAX;
	while (off) {
		if (off >= len)
			return -EBADMSG;
		if (n >= max)
			return -E2BIG;
		pos = off;
		err = jvm_u5_read(data, len, &pos, excl, &sender);
		if (!err)
			err = jvm_u5_read(data, len, &pos, excl, &method);
		if (!err)
			err = jvm_u5_read(data, len, &pos, excl, &bci1);
		if (err)
			return err;
		/* a caller is recorded before its callees: offsets fall, so the walk ends */
		if (sender && sender >= off)
			return -EBADMSG;
		out[n].method_index = method;
		out[n].bci = (int32_t)bci1 - 1;
		n++;
		off = sender;
	}
	return (int)n;
}

/* A signed UNSIGNED5 (zigzag). */
static int read_signed(const uint8_t *tab, size_t len, size_t *pos, unsigned excl, int32_t *v)
{
	uint32_t u;
	int err = jvm_u5_read(tab, len, pos, excl, &u);

	if (err)
		return err;
	*v = (int32_t)(u >> 1) ^ -(int32_t)(u & 1);
	return 0;
}

int jvm_line_of(const uint8_t *tab, size_t len, unsigned excl, int32_t bci, uint32_t *line)
{
	int64_t cur_bci = 0, cur_line = 0, best_bci = -1, best_line = -1;
	int32_t db, dl;
	size_t pos = 0;
	uint8_t b;
	int err;

	for (;;) {
		if (pos >= len)
			return -EBADMSG;
		b = tab[pos++];
		if (!b)
			break;
		if (b == 0xff) {
			err = read_signed(tab, len, &pos, excl, &db);
			if (!err)
				err = read_signed(tab, len, &pos, excl, &dl);
			if (err)
				return err;
		} else {
			db = b >> 3;
			dl = b & 7;
		}
		cur_bci += db;
		cur_line += dl;
		if (cur_bci < 0 || cur_bci > 0xffff || cur_line < 0 || cur_line > UINT32_MAX)
			return -EBADMSG;
		if (cur_bci == bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		} else if (cur_bci < bci && cur_bci > best_bci && best_bci != bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	if (best_line < 0)
		return -ENOENT;
	*line = (uint32_t)best_line;
	return 0;
}
