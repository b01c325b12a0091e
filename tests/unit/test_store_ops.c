// SPDX-License-Identifier: MIT
/*
 * The store ops an open is bound to (store/ops.c): posix, io_uring and
 * dax (file-backed, PMEM2_FORCE_GRANULARITY as in test_dax) through the
 * same calls: data round trips, what each says it is (flags), windows
 * only where there is a mapping, async submission only where the store
 * can, and the DAX growth that goes through the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/dax.h"
#include "store/store.h"
#include "store/uring.h"
#include "t.h"

static char dir[] = "/var/tmp/rdax-store-ops.XXXXXX";
static int ndone;

static void done(struct store_rw *rw)
{
	(void)rw;
	ndone++;
}

static int mkfile(const char *name, int flags)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | flags, 0644);
	T_REQUIRE(fd >= 0);
	return fd;
}

static int reap_one(struct store_ring *r)
{
	struct pollfd p = { .fd = store_ring_fd(r), .events = POLLIN };
	int want = ndone + 1;

	while (ndone < want) {
		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
		store_ring_reap(r);
	}
	return 0;
}

/* write, read back, truncate, allocate, flush: the same calls for every store */
static void round_trip(struct store_file *f)
{
	char in[6000], out[6000];
	struct iovec v;
	struct stat st;

	memset(in, 'a' + (f->ops->name[0] % 20), sizeof(in));
	v.iov_base = in;
	v.iov_len = sizeof(in);
	T_EQ(f->ops->pwritev(f, &v, 1, 100, false), (ssize_t)sizeof(in));
	v.iov_base = out;
	T_EQ(f->ops->preadv(f, &v, 1, 100), (ssize_t)sizeof(in));
	T_MEMEQ(out, in, sizeof(in));
	T_EQ(f->ops->truncate(f, 50), 0);
	T_EQ(fstat(f->fd, &st), 0);
	T_EQ(st.st_size, 50);
	T_EQ(f->ops->allocate(f, 1 << 20), 0);
	T_EQ(f->ops->flush(f), 0);
}

static void posix(void)
{
	struct store_file f = { &store_posix_ops, -1, -1, NULL };
	struct store_rw rw = { 0 };

	t_section("posix");
	f.fd = mkfile("posix", O_TRUNC);
	round_trip(&f);
	T_EQ(f.ops->flags, STORE_EXTENTS | STORE_SENDFILE);
	T_ASSERT(!f.ops->window(&f, 0, 10, false));
	T_EQ(f.ops->submit(&f, NULL, &rw), -EOPNOTSUPP);
	close(f.fd);
}

static void uring(void)
{
	struct store_file f = { &store_uring_ops, -1, -1, NULL };
	struct store_ring *r;
	struct store_rw rw;
	uint8_t *buf;
	int ret;

	t_section("io_uring");
	f.fd = mkfile("uring", O_TRUNC);
	round_trip(&f);
	T_ASSERT(!f.ops->window(&f, 0, 10, true));
	memset(&rw, 0, sizeof(rw));
	T_EQ(f.ops->submit(&f, NULL, &rw), -EOPNOTSUPP);	/* no ring: inline */
	ret = store_ring_new(8, &r);
	if (ret) {
		t_skip_case("io_uring submit", "io_uring is not available here");
		close(f.fd);
		return;
	}
	f.direct_fd = mkfile("uring", O_DIRECT);	/* -1 would do: no O_DIRECT */
	T_REQUIRE(!posix_memalign((void **)&buf, 4096, 8192));
	memset(buf, 0x5a, 8192);
	memset(&rw, 0, sizeof(rw));
	rw.write = true;
	rw.buf_index = -1;
	rw.iov[0].iov_base = buf;
	rw.iov[0].iov_len = 8192;
	rw.niov = 1;
	rw.off = 4096;
	rw.done = done;
	T_EQ(f.ops->submit(&f, r, &rw), 0);
	T_EQ(reap_one(r), 0);
	T_EQ(rw.res, 8192);
	T_ASSERT(rw.direct);			/* aligned: the twin */
	T_EQ(rw.fd, f.direct_fd);
	rw.off = 100;				/* unaligned: the descriptor */
	T_EQ(f.ops->submit(&f, r, &rw), 0);
	T_EQ(reap_one(r), 0);
	T_ASSERT(!rw.direct);
	T_EQ(rw.fd, f.fd);
	store_ring_free(&r);
	free(buf);
	close(f.direct_fd);
	close(f.fd);
}

static void dax(void)
{
	struct store_file f = { &store_dax_ops, -1, -1, NULL };
	struct store_ring *r = NULL;
	struct store_rw rw;
	char why[256], big[1 << 16];
	struct iovec v = { big, sizeof(big) };
	void *win;

	t_section("dax (forced granularity)");
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	f.fd = mkfile("dax", O_TRUNC);
	T_REQUIRE(dax_open(f.fd, &f.dax, why, sizeof(why)) == 0);
	round_trip(&f);
	T_EQ(f.ops->flags, STORE_EXTENTS | STORE_PERSISTENT);
	memset(big, 7, sizeof(big));
	T_EQ(f.ops->pwritev(&f, &v, 1, 0, false), (ssize_t)sizeof(big));
	win = f.ops->window(&f, 0, 4096, true);
	if (win) {
		memset(win, 9, 4096);
		f.ops->persist(&f, win, 4096);
		f.ops->window_put(&f);
		v.iov_len = 4096;
		T_EQ(f.ops->preadv(&f, &v, 1, 0), 4096);
		T_ASSERT(big[0] == 9 && big[4095] == 9);
	} else {
		t_skip_case("dax window", "the first 4 KiB are not mapped");
	}
	T_ASSERT(!f.ops->window(&f, 1 << 30, 4096, false));	/* past EOF: copy */
	memset(&rw, 0, sizeof(rw));
	rw.iov[0].iov_base = big;
	rw.iov[0].iov_len = 4096;
	rw.niov = 1;
	rw.off = 0;
	rw.done = done;
	rw.buf_index = -1;
	if (store_ring_new(8, &r)) {
		t_skip_case("dax growth submit", "io_uring is not available here");
	} else {
		T_EQ(f.ops->submit(&f, r, &rw), -EOPNOTSUPP);	/* reads: CPU copy */
		rw.write = true;
		rw.off = 1 << 20;			/* growth: through the file system */
		if (!f.ops->submit(&f, r, &rw)) {
			T_EQ(rw.rwflags, RWF_DSYNC);
			T_EQ(reap_one(r), 0);
			T_EQ(rw.res, 4096);
			f.ops->complete(&f, &rw);
		} else {
			t_skip_case("dax growth submit", "no tail descriptor for growth");
		}
		store_ring_free(&r);
	}
	dax_close(&f.dax);
	close(f.fd);
	T_EQ(store_devdax_ops.flags, STORE_PERSISTENT);	/* no extents, no flush */
	T_EQ(store_devdax_ops.flush(&f), 0);
}

int main(void)
{
	char cmd[128];
	int ret;

	T_REQUIRE(mkdtemp(dir) != NULL);
	posix();
	uring();
	dax();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ret = system(cmd);
	(void)ret;
	return t_done();
}
