// SPDX-License-Identifier: MIT
/*
 * The store ops an open file is bound to: posix, io_uring, dax, devdax.
 * One table per kind; nothing above asks which kind it has.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "store/dax.h"
#include "store/store.h"
#include "store/uring.h"

void *store_no_window(struct store_file *f, uint64_t off, size_t len, bool write)
{
	(void)f;
	(void)off;
	(void)len;
	(void)write;
	return NULL;
}

void store_no_window_put(struct store_file *f)
{
	(void)f;
}

void store_no_persist(struct store_file *f, const void *addr, size_t len)
{
	(void)f;
	(void)addr;
	(void)len;
}

int store_no_submit(struct store_file *f, struct store_ring *r, struct store_rw *rw)
{
	(void)f;
	(void)r;
	(void)rw;
	return -EOPNOTSUPP;
}

void store_no_complete(struct store_file *f, struct store_rw *rw)
{
	(void)f;
	(void)rw;
}

/* ---- posix: the descriptor ---- */

static ssize_t fd_preadv(struct store_file *f, const struct iovec *iov, int n, uint64_t off)
{
	return store_preadv(f->fd, iov, n, off);
}

static ssize_t fd_pwritev(struct store_file *f, const struct iovec *iov, int n,
			  uint64_t off, bool sync)
{
	return store_pwritev(f->fd, iov, n, off, sync);
}

static int fd_flush(struct store_file *f)
{
	return store_flush(f->fd);
}

static int fd_truncate(struct store_file *f, uint64_t size)
{
	return store_truncate(f->fd, size);
}

static int fd_allocate(struct store_file *f, uint64_t size)
{
	return store_allocate(f->fd, size);
}

const struct store_ops store_posix_ops = {
	.name = "posix",
	.flags = STORE_EXTENTS | STORE_SENDFILE,
	.preadv = fd_preadv,
	.pwritev = fd_pwritev,
	.flush = fd_flush,
	.truncate = fd_truncate,
	.allocate = fd_allocate,
	.window = store_no_window,
	.window_put = store_no_window_put,
	.persist = store_no_persist,
	.submit = store_no_submit,
	.complete = store_no_complete,
};

/* ---- io_uring: the descriptor, async on the caller's ring ---- */

static int uring_submit(struct store_file *f, struct store_ring *r, struct store_rw *rw)
{
	if (!r)
		return -EOPNOTSUPP;
	rw->fd = f->fd;
	rw->direct = f->direct_fd >= 0 && store_rw_aligned(rw, 4096);
	if (rw->direct)
		rw->fd = f->direct_fd;
	return store_ring_submit(r, rw);
}

const struct store_ops store_uring_ops = {
	.name = "io_uring",
	.flags = STORE_EXTENTS | STORE_SENDFILE,
	.preadv = fd_preadv,
	.pwritev = fd_pwritev,
	.flush = fd_flush,
	.truncate = fd_truncate,
	.allocate = fd_allocate,
	.window = store_no_window,
	.window_put = store_no_window_put,
	.persist = store_no_persist,
	.submit = uring_submit,
	.complete = store_no_complete,
};

/* ---- dax: the file's mapping ---- */

static ssize_t dax_ops_preadv(struct store_file *f, const struct iovec *iov, int n,
			      uint64_t off)
{
	return dax_preadv(f->dax, iov, n, off);
}

/* Durable when it returns, sync or not. */
static ssize_t dax_ops_pwritev(struct store_file *f, const struct iovec *iov, int n,
			       uint64_t off, bool sync)
{
	(void)sync;
	return dax_pwritev(f->dax, iov, n, off);
}

static int dax_ops_truncate(struct store_file *f, uint64_t size)
{
	return dax_truncate(f->dax, size);
}

static int dax_ops_allocate(struct store_file *f, uint64_t size)
{
	return dax_allocate(f->dax, size);
}

static void *dax_ops_window(struct store_file *f, uint64_t off, size_t len, bool write)
{
	return dax_window(f->dax, off, len, write);
}

static void dax_ops_window_put(struct store_file *f)
{
	dax_window_put(f->dax);
}

static void dax_ops_persist(struct store_file *f, const void *addr, size_t len)
{
	dax_persist(f->dax, addr, len);
}

/*
 * Growth goes through the file system with RWF_DSYNC (a journal commit);
 * on the ring several of them share commits. The rest is a CPU copy
 * into the mapping, done inline by the caller.
 */
static int dax_ops_submit(struct store_file *f, struct store_ring *r, struct store_rw *rw)
{
	int tfd;

	if (!r || !rw->write || (tfd = dax_tail_fd(f->dax, rw->off)) < 0)
		return -EOPNOTSUPP;
	rw->fd = tfd;
	rw->rwflags = RWF_DSYNC;
	rw->direct = false;
	return store_ring_submit(r, rw);
}

static void dax_ops_complete(struct store_file *f, struct store_rw *rw)
{
	if (rw->res > 0)
		dax_tail_written(f->dax, (uint64_t)rw->res);
}

const struct store_ops store_dax_ops = {
	.name = "dax",
	.flags = STORE_EXTENTS | STORE_PERSISTENT,
	.preadv = dax_ops_preadv,
	.pwritev = dax_ops_pwritev,
	.flush = fd_flush,	/* data persistent already; this covers metadata */
	.truncate = dax_ops_truncate,
	.allocate = dax_ops_allocate,
	.window = dax_ops_window,
	.window_put = dax_ops_window_put,
	.persist = dax_ops_persist,
	.submit = dax_ops_submit,
	.complete = dax_ops_complete,
};

/* ---- devdax: a device's fixed mapping, no file behind the name ---- */

static int devdax_flush(struct store_file *f)
{
	(void)f;
	return 0;
}

const struct store_ops store_devdax_ops = {
	.name = "devdax",
	.flags = STORE_PERSISTENT,
	.preadv = dax_ops_preadv,
	.pwritev = dax_ops_pwritev,
	.flush = devdax_flush,
	.truncate = dax_ops_truncate,
	.allocate = dax_ops_allocate,
	.window = dax_ops_window,
	.window_put = dax_ops_window_put,
	.persist = dax_ops_persist,
	.submit = store_no_submit,
	.complete = store_no_complete,
};
