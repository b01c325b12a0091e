/* SPDX-License-Identifier: MIT */
/*
 * File store: everything the server does to files, confined beneath a
 * share root with openat2(RESOLVE_BENEATH). Knows nothing of SMB.
 * Relative paths use '/', no leading slash; "" is the root itself.
 */
#ifndef RDAX_STORE_H
#define RDAX_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>

struct store_root {
	int fd;				/* O_PATH|O_DIRECTORY of the root */
	dev_t dev;
	char path[4096];
};

int store_root_open(const char *path, struct store_root *r);
void store_root_close(struct store_root *r);

/* open(2) flags and mode; resolution stays beneath the root. */
int store_open(const struct store_root *r, const char *rel, int flags,
	       mode_t mode, int *fd_out);
int store_stat(const struct store_root *r, const char *rel, struct stat *st);
int store_mkdir(const struct store_root *r, const char *rel, mode_t mode);
int store_unlink(const struct store_root *r, const char *rel, bool dir);
int store_rename(const struct store_root *r, const char *from,
		 const char *to, bool replace);
int store_link(const struct store_root *r, const char *from, const char *to);
/* stat of rel itself, a symlink not followed */
int store_lstat(const struct store_root *r, const char *rel, struct stat *st);
/* A symlink or a special file at rel; replace: over what is there, atomically. */
int store_symlink(const struct store_root *r, const char *target, const char *rel,
		  bool replace);
int store_mknod(const struct store_root *r, const char *rel, mode_t mode, dev_t dev,
		bool replace);
int store_statvfs(const struct store_root *r, struct statvfs *sv);
/*
 * Access checks with the calling thread's fs identity (fsuid, fsgid,
 * groups): faccessat2 mode (R_OK, W_OK, X_OK) on rel; whether rel may
 * be unlinked (write and search on its parent, the sticky bit's rule;
 * st is rel's stat). 0 or -EACCES.
 */
int store_access(const struct store_root *r, const char *rel, int mode);
int store_may_delete(const struct store_root *r, const char *rel,
		     const struct stat *st);

/*
 * Metadata of an open file (name NULL) or of the entry name of the open
 * directory fd (one component: no '/', not ".."), a final symlink not
 * followed. fd may be an O_PATH descriptor.
 *
 * store_statx: stat(2), and the birth time where the file system keeps
 * one (else btime->tv_nsec is -1).
 * store_getxattr / store_setxattr: an extended attribute; the size read
 * or 0, or -errno (-ENODATA: none; -EOPNOTSUPP: the file system has no
 * such attributes).
 * store_access_at: faccessat2 mode with the calling thread's identity.
 */
int store_statx(int fd, const char *name, struct stat *st, struct timespec *btime);
ssize_t store_getxattr(int fd, const char *name, const char *key, void *buf,
		       size_t len);
int store_setxattr(int fd, const char *key, const void *val, size_t len);
/* store_listxattr: the names, NUL-separated (buf NULL: the size needed) */
ssize_t store_listxattr(int fd, char *buf, size_t len);
int store_removexattr(int fd, const char *key);
int store_access_at(int fd, const char *name, int mode);

/* Data and metadata on an open file. */
ssize_t store_pread(int fd, void *buf, size_t len, uint64_t off);
ssize_t store_pwrite(int fd, const void *buf, size_t len, uint64_t off,
		     bool sync);
ssize_t store_preadv(int fd, const struct iovec *iov, int n, uint64_t off);
ssize_t store_pwritev(int fd, const struct iovec *iov, int n, uint64_t off,
		      bool sync);
int store_flush(int fd);
int store_truncate(int fd, uint64_t size);
int store_allocate(int fd, uint64_t size);
int store_set_times(int fd, const struct timespec *atime,
		    const struct timespec *mtime);

/*
 * Copy len bytes between two open files inside the server (server-side
 * copy): a reflink (FICLONERANGE) when the range is block-aligned and
 * the file system shares extents, else copy_file_range(2), else a
 * pread/pwrite loop through a per-thread buffer. Overlapping ranges of
 * one file are copied as memmove would. *copied is what landed in the
 * destination; it is short without an error only at the source's end.
 * Hook: a DAX store copies between its two mappings with pmem2_memcpy
 * (non-temporal, then drain) here instead.
 */
int store_copy_range(int src_fd, uint64_t src_off, int dst_fd,
		     uint64_t dst_off, uint64_t len, uint64_t *copied);

/*
 * Sparse files and extents:
 * store_punch: zeroes len bytes at off without changing the size,
 * deallocating them (FALLOC_FL_PUNCH_HOLE) where the file system can,
 * else writing zeros up to the end of the file.
 * store_data_range: the first data at or after off and the hole after
 * it (SEEK_DATA, SEEK_HOLE); 1 = found, 0 = only holes up to the end.
 * store_clone: len bytes of src shared into dst (FICLONERANGE); only a
 * reflink, never a copy: -EOPNOTSUPP where the file system cannot.
 * store_can_reflink: whether the file system beneath r shares extents
 * (two empty O_TMPFILE files cloned; needs write access to the root).
 */
int store_punch(int fd, uint64_t off, uint64_t len);
int store_data_range(int fd, uint64_t off, uint64_t *data, uint64_t *hole);
int store_clone(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off,
		uint64_t len);
bool store_can_reflink(const struct store_root *r);

/*
 * An open file's data path, bound once when the file is opened: the
 * descriptor, its O_DIRECT twin (resolved then, for aligned async
 * transfers) and, on a DAX store, the mapping. Callers go through ops
 * and never ask which store they have.
 */
struct dax_file;
struct store_ring;
struct store_rw;
struct store_ops;

struct store_file {
	const struct store_ops *ops;
	int fd;				/* the open's descriptor */
	int direct_fd;			/* O_DIRECT twin of fd, or -1 */
	struct dax_file *dax;		/* dax, devdax: the mapping */
};

/* What a store's data is, for the callers that must know. */
enum {
	STORE_EXTENTS = 1 << 0,		/* fd's ranges: holes, reflinks, kernel copies */
	STORE_PERSISTENT = 1 << 1,	/* a write is durable when it returns */
	STORE_SENDFILE = 1 << 2,	/* reads may go from fd to a socket (page cache) */
};

struct store_ops {
	const char *name;
	unsigned int flags;		/* STORE_* */
	ssize_t (*preadv)(struct store_file *f, const struct iovec *iov, int n, uint64_t off);
	ssize_t (*pwritev)(struct store_file *f, const struct iovec *iov, int n,
			   uint64_t off, bool sync);
	int (*flush)(struct store_file *f);
	int (*truncate)(struct store_file *f, uint64_t size);
	int (*allocate)(struct store_file *f, uint64_t size);
	/* the data's size where it is not fstat's; NULL: fstat's */
	int (*size)(struct store_file *f, uint64_t *size);
	/*
	 * Zero copy: the file's memory for [off, off + len), or NULL (no
	 * mapping, not mapped there: copy). Held until window_put; bytes
	 * someone else (a NIC, the socket) wrote there become durable with
	 * persist.
	 */
	void *(*window)(struct store_file *f, uint64_t off, size_t len, bool write);
	void (*window_put)(struct store_file *f);
	void (*persist)(struct store_file *f, const void *addr, size_t len);
	/*
	 * Asynchronous transfer of rw (iov, niov, off, write, rwflags and
	 * done set by the caller; fd chosen here) on ring r. 0: submitted,
	 * complete() runs before rw->done; -EOPNOTSUPP (or any error): the
	 * caller moves the data with preadv/pwritev.
	 */
	int (*submit)(struct store_file *f, struct store_ring *r, struct store_rw *rw);
	void (*complete)(struct store_file *f, struct store_rw *rw);
};

/*
 * posix: read/write on the descriptor, never async. uring: the same,
 * plus io_uring submission (the O_DIRECT twin when aligned). dax: a
 * libpmem2 mapping (windows; growth submitted with RWF_DSYNC). devdax:
 * a device's fixed mapping (no flush, no extents).
 */
extern const struct store_ops store_posix_ops;
extern const struct store_ops store_uring_ops;
extern const struct store_ops store_dax_ops;
extern const struct store_ops store_devdax_ops;

/* Helpers for ops tables: no window, no async transfer. */
void *store_no_window(struct store_file *f, uint64_t off, size_t len, bool write);
void store_no_window_put(struct store_file *f);
void store_no_persist(struct store_file *f, const void *addr, size_t len);
int store_no_submit(struct store_file *f, struct store_ring *r, struct store_rw *rw);
void store_no_complete(struct store_file *f, struct store_rw *rw);

/* Directory enumeration on an open directory fd. */
struct store_dir;
int store_dir_open(int fd, struct store_dir **out);
/* Next name ("." and ".." included); 1 = entry, 0 = end, -errno. */
int store_dir_next(struct store_dir *d, const char **name);
void store_dir_rewind(struct store_dir *d);
/* Its descriptor, for store_statx and store_getxattr of its entries. */
int store_dir_fd(const struct store_dir *d);
void store_dir_close(struct store_dir **d);

#endif
