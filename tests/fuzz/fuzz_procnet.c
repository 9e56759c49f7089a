// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target over the /proc/net/tcp{,6} parser: single lines and whole files. The input
 * is not NUL-terminated (a copy of exactly @size bytes), so a read past the line is caught. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/procnet.h"

static int check_entry(void *ctx, const struct procnet_entry *e)
{
	char addr[48];

	(void)ctx;
	if (procnet_format_addr(e, addr, sizeof(addr)) || strlen(addr) >= sizeof(addr))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procnet_entry e, out[4];
	size_t total = 0;
	bool v6;
	char *buf;
	int n;

	if (!size)
		return 0;
	v6 = data[0] & 1;
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	if (!procnet_parse_line(buf, size - 1, v6, &e))
		check_entry(NULL, &e);
	n = procnet_parse(buf, size - 1, v6, check_entry, NULL);
	if (n > (int)size)
		abort();
	n = procnet_listening(buf, size - 1, v6, out, 4, &total);
	if (n > 4 || (n >= 0 && total < (size_t)n))
		abort();
	free(buf);
	return 0;
}
