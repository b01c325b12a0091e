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
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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

	return futimens(fd, ts) ? -errno : 0;
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

int store_dir_stat(struct store_dir *d, const char *name, struct stat *st)
{
	return fstatat(d->fd, name, st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

void store_dir_close(struct store_dir **d)
{
	if (!*d)
		return;
	closedir((*d)->dir);
	free(*d);
	*d = NULL;
}
