// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the JFR parser (runtimes/jvm/jfr.h). The input is the whole file. The
 * callback reads every string of every event to its end (so ASan sees a bad pointer), checks
 * that each is valid UTF-8 within JFR_MAX_STRING and that stacks stay within JFR_MAX_FRAMES;
 * the parse must return 0 or one of the documented errors. With -max_len=1048576 (CI) inputs
 * reach the limits on metadata strings, classes, fields, inline and element depth, checkpoint
 * hops, string length, stack depth and the memory budget; JFR_MAX_POOL_ENTRIES and
 * JFR_MAX_BYTES need more than 1 MiB and are covered by tests/unit/test_jfr.c. Seeds:
 * tests/fuzz/corpus/fuzz_jfr (tests/fixtures/jfr/make.sh).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "runtimes/jvm/jfr.h"

static void check(const char *s)
{
	size_t n;

	if (!s)
		return;
	n = strlen(s);
	if (n > JFR_MAX_STRING || !text_utf8_is_valid(s, n))
		abort();
}

static int touch(void *ctx, const struct jfr_event *ev)
{
	size_t *n = ctx, i;

	if (ev->kind >= JFR_KIND_COUNT || ev->nframes > JFR_MAX_FRAMES ||
	    (ev->nframes && !ev->frames))
		abort();
	check(ev->thread_name);
	check(ev->object_class);
	for (i = 0; i < ev->nframes; i++) {
		check(ev->frames[i].class_name);
		check(ev->frames[i].method);
		check(ev->frames[i].type);
	}
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfr_stats st;
	size_t n = 0;
	int err;

	err = jfr_parse(data, size, touch, &n, &st);
	if (err && err != -EBADMSG && err != -E2BIG && err != -ENOMEM && err != -EFBIG)
		abort();
	if (n != st.delivered || st.delivered > st.events)
		abort();
	return 0;
}
