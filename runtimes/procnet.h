/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procnet: parses /proc/net/tcp and /proc/net/tcp6 (also /proc/PID/net/tcp{,6}, which show
 * the network namespace of PID).
 *
 * A line is "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode ...". The kernel
 * prints each address as 32-bit words in hex, each word being the value the CPU loads from the
 * network-order bytes (so "0100007F" is 127.0.0.1 on a little-endian machine), and the port as
 * 4 hex digits in host order. Lines of TIME_WAIT and SYN_RECV sockets are shorter and their
 * inode is 0. Stateless, no I/O, thread-safe.
 */
#ifndef SLIDEOPS_RUNTIMES_PROCNET_H
#define SLIDEOPS_RUNTIMES_PROCNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROCNET_TCP_LISTEN 0x0a /* TCP_LISTEN in include/net/tcp_states.h */

struct procnet_entry {
	bool v6;	  /* from tcp6 */
	uint8_t addr[16]; /* local address in network byte order; IPv4: the first 4 bytes */
	uint16_t port;	  /* local port */
	uint8_t state;	  /* PROCNET_TCP_LISTEN, 0x01 established, 0x06 time wait */
	uint32_t uid;
	uint64_t inode; /* "socket:[N]" in /proc/PID/fd; 0 for time wait */
};

/*
 * Parses one line (@len bytes, need not be NUL-terminated; a trailing '\n' is allowed) of
 * tcp (@v6 false) or tcp6 (@v6 true). Returns 0, or -EINVAL for a malformed line (the header,
 * a truncated line, bad hex, an overlong or missing field); @out is written only on success.
 */
int procnet_parse_line(const char *line, size_t len, bool v6, struct procnet_entry *out);

/* Called per entry; a negative return stops the walk and is returned by procnet_parse(). */
typedef int (*procnet_fn_t)(void *ctx, const struct procnet_entry *e);

/*
 * Parses a whole file (@len bytes): the first line must be the header ("  sl  local_address
 * ..."), the others are entries; malformed lines are skipped, a last line without '\n' is
 * parsed. Calls @fn for each entry in file order. Returns the number of entries, -EINVAL when
 * the buffer does not start with the header, or @fn's negative value.
 */
int procnet_parse(const char *buf, size_t len, bool v6, procnet_fn_t fn, void *ctx);

/*
 * Copies the listening entries (state PROCNET_TCP_LISTEN, inode != 0) of a whole file into
 * @out (at most @max; *@total, if not NULL, counts them all). Returns how many were stored, or
 * -EINVAL as procnet_parse().
 */
int procnet_listening(const char *buf, size_t len, bool v6, struct procnet_entry *out, size_t max,
		      size_t *total);

/*
 * Writes the local address of @e as used in a URL: "127.0.0.1", "[::1]", "[fe80::1]" (at most
 * 48 bytes with the NUL). Returns 0, or -ENOSPC with @buf untouched.
 */
int procnet_format_addr(const struct procnet_entry *e, char *buf, size_t size);

#endif
