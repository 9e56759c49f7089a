// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_offsets.h"

#include <errno.h>
#include <string.h>

#define N PY_OFF_NONE

/* The field groups of struct py_offsets, each written once; a table row below names a version's
 * numbers only. Measured with offsetof() against each version's headers (Py_BUILD_CORE,
 * internal/), kept in tests/unit/test_py_offsets.c. */
#define PY_VERSION(ma, mi) .major = (ma), .minor = (mi)
#define PY_RUNTIME(size, interp_head, tss_key) \
	.runtime_size = (size), .runtime_interp_head = (interp_head), .runtime_tss_key = (tss_key)

/* Fields common to every CPython 3 on x86-64 / arm64 (PyObject, PyBytesObject, PyASCIIObject). */
#define PY_COMMON \
	.str_length = 16, .str_state = 32, .bytes_size = 16, .bytes_data = 32, .ob_type = 8

/* 3.6-3.10: the PyFrameObject chain from tstate->frame; f_lasti is an int. */
#define PY_OBJECT_FRAMES(instr)                                                            \
	.layout = PY_FRAMES_OBJECT, .tstate_frame = 24, .cframe_current_frame = N,         \
	.frame_back = 24, .frame_code = 32, .frame_instr = (instr), .frame_instr_size = 4, \
	.frame_is_entry = N, .frame_owner = N, .owner_cstack = N, .tstate_native_tid = N,  \
	.code_qualname = N, .code_adaptive = N, .ascii_size = 48, .compact_size = 72,      \
	.interp_tstate_head = 8, .tstate_next = 8

/* Code objects before 3.11: co_filename, co_name, co_firstlineno, the line table, its format
 * and the bytes per f_lasti step. */
#define PY_OLD_CODE(filename, name, firstlineno, linetable, format, unit)                    \
	.code_filename = (filename), .code_name = (name), .code_firstlineno = (firstlineno), \
	.code_linetable = (linetable), .line_format = (format), .lasti_unit = (unit)

/* 3.11+: _PyInterpreterFrame chains; the thread list, the frame fields, the code object. */
#define PY_THREADS(tstate_head, native_tid, frame, cframe_frame)                                  \
	.interp_tstate_head = (tstate_head), .tstate_next = 8, .tstate_native_tid = (native_tid), \
	.tstate_frame = (frame), .cframe_current_frame = (cframe_frame)
#define PY_INTERP_FRAMES(back, code, is_entry, owner, cstack)                                      \
	.layout = PY_FRAMES_INTERP, .frame_back = (back), .frame_code = (code), .frame_instr = 56, \
	.frame_instr_size = 8, .frame_is_entry = (is_entry), .frame_owner = (owner),               \
	.owner_cstack = (cstack), .lasti_unit = 2
#define PY_NEW_CODE(firstlineno, adaptive, ascii, compact)                                     \
	.code_filename = 112, .code_name = 120, .code_qualname = 128,                          \
	.code_firstlineno = (firstlineno), .code_linetable = 136, .code_adaptive = (adaptive), \
	.line_format = PY_LINES_311, .ascii_size = (ascii), .compact_size = (compact)

static const struct py_offsets tables[] = {
	{ PY_VERSION(3, 6), PY_RUNTIME(0, N, N), PY_OBJECT_FRAMES(120),
	  PY_OLD_CODE(96, 104, 36, 112, PY_LINES_LNOTAB, 1), PY_COMMON },
	{ PY_VERSION(3, 7), PY_RUNTIME(1520, 24, 1504 + 4), PY_OBJECT_FRAMES(104),
	  PY_OLD_CODE(96, 104, 36, 112, PY_LINES_LNOTAB, 1), PY_COMMON },
	{ PY_VERSION(3, 8), PY_RUNTIME(1464, 32, 1392 + 4), PY_OBJECT_FRAMES(104),
	  PY_OLD_CODE(104, 112, 40, 120, PY_LINES_LNOTAB, 1), PY_COMMON },
	{ PY_VERSION(3, 9), PY_RUNTIME(656, 32, 584 + 4), PY_OBJECT_FRAMES(104),
	  PY_OLD_CODE(104, 112, 40, 120, PY_LINES_LNOTAB, 1), PY_COMMON },
	{ PY_VERSION(3, 10), PY_RUNTIME(672, 32, 584 + 4), PY_OBJECT_FRAMES(96),
	  PY_OLD_CODE(104, 112, 40, 120, PY_LINES_310, 2), PY_COMMON },
	{ PY_VERSION(3, 11), PY_RUNTIME(166688, 40, 592 + 4), PY_THREADS(16, 160, 56, 8),
	  PY_INTERP_FRAMES(48, 32, 68, N, N), PY_NEW_CODE(72, 184, 48, 72), PY_COMMON },
	{ PY_VERSION(3, 12), PY_RUNTIME(459944, 40, 1544 + 4), PY_THREADS(72, 144, 56, 0),
	  PY_INTERP_FRAMES(8, 0, N, 70, 3), PY_NEW_CODE(68, 192, 40, 56), PY_COMMON },
	{ PY_VERSION(3, 13), PY_RUNTIME(283320, 632, 2160 + 4), PY_THREADS(7344, 160, 72, N),
	  PY_INTERP_FRAMES(8, 0, N, 70, 3), PY_NEW_CODE(68, 200, 40, 56), PY_COMMON },
};

int py_offsets_for_version(unsigned major, unsigned minor, const struct py_offsets **out)
{
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i].major == major && tables[i].minor == minor) {
			*out = &tables[i];
			return 0;
		}
	}
	return -ENOTSUP;
}

int py_offsets_check_runtime_size(const struct py_offsets *o, uint64_t st_size)
{
	if (!o->runtime_size)
		return -EINVAL;
	return st_size == o->runtime_size ? 0 : -EPROTO;
}

/* _Py_DebugOffsets 3.13: every member is a uint64_t; byte positions of the ones we check. */
enum {
	DBG_VERSION = 8,
	DBG_FREE_THREADED = 16,
	DBG_RUNTIME_SIZE = 24,
	DBG_INTERP_HEAD = 40,
	DBG_THREADS_HEAD = 72,
	DBG_TSTATE_NEXT = 168,
	DBG_TSTATE_FRAME = 184,
	DBG_TSTATE_NATIVE_TID = 200,
	DBG_FRAME_PREVIOUS = 232,
	DBG_FRAME_EXECUTABLE = 240,
	DBG_FRAME_INSTR = 248,
	DBG_FRAME_OWNER = 264,
	DBG_CODE_FILENAME = 280,
	DBG_CODE_NAME = 288,
	DBG_CODE_QUALNAME = 296,
	DBG_CODE_LINETABLE = 304,
	DBG_CODE_FIRSTLINENO = 312,
	DBG_CODE_ADAPTIVE = 344,
	DBG_OB_TYPE = 360,
};

static uint64_t dbg_u64(const unsigned char *buf, size_t at)
{
	uint64_t v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

int py_offsets_check_debug(const struct py_offsets *t, const void *buf, size_t len,
			   uint32_t *version_hex)
{
	const struct {
		size_t at;
		uint32_t want;
	} fields[] = {
		{ DBG_RUNTIME_SIZE, t->runtime_size },
		{ DBG_INTERP_HEAD, t->runtime_interp_head },
		{ DBG_THREADS_HEAD, t->interp_tstate_head },
		{ DBG_TSTATE_NEXT, t->tstate_next },
		{ DBG_TSTATE_FRAME, t->tstate_frame },
		{ DBG_TSTATE_NATIVE_TID, t->tstate_native_tid },
		{ DBG_FRAME_PREVIOUS, t->frame_back },
		{ DBG_FRAME_EXECUTABLE, t->frame_code },
		{ DBG_FRAME_INSTR, t->frame_instr },
		{ DBG_FRAME_OWNER, t->frame_owner },
		{ DBG_CODE_FILENAME, t->code_filename },
		{ DBG_CODE_NAME, t->code_name },
		{ DBG_CODE_QUALNAME, t->code_qualname },
		{ DBG_CODE_LINETABLE, t->code_linetable },
		{ DBG_CODE_FIRSTLINENO, t->code_firstlineno },
		{ DBG_CODE_ADAPTIVE, t->code_adaptive },
		{ DBG_OB_TYPE, t->ob_type },
	};
	const unsigned char *b = buf;
	uint64_t version;
	size_t i;

	if (len < PY_DEBUG_OFFSETS_LEN || memcmp(b, "xdebugpy", 8))
		return -EINVAL;
	version = dbg_u64(b, DBG_VERSION);
	if (dbg_u64(b, DBG_FREE_THREADED))
		return -ENOTSUP;
	if ((version >> 24) != t->major || ((version >> 16) & 0xff) != t->minor)
		return -ENOTSUP;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (dbg_u64(b, fields[i].at) != fields[i].want)
			return -EPROTO;
	}
	*version_hex = (uint32_t)version;
	return 0;
}
