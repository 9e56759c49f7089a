// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/node/node_perfmap.h"

struct row {
	const char *name;
	int ret;
	const char *function, *script;
	uint32_t line;
};

static const struct row rows[] = {
	{ "JS:*hot /tmp/pm.js:1:13", 0, "hot", "/tmp/pm.js", 1 },
	{ "JS:~caller /tmp/pm.js:2:16", 0, "caller", "/tmp/pm.js", 2 },
	{ "JS:^hot /app/a b.js:10:3", 0, "hot", "/app/a b.js", 10 },
	{ "JS:+x file:///app/x.mjs:3:11", 0, "x", "file:///app/x.mjs", 3 },
	{ "JS:~ /tmp/pm.js:1:1", 0, "(anonymous)", "/tmp/pm.js", 1 },
	{ "Eval:~ /tmp/pm.js:1:1", 0, "(anonymous)", "/tmp/pm.js", 1 },
	{ "JS:~get size node:internal/fs/utils:400:9", 0, "get size", "node:internal/fs/utils",
	  400 },
	{ "LazyCompile:*fib /srv/app.js:7", 0, "fib", "/srv/app.js", 7 },
	{ "Function:~main /srv/app.js:1", 0, "main", "/srv/app.js", 1 },
	{ "Script:~ /srv/app.js", 0, "(anonymous)", "/srv/app.js", 0 },
	{ "JS:*noloc", 0, "noloc", "", 0 },
	{ "JS:*a :5:1", 0, "a :5:1", "", 0 }, /* no script: kept whole */
	{ "JS:*big /x.js:99999999999:1", 0, "big", "/x.js", 0 },
	/* error rows: V8's own code, other runtimes' maps */
	{ "Builtin:ArrayPrototypePush", -ENOENT },
	{ "BytecodeHandler:Ldar", -ENOENT },
	{ "Stub:CEntry", -ENOENT },
	{ "java.lang.String::hashCode", -ENOENT },
	{ "", -ENOENT },
	{ "JS", -ENOENT },
};

static void test_rows(void **state)
{
	struct node_pm_name out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		int ret = node_perfmap_parse(r->name, &out);

		if (ret != r->ret)
			fail_msg("row %zu (%s): %d, want %d", i, r->name, ret, r->ret);
		if (ret)
			continue;
		assert_string_equal(out.function, r->function);
		assert_string_equal(out.script, r->script);
		assert_int_equal(out.line, r->line);
	}
}

static void test_limits(void **state)
{
	char name[2048], want[256];
	struct node_pm_name out;

	(void)state;
	assert_int_equal(node_perfmap_parse(NULL, &out), -EINVAL);
	assert_int_equal(node_perfmap_parse("JS:*x", NULL), -EINVAL);
	/* a long name is cut to fit, on a character boundary, with valid UTF-8 */
	memset(want, 0, sizeof(want));
	strcpy(name, "JS:*");
	for (size_t i = 0; i < 400; i++)
		strcat(name, "\xc3\xa9");
	strcat(name, " /a.js:1:1");
	assert_int_equal(node_perfmap_parse(name, &out), 0);
	assert_true(strlen(out.function) <= 255);
	assert_int_equal(strlen(out.function) % 2, 0);
	assert_string_equal(out.script, "/a.js");
	/* control bytes are not kept as they are */
	assert_int_equal(node_perfmap_parse("JS:*a\x01"
					    "b /a.js:2:1",
					    &out),
			 0);
	assert_null(strchr(out.function, '\x01'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
