// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/procnet.h"

#include "base/array.h"

/* Real lines of this machine's /proc/net/tcp and tcp6 (python3 listeners and connections, a
 * Go net/http/pprof server in its own network namespace, time-wait sockets). */
#define V4_LISTEN "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 759029 1 000000002a0345ea 100 0 0 10 0                    \n"
#define V4_ESTAB "   2: 0100007F:1F90 0100007F:E384 01 00000000:00000000 00:00000000 00000000     0        0 759031 1 00000000b2eb19db 20 0 0 10 -1                    \n"
#define V4_TIMEWAIT "   4: 020200C0:853C 507100CB:0050 06 00000000:00000000 03:00001040 00000000     0        0 0 3 000000009995bbe6                                      \n"
#define V4_ANY "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 590 1 0000000088ad2b53 100 0 0 10 0                       \n"
#define V4_GO "   0: 0100007F:17AC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 763442 1 000000007c325b04 100 0 0 10 0                    \n"
#define V6_ANY "   0: 00000000000000000000000000000000:2328 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 759028 1 00000000b3dfaf9c 100 0 0 10 0\n"
#define V6_MAPPED "   1: 0000000000000000FFFF00000100007F:1B9E 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 759034 1 000000007c5a440a 100 0 0 10 0\n"
#define V6_LOOP "   2: 00000000000000000000000001000000:17AD 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 759027 1 00000000508f7021 100 0 0 10 0\n"
#define V6_ESTAB "   3: 00000000000000000000000001000000:CAD8 00000000000000000000000001000000:17AD 01 00000000:00000000 00:00000000 00000000     0        0 759032 2 000000007ce49fb3 20 0 0 10 -1\n"
#define V4_HEADER "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     \n"
#define V6_HEADER "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

struct line_case {
	const char *line;
	size_t len;		/* 0: strlen(line) */
	bool v6;
	int ret;
	const char *addr;	/* procnet_format_addr() */
	uint16_t port;
	uint8_t state;
	uint64_t inode;
};

static void test_parse_line(void **state __attribute__((unused)))
{
	static const struct line_case cases[] = {
		{ V4_LISTEN, 0, false, 0, "127.0.0.1", 8080, 0x0a, 759029 },
		{ V4_ESTAB, 0, false, 0, "127.0.0.1", 8080, 0x01, 759031 },
		{ V4_TIMEWAIT, 0, false, 0, "192.0.2.2", 34108, 0x06, 0 },
		{ V4_ANY, 0, false, 0, "0.0.0.0", 2024, 0x0a, 590 },
		{ V4_GO, 0, false, 0, "127.0.0.1", 6060, 0x0a, 763442 },
		{ V6_ANY, 0, true, 0, "[::]", 9000, 0x0a, 759028 },
		{ V6_MAPPED, 0, true, 0, "[::ffff:127.0.0.1]", 7070, 0x0a, 759034 },
		{ V6_LOOP, 0, true, 0, "[::1]", 6061, 0x0a, 759027 },
		{ V6_ESTAB, 0, true, 0, "[::1]", 51928, 0x01, 759032 },
		/* Without the newline; only up to the inode; lower-case hex. */
		{ "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 42",
		  0, false, 0, "127.0.0.1", 8080, 0x0a, 42 },
		{ "0: 0100007f:1f90 00000000:0000 0a 00000000:00000000 00:00000000 00000000 0 0 42",
		  0, false, 0, "127.0.0.1", 8080, 0x0a, 42 },
		/* A 64-bit timer value and a large inode. */
		{ "7: 0100007F:1F90 00000000:0000 0A 00000000:00000000 02:FFFFFFFF00001040 00000000 4294967295 -1 18446744073709551615",
		  0, false, 0, "127.0.0.1", 8080, 0x0a, UINT64_MAX },
		/* @len cuts before the garbage that follows. */
		{ V4_GO "garbage", sizeof(V4_GO) - 1, false, 0, "127.0.0.1", 6060, 0x0a, 763442 },

		/* Error rows. */
		{ NULL, 0, false, -EINVAL },
		{ "", 0, false, -EINVAL },
		{ "\n", 0, false, -EINVAL },
		{ V4_HEADER, 0, false, -EINVAL },
		{ V6_HEADER, 0, true, -EINVAL },
		{ V4_LISTEN, 0, true, -EINVAL },	/* an IPv4 line read as tcp6 */
		{ V6_ANY, 0, false, -EINVAL },		/* an IPv6 line read as tcp */
		{ V4_LISTEN, 40, false, -EINVAL },	/* truncated after the state */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 ",
		  0, false, -EINVAL },			/* missing inode */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0\n",
		  0, false, -EINVAL },			/* missing inode, no trailing space */
		{ "   1: 0100007G:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* bad hex in the address */
		{ "   1: 0100007F:1F9Z 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* bad hex in the port */
		{ "   1: 0100007F:1F90 00000000:0000 0X 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* bad hex in the state */
		{ "   1: 0100007F:1F90 00000000:0000 0A 0000000X:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* bad hex in the queues */
		{ "   1: 00100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* overlong address */
		{ "   1: 0100007F:01F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* overlong port */
		{ "   1: 0100007F:1F9 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* short port */
		{ "   1: 0100007F:1F90 00000000:0000 0AA 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* overlong state */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 123456789012345678901",
		  0, false, -EINVAL },			/* overlong inode */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 18446744073709551616",
		  0, false, -EINVAL },			/* inode overflows 64 bits */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 12a",
		  0, false, -EINVAL },			/* inode not decimal */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 4294967296 0 1",
		  0, false, -EINVAL },			/* uid beyond 32 bits */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 - 1",
		  0, false, -EINVAL },			/* a lone minus */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:000000000000000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* 18-digit timer */
		{ "   1 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* no colon after the slot */
		{ "   1: 0100007F-1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* no colon before the port */
		{ "   1: 0100007F:1F90\t00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		  0, false, -EINVAL },			/* a tab */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1\0",
		  82, false, -EINVAL },			/* a NUL inside @len */
		{ "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 "
		  "1111111111111111111111111111111111111111111111111111111111111111111111",
		  0, false, -EINVAL },			/* a field longer than any the kernel prints */
		{ "<html><body>not a tcp file</body></html>", 0, false, -EINVAL },
	};
	struct procnet_entry e;
	char addr[48];
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		len = cases[i].len ? cases[i].len : cases[i].line ? strlen(cases[i].line) : 0;
		memset(&e, 0xa5, sizeof(e));
		assert_int_equal(procnet_parse_line(cases[i].line, len, cases[i].v6, &e),
				 cases[i].ret);
		if (cases[i].ret) {
			assert_int_equal(e.port, 0xa5a5);	/* untouched */
			continue;
		}
		assert_int_equal(e.v6, cases[i].v6);
		assert_int_equal(e.port, cases[i].port);
		assert_int_equal(e.state, cases[i].state);
		assert_true(e.inode == cases[i].inode);
		assert_int_equal(procnet_format_addr(&e, addr, sizeof(addr)), 0);
		assert_string_equal(addr, cases[i].addr);
	}
}

struct collect {
	uint64_t inodes[16];
	size_t n;
	int stop_after;		/* > 0: return -ECANCELED at that entry */
};

static int on_entry(void *ctx, const struct procnet_entry *e)
{
	struct collect *c = ctx;

	if (c->n < ARRAY_SIZE(c->inodes))
		c->inodes[c->n] = e->inode;
	c->n++;
	if (c->stop_after && (int)c->n == c->stop_after)
		return -ECANCELED;
	return 0;
}

static void test_parse_file(void **state __attribute__((unused)))
{
	static const struct {
		const char *buf;
		bool v6;
		int ret;
		size_t n;
		uint64_t inodes[6];
	} cases[] = {
		{ V4_HEADER V4_ANY V4_LISTEN V4_ESTAB V4_TIMEWAIT, false, 4, 4,
		  { 590, 759029, 759031, 0 } },
		{ V6_HEADER V6_ANY V6_MAPPED V6_LOOP V6_ESTAB, true, 4, 4,
		  { 759028, 759034, 759027, 759032 } },
		{ V4_HEADER, false, 0, 0 },
		{ V6_HEADER, true, 0, 0 },
		/* A malformed line is skipped; a last line without '\n' is parsed. */
		{ V4_HEADER "garbage\n" V4_LISTEN "\n\n"
		  "0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 7",
		  false, 2, 2, { 759029, 7 } },
		/* A truncated last line is skipped. */
		{ V4_HEADER V4_GO "   1: 0100007F:1F90 00000000:0000 0A 00000", false, 1, 1,
		  { 763442 } },
		/* IPv6 lines in a tcp file are malformed there. */
		{ V4_HEADER V6_ANY, false, 0, 0 },

		/* Error rows: no header. */
		{ "", false, -EINVAL },
		{ V4_LISTEN, false, -EINVAL },
		{ "\n" V4_HEADER V4_LISTEN, false, -EINVAL },
		{ "\x7f" "ELF\x02\x01\x01", false, -EINVAL },
	};
	struct collect c;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		memset(&c, 0, sizeof(c));
		assert_int_equal(procnet_parse(cases[i].buf, strlen(cases[i].buf), cases[i].v6,
					       on_entry, &c),
				 cases[i].ret);
		if (cases[i].ret < 0)
			continue;
		assert_int_equal(c.n, cases[i].n);
		for (j = 0; j < c.n; j++)
			assert_true(c.inodes[j] == cases[i].inodes[j]);
		/* Without a callback it still counts. */
		assert_int_equal(procnet_parse(cases[i].buf, strlen(cases[i].buf), cases[i].v6,
					       NULL, NULL),
				 cases[i].ret);
	}

	/* The callback's error stops the walk and is returned. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	assert_int_equal(procnet_parse(V6_HEADER V6_ANY V6_MAPPED V6_LOOP, sizeof(V6_HEADER V6_ANY
				       V6_MAPPED V6_LOOP) - 1, true, on_entry, &c),
			 -ECANCELED);
	assert_int_equal(c.n, 2);
	assert_int_equal(procnet_parse(NULL, 0, false, NULL, NULL), -EINVAL);
}

static void test_listening(void **state __attribute__((unused)))
{
	static const char v4[] = V4_HEADER V4_ANY V4_ESTAB V4_LISTEN V4_TIMEWAIT V4_GO;
	static const char v6[] = V6_HEADER V6_ESTAB V6_ANY V6_MAPPED V6_LOOP;
	struct procnet_entry out[8];
	size_t total = 99;

	assert_int_equal(procnet_listening(v4, sizeof(v4) - 1, false, out, 8, &total), 3);
	assert_int_equal(total, 3);
	assert_int_equal(out[0].port, 2024);
	assert_int_equal(out[1].port, 8080);
	assert_int_equal(out[2].port, 6060);
	assert_true(out[2].inode == 763442);

	/* Bounded: two stored, all four counted. */
	assert_int_equal(procnet_listening(v6, sizeof(v6) - 1, true, out, 2, &total), 2);
	assert_int_equal(total, 3);
	assert_int_equal(out[0].port, 9000);
	assert_int_equal(out[1].port, 7070);
	assert_int_equal(procnet_listening(v6, sizeof(v6) - 1, true, NULL, 0, &total), 0);
	assert_int_equal(total, 3);

	assert_int_equal(procnet_listening("x", 1, true, out, 8, &total), -EINVAL);
}

static void test_format_addr(void **state __attribute__((unused)))
{
	struct procnet_entry e;
	char buf[48];

	assert_int_equal(procnet_parse_line(V6_MAPPED, strlen(V6_MAPPED), true, &e), 0);
	strcpy(buf, "untouched");
	assert_int_equal(procnet_format_addr(&e, buf, 10), -ENOSPC);
	assert_string_equal(buf, "untouched");
	assert_int_equal(procnet_format_addr(&e, buf, 18), -ENOSPC);
	assert_int_equal(procnet_format_addr(&e, buf, 19), 0);
	assert_string_equal(buf, "[::ffff:127.0.0.1]");
	assert_int_equal(procnet_format_addr(&e, NULL, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_listening),
		cmocka_unit_test(test_format_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
