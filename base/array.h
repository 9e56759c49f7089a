/* SPDX-License-Identifier: Apache-2.0 */
/*
 * array: growth of caller-owned arrays, LEB128 varints and small strict number parsers: the one
 * copy of what the readers of every folder need. Pure (libc only), thread-safe.
 */
#ifndef SLIDEOPS_BASE_ARRAY_H
#define SLIDEOPS_BASE_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/*
 * Makes *@data (an array of *@cap elements of @elem bytes, realloc'd) hold at least @need
 * elements: the capacity doubles from 16. Returns 0 (the array is untouched when it is large
 * enough), -ENOMEM when the size overflows or realloc fails (*@data and *@cap are then
 * unchanged and still owned by the caller). libbpf's libbpf_ensure_mem() is the model.
 */
int array_ensure(void **data, size_t *cap, size_t elem, size_t need);

/*
 * Reads an unsigned (signed) LEB128 value at *@p, below @end, and moves *@p past it. Returns 0,
 * -EINVAL when the value is cut off at @end, -ERANGE when it does not fit 64 bits (more than
 * ten bytes, or bits beyond 64 in the tenth).
 */
int leb128_u64(const uint8_t **p, const uint8_t *end, uint64_t *out);
int leb128_s64(const uint8_t **p, const uint8_t *end, int64_t *out);

/*
 * Parses the decimal digits at *@p (no sign, no space) into @out and moves *@p past them.
 * Returns 0, -EINVAL when there is no digit, -ERANGE past @max.
 */
int parse_dec_u64(const char **p, uint64_t max, uint64_t *out);

/* The value of hexadecimal digit @c (either case), or -1. */
int hex_digit(int c);

#endif
