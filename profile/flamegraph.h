/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph: one self-contained HTML file (no network): an icicle/flame view drawn from the
 * profile's merged stack tree, click to zoom, search that highlights matches and shows their
 * share, a tooltip with count and percent, colour by language (or by name hash).
 *
 * The tree (root "all", then owner and process when the profile's owner_root is set, then
 * frames root first; children sorted by name) is embedded as JSON in
 * <script type="application/json" id="fg-data">: {"version":1, "unit", "total", "langs":[enum
 * prof_lang names], "names":[...], "tree":[name index, value, lang, [children...]]} (leaves have
 * no children element). Boxes under 0.01% of the total are folded into their parent's self
 * time; samples with a value <= 0 are not drawn. "#q=TEXT" in the URL pre-fills the search.
 */
#ifndef SLIDEOPS_FLAMEGRAPH_H
#define SLIDEOPS_FLAMEGRAPH_H

#include <stdio.h>

struct profile;

struct flamegraph_opts {
	const char *title;	  /* e.g. "What is using the CPU: this server, 10 s" */
	const char *answer;	  /* the answer sentence, shown above the graph; may be NULL */
	const char *const *notes; /* NULL-terminated list of notes; may be NULL */
	const char *unit;	  /* "samples", "ns" or "bytes"; NULL: "samples" */
	size_t value_index;	  /* which sample value sizes the boxes; default 0 */
	/* An optional table shown above the graph (the threads of a `threads` capture): column
	 * titles and rows x cols cells, row-major. Everything is escaped. */
	const char *table_title;
	const char *const *table_cols;
	size_t table_ncols;
	const char *const *table_cells;
	size_t table_nrows;
};

/* Writes the page to @f. Returns 0 or -errno. */
int flamegraph_write(const struct profile *p, const struct flamegraph_opts *opts, FILE *f);
/* Writes to @path atomically (temp file, fsync, rename). Returns 0 or -errno. */
int flamegraph_write_file(const struct profile *p, const struct flamegraph_opts *opts,
			  const char *path);

#endif
