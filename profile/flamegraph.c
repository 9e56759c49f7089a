// SPDX-License-Identifier: Apache-2.0
/*
 * Flame graph page. The merged stack tree is built here (root "all", then owner and process
 * when the profile asks for them, then frames root first; or, for a differential page, from the
 * folded stacks of a prof_diff), boxes under 1/FG_MIN_DIV of the total are folded into their
 * parent's self time, and the tree is embedded as JSON:
 *   {"names":[...], "tree":[name, value, lang, [children...]]}   (leaves have no children)
 * A small canvas renderer (fg_script, inline or served as flamegraph.js) draws it.
 */
#include "profile/flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/text.h"
#include "profile/diff.h"
#include "profile/profile.h"

/* Boxes below 1/FG_MIN_DIV of the total (0.01%) are dropped; their time stays in the parent. */
#define FG_MIN_DIV 10000
/* A differential box's width: its larger share, in billionths of a profile's total. */
#define FG_DIFF_SCALE 1e9
/* Frames of a diff stack past this depth are counted in the deepest box (a profile's stacks
 * have at most PROF_MAX_FRAMES frames, plus owner and process). */
#define FG_MAX_DEPTH (PROF_MAX_FRAMES + 2)

struct node {
	uint32_t name; /* index in the name set */
	uint32_t lang;
	uint32_t parent;	       /* UINT32_MAX for the root */
	int64_t value;		       /* inclusive; a diff: of the base profile */
	int64_t next;		       /* a diff: inclusive value in the new profile */
	uint32_t child_off, nchildren; /* into tree.children, after linking */
};

struct tree {
	struct prof_strset *names;
	struct node *nodes;
	size_t n, cap;
	struct slot {
		uint32_t node; /* node index + 1; 0: empty */
		uint32_t hash; /* low bits of the key's hash */
	} * slots;
	size_t nslots;
	uint32_t *children;
};

static uint64_t node_hash(uint32_t parent, uint32_t name, uint32_t lang)
{
	uint64_t h = ((uint64_t)parent << 32 | name) ^ ((uint64_t)lang << 59);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static int tree_rehash(struct tree *t)
{
	size_t ncap = t->nslots ? t->nslots * 2 : 1024, i, j;
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < t->nslots; i++) {
		if (!t->slots[i].node)
			continue;
		for (j = t->slots[i].hash & (ncap - 1); ns[j].node; j = (j + 1) & (ncap - 1))
			;
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->nslots = ncap;
	return 0;
}

/* Returns the child of @parent called @name in @lang, created if needed, or -errno. */
static int64_t tree_child(struct tree *t, uint32_t parent, uint32_t name, uint32_t lang)
{
	uint64_t h = node_hash(parent, name, lang);
	const struct node *nd;
	struct node *nn;
	size_t j;
	int err;

	if ((t->n + 1) * 2 > t->nslots) {
		err = tree_rehash(t);
		if (err)
			return err;
	}
	/* The slot keeps the hash, so most probes end without touching the node. */
	for (j = h & (t->nslots - 1); t->slots[j].node; j = (j + 1) & (t->nslots - 1)) {
		if (t->slots[j].hash != (uint32_t)h)
			continue;
		nd = &t->nodes[t->slots[j].node - 1];
		if (nd->parent == parent && nd->name == name && nd->lang == lang)
			return t->slots[j].node - 1;
	}
	if (t->n >= UINT32_MAX - 1)
		return -E2BIG;
	if (t->n == t->cap) {
		nn = realloc(t->nodes, (t->cap ? t->cap * 2 : 1024) * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		t->cap = t->cap ? t->cap * 2 : 1024;
	}
	t->nodes[t->n] = (struct node){ .name = name, .lang = lang, .parent = parent };
	t->slots[j] = (struct slot){ (uint32_t)t->n + 1, (uint32_t)h };
	return (int64_t)t->n++;
}

static int name_id(struct tree *t, const char *s)
{
	if (!s || !*s)
		s = "[unknown]";
	return prof_strset__add(t->names, s, strlen(s));
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Descends from *@cur to its child @name in @lang, adding @v (and @nv, a diff's new value). */
static int tree_add_path(struct tree *t, uint32_t *cur, uint32_t name, uint32_t lang, int64_t v,
			 int64_t nv)
{
	int64_t c;

	c = tree_child(t, *cur, name, lang);
	if (c < 0)
		return (int)c;
	t->nodes[c].value = sat_add(t->nodes[c].value, v);
	t->nodes[c].next = sat_add(t->nodes[c].next, nv);
	*cur = (uint32_t)c;
	return 0;
}

/* The name index of frame @id, computed once per frame: stacks share most of their frames. */
static int frame_name(struct tree *t, const struct profile *p, uint32_t *cache, uint32_t id)
{
	char name[512];
	int n;

	if (cache[id] != UINT32_MAX)
		return (int)cache[id];
	n = name_id(t, profile_frame_display(profile__frame_info(p, id), name, sizeof(name)));
	if (n >= 0)
		cache[id] = (uint32_t)n;
	return n;
}

/* An empty tree: its name set and the root "all". */
static int tree_init(struct tree *t)
{
	int err, id;

	err = prof_strset__new(&t->names);
	if (err)
		return err;
	id = name_id(t, "all");
	if (id < 0)
		return id;
	err = tree_rehash(t);
	if (err)
		return err;
	t->nodes = malloc(1024 * sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->cap = 1024;
	t->nodes[0] = (struct node){ .name = (uint32_t)id,
				     .lang = PROF_LANG_OWNER,
				     .parent = UINT32_MAX };
	t->n = 1;
	return 0;
}

/* Adds sample @s of @p with value @v > 0: owner and process first when the profile asks. */
static int tree_add_sample(struct tree *t, const struct profile *p, uint32_t *cache,
			   const struct prof_sample *s, int64_t v)
{
	uint32_t cur = 0;
	size_t j;
	int err = 0, id;

	t->nodes[0].value = sat_add(t->nodes[0].value, v);
	if (profile__opts(p)->owner_root) {
		id = name_id(t, s->labels->owner ? s->labels->owner : "Other processes");
		err = id < 0 ? id : tree_add_path(t, &cur, (uint32_t)id, PROF_LANG_OWNER, v, 0);
		if (err)
			return err;
		id = name_id(t, s->labels->process);
		err = id < 0 ? id : tree_add_path(t, &cur, (uint32_t)id, PROF_LANG_OWNER, v, 0);
	}
	for (j = s->nframes; j-- > 0 && !err;) {
		id = frame_name(t, p, cache, s->frames[j]);
		err = id < 0 ? id :
			       tree_add_path(t, &cur, (uint32_t)id,
					     profile__frame_info(p, s->frames[j])->lang, v, 0);
	}
	return err;
}

static int tree_build(struct tree *t, const struct profile *p, size_t vi)
{
	size_t i, nframes = profile__nframes(p);
	struct prof_sample s;
	uint32_t *cache;
	int err;

	err = tree_init(t);
	if (err)
		return err;
	cache = malloc((nframes ? nframes : 1) * sizeof(*cache));
	if (!cache)
		return -ENOMEM;
	memset(cache, 0xff, nframes * sizeof(*cache));
	for (i = 0; i < profile__nsamples(p) && !err; i++) {
		profile__sample(p, i, &s);
		/* boxes cannot be negative; a diff has its own page */
		if (s.values[vi] > 0)
			err = tree_add_sample(t, p, cache, &s, s.values[vi]);
	}
	free(cache);
	return err;
}

/* Adds a diff row: its frames root first, split at ';' (collapsed names never hold one). */
static int tree_add_row(struct tree *t, const struct prof_diff_row *r)
{
	int64_t b = r->base > 0 ? r->base : 0, nv = r->next > 0 ? r->next : 0;
	const char *s = r->stack, *e;
	uint32_t cur = 0, depth = 0;
	int err = 0, id;
	size_t len;

	t->nodes[0].value = sat_add(t->nodes[0].value, b);
	t->nodes[0].next = sat_add(t->nodes[0].next, nv);
	for (; s && !err && depth++ < FG_MAX_DEPTH; s = e ? e + 1 : NULL) {
		e = strchr(s, ';');
		len = e ? (size_t)(e - s) : strlen(s);
		id = len ? prof_strset__add(t->names, s, len) : name_id(t, NULL);
		err = id < 0 ? id : tree_add_path(t, &cur, (uint32_t)id, PROF_LANG_NATIVE, b, nv);
	}
	return err;
}

static int tree_build_diff(struct tree *t, const struct prof_diff *d)
{
	const struct prof_diff_row *rows;
	size_t i, n = prof_diff__rows(d, &rows);
	int err;

	err = tree_init(t);
	for (i = 0; i < n && !err; i++)
		err = tree_add_row(t, &rows[i]);
	return err;
}

static double share(int64_t v, int64_t total)
{
	return total > 0 && v > 0 ? (double)v / (double)total : 0;
}

/*
 * The width of each box of a diff tree: its larger share, and at least its children's widths
 * together, so every child fits in its parent. A child's index is always above its parent's
 * (a node is created under an existing one), so one pass from the end sums children first.
 */
static int diff_widths(const struct tree *t, int64_t bt, int64_t nt, int64_t **out)
{
	int64_t *w = calloc(t->n ? t->n : 1, sizeof(*w)), own;
	const struct node *n;
	size_t i;

	if (!w)
		return -ENOMEM;
	for (i = t->n; i-- > 0;) {
		n = &t->nodes[i];
		own = llround(fmax(share(n->value, bt), share(n->next, nt)) * FG_DIFF_SCALE);
		if (own > w[i])
			w[i] = own;
		if (i)
			w[n->parent] = sat_add(w[n->parent], w[i]);
	}
	*out = w;
	return 0;
}

static int cmp_children(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	const struct node *x = &t->nodes[*(const uint32_t *)a],
			  *y = &t->nodes[*(const uint32_t *)b];
	int c = strcmp(prof_strset__str(t->names, x->name), prof_strset__str(t->names, y->name));

	return c ? c : (int)x->lang - (int)y->lang;
}

/* Lays the children of each node out contiguously, sorted by name (as flamegraph.pl does). */
static int tree_link(struct tree *t)
{
	size_t i, *fill;

	t->children = malloc((t->n ? t->n : 1) * sizeof(*t->children));
	fill = calloc(t->n ? t->n : 1, sizeof(*fill));
	if (!t->children || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 1; i < t->n; i++)
		t->nodes[t->nodes[i].parent].nchildren++;
	for (i = 0, fill[0] = 0; i < t->n; i++) {
		t->nodes[i].child_off = (uint32_t)fill[0];
		fill[0] += t->nodes[i].nchildren;
	}
	memset(fill, 0, t->n * sizeof(*fill));
	for (i = 1; i < t->n; i++) {
		struct node *pn = &t->nodes[t->nodes[i].parent];

		t->children[pn->child_off + fill[t->nodes[i].parent]++] = (uint32_t)i;
	}
	free(fill);
	for (i = 0; i < t->n; i++)
		if (t->nodes[i].nchildren > 1)
			qsort_r(t->children + t->nodes[i].child_off, t->nodes[i].nchildren,
				sizeof(uint32_t), cmp_children, t);
	return 0;
}

static void tree_free(struct tree *t)
{
	prof_strset__free(t->names);
	free(t->nodes);
	free(t->slots);
	free(t->children);
}

/* ---- output ---- */

/* A JSON string that is also safe inside <script>: <, >, & and U+2028/9 are escaped, and bytes
 * that are not UTF-8 become '?'. */
static void put_json_str(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		switch (p[i]) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '<':
			fputs("\\u003c", f);
			break;
		case '>':
			fputs("\\u003e", f);
			break;
		case '&':
			fputs("\\u0026", f);
			break;
		default:
			n = text_utf8_char_len(s + i, len - i);
			if (p[i] < 0x20 || p[i] == 0x7f) {
				fprintf(f, "\\u%04x", p[i]);
			} else if (!n) {
				fputc('?', f); /* not UTF-8: base/text's rule */
			} else if (p[i] == 0xe2 && i + 2 < len && p[i + 1] == 0x80 &&
				   (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
				fprintf(f, "\\u%04x", p[i + 2] == 0xa8 ? 0x2028 : 0x2029);
				i += 2;
			} else {
				fwrite(s + i, 1, n, f);
				i += n - 1;
			}
		}
	}
	fputc('"', f);
}

/* HTML text: markup characters escaped, bytes that are not UTF-8 become '?'. */
static void put_html(FILE *f, const char *s)
{
	size_t n;

	for (; s && *s; s += n) {
		n = 1;
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			n = text_utf8_char_len(s, strnlen(s, 4));
			if (n)
				fwrite(s, 1, n, f);
			else
				fputc('?', f);
			n = n ? n : 1;
		}
	}
}

struct emit {
	const struct tree *t;
	const int64_t *width; /* a diff's box widths (diff_widths); NULL: the values */
	int64_t total;	      /* the root's size */
	int64_t base_total, next_total;
	FILE *f;
	uint32_t *map;	 /* name set index -> emitted name index */
	uint32_t *order; /* emitted name index -> name set index */
	uint32_t nused;
};

static int64_t node_size(const struct emit *e, uint32_t i)
{
	return e->width ? e->width[i] : e->t->nodes[i].value;
}

static bool visible(const struct emit *e, int64_t v)
{
	return (__int128)v * FG_MIN_DIV >= e->total;
}

/* Depth is bounded: PROF_MAX_FRAMES frames plus root, owner and process (FG_MAX_DEPTH). A
 * diff node always has its children element, then its base and new values. */
static void put_node(const struct emit *e, uint32_t i)
{
	const struct node *n = &e->t->nodes[i];
	bool first = true;
	uint32_t c, k;

	fprintf(e->f, "[%u,%lld,%u", e->map[n->name], (long long)node_size(e, i), n->lang);
	for (k = 0; k < n->nchildren; k++) {
		c = e->t->children[n->child_off + k];
		if (!visible(e, node_size(e, c)))
			continue;
		fputs(first ? ",[" : ",", e->f);
		first = false;
		put_node(e, c);
	}
	if (!first)
		fputc(']', e->f);
	else if (e->width)
		fputs(",[]", e->f);
	if (e->width)
		fprintf(e->f, ",%lld,%lld", (long long)n->value, (long long)n->next);
	fputc(']', e->f);
}

/* Only names of visible boxes are written: number them in order of first use. */
static int used_names(struct emit *e)
{
	size_t nn = prof_strset__count(e->t->names), i;
	const struct node *n;

	e->map = malloc((nn ? nn : 1) * sizeof(*e->map));
	e->order = malloc((nn ? nn : 1) * sizeof(*e->order));
	if (!e->map || !e->order)
		return -ENOMEM;
	for (i = 0; i < nn; i++)
		e->map[i] = UINT32_MAX;
	e->nused = 0;
	for (i = 0; i < e->t->n; i++) {
		n = &e->t->nodes[i];
		/* Ancestors are never smaller, so a node's own size decides; root always. */
		if ((i == 0 || visible(e, node_size(e, (uint32_t)i))) &&
		    e->map[n->name] == UINT32_MAX) {
			e->order[e->nused] = n->name;
			e->map[n->name] = e->nused++;
		}
	}
	return 0;
}

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

/* Only for the self-contained page: an assets page gets its policy from the server. */
static const char page_csp[] =
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n";

/* An empty icon: browsers ask for /favicon.ico otherwise. */
static const char page_icon[] = "<link rel=\"icon\" href=\"data:,\">\n";

static const char fg_style[] =
	"*{box-sizing:border-box}\n"
	"body{margin:0;padding:16px 20px;font:14px/1.4 system-ui,-apple-system,'Segoe UI',"
	"Roboto,'Helvetica Neue',Arial,sans-serif;color:#1d2430;background:#fff}\n"
	"h1{font-size:20px;margin:0 0 6px;font-weight:600}\n"
	".answer{font-size:16px;margin:4px 0 8px;max-width:1100px}\n"
	".notes{margin:6px 0 10px;padding:8px 12px 8px 28px;background:#fff8e1;"
	"border:1px solid #f0dca0;border-radius:6px;max-width:1100px}\n"
	".notes li{margin:2px 0}\n"
	".tbl{margin:6px 0 10px}.tbl table{border-collapse:collapse;font-size:12px}"
	".tbl th,.tbl td{border:1px solid #ddd;padding:2px 8px;text-align:left}"
	".tbl th{background:#f3f3f3}\n"
	".bar{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;margin:10px 0 8px}\n"
	".bar input[type=search]{width:260px;padding:5px 8px;border:1px solid #b9c0cc;"
	"border-radius:5px;font:inherit}\n"
	".bar select,.bar button{font:inherit;padding:4px 8px;border:1px solid #b9c0cc;"
	"border-radius:5px;background:#f6f7f9;cursor:pointer}\n"
	".bar button:disabled{opacity:.45;cursor:default}\n"
	"#fg-match{font-weight:600;color:#8a1a8a}\n#fg-match:empty{display:none}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center;font-size:13px}\n"
	".legend span.sw{display:inline-block;width:12px;height:12px;border-radius:2px;"
	"margin-right:4px;vertical-align:-1px;border:1px solid rgba(0,0,0,.15)}\n"
	".meta{color:#5b6472;font-size:13px;margin:2px 0 6px}\n"
	"#fg-wrap{position:relative;width:100%}\n"
	"#fg-canvas{display:block;width:100%;cursor:pointer}\n"
	"#fg-tip{position:fixed;pointer-events:none;display:none;z-index:10;max-width:560px;"
	"background:#1d2430;color:#fff;padding:7px 10px;border-radius:6px;font-size:13px;"
	"box-shadow:0 2px 10px rgba(0,0,0,.25);word-break:break-all}\n"
	"#fg-tip b{display:block;margin-bottom:3px;font-weight:600}\n"
	"#fg-tip .dim{color:#c3cad6}\n"
	".empty{padding:40px;text-align:center;color:#5b6472;border:1px dashed #c9ced8}\n"
	"[hidden]{display:none!important}\n";

static const char page_controls[] =
	"<div class=\"bar\">\n"
	"<input type=\"search\" id=\"fg-search\" placeholder=\"Search functions (text or regex)\" "
	"aria-label=\"Search\">\n"
	"<span id=\"fg-match\"></span>\n"
	"<label id=\"fg-color-by\">Colour by: <select id=\"fg-color\">"
	"<option value=\"lang\">Language</option>"
	"<option value=\"name\">Name</option></select></label>\n"
	"<button id=\"fg-back\" disabled>Back</button>"
	"<button id=\"fg-reset\" disabled>Reset zoom</button>\n"
	"<div class=\"legend\" id=\"fg-legend\"></div>\n"
	"</div>\n"
	"<div class=\"meta\" id=\"fg-meta\"></div>\n"
	"<div id=\"fg-wrap\"><canvas id=\"fg-canvas\"></canvas></div>\n"
	"<div id=\"fg-tip\"></div>\n"
	"<script type=\"application/json\" id=\"fg-data\">";

static const char fg_script[] =
	"(function(){\n"
	"'use strict';\n"
	"var D=JSON.parse(document.getElementById('fg-data').textContent);\n"
	"var NAMES=D.names,LANGS=D.langs,UNIT=D.unit,TOTAL=D.total,ROW=18;\n"
	"var DIFF=D.diff===true,BT=D.base_total||0,NT=D.next_total||0;\n"
	"var COLORS={native:[238,150,75],kernel:[222,92,86],go:[60,178,196],java:[126,186,92],pyt"
	"hon:[88,136,232],node:[165,120,214],ruby:[222,96,150],owner:[178,182,190]};\n"
	"var canvas=document.getElementById('fg-canvas'),ctx=canvas.getContext('2d');\n"
	"var tip=document.getElementById('fg-tip'),search=document.getElementById('fg-search');\n"
	"var matchEl=document.getElementById('fg-match'),colorSel=document.getElementById('fg-col"
	"or');\n"
	"var backBtn=document.getElementById('fg-back'),resetBtn=document.getElementById('fg-rese"
	"t');\n"
	"var maxDepth=0,present={};\n"
	"function build(a,parent,depth){\n"
	" var n={name:NAMES[a[0]],v:a[1],l:a[2],p:parent,d:depth,c:[],m:false,b:a[4]||0,x:a[5]||0"
	"};\n"
	" if(depth>maxDepth)maxDepth=depth;\n"
	" if(depth>0)present[a[2]]=true;\n"
	" var ch=a[3]||[];\n"
	" for(var i=0;i<ch.length;i++)n.c.push(build(ch[i],n,depth+1));\n"
	" return n;\n"
	"}\n"
	"var root=build(D.tree,null,0),zoom=root,history=[],boxes=[],hover=null;\n"
	"function fmtInt(x){return Math.round(x).toString().replace(/\\B(?=(\\d{3})+(?!\\d))/g,',"
	"');}\n"
	"function fmtVal(v){\n"
	" if(UNIT==='ns'||UNIT==='nanoseconds'){\n"
	"  if(v>=1e9)return (v/1e9).toFixed(2)+' s';if(v>=1e6)return (v/1e6).toFixed(1)+' ms';\n"
	"  if(v>=1e3)return (v/1e3).toFixed(1)+' \\u00b5s';return v+' ns';}\n"
	" if(UNIT==='bytes'){\n"
	"  var u=['B','KB','MB','GB','TB'],i=0;while(v>=1024&&i<4){v/=1024;i++;}\n"
	"  return (i?v.toFixed(1):v)+' '+u[i];}\n"
	" return fmtInt(v)+' '+(v===1&&UNIT==='samples'?'sample':UNIT);\n"
	"}\n"
	"function pct(a,b){return b>0?(100*a/b).toFixed(a/b<0.001?3:1)+'%':'-';}\n"
	"function share(v,t){return t>0?v/t:0;}\n"
	"function pc(s){return (100*s).toFixed(1)+'%';}\n"
	"function points(d){return (d<0?'\\u2212':'+')+Math.abs(d).toFixed(1)+' points';}\n"
	"function delta(n){return 100*(share(n.x,NT)-share(n.b,BT));}\n"
	"function hash(s){var h=2166136261;for(var i=0;i<s.length;i++){h^=s.charCodeAt(i);h=Math."
	"imul(h,16777619);}return h>>>0;}\n"
	"function diffColour(n){\n"
	" var d=delta(n),t=Math.min(Math.abs(d)/10,1),lo=Math.round(225-165*t);\n"
	" if(n.d===0||Math.abs(d)<0.1)return 'rgb(214,216,220)';\n"
	" return d>0?'rgb(255,'+lo+','+lo+')':'rgb('+lo+','+(lo+15)+',255)';\n"
	"}\n"
	"function colour(n){\n"
	" if(DIFF)return diffColour(n);\n"
	" var h=hash(n.name),r,g,b;\n"
	" if(colorSel.value==='name'||n.d===0){\n"
	"  if(n.d===0)return 'rgb(200,204,212)';\n"
	"  var v1=(h&255)/255,v2=((h>>8)&255)/255,v3=((h>>16)&255)/255;\n"
	"  r=205+Math.round(50*v3);g=Math.round(60+170*v1);b=Math.round(55*v2);\n"
	"  return 'rgb('+r+','+g+','+b+')';}\n"
	" var c=COLORS[LANGS[n.l]]||COLORS.native,k=((h&255)/255-0.5)*0.22;\n"
	" r=c[0]+(k>0?(255-c[0])*k:c[0]*k);g=c[1]+(k>0?(255-c[1])*k:c[1]*k);b=c[2]+(k>0?(255-c[2]"
	")*k:c[2]*k);\n"
	" return 'rgb('+Math.round(r)+','+Math.round(g)+','+Math.round(b)+')';\n"
	"}\n"
	"function swatch(el,c,text){\n"
	" var s=document.createElement('span'),sw=document.createElement('span');\n"
	" sw.className='sw';sw.style.background='rgb('+c[0]+','+c[1]+','+c[2]+')';\n"
	" s.appendChild(sw);s.appendChild(document.createTextNode(text));el.appendChild(s);\n"
	"}\n"
	"function legend(){\n"
	" var el=document.getElementById('fg-legend');el.textContent='';\n"
	" if(DIFF){swatch(el,[255,60,60],'red: grew,');swatch(el,[60,75,255],'blue: shrank (share"
	" of each profile)');return;}\n"
	" if(colorSel.value!=='lang')return;\n"
	" for(var i=0;i<LANGS.length;i++){if(!present[i])continue;\n"
	"  swatch(el,COLORS[LANGS[i]],LANGS[i]==='owner'?'owner / process':LANGS[i]);}\n"
	"}\n"
	"var charW=7;\n"
	"function fit(name,w){var n=Math.floor((w-6)/charW);if(n<3)return '';\n"
	" return name.length<=n?name:name.slice(0,n-1)+'\\u2026';}\n"
	"function box(n,x,w,faded){\n"
	" var y=n.d*ROW;boxes.push({n:n,x:x,y:y,w:w});\n"
	" ctx.globalAlpha=faded?0.55:1;\n"
	" ctx.fillStyle=n.m?'rgb(226,60,226)':colour(n);\n"
	" ctx.fillRect(x,y,Math.max(w-1,0.5),ROW-1);\n"
	" if(n===hover){ctx.strokeStyle='#1d2430';ctx.lineWidth=1.5;ctx.strokeRect(x+0.75,y+0.75,"
	"Math.max(w-2.5,0.5),ROW-2.5);}\n"
	" var t=fit(n.name,w);if(t){ctx.fillStyle='#111';ctx.fillText(t,x+3,y+ROW/2+0.5);}\n"
	" ctx.globalAlpha=1;\n"
	"}\n"
	"function drawSub(n,x,w){\n"
	" box(n,x,w,false);\n"
	" if(!n.c.length||n.v<=0)return;\n"
	" var cx=x,sc=w/n.v;\n"
	" for(var i=0;i<n.c.length;i++){var c=n.c[i],cw=c.v*sc;\n"
	"  if(cw>=0.4)drawSub(c,cx,cw);cx+=cw;}\n"
	"}\n"
	"function draw(){\n"
	" var W=canvas.parentNode.clientWidth,H=(maxDepth+1)*ROW+2,dpr=window.devicePixelRatio||1"
	";\n"
	" canvas.width=Math.round(W*dpr);canvas.height=Math.round(H*dpr);canvas.style.height=H+'p"
	"x';\n"
	" ctx.setTransform(dpr,0,0,dpr,0,0);ctx.clearRect(0,0,W,H);\n"
	" ctx.font='12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace';\n"
	" ctx.textBaseline='middle';charW=ctx.measureText('mmmmmmmmmm').width/10||7;\n"
	" boxes=[];\n"
	" for(var a=zoom.p;a;a=a.p)box(a,0,W,true);\n"
	" drawSub(zoom,0,W);\n"
	" backBtn.disabled=!history.length;resetBtn.disabled=zoom===root;\n"
	"}\n"
	"function find(x,y){for(var i=boxes.length-1;i>=0;i--){var b=boxes[i];\n"
	" if(x>=b.x&&x<b.x+b.w&&y>=b.y&&y<b.y+ROW)return b.n;}return null;}\n"
	"function pos(e){var r=canvas.getBoundingClientRect();return [e.clientX-r.left,e.clientY-"
	"r.top];}\n"
	"function zoomTo(n){if(n===zoom)return;history.push(zoom);zoom=n;draw();}\n"
	"function tipLines(n){\n"
	" if(DIFF)return ['base '+pc(share(n.b,BT))+' \\u2192 new '+pc(share(n.x,NT))+' ('+points"
	"(delta(n))+')',\n"
	"  'base '+fmtVal(n.b)+' \\u00b7 new '+fmtVal(n.x)];\n"
	" var self=n.v;for(var i=0;i<n.c.length;i++)self-=n.c[i].v;\n"
	" return [fmtVal(n.v)+' \\u00b7 '+pct(n.v,TOTAL)+' of total'+(n.p?' \\u00b7 '+pct(n.v,n.p"
	".v)+' of parent':''),\n"
	"  'self '+fmtVal(self)+(n.d?' \\u00b7 '+(LANGS[n.l]||''):'')];\n"
	"}\n"
	"canvas.addEventListener('click',function(e){var p=pos(e),n=find(p[0],p[1]);if(n)zoomTo(n"
	");});\n"
	"canvas.addEventListener('mousemove',function(e){\n"
	" var p=pos(e),n=find(p[0],p[1]);\n"
	" if(n!==hover){hover=n;draw();}\n"
	" if(!n){tip.style.display='none';return;}\n"
	" tip.textContent='';var b=document.createElement('b');b.textContent=n.name;tip.appendChi"
	"ld(b);\n"
	" var lines=tipLines(n);\n"
	" for(var j=0;j<lines.length;j++){var d=document.createElement('div');if(j)d.className='d"
	"im';d.textContent=lines[j];tip.appendChild(d);}\n"
	" tip.style.display='block';\n"
	" var tx=e.clientX+14,ty=e.clientY+16,tw=tip.offsetWidth,th=tip.offsetHeight;\n"
	" if(tx+tw>window.innerWidth-8)tx=Math.max(8,e.clientX-tw-14);\n"
	" if(ty+th>window.innerHeight-8)ty=Math.max(8,e.clientY-th-12);\n"
	" tip.style.left=tx+'px';tip.style.top=ty+'px';\n"
	"});\n"
	"canvas.addEventListener('mouseleave',function(){tip.style.display='none';if(hover){hover"
	"=null;draw();}});\n"
	"backBtn.addEventListener('click',function(){if(history.length){zoom=history.pop();draw()"
	";}});\n"
	"resetBtn.addEventListener('click',function(){if(zoom!==root){history.push(zoom);zoom=roo"
	"t;draw();}});\n"
	"function mark(n,re,q,inMatch,acc){\n"
	" var hit=q!==''&&(re?re.test(n.name):n.name.toLowerCase().indexOf(q)>=0)&&n.d>0;\n"
	" n.m=hit;\n"
	" if(hit&&!inMatch){acc.v+=n.v;acc.b+=n.b;acc.x+=n.x;}\n"
	" for(var i=0;i<n.c.length;i++)mark(n.c[i],re,q,inMatch||hit,acc);\n"
	"}\n"
	"function doSearch(){\n"
	" var q=search.value,re=null,acc={v:0,b:0,x:0};\n"
	" if(q!==''){try{re=new RegExp(q,'i');}catch(err){re=null;}}\n"
	" mark(root,re,q.toLowerCase(),false,acc);\n"
	" matchEl.textContent=q===''?'':DIFF?'Matched: base '+pc(share(acc.b,BT))+' \\u2192 new '"
	"+pc(share(acc.x,NT)):'Matched: '+pct(acc.v,TOTAL);\n"
	" draw();\n"
	"}\n"
	"search.addEventListener('input',doSearch);\n"
	"colorSel.addEventListener('change',function(){legend();draw();});\n"
	"document.addEventListener('keydown',function(e){\n"
	" if(e.key==='Escape'){if(document.activeElement===search&&search.value){search.value='';"
	"doSearch();}else if(zoom!==root){history.push(zoom);zoom=root;draw();}}\n"
	" else if(e.key==='/'&&document.activeElement!==search){e.preventDefault();search.focus()"
	";}\n"
	"});\n"
	"window.addEventListener('resize',draw);\n"
	"if(DIFF)document.getElementById('fg-color-by').hidden=true;\n"
	"document.getElementById('fg-meta').textContent=(DIFF?'Base: '+fmtVal(BT)+' \\u00b7 new: "
	"'+fmtVal(NT)+' \\u00b7 a box is as wide as the larger of its two shares':'Total: '+fmtVa"
	"l(TOTAL))+' \\u00b7 click a box to zoom in, Esc to zoom out, / to search \\u00b7 boxes u"
	"nder 0.01% are folded into their parent';\n"
	"if(TOTAL<=0){var wrap=document.getElementById('fg-wrap'),em=document.createElement('div'"
	");\n"
	" em.className='empty';em.textContent=DIFF?'These profiles have no samples.':'This profil"
	"e has no samples.';\n"
	" wrap.textContent='';wrap.appendChild(em);}\n"
	"else{legend();\n"
	" var h=/^#q=(.*)$/.exec(location.hash);\n"
	" if(h){try{search.value=decodeURIComponent(h[1]);}catch(err){}doSearch();}else draw();}"
	"\n"
	"})();\n";

const char *flamegraph_script(size_t *len)
{
	if (len)
		*len = sizeof(fg_script) - 1;
	return fg_script;
}

const char *flamegraph_style(size_t *len)
{
	if (len)
		*len = sizeof(fg_style) - 1;
	return fg_style;
}

/* The URL of asset @file under @o->assets, as an HTML attribute value. */
static void put_asset(FILE *f, const struct flamegraph_opts *o, const char *file)
{
	size_t n = strlen(o->assets);

	put_html(f, o->assets);
	if (!n || o->assets[n - 1] != '/')
		fputc('/', f);
	fputs(file, f);
}

static void put_head(FILE *f, const struct flamegraph_opts *o)
{
	fputs(page_head, f);
	if (!o->assets)
		fputs(page_csp, f);
	fputs(page_icon, f);
	fputs("<title>", f);
	put_html(f, o->title && *o->title ? o->title : "Flame graph");
	fputs("</title>\n", f);
	if (o->assets) {
		fputs("<link rel=\"stylesheet\" href=\"", f);
		put_asset(f, o, "flamegraph.css");
		fputs("\">\n", f);
	} else {
		fputs("<style>\n", f);
		fputs(fg_style, f);
		fputs("</style>\n", f);
	}
	fputs("</head>\n<body>\n", f);
}

/* The title, the answer and the notes. */
static void put_intro(FILE *f, const struct flamegraph_opts *o)
{
	const char *const *note;

	if (!o->assets) { /* a page that frames this one shows its own heading */
		fputs("<h1>", f);
		put_html(f, o->title && *o->title ? o->title : "Flame graph");
		fputs("</h1>\n", f);
	}
	if (o->answer && *o->answer) {
		fputs("<p class=\"answer\">", f);
		put_html(f, o->answer);
		fputs("</p>\n", f);
	}
	if (!o->notes || !o->notes[0])
		return;
	fputs("<ul class=\"notes\">\n", f);
	for (note = o->notes; *note; note++) {
		fputs("<li>", f);
		put_html(f, *note);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
}

/* <tag>@s</tag>, escaped; NULL is "". */
static void put_cell(FILE *f, const char *tag, const char *s)
{
	fprintf(f, "<%s>", tag);
	put_html(f, s ? s : "");
	fprintf(f, "</%s>", tag);
}

static void put_table(FILE *f, const struct flamegraph_opts *o)
{
	size_t r, col;

	if (!o->table_ncols || !o->table_cols || (!o->table_cells && o->table_nrows))
		return;
	fputs("<details class=\"tbl\" open><summary>", f);
	put_html(f, o->table_title ? o->table_title : "Details");
	fputs("</summary>\n<table><tr>", f);
	for (col = 0; col < o->table_ncols; col++)
		put_cell(f, "th", o->table_cols[col]);
	fputs("</tr>\n", f);
	for (r = 0; r < o->table_nrows; r++) {
		fputs("<tr>", f);
		for (col = 0; col < o->table_ncols; col++)
			put_cell(f, "td", o->table_cells[r * o->table_ncols + col]);
		fputs("</tr>\n", f);
	}
	fputs("</table></details>\n", f);
}

static void put_names(const struct emit *e)
{
	uint32_t k;

	fputs("\"names\":[", e->f);
	for (k = 0; k < e->nused; k++) {
		if (k)
			fputc(',', e->f);
		put_json_str(e->f, prof_strset__str(e->t->names, e->order[k]),
			     prof_strset__len(e->t->names, e->order[k]));
	}
	fputs("]", e->f);
}

/* The JSON of the fg-data block (flamegraph.h). */
static void put_data(const struct emit *e, const struct flamegraph_opts *o)
{
	const char *unit = o->unit && *o->unit ? o->unit : "samples";
	unsigned i;

	fputs(e->width ? "{\"version\":1,\"diff\":true,\"unit\":" : "{\"version\":1,\"unit\":",
	      e->f);
	put_json_str(e->f, unit, strlen(unit));
	fprintf(e->f, ",\"total\":%lld", (long long)e->total);
	if (e->width)
		fprintf(e->f, ",\"base_total\":%lld,\"next_total\":%lld", (long long)e->base_total,
			(long long)e->next_total);
	fputs(",\"langs\":[", e->f);
	for (i = 0; i < PROF_LANG_COUNT; i++)
		fprintf(e->f, "%s\"%s\"", i ? "," : "", prof_lang_name((enum prof_lang)i));
	fputs("],", e->f);
	put_names(e);
	fputs(",\"tree\":", e->f);
	put_node(e, 0);
	fputs("}", e->f);
}

static void put_tail(FILE *f, const struct flamegraph_opts *o)
{
	fputs("</script>\n", f);
	if (o->assets) {
		fputs("<script src=\"", f);
		put_asset(f, o, "flamegraph.js");
		fputs("\"></script>\n", f);
	} else {
		fputs("<script>\n", f);
		fputs(fg_script, f);
		fputs("</script>\n", f);
	}
	fputs("</body>\n</html>\n", f);
}

static int write_page(struct emit *e, const struct flamegraph_opts *o)
{
	static const struct flamegraph_opts defaults;
	int err;

	if (!o)
		o = &defaults;
	err = used_names(e);
	if (!err) {
		put_head(e->f, o);
		put_intro(e->f, o);
		put_table(e->f, o);
		fputs(page_controls, e->f);
		put_data(e, o);
		put_tail(e->f, o);
		err = ferror(e->f) ? -EIO : 0;
	}
	free(e->map);
	free(e->order);
	return err;
}

int flamegraph_write(const struct profile *p, const struct flamegraph_opts *opts, FILE *f)
{
	struct tree t = { 0 };
	struct emit e = { .t = &t, .f = f };
	int err;

	if (!p || !f)
		return -EINVAL;
	if (opts && opts->value_index >= profile__opts(p)->nvalues)
		return -EINVAL;
	err = tree_build(&t, p, opts ? opts->value_index : 0);
	if (!err)
		err = tree_link(&t);
	if (!err) {
		e.total = t.nodes[0].value;
		err = write_page(&e, opts);
	}
	tree_free(&t);
	return err;
}

int flamegraph_write_diff(const struct prof_diff *d, const struct flamegraph_opts *opts, FILE *f)
{
	struct tree t = { 0 };
	struct emit e = { .t = &t, .f = f };
	int64_t *width = NULL;
	int err;

	if (!d || !f)
		return -EINVAL;
	prof_diff__totals(d, &e.base_total, &e.next_total);
	err = tree_build_diff(&t, d);
	if (!err)
		err = tree_link(&t);
	if (!err)
		err = diff_widths(&t, e.base_total, e.next_total, &width);
	if (!err) {
		e.width = width;
		e.total = width[0];
		err = write_page(&e, opts);
	}
	free(width);
	tree_free(&t);
	return err;
}

struct fg_ctx {
	const struct profile *p;
	const struct prof_diff *d;
	const struct flamegraph_opts *opts;
};

static int write_cb(void *ctx, FILE *f)
{
	struct fg_ctx *c = ctx;

	return c->d ? flamegraph_write_diff(c->d, c->opts, f) : flamegraph_write(c->p, c->opts, f);
}

int flamegraph_write_file(const struct profile *p, const struct flamegraph_opts *opts,
			  const char *path)
{
	struct fg_ctx c = { .p = p, .opts = opts };

	if (!p || !path)
		return -EINVAL;
	return atomic_write_file(path, write_cb, &c);
}

int flamegraph_write_diff_file(const struct prof_diff *d, const struct flamegraph_opts *opts,
			       const char *path)
{
	struct fg_ctx c = { .d = d, .opts = opts };

	if (!d || !path)
		return -EINVAL;
	return atomic_write_file(path, write_cb, &c);
}
