// SPDX-License-Identifier: MIT
/*
 * POSIX store: plain syscalls beneath a root fd. Resolution uses
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) so "..", absolute
 * names and symlinks cannot leave the share.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "store/store.h"

#define RESOLVE_FLAGS (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

static int beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_FLAGS,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how,
			     sizeof(how));
	} while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

int store_root_open(const char *path, struct store_root *r)
{
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(r->path))
		return -ENAMETOOLONG;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	r->fd = fd;
	r->dev = st.st_dev;
	strcpy(r->path, path);
	return 0;
}

void store_root_close(struct store_root *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

int store_open(const struct store_root *r, const char *rel, int flags,
	       mode_t mode, int *fd_out)
{
	int fd = beneath(r->fd, rel, flags, mode);

	if (fd < 0)
		return fd;
	*fd_out = fd;
	return 0;
}

int store_stat(const struct store_root *r, const char *rel, struct stat *st)
{
	int fd = beneath(r->fd, rel, O_PATH, 0), ret = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		ret = -errno;
	close(fd);
	return ret;
}

/* Split rel into an open parent directory and a final component. */
static int open_parent(const struct store_root *r, const char *rel,
		       const char **base)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	size_t n;

	*base = slash ? slash + 1 : rel;
	if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return -EINVAL;
	if (!slash)
		return beneath(r->fd, "", O_PATH | O_DIRECTORY, 0);
	n = (size_t)(slash - rel);
	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rel, n);
	parent[n] = 0;
	return beneath(r->fd, parent, O_PATH | O_DIRECTORY, 0);
}

int store_mkdir(const struct store_root *r, const char *rel, mode_t mode)
{
	const char *base;
	int pfd = open_parent(r, rel, &base), ret = 0;

	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, base, mode))
		ret = -errno;
	close(pfd);
	return ret;
}

int store_unlink(const struct store_root *r, const char *rel, bool dir)
{
	const char *base;
	int pfd = open_parent(r, rel, &base), ret = 0;

	if (pfd < 0)
		return pfd;
	if (unlinkat(pfd, base, dir ? AT_REMOVEDIR : 0))
		ret = -errno;
	close(pfd);
	return ret;
}

int store_rename(const struct store_root *r, const char *from,
		 const char *to, bool replace)
{
	const char *b1, *b2;
	int p1, p2, ret = 0;

	p1 = open_parent(r, from, &b1);
	if (p1 < 0)
		return p1;
	p2 = open_parent(r, to, &b2);
	if (p2 < 0) {
		ret = p2;
		goto out_close_p1;
	}
	if (renameat2(p1, b1, p2, b2, replace ? 0 : RENAME_NOREPLACE))
		ret = -errno;
	close(p2);
out_close_p1:
	close(p1);
	return ret;
}

int store_lstat(const struct store_root *r, const char *rel, struct stat *st)
{
	int fd = beneath(r->fd, rel, O_PATH | O_NOFOLLOW, 0), ret = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A new name made by make(pfd, base): in place, or beside it and renamed
 * over what is there (replace), so the name is never missing.
 */
static int make_at(const struct store_root *r, const char *rel, bool replace,
		   int (*make)(int pfd, const char *base, const void *arg), const void *arg)
{
	char tmp[64];
	const char *base;
	int pfd, ret, i;

	pfd = open_parent(r, rel, &base);
	if (pfd < 0)
		return pfd;
	if (!replace) {
		ret = make(pfd, base, arg);
		goto out;
	}
	for (i = 0; i < 16; i++) {
		snprintf(tmp, sizeof(tmp), ".rdax-new-%d-%d-%d", (int)getpid(), (int)gettid(), i);
		ret = make(pfd, tmp, arg);
		if (ret != -EEXIST)
			break;
	}
	if (ret)
		goto out;
	if (renameat(pfd, tmp, pfd, base)) {
		ret = -errno;
		unlinkat(pfd, tmp, 0);
	}
out:
	close(pfd);
	return ret;
}

static int make_symlink(int pfd, const char *base, const void *target)
{
	return symlinkat(target, pfd, base) ? -errno : 0;
}

struct node_arg {
	mode_t mode;
	dev_t dev;
};

static int make_node(int pfd, const char *base, const void *arg)
{
	const struct node_arg *n = arg;

	return mknodat(pfd, base, n->mode, n->dev) ? -errno : 0;
}

int store_symlink(const struct store_root *r, const char *target, const char *rel,
		  bool replace)
{
	return make_at(r, rel, replace, make_symlink, target);
}

int store_mknod(const struct store_root *r, const char *rel, mode_t mode, dev_t dev,
		bool replace)
{
	struct node_arg n = { mode, dev };

	return make_at(r, rel, replace, make_node, &n);
}

int store_link(const struct store_root *r, const char *from, const char *to)
{
	int fd, p2, ret = 0;
	const char *b2;

	fd = beneath(r->fd, from, O_PATH, 0);
	if (fd < 0)
		return fd;
	p2 = open_parent(r, to, &b2);
	if (p2 < 0) {
		ret = p2;
		goto out_close_fd;
	}
	if (linkat(fd, "", p2, b2, AT_EMPTY_PATH))
		ret = -errno;
	close(p2);
out_close_fd:
	close(fd);
	return ret;
}

/* faccessat2 on an fd, with the caller's fs identity (AT_EACCESS) */
static int access_fd(int fd, int mode)
{
	if (!syscall(SYS_faccessat2, fd, "", mode, AT_EACCESS | AT_EMPTY_PATH))
		return 0;
	return errno == ENOSYS ? 0 : -errno;	/* the operation itself will tell */
}

int store_access(const struct store_root *r, const char *rel, int mode)
{
	int fd = beneath(r->fd, rel, O_PATH, 0), ret;

	if (fd < 0)
		return fd;
	ret = access_fd(fd, mode);
	close(fd);
	return ret;
}

int store_may_delete(const struct store_root *r, const char *rel,
		     const struct stat *st)
{
	const char *base;
	struct stat pst;
	uid_t me;
	int pfd, ret;

	pfd = open_parent(r, rel, &base);
	if (pfd < 0)
		return pfd == -EINVAL ? -EACCES : pfd;	/* the root itself */
	ret = access_fd(pfd, W_OK | X_OK);
	if (!ret && !fstat(pfd, &pst) && pst.st_mode & S_ISVTX) {
		/* sticky: only the file's or the directory's owner */
		me = (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
		if (me != st->st_uid && me != pst.st_uid)
			ret = -EACCES;
	}
	close(pfd);
	return ret;
}

int store_access_at(int fd, const char *name, int mode)
{
	if (!name)
		return access_fd(fd, mode);
	if (!syscall(SYS_faccessat2, fd, name, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW))
		return 0;
	return errno == ENOSYS ? 0 : -errno;
}

int store_statx(int fd, const char *name, struct stat *st, struct timespec *btime)
{
	int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT;
	struct statx x;

	if (!name) {
		name = "";
		flags |= AT_EMPTY_PATH;
	}
	if (statx(fd, name, flags, STATX_BASIC_STATS | STATX_BTIME, &x))
		return -errno;
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
	st->st_ino = x.stx_ino;
	st->st_mode = x.stx_mode;
	st->st_nlink = x.stx_nlink;
	st->st_uid = x.stx_uid;
	st->st_gid = x.stx_gid;
	st->st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
	st->st_size = (off_t)x.stx_size;
	st->st_blksize = x.stx_blksize;
	st->st_blocks = (blkcnt_t)x.stx_blocks;
	st->st_atim = (struct timespec){ x.stx_atime.tv_sec, x.stx_atime.tv_nsec };
	st->st_mtim = (struct timespec){ x.stx_mtime.tv_sec, x.stx_mtime.tv_nsec };
	st->st_ctim = (struct timespec){ x.stx_ctime.tv_sec, x.stx_ctime.tv_nsec };
	if (x.stx_mask & STATX_BTIME)
		*btime = (struct timespec){ x.stx_btime.tv_sec, x.stx_btime.tv_nsec };
	else
		*btime = (struct timespec){ 0, -1 };
	return 0;
}

/*
 * The extended attributes of an entry go through the directory's own
 * descriptor (/proc/self/fd/N/NAME): one lookup of one component, which
 * cannot leave the directory; an O_PATH descriptor's through its link.
 */
static int fd_path(int fd, const char *name, char *buf, size_t len)
{
	int n;

	if (name && (!*name || strchr(name, '/') || !strcmp(name, "..")))
		return -EINVAL;
	n = name ? snprintf(buf, len, "/proc/self/fd/%d/%s", fd, name)
		 : snprintf(buf, len, "/proc/self/fd/%d", fd);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

ssize_t store_getxattr(int fd, const char *name, const char *key, void *buf,
		       size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int ret;

	if (!name) {
		n = fgetxattr(fd, key, buf, len);
		if (n >= 0 || errno != EBADF)
			return n < 0 ? -errno : n;
	}
	ret = fd_path(fd, name, path, sizeof(path));
	if (ret)
		return ret;
	n = name ? lgetxattr(path, key, buf, len) : getxattr(path, key, buf, len);
	return n < 0 ? -errno : n;
}

int store_setxattr(int fd, const char *key, const void *val, size_t len)
{
	char path[PATH_MAX];
	int ret;

	if (!fsetxattr(fd, key, val, len, 0))
		return 0;
	if (errno != EBADF)
		return -errno;
	ret = fd_path(fd, NULL, path, sizeof(path));
	if (ret)
		return ret;
	return setxattr(path, key, val, len, 0) ? -errno : 0;
}

ssize_t store_listxattr(int fd, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int ret;

	n = flistxattr(fd, buf, len);
	if (n >= 0 || errno != EBADF)
		return n < 0 ? -errno : n;
	ret = fd_path(fd, NULL, path, sizeof(path));
	if (ret)
		return ret;
	n = listxattr(path, buf, len);
	return n < 0 ? -errno : n;
}

int store_removexattr(int fd, const char *key)
{
	char path[PATH_MAX];
	int ret;

	if (!fremovexattr(fd, key))
		return 0;
	if (errno != EBADF)
		return -errno;
	ret = fd_path(fd, NULL, path, sizeof(path));
	if (ret)
		return ret;
	return removexattr(path, key) ? -errno : 0;
}

int store_statvfs(const struct store_root *r, struct statvfs *sv)
{
	return fstatvfs(r->fd, sv) ? -errno : 0;
}

ssize_t store_pread(int fd, void *buf, size_t len, uint64_t off)
{
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		n = pread(fd, (char *)buf + have, len - have, (off_t)(off + have));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return have ? (ssize_t)have : -errno;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

ssize_t store_pwrite(int fd, const void *buf, size_t len, uint64_t off,
		     bool sync)
{
	struct iovec iov;
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		iov.iov_base = (char *)buf + have;
		iov.iov_len = len - have;
		n = pwritev2(fd, &iov, 1, (off_t)(off + have), sync ? RWF_DSYNC : 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return have ? (ssize_t)have : -errno;
		}
		have += (size_t)n;
	}
	return (ssize_t)have;
}

/* Full vectored transfers: retried until done, EOF or an error. */
static ssize_t rw_vec(int fd, const struct iovec *iov_in, int n, uint64_t off,
		      bool write, bool sync)
{
	struct iovec iov[64];
	size_t total = 0, want = 0;
	ssize_t r;
	int i = 0;

	if (n > 64)
		return -EINVAL;
	memcpy(iov, iov_in, sizeof(*iov) * (size_t)n);
	for (int k = 0; k < n; k++)
		want += iov[k].iov_len;
	while (total < want) {
		r = write ? pwritev2(fd, iov + i, n - i, (off_t)(off + total),
				     sync ? RWF_DSYNC : 0)
			  : preadv(fd, iov + i, n - i, (off_t)(off + total));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return total ? (ssize_t)total : -errno;
		}
		if (r == 0)
			break;
		total += (size_t)r;
		while (i < n && (size_t)r >= iov[i].iov_len) {
			r -= (ssize_t)iov[i].iov_len;
			i++;
		}
		if (i < n) {
			iov[i].iov_base = (char *)iov[i].iov_base + r;
			iov[i].iov_len -= (size_t)r;
		}
	}
	return (ssize_t)total;
}

ssize_t store_preadv(int fd, const struct iovec *iov, int n, uint64_t off)
{
	return rw_vec(fd, iov, n, off, false, false);
}

ssize_t store_pwritev(int fd, const struct iovec *iov, int n, uint64_t off,
		      bool sync)
{
	return rw_vec(fd, iov, n, off, true, sync);
}

int store_flush(int fd)
{
	return fdatasync(fd) ? -errno : 0;
}

int store_truncate(int fd, uint64_t size)
{
	if (size > INT64_MAX)
		return -EFBIG;
	return ftruncate(fd, (off_t)size) ? -errno : 0;
}

int store_allocate(int fd, uint64_t size)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (size <= (uint64_t)st.st_blocks * 512)
		return 0;
	/* Keep the size; only reserve blocks. */
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size) &&
	    errno != EOPNOTSUPP)
		return -errno;
	return 0;
}

int store_set_times(int fd, const struct timespec *atime,
		    const struct timespec *mtime)
{
	struct timespec ts[2] = {
		atime ? *atime : (struct timespec){ .tv_nsec = UTIME_OMIT },
		mtime ? *mtime : (struct timespec){ .tv_nsec = UTIME_OMIT },
	};

	/* also on an O_PATH descriptor (an attributes-only open) */
	return utimensat(fd, "", ts, AT_EMPTY_PATH) ? -errno : 0;
}

/* ---- server-side copy ---- */

#define COPY_BUF (1u << 20)

static pthread_key_t copy_buf_key;
static pthread_once_t copy_buf_once = PTHREAD_ONCE_INIT;
static bool copy_buf_key_ok;

static void copy_buf_key_init(void)
{
	copy_buf_key_ok = !pthread_key_create(&copy_buf_key, free);
}

/* The calling thread's bounce buffer, kept for its next copy. */
static uint8_t *copy_buf(void)
{
	uint8_t *b;

	if (pthread_once(&copy_buf_once, copy_buf_key_init) || !copy_buf_key_ok)
		return NULL;
	b = pthread_getspecific(copy_buf_key);
	if (!b) {
		b = malloc(COPY_BUF);
		if (b && pthread_setspecific(copy_buf_key, b)) {
			free(b);
			b = NULL;
		}
	}
	return b;
}

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		n = pwrite(fd, buf + have, len - have, (off_t)(off + have));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		have += (size_t)n;
	}
	return 0;
}

/*
 * pread/pwrite through the thread's buffer. Backwards (from the end)
 * when the destination overlaps the tail of the source in one file, so
 * nothing is overwritten before it is read; *copied then counts only a
 * completed copy.
 */
static int copy_bounce(int src_fd, uint64_t src_off, int dst_fd,
		       uint64_t dst_off, uint64_t len, bool backwards,
		       uint64_t *copied)
{
	uint8_t *buf = copy_buf();
	uint64_t done = 0, rel;
	ssize_t n;
	size_t want;
	int ret;

	if (!buf)
		return -ENOMEM;
	while (done < len) {
		want = len - done > COPY_BUF ? COPY_BUF : (size_t)(len - done);
		rel = backwards ? len - done - want : done;
		n = store_pread(src_fd, buf, want, src_off + rel);
		if (n < 0)
			return (int)n;
		if (backwards && (size_t)n < want)
			return -EIO;	/* the source shrank under us */
		ret = write_all(dst_fd, buf, (size_t)n, dst_off + rel);
		if (ret)
			return ret;
		done += (uint64_t)n;
		if (!backwards)
			*copied = done;
		if ((size_t)n < want)
			break;		/* end of the source */
	}
	*copied = done;
	return 0;
}

static bool clone_aligned(uint64_t a, uint64_t b, uint64_t c, blksize_t bs)
{
	uint64_t m = bs > 0 ? (uint64_t)bs : 4096;

	return !(a % m) && !(b % m) && !(c % m);
}

int store_copy_range(int src_fd, uint64_t src_off, int dst_fd,
		     uint64_t dst_off, uint64_t len, uint64_t *copied)
{
	struct file_clone_range fcr;
	struct stat ss, ds;
	uint64_t done = 0, more = 0, size;
	loff_t so, dof;
	ssize_t n;
	int ret;

	*copied = 0;
	if (!len)
		return 0;
	if (src_off > INT64_MAX || len > INT64_MAX - src_off)
		return -EINVAL;
	if (dst_off > INT64_MAX || len > INT64_MAX - dst_off)
		return -EFBIG;
	if (fstat(src_fd, &ss) || fstat(dst_fd, &ds))
		return -errno;
	size = (uint64_t)ss.st_size;
	if (ss.st_dev == ds.st_dev && ss.st_ino == ds.st_ino &&
	    src_off < dst_off + len && dst_off < src_off + len) {
		/* one file, overlapping ranges: memmove semantics */
		if (src_off >= size)
			return 0;
		if (len > size - src_off)
			len = size - src_off;
		if (src_off == dst_off) {
			*copied = len;
			return 0;
		}
		return copy_bounce(src_fd, src_off, dst_fd, dst_off, len,
				   dst_off > src_off, copied);
	}

	/* shared extents: no data moves at all */
	if (clone_aligned(src_off, dst_off, len, ds.st_blksize) &&
	    src_off + len <= size) {
		fcr.src_fd = src_fd;
		fcr.src_offset = src_off;
		fcr.src_length = len;
		fcr.dest_offset = dst_off;
		if (!ioctl(dst_fd, FICLONERANGE, &fcr)) {
			*copied = len;
			return 0;
		}
		/* EOPNOTSUPP, EXDEV, EINVAL...: copy instead */
	}

	/* in-kernel copy (may itself reflink, e.g. on NFS or XFS) */
	while (done < len) {
		so = (loff_t)(src_off + done);
		dof = (loff_t)(dst_off + done);
		n = copy_file_range(src_fd, &so, dst_fd, &dof, len - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP ||
			    errno == ENOSYS || errno == EBADF)
				break;	/* not between these files: bounce */
			*copied = done;
			return -errno;
		}
		if (n == 0) {		/* end of the source */
			*copied = done;
			return 0;
		}
		done += (uint64_t)n;
	}
	if (done < len) {
		ret = copy_bounce(src_fd, src_off + done, dst_fd, dst_off + done,
				  len - done, false, &more);
		*copied = done + more;
		return ret;
	}
	*copied = done;
	return 0;
}

struct store_dir {
	DIR *dir;
	int fd;
};

int store_dir_open(int fd, struct store_dir **out)
{
	struct store_dir *d = calloc(1, sizeof(*d));
	int dfd, ret;

	if (!d)
		return -ENOMEM;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		goto out_free;
	}
	d->dir = fdopendir(dfd);
	if (!d->dir) {
		ret = -errno;
		close(dfd);
		goto out_free;
	}
	d->fd = dfd;
	*out = d;
	return 0;
out_free:
	free(d);
	return ret;
}

int store_dir_next(struct store_dir *d, const char **name)
{
	struct dirent *de;

	errno = 0;
	de = readdir(d->dir);
	if (!de)
		return errno ? -errno : 0;
	*name = de->d_name;
	return 1;
}

void store_dir_rewind(struct store_dir *d)
{
	rewinddir(d->dir);
}

int store_dir_fd(const struct store_dir *d)
{
	return d->fd;
}

void store_dir_close(struct store_dir **d)
{
	if (!*d)
		return;
	closedir((*d)->dir);
	free(*d);
	*d = NULL;
}

/* Zeros written over [off, off + len) clipped to the size (no hole punching). */
static int zero_fill(int fd, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[65536];
	struct stat st;
	uint64_t end;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	end = (uint64_t)st.st_size;
	if (off >= end)
		return 0;
	if (len < end - off)
		end = off + len;
	while (off < end) {
		size_t chunk = end - off < sizeof(zeros) ? (size_t)(end - off) : sizeof(zeros);

		n = pwrite(fd, zeros, chunk, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (uint64_t)n;
	}
	return 0;
}

int store_punch(int fd, uint64_t off, uint64_t len)
{
	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	if (!len)
		return 0;
	if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len))
		return 0;
	if (errno != EOPNOTSUPP)
		return -errno;
	return zero_fill(fd, off, len);
}

int store_data_range(int fd, uint64_t off, uint64_t *data, uint64_t *hole)
{
	off_t d, h;

	if (off > INT64_MAX)
		return 0;
	d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? 0 : -errno;
	h = lseek(fd, d, SEEK_HOLE);
	if (h < 0)
		return -errno;
	if (h <= d)
		return -EIO;
	*data = (uint64_t)d;
	*hole = (uint64_t)h;
	return 1;
}

int store_clone(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off,
		uint64_t len)
{
	struct file_clone_range fcr = {
		.src_fd = src_fd,
		.src_offset = src_off,
		.src_length = len,
		.dest_offset = dst_off,
	};

	if (src_off > INT64_MAX || len > INT64_MAX - src_off ||
	    dst_off > INT64_MAX || len > INT64_MAX - dst_off)
		return -EINVAL;
	if (!len)
		return 0;	/* FICLONERANGE: 0 is "to the end" */
	if (!ioctl(dst_fd, FICLONERANGE, &fcr))
		return 0;
	switch (errno) {
	case EOPNOTSUPP:
	case ENOTTY:
	case EXDEV:
		return -EOPNOTSUPP;
	default:
		return -errno;
	}
}

bool store_can_reflink(const struct store_root *r)
{
	int a, b;
	bool ok;

	a = openat(r->fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (a < 0)
		return false;
	b = openat(r->fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (b < 0) {
		close(a);
		return false;
	}
	ok = pwrite(a, "x", 1, 0) == 1 && !ioctl(b, FICLONE, a);
	close(b);
	close(a);
	return ok;
}
