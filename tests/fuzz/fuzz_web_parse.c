// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for web_parse.c, the page's sign-in parsing. The first byte picks the parser:
 * a Cookie header (with the cookie name, split at the first NUL), an Origin and a Host (split at
 * the first NUL), or a session body (raw bytes, NULs included). Checks: only the documented
 * returns; a cookie value inside the header and before its end; a token of visible ASCII within
 * its bounds; on failure a terminated, printable-ASCII message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/tokens.h"
#include "daemon/agent/web_parse.h"

static void check_msg(const char *err, size_t size)
{
	size_t i;

	if (!memchr(err, '\0', size))
		abort();
	for (i = 0; err[i]; i++)
		if (err[i] < 0x20 || err[i] >= 0x7f)
			abort();
}

static void fuzz_cookie(const char *s, size_t n)
{
	const char *name = s + strlen(s) + 1, *v;
	size_t len;
	int ret;

	if ((size_t)(name - s) > n)
		name = "slideops_session";
	ret = web_parse_cookie(s, name, &v, &len);
	if (ret && ret != -ENOENT && ret != -EINVAL)
		abort();
	if (!ret && (v < s || v + len > s + strlen(s)))
		abort();
}

static void fuzz_session(const uint8_t *data, size_t n)
{
	char token[TOKENS_MAX_LEN + 1], err[256];
	size_t tlen, i;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = web_parse_session_body((const char *)data, n, token, sizeof(token), &tlen, err,
				     sizeof(err));
	if (ret == -EINVAL) {
		check_msg(err, sizeof(err));
		return;
	}
	if (ret || tlen == 0 || tlen > TOKENS_MAX_LEN || strlen(token) != tlen)
		abort();
	for (i = 0; i < tlen; i++)
		if (token[i] <= 0x20 || token[i] >= 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	if (data[0] % 3 == 2) {
		fuzz_session(data + 1, size - 1);
		return 0;
	}
	s = malloc(size + 1); /* room for a second terminated string after the first NUL */
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	s[size] = '\0';
	if (data[0] % 3 == 0)
		fuzz_cookie(s, size - 1);
	else
		(void)web_origin_is(s, s + strlen(s) + 1 <= s + size ? s + strlen(s) + 1 : "");
	free(s);
	return 0;
}
