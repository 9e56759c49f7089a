// SPDX-License-Identifier: Apache-2.0
#include "runtimes/python/py_offsets.h"

#include <errno.h>
#include <string.h>

#define N PY_OFF_NONE

/* Fields common to every CPython 3 on x86-64 / arm64 (PyObject, PyBytesObject, PyASCIIObject). */
#define PY_COMMON \
	.str_length = 16, .str_state = 32, .bytes_size = 16, .bytes_data = 32, .ob_type = 8

/* 3.6-3.10: PyFrameObject chain. f_lasti is an int. */
#define PY_OBJECT_FRAMES                                                                   \
	.layout = PY_FRAMES_OBJECT, .tstate_frame = 24, .cframe_current_frame = N,         \
	.frame_back = 24, .frame_code = 32, .frame_instr_size = 4, .frame_is_entry = N,    \
	.frame_owner = N, .owner_cstack = N, .tstate_native_tid = N, .code_qualname = N,   \
	.code_adaptive = N, .ascii_size = 48, .compact_size = 72, .interp_tstate_head = 8, \
	.tstate_next = 8

/* Measured with offsetof() against each version's headers (Py_BUILD_CORE, internal/). */
static const struct py_offsets tables[] = {
	{ .major = 3,
	  .minor = 6,
	  .runtime_size = 0,
	  .runtime_interp_head = N,
	  .runtime_tss_key = N,
	  PY_OBJECT_FRAMES,
	  .frame_instr = 120,
	  .lasti_unit = 1,
	  .code_filename = 96,
	  .code_name = 104,
	  .code_firstlineno = 36,
	  .code_linetable = 112,
	  .line_format = PY_LINES_LNOTAB,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 7,
	  .runtime_size = 1520,
	  .runtime_interp_head = 24,
	  .runtime_tss_key = 1504 + 4,
	  PY_OBJECT_FRAMES,
	  .frame_instr = 104,
	  .lasti_unit = 1,
	  .code_filename = 96,
	  .code_name = 104,
	  .code_firstlineno = 36,
	  .code_linetable = 112,
	  .line_format = PY_LINES_LNOTAB,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 8,
	  .runtime_size = 1464,
	  .runtime_interp_head = 32,
	  .runtime_tss_key = 1392 + 4,
	  PY_OBJECT_FRAMES,
	  .frame_instr = 104,
	  .lasti_unit = 1,
	  .code_filename = 104,
	  .code_name = 112,
	  .code_firstlineno = 40,
	  .code_linetable = 120,
	  .line_format = PY_LINES_LNOTAB,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 9,
	  .runtime_size = 656,
	  .runtime_interp_head = 32,
	  .runtime_tss_key = 584 + 4,
	  PY_OBJECT_FRAMES,
	  .frame_instr = 104,
	  .lasti_unit = 1,
	  .code_filename = 104,
	  .code_name = 112,
	  .code_firstlineno = 40,
	  .code_linetable = 120,
	  .line_format = PY_LINES_LNOTAB,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 10,
	  .runtime_size = 672,
	  .runtime_interp_head = 32,
	  .runtime_tss_key = 584 + 4,
	  PY_OBJECT_FRAMES,
	  .frame_instr = 96,
	  .lasti_unit = 2,
	  .code_filename = 104,
	  .code_name = 112,
	  .code_firstlineno = 40,
	  .code_linetable = 120,
	  .line_format = PY_LINES_310,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 11,
	  .runtime_size = 166688,
	  .runtime_interp_head = 40,
	  .runtime_tss_key = 592 + 4,
	  .interp_tstate_head = 16,
	  .tstate_next = 8,
	  .tstate_native_tid = 160,
	  .tstate_frame = 56,
	  .cframe_current_frame = 8,
	  .layout = PY_FRAMES_INTERP,
	  .frame_back = 48,
	  .frame_code = 32,
	  .frame_instr = 56,
	  .frame_instr_size = 8,
	  .frame_is_entry = 68,
	  .frame_owner = N,
	  .owner_cstack = N,
	  .lasti_unit = 2,
	  .code_filename = 112,
	  .code_name = 120,
	  .code_qualname = 128,
	  .code_firstlineno = 72,
	  .code_linetable = 136,
	  .code_adaptive = 184,
	  .line_format = PY_LINES_311,
	  .ascii_size = 48,
	  .compact_size = 72,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 12,
	  .runtime_size = 459944,
	  .runtime_interp_head = 40,
	  .runtime_tss_key = 1544 + 4,
	  .interp_tstate_head = 72,
	  .tstate_next = 8,
	  .tstate_native_tid = 144,
	  .tstate_frame = 56,
	  .cframe_current_frame = 0,
	  .layout = PY_FRAMES_INTERP,
	  .frame_back = 8,
	  .frame_code = 0,
	  .frame_instr = 56,
	  .frame_instr_size = 8,
	  .frame_is_entry = N,
	  .frame_owner = 70,
	  .owner_cstack = 3,
	  .lasti_unit = 2,
	  .code_filename = 112,
	  .code_name = 120,
	  .code_qualname = 128,
	  .code_firstlineno = 68,
	  .code_linetable = 136,
	  .code_adaptive = 192,
	  .line_format = PY_LINES_311,
	  .ascii_size = 40,
	  .compact_size = 56,
	  PY_COMMON },
	{ .major = 3,
	  .minor = 13,
	  .runtime_size = 283320,
	  .runtime_interp_head = 632,
	  .runtime_tss_key = 2160 + 4,
	  .interp_tstate_head = 7344,
	  .tstate_next = 8,
	  .tstate_native_tid = 160,
	  .tstate_frame = 72,
	  .cframe_current_frame = N,
	  .layout = PY_FRAMES_INTERP,
	  .frame_back = 8,
	  .frame_code = 0,
	  .frame_instr = 56,
	  .frame_instr_size = 8,
	  .frame_is_entry = N,
	  .frame_owner = 70,
	  .owner_cstack = 3,
	  .lasti_unit = 2,
	  .code_filename = 112,
	  .code_name = 120,
	  .code_qualname = 128,
	  .code_firstlineno = 68,
	  .code_linetable = 136,
	  .code_adaptive = 200,
	  .line_format = PY_LINES_311,
	  .ascii_size = 40,
	  .compact_size = 56,
	  PY_COMMON },
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
