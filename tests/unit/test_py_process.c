// SPDX-License-Identifier: Apache-2.0
/*
 * Finding a CPython from outside: the file-name version parser, the glibc pthread layout
 * decoder, and (skipped when the interpreters are not installed) each CPython 3 on this
 * machine started as a child: its version, table and key found through its maps and memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/python.h"
#include "runtimes/python/py_merge.h"
#include "runtimes/python/py_process.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_version_from_name(void **state)
{
	static const struct {
		const char *path;
		int ret;
		unsigned major, minor;
	} cases[] = {
		{ "/root/.pyenv/versions/3.6.15/lib/libpython3.6m.so.1.0", 0, 3, 6 },
		{ "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 0, 3, 11 },
		{ "/usr/bin/python3.11", 0, 3, 11 },
		{ "python3.13", 0, 3, 13 },
		{ "/opt/python3.9/bin/python", -ENOENT }, /* the directory does not count */
		{ "/usr/bin/python3", -ENOENT },
		{ "/usr/lib/libpython2.7.so.1.0", -ENOENT },
		{ "/usr/bin/perl", -ENOENT },
		{ "", -ENOENT },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned ma = 0, mi = 0;

		print_message("case %zu\n", i);
		assert_int_equal(py_version_from_name(cases[i].path, &ma, &mi), cases[i].ret);
		if (!cases[i].ret) {
			assert_int_equal(ma, cases[i].major);
			assert_int_equal(mi, cases[i].minor);
		}
	}
}

static void test_glibc_specific(void **state)
{
	/* glibc 2.36 x86-64 pthread_getspecific (Debian 12) */
	static const uint8_t deb12[] = { 0x83, 0xff, 0x1f, 0x77, 0x3b, 0x89, 0xf8, 0x48, 0x83,
					 0xc0, 0x31, 0x48, 0xc1, 0xe0, 0x04, 0x64, 0x48 };
	static const uint8_t other[] = { 0x83, 0xff, 0x1f, 0x77, 0x3b, 0x89, 0xf8, 0x48, 0x83,
					 0xc0, 0x31, 0x48, 0xc1, 0xe0, 0x03, 0x64, 0x48 };
	static const struct {
		const uint8_t *code;
		size_t len;
		int ret;
		uint32_t off;
	} cases[] = {
		{ deb12, sizeof(deb12), 0, 0x310 },
		{ deb12, 14, -ENOTSUP },	    /* cut before the shift */
		{ other, sizeof(other), -ENOTSUP }, /* shl $3: another layout */
		{ deb12, 0, -ENOTSUP },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint32_t off = 0;

		print_message("case %zu\n", i);
		assert_int_equal(py_glibc_specific_offset(cases[i].code, cases[i].len, &off),
				 cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(off, cases[i].off);
	}
}

/* Starts @python sleeping; returns its pid once its interpreter is up, or -1. */
static pid_t start_python(const char *python)
{
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	int fds[2];
	char c;
	pid_t pid;

	if (access(python, X_OK) || pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(python, python, "-c",
		      "import sys,time; print(1); sys.stdout.flush(); "
		      "time.sleep(30)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	nanosleep(&ts, NULL);
	return pid;
}

static void test_live(void **state)
{
	static const struct {
		const char *python;
		unsigned minor;
		uint32_t layout;
	} cases[] = {
		{ "/usr/bin/python3.11", 11, PY_LAYOUT_INTERP },
		{ "/root/.pyenv/versions/3.6.15/bin/python3.6", 6, PY_LAYOUT_OBJECT },
		{ "/root/.pyenv/versions/3.7.16/bin/python3.7", 7, PY_LAYOUT_OBJECT },
		{ "/root/.pyenv/versions/3.8.18/bin/python3.8", 8, PY_LAYOUT_OBJECT },
		{ "/root/.pyenv/versions/3.9.18/bin/python3.9", 9, PY_LAYOUT_OBJECT },
		{ "/root/.pyenv/versions/3.10.13/bin/python3.10", 10, PY_LAYOUT_OBJECT },
		{ "/root/.pyenv/versions/3.11.7/bin/python3.11", 11, PY_LAYOUT_INTERP },
		{ "/root/.pyenv/versions/3.12.1/bin/python3.12", 12, PY_LAYOUT_INTERP },
		{ "/root/.pyenv/versions/3.13.0/bin/python3.13", 13, PY_LAYOUT_INTERP },
	};
	struct py_process p;
	struct py_proc b;
	size_t i, found = 0;

	(void)state;
	/* this test binary is not a Python */
	assert_int_equal(py_process_find(NULL, (uint32_t)getpid(), &p), -ENOENT);
	assert_int_equal(py_process_find(NULL, 0x3fffffff, &p), -ESRCH);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pid_t pid = start_python(cases[i].python);
		int err;

		print_message("case %zu %s\n", i, cases[i].python);
		if (pid < 0)
			continue;
		err = py_process_find(NULL, (uint32_t)pid, &p);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		assert_int_equal(err, 0);
		found++;
		assert_int_equal(p.major, 3);
		assert_int_equal(p.minor, cases[i].minor);
		assert_int_equal(p.pthread_specific, 0x310);
		assert_true(p.tss_key < 32);
		assert_true(p.code_type && p.eval_start < p.eval_end);
		assert_int_equal(py_process_native_kind(&p, p.eval_start), PY_NATIVE_EVAL);
		assert_int_equal(py_process_native_kind(&p, p.text_start), PY_NATIVE_HELPER);
		assert_int_equal(py_process_native_kind(&p, 8), PY_NATIVE_OTHER);
		assert_int_equal(p.debug_offsets, cases[i].minor >= 13);
		py_process_bpf(&p, &b);
		assert_int_equal(b.layout, cases[i].layout);
		assert_true(b.frame_read_len <= PY_FRAME_READ_MAX);
		assert_int_equal(b.tls_slot, 0x310 + p.tss_key * 16 + 8);
	}
	if (!found)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_from_name),
		cmocka_unit_test(test_glibc_specific),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
