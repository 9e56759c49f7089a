/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_offsets: the CPython 3 struct layouts our frame walk and naming need, one table per
 * minor version (3.6 ... 3.13), taken from offsetof() against each version's own headers
 * (tests/unit/test_py_offsets.c holds the measured numbers), and the check of a table against
 * a running binary: the ELF size of _PyRuntime and, on 3.13+, the _Py_DebugOffsets block that
 * starts _PyRuntime.
 *
 * Tables are static and immutable: every function here is pure and thread-safe.
 */
#ifndef SLIDEOPS_PY_OFFSETS_H
#define SLIDEOPS_PY_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#define PY_OFF_NONE UINT32_MAX /* the field does not exist in this version */

/* How the frame chain is built. */
enum py_frame_layout {
	PY_FRAMES_OBJECT = 1, /* 3.6-3.10: tstate->frame, PyFrameObject f_back/f_code/f_lasti */
	PY_FRAMES_INTERP = 2, /* 3.11+: _PyInterpreterFrame previous/f_code/prev_instr */
};

/* Which line table the code objects carry. */
enum py_line_format {
	PY_LINES_LNOTAB = 1, /* co_lnotab, 3.6-3.9: (byte delta, line delta) pairs */
	PY_LINES_310 = 2,    /* co_linetable, 3.10: (byte delta, line delta or -128) pairs */
	PY_LINES_311 = 3,    /* co_linetable, 3.11+: the location table (code units) */
};

struct py_offsets {
	unsigned major, minor;
	uint32_t runtime_size;	      /* sizeof(_PyRuntimeState); 0: no _PyRuntime (3.6) */
	uint32_t runtime_interp_head; /* _PyRuntime.interpreters.head */
	uint32_t runtime_tss_key;     /* the pthread key inside _PyRuntime (Py_tss_t._key) */
	uint32_t interp_tstate_head;  /* interp->tstate_head / threads.head */
	uint32_t tstate_next;
	uint32_t tstate_native_tid;    /* native_thread_id (3.11+) */
	uint32_t tstate_frame;	       /* frame (3.6-3.10), cframe (3.11, 3.12), current_frame */
	uint32_t cframe_current_frame; /* _PyCFrame.current_frame (3.11, 3.12) */
	uint32_t layout;	       /* enum py_frame_layout */
	uint32_t frame_back;	       /* f_back / previous */
	uint32_t frame_code;	       /* f_code / f_executable */
	uint32_t frame_instr;	       /* f_lasti (int) / prev_instr / instr_ptr (pointer) */
	uint32_t frame_instr_size;     /* 4 or 8 */
	uint32_t frame_is_entry;       /* 3.11 is_entry (char) */
	uint32_t frame_owner;	       /* 3.12+ owner (char) */
	uint32_t owner_cstack;	       /* FRAME_OWNED_BY_CSTACK: a shim frame, skipped */
	uint32_t lasti_unit;	       /* bytes per f_lasti step (3.10 counts code units) */
	uint32_t code_filename, code_name, code_qualname, code_firstlineno;
	uint32_t code_linetable;	 /* co_lnotab / co_linetable (bytes object) */
	uint32_t code_adaptive;		 /* co_code_adaptive (3.11+): instructions inline */
	uint32_t line_format;		 /* enum py_line_format */
	uint32_t ascii_size;		 /* sizeof(PyASCIIObject): compact ASCII data follows */
	uint32_t compact_size;		 /* sizeof(PyCompactUnicodeObject) */
	uint32_t str_length, str_state;	 /* PyASCIIObject.length, .state bit field */
	uint32_t bytes_size, bytes_data; /* PyBytesObject ob_size, ob_sval */
	uint32_t ob_type;
};

/*
 * The table of CPython @major.@minor. Returns 0 and a borrowed static table, or -ENOTSUP for a
 * version we have no table for (the caller keeps native frames and says so).
 */
int py_offsets_for_version(unsigned major, unsigned minor, const struct py_offsets **out);

/*
 * Checks @o against the ELF st_size of the binary's _PyRuntime symbol. Returns 0, -EPROTO when
 * they differ (a build with another layout: its frames would be garbage), -EINVAL for a table
 * without _PyRuntime.
 */
int py_offsets_check_runtime_size(const struct py_offsets *o, uint64_t st_size);

/* Bytes of _Py_DebugOffsets (3.13) that py_offsets_check_debug() reads. */
#define PY_DEBUG_OFFSETS_LEN 368

/*
 * Decodes the _Py_DebugOffsets block at the start of a 3.13+ _PyRuntime (@len bytes at @buf)
 * and checks it against @table: the cookie "xdebugpy", the version's major.minor, not
 * free-threaded, and every field the walk uses. Returns 0 and, in @version_hex, the runtime's
 * PY_VERSION_HEX; -EINVAL (short buffer, no cookie), -ENOTSUP (free-threaded, another minor),
 * -EPROTO (a field differs from the table: the table is not used).
 */
int py_offsets_check_debug(const struct py_offsets *table, const void *buf, size_t len,
			   uint32_t *version_hex);

#endif
