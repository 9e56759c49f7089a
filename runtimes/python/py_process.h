/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_process: what the frame walk needs to know about one CPython process, found from outside
 * (its maps, its mapped ELF files, a few words of its memory; no ptrace, nothing run in it):
 * the file that defines _PyRuntime (libpython, or the executable of a static build such as
 * Debian's /usr/bin/python3.11), the load bias, the version (Py_Version on 3.11+, else the
 * file name), the offset table checked against the binary (ELF size of _PyRuntime, and
 * _Py_DebugOffsets on 3.13+), the pthread key of autoTSSkey (autoTLSkey on 3.6) and glibc's
 * struct pthread layout decoded from pthread_getspecific.
 *
 * Thread-safe (no shared state).
 */
#ifndef SLIDEOPS_PY_PROCESS_H
#define SLIDEOPS_PY_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/python/py_offsets.h"

struct py_proc;

struct py_process {
	uint32_t tgid;
	unsigned major, minor;
	uint32_t version_hex;	      /* PY_VERSION_HEX; 0 when only the file name told */
	const struct py_offsets *off; /* static */
	char path[256];		      /* the interpreter file, as the process maps it */
	uint64_t bias;
	uint64_t runtime;	       /* &_PyRuntime; 0 on 3.6 */
	uint64_t code_type;	       /* &PyCode_Type */
	uint64_t none;		       /* &_Py_NoneStruct */
	uint64_t eval_start, eval_end; /* _PyEval_EvalFrameDefault */
	uint64_t text_start, text_end; /* the interpreter file's executable mappings */
	uint32_t tss_key;	       /* the pthread key holding each thread's PyThreadState */
	uint32_t pthread_specific;     /* offsetof(struct pthread, specific_1stblock) */
	bool debug_offsets;	       /* 3.13+: the table matched _Py_DebugOffsets */
};

/*
 * Finds the CPython of process @tgid (@proc_root NULL: /proc). Returns 0 and fills @out;
 * -ENOENT (no CPython 3 in it), -ENOTSUP (a CPython we cannot walk: unknown version, a binary
 * whose layout differs from the table, a libc whose pthread layout we cannot decode, a key not
 * in the first block; the caller keeps native frames and says so), -EAGAIN (the key is not
 * created yet: the interpreter is starting), -ESRCH, or another -errno.
 */
int py_process_find(const char *proc_root, uint32_t tgid, struct py_process *out);

/* The CPython version in an interpreter file name ("libpython3.6m.so.1.0", "python3.11").
 * Returns 0 and @major.@minor, or -ENOENT. */
int py_version_from_name(const char *path, unsigned *major, unsigned *minor);

/*
 * offsetof(struct pthread, specific_1stblock) from the first bytes of glibc's x86-64
 * pthread_getspecific ("add $N,%rax; shl $4,%rax": the slot of key k is at (k + N) * 16).
 * Returns 0 and @off, or -ENOTSUP when the code does not have that shape.
 */
int py_glibc_specific_offset(const uint8_t *code, size_t len, uint32_t *off);

/* PY_NATIVE_EVAL, PY_NATIVE_HELPER or PY_NATIVE_OTHER (py_merge.h) for native frame @ip. */
uint8_t py_process_native_kind(const struct py_process *p, uint64_t ip);

/* The BPF walk's per-process record (bpf/python.h) for @p. */
void py_process_bpf(const struct py_process *p, struct py_proc *out);

#endif
