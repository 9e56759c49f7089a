/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvmthreads: the Java side of `threads` (issue 14). For each JVM among the rows' processes,
 * its own thread dump (`threaddump`, as `jcmd Thread.print`) through the attach protocol
 * (runtimes/jvm/jvm_attach.h), parsed (runtimes/jvm/jvm_threaddump.h) and joined to the eBPF
 * rows by OS thread: the dump's nid is the thread's id in the JVM's pid namespace, a row's tid
 * the host's, and /proc/PID/task/TID/status (NSpid) maps one to the other. A row then carries
 * its Java name, state, lock and innermost Java frame. A JVM that cannot be attached to
 * (-XX:+DisableAttachMechanism, a stopped JVM) keeps its eBPF rows and gets a note.
 */
#ifndef SLIDEOPS_CAPTURE_JVMTHREADS_H
#define SLIDEOPS_CAPTURE_JVMTHREADS_H

#include <stddef.h>

/* JVMs asked for their threads in one capture (each dump takes 40-130 ms). */
#define JVMTHREADS_MAX_JVMS 8

struct jvmframes;
struct capture_thread;
struct capture_result;

/*
 * Fills the Java fields of the rows @t[0..@n) whose process is a JVM that @jf walked. Notes
 * go to @r. Returns the number of rows joined.
 */
size_t jvmthreads_join(const char *proc_root, const struct jvmframes *jf, struct capture_thread *t,
		       size_t n, struct capture_result *r);

#endif
