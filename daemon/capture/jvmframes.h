/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvmframes: the HotSpot JVMs of a capture and the naming of their Java frames (issue 14).
 *
 * Before the collectors attach, each process of the target that runtime detection calls a JVM
 * is looked at from outside: its VMStructs (runtimes/jvm/jvm_vmstructs.h) give what the kernel
 * unwinder needs to walk its code heaps (runtimes/jvm/jvm_unwind.h, registered through
 * source__add_jvm()) and what naming needs (runtimes/jvm/jvm_names.h). A JVM that is not
 * HotSpot, or whose tables cannot be read, becomes a note and keeps native frames. At the drain
 * each Java frame of a sample is named, inlined methods expanded. Not thread-safe.
 */
#ifndef SLIDEOPS_CAPTURE_JVMFRAMES_H
#define SLIDEOPS_CAPTURE_JVMFRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "runtimes/jvm/jvm_names.h"

/* The most JVMs walked in one capture (the kernel side holds 256); past it, a note. */
#define JVMFRAMES_MAX_PROCS 64
#define JVMFRAMES_MAX_NOTED 4
/* Frames one Java frame may expand to (itself and the methods inlined into it). */
#define JVMFRAMES_MAX_EXPAND 16

struct uw_jvm;
struct capture_result;
struct jvmframes;

/* Returns 0 with @out (free with jvmframes__free), or -ENOMEM. @proc_root NULL: /proc. */
int jvmframes__new(const char *proc_root, struct jvmframes **out);
/* Accepts NULL. */
void jvmframes__free(struct jvmframes *jf);

/*
 * Looks at process @tgid: a HotSpot JVM that can be walked is registered (returns 1); a JVM
 * that cannot is remembered for the notes (0); any other process, or one gone, returns 0;
 * -EAGAIN for a JVM still starting (libjvm.so not mapped yet, its tables or code heaps not
 * filled): ask again later.
 */
int jvmframes__add(struct jvmframes *jf, uint32_t tgid);
/* Every JVM in /proc (the whole server). Returns the number registered, or -errno. */
int jvmframes__add_all(struct jvmframes *jf);

/* Forgets the JVMs that exited (a walk kept loaded across intervals: their slots serve new
 * ones). Returns how many. */
int jvmframes__sweep(struct jvmframes *jf);

/* Registered JVM @i (0 .. count-1): its tgid and what the unwinder takes. */
size_t jvmframes__count(const struct jvmframes *jf);
const struct uw_jvm *jvmframes__bpf_at(const struct jvmframes *jf, size_t i, uint32_t *tgid);
/* The unwinder's record of registered @tgid, or NULL. */
const struct uw_jvm *jvmframes__bpf_of(const struct jvmframes *jf, uint32_t tgid);

/*
 * The frames of Java frame (@word, @cookie) of a sample of @tgid, innermost first, into @fi
 * (room for @max; strings borrowed until the next call): the method "Class.method", its file
 * and line, lang PROF_LANG_JAVA (a stub of the JVM: native, mapping "[jvm]"). A frame that
 * cannot be named (freed or recompiled since the sample) is one frame,
 * JVMFRAMES_UNNAMED, counted for the notes. Returns the count (>= 1).
 */
int jvmframes__frame(struct jvmframes *jf, uint32_t tgid, uint64_t word, uint64_t cookie,
		     struct prof_frame_info *fi, size_t max);

#define JVMFRAMES_UNNAMED "[Java: code freed or recompiled since the sample]"

/* wall and locks: @ns of waiting by a JVM's own thread (no Java frame), left out of the
 * profile; said in the notes. */
void jvmframes__own_wait(struct jvmframes *jf, int64_t ns);
/* locks: @ns of a Java thread in Thread.sleep or Object.wait, left out; said in the notes. */
void jvmframes__not_lock(struct jvmframes *jf, int64_t ns);

/* locks: JVM @tgid's lock waits come from its own lock events (daemon/capture/jvm_source.h):
 * the futex waits of its Java threads are left out (jvmframes__runtime_wait()). At most
 * JVMFRAMES_MAX_RUNTIME_LOCKS; more are ignored. */
#define JVMFRAMES_MAX_RUNTIME_LOCKS 8
void jvmframes__set_runtime_locks(struct jvmframes *jf, uint32_t tgid);
/* True (and counted for the notes) when a futex wait of @tgid's Java thread is left out so. */
bool jvmframes__runtime_wait(struct jvmframes *jf, uint32_t tgid, int64_t ns);

/* The notes: JVMs not walked, frames not named. */
void jvmframes__notes(const struct jvmframes *jf, struct capture_result *r);

#endif
