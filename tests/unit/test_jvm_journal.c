// SPDX-License-Identifier: Apache-2.0
/*
 * The placement journal (daemon/capture/jvm_journal.h): entries written and read back, the
 * forms it refuses (a path that is not one of ours, another recording's name, junk), and a
 * drain that removes every entry, well-formed or not, in a temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/fileio.h"
#include "daemon/capture/jvm_journal.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse(void **state)
{
	static const char good[] = "path=/tmp/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\n"
				   "via=jfr\n";
	static const struct {
		const char *name, *text;
		int ret;
	} rows[] = {
		{ "12-345-slideops-00aa11bb22cc", good, 0 },
		{ "12-345-slideops-00aa11bb22cc",
		  "via=asprof\nrec=slideops-00aa11bb22cc\npath=/dev/shm/.slideops-0123456789abcdef\n", 0 },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/var/tmp/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\nvia=jfr", 0 },
		/* the name must carry the entry's recording, a pid and a start time */
		{ "12-345-slideops-ffffffffffff", good, -EINVAL },
		{ "0-345-slideops-00aa11bb22cc", good, -EINVAL },
		{ "x-345-slideops-00aa11bb22cc", good, -EINVAL },
		{ "12-slideops-00aa11bb22cc", good, -EINVAL },
		/* only directories of ours, where we place them */
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/etc/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/../etc\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/.slideops-0123456789abcde\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/.slideops-0123456789ABCDEF\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/x/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmpx/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\nvia=jfr\n", -EINVAL },
		/* fields */
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/.slideops-0123456789abcdef\nrec=slideops-00aa11bb22cc\nvia=perf\n", -EINVAL },
		{ "12-345-slideops-00aa11bb22cc",
		  "path=/tmp/.slideops-0123456789abcdef\nvia=jfr\n", -EINVAL },
		{ "12-345-slideops-0g", "path=/tmp/.slideops-0123456789abcdef\nrec=slideops-0g\nvia=jfr\n",
		  -EINVAL },
		{ "12-345-slideops-00aa11bb22cc", "", -EINVAL },
	};
	struct jvm_journal_entry e;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rows); i++)
		assert_int_equal(jvm_journal_parse(rows[i].name, rows[i].text, strlen(rows[i].text), &e),
				 rows[i].ret);
	assert_int_equal(jvm_journal_parse(rows[0].name, good, strlen(good), &e), 0);
	assert_int_equal(e.pid, 12);
	assert_int_equal(e.starttime, 345);
	assert_string_equal(e.path, "/tmp/.slideops-0123456789abcdef");
	assert_string_equal(e.rec, "slideops-00aa11bb22cc");
	assert_false(e.asprof);
	/* a NUL byte */
	assert_int_equal(jvm_journal_parse(rows[0].name, "path=/tmp\0x", 11, &e), -EINVAL);
}

struct seen {
	struct jvm_journal_entry e[4];
	size_t n;
};

static void on_entry(void *ctx, const struct jvm_journal_entry *e)
{
	struct seen *s = ctx;

	if (s->n < ARRAY_SIZE(s->e))
		s->e[s->n++] = *e;
}

static void test_roundtrip(void **state)
{
	char dir[] = "/tmp/test_jvm_journal.XXXXXX", sub[64], name[64], junk[128];
	struct seen s = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/placed", dir);
	/* no directory yet: nothing to drain */
	assert_int_equal(jvm_journal_drain(sub, on_entry, &s), 0);
	assert_int_equal(jvm_journal_add(sub, 77, 123456, "/tmp/.slideops-00112233445566ff",
					 "slideops-abcdef012345", true, name, sizeof(name)),
			 0);
	assert_string_equal(name, "77-123456-slideops-abcdef012345");
	assert_int_equal(jvm_journal_add(sub, 78, 9, "/var/tmp/.slideops-00112233445566ff",
					 "slideops-abcdef012346", false, name, sizeof(name)),
			 0);
	jvm_journal_remove(sub, name);
	snprintf(junk, sizeof(junk), "%s/99-junk", sub);
	assert_int_equal(atomic_write_buf(junk, "not an entry", 12), 0);
	assert_int_equal(jvm_journal_drain(sub, on_entry, &s), 2);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.e[0].pid, 77);
	assert_true(s.e[0].asprof);
	/* everything seen is gone */
	assert_int_equal(access(junk, F_OK), -1);
	assert_int_equal(jvm_journal_drain(sub, on_entry, &s), 0);
	/* no journal: nothing written */
	assert_int_equal(jvm_journal_add(NULL, 1, 1, "/tmp/x", "slideops-00", false, name,
					 sizeof(name)),
			 0);
	assert_string_equal(name, "");
	assert_int_equal(jvm_journal_drain(NULL, on_entry, &s), 0);
	assert_int_equal(rm_tree_at(AT_FDCWD, dir, 2), 0);
}

struct watched {
	struct jvm_journal_injected e[4];
	size_t n;
	bool keep;
};

static bool on_injected(void *ctx, const struct jvm_journal_injected *e)
{
	struct watched *w = ctx;

	if (w->n < ARRAY_SIZE(w->e))
		w->e[w->n++] = *e;
	return w->keep;
}

/* The records of JVMs an agent was loaded into, and of those that crashed: kept apart from the
 * placement entries (a drain leaves them), kept or removed as the watcher says. */
static void test_injected_crashed(void **state)
{
	char dir[] = "/tmp/test_jvm_journal.XXXXXX", sub[64], reason[64], bad[128];
	struct jvm_journal_injected e = { .pid = 42, .nspid = 7, .starttime = 99, .time = 1700000000 };
	struct watched w = { .keep = true };
	struct seen s = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/placed", dir);
	memcpy(e.id, "0123456789abcdef", 17);
	assert_int_equal(jvm_journal_add_injected(sub, &e), 0);
	assert_int_equal(jvm_journal_add_crashed(sub, "0123456789abcdef", "wrote a crash report"), 0);
	/* a bad identity is refused */
	assert_int_equal(jvm_journal_add_crashed(sub, "../../etc/passwd", "x"), -EINVAL);
	memcpy(e.id, "0123456789ABCDEF", 17);
	assert_int_equal(jvm_journal_add_injected(sub, &e), -EINVAL);
	/* a malformed record is removed by the watch */
	snprintf(bad, sizeof(bad), "%s/injected-1-2", sub);
	assert_int_equal(atomic_write_buf(bad, "id=zz\n", 6), 0);
	/* a drain of placements leaves them */
	assert_int_equal(jvm_journal_drain(sub, on_entry, &s), 0);
	assert_true(jvm_journal_crashed(sub, "0123456789abcdef", reason, sizeof(reason)));
	assert_string_equal(reason, "wrote a crash report");
	assert_false(jvm_journal_crashed(sub, "fedcba9876543210", reason, sizeof(reason)));
	assert_false(jvm_journal_crashed(NULL, "0123456789abcdef", reason, sizeof(reason)));
	assert_int_equal(jvm_journal_each_injected(sub, on_injected, &w), 2);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.e[0].pid, 42);
	assert_int_equal(w.e[0].nspid, 7);
	assert_int_equal(w.e[0].starttime, 99);
	assert_int_equal(w.e[0].time, 1700000000);
	assert_string_equal(w.e[0].id, "0123456789abcdef");
	assert_int_equal(access(bad, F_OK), -1);
	/* kept, then removed */
	w.n = 0;
	w.keep = false;
	assert_int_equal(jvm_journal_each_injected(sub, on_injected, &w), 1);
	assert_int_equal(jvm_journal_each_injected(sub, on_injected, &w), 0);
	assert_int_equal(rm_tree_at(AT_FDCWD, dir, 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_injected_crashed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
