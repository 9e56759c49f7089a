/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_names: the names of the Java frames the in-kernel unwinder recorded (bpf/unwind.h
 * UW_JAVA_*), read from the JVM's memory after the samples (docs/jvm.md):
 *  - a compiled frame: the nmethod is read again and must still be an nmethod with the compile
 *    id of the sample (else -ESTALE: its code was freed or recompiled meanwhile, never
 *    misnamed); its PcDesc for the pc and that PcDesc's scope chain give the methods inlined
 *    there, innermost first, each with its bci;
 *  - an interpreted frame: the Method*, checked against the sample's bytecode pointer (which
 *    must fall inside that method's bytecodes, else -ESTALE), and the bci;
 *  - a method: Method -> ConstMethod -> ConstantPool -> holder Klass's name, the name and the
 *    source file from the constant pool's Symbols, the line from the line number table;
 *  - a stub: its code blob's name.
 * Every size read from the JVM is bounded (JVM_NAMES_*_MAX) before it is used; names are made
 * valid UTF-8. Methods and compiled methods are cached (bounded, per JVM). Not thread-safe.
 */
#ifndef SLIDEOPS_JVM_NAMES_H
#define SLIDEOPS_JVM_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/jvm/jvm_vmstructs.h"

#define JVM_NAME_MAX 256 /* "java.util.concurrent.ThreadPoolExecutor.runWorker", cut */
#define JVM_FILE_MAX 96
/* Regions of a compiled method copied at most (a larger one: only its own method is named). */
#define JVM_NAMES_PCS_MAX (64u << 10)
#define JVM_NAMES_SCOPES_MAX (256u << 10)
#define JVM_NAMES_METADATA_MAX (64u << 10)
/* A line number table longer than this is not read (the frame has no line). */
#define JVM_NAMES_LINES_MAX 4096u
/* Cached methods and compiled methods per JVM. */
#define JVM_NAMES_METHODS 1024u
#define JVM_NAMES_NMETHODS 128u

enum jvm_frame_kind {
	JVM_FRAME_INTERPRETED,
	JVM_FRAME_COMPILED, /* JIT code (C1, C2) */
	JVM_FRAME_INLINED,  /* inlined into the next frame (its caller), in compiled code */
	JVM_FRAME_STUB,	    /* the JVM's own code: stubs, adapters, the interpreter */
};

struct jvm_frame {
	char name[JVM_NAME_MAX]; /* "JavaWork.spinLoop", or the stub's name */
	char file[JVM_FILE_MAX]; /* "JavaWork.java", "" when the class has none */
	uint32_t line;		 /* 0: unknown */
	enum jvm_frame_kind kind;
};

struct jvm_names;

/*
 * Names for the JVM whose VMStructs gave @hs (copied), of JDK @major (17, 25: the UNSIGNED5
 * variant), reading its memory through @read(@ctx). Returns 0 or -ENOMEM; -ENOTSUP when @hs
 * lacks what naming needs.
 */
int jvm_names__new(const struct jvm_hotspot *hs, unsigned major, jvm_read_fn_t read, void *ctx,
		   struct jvm_names **out);
/* Accepts NULL. */
void jvm_names__free(struct jvm_names *jn);

/*
 * The frames of the Java frame (@word, @cookie) as the unwinder recorded it, innermost first,
 * into @out (room for @max). Returns the count (>= 1); -EINVAL (@word is no Java frame),
 * -ESTALE (freed or recompiled since), -EBADMSG (its debug information could not be
 * decoded), -E2BIG (a region past its bound), or @read's -errno.
 */
int jvm_names__frame(struct jvm_names *jn, uint64_t word, uint64_t cookie, struct jvm_frame *out,
		     size_t max);

/* The JDK major version of a release string ("17.0.15+6-Debian-1deb12u1" -> 17), 0 if none. */
unsigned jvm_release_major(const char *release);

#endif
