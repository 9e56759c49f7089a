// SPDX-License-Identifier: Apache-2.0
/*
 * naming_bench: what naming a native frame costs in user space (bench/run.sh, naming section;
 * docs/benchmarks.md). Naming happens once per distinct address of a capture, after the
 * samples are taken, never per sample: these are costs per distinct frame.
 *
 *   naming_bench [CXX_NAMES [RUST_NAMES]]
 *     1. DWARF (symbols/dwarf_lines.h through symbolizer__user_inline()): this program's own
 *        text, built -O2 -g, every 64th byte: the first call (opening the DWARF, indexing its
 *        units), then the cost per address the first time it is seen, and once cached;
 *     2. demangling (symbols/demangle.h), per name: each mangled name of the files, one a line
 *        (bench/run.sh gives libstdc++'s exported C++ names, and the Rust legacy names of
 *        tests/workloads/native/ledger.rs built with rustc, std's included).
 *
 * Prints markdown.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/symbolizer.h"

#define STEP 64
#define CACHED_PCS 512
#define CACHED_ROUNDS 100
#define MAX_NAMES 100000

extern char __executable_start[], etext[];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int dwarf_row(void)
{
	uintptr_t lo = (uintptr_t)__executable_start + 0x1000, hi = (uintptr_t)etext, pc;
	size_t n = 0, lines = 0, inlined = 0, r;
	struct sym_frame f[16];
	struct symbolizer *s;
	double t0, t1, t2, t3, t4;
	int k;

	if (symbolizer__new(NULL, &s) || symbolizer__add_process(s, getpid()))
		return -1;
	t0 = now();
	symbolizer__user_inline(s, getpid(), lo + 16, f, 16);
	t1 = now();
	for (pc = lo; pc < hi; pc += STEP, n++) {
		k = symbolizer__user_inline(s, getpid(), pc, f, 16);
		lines += k > 0 && f[0].line;
		inlined += k > 1;
	}
	t2 = now();
	for (pc = lo; pc < hi && pc < lo + CACHED_PCS * STEP; pc += STEP)
		symbolizer__user_inline(s, getpid(), pc, f, 16);
	t3 = now();
	for (r = 0; r < CACHED_ROUNDS; r++)
		for (pc = lo; pc < hi && pc < lo + CACHED_PCS * STEP; pc += STEP)
			symbolizer__user_inline(s, getpid(), pc, f, 16);
	t4 = now();
	printf("| DWARF file:line and inlined frames | %zu KiB of text, %zu addresses (%zu with a "
	       "line, %zu with inlined frames) | %.2f ms | %.2f µs | %.3f µs |\n",
	       (size_t)(hi - lo) / 1024, n, lines, inlined, (t1 - t0) * 1e3,
	       n ? (t2 - t1) * 1e6 / (double)n : 0,
	       (t4 - t3) * 1e6 / (CACHED_ROUNDS * (double)CACHED_PCS));
	symbolizer__free(s);
	return 0;
}

/* Reads the mangled names of @path (at most MAX_NAMES); returns their count. */
static size_t read_names(const char *path, char ***out)
{
	char line[2048], **v = calloc(MAX_NAMES, sizeof(*v));
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (!f || !v) {
		if (f)
			fclose(f);
		*out = v;
		return 0;
	}
	while (n < MAX_NAMES && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (demangle_wanted(line))
			v[n++] = strdup(line);
	}
	fclose(f);
	*out = v;
	return n;
}

/* One row: demangle() of @n names, per name. */
static void demangle_row(const char *what, char **v, size_t n)
{
	size_t i, ok = 0;
	double t0 = now(), t1;
	char *d;

	for (i = 0; i < n; i++) {
		d = v[i] ? demangle(v[i]) : NULL;
		ok += d != NULL;
		free(d);
	}
	t1 = now();
	printf("| %s | %zu names (%zu demangled) | - | %.2f µs | - |\n", what, n, ok,
	       n ? (t1 - t0) * 1e6 / (double)n : 0);
}

int main(int argc, char **argv)
{
	static const char *const what[] = {
		"C++ names (`__cxa_demangle`)",
		"Rust legacy names (`__cxa_demangle`, hash and escapes)"
	};
	size_t n, i;
	char **v;
	int k;

	printf("| naming | input | first call | per distinct frame | cached |\n");
	printf("|---|---|---:|---:|---:|\n");
	if (dwarf_row())
		fprintf(stderr, "naming_bench: cannot name this process's frames\n");
	for (k = 1; k < argc && k <= 2; k++) {
		n = read_names(argv[k], &v);
		if (n)
			demangle_row(what[k - 1], v, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
	}
	return 0;
}
