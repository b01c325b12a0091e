// SPDX-License-Identifier: MIT
/*
 * DAX store on libpmem2 (see dax.h). One dax_file per inode, shared by
 * every open of it; the server's workers use it concurrently: I/O takes
 * the file's lock shared, growing or shrinking the mapping takes it
 * exclusive.
 *
 * The store's descriptor is opened anew from an open's, with that open's
 * access and by its caller (so by the same user, whom the kernel checks
 * again): a file description of its own, which holds no one's locks. A
 * file first opened read-only is mapped read-only; the first writer's
 * descriptor replaces it, and the mapping is made again writable once
 * nothing holds it. Until then writes take the descriptor (pwritev2 with
 * RWF_DSYNC), which on a DAX file system reaches the memory the mapping
 * shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/dax.h"

#define DAX_MAX_MAPS 64
#define DAX_RSV_MIN (8ull << 30)	/* virtual reservation of a file */
#define DAX_GROW_MIN (1ull << 20)	/* map growth in steps of at least */

struct dax_map {
	struct pmem2_map *map;
	uint64_t off, len;
};

struct dax_file {
	pthread_rwlock_t lock;
	int fd;				/* reopened from an open's descriptor */
	bool fd_rw;			/* ... open read-write */
	/* the read-only one a writer's replaced (in-flight I/O may name it) */
	int ro_fd;
	struct pmem2_source *ro_src;
	atomic_bool map_rw;		/* the mapping may be written */
	bool upgrade_pending;		/* map_rw once no window holds it */
	bool device;			/* device DAX: fixed size, never remapped */
	struct pmem2_source *src;
	struct pmem2_vm_reservation *rsv;
	char *base;
	uint64_t rsv_size;
	size_t align;
	uint64_t dev_size;
	struct dax_map maps[DAX_MAX_MAPS];
	int nmaps;
	/* pieces cut off by a truncate while the NIC may still hold them */
	struct pmem2_map *retired[DAX_MAX_MAPS];
	int nretired;
	atomic_int holds;
	uint64_t mapped;		/* [0, mapped) is mapped, below EOF */
	enum dax_gran gran;
	pmem2_memcpy_fn memcpy_fn;
	pmem2_persist_fn persist_fn;
	pmem2_drain_fn drain_fn;
	atomic_uint_fast64_t mapped_written;
	atomic_uint_fast64_t tail_written;
};

/* libpmem2 returns -errno or its own PMEM2_E_* codes (far below) */
/*
 * fd opened again with access mode: a new file description (its OFD
 * locks stay the opener's), checked by the kernel for the calling thread
 * as any open is.
 */
static int reopen(int fd, int mode)
{
	char path[64];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, mode | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

static int pmem2_err(int ret)
{
	if (ret == PMEM2_E_GRANULARITY_NOT_SUPPORTED)
		return -EOPNOTSUPP;
	return ret < 0 && ret > -4096 ? ret : -EINVAL;
}

const char *dax_gran_name(enum dax_gran g)
{
	return g == DAX_GRAN_BYTE ? "byte" : "cache line";
}

/* map [f->mapped, to) into the reservation; exclusive lock held */
static int map_piece(struct dax_file *f, uint64_t to, char *why, size_t whylen)
{
	struct pmem2_config *cfg;
	struct dax_map *m;
	int ret;

	if (f->nmaps == DAX_MAX_MAPS)
		return -ENOSPC;
	ret = pmem2_config_new(&cfg);
	if (ret)
		return pmem2_err(ret);
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_CACHE_LINE);
	pmem2_config_set_sharing(cfg, PMEM2_SHARED);
	pmem2_config_set_protection(cfg, atomic_load(&f->map_rw) ?
				    PMEM2_PROT_READ | PMEM2_PROT_WRITE : PMEM2_PROT_READ);
	pmem2_config_set_offset(cfg, f->mapped);
	pmem2_config_set_length(cfg, to - f->mapped);
	if (f->rsv)
		pmem2_config_set_vm_reservation(cfg, f->rsv, f->mapped);
	m = &f->maps[f->nmaps];
	ret = pmem2_map_new(&m->map, cfg, f->src);
	pmem2_config_delete(&cfg);
	if (ret) {
		if (why)
			snprintf(why, whylen, "%s", ret == PMEM2_E_GRANULARITY_NOT_SUPPORTED ?
				 "no MAP_SYNC here: not a DAX file system" : pmem2_errormsg());
		return ret == PMEM2_E_GRANULARITY_NOT_SUPPORTED ? -EOPNOTSUPP : pmem2_err(ret);
	}
	if (!f->nmaps) {
		f->base = pmem2_map_get_address(m->map);
		f->gran = pmem2_map_get_store_granularity(m->map) == PMEM2_GRANULARITY_BYTE ?
			  DAX_GRAN_BYTE : DAX_GRAN_CACHE_LINE;
		f->memcpy_fn = pmem2_get_memcpy_fn(m->map);
		f->persist_fn = pmem2_get_persist_fn(m->map);
		f->drain_fn = pmem2_get_drain_fn(m->map);
	}
	m->off = f->mapped;
	m->len = to - f->mapped;
	f->nmaps++;
	f->mapped = to;
	return 0;
}

static void reap_retired(struct dax_file *f)
{
	while (f->nretired)
		pmem2_map_delete(&f->retired[--f->nretired]);
}

/*
 * Drop pieces above to (and a piece straddling it); exclusive lock held.
 * With windows held (RDMA in flight) the pieces stay mapped, retired,
 * until the last window goes: the CPU never reaches them again, and the
 * NIC at worst gets an access error for its own request.
 */
static int unmap_above(struct dax_file *f, uint64_t to)
{
	int ret;

	while (f->nmaps && f->maps[f->nmaps - 1].off + f->maps[f->nmaps - 1].len > to) {
		struct dax_map *m = &f->maps[f->nmaps - 1];

		if (atomic_load(&f->holds)) {
			f->retired[f->nretired++] = m->map;
			m->map = NULL;
		} else {
			ret = pmem2_map_delete(&m->map);
			if (ret)
				return pmem2_err(ret);
		}
		f->nmaps--;
		f->mapped = m->off;
	}
	if (!f->nmaps)
		f->base = NULL;
	return 0;
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

static int file_size(struct dax_file *f, uint64_t *size)
{
	struct stat st;

	if (f->device) {
		*size = f->dev_size;
		return 0;
	}
	if (fstat(f->fd, &st))
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/*
 * The file grew beyond the mapping: map more of it once the unmapped
 * part is worth it (geometric steps keep the pieces few). The new size
 * is made durable first, since writes through the mapping never touch
 * file metadata.
 */
static bool grow_wanted(struct dax_file *f, uint64_t want)
{
	uint64_t step = f->mapped / 2 > DAX_GROW_MIN ? f->mapped / 2 : DAX_GROW_MIN;

	/* retired pieces still occupy the reservation above mapped */
	return want > f->mapped && want - f->mapped >= step && f->nmaps < DAX_MAX_MAPS &&
	       !f->nretired;
}

static void maybe_grow(struct dax_file *f)
{
	uint64_t size, want;
	bool grow;

	if (f->device || file_size(f, &size))
		return;
	want = align_down(size < f->rsv_size ? size : f->rsv_size, f->align);
	pthread_rwlock_rdlock(&f->lock);
	grow = grow_wanted(f, want);
	pthread_rwlock_unlock(&f->lock);
	if (!grow)
		return;
	pthread_rwlock_wrlock(&f->lock);
	if (grow_wanted(f, want) && !fdatasync(f->fd))
		map_piece(f, want, NULL, 0);	/* on failure the tail path goes on */
	pthread_rwlock_unlock(&f->lock);
}

int dax_open(int fd, struct dax_file **out, char *why, size_t whylen)
{
	struct dax_file *f;
	struct stat st;
	int ret, mode;
	size_t sz;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return -EINVAL;
	mode = fcntl(fd, F_GETFL);
	if (mode < 0)
		return -errno;
	mode &= O_ACCMODE;
	if (mode == O_WRONLY) {
		snprintf(why, whylen, "a write-only descriptor cannot be mapped");
		return -EBADF;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_rwlock_init(&f->lock, NULL);
	f->device = S_ISCHR(st.st_mode);
	f->ro_fd = -1;
	f->fd_rw = mode == O_RDWR;
	atomic_init(&f->map_rw, f->fd_rw);
	/* the opener's access, never more */
	f->fd = reopen(fd, mode);
	if (f->fd < 0) {
		ret = f->fd;
		snprintf(why, whylen, "reopening %s: %s", mode == O_RDWR ? "read-write" : "read-only",
			 strerror(-ret));
		goto out_free;
	}
	ret = pmem2_source_from_fd(&f->src, f->fd);
	if (!ret)
		ret = pmem2_source_alignment(f->src, &f->align);
	if (ret) {
		const char *m = pmem2_errormsg();

		ret = pmem2_err(ret);
		snprintf(why, whylen, "libpmem2: %s", m && *m ? m :
			 f->device ? "not a device-DAX namespace" : strerror(-ret));
		if (f->src)
			pmem2_source_delete(&f->src);
		goto out_close;
	}
	if (f->device) {
		ret = pmem2_source_size(f->src, &sz);
		if (ret) {
			snprintf(why, whylen, "%s", pmem2_errormsg());
			ret = pmem2_err(ret);
			goto out_source;
		}
		f->dev_size = sz;
		f->rsv_size = sz;
		ret = map_piece(f, align_down(sz, f->align), why, whylen);
		if (ret)
			goto out_source;
	} else {
		f->rsv_size = (uint64_t)st.st_size * 2;
		if (f->rsv_size < DAX_RSV_MIN)
			f->rsv_size = DAX_RSV_MIN;
		f->rsv_size = (f->rsv_size + (1ull << 30) - 1) & ~((1ull << 30) - 1);
		ret = pmem2_vm_reservation_new(&f->rsv, NULL, f->rsv_size);
		if (ret) {
			snprintf(why, whylen, "address space reservation: %s", pmem2_errormsg());
			ret = pmem2_err(ret);
			goto out_source;
		}
		if (align_down((uint64_t)st.st_size, f->align)) {
			ret = map_piece(f, align_down((uint64_t)st.st_size, f->align), why, whylen);
			if (ret)
				goto out_rsv;
		}
	}
	*out = f;
	return 0;
out_rsv:
	pmem2_vm_reservation_delete(&f->rsv);
out_source:
	pmem2_source_delete(&f->src);
out_close:
	close(f->fd);
out_free:
	pthread_rwlock_destroy(&f->lock);
	free(f);
	return ret;
}

void dax_close(struct dax_file **fp)
{
	struct dax_file *f = *fp;

	if (!f)
		return;
	unmap_above(f, 0);
	reap_retired(f);
	if (f->rsv)
		pmem2_vm_reservation_delete(&f->rsv);
	pmem2_source_delete(&f->src);
	close(f->fd);
	if (f->ro_src)
		pmem2_source_delete(&f->ro_src);
	if (f->ro_fd >= 0)
		close(f->ro_fd);
	pthread_rwlock_destroy(&f->lock);
	free(f);
	*fp = NULL;
}

/*
 * A pending upgrade, once nothing holds the read-only pieces: map the
 * file again, writable, below EOF. Exclusive lock held. A failure leaves
 * less (or nothing) mapped: the descriptor serves the rest.
 */
static void finish_upgrade(struct dax_file *f)
{
	uint64_t size, to;

	if (!f->upgrade_pending || atomic_load(&f->holds) || f->nretired)
		return;
	if (unmap_above(f, 0))
		return;
	f->upgrade_pending = false;
	atomic_store(&f->map_rw, true);
	if (file_size(f, &size))
		return;
	to = align_down(size < f->rsv_size ? size : f->rsv_size, f->align);
	if (to && !fdatasync(f->fd))
		map_piece(f, to, NULL, 0);
}

int dax_upgrade(struct dax_file *f, int fd)
{
	struct pmem2_source *src = NULL;
	int nfd, mode, ret;

	if (dax_writable(f))
		return 0;
	mode = fcntl(fd, F_GETFL);
	if (mode < 0)
		return -errno;
	if ((mode & O_ACCMODE) != O_RDWR)
		return 0;
	nfd = reopen(fd, O_RDWR);
	if (nfd < 0)
		return nfd;
	ret = pmem2_source_from_fd(&src, nfd);
	if (ret) {
		close(nfd);
		return pmem2_err(ret);
	}
	pthread_rwlock_wrlock(&f->lock);
	if (f->fd_rw) {
		/* another writer came first */
		pthread_rwlock_unlock(&f->lock);
		pmem2_source_delete(&src);
		close(nfd);
		return 0;
	}
	f->ro_fd = f->fd;
	f->ro_src = f->src;
	f->fd = nfd;
	f->src = src;
	f->fd_rw = true;
	f->upgrade_pending = true;
	finish_upgrade(f);
	pthread_rwlock_unlock(&f->lock);
	return 0;
}

bool dax_writable(struct dax_file *f)
{
	bool rw;

	pthread_rwlock_rdlock(&f->lock);
	rw = f->fd_rw;
	pthread_rwlock_unlock(&f->lock);
	return rw;
}

int dax_probe(int dirfd, char *why, size_t whylen)
{
	struct dax_file *f;
	int fd, ret;

	fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "cannot create a probe file: %s", strerror(errno));
		return ret;
	}
	if (ftruncate(fd, 2 << 20)) {
		ret = -errno;
		snprintf(why, whylen, "cannot size a probe file: %s", strerror(errno));
		close(fd);
		return ret;
	}
	ret = dax_open(fd, &f, why, whylen);
	close(fd);
	if (ret)
		return ret;
	snprintf(why, whylen, "mapped with libpmem2, %s granularity%s",
		 dax_gran_name(f->gran), getenv("PMEM2_FORCE_GRANULARITY") ?
		 " (forced by PMEM2_FORCE_GRANULARITY)" : "");
	dax_close(&f);
	return 0;
}

/* Walk iov from byte skip on, for len bytes, calling fn per piece. */
#define IOV_WALK(iov, n, skip, len, base, plen, body) do {			\
	uint64_t _s = (skip), _l = (len);					\
	for (int _i = 0; _i < (n) && _l; _i++) {				\
		if (_s >= (iov)[_i].iov_len) {					\
			_s -= (iov)[_i].iov_len;				\
			continue;						\
		}								\
		char *base = (char *)(iov)[_i].iov_base + _s;			\
		size_t plen = (iov)[_i].iov_len - _s;				\
		if (plen > _l)							\
			plen = (size_t)_l;					\
		_s = 0;								\
		_l -= plen;							\
		body;								\
	}									\
} while (0)

static uint64_t iov_total(const struct iovec *iov, int n)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* the part of iov from byte skip on, as a new vector */
static int iov_sub(const struct iovec *iov, int n, uint64_t skip,
		   struct iovec *out, int max)
{
	int k = 0;

	IOV_WALK(iov, n, skip, UINT64_MAX, p, l, {
		if (k == max)
			return -EINVAL;
		out[k].iov_base = p;
		out[k].iov_len = l;
		k++;
	});
	return k;
}

static ssize_t rw_fd(struct dax_file *f, const struct iovec *iov, int n,
		     uint64_t off, bool write)
{
	uint64_t want = iov_total(iov, n), done = 0;
	struct iovec sub[64];
	ssize_t r;
	int k;

	while (done < want) {
		k = iov_sub(iov, n, done, sub, 64);
		if (k < 0)
			return k;
		if (write)
			r = pwritev2(f->fd, sub, k, (off_t)(off + done), RWF_DSYNC);
		else
			r = preadv(f->fd, sub, k, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (!r)
			break;
		done += (uint64_t)r;
	}
	return (ssize_t)done;
}

ssize_t dax_preadv(struct dax_file *f, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t len = iov_total(iov, n), inmap = 0;
	ssize_t r = 0;

	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	pthread_rwlock_rdlock(&f->lock);
	if (f->device) {
		/* all of a device is mapped; it has no read(2) */
		len = off < f->mapped ? (f->mapped - off < len ? f->mapped - off : len) : 0;
	}
	if (off < f->mapped) {
		const char *src = f->base + off;

		inmap = f->mapped - off < len ? f->mapped - off : len;
		IOV_WALK(iov, n, 0, inmap, p, l, {
			memcpy(p, src, l);
			src += l;
		});
	}
	if (inmap < len) {
		struct iovec sub[64];
		int k = iov_sub(iov, n, inmap, sub, 64);

		r = k < 0 ? k : rw_fd(f, sub, k, off + inmap, false);
	}
	pthread_rwlock_unlock(&f->lock);
	if (r < 0)
		return inmap ? (ssize_t)inmap : r;
	return (ssize_t)(inmap + (uint64_t)r);
}

ssize_t dax_pwritev(struct dax_file *f, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t len = iov_total(iov, n), inmap = 0;
	ssize_t r = 0;

	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EFBIG;
	pthread_rwlock_rdlock(&f->lock);
	if (f->device && (off > f->mapped || len > f->mapped - off)) {
		pthread_rwlock_unlock(&f->lock);
		return -ENOSPC;		/* a device is a fixed-size file */
	}
	if (!f->fd_rw) {
		pthread_rwlock_unlock(&f->lock);
		return -EBADF;		/* no writer opened it: a caller's bug */
	}
	if (off < f->mapped && atomic_load(&f->map_rw)) {
		char *dst = f->base + off;

		inmap = f->mapped - off < len ? f->mapped - off : len;
		IOV_WALK(iov, n, 0, inmap, p, l, {
			f->memcpy_fn(dst, p, l, PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_NODRAIN);
			dst += l;
		});
		f->drain_fn();
		atomic_fetch_add(&f->mapped_written, inmap);
	}
	if (inmap < len) {
		struct iovec sub[64];
		int k = iov_sub(iov, n, inmap, sub, 64);

		r = k < 0 ? k : rw_fd(f, sub, k, off + inmap, true);
		if (r > 0)
			atomic_fetch_add(&f->tail_written, (uint64_t)r);
	}
	pthread_rwlock_unlock(&f->lock);
	if (inmap < len && r > 0)
		maybe_grow(f);
	if (r < 0)
		return inmap ? (ssize_t)inmap : r;
	return (ssize_t)(inmap + (uint64_t)r);
}

int dax_tail_fd(struct dax_file *f, uint64_t off)
{
	int fd = -1;

	if (f->device)
		return -1;
	pthread_rwlock_rdlock(&f->lock);
	if (f->fd_rw && (off >= f->mapped || !atomic_load(&f->map_rw)))
		fd = f->fd;
	pthread_rwlock_unlock(&f->lock);
	return fd;
}

void dax_tail_written(struct dax_file *f, uint64_t n)
{
	atomic_fetch_add(&f->tail_written, n);
	maybe_grow(f);
}

int dax_truncate(struct dax_file *f, uint64_t size)
{
	int ret = 0;

	if (f->device)
		return size == f->dev_size ? 0 : -EPERM;
	if (size > INT64_MAX)
		return -EFBIG;
	pthread_rwlock_wrlock(&f->lock);
	if (!f->fd_rw) {
		pthread_rwlock_unlock(&f->lock);
		return -EBADF;
	}
	if (size < f->mapped)
		ret = unmap_above(f, align_down(size, f->align));
	if (!ret && ftruncate(f->fd, (off_t)size))
		ret = -errno;
	/* keep what is still below EOF mapped */
	if (!ret && f->mapped < align_down(size, f->align) && f->nmaps < DAX_MAX_MAPS &&
	    !f->nretired && size < f->rsv_size && !fdatasync(f->fd))
		map_piece(f, align_down(size, f->align), NULL, 0);
	pthread_rwlock_unlock(&f->lock);
	return ret;
}

int dax_allocate(struct dax_file *f, uint64_t size)
{
	uint64_t cur;
	int ret;

	if (f->device)
		return size <= f->dev_size ? 0 : -ENOSPC;
	ret = file_size(f, &cur);
	if (ret || size <= cur)
		return ret;
	if (size > INT64_MAX)
		return -EFBIG;
	pthread_rwlock_rdlock(&f->lock);
	ret = !f->fd_rw ? -EBADF : fallocate(f->fd, 0, 0, (off_t)size) ? -errno : 0;
	pthread_rwlock_unlock(&f->lock);
	if (ret)
		return ret;
	maybe_grow(f);
	return 0;
}

uint64_t dax_size(struct dax_file *f)
{
	uint64_t s = 0;

	file_size(f, &s);
	return s;
}

bool dax_is_device(const struct dax_file *f)
{
	return f->device;
}

void *dax_window(struct dax_file *f, uint64_t off, size_t len, bool write)
{
	void *p = NULL;

	pthread_rwlock_rdlock(&f->lock);
	if (off <= f->mapped && len <= f->mapped - off &&
	    (!write || atomic_load(&f->map_rw))) {
		atomic_fetch_add(&f->holds, 1);
		p = f->base + off;
	}
	pthread_rwlock_unlock(&f->lock);
	return p;
}

void dax_window_put(struct dax_file *f)
{
	if (atomic_fetch_sub(&f->holds, 1) != 1)
		return;
	pthread_rwlock_wrlock(&f->lock);
	if (!atomic_load(&f->holds)) {
		reap_retired(f);
		finish_upgrade(f);
	}
	pthread_rwlock_unlock(&f->lock);
}

void *dax_base(struct dax_file *f, size_t *len)
{
	if (!f->device)
		return NULL;
	*len = f->mapped;
	return f->base;
}

void dax_persist(struct dax_file *f, const void *addr, size_t len)
{
	f->persist_fn(addr, len);
	atomic_fetch_add(&f->mapped_written, len);
}

void dax_get_stats(struct dax_file *f, struct dax_stats *st)
{
	pthread_rwlock_rdlock(&f->lock);
	st->mapped = f->mapped;
	st->maps = f->nmaps;
	st->map_writable = atomic_load(&f->map_rw);
	pthread_rwlock_unlock(&f->lock);
	st->gran = f->gran;
	st->mapped_bytes_written = atomic_load(&f->mapped_written);
	st->tail_bytes_written = atomic_load(&f->tail_written);
}
