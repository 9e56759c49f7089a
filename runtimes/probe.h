/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe: what runtime_detect() knows about one process, handed to one recognizer per runtime
 * (struct runtime_ops, the shape of the OTel profiler's interpreter loaders): the files the
 * process maps, then its executable, already open as a symbols/elf_file. Detection runs the
 * table twice: first with @exe NULL (mapped libraries only), then, if nothing matched, with
 * the executable. Also the bounded chunked scans of an ELF file that recognizers share.
 *
 * A probe belongs to one runtime_detect() call and one thread.
 */
#ifndef SLIDEOPS_RUNTIMES_PROBE_H
#define SLIDEOPS_RUNTIMES_PROBE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/detect.h"

struct elf_file;

/* One ELF file being scanned: at most RUNTIME_SCAN_MAX bytes of it in all. */
struct runtime_scan {
	const struct elf_file *ef;
	uint64_t budget; /* bytes left to scan */
};

/* The exported symbols that name an interpreter built into the executable. */
enum runtime_sym {
	RUNTIME_SYM_PY_VERSION, /* Py_Version (3.11+): PY_VERSION_HEX */
	RUNTIME_SYM_PY,		/* _PyRuntime, Py_Initialize, Py_BytesMain */
	RUNTIME_SYM_NODE,	/* node::Start, node_module_register */
	RUNTIME_SYM_RUBY,	/* ruby_init, ruby_setup, ruby_run_node */
	RUNTIME_SYM_COUNT,
};

struct runtime_probe {
	const char *root; /* "/proc/PID/root", for base/safe_open */
	char **paths;	  /* mapped files in maps order, adjacent repeats dropped */
	size_t npaths;
	const struct elf_file *exe;   /* NULL in the first pass */
	const char *exe_name;	      /* the exe link's target name; may be NULL */
	struct runtime_scan exe_scan; /* the budget of @exe */
	bool syms_done;		      /* found[] and sym[] are filled (runtime_probe_syms) */
	bool found[RUNTIME_SYM_COUNT];
	Elf64_Sym sym[RUNTIME_SYM_COUNT];
};

/*
 * A recognizer. detect() returns true when the process runs this runtime, with its version in
 * @ver (@size bytes; "" when unknown), false otherwise (@ver is then unspecified).
 */
struct runtime_ops {
	enum runtime_kind kind;
	const char *name;
	bool (*detect)(struct runtime_probe *p, char *ver, size_t size);
};

/*
 * Fills @p->paths from @proc_root/@pid/maps (symbols/procmaps): the absolute paths of mapped
 * files, " (deleted)" removed, shorter than PATH_MAX. Returns 0, -ESRCH when the process is
 * gone, -ENOMEM, or the error reading the maps (then @p->paths is empty).
 */
int runtime_probe_read_maps(struct runtime_probe *p, const char *proc_root, int pid);

/* Frees @p->paths. */
void runtime_probe_release(struct runtime_probe *p);

/* The first mapped file whose base name @match accepts, or NULL. Borrowed from @p. */
const char *runtime_probe_lib(const struct runtime_probe *p, bool (*match)(const char *base));

/* Looks the runtime_sym symbols up in @p->exe once (GNU hash, else .dynsym, then .symtab when
 * .dynsym named no runtime) and returns @p with found[] and sym[] filled. */
const struct runtime_probe *runtime_probe_syms(struct runtime_probe *p);

/* Called on each chunk; anything but -ENOENT ends the scan and is returned. */
typedef int (*runtime_scan_fn_t)(void *ctx, const char *buf, size_t len, uint64_t file_off);

/*
 * Calls @fn on [@off, @off + @len) of the file (cut at its end and at the budget) in chunks
 * that overlap by RUNTIME_SCAN_OVERLAP. Returns @fn's last value, -ENOENT when nothing
 * matched, -ENOMEM or the -errno of a read.
 */
int runtime_scan_range(struct runtime_scan *s, uint64_t off, uint64_t len, runtime_scan_fn_t fn,
		       void *ctx);

/* Scans .rodata, or without it the read-only PT_LOAD segments, for @kind's version text
 * (runtime_scan_version). Returns 0 with @ver set, -ENOENT or -errno. */
int runtime_scan_rodata(struct runtime_scan *s, enum runtime_kind kind, char *ver, size_t size);

/* Opens @lib inside @p->root and scans its .rodata (runtime_scan_rodata). */
int runtime_scan_lib(const struct runtime_probe *p, const char *lib, enum runtime_kind kind,
		     char *ver, size_t size);

/* The @n-byte unsigned integer at @b in the given byte order (n <= 8). */
uint64_t runtime_read_uint(const uint8_t *b, unsigned n, bool big);

#endif
