// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for owner.c: the input is a /proc/PID/cgroup file (raw bytes, NULs
 * included), then each of its lines goes through cg_parse_line() and its paths through
 * owner_from_cgroup_path(). Checks the invariants every caller relies on: outputs are
 * terminated, placed owners have a valid group, a parsed path fits and is absolute.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroups/owner.h"

static void check_owner(const struct owner *o)
{
	char buf[OWNER_NAME_MAX + 32];

	if (o->group > OWNER_SYSTEM || !memchr(o->name, '\0', sizeof(o->name)) ||
	    !memchr(o->pod_uid, '\0', sizeof(o->pod_uid)) ||
	    !memchr(o->container_id, '\0', sizeof(o->container_id)) ||
	    !memchr(o->runtime, '\0', sizeof(o->runtime)))
		abort();
	if (o->pod_uid[0] && o->group != OWNER_SERVICE)
		abort();
	owner_format(o, buf, sizeof(buf));
	owner_format(o, buf, 5);
}

static void fuzz_line(const char *line)
{
	static const char *const ctrls[] = { NULL, "name=systemd", "cpu", "memory" };
	struct owner o;
	char path[256];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		ret = cg_parse_line(line, ctrls[i], path, sizeof(path));
		if (ret != 0 && ret != -ENOENT && ret != -EINVAL && ret != -ENAMETOOLONG)
			abort();
		if (ret)
			continue;
		if (path[0] != '/' || strlen(path) >= sizeof(path))
			abort();
		ret = owner_from_cgroup_path(path, &o);
		if (ret == 0)
			check_owner(&o);
		else if (ret != -ENOENT && ret != -ENAMETOOLONG)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct owner o;
	char *text, *line, *nl;
	int ret;

	ret = owner_from_proc_cgroup_n((const char *)data, size, &o);
	if (ret == 0)
		check_owner(&o);
	else if (ret != -ENOENT && ret != -EINVAL)
		abort();

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ret = owner_from_proc_cgroup(text, &o);
	if (ret == 0)
		check_owner(&o);
	ret = owner_from_cgroup_path(text, &o);
	if (ret == 0)
		check_owner(&o);
	for (line = text; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		fuzz_line(line);
	}
	free(text);
	return 0;
}
