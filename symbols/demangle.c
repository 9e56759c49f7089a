// SPDX-License-Identifier: Apache-2.0
#include "symbols/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

/*
 * The optional C++ demangler: present when the program links libstdc++, otherwise the weak
 * reference is NULL and names stay mangled. A weak reference does not make a library
 * "needed", so under --as-needed (Debian's default) link it with
 * -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state (the Makefile does).
 */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
	__attribute__((weak));

/* The length of Rust's hash component: `h` and 16 hex digits. */
#define RUST_HASH_LEN 17

bool demangle_wanted(const char *raw)
{
	return __cxa_demangle && raw && raw[0] == '_' && raw[1] == 'Z';
}

/* Digits of a T<n>_ reference, digits and capitals of an S<seq>_ one. */
static bool is_seq_char(char ref, char c)
{
	return (c >= '0' && c <= '9') || (ref == 'S' && c >= 'A' && c <= 'Z');
}

/*
 * An upper bound of the length __cxa_demangle() can produce from the @len bytes at @s, or
 * UINT64_MAX past DEMANGLE_MAX_BOUND. Every back-reference (S<seq>_ substitution, T<n>_
 * template parameter) prints a component that appeared before it, at most all the text so
 * far: each one can double the output, and nothing else can grow it. Letters inside source
 * names that look like references are counted too, which errs on the safe side.
 */
static uint64_t output_bound(const char *s, size_t len)
{
	uint64_t bound = len;
	size_t i, j;

	for (i = 0; i < len; i++) {
		if (s[i] != 'S' && s[i] != 'T')
			continue;
		for (j = i + 1; j < len && is_seq_char(s[i], s[j]); j++)
			;
		if (j >= len || s[j] != '_')
			continue;
		bound *= 2;
		if (bound > DEMANGLE_MAX_BOUND)
			return UINT64_MAX;
	}
	return bound;
}

static bool is_rust_hash(const char *s, size_t n);

/* True when the @n bytes at @s end as a Rust legacy name does: its hash, then `E`. */
static bool ends_in_rust_hash(const char *s, size_t n)
{
	return n > RUST_HASH_LEN + 3 && s[n - 1] == 'E' && s[n - RUST_HASH_LEN - 3] == '1' &&
	       s[n - RUST_HASH_LEN - 2] == '7' &&
	       is_rust_hash(s + n - RUST_HASH_LEN - 1, RUST_HASH_LEN);
}

char *demangle(const char *raw)
{
	char cut[DEMANGLE_MAX_IN + 1];
	const char *dot;
	size_t len;
	int status = -1;
	char *dem;

	if (!demangle_wanted(raw))
		return NULL;
	len = strnlen(raw, DEMANGLE_MAX_IN + 1);
	if (len > DEMANGLE_MAX_IN || output_bound(raw, len) == UINT64_MAX)
		return NULL;
	/* A Rust name with a suffix LLVM gave it (`.llvm.<digits>` of a promoted local), which
	 * __cxa_demangle refuses after a name that is not a function type: the suffix is dropped,
	 * as rustc-demangle does. */
	for (dot = memchr(raw, '.', len); dot && !ends_in_rust_hash(raw, (size_t)(dot - raw));
	     dot = memchr(dot + 1, '.', len - (size_t)(dot + 1 - raw)))
		; /* the '.' after the hash: Rust's own names hold ".." for "::" */
	if (dot) {
		memcpy(cut, raw, (size_t)(dot - raw));
		cut[dot - raw] = '\0';
		raw = cut;
	}
	dem = __cxa_demangle(raw, NULL, NULL, &status);
	if (status || !dem) {
		free(dem);
		return NULL;
	}
	demangle_rust_tidy(dem);
	if (strlen(dem) > DEMANGLE_MAX_OUT) {
		free(dem);
		return NULL;
	}
	return dem;
}

/* ---- Rust's legacy names ---- */

/* A lowercase hex digit's value, or -1: Rust writes hashes and `$u` escapes in lowercase. */
static int hex_value(char c)
{
	return c >= 'A' && c <= 'F' ? -1 : hex_digit(c);
}

/* True when the @n bytes at @s are `h` and 16 lowercase hex digits. */
static bool is_rust_hash(const char *s, size_t n)
{
	size_t i;

	if (n != RUST_HASH_LEN || s[0] != 'h')
		return false;
	for (i = 1; i < n; i++)
		if (hex_value(s[i]) < 0)
			return false;
	return true;
}

/* Writes @cp as UTF-8 at @out; returns its length. @cp is a valid scalar value. */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static const struct {
	const char *esc;
	char c;
} rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/*
 * Decodes the escape at @in (a '$') into @out. Returns the bytes of @in it stood for, 0 when it
 * is not one (then it is copied as written); *@n gets the bytes written. `$u<hex>$` stands for
 * a code point, printable ones only.
 */
static size_t rust_escape(const char *in, char *out, size_t *n)
{
	uint32_t cp = 0;
	size_t i, k;
	int v;

	for (k = 0; k < sizeof(rust_escapes) / sizeof(rust_escapes[0]); k++) {
		i = strlen(rust_escapes[k].esc);
		if (!strncmp(in, rust_escapes[k].esc, i)) {
			out[0] = rust_escapes[k].c;
			*n = 1;
			return i;
		}
	}
	if (in[1] != 'u')
		return 0;
	for (i = 2; i < 8 && (v = hex_value(in[i])) >= 0; i++)
		cp = cp << 4 | (uint32_t)v;
	if (i == 2 || in[i] != '$' || cp < 0x20 || cp == 0x7f || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*n = put_utf8(out, cp);
	return i + 1;
}

bool demangle_rust_tidy(char *s)
{
	char *last = NULL, *p, *w;
	size_t used, n;

	if (!s)
		return false;
	for (p = strstr(s, "::"); p; p = strstr(p + 2, "::"))
		last = p;
	if (!last || !is_rust_hash(last + 2, strlen(last + 2)))
		return false;
	*last = '\0';
	for (p = w = s; *p;) {
		if (p[0] == '_' && p[1] == '$' &&
		    (w == s || (w - s >= 2 && w[-1] == ':' && w[-2] == ':'))) {
			p++; /* `_$` opens a component that starts with an escape */
			continue;
		}
		if (p[0] == '.' && p[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			p += 2;
			continue;
		}
		if (p[0] == '$' && (used = rust_escape(p, w, &n)) > 0) {
			w += n;
			p += used;
			continue;
		}
		*w++ = *p++;
	}
	*w = '\0';
	return true;
}
