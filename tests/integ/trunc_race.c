// SPDX-License-Identifier: MIT
/*
 * One file, two clients, through include/rdax.h only: one reads and
 * writes it in a loop (4 KiB, 64 KiB and 1 MiB, so over TCP on a DAX
 * share both the CPU copies and the zero-copy windows), the other cuts
 * it short and extends it again, as fast as it can. Every write puts the
 * same byte at a given offset, so a byte read is that byte or zero (cut
 * off and extended since): anything else is torn data. Every request
 * must succeed (a READ at or past EOF may end short) and the server
 * must go on serving both.
 *
 * usage: trunc_race [--rdma] smb://HOST[:PORT]/SHARE/FILE SECS   (as a guest)
 * Exit: 0 held, 1 a check failed, 2 usage, 99 setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdax.h"

#define BIG (16u << 20)
#define SMALL ((1u << 20) + 123)
#define MAXIO (1u << 20)

static bool rdma;
static struct rdax_url url;
static int secs;
static atomic_bool stop;
static atomic_long n_io, n_cut, n_torn, n_err;
static char first_err[256];
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)(off * 2654435761u >> 24) | 1;	/* never zero */
}

static void fail(const char *what, struct rdax_conn *c, ssize_t ret)
{
	atomic_fetch_add(&n_err, 1);
	pthread_mutex_lock(&err_lock);
	if (!first_err[0])
		snprintf(first_err, sizeof(first_err), "%s: %zd (%.180s)", what, ret,
			 rdax_conn_errmsg(c));
	pthread_mutex_unlock(&err_lock);
}

static int open_file(struct rdax_conn **c, struct rdax_tree **t, struct rdax_file **f)
{
	struct rdax_cfg *cfg;
	int ret = rdax_cfg_new(&cfg);

	if (ret)
		return ret;
	rdax_cfg_set_leases(cfg, false);	/* each request goes to rdaxd */
	if (rdma)
		rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA);
	rdax_cfg_set_guest(cfg, true);
	ret = rdax_connect(c, url.host, url.port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret) {
		fprintf(stderr, "connect: %s\n", rdax_conn_errmsg(NULL));
		return ret;
	}
	ret = rdax_tree_connect(*c, url.share, t);
	if (!ret)
		ret = rdax_open(*t, url.path, O_RDWR | O_CREAT, f);
	if (ret) {
		fprintf(stderr, "open %s: %s\n", url.path, rdax_conn_errmsg(*c));
		rdax_disconnect(c);
	}
	return ret;
}

static void *io_loop(void *arg)
{
	static const uint32_t sizes[] = { 4096, 64 << 10, MAXIO };
	struct rdax_conn *c = arg;
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	uint64_t seed = 0x9e3779b97f4a7c15ull, off, i;
	uint8_t *buf = malloc(MAXIO);
	uint32_t len;
	ssize_t n;

	if (!buf || open_file(&c, &t, &f)) {
		fail("the I/O client's setup", NULL, -1);
		atomic_store(&stop, true);
		free(buf);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		len = sizes[(seed >> 20) % 3];
		off = (seed >> 33) % (BIG / len) * len;
		if (seed & 1) {
			for (i = 0; i < len; i++)
				buf[i] = byte_at(off + i);
			n = rdax_pwrite(f, buf, len, off);
			if (n != (ssize_t)len)
				fail("pwrite", c, n);
		} else {
			n = rdax_pread(f, buf, len, off);
			if (n < 0)
				fail("pread", c, n);
			for (i = 0; n > 0 && i < (uint64_t)n; i++)
				if (buf[i] && buf[i] != byte_at(off + i)) {
					atomic_fetch_add(&n_torn, 1);
					break;
				}
		}
		atomic_fetch_add(&n_io, 1);
	}
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	free(buf);
	return NULL;
}

static void *cut_loop(void *arg)
{
	struct rdax_conn *c = arg;
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	int ret;

	if (open_file(&c, &t, &f)) {
		fail("the truncating client's setup", NULL, -1);
		atomic_store(&stop, true);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		ret = rdax_ftruncate(f, SMALL);
		if (!ret)
			ret = rdax_ftruncate(f, BIG);
		if (ret)
			fail("ftruncate", c, ret);
		atomic_fetch_add(&n_cut, 1);
	}
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rdma", no_argument, NULL, 'r' },
		{ 0 }
	};
	pthread_t io, cut;
	int o;

	while ((o = getopt_long(argc, argv, "r", opts, NULL)) != -1) {
		if (o != 'r')
			return 2;
		rdma = true;
	}
	if (argc - optind != 2 || rdax_url_parse(argv[optind], &url) || !*url.path) {
		fprintf(stderr, "usage: trunc_race [--rdma] smb://HOST[:PORT]/SHARE/FILE SECS\n");
		return 2;
	}
	secs = atoi(argv[optind + 1]);
	if (pthread_create(&io, NULL, io_loop, NULL) || pthread_create(&cut, NULL, cut_loop, NULL))
		return 99;
	for (o = 0; o < secs * 10 && !atomic_load(&stop); o++)
		usleep(100000);
	atomic_store(&stop, true);
	pthread_join(io, NULL);
	pthread_join(cut, NULL);
	printf("%ld I/Os, %ld cut-and-extend rounds in %d s\n", atomic_load(&n_io),
	       atomic_load(&n_cut), secs);
	if (atomic_load(&n_err))
		printf("FAIL: %ld requests failed; the first: %s\n", atomic_load(&n_err), first_err);
	else
		printf("ok: every request succeeded\n");
	if (atomic_load(&n_torn))
		printf("FAIL: %ld reads saw bytes nobody wrote there\n", atomic_load(&n_torn));
	else
		printf("ok: every byte read was the one written there, or zero\n");
	if (atomic_load(&n_io) < 10 || atomic_load(&n_cut) < 10)
		printf("FAIL: too little ran to tell\n");
	return atomic_load(&n_err) || atomic_load(&n_torn) || atomic_load(&n_io) < 10 ||
	       atomic_load(&n_cut) < 10;
}
