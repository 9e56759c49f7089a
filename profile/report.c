// SPDX-License-Identifier: Apache-2.0
#include "profile/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/text.h"
#include "profile/profile.h"

/* A small string-keyed accumulator: open addressing, grows at 50% load. */
struct acc_entry {
	char *key;
	uint32_t pid;
	int64_t value;
	void *sub;   /* per-group: process accumulator; per-process: function accumulator */
	char *extra; /* process name, or build id */
};

struct acc {
	struct acc_entry *slots;
	size_t cap, len;
};

static uint64_t hash_key(const char *s, uint32_t pid)
{
	uint64_t h = 1469598103934665603ULL ^ pid;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void acc_free(struct acc *a, int depth)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->cap; i++) {
		if (!a->slots[i].key)
			continue;
		free(a->slots[i].key);
		free(a->slots[i].extra);
		if (depth > 0)
			acc_free(a->slots[i].sub, depth - 1);
	}
	free(a->slots);
	free(a);
}

static int acc_grow(struct acc *a)
{
	size_t ncap = a->cap ? a->cap * 2 : 16, i, j;
	struct acc_entry *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < a->cap; i++) {
		if (!a->slots[i].key)
			continue;
		j = hash_key(a->slots[i].key, a->slots[i].pid) & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = a->slots[i];
	}
	free(a->slots);
	a->slots = ns;
	a->cap = ncap;
	return 0;
}

/* Finds or inserts (key, pid); returns the entry or NULL on ENOMEM. */
static struct acc_entry *acc_get(struct acc *a, const char *key, uint32_t pid)
{
	size_t j;

	if ((a->len + 1) * 2 > a->cap && acc_grow(a))
		return NULL;
	j = hash_key(key, pid) & (a->cap - 1);
	while (a->slots[j].key) {
		if (a->slots[j].pid == pid && !strcmp(a->slots[j].key, key))
			return &a->slots[j];
		j = (j + 1) & (a->cap - 1);
	}
	a->slots[j].key = strdup(key);
	if (!a->slots[j].key)
		return NULL;
	a->slots[j].pid = pid;
	a->len++;
	return &a->slots[j];
}

static int cmp_entry_desc(const void *x, const void *y)
{
	const struct acc_entry *a = *(const struct acc_entry *const *)x;
	const struct acc_entry *b = *(const struct acc_entry *const *)y;

	if (a->value != b->value)
		return a->value < b->value ? 1 : -1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* Entries of @a sorted by value, descending (borrowed pointers). */
static struct acc_entry **acc_sorted(const struct acc *a)
{
	struct acc_entry **v = calloc(a->len ? a->len : 1, sizeof(*v));
	size_t i, n = 0;

	if (!v)
		return NULL;
	for (i = 0; i < a->cap; i++)
		if (a->slots[i].key)
			v[n++] = &a->slots[i];
	qsort(v, n, sizeof(*v), cmp_entry_desc);
	return v;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

bool report_is_system_dso(const char *path)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-",	 "ld-linux",   "ld-musl",   "libpthread", "libm.so",
		"libm-",   "libdl",	 "librt",      "libgcc_s",  "libstdc++",  "libc++",
		"libz.so", "libcrypto",	 "libssl",     "libpython", "libjvm",	  "libruby",
		"libnode", "libv8",	 "libjli",     "libgo.so",  "libunwind",  "libresolv",
		"libnss_", "libselinux", "libsystemd",
	};
	const char *b;
	size_t i;

	if (!path || !*path)
		return false;
	if (path[0] == '[')
		return true; /* [kernel.kallsyms], [vdso], [vsyscall] */
	b = basename_of(path);
	/* Shared libraries installed by the distribution: their internals sit under the function
	 * of the application that called them (seed 001: never listed). */
	if (strstr(b, ".so") &&
	    (!strncmp(path, "/lib/", 5) || !strncmp(path, "/lib64/", 7) ||
	     !strncmp(path, "/usr/lib/", 9) || !strncmp(path, "/usr/lib64/", 11)))
		return true;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
			return true;
	/* The CPython executable of a static build (Debian's python3.11, pyenv's): its frames are
	 * the interpreter's, under the Python function that ran them. */
	return !strncmp(b, "python", 6) && (!b[6] || (b[6] >= '0' && b[6] <= '9'));
}

bool report_is_go_std(const char *function)
{
	const char *slash, *first_end, *pkg_end;

	if (!function || !*function)
		return false;
	/* The package path ends at the first '.' after the last '/': "net/http.(*conn).serve" */
	slash = strrchr(function, '/');
	pkg_end = strchr(slash ? slash : function, '.');
	if (!pkg_end)
		return false;
	if (pkg_end - function == 4 && !strncmp(function, "main", 4))
		return false;
	/* Standard library paths have no dot in their first element ("net", "runtime"); module
	 * paths do ("github.com", "example.org"). */
	first_end = strchr(function, '/');
	if (!first_end || first_end > pkg_end)
		first_end = pkg_end;
	return !memchr(function, '.', first_end - function);
}

/* True when @p (inside @file) starts "/pythonX.Y/" or "/pythonX.Yt/" (a free-threaded build)
 * right after a "lib" or "lib64" directory. */
static bool is_stdlib_dir(const char *file, const char *p)
{
	size_t before = (size_t)(p - file);
	const char *v = p + strlen("/python");
	int dots = 0;

	if (!((before >= 4 && !strncmp(p - 4, "/lib", 4)) ||
	      (before >= 6 && !strncmp(p - 6, "/lib64", 6)) ||
	      (before == 3 && !strncmp(file, "lib", 3)) ||
	      (before == 5 && !strncmp(file, "lib64", 5))))
		return false;
	if (*v < '0' || *v > '9')
		return false;
	for (; (*v >= '0' && *v <= '9') || *v == '.'; v++)
		dots += *v == '.';
	if (*v == 't')
		v++;
	/* "python3/" (Debian's /usr/lib/python3/, only dist-packages) is not one version's stdlib */
	return dots == 1 && v[-1] != '.' && *v == '/';
}

bool report_is_python_std(const char *file)
{
	const char *p;

	if (!file || !*file)
		return false;
	/* Frozen modules are standard library compiled into the interpreter: importlib's
	 * bootstrap on every version, and os, codecs, site, ... since 3.11. */
	if (!strncmp(file, "<frozen ", 8))
		return true;
	/* Third-party packages are the application's, even under the interpreter's prefix. */
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return false;
	for (p = strstr(file, "/python"); p; p = strstr(p + 1, "/python"))
		if (is_stdlib_dir(file, p))
			return true;
	return false;
}

bool report_is_java_std(const char *function)
{
	static const char *const pkgs[] = { "java.", "javax.", "jdk.", "sun.", "com.sun." };
	size_t i;

	for (i = 0; function && i < ARRAY_SIZE(pkgs); i++)
		if (!strncmp(function, pkgs[i], strlen(pkgs[i])))
			return true;
	return false;
}

bool report_is_native_std(const char *file)
{
	static const char *const dirs[] = { "/include/c++/", "/library/core/src/",
					    "/library/alloc/src/", "/library/std/src/" };
	size_t i;

	for (i = 0; file && i < ARRAY_SIZE(dirs); i++)
		if (strstr(file, dirs[i]))
			return true;
	return false;
}

static bool frame_is_system(const struct prof_frame_info *f)
{
	if (f->lang == PROF_LANG_KERNEL || f->lang == PROF_LANG_OWNER)
		return true;
	if (f->lang == PROF_LANG_GO && report_is_go_std(f->function))
		return true;
	/* A Python frame's mapping is its source file (pyframes): never a shared library, so only
	 * the standard library test applies ("json/encoder.py" under handle_request is
	 * handle_request's time, as libc's memcpy under build_report is build_report's). A code
	 * object that could not be read ("[python]") goes to its caller too, as before. */
	if (f->lang == PROF_LANG_PYTHON)
		return report_is_python_std(f->file && *f->file ? f->file : f->mapping) ||
		       (f->mapping && f->mapping[0] == '[');
	/* a Java frame's mapping is its source file too; an unnamed one ("[java]") goes to its
	 * caller */
	if (f->lang == PROF_LANG_JAVA)
		return report_is_java_std(f->function) || (f->mapping && f->mapping[0] == '[');
	/* a JavaScript frame's mapping is its script: Node.js's own library ("node:internal/...",
	 * "node:fs") and V8's built-in functions (no script: "[javascript]") go to their caller */
	if (f->lang == PROF_LANG_NODE)
		return !f->mapping || !strncmp(f->mapping, "node:", 5) || f->mapping[0] == '[';
	/* C++'s and Rust's standard library code inlined or instantiated in the program */
	if (f->lang == PROF_LANG_NATIVE && report_is_native_std(f->file))
		return true;
	return report_is_system_dso(f->mapping);
}

/* The frame a sample is "spent in": the leaf-most frame of the application. */
static const struct prof_frame_info *attributed_frame(const struct profile *p,
						      const struct prof_sample *s)
{
	const struct prof_frame_info *f, *leaf = NULL;
	size_t i;

	for (i = 0; i < s->nframes; i++) {
		f = profile__frame_info(p, s->frames[i]);
		if (!f || f->lang == PROF_LANG_OWNER)
			continue;
		/* when nothing is the application's, the leaf-most real frame, not the synthetic
		 * leaf that says why it waited */
		if (!leaf && !(f->mapping &&
			       (!strcmp(f->mapping, REPORT_WAIT_MAPPING) ||
				!strcmp(f->mapping, REPORT_CLASS_MAPPING)) &&
			       i + 1 < s->nframes))
			leaf = f;
		if (!frame_is_system(f))
			return f;
	}
	return leaf;
}

static char *top_key(struct acc *funcs)
{
	struct acc_entry **v;
	char *s = NULL;

	if (!funcs || !funcs->len)
		return NULL;
	v = acc_sorted(funcs);
	if (v)
		s = strdup(v[0]->key);
	free(v);
	return s;
}

static double pct(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0.0;
}

void report__free(struct report *r)
{
	size_t i, j;

	if (!r)
		return;
	for (i = 0; i < r->ngroups; i++) {
		free(r->groups[i].owner);
		free(r->groups[i].top_function);
		free(r->groups[i].top_wait);
		free(r->groups[i].top_wait_function);
		for (j = 0; j < r->groups[i].nprocs; j++) {
			free(r->groups[i].procs[j].name);
			free(r->groups[i].procs[j].top_function);
		}
		free(r->groups[i].procs);
	}
	free(r->groups);
	for (i = 0; i < r->ntop; i++)
		free(r->top[i].name);
	free(r->top);
	for (i = 0; i < r->nstripped; i++) {
		free(r->stripped[i].path);
		free(r->stripped[i].build_id);
	}
	free(r->stripped);
	free(r);
}

struct report_acc {
	struct acc *waits;  /* owner -> (sub: acc of reasons -> (sub: acc of functions)) */
	struct acc *groups; /* owner -> (sub: acc of processes -> (sub: acc of functions)) */
	struct acc *gfuncs; /* owner -> (sub: acc of functions) */
	struct acc *funcs;
	struct acc *stripped;
	int64_t unnamed;
};

static struct acc *sub_acc(struct acc_entry *e)
{
	if (!e->sub)
		e->sub = calloc(1, sizeof(struct acc));
	return e->sub;
}

static int add_value(struct acc *a, const char *key, uint32_t pid, int64_t v,
		     struct acc_entry **out)
{
	struct acc_entry *e = acc_get(a, key, pid);

	if (!e)
		return -ENOMEM;
	e->value += v;
	if (out)
		*out = e;
	return 0;
}

static int account_sample(const struct profile *p, const struct prof_sample *s, int64_t v,
			  struct report_acc *ra, struct report *r)
{
	const struct prof_frame_info *f = attributed_frame(p, s);
	const char *owner = s->labels && s->labels->owner ? s->labels->owner : "Other processes";
	const char *pname = s->labels && s->labels->process ? s->labels->process : "?";
	uint32_t pid = s->labels ? s->labels->pid : 0;
	struct acc_entry *g, *pe, *gf;
	struct acc *procs, *pfuncs, *gfuncs;
	char fname[512];
	size_t i, j;

	if (f)
		profile_frame_display(f, fname, sizeof(fname));
	else
		snprintf(fname, sizeof(fname), "[unknown]");
	if (!f || !f->function)
		ra->unnamed += v;
	if (s->labels)
		r->languages |= 1u << s->labels->lang;
	for (i = 0; i < s->nframes; i++) {
		const struct prof_frame_info *fi = profile__frame_info(p, s->frames[i]);

		if (fi)
			r->languages |= 1u << fi->lang;
	}
	r->languages &= ~(1u << PROF_LANG_OWNER);

	if (add_value(ra->groups, owner, 0, v, &g) || add_value(ra->funcs, fname, 0, v, NULL))
		return -ENOMEM;
	procs = sub_acc(g);
	if (!procs || add_value(procs, pname, pid, v, &pe))
		return -ENOMEM;
	pfuncs = sub_acc(pe);
	if (!pfuncs || add_value(pfuncs, fname, 0, v, NULL))
		return -ENOMEM;
	if (add_value(ra->gfuncs, owner, 0, 0, &gf))
		return -ENOMEM;
	gfuncs = sub_acc(gf);
	if (!gfuncs || add_value(gfuncs, fname, 0, v, NULL))
		return -ENOMEM;

	/* waiting: the leaf says why */
	if (s->nframes) {
		const struct prof_frame_info *leaf = profile__frame_info(p, s->frames[0]);

		if (leaf && leaf->mapping && leaf->function &&
		    !strcmp(leaf->mapping, REPORT_WAIT_MAPPING)) {
			const char *colon = strchr(leaf->function, ':');
			const char *from = colon ? colon + 2 : leaf->function;
			char reason[128];
			struct acc_entry *w, *re;
			struct acc *reasons, *rfuncs;

			text_utf8_valid_copy(reason, sizeof(reason), from, strlen(from));
			reason[strcspn(reason, "]")] = '\0';
			if (add_value(ra->waits, owner, 0, v, &w))
				return -ENOMEM;
			reasons = sub_acc(w);
			if (!reasons || add_value(reasons, reason, 0, v, &re))
				return -ENOMEM;
			rfuncs = sub_acc(re);
			if (!rfuncs || add_value(rfuncs, fname, 0, v, NULL))
				return -ENOMEM;
		}
	}

	/* stripped binaries: counted once per sample that has a frame in them */
	for (i = 0; i < s->nframes; i++) {
		const struct prof_frame_info *fi = profile__frame_info(p, s->frames[i]);
		bool dup = false;

		if (!fi || !fi->unnamed_stripped || !fi->mapping ||
		    report_is_system_dso(fi->mapping))
			continue;
		for (j = 0; j < i && !dup; j++) {
			const struct prof_frame_info *fj = profile__frame_info(p, s->frames[j]);

			dup = fj && fj->unnamed_stripped && fj->mapping &&
			      !strcmp(fj->mapping, fi->mapping);
		}
		if (dup)
			continue;
		if (add_value(ra->stripped, fi->mapping, 0, v, &pe))
			return -ENOMEM;
		if (!pe->extra && fi->build_id)
			pe->extra = strdup(fi->build_id);
	}
	return 0;
}

static int build_groups(struct report *r, struct report_acc *ra, const struct report_opts *o)
{
	struct acc_entry **gv, **pv, *gf;
	size_t i, j, np;
	int err = -ENOMEM;

	gv = acc_sorted(ra->groups);
	if (!gv)
		return -ENOMEM;
	r->groups = calloc(ra->groups->len ? ra->groups->len : 1, sizeof(*r->groups));
	if (!r->groups)
		goto out;
	for (i = 0; i < ra->groups->len; i++) {
		struct report_group *g = &r->groups[r->ngroups++];
		struct acc *procs = gv[i]->sub;

		g->owner = strdup(gv[i]->key);
		g->value = gv[i]->value;
		g->share = pct(g->value, r->total);
		gf = acc_get(ra->gfuncs, gv[i]->key, 0);
		g->top_function = gf ? top_key(gf->sub) : NULL;
		gf = acc_get(ra->waits, gv[i]->key, 0);
		if (gf && gf->value) {
			struct acc_entry **rv = acc_sorted(gf->sub);

			g->wait_value = gf->value;
			if (rv && ((struct acc *)gf->sub)->len) {
				g->top_wait = strdup(rv[0]->key);
				g->top_wait_value = rv[0]->value;
				g->top_wait_function = top_key(rv[0]->sub);
			}
			free(rv);
		}
		if (!g->owner)
			goto out;
		if (!procs)
			continue;
		pv = acc_sorted(procs);
		if (!pv)
			goto out;
		np = procs->len < o->max_processes ? procs->len : o->max_processes;
		g->procs = calloc(np ? np : 1, sizeof(*g->procs));
		if (!g->procs) {
			free(pv);
			goto out;
		}
		for (j = 0; j < np; j++) {
			struct report_process *rp = &g->procs[g->nprocs++];

			rp->pid = pv[j]->pid;
			rp->name = strdup(pv[j]->key);
			rp->value = pv[j]->value;
			rp->share = pct(rp->value, r->total);
			rp->top_function = top_key(pv[j]->sub);
		}
		free(pv);
	}
	err = 0;
out:
	free(gv);
	return err;
}

static int build_lists(struct report *r, struct report_acc *ra, const struct report_opts *o)
{
	struct acc_entry **v;
	size_t i, n;

	v = acc_sorted(ra->funcs);
	if (!v)
		return -ENOMEM;
	n = ra->funcs->len < o->max_top ? ra->funcs->len : o->max_top;
	r->top = calloc(n ? n : 1, sizeof(*r->top));
	if (!r->top) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		r->top[i].name = strdup(v[i]->key);
		r->top[i].value = v[i]->value;
		r->top[i].share = pct(v[i]->value, r->total);
		r->ntop++;
	}
	free(v);

	v = acc_sorted(ra->stripped);
	if (!v)
		return -ENOMEM;
	r->stripped = calloc(ra->stripped->len ? ra->stripped->len : 1, sizeof(*r->stripped));
	if (!r->stripped) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < ra->stripped->len; i++) {
		if (pct(v[i]->value, r->total) < o->stripped_min_share)
			break;
		r->stripped[i].path = strdup(v[i]->key);
		r->stripped[i].build_id = v[i]->extra ? strdup(v[i]->extra) : NULL;
		r->stripped[i].value = v[i]->value;
		r->stripped[i].share = pct(v[i]->value, r->total);
		r->nstripped++;
	}
	free(v);
	return 0;
}

int report__new(const struct profile *p, const struct report_opts *opts, struct report **out)
{
	struct report_opts o = opts ? *opts : (struct report_opts){};
	struct report_acc ra = {};
	struct prof_sample s;
	struct report *r;
	size_t i;
	int err = -ENOMEM;

	if (!o.max_processes)
		o.max_processes = 10;
	if (!o.max_top)
		o.max_top = 20;
	if (o.stripped_min_share <= 0)
		o.stripped_min_share = 1.0;
	r = calloc(1, sizeof(*r));
	ra.groups = calloc(1, sizeof(struct acc));
	ra.gfuncs = calloc(1, sizeof(struct acc));
	ra.funcs = calloc(1, sizeof(struct acc));
	ra.stripped = calloc(1, sizeof(struct acc));
	ra.waits = calloc(1, sizeof(struct acc));
	if (!r || !ra.groups || !ra.gfuncs || !ra.funcs || !ra.stripped || !ra.waits)
		goto out;
	r->total = profile__total(p, o.value_index);
	if (profile__opts(p)->nvalues > 1)
		r->total_alt = profile__total(p, o.value_index ? 0 : 1);
	for (i = 0; i < profile__nsamples(p); i++) {
		if (profile__sample(p, i, &s))
			continue;
		err = account_sample(p, &s, s.values[o.value_index], &ra, r);
		if (err)
			goto out;
	}
	r->unnamed_share = pct(ra.unnamed, r->total);
	err = build_groups(r, &ra, &o);
	if (!err)
		err = build_lists(r, &ra, &o);
out:
	acc_free(ra.waits, 2);
	acc_free(ra.groups, 2);
	acc_free(ra.gfuncs, 1);
	acc_free(ra.funcs, 0);
	acc_free(ra.stripped, 0);
	if (err) {
		report__free(r);
		return err;
	}
	*out = r;
	return 0;
}

static int round_pct(double v)
{
	return (int)(v + 0.5);
}

static int answer(const struct report *r, unsigned int seconds, const char *what, const char *where,
		  char *buf, size_t size)
{
	const struct report_group *g;
	int n;

	if (!r->ngroups || r->total <= 0)
		return snprintf(buf, size,
				"Over %u second%s, nothing used %s %s: no samples were taken.",
				seconds, seconds == 1 ? "" : "s", what, where);
	g = &r->groups[0];
	n = snprintf(buf, size, "Over %u second%s, %s used %d%% of %s %s, most of it in %s.",
		     seconds, seconds == 1 ? "" : "s", g->owner, round_pct(g->share), what, where,
		     g->top_function ? g->top_function : "[unknown]");
	if (r->ngroups > 1 && n >= 0)
		n += snprintf((size_t)n < size ? buf + n : NULL, (size_t)n < size ? size - n : 0,
			      " Next was %s, at %d%%.", r->groups[1].owner,
			      round_pct(r->groups[1].share));
	return n;
}

static int answer_target(const struct report *r, unsigned int seconds, const char *who,
			 double share, const char *what, const char *where, char *buf, size_t size)
{
	if (!r->ntop || r->total <= 0)
		return snprintf(buf, size,
				"Over %u second%s, %s did not use %s %s: no samples "
				"were taken.",
				seconds, seconds == 1 ? "" : "s", who, what, where);
	return snprintf(buf, size, "Over %u second%s, %s used %d%% of %s %s, most of it in %s.",
			seconds, seconds == 1 ? "" : "s", who, round_pct(share), what, where,
			r->top[0].name);
}

/* The group that waited most (by waiting time), or NULL. */
static const struct report_group *top_waiter(const struct report *r,
					     const struct report_group *skip)
{
	const struct report_group *best = NULL;
	size_t i;

	for (i = 0; i < r->ngroups; i++)
		if (&r->groups[i] != skip && r->groups[i].wait_value > 0 &&
		    (!best || r->groups[i].wait_value > best->wait_value))
			best = &r->groups[i];
	return best;
}

static int answer_wall(const struct report *r, unsigned int seconds, const char *who, char *buf,
		       size_t size)
{
	const char *s = seconds == 1 ? "" : "s";
	const struct report_group *g, *next;
	int64_t all_wait = 0;
	size_t i;
	int n;

	for (i = 0; i < r->ngroups; i++)
		all_wait += r->groups[i].wait_value;
	if (who) {
		int64_t run = r->total - all_wait;

		g = top_waiter(r, NULL);
		if (!g || r->total <= 0)
			return snprintf(buf, size,
					"Over %u second%s, %s did not wait: it spent its "
					"time on the CPU, most of it in %s.",
					seconds, s, who, r->ntop ? r->top[0].name : "[unknown]");
		n = snprintf(buf, size,
			     "Over %u second%s, %s spent %d%% of its time waiting, most "
			     "of it in %s from %s",
			     seconds, s, who, round_pct(pct(all_wait, r->total)), g->top_wait,
			     g->top_wait_function ? g->top_wait_function : "[unknown]");
		if (run > 0 && n >= 0 && (size_t)n < size)
			n += snprintf(buf + n, size - n, "; %d%% on the CPU.",
				      round_pct(pct(run, r->total)));
		else if (n >= 0 && (size_t)n < size)
			n += snprintf(buf + n, size - n, ".");
		return n;
	}
	g = top_waiter(r, NULL);
	if (!g)
		return snprintf(buf, size,
				"Over %u second%s, nothing on this server waited: no "
				"off-CPU time was recorded.",
				seconds, s);
	n = snprintf(buf, size,
		     "Over %u second%s, %s spent %d%% of its waiting time in %s, most "
		     "of it from %s.",
		     seconds, s, g->owner, round_pct(pct(g->top_wait_value, g->wait_value)),
		     g->top_wait, g->top_wait_function ? g->top_wait_function : "[unknown]");
	next = top_waiter(r, g);
	if (next && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, " Next was %s, at %d%% of all waiting time.",
			      next->owner, round_pct(pct(next->wait_value, all_wait)));
	return n;
}

static const char *fmt_seconds(int64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%.1f s", (double)ns / 1e9);
	return buf;
}

static const char *fmt_bytes(int64_t b, char *buf, size_t size)
{
	if (b >= 1 << 30)
		snprintf(buf, size, "%.1f GiB", (double)b / (1 << 30));
	else if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", (double)b / (1 << 20));
	else
		snprintf(buf, size, "%.0f KiB", (double)b / 1024);
	return buf;
}

static int answer_memory(const struct report *r, unsigned int seconds, const char *who, bool held,
			 char *buf, size_t size)
{
	unsigned int go = 1u << PROF_LANG_GO, java = 1u << PROF_LANG_JAVA,
		     v8 = 1u << PROF_LANG_NODE;
	unsigned int langs = r ? r->languages & (go | java | v8) : 0;
	const char *heap = "Go heap", *objects = "objects";
	char b[32];

	/* read from Go programs (heap profiles), JVMs (their own records), V8 (its sampling heap
	 * profiler), or several */
	if (langs == java)
		heap = "Java heap";
	else if (langs == v8)
		heap = "V8 heap";
	else if (langs & (java | v8))
		heap = "heap";
	/* a JVM and V8 sample their allocations: the count is of samples, not of all objects */
	if ((langs & (java | v8)) && !(langs & go))
		objects = "sampled objects";
	who = who ? who : "the target";
	if (!r || r->total <= 0)
		return held ? snprintf(buf, size,
				       "At the end of %u seconds, %s held no Go heap "
				       "memory that its heap profile shows.",
				       seconds, who) :
			      snprintf(buf, size,
				       "Over %u seconds, %s allocated nothing on the Go "
				       "heap.",
				       seconds, who);
	fmt_bytes(r->total, b, sizeof(b));
	if (held)
		return snprintf(buf, size,
				"At the end of %u seconds, %s held %s of %s in use "
				"(%lld %s), most of it (%d%%) allocated in %s.",
				seconds, who, b, heap, (long long)r->total_alt, objects,
				round_pct(r->ntop ? r->top[0].share : 0),
				r->ntop ? r->top[0].name : "[unknown]");
	return snprintf(buf, size,
			"Over %u seconds, %s allocated %s on the %s (%lld "
			"%s), most of it (%d%%) in %s.",
			seconds, who, b, heap, (long long)r->total_alt, objects,
			round_pct(r->ntop ? r->top[0].share : 0),
			r->ntop ? r->top[0].name : "[unknown]");
}

static int answer_locks(const struct report *r, unsigned int seconds, const char *who, char *buf,
			size_t size)
{
	const char *s = seconds == 1 ? "" : "s";
	char a[32], b[32];

	if (r->total <= 0 || !r->ngroups)
		return who ? snprintf(buf, size, "Over %u second%s, %s waited on no lock.", seconds,
				      s, who) :
			     snprintf(buf, size,
				      "Over %u second%s, nothing on this server waited on "
				      "a lock.",
				      seconds, s);
	if (who)
		return snprintf(buf, size,
				"Over %u second%s, %s waited %s on locks in all, in %lld "
				"waits, most of it in %s.",
				seconds, s, who, fmt_seconds(r->total, a, sizeof(a)),
				(long long)r->total_alt,
				r->groups[0].top_function ? r->groups[0].top_function :
							    "[unknown]");
	if (r->ngroups == 1)
		return snprintf(buf, size,
				"Over %u second%s, %s waited longest on locks, %s in all, "
				"most of it in %s.",
				seconds, s, r->groups[0].owner,
				fmt_seconds(r->groups[0].value, a, sizeof(a)),
				r->groups[0].top_function ? r->groups[0].top_function :
							    "[unknown]");
	return snprintf(buf, size,
			"Over %u second%s, %s waited longest on locks, %s in all, most "
			"of it in %s. Next was %s, at %s.",
			seconds, s, r->groups[0].owner,
			fmt_seconds(r->groups[0].value, a, sizeof(a)),
			r->groups[0].top_function ? r->groups[0].top_function : "[unknown]",
			r->groups[1].owner, fmt_seconds(r->groups[1].value, b, sizeof(b)));
}

static int answer_growth(const struct report *r, unsigned int seconds, const char *who, char *buf,
			 size_t size)
{
	const char *s = seconds == 1 ? "" : "s";
	char a[32], b[32];

	if (r->total <= 0 || !r->ngroups)
		return who ? snprintf(buf, size, "Over %u second%s, %s touched no new memory.",
				      seconds, s, who) :
			     snprintf(buf, size,
				      "Over %u second%s, nothing on this server touched "
				      "new memory.",
				      seconds, s);
	if (who)
		return snprintf(buf, size,
				"Over %u second%s, %s touched %s of new memory, most of "
				"it in %s.",
				seconds, s, who, fmt_bytes(r->total, a, sizeof(a)),
				r->groups[0].top_function ? r->groups[0].top_function :
							    "[unknown]");
	if (r->ngroups == 1)
		return snprintf(buf, size,
				"Over %u second%s, %s grew the most, touching %s of new "
				"memory, most of it in %s.",
				seconds, s, r->groups[0].owner,
				fmt_bytes(r->groups[0].value, a, sizeof(a)),
				r->groups[0].top_function ? r->groups[0].top_function :
							    "[unknown]");
	return snprintf(buf, size,
			"Over %u second%s, %s grew the most, touching %s of new memory, "
			"most of it in %s. Next was %s, at %s.",
			seconds, s, r->groups[0].owner, fmt_bytes(r->groups[0].value, a, sizeof(a)),
			r->groups[0].top_function ? r->groups[0].top_function : "[unknown]",
			r->groups[1].owner, fmt_bytes(r->groups[1].value, b, sizeof(b)));
}

/*
 * Answers are cut to @size and carry names the caller gives (@who): the public answers end here,
 * so an answer is valid UTF-8 cut at a character boundary (base/text's rule). Returns @n.
 */
static int answer_done(char *buf, size_t size, int n)
{
	if (!buf || !size)
		return n;
	if (n >= 0 && (size_t)n >= size)
		text_utf8_trim_partial(buf); /* before '?' would take the cut character */
	text_utf8_valid_copy(buf, size, buf, strlen(buf));
	return n;
}

int report_answer(const struct report *r, unsigned int seconds, const char *what, const char *where,
		  char *buf, size_t size)
{
	return answer_done(buf, size, answer(r, seconds, what, where, buf, size));
}

int report_answer_target(const struct report *r, unsigned int seconds, const char *who,
			 double share, const char *what, const char *where, char *buf, size_t size)
{
	return answer_done(buf, size,
			   answer_target(r, seconds, who, share, what, where, buf, size));
}

int report_answer_wall(const struct report *r, unsigned int seconds, const char *who, char *buf,
		       size_t size)
{
	return answer_done(buf, size, answer_wall(r, seconds, who, buf, size));
}

int report_answer_memory(const struct report *r, unsigned int seconds, const char *who, bool held,
			 char *buf, size_t size)
{
	return answer_done(buf, size, answer_memory(r, seconds, who, held, buf, size));
}

int report_answer_locks(const struct report *r, unsigned int seconds, const char *who, char *buf,
			size_t size)
{
	return answer_done(buf, size, answer_locks(r, seconds, who, buf, size));
}

int report_answer_growth(const struct report *r, unsigned int seconds, const char *who, char *buf,
			 size_t size)
{
	return answer_done(buf, size, answer_growth(r, seconds, who, buf, size));
}
