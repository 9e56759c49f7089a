// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"
#include "profile/merge.h"
#include "profile/profile.h"

/* A sample given as "leaf;caller;root" and its two values. */
struct row {
	const char *stack;
	int64_t v0, v1;
};

static struct profile *make(const struct row *rows, size_t n, size_t nvalues)
{
	struct profile_opts po = { .sample_type = { "alloc_space", "alloc_objects" },
				   .sample_unit = { "bytes", "count" },
				   .nvalues = nvalues };
	struct prof_labels l = { .process = "app", .pid = 7, .lang = PROF_LANG_GO };
	struct profile *p;
	size_t i;

	assert_int_equal(profile__new(&po, &p), 0);
	for (i = 0; i < n; i++) {
		char buf[256], *save = NULL, *tok;
		uint32_t frames[16];
		size_t nf = 0;
		int64_t v[2] = { rows[i].v0, rows[i].v1 };

		snprintf(buf, sizeof(buf), "%s", rows[i].stack);
		for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			struct prof_frame_info fi = { .function = tok,
						      .mapping = "/app",
						      .lang = PROF_LANG_GO };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			frames[nf++] = (uint32_t)id;
		}
		assert_int_equal(profile__add(p, frames, nf, &l, v), 0);
	}
	return p;
}

/* The value of the sample whose stack is @stack ("leaf;...;root"), or -1 when absent. */
static int64_t value_of(const struct profile *p, const char *stack, size_t vi)
{
	size_t i, j;

	for (i = 0; i < profile__nsamples(p); i++) {
		struct prof_sample s;
		char buf[256] = "";
		size_t n = 0;

		assert_int_equal(profile__sample(p, i, &s), 0);
		for (j = 0; j < s.nframes; j++)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", j ? ";" : "",
				      profile__frame_info(p, s.frames[j])->function);
		if (!strcmp(buf, stack))
			return s.values[vi];
	}
	return -1;
}

static void test_delta(void **state)
{
	static const struct row start[] = {
		{ "main.early;main.main", 1000, 10 },
		{ "main.during;main.main", 50, 1 },
		{ "main.gone;main.main", 70, 2 },
	};
	static const struct row end[] = {
		{ "main.early;main.main", 1000, 10 }, /* did not grow: left out */
		{ "main.during;main.main", 650, 7 },  /* grew by 600 */
		{ "main.new;main.main", 30, 1 },      /* new during the capture */
	};
	static const struct {
		const char *stack;
		int64_t v0, v1;
	} want[] = {
		{ "main.during;main.main", 600, 6 },
		{ "main.new;main.main", 30, 1 },
		{ "main.early;main.main", -1, -1 },
		{ "main.gone;main.main", -1, -1 },
	};
	struct profile *s = make(start, ARRAY_SIZE(start), 2), *e = make(end, ARRAY_SIZE(end), 2);
	struct profile *d = NULL;
	size_t i;

	(void)state;
	assert_int_equal(profile_delta(e, s, &d), 0);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		print_message("case %zu: %s\n", i, want[i].stack);
		assert_int_equal(value_of(d, want[i].stack, 0), want[i].v0);
		assert_int_equal(value_of(d, want[i].stack, 1), want[i].v1);
	}
	assert_int_equal(profile__nsamples(d), 2);
	assert_string_equal(profile__opts(d)->sample_type[0], "alloc_space");
	profile__free(d);
	/* No start snapshot: everything in the end one. */
	assert_int_equal(profile_delta(e, NULL, &d), 0);
	assert_int_equal(value_of(d, "main.early;main.main", 0), 1000);
	profile__free(d);
	profile__free(s);
	profile__free(e);
}

static void test_merge(void **state)
{
	static const struct row a[] = { { "main.park;main.main", 3, 0 } };
	static const struct row b[] = { { "main.park;main.main", 2, 0 }, { "main.x", 1, 0 } };
	struct prof_labels l = {
		.owner = "Service billing", .process = "billing", .pid = 9, .lang = PROF_LANG_GO
	};
	struct prof_frame_info why = { .function = "[goroutine: chan receive]",
				       .mapping = "[off-cpu]",
				       .lang = PROF_LANG_KERNEL };
	struct profile_merge_opts o = { .labels = &l, .leaf = &why };
	struct profile *pa = make(a, 1, 2), *pb = make(b, 2, 2), *one = make(a, 1, 1);
	struct profile *dst = make(NULL, 0, 2);
	struct prof_sample s;

	(void)state;
	assert_int_equal(profile_merge(dst, pa, &o), 0);
	assert_int_equal(profile_merge(dst, pb, &o), 0);
	assert_int_equal(value_of(dst, "[goroutine: chan receive];main.park;main.main", 0), 5);
	assert_int_equal(value_of(dst, "[goroutine: chan receive];main.x", 0), 1);
	assert_int_equal(profile__nsamples(dst), 2);
	assert_int_equal(profile__sample(dst, 0, &s), 0);
	assert_string_equal(s.labels->owner, "Service billing");
	assert_int_equal(s.labels->pid, 9);
	/* Error rows: value counts differ; the destination is left as it was. */
	assert_int_equal(profile_merge(dst, one, NULL), -EINVAL);
	assert_int_equal(profile__nsamples(dst), 2);
	/* Subtracting everything with positive_only leaves nothing. */
	{
		struct profile_merge_opts neg = { .sign = -1, .positive_only = true };
		struct profile *empty = make(NULL, 0, 2);

		assert_int_equal(profile_merge(empty, pb, &neg), 0);
		assert_int_equal(profile__nsamples(empty), 0);
		profile__free(empty);
	}
	profile__free(pa);
	profile__free(pb);
	profile__free(one);
	profile__free(dst);
}

/* @ctx is the process name to keep. */
static bool only_process(void *ctx, const struct profile *src, const struct prof_sample *s)
{
	(void)src;
	return s->labels && s->labels->process && !strcmp(s->labels->process, ctx);
}

static bool not_x(const struct profile *src, const struct prof_sample *s)
{
	return strcmp(profile__frame_info(src, s->frames[0])->function, "main.x");
}

/* The filter with a context, alone and with keep (a sample must pass both). */
static void test_filter(void **state)
{
	static const struct row b[] = { { "main.park;main.main", 2, 0 }, { "main.x", 1, 0 } };
	static const struct {
		const char *process; /* what the filter keeps; NULL: no filter */
		bool keep;	     /* and keep not_x */
		size_t nsamples;
		int64_t park, x;
	} cases[] = {
		{ NULL, false, 2, 2, 1 },      { "app", false, 2, 2, 1 },
		{ "other", false, 0, -1, -1 }, { "app", true, 1, 2, -1 },
		{ "other", true, 0, -1, -1 },  { NULL, true, 1, 2, -1 },
	};
	struct profile *pb = make(b, 2, 2);
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct profile_merge_opts o = {
			.keep = cases[i].keep ? not_x : NULL,
			.filter = cases[i].process ? only_process : NULL,
			.filter_ctx = (void *)cases[i].process,
		};
		struct profile *dst = make(NULL, 0, 2);

		print_message("case %zu\n", i);
		assert_int_equal(profile_merge(dst, pb, &o), 0);
		assert_int_equal(profile__nsamples(dst), cases[i].nsamples);
		assert_int_equal(value_of(dst, "main.park;main.main", 0), cases[i].park);
		assert_int_equal(value_of(dst, "main.x", 0), cases[i].x);
		profile__free(dst);
	}
	profile__free(pb);
}

/* Names "app+0x<addr>" of build "b1" from a table; the callback profile_rename() calls. */
static bool name_b1(void *ctx, const struct prof_frame_info *f, char *buf, size_t size)
{
	int *calls = ctx;

	(*calls)++;
	if (!f->build_id || strcmp(f->build_id, "b1"))
		return false;
	if (f->address == 0x10)
		snprintf(buf, size, "hot");
	else if (f->address == 0x20)
		snprintf(buf, size, "hot"); /* two addresses in one function: one frame after */
	else
		return false;
	return true;
}

static void test_rename(void **state)
{
	static const struct {
		uint64_t leaf, caller; /* addresses of two unnamed frames; 0: a named frame */
		const char *build_id;
		int named;	       /* profile_rename()'s result */
		const char *leaf_name; /* after, or NULL */
		bool stripped_after;
	} cases[] = {
		{ 0x10, 0x30, "b1", 1, "hot", false }, { 0x10, 0x20, "b1", 2, "hot", false },
		{ 0x30, 0x40, "b1", 0, NULL, true }, /* no function there */
		{ 0x10, 0x20, "b2", 0, NULL, true }, /* another build: names nothing */
		{ 0x10, 0x20, NULL, 0, NULL, true }, /* no build id */
		{ 0, 0, "b1", 0, "main", false },    /* named frames are never asked */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof_frame_info fi = { .mapping = "/app",
					      .build_id = cases[i].build_id,
					      .unnamed_stripped = true,
					      .lang = PROF_LANG_NATIVE };
		struct profile *p = make(NULL, 0, 1), *out = NULL;
		uint32_t frames[2];
		int64_t v[1] = { 5 };
		int calls = 0, ret;

		print_message("case %zu\n", i);
		fi.function = cases[i].leaf ? NULL : "main";
		fi.unnamed_stripped = cases[i].leaf != 0;
		fi.address = cases[i].leaf;
		frames[0] = (uint32_t)profile__frame(p, &fi);
		fi.address = cases[i].caller;
		frames[1] = (uint32_t)profile__frame(p, &fi);
		assert_int_equal(profile__add(p, frames, 2, NULL, v), 0);
		ret = profile_rename(p, name_b1, &calls, &out);
		assert_int_equal(ret, cases[i].named);
		assert_int_equal(calls, cases[i].leaf ? 2 : 0);
		if (ret > 0) {
			struct prof_sample s;

			assert_non_null(out);
			assert_int_equal(profile__nsamples(out), 1);
			assert_int_equal(profile__sample(out, 0, &s), 0);
			assert_int_equal(s.values[0], 5);
			assert_string_equal(profile__frame_info(out, s.frames[0])->function,
					    cases[i].leaf_name);
			assert_false(profile__frame_info(out, s.frames[0])->unnamed_stripped);
			assert_string_equal(profile__frame_info(out, s.frames[0])->build_id, "b1");
			profile__free(out);
		} else {
			assert_null(out);
		}
		profile__free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_rename),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
