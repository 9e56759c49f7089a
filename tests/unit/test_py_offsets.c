// SPDX-License-Identifier: Apache-2.0
/*
 * The offset tables against the numbers offsetof() gave against each version's own headers
 * (a throw-away program compiled with Py_BUILD_CORE against /root/.pyenv/versions/3.X/include
 * and /usr/include/python3.11), the ELF size check and the _Py_DebugOffsets check.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtimes/python/py_offsets.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define N PY_OFF_NONE

static void test_for_version(void **state)
{
	/* minor, ret, runtime size, tss key, tstate frame, frame code, back, instr, code name,
	 * filename, firstlineno, linetable, ascii size */
	static const struct {
		unsigned major, minor;
		int ret;
		uint32_t rt, key, tframe, fcode, fback, finstr, name, file, first, lt, ascii;
	} cases[] = {
		{ 3, 6, 0, 0, N, 24, 32, 24, 120, 104, 96, 36, 112, 48 },
		{ 3, 7, 0, 1520, 1508, 24, 32, 24, 104, 104, 96, 36, 112, 48 },
		{ 3, 8, 0, 1464, 1396, 24, 32, 24, 104, 112, 104, 40, 120, 48 },
		{ 3, 9, 0, 656, 588, 24, 32, 24, 104, 112, 104, 40, 120, 48 },
		{ 3, 10, 0, 672, 588, 24, 32, 24, 96, 112, 104, 40, 120, 48 },
		{ 3, 11, 0, 166688, 596, 56, 32, 48, 56, 120, 112, 72, 136, 48 },
		{ 3, 12, 0, 459944, 1548, 56, 0, 8, 56, 120, 112, 68, 136, 40 },
		{ 3, 13, 0, 283320, 2164, 72, 0, 8, 56, 120, 112, 68, 136, 40 },
		{ 3, 5, -ENOTSUP },
		{ 3, 14, -ENOTSUP },
		{ 2, 7, -ENOTSUP },
		{ 4, 0, -ENOTSUP },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct py_offsets *o = NULL;

		print_message("case %zu (%u.%u)\n", i, cases[i].major, cases[i].minor);
		assert_int_equal(py_offsets_for_version(cases[i].major, cases[i].minor, &o),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_null(o);
			continue;
		}
		assert_int_equal(o->minor, cases[i].minor);
		assert_int_equal(o->runtime_size, cases[i].rt);
		assert_int_equal(o->runtime_tss_key, cases[i].key);
		assert_int_equal(o->tstate_frame, cases[i].tframe);
		assert_int_equal(o->frame_code, cases[i].fcode);
		assert_int_equal(o->frame_back, cases[i].fback);
		assert_int_equal(o->frame_instr, cases[i].finstr);
		assert_int_equal(o->code_name, cases[i].name);
		assert_int_equal(o->code_filename, cases[i].file);
		assert_int_equal(o->code_firstlineno, cases[i].first);
		assert_int_equal(o->code_linetable, cases[i].lt);
		assert_int_equal(o->ascii_size, cases[i].ascii);
	}
}

static void test_runtime_size(void **state)
{
	/* st_size of _PyRuntime in the binaries on this machine */
	static const struct {
		unsigned minor;
		uint64_t st_size;
		int ret;
	} cases[] = {
		{ 7, 1520, 0 },
		{ 8, 1464, 0 },
		{ 9, 656, 0 },
		{ 10, 672, 0 },
		{ 11, 0x28b20, 0 }, /* Debian 3.11.2 and pyenv 3.11.7 */
		{ 12, 0x704a8, 0 },
		{ 13, 0x452b8, 0 },
		{ 12, 0x28b20, -EPROTO }, /* a 3.11 binary claiming 3.12 */
		{ 13, 0, -EPROTO },
		{ 6, 100, -EINVAL }, /* 3.6 has no _PyRuntime */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct py_offsets *o;

		print_message("case %zu\n", i);
		assert_int_equal(py_offsets_for_version(3, cases[i].minor, &o), 0);
		assert_int_equal(py_offsets_check_runtime_size(o, cases[i].st_size), cases[i].ret);
	}
}

static void put(unsigned char *b, size_t at, uint64_t v)
{
	memcpy(b + at, &v, sizeof(v));
}

/* A _Py_DebugOffsets block as 3.13.0 has it (positions from offsetof() on its header). */
static void debug_block(unsigned char *b, const struct py_offsets *o)
{
	memset(b, 0, PY_DEBUG_OFFSETS_LEN);
	memcpy(b, "xdebugpy", 8);
	put(b, 8, 0x030d00f0);
	put(b, 24, o->runtime_size);
	put(b, 40, o->runtime_interp_head);
	put(b, 72, o->interp_tstate_head);
	put(b, 168, o->tstate_next);
	put(b, 184, o->tstate_frame);
	put(b, 200, o->tstate_native_tid);
	put(b, 232, o->frame_back);
	put(b, 240, o->frame_code);
	put(b, 248, o->frame_instr);
	put(b, 264, o->frame_owner);
	put(b, 280, o->code_filename);
	put(b, 288, o->code_name);
	put(b, 296, o->code_qualname);
	put(b, 304, o->code_linetable);
	put(b, 312, o->code_firstlineno);
	put(b, 344, o->code_adaptive);
	put(b, 360, o->ob_type);
}

static void test_debug_offsets(void **state)
{
	/* patch: byte position, value (0: none); ret */
	static const struct {
		size_t len, at;
		uint64_t val;
		int ret;
	} cases[] = {
		{ PY_DEBUG_OFFSETS_LEN, 0, 0, 0 },
		{ PY_DEBUG_OFFSETS_LEN - 1, 0, 0, -EINVAL },	   /* short */
		{ PY_DEBUG_OFFSETS_LEN, 1, 0x41, -EINVAL },	   /* cookie */
		{ PY_DEBUG_OFFSETS_LEN, 16, 1, -ENOTSUP },	   /* free-threaded */
		{ PY_DEBUG_OFFSETS_LEN, 8, 0x030c01f0, -ENOTSUP }, /* another minor */
		{ PY_DEBUG_OFFSETS_LEN, 184, 80, -EPROTO },	   /* current_frame moved */
		{ PY_DEBUG_OFFSETS_LEN, 344, 208, -EPROTO },	   /* co_code_adaptive */
		{ PY_DEBUG_OFFSETS_LEN, 24, 283328, -EPROTO },	   /* runtime size */
	};
	unsigned char b[PY_DEBUG_OFFSETS_LEN];
	const struct py_offsets *o;
	size_t i;

	(void)state;
	assert_int_equal(py_offsets_for_version(3, 13, &o), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t hex = 0;

		print_message("case %zu\n", i);
		debug_block(b, o);
		if (cases[i].at == 1)
			b[1] = (unsigned char)cases[i].val;
		else if (cases[i].at)
			put(b, cases[i].at, cases[i].val);
		assert_int_equal(py_offsets_check_debug(o, b, cases[i].len, &hex), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(hex, 0x030d00f0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_for_version),
		cmocka_unit_test(test_runtime_size),
		cmocka_unit_test(test_debug_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
