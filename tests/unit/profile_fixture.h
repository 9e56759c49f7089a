/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A profile built from tables, for the tests of the profile writers (collapsed, flame graph,
 * pprof). Header-only and static inline: each test still links only its own module (profile/).
 */
#ifndef SLIDEOPS_TESTS_UNIT_PROFILE_FIXTURE_H
#define SLIDEOPS_TESTS_UNIT_PROFILE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "profile/profile.h"

/* One sample: the frame ids @f (leaf first, @n of them), labels row @l, the values @v. */
struct fx_sample {
	uint32_t f[4];
	size_t n;
	size_t l;
	int64_t v[2];
};

/*
 * A new profile (@o as profile__new takes it) with @frames, whose ids are their indexes, and
 * @samples labelled from @labels. The caller frees it (profile__free).
 */
static inline struct profile *fx_profile(const struct profile_opts *o,
					 const struct prof_frame_info *frames, size_t nframes,
					 const struct prof_labels *labels,
					 const struct fx_sample *samples, size_t nsamples)
{
	struct profile *p;
	size_t i;

	assert_int_equal(profile__new(o, &p), 0);
	for (i = 0; i < nframes; i++)
		assert_int_equal(profile__frame(p, &frames[i]), (int)i);
	for (i = 0; i < nsamples; i++)
		assert_int_equal(profile__add(p, samples[i].f, samples[i].n,
					      &labels[samples[i].l], samples[i].v),
				 0);
	return p;
}

/* A memory stream a writer writes to: fx_mem_open() gives the FILE, fx_mem_text() what it wrote. */
struct fx_mem {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *fx_mem_open(struct fx_mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
	return m->f;
}

/* Closes the stream; what was written, NUL-terminated (the caller frees it). */
static inline char *fx_mem_text(struct fx_mem *m)
{
	fclose(m->f);
	return m->buf;
}

#endif /* SLIDEOPS_TESTS_UNIT_PROFILE_FIXTURE_H */
