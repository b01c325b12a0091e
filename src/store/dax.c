// SPDX-License-Identifier: MIT
/*
 * DAX store on libpmem2 (see dax.h). One dax_file per inode, shared by
 * every open of it; the server's workers use it concurrently, and I/O
 * takes no lock. The mapping lies in a fixed reservation (its base never
 * moves), so a copy needs only mapped, map_rw and the descriptor, read
 * inside an RCU read-side section (liburcu's bulletproof flavour: any
 * thread, no registration, a domain of the store's own). Growth maps a
 * piece, then publishes the larger mapped (release). Whatever unmaps
 * (truncate, the read-only to writable switch) first publishes the
 * smaller mapped, waits out a grace period, and only then unmaps, so no
 * copy still runs in what goes. Those changers serialize on wlock.
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
#include <urcu/urcu-bp.h>

#include "store/dax.h"

#define DAX_MAX_MAPS 64
#define DAX_RSV_MIN (8ull << 30)	/* virtual reservation of a file */
#define DAX_GROW_MIN (1ull << 20)	/* map growth in steps of at least */

struct dax_map {
	struct pmem2_map *map;
	uint64_t off, len;
};

struct dax_file {
	pthread_mutex_t wlock;		/* map, unmap, upgrade: among themselves */
	atomic_int fd;			/* reopened from an open's descriptor */
	atomic_bool fd_rw;		/* ... open read-write */
	/* the read-only one a writer's replaced (in-flight I/O may name it) */
	int ro_fd;
	struct pmem2_source *ro_src;
	atomic_bool map_rw;		/* the mapping may be written */
	bool upgrade_pending;		/* map_rw once no window holds it */
	/* retired pieces or an upgrade wait for the last window */
	atomic_bool waiting;
	bool device;			/* device DAX: fixed size, never remapped */
	struct pmem2_source *src;
	struct pmem2_vm_reservation *rsv;
	char *base;			/* fixed: the reservation's, or the device's */
	uint64_t rsv_size;
	size_t align;
	uint64_t dev_size;
	struct dax_map maps[DAX_MAX_MAPS];
	atomic_int nmaps;
	/* pieces cut off while a window may still hold them */
	struct dax_map retired[DAX_MAX_MAPS];
	atomic_int nretired;
	atomic_int holds;
	/* [0, mapped) is mapped, below EOF; readers load it acquire */
	_Atomic uint64_t mapped;
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

static uint64_t mapped_now(struct dax_file *f)
{
	return atomic_load_explicit(&f->mapped, memory_order_acquire);
}

/*
 * Map [mapped, to) into the reservation, then publish it; wlock held (or
 * the file not shared yet).
 */
static int map_piece(struct dax_file *f, uint64_t to, char *why, size_t whylen)
{
	uint64_t from = atomic_load_explicit(&f->mapped, memory_order_relaxed);
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
	pmem2_config_set_offset(cfg, from);
	pmem2_config_set_length(cfg, to - from);
	if (f->rsv)
		pmem2_config_set_vm_reservation(cfg, f->rsv, from);
	m = &f->maps[f->nmaps];
	ret = pmem2_map_new(&m->map, cfg, f->src);
	pmem2_config_delete(&cfg);
	if (ret) {
		if (why)
			snprintf(why, whylen, "%s", ret == PMEM2_E_GRANULARITY_NOT_SUPPORTED ?
				 "no MAP_SYNC here: not a DAX file system" : pmem2_errormsg());
		return ret == PMEM2_E_GRANULARITY_NOT_SUPPORTED ? -EOPNOTSUPP : pmem2_err(ret);
	}
	if (!f->memcpy_fn) {
		/* the first piece: a device's one, or the reservation's start */
		if (!f->base)
			f->base = pmem2_map_get_address(m->map);
		f->gran = pmem2_map_get_store_granularity(m->map) == PMEM2_GRANULARITY_BYTE ?
			  DAX_GRAN_BYTE : DAX_GRAN_CACHE_LINE;
		f->memcpy_fn = pmem2_get_memcpy_fn(m->map);
		f->persist_fn = pmem2_get_persist_fn(m->map);
		f->drain_fn = pmem2_get_drain_fn(m->map);
	}
	m->off = from;
	m->len = to - from;
	f->nmaps++;
	atomic_store_explicit(&f->mapped, to, memory_order_release);
	return 0;
}

static void reap_retired(struct dax_file *f)
{
	while (f->nretired)
		pmem2_map_delete(&f->retired[--f->nretired].map);
}

/* Pieces k and up go: unmapped, or retired while windows are held. */
static int drop_pieces(struct dax_file *f, int k, bool held)
{
	int ret = 0;

	while (f->nmaps > k) {
		struct dax_map *m = &f->maps[f->nmaps - 1];

		if (held) {
			f->retired[f->nretired++] = *m;
			m->map = NULL;
		} else {
			int r = pmem2_map_delete(&m->map);

			if (r && !ret)
				ret = pmem2_err(r);
		}
		f->nmaps--;
	}
	return ret;
}

/*
 * Drop pieces above to (and a piece straddling it); wlock held. The
 * smaller mapped is published first and a grace period waited out, so no
 * copy still runs in them. With windows held the pieces stay mapped,
 * retired, until the last window goes: no copy of the store reaches them
 * again, and a truncate makes what lies past EOF anonymous (retired_cut).
 * waiting is set before holds is read (dax_window_put does the reverse),
 * so one of the two sees the other.
 */
static int unmap_above(struct dax_file *f, uint64_t to)
{
	int k = f->nmaps, ret;

	while (k && f->maps[k - 1].off + f->maps[k - 1].len > to)
		k--;
	if (k == f->nmaps)
		return 0;
	atomic_store_explicit(&f->mapped, f->maps[k].off, memory_order_release);
	urcu_bp_synchronize_rcu();
	atomic_store(&f->waiting, true);
	ret = drop_pieces(f, k, atomic_load(&f->holds) != 0);
	atomic_store(&f->waiting, f->nretired || f->upgrade_pending);
	return ret;
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

/*
 * The file is cut to eof while windows hold retired pieces: a holder may
 * still have the CPU or the kernel touch them (a socket receiving into
 * one, a persist, a send from one), and a page past EOF would fault
 * (SIGBUS). Their part from the page after eof on becomes anonymous
 * memory first: what is written there is lost with the rest of the cut,
 * what is read is zero. Below eof they stay the file's. wlock held.
 */
static void retired_cut(struct dax_file *f, uint64_t eof)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (eof + page - 1) & ~(page - 1);
	int i;

	for (i = 0; i < f->nretired; i++) {
		struct dax_map *m = &f->retired[i];
		uint64_t s = from > m->off ? from : m->off;

		if (s < m->off + m->len)
			mmap(f->base + s, m->off + m->len - s, PROT_READ | PROT_WRITE,
			     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
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
/* The mappable part of the file now: [0, what this gives). */
static int map_target(struct dax_file *f, uint64_t *to)
{
	uint64_t size;
	int ret = file_size(f, &size);

	if (!ret)
		*to = align_down(size < f->rsv_size ? size : f->rsv_size, f->align);
	return ret;
}

static bool grow_wanted(struct dax_file *f, uint64_t want)
{
	uint64_t mapped = mapped_now(f);
	uint64_t step = mapped / 2 > DAX_GROW_MIN ? mapped / 2 : DAX_GROW_MIN;

	/* retired pieces still occupy the reservation above mapped */
	return want > mapped && want - mapped >= step && f->nmaps < DAX_MAX_MAPS &&
	       !f->nretired;
}

/*
 * Asked without a lock first (a tail write asks each time); the size is
 * taken again under wlock, since a truncate may have come in between.
 */
static void maybe_grow(struct dax_file *f)
{
	uint64_t want;

	if (f->device || map_target(f, &want) || !grow_wanted(f, want))
		return;
	pthread_mutex_lock(&f->wlock);
	if (!map_target(f, &want) && grow_wanted(f, want) && !fdatasync(f->fd))
		map_piece(f, want, NULL, 0);	/* on failure the tail path goes on */
	pthread_mutex_unlock(&f->wlock);
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
	pthread_mutex_init(&f->wlock, NULL);
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
		f->base = pmem2_vm_reservation_get_address(f->rsv);
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
	pthread_mutex_destroy(&f->wlock);
	free(f);
	return ret;
}

void dax_close(struct dax_file **fp)
{
	struct dax_file *f = *fp;

	if (!f)
		return;
	/* no I/O is left: no grace period to wait for */
	drop_pieces(f, 0, false);
	reap_retired(f);
	if (f->rsv)
		pmem2_vm_reservation_delete(&f->rsv);
	pmem2_source_delete(&f->src);
	close(f->fd);
	if (f->ro_src)
		pmem2_source_delete(&f->ro_src);
	if (f->ro_fd >= 0)
		close(f->ro_fd);
	pthread_mutex_destroy(&f->wlock);
	free(f);
	*fp = NULL;
}

/*
 * A pending upgrade, once nothing holds the read-only pieces: map the
 * file again, writable, below EOF. Exclusive lock held. A failure leaves
 * less (or nothing) mapped: the descriptor serves the rest. A window
 * taken while the pieces went leaves them retired: its put ends this.
 */
static void finish_upgrade(struct dax_file *f)
{
	uint64_t to;

	if (!f->upgrade_pending || atomic_load(&f->holds) || f->nretired)
		return;
	if (unmap_above(f, 0) || f->nretired)
		return;
	f->upgrade_pending = false;
	atomic_store(&f->waiting, false);
	/* nothing is mapped: no reader sees map_rw with a read-only piece */
	atomic_store(&f->map_rw, true);
	if (!map_target(f, &to) && to && !fdatasync(f->fd))
		map_piece(f, to, NULL, 0);
}

/* The last window went (wlock held): what waited for it. */
static void settle(struct dax_file *f)
{
	if (!atomic_load(&f->holds)) {
		reap_retired(f);
		finish_upgrade(f);
	}
	atomic_store(&f->waiting, f->nretired || f->upgrade_pending);
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
	pthread_mutex_lock(&f->wlock);
	if (atomic_load(&f->fd_rw)) {
		/* another writer came first */
		pthread_mutex_unlock(&f->wlock);
		pmem2_source_delete(&src);
		close(nfd);
		return 0;
	}
	/* the read-only descriptor stays open: a reader may still use it */
	f->ro_fd = atomic_load(&f->fd);
	f->ro_src = f->src;
	f->src = src;
	atomic_store(&f->fd, nfd);
	atomic_store(&f->fd_rw, true);	/* after fd: a writer seeing it uses nfd */
	f->upgrade_pending = true;
	atomic_store(&f->waiting, true);
	finish_upgrade(f);
	pthread_mutex_unlock(&f->wlock);
	return 0;
}

bool dax_writable(struct dax_file *f)
{
	return atomic_load(&f->fd_rw);
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

static ssize_t rw_fd(int fd, const struct iovec *iov, int n, uint64_t off, bool write)
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
			r = pwritev2(fd, sub, k, (off_t)(off + done), RWF_DSYNC);
		else
			r = preadv(fd, sub, k, (off_t)(off + done));
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

/*
 * The copies run inside an RCU read-side section, with the mapped end
 * loaded once: what unmaps waits for them. The descriptor's part runs
 * after it (descriptors stay open until dax_close).
 */
ssize_t dax_preadv(struct dax_file *f, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t len = iov_total(iov, n), inmap = 0, mapped;
	ssize_t r = 0;

	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	urcu_bp_read_lock();
	mapped = mapped_now(f);
	if (f->device) {
		/* all of a device is mapped; it has no read(2) */
		len = off < mapped ? (mapped - off < len ? mapped - off : len) : 0;
	}
	if (off < mapped) {
		const char *src = f->base + off;

		inmap = mapped - off < len ? mapped - off : len;
		IOV_WALK(iov, n, 0, inmap, p, l, {
			memcpy(p, src, l);
			src += l;
		});
	}
	urcu_bp_read_unlock();
	if (inmap < len) {
		struct iovec sub[64];
		int k = iov_sub(iov, n, inmap, sub, 64);

		r = k < 0 ? k : rw_fd(atomic_load(&f->fd), sub, k, off + inmap, false);
	}
	if (r < 0)
		return inmap ? (ssize_t)inmap : r;
	return (ssize_t)(inmap + (uint64_t)r);
}

ssize_t dax_pwritev(struct dax_file *f, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t len = iov_total(iov, n), inmap = 0, mapped;
	ssize_t r = 0;

	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EFBIG;
	mapped = mapped_now(f);		/* a device's never changes */
	if (f->device && (off > mapped || len > mapped - off))
		return -ENOSPC;		/* a device is a fixed-size file */
	if (!atomic_load(&f->fd_rw))
		return -EBADF;		/* no writer opened it: a caller's bug */
	urcu_bp_read_lock();
	mapped = mapped_now(f);
	if (off < mapped && atomic_load(&f->map_rw)) {
		char *dst = f->base + off;

		inmap = mapped - off < len ? mapped - off : len;
		IOV_WALK(iov, n, 0, inmap, p, l, {
			f->memcpy_fn(dst, p, l, PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_NODRAIN);
			dst += l;
		});
		f->drain_fn();
	}
	urcu_bp_read_unlock();
	if (inmap)
		atomic_fetch_add(&f->mapped_written, inmap);
	if (inmap < len) {
		struct iovec sub[64];
		int k = iov_sub(iov, n, inmap, sub, 64);

		r = k < 0 ? k : rw_fd(atomic_load(&f->fd), sub, k, off + inmap, true);
		if (r > 0)
			atomic_fetch_add(&f->tail_written, (uint64_t)r);
	}
	if (inmap < len && r > 0)
		maybe_grow(f);
	if (r < 0)
		return inmap ? (ssize_t)inmap : r;
	return (ssize_t)(inmap + (uint64_t)r);
}

int dax_tail_fd(struct dax_file *f, uint64_t off)
{
	if (f->device || !atomic_load(&f->fd_rw))
		return -1;
	if (off >= mapped_now(f) || !atomic_load(&f->map_rw))
		return atomic_load(&f->fd);
	return -1;
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
	pthread_mutex_lock(&f->wlock);
	if (!atomic_load(&f->fd_rw)) {
		pthread_mutex_unlock(&f->wlock);
		return -EBADF;
	}
	/* nothing reads [size, mapped) once unmap_above returns */
	if (size < mapped_now(f))
		ret = unmap_above(f, align_down(size, f->align));
	retired_cut(f, size);
	if (!ret && ftruncate(f->fd, (off_t)size))
		ret = -errno;
	/* keep what is still below EOF mapped */
	if (!ret && mapped_now(f) < align_down(size, f->align) && f->nmaps < DAX_MAX_MAPS &&
	    !f->nretired && size < f->rsv_size && !fdatasync(f->fd))
		map_piece(f, align_down(size, f->align), NULL, 0);
	pthread_mutex_unlock(&f->wlock);
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
	ret = !atomic_load(&f->fd_rw) ? -EBADF :
	      fallocate(atomic_load(&f->fd), 0, 0, (off_t)size) ? -errno : 0;
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

/*
 * The hold is taken inside the read-side section: what unmaps after its
 * grace period sees it and retires rather than unmaps.
 */
void *dax_window(struct dax_file *f, uint64_t off, size_t len, bool write)
{
	uint64_t mapped;
	void *p = NULL;

	urcu_bp_read_lock();
	mapped = mapped_now(f);
	if (off <= mapped && len <= mapped - off && (!write || atomic_load(&f->map_rw))) {
		atomic_fetch_add(&f->holds, 1);
		p = f->base + off;
	}
	urcu_bp_read_unlock();
	return p;
}

/* The last one takes wlock only when something waits for it. */
void dax_window_put(struct dax_file *f)
{
	if (atomic_fetch_sub(&f->holds, 1) != 1 || !atomic_load(&f->waiting))
		return;
	pthread_mutex_lock(&f->wlock);
	settle(f);
	pthread_mutex_unlock(&f->wlock);
}

void *dax_base(struct dax_file *f, size_t *len)
{
	if (!f->device)
		return NULL;
	*len = mapped_now(f);
	return f->base;
}

void dax_persist(struct dax_file *f, const void *addr, size_t len)
{
	f->persist_fn(addr, len);
	atomic_fetch_add(&f->mapped_written, len);
}

void dax_get_stats(struct dax_file *f, struct dax_stats *st)
{
	pthread_mutex_lock(&f->wlock);
	st->mapped = mapped_now(f);
	st->maps = f->nmaps;
	st->map_writable = atomic_load(&f->map_rw);
	pthread_mutex_unlock(&f->wlock);
	st->gran = f->gran;
	st->mapped_bytes_written = atomic_load(&f->mapped_written);
	st->tail_bytes_written = atomic_load(&f->tail_written);
}
