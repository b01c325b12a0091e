// SPDX-License-Identifier: MIT
/*
 * regmr - which memory can ibv_reg_mr() register?
 *
 *   regmr [-d DEV] [-o] [-1] [-l LEN] KIND [PATH]
 *
 * KIND: anon            anonymous private memory (posix_memalign)
 *       shared PATH     file mapping, MAP_SHARED
 *       sync PATH       file mapping, MAP_SHARED_VALIDATE | MAP_SYNC
 *       private PATH    file mapping, MAP_PRIVATE
 *       devdax PATH     device-DAX character device, MAP_SHARED
 * File kinds create PATH (LEN bytes, default 4 MiB) and remove it again.
 * Every page is written before registering; -1 writes only the first one.
 * -o adds IBV_ACCESS_ON_DEMAND. The access flags are always
 * LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ, as an SMB-Direct server needs.
 *
 * Prints "OK" or the errno name of the failed ibv_reg_mr on stdout.
 * Exit: 0 registered, 1 registration refused, 2 setup error (stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

struct probe {
	const char *kind;
	const char *path;
	const char *dev;
	size_t len;
	int access;
	void *buf;
	int fd;
	int mapped;
	int created;
	int touch_one;
};

static void usage(void)
{
	fprintf(stderr, "usage: regmr [-d DEV] [-o] [-1] [-l LEN] "
		"anon | {shared|sync|private|devdax} PATH\n");
	exit(2);
}

static int setup_memory(struct probe *p)
{
	int flags, oflags = O_RDWR;

	if (!strcmp(p->kind, "anon")) {
		if (posix_memalign(&p->buf, 4096, p->len))
			return -ENOMEM;
		return 0;
	}
	if (!p->path)
		usage();

	if (!strcmp(p->kind, "shared"))
		flags = MAP_SHARED;
	else if (!strcmp(p->kind, "sync"))
		flags = MAP_SHARED_VALIDATE | MAP_SYNC;
	else if (!strcmp(p->kind, "private"))
		flags = MAP_PRIVATE;
	else if (!strcmp(p->kind, "devdax"))
		flags = MAP_SHARED;
	else
		usage();

	if (strcmp(p->kind, "devdax"))
		oflags |= O_CREAT | O_EXCL;
	p->fd = open(p->path, oflags, 0600);
	if (p->fd < 0) {
		fprintf(stderr, "regmr: open %s: %s\n", p->path, strerror(errno));
		return -errno;
	}
	p->created = !!(oflags & O_CREAT);
	if (p->created && ftruncate(p->fd, p->len)) {
		fprintf(stderr, "regmr: ftruncate %s: %s\n", p->path, strerror(errno));
		return -errno;
	}
	p->buf = mmap(NULL, p->len, PROT_READ | PROT_WRITE, flags, p->fd, 0);
	if (p->buf == MAP_FAILED) {
		p->buf = NULL;
		fprintf(stderr, "regmr: mmap %s (%s): %s\n", p->path, p->kind,
			strerror(errno));
		return -errno;
	}
	p->mapped = 1;
	return 0;
}

static void teardown_memory(struct probe *p)
{
	if (p->mapped)
		munmap(p->buf, p->len);
	else
		free(p->buf);
	if (p->fd >= 0)
		close(p->fd);
	if (p->created)
		unlink(p->path);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "regmr: ibv_get_device_list: %s\n", strerror(errno));
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "regmr: ibv_open_device %s: %s\n",
				ibv_get_device_name(list[i]), strerror(errno));
		break;
	}
	if (i == n)
		fprintf(stderr, "regmr: RDMA device %s not found\n",
			name ? name : "(any)");
	ibv_free_device_list(list);
	return ctx;
}

/* Returns 0 registered, a positive errno if refused, negative on setup error. */
static int run(struct probe *p)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	int ret;

	ctx = open_device(p->dev);
	if (!ctx)
		return -ENODEV;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		ret = -errno;
		fprintf(stderr, "regmr: ibv_alloc_pd: %s\n", strerror(errno));
		goto out_close;
	}
	ret = setup_memory(p);
	if (ret)
		goto out_mem;

	memset(p->buf, 0x5a, p->touch_one ? 4096 : p->len);	/* fault pages in */
	errno = 0;
	mr = ibv_reg_mr(pd, p->buf, p->len, p->access);
	if (!mr) {
		ret = errno ? errno : EIO;
		goto out_mem;
	}
	ibv_dereg_mr(mr);
	ret = 0;

out_mem:
	teardown_memory(p);
	ibv_dealloc_pd(pd);
out_close:
	ibv_close_device(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	struct probe p = {
		.len = 4UL << 20,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.fd = -1,
	};
	int c, ret;

	while ((c = getopt(argc, argv, "d:ol:1")) != -1) {
		switch (c) {
		case 'd':
			p.dev = optarg;
			break;
		case 'o':
			p.access |= IBV_ACCESS_ON_DEMAND;
			break;
		case 'l':
			p.len = strtoul(optarg, NULL, 0);
			break;
		case '1':
			p.touch_one = 1;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || !p.len)
		usage();
	p.kind = argv[optind];
	p.path = argv[optind + 1];

	ret = run(&p);
	if (ret < 0)
		return 2;
	if (ret > 0) {
		printf("%s\n", strerrorname_np(ret));
		return 1;
	}
	printf("OK\n");
	return 0;
}
