/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jvm_journal: the host-side record of what a capture placed in a JVM's container
 * (daemon/capture/jvm_source.h), one small file per placement in a directory of the agent's
 * own (by default beside the capture lock: /run/slideops-profiler.lock.placed). It is written
 * before anything is placed and removed after everything is: an entry that survives is what a
 * killed agent left, and the next capture (holding the capture lock, so no other capture runs)
 * stops the recording it names and removes the directory.
 *
 * An entry's name is "<pid>-<starttime>-<recording>"; its text:
 *   path=/tmp/.slideops-3f2a9c01d4e5b6a7
 *   rec=slideops-0a1b2c3d4e5f
 *   via=jfr            (or asprof)
 */
#ifndef SLIDEOPS_JVM_JOURNAL_H
#define SLIDEOPS_JVM_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jvm_journal_entry {
	uint32_t pid;
	unsigned long long starttime; /* /proc/PID/stat field 22 */
	char path[64];		      /* our directory, as the container sees it */
	char rec[32];		      /* our recording's name */
	bool asprof;		      /* async-profiler (else JFR) */
};

/*
 * Writes the entry of a placement (atomically) into @dir (created if need be; NULL: no
 * journal), its name into @name. Returns 0 or -errno (the capture goes on without it).
 */
int jvm_journal_add(const char *dir, uint32_t pid, unsigned long long starttime, const char *path,
		    const char *rec, bool asprof, char *name, size_t size);
/* Removes entry @name of @dir (NULL: nothing). */
void jvm_journal_remove(const char *dir, const char *name);

/*
 * Parses an entry (@name, @text of @len bytes). Pure. Returns 0, or -EINVAL for anything but
 * the form above (a path that is not "/<dir>/.slideops-<16 hex>" included).
 */
int jvm_journal_parse(const char *name, const char *text, size_t len, struct jvm_journal_entry *e);

/*
 * The JVMs async-profiler was loaded into, watched for a while after (docs/jvm.md, "Guards"):
 * "injected-<pid>-<starttime>" holds "id=<identity>\nnspid=<n>\ntime=<epoch s>\n". A JVM that
 * died or wrote an hs_err file since is marked: "crashed-<identity>" holds the reason, and no
 * agent is loaded into a JVM of that identity again (until the node restarts: the journal is in
 * /run, or an operator removes the file).
 */
struct jvm_journal_injected {
	uint32_t pid, nspid;
	unsigned long long starttime;
	char id[17]; /* 16 hex digits: the JVM's identity (jvm_source.c) */
	long long time;
};
int jvm_journal_add_injected(const char *dir, const struct jvm_journal_injected *e);
/* Calls @fn for each record; a record for which it returns false is removed. Returns the number
 * seen or -errno. */
int jvm_journal_each_injected(const char *dir,
			      bool (*fn)(void *ctx, const struct jvm_journal_injected *e),
			      void *ctx);
int jvm_journal_add_crashed(const char *dir, const char *id, const char *reason);
/* True when a JVM of identity @id crashed after an agent was loaded; its reason into @reason. */
bool jvm_journal_crashed(const char *dir, const char *id, char *reason, size_t size);

typedef void (*jvm_journal_fn_t)(void *ctx, const struct jvm_journal_entry *e);
/*
 * Calls @fn for each well-formed placement entry of @dir (names that start with a digit; at
 * most 256; of 1 KiB or less), then removes every placement entry it saw, well-formed or not.
 * Returns the number seen or -errno.
 */
int jvm_journal_drain(const char *dir, jvm_journal_fn_t fn, void *ctx);

#endif
