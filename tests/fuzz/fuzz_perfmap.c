// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target over the perf map parser (symbols/perfmap.h). The first byte picks the
 * entry cap (small ones reach it) and the piece size the text is fed in; the rest is the map.
 * The same text fed whole and in pieces must name every probed address alike; names are
 * valid UTF-8 and never empty; offsets are below the address. Inputs over PERFMAP_MAX_LINE
 * (make fuzz runs -max_len=1 MiB) reach the line cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "symbols/perfmap.h"

#define MAX_PROBES 512

static size_t probes(const uint8_t *d, size_t n, uint64_t *out)
{
	size_t i, k = 0;
	uint64_t v;
	char *end;

	/* the START of each line, and its neighbours */
	for (i = 0; i < n && k + 3 <= MAX_PROBES; i++) {
		if (i && d[i - 1] != '\n')
			continue;
		v = strtoull((const char *)d + i, &end, 16);
		out[k++] = v;
		out[k++] = v - 1;
		out[k++] = v + 1;
	}
	/* and words of the input */
	for (i = 0; i + 8 <= n && k < MAX_PROBES; i += 8)
		memcpy(&out[k++], d + i, 8);
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t probe[MAX_PROBES];
	struct perfmap_opts o = { 0 };
	struct perfmap_stats sa, sb;
	struct perfmap *a = NULL, *b = NULL;
	const char *na, *nb;
	uint64_t oa, ob;
	size_t i, p, k, step, np;
	char *text;

	if (!size)
		return 0;
	o.max_entries = data[0] & 0x80 ? (size_t)(data[0] & 0x0f) + 1 : 0;
	step = (size_t)((data[0] >> 4) & 0x07) * 37 + 1;
	data++;
	size--;
	/* NUL-terminated for the probes' strtoull */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (perfmap__new(&o, &a) || perfmap__new(&o, &b))
		goto out;
	if (perfmap__feed(a, text, size, true))
		goto out;
	for (p = 0; p < size; p += k) {
		k = size - p < step ? size - p : step;
		if (perfmap__feed(b, text + p, k, false))
			goto out;
	}
	if (perfmap__feed(b, NULL, 0, true))
		goto out;
	perfmap__stats(a, &sa);
	perfmap__stats(b, &sb);
	if (sa.entries != sb.entries || sa.lines != sb.lines || sa.bad != sb.bad ||
	    sa.long_lines != sb.long_lines || sa.dropped != sb.dropped)
		abort();
	if (o.max_entries && sa.entries > o.max_entries)
		abort();
	np = probes((const uint8_t *)text, size, probe);
	for (i = 0; i < np; i++) {
		oa = ob = 0;
		na = perfmap__lookup(a, probe[i], &oa);
		nb = perfmap__lookup(b, probe[i], &ob);
		if (!na != !nb)
			abort();
		if (!na)
			continue;
		if (strcmp(na, nb) || oa != ob || oa > probe[i] || !na[0] ||
		    !text_utf8_is_clean(na, strlen(na)))
			abort();
		if (perfmap__lookup(a, probe[i], NULL) != na)
			abort();
	}
out:
	perfmap__free(a);
	perfmap__free(b);
	free(text);
	return 0;
}
