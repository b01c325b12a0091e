// SPDX-License-Identifier: MIT
/*
 * bench/names' in-process part: srv_name_resolve alone on a directory of
 * N files (an internal API, like the unit tests), in the directory given
 * (a temporary one beneath it, removed after). Prints microseconds per
 * lookup: a name as it is (one lstat), a name in another case and a
 * missing name with the directory cached, and a missing name right after
 * the directory changed (a rescan of N entries).
 *
 * usage: namelookup DIR [N [K]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void make(const char *top, const char *name)
{
	char p[4200];
	int fd;

	snprintf(p, sizeof(p), "%s/big/%s", top, name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	close(fd);
}

/* us per lookup of K names made by fmt(i) */
static double run(struct srv_share *sh, const char *fmt, int k)
{
	char path[256];
	double t0 = now();
	int i;

	for (i = 0; i < k; i++) {
		snprintf(path, sizeof(path), fmt, i % 1000);
		srv_name_resolve(sh, path, sizeof(path));
	}
	return (now() - t0) / k * 1e6;
}

int main(int argc, char **argv)
{
	struct srv_share *sh = calloc(1, sizeof(*sh));
	int n = argc > 2 ? atoi(argv[2]) : 10000, k = argc > 3 ? atoi(argv[3]) : 100, i;
	char top[4096], name[64], path[256], cmd[4200];
	double scan = 0, t0;

	if (argc < 2 || !sh || n < 1000 || k < 1) {
		fprintf(stderr, "usage: namelookup DIR [N >= 1000 [K]]\n");
		return 2;
	}
	snprintf(top, sizeof(top), "%s/rdax-namelookup.XXXXXX", argv[1]);
	if (!mkdtemp(top))
		return 1;
	snprintf(cmd, sizeof(cmd), "%s/big", top);
	if (mkdir(cmd, 0755))
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "File_%05d.dat", i);
		make(top, name);
	}
	if (store_root_open(top, &sh->root))
		return 1;
	sh->dos.case_sensitive = SRV_CASE_AUTO;
	sh->dos.mangled_names = 1;
	sleep(1);	/* the directory's times settle: its cache is trusted */
	printf("entries %d\n", n);
	printf("as it is        %8.1f us\n", run(sh, "big/File_%05d.dat", k));
	run(sh, "BIG/file_%05d.DAT", 1);
	printf("another case    %8.1f us (cached)\n", run(sh, "BIG/file_%05d.DAT", k));
	printf("missing         %8.1f us (cached)\n", run(sh, "big/none_%05d", k));
	for (i = 0; i < k; i++) {
		snprintf(name, sizeof(name), "new_%05d", i);
		make(top, name);
		usleep(60000);	/* past the racy window: a miss rescans because it changed */
		snprintf(path, sizeof(path), "big/NEW_%05d", i);
		t0 = now();
		srv_name_resolve(sh, path, sizeof(path));
		scan += now() - t0;
	}
	printf("after a change  %8.1f us (a rescan of %d entries)\n", scan / k * 1e6, n + k);
	store_root_close(&sh->root);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) ? 1 : 0;
}
