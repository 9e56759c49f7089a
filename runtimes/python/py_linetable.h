/* SPDX-License-Identifier: Apache-2.0 */
/*
 * py_linetable: the source line of an instruction, from a code object's line table, for each
 * format CPython 3 has used (runtimes/python/py_offsets.h enum py_line_format):
 *   PY_LINES_LNOTAB (3.6-3.9 co_lnotab), PY_LINES_310 (3.10 co_linetable),
 *   PY_LINES_311 (3.11+ co_linetable, the location table of Objects/locations.md).
 * Pure and bounded: one pass over at most @len bytes, no allocation; thread-safe.
 */
#ifndef SLIDEOPS_PY_LINETABLE_H
#define SLIDEOPS_PY_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The line of the instruction at byte offset @byte_off (from the start of the code; 3.11+
 * offsets count the inline caches, as co_code_adaptive holds them) in the code object whose
 * table is @tab[@len] and whose co_firstlineno is @firstlineno. Returns 0 and the line in
 * @line; -ENOENT when the table ends before the offset or gives the instruction no line;
 * -EINVAL for an unknown @format or a malformed table (a varint running past the end).
 */
int py_linetable_line(unsigned format, const uint8_t *tab, size_t len, int firstlineno,
		      uint32_t byte_off, int *line);

#endif
