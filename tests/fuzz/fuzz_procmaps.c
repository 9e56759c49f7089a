// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target over the /proc/PID/maps line parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps_entry e;
	char *line;

	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (!procmaps_parse_line(line, &e)) {
		if (e.start >= e.end || !e.path || strlen(e.path) > size)
			abort();
	}
	free(line);
	return 0;
}
