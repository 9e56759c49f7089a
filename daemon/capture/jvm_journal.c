// SPDX-License-Identifier: Apache-2.0
#include "daemon/capture/jvm_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/text.h"

#define ENTRY_MAX 1024
#define MAX_ENTRIES 256

int jvm_journal_add(const char *dir, uint32_t pid, unsigned long long starttime, const char *path,
		    const char *rec, bool asprof, char *name, size_t size)
{
	char file[512], text[256];
	int n, err;

	if (size)
		name[0] = '\0';
	if (!dir)
		return 0;
	err = mkdir_p(dir);
	if (err)
		return err;
	n = snprintf(name, size, "%u-%llu-%s", pid, starttime, rec);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	snprintf(file, sizeof(file), "%s/%s", dir, name);
	n = snprintf(text, sizeof(text), "path=%s\nrec=%s\nvia=%s\n", path, rec,
		     asprof ? "asprof" : "jfr");
	err = atomic_write_buf(file, text, (size_t)n);
	if (err)
		name[0] = '\0';
	return err;
}

void jvm_journal_remove(const char *dir, const char *name)
{
	char file[512];

	if (!dir || !name || !*name)
		return;
	snprintf(file, sizeof(file), "%s/%s", dir, name);
	unlink(file);
}

/* "/tmp/.slideops-" and 16 lowercase hex digits (or /var/tmp, /dev/shm: where jvm_source
 * places) */
static bool path_ok(const char *p)
{
	static const char *const dirs[] = { "/tmp", "/var/tmp", "/dev/shm" };
	const char *s = NULL;
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !s; i++)
		if (!strncmp(p, dirs[i], strlen(dirs[i])))
			s = p + strlen(dirs[i]);
	if (!s || strncmp(s, "/.slideops-", 11) || strlen(s + 11) != 16)
		return false;
	for (i = 0; i < 16; i++)
		if (!((s[11 + i] >= '0' && s[11 + i] <= '9') ||
		      (s[11 + i] >= 'a' && s[11 + i] <= 'f')))
			return false;
	return true;
}

static bool rec_ok(const char *r)
{
	size_t i;

	if (strncmp(r, "slideops-", 9) || !r[9])
		return false;
	for (i = 9; r[i]; i++)
		if (!((r[i] >= '0' && r[i] <= '9') || (r[i] >= 'a' && r[i] <= 'f')))
			return false;
	return true;
}

/* The value of "@key=" on its own line of @text, into @buf. */
static int field(const char *text, size_t len, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key), i = 0, j;

	while (i < len) {
		for (j = i; j < len && text[j] != '\n'; j++)
			;
		if (j - i > kl && !strncmp(text + i, key, kl) && text[i + kl] == '=') {
			if (j - i - kl - 1 >= size)
				return -EINVAL;
			memcpy(buf, text + i + kl + 1, j - i - kl - 1);
			buf[j - i - kl - 1] = '\0';
			return 0;
		}
		i = j + 1;
	}
	return -EINVAL;
}

int jvm_journal_parse(const char *name, const char *text, size_t len, struct jvm_journal_entry *e)
{
	struct jvm_journal_entry t = { 0 };
	char via[16], tail[64];
	unsigned int pid;

	if (memchr(text, '\0', len) ||
	    sscanf(name, "%u-%llu-%63s", &pid, &t.starttime, tail) != 3 || !pid)
		return -EINVAL;
	t.pid = pid;
	if (field(text, len, "path", t.path, sizeof(t.path)) ||
	    field(text, len, "rec", t.rec, sizeof(t.rec)) ||
	    field(text, len, "via", via, sizeof(via)))
		return -EINVAL;
	if (!path_ok(t.path) || !rec_ok(t.rec) || strcmp(tail, t.rec) ||
	    (strcmp(via, "jfr") && strcmp(via, "asprof")))
		return -EINVAL;
	t.asprof = !strcmp(via, "asprof");
	*e = t;
	return 0;
}

/* Calls @fn for each file of @dir (at most MAX_ENTRIES) whose name @want takes, with its text
 * (NULL when it could not be read within ENTRY_MAX); a file for which @fn returns false is
 * removed. Returns the number of files seen or -errno. */
static int each_file(const char *dir, bool (*want)(const char *name),
		     bool (*fn)(void *ctx, const char *name, const char *text, size_t len),
		     void *ctx)
{
	struct dirent *de;
	int n = 0, dfd;
	char *text;
	size_t len;
	DIR *d;

	if (!dir)
		return 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	dfd = dirfd(d);
	while ((de = readdir(d)) && n < MAX_ENTRIES) {
		if (!want(de->d_name))
			continue;
		n++;
		text = NULL;
		if (read_file_bounded(dfd, de->d_name, ENTRY_MAX, &text, &len))
			len = 0;
		if (!fn(ctx, de->d_name, text, len))
			unlinkat(dfd, de->d_name, 0);
		free(text);
	}
	closedir(d);
	return n;
}

/* placement entries start with the pid (temp files with '.', records with a word) */
static bool is_placement(const char *name)
{
	return name[0] >= '0' && name[0] <= '9';
}

struct drain_ctx {
	jvm_journal_fn_t fn;
	void *ctx;
};

static bool drain_one(void *ctx, const char *name, const char *text, size_t len)
{
	struct drain_ctx *dc = ctx;
	struct jvm_journal_entry e;

	if (text && !jvm_journal_parse(name, text, len, &e))
		dc->fn(dc->ctx, &e);
	return false; /* every placement entry seen goes */
}

int jvm_journal_drain(const char *dir, jvm_journal_fn_t fn, void *ctx)
{
	struct drain_ctx dc = { fn, ctx };

	return each_file(dir, is_placement, drain_one, &dc);
}

static bool id_ok(const char *id)
{
	size_t i;

	for (i = 0; i < 16; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return id[16] == '\0';
}

int jvm_journal_add_injected(const char *dir, const struct jvm_journal_injected *e)
{
	char file[512], text[128];
	int n, err;

	if (!dir || !id_ok(e->id))
		return dir ? -EINVAL : 0;
	err = mkdir_p(dir);
	if (err)
		return err;
	snprintf(file, sizeof(file), "%s/injected-%u-%llu", dir, e->pid, e->starttime);
	n = snprintf(text, sizeof(text), "id=%s\nnspid=%u\ntime=%lld\n", e->id, e->nspid, e->time);
	return atomic_write_buf(file, text, (size_t)n);
}

static int parse_injected(const char *name, const char *text, size_t len,
			  struct jvm_journal_injected *e)
{
	char num[32];
	unsigned int pid, nspid;
	char *end;

	memset(e, 0, sizeof(*e));
	if (memchr(text, '\0', len) || sscanf(name, "injected-%u-%llu", &pid, &e->starttime) != 2 ||
	    !pid || field(text, len, "id", e->id, sizeof(e->id)) || !id_ok(e->id) ||
	    field(text, len, "nspid", num, sizeof(num)) || sscanf(num, "%u", &nspid) != 1 ||
	    field(text, len, "time", num, sizeof(num)))
		return -EINVAL;
	e->time = strtoll(num, &end, 10);
	if (*end || end == num)
		return -EINVAL;
	e->pid = pid;
	e->nspid = nspid;
	return 0;
}

static bool is_injected(const char *name)
{
	return !strncmp(name, "injected-", 9);
}

struct injected_ctx {
	bool (*fn)(void *ctx, const struct jvm_journal_injected *e);
	void *ctx;
};

static bool injected_one(void *ctx, const char *name, const char *text, size_t len)
{
	struct injected_ctx *ic = ctx;
	struct jvm_journal_injected e;

	return text && !parse_injected(name, text, len, &e) && ic->fn(ic->ctx, &e);
}

int jvm_journal_each_injected(const char *dir,
			      bool (*fn)(void *ctx, const struct jvm_journal_injected *e),
			      void *ctx)
{
	struct injected_ctx ic = { fn, ctx };

	return each_file(dir, is_injected, injected_one, &ic);
}

int jvm_journal_add_crashed(const char *dir, const char *id, const char *reason)
{
	char file[512];
	int err;

	if (!dir || !id_ok(id))
		return dir ? -EINVAL : 0;
	err = mkdir_p(dir);
	if (err)
		return err;
	snprintf(file, sizeof(file), "%s/crashed-%s", dir, id);
	return atomic_write_buf(file, reason, strnlen(reason, ENTRY_MAX - 1));
}

bool jvm_journal_crashed(const char *dir, const char *id, char *reason, size_t size)
{
	char file[512], *text = NULL;
	size_t len = 0;

	if (!dir || !id_ok(id))
		return false;
	snprintf(file, sizeof(file), "%s/crashed-%s", dir, id);
	if (read_file_bounded(AT_FDCWD, file, ENTRY_MAX, &text, &len))
		return false;
	if (size)
		text_utf8_sanitize_copy(reason, size, text, len);
	free(text);
	return true;
}
