// SPDX-License-Identifier: MIT
/*
 * File data of an open through its share's store: the DAX store (a
 * libpmem2 mapping shared by every open of the inode, durable when a
 * write returns) or the POSIX store. Also each share's choice of store
 * at start, and the device-DAX share: one namespace served as one file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server.h"
#include "util/log.h"

void srv_open_store_init(struct srv_open *o, int fd)
{
	o->fd = fd;
	o->sf.ops = &store_posix_ops;
	o->sf.fd = fd;
	o->sf.direct_fd = -1;
	o->sf.dax = NULL;
}

int srv_fstat(struct srv_open *o, struct stat *st)
{
	uint64_t size;
	int ret;

	if (fstat(o->fd, st))
		return -errno;
	if (!o->sf.ops->size)
		return 0;
	ret = o->sf.ops->size(&o->sf, &size);
	if (!ret) {
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)((size + 511) / 512);
	}
	return ret;
}

ssize_t srv_preadv(struct srv_open *o, const struct iovec *iov, int n, uint64_t off)
{
	return o->sf.ops->preadv(&o->sf, iov, n, off);
}

ssize_t srv_pwritev(struct srv_open *o, const struct iovec *iov, int n,
		    uint64_t off, bool sync)
{
	return o->sf.ops->pwritev(&o->sf, iov, n, off, sync);
}

int srv_fflush(struct srv_open *o)
{
	return o->sf.ops->flush(&o->sf);
}

int srv_ftruncate(struct srv_open *o, uint64_t size)
{
	return o->sf.ops->truncate(&o->sf, size);
}

int srv_fallocate(struct srv_open *o, uint64_t size)
{
	return o->sf.ops->allocate(&o->sf, size);
}

enum srv_zc srv_tcp_zc(struct srv_open *o, enum srv_zc allow, uint64_t off, uint32_t *len,
		       uint32_t min, bool write, void **win)
{
	struct stat st;
	uint64_t n;

	*win = NULL;
	if (allow == SRV_ZC_NONE || *len < (write ? SRV_ZC_WRITE_MIN : SRV_ZC_READ_MIN))
		return SRV_ZC_NONE;
	*win = o->sf.ops->window(&o->sf, off, *len, write);
	if (*win)
		return SRV_ZC_WINDOW;
	if (write || allow < SRV_ZC_FILE || !o->file || o->fd < 0 ||
	    !(o->sf.ops->flags & STORE_SENDFILE) || !o->share->use_sendfile)
		return SRV_ZC_NONE;
	/* EOF and errors: the copy path says them */
	if (fstat(o->fd, &st) || !S_ISREG(st.st_mode) || off >= (uint64_t)st.st_size)
		return SRV_ZC_NONE;
	n = (uint64_t)st.st_size - off;
	if (n < *len)
		*len = (uint32_t)n;
	return *len < min || *len < SRV_ZC_READ_MIN ? SRV_ZC_NONE : SRV_ZC_FILE;
}

/*
 * A device-DAX share has no file behind its name, a stream lives in an
 * extended attribute: no holes, no extents.
 */
static bool on_device(const struct srv_open *o)
{
	return !(o->sf.ops->flags & STORE_EXTENTS);
}

int srv_punch(struct srv_open *o, uint64_t off, uint64_t len)
{
	return on_device(o) ? -EOPNOTSUPP : store_punch(o->fd, off, len);
}

int srv_data_range(struct srv_open *o, uint64_t off, uint64_t *data, uint64_t *hole)
{
	if (on_device(o)) {
		*data = off;
		*hole = UINT64_MAX;
		return 1;
	}
	return store_data_range(o->fd, off, data, hole);
}

int srv_clone(struct srv_open *src, uint64_t src_off, struct srv_open *dst,
	      uint64_t dst_off, uint64_t len)
{
	if (on_device(src) || on_device(dst))
		return -EOPNOTSUPP;
	return store_clone(src->fd, src_off, dst->fd, dst_off, len);
}

static int probe_reflink(void *arg)
{
	struct srv_share *sh = arg;

	atomic_store(&sh->reflink, store_can_reflink(&sh->root) ? 1 : -1);
	return 0;
}

bool srv_share_reflinks(struct srv_share *sh, const struct srv_ident *back)
{
	if (!atomic_load(&sh->reflink))
		srv_ident_run_self(back, probe_reflink, sh);	/* as rdaxd: its temporary files */
	return atomic_load(&sh->reflink) > 0;
}

/*
 * Server-side copy. Files of a DAX share stay durable-on-answer: the
 * kernel copy is made durable at once; a device share has no file
 * behind its name, so its data is copied through the mappings.
 */
int srv_copy_range(struct srv_open *src, uint64_t src_off, struct srv_open *dst,
		   uint64_t dst_off, uint64_t len, uint64_t *copied)
{
	const size_t step = 1u << 20;
	struct iovec iov;
	uint64_t done = 0;
	bool backward;
	ssize_t n, w;
	int ret = 0;

	*copied = 0;
	/* a stream's data is no file range: copied through the buffers */
	if (!on_device(src) && !on_device(dst)) {
		ret = store_copy_range(src->fd, src_off, dst->fd, dst_off, len, copied);
		if (!ret && dst->sf.ops->flags & STORE_PERSISTENT && *copied)
			ret = store_flush(dst->fd);
		return ret;
	}
	iov.iov_base = malloc(step);
	if (!iov.iov_base)
		return -ENOMEM;
	/* overlapping ranges of one file or stream, destination above: back to front */
	backward = src->file == dst->file && dst_off > src_off && dst_off - src_off < len;
	while (done < len) {
		uint64_t chunk = len - done < step ? len - done : step;
		uint64_t at = backward ? len - done - chunk : done;

		iov.iov_len = (size_t)chunk;
		n = srv_preadv(src, &iov, 1, src_off + at);
		if (n <= 0 || (backward && (uint64_t)n < chunk)) {
			ret = n < 0 ? (int)n : 0;
			break;
		}
		iov.iov_len = (size_t)n;
		w = srv_pwritev(dst, &iov, 1, dst_off + at, true);
		if (w < 0) {
			ret = (int)w;
			break;
		}
		done += (uint64_t)w;
		if (w < n)
			break;
	}
	free(iov.iov_base);
	*copied = done;
	return done ? 0 : ret;
}

/*
 * Called with the file's shard unlocked, by every open that has data
 * access; opens of one inode race here on several workers, under the
 * file's own lock (never a process-wide one). The first maps the file
 * from its own descriptor (read-only if that is all it has); the first
 * writer makes the mapping writable. The store reopens those descriptors
 * as their users (this runs in CREATE, as the tree's identity): it gets
 * no access the kernel did not give one of them.
 */
static int attach_dax(struct srv_share *sh, struct srv_file *f, int fd)
{
	char why[256];
	struct stat st;
	int ret = 0;

	if (sh->store != SRV_STORE_DAX || f->is_dir)
		return 0;
	/* the common case: mapped already, and for writing */
	if (atomic_load_explicit(&f->dax_done, memory_order_acquire) &&
	    (!f->dax || f->dax == sh->devdax || dax_writable(f->dax)))
		return 0;
	pthread_mutex_lock(&f->dax_lock);
	if (atomic_load_explicit(&f->dax_done, memory_order_relaxed)) {
		if (f->dax && f->dax != sh->devdax) {
			ret = dax_upgrade(f->dax, fd);
			if (ret)
				log_ratelimited(LOG_WARN, "[%s] %s: DAX mapping not made writable (%s); "
						"writes go through the descriptor", sh->name, f->path,
						strerror(-ret));
			ret = 0;
		}
		goto out;
	}
	if (sh->devdax) {
		if (fstat(fd, &st))
			ret = -errno;
		else if (st.st_dev == sh->devdax_dev && st.st_ino == sh->devdax_ino)
			f->dax = sh->devdax;
		if (!ret)
			atomic_store_explicit(&f->dax_done, true, memory_order_release);
		goto out;
	}
	ret = dax_open(fd, &f->dax, why, sizeof(why));
	if (ret) {
		/* served through the POSIX store instead: still durable */
		log_ratelimited(LOG_WARN, "[%s] %s: no DAX mapping (%s), using the posix store",
				sh->name, f->path, why);
		ret = 0;
	}
	atomic_store_explicit(&f->dax_done, true, memory_order_release);
out:
	pthread_mutex_unlock(&f->dax_lock);
	return ret;
}

/*
 * A second descriptor of the file with O_DIRECT, for async transfers
 * whose offset, lengths and buffers are aligned (io_uring from the
 * bounce pool). Opened again by name, as the open's user (the kernel
 * checks it as it checked the open), and only if the name still leads
 * to the same file. -1 where the file system has no O_DIRECT (tmpfs).
 */
static int reopen_direct(struct srv_open *o, bool write)
{
	char path[4096];
	struct stat a, b;
	int fd = -1;

	if (srv_file_path(o->file, path, sizeof(path)) ||
	    store_open(&o->share->root, path, (write ? O_RDWR : O_RDONLY) | O_DIRECT, 0, &fd))
		return -1;
	if (fstat(fd, &a) || fstat(o->fd, &b) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Each twin is opened once per file, by the first open that needs it,
 * under the file's own lock; a read-only open may use the read-write
 * twin. Transfers then only read o->sf.direct_fd: no lock, no fcntl.
 */
static int direct_fd(struct srv_open *o)
{
	struct srv_file *f = o->file;
	bool write = o->access & (FILE_WRITE_DATA | FILE_APPEND_DATA);

	if (!write && atomic_load_explicit(&f->direct_done[1], memory_order_acquire) &&
	    f->direct_fd[1] >= 0)
		return f->direct_fd[1];
	if (!atomic_load_explicit(&f->direct_done[write], memory_order_acquire)) {
		pthread_mutex_lock(&f->dax_lock);
		if (!atomic_load_explicit(&f->direct_done[write], memory_order_relaxed)) {
			f->direct_fd[write] = reopen_direct(o, write);
			atomic_store_explicit(&f->direct_done[write], true, memory_order_release);
		}
		pthread_mutex_unlock(&f->dax_lock);
	}
	return f->direct_fd[write];
}

/*
 * The one place an open's store is chosen. Attributes-only opens,
 * directories and streams (bound to srv_stream_ops at their CREATE)
 * keep what they have. Runs as the open's user.
 */
int srv_open_bind_store(struct srv_open *o)
{
	struct srv_share *sh = o->share;
	struct srv_file *f = o->file;
	int ret;

	if (!f || o->is_dir || o->path_only || f->stream)
		return 0;
	ret = attach_dax(sh, f, o->fd);
	if (ret)
		return ret;
	o->sf.fd = o->fd;
	if (f->dax) {
		o->sf.dax = f->dax;
		o->sf.ops = f->dax == sh->devdax ? &store_devdax_ops : &store_dax_ops;
		return 0;
	}
	/*
	 * Data moves on the worker's ring where it has one (a TCP WRITE's
	 * store, the bounce rung's transfers); the bounce rung of an RDMA
	 * listener also moves aligned transfers with O_DIRECT.
	 */
	if (sh->rung == MEM_RUNG_BOUNCE)
		o->sf.direct_fd = direct_fd(o);
	o->sf.ops = &store_uring_ops;
	return 0;
}

void srv_file_detach_dax(struct srv_share *sh, struct srv_file *f)
{
	struct dax_stats st;
	int i;

	for (i = 0; i < 2; i++) {
		if (f->direct_fd[i] >= 0)
			close(f->direct_fd[i]);
		f->direct_fd[i] = -1;
	}
	if (f->dax && f->dax != sh->devdax) {
		dax_get_stats(f->dax, &st);
		atomic_fetch_add(&sh->dax_gone_mapped_written, st.mapped_bytes_written);
		atomic_fetch_add(&sh->dax_gone_fd_written, st.tail_bytes_written);
		dax_close(&f->dax);
	}
	f->dax = NULL;
}

/*
 * dax device = /dev/daxX.Y: the namespace is served as one fixed-size
 * file. Its name lives in a private directory the server makes (a sparse
 * placeholder of the device's size, so stat and listings need no special
 * case); opens of it read and write the device mapping.
 */
static int devdax_setup(struct srv_share *sh)
{
	char tmpl[4096], why[256], *base;
	const char *rundir = getenv("RUNTIME_DIRECTORY");
	struct stat st, dev_st;
	int fd, pfd, ret;

	fd = open(sh->dax_device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		srv_conf_error("share [%s]: dax device = %s: %s\n", sh->name,
			sh->dax_device, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
		srv_conf_error("share [%s]: dax device = %s: not a device-DAX character device\n",
			sh->name, sh->dax_device);
		close(fd);
		return -EINVAL;
	}
	dev_st = st;
	ret = dax_open(fd, &sh->devdax, why, sizeof(why));
	close(fd);
	if (ret) {
		srv_conf_error("share [%s]: dax device = %s: %s\n", sh->name,
			sh->dax_device, why);
		return ret;
	}
	if (!sh->dax_name[0]) {
		base = strrchr(sh->dax_device, '/');
		snprintf(sh->dax_name, sizeof(sh->dax_name), "%s", base ? base + 1 : sh->dax_device);
	}
	snprintf(tmpl, sizeof(tmpl), "%s/rdaxd-%s-XXXXXX", rundir && *rundir ? rundir : "/tmp",
		 sh->name);
	if (!mkdtemp(tmpl)) {
		ret = -errno;
		srv_conf_error("share [%s]: %s: %s\n", sh->name, tmpl, strerror(errno));
		goto out_close;
	}
	snprintf(sh->path, sizeof(sh->path), "%s", tmpl);
	sh->devdax_rundir = true;
	ret = store_root_open(sh->path, &sh->root);
	if (ret)
		goto out_rmdir;
	/* users reach the device as its node lets them: owner and mode */
	if (chmod(sh->path, 0755)) {
		ret = -errno;
		goto out_root;
	}
	pfd = openat(sh->root.fd, sh->dax_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (pfd < 0) {
		ret = -errno;
		srv_conf_error("share [%s]: dax file name %s: %s\n", sh->name,
			sh->dax_name, strerror(errno));
		goto out_root;
	}
	if (ftruncate(pfd, (off_t)dax_size(sh->devdax)) ||
	    fchown(pfd, dev_st.st_uid, dev_st.st_gid) ||
	    fchmod(pfd, dev_st.st_mode & 07777) || fstat(pfd, &st)) {
		ret = -errno;
		close(pfd);
		goto out_unlink;
	}
	close(pfd);
	sh->devdax_dev = st.st_dev;
	sh->devdax_ino = st.st_ino;
	sh->store = SRV_STORE_DAX;
	snprintf(sh->store_why, sizeof(sh->store_why),
		 "device DAX %s (%llu MiB) served as %s", sh->dax_device,
		 (unsigned long long)(dax_size(sh->devdax) >> 20), sh->dax_name);
	return 0;
out_unlink:
	unlinkat(sh->root.fd, sh->dax_name, 0);
out_root:
	store_root_close(&sh->root);
out_rmdir:
	rmdir(sh->path);
	sh->devdax_rundir = false;
out_close:
	dax_close(&sh->devdax);
	return ret;
}

void srv_store_release(struct srv_share *sh)
{
	if (sh->devdax_rundir) {
		if (sh->root.fd >= 0)
			unlinkat(sh->root.fd, sh->dax_name, 0);
		rmdir(sh->path);
		sh->devdax_rundir = false;
	}
	dax_close(&sh->devdax);
}

int srv_store_select(struct srv_share *sh)
{
	char why[192];
	int ret;

	if (sh->dax_device[0])
		return devdax_setup(sh);
	if (sh->store_want == SRV_STORE_POSIX) {
		sh->store = SRV_STORE_POSIX;
		snprintf(sh->store_why, sizeof(sh->store_why), "store = posix");
		return 0;
	}
	ret = dax_probe(sh->root.fd, why, sizeof(why));
	if (!ret) {
		sh->store = SRV_STORE_DAX;
		snprintf(sh->store_why, sizeof(sh->store_why), "%s", why);
		return 0;
	}
	if (sh->store_want == SRV_STORE_DAX) {
		srv_conf_error("share [%s]: store = dax, but %s: %s\n", sh->name,
			sh->path, why);
		return ret == -EOPNOTSUPP ? -EINVAL : ret;
	}
	sh->store = SRV_STORE_POSIX;
	snprintf(sh->store_why, sizeof(sh->store_why), "not DAX: %s", why);
	return 0;
}
