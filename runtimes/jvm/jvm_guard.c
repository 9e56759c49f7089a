// SPDX-License-Identifier: Apache-2.0
#include "runtimes/jvm/jvm_guard.h"

#include <stddef.h>
#include <stdlib.h>

static const struct jvm_guard_bug bugs[] = {
	{ "JDK-8212155",
	  "a race when an agent enables the JVM's code-generation events while it makes a vtable "
	  "stub crashes the JVM (fixed in Java 17)",
	  17 },
};

/* The major version: "1.8.0_392" is 8, "17.0.1" 17; 0 when unknown. */
static unsigned int major_of(const char *v)
{
	unsigned long m;
	char *end;

	if (!v || *v < '0' || *v > '9')
		return 0;
	m = strtoul(v, &end, 10);
	if (m == 1 && *end == '.' && end[1] >= '0' && end[1] <= '9')
		m = strtoul(end + 1, &end, 10);
	return m > 0 && m < 1000 ? (unsigned int)m : 0;
}

const struct jvm_guard_bug *jvm_guard_agent(const char *version)
{
	unsigned int major = major_of(version);
	size_t i;

	if (!major)
		return &bugs[0];
	for (i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++)
		if (major < bugs[i].below_major)
			return &bugs[i];
	return NULL;
}
