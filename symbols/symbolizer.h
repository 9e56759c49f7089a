/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symbolizer: names user and kernel addresses of sampled processes.
 *
 * A process is snapshotted (its /proc/PID/maps, and each mapped ELF's symbols read through
 * /proc/PID/map_files or /proc/PID/root, never following a link out of it) when it is first
 * seen, so it is still named after it exits. ELF symbol tables are shared between processes and
 * cached by build id (else device+inode), bounded with LRU eviction. Go binaries, stripped or
 * not, are named from their .gopclntab (function, file:line, inlined frames; see gopclntab.h).
 * A stripped ELF (no .symtab) that is not Go is named from its debug file when the node has it
 * (debugfile.h: by build id inside the process's root, then on the host; by .gnu_debuglink
 * inside the root; accepted only for the same build): its symbols are kept with the ELF's in
 * the same cache entry, and its frames are no longer "stripped". Native code with DWARF (in
 * the file, else in that debug file) gets file:line and inlined frames (dwarf_lines.h): the
 * DWARF is opened at the first pc of the file named, at most max_dwarf files (and
 * max_dwarf_bytes of their sections) held, least recently used closed first, and those no
 * snapshot maps closed by symbolizer__sweep().
 * Kernel addresses are named from /proc/kallsyms. Code in anonymous executable memory (a JIT's)
 * or in a file that is no readable ELF is named from the perf map the process writes itself,
 * /tmp/perf-<nspid>.map in its own root (perfmap.h): loaded at the first such pc, read again
 * (only what was appended) at most once a second at later ones, at most max_perf_maps of them
 * held (least recently used freed first). Not thread-safe.
 */
#ifndef SLIDEOPS_SYMBOLIZER_H
#define SLIDEOPS_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_frame {
	const char *name;     /* function, or NULL if unnamed; borrowed */
	const char *file;     /* source file or NULL; borrowed */
	uint32_t line;	      /* 0 if unknown */
	const char *dso;      /* the mapping's path as the process sees it, "[kernel.kallsyms]",
				 * "[vdso]", "[anon]", SYMBOLIZER_PERF_MAP_DSO (then dso_addr
				 * is the address itself); borrowed, never NULL on success */
	const char *build_id; /* hex GNU build id, or NULL; borrowed */
	uint64_t dso_addr;    /* address relative to the file's load base (addr2line form) */
	bool stripped;	      /* the dso is an ELF file without .symtab (names from .dynsym
				 * only, or none) and no debug file was found for it on the
				 * node; false for anything not read as an ELF file (anon,
				 * [vdso], unreadable or deleted files) */
	bool kernel;
	bool go; /* Go code: name and file:line from the binary's .gopclntab
				 * (even when stripped); the frame's language is Go */
};

struct symbolizer_opts {
	const char *proc_root;	     /* default "/proc" */
	size_t max_dsos;	     /* ELF cache bound; default 512 */
	size_t max_processes;	     /* process snapshot bound; default 8192 */
	size_t max_perf_maps;	     /* perf maps held at once; default 64 */
	uint64_t max_perf_map_bytes; /* their memory, the newest one always kept; default 256 MiB */
	const char *host_root;	     /* debug files on the host under it; default "/", "": none */
	size_t max_dwarf;	     /* DWARF files held open at once; default 16 */
	uint64_t max_dwarf_bytes;    /* their sections, the newest one always kept, and the most
				      * one file may have; default 64 MiB */
};

/* The dso of a frame named from the process's perf map. */
#define SYMBOLIZER_PERF_MAP_DSO "[perf-map]"

struct symbolizer;

int symbolizer__new(const struct symbolizer_opts *opts, struct symbolizer **out);
void symbolizer__free(struct symbolizer *s);

/*
 * Snapshots @tgid's mappings and loads the symbols of its binaries, replacing an earlier
 * snapshot (after exec). Returns 0, -ESRCH if the process is gone.
 */
int symbolizer__add_process(struct symbolizer *s, int tgid);

/*
 * Drops the snapshots of the processes that exited (a profiler that stays loaded calls it
 * after each interval's samples are named), and the ELF tables no process uses past the cache
 * bound. Returns the number of snapshots dropped.
 */
int symbolizer__sweep(struct symbolizer *s);

/*
 * Names @ip of @tgid. Snapshots the process first if it was never added. Returns 0 with @out
 * filled (name may be NULL: then show dso+0xdso_addr); -ESRCH if the process was never seen and
 * is gone; -ENOENT if @ip is in no mapping.
 * Only executable mappings are kept. The strings in @out are borrowed: valid until the next
 * symbolizer__add_process(), symbolizer__user() (which may snapshot and evict, and close a
 * DWARF file), symbolizer__sweep() or __free().
 */
int symbolizer__user(struct symbolizer *s, int tgid, uint64_t ip, struct sym_frame *out);

/*
 * Like symbolizer__user(), with the frames inlined at @ip (Go code, from its inline trees;
 * native code from its DWARF; other code has one frame): writes up to @max frames, innermost
 * first; out[n - 1] is the
 * function holding @ip, the frame symbolizer__user() returns, and each earlier one is inlined
 * into the next, at the file:line the next one shows. When the inlining is deeper than @max,
 * the outermost inlined frames are dropped. Returns n >= 1, or the errors of
 * symbolizer__user() (and -EINVAL for @max 0). Same lifetime of the strings.
 */
int symbolizer__user_inline(struct symbolizer *s, int tgid, uint64_t ip, struct sym_frame *out,
			    size_t max);

/* Names kernel address @ip from /proc/kallsyms (loaded once). Returns 0 or -ENOENT. */
int symbolizer__kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out);

/*
 * Whether kernel names are available (loads @proc_root/kallsyms once, as symbolizer__kernel()
 * does; about 50-100 ms for 120k symbols, so call it while the capture runs to keep it off
 * the path to the result). Returns 0; -EPERM when kptr_restrict hides the addresses (report
 * "kernel symbols not available"); -ENOENT or another -errno if kallsyms cannot be read.
 * symbolizer__kernel() returns -ENOENT in all those cases.
 */
int symbolizer__kernel_status(struct symbolizer *s);

/* Counters for metrics and tests; all monotonic except the two current sizes. */
struct symbolizer_stats {
	size_t processes;   /* snapshots held now */
	size_t dsos;	    /* ELF cache entries now (may exceed max_dsos while all are in use) */
	uint64_t dso_loads; /* ELF files parsed */
	uint64_t dso_hits;  /* mappings served from the cache */
	uint64_t dso_open_failures; /* mapped files that could not be opened */
	/* of those, refused by base/safe_open: not a regular file, replaced since mapped, a
	 * link loop (safe_open_reason() of the error): a hostile or odd container */
	uint64_t dso_refused;
	uint64_t process_evictions;
	uint64_t dso_evictions;
	size_t perf_maps;	     /* perf maps held now */
	uint64_t perf_map_reads;     /* perfmap__load() calls */
	uint64_t perf_map_refused;   /* of those, failed other than "no map" (safe_open refusals) */
	uint64_t perf_map_hits;	     /* frames named from a perf map */
	uint64_t perf_map_evictions; /* freed for the bounds */
	uint64_t debug_files;	     /* stripped ELFs named from a debug file on the node */
	uint64_t debug_refused;	     /* debug file candidates refused: another build, unsafe */
	size_t dwarfs;		     /* DWARF files open now */
	uint64_t dwarf_loads;	     /* DWARF files opened */
	uint64_t dwarf_failures;     /* DWARF files that could not be opened or were refused */
	uint64_t dwarf_evictions;    /* DWARF files closed for the bounds */
};

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

/*
 * The files not read (or read only in part) for names, for the capture's notes: a claim over
 * a size limit (elf_file.h: struct elf_skip), or refused by base/safe_open. One entry per
 * file (device and inode), the first SYMBOLIZER_MAX_REFUSED kept; the count goes on to
 * SYMBOLIZER_MAX_REFUSED_COUNTED distinct files.
 */
#define SYMBOLIZER_MAX_REFUSED 8
#define SYMBOLIZER_MAX_REFUSED_COUNTED 256

struct sym_refused {
	char path[256];	  /* as the process names it; valid UTF-8, cut at a character */
	char reason[192]; /* ".symtab claims 1 GiB, but the file has 20 KiB on disk" */
	bool size;	  /* a size limit (else refused as unsafe to open) */
};

/*
 * The refused files so far: the kept entries in @out (borrowed, valid until the next call
 * that snapshots a process, or __free()), their number returned, and the count of all in
 * @total (may be NULL).
 */
size_t symbolizer__refused(const struct symbolizer *s, const struct sym_refused **out,
			   size_t *total);

/* Starts the record of refused files again (a symbolizer kept between captures, at the start
 * of each): a file met again is recorded again, with what of it was not read. */
void symbolizer__forget_refused(struct symbolizer *s);

/*
 * The note about @n refused files @r of @total (pure): "2 files were not read for names (over
 * the size limits): /app/big.so (.symtab claims 3 GiB, but the file has 20 KiB on disk),
 * /app/b (the file is 3 GiB, over the 2 GiB limit); frames in them show as addresses where
 * no other table names them." into @buf (valid UTF-8, cut at a character boundary and
 * ended "..." when @size is short). Returns the length, 0 (and "") when @total is 0.
 */
size_t symbolizer_refused_note(const struct sym_refused *r, size_t n, size_t total, char *buf,
			       size_t size);

#endif
