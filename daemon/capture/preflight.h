/* SPDX-License-Identifier: Apache-2.0 */
/*
 * preflight: what this server needs before any capture, each missing requirement in words.
 */
#ifndef SLIDEOPS_PREFLIGHT_H
#define SLIDEOPS_PREFLIGHT_H

#include <stddef.h>

#define PREFLIGHT_MAX_REASONS 8

struct preflight {
	int nreasons;
	char reasons[PREFLIGHT_MAX_REASONS][320]; /* "needs root, or the capabilities ..." */
	char kernel[sizeof("Linux ") + 65];	  /* "Linux 6.18.44" */
	char processor[160];			  /* "AMD EPYC (x86_64, 2 CPUs)" */
};

/* Fills @out. Returns 0 when ready (no reasons), -EPERM when something is missing. */
int preflight_check(struct preflight *out);

/* "Cannot profile right now: reason; reason" into @buf. Returns @buf. */
const char *preflight_message(const struct preflight *pf, char *buf, size_t size);

#endif
