// SPDX-License-Identifier: MIT
/*
 * Alternate data streams, kept as Samba's vfs_streams_xattr keeps them:
 * stream NAME is the xattr "user.DosStream.NAME:$DATA" of its file or
 * directory, whose value is the data followed by one NUL byte. A stream
 * open has its own srv_file (share modes, locks, delete-pending) and
 * the base file's descriptor; its data goes through srv_stream_ops, read
 * from and written back to the xattr on each request (a value is at
 * most 64 KiB, the file system may allow less: ext4 one block).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/utf16.h"

#define PFX_LEN (sizeof(SRV_STREAM_PREFIX) - 1)
#define SFX_LEN (sizeof(SRV_STREAM_SUFFIX) - 1)
#define VALUE_MAX 65536			/* XATTR_SIZE_MAX, the NUL included */

/* The stream name of an xattr name, or NULL: not a stream. */
static const char *stream_of(const char *x, size_t *len)
{
	size_t n = strlen(x);

	if (n <= PFX_LEN + SFX_LEN || strncmp(x, SRV_STREAM_PREFIX, PFX_LEN) ||
	    strcasecmp(x + n - SFX_LEN, SRV_STREAM_SUFFIX))
		return NULL;
	*len = n - PFX_LEN - SFX_LEN;
	return x + PFX_LEN;
}

/* The xattr names of fd (a buffer to free), or NULL and *err. */
static char *list_names(int fd, ssize_t *len, int *err)
{
	char *buf = NULL, *nb;
	ssize_t n;

	for (;;) {
		n = flistxattr(fd, NULL, 0);
		if (n < 0)
			goto out_err;
		nb = realloc(buf, (size_t)n + 1);
		if (!nb) {
			free(buf);
			*err = -ENOMEM;
			return NULL;
		}
		buf = nb;
		n = flistxattr(fd, buf, (size_t)n);
		if (n >= 0)
			break;
		if (errno != ERANGE)	/* else it grew meanwhile */
			goto out_err;
	}
	buf[n] = 0;
	*len = n;
	return buf;
out_err:
	*err = errno == ENOTSUP ? 0 : -errno;
	free(buf);
	return NULL;
}

int srv_stream_lookup(int fd, const char *name, char *xname, size_t cap)
{
	size_t nlen = strlen(name), slen;
	const char *s;
	char *names, *x;
	ssize_t len;
	int ret = 0;

	if (PFX_LEN + nlen + SFX_LEN >= cap)
		return -E_SMB_OBJECT_NAME_INVALID;
	snprintf(xname, cap, "%s%s%s", SRV_STREAM_PREFIX, name, SRV_STREAM_SUFFIX);
	if (fgetxattr(fd, xname, NULL, 0) >= 0)
		return 1;
	if (errno != ENODATA)
		return errno == ENOTSUP ? -E_SMB_OBJECT_NAME_INVALID : -errno;
	/* stream names are case-insensitive: one spelled otherwise */
	names = list_names(fd, &len, &ret);
	if (!names)
		return ret;
	for (x = names; x < names + len; x += strlen(x) + 1) {
		s = stream_of(x, &slen);
		if (s && slen == nlen && !strncasecmp(s, name, nlen)) {
			snprintf(xname, cap, "%s", x);
			ret = 1;
			break;
		}
	}
	free(names);
	return ret;
}

int srv_stream_make(int fd, const char *xname, bool excl)
{
	return fsetxattr(fd, xname, "", 1, excl ? XATTR_CREATE : 0) ? -errno : 0;
}

int srv_stream_size(int fd, const char *xname, uint64_t *size)
{
	ssize_t n = fgetxattr(fd, xname, NULL, 0);

	if (n < 0)
		return errno == ENODATA ? -ENOENT : -errno;
	*size = n ? (uint64_t)n - 1 : 0;
	return 0;
}

/* The value (data and NUL) into a buffer of VALUE_MAX; its data length. */
static ssize_t value_get(struct srv_open *o, uint8_t *buf)
{
	ssize_t n = fgetxattr(o->fd, o->file->stream, buf, VALUE_MAX);

	if (n < 0)
		return errno == ENODATA ? -ENOENT : -errno;
	return n ? n - 1 : 0;
}

static int value_set(struct srv_open *o, uint8_t *buf, size_t len)
{
	buf[len] = 0;
	if (!fsetxattr(o->fd, o->file->stream, buf, len + 1, XATTR_REPLACE))
		return 0;
	/* more than the file system keeps in one value: Samba's answers */
	if (errno == E2BIG)
		return -E_SMB_FILE_SYSTEM_LIMITATION;
	if (errno == ENOSPC || errno == ERANGE)
		return -ENOSPC;
	return errno == ENODATA ? -ENOENT : -errno;
}

static struct srv_open *open_of(struct store_file *sf)
{
	return container_of(sf, struct srv_open, sf);
}

static ssize_t stream_preadv(struct store_file *sf, const struct iovec *iov, int n, uint64_t off)
{
	struct srv_open *o = open_of(sf);
	uint8_t *buf = malloc(VALUE_MAX);
	ssize_t len, done = 0;
	int i;

	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&o->file->lock);
	len = value_get(o, buf);
	pthread_mutex_unlock(&o->file->lock);
	for (i = 0; len >= 0 && i < n && off < (uint64_t)len; i++) {
		size_t k = (uint64_t)len - off < iov[i].iov_len ? (size_t)((uint64_t)len - off)
							       : iov[i].iov_len;

		memcpy(iov[i].iov_base, buf + off, k);
		off += k;
		done += (ssize_t)k;
	}
	free(buf);
	return len < 0 ? len : done;
}

/* The file's lock keeps a read-modify-write whole against another. */
static ssize_t stream_pwritev(struct store_file *sf, const struct iovec *iov, int n,
			      uint64_t off, bool sync)
{
	struct srv_open *o = open_of(sf);
	uint8_t *buf = malloc(VALUE_MAX);
	size_t total = 0, end;
	ssize_t len;
	int i, ret;

	(void)sync;
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		total += iov[i].iov_len;
	/* past what any xattr value holds: Samba's answer for a stream */
	if (off >= VALUE_MAX || total >= VALUE_MAX - off) {
		free(buf);
		return -E_SMB_FILE_SYSTEM_LIMITATION;
	}
	pthread_mutex_lock(&o->file->lock);
	len = value_get(o, buf);
	if (len < 0) {
		ret = (int)len;
		goto out_unlock;
	}
	if (off > (uint64_t)len)
		memset(buf + len, 0, (size_t)off - (size_t)len);
	for (i = 0, end = (size_t)off; i < n; i++) {
		memcpy(buf + end, iov[i].iov_base, iov[i].iov_len);
		end += iov[i].iov_len;
	}
	ret = value_set(o, buf, end > (size_t)len ? end : (size_t)len);
out_unlock:
	pthread_mutex_unlock(&o->file->lock);
	free(buf);
	return ret ? ret : (ssize_t)total;
}

static int stream_truncate(struct store_file *sf, uint64_t size)
{
	struct srv_open *o = open_of(sf);
	uint8_t *buf;
	ssize_t len;
	int ret;

	if (size >= VALUE_MAX)
		return -ENOSPC;
	buf = malloc(VALUE_MAX);
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&o->file->lock);
	len = value_get(o, buf);
	if (len < 0) {
		ret = (int)len;
	} else {
		if (size > (uint64_t)len)
			memset(buf + len, 0, (size_t)size - (size_t)len);
		ret = value_set(o, buf, (size_t)size);
	}
	pthread_mutex_unlock(&o->file->lock);
	free(buf);
	return ret;
}

/* An allocation is not kept: only what lies past it goes. */
static int stream_size(struct store_file *sf, uint64_t *size)
{
	struct srv_open *o = open_of(sf);
	int ret;

	pthread_mutex_lock(&o->file->lock);
	ret = srv_stream_size(o->fd, o->file->stream, size);
	pthread_mutex_unlock(&o->file->lock);
	return ret;
}

static int stream_allocate(struct store_file *sf, uint64_t size)
{
	uint64_t cur = 0;
	int ret = stream_size(sf, &cur);

	if (ret)
		return ret;
	return size < cur ? stream_truncate(sf, size) : 0;
}

static int stream_flush(struct store_file *sf)
{
	(void)sf;
	return 0;		/* fsetxattr is synchronous in the file system */
}

/* No mapping, nothing async: a stream's value is copied whole. */
const struct store_ops srv_stream_ops = {
	.name = "stream",
	.flags = 0,
	.window = store_no_window,
	.window_put = store_no_window_put,
	.persist = store_no_persist,
	.submit = store_no_submit,
	.complete = store_no_complete,
	.preadv = stream_preadv,
	.pwritev = stream_pwritev,
	.flush = stream_flush,
	.truncate = stream_truncate,
	.allocate = stream_allocate,
	.size = stream_size,
};

static bool list_entry_add(struct wcur *w, size_t limit, long *prev, const char *name,
			   size_t nlen, uint64_t size, uint64_t alloc)
{
	char full[SRV_STREAM_XNAME_MAX + 8];
	uint8_t u[2 * sizeof(full)];
	int n;

	snprintf(full, sizeof(full), ":%.*s%s", (int)nlen, name, SRV_STREAM_SUFFIX);
	n = utf8_to_utf16le(full, u, sizeof(u));
	return n <= 0 || fscc_stream_entry_encode(w, limit, prev, u, (uint32_t)n, size, alloc);
}

int srv_stream_list(struct wcur *w, size_t limit, int fd, bool is_dir, uint64_t size,
		    uint64_t alloc)
{
	char *names, *x;
	const char *s;
	long prev = -1;
	ssize_t len, v;
	size_t slen;
	int ret = 0;

	if (!is_dir && !list_entry_add(w, limit, &prev, "", 0, size, alloc))
		return 1;
	names = list_names(fd, &len, &ret);
	if (!names)
		return ret;
	for (x = names; x < names + len; x += strlen(x) + 1) {
		s = stream_of(x, &slen);
		if (!s)
			continue;
		v = fgetxattr(fd, x, NULL, 0);
		if (v < 0)
			continue;	/* gone meanwhile */
		v = v ? v - 1 : 0;
		if (!list_entry_add(w, limit, &prev, s, slen, (uint64_t)v,
				    ((uint64_t)v + 4095) & ~(uint64_t)4095)) {
			ret = 1;
			break;
		}
	}
	free(names);
	return ret;
}

int srv_stream_rename(struct srv_open *o, const char *target, bool replace)
{
	char name[SRV_STREAM_XNAME_MAX], xnew[SRV_STREAM_XNAME_MAX];
	uint8_t *buf;
	ssize_t n;
	int ret;

	ret = fscc_stream_parse(target, name, sizeof(name));
	if (ret)
		return ret < 0 ? ret : -E_SMB_OBJECT_NAME_INVALID;
	ret = srv_stream_lookup(o->fd, name, xnew, sizeof(xnew));
	if (ret < 0)
		return ret;
	if (!strcmp(xnew, o->file->stream))
		return 0;
	if (ret && !replace)
		return -EEXIST;
	buf = malloc(VALUE_MAX);
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&o->file->lock);
	n = fgetxattr(o->fd, o->file->stream, buf, VALUE_MAX);
	if (n < 0)
		ret = -errno;
	else if (fsetxattr(o->fd, xnew, buf, (size_t)n, 0))
		ret = errno == E2BIG || errno == ERANGE ? -ENOSPC : -errno;
	else if (fremovexattr(o->fd, o->file->stream))
		ret = -errno;
	else
		ret = srv_file_stream_renamed(o->file, xnew);
	pthread_mutex_unlock(&o->file->lock);
	free(buf);
	return ret;
}

int srv_stream_remove(struct srv_share *sh, const char *path, const char *xname)
{
	int fd, ret;

	ret = store_open(&sh->root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &fd);
	if (ret)
		return ret;
	ret = fremovexattr(fd, xname) && errno != ENODATA ? -errno : 0;
	close(fd);
	return ret;
}

void srv_stream_info(struct srv_open *o, struct fscc_info *fi)
{
	uint64_t size = 0;

	if (stream_size(&o->sf, &size))
		size = 0;
	fi->end_of_file = size;
	fi->allocation_size = (size + 4095) & ~(uint64_t)4095;
	fi->directory = false;
	fi->attributes &= ~FILE_ATTRIBUTE_DIRECTORY;
	if (!fi->attributes)
		fi->attributes = FILE_ATTRIBUTE_NORMAL;
}
