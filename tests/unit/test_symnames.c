// SPDX-License-Identifier: Apache-2.0
/* daemon/capture/symnames.c: frames named from uploaded debug symbols, and stored summaries made
 * to agree (a real symbol store in a temporary directory). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/array.h"
#include "base/fileio.h"
#include "daemon/capture/symnames.h"
#include "profile/profile.h"
#include "symbols/symindex.h"
#include "symbols/symstore.h"

#define BID "ab12cd34"
#define OTHER "ffee0011"

static char dir[64];

/* A store holding build BID: hot at [0x1000, 0x1100), cold at [0x2000, 0x2010). */
static struct symstore *store(void)
{
	struct symstore_opts o = { .dir = dir };
	struct symstore_entry res;
	struct symindex_build *b;
	struct symstore *s;

	assert_int_equal(symindex_build__new(BID, 0, &b), 0);
	assert_int_equal(symindex_build__add(b, 0x1000, 0x100, "hot", 3, 0), 0);
	assert_int_equal(symindex_build__add(b, 0x2000, 0x10, "cold", 4, 0), 0);
	assert_int_equal(symindex_build__seal(b), 0);
	assert_int_equal(symstore__open(&o, &s), 0);
	assert_int_equal(symstore__put(s, b, "app.debug", "test", 1, &res), 0);
	symindex_build__free(b);
	return s;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_symnames.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree_at(AT_FDCWD, dir, 4);
}

static void test_frame(void **state)
{
	static const struct {
		const char *function, *build_id, *mapping;
		uint64_t address;
		enum prof_lang lang;
		const char *want; /* NULL: not named */
	} cases[] = {
		{ NULL, BID, "/app", 0x1000, PROF_LANG_NATIVE, "hot" },
		{ NULL, BID, "/app", 0x10ff, PROF_LANG_NATIVE, "hot" },
		{ NULL, BID, "/app", 0x1100, PROF_LANG_NATIVE, NULL }, /* a gap */
		{ NULL, BID, "/app", 0x2008, PROF_LANG_GO, "cold" },
		{ NULL, BID, "/app", 0xfff, PROF_LANG_NATIVE, NULL },
		{ NULL, OTHER, "/app", 0x1000, PROF_LANG_NATIVE, NULL }, /* no upload of it */
		{ NULL, NULL, "/app", 0x1000, PROF_LANG_NATIVE, NULL },	 /* no build id */
		{ NULL, "", "/app", 0x1000, PROF_LANG_NATIVE, NULL },
		{ NULL, BID, NULL, 0x1000, PROF_LANG_NATIVE, NULL },	 /* no mapping */
		{ "main", BID, "/app", 0x1000, PROF_LANG_NATIVE, NULL }, /* already named */
		{ NULL, BID, "[kernel.kallsyms]", 0x1000, PROF_LANG_KERNEL, NULL },
		{ NULL, BID, "/app", 0x1000, PROF_LANG_OWNER, NULL },
	};
	struct symstore *s = store();
	char buf[64];
	size_t i;

	(void)state;
	assert_false(symnames_frame(NULL, &(struct prof_frame_info){ .build_id = BID }, buf, 64));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prof_frame_info f = { .function = cases[i].function,
					     .build_id = cases[i].build_id,
					     .mapping = cases[i].mapping,
					     .address = cases[i].address,
					     .lang = cases[i].lang };
		bool named;

		print_message("case %zu\n", i);
		buf[0] = '\0';
		named = symnames_frame(s, &f, buf, sizeof(buf));
		assert_int_equal(named, cases[i].want != NULL);
		if (named)
			assert_string_equal(buf, cases[i].want);
	}
	symstore__free(s);
}

static void test_text(void **state)
{
	static const struct {
		const char *in;
		size_t size;
		const char *out;
		bool changed;
	} cases[] = {
		{ "most of it in app+0x1010.", 64, "most of it in hot.", true },
		{ "app+0x1010, then app+0x2004", 64, "hot, then cold", true },
		{ "app+0x10101 is longer", 64, "app+0x10101 is longer", false },
		{ "myapp+0x1010 is another binary", 64, "myapp+0x1010 is another binary", false },
		{ "lib.app+0x1010", 64, "lib.app+0x1010", false },
		{ "app+0x1010", 64, "hot", true },
		{ "nothing here", 64, "nothing here", false },
		{ "", 64, "", false },
	};
	struct symnames_map m = { 0 };
	char *from[] = { "app+0x1010", "app+0x2004" }, *to[] = { "hot", "cold" };
	char buf[64];
	size_t i;

	(void)state;
	m.from = from;
	m.to = to;
	m.n = 2;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		assert_int_equal(symnames_text(&m, buf, cases[i].size), cases[i].changed);
		assert_string_equal(buf, cases[i].out);
	}
	/* a longer name that would not fit is left alone */
	to[0] = "a_name_far_longer_than_the_buffer_it_would_have_to_fit_in_xxxxxxx";
	snprintf(buf, sizeof(buf), "in app+0x1010");
	assert_false(symnames_text(&m, buf, 20));
	assert_string_equal(buf, "in app+0x1010");
}

/* A profile of two stacks in /app (build @bid): leaf 0x1010 and leaf 0x1020, both in hot. */
static struct profile *two_stacks(const char *bid)
{
	struct profile *p;
	int64_t v[1] = { 3 };
	uint32_t fr[1];
	uint64_t a[] = { 0x1010, 0x1020 };
	size_t i;

	assert_int_equal(profile__new(&(struct profile_opts){ .nvalues = 1,
							      .sample_type = { "samples" },
							      .sample_unit = { "count" } },
				      &p),
			 0);
	for (i = 0; i < 2; i++) {
		struct prof_frame_info f = { .mapping = "/app",
					     .build_id = bid,
					     .address = a[i],
					     .unnamed_stripped = true };

		fr[0] = (uint32_t)profile__frame(p, &f);
		assert_int_equal(profile__add(p, fr, 1, NULL, v), 0);
	}
	return p;
}

static void test_profile(void **state)
{
	struct symstore *s = store();
	struct symnames_map m = { 0 };
	struct profile *p = two_stacks(BID), *q = two_stacks(OTHER), *keep = q;
	struct prof_sample smp;

	(void)state;
	assert_int_equal(symnames_profile(s, &p, &m), 2);
	/* both stacks are in hot now (they keep their addresses: two frames) */
	assert_int_equal(profile__nsamples(p), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(profile__sample(p, i, &smp), 0);
		assert_int_equal(smp.values[0], 3);
		assert_string_equal(profile__frame_info(p, smp.frames[0])->function, "hot");
		assert_false(profile__frame_info(p, smp.frames[0])->unnamed_stripped);
	}
	assert_int_equal(m.n, 2);
	assert_string_equal(m.from[0], "app+0x1010");
	assert_string_equal(m.to[0], "hot");
	/* another build: nothing named, the profile is left as it was */
	assert_int_equal(symnames_profile(s, &q, NULL), 0);
	assert_ptr_equal(q, keep);
	assert_int_equal(symnames_profile(NULL, &q, NULL), 0);
	symnames_map_free(&m);
	profile__free(p);
	profile__free(q);
	symstore__free(s);
}

static void test_summary(void **state)
{
	static const char *in =
		"{\"answer\": \"Over 10 seconds, Unit x used 90%, most of it in app+0x1010.\","
		" \"top_functions\": [{\"name\": \"app+0x1010\", \"samples\": 6, \"share\": 60.0},"
		" {\"name\": \"libc+0x10\", \"samples\": 3, \"share\": 30.0},"
		" {\"name\": \"app+0x1020\", \"samples\": 1, \"share\": 10.0}],"
		" \"groups\": [{\"top_function\": \"app+0x1020\", \"processes\":"
		" [{\"top_function\": \"app+0x1010\"}]}],"
		" \"threads\": [{\"function\": \"app+0x1010\"}],"
		" \"stripped_binaries\": [{\"path\": \"/app\", \"build_id\": \"" BID "\"},"
		" {\"path\": \"/other\", \"build_id\": \"" OTHER "\"}, {\"path\": \"/noid\"}]}";
	struct symstore *s = store();
	char *from[] = { "app+0x1010", "app+0x1020" }, *to[] = { "hot", "hot" };
	struct symnames_map m = { .from = from, .to = to, .n = 2 };
	struct symnames_map none = { 0 };
	char *out = NULL;
	size_t len = 0;
	json_t *d, *top;

	(void)state;
	assert_int_equal(symnames_summary(s, in, strlen(in), &m, &out, &len), 1);
	d = json_loadb(out, len, 0, NULL);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "answer")),
			    "Over 10 seconds, Unit x used 90%, most of it in hot.");
	top = json_object_get(d, "top_functions");
	assert_int_equal(json_array_size(top), 2); /* the two addresses became one function */
	assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "name")),
			    "hot");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(top, 0), "samples")), 7);
	assert_string_equal(json_string_value(
				    json_object_get(json_array_get(json_object_get(d, "groups"), 0),
						    "top_function")),
			    "hot");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(d, "threads"), 0), "function")),
			    "hot");
	/* the card keeps the binaries no upload names */
	assert_int_equal(json_array_size(json_object_get(d, "stripped_binaries")), 2);
	json_decref(d);
	free(out);
	/* no map: only the card changes */
	out = NULL;
	assert_int_equal(symnames_summary(s, in, strlen(in), &none, &out, &len), 1);
	free(out);
	/* nothing to change, and error rows */
	out = NULL;
	assert_int_equal(symnames_summary(s, "{\"answer\": \"x\"}", 15, &m, &out, &len), 0);
	assert_null(out);
	assert_int_equal(symnames_summary(s, "{not json", 9, &m, &out, &len), -EINVAL);
	assert_int_equal(symnames_summary(s, "[1]", 3, &m, &out, &len), 0);
	assert_int_equal(symnames_summary(NULL, in, strlen(in), &m, &out, &len), 0);
	symstore__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frame, setup, teardown),
		cmocka_unit_test(test_text),
		cmocka_unit_test_setup_teardown(test_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
