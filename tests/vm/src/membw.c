// SPDX-License-Identifier: MIT
/*
 * membw - copy bandwidth into DRAM, fsdax and devdax mappings.
 *
 *   membw [-c CHUNK] [-t TOTAL] [-r REGION] TARGET METHOD...
 *
 * TARGET: dram, a file on a DAX file system (created, REGION bytes, mapped
 *         by libpmem2 with MAP_SYNC), or a device-DAX node (/dev/daxX.Y).
 * METHOD: memcpy   plain memcpy, no flush
 *         nt       pmem2_memcpy(PMEM2_F_MEM_NONTEMPORAL), drained per chunk
 *         t        pmem2_memcpy(PMEM2_F_MEM_TEMPORAL), flushed per chunk
 *         persist  memcpy + pmem2_persist per chunk
 *         (only memcpy for dram)
 * Copies TOTAL bytes (default 1 GiB) in CHUNK-sized pieces (default 1 MiB)
 * cycling through REGION (default 64 MiB). One result line per method:
 *   membw target=T method=M chunk=C bytes=B ns=N
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libpmem2.h>

struct target {
	const char *name;
	char *base;
	size_t region;
	int fd;
	int created;
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	pmem2_memcpy_fn memcpy_fn;
	pmem2_persist_fn persist_fn;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'g': case 'G': v <<= 10;	/* fall through */
	case 'm': case 'M': v <<= 10;	/* fall through */
	case 'k': case 'K': v <<= 10;
	}
	return v;
}

static int map_pmem(struct target *t)
{
	static const char *const gran[] = { "BYTE", "CACHE_LINE", "PAGE" };
	struct stat st;
	int ret;

	t->fd = open(t->name, O_RDWR | O_CREAT, 0600);
	if (t->fd < 0) {
		fprintf(stderr, "membw: open %s: %s\n", t->name, strerror(errno));
		return -errno;
	}
	if (fstat(t->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		t->created = 1;
		if (ftruncate(t->fd, t->region)) {
			fprintf(stderr, "membw: ftruncate %s: %s\n", t->name,
				strerror(errno));
			return -errno;
		}
	}

	ret = pmem2_config_new(&t->cfg);
	if (!ret)
		ret = pmem2_source_from_fd(&t->src, t->fd);
	if (!ret)
		ret = pmem2_config_set_required_store_granularity(t->cfg,
						PMEM2_GRANULARITY_PAGE);
	if (!ret)
		ret = pmem2_config_set_length(t->cfg, t->region);
	if (!ret)
		ret = pmem2_map_new(&t->map, t->cfg, t->src);
	if (ret) {
		fprintf(stderr, "membw: pmem2 mapping of %s: %s\n", t->name,
			pmem2_errormsg());
		return ret < 0 ? ret : -EINVAL;
	}
	t->base = pmem2_map_get_address(t->map);
	t->memcpy_fn = pmem2_get_memcpy_fn(t->map);
	t->persist_fn = pmem2_get_persist_fn(t->map);
	fprintf(stderr, "membw: %s mapped by pmem2, store granularity %s\n",
		t->name, gran[pmem2_map_get_store_granularity(t->map)]);
	return 0;
}

static void unmap_target(struct target *t)
{
	if (t->map)
		pmem2_map_delete(&t->map);
	else if (t->base)
		free(t->base);
	if (t->src)
		pmem2_source_delete(&t->src);
	if (t->cfg)
		pmem2_config_delete(&t->cfg);
	if (t->fd >= 0)
		close(t->fd);
	if (t->created)
		unlink(t->name);
}

static int copy_run(struct target *t, const char *method, const char *src,
		    size_t chunk, size_t total)
{
	unsigned long long t0, dt;
	size_t done, off;
	unsigned int flags = 0;
	int m;

	if (!strcmp(method, "memcpy")) {
		m = 0;
	} else if (!strcmp(method, "nt")) {
		m = 1;
		flags = PMEM2_F_MEM_NONTEMPORAL;
	} else if (!strcmp(method, "t")) {
		m = 1;
		flags = PMEM2_F_MEM_TEMPORAL;
	} else if (!strcmp(method, "persist")) {
		m = 2;
	} else {
		return -EINVAL;
	}
	if (m && !t->map) {
		fprintf(stderr, "membw: method %s needs a pmem target\n", method);
		return -EINVAL;
	}

	t0 = now_ns();
	for (done = 0; done < total; done += chunk) {
		off = done % t->region;
		if (m == 1) {
			t->memcpy_fn(t->base + off, src + off, chunk, flags);
		} else {
			memcpy(t->base + off, src + off, chunk);
			if (m == 2)
				t->persist_fn(t->base + off, chunk);
		}
	}
	dt = now_ns() - t0;
	printf("membw target=%s method=%s chunk=%zu bytes=%zu ns=%llu\n",
	       t->name, method, chunk, done, dt ? dt : 1);
	return 0;
}

int main(int argc, char **argv)
{
	size_t chunk = 1UL << 20, total = 1UL << 30, region = 64UL << 20;
	struct target t = { .fd = -1 };
	char *src;
	int c, i, ret = 0;

	while ((c = getopt(argc, argv, "c:t:r:")) != -1) {
		switch (c) {
		case 'c':
			chunk = parse_size(optarg);
			break;
		case 't':
			total = parse_size(optarg);
			break;
		case 'r':
			region = parse_size(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind < 2 || !chunk || region % chunk || total < chunk)
		goto usage;

	t.name = argv[optind];
	t.region = region;
	src = malloc(region);
	if (!src)
		return 2;
	memset(src, 0xa5, region);

	if (!strcmp(t.name, "dram")) {
		t.base = malloc(region);
		if (!t.base)
			return 2;
	} else if (map_pmem(&t)) {
		ret = 2;
		goto out;
	}
	/* warm up: fault the pages in, let TCG translate the copy loops */
	memset(t.base, 0, region);
	memcpy(t.base, src, region);

	for (i = optind + 1; i < argc; i++) {
		if (copy_run(&t, argv[i], src, chunk, total)) {
			fprintf(stderr, "membw: bad method %s for %s\n", argv[i], t.name);
			ret = 2;
			break;
		}
	}
out:
	unmap_target(&t);
	free(src);
	return ret;

usage:
	fprintf(stderr, "usage: membw [-c CHUNK] [-t TOTAL] [-r REGION] "
		"{dram|DAXFILE|/dev/daxX.Y} {memcpy|nt|t|persist}...\n"
		"  CHUNK must divide REGION\n");
	return 2;
}
