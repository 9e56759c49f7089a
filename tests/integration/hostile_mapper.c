// SPDX-License-Identifier: Apache-2.0
/*
 * A hostile container's pid 1 for tests/integration/test_hostile_files.sh (issue 12). It maps
 * the ELF files the test put in its root, then hides them: a tmpfs mounted over
 * /usr/lib/hostile puts, at the very paths /proc/PID/maps names, an absolute link to the
 * host's canary (CANARY, argv[1]), a FIFO, a device node and a link loop. A thread maps and
 * unmaps /usr/lib/hostile/libracy.so (through an fd kept from before the mount) over and
 * over, so that a profiler reading the maps finds map_files gone and falls back to the path.
 * The main thread burns CPU. Runs until killed. Prints "ready" on stdout once set up.
 *
 *   hostile_mapper /etc/slideops-canary.123
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DIR "/usr/lib/hostile"
#define MAP_LEN 4096

static const char *const libs[] = { "libvictim.so", "libfifo.so", "libdev.so", "libloop.so",
				     "libracy.so" };

static int racy_fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "hostile_mapper: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Maps @path read+exec and keeps it mapped; returns the fd (kept open). */
static int map_exec(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	if (mmap(NULL, MAP_LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		die("mmap");
	return fd;
}

static void *race(void *arg)
{
	void *p;

	(void)arg;
	for (;;) {
		p = mmap(NULL, MAP_LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE, racy_fd, 0);
		if (p == MAP_FAILED)
			die("mmap racy");
		usleep(200);
		munmap(p, MAP_LEN);
	}
	return NULL;
}

/* The tmpfs over DIR: at each mapped path, something a profiler must never open. */
static void hide(const char *canary)
{
	if (mount("tmpfs", DIR, "tmpfs", 0, "size=1m,mode=0755") < 0)
		die("mount tmpfs");
	if (symlink(canary, DIR "/libvictim.so") < 0 || symlink(canary, DIR "/libracy.so") < 0)
		die("symlink");
	if (mkfifo(DIR "/libfifo.so", 0644) < 0)
		die("mkfifo");
	if (mknod(DIR "/libdev.so", S_IFCHR | 0644, makedev(1, 5)) < 0)	/* like /dev/zero */
		die("mknod");
	if (symlink("loop2", DIR "/libloop.so") < 0 || symlink("libloop.so", DIR "/loop2") < 0)
		die("symlink loop");
}

int main(int argc, char **argv)
{
	char path[256];
	pthread_t t;
	volatile unsigned long spin = 0;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: hostile_mapper CANARY\n");
		return 2;
	}
	map_exec("/opt/jdk/lib/server/libjvm.so");
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(path, sizeof(path), DIR "/%s", libs[i]);
		if (strcmp(libs[i], "libracy.so"))
			map_exec(path);
		else
			racy_fd = map_exec(path);
	}
	hide(argv[1]);
	if (pthread_create(&t, NULL, race, NULL))
		die("pthread_create");
	printf("ready\n");
	fflush(stdout);
	for (;;)
		spin++;
	return 0;
}
