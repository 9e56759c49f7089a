// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/array.h"
#include "base/text.h"
#include "profile/diff.h"
#include "profile/flamegraph.h"
#include "profile/profile.h"
#include "tests/unit/profile_fixture.h"

#define HOSTILE "</script><img src=x onerror=alert(1)>"
#define ICON "<link rel=\"icon\" href=\"data:,\">"

/* Every <link> of the page is the empty icon: nothing is fetched. */
static bool only_icon_links(const char *html)
{
	const char *l;

	for (l = strstr(html, "<link"); l; l = strstr(l + 1, "<link"))
		if (strncmp(l, ICON, strlen(ICON)))
			return false;
	return strstr(html, ICON) != NULL;
}

static struct profile *server_profile(bool owner_root)
{
	static const struct prof_frame_info frames[] = {
		{ .function = "main" },
		{ .function = "build_report", .lang = PROF_LANG_PYTHON },
		{ .function = HOSTILE, .lang = PROF_LANG_JAVA },
		{ .function = "tcp_sendmsg", .lang = PROF_LANG_KERNEL },
		{ .function = "tiny" },
	};
	static const struct prof_labels labels[] = {
		{ "Service billing", "gunicorn", NULL, 10, 10, PROF_LANG_PYTHON },
		{ "Unit nginx.service", "nginx", NULL, 20, 20, PROF_LANG_NATIVE },
		{ "Service <b>x</b>", "java", NULL, 30, 30, PROF_LANG_JAVA },
	};
	static const struct fx_sample samples[] = {
		{ { 1, 0 }, 2, 0, { 600000, 1 } },
		{ { 3, 0 }, 2, 0, { 200000, 1 } },
		{ { 3, 0 }, 2, 1, { 150000, 1 } },
		{ { 2 }, 1, 2, { 49999, 1 } },
		{ { 4, 1, 0 }, 3, 0, { 1, 1 } },	/* under 0.01%: folded into build_report */
		{ { 0 }, 1, 1, { -5, 1 } },		/* negative: not drawn */
	};
	struct profile_opts o = { .owner_root = owner_root };

	return fx_profile(&o, frames, ARRAY_SIZE(frames), labels, samples, ARRAY_SIZE(samples));
}

static char *render(const struct profile *p, const struct flamegraph_opts *o, int *ret)
{
	struct fx_mem m;

	*ret = flamegraph_write(p, o, fx_mem_open(&m));
	return fx_mem_text(&m);
}

static json_t *page_json(const char *html)
{
	const char *start = strstr(html, "id=\"fg-data\">"), *end;
	json_error_t jerr;
	json_t *j;

	assert_non_null(start);
	start += strlen("id=\"fg-data\">");
	end = strstr(start, "</script>");
	assert_non_null(end);
	j = json_loadb(start, (size_t)(end - start), 0, &jerr);
	if (!j)
		print_message("json: %s at %d\n", jerr.text, jerr.position);
	assert_non_null(j);
	return j;
}

static const char *node_name(json_t *names, json_t *node)
{
	return json_string_value(json_array_get(names, json_integer_value(json_array_get(node, 0))));
}

static json_int_t node_value(json_t *node)
{
	return json_integer_value(json_array_get(node, 1));
}

/* Finds the child of @node called @name. */
static json_t *child(json_t *names, json_t *node, const char *name)
{
	json_t *kids = json_array_get(node, 3), *k;
	size_t i;

	json_array_foreach(kids, i, k)
		if (!strcmp(node_name(names, k), name))
			return k;
	return NULL;
}

/* Children never sum to more than their parent. */
static void check_sums(json_t *node)
{
	json_t *kids = json_array_get(node, 3), *k;
	json_int_t sum = 0;
	size_t i;

	json_array_foreach(kids, i, k) {
		check_sums(k);
		sum += node_value(k);
	}
	assert_true(sum <= node_value(node));
}

static void test_page(void **state)
{
	static const char *const notes[] = { "Very few samples & <odd> \"notes\"", NULL };
	static const struct {
		bool owner_root;
		size_t vi;
		const char *path[4];	/* a path from the root */
		json_int_t value;	/* its value */
		json_int_t total;
	} cases[] = {
		{ true, 0, { "Service billing", "gunicorn", "main", "build_report" }, 600001, 1000000 },
		{ true, 0, { "Unit nginx.service", "nginx", "main", "tcp_sendmsg" }, 150000, 1000000 },
		{ true, 0, { "Service <b>x</b>", "java", HOSTILE }, 49999, 1000000 },
		{ false, 0, { "main", "tcp_sendmsg" }, 350000, 1000000 },
		{ false, 1, { "main", "build_report", "tiny" }, 1, 6 },
	};
	struct flamegraph_opts o = { .title = "CPU <b>server</b>", .answer = "Over 30 seconds & more",
				     .notes = notes };
	json_t *j, *names, *node;
	struct profile *p;
	char *html;
	size_t i, k;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		p = server_profile(cases[i].owner_root);
		o.value_index = cases[i].vi;
		html = render(p, &o, &ret);
		assert_int_equal(ret, 0);
		/* Self-contained: nothing fetched from anywhere. */
		assert_null(strstr(html, "http://"));
		assert_null(strstr(html, "https://"));
		assert_null(strstr(html, "<link rel=\"stylesheet\""));
		assert_null(strstr(html, "<script src"));
		assert_true(only_icon_links(html));
		assert_null(strstr(html, "@import"));
		/* Hostile text is escaped in JS and HTML. */
		assert_null(strstr(html, HOSTILE));
		assert_null(strstr(html, "<img"));
		assert_null(strstr(html, "<b>"));
		assert_non_null(strstr(html, "<title>CPU &lt;b&gt;server&lt;/b&gt;</title>"));
		assert_non_null(strstr(html, "<p class=\"answer\">Over 30 seconds &amp; more</p>"));
		assert_non_null(strstr(html, "<li>Very few samples &amp; &lt;odd&gt; &quot;notes&quot;"));
		/* Exactly one data script and one code script. */
		assert_non_null(strstr(html, "\\u003c/script\\u003e\\u003cimg") ||
				!cases[i].owner_root);

		j = page_json(html);
		names = json_object_get(j, "names");
		node = json_object_get(j, "tree");
		assert_string_equal(node_name(names, node), "all");
		assert_int_equal(node_value(node), cases[i].total);
		assert_int_equal(json_integer_value(json_object_get(j, "total")), cases[i].total);
		assert_string_equal(json_string_value(json_object_get(j, "unit")), "samples");
		for (k = 0; k < 4 && cases[i].path[k]; k++) {
			node = child(names, node, cases[i].path[k]);
			assert_non_null(node);
		}
		assert_int_equal(node_value(node), cases[i].value);
		check_sums(json_object_get(j, "tree"));
		if (cases[i].vi == 0)
			assert_null(child(names, node, "tiny"));	/* folded */
		if (cases[i].owner_root && !strcmp(cases[i].path[0], "Service billing"))
			assert_int_equal(json_integer_value(json_array_get(node, 2)),
					 PROF_LANG_PYTHON);
		json_decref(j);
		free(html);
		profile__free(p);
	}
}

/* Names and texts that are not UTF-8, or hostile to HTML, JS or JSON, give a valid page. */
static void test_hostile_names(void **state)
{
	static const struct {
		const char *name, *want;	/* as the frame is called, as the page's JSON has it */
	} cases[] = {
		{ "a\"b\\c'd", "a\"b\\c'd" },			/* quotes, backslash */
		{ "x\xe2\x80\xa8y\xe2\x80\xa9", "x\xe2\x80\xa8y\xe2\x80\xa9" },	/* U+2028/9 */
		{ "hot\xff\xfe", "hot??" },				/* not UTF-8 */
		{ "</script><!--", "</script><!--" },
		{ "tab\there\n", "tab\there\n" },
	};
	static const char *const notes[] = { "note \xc3", NULL };	/* cut character */
	struct flamegraph_opts o = { .title = "t\xff\xfe", .answer = "a\xed\xa0\x80",
				     .notes = notes };
	struct prof_frame_info fi = { 0 };
	json_t *j, *names, *node;
	struct profile *p;
	int64_t v[2] = { 1, 1 };
	uint32_t id;
	char *html;
	size_t i;
	int ret;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		assert_int_equal(profile__new(NULL, &p), 0);
		fi.function = cases[i].name;
		ret = profile__frame(p, &fi);
		assert_true(ret >= 0);
		id = (uint32_t)ret;
		assert_int_equal(profile__add(p, &id, 1, NULL, v), 0);
		html = render(p, &o, &ret);
		assert_int_equal(ret, 0);
		assert_true(text_utf8_is_valid(html, strlen(html)));
		assert_null(strstr(html, "\xe2\x80\xa8"));	/* ends a JS line */
		assert_non_null(strstr(html, "<title>t?\?</title>"));
		assert_non_null(strstr(html, "<li>note ?</li>"));
		j = page_json(html);
		names = json_object_get(j, "names");
		node = child(names, json_object_get(j, "tree"), cases[i].want);
		assert_non_null(node);
		json_decref(j);
		free(html);
		profile__free(p);
	}
}

static void test_edge(void **state)
{
	static const struct flamegraph_opts bad_vi = { .value_index = 2 };
	static const struct flamegraph_opts ns = { .unit = "ns" };
	char dir[] = "/tmp/test_flamegraph.XXXXXX", path[256];
	struct profile *p, *empty;
	json_t *j;
	char *html;
	int ret;

	(void)state;
	p = server_profile(true);
	html = render(p, &bad_vi, &ret);
	assert_int_equal(ret, -EINVAL);
	free(html);
	html = render(NULL, NULL, &ret);
	assert_int_equal(ret, -EINVAL);
	free(html);

	/* Defaults: a title, samples; an empty profile still renders. */
	assert_int_equal(profile__new(NULL, &empty), 0);
	html = render(empty, NULL, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(html, "<title>Flame graph</title>"));
	j = page_json(html);
	assert_int_equal(json_integer_value(json_object_get(j, "total")), 0);
	json_decref(j);
	free(html);
	html = render(empty, &ns, &ret);
	assert_int_equal(ret, 0);
	j = page_json(html);
	assert_string_equal(json_string_value(json_object_get(j, "unit")), "ns");
	json_decref(j);
	free(html);

	assert_non_null(mkdtemp(dir));
	static const struct { const char *sub; int ret; } cases[] = {
		{ "flamegraph.html", 0 },
		{ "missing/flamegraph.html", -ENOENT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].sub);
		assert_int_equal(flamegraph_write_file(p, NULL, path), cases[i].ret);
	}
	snprintf(path, sizeof(path), "%s/flamegraph.html", dir);
	assert_int_equal(access(path, R_OK), 0);
	unlink(path);
	rmdir(dir);
	profile__free(empty);
	profile__free(p);
}

/* 50k distinct stacks: the page stays bounded by the 0.01% cut. */
static void test_large(void **state)
{
	struct prof_frame_info fi = { .mapping = "/usr/bin/app" };
	struct prof_labels l = { .owner = "Service big", .process = "app" };
	uint32_t stack[16];
	int64_t v[2] = { 1, 1 };
	struct profile *p;
	char *html;
	size_t i, k;
	int ret, id;

	(void)state;
	assert_int_equal(profile__new(NULL, &p), 0);
	for (i = 0; i < 50000; i++) {
		for (k = 0; k < ARRAY_SIZE(stack); k++) {
			fi.address = k == 0 ? i : (i % 13) * 100 + k;
			id = profile__frame(p, &fi);
			assert_true(id >= 0);
			stack[k] = (uint32_t)id;
		}
		v[0] = i % 1000 == 0 ? 5000 : 1;
		assert_int_equal(profile__add(p, stack, ARRAY_SIZE(stack), &l, v), 0);
	}
	html = render(p, NULL, &ret);
	assert_int_equal(ret, 0);
	print_message("page of %zu bytes\n", strlen(html));
	assert_true(strlen(html) < 2000000);
	free(html);
	profile__free(p);
}

/* The text between @open and the next @close in @html, copied (the caller frees it); NULL. */
static char *between(const char *html, const char *open, const char *close)
{
	const char *a = strstr(html, open), *b;

	if (!a)
		return NULL;
	a += strlen(open);
	b = strstr(a, close);
	return b ? strndup(a, (size_t)(b - a)) : NULL;
}

static size_t count(const char *html, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(html, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* An attribute " on...=" (an inline event handler) in the markup, outside the data block. */
static bool has_handler(const char *html)
{
	char *copy = strdup(html), *data = strstr(copy, "id=\"fg-data\">"), *p;
	bool hit = false;

	if (data)
		*data = '\0';
	for (p = strstr(copy, " on"); p && !hit; p = strstr(p + 1, " on")) {
		size_t k = 3;

		while (p[k] >= 'a' && p[k] <= 'z')
			k++;
		hit = k > 3 && p[k] == '=';
	}
	free(copy);
	return hit;
}

/* Asset mode links /ui/... and has nothing a strict CSP blocks; inline mode embeds exactly
 * flamegraph_script() and flamegraph_style(). */
static void test_assets(void **state)
{
	static const struct {
		const char *assets, *css, *js;	/* NULL assets: self-contained */
	} cases[] = {
		{ NULL, NULL, NULL },
		{ "/ui", "<link rel=\"stylesheet\" href=\"/ui/flamegraph.css\">",
		  "<script src=\"/ui/flamegraph.js\"></script>" },
		{ "/ui/", "<link rel=\"stylesheet\" href=\"/ui/flamegraph.css\">",
		  "<script src=\"/ui/flamegraph.js\"></script>" },
		{ "/a\"b", "href=\"/a&quot;b/flamegraph.css\"", "src=\"/a&quot;b/flamegraph.js\"" },
	};
	struct flamegraph_opts o = { .title = "t", .answer = "a" };
	struct profile *p = server_profile(true);
	const char *script, *style;
	size_t i, slen, clen;
	char *html, *inl;
	int ret;

	(void)state;
	script = flamegraph_script(&slen);
	style = flamegraph_style(&clen);
	assert_int_equal(strlen(script), slen);
	assert_int_equal(strlen(style), clen);
	assert_non_null(strstr(script, "fg-data"));
	assert_null(strstr(style, "<"));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		o.assets = cases[i].assets;
		html = render(p, &o, &ret);
		assert_int_equal(ret, 0);
		assert_non_null(strstr(html, ICON));
		assert_true(only_icon_links(html) == !cases[i].assets);
		assert_null(strstr(html, " style="));
		assert_false(has_handler(html));
		assert_int_equal(count(html, "<script"), 2);
		assert_non_null(strstr(html, "<script type=\"application/json\" id=\"fg-data\">"));
		if (cases[i].assets) {
			assert_null(strstr(html, "Content-Security-Policy"));
			assert_null(strstr(html, "<style"));
			assert_null(strstr(html, "<script>"));
			assert_non_null(strstr(html, cases[i].css));
			/* the script runs after the data block it reads */
			assert_true(strstr(html, cases[i].js) > strstr(html, "id=\"fg-data\""));
		} else {
			assert_non_null(strstr(html, "<meta http-equiv=\"Content-Security-Policy\""));
			inl = between(html, "<script>\n", "</script>");
			assert_non_null(inl);
			assert_string_equal(inl, script);
			free(inl);
			inl = between(html, "<style>\n", "</style>");
			assert_non_null(inl);
			assert_string_equal(inl, style);
			free(inl);
		}
		json_decref(page_json(html));
		free(html);
	}
	profile__free(p);
}

/* One stack (leaf first, up to 3 frames of fixed names) per sample, for a diff. */
static struct profile *diff_profile(const struct fx_sample *s, size_t n)
{
	static const struct prof_frame_info frames[] = {
		{ .function = "main" }, { .function = "hot" },	{ .function = "cold" },
		{ .function = "new" },	{ .function = "tiny" },
	};
	static const struct prof_labels labels[] = { { NULL, "app", NULL, 1, 1, PROF_LANG_NATIVE } };

	return fx_profile(NULL, frames, ARRAY_SIZE(frames), labels, s, n);
}

static json_t *diff_node(json_t *names, json_t *node, const char *const *path)
{
	for (; node && *path; path++)
		node = child(names, node, *path);
	return node;
}

/* Children's widths together never exceed their parent's; a leaf has [] children. */
static void check_widths(json_t *node)
{
	json_t *kids = json_array_get(node, 3), *k;
	json_int_t sum = 0;
	size_t i;

	assert_true(json_is_array(kids));
	assert_int_equal(json_array_size(node), 6);
	json_array_foreach(kids, i, k) {
		check_widths(k);
		sum += node_value(k);
	}
	assert_true(sum <= node_value(node));
}

/* The differential page: each node's base and new values, and its width (its larger share in
 * billionths, at least its children's); a frame that vanished keeps its base width. */
static void test_diff_page(void **state)
{
	static const struct fx_sample base[] = {
		{ { 1, 0 }, 2, 0, { 30, 0 } }, { { 2, 0 }, 2, 0, { 10, 0 } },
	};
	static const struct fx_sample next[] = {
		{ { 1, 0 }, 2, 0, { 10, 0 } }, { { 3, 0 }, 2, 0, { 30, 0 } },
		{ { 4, 0 }, 2, 0, { 0, 0 } },	/* a line of 0: not a row */
	};
	static const struct {
		const char *path[3];
		json_int_t base, next, width;
	} cases[] = {
		{ { NULL }, 40, 40, 1750000000 },
		{ { "main" }, 40, 40, 1750000000 },
		{ { "main", "hot" }, 30, 10, 750000000 },
		{ { "main", "cold" }, 10, 0, 250000000 },	/* vanished: still drawn */
		{ { "main", "new" }, 0, 30, 750000000 },	/* appeared */
		{ { "main", "tiny" }, -1, -1, -1 },		/* absent */
	};
	struct flamegraph_opts o = { .title = "diff", .unit = "samples" };
	struct profile *pb = diff_profile(base, ARRAY_SIZE(base));
	struct profile *pn = diff_profile(next, ARRAY_SIZE(next));
	json_t *j, *names, *node;
	struct prof_diff *d;
	struct fx_mem m;
	size_t i;
	char *html;
	int ret;

	(void)state;
	assert_int_equal(prof_diff__new(pb, pn, &d), 0);
	ret = flamegraph_write_diff(d, &o, fx_mem_open(&m));
	html = fx_mem_text(&m);
	assert_int_equal(ret, 0);
	assert_true(only_icon_links(html));
	j = page_json(html);
	assert_true(json_is_true(json_object_get(j, "diff")));
	assert_int_equal(json_integer_value(json_object_get(j, "base_total")), 40);
	assert_int_equal(json_integer_value(json_object_get(j, "next_total")), 40);
	assert_int_equal(json_integer_value(json_object_get(j, "total")), 1750000000);
	names = json_object_get(j, "names");
	check_widths(json_object_get(j, "tree"));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		node = diff_node(names, json_object_get(j, "tree"), cases[i].path);
		if (cases[i].width < 0) {
			assert_null(node);
			continue;
		}
		assert_non_null(node);
		assert_int_equal(node_value(node), cases[i].width);
		assert_int_equal(json_integer_value(json_array_get(node, 4)), cases[i].base);
		assert_int_equal(json_integer_value(json_array_get(node, 5)), cases[i].next);
	}
	json_decref(j);
	free(html);
	prof_diff__free(d);
	profile__free(pb);
	profile__free(pn);
}

/* Error rows of the diff writers; an empty diff still renders. */
static void test_diff_edge(void **state)
{
	char dir[] = "/tmp/test_fgdiff.XXXXXX", path[256];
	struct profile *empty;
	struct prof_diff *d;
	struct fx_mem m;
	json_t *j;
	char *html;
	int ret;

	(void)state;
	assert_int_equal(flamegraph_write_diff(NULL, NULL, stdout), -EINVAL);
	assert_int_equal(flamegraph_write_diff_file(NULL, NULL, "/tmp/x"), -EINVAL);
	assert_int_equal(profile__new(NULL, &empty), 0);
	assert_int_equal(prof_diff__new(empty, empty, &d), 0);
	assert_int_equal(flamegraph_write_diff(d, NULL, NULL), -EINVAL);
	ret = flamegraph_write_diff(d, NULL, fx_mem_open(&m));
	html = fx_mem_text(&m);
	assert_int_equal(ret, 0);
	j = page_json(html);
	assert_int_equal(json_integer_value(json_object_get(j, "total")), 0);
	json_decref(j);
	free(html);

	assert_non_null(mkdtemp(dir));
	static const struct { const char *sub; int ret; } cases[] = {
		{ "diff.html", 0 },
		{ "missing/diff.html", -ENOENT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		print_message("case %zu\n", i);
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].sub);
		assert_int_equal(flamegraph_write_diff_file(d, NULL, path), cases[i].ret);
	}
	snprintf(path, sizeof(path), "%s/diff.html", dir);
	assert_int_equal(unlink(path), 0);
	rmdir(dir);
	prof_diff__free(d);
	profile__free(empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_edge),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_assets),
		cmocka_unit_test(test_diff_page),
		cmocka_unit_test(test_diff_edge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
