// SPDX-License-Identifier: Apache-2.0
/*
 * `slideops-profiler symbols upload FILE | list | delete BUILD_ID` (docs/cli.md): the debug
 * symbols of the local store, <store_dir>/symbols, which name the CLI's captures of stripped
 * builds. The file is read in pieces and never copied: only its index is kept.
 */
#include "daemon/cli_symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/text.h"
#include "daemon/cli.h"
#include "daemon/config.h"
#include "symbols/elf_stream.h"
#include "symbols/symindex.h"
#include "symbols/symstore.h"

#define PROG "slideops-profiler"
#define CHUNK (1u << 20)

static const char usage_symbols[] =
	"Usage: " PROG " symbols upload FILE | symbols list | symbols delete BUILD_ID\n"
	"       [--config FILE]   (the store is <store_dir>/symbols; docs/symbols.md)\n";

static int say(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(int status, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

int cli_symbols_open(const struct config *c, bool create, struct symstore **out)
{
	struct symstore_opts o = { 0 };
	char dir[sizeof(c->store_dir) + 16];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/symbols", c->store_dir);
	if (!create && stat(dir, &st) < 0)
		return -ENOENT;
	o.dir = dir;
	return symstore__open(&o, out);
}

/* Streams @path through the ELF reader, as an upload does. */
static int read_index(const char *path, struct symindex_build **out)
{
	struct elf_stream *es = NULL;
	char *buf = malloc(CHUNK);
	ssize_t n = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	err = elf_stream__new(NULL, &es);
	while (!err && (n = read(fd, buf, CHUNK)) > 0)
		err = elf_stream__feed(es, buf, (size_t)n);
	if (!err && n < 0)
		err = -errno;
	if (!err)
		err = elf_stream__finish(es, out);
out:
	elf_stream__free(es);
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

static int upload(struct symstore *ss, const char *path)
{
	struct symindex_build *b = NULL;
	struct symstore_entry res = { 0 };
	const char *base = strrchr(path, '/');
	char name[256], by[64];
	int err;

	base = base ? base + 1 : path;
	text_utf8_sanitize_copy(name, sizeof(name), base, strlen(base));
	snprintf(by, sizeof(by), "uid %u", (unsigned)getuid());
	err = read_index(path, &b);
	if (err == -ENOENT || err == -EACCES || err == -EISDIR || err == -EIO)
		return say(EXIT_FAILURE, "cannot read %s: %s", path, strerror(-err));
	if (!err)
		err = symstore__put(ss, b, name, by, (int64_t)time(NULL), &res);
	symindex_build__free(b);
	if (err == -EEXIST)
		return say(EXIT_FAILURE,
			   "%s was not kept: build %s is already named from %s, which names more "
			   "functions (%" PRIu64 ")",
			   name, res.build_id, res.file_name, res.functions);
	if (err == -ENOSPC)
		return say(EXIT_FAILURE, "the symbol store is full: delete an upload first");
	if (err)
		return say(EXIT_FAILURE, "%s was refused: %s", name, elf_stream_refusal(err));
	printf("%s: %" PRIu64 " functions named for build %s%s\n", name, res.functions,
	       res.build_id, res.replaced ? " (it replaces the earlier upload)" : "");
	return EXIT_SUCCESS;
}

static int list(struct symstore *ss)
{
	struct symstore_entry *e = NULL;
	char when[32];
	size_t n = 0, i;
	struct tm tm;
	time_t t;
	int err;

	err = symstore__list(ss, &e, &n);
	if (err)
		return say(EXIT_FAILURE, "cannot list the uploads: %s", strerror(-err));
	if (!n)
		printf("No debug symbols uploaded.\n");
	else
		printf("%-40s %10s  %-20s  %s\n", "BUILD", "FUNCTIONS", "UPLOADED", "FILE");
	for (i = 0; i < n; i++) {
		t = (time_t)e[i].uploaded_at;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%-40s %10" PRIu64 "  %-20s  %s\n", e[i].build_id, e[i].functions, when,
		       e[i].file_name);
	}
	symstore_list_free(e);
	return EXIT_SUCCESS;
}

static int delete (struct symstore *ss, const char *id)
{
	int err = symstore__delete(ss, id);

	if (err == -ENOENT || err == -EINVAL)
		return say(EXIT_FAILURE, "no upload for build %s", id);
	if (err)
		return say(EXIT_FAILURE, "cannot delete build %s: %s", id, strerror(-err));
	printf("Deleted the debug symbols of build %s.\n", id);
	return EXIT_SUCCESS;
}

int cli_symbols(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "", *arg = NULL, *cfg = NULL;
	struct symstore *ss = NULL;
	struct config c;
	char err[1024];
	int i, ret, want = strcmp(cmd, "list") ? 1 : 0;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			cfg = argv[++i];
		else if (!arg && argv[i][0] != '-')
			arg = argv[i];
		else
			return say(CLI_EXIT_USAGE, "symbols %s: unexpected '%s'\n%s", cmd, argv[i],
				   usage_symbols);
	}
	if ((strcmp(cmd, "upload") && strcmp(cmd, "list") && strcmp(cmd, "delete")) ||
	    (want && !arg) || (!want && arg))
		return say(CLI_EXIT_USAGE, "%s", usage_symbols);
	config_defaults(&c);
	if ((cfg || access(CONFIG_DEFAULT_PATH, F_OK) == 0) &&
	    config_load(cfg ? cfg : CONFIG_DEFAULT_PATH, &c, err, sizeof(err))) {
		ret = say(CLI_EXIT_USAGE, "%s", err);
		goto out;
	}
	ret = cli_symbols_open(&c, true, &ss);
	if (ret) {
		ret = say(EXIT_FAILURE, "cannot open the symbol store under %s: %s", c.store_dir,
			  strerror(-ret));
		goto out;
	}
	if (!strcmp(cmd, "upload"))
		ret = upload(ss, arg);
	else if (!strcmp(cmd, "list"))
		ret = list(ss);
	else
		ret = delete (ss, arg);
	symstore__free(ss);
out:
	config_free(&c);
	return ret;
}
