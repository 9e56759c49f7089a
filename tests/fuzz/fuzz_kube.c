// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for kube_parse.c: the first byte picks the parser, the rest is its input:
 *   0  a watch stream: the line splitter (small max, chunks cut at input-chosen places) feeding
 *      kube_parse_event(), as the watch thread does
 *   1  a kubeconfig for kube_parse_kubeconfig()
 *   2  a list response for kube_parse_list()
 *   3  a container id string for kube_parse_container_id()
 * Invariants checked: only the documented returns; on success terminated strings, bounded
 * counts, a workload for every object; on failure outputs untouched; creds freed cleanly.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent/kube_parse.h"

#define TERMINATED(a) memchr((a), '\0', sizeof(a))

static void check_object(const struct kube_object *o)
{
	unsigned i;

	if (!TERMINATED(o->uid) || !TERMINATED(o->ns) || !TERMINATED(o->name) ||
	    !TERMINATED(o->rv) || !TERMINATED(o->owner_kind) || !TERMINATED(o->owner_name) ||
	    !TERMINATED(o->template_hash) || !TERMINATED(o->workload) || !TERMINATED(o->capture))
		abort();
	if (!o->name[0] || !o->workload[0] || o->ncontainers > KUBE_POD_MAX_CONTAINERS)
		abort();
	if (o->capture_too_long && (!o->has_capture || o->capture[0]))
		abort();
	for (i = 0; i < o->ncontainers; i++)
		if (strlen(o->containers[i].id) != 64 || !TERMINATED(o->containers[i].name) ||
		    !o->containers[i].runtime[0])
			abort();
}

static struct kube_event ev;

static int on_line(void *ctx, const char *line, size_t len)
{
	int ret;

	(void)ctx;
	if (!len || memchr(line, '\n', len))
		abort();
	memset(&ev, 0x5a, sizeof(ev));
	ret = kube_parse_event(line, len, &ev);
	if (ret == 0) {
		if (ev.type < KUBE_EV_ADDED || ev.type > KUBE_EV_ERROR || !TERMINATED(ev.message) ||
		    !TERMINATED(ev.rv))
			abort();
		if (ev.type == KUBE_EV_ERROR && (ev.code < 0 || ev.code > 999))
			abort();
		if (ev.type != KUBE_EV_ERROR && !ev.rv[0])
			abort();
		if (ev.type <= KUBE_EV_DELETED)
			check_object(&ev.obj);
	} else if (ret != -EINVAL && ret != -ENAMETOOLONG && ret != -ENOMEM) {
		abort();
	} else if (((unsigned char *)&ev)[0] != 0x5a) {
		abort();
	}
	return 0;
}

static int on_item(void *ctx, const struct kube_object *o)
{
	(*(unsigned *)ctx)++;
	check_object(o);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0, off, step;
	struct kube_linebuf lb;
	struct kube_creds c;
	char err[128], rv[KUBE_RV_MAX], rt[16], id[OWNER_CONTAINER_ID_MAX], *s;
	unsigned n = 0, skipped;
	int ret;

	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0:
		kube_linebuf_init(&lb, 4096);
		/* chunk sizes from the input's length, so splits move as inputs grow */
		step = 1 + len % 97;
		for (off = 0; off < len; off += step) {
			ret = kube_linebuf_feed(&lb, text + off, len - off < step ? len - off : step,
						on_line, NULL);
			if (ret == -EMSGSIZE)
				kube_linebuf_reset(&lb);
			else if (ret)
				abort();
			if (lb.len > lb.max)
				abort();
		}
		kube_linebuf_free(&lb);
		break;
	case 1:
		memset(&c, 0x5a, sizeof(c));
		ret = kube_parse_kubeconfig(text, len, "/base", &c, err, sizeof(err));
		if (ret == 0) {
			if (!c.server || strncmp(c.server, "http", 4) || !c.ns)
				abort();
			kube_creds_free(&c);
		} else if (ret != -EINVAL && ret != -EOPNOTSUPP && ret != -ENOMEM) {
			abort();
		} else if (!TERMINATED(err) || ((unsigned char *)&c)[0] != 0x5a) {
			abort();
		}
		break;
	case 2:
		ret = kube_parse_list(text, len, on_item, &n, rv, sizeof(rv), &skipped);
		if (ret >= 0 && ((unsigned)ret != n || !rv[0] || !TERMINATED(rv)))
			abort();
		if (ret < 0 && ret != -EINVAL && ret != -ENAMETOOLONG && ret != -ENOMEM &&
		    ret != -EMSGSIZE)
			abort();
		break;
	case 3:
		s = strndup(text, len);
		if (!s)
			return 0;
		ret = kube_parse_container_id(s, rt, sizeof(rt), id, sizeof(id));
		if (ret == 0 && (strlen(id) != 64 || !rt[0]))
			abort();
		if (ret && ret != -EINVAL && ret != -EPROTONOSUPPORT)
			abort();
		free(s);
		break;
	}
	return 0;
}
