/* SPDX-License-Identifier: Apache-2.0 */
/*
 * question: the seven questions a capture answers (SPEC 3), one table.
 */
#ifndef SLIDEOPS_QUESTION_H
#define SLIDEOPS_QUESTION_H

#include <stdbool.h>

enum question {
	Q_CPU = 0,
	Q_WALL,
	Q_THREADS,
	Q_LOCKS,
	Q_MEMORY_GROWTH,
	Q_MEMORY_HELD,
	Q_MEMORY_ALLOC,
	Q_COUNT,
};

struct question_info {
	const char *id;	  /* "cpu" */
	const char *text; /* "What is using the CPU" */
	bool server;	  /* offered for a whole-server profile */
	bool implemented; /* this build can capture it */
};

/* The row for @q, or NULL. */
const struct question_info *question_info(enum question q);
/* Parses "cpu", "memory-growth", ... Returns the question or -EINVAL. */
int question_parse(const char *id);
/* "cpu, wall, threads, locks, memory-growth, memory-held, memory-alloc" into @buf. */
const char *question_list(char *buf, unsigned long size);

#endif
