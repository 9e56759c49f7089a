// SPDX-License-Identifier: Apache-2.0
/* profile/diff.c: two profiles compared stack by stack, by share. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/array.h"

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

#define MAXW 4

/* A pair of profiles and the rows of their diff. */
struct diff_case {
	struct st b[4], n[4];
	size_t nb, nn;
	struct want w[MAXW];
	size_t nw;
	int64_t base_total, next_total;
};

static bool near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

static void check(const struct diff_case *c)
{
	struct profile *pb = build(c->b, c->nb, NULL), *pn = build(c->n, c->nn, NULL);
	const struct prof_diff_row *rows;
	int64_t bt = -1, nt = -1;
	struct prof_diff *d;
	size_t i;

	assert_int_equal(prof_diff__new(pb, pn, &d), 0);
	assert_int_equal(prof_diff__rows(d, &rows), c->nw);
	prof_diff__totals(d, &bt, &nt);
	assert_int_equal(bt, c->base_total);
	assert_int_equal(nt, c->next_total);
	for (i = 0; i < c->nw; i++) {
		print_message("row %zu: %s\n", i, rows[i].stack);
		assert_string_equal(rows[i].stack, c->w[i].stack);
		assert_int_equal(rows[i].base, c->w[i].base);
		assert_int_equal(rows[i].next, c->w[i].next);
		assert_true(near(rows[i].base_share, c->w[i].base_share));
		assert_true(near(rows[i].next_share, c->w[i].next_share));
	}
	prof_diff__free(d);
	profile__free(pb);
	profile__free(pn);
}

static void test_rows(void **state)
{
	static const struct diff_case cases[] = {
		/* 0: equal profiles: every stack the same share in both, no change */
		{ { { "hot;main", 30 }, { "cold;main", 10 } }, { { "hot;main", 30 }, { "cold;main", 10 } },
		  2, 2, { { "main;cold", 10, 10, 0.25, 0.25 }, { "main;hot", 30, 30, 0.75, 0.75 } }, 2,
		  40, 40 },
		/* 1: a frame only in the new profile, one only in the base; the same stack twice
		 * folds; hot's share grew although the new capture is longer */
		{ { { "hot;main", 10 }, { "cold;main", 30 }, { "gone;main", 40 } },
		  { { "hot;main", 40 }, { "cold;main", 20 }, { "new;main", 10 }, { "new;main", 10 } },
		  3, 4,
		  { { "main;cold", 30, 20, 0.375, 0.25 }, { "main;gone", 40, 0, 0.5, 0 },
		    { "main;hot", 10, 40, 0.125, 0.5 }, { "main;new", 0, 20, 0, 0.25 } }, 4, 80, 80 },
		/* 2: normalised by the totals: a 30 s profile of the same shape as a 10 s one */
		{ { { "hot;main", 10 }, { "cold;main", 30 } }, { { "hot;main", 30 }, { "cold;main", 90 } },
		  2, 2, { { "main;cold", 30, 90, 0.75, 0.75 }, { "main;hot", 10, 30, 0.25, 0.25 } }, 2,
		  40, 120 },
		/* 3: an empty new profile: every share 0 there */
		{ { { "gone;main", 5 } }, { { NULL, 0 } }, 1, 0, { { "main;gone", 5, 0, 1, 0 } }, 1, 5, 0 },
		/* 4: an empty base */
		{ { { NULL, 0 } }, { { "new", 5 } }, 0, 1, { { "new", 0, 5, 0, 1 } }, 1, 0, 5 },
		/* 5: both empty: no rows */
		{ { { NULL, 0 } }, { { NULL, 0 } }, 0, 0, { { NULL } }, 0, 0, 0 },
		/* 6: stacks of 0 are no rows */
		{ { { "a", 0 }, { "b", 2 } }, { { "a", 0 }, { "b", 2 } }, 2, 2, { { "b", 2, 2, 1, 1 } }, 1,
		  2, 2 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		check(&cases[i]);
	}
}

/* Error rows: different questions (sample types), NULLs; a NULL diff has no rows. */
static void test_errors(void **state)
{
	static const struct st s[] = { { "a", 1 } };
	struct profile *cpu = build(s, 1, "samples"), *heap = build(s, 1, "inuse_space");
	struct prof_diff *d = NULL, *ok = NULL;
	const struct prof_diff_row *rows = (const void *)1;
	int64_t bt = -1, nt = -1;
	const struct {
		const struct profile *base, *next;
		struct prof_diff **out;
		int ret;
	} cases[] = {
		{ cpu, heap, &d, -EINVAL },
		{ heap, cpu, &d, -EINVAL },
		{ NULL, heap, &d, -EINVAL },
		{ cpu, NULL, &d, -EINVAL },
		{ cpu, cpu, NULL, -EINVAL },
		{ heap, heap, &ok, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(prof_diff__new(cases[i].base, cases[i].next, cases[i].out),
				 cases[i].ret);
		assert_null(d);
	}
	assert_non_null(ok);
	assert_int_equal(prof_diff_write(NULL, stdout, 0), -EINVAL);
	assert_int_equal(prof_diff_write(ok, NULL, 0), -EINVAL);
	assert_int_equal(prof_diff__rows(NULL, &rows), 0);
	assert_null(rows);
	prof_diff__totals(NULL, &bt, &nt);
	assert_int_equal(bt, 0);
	assert_int_equal(nt, 0);
	prof_diff__totals(ok, NULL, NULL);
	prof_diff__free(NULL);
	prof_diff__free(ok);
	profile__free(cpu);
	profile__free(heap);
}

/* The "stack base new" lines (flamegraph.pl's differential input), raw and normalised to the
 * base's total. */
static void test_write(void **state)
{
	static const struct {
		struct st b[2], n[2];
		size_t nb, nn;
		int normalize, ret;
		const char *text;
	} cases[] = {
		{ { { "hot;main", 10 }, { "cold;main", 30 } }, { { "hot;main", 40 }, { "cold;main", 40 } },
		  2, 2, 0, 2, "main;cold 30 40\nmain;hot 10 40\n" },
		{ { { "hot;main", 10 }, { "cold;main", 30 } }, { { "hot;main", 40 }, { "cold;main", 40 } },
		  2, 2, 1, 2, "main;cold 30 20\nmain;hot 10 20\n" },
		/* a 30 s profile of the same shape as a 10 s one: equal columns once normalised */
		{ { { "hot;main", 10 }, { "cold;main", 30 } }, { { "hot;main", 30 }, { "cold;main", 90 } },
		  2, 2, 1, 2, "main;cold 30 30\nmain;hot 10 10\n" },
		/* an empty base: nothing to scale to */
		{ { { NULL, 0 } }, { { "new", 7 } }, 0, 1, 1, 1, "new 0 7\n" },
		{ { { NULL, 0 } }, { { NULL, 0 } }, 0, 0, 1, 0, "" },
	};
	struct profile *pb, *pn;
	struct prof_diff *d;
	char *text = NULL;
	size_t i, len = 0;
	FILE *f;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		pb = build(cases[i].b, cases[i].nb, NULL);
		pn = build(cases[i].n, cases[i].nn, NULL);
		assert_int_equal(prof_diff__new(pb, pn, &d), 0);
		f = open_memstream(&text, &len);
		assert_int_equal(prof_diff_write(d, f, cases[i].normalize), cases[i].ret);
		fclose(f);
		assert_string_equal(text, cases[i].text);
		free(text);
		prof_diff__free(d);
		profile__free(pb);
		profile__free(pn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
