/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof: encode a profile as pprof (profile.proto, gzipped) and decode one back.
 *
 * Encoding: sample types from the profile options; labels owner, process, thread, language
 * (string) and pid, tid (numeric); one Mapping per (binary, build id); one Location and
 * Function per frame. The decoder accepts any profile.proto message (gzipped or not) and is
 * hardened for untrusted input (Go programs' own profiles, uploads): every length is checked
 * against the buffer, ids against the tables, and sizes are bounded.
 */
#ifndef SLIDEOPS_PPROF_H
#define SLIDEOPS_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct profile;

/* Encodes @p as gzipped pprof into a malloc'd buffer the caller frees. Returns 0 or -ENOMEM. */
int pprof_encode(const struct profile *p, uint8_t **out, size_t *out_len);

/* Writes gzipped pprof to @path atomically (temp file, fsync, rename). Returns 0 or -errno. */
int pprof_write_file(const struct profile *p, const char *path);

/* Largest decompressed profile the decoder accepts. */
#define PPROF_MAX_DECODED (256u << 20)
/* Most entries of each kind (strings, samples, locations, lines, functions, mappings) the
 * decoder accepts: bounds its memory to a small multiple of the input. */
#define PPROF_MAX_ENTRIES (1u << 21)
/*
 * Entries of all kinds together, and bytes of the string table: each entry costs the decoder
 * about 100 bytes whatever its size in the input (two bytes make an empty one), so a hostile
 * answer is held to about 50 MiB besides the decoded message itself. A busy Go server's CPU
 * profile has some 100000 entries and 1 MB of strings.
 */
#define PPROF_MAX_TOTAL_ENTRIES (1u << 19)
#define PPROF_MAX_STRING_BYTES (16u << 20)

/*
 * Decodes a pprof message (gzipped or raw) into a new profile the caller frees.
 * Returns 0, -EINVAL for malformed input (never crashes or over-reads), -EFBIG past
 * PPROF_MAX_DECODED, PPROF_MAX_ENTRIES, PPROF_MAX_TOTAL_ENTRIES or PPROF_MAX_STRING_BYTES,
 * -ENOMEM.
 */
int pprof_decode(const void *buf, size_t len, struct profile **out);

struct pprof_decode_opts {
	/* Largest decompressed size accepted; 0 or more than PPROF_MAX_DECODED: PPROF_MAX_DECODED. */
	size_t max_decoded;
	/* Language of frames the message does not mark (see below), e.g. PROF_LANG_GO for a Go
	 * program's own heap profile; frames of "[kernel.kallsyms]"/"[kernel]"/vmlinux mappings are
	 * PROF_LANG_KERNEL. Default PROF_LANG_NATIVE. */
	enum prof_lang default_lang;
	/* Keep these sample types (by type name, e.g. "inuse_space"), in this order; NULL-ended
	 * when fewer than PROF_MAX_VALUES. All NULL: every type if there are at most
	 * PROF_MAX_VALUES, else the last PROF_MAX_VALUES (Go heap: inuse_objects, inuse_space). */
	const char *sample_types[PROF_MAX_VALUES];
	/* Sets profile_opts.owner_root of the decoded profile (pprof does not carry it). */
	bool owner_root;
};

/*
 * pprof_decode() with options (NULL: defaults). Returns what pprof_decode() returns, and -ENOENT
 * when a requested sample type is not in the message.
 */
int pprof_decode_ext(const void *buf, size_t len, const struct pprof_decode_opts *opts,
		     struct profile **out);

/*
 * What the encoder writes beyond profile.proto, all ignored by other readers (unknown fields):
 * Location field 1000 (varint) is the frame's enum prof_lang (without it the decoder uses the
 * mapping and pprof_decode_opts.default_lang);
 * Location field 1001 (varint) holds flags: bit 0 unnamed_stripped, bit 1 the Function name is
 * the synthesized profile_frame_display() of an unnamed frame (decoded back as no name).
 * Mapping: memory_start 0, memory_limit highest address + 1, file_offset 0, so addresses stay
 * relative to the file; has_functions is set on every mapping (every Location has a Line), so
 * go tool pprof does not try to re-symbolize them locally.
 */
#define PPROF_LOCATION_LANG 1000
#define PPROF_LOCATION_FLAGS 1001
#define PPROF_LOC_STRIPPED 0x1
#define PPROF_LOC_SYNTH_NAME 0x2

#endif
