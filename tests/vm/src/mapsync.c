// SPDX-License-Identifier: MIT
/*
 * mapsync PATH - can PATH be mapped MAP_SHARED_VALIDATE | MAP_SYNC?
 *
 * Creates PATH (2 MiB), maps it with MAP_SYNC, writes every byte, removes
 * it again. Prints "OK" or the errno name of the failed mmap on stdout.
 * Exit: 0 mapped, 1 mmap refused, 2 setup error (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define PROBE_LEN (2UL << 20)

static int probe(const char *path)
{
	void *p;
	int fd, ret;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		fprintf(stderr, "mapsync: create %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (ftruncate(fd, PROBE_LEN)) {
		ret = -errno;
		fprintf(stderr, "mapsync: ftruncate %s: %s\n", path, strerror(errno));
		goto out_unlink;
	}

	p = mmap(NULL, PROBE_LEN, PROT_READ | PROT_WRITE,
		 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
	if (p == MAP_FAILED) {
		ret = errno;		/* positive: the answer, not a setup error */
		goto out_unlink;
	}
	memset(p, 0x5a, PROBE_LEN);
	munmap(p, PROBE_LEN);
	ret = 0;

out_unlink:
	close(fd);
	unlink(path);
	return ret;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: mapsync PATH (created and removed)\n");
		return 2;
	}
	ret = probe(argv[1]);
	if (ret < 0)
		return 2;
	if (ret > 0) {
		printf("%s\n", strerrorname_np(ret));
		return 1;
	}
	printf("OK\n");
	return 0;
}
