// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "runtimes/detect.h"
#include "runtimes/go/buildinfo.h"

#include "base/array.h"
#include "tests/unit/fixtures.h"

typedef int (*name_parser_fn_t)(const char *, char *, size_t);

struct name_case {
	const char *in;
	int ret;
	const char *ver;
};

static void run_name_cases(name_parser_fn_t fn, const struct name_case *cases, size_t n)
{
	char ver[32];
	size_t i;

	for (i = 0; i < n; i++) {
		print_message("case %zu: %s\n", i, cases[i].in ? cases[i].in : "(null)");
		strcpy(ver, "untouched");
		assert_int_equal(fn(cases[i].in, ver, sizeof(ver)), cases[i].ret);
		assert_string_equal(ver, cases[i].ret ? "untouched" : cases[i].ver);
	}
}

static void test_python_from_lib(void **state __attribute__((unused)))
{
	static const struct name_case cases[] = {
		{ "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", 0, "3.11" },
		{ "/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0", 0, "3.12" },
		{ "libpython3.6m.so.1.0", 0, "3.6" },
		{ "libpython2.7.so", 0, "2.7" },
		{ "libpython3.13t.so.1.0", 0, "3.13" },
		{ "libpython3.8d.so", 0, "3.8" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "garbage", -EINVAL },
		{ "libpython", -EINVAL },
		{ "libpython3.so", -EINVAL },			/* the stable-ABI shim: no minor */
		{ "libpython3.11", -EINVAL },			/* no .so */
		{ "libpython3.11.a", -EINVAL },
		{ "libpython3.11.sox", -EINVAL },
		{ "libpython3.99999.so", -EINVAL },		/* too many digits */
		{ "libpython1.0.so", -EINVAL },
		{ "libpython3.100.so", -EINVAL },
		{ "/lib/libpython3.11.so/other.so", -EINVAL },	/* only the last component counts */
		{ "libpython3.11aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.so", -EINVAL },
	};

	run_name_cases(runtime_python_version_from_lib, cases, ARRAY_SIZE(cases));
}

static void test_python_from_exe(void **state __attribute__((unused)))
{
	static const struct name_case cases[] = {
		{ "/usr/bin/python3.11", 0, "3.11" },
		{ "python3.12", 0, "3.12" },
		{ "/root/.pyenv/versions/2.7.18/bin/python2.7", 0, "2.7" },
		{ "python3.13t", 0, "3.13" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "python3", -EINVAL },
		{ "python", -EINVAL },
		{ "python3.11-config", -EINVAL },
		{ "ipython3.11", -EINVAL },
		{ "python3.", -EINVAL },
		{ "python33333.1", -EINVAL },
		{ "python3.11/", -EINVAL },
	};

	run_name_cases(runtime_python_version_from_exe, cases, ARRAY_SIZE(cases));
}

static void test_python_from_hex(void **state __attribute__((unused)))
{
	static const struct {
		uint64_t hex;
		int ret;
		const char *ver;
	} cases[] = {
		{ 0x030b02f0, 0, "3.11" },
		{ 0x030c01f0, 0, "3.12" },
		{ 0x030d00a1, 0, "3.13" },		/* 3.13.0a1 */
		{ 0x02070ff0, 0, "2.7" },
		/* Error rows. */
		{ 0, -EINVAL },
		{ 0x030b0200, -EINVAL },		/* release level 0 */
		{ 0x01000000f0, -EINVAL },		/* above 32 bits */
		{ 0x010000f0, -EINVAL },		/* major 1 */
		{ 0x03ff00f0, -EINVAL },		/* minor 255 */
		{ 0xffffffff, -EINVAL },
	};
	char ver[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(ver, "untouched");
		assert_int_equal(runtime_python_version_from_hex(cases[i].hex, ver, sizeof(ver)),
				 cases[i].ret);
		assert_string_equal(ver, cases[i].ret ? "untouched" : cases[i].ver);
	}
}

static void test_jvm_release(void **state __attribute__((unused)))
{
	static const struct name_case cases[] = {
		{ "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6-Debian-1deb12u1\"\n"
		  "JAVA_VERSION=\"17.0.15\"\nJAVA_VERSION_DATE=\"2025-04-15\"\n", 0, "17" },
		{ "JAVA_VERSION=\"1.8.0_392\"\n", 0, "8" },
		{ "JAVA_VERSION=\"21\"", 0, "21" },
		{ "JAVA_VERSION=25.0.1\r\n", 0, "25" },
		{ "JAVA_VERSION_DATE=\"2025-04-15\"\nJAVA_VERSION=\"11.0.2\"", 0, "11" },
		/* Error rows. */
		{ "", -EINVAL },
		{ "garbage\n\n\n", -EINVAL },
		{ "JAVA_VERSION_DATE=\"2025-04-15\"\n", -EINVAL },
		{ "JAVA_VERSION=", -EINVAL },
		{ "JAVA_VERSION=\"\"", -EINVAL },
		{ "JAVA_VERSION=\"abc\"", -EINVAL },
		{ "JAVA_VERSION=\"1.\"", -EINVAL },
		{ "JAVA_VERSION=\"4.0\"", -EINVAL },			/* below 5 */
		{ "JAVA_VERSION=\"1700000.0\"", -EINVAL },		/* overlong */
		{ "JAVA_VERSION=\"17x\"", -EINVAL },
		{ " JAVA_VERSION=\"17\"", -EINVAL },			/* not at a line start */
	};
	char ver[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(ver, "untouched");
		assert_int_equal(runtime_jvm_version_from_release(cases[i].in, strlen(cases[i].in),
								  ver, sizeof(ver)),
				 cases[i].ret);
		assert_string_equal(ver, cases[i].ret ? "untouched" : cases[i].ver);
	}
	/* Not NUL-terminated: the length bounds the parse. */
	assert_int_equal(runtime_jvm_version_from_release("JAVA_VERSION=\"17\"", 16, ver, sizeof(ver)),
			 0);
	assert_string_equal(ver, "17");
	assert_int_equal(runtime_jvm_version_from_release("JAVA_VERSION=\"17\"", 15, ver, sizeof(ver)),
			 -EINVAL);
	assert_int_equal(runtime_jvm_version_from_release("JAVA_VERSION=\"17\"", 17, ver, 2), -ENOSPC);
	assert_int_equal(runtime_jvm_version_from_release(NULL, 0, ver, sizeof(ver)), -EINVAL);
}

static void test_jvm_path(void **state __attribute__((unused)))
{
	static const struct name_case cases[] = {
		{ "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", 0, "17" },
		{ "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so", 0, "25" },
		{ "/opt/jdk-21.0.2+13/lib/server/libjvm.so", 0, "21" },
		{ "/usr/lib/jvm/jdk1.8.0_202/jre/lib/amd64/server/libjvm.so", 0, "8" },
		{ "/usr/lib/jvm/java-1.8.0-openjdk-1.8.0.392.b08-4.el8.x86_64/jre/lib/amd64/server/libjvm.so",
		  0, "8" },
		{ "/usr/lib/jvm/zulu17.44.53-ca-jdk17.0.8.1-linux_x64/lib/server/libjvm.so", 0, "17" },
		{ "/usr/lib/jvm/x86_64-jdk17/lib/server/libjvm.so", 0, "17" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "/opt/java/openjdk/lib/server/libjvm.so", -EINVAL },	/* no version in the path */
		{ "/usr/lib/jvm/java-openjdk-amd64/lib/server/libjvm.so", -EINVAL }, /* not "64" */
		{ "/usr/lib/jvm/default-java/lib/server/libjvm.so", -EINVAL },
		{ "/srv/app17/lib/libjvm.so", -EINVAL },
		{ "/usr/lib/jvm/java-99999-openjdk/libjvm.so", -EINVAL },
	};

	run_name_cases(runtime_jvm_version_from_path, cases, ARRAY_SIZE(cases));
}

static int go_string_parser(const char *s, char *ver, size_t size)
{
	return runtime_go_version_from_string(s, s ? strlen(s) : 0, ver, size);
}

static void test_go_string(void **state __attribute__((unused)))
{
	static const struct name_case cases[] = {
		{ "go1.19.8", 0, "1.19" },
		{ "go1.21rc2", 0, "1.21" },
		{ "go1.22.0 X:boringcrypto", 0, "1.22" },
		{ "devel go1.23-abcdef Tue Jan 2 2024", 0, "1.23" },
		{ "go1.9", 0, "1.9" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "g", -EINVAL },
		{ "go", -EINVAL },
		{ "go1", -EINVAL },
		{ "go1.", -EINVAL },
		{ "devel +abc", -EINVAL },
		{ "1.19.8", -EINVAL },
		{ "go0.1", -EINVAL },
		{ "go1.123456", -EINVAL },
	};

	run_name_cases(go_string_parser, cases, ARRAY_SIZE(cases));
}

/* A fake address space for the pre-1.18 pointer format. */
struct fake_mem {
	uint64_t base;
	const uint8_t *data;
	size_t len;
	int err;
};

static int fake_vread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake_mem *m = ctx;

	if (m->err)
		return m->err;
	if (addr < m->base || addr - m->base > m->len || len > m->len - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->data + (addr - m->base), len);
	return 0;
}

#define BI_MAGIC "\xff Go buildinf:"
#define BI_PAD16 "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"

static void test_go_buildinfo(void **state __attribute__((unused)))
{
	/* Pre-1.18, little endian, 8-byte pointers: header -> {data, len} at 0x1000 -> text. */
	static const uint8_t mem_le8[] = {
		/* 0x1000: string header */ 0x10, 0x10, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0,
		/* 0x1010 */ 'g', 'o', '1', '.', '1', '6', '.', '5',
	};
	/* Pre-1.18, big endian, 4-byte pointers. */
	static const uint8_t mem_be4[] = {
		/* 0x2000 */ 0, 0, 0x20, 0x08, 0, 0, 0, 9,
		/* 0x2008 */ 'g', 'o', '1', '.', '1', '3', '.', '1', '5',
	};
	static const uint8_t mem_long[] = {
		0x10, 0x10, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
	};
	static const struct {
		const char *blob;
		size_t len;
		const uint8_t *mem;
		size_t mem_len;
		uint64_t base;
		int vread_err;
		int ret;
		const char *ver;
	} cases[] = {
		/* Go 1.18+: inline varint strings. */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x08go1.19.8\x00", 32 + 10, NULL, 0, 0, 0, 0, "1.19" },
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x08go1.19.8", 32 + 9, NULL, 0, 0, 0, 0, "1.19" },
		{ BI_MAGIC "\x04\x03" BI_PAD16 "\x09go1.21rc2", 32 + 10, NULL, 0, 0, 0, 0, "1.21" },
		/* a two-byte varint (0x80 | 9, 0): still 9 */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x89\x00go1.20.14", 32 + 11, NULL, 0, 0, 0, 0, "1.20" },
		/* Pointer format. */
		{ BI_MAGIC "\x08\x00" "\x00\x10\x00\x00\x00\x00\x00\x00" "\0\0\0\0\0\0\0\0", 32,
		  mem_le8, sizeof(mem_le8), 0x1000, 0, 0, "1.16" },
		{ BI_MAGIC "\x04\x01" "\x00\x00\x20\x00" "\0\0\0\0" "\0\0\0\0\0\0\0\0", 32, mem_be4,
		  sizeof(mem_be4), 0x2000, 0, 0, "1.13" },
		/* Error rows. */
		{ "", 0, NULL, 0, 0, 0, -EINVAL },
		{ "garbage garbage garbage garbage garbage", 39, NULL, 0, 0, 0, -EINVAL },
		{ BI_MAGIC, 14, NULL, 0, 0, 0, -EINVAL },				/* truncated header */
		{ BI_MAGIC "\x08\x02" BI_PAD16, 32, NULL, 0, 0, 0, -EINVAL },		/* no varint */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x08go1.19", 32 + 7, NULL, 0, 0, 0, -EINVAL }, /* short */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x00", 33, NULL, 0, 0, 0, -EINVAL },	/* empty */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x80", 33, NULL, 0, 0, 0, -EINVAL },	/* cut varint */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 43, NULL,
		  0, 0, 0, -EINVAL },							/* varint > 64 bits */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x81\x01", 34, NULL, 0, 0, 0, -EINVAL }, /* overlong */
		{ BI_MAGIC "\x08\x02" BI_PAD16 "\x08xx1.19.8", 32 + 9, NULL, 0, 0, 0, -EINVAL },
		{ BI_MAGIC "\x03\x00" BI_PAD16, 32, mem_le8, sizeof(mem_le8), 0x1000, 0, -EINVAL },
		{ BI_MAGIC "\x08\x00" "\x00\x10\x00\x00\x00\x00\x00\x00" "\0\0\0\0\0\0\0\0", 32, NULL,
		  0, 0, 0, -EINVAL },							/* no vread */
		{ BI_MAGIC "\x08\x00" "\x00\x10\x00\x00\x00\x00\x00\x00" "\0\0\0\0\0\0\0\0", 32,
		  mem_le8, sizeof(mem_le8), 0x1000, -EIO, -EIO },			/* vread fails */
		{ BI_MAGIC "\x08\x00" "\x00\x90\x00\x00\x00\x00\x00\x00" "\0\0\0\0\0\0\0\0", 32,
		  mem_le8, sizeof(mem_le8), 0x1000, 0, -EFAULT },			/* bad pointer */
		{ BI_MAGIC "\x08\x00" "\x00\x10\x00\x00\x00\x00\x00\x00" "\0\0\0\0\0\0\0\0", 32,
		  mem_long, sizeof(mem_long), 0x1000, 0, -EINVAL },			/* len 65535 */
	};
	struct fake_mem m;
	char ver[32];
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		m = (struct fake_mem){ cases[i].base, cases[i].mem, cases[i].mem_len, cases[i].vread_err };
		strcpy(ver, "untouched");
		ret = runtime_go_parse_buildinfo(cases[i].blob, cases[i].len,
						 cases[i].mem ? fake_vread : NULL, &m, ver, sizeof(ver));
		assert_int_equal(ret, cases[i].ret);
		assert_string_equal(ver, cases[i].ret ? "untouched" : cases[i].ver);
	}
	/* A buffer too small for the version. */
	assert_int_equal(runtime_go_parse_buildinfo(BI_MAGIC "\x08\x02" BI_PAD16 "\x08go1.19.8", 41,
						    NULL, NULL, ver, 4),
			 -ENOSPC);
	assert_int_equal(runtime_go_parse_buildinfo(NULL, 0, NULL, NULL, ver, sizeof(ver)), -EINVAL);
}

static void test_node_ruby_lib(void **state __attribute__((unused)))
{
	static const struct name_case node[] = {
		{ "/usr/lib/x86_64-linux-gnu/libnode.so.108", 0, "18" },
		{ "libnode.so.115", 0, "20" },
		{ "libnode.so.127.0", 0, "22" },
		{ "libnode.so.72", 0, "12" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "libnode.so", -EINVAL },
		{ "libnode.so.", -EINVAL },
		{ "libnode.so.999", -EINVAL },		/* unknown ABI */
		{ "libnode.so.115x", -EINVAL },
		{ "libnode.so.11500000", -EINVAL },
	};
	static const struct name_case ruby[] = {
		{ "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1", 0, "3.1" },
		{ "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2", 0, "3.1" },
		{ "libruby.so.3.3", 0, "3.3" },
		{ "libruby.so.2.7.8", 0, "2.7" },
		{ "libruby3.0.so", 0, "3.0" },
		/* Error rows. */
		{ NULL, -EINVAL },
		{ "", -EINVAL },
		{ "libruby.so", -EINVAL },
		{ "libruby-static.a", -EINVAL },
		{ "libruby-3.so", -EINVAL },
		{ "libruby-3.1x.so", -EINVAL },
		{ "librubyx.so.3.1", -EINVAL },
	};

	run_name_cases(runtime_node_version_from_lib, node, ARRAY_SIZE(node));
	run_name_cases(runtime_ruby_version_from_lib, ruby, ARRAY_SIZE(ruby));
}

static void test_scan(void **state __attribute__((unused)))
{
#define B(s) s, sizeof(s) - 1
	static const struct {
		enum runtime_kind kind;
		const char *buf;
		size_t len;
		int ret;
		const char *ver;
	} cases[] = {
		{ RUNTIME_NODE, B("\0\0abc\0node.js/v20.20.2\0xyz"), 0, "20" },
		{ RUNTIME_NODE, B("https://nodejs.org/download/release/v18.19.0/node-v18.19.0.tar.gz"), 0, "18" },
		{ RUNTIME_NODE, B("node.js/vX\0node.js/v22.1.0-pre\0"), 0, "22" },
		{ RUNTIME_RUBY, B("\0ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) [x86_64-linux-gnu]"), 0, "3.1" },
		{ RUNTIME_RUBY, B("ruby 3.3.0 (2023-12-25 revision 5124f9ac75) [x86_64-linux]"), 0, "3.3" },
		{ RUNTIME_RUBY, B("ruby 2 ruby 3.4.0dev (2024"), 0, "3.4" },
		{ RUNTIME_PYTHON, B("zlib\0" "1.2.13\0" "3.10.12\0"), 0, "3.10" },
		{ RUNTIME_PYTHON, B("\0" "2.7.18+\0"), 0, "2.7" },
		{ RUNTIME_PYTHON, B("\0" "3.12.0rc1\0"), 0, "3.12" },
		/* Error rows. */
		{ RUNTIME_NODE, B(""), -ENOENT },
		{ RUNTIME_NODE, B("garbage"), -ENOENT },
		{ RUNTIME_NODE, B("node.js/v20.20.2"), -ENOENT },	/* cut at the buffer's end */
		{ RUNTIME_NODE, B("node.js/v20.20\0"), -ENOENT },
		{ RUNTIME_NODE, B("node.js/v200000.1.2\0"), -ENOENT },
		{ RUNTIME_NODE, B("/download/release/v20.20.2-x/"), -ENOENT },
		{ RUNTIME_RUBY, B("ruby 3.1.2p20"), -ENOENT },
		{ RUNTIME_RUBY, B("ruby 3.1.2p20 ("), 0, "3.1" },
		{ RUNTIME_RUBY, B("ruby 3.1 (x)"), -ENOENT },
		{ RUNTIME_RUBY, B("ruby 3.1.2ppppppppppppppppppppppppp ("), -ENOENT },
		{ RUNTIME_PYTHON, B("3.10.12\0"), -ENOENT },		/* no NUL before */
		{ RUNTIME_PYTHON, B("\0" "3.10.12"), -ENOENT },		/* cut */
		{ RUNTIME_PYTHON, B("\0" "4.1.1\0"), -ENOENT },
		{ RUNTIME_PYTHON, B("\0" "3.10.12 (main)\0"), -ENOENT },
		{ RUNTIME_PYTHON, B("\0" "3.100.1\0"), -ENOENT },
		{ RUNTIME_GO, B("go1.19.8"), -EINVAL },			/* not a scanned kind */
		{ RUNTIME_NATIVE, B(""), -EINVAL },
	};
#undef B
	char ver[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		strcpy(ver, "untouched");
		assert_int_equal(runtime_scan_version(cases[i].kind, cases[i].buf, cases[i].len, ver,
						      sizeof(ver)),
				 cases[i].ret);
		assert_string_equal(ver, cases[i].ret ? "untouched" : cases[i].ver);
	}
	assert_int_equal(runtime_scan_version(RUNTIME_NODE, NULL, 0, ver, sizeof(ver)), -EINVAL);
	assert_int_equal(runtime_scan_version(RUNTIME_NODE, "node.js/v20.1.2", 16, ver, 2), -ENOSPC);
}

static void test_names(void **state __attribute__((unused)))
{
	static const struct {
		enum runtime_kind kind;
		const char *name, *version, *display;
	} cases[] = {
		{ RUNTIME_NATIVE, "native", "", "native" },
		{ RUNTIME_PYTHON, "python", "3.11", "CPython 3.11" },
		{ RUNTIME_JVM, "java", "17", "JVM (Java 17)" },
		{ RUNTIME_GO, "go", "1.19", "Go 1.19" },
		{ RUNTIME_NODE, "node", "20", "Node.js 20" },
		/* Node.js by its release line; the version keeps the rest */
		{ RUNTIME_NODE, "node", "20.20.2", "Node.js 20" },
		{ RUNTIME_NODE, "node", "24.22.3", "Node.js 24" },
		{ RUNTIME_RUBY, "ruby", "3.1", "Ruby 3.1" },
		{ RUNTIME_GO, "go", "", "Go" },
		{ RUNTIME_JVM, "java", "", "JVM" },
		{ (enum runtime_kind)99, "native", "1", "native" },
	};
	struct runtime_info ri;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_string_equal(runtime_kind_name(cases[i].kind), cases[i].name);
		memset(&ri, 0, sizeof(ri));
		ri.kind = cases[i].kind;
		strcpy(ri.version, cases[i].version);
		runtime_info_format(&ri);
		assert_string_equal(ri.display, cases[i].display);
	}
}

/* --- runtime_detect on this process and on a fake /proc ----------------------------------- */

static void test_detect_self(void **state __attribute__((unused)))
{
	struct runtime_info ri;

	memset(&ri, 0xff, sizeof(ri));
	assert_int_equal(runtime_detect(NULL, getpid(), &ri), 0);
	assert_int_equal(ri.kind, RUNTIME_NATIVE);
	assert_string_equal(ri.version, "");
	assert_string_equal(ri.display, "native");
	assert_int_equal(runtime_detect(NULL, -1, &ri), -EINVAL);
	assert_int_equal(runtime_detect(NULL, getpid(), NULL), -EINVAL);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX], *slash;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	slash = strrchr(path, '/');
	*slash = '\0';
	assert_int_equal(mkdir_p(path), 0);
	*slash = '/';
	fx_write(path, data, len);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * A Go-like executable without section headers (as after sstrip): one RW PT_LOAD at 0x400000
 * that holds the build info at 0x400100, in the 1.18+ format (@inline) or the older pointer
 * format. Only the scan of the data segment can find it.
 */
static size_t make_go_elf(uint8_t *f, size_t size, bool inline_ver)
{
	const uint64_t base = 0x400000;
	const size_t len = 0x200;

	assert_true(size >= len);
	memset(f, 0, len);
	memcpy(f, "\x7f" "ELF\x02\x01\x01", 7);
	put_le(f + 16, 2, 2);		/* ET_EXEC */
	put_le(f + 18, 62, 2);		/* EM_X86_64 */
	put_le(f + 20, 1, 4);
	put_le(f + 24, base + 0x100, 8);
	put_le(f + 32, 64, 8);		/* e_phoff */
	put_le(f + 52, 64, 2);
	put_le(f + 54, 56, 2);
	put_le(f + 56, 1, 2);		/* e_phnum */
	put_le(f + 64, 1, 4);		/* PT_LOAD */
	put_le(f + 68, 6, 4);		/* PF_R | PF_W */
	put_le(f + 64 + 16, base, 8);
	put_le(f + 64 + 24, base, 8);
	put_le(f + 64 + 32, len, 8);
	put_le(f + 64 + 40, len, 8);
	put_le(f + 64 + 48, 0x1000, 8);
	/* A decoy magic at an unaligned address first. */
	memcpy(f + 0xf1, BI_MAGIC, 14);
	memcpy(f + 0x100, BI_MAGIC, 14);
	f[0x10e] = 8;
	if (inline_ver) {
		f[0x10f] = 2;
		memcpy(f + 0x120, "\x08go1.19.8", 9);
	} else {
		put_le(f + 0x110, base + 0x180, 8);	/* -> string header */
		put_le(f + 0x180, base + 0x1a0, 8);
		put_le(f + 0x188, 8, 8);
		memcpy(f + 0x1a0, "go1.17.3", 8);
	}
	return len;
}


static void fake_pid(const char *proc, int pid, const char *maps, const char *exe_target)
{
	char d[PATH_MAX], link[PATH_MAX + 8];

	snprintf(d, sizeof(d), "%s/%d", proc, pid);
	write_file(d, "stat", "1 (x) R", 7);
	if (maps)
		write_file(d, "maps", maps, strlen(maps));
	snprintf(link, sizeof(link), "%s/root", d);
	assert_int_equal(mkdir_p(link), 0);
	if (exe_target) {
		snprintf(link, sizeof(link), "%s/exe", d);
		assert_int_equal(symlink(exe_target, link), 0);
	}
}

/* /opt/jdk/release of @pid's root made a FIFO, a char device (as root) or a 1 MiB file. */
static void hostile_release(const char *proc, int pid, const char *kind)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/root/opt/jdk", proc, pid);
	assert_int_equal(mkdir_p(path), 0);
	snprintf(path, sizeof(path), "%s/%d/root/opt/jdk/release", proc, pid);
	if (!strcmp(kind, "fifo")) {
		assert_int_equal(mkfifo(path, 0644), 0);
	} else if (!strcmp(kind, "device")) {
		if (mknod(path, S_IFCHR | 0644, makedev(1, 5)))	/* /dev/zero; not root: a FIFO */
			assert_int_equal(mkfifo(path, 0644), 0);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 1 << 20), 0);
		close(fd);
	}
}

static void test_detect_fake_proc(void **state __attribute__((unused)))
{
	static const char jvm_maps[] =
		"55d4c6a00000-55d4c6a01000 r--p 00000000 fe:00 1 /usr/lib/jvm/java-17-openjdk-amd64/bin/java\n"
		"7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n";
	static const char jvm_nover_maps[] =
		"7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /opt/java/openjdk/lib/server/libjvm.so (deleted)\n";
	static const char release[] = "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"21.0.2\"\n";
	static const char outside_release[] = "JAVA_VERSION=\"11.0.2\"\n";
	struct {
		int pid;
		const char *maps;
		const char *exe;	/* relative to the temp dir, or NULL */
		int ret;
		enum runtime_kind kind;
		const char *display;
	} cases[] = {
		/* release file in the root beats the path */
		{ 100, jvm_maps, NULL, 0, RUNTIME_JVM, "JVM (Java 21)" },
		/* no release: the path */
		{ 101, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n",
		  NULL, 0, RUNTIME_JVM, "JVM (Java 17)" },
		/* release is a link out of the root: not followed, no version anywhere */
		{ 102, jvm_nover_maps, NULL, 0, RUNTIME_JVM, "JVM" },
		{ 103, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 3 /usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0\n",
		  NULL, 0, RUNTIME_PYTHON, "CPython 3.12" },
		{ 104, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 4 /usr/lib/libnode.so.115\n", NULL, 0,
		  RUNTIME_NODE, "Node.js 20" },
		{ 105, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 5 /usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1\n",
		  NULL, 0, RUNTIME_RUBY, "Ruby 3.1" },
		{ 106, "", "go-inline", 0, RUNTIME_GO, "Go 1.19" },
		{ 107, "", "go-ptr", 0, RUNTIME_GO, "Go 1.17" },
		/* like a kernel thread: empty maps, no exe */
		{ 108, "", NULL, 0, RUNTIME_NATIVE, "native" },
		/* an exe that is not ELF */
		{ 109, "", "not-elf", 0, RUNTIME_NATIVE, "native" },
		/* maps with garbage lines */
		{ 110, "garbage\n\n \n1-2 r 0 0 0 libpython3.11.so\nx x x x x /usr/lib/libjvm.so.bak\n", NULL, 0,
		  RUNTIME_NATIVE, "native" },
		{ 111, NULL, NULL, -ESRCH },	/* no such pid */
		/* release is a FIFO, a device node, an endless file: skipped, never waited on */
		{ 112, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /opt/jdk/lib/server/libjvm.so\n",
		  NULL, 0, RUNTIME_JVM, "JVM" },
		{ 113, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /opt/jdk/lib/server/libjvm.so\n",
		  NULL, 0, RUNTIME_JVM, "JVM" },
		{ 114, "7f0000000000-7f0000100000 r-xp 00000000 fe:00 2 /opt/jdk/lib/server/libjvm.so\n",
		  NULL, 0, RUNTIME_JVM, "JVM" },
	};
	char tmp[] = "/tmp/test_detect.XXXXXX", proc[64], path[PATH_MAX], target[PATH_MAX];
	struct runtime_detect_opts o = { 0 };
	struct runtime_info ri;
	uint8_t elf[0x200];
	size_t i, n;

	assert_non_null(mkdtemp(tmp));
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	n = make_go_elf(elf, sizeof(elf), true);
	write_file(tmp, "go-inline", elf, n);
	n = make_go_elf(elf, sizeof(elf), false);
	write_file(tmp, "go-ptr", elf, n);
	write_file(tmp, "not-elf", "#!/bin/sh\n", 10);
	write_file(tmp, "outside/release", outside_release, strlen(outside_release));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (!cases[i].maps)
			continue;
		if (cases[i].exe)
			snprintf(target, sizeof(target), "%s/%s", tmp, cases[i].exe);
		fake_pid(proc, cases[i].pid, cases[i].maps, cases[i].exe ? target : NULL);
	}
	snprintf(path, sizeof(path), "%s/100/root/usr/lib/jvm/java-17-openjdk-amd64", proc);
	write_file(path, "release", release, strlen(release));
	/* 102: /opt/java/openjdk/release -> ../../../../outside/release and an absolute link. */
	snprintf(path, sizeof(path), "%s/102/root/opt/java/openjdk", proc);
	assert_int_equal(mkdir_p(path), 0);
	snprintf(path, sizeof(path), "%s/102/root/opt/java/openjdk/release", proc);
	snprintf(target, sizeof(target), "%s/outside/release", tmp);
	assert_int_equal(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/102/root/opt/java/release", proc);
	assert_int_equal(symlink("../../../../../../../../outside/release", path), 0);

	hostile_release(proc, 112, "fifo");
	hostile_release(proc, 113, "device");
	hostile_release(proc, 114, "big");

	o.proc_root = proc;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu: pid %d\n", i, cases[i].pid);
		memset(&ri, 0, sizeof(ri));
		strcpy(ri.display, "untouched");
		assert_int_equal(runtime_detect(&o, cases[i].pid, &ri), cases[i].ret);
		if (cases[i].ret) {
			assert_string_equal(ri.display, "untouched");
			continue;
		}
		assert_int_equal(ri.kind, cases[i].kind);
		assert_string_equal(ri.display, cases[i].display);
	}

	/* A process that disappears: its directory exists but /proc/PID/stat is gone. */
	snprintf(path, sizeof(path), "%s/108/stat", proc);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(runtime_detect(&o, 108, &ri), -ESRCH);

	assert_int_equal(fx_rm_rf(tmp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_from_lib),
		cmocka_unit_test(test_python_from_exe),
		cmocka_unit_test(test_python_from_hex),
		cmocka_unit_test(test_jvm_release),
		cmocka_unit_test(test_jvm_path),
		cmocka_unit_test(test_go_string),
		cmocka_unit_test(test_go_buildinfo),
		cmocka_unit_test(test_node_ruby_lib),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_detect_self),
		cmocka_unit_test(test_detect_fake_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
