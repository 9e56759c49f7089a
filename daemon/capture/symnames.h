/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symnames: frames named from uploaded debug symbols (symbols/symstore.h), at capture time and
 * when a stored profile is read again ("back in time", docs/symbols.md). A frame qualifies when
 * it has no name, a GNU build id and an address in its file: the upload of that build names
 * it. Stored profiles keep addresses and build ids, so an upload names every profile of that
 * build, including those taken before it. Thread-safe as the symbol store is.
 */
#ifndef SLIDEOPS_SYMNAMES_H
#define SLIDEOPS_SYMNAMES_H

#include <stdbool.h>
#include <stddef.h>

struct symstore;
struct profile;
struct prof_frame_info;

/* The display names symnames_profile() replaced ("app+0x4a1f20" -> "build_report"). */
struct symnames_map {
	char **from, **to;
	size_t n, cap;
};

/* Names @f from @ss into @buf when an upload of its build names its address. */
bool symnames_frame(struct symstore *ss, const struct prof_frame_info *f, char *buf, size_t size);

/*
 * Names the unnamed frames of *@p: when any was named, *@p is replaced by a named copy (the
 * old one freed) and, when @map is not NULL, the display names replaced are added to it (at
 * most SYMNAMES_MAP_MAX). Returns the number of frames named (>= 0) or -ENOMEM. @ss NULL or
 * holding no upload: 0, and nothing is read.
 */
int symnames_profile(struct symstore *ss, struct profile **p, struct symnames_map *map);
#define SYMNAMES_MAP_MAX 4096

/*
 * A stored summary.json (@text, @len bytes) made to agree with the named profile: function
 * names in the answer, the top functions (merged when two addresses became one function), the
 * groups and threads; the card's binaries whose build now has an upload are left out. Returns
 * 1 with the new text in *@out (malloc'd), 0 when nothing changed, -EINVAL (not JSON), -ENOMEM.
 */
int symnames_summary(struct symstore *ss, const char *text, size_t len,
		     const struct symnames_map *map, char **out, size_t *out_len);

/* Replaces the names of @map in @s (at most @size bytes with the NUL); true if changed. */
bool symnames_text(const struct symnames_map *map, char *s, size_t size);

void symnames_map_free(struct symnames_map *map);

#endif
