/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proclisten: the TCP sockets a process listens on, in its own network namespace: the
 * listening entries of /proc/PID/net/tcp{,6} (runtimes/procnet.h) that are among its file
 * descriptors ("socket:[inode]" links). Bounded: files of at most 64 MiB, at most 131072 fds
 * looked at. Thread-safe.
 */
#ifndef SLIDEOPS_RUNTIMES_PROCLISTEN_H
#define SLIDEOPS_RUNTIMES_PROCLISTEN_H

#include <stddef.h>

#include "runtimes/procnet.h"

/* Listening sockets of one namespace a caller usually looks at. */
#define PROC_LISTEN_MAX 512

/*
 * The listening sockets of the network namespace of the process whose /proc/PID directory is
 * open as @pid_fd, into @l (at most @max) and their count into *@n. Returns 0, -ESRCH when the
 * process is gone, or -errno.
 */
int proc_listening_read(int pid_fd, struct procnet_entry *l, size_t max, size_t *n);

/*
 * Keeps in @l (@n entries, reordered by inode) those that are the process's own: its fds that
 * are "socket:[N]" links. Returns how many are kept (first in @l), or -errno.
 */
int proc_listening_owned(int pid_fd, struct procnet_entry *l, size_t n);

#endif
