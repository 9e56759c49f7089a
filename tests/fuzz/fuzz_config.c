// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for config.c: the input is a config file (raw bytes, NULs included) for
 * config_parse(). Checks the invariants every caller relies on: only 0, -EINVAL or -ENOMEM;
 * on failure a terminated "FILE:..." message and @out untouched; on success terminated
 * strings, values within their documented ranges, at most CONFIG_MAX_SERVICES rules each with
 * a name and a match field, and matching that never reads out of bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

#define TERMINATED(a) memchr((a), '\0', sizeof(a))

static void check_config(const struct config *c)
{
	const struct service_rule *r;
	size_t i;

	if (!TERMINATED(c->node_name) || !TERMINATED(c->listen) || !TERMINATED(c->store_dir) ||
	    !TERMINATED(c->kubeconfig) || !TERMINATED(c->cluster_api_url) ||
	    !TERMINATED(c->cluster_api_token_file) || !TERMINATED(c->pyroscope_url) ||
	    !TERMINATED(c->spool_dir) || !TERMINATED(c->tokens_file) ||
	    !TERMINATED(c->audit_log) || !TERMINATED(c->log_level))
		abort();
	if (!c->listen[0] || c->store_dir[0] != '/' || c->spool_dir[0] != '/' ||
	    c->audit_log[0] != '/' || c->tokens_file[0] != '/')
		abort();
	if (c->retention_per_service < 1 || c->retention_per_service > 1000 ||
	    c->continuous_hz < 1 || c->continuous_hz > 1000 || c->continuous_retention_hours < 1 ||
	    c->continuous_retention_hours > 720 || c->spool_max_bytes < (1ULL << 20) ||
	    c->spool_max_bytes > (1ULL << 40))
		abort();
	if (c->cluster_api_url[0] && strncmp(c->cluster_api_url, "http", 4))
		abort();
	if (c->nservices > CONFIG_MAX_SERVICES || (c->nservices && !c->services))
		abort();
	for (i = 0; i < c->nservices; i++) {
		r = &c->services[i];
		if (!TERMINATED(r->name) || !TERMINATED(r->unit) || !TERMINATED(r->cgroup) ||
		    !TERMINATED(r->exe) || !TERMINATED(r->comm) || !r->name[0])
			abort();
		if (!r->unit[0] && !r->cgroup[0] && !r->exe[0] && !r->comm[0])
			abort();
	}
	if (config_match_service(c, "billing-worker.service", "/system.slice/billing.service",
				 "/opt/checkout/bin/server", "checkout") < -ENOENT)
		abort();
	if (c->nservices && config_match_service(c, NULL, NULL, NULL, NULL) != -ENOENT)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char err[256], small[8];
	int ret;

	memset(&c, 0xa5, sizeof(c));
	memset(err, 'x', sizeof(err));
	ret = config_parse((const char *)data, size, "f.yaml", &c, err, sizeof(err));
	if (ret == 0) {
		if (err[0])
			abort();
		check_config(&c);
		config_free(&c);
	} else if (ret == -EINVAL || ret == -ENOMEM) {
		if (!TERMINATED(err) || strncmp(err, "f.yaml:", 7))
			abort();
		if (c.nservices != (size_t)-1 / 0xff * 0xa5) /* @out untouched */
			abort();
	} else {
		abort();
	}

	/* a tiny message buffer: truncated, never overrun */
	ret = config_parse((const char *)data, size, NULL, &c, small, sizeof(small));
	if (ret == 0)
		config_free(&c);
	else if (!TERMINATED(small))
		abort();
	return 0;
}
