// SPDX-License-Identifier: Apache-2.0
#include "daemon/agent/page.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "profile/flamegraph.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* page_assets.S */
extern const char page_index_html[], page_app_js[], page_app_css[];
extern const uint64_t page_index_html_len, page_app_js_len, page_app_css_len;

#define HTML "text/html; charset=utf-8"
#define JS "text/javascript; charset=utf-8"
#define CSS "text/css; charset=utf-8"

static struct page_asset assets[] = {
	{ "/", HTML, page_index_html, 0 },    { "/index.html", HTML, page_index_html, 0 },
	{ "/ui/app.js", JS, page_app_js, 0 }, { "/ui/app.css", CSS, page_app_css, 0 },
	{ "/ui/flamegraph.js", JS, NULL, 0 }, { "/ui/flamegraph.css", CSS, NULL, 0 },
};

const char *const page_headers[] = {
	"Content-Security-Policy",
	PAGE_CSP,
	"X-Content-Type-Options",
	"nosniff",
	"Referrer-Policy",
	"no-referrer",
	"X-Frame-Options",
	"SAMEORIGIN",
	"Cross-Origin-Opener-Policy",
	"same-origin",
	"Cross-Origin-Resource-Policy",
	"same-origin",
	NULL,
};

/* Sizes are link-time symbols and the flame graph's texts come from profile/: filled once. */
static void fill_once(void)
{
	size_t n;

	assets[0].len = assets[1].len = page_index_html_len;
	assets[2].len = page_app_js_len;
	assets[3].len = page_app_css_len;
	assets[4].data = flamegraph_script(&n);
	assets[4].len = n;
	assets[5].data = flamegraph_style(&n);
	assets[5].len = n;
}

static void fill(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fill_once);
}

const struct page_asset *page_find(const char *path)
{
	size_t i;

	fill();
	for (i = 0; path && i < ARRAY_SIZE(assets); i++)
		if (!strcmp(path, assets[i].path))
			return &assets[i];
	return NULL;
}

size_t page_assets(const struct page_asset **out)
{
	fill();
	*out = assets;
	return ARRAY_SIZE(assets);
}
