// SPDX-License-Identifier: Apache-2.0
#include "runtimes/detect_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/proc.h"

struct entry {
	int pid; /* 0: free */
	unsigned long long starttime;
	uint64_t dev, ino;
	uint64_t at_ms; /* when it was detected */
	struct runtime_info info;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry table[DETECT_CACHE_ENTRIES];

/* The identity of process @pid now: its start time and its executable's (dev, inode). */
static int identity(int pid, unsigned long long *starttime, uint64_t *dev, uint64_t *ino)
{
	struct proc_stat st;
	struct stat sb;
	char path[64];
	int err;

	err = proc_read_stat(NULL, (uint32_t)pid, &st);
	if (err)
		return err;
	*starttime = st.starttime;
	/* stat() of the magic link: the kernel resolves it to the file itself; a kernel thread
	 * has none (dev = ino = 0) */
	*dev = *ino = 0;
	if (!proc_path(path, sizeof(path), NULL, (uint32_t)pid, "exe") && !stat(path, &sb)) {
		*dev = sb.st_dev;
		*ino = sb.st_ino;
	}
	return 0;
}

static struct entry *slot(int pid)
{
	return &table[(uint32_t)pid % DETECT_CACHE_ENTRIES];
}

static bool lookup(int pid, unsigned long long starttime, uint64_t dev, uint64_t ino,
		   struct runtime_info *out)
{
	const struct entry *e = slot(pid);
	bool hit;

	pthread_mutex_lock(&lock);
	hit = e->pid == pid && e->starttime == starttime && e->dev == dev && e->ino == ino &&
	      clock_mono_ms() - e->at_ms < DETECT_CACHE_TTL_MS;
	if (hit)
		*out = e->info;
	pthread_mutex_unlock(&lock);
	return hit;
}

static void store(int pid, unsigned long long starttime, uint64_t dev, uint64_t ino,
		  const struct runtime_info *info)
{
	struct entry *e = slot(pid);

	pthread_mutex_lock(&lock);
	*e = (struct entry){ .pid = pid,
			     .starttime = starttime,
			     .dev = dev,
			     .ino = ino,
			     .at_ms = clock_mono_ms(),
			     .info = *info };
	pthread_mutex_unlock(&lock);
}

int runtime_detect_cached(const struct runtime_detect_opts *o, int pid, struct runtime_info *out)
{
	unsigned long long starttime;
	struct runtime_info ri;
	uint64_t dev, ino;
	int err;

	if (o && o->proc_root && strcmp(o->proc_root, "/proc"))
		return runtime_detect(o, pid, out);
	if (pid <= 0 || !out)
		return -EINVAL;
	err = identity(pid, &starttime, &dev, &ino);
	if (err)
		return err;
	if (lookup(pid, starttime, dev, ino, out))
		return 0;
	err = runtime_detect(o, pid, &ri);
	if (err)
		return err;
	store(pid, starttime, dev, ino, &ri);
	*out = ri;
	return 0;
}

void runtime_detect_cache_clear(void)
{
	pthread_mutex_lock(&lock);
	memset(table, 0, sizeof(table));
	pthread_mutex_unlock(&lock);
}
