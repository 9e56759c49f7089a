// SPDX-License-Identifier: Apache-2.0
/*
 * Test driver for runtimes/jvm (tests/integration/test_jvm_attach.sh compiles it against the
 * built objects; it is not part of the product):
 *
 *   jvm_probe vmstructs PID      the fields the frame walk needs, one a line:
 *                                "CodeBlob::_frame_size = CodeBlob::_frame_size 0x30" or
 *                                "CodeBlob::_frame_size MISSING"; exit 3 when one is missing
 *   jvm_probe dump PID           every VMStructs field and type
 *   jvm_probe attach PID CMD [ARG...]   runs CMD ("threaddump", "jcmd Thread.print") through
 *                                the attach protocol and prints the answer's body
 *
 * On stderr a summary line ("jvm_probe: release=17.0.15+6-... fields=N types=N" or
 * "jvm_probe: attach code=0 bytes=N ms=N"); on failure "jvm_probe: ...: <error> (<reason>)
 * after N ms" and exit 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "runtimes/jvm/jvm_attach.h"
#include "runtimes/jvm/jvm_vmstructs.h"

static int usage(void)
{
	fprintf(stderr, "usage: jvm_probe vmstructs|dump PID | attach PID CMD [ARG...]\n");
	return 2;
}

/* Abstract_VM_Version::_s_vm_release: a static char * to the release string. */
static void read_release(uint32_t pid, const struct jvm_hotspot *hs, char *buf, size_t size)
{
	uint64_t p = 0;
	size_t i;

	snprintf(buf, size, "?");
	if (!(hs->found & (1ull << JVM_HS_VM_RELEASE)) ||
	    jvm_read_process(&pid, hs->val[JVM_HS_VM_RELEASE], &p, sizeof(p)) || !p)
		return;
	for (i = 0; i + 1 < size; i++) {
		if (jvm_read_process(&pid, p + i, &buf[i], 1) || !buf[i] || buf[i] < 0x20 ||
		    buf[i] > 0x7e)
			break;
	}
	buf[i] = '\0';
}

static int cmd_vmstructs(uint32_t pid, bool dump)
{
	struct jvm_vmstructs *vs = NULL;
	struct jvm_hotspot hs;
	char release[80];
	int err, missing;
	size_t i;

	err = jvm_vmstructs__open(pid, &vs);
	if (err) {
		fprintf(stderr, "jvm_probe: vmstructs: %s\n", strerror(-err));
		return 1;
	}
	missing = jvm_hotspot_extract(vs, &hs);
	read_release(pid, &hs, release, sizeof(release));
	fprintf(stderr, "jvm_probe: release=%s libjvm=%s fields=%zu types=%zu missing=%d\n",
		release, jvm_vmstructs__libjvm(vs), jvm_vmstructs__nfields(vs),
		jvm_vmstructs__ntypes(vs), missing);
	if (dump) {
		for (i = 0; i < jvm_vmstructs__nfields(vs); i++) {
			const struct jvm_vms_field *f = jvm_vmstructs__field_at(vs, i);

			printf("field %s::%s %s 0x%" PRIx64 "\n", f->type, f->name,
			       f->is_static ? "static" : "offset",
			       f->is_static ? f->address : f->offset);
		}
		for (i = 0; i < jvm_vmstructs__ntypes(vs); i++)
			printf("type %s %" PRIu64 "\n", jvm_vmstructs__type_at(vs, i)->name,
			       jvm_vmstructs__type_at(vs, i)->size);
	} else {
		for (i = 0; i < JVM_HS_COUNT; i++) {
			if (!(hs.found & (1ull << i))) {
				printf("%s %s\n", jvm_hotspot_label((enum jvm_hs)i),
				       jvm_hotspot_optional((enum jvm_hs)i) ? "absent (optional)" :
									      "MISSING");
				continue;
			}
			printf("%s = %s%s%s 0x%" PRIx64 "%s", jvm_hotspot_label((enum jvm_hs)i),
			       hs.type[i], hs.field[i] ? "::" : "", hs.field[i] ? hs.field[i] : "",
			       hs.val[i], hs.is_offset & (1ull << i) ? " (offset)" : "");
			printf(hs.width[i] ? " (%u bytes)\n" : "\n", hs.width[i]);
		}
	}
	jvm_vmstructs__free(vs);
	return missing ? 3 : 0;
}

static int cmd_attach(uint32_t pid, const char *cmd, const char *const *args, size_t nargs)
{
	uint64_t t0 = clock_mono_ms();
	char *text = NULL;
	size_t len = 0;
	int code = 0, err;

	err = jvm_attach_run(pid, cmd, args, nargs, NULL, &code, &text, &len);
	if (err) {
		const char *why = jvm_attach_reason(err);

		fprintf(stderr, "jvm_probe: attach %s: %s (%s) after %" PRIu64 " ms\n", cmd,
			strerror(-err), why ? why : "-", clock_mono_ms() - t0);
		return 1;
	}
	len = jvm_attach_text_clean(text, len);
	fwrite(text, 1, len, stdout);
	fprintf(stderr, "jvm_probe: attach code=%d bytes=%zu ms=%" PRIu64 "\n", code, len,
		clock_mono_ms() - t0);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long pid;
	char *end;

	if (argc < 3)
		return usage();
	pid = strtoul(argv[2], &end, 10);
	if (*end || !pid || pid > INT32_MAX)
		return usage();
	if (!strcmp(argv[1], "vmstructs") || !strcmp(argv[1], "dump"))
		return cmd_vmstructs((uint32_t)pid, !strcmp(argv[1], "dump"));
	if (!strcmp(argv[1], "attach") && argc >= 4 && argc <= 4 + JVM_ATTACH_MAX_ARGS)
		return cmd_attach((uint32_t)pid, argv[3], (const char *const *)argv + 4,
				  (size_t)(argc - 4));
	return usage();
}
