/* SPDX-License-Identifier: Apache-2.0 */
/*
 * languages: "Which languages can be profiled?" — the one table `check` prints (SPEC 8).
 *
 * A row exists only when an integration test profiles a real application in that language
 * and version, in a container, and asserts that the right function is named; each row names
 * its test. Add a row in the same commit as its test.
 */
#ifndef SLIDEOPS_LANGUAGES_H
#define SLIDEOPS_LANGUAGES_H

#include <stddef.h>

struct language_row {
	const char *language; /* "Native (C)" */
	const char *versions; /* "gcc 12, -O2, without frame pointers" */
	const char *how;      /* what names the functions */
	const char *test;     /* the test that proves it */
};

/* The table and its length. */
const struct language_row *languages_table(size_t *n);

#endif
