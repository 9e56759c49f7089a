// SPDX-License-Identifier: Apache-2.0
#include "base/text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Returns the length (1..4) of the well-formed UTF-8 character that starts @p, of which @avail
 * bytes may be read, or 0 when @p starts no well-formed character (a lone continuation, a lead
 * that is never valid, a cut sequence, an overlong, a surrogate or above U+10FFFF). NUL and the
 * other ASCII bytes are 1.
 */
static size_t utf8_char_len(const unsigned char *p, size_t avail)
{
	unsigned char c;
	size_t n, k;

	if (!avail)
		return 0;
	c = p[0];
	if (c < 0x80)
		return 1;
	n = c >= 0xc2 && c <= 0xdf ? 2 :
	    c >= 0xe0 && c <= 0xef ? 3 :
	    c >= 0xf0 && c <= 0xf4 ? 4 :
				     0;
	if (!n || n > avail)
		return 0;
	for (k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

size_t text_utf8_char_len(const char *s, size_t avail)
{
	return utf8_char_len((const unsigned char *)s, avail);
}

/*
 * Returns the length of the character at @p (@avail bytes readable) when it may pass, 0 when it
 * must become '?': not well-formed, NUL, or with @controls a control character (below 0x20, and
 * 0x7f).
 */
static size_t pass_len(const unsigned char *p, size_t avail, bool controls)
{
	size_t n = utf8_char_len(p, avail);

	if (n == 1 && (!p[0] || (controls && (p[0] < 0x20 || p[0] == 0x7f))))
		return 0;
	return n;
}

void text_utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t i, n;

	for (i = 0; p[i]; i += n) {
		/* @avail up to the NUL: a sequence cut by it reads no further */
		n = pass_len(p + i, strnlen(s + i, 4), true);
		if (!n) {
			p[i] = '?';
			n = 1;
		}
	}
}

static bool is_clean(const char *s, size_t len, bool controls)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n;

	for (i = 0; i < len; i += n) {
		n = pass_len(p + i, len - i, controls);
		if (!n)
			return false;
	}
	return true;
}

bool text_utf8_is_clean(const char *s, size_t len)
{
	return is_clean(s, len, true);
}

bool text_utf8_is_valid(const char *s, size_t len)
{
	return is_clean(s, len, false);
}

static size_t copy_clean(char *dst, size_t size, const char *src, size_t len, bool controls)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t i = 0, o = 0, n;

	if (!dst || !size)
		return 0;
	while (i < len) {
		n = pass_len(p + i, len - i, controls);
		if (o + (n ? n : 1) >= size)
			break;
		if (n)
			memmove(dst + o, p + i, n); /* @dst may be @src */
		else
			dst[o] = '?';
		o += n ? n : 1;
		i += n ? n : 1;
	}
	dst[o] = '\0';
	return o;
}

size_t text_utf8_sanitize_copy(char *dst, size_t size, const char *src, size_t len)
{
	return copy_clean(dst, size, src, len, true);
}

size_t text_utf8_valid_copy(char *dst, size_t size, const char *src, size_t len)
{
	return copy_clean(dst, size, src, len, false);
}

/* True when the @k bytes at @p are the start, but not the whole, of a well-formed character. */
static bool is_cut_char(const unsigned char *p, size_t k)
{
	unsigned char c = p[0];
	size_t n, i;

	n = c >= 0xc2 && c <= 0xdf ? 2 :
	    c >= 0xe0 && c <= 0xef ? 3 :
	    c >= 0xf0 && c <= 0xf4 ? 4 :
				     0;
	if (k >= n)
		return false;
	for (i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return false;
	return k < 2 || !((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
			  (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90));
}

size_t text_utf8_trim_partial(char *s)
{
	size_t len = strlen(s), k;

	/* the last byte that is no continuation, within the last 3 */
	for (k = 1; k <= 3 && k <= len; k++) {
		if (((unsigned char)s[len - k] & 0xc0) == 0x80)
			continue;
		if (is_cut_char((unsigned char *)s + len - k, k)) {
			s[len - k] = '\0';
			return len - k;
		}
		break;
	}
	return len;
}

size_t text_utf8_truncate(char *s, size_t max)
{
	size_t len = strnlen(s, max + 1), cut, k;

	if (len <= max)
		return len;
	/* back up over at most 3 continuation bytes to the lead of the character cut at @max */
	cut = max;
	for (k = 0; k < 3 && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80; k++)
		cut--;
	if (((unsigned char)s[cut] & 0xc0) != 0xc0 ||
	    cut + utf8_char_len((unsigned char *)s + cut, strnlen(s + cut, 4)) <= max)
		cut = max; /* not one character cut at @max: bytes, cut anywhere */
	s[cut] = '\0';
	return cut;
}

int text_file_error(char *err, size_t size, const char *file, size_t line, const char *fmt,
		    va_list ap)
{
	int n;

	if (!err || !size)
		return -EINVAL;
	if (line)
		n = snprintf(err, size, "%s:%zu: ", file, line);
	else
		n = snprintf(err, size, "%s: ", file);
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	vsnprintf(err + n, size - n, fmt, ap);
	return -EINVAL;
}

bool text_plain_path(const char *s, size_t max)
{
	size_t i;

	if (!s || s[0] != '/')
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= max ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.' || c == '/'))
			return false;
	}
	return true;
}

void text_setf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
