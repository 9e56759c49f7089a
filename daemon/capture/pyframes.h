/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyframes: the CPython processes of a capture and the naming of their frames (issue 13).
 *
 * Before the collectors attach, each process of the target that runtime detection calls
 * CPython is looked at from outside (runtimes/python/py_process.h); the ones that can be walked
 * are registered with the collector (pyframes__bpf()), the others become a note and keep native
 * frames. Processes first seen while collecting are added the same way (pyframes__add(), from
 * daemon/capture/source.c after each poll). At the drain, a sample's Python frames replace its interpreter's eval-loop frames
 * (runtimes/python/py_merge.h) and are named qualname, file and line from the code objects
 * (runtimes/python/py_code.h). Not thread-safe: one capture, one thread.
 */
#ifndef SLIDEOPS_CAPTURE_PYFRAMES_H
#define SLIDEOPS_CAPTURE_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* The most CPython processes walked in one capture; past it, a note. */
#define PYFRAMES_MAX_PROCS 256
/* CPython processes that could not be walked, named one by one in the notes. */
#define PYFRAMES_MAX_NOTED 4

struct py_proc;
struct py_merged;
struct source_sample;
struct capture_result;

struct pyframes;

/* Returns 0 with @out (free with pyframes__free), or -ENOMEM. @proc_root NULL: /proc. */
int pyframes__new(const char *proc_root, struct pyframes **out);
/* Accepts NULL. */
void pyframes__free(struct pyframes *pf);

/*
 * Looks at process @tgid: a CPython the walk supports is registered (returns 1); a CPython it
 * cannot walk is remembered for the notes, as are processes past PYFRAMES_MAX_PROCS (0); any
 * other process, or one gone, returns 0; -EAGAIN for a CPython still starting (its thread key
 * is not created yet: ask again later), not noted.
 */
int pyframes__add(struct pyframes *pf, uint32_t tgid);

/* Every CPython process of the target in /proc (the whole server). Returns the number
 * registered, or -errno when /proc cannot be listed. */
int pyframes__add_all(struct pyframes *pf);

/* Forgets the CPythons that exited (a walk kept loaded across intervals: their slots serve new
 * ones). Returns how many. */
int pyframes__sweep(struct pyframes *pf);

/* The registered processes, as the sampler takes them (sampler_opts py_tgids / py_procs);
 * borrowed until pyframes__free. Returns the count. */
size_t pyframes__bpf(const struct pyframes *pf, const uint32_t **tgids,
		     const struct py_proc **procs);

/* The walk's record of registered process @tgid (borrowed), or NULL. */
const struct py_proc *pyframes__bpf_of(const struct pyframes *pf, uint32_t tgid);

/* @n processes first seen during the capture were not looked at, or a CPython among them not
 * registered (source.h SOURCE_PY_PENDING): said in the notes. */
void pyframes__missed(struct pyframes *pf, size_t n);

/* The sampler could not walk Python at all (-errno of sampler__new): said in the notes. */
void pyframes__set_failed(struct pyframes *pf, int err);

/*
 * The stack of sample @s (a registered process, with Python frames) as native and Python
 * frames, leaf first, into @out (room for @max). Returns the count; 0 when the sample has no
 * Python frames to merge (the caller keeps the native stack); -ENOSPC.
 */
int pyframes__merge(struct pyframes *pf, const struct source_sample *s, struct py_merged *out,
		    size_t max);

/*
 * Fills @fi (lang PROF_LANG_PYTHON; function, file and line; strings borrowed until the next
 * call) for Python frame @i of sample @s. Returns 0; -ESTALE or another -errno when its code
 * object cannot be read (counted for the notes; @fi then names it "[unknown]").
 */
int pyframes__frame(struct pyframes *pf, const struct source_sample *s, size_t i,
		    struct prof_frame_info *fi);

/* The frame put where the outermost Python frames of a truncated stack were (the walk stops
 * at PY_MAX_FRAMES), between them and the native frames that called the interpreter. */
#define PYFRAMES_TRUNCATED "[more Python frames: stack truncated]"

/* The notes: CPythons not walked, frames not named, stacks truncated, processes past the
 * limit. */
void pyframes__notes(const struct pyframes *pf, struct capture_result *r);

#endif
