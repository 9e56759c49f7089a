// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/array.h"
#include "profile/collapsed.h"
#include "profile/profile.h"
#include "tests/unit/profile_fixture.h"

/*
 * Frames: 0 main, 1 build_report (line 1), 2 build_report (line 2: displays the same),
 * 3 unnamed in /usr/local/bin/app at 0x4a1f20, 4 "odd;name\nx", 5 a kernel frame.
 */
static struct profile *small_profile(bool owner_root)
{
	static const struct prof_frame_info frames[] = {
		{ .function = "main" },
		{ .function = "build_report", .line = 1 },
		{ .function = "build_report", .line = 2 },
		{ .mapping = "/usr/local/bin/app", .address = 0x4a1f20 },
		{ .function = "odd;name\nx\r" },
		{ .function = "tcp_sendmsg", .lang = PROF_LANG_KERNEL },
	};
	static const struct prof_labels labels[] = {
		{ "Service billing", "gunicorn", "t", 10, 10, PROF_LANG_PYTHON },
		{ "Service billing", "gunicorn", "t", 11, 11, PROF_LANG_PYTHON },
		{ "Unit nginx.service", "nginx", NULL, 20, 20, PROF_LANG_NATIVE },
		{ NULL, NULL, NULL, 0, 0, PROF_LANG_NATIVE },
	};
	static const struct fx_sample samples[] = {
		{ { 1, 0 }, 2, 0, { 5 } },	/* main;build_report */
		{ { 2, 0 }, 2, 1, { 3 } },	/* the same line after display and owner merge */
		{ { 3, 0 }, 2, 2, { 2 } },
		{ { 4 }, 1, 3, { 1 } },
		{ { 0 }, 0, 2, { 4 } },		/* no frames */
		{ { 5, 0 }, 2, 2, { 0 } },	/* zero count: no line */
	};
	struct profile_opts o = { .nvalues = 1, .sample_type = { "samples" },
				  .sample_unit = { "count" }, .owner_root = owner_root };

	return fx_profile(&o, frames, ARRAY_SIZE(frames), labels, samples, ARRAY_SIZE(samples));
}

static char *write_mem(const struct profile *p, int *ret)
{
	struct fx_mem m;

	*ret = collapsed_write(p, fx_mem_open(&m));
	return fx_mem_text(&m);
}

static void test_text(void **state)
{
	static const struct { bool owner_root; int lines; const char *want; } cases[] = {
		{ true, 4,
		  "Other processes;[unknown];odd:name_x_ 1\n"
		  "Service billing;gunicorn;main;build_report 8\n"
		  "Unit nginx.service;nginx 4\n"
		  "Unit nginx.service;nginx;main;app+0x4a1f20 2\n" },
		{ false, 4,
		  "[unknown] 4\n"
		  "main;app+0x4a1f20 2\n"
		  "main;build_report 8\n"
		  "odd:name_x_ 1\n" },
	};
	struct profile *p;
	long long sum, c;
	char *out, *line, *save, *sp;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p = small_profile(cases[i].owner_root);
		out = write_mem(p, &ret);
		assert_int_equal(ret, cases[i].lines);
		assert_string_equal(out, cases[i].want);
		/* Every line parses back as "stack count" and the counts sum to the total. */
		sum = 0;
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			sp = strrchr(line, ' ');
			assert_non_null(sp);
			c = strtoll(sp + 1, NULL, 10);
			sum += c;
		}
		assert_true(sum == profile__total(p, 0));
		free(out);
		profile__free(p);
	}
}

/* Hostile names: every line still parses back as "stack count" and is valid UTF-8. */
static void test_hostile_names(void **state)
{
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "tick 42", "tick_42 1\n" },			/* would read as a second count */
		{ "a 1 2", "a 1_2 1\n" },
		{ "tick42", "tick42 1\n" },
		{ "42", "42 1\n" },
		{ " 7", "_7 1\n" },
		{ "hot\xff\xfe", "hot?? 1\n" },			/* not UTF-8: replaced on entry */
		{ "x;y\nz 3", "x:y_z_3 1\n" },
	};
	struct profile_opts o = { .nvalues = 1, .sample_type = { "samples" },
				  .sample_unit = { "count" } };
	struct prof_frame_info fi = { 0 };
	struct profile *p;
	int64_t v = 1;
	uint32_t id;
	char *out;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(profile__new(&o, &p), 0);
		fi.function = cases[i].name;
		ret = profile__frame(p, &fi);
		assert_true(ret >= 0);
		id = (uint32_t)ret;
		assert_int_equal(profile__add(p, &id, 1, NULL, &v), 0);
		out = write_mem(p, &ret);
		assert_int_equal(ret, 1);
		assert_string_equal(out, cases[i].want);
		free(out);
		profile__free(p);
	}
}

static void test_errors(void **state)
{
	char dir[] = "/tmp/test_collapsed.XXXXXX", path[256], buf[512];
	struct profile *p = small_profile(true);
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	static const struct { const char *sub; int ret; } cases[] = {
		{ "profile.collapsed", 0 },
		{ "missing/profile.collapsed", -ENOENT },
	};
	for (n = 0; n < ARRAY_SIZE(cases); n++) {
		print_message("case %zu\n", n);
		snprintf(path, sizeof(path), "%s/%s", dir, cases[n].sub);
		assert_int_equal(collapsed_write_file(p, path), cases[n].ret);
	}
	snprintf(path, sizeof(path), "%s/profile.collapsed", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "Service billing;gunicorn;main;build_report 8\n"));
	unlink(path);
	rmdir(dir);
	assert_int_equal(collapsed_write(NULL, stdout), -EINVAL);
	assert_int_equal(collapsed_write_file(p, NULL), -EINVAL);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
