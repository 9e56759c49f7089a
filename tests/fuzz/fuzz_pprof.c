// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: pprof_decode() on arbitrary bytes, then the decoded profile through every
 * writer (pprof encode and decode again, collapsed, flame graph). A decoded profile must encode,
 * and its encoding must decode back to the same number of samples and frames.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile/collapsed.h"
#include "profile/flamegraph.h"
#include "profile/pprof.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A small limit keeps gzip bombs from dominating the run; the limit logic is the same. */
	struct pprof_decode_opts opts = { .max_decoded = 4 << 20, .owner_root = size & 1 };
	struct profile *p = NULL, *q = NULL;
	uint8_t *enc = NULL;
	size_t len = 0;
	FILE *devnull;

	if (pprof_decode_ext(data, size, &opts, &p))
		return 0;
	if (pprof_encode(p, &enc, &len))
		abort();
	if (pprof_decode(enc, len, &q))
		abort();
	if (profile__nsamples(q) != profile__nsamples(p) || profile__nframes(q) != profile__nframes(p))
		abort();
	devnull = fopen("/dev/null", "w");
	if (devnull) {
		if (collapsed_write(p, devnull) < 0)
			abort();
		if (profile__opts(p)->nvalues && flamegraph_write(p, NULL, devnull))
			abort();
		fclose(devnull);
	}
	free(enc);
	profile__free(q);
	profile__free(p);
	return 0;
}
