/* SPDX-License-Identifier: Apache-2.0 */
/*
 * demangle: readable function names from mangled ones, for names read from any file.
 *
 * C++ (the Itanium ABI, `_Z...`) goes through libstdc++'s __cxa_demangle when the program links
 * it. Rust's legacy mangling is the same scheme with a hash and `$` escapes: its names lose the
 * `::h<16 hex digits>` hash and have their escapes decoded (`$LT$` is `<`, `..` is `::`), the
 * form perf and rustfilt print. Rust's v0 mangling (`_R...`) is shown as it is.
 *
 * Bounded three ways (a 213-byte name can demangle to 63 MB): a name longer than
 * DEMANGLE_MAX_IN, or whose output could pass DEMANGLE_MAX_BOUND, is not demangled, and an
 * output longer than DEMANGLE_MAX_OUT is dropped. The caller then shows the mangled name.
 */
#ifndef SLIDEOPS_SYMBOLS_DEMANGLE_H
#define SLIDEOPS_SYMBOLS_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

#define DEMANGLE_MAX_IN 1024u
#define DEMANGLE_MAX_BOUND (16u << 20)
#define DEMANGLE_MAX_OUT (4u << 10)

/* True when @raw is a mangled name this module may turn readable (and a demangler is linked). */
bool demangle_wanted(const char *raw);

/*
 * The readable form of @raw, a new string the caller frees; NULL when @raw is not mangled, is
 * outside the bounds above, does not demangle, or no demangler is linked (show @raw then).
 */
char *demangle(const char *raw);

/*
 * Tidies in place the demangled form @s of a Rust legacy name: when its last component is the
 * hash (`h` and 16 hex digits) it is removed with its `::`, and the escapes are decoded; a
 * name without the hash is left as it is. An escape that does not decode stays as written.
 * The result is never longer than @s. Returns true when @s was a Rust name.
 */
bool demangle_rust_tidy(char *s);

#endif
