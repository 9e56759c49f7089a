// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over HotSpot's compressed debug information (runtimes/jvm/jvm_scopes.c).
 * The first byte picks the UNSIGNED5 variant (bit 0) and the PcDesc stride (bits 1-3: 8..36),
 * the next four a pc offset and the next four a bci (little endian); the rest is at once a
 * stream of UNSIGNED5 integers, a PcDesc table, scopes data and a line number table. Every
 * result must stay inside its buffer and its contract: positions advance within the buffer,
 * an index points at an entry at or after the pc offset, a chain holds 1..max scopes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jvm/jvm_scopes.h"

#define HDR 9

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_scope sc[JVM_SCOPES_MAX];
	const uint8_t *buf = data + HDR;
	size_t len, pos, idx, stride, k;
	unsigned excl;
	int32_t pc_off, bci, at;
	uint32_t v, line;
	int ret;

	if (size < HDR)
		return 0;
	excl = data[0] & 1;
	stride = 8 + 4 * ((data[0] >> 1) & 7);
	memcpy(&pc_off, data + 1, 4);
	memcpy(&bci, data + 5, 4);
	len = size - HDR;
	/* a copy of its exact size: ASan sees any read past it */
	uint8_t *b = malloc(len ? len : 1);
	if (!b)
		return 0;
	memcpy(b, buf, len);

	/* the whole buffer as UNSIGNED5 integers */
	for (pos = 0; pos < len;) {
		size_t before = pos;

		ret = jvm_u5_read(b, len, &pos, excl, &v);
		if (ret) {
			if (ret != -EBADMSG)
				abort();
			break;
		}
		if (pos <= before || pos > before + 5 || pos > len)
			abort();
		if (excl && memchr(b + before, 0, pos - before))
			abort();
	}

	ret = jvm_pcdesc_find(b, len, stride, pc_off, &idx);
	if (ret == 0) {
		if (idx >= len / stride)
			abort();
		memcpy(&at, b + idx * stride, 4);
		if (at < pc_off)
			abort();
		/* the scopes of that PcDesc, and of every one */
		(void)jvm_scopes_decode(b, len, excl, jvm_pcdesc_scope(b, stride, idx), sc,
					JVM_SCOPES_MAX);
	} else if (ret != -ENOENT && ret != -EBADMSG && ret != -EINVAL) {
		abort();
	}

	for (k = 0; k < len && k < 64; k++) {
		size_t max = 1 + (k % JVM_SCOPES_MAX);

		ret = jvm_scopes_decode(b, len, excl, (uint32_t)k, sc, max);
		if (ret > (int)max || (k == 0 && ret != 0))
			abort();
		if (ret < 0 && ret != -EBADMSG && ret != -E2BIG)
			abort();
	}

	ret = jvm_line_of(b, len, excl, bci, &line);
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		abort();
	ret = jvm_line_of(b, len, excl, bci & 0xffff, &line);
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		abort();
	free(b);
	return 0;
}
