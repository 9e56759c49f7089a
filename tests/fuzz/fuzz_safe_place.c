// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over safe_place_mount_flags(), the /proc/PID/mountinfo parser of
 * base/safe_place.c. The first byte picks the directory asked about, the rest is the text, in a
 * copy of exactly its size (no NUL after it), so a read past the text is caught. Checked: only
 * the documented returns; whether the text is malformed does not depend on the directory; the
 * mount that holds a directory holds a path below it that no mount point names, with the same
 * flags.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_place.h"

static const char *const dirs[] = { "/", "/tmp", "/var/tmp", "/dev/shm", "/my tmp", "/a\\b", "/t" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool noexec, ro, noexec2, ro2;
	const char *dir;
	char below[64];
	char *text;
	int ret, all, sub;

	if (!size)
		return 0;
	dir = dirs[data[0] % (sizeof(dirs) / sizeof(dirs[0]))];
	text = malloc(size - 1 ? size - 1 : 1);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	ret = safe_place_mount_flags(text, size - 1, dir, &noexec, &ro);
	if (ret != 0 && ret != -ENOENT && ret != -EINVAL)
		abort();
	/* every line is checked whatever the directory: malformed or not, the same answer */
	all = safe_place_mount_flags(text, size - 1, "/", &noexec2, &ro2);
	if ((ret == -EINVAL) != (all == -EINVAL))
		abort();
	/* a path below @dir that no mount point names ("\001" is the only way to name it) */
	if (!ret && !memmem(text, size - 1, "\x01", 1) && !memmem(text, size - 1, "\\001", 4)) {
		strcpy(below, strcmp(dir, "/") ? dir : "");
		strcat(below, "/\x01z");
		sub = safe_place_mount_flags(text, size - 1, below, &noexec2, &ro2);
		if (sub || noexec2 != noexec || ro2 != ro)
			abort();
	}
	free(text);
	return 0;
}
