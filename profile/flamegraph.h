/* SPDX-License-Identifier: Apache-2.0 */
/*
 * flamegraph: an HTML flame graph page: an icicle/flame view drawn from the profile's merged
 * stack tree, click to zoom, search that highlights matches and shows their share, a tooltip
 * with count and percent, colour by language (or by name hash). By default one self-contained
 * file (no network: inline style and script, a Content-Security-Policy meta); with
 * flamegraph_opts.assets the page links its stylesheet and script instead (see below).
 *
 * The tree (root "all", then owner and process when the profile's owner_root is set, then
 * frames root first; children sorted by name) is embedded as JSON in
 * <script type="application/json" id="fg-data">: {"version":1, "unit", "total", "langs":[enum
 * prof_lang names], "names":[...], "tree":[name index, value, lang, [children...]]} (leaves have
 * no children element). Boxes under 0.01% of the total are folded into their parent's self
 * time; samples with a value <= 0 are not drawn. "#q=TEXT" in the URL pre-fills the search.
 *
 * A differential page (flamegraph_write_diff) has the same shape with "diff":true,
 * "base_total" and "next_total" (value 0 of each profile) and per node
 * [name index, width, lang, [children...], base value, new value] (the children element is
 * always there, [] for a leaf). A box's width is the larger of its two shares (of each
 * profile's own total, in billionths), and never less than its children's together: a frame
 * that vanished from the new profile, or appeared in it, stays visible. Red: its share grew,
 * blue: it shrank, deeper with the difference up to 10 percentage points; grey under 0.1 point.
 * One renderer draws both kinds of page.
 */
#ifndef SLIDEOPS_FLAMEGRAPH_H
#define SLIDEOPS_FLAMEGRAPH_H

#include <stddef.h>
#include <stdio.h>

struct profile;
struct prof_diff;

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
	/*
	 * NULL: a self-contained page. Else the URL path the stylesheet and script are served
	 * under ("/ui": "/ui/flamegraph.css" and "/ui/flamegraph.js", flamegraph_style() and
	 * flamegraph_script()); the page then has no CSP meta and nothing inline that
	 * "default-src 'none'; script-src 'self'; style-src 'self'" blocks (no <style>, no style
	 * attribute, no event handler attribute, no inline code; the JSON data block is not
	 * executed). A trailing '/' is ignored.
	 */
	const char *assets;
};

/* Writes the page of @p to @f. Returns 0 or -errno (-EINVAL: NULL @p or @f, a value_index
 * the profile does not have). */
int flamegraph_write(const struct profile *p, const struct flamegraph_opts *opts, FILE *f);
/* Writes to @path atomically (temp file, fsync, rename). Returns 0 or -errno. */
int flamegraph_write_file(const struct profile *p, const struct flamegraph_opts *opts,
			  const char *path);

/* Writes the differential page of @d (profile/diff.h) to @f; @opts as above, value_index
 * unused. Returns 0 or -errno (-EINVAL for a NULL @d or @f). */
int flamegraph_write_diff(const struct prof_diff *d, const struct flamegraph_opts *opts, FILE *f);
/* Writes to @path atomically (temp file, fsync, rename). Returns 0 or -errno. */
int flamegraph_write_diff_file(const struct prof_diff *d, const struct flamegraph_opts *opts,
			       const char *path);

/*
 * The page's script and stylesheet, as a self-contained page embeds them and as an agent
 * serves them for an assets page (application/javascript, text/css). Static, NUL-terminated;
 * their length in @len (may be NULL). Thread-safe.
 */
const char *flamegraph_script(size_t *len);
const char *flamegraph_style(size_t *len);

#endif
