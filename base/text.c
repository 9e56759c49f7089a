// SPDX-License-Identifier: Apache-2.0
#include "base/text.h"

#include <errno.h>
#include <stdio.h>

void text_utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t i, n, k;

	for (i = 0; p[i];) {
		unsigned char c = p[i];

		if (c < 0x20 || c == 0x7f) {
			p[i++] = '?';
			continue;
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		n = c >= 0xc2 && c <= 0xdf ? 1 :
		    c >= 0xe0 && c <= 0xef ? 2 :
		    c >= 0xf0 && c <= 0xf4 ? 3 : 0;
		for (k = 1; k <= n; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				break;
		/* overlongs, surrogates and > U+10FFFF */
		if (k > n && n == 2 &&
		    ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0)))
			n = 0;
		if (k > n && n == 3 &&
		    ((c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90)))
			n = 0;
		if (n == 0 || k <= n) {
			p[i++] = '?';
			continue;
		}
		i += n + 1;
	}
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
