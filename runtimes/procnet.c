// SPDX-License-Identifier: Apache-2.0
#include "runtimes/procnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/array.h"

/* One field of a line: [p, p + len). */
struct tok {
	const char *p;
	size_t len;
};

/* Every field up to the inode; the kernel prints more after it (refcount, sk pointer, ...). */
enum {
	F_SL,
	F_LOCAL,
	F_REMOTE,
	F_STATE,
	F_QUEUES,
	F_TIMER,
	F_RETR,
	F_UID,
	F_TIMEOUT,
	F_INODE,
	F_NEEDED
};

#define FIELD_MAX 64 /* longer than any field the kernel prints: "overlong" */

/* Exactly @n (1..8) hex digits at @p. */
static int parse_hex32(const char *p, size_t n, uint32_t *out)
{
	uint32_t v = 0;
	size_t i;
	int d;

	for (i = 0; i < n; i++) {
		d = hex_digit((unsigned char)p[i]);
		if (d < 0)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

static bool all_hex(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (hex_digit((unsigned char)p[i]) < 0)
			return false;
	}
	return n > 0;
}

/* 1..@max_digits decimal digits, no overflow of uint64_t. */
static int parse_dec(const char *p, size_t n, size_t max_digits, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n || n > max_digits)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return 0;
}

/* "hhhhhhhh:pppp" (IPv4) or 32 hex digits ":pppp" (IPv6). */
static int parse_endpoint(const struct tok *t, bool v6, uint8_t addr[16], uint16_t *port)
{
	size_t words = v6 ? 4 : 1, i;
	uint32_t w, p;

	if (t->len != words * 8 + 5 || t->p[words * 8] != ':')
		return -EINVAL;
	memset(addr, 0, 16);
	for (i = 0; i < words; i++) {
		if (parse_hex32(t->p + i * 8, 8, &w))
			return -EINVAL;
		/* The word is what the kernel loaded from the address bytes: store it back. */
		memcpy(addr + i * 4, &w, 4);
	}
	if (parse_hex32(t->p + words * 8 + 1, 4, &p))
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

/* "xxxxxxxx:yyyyyyyy" with @a and @b_min..@b_max hex digits on each side. */
static bool is_hex_pair(const struct tok *t, size_t a, size_t b_min, size_t b_max)
{
	size_t b;

	if (t->len < a + 1 + b_min || t->len > a + 1 + b_max || t->p[a] != ':')
		return false;
	b = t->len - a - 1;
	return all_hex(t->p, a) && all_hex(t->p + a + 1, b);
}

int procnet_parse_line(const char *line, size_t len, bool v6, struct procnet_entry *out)
{
	struct tok f[F_NEEDED];
	struct procnet_entry e = { .v6 = v6 };
	uint8_t raddr[16];
	uint16_t rport;
	uint64_t v;
	uint32_t st;
	size_t i = 0, n = 0, start;
	const char *p;

	if (!line)
		return -EINVAL;
	if (len && line[len - 1] == '\n')
		len--;
	while (n < F_NEEDED) {
		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			return -EINVAL; /* truncated: a field is missing */
		start = i;
		while (i < len && line[i] != ' ') {
			if ((unsigned char)line[i] < 0x21 || (unsigned char)line[i] > 0x7e)
				return -EINVAL;
			i++;
		}
		if (i - start > FIELD_MAX)
			return -EINVAL;
		f[n].p = line + start;
		f[n].len = i - start;
		n++;
	}

	p = f[F_SL].p;
	if (f[F_SL].len < 2 || p[f[F_SL].len - 1] != ':' || parse_dec(p, f[F_SL].len - 1, 10, &v))
		return -EINVAL;
	if (parse_endpoint(&f[F_LOCAL], v6, e.addr, &e.port) ||
	    parse_endpoint(&f[F_REMOTE], v6, raddr, &rport))
		return -EINVAL;
	if (f[F_STATE].len != 2 || parse_hex32(f[F_STATE].p, 2, &st))
		return -EINVAL;
	e.state = (uint8_t)st;
	/* tx_queue:rx_queue, timer:expires (a long: 8 to 16 digits), retransmits. */
	if (!is_hex_pair(&f[F_QUEUES], 8, 8, 8) || !is_hex_pair(&f[F_TIMER], 2, 8, 16) ||
	    f[F_RETR].len != 8 || !all_hex(f[F_RETR].p, 8))
		return -EINVAL;
	if (parse_dec(f[F_UID].p, f[F_UID].len, 10, &v) || v > UINT32_MAX)
		return -EINVAL;
	e.uid = (uint32_t)v;
	p = f[F_TIMEOUT].p;
	if (f[F_TIMEOUT].len && p[0] == '-') {
		if (parse_dec(p + 1, f[F_TIMEOUT].len - 1, 10, &v))
			return -EINVAL;
	} else if (parse_dec(p, f[F_TIMEOUT].len, 10, &v)) {
		return -EINVAL;
	}
	if (parse_dec(f[F_INODE].p, f[F_INODE].len, 20, &e.inode))
		return -EINVAL;
	*out = e;
	return 0;
}

/* The header starts with "sl" after the spaces of the first column. */
static bool is_header(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && line[i] == ' ')
		i++;
	return len - i >= 3 && line[i] == 's' && line[i + 1] == 'l' && line[i + 2] == ' ';
}

int procnet_parse(const char *buf, size_t len, bool v6, procnet_fn_t fn, void *ctx)
{
	struct procnet_entry e;
	const char *line, *nl;
	size_t off = 0, n;
	int count = 0, err;

	if (!buf)
		return -EINVAL;
	nl = memchr(buf, '\n', len);
	n = nl ? (size_t)(nl - buf) : len;
	if (!is_header(buf, n))
		return -EINVAL;
	off = nl ? n + 1 : len;
	while (off < len) {
		line = buf + off;
		nl = memchr(line, '\n', len - off);
		n = nl ? (size_t)(nl - line) : len - off;
		off += nl ? n + 1 : n;
		if (procnet_parse_line(line, n, v6, &e))
			continue;
		if (fn) {
			err = fn(ctx, &e);
			if (err < 0)
				return err;
		}
		if (count < INT32_MAX)
			count++;
	}
	return count;
}

struct listening_ctx {
	struct procnet_entry *out;
	size_t max, stored, total;
};

static int on_listening(void *ctx, const struct procnet_entry *e)
{
	struct listening_ctx *c = ctx;

	if (e->state != PROCNET_TCP_LISTEN || !e->inode)
		return 0;
	if (c->stored < c->max)
		c->out[c->stored++] = *e;
	c->total++;
	return 0;
}

int procnet_listening(const char *buf, size_t len, bool v6, struct procnet_entry *out, size_t max,
		      size_t *total)
{
	struct listening_ctx c = { .out = out, .max = out ? max : 0 };
	int err;

	err = procnet_parse(buf, len, v6, on_listening, &c);
	if (err < 0)
		return err;
	if (total)
		*total = c.total;
	return (int)c.stored;
}

int procnet_format_addr(const struct procnet_entry *e, char *buf, size_t size)
{
	char tmp[INET6_ADDRSTRLEN], url[INET6_ADDRSTRLEN + 2];
	int n;

	if (!inet_ntop(e->v6 ? AF_INET6 : AF_INET, e->addr, tmp, sizeof(tmp)))
		return -EINVAL;
	n = snprintf(url, sizeof(url), e->v6 ? "[%s]" : "%s", tmp);
	if (n < 0 || !buf || (size_t)n >= size)
		return -ENOSPC;
	memcpy(buf, url, (size_t)n + 1);
	return 0;
}
