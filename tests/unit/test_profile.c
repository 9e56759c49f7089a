// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/array.h"
#include "profile/profile.h"

static void test_lang(void **state)
{
	static const struct { const char *name; int ret; } cases[] = {
		{ "native", PROF_LANG_NATIVE }, { "kernel", PROF_LANG_KERNEL },
		{ "go", PROF_LANG_GO },		{ "java", PROF_LANG_JAVA },
		{ "python", PROF_LANG_PYTHON }, { "node", PROF_LANG_NODE },
		{ "ruby", PROF_LANG_RUBY },	{ "owner", PROF_LANG_OWNER },
		{ "Python", -EINVAL },		{ "", -EINVAL },
		{ NULL, -EINVAL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(prof_lang_parse(cases[i].name), cases[i].ret);
		if (cases[i].ret >= 0)
			assert_string_equal(prof_lang_name(cases[i].ret), cases[i].name);
	}
	assert_string_equal(prof_lang_name(PROF_LANG_COUNT), "native");
}

static void test_frame_display(void **state)
{
	static const struct {
		struct prof_frame_info f;
		size_t size;
		const char *want;
	} cases[] = {
		{ { .function = "build_report" }, 64, "build_report" },
		{ { .function = "build_report", .mapping = "/usr/bin/app", .address = 0x10 }, 64,
		  "build_report" },
		{ { .mapping = "/usr/local/bin/billing-worker", .address = 0x4a1f20 }, 64,
		  "billing-worker+0x4a1f20" },
		{ { .function = "", .mapping = "/app", .address = 0 }, 64, "app+0x0" },
		{ { .mapping = "[kernel.kallsyms]", .address = 0xff }, 64, "[kernel.kallsyms]+0xff" },
		{ { .mapping = "/weird/", .address = 1 }, 64, "/weird/+0x1" },
		{ { .address = 0x1234 }, 64, "[unknown]" },
		{ { .function = "a_very_long_function_name" }, 7, "a_very" },
		{ { .mapping = "/bin/app", .address = 0xabcdef }, 6, "app+0" },
		{ { .function = "caf\xc3\xa9" }, 5, "caf" },		/* cut between characters */
		{ { .function = "caf\xc3\xa9" }, 6, "caf\xc3\xa9" },
		{ { .function = "hot\xff" }, 64, "hot?" },		/* not UTF-8 */
		{ { .mapping = "/bin/\xd0\xb0\xd0\xb1", .address = 1 }, 4, "\xd0\xb0+" },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_ptr_equal(profile_frame_display(&cases[i].f, buf, cases[i].size), buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void test_new_opts(void **state)
{
	static const struct {
		struct profile_opts o;
		int ret;
		size_t nvalues;
		const char *type0, *unit1, *period_type;
	} cases[] = {
		{ { .nvalues = 0 }, 0, 2, "samples", "nanoseconds", "cpu" },
		{ { .nvalues = 1, .sample_type = { "alloc_space" }, .sample_unit = { "bytes" } }, 0, 1,
		  "alloc_space", NULL, NULL },
		{ { .nvalues = 2, .sample_type = { "contentions", "delay" },
		    .sample_unit = { "count", "nanoseconds" }, .period_type = "contentions" },
		  0, 2, "contentions", "nanoseconds", "contentions" },
		{ { .nvalues = 3 }, -EINVAL, 0, NULL, NULL, NULL },
		{ { .nvalues = 1, .sample_type = { "x" } }, -EINVAL, 0, NULL, NULL, NULL },
		{ { .nvalues = 2, .sample_type = { "x", NULL }, .sample_unit = { "y", "z" } }, -EINVAL,
		  0, NULL, NULL, NULL },
	};
	const struct profile_opts *o;
	struct profile *p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p = NULL;
		assert_int_equal(profile__new(&cases[i].o, &p), cases[i].ret);
		if (cases[i].ret) {
			assert_null(p);
			continue;
		}
		o = profile__opts(p);
		assert_int_equal(o->nvalues, cases[i].nvalues);
		assert_string_equal(o->sample_type[0], cases[i].type0);
		if (cases[i].unit1)
			assert_string_equal(o->sample_unit[1], cases[i].unit1);
		if (cases[i].period_type)
			assert_string_equal(o->period_type, cases[i].period_type);
		else
			assert_null(o->period_type);
		assert_int_equal(profile__nsamples(p), 0);
		assert_int_equal(profile__total(p, 0), 0);
		profile__free(p);
	}
	assert_int_equal(profile__new(NULL, &p), 0);
	assert_int_equal(profile__opts(p)->nvalues, 2);
	profile__free(p);
	profile__free(NULL);
}

static void test_frame_intern(void **state)
{
	static const struct prof_frame_info base = {
		.function = "f", .file = "a.c", .line = 3, .mapping = "/bin/a", .build_id = "ab",
		.address = 0x10, .lang = PROF_LANG_NATIVE,
	};
	struct prof_frame_info v[9];
	char fn[] = "f";
	struct profile *p;
	int ids[9], id;
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		v[i] = base;
	v[1].function = "g";
	v[2].file = NULL;
	v[3].line = 4;
	v[4].mapping = "/bin/b";
	v[5].build_id = NULL;
	v[6].address = 0x11;
	v[7].lang = PROF_LANG_GO;
	v[8].unnamed_stripped = true;

	assert_int_equal(profile__new(NULL, &p), 0);
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		print_message("case %zu\n", i);
		ids[i] = profile__frame(p, &v[i]);
		assert_true(ids[i] >= 0);
		for (j = 0; j < i; j++)
			assert_int_not_equal(ids[i], ids[j]);
	}
	/* Equal content, other storage: the same id, and the string was copied. */
	v[0].function = fn;
	id = profile__frame(p, &v[0]);
	assert_int_equal(id, ids[0]);
	fn[0] = 'z';
	assert_string_equal(profile__frame_info(p, (uint32_t)id)->function, "f");
	assert_null(profile__frame_info(p, (uint32_t)ids[2])->file);
	assert_int_equal(profile__nframes(p), ARRAY_SIZE(v));
	assert_null(profile__frame_info(p, 1000));

	v[0].lang = PROF_LANG_COUNT;
	assert_int_equal(profile__frame(p, &v[0]), -EINVAL);
	assert_int_equal(profile__frame(p, NULL), -EINVAL);
	profile__free(p);
}

static void test_add(void **state)
{
	struct prof_frame_info fi = { .function = "leaf" };
	struct prof_labels la = { .owner = "Service billing", .process = "gunicorn", .pid = 7,
				  .lang = PROF_LANG_PYTHON };
	struct prof_labels lb = la;
	uint32_t deep[PROF_MAX_FRAMES + 10], st[2];
	int64_t v1[2] = { 1, 10 }, v2[2] = { 2, 20 }, vmax[2] = { INT64_MAX, 0 };
	struct prof_sample s;
	struct profile *p;
	int a, b;
	size_t i;

	(void)state;
	assert_int_equal(profile__new(NULL, &p), 0);
	a = profile__frame(p, &fi);
	fi.function = "root";
	b = profile__frame(p, &fi);
	st[0] = (uint32_t)a;
	st[1] = (uint32_t)b;
	lb.pid = 8;

	static const struct { int which; int ret; size_t nsamples; int64_t total0; } rows[] = {
		{ 0, 0, 1, 1 },		/* new sample */
		{ 1, 0, 1, 3 },		/* same stack, same labels: merged */
		{ 2, 0, 2, 4 },		/* other labels */
		{ 3, 0, 3, 5 },		/* NULL labels */
		{ 4, -EINVAL, 3, 5 },	/* frame id out of range */
		{ 5, -EINVAL, 3, 5 },	/* NULL values */
		{ 6, 0, 4, 6 },		/* empty stack */
		{ 7, -EINVAL, 4, 6 },	/* bad label language */
	};
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct prof_labels bad = la;
		uint32_t oob[1] = { 99 };
		int ret = 0;

		print_message("case %zu\n", i);
		bad.lang = PROF_LANG_COUNT;
		switch (rows[i].which) {
		case 0: ret = profile__add(p, st, 2, &la, v1); break;
		case 1: ret = profile__add(p, st, 2, &la, v2); break;
		case 2: ret = profile__add(p, st, 2, &lb, v1); break;
		case 3: ret = profile__add(p, st, 2, NULL, v1); break;
		case 4: ret = profile__add(p, oob, 1, &la, v1); break;
		case 5: ret = profile__add(p, st, 2, &la, NULL); break;
		case 6: ret = profile__add(p, NULL, 0, &la, v1); break;
		case 7: ret = profile__add(p, st, 2, &bad, v1); break;
		}
		assert_int_equal(ret, rows[i].ret);
		assert_int_equal(profile__nsamples(p), rows[i].nsamples);
		assert_int_equal(profile__total(p, 0), rows[i].total0);
	}
	assert_int_equal(profile__sample(p, 0, &s), 0);
	assert_int_equal(s.nframes, 2);
	assert_int_equal(s.frames[0], a);
	assert_int_equal(s.values[0], 3);
	assert_int_equal(s.values[1], 30);
	assert_string_equal(s.labels->owner, "Service billing");
	assert_int_equal(s.labels->pid, 7);
	assert_int_equal(s.labels->lang, PROF_LANG_PYTHON);
	assert_int_equal(profile__sample(p, 2, &s), 0);
	assert_null(s.labels->owner);
	assert_int_equal(profile__sample(p, 4, &s), -ERANGE);

	/* Deep stacks are cut at the root end. */
	for (i = 0; i < ARRAY_SIZE(deep); i++)
		deep[i] = i < PROF_MAX_FRAMES ? (uint32_t)a : (uint32_t)b;
	assert_int_equal(profile__add(p, deep, ARRAY_SIZE(deep), &la, v1), 0);
	assert_int_equal(profile__sample(p, 4, &s), 0);
	assert_int_equal(s.nframes, PROF_MAX_FRAMES);
	for (i = 0; i < s.nframes; i++)
		assert_int_equal(s.frames[i], a);

	/* Sums saturate instead of overflowing. */
	assert_int_equal(profile__add(p, st, 2, &la, vmax), 0);
	assert_int_equal(profile__sample(p, 0, &s), 0);
	assert_true(s.values[0] == INT64_MAX);
	assert_true(profile__total(p, 0) == INT64_MAX);
	profile__free(p);
}

/* Every name entering the model leaves it valid UTF-8, one '?' per bad byte, and the names
 * that differ only in bad bytes share one entry. */
static void test_hostile_names(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "hot\xff\xfe", "hot??" },				/* asm label */
		{ "hot\xfe\xff", "hot??" },				/* the same entry */
		/* comm of eight Cyrillic letters, cut by the kernel at 15 bytes */
		{ "\xd0\xb0\xd0\xb1\xd0\xb2\xd0\xb3\xd0\xb4\xd0\xb5\xd0\xb6\xd0",
		  "\xd0\xb0\xd0\xb1\xd0\xb2\xd0\xb3\xd0\xb4\xd0\xb5\xd0\xb6?" },
		{ "a\nb\tc", "a\nb\tc" },				/* controls: for the writers */
		{ "\xed\xa0\x80", "???" },				/* surrogate */
		{ "\xc0\xaf", "??" },					/* overlong */
		{ "caf\xc3\xa9</script>", "caf\xc3\xa9</script>" },		/* valid: untouched */
	};
	struct prof_labels l = { .lang = PROF_LANG_NATIVE };
	const struct prof_frame_info *got;
	struct prof_frame_info fi = { 0 };
	int64_t v[2] = { 1, 1 };
	struct prof_sample s;
	struct profile *p;
	uint32_t st[1];
	int id;
	size_t i;

	(void)state;
	assert_int_equal(profile__new(NULL, &p), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		fi.function = cases[i].in;
		fi.file = cases[i].in;
		id = profile__frame(p, &fi);
		assert_true(id >= 0);
		got = profile__frame_info(p, (uint32_t)id);
		assert_string_equal(got->function, cases[i].want);
		assert_string_equal(got->file, cases[i].want);
		l.owner = l.process = l.thread = cases[i].in;
		st[0] = (uint32_t)id;
		assert_int_equal(profile__add(p, st, 1, &l, v), 0);
		assert_int_equal(profile__sample(p, profile__nsamples(p) - 1, &s), 0);
		assert_string_equal(s.labels->owner, cases[i].want);
		assert_string_equal(s.labels->process, cases[i].want);
		assert_string_equal(s.labels->thread, cases[i].want);
	}
	assert_int_equal(profile__nframes(p), ARRAY_SIZE(cases) - 1);
	profile__free(p);
}

static void test_strset(void **state)
{
	static const struct { const char *s; size_t len; int idx; } cases[] = {
		{ "", 0, 0 }, { "a", 1, 1 }, { "ab", 2, 2 }, { "a", 1, 1 },
		{ "a\0b", 3, 3 }, { "a\0c", 3, 4 }, { "", 0, 0 },
	};
	struct prof_strset *s;
	char *big;
	size_t i;
	int idx;

	(void)state;
	assert_int_equal(prof_strset__new(&s), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(prof_strset__add(s, cases[i].s, cases[i].len), cases[i].idx);
		assert_int_equal(prof_strset__find(s, cases[i].s, cases[i].len), cases[i].idx);
		assert_int_equal(prof_strset__len(s, (uint32_t)cases[i].idx), cases[i].len);
		assert_memory_equal(prof_strset__str(s, (uint32_t)cases[i].idx), cases[i].s,
				    cases[i].len);
	}
	assert_int_equal(prof_strset__find(s, "zz", 2), -ENOENT);
	assert_int_equal(prof_strset__count(s), 5);
	/* A string bigger than an arena chunk, then small ones again. */
	big = malloc(200000);
	assert_non_null(big);
	memset(big, 'x', 200000);
	idx = prof_strset__add(s, big, 200000);
	assert_int_equal(idx, 5);
	assert_int_equal(prof_strset__add(s, "after", 5), 6);
	assert_string_equal(prof_strset__str(s, 1), "a");
	assert_memory_equal(prof_strset__str(s, 5), big, 200000);
	free(big);
	for (i = 0; i < 20000; i++) {
		char b[32];
		int n = snprintf(b, sizeof(b), "name-%zu", i);

		assert_int_equal(prof_strset__add(s, b, (size_t)n), (int)(7 + i));
	}
	assert_string_equal(prof_strset__str(s, 7 + 12345), "name-12345");
	prof_strset__free(s);
	prof_strset__free(NULL);
}

/* A whole-server profile: ~50k distinct stacks must stay fast (hash tables, not scans). */
static void test_large(void **state)
{
	struct prof_frame_info fi = { .mapping = "/usr/bin/app" };
	struct prof_labels l = { .owner = "Service big", .process = "app" };
	uint32_t stack[24];
	int64_t v[2] = { 1, 1 };
	struct profile *p;
	struct timespec t0, t1;
	size_t i, j;
	int id;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(profile__new(NULL, &p), 0);
	for (i = 0; i < 50000; i++) {
		for (j = 0; j < ARRAY_SIZE(stack); j++) {
			fi.address = j == 0 ? i : (i % 97) * 100 + j;
			id = profile__frame(p, &fi);
			assert_true(id >= 0);
			stack[j] = (uint32_t)id;
		}
		l.pid = (uint32_t)(i % 50);
		assert_int_equal(profile__add(p, stack, ARRAY_SIZE(stack), &l, v), 0);
		assert_int_equal(profile__add(p, stack, ARRAY_SIZE(stack), &l, v), 0);
	}
	assert_int_equal(profile__nsamples(p), 50000);
	assert_int_equal(profile__total(p, 0), 100000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("50k stacks in %.0f ms\n",
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	assert_true(t1.tv_sec - t0.tv_sec < 20);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lang),	     cmocka_unit_test(test_frame_display),
		cmocka_unit_test(test_new_opts),     cmocka_unit_test(test_frame_intern),
		cmocka_unit_test(test_add),	     cmocka_unit_test(test_strset),
		cmocka_unit_test(test_large),	     cmocka_unit_test(test_hostile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
