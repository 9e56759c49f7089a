// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_merge.h"

#include <errno.h>

struct merge {
	struct py_merged *out;
	size_t n, max;
};

static int emit(struct merge *m, bool python, size_t index)
{
	if (m->n >= m->max)
		return -ENOSPC;
	m->out[m->n].python = python;
	m->out[m->n].index = (uint32_t)index;
	m->n++;
	return 0;
}

/* Emits the Python group that starts at *@py: up to and including its entry frame. */
static int emit_group(struct merge *m, const bool *entry, size_t npy, size_t *py)
{
	int err;

	while (*py < npy) {
		err = emit(m, true, *py);
		if (err)
			return err;
		if (entry[(*py)++])
			break;
	}
	return 0;
}

/* True when native frame @i is a helper lying between two eval frames. */
static bool inner_helper(const uint8_t *kinds, size_t n, size_t i)
{
	size_t j;
	bool below = false, above = false;

	for (j = i; j-- > 0 && kinds[j] != PY_NATIVE_OTHER;)
		below |= kinds[j] == PY_NATIVE_EVAL;
	for (j = i + 1; j < n && kinds[j] != PY_NATIVE_OTHER; j++)
		above |= kinds[j] == PY_NATIVE_EVAL;
	return below && above;
}

int py_merge(const uint8_t *kinds, size_t nnative, const bool *entry, size_t npy,
	     struct py_merged *out, size_t max)
{
	struct merge m = { .out = out, .max = max };
	size_t i, py = 0;
	int err = 0;

	for (i = 0; i < nnative && !err; i++) {
		if (kinds[i] == PY_NATIVE_EVAL) {
			if (py < npy)
				err = emit_group(&m, entry, npy, &py);
		} else if (kinds[i] != PY_NATIVE_HELPER || !inner_helper(kinds, nnative, i)) {
			err = emit(&m, false, i);
		}
	}
	while (!err && py < npy)
		err = emit_group(&m, entry, npy, &py);
	return err ? err : (int)m.n;
}
