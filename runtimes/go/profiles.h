/* SPDX-License-Identifier: Apache-2.0 */
/*
 * profiles: what a Go program's net/http/pprof endpoints send, turned into the profile model
 * (profile/profile.h). Decodes pprof bodies (heap, allocs, mutex, block), adds the difference of
 * two snapshots of a cumulative profile under a synthetic leaf saying why the time was spent,
 * and turns a goroutine dump (runtimes/go/goroutines.h) into one sample per goroutine plus
 * groups by process, state and function. Pure: no network, no /proc; thread-safe on distinct
 * profiles and groups.
 */
#ifndef SLIDEOPS_RUNTIMES_GO_PROFILES_H
#define SLIDEOPS_RUNTIMES_GO_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct prof_labels;
struct prof_sample;
struct go_goroutines;

/* Most goroutine groups kept; goroutines of further groups are counted, not grouped. */
#define GO_PROFILES_MAX_GROUPS 4096

/* Leaves of the lock profiles' stacks. */
#define GO_PROFILES_MUTEX_LEAF "[lock wait: Go sync.Mutex, by holder]"
#define GO_PROFILES_BLOCK_LEAF "[lock wait: Go blocking]"

/*
 * Decodes @len bytes of a pprof body (gzipped or not) keeping sample types @t0, @t1, frames in
 * Go unless marked, at most @max_decoded bytes once ungzipped (0: profile/pprof's bound). Returns
 * 0 with @out (caller frees with profile__free), -ENOENT when a sample type is missing, -EFBIG
 * past @max_decoded, -EINVAL when malformed, -ENOMEM.
 */
int go_profiles_decode(const void *body, size_t len, const char *t0, const char *t1,
		       size_t max_decoded, struct profile **out);

/* Why go_profiles_decode() returned @err: "those sample types are missing", "too large",
 * "malformed". */
const char *go_profiles_decode_why(int err);

/* "sampling period=N" of /debug/pprof/mutex?debug=1 in NUL-terminated @text: N (the program's
 * mutex profile fraction, 0 when off), or -1 when absent. */
long go_profiles_mutex_period(const char *text);

/* Completes labels a caller has filled (or zeroed) for Go process @pid named @comm: pid, the
 * process name when unset, language Go. */
void go_profiles_labels(struct prof_labels *l, uint32_t pid, const char *comm);

/* False when a stack (leaf first) waits on a sync mutex: the block profile's view of a wait the
 * mutex profile also holds (its samples are left out of the block profile then). */
bool go_profiles_not_sync_mutex(const struct profile *p, const struct prof_sample *s);

/*
 * Adds @end minus @start (NULL: nothing to subtract) to @dst with labels @l, keeping the stacks
 * whose first value grew and, when @keep is given, for which it returns true; under a leaf
 * frame @leaf_text (mapping REPORT_WAIT_MAPPING) when non-NULL. Frees nothing. Returns 0,
 * -ENOMEM or what profile_merge returns (-EINVAL when the value counts differ).
 */
int go_profiles_add_delta(struct profile *dst, const struct profile *end,
			  const struct profile *start, const struct prof_labels *l,
			  const char *leaf_text,
			  bool (*keep)(const struct profile *, const struct prof_sample *));

/* Goroutines seen by a `threads` capture, grouped by process, state and function, most first. */
struct go_goroutine_group {
	uint32_t pid;
	char process[16];
	char state[48];	    /* "chan receive", "running", "select" */
	char function[160]; /* the leaf-most function of the program, else the leaf */
	uint32_t count;
};

/* The groups of the goroutines of every process added; all-zero is empty. */
struct go_groups {
	struct go_goroutine_group *g; /* GO_PROFILES_MAX_GROUPS once the first is added */
	size_t n;
	uint64_t total; /* goroutines added, grouped or not */
};

/*
 * Adds each goroutine of @gs (but the one writing the dump) to @dst as one sample of value 1:
 * its stack (frames in Go, of mapping @exe) under a leaf "[goroutine: STATE]", with labels @l,
 * and to @groups under @l->pid, @comm, its state and its function (the leaf-most one of the
 * program, not of the Go runtime or standard library). Returns 0, -ENOMEM or what profile__add
 * returns; goroutines added before a failure stay.
 */
int go_profiles_add_goroutines(struct profile *dst, const struct go_goroutines *gs,
			       const struct prof_labels *l, const char *comm, const char *exe,
			       struct go_groups *groups);

/* Sorts @groups most goroutines first (then by pid). */
void go_groups_sort(struct go_groups *groups);
/* Frees the groups; @groups is empty again. */
void go_groups_release(struct go_groups *groups);

#endif
