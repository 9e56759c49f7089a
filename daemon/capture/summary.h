/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary: summary.json of a capture (fields in docs/files.md), built with jansson.
 */
#ifndef SLIDEOPS_SUMMARY_H
#define SLIDEOPS_SUMMARY_H

#include <stddef.h>

struct capture_opts;
struct capture_result;

#define SUMMARY_VERSION 1

/* Returns a malloc'd JSON text (indented) the caller frees, or NULL on ENOMEM. */
char *summary_json(const struct capture_opts *o, const struct capture_result *r);
/* Writes summary.json atomically. Returns 0 or -errno. */
int summary_write_file(const struct capture_opts *o, const struct capture_result *r,
		       const char *path);

#endif
