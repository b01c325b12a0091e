// SPDX-License-Identifier: MIT
/*
 * SMB3 POSIX extensions (docs/posix.md): POSIX pathnames, the POSIX view
 * of a file (mode, owner and group as S-1-22 Unix SIDs, links), and
 * symlinks and special files as reparse points, kept on disk as what
 * they are. Codecs are in proto/posix.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proto/ntstatus.h"
#include "proto/posix.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"
#include "util/utf16.h"

#define AUTH_UNIX 22

static void unix_sid(struct sid *s, uint32_t domain, uint32_t id)
{
	uint32_t sub[2] = { domain, id };

	sid_make(s, AUTH_UNIX, 2, sub);
}

bool srv_posix_on(const struct srv_req *req)
{
	return req->conn->posix && req->tree && req->tree->share->posix;
}

void srv_posix_info(const struct stat *st, struct posix_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->nlink = (uint32_t)st->st_nlink;
	pi->mode = st->st_mode & POSIX_PERM_MASK;
	pi->ino = st->st_ino;
	pi->dev = (uint32_t)st->st_dev;
	if (S_ISLNK(st->st_mode))
		pi->reparse_tag = IO_REPARSE_TAG_SYMLINK;
	else if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		pi->reparse_tag = IO_REPARSE_TAG_NFS;
	unix_sid(&pi->owner, 1, st->st_uid);
	unix_sid(&pi->group, 2, st->st_gid);
}

void srv_posix_attrs(const struct stat *st, struct fscc_info *fi)
{
	if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
		return;
	fi->attributes &= ~FILE_ATTRIBUTE_NORMAL;
	fi->attributes |= FILE_ATTRIBUTE_REPARSE_POINT;
}

/*
 * A POSIX open's name (POSIX-SMB2 2.2.13: "/" separates, "\" and ":" are
 * characters): no empty or ".." components, "." ones dropped.
 */
int srv_path_posix_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap)
{
	int ret;

	ret = utf16le_to_utf8(name, len, out, cap);
	if (ret == -E2BIG)
		return -ENAMETOOLONG;
	if (ret < 0)
		return -E_SMB_OBJECT_NAME_INVALID;
	return srv_path_tidy(out, true);
}

/* A link's target as the wire carries it: UTF-16LE with "\" separators. */
static int target_to_wire(const char *target, uint8_t *out, size_t cap)
{
	int n, i;

	n = utf8_to_utf16le(target, out, cap);
	if (n < 0)
		return n;
	for (i = 0; i < n; i += 2)
		if (out[i] == '/' && !out[i + 1])
			out[i] = '\\';
	return n;
}

static int read_target(int fd, char *buf, size_t cap)
{
	ssize_t n = readlinkat(fd, "", buf, cap - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= cap - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	return 0;
}

int srv_posix_stopped_on_symlink(struct srv_req *req, const char *path)
{
	struct srv_share *sh = req->tree->share;
	uint8_t t16[POSIX_TARGET16_MAX + 2];
	char target[4096];
	bool ctx = req->conn->dialect >= SMB2_DIALECT_311;
	size_t start;
	int fd, n, ret;

	ret = store_open(&sh->root, path, O_PATH | O_NOFOLLOW, 0, &fd);
	if (ret)
		return ret;
	ret = read_target(fd, target, sizeof(target));
	close(fd);
	if (ret)
		return ret;
	n = target_to_wire(target, t16, sizeof(t16));
	if (n < 0 || n > POSIX_TARGET16_MAX)
		return -ELOOP;		/* no room for it: the status alone */
	ret = srv_req_room(req, 64 + 2 * (size_t)n);
	if (ret)
		return ret;
	/* the error response: its 8-byte header, then the data */
	start = req->w.off;
	wcur_le16(&req->w, 9);
	wcur_u8(&req->w, ctx ? 1 : 0);
	wcur_u8(&req->w, 0);
	wcur_le32(&req->w, 0);
	symlink_err_encode(&req->w, ctx, t16, (uint32_t)n, 0);
	if (req->w.err)
		return -ELOOP;
	put_le32(req->w.p + start + 4, (uint32_t)(req->w.off - start - 8));
	req->keep_body = true;
	return -ELOOP;
}

int srv_reparse_get(struct srv_open *o, struct wcur *d)
{
	uint8_t t16[POSIX_TARGET16_MAX + 2];
	char target[4096];
	struct stat st;
	uint64_t type;
	int n, ret;

	if (o->symlink) {
		ret = read_target(o->fd, target, sizeof(target));
		if (ret)
			return ret;
		n = target_to_wire(target, t16, sizeof(t16));
		if (n < 0 || n > POSIX_TARGET16_MAX)
			return -ENAMETOOLONG;
		if (d->cap - d->off < 20 + 2 * (size_t)n)
			return -E_SMB_BUFFER_TOO_SMALL;
		reparse_symlink_encode(d, t16, (uint32_t)n);
		return 0;
	}
	if (!o->path_only || fstat(o->fd, &st))
		return -E_SMB_NOT_A_REPARSE_POINT;
	if (S_ISFIFO(st.st_mode))
		type = NFS_SPECFILE_FIFO;
	else if (S_ISSOCK(st.st_mode))
		type = NFS_SPECFILE_SOCK;
	else if (S_ISCHR(st.st_mode))
		type = NFS_SPECFILE_CHR;
	else if (S_ISBLK(st.st_mode))
		type = NFS_SPECFILE_BLK;
	else
		return -E_SMB_NOT_A_REPARSE_POINT;
	if (d->cap - d->off < 24)
		return -E_SMB_BUFFER_TOO_SMALL;
	reparse_nfs_encode(d, type, major(st.st_rdev), minor(st.st_rdev));
	return 0;
}

static const struct {
	uint64_t type;
	mode_t mode;
} special_types[] = {
	{ NFS_SPECFILE_FIFO, S_IFIFO },
	{ NFS_SPECFILE_SOCK, S_IFSOCK },
	{ NFS_SPECFILE_CHR, S_IFCHR },
	{ NFS_SPECFILE_BLK, S_IFBLK },
};

/*
 * FSCTL_SET_REPARSE_POINT on a share with the POSIX extensions: the
 * empty file of the open becomes the symlink or special file the buffer
 * describes, put in its place on disk (the open keeps the old inode).
 * Targets stay beneath the share: relative, never climbing above it.
 */
int srv_reparse_set(struct srv_req *req, struct srv_open *o, const uint8_t *p, size_t len)
{
	struct srv_share *sh = o->share;
	struct reparse_data rd;
	char path[4096], target[4096];
	struct stat st;
	unsigned int i;
	int n, ret;

	if (!sh->posix || o->file->stream || o->is_dir || o->symlink)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (!(o->access & (FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES)))
		return -EACCES;
	ret = reparse_decode(p, len, &rd);
	if (ret == -EOPNOTSUPP)
		return -EOPNOTSUPP;
	if (ret)
		return -EINVAL;
	if (fstat(o->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size)
		return -EINVAL;		/* only a new, empty file changes kind */
	if (srv_file_unlinked(o->file))
		return -ENOENT;
	ret = srv_file_path(o->file, path, sizeof(path));
	if (ret)
		return ret;
	if (rd.type == NFS_SPECFILE_LNK) {
		if (rd.tlen > POSIX_TARGET16_MAX)
			return -ENAMETOOLONG;
		n = utf16le_to_utf8(rd.target, rd.tlen, target, sizeof(target));
		if (n == -E2BIG)
			return -ENAMETOOLONG;
		if (n < 0 || memchr(target, 0, (size_t)n))
			return -EINVAL;
		for (i = 0; target[i]; i++)
			if (target[i] == '\\')
				target[i] = '/';
		if (posix_target_check(path, target)) {
			pr_info("share [%s]: %s: symlink to \"%s\" refused (leaves the share)",
				sh->name, path, target);
			return -EACCES;
		}
		ret = store_symlink(&sh->root, target, path, true);
	} else {
		if (!sh->special_files)
			return -EACCES;
		for (i = 0; special_types[i].type != rd.type; i++)
			;
		ret = store_mknod(&sh->root, path, special_types[i].mode | (st.st_mode & 0777),
				  makedev(rd.major, rd.minor), true);
	}
	if (ret == -EPERM)
		ret = -EACCES;
	if (!ret)
		srv_dir_lease_break(req->conn->srv, sh, path, o);
	return ret;
}
