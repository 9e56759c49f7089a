/* SPDX-License-Identifier: Apache-2.0 */
/*
 * page: the files of the page the agent serves (the Performance tab and the Profiles page,
 * docs/page.md), embedded in the binary at build time (page_assets.S), and the headers every
 * page response carries: a Content-Security-Policy that allows nothing but the agent's own
 * origin (no inline script or style, no other host), no sniffing, no referrer, no framing by
 * another origin.
 */
#ifndef SLIDEOPS_PAGE_H
#define SLIDEOPS_PAGE_H

#include <stddef.h>

#define PAGE_CSP                                                                             \
	"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "    \
	"connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; form-action 'self'; " \
	"base-uri 'none'"

struct page_asset {
	const char *path; /* "/", "/ui/app.js" */
	const char *type; /* Content-Type */
	const char *data; /* NUL-terminated */
	size_t len;
};

/* The asset served at @path (without the query), or NULL. */
const struct page_asset *page_find(const char *path);

/* Every asset, for tests: their number, the table in @out. */
size_t page_assets(const struct page_asset **out);

/* Header name/value pairs every page response (and every HTML view) carries, NULL-ended. */
extern const char *const page_headers[];

#endif
