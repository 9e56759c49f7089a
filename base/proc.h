/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc: the readers of /proc/PID files that every folder uses (stat, comm, any file by name),
 * with the systemd rule for a process that is gone: ENOENT (or ESRCH) from /proc/PID becomes
 * -ESRCH. @proc_root is "/proc" when NULL; tests point it at a fixture tree. Thread-safe.
 */
#ifndef SLIDEOPS_BASE_PROC_H
#define SLIDEOPS_BASE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fields of /proc/PID/stat that the profiler uses (proc(5) field numbers). */
struct proc_stat {
	char state;		      /* 3: R, S, D, Z, X, ... */
	long long ppid;		      /* 4 */
	long long session;	      /* 6 */
	long long tty_nr;	      /* 7 */
	unsigned long long flags;     /* 9: PF_* (PF_KTHREAD 0x00200000) */
	unsigned long long utime;     /* 14: user CPU time, clock ticks */
	unsigned long long stime;     /* 15: system CPU time, clock ticks */
	unsigned long long starttime; /* 22: clock ticks after boot */
};

/* Largest /proc/PID/stat read (the line is about 300 bytes; comm is at most 64). */
#define PROC_STAT_MAX 4096

/* -ESRCH for -ENOENT and -ESRCH (the process exited), else @err. */
int proc_gone(int err);

/* False only when @pid is certainly gone (its /proc directory is not there): a cache of a
 * profiler that stays loaded drops it then. A zombie still exists. */
bool proc_exists(const char *proc_root, uint32_t pid);

/* "@proc_root/@pid/@name" into @buf. Returns 0 or -ENAMETOOLONG. */
int proc_path(char *buf, size_t size, const char *proc_root, uint32_t pid, const char *name);

/*
 * Reads /proc/@pid/@name, at most @max bytes (read_file_bounded), into a NUL-terminated buffer
 * the caller frees. @dirfd is an open proc root (AT_FDCWD: @proc_root, or /proc). Returns 0,
 * -ESRCH when the process is gone, -EFBIG past @max, or another -errno.
 */
int proc_read(const char *proc_root, uint32_t pid, const char *name, size_t max, char **out,
	      size_t *len);
int proc_read_at(int dirfd, uint32_t pid, const char *name, size_t max, char **out, size_t *len);

/*
 * Parses the text of a /proc/PID/stat file (@len bytes, then a NUL; comm may hold spaces and
 * ')'). Returns 0 or -EINVAL (NUL bytes, a missing field, a number out of range); @st is
 * untouched then.
 */
int proc_parse_stat(const char *buf, size_t len, struct proc_stat *st);

/* Reads and parses /proc/@pid/stat. Returns 0, -ESRCH, -EINVAL or another -errno. */
int proc_read_stat(const char *proc_root, uint32_t pid, struct proc_stat *st);
int proc_read_stat_at(int dirfd, uint32_t pid, struct proc_stat *st);

/*
 * Reads /proc/@pid/comm into @buf without its newline (the kernel's bytes, not necessarily
 * UTF-8: the kernel cuts comm at 15 bytes, mid-character too). Returns 0, -ESRCH or -errno;
 * @buf is "" on failure.
 */
int proc_read_comm(const char *proc_root, uint32_t pid, char *buf, size_t size);

/* What /proc/PID/status says about a process's identity and signals. */
struct proc_status {
	uint32_t nspid;	     /* last NSpid field: the pid in its own namespace */
	uint32_t euid, egid; /* second Uid and Gid fields, as the reader sees them */
	uint64_t sigcgt;     /* SigCgt: bit N-1 set when signal N has a handler */
};

/*
 * Parses the text of /proc/PID/status (@len bytes). Without an NSpid line (a kernel before
 * 4.1) the Pid line stands for it. Returns 0, or -EINVAL when Pid/NSpid, Uid, Gid or SigCgt
 * is missing or malformed (@st untouched then).
 */
int proc_parse_status(const char *text, size_t len, struct proc_status *st);

#endif
