/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_pending: the processes a capture sees for the first time while it collects, waiting to be
 * looked at for CPython (issue 13). The collectors announce a process from their ring buffer's
 * callback, where nothing slow may run: it is only queued there (py_pending__push()), and
 * looked at after the poll (py_pending__run()), where reading its maps and ELF files is fine. A
 * CPython that is still starting (its thread key not created yet) is looked at again after the
 * next runs, a bounded number of times. Bounded; what does not fit, or never finished
 * starting, is counted (py_pending__missed()). Pure bookkeeping, no I/O. Not thread-safe.
 */
#ifndef SLIDEOPS_CAPTURE_PY_PENDING_H
#define SLIDEOPS_CAPTURE_PY_PENDING_H

#include <stddef.h>
#include <stdint.h>

/*
 * Looks at process @tgid. Returns > 0 when it was registered, 0 when there is nothing to do
 * (not a CPython, gone, already known, or noted), -EAGAIN to be asked again at the next run;
 * any other -errno is counted as missed.
 */
typedef int (*py_pending_fn_t)(void *ctx, uint32_t tgid);

struct py_pending;

/* Holds at most @max processes, each asked at most @tries times (>= 1). Returns 0, -EINVAL or
 * -ENOMEM. */
int py_pending__new(size_t max, unsigned int tries, struct py_pending **out);
/* Accepts NULL. */
void py_pending__free(struct py_pending *q);

/* Queues @tgid (cheap: for a ring buffer callback). Returns 0, or -ENOSPC when full (counted as
 * missed) or -ENOMEM (counted too). */
int py_pending__push(struct py_pending *q, uint32_t tgid);

/* Calls @fn for every queued process; keeps those it answers -EAGAIN for, until they were asked
 * @tries times. Returns how many @fn registered (> 0). */
int py_pending__run(struct py_pending *q, py_pending_fn_t fn, void *ctx);

/* The processes queued now, and the ones missed so far (full queue, -errno, gave up). */
size_t py_pending__count(const struct py_pending *q);
size_t py_pending__missed(const struct py_pending *q);

#endif
