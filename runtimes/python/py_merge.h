/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_merge: one stack from a thread's native frames and its Python frames (both leaf first).
 *
 * Each native frame is tagged: PY_NATIVE_EVAL for the interpreter's eval loop
 * (_PyEval_EvalFrameDefault, PyEval_EvalFrameEx), PY_NATIVE_HELPER for the interpreter's own
 * call glue (in libpython or the python executable), PY_NATIVE_OTHER for the rest. The Python
 * frames come in groups, one per run of the eval loop: a group ends at a frame flagged entry
 * (3.11 is_entry, the frame under a 3.12+ shim, every frame before 3.11).
 *
 * The i-th eval frame from the leaf is replaced by the i-th group (Python frames leaf first);
 * helper frames between two eval frames are dropped (they are how the interpreter called
 * itself); everything else stays where it is: a C extension called from Python stays above
 * (leaf-side of) the Python function that called it, and native code that calls into Python
 * shows both. Groups left over (the native stack was cut short) go at the root end; eval
 * frames left over (the Python stack was truncated) are dropped. Pure; thread-safe.
 */
#ifndef SLIDEOPS_PY_MERGE_H
#define SLIDEOPS_PY_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum py_native_kind {
	PY_NATIVE_OTHER = 0,
	PY_NATIVE_EVAL = 1,
	PY_NATIVE_HELPER = 2,
};

struct py_merged {
	bool python;	/* a Python frame, else a native one */
	uint32_t index; /* into the Python or the native list */
};

/*
 * Merges @nnative native frames tagged @kinds with @npy Python frames whose entry flags are
 * @entry, into @out (room for @max). Returns the number written (leaf first), or -ENOSPC when
 * @max is too small (nnative + npy always suffices).
 */
int py_merge(const uint8_t *kinds, size_t nnative, const bool *entry, size_t npy,
	     struct py_merged *out, size_t max);

#endif
