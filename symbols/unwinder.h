/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unwinder: the user-space half of the in-kernel DWARF unwinder (bpf/unwind.bpf.h,
 * docs/unwinding.md). For a process it reads /proc/PID/maps, builds or reuses the unwind table
 * (symbols/unwind_table.h) of each executable file it maps, copies the rows into the collector's
 * uw_rows map and writes the process's sorted mapping list into uw_procs; the BPF side then
 * walks that process's user stacks from .eh_frame.
 *
 * Tables are shared: one per file, found again by (dev, inode, mtime, size) and by GNU build id
 * (so the same library in another container's file system is built once), reference counted by
 * the processes whose lists use them, and kept after their last user until the rows map or the
 * table count needs room (least recently used first). A file without CFI (a pure Go binary)
 * gets an empty table: the BPF side walks its frames by frame pointer, by design. The vDSO's
 * table is built once from this process's own vDSO (the kernel maps the same image everywhere).
 *
 * Not thread-safe: one thread owns an unwinder (the collector's).
 */
#ifndef SLIDEOPS_UNWINDER_H
#define SLIDEOPS_UNWINDER_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"
#include "symbols/unwind_table.h"

/* The collector's maps (fds stay the collector's; they must outlive the unwinder). */
struct unwinder_maps {
	int rows_fd;   /* uw_rows: BPF_F_MMAPABLE array of struct unwind_row */
	int procs_fd;  /* uw_procs: tgid -> struct uw_proc */
	int stacks_fd; /* uw_stacks: stack id -> struct uw_stack */
	int stats_fd;  /* uw_stats: per-CPU __u64 counters, UW_STAT_* */
};

/*
 * Where the rows and the lists go. NULL in unwinder_opts: the BPF maps. A seam for unit tests
 * (STYLE 8): write_rows() stores @n rows at index @start of the rows array of @capacity rows;
 * it and set_proc()/del_proc() return 0 or -errno.
 */
struct unwinder_ops {
	int (*write_rows)(void *ctx, uint32_t start, const struct unwind_row *rows, uint32_t n,
			  uint32_t capacity);
	int (*set_proc)(void *ctx, uint32_t tgid, const struct uw_proc *proc);
	int (*del_proc)(void *ctx, uint32_t tgid);
};

struct unwinder_opts {
	const char *proc_root;		/* NULL: "/proc" */
	uint32_t rows;			/* size of uw_rows (its max_entries); 0: UW_DEFAULT_ROWS */
	uint32_t max_procs;		/* size of uw_procs; 0: UW_DEFAULT_PROCS */
	uint32_t max_tables;		/* tables kept, in use or not; 0: 2048 */
	uint32_t max_table_rows;	/* rows of one table at most; 0: half of `rows` */
	const struct unwinder_ops *ops; /* NULL: the BPF maps of unwinder__new() */
	void *ops_ctx;
};

struct unwinder_stats {
	/* user space */
	uint64_t procs;	 /* processes with a mapping list */
	uint64_t tables; /* tables held, in use or cached */
	uint64_t tables_in_use;
	uint64_t tables_built;	/* built since the start (each file once, until evicted) */
	uint64_t tables_shared; /* mappings served by a table built for another process */
	uint64_t tables_failed; /* files whose table could not be built or had no room */
	uint64_t tables_evicted;
	uint64_t rows_used; /* rows held in uw_rows */
	uint64_t rows_capacity;
	uint64_t rows_bytes;	   /* rows_used * UW_ROW_STRIDE: what the tables take */
	uint64_t build_ns;	   /* CPU time of table builds and loads */
	uint64_t mappings_dropped; /* executable mappings past UW_MAX_MAPPINGS */
	/* BPF: how the walks ended (UW_STAT_*), summed over CPUs */
	uint64_t bpf[UW_STAT_MAX];
};

struct unwinder;

/*
 * Creates an unwinder over @maps (copied; with opts->ops NULL the rows map is mmap'ed here).
 * Returns 0, -EINVAL (bad opts), -ENOMEM, or -errno of mmap.
 */
int unwinder__new(const struct unwinder_maps *maps, const struct unwinder_opts *opts,
		  struct unwinder **out);
/* Accepts NULL and half-built objects. The BPF maps keep their contents. */
void unwinder__free(struct unwinder *uw);

/*
 * (Re)loads the mapping list of @tgid: its tables are built or reused, its list replaces any
 * previous one. Returns the number of executable mappings listed (>= 0), -ESRCH if the process
 * is gone, -ENOSPC when the process map is full even after dropping exited processes, or
 * another -errno of reading /proc or of the map update. A file whose table cannot be built is
 * not an error: its mapping is listed without a table (frame pointers).
 */
int unwinder__add_process(struct unwinder *uw, uint32_t tgid);

/* Drops @tgid's list (releasing its tables). Returns 0, or -ENOENT when it had none. */
int unwinder__remove_process(struct unwinder *uw, uint32_t tgid);

/* Drops the lists of processes that exited. Returns the number dropped. */
int unwinder__sweep(struct unwinder *uw);

/*
 * Reads user stack @id from uw_stacks: up to @max frames, leaf first, into @ips, their number
 * in *@n. Returns 0, @id itself when it is negative (no stack: -EFAULT, -EEXIST, -ENOMEM), or
 * -errno (-ENOENT: no such id).
 */
int unwinder__read_stack(struct unwinder *uw, int32_t id, uint64_t *ips, size_t max, size_t *n);

/* Fills @out (the BPF counters too when the maps are BPF). Returns 0 or -errno. */
int unwinder__stats(struct unwinder *uw, struct unwinder_stats *out);

/*
 * The notes' wording for the walks that did not complete, e.g. "3.1% of the stacks could not be
 * completed: 2.0% before the process's unwind tables were loaded, 1.1% in code without unwind
 * information (JIT, vDSO)". Writes "" when every stack completed (or none was walked).
 * Returns the share incomplete, in percent.
 */
double unwinder_incomplete_text(const struct unwinder_stats *st, char *buf, size_t size);

/*
 * The reference unwinder: the BPF walk (bpf/unwind.bpf.h) in plain C, over a copy of user
 * memory, for tests. @proc and @rows are what the maps hold; @mem covers [@mem_base,
 * @mem_base + @mem_len). Writes up to UW_MAX_DEPTH frames into @ips, their number in *@n.
 * Returns the outcome, a UW_STAT_* from UW_STAT_COMPLETE to UW_STAT_BAD_FRAME; *@fp_used tells
 * whether some frame was walked by frame pointer.
 */
int unwinder_walk_reference(const struct uw_proc *proc, const struct unwind_row *rows, size_t nrows,
			    const void *mem, uint64_t mem_base, size_t mem_len, uint64_t ip,
			    uint64_t sp, uint64_t bp, uint64_t *ips, size_t *n, int *fp_used);

#endif
