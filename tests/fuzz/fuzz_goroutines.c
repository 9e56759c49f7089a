// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target over the Go goroutine dump parser (untrusted text from a process). The
 * input is an exact-size copy, so a read past its end is caught. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/go/goroutines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_goroutines *gs = NULL;
	size_t i, j, frames = 0, total = 0;
	char *text;

	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	if (!go_goroutines_parse(text, size, &gs)) {
		if (gs->n > GO_GOROUTINES_MAX)
			abort();
		for (i = 0; i < gs->n; i++) {
			const struct go_goroutine *g = &gs->g[i];

			if (!g->state || !g->state[0] || strlen(g->state) > size ||
			    g->nframes > GO_GOROUTINE_FRAMES_MAX || (g->nframes && !g->frames))
				abort();
			for (j = 0; j < g->nframes; j++) {
				if (!g->frames[j].func[0] || strlen(g->frames[j].func) > size ||
				    strlen(g->frames[j].file) > size)
					abort();
			}
			if (g->created_by && strlen(g->created_by) > size)
				abort();
			frames += g->nframes;
			total += g->frames_dropped;
		}
		if (frames > size || total != gs->frames_dropped)
			abort();
		go_goroutines_free(gs);
	}
	/* The argument stripper alone, in place on the copy. */
	memcpy(text, data, size);
	if (go_goroutines_strip_args(text, size) > (int)size)
		abort();
	free(text);
	return 0;
}
