/* SPDX-License-Identifier: Apache-2.0 */
/*
 * detect_cache: runtime_detect() remembered per process, so that `check` and every
 * GET /v1/status do not read every process's mappings and executables again (issue 12: the
 * agent cannot be made to do unbounded work). An entry is keyed by (pid, start time, the
 * executable's device and inode): a reused pid or an exec is a new process. It is trusted for
 * DETECT_CACHE_TTL_MS (a process that dlopen()s its runtime late is seen within that), and the
 * table holds at most DETECT_CACHE_ENTRIES (older entries are replaced). Thread-safe.
 */
#ifndef SLIDEOPS_RUNTIMES_DETECT_CACHE_H
#define SLIDEOPS_RUNTIMES_DETECT_CACHE_H

#include "runtimes/detect.h"

#define DETECT_CACHE_ENTRIES 4096
#define DETECT_CACHE_TTL_MS 60000

/*
 * runtime_detect() through the process-wide cache. Only the real /proc is cached (@o with a
 * proc_root other than "/proc" goes straight to runtime_detect()). Returns what
 * runtime_detect() returns; failures are not cached.
 */
int runtime_detect_cached(const struct runtime_detect_opts *o, int pid, struct runtime_info *out);

/* Empties the cache (tests). */
void runtime_detect_cache_clear(void);

#endif
