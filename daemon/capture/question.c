// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/question.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct question_info questions[Q_COUNT] = {
	[Q_CPU] = { "cpu", "What is using the CPU", true, true },
	[Q_WALL] = { "wall", "Where time goes, including waiting", true, true },
	[Q_THREADS] = { "threads", "What every thread is doing right now", true, true },
	[Q_LOCKS] = { "locks", "What is waiting on locks", true, true },
	[Q_MEMORY_GROWTH] = { "memory-growth", "Where memory grows", true, true },
	[Q_MEMORY_HELD] = { "memory-held", "What is holding memory", false, true },
	[Q_MEMORY_ALLOC] = { "memory-alloc", "Where memory is allocated", false, true },
};

const struct question_info *question_info(enum question q)
{
	if ((unsigned)q >= Q_COUNT)
		return NULL;
	return &questions[q];
}

int question_parse(const char *id)
{
	int i;

	if (!id)
		return -EINVAL;
	for (i = 0; i < Q_COUNT; i++)
		if (!strcmp(id, questions[i].id))
			return i;
	return -EINVAL;
}

const char *question_list(char *buf, unsigned long size)
{
	size_t n = 0;
	int i;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < Q_COUNT && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? ", " : "", questions[i].id);
	return buf;
}
