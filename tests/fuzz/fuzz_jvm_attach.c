// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the pure parts of the attach protocol (runtimes/jvm/jvm_attach.c): the
 * input is an answer as a JVM (or whatever listens on its socket) sends it, and also the text
 * of a /proc/PID/status. On success the body must lie inside the input, hold no NUL, follow a
 * code line of digits, and clean to valid UTF-8 of the same length; a cap below the input's
 * length must give -EFBIG.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/jvm/jvm_attach.h"

static void check_answer(const uint8_t *data, size_t size)
{
	size_t off = 0, max = size > 1 ? size - 1 : 0, n;
	int code = 0, err;
	char *copy;

	err = jvm_attach_parse_answer((const char *)data, size, 0, &code, &off);
	if (err) {
		if (err != -ENODATA && err != -EBADMSG && err != -EILSEQ && err != -EFBIG)
			abort();
		return;
	}
	if (off > size || off == 0 || memchr(data, 0, size))
		abort();
	if (off < size && data[off - 1] != '\n')
		abort();
	if (max && jvm_attach_parse_answer((const char *)data, size, max, &code, &off) != -EFBIG)
		abort();
	copy = malloc(size - off + 1);
	if (!copy)
		return;
	memcpy(copy, data + off, size - off);
	copy[size - off] = '\0';
	n = jvm_attach_text_clean(copy, size - off);
	if (n != size - off || !text_utf8_is_valid(copy, n))
		abort();
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_attach_ids ids;

	check_answer(data, size);
	if (!jvm_attach_parse_status((const char *)data, size, &ids) && !ids.nspid)
		abort();
	return 0;
}
