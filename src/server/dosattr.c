// SPDX-License-Identifier: MIT
/*
 * DOS attributes and birth time, kept as Samba keeps them (server.h has
 * the model): user.DOSATTRIB read and written through the open file's or
 * the directory's descriptor, as the session's user; mode bits where the
 * share says so or the file system has no user xattrs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dosattr.h"
#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

/* What Samba keeps (SAMBA_ATTRIBUTES_MASK but OFFLINE), and shows. */
#define KEPT (FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | \
	      FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_ARCHIVE)
#define SHOWN (KEPT | FILE_ATTRIBUTE_OFFLINE | FILE_ATTRIBUTE_SPARSE_FILE)
#define NTTIME_MAX ((uint64_t)INT64_MAX)

static const struct srv_dos_opts samba_defaults = {
	.store = 1,
	.map_archive = 1,
	.map_hidden = 0,
	.map_system = 0,
	.map_readonly = SRV_MAP_RO_NO,
	.hide_dot = 1,
	.delete_readonly = 0,
	.case_sensitive = SRV_CASE_AUTO,
	.mangled_names = 1,
};

void srv_dos_opts_resolve(struct srv_dos_opts *share, const struct srv_dos_opts *global)
{
	int8_t *s = (int8_t *)share;
	const int8_t *g = (const int8_t *)global, *d = (const int8_t *)&samba_defaults;
	size_t i;

	for (i = 0; i < sizeof(*share); i++) {
		if (s[i] < 0)
			s[i] = g[i];
		if (s[i] < 0)
			s[i] = d[i];
	}
}

static void noxattr(struct srv_share *sh)
{
	if (!atomic_exchange(&sh->dos_noxattr_logged, true))
		log_msg(LOG_WARN, "share [%s]: a file system with no user extended attributes: "
			"DOS attributes are mapped to mode bits there, as with "
			"\"store dos attributes = no\"", sh->name);
}

/* Samba's guess without one from the file system: the earliest time. */
static uint64_t guess_btime(const struct stat *st, const struct timespec *fs)
{
	const struct timespec *c = &st->st_ctim, *m = &st->st_mtim, *a = &st->st_atim, *t;

	if (fs->tv_nsec >= 0)
		return filetime_from_unix(fs->tv_sec, fs->tv_nsec);
	t = c->tv_sec < m->tv_sec || (c->tv_sec == m->tv_sec && c->tv_nsec < m->tv_nsec) ? c : m;
	if ((a->tv_sec || a->tv_nsec) &&
	    (a->tv_sec < t->tv_sec || (a->tv_sec == t->tv_sec && a->tv_nsec < t->tv_nsec)))
		t = a;
	return filetime_from_unix(t->tv_sec, t->tv_nsec);
}

/* As Samba's dos_mode_from_sbuf: where the attributes are mode bits. */
static uint32_t from_mode(const struct srv_share *sh, int fd, const char *entry,
			  const struct stat *st)
{
	const struct srv_dos_opts *o = &sh->dos;
	uint32_t a = 0;

	if (o->map_readonly == SRV_MAP_RO_YES && !(st->st_mode & S_IWUSR))
		a |= FILE_ATTRIBUTE_READONLY;
	else if (o->map_readonly == SRV_MAP_RO_PERMS && store_access_at(fd, entry, W_OK))
		a |= FILE_ATTRIBUTE_READONLY;
	if (S_ISDIR(st->st_mode))
		return a;
	if (o->map_archive && st->st_mode & S_IXUSR)
		a |= FILE_ATTRIBUTE_ARCHIVE;
	if (o->map_system && st->st_mode & S_IXGRP)
		a |= FILE_ATTRIBUTE_SYSTEM;
	if (o->map_hidden && st->st_mode & S_IXOTH)
		a |= FILE_ATTRIBUTE_HIDDEN;
	return a;
}

struct xread {
	int fd;
	const char *entry;
	uint8_t *buf;
	ssize_t n;
};

static int xread(void *arg)
{
	struct xread *x = arg;

	x->n = store_getxattr(x->fd, x->entry, DOSATTR_XATTR, x->buf, DOSATTR_READ_MAX);
	return 0;
}

int srv_attr_get(struct srv_share *sh, int fd, const char *entry, const char *name,
		 const struct srv_ident *back, struct srv_attr *a)
{
	uint8_t blob[DOSATTR_READ_MAX];
	struct xread x = { fd, entry, blob, -ENODATA };
	struct timespec fsbtime;
	uint32_t attrib = 0;
	struct dosattr d;
	bool dir, dotdot;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = store_statx(fd, entry, &a->st, &fsbtime);
	if (ret)
		return ret;
	dir = S_ISDIR(a->st.st_mode);
	if (!name)
		name = entry;
	/* as Samba: ".." shows no more than that it is a directory */
	dotdot = name && !strcmp(name, "..");
	if (sh->dos.store && (dir || S_ISREG(a->st.st_mode)) && !dotdot) {
		xread(&x);
		if (x.n == -EACCES || x.n == -EPERM) {
			ret = srv_ident_run_self(back, xread, &x);
			if (ret < 0)
				return ret;
		}
		if (x.n == -EOPNOTSUPP)
			noxattr(sh);
		else
			a->xattr = true;
		if (x.n > 0 && !dosattr_decode(blob, (size_t)x.n, &d)) {
			a->stored = d.attrib;
			attrib = d.attrib & SHOWN;
			a->btime = d.create_time > NTTIME_MAX ? NTTIME_MAX : d.create_time;
		} else if (x.n > 0 || (x.n < 0 && x.n != -ENODATA && x.n != -EOPNOTSUPP)) {
			pr_debug("share [%s]: %s: no DOS attributes read (%s)", sh->name,
				 name ? name : "(open file)",
				 x.n > 0 ? "malformed user.DOSATTRIB" : strerror((int)-x.n));
		}
	}
	if (!a->xattr && !dotdot)
		attrib = from_mode(sh, fd, entry, &a->st);
	if (!a->btime)
		a->btime = guess_btime(&a->st, &fsbtime);
	if (sh->dos.hide_dot && name && name[0] == '.' && strcmp(name, ".") && !dotdot &&
	    !(attrib & FILE_ATTRIBUTE_HIDDEN)) {
		attrib |= FILE_ATTRIBUTE_HIDDEN;
		a->dot_hidden = true;
	}
	if (dir)
		attrib = dotdot ? FILE_ATTRIBUTE_DIRECTORY : attrib | FILE_ATTRIBUTE_DIRECTORY;
	else if (!(attrib &= ~FILE_ATTRIBUTE_DIRECTORY))
		attrib = FILE_ATTRIBUTE_NORMAL;
	a->attrib = attrib;
	return 0;
}

/* As Samba's file_set_dosmode without the xattr: mode bits of a file. */
static int set_mode(const struct srv_share *sh, int fd, const struct srv_attr *a,
		    uint32_t attrib)
{
	const struct srv_dos_opts *o = &sh->dos;
	mode_t m = a->st.st_mode & 07777, old = m;
	static const struct { size_t opt; uint32_t attr; mode_t bit; } x_bits[] = {
		{ offsetof(struct srv_dos_opts, map_archive), FILE_ATTRIBUTE_ARCHIVE, S_IXUSR },
		{ offsetof(struct srv_dos_opts, map_system), FILE_ATTRIBUTE_SYSTEM, S_IXGRP },
		{ offsetof(struct srv_dos_opts, map_hidden), FILE_ATTRIBUTE_HIDDEN, S_IXOTH },
	};
	size_t i;

	if (S_ISDIR(a->st.st_mode))
		return 0;		/* its x bits are search permission */
	for (i = 0; i < sizeof(x_bits) / sizeof(x_bits[0]); i++) {
		if (!((const int8_t *)o)[x_bits[i].opt])
			continue;
		m = attrib & x_bits[i].attr ? m | x_bits[i].bit : m & ~x_bits[i].bit;
	}
	if (attrib & FILE_ATTRIBUTE_READONLY)
		m &= (mode_t)~0222;
	else
		m |= S_IWUSR;
	if (m == old)
		return 0;
	if (fchmod(fd, m))
		return errno == EBADF ? -EACCES : -errno;	/* O_PATH: not its owner */
	return 0;
}

int srv_attr_set(struct srv_share *sh, int fd, const struct srv_attr *a, uint32_t attrib,
		 uint64_t btime)
{
	uint8_t blob[DOSATTR_V5_LEN];
	bool dir = S_ISDIR(a->st.st_mode);
	int n, ret;

	if (!attrib) {
		attrib = a->attrib & ~(a->dot_hidden ? FILE_ATTRIBUTE_HIDDEN : 0u);
	} else if (dir) {
		if (attrib & FILE_ATTRIBUTE_TEMPORARY)
			return -EINVAL;
		attrib |= FILE_ATTRIBUTE_DIRECTORY;
	}
	attrib &= KEPT;
	if (!dir)
		attrib &= ~FILE_ATTRIBUTE_DIRECTORY;
	/* 0: as it is; -1, -2: stop or resume automatic updates, none here */
	if (!btime || btime >= UINT64_MAX - 1)
		btime = a->btime;
	else if (btime > NTTIME_MAX)
		btime = NTTIME_MAX;
	if (a->xattr) {
		n = dosattr_encode(attrib, btime, blob, sizeof(blob));
		ret = n < 0 ? n : store_setxattr(fd, DOSATTR_XATTR, blob, (size_t)n);
		if (ret != -EOPNOTSUPP)
			return ret == -EPERM ? -EACCES : ret;
		noxattr(sh);
	}
	return set_mode(sh, fd, a, attrib);
}

int srv_attr_set_sparse(struct srv_share *sh, int fd, const struct srv_attr *a, bool sparse)
{
	uint8_t blob[DOSATTR_V5_LEN];
	uint32_t attrib;
	int n, ret;

	if (!sh->dos.store)
		return -E_SMB_INVALID_DEVICE_REQUEST;	/* as Samba */
	if (!a->xattr)
		return -EOPNOTSUPP;
	attrib = a->attrib & ~(a->dot_hidden ? FILE_ATTRIBUTE_HIDDEN : 0u);
	if (!!(attrib & FILE_ATTRIBUTE_SPARSE_FILE) == sparse)
		return 0;
	attrib = (attrib & KEPT & ~FILE_ATTRIBUTE_DIRECTORY) |
		 (sparse ? FILE_ATTRIBUTE_SPARSE_FILE : 0u);
	n = dosattr_encode(attrib, a->btime, blob, sizeof(blob));
	ret = n < 0 ? n : store_setxattr(fd, DOSATTR_XATTR, blob, (size_t)n);
	return ret == -EPERM ? -EACCES : ret;
}

void srv_attr_to_info(const struct srv_attr *a, uint64_t initial_alloc, struct fscc_info *fi)
{
	const struct stat *st = &a->st;
	bool dir = S_ISDIR(st->st_mode);
	uint64_t alloc = 0, size = dir ? 0 : (uint64_t)st->st_size;

	memset(fi, 0, sizeof(*fi));
	fi->t.creation = a->btime;
	fi->t.last_access = filetime_from_unix(st->st_atim.tv_sec, st->st_atim.tv_nsec);
	fi->t.last_write = filetime_from_unix(st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	/* as Samba: the change time is the write time, so it can be set */
	fi->t.change = fi->t.last_write;
	if (!dir) {
		/* as Samba: blocks, at least a sector for a file with data */
		alloc = (uint64_t)st->st_blocks * 512;
		if (!alloc && size)
			alloc = size < 512 ? size : 512;
		if (alloc < initial_alloc)
			alloc = initial_alloc;
	}
	fi->end_of_file = size;
	fi->allocation_size = alloc;
	fi->attributes = a->attrib;
	fi->nlink = (uint32_t)st->st_nlink;
	fi->file_id = st->st_ino;
	fi->directory = dir;
}
