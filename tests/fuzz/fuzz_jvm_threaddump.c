// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the thread dump parser (runtimes/jvm/jvm_threaddump.c): the input is
 * the text a JVM answered. Each result must keep the contract: 0 with at least one thread, or
 * -ENODATA; counts within the caps (nframes <= nframes_total, nframes <= JVM_TD_MAX_FRAMES,
 * nthreads <= JVM_TD_MAX_THREADS, truncated only at the cap); every string NUL-terminated
 * inside its array and valid UTF-8; find() returning a thread with the nid asked for.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/jvm/jvm_threaddump.h"

static void check_str(const char *s, size_t size)
{
	size_t n = strnlen(s, size);

	if (n >= size || !text_utf8_is_valid(s, n))
		abort();
}

static void check_thread(const struct jvm_threaddump *td, const struct jvm_td_thread *t)
{
	size_t i;

	check_str(t->name, sizeof(t->name));
	check_str(t->state, sizeof(t->state));
	check_str(t->state_detail, sizeof(t->state_detail));
	check_str(t->waiting_for, sizeof(t->waiting_for));
	check_str(t->holds, sizeof(t->holds));
	if (t->nframes > JVM_TD_MAX_FRAMES || t->nframes > t->nframes_total)
		abort();
	if (t->nframes < t->nframes_total && t->nframes != JVM_TD_MAX_FRAMES)
		abort();
	if (t->nframes && !t->frames)
		abort();
	if (!t->java && (t->nframes_total || t->state[0]))
		abort();
	for (i = 0; i < t->nframes; i++) {
		check_str(t->frames[i].method, sizeof(t->frames[i].method));
		check_str(t->frames[i].file, sizeof(t->frames[i].file));
		if (t->frames[i].native && (t->frames[i].file[0] || t->frames[i].line))
			abort();
	}
	if (t->nid) {
		const struct jvm_td_thread *f = jvm_threaddump__find(td, t->nid);

		if (!f || f->nid != t->nid || f > t)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_threaddump *td = NULL;
	size_t i;
	int ret;

	ret = jvm_threaddump_parse((const char *)data, size, &td);
	if (ret == -ENODATA && !td)
		return 0;
	if (ret || !td || !td->nthreads || td->nthreads > JVM_TD_MAX_THREADS)
		abort();
	if (td->truncated && td->nthreads != JVM_TD_MAX_THREADS)
		abort();
	for (i = 0; i < td->nthreads; i++)
		check_thread(td, &td->threads[i]);
	if (jvm_threaddump__find(td, 0))
		abort();
	jvm_threaddump__free(td);
	return 0;
}
