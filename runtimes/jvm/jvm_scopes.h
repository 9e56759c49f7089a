/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_scopes: HotSpot's compressed debug information, decoded from copies of a compiled
 * method's regions (pure, no memory access beyond the buffers given; docs/jvm.md):
 *  - UNSIGNED5 integers (CompressedReadStream): JDK 17 uses every byte value, JDK 20 and later
 *    exclude 0 (each byte is stored plus one): @excl is 0 or 1;
 *  - the PcDesc table: the descriptor of a pc offset (from the code start) is the first whose
 *    pc offset is at or after it (an exact match for a call's return address);
 *  - the scope chain of a PcDesc, innermost (the method inlined deepest) first: each record
 *    holds its caller's record offset (0: the outermost), a metadata index (1-based: the
 *    Method*) and bci + 1;
 *  - the compressed line number table of a method (after its bytecodes).
 * Every read is bounded by its buffer; a malformed input is -EBADMSG, never a read past it.
 */
#ifndef SLIDEOPS_JVM_SCOPES_H
#define SLIDEOPS_JVM_SCOPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The deepest inlining followed (HotSpot's MaxInlineLevel is 15; JVMCI compilers go deeper). */
#define JVM_SCOPES_MAX 64
/* Size of a PcDesc (four ints: pc offset, scope offset, object offset, flags). */
#define JVM_PCDESC_SIZE 16

/* One UNSIGNED5 integer at *@pos of @buf[0..@len); advances *@pos. Returns 0 or -EBADMSG. */
int jvm_u5_read(const uint8_t *buf, size_t len, size_t *pos, unsigned excl, uint32_t *v);

/*
 * The PcDesc for pc offset @pc_off in the table @pcs (@len bytes, entries of @stride bytes
 * sorted by pc offset; pc offset at 0, scope offset at 4): the index of the first at or after
 * it (HotSpot's own rule, exact for a call's return address) in *@index. Returns 0; -ENOENT
 * when none covers it, -EBADMSG for a table not strictly sorted (anywhere) or whose size is
 * no multiple of @stride, -EINVAL for a stride below 8. One pass over the table.
 */
int jvm_pcdesc_find(const uint8_t *pcs, size_t len, size_t stride, int32_t pc_off, size_t *index);

/* The scope offset of PcDesc @index of @pcs (found by jvm_pcdesc_find()). */
uint32_t jvm_pcdesc_scope(const uint8_t *pcs, size_t stride, size_t index);

struct jvm_scope {
	uint32_t method_index; /* into the nmethod's metadata, 1-based */
	int32_t bci;	       /* -1: the method's entry */
};

/*
 * The chain of scopes from record @off of the scopes data @data[0..@len), innermost first,
 * into @out (room for @max <= JVM_SCOPES_MAX). Returns the count (>= 1); 0 for @off 0 (no
 * scope: the caller names the nmethod's own method); -EBADMSG for a record cut short, an
 * offset past the data, or a caller record that is not before its callee (a loop), -E2BIG past
 * @max scopes.
 */
int jvm_scopes_decode(const uint8_t *data, size_t len, unsigned excl, uint32_t off,
		      struct jvm_scope *out, size_t max);

/*
 * The source line of @bci in the compressed line number table @tab[0..@len) (pairs delta-coded
 * from (0, 0): one byte bci_delta << 3 | line_delta, or 0xff and two signed UNSIGNED5 deltas;
 * a 0 byte ends it). The exact bci wins, else the last pair before it. Returns 0 and *@line;
 * -ENOENT (no pair at or before @bci), -EBADMSG (no end within @len, a delta out of range).
 */
int jvm_line_of(const uint8_t *tab, size_t len, unsigned excl, int32_t bci, uint32_t *line);

#endif
