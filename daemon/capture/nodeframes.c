// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/nodeframes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/capture/answer.h"
#include "profile/profile.h"
#include "runtimes/node/v8prof.h"
#include "symbols/symbolizer.h"

struct nf_proc {
	uint32_t tgid;
	struct v8prof *prof;
	int64_t offset_ns;
	uint64_t matched, unmatched, not_js;
};

struct nodeframes {
	struct nf_proc procs[NODEFRAMES_MAX_PROCS];
	size_t n;
};

int nodeframes__new(struct nodeframes **out)
{
	struct nodeframes *nf = calloc(1, sizeof(*nf));

	if (!nf)
		return -ENOMEM;
	*out = nf;
	return 0;
}

void nodeframes__free(struct nodeframes *nf)
{
	size_t i;

	if (!nf)
		return;
	for (i = 0; i < nf->n; i++)
		v8prof_free(nf->procs[i].prof);
	free(nf);
}

static struct nf_proc *find(const struct nodeframes *nf, uint32_t tgid)
{
	size_t i;

	for (i = 0; nf && i < nf->n; i++)
		if (nf->procs[i].tgid == tgid)
			return (struct nf_proc *)&nf->procs[i];
	return NULL;
}

int nodeframes__add(struct nodeframes *nf, uint32_t tgid, struct v8prof *prof, int64_t offset_ns)
{
	struct nf_proc *p;

	if (find(nf, tgid) || nf->n == NODEFRAMES_MAX_PROCS) {
		v8prof_free(prof);
		return find(nf, tgid) ? -EEXIST : -E2BIG;
	}
	p = &nf->procs[nf->n++];
	*p = (struct nf_proc){ .tgid = tgid, .prof = prof, .offset_ns = offset_ns };
	return 0;
}

bool nodeframes__has(const struct nodeframes *nf, uint32_t tgid)
{
	return find(nf, tgid) != NULL;
}

static void js_frame(const struct v8prof_node *nd, struct prof_frame_info *fi)
{
	*fi = (struct prof_frame_info){
		.function = nd->function,
		.file = nd->url[0] ? nd->url : NULL,
		.line = nd->line > 0 ? (uint32_t)nd->line : 0,
		/* the script stands for the mapping, as a Python frame's file does */
		.mapping = nd->url[0] ? nd->url : "[javascript]",
		.lang = PROF_LANG_NODE,
	};
}

size_t nodeframes__stack(struct nodeframes *nf, uint32_t tgid, uint64_t time_ns,
			 struct prof_frame_info *out, size_t max)
{
	struct nf_proc *p = find(nf, tgid);
	uint32_t idx[NODEFRAMES_MAX_DEPTH], sample;
	const struct v8prof_node *nodes;
	const uint32_t *snode;
	const int64_t *stime;
	size_t n, i, nn;
	int64_t t_us;

	if (!p || !time_ns)
		return 0;
	t_us = ((int64_t)time_ns + p->offset_ns) / 1000;
	if (v8prof_nearest(p->prof, t_us, NODEFRAMES_TOLERANCE_US, &sample)) {
		p->unmatched++;
		return 0;
	}
	nn = v8prof_nodes(p->prof, &nodes);
	v8prof_samples(p->prof, &snode, &stime);
	if (snode[sample] >= nn || nodes[snode[sample]].kind != V8PROF_JS) {
		p->not_js++;
		return 0;
	}
	n = v8prof_stack(p->prof, snode[sample], idx,
			 max < NODEFRAMES_MAX_DEPTH ? max : NODEFRAMES_MAX_DEPTH);
	for (i = 0; i < n; i++)
		js_frame(&nodes[idx[i]], &out[i]);
	p->matched += n > 0;
	return n;
}

bool nodeframes_in_v8(const struct prof_frame_info *fi)
{
	if (fi->lang == PROF_LANG_NODE)
		return true;
	if (fi->function)
		return !strncmp(fi->function, "Builtins_", 9) ||
		       (fi->mapping && !strcmp(fi->mapping, SYMBOLIZER_PERF_MAP_DSO));
	return fi->mapping && !strcmp(fi->mapping, "[anon]");
}

uint64_t nodeframes__matched(const struct nodeframes *nf)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; nf && i < nf->n; i++)
		m += nf->procs[i].matched;
	return m;
}

void nodeframes__notes(const struct nodeframes *nf, struct capture_result *r)
{
	uint64_t matched = 0, unmatched = 0;
	size_t i;

	for (i = 0; nf && i < nf->n; i++) {
		matched += nf->procs[i].matched;
		unmatched += nf->procs[i].unmatched;
	}
	if (unmatched)
		answer_add_note(
			r,
			"%llu samples of Node.js main threads had no V8 sample within %d µs "
			"(of %llu with one): their JavaScript frames show as V8's generated "
			"code.",
			(unsigned long long)unmatched, NODEFRAMES_TOLERANCE_US,
			(unsigned long long)matched);
}
