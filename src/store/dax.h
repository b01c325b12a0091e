/* SPDX-License-Identifier: MIT */
/*
 * DAX store: files mapped with libpmem2 (MAP_SYNC where the file system
 * supports it), written with non-temporal copies and persisted before a
 * write returns. Knows nothing of SMB or RDMA.
 *
 * A file's mapping lives in one virtual-memory reservation and grows in
 * pieces as the file grows, so its mapped part is always one contiguous
 * range [0, mapped) that lies below EOF: no access through it can fault
 * past EOF. Bytes above it (a page-unaligned tail, or growth not mapped
 * yet) go through pwritev2(RWF_DSYNC) / preadv, which are durable too.
 *
 * Any thread may call in. Reads, writes and windows take no lock (RCU,
 * liburcu-bp); what changes the mapping serializes on the file's own.
 */
#ifndef RDAX_STORE_DAX_H
#define RDAX_STORE_DAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct dax_file;

enum dax_gran {
	DAX_GRAN_BYTE,			/* eADR: stores are persistent */
	DAX_GRAN_CACHE_LINE,		/* ADR: flush + fence */
};

/*
 * Can files under the directory dirfd be mapped for user-space
 * persistence (MAP_SYNC, or a granularity forced with libpmem2's
 * PMEM2_FORCE_GRANULARITY)? 0 if so, -EOPNOTSUPP if not, else -errno.
 * why gets a human-readable reason either way.
 */
int dax_probe(int dirfd, char *why, size_t whylen);

/*
 * Map the file open as fd (a regular file, or a device-DAX character
 * device, which is one fixed-size file). The store opens fd again for
 * itself with fd's access mode, as the calling thread: it gets no access
 * the opener was not given, and a file description of its own. fd open
 * read-write: the mapping is writable. Read-only: so is the mapping, and
 * writes fail (-EBADF) until dax_upgrade brings a read-write descriptor.
 * why gets the reason on failure.
 */
int dax_open(int fd, struct dax_file **out, char *why, size_t whylen);
void dax_close(struct dax_file **f);
/*
 * A writer's descriptor for a file mapped read-only (fd not read-write:
 * nothing changes), reopened as in dax_open, so by the writer. Writes go
 * through it at once; the mapping becomes
 * writable as soon as no window holds it (now, or at the last
 * dax_window_put). 0 or -errno.
 */
int dax_upgrade(struct dax_file *f, int fd);
/* Writes work: the store holds a read-write descriptor. */
bool dax_writable(struct dax_file *f);

/* Reads stop at EOF; writes are persistent when they return. */
ssize_t dax_preadv(struct dax_file *f, const struct iovec *iov, int n, uint64_t off);
ssize_t dax_pwritev(struct dax_file *f, const struct iovec *iov, int n, uint64_t off);
int dax_truncate(struct dax_file *f, uint64_t size);
/* Make sure size bytes are allocated (fallocate), never shrinking. */
int dax_allocate(struct dax_file *f, uint64_t size);
uint64_t dax_size(struct dax_file *f);
bool dax_is_device(const struct dax_file *f);

/*
 * Zero-copy access for the NIC: the address of [off, off + len) if it is
 * mapped (writable too, for write), else NULL. The range stays mapped
 * until dax_window_put, even if the file is truncated meanwhile: what
 * then lies past EOF reads as zero, and what is written there is lost.
 */
void *dax_window(struct dax_file *f, uint64_t off, size_t len, bool write);
void dax_window_put(struct dax_file *f);
/* The whole fixed mapping of a device (for memory registration). */
void *dax_base(struct dax_file *f, size_t *len);
/* Persist bytes written into a window by someone else (the NIC). */
void dax_persist(struct dax_file *f, const void *addr, size_t len);

/*
 * A write at off lies wholly above the mapping (growth): the caller may
 * submit it itself, asynchronously, to this descriptor with RWF_DSYNC,
 * then report it with dax_tail_written. -1: use dax_pwritev.
 */
int dax_tail_fd(struct dax_file *f, uint64_t off);
void dax_tail_written(struct dax_file *f, uint64_t n);

struct dax_stats {
	uint64_t mapped;		/* bytes mapped */
	int maps;			/* pieces */
	enum dax_gran gran;
	uint64_t mapped_bytes_written;	/* through the mapping (dax_persist too) */
	uint64_t tail_bytes_written;	/* through pwritev2(RWF_DSYNC) */
	bool map_writable;		/* mapped read-write (else read-only) */
};

void dax_get_stats(struct dax_file *f, struct dax_stats *st);
const char *dax_gran_name(enum dax_gran g);

#endif
