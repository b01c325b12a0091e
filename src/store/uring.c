// SPDX-License-Identifier: MIT
/*
 * io_uring rings for the POSIX store (see uring.h). A request's segments
 * go out as one SQE each, at their own offsets; the request finishes
 * when all have, with the contiguous prefix as its result.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "store/uring.h"

struct store_ring {
	struct io_uring ring;
	int efd;
	unsigned int inflight;		/* SQEs submitted, not completed */
	bool bufs_ready;
};

int store_ring_new(unsigned int entries, struct store_ring **out)
{
	struct io_uring_params p;
	struct store_ring *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(&p, 0, sizeof(p));
	/* room for every segment of a full bounce pool in flight */
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = entries * 4;
	ret = io_uring_queue_init_params(entries, &r->ring, &p);
	if (ret)
		goto out_free;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0) {
		ret = -errno;
		goto out_ring;
	}
	ret = io_uring_register_eventfd(&r->ring, r->efd);
	if (ret)
		goto out_efd;
	/* empty slots, filled as bounce pools appear */
	r->bufs_ready = !io_uring_register_buffers_sparse(&r->ring, STORE_RING_MAX_BUFS);
	*out = r;
	return 0;
out_efd:
	close(r->efd);
out_ring:
	io_uring_queue_exit(&r->ring);
out_free:
	free(r);
	return ret;
}

void store_ring_free(struct store_ring **rp)
{
	struct store_ring *r = *rp;

	if (!r)
		return;
	while (r->inflight)
		store_ring_wait(r);
	io_uring_queue_exit(&r->ring);
	close(r->efd);
	free(r);
	*rp = NULL;
}

int store_ring_fd(const struct store_ring *r)
{
	return r->efd;
}

unsigned int store_ring_inflight(const struct store_ring *r)
{
	return r->inflight;
}

int store_ring_set_buffer(struct store_ring *r, int idx, void *base, size_t len)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };
	__u64 tag = 0;
	int ret;

	if (!r->bufs_ready || idx < 0 || idx >= STORE_RING_MAX_BUFS)
		return -EINVAL;
	ret = io_uring_register_buffers_update_tag(&r->ring, (unsigned int)idx, &iov, &tag, 1);
	return ret < 0 ? ret : 0;
}

bool store_rw_aligned(const struct store_rw *rw, size_t align)
{
	int i;

	if (rw->off % align)
		return false;
	for (i = 0; i < rw->niov; i++)
		if ((uintptr_t)rw->iov[i].iov_base % align || rw->iov[i].iov_len % align)
			return false;
	return true;
}

int store_ring_submit(struct store_ring *r, struct store_rw *rw)
{
	uint64_t off = rw->off;
	int i, ret;

	if (rw->niov < 1 || rw->niov > STORE_RW_MAX_SEG)
		return -EINVAL;
	if (io_uring_sq_space_left(&r->ring) < (unsigned int)rw->niov) {
		ret = io_uring_submit(&r->ring);
		if (ret < 0)
			return ret;
		if (io_uring_sq_space_left(&r->ring) < (unsigned int)rw->niov)
			return -EAGAIN;
	}
	rw->pending = rw->niov;
	rw->res = 0;
	for (i = 0; i < rw->niov; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
		void *base = rw->iov[i].iov_base;
		unsigned int len = (unsigned int)rw->iov[i].iov_len;

		rw->seg[i].rw = rw;
		rw->seg[i].res = 0;
		if (rw->buf_index >= 0 && rw->write)
			io_uring_prep_write_fixed(sqe, rw->fd, base, len, off, rw->buf_index);
		else if (rw->buf_index >= 0)
			io_uring_prep_read_fixed(sqe, rw->fd, base, len, off, rw->buf_index);
		else if (rw->write)
			io_uring_prep_write(sqe, rw->fd, base, len, off);
		else
			io_uring_prep_read(sqe, rw->fd, base, len, off);
		sqe->rw_flags = rw->rwflags;
		if (rw->offload)
			sqe->flags |= IOSQE_ASYNC;
		io_uring_sqe_set_data(sqe, &rw->seg[i]);
		off += len;
	}
	r->inflight += (unsigned int)rw->niov;
	ret = io_uring_submit(&r->ring);
	return ret < 0 ? ret : 0;
}

/* All segments are in: the result is the contiguous prefix. */
static void finish(struct store_rw *rw)
{
	ssize_t total = 0;
	int i;

	for (i = 0; i < rw->niov; i++) {
		if (rw->seg[i].res < 0) {
			if (!total)
				total = rw->seg[i].res;
			break;
		}
		total += rw->seg[i].res;
		if ((size_t)rw->seg[i].res < rw->iov[i].iov_len)
			break;
	}
	rw->res = total;
	rw->done(rw);
}

int store_ring_reap(struct store_ring *r)
{
	struct io_uring_cqe *cqe;
	uint64_t v;
	int n = 0;

	if (read(r->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	while (!io_uring_peek_cqe(&r->ring, &cqe)) {
		struct store_rw_seg *s = io_uring_cqe_get_data(cqe);
		struct store_rw *rw = s->rw;

		s->res = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
		r->inflight--;
		if (!--rw->pending) {
			finish(rw);
			n++;
		}
	}
	return n;
}

int store_ring_wait(struct store_ring *r)
{
	struct io_uring_cqe *cqe;
	int ret;

	if (!r->inflight)
		return 0;
	ret = io_uring_wait_cqe(&r->ring, &cqe);
	if (ret < 0)
		return ret;
	return store_ring_reap(r);
}
