// SPDX-License-Identifier: Apache-2.0
/*
 * sink_driver: drives daemon/sink.[ch] for tests/integration/test_sink.sh, standing in for the
 * daemon (which is not wired yet, and must not grow test commands).
 *
 *   sink_driver --spool DIR [--url URL] [--token-file F] [--pyroscope URL] [--max-bytes N]
 *               [--base-ms N] [--cap-ms N] [--submit N --profile FILE --prefix P]
 *               [--wait-ms N] [--hold]
 *
 * Submits N items (ids P-1 .. P-N, metadata as a capture would send) from the pprof FILE,
 * prints "submitted N" once they are all spooled, then waits up to --wait-ms for the spool to
 * empty (--hold: forever, to be killed), and prints the counters as one JSON line. Exits 0 when
 * the spool is empty, 1 otherwise, 2 on a usage or submit error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/agent/sink.h"

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "spool", required_argument, NULL, 's' },
		{ "url", required_argument, NULL, 'u' },
		{ "token-file", required_argument, NULL, 't' },
		{ "pyroscope", required_argument, NULL, 'y' },
		{ "max-bytes", required_argument, NULL, 'm' },
		{ "base-ms", required_argument, NULL, 'b' },
		{ "cap-ms", required_argument, NULL, 'c' },
		{ "submit", required_argument, NULL, 'n' },
		{ "profile", required_argument, NULL, 'p' },
		{ "prefix", required_argument, NULL, 'P' },
		{ "wait-ms", required_argument, NULL, 'w' },
		{ "hold", no_argument, NULL, 'H' },
		{ 0 },
	};
	struct sink_opts o = { .pyroscope_app = "slideops-test" };
	const char *profile = NULL, *prefix = "item";
	unsigned n = 0, i, wait_ms = 0;
	struct sink_stats st;
	struct sink *s = NULL;
	bool hold = false;
	char meta[1024];
	int c, err;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.spool_dir = optarg; break;
		case 'u': o.cluster_api_url = optarg; break;
		case 't': o.token_file = optarg; break;
		case 'y': o.pyroscope_url = optarg; break;
		case 'm': o.spool_max_bytes = strtoull(optarg, NULL, 10); break;
		case 'b': o.backoff_base_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'c': o.backoff_cap_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'p': profile = optarg; break;
		case 'P': prefix = optarg; break;
		case 'w': wait_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'H': hold = true; break;
		default: return 2;
		}
	}
	if (!o.spool_dir || (n && !profile)) {
		fprintf(stderr, "usage: sink_driver --spool DIR [--url URL] ... (see the source)\n");
		return 2;
	}
	err = sink__new(&o, &s);
	if (err) {
		fprintf(stderr, "sink__new: %s\n", strerror(-err));
		return 2;
	}
	for (i = 1; i <= n; i++) {
		snprintf(meta, sizeof(meta),
			 "{\"id\":\"%s-%u\",\"node\":\"node-a\",\"target\":{\"kind\":\"service\","
			 "\"service\":\"billing-worker\"},\"question\":\"cpu\",\"duration\":10,"
			 "\"start\":\"2024-05-01T10:00:%02uZ\",\"answer\":\"busy in hash()\","
			 "\"groups\":[],\"notes\":[]}",
			 prefix, i, i % 60);
		err = sink__submit(s, meta, profile);
		if (err) {
			fprintf(stderr, "sink__submit %s-%u: %s\n", prefix, i, strerror(-err));
			sink__free(s);
			return 2;
		}
	}
	printf("submitted %u\n", n);
	fflush(stdout);
	if (hold)
		for (;;)
			pause();
	err = sink__drain(s, wait_ms);
	sink__stats(s, &st);
	sink__free(s);
	printf("{\"queued\":%" PRIu64 ",\"queued_bytes\":%" PRIu64 ",\"delivered\":%" PRIu64
	       ",\"dropped\":%" PRIu64 ",\"dead\":%" PRIu64 ",\"failures\":%" PRIu64
	       ",\"pyroscope_pushed\":%" PRIu64 ",\"pyroscope_failures\":%" PRIu64 "}\n",
	       st.queued, st.queued_bytes, st.delivered, st.dropped, st.dead, st.failures,
	       st.pyroscope_pushed, st.pyroscope_failures);
	return err ? 1 : 0;
}
