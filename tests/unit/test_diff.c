// SPDX-License-Identifier: Apache-2.0
/* profile/diff.c: two profiles compared stack by stack, by share. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/diff.h"
#include "profile/profile.h"

/* One stack, leaf first ("leaf;caller;main"), and its count. */
struct st {
	const char *frames;
	int64_t count;
};

/* A profile of @n stacks of sample type @type ("samples" when NULL). */
static struct profile *build(const struct st *s, size_t n, const char *type)
{
	struct profile_opts po = { .sample_type = { type },
				   .sample_unit = { "count" },
				   .nvalues = type ? 1 : 0 };
	struct prof_labels l = { .process = "app", .pid = 7, .tid = 7 };
	struct profile *p;
	size_t i;

	assert_int_equal(profile__new(&po, &p), 0);
	for (i = 0; i < n; i++) {
		char buf[256], *save = NULL, *tok;
		uint32_t ids[16];
		size_t nf = 0;
		int64_t v[2] = { s[i].count, 0 };

		snprintf(buf, sizeof(buf), "%s", s[i].frames);
		for (tok = strtok_r(buf, ";", &save); tok && nf < 16;
		     tok = strtok_r(NULL, ";", &save)) {
			struct prof_frame_info fi = { .function = tok, .mapping = "/usr/bin/app" };
			int id = profile__frame(p, &fi);

			assert_true(id >= 0);
			ids[nf++] = (uint32_t)id;
		}
		assert_int_equal(profile__add(p, ids, nf, &l, v), 0);
	}
	return p;
}

struct want {
	const char *stack;
	int64_t base, next;
	double base_share, next_share;
};

static void check(const struct st *b, size_t nb, const struct st *n, size_t nn,
		  const struct want *w, size_t nw)
{
	struct profile *pb = build(b, nb, NULL), *pn = build(n, nn, NULL);
	const struct prof_diff_row *rows;
	struct prof_diff *d;
	size_t i;

	assert_int_equal(prof_diff__new(pb, pn, &d), 0);
	assert_int_equal(prof_diff__rows(d, &rows), nw);
	for (i = 0; i < nw; i++) {
		print_message("row %zu: %s\n", i, rows[i].stack);
		assert_string_equal(rows[i].stack, w[i].stack);
		assert_int_equal(rows[i].base, w[i].base);
		assert_int_equal(rows[i].next, w[i].next);
		assert_true(rows[i].base_share > w[i].base_share - 1e-9 &&
			    rows[i].base_share < w[i].base_share + 1e-9);
		assert_true(rows[i].next_share > w[i].next_share - 1e-9 &&
			    rows[i].next_share < w[i].next_share + 1e-9);
	}
	prof_diff__free(d);
	profile__free(pb);
	profile__free(pn);
}

/* Equal profiles: every stack the same share in both, no change. */
static void test_equal(void **state)
{
	static const struct st p[] = { { "hot;main", 30 }, { "cold;main", 10 } };
	static const struct want w[] = { { "main;cold", 10, 10, 0.25, 0.25 },
					 { "main;hot", 30, 30, 0.75, 0.75 } };

	(void)state;
	check(p, 2, p, 2, w, 2);
}

/* A frame only in one profile; the same stack twice in one folds; normalised by the totals (the
 * new capture is twice as long, hot's share is what grew). */
static void test_changes(void **state)
{
	static const struct st b[] = { { "hot;main", 10 }, { "cold;main", 30 } };
	static const struct st n[] = {
		{ "hot;main", 40 }, { "cold;main", 20 }, { "new;main", 10 }, { "new;main", 10 }
	};
	static const struct want w[] = {
		{ "main;cold", 30, 20, 0.75, 0.25 },
		{ "main;hot", 10, 40, 0.25, 0.5 },
		{ "main;new", 0, 20, 0, 0.25 },
	};
	static const struct st only_base[] = { { "gone;main", 5 } };
	static const struct want w2[] = { { "main;gone", 5, 0, 1, 0 } };

	(void)state;
	check(b, 2, n, 4, w, 3);
	/* an empty new profile: every share 0 there */
	check(only_base, 1, NULL, 0, w2, 1);
}

/* Error rows: different questions (sample types), NULLs. */
static void test_errors(void **state)
{
	static const struct st s[] = { { "a", 1 } };
	struct profile *cpu = build(s, 1, "samples"), *heap = build(s, 1, "inuse_space");
	struct prof_diff *d = NULL;

	(void)state;
	assert_int_equal(prof_diff__new(cpu, heap, &d), -EINVAL);
	assert_null(d);
	assert_int_equal(prof_diff__new(NULL, heap, &d), -EINVAL);
	assert_int_equal(prof_diff__new(cpu, NULL, &d), -EINVAL);
	assert_int_equal(prof_diff__new(cpu, cpu, NULL), -EINVAL);
	assert_int_equal(prof_diff_write(NULL, stdout, 0), -EINVAL);
	prof_diff__free(NULL);
	profile__free(cpu);
	profile__free(heap);
}

/* difffolded.pl's input, raw and normalised to the base's total. */
static void test_write(void **state)
{
	static const struct st b[] = { { "hot;main", 10 }, { "cold;main", 30 } };
	static const struct st n[] = { { "hot;main", 40 }, { "cold;main", 40 } };
	struct profile *pb = build(b, 2, NULL), *pn = build(n, 2, NULL);
	char *text = NULL;
	size_t len = 0;
	struct prof_diff *d;
	FILE *f;

	(void)state;
	assert_int_equal(prof_diff__new(pb, pn, &d), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(prof_diff_write(d, f, 0), 2);
	fclose(f);
	assert_string_equal(text, "main;cold 30 40\nmain;hot 10 40\n");
	free(text);
	f = open_memstream(&text, &len);
	assert_int_equal(prof_diff_write(d, f, 1), 2);
	fclose(f);
	assert_string_equal(text, "main;cold 30 20\nmain;hot 10 20\n");
	free(text);
	prof_diff__free(d);
	profile__free(pb);
	profile__free(pn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
