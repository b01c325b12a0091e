/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous file I/O on io_uring for the POSIX store: one ring per
 * server worker, completions signalled on an eventfd the worker polls.
 * Fixed (registered) buffers are the worker's RDMA bounce pools, so the
 * bytes the NIC placed go to the file with no copy and no page pinning
 * per I/O. Knows nothing of SMB.
 */
#ifndef RDAX_STORE_URING_H
#define RDAX_STORE_URING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define STORE_RW_MAX_SEG 16
#define STORE_RING_MAX_BUFS 8

struct store_ring;
struct store_rw;

struct store_rw_seg {
	struct store_rw *rw;
	int32_t res;
};

/*
 * One read or write of up to STORE_RW_MAX_SEG segments at consecutive
 * file offsets, embedded in the caller's request. done() runs from
 * store_ring_reap with res = bytes moved (the contiguous prefix: short
 * at EOF) or -errno if nothing moved.
 */
struct store_rw {
	int fd;
	bool write;
	int rwflags;			/* RWF_DSYNC for write-through */
	int buf_index;			/* fixed buffer holding every segment, or -1 */
	bool direct;			/* store_ops.submit chose the O_DIRECT twin */
	/*
	 * Run in the kernel's io_uring workers, never inline at submit: a
	 * buffered copy then overlaps the caller's next work. Writes to one
	 * file still run in order there.
	 */
	bool offload;
	struct iovec iov[STORE_RW_MAX_SEG];
	int niov;
	uint64_t off;
	ssize_t res;
	void (*done)(struct store_rw *rw);
	/* private */
	int pending;
	struct store_rw_seg seg[STORE_RW_MAX_SEG];
};

/* -ENOSYS etc. when io_uring is not available (the caller goes sync). */
int store_ring_new(unsigned int entries, struct store_ring **out);
void store_ring_free(struct store_ring **r);
/* eventfd: readable when completions wait for store_ring_reap(). */
int store_ring_fd(const struct store_ring *r);
/* Register [base, base + len) as fixed buffer slot idx. */
int store_ring_set_buffer(struct store_ring *r, int idx, void *base, size_t len);
int store_ring_submit(struct store_ring *r, struct store_rw *rw);
/* Run done() for every finished request; returns how many finished. */
int store_ring_reap(struct store_ring *r);
/* Block until at least one request finishes, then reap. */
int store_ring_wait(struct store_ring *r);
unsigned int store_ring_inflight(const struct store_ring *r);

/*
 * O_DIRECT is usable for this transfer: offset, every segment's length
 * and address aligned to align bytes.
 */
bool store_rw_aligned(const struct store_rw *rw, size_t align);

#endif
