// SPDX-License-Identifier: Apache-2.0
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "runtimes/probe.h"
#include "symbols/elf_file.h"

static bool is_libfoo(const char *b)
{
	return !strncmp(b, "libfoo", 6);
}

static void test_read_maps(void **state __attribute__((unused)))
{
	static const char maps[] =
		"1000-2000 r--p 00000000 fe:00 1 /usr/lib/libfoo.so.1\n"
		/* the same file again right after: dropped */
		"2000-3000 r-xp 00001000 fe:00 1 /usr/lib/libfoo.so.1\n"
		"3000-4000 rw-p 00000000 00:00 0 \n"				/* anonymous */
		"4000-5000 rw-p 00000000 00:00 0 [heap]\n"
		"5000-6000 r-xp 00000000 fe:00 2 /opt/bar (deleted)\n"
		"garbage\n"
		"6000-7000 r-xp 00000000 fe:00 1 /usr/lib/libfoo.so.1\n";	/* not adjacent */
	static const char *const want[] = { "/usr/lib/libfoo.so.1", "/opt/bar",
					    "/usr/lib/libfoo.so.1" };
	char tmp[] = "/tmp/test_probe.XXXXXX", path[PATH_MAX];
	struct runtime_probe p = { 0 };
	size_t i;
	FILE *f;

	assert_non_null(mkdtemp(tmp));
	snprintf(path, sizeof(path), "%s/7", tmp);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/7/maps", tmp);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(maps, f);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(runtime_probe_read_maps(&p, tmp, 7), 0);
	assert_int_equal(p.npaths, ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		print_message("path %zu\n", i);
		assert_string_equal(p.paths[i], want[i]);
	}
	assert_string_equal(runtime_probe_lib(&p, is_libfoo), "/usr/lib/libfoo.so.1");
	runtime_probe_release(&p);
	assert_int_equal(p.npaths, 0);
	assert_null(runtime_probe_lib(&p, is_libfoo));
	assert_int_equal(runtime_probe_read_maps(&p, tmp, 8), -ESRCH);
	assert_int_equal(p.npaths, 0);

	unlink(path);
	snprintf(path, sizeof(path), "%s/7", tmp);
	rmdir(path);
	rmdir(tmp);
}

struct hits {
	int calls;
	uint64_t first_off, last_end;
	int ret_at;		/* the call that returns 0 (1-based); 0: never */
};

static int on_chunk(void *ctx, const char *buf, size_t len, uint64_t off)
{
	struct hits *h = ctx;

	(void)buf;
	if (!h->calls++)
		h->first_off = off;
	h->last_end = off + len;
	return h->calls == h->ret_at ? 0 : -ENOENT;
}

#define IMG_LEN (3u << 20)

static void test_scan_range(void **state __attribute__((unused)))
{
	static const struct {
		uint64_t off, len, budget;
		int ret_at;
		int ret, calls;
		uint64_t last_end;
	} cases[] = {
		{ 0, 100, RUNTIME_SCAN_MAX, 0, -ENOENT, 1, 100 },
		{ 0, IMG_LEN, RUNTIME_SCAN_MAX, 0, -ENOENT, 4, IMG_LEN },	/* chunks overlap */
		{ 0, IMG_LEN, RUNTIME_SCAN_MAX, 2, 0, 2, (2u << 20) - RUNTIME_SCAN_OVERLAP },
		{ 0, UINT64_MAX, RUNTIME_SCAN_MAX, 0, -ENOENT, 4, IMG_LEN },	/* cut at the end */
		{ 100, IMG_LEN, 1000, 0, -ENOENT, 1, 1100 },		/* cut at the budget */
		{ IMG_LEN - 10, 100, RUNTIME_SCAN_MAX, 0, -ENOENT, 1, IMG_LEN },
		{ IMG_LEN, 100, RUNTIME_SCAN_MAX, 0, -ENOENT, 0, 0 },		/* past the end */
		{ UINT64_MAX, 100, RUNTIME_SCAN_MAX, 0, -ENOENT, 0, 0 },
	};
	struct runtime_scan s;
	struct elf_file *ef;
	struct hits h;
	uint8_t *img;
	size_t i;

	img = calloc(1, IMG_LEN);
	assert_non_null(img);
	memcpy(img, ELFMAG, SELFMAG);
	img[EI_CLASS] = ELFCLASS64;
	img[EI_DATA] = ELFDATA2LSB;
	img[EI_VERSION] = EV_CURRENT;
	assert_int_equal(elf_file__open_memory(img, IMG_LEN, NULL, &ef), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		s = (struct runtime_scan){ .ef = ef, .budget = cases[i].budget };
		memset(&h, 0, sizeof(h));
		h.ret_at = cases[i].ret_at;
		assert_int_equal(runtime_scan_range(&s, cases[i].off, cases[i].len, on_chunk, &h),
				 cases[i].ret);
		assert_int_equal(h.calls, cases[i].calls);
		if (h.calls) {
			assert_true(h.first_off == cases[i].off);
			assert_true(h.last_end == cases[i].last_end);
		}
	}
	elf_file__free(ef);
	free(img);
}

static void test_read_uint(void **state __attribute__((unused)))
{
	static const uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	assert_true(runtime_read_uint(b, 4, false) == 0x04030201);
	assert_true(runtime_read_uint(b, 4, true) == 0x01020304);
	assert_true(runtime_read_uint(b, 8, false) == 0x0807060504030201ull);
	assert_true(runtime_read_uint(b, 0, false) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_maps),
		cmocka_unit_test(test_scan_range),
		cmocka_unit_test(test_read_uint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
