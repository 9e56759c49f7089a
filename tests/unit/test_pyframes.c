// SPDX-License-Identifier: Apache-2.0
/*
 * pyframes: the CPython processes of a capture, without a real CPython (the walk itself is
 * tested by tests/integration/test_python_frames.sh and test_python_cpu.sh): processes that are
 * not Python or are gone, a frame of an unregistered process, and the notes each case gives.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/capture/pyframes.h"
#include "daemon/capture/result.h"
#include "daemon/capture/source.h"
#include "daemon/collectors/sampler.h"
#include "runtimes/python/py_merge.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void free_notes(struct capture_result *r)
{
	size_t i;

	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	r->nnotes = 0;
}

/* Processes that are not CPython (this test, a pid that does not exist) are not registered. */
static void test_add_not_python(void **state)
{
	static const struct {
		uint32_t tgid;
		const char *proc_root;
	} cases[] = {
		{ 0, NULL },			/* getpid(): a native test binary */
		{ 0x7ffffff0, NULL },		/* no such process */
		{ 1, "/nonexistent-proc" },	/* no /proc at all */
	};
	const struct py_proc *procs;
	const uint32_t *tgids;
	struct pyframes *pf;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(pyframes__new(cases[i].proc_root, &pf), 0);
		assert_int_equal(pyframes__add(pf, cases[i].tgid ? cases[i].tgid :
								  (uint32_t)getpid()), 0);
		assert_int_equal(pyframes__bpf(pf, &tgids, &procs), 0);
		pyframes__free(pf);
	}
	assert_int_equal(pyframes__new("/nonexistent-proc", &pf), 0);
	assert_int_equal(pyframes__add_all(pf), -ENOENT);
	pyframes__free(pf);
	pyframes__free(NULL);
}

/* A sample of an unregistered process is not merged; its frames are unnamed and counted. */
static void test_frames_and_notes(void **state)
{
	struct sampler_py_frame pyf[2] = { { .code = 0x1000, .entry = true },
					   { .code = 0x2000, .entry = true } };
	uint64_t ustack[2] = { 0x10, 0x20 };
	struct source_sample s = { .tgid = 4242, .ustack = ustack, .nustack = 2, .pyframes = pyf,
				   .npyframes = 2 };
	struct capture_result r = {};
	struct py_merged m[8];
	struct prof_frame_info fi;
	struct pyframes *pf;

	(void)state;
	assert_int_equal(pyframes__new(NULL, &pf), 0);
	pyframes__notes(pf, &r);
	assert_int_equal(r.nnotes, 0);		/* nothing seen: nothing said */
	assert_int_equal(pyframes__merge(pf, &s, m, ARRAY_SIZE(m)), 0);
	assert_int_equal(pyframes__frame(pf, &s, 0, &fi), -ENOENT);
	assert_string_equal(fi.function, "[unknown]");
	assert_int_equal(fi.lang, PROF_LANG_PYTHON);
	assert_int_equal(pyframes__frame(pf, &s, 1, &fi), -ENOENT);
	pyframes__set_failed(pf, -ENOTSUP);	/* no process registered: no note for it */
	pyframes__notes(pf, &r);
	assert_int_equal(r.nnotes, 1);
	assert_non_null(strstr(r.notes[0], "2 Python frames could not be named"));
	free_notes(&r);
	pyframes__free(pf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_not_python),
		cmocka_unit_test(test_frames_and_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
