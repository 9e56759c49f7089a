// SPDX-License-Identifier: Apache-2.0
/*
 * Test driver for runtimes/node/nsws.h (compiled against the built objects; not part of the
 * product):
 *
 *   ws_probe [-h HOST] [-c CONNECT_MS] [-t TOTAL_MS] [-w WAIT_MS] [-m MAX_MESSAGE]
 *            [-q MAX_QUEUED] [-s SEND_KB] [-e EXPR] PID PORT PATH [PID PORT PATH]...
 *
 * opens ws://HOST:PORT/PATH (HOST 127.0.0.1) inside PID's network namespace, sends
 * {"id":1,"method":"Runtime.evaluate","params":{"expression":EXPR}} (EXPR process.pid), waits
 * WAIT_MS (0) before reading, then takes messages until the one with "id":1 or TOTAL_MS (5000)
 * and prints it on stdout. Several targets run at once, one thread each, in one process. -s sends SEND_KB kilobytes more, in 64 KiB messages, before reading
 * (a peer that does not read). On stderr, one summary line:
 *   ws_probe: pid=N port=N open=0 note="" result=0 (OK) skipped=N open_ms=N total_ms=N close_ms=N maxrss_kb=N
 * result is the first error of nsws_send()/nsws_recv() (or of nsws_open()). Exit status 0 when
 * the reply came, 1 otherwise, 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"
#include "runtimes/node/nsws.h"

#define CHUNK (64u << 10)
#define MAX_TARGETS 8

struct args {
	const char *host, *expr;
	int connect_ms, total_ms, wait_ms;
	size_t max_message, max_queued, send_kb;
};

static const char *ename(int err)
{
	const char *n = err ? strerrorname_np(-err) : "OK";

	return n ? n : "?";
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int parse(int argc, char **argv, struct args *a)
{
	int opt;

	*a = (struct args){
		.host = "127.0.0.1", .expr = "process.pid", .connect_ms = 2000, .total_ms = 5000
	};
	while ((opt = getopt(argc, argv, "h:c:t:w:m:q:s:e:")) != -1) {
		switch (opt) {
		case 'h':
			a->host = optarg;
			break;
		case 'c':
			a->connect_ms = atoi(optarg);
			break;
		case 't':
			a->total_ms = atoi(optarg);
			break;
		case 'w':
			a->wait_ms = atoi(optarg);
			break;
		case 'm':
			a->max_message = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			a->max_queued = strtoul(optarg, NULL, 0);
			break;
		case 's':
			a->send_kb = strtoul(optarg, NULL, 0);
			break;
		case 'e':
			a->expr = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	if (argc - optind < 3 || (argc - optind) % 3 || (argc - optind) / 3 > MAX_TARGETS)
		return -EINVAL;
	return 0;
}

/* Sends the command, and -s's extra bytes; the first error. */
static int send_all(struct nsws *c, const struct args *a)
{
	char cmd[1024], *chunk;
	size_t sent = 0;
	int n, err;

	n = snprintf(cmd, sizeof(cmd),
		     "{\"id\":1,\"method\":\"Runtime.evaluate\",\"params\":{\"expression\":\"%s\","
		     "\"returnByValue\":true}}",
		     a->expr);
	err = nsws_send(c, cmd, (size_t)n);
	chunk = malloc(CHUNK);
	if (!chunk)
		return -ENOMEM;
	memset(chunk, 'x', CHUNK);
	while (!err && sent < a->send_kb * 1024) {
		err = nsws_send(c, chunk, CHUNK);
		sent += CHUNK;
		if (err == -ENOBUFS)
			fprintf(stderr, "ws_probe: send queue full after %zu KiB\n", sent / 1024);
	}
	free(chunk);
	return err;
}

/* Takes messages until the answer to id 1; the first error. */
static int recv_answer(struct nsws *c, const struct args *a, uint64_t t0, unsigned *skipped)
{
	size_t len;
	char *msg;
	int err;

	for (;;) {
		uint64_t now = clock_mono_ms();

		if (now >= t0 + (uint64_t)a->total_ms)
			return -ETIMEDOUT;
		err = nsws_recv(c, (int)(t0 + (uint64_t)a->total_ms - now), &msg, &len);
		if (err)
			return err;
		if (strstr(msg, "\"id\":1,") || strstr(msg, "\"id\":1}")) {
			printf("%s\n", msg);
			free(msg);
			return 0;
		}
		free(msg);
		(*skipped)++;
	}
}

struct target {
	const struct args *a;
	int pid;
	uint16_t port;
	const char *path;
	int rc;
};

/* One connection, start to end, with its summary line. */
static void *run_one(void *arg)
{
	char dir[64], note[NSWS_NOTE_MAX] = "";
	uint64_t t0, t_open, t_end, t_close;
	struct target *t = arg;
	const struct args *a = t->a;
	struct nsws *c = NULL;
	struct nsws_opts o;
	unsigned skipped = 0;
	int fd, open_err, err = 0;

	snprintf(dir, sizeof(dir), "/proc/%d", t->pid);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(dir);
		t->rc = 1;
		return NULL;
	}
	o = (struct nsws_opts){ .host = a->host,
				.port = t->port,
				.path = t->path,
				.connect_ms = a->connect_ms,
				.max_message = a->max_message,
				.max_queued = a->max_queued };
	t0 = clock_mono_ms();
	open_err = nsws_open_note(fd, &o, &c, note, sizeof(note));
	t_open = clock_mono_ms();
	if (!open_err) {
		err = send_all(c, a);
		if (err == -EPIPE) /* it ended already: why */
			err = recv_answer(c, a, t_open, &skipped);
		if (!err && a->wait_ms)
			usleep((useconds_t)a->wait_ms * 1000);
		if (!err)
			err = recv_answer(c, a, t_open, &skipped);
	}
	t_end = clock_mono_ms();
	nsws_close(c);
	t_close = clock_mono_ms();
	close(fd);
	fprintf(stderr,
		"ws_probe: pid=%d port=%u open=%d (%s) note=\"%s\" result=%d (%s) skipped=%u open_ms=%llu "
		"total_ms=%llu close_ms=%llu maxrss_kb=%ld\n",
		t->pid, t->port, open_err, ename(open_err), note, open_err ? open_err : err,
		ename(open_err ? open_err : err), skipped, (unsigned long long)(t_open - t0),
		(unsigned long long)(t_end - t0), (unsigned long long)(t_close - t_end),
		maxrss_kb());
	t->rc = open_err || err ? 1 : 0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct target t[MAX_TARGETS];
	pthread_t th[MAX_TARGETS];
	int i, n, rc = 0;
	struct args a;

	if (parse(argc, argv, &a)) {
		fprintf(stderr, "usage: ws_probe [-h HOST] [-c MS] [-t MS] [-w MS] [-m BYTES] "
				"[-q BYTES] [-s KB] [-e EXPR] PID PORT PATH [PID PORT PATH]...\n");
		return 2;
	}
	n = (argc - optind) / 3;
	for (i = 0; i < n; i++) {
		t[i] = (struct target){ .a = &a,
					.pid = atoi(argv[optind + 3 * i]),
					.port = (uint16_t)atoi(argv[optind + 3 * i + 1]),
					.path = argv[optind + 3 * i + 2] };
		if (pthread_create(&th[i], NULL, run_one, &t[i])) {
			n = i;
			rc = 1;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		rc |= t[i].rc;
	}
	return rc;
}
