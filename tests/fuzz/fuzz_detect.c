// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the pure parsers of runtime detection: the Go build info blob (the
 * input is also the address space its pointers point into), the JDK release file, the
 * read-only data scanners of Node.js, Ruby and CPython, and the soname/path/name parsers; then
 * the input as an executable: the Go recognizer, the symbol lookups and the .rodata scans.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/detect.h"
#include "runtimes/go/buildinfo.h"
#include "runtimes/probe.h"
#include "symbols/elf_file.h"

struct mem {
	const uint8_t *data;
	size_t len;
};

/* The input itself is mapped at address 0x1000. */
static int mem_vread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < 0x1000 || addr - 0x1000 > m->len || len > m->len - (addr - 0x1000))
		return -14;
	memcpy(buf, m->data + (addr - 0x1000), len);
	return 0;
}

/* On success a version is short, NUL-terminated and starts with a digit. */
static void check(int ret, const char *ver, size_t size)
{
	if (ret)
		return;
	if (!memchr(ver, '\0', size) || ver[0] < '0' || ver[0] > '9')
		abort();
}

/* The second pass of runtime_detect() over the input as the executable. */
static void exercise_exe(const uint8_t *data, size_t size)
{
	static const enum runtime_kind kinds[] = { RUNTIME_NODE, RUNTIME_RUBY, RUNTIME_PYTHON };
	struct runtime_probe p = { .root = "/nonexistent" };
	struct elf_file *ef;
	char ver[32];
	size_t i;

	if (elf_file__open_memory(data, size, NULL, &ef))
		return;
	p.exe = ef;
	p.exe_scan = (struct runtime_scan){ .ef = ef, .budget = RUNTIME_SCAN_MAX };
	if (runtime_go_ops.detect(&p, ver, sizeof(ver)) && !memchr(ver, '\0', sizeof(ver)))
		abort();
	runtime_probe_syms(&p);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		check(runtime_scan_rodata(&p.exe_scan, kinds[i], ver, sizeof(ver)), ver, sizeof(ver));
	elf_file__free(ef);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum runtime_kind kinds[] = { RUNTIME_NODE, RUNTIME_RUBY, RUNTIME_PYTHON,
						   RUNTIME_GO };
	int (*const names[])(const char *, char *, size_t) = {
		runtime_python_version_from_lib, runtime_python_version_from_exe,
		runtime_jvm_version_from_path,	 runtime_node_version_from_lib,
		runtime_ruby_version_from_lib,
	};
	struct mem m = { data, size };
	char ver[32], small[4], *str;
	uint64_t hex = 0;
	size_t i;

	check(runtime_go_parse_buildinfo(data, size, mem_vread, &m, ver, sizeof(ver)), ver,
	      sizeof(ver));
	check(runtime_go_parse_buildinfo(data, size, mem_vread, &m, small, sizeof(small)), small,
	      sizeof(small));
	check(runtime_go_version_from_string((const char *)data, size, ver, sizeof(ver)), ver,
	      sizeof(ver));
	check(runtime_jvm_version_from_release((const char *)data, size, ver, sizeof(ver)), ver,
	      sizeof(ver));
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		check(runtime_scan_version(kinds[i], data, size, ver, sizeof(ver)), ver, sizeof(ver));
	memcpy(&hex, data, size < sizeof(hex) ? size : sizeof(hex));
	check(runtime_python_version_from_hex(hex, ver, sizeof(ver)), ver, sizeof(ver));

	str = malloc(size + 1);
	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		check(names[i](str, ver, sizeof(ver)), ver, sizeof(ver));
		check(names[i](str, small, sizeof(small)), small, sizeof(small));
	}
	free(str);
	exercise_exe(data, size);
	return 0;
}
