// SPDX-License-Identifier: Apache-2.0
/*
 * debugfile: the paths built from a build id and a .gnu_debuglink, the link itself, the CRC,
 * and the lookup in a fake proc root (tmpdir/<tgid>/root -> r<tgid>) and host root, with the
 * committed ELF fixtures: lib.so (build id eb0c48...), lib-stripped.so (the same build
 * stripped), exec (another build id), exec-nobid (none). Each lookup row builds its roots
 * with a shell snippet; objcopy adds the debuglinks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "base/array.h"
#include "symbols/debugfile.h"
#include "symbols/elf_file.h"

#define UNUSED __attribute__((unused))
#define LIB_BID "eb0c48940ed579cc2c812ac66178ed23b4bba18e"
#define LIB_DBG "usr/lib/debug/.build-id/eb/0c48940ed579cc2c812ac66178ed23b4bba18e.debug"

static char tmpdir[] = "/tmp/test_debugfile.XXXXXX";
static char fixtures[PATH_MAX];

static void sh(const char *dir, const char *cmd)
{
	char buf[4 * PATH_MAX];

	snprintf(buf, sizeof(buf), "set -e; mkdir -p '%s'; cd '%s'; F='%s'; T='%s'; %s", dir, dir,
		 fixtures, tmpdir, cmd);
	assert_int_equal(system(buf), 0);
}

static int setup(void **state UNUSED)
{
	if (!mkdtemp(tmpdir) || !realpath("tests/fixtures/elf", fixtures))
		return -1;
	return 0;
}

static int teardown(void **state UNUSED)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_build_id_path(void **state UNUSED)
{
	static const struct {
		const char *bid;
		size_t size;
		int ret;
		const char *path;
	} cases[] = {
		{ LIB_BID, 256, 0, "/usr/lib/debug/.build-id/eb/0c48940ed579cc2c812ac66178ed23b4bba18e.debug" },
		{ "abcd", 256, 0, "/usr/lib/debug/.build-id/ab/cd.debug" },
		{ "abc", 256, -EINVAL },		/* odd */
		{ "ab", 256, -EINVAL },			/* one byte */
		{ "EB0C", 256, -EINVAL },		/* not lowercase */
		{ "../x", 256, -EINVAL },
		{ "", 256, -EINVAL },
		{ NULL, 256, -EINVAL },
		{ LIB_BID, 40, -ENAMETOOLONG },
	};
	char buf[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(debugfile_build_id_path(cases[i].bid, buf, cases[i].size),
				 cases[i].ret);
		if (!cases[i].ret)
			assert_string_equal(buf, cases[i].path);
	}
}

static void test_link_path(void **state UNUSED)
{
	static const struct {
		const char *path, *name;
		unsigned i;
		int ret;
		const char *out;
	} cases[] = {
		{ "/app/bin/app", "app.debug", 0, 0, "/app/bin/app.debug" },
		{ "/app/bin/app", "app.debug", 1, 0, "/app/bin/.debug/app.debug" },
		{ "/app/bin/app", "app.debug", 2, 0, "/usr/lib/debug/app/bin/app.debug" },
		{ "/app", "app.debug", 0, 0, "/app.debug" },
		{ "/app", "app.debug", 2, 0, "/usr/lib/debug/app.debug" },
		{ "/app/bin/app", "app.debug", 3, -ENOENT },
		{ "app/bin/app", "app.debug", 0, -EINVAL },	/* relative */
		{ "/app/../etc/app", "app.debug", 0, -EINVAL },
		{ "/app/./app", "app.debug", 0, -EINVAL },
		{ "/app/bin/app", "../app.debug", 0, -EINVAL },
		{ "/app/bin/app", "..", 0, -EINVAL },
		{ "/app/bin/app", "", 0, -EINVAL },
		{ NULL, "app.debug", 0, -EINVAL },
	};
	char buf[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(debugfile_link_path(cases[i].path, cases[i].name, cases[i].i, buf,
						     sizeof(buf)),
				 cases[i].ret);
		if (!cases[i].ret)
			assert_string_equal(buf, cases[i].out);
	}
	assert_int_equal(debugfile_link_path("/app/bin/app", "app.debug", 2, buf, 16),
			 -ENAMETOOLONG);
}

/* The debuglink objcopy writes, its CRC the one of the file it names. */
static void test_read_link(void **state UNUSED)
{
	char dir[PATH_MAX], path[2 * PATH_MAX];
	struct debuglink link;
	struct elf_file *ef;
	uint32_t crc;
	int fd;

	snprintf(dir, sizeof(dir), "%s/link", tmpdir);
	sh(dir, "cp $F/lib.so libfx.so.debug; objcopy --add-gnu-debuglink=libfx.so.debug "
		"$F/lib-stripped.so libfx.so");
	snprintf(path, sizeof(path), "%s/libfx.so.debug", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(debugfile_crc32(fd, 1 << 20, 1000, &crc), 0);
	assert_int_equal(debugfile_crc32(fd, 100, 1000, &crc), -EFBIG);
	assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
	assert_int_equal(debugfile_read_link(ef, &link), -ENOENT);
	elf_file__free(ef);
	close(fd);
	snprintf(path, sizeof(path), "%s/libfx.so", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(elf_file__open(fd, NULL, &ef), 0);
	memset(&link, 0, sizeof(link));
	assert_int_equal(debugfile_read_link(ef, &link), 0);
	assert_string_equal(link.name, "libfx.so.debug");
	assert_int_equal(debugfile_crc32(-1, 1, 0, &crc), -EINVAL);
	elf_file__free(ef);
	close(fd);
	fd = open(path, O_RDONLY);
	assert_int_equal(debugfile_check(fd, LIB_BID, NULL), -ENODATA); /* itself: no .symtab */
	assert_int_equal(debugfile_check(fd, "00ff", NULL), -EBADMSG);
	assert_int_equal(debugfile_check(fd, NULL, NULL), -EBADMSG);
	close(fd);
}

/*
 * The lookup. Row fields: the binary (a fixture) and its path in the root; what the root and
 * the host hold (shell, run in each); the result, where it was found, and the candidates
 * tried and refused.
 */
static void test_find(void **state UNUSED)
{
	static const struct {
		const char *what, *bin, *path, *root, *host;
		int ret;
		enum debugfile_where where;
		const char *found;
		unsigned tried, refused;
	} cases[] = {
		{ "build id in the root", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG, "",
		  0, DEBUGFILE_IN_ROOT, "/" LIB_DBG, 1, 0 },
		{ "build id on the host", "lib-stripped.so", "/lib/libfx.so", "",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG,
		  0, DEBUGFILE_ON_HOST, "/" LIB_DBG, 1, 0 },
		{ "the root first", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG,
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG,
		  0, DEBUGFILE_IN_ROOT, "/" LIB_DBG, 1, 0 },
		{ "wrong build id in the root, right one on the host", "lib-stripped.so",
		  "/lib/libfx.so", "mkdir -p usr/lib/debug/.build-id/eb; cp $F/exec " LIB_DBG,
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG,
		  0, DEBUGFILE_ON_HOST, "/" LIB_DBG, 2, 1 },
		{ "wrong build id", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/exec " LIB_DBG, "",
		  -ENOENT, 0, NULL, 1, 1 },
		{ "the stripped binary itself", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib-stripped.so " LIB_DBG, "",
		  -ENOENT, 0, NULL, 1, 1 },
		{ "a link out of the root", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; ln -s $F/lib.so " LIB_DBG, "",
		  -ENOENT, 0, NULL, 0, 0 },
		{ "a relative link out of the root", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; ln -s ../../../../../../../../../../$F/lib.so "
		  LIB_DBG, "", -ENOENT, 0, NULL, 0, 0 },
		{ "a link inside the root", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so lib/real.debug; "
		  "ln -s /lib/real.debug " LIB_DBG, "",
		  0, DEBUGFILE_IN_ROOT, "/" LIB_DBG, 1, 0 },
		{ "a FIFO", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; mkfifo " LIB_DBG, "",
		  -ENOENT, 0, NULL, 1, 1 },
		{ "a directory", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p " LIB_DBG, "", -ENOENT, 0, NULL, 1, 1 },
		{ "over the size limit", "lib-stripped.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/.build-id/eb; cp $F/lib.so " LIB_DBG "; "
		  "truncate -s 3G " LIB_DBG, "", -ENOENT, 0, NULL, 1, 1 },
		{ "debuglink next to the binary", "linked/libfx.so", "/lib/libfx.so",
		  "cp $F/lib.so lib/libfx.so.debug", "",
		  0, DEBUGFILE_IN_ROOT, "/lib/libfx.so.debug", 1, 0 },
		{ "debuglink in .debug/", "linked/libfx.so", "/lib/libfx.so",
		  "mkdir -p lib/.debug; cp $F/lib.so lib/.debug/libfx.so.debug", "",
		  0, DEBUGFILE_IN_ROOT, "/lib/.debug/libfx.so.debug", 1, 0 },
		{ "debuglink under /usr/lib/debug", "linked/libfx.so", "/lib/libfx.so",
		  "mkdir -p usr/lib/debug/lib; cp $F/lib.so usr/lib/debug/lib/libfx.so.debug", "",
		  0, DEBUGFILE_IN_ROOT, "/usr/lib/debug/lib/libfx.so.debug", 1, 0 },
		{ "debuglink: never on the host", "linked/libfx.so", "/lib/libfx.so", "",
		  "mkdir -p lib; cp $F/lib.so lib/libfx.so.debug", -ENOENT, 0, NULL, 0, 0 },
		{ "debuglink, another build id", "linked/libfx.so", "/lib/libfx.so",
		  "cp $F/exec lib/libfx.so.debug", "", -ENOENT, 0, NULL, 1, 1 },
		{ "no build id: the CRC decides", "linked/nobid", "/bin/nobid",
		  "cp $T/linked/nobid.debug bin/nobid.debug", "",
		  0, DEBUGFILE_IN_ROOT, "/bin/nobid.debug", 1, 0 },
		{ "no build id, wrong CRC", "linked/nobid", "/bin/nobid",
		  "cp $F/lib.so bin/nobid.debug", "", -ENOENT, 0, NULL, 1, 1 },
		{ "nothing anywhere", "lib-stripped.so", "/lib/libfx.so", "", "",
		  -ENOENT, 0, NULL, 0, 0 },
	};
	char dir[PATH_MAX], host[PATH_MAX], bin[2 * PATH_MAX], cmd[2 * PATH_MAX];
	struct debugfile_found found;
	struct debugfile_stats st;
	size_t i;
	int err, fd;

	/* The binaries with a debuglink, and the debug file of the one without a build id. */
	snprintf(dir, sizeof(dir), "%s/linked", tmpdir);
	sh(dir, "cp $F/lib.so libfx.so.debug; objcopy --add-gnu-debuglink=libfx.so.debug "
		"$F/lib-stripped.so libfx.so; cp $F/exec nobid.debug; "
		"objcopy --add-gnu-debuglink=nobid.debug $F/exec-nobid nobid");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct debugfile_query q = { .proc_root = tmpdir, .host_root = host,
					     .tgid = (uint32_t)(100 + i), .path = cases[i].path,
					     .build_id = strncmp(cases[i].bin, "linked/nobid", 12) ?
								 LIB_BID : NULL };

		print_message("case %zu: %s\n", i, cases[i].what);
		snprintf(dir, sizeof(dir), "%s/r%zu", tmpdir, i);
		sh(dir, "mkdir -p lib bin");
		sh(dir, cases[i].root);
		snprintf(host, sizeof(host), "%s/h%zu", tmpdir, i);
		sh(host, cases[i].host);
		snprintf(cmd, sizeof(cmd), "mkdir -p %s/%zu; ln -s ../r%zu %s/%zu/root", tmpdir,
			 100 + i, i, tmpdir, 100 + i);
		sh(tmpdir, cmd);
		if (!strncmp(cases[i].bin, "linked/", 7))
			snprintf(bin, sizeof(bin), "%s/%s", tmpdir, cases[i].bin);
		else
			snprintf(bin, sizeof(bin), "%s/%s", fixtures, cases[i].bin);
		fd = open(bin, O_RDONLY);
		assert_true(fd >= 0);
		q.bin_fd = fd;
		memset(&found, 0xa5, sizeof(found));
		err = debugfile_find(&q, &found, &st);
		close(fd);
		assert_int_equal(err, cases[i].ret);
		assert_int_equal(st.tried, cases[i].tried);
		assert_int_equal(st.refused, cases[i].refused);
		if (err) {
			assert_int_equal(found.fd, (int)0xa5a5a5a5); /* untouched */
			continue;
		}
		assert_int_equal(found.where, cases[i].where);
		assert_string_equal(found.path, cases[i].found);
		assert_true(found.ino != 0);
		close(found.fd);
	}
}

static void test_bad_query(void **state UNUSED)
{
	struct debugfile_query q = { .tgid = 1, .path = "relative", .bin_fd = -1 };
	struct debugfile_found found;

	assert_int_equal(debugfile_find(NULL, &found, NULL), -EINVAL);
	assert_int_equal(debugfile_find(&q, &found, NULL), -EINVAL);
	q.path = "/x";
	q.tgid = 0;
	assert_int_equal(debugfile_find(&q, &found, NULL), -EINVAL);
	assert_int_equal(debugfile_check(-1, LIB_BID, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_id_path),
		cmocka_unit_test(test_link_path),
		cmocka_unit_test(test_read_link),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_bad_query),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
