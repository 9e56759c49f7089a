// SPDX-License-Identifier: Apache-2.0
/*
 * Watches a host canary file for tests/integration/test_hostile_files.sh: prints one line per
 * open, read or close of it (inotify) on stdout, unbuffered, until killed. Prints "watching"
 * once the watch is in place.
 *
 *   hostile_watch /etc/slideops-canary.123
 */
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;
	int fd;

	if (argc != 2)
		return 2;
	fd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, argv[1], IN_OPEN | IN_ACCESS | IN_CLOSE) < 0) {
		perror("inotify");
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("watching\n");
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return 1;
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_OPEN)
				printf("open\n");
			else
				printf("%s\n", ev->mask & IN_ACCESS ? "access" : "close");
		}
	}
}
