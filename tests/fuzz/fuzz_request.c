// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for request.c, the capture annotation's value. The first byte picks a pod
 * or the node; the rest is the value (cut at the first NUL, as an annotation cannot hold one).
 * Checks: only 0 or -EINVAL; on failure a terminated, printable-ASCII message and the
 * out-param untouched; on success an implemented question (one a server offers, for the node)
 * and a duration of 10, 30 or 60 (5 for threads); the canonical form parses back the same.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture_request r, back;
	const struct question_info *qi;
	char *value, err[256], canon[64];
	bool server;
	size_t i;
	int ret;

	if (!size)
		return 0;
	server = data[0] & 1;
	value = malloc(size);
	if (!value)
		return 0;
	memcpy(value, data + 1, size - 1);
	value[size - 1] = '\0';
	memset(&r, 0x5a, sizeof(r));
	memset(err, 'x', sizeof(err));
	ret = request_parse(value, server, &r, err, sizeof(err));
	if (ret == -EINVAL) {
		if (!memchr(err, '\0', sizeof(err)))
			abort();
		for (i = 0; err[i]; i++)
			if (err[i] < 0x20 || err[i] >= 0x7f)
				abort();
		if (r.duration_s != 0x5a5a5a5au)
			abort();
	} else if (ret == 0) {
		qi = question_info(r.question);
		if (!qi || !qi->implemented || (server && !qi->server))
			abort();
		if (r.question == Q_THREADS ? r.duration_s != 5 :
		    r.duration_s != 10 && r.duration_s != 30 && r.duration_s != 60)
			abort();
		request_format(&r, canon, sizeof(canon));
		if (request_parse(canon, server, &back, NULL, 0) || back.question != r.question ||
		    back.duration_s != r.duration_s)
			abort();
	} else {
		abort();
	}
	free(value);
	return 0;
}
