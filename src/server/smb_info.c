// SPDX-License-Identifier: MIT
/* QUERY_INFO, SET_INFO and QUERY_DIRECTORY. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "proto/posix.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"
#include "util/utf16.h"

#define NAME16_MAX (4096 * 2 + 2)
#define QD_MAX_OUTPUT SMB2_MAX_IO_SIZE
#define EA_QUERY_MAX (256u << 10)

/* The last component of a share-relative path (for "hide dot files"). */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The DOS view of an open's file, as the request's identity. */
static int open_attr(struct srv_req *req, struct srv_open *o, struct srv_attr *a)
{
	char path[4096];
	int ret;

	ret = srv_file_path(o->file, path, sizeof(path));
	if (ret)
		return ret;
	ret = srv_attr_get(o->share, o->fd, NULL, base_name(path), req->tree->ident, a);
	if (!ret)
		srv_wt_attr(o, &a->st);
	return ret;
}

static int open_info(struct srv_req *req, struct srv_open *o, struct fscc_info *fi)
{
	struct srv_attr a;
	int ret;

	ret = open_attr(req, o, &a);
	if (ret)
		return ret;
	srv_attr_to_info(&a, o->initial_alloc, fi);
	if (o->file->stream)
		srv_stream_info(o, fi);
	fi->access = o->access;
	fi->position = o->position;
	fi->mode = o->mode;
	fi->delete_pending = srv_file_delete_pending(o->file);
	return 0;
}

/*
 * Encode an info buffer after the 8-byte QUERY_INFO body: truncated data
 * gets STATUS_BUFFER_OVERFLOW, a buffer below the class's fixed size
 * STATUS_INFO_LENGTH_MISMATCH.
 */
static int finish_out_buf(struct srv_req *req, struct wcur *d, uint32_t limit,
			  uint32_t min)
{
	uint32_t len = (uint32_t)d->off;
	int ret = 0;

	if (limit < min)
		return -E_SMB_INFO_LENGTH_MISMATCH;
	if (len > limit) {
		len = limit;
		req->keep_body = true;
		ret = -E_SMB_BUFFER_OVERFLOW;
	}
	smb2_out_buf_rsp_encode(&req->w, len);
	req->w.off += len;
	return ret;
}

/* A long name's 8.3 name in fi (the Both directory classes); none for an 8.3 name. */
static void short_name_info(const struct srv_share *sh, const char *name,
			    struct fscc_info *fi)
{
	char sn[13];
	int n;

	fi->short_len = 0;
	if (!sh->dos.mangled_names || !strcmp(name, ".") || !strcmp(name, "..") ||
	    !srv_name_short(name, sn))
		return;
	n = utf8_to_utf16le(sn, fi->short_name, sizeof(fi->short_name));
	if (n > 0)
		fi->short_len = (uint8_t)n;
}

/* ":NAME" of a stream's open after path, its name as the file keeps it */
static int stream_suffix(struct srv_file *f, char *path, size_t cap)
{
	size_t n = strlen(path), pfx = strlen(SRV_STREAM_PREFIX), sfx = strlen(SRV_STREAM_SUFFIX);
	size_t len;
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	len = strlen(f->stream);
	if (len < pfx + sfx || n + 1 + len - pfx - sfx >= cap) {
		ret = -ENAMETOOLONG;
	} else {
		path[n] = ':';
		memcpy(path + n + 1, f->stream + pfx, len - pfx - sfx);
		path[n + 1 + len - pfx - sfx] = 0;
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* A named pipe: no name, no size; delete pending as Samba shows it. */
static int query_pipe(const struct smb2_query_info_req *r, struct wcur *d)
{
	struct fscc_info fi = {
		.allocation_size = 4096,
		.attributes = FILE_ATTRIBUTE_NORMAL,
		.nlink = 1,
		.delete_pending = true,
	};

	if (r->info_type != SMB2_0_INFO_FILE ||
	    (r->info_class != FileStandardInformation &&
	     r->info_class != FileBasicInformation))
		return -E_SMB_INVALID_INFO_CLASS;
	return fscc_file_info_encode(d, r->info_class, &fi, NULL, 0);
}

/* What a class needs of the open ([MS-SMB2] 3.3.5.20.1). */
static uint32_t query_file_access(int cls)
{
	switch (cls) {
	case FileBasicInformation:
	case FileAllInformation:
	case FileNetworkOpenInformation:
	case FileAttributeTagInformation:
		return FILE_READ_ATTRIBUTES;
	case FileFullEaInformation:
		return FILE_READ_EA;
	default:
		return 0;
	}
}

/*
 * FilePosixInformation (0x64): on a connection that negotiated the POSIX
 * extensions, on every share (it only reads; librdax asks for it on all).
 */
static int query_posix(struct srv_req *req, struct srv_open *o,
		       const struct smb2_query_info_req *r, struct wcur *d)
{
	struct posix_info pi;
	struct fscc_info fi;
	struct srv_attr a;
	int ret;

	if (!req->conn->posix)
		return -E_SMB_INVALID_INFO_CLASS;
	if (!(o->access & FILE_READ_ATTRIBUTES))
		return -EACCES;
	if (r->output_len < POSIX_INFO_FIXED)
		return -E_SMB_INFO_LENGTH_MISMATCH;
	ret = open_attr(req, o, &a);
	if (ret)
		return ret;
	srv_attr_to_info(&a, o->initial_alloc, &fi);
	if (o->file->stream)
		srv_stream_info(o, &fi);
	srv_posix_attrs(&a.st, &fi);
	srv_posix_info(&a.st, &pi);
	posix_info_encode(d, &fi, &pi);
	return 0;
}

static int query_file(struct srv_req *req, struct srv_open *o,
		      const struct smb2_query_info_req *r, struct wcur *d)
{
	uint8_t name16[NAME16_MAX];
	char path[4096];
	struct fscc_info fi;
	int ret, nlen = 0;

	if ((o->access & query_file_access(r->info_class)) != query_file_access(r->info_class))
		return -EACCES;
	if (r->info_class == FilePosixInformation)
		return query_posix(req, o, r, d);
	ret = open_info(req, o, &fi);
	if (ret)
		return ret;
	if ((r->info_class == FileEaInformation || r->info_class == FileAllInformation) &&
	    !o->file->stream)
		fi.ea_size = srv_ea_size(o->fd);
	if (r->info_class == FileFullEaInformation) {
		/* a stream has none; its file's are the file's (as Samba) */
		if (o->file->stream)
			return -E_SMB_NO_EAS_ON_FILE;
		return srv_ea_query(d, r->output_len, o->fd);
	}
	if (r->info_class == FileStreamInformation) {
		struct stat st;

		/* the base file's streams; not from a stream's open (as Samba) */
		if (o->file->stream)
			return -EINVAL;
		if (o->path_only)
			return -EACCES;
		if (r->output_len < fscc_file_info_min_size(FileStreamInformation))
			return -E_SMB_INFO_LENGTH_MISMATCH;
		if (fstat(o->fd, &st))
			return -errno;
		return srv_stream_list(d, r->output_len, o->fd, S_ISDIR(st.st_mode),
				       (uint64_t)st.st_size, (uint64_t)st.st_blocks * 512);
	}
	if (r->info_class == FileAllInformation ||
	    r->info_class == FileNameInformation ||
	    r->info_class == FileNormalizedNameInformation) {
		bool normalized = r->info_class == FileNormalizedNameInformation;

		/* SMB 3.1.1 only; share-relative, without the leading '\' */
		if (normalized && req->conn->dialect < SMB2_DIALECT_311)
			return -EOPNOTSUPP;
		ret = srv_file_path(o->file, path, sizeof(path));
		if (!ret && normalized && o->file->stream)
			ret = stream_suffix(o->file, path, sizeof(path));
		if (ret)
			return ret;
		nlen = srv_path_to_utf16(path, !normalized, name16, sizeof(name16));
		if (nlen < 0)
			return nlen;
	} else if (r->info_class == FileAlternateNameInformation) {
		ret = srv_file_path(o->file, path, sizeof(path));
		if (ret)
			return ret;
		char sn[13];

		/* an 8.3 name is its own; a long one has one if the share makes them */
		if (!*path || (!srv_name_is_8_3(base_name(path)) && !o->share->dos.mangled_names))
			return -E_SMB_OBJECT_NAME_NOT_FOUND;
		srv_name_short(base_name(path), sn);
		nlen = srv_path_to_utf16(sn, false, name16, sizeof(name16));
		if (nlen < 0)
			return nlen;
	}
	return fscc_file_info_encode(d, r->info_class, &fi, name16, (uint32_t)nlen);
}

static int query_fs(struct srv_req *req, const struct smb2_query_info_req *r,
		    struct wcur *d)
{
	struct srv_share *sh = req->tree->share;
	struct fscc_fsinfo fs = { 0 };
	uint8_t label[162];
	struct statvfs sv;
	int ret, n;

	if (r->info_class == FileFsPosixInformation && !req->conn->posix)
		return -E_SMB_INVALID_INFO_CLASS;
	ret = store_statvfs(&sh->root, &sv);
	if (ret)
		return ret;
	if (r->info_class == FileFsPosixInformation) {
		struct posix_fsinfo px = {
			.optimal_io = (uint32_t)sv.f_bsize,
			.block_size = (uint32_t)sv.f_frsize,
			.blocks = sv.f_blocks,
			.bfree = sv.f_bfree,
			.bavail = sv.f_bavail,
			.files = sv.f_files,
			.ffree = sv.f_ffree,
			.fsid = sv.f_fsid,
		};

		if (r->output_len < POSIX_FS_INFO_LEN)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		posix_fs_info_encode(d, &px);
		return 0;
	}
	n = utf8_to_utf16le(sh->name, label, sizeof(label));
	fs.label = label;
	fs.label_len = n > 0 ? (uint32_t)n : 0;
	fs.bytes_per_sector = 512;
	fs.sectors_per_unit = (uint32_t)(sv.f_frsize / 512 ? sv.f_frsize / 512 : 1);
	fs.total_units = (uint64_t)sv.f_blocks * sv.f_frsize /
			 ((uint64_t)fs.sectors_per_unit * 512);
	fs.avail_units = (uint64_t)sv.f_bavail * sv.f_frsize /
			 ((uint64_t)fs.sectors_per_unit * 512);
	fs.serial = (uint32_t)(sh->root.dev ^ (sh->root.dev >> 32));
	fs.created = req->conn->srv->start_time;
	fs.max_name_len = (uint32_t)sv.f_namemax;
	if (r->info_class == FileFsAttributeInformation)
		fs.block_refcounting = srv_share_reflinks(sh, req->tree->ident);
	return fscc_fs_info_encode(d, r->info_class, &fs);
}

#define SD_QUERY_MAX 16384

/* [MS-SMB2] 3.3.5.20.3: too short a buffer gets the size needed. */
static int query_security(struct srv_req *req, struct srv_open *o,
			  const struct smb2_query_info_req *r)
{
	size_t cap = r->output_len < SD_QUERY_MAX ? r->output_len : SD_QUERY_MAX;
	uint8_t need[4];
	size_t len;
	int ret;

	ret = srv_req_room(req, 8 + SD_QUERY_MAX);
	if (ret)
		return ret;
	ret = srv_sd_query(req, o, r->additional, req->w.p + req->w.off + 8, cap, &len);
	if (ret)
		return ret;
	if (len > r->output_len) {
		put_le32(need, (uint32_t)len);
		smb2_error_rsp_encode(&req->w, need, 4);
		req->keep_body = true;
		return -E_SMB_BUFFER_TOO_SMALL;
	}
	if (len > cap)
		return -EIO;
	smb2_out_buf_rsp_encode(&req->w, (uint32_t)len);
	req->w.off += len;
	return 0;
}

int smb_query_info(struct srv_req *req)
{
	struct smb2_query_info_req r;
	struct srv_open *o;
	struct wcur d;
	uint32_t min, cap;
	int ret;

	if (smb2_query_info_req_decode(req->pdu, req->len, &r))
		return -EINVAL;
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (r.output_len > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	if (!srv_open_takes_info(o, r.info_type))
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (r.info_type == SMB2_0_INFO_SECURITY)
		return query_security(req, o, &r);
	cap = NAME16_MAX + 512;
	if (r.info_type == SMB2_0_INFO_FILE && r.info_class == FileFullEaInformation)
		cap = r.output_len > EA_QUERY_MAX ? EA_QUERY_MAX : r.output_len;
	ret = srv_req_room(req, 8 + cap);
	if (ret)
		return ret;
	wcur_init(&d, req->w.p + req->w.off + 8, cap);
	if (o->pipe) {
		ret = query_pipe(&r, &d);
		if (ret)
			return ret;
		return finish_out_buf(req, &d, r.output_len,
				      fscc_file_info_min_size(r.info_class));
	}
	switch (r.info_type) {
	case SMB2_0_INFO_FILE:
		ret = query_file(req, o, &r, &d);
		min = fscc_file_info_min_size(r.info_class);
		if (ret == 1) {
			/* whole entries that fit (FileStreamInformation) */
			if (d.err)
				return -EIO;
			finish_out_buf(req, &d, r.output_len, min);
			req->keep_body = true;
			return -E_SMB_BUFFER_OVERFLOW;
		}
		break;
	case SMB2_0_INFO_FILESYSTEM:
		ret = query_fs(req, &r, &d);
		min = fscc_fs_info_min_size(r.info_class);
		break;
	case SMB2_0_INFO_QUOTA:
		/* no quotas: no entries, as Samba on a file system without them */
		min = 0;
		break;
	case SMB2_0_INFO_SECURITY:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (d.err)
		return -EIO;
	return finish_out_buf(req, &d, r.output_len, min);
}

/* ---- SET_INFO ---- */

/*
 * FileBasicInformation, in Samba's order: the attributes (0: as they
 * are; TEMPORARY on a directory: STATUS_INVALID_PARAMETER), then the
 * times. CreationTime is kept with the attributes; ChangeTime cannot be
 * set (it is the write time, as Samba answers it).
 */
static int set_basic(struct srv_req *req, struct srv_open *o, const struct smb2_buf *b)
{
	struct timespec ts[2], *pa = NULL, *pm = NULL;
	uint64_t ctime, atime, mtime;
	struct srv_attr a;
	uint32_t attrs;
	int64_t sec;
	long nsec;
	int ret;

	if (b->len < 36)
		return -E_SMB_INFO_LENGTH_MISMATCH;
	if (!(o->access & FILE_WRITE_ATTRIBUTES))
		return -EACCES;
	ctime = get_le64(b->p);
	atime = get_le64(b->p + 8);
	mtime = get_le64(b->p + 16);
	attrs = get_le32(b->p + 32);
	ret = open_attr(req, o, &a);
	if (ret)
		return ret;
	if (attrs) {
		attrs = o->is_dir ? attrs | FILE_ATTRIBUTE_DIRECTORY
				  : attrs & ~FILE_ATTRIBUTE_DIRECTORY;
		if (attrs == a.attrib)
			attrs = 0;
	}
	/* 0: leave alone; -1 / -2: stop / resume automatic updates */
	if (ctime >= UINT64_MAX - 1)
		ctime = 0;
	if (attrs || ctime) {
		ret = srv_attr_set(o->share, o->fd, &a, attrs, ctime);
		if (ret)
			return ret;
	}
	if (atime && atime < UINT64_MAX - 1) {
		filetime_to_unix(atime > INT64_MAX ? INT64_MAX : atime, &sec, &nsec);
		ts[0].tv_sec = sec;
		ts[0].tv_nsec = nsec;
		pa = &ts[0];
	}
	if (mtime && mtime < UINT64_MAX - 1) {
		filetime_to_unix(mtime > INT64_MAX ? INT64_MAX : mtime, &sec, &nsec);
		ts[1].tv_sec = sec;
		ts[1].tv_nsec = nsec;
		pm = &ts[1];
	}
	if (pa || pm) {
		ret = store_set_times(o->fd, pa, pm);
		if (ret)
			return ret;
	}
	/* a write time set sticks; setting anything else moves a pending one */
	if (pm)
		srv_wt_set(o, pm);
	else
		srv_wt_flush(o);
	return 0;
}

static int dir_is_empty(int fd)
{
	struct store_dir *d;
	const char *name;
	int ret;

	ret = store_dir_open(fd, &d);
	if (ret)
		return ret;
	while ((ret = store_dir_next(d, &name)) == 1)
		if (strcmp(name, ".") && strcmp(name, ".."))
			break;
	store_dir_close(&d);
	return ret == 0 ? 1 : ret == 1 ? 0 : ret;
}

/* FileDispositionInformationEx ([MS-FSCC] 2.4.12) */
#define FILE_DISPOSITION_DELETE 0x01u
#define FILE_DISPOSITION_POSIX_SEMANTICS 0x02u
#define FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE 0x10u
#define FILE_DISPOSITION_KNOWN 0x1fu

/* FileRenameInformationEx ([MS-FSCC] FILE_RENAME_INFORMATION_EX) */
#define FILE_RENAME_REPLACE_IF_EXISTS 0x01u
#define FILE_RENAME_POSIX_SEMANTICS 0x02u

/*
 * flags as FileDispositionInformationEx's. POSIX semantics (on a POSIX
 * open only, else the flag is ignored): the name goes when this open
 * closes, whatever other opens are left; they keep working on the
 * nameless file (as NTFS; plain deletes wait for the last close).
 */
static int set_disposition(struct srv_req *req, struct srv_open *o, uint32_t flags)
{
	bool del = flags & FILE_DISPOSITION_DELETE;
	bool ignore_ro = flags & FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE;
	struct srv_attr a;
	int ret;

	/* as Samba: a READONLY file cannot be deleted, whatever the access */
	if (del && !ignore_ro && !o->share->dos.delete_readonly) {
		ret = open_attr(req, o, &a);
		if (ret)
			return ret;
		if (a.attrib & FILE_ATTRIBUTE_READONLY)
			return -E_SMB_CANNOT_DELETE;
	}
	if (!(o->access & DELETE_ACCESS))
		return -EACCES;
	if (del && o->is_dir) {
		ret = dir_is_empty(o->fd);
		if (ret < 0)
			return ret;
		if (!ret)
			return -ENOTEMPTY;
	}
	if (o->posix && !o->file->stream)
		o->posix_delete = del && flags & FILE_DISPOSITION_POSIX_SEMANTICS;
	return srv_file_set_delete(o->file, del, o->ident);
}

static int target_path(const struct smb2_buf *b, char *out, size_t cap)
{
	uint32_t nlen;

	if (b->len < 20)
		return -E_SMB_INFO_LENGTH_MISMATCH;
	if (get_le64(b->p + 8))		/* RootDirectory must be 0 for SMB2 */
		return -EINVAL;
	nlen = get_le32(b->p + 16);
	if (!range_ok(20, nlen, b->len) || !nlen)
		return -EINVAL;
	return srv_path_from_utf16(b->p + 20, nlen, out, cap);
}

/*
 * A target on a case-insensitive share: its directories as they are, and
 * its name when that is another file's in another case; when it is the
 * renamed file itself, the new case is kept (a rename that changes case).
 */
static int target_resolve(struct srv_open *o, char *to, size_t cap)
{
	char res[4096], from[4096];
	const char *base;
	char *rbase;
	int ret;

	if (strlen(to) >= sizeof(res))
		return -ENAMETOOLONG;
	strcpy(res, to);
	ret = srv_name_resolve(o->share, res, sizeof(res));
	if (ret || !strcmp(res, to))
		return ret;
	if (!srv_file_path(o->file, from, sizeof(from)) && !strcmp(res, from)) {
		base = base_name(to);
		rbase = (char *)base_name(res);
		if ((size_t)(rbase - res) + strlen(base) >= sizeof(res))
			return -ENAMETOOLONG;
		strcpy(rbase, base);
	}
	if (strlen(res) >= cap)
		return -ENAMETOOLONG;
	strcpy(to, res);
	return 0;
}

/* A stream renamed to ":NEW[:$DATA]" of the same file. */
static int rename_stream(struct srv_open *o, const struct smb2_buf *b, bool link)
{
	char target[SRV_STREAM_XNAME_MAX * 3];
	uint32_t nlen;
	int n;

	if (link || !o->file->stream)
		return -EINVAL;		/* a file to a stream: not done (Samba: neither) */
	if (b->len < 20 || get_le64(b->p + 8))
		return -EINVAL;
	nlen = get_le32(b->p + 16);
	if (!range_ok(20, nlen, b->len) || !nlen)
		return -EINVAL;
	n = utf16le_to_utf8(b->p + 20, nlen, target, sizeof(target));
	if (n < 0 || target[0] != ':')
		return n == -E2BIG || n >= 0 ? -E_SMB_OBJECT_NAME_INVALID : -EINVAL;
	return srv_stream_rename(o, target + 1, b->p[0]);
}

/* Others' handle leases break before a rename under a lease goes on. */
static int rename_wait_handle_leases(struct srv_req *req, struct srv_open *o)
{
	struct srv *srv = req->conn->srv;
	struct srv_file *f = o->file;
	struct srv_breaks b;
	int ret = 0;

	if (!f || !o->lease)
		return 0;
	srv_breaks_init(&b);
	pthread_mutex_lock(&f->lock);
	if (srv_oplock_rename_locked(srv, o, &b))
		ret = srv_async_wait(req, f, SRV_WAIT_BREAK) ?: SRV_PENDING;
	pthread_mutex_unlock(&f->lock);
	srv_breaks_send(srv, &b);
	return ret;
}

/*
 * FileRenameInformation, FileLinkInformation, FileRenameInformationEx
 * (flags: the first byte is ReplaceIfExists, or all four bytes Flags).
 * Replacing a file someone holds open is ACCESS_DENIED (as Windows and
 * Samba), unless POSIX semantics on a POSIX open ask for it: the opens
 * of the file replaced keep it, nameless.
 */
static int set_rename(struct srv_req *req, struct srv_open *o, const struct smb2_buf *b,
		      bool link, bool ex)
{
	struct srv_share *sh = o->share;
	char to[4096], from[4096];
	bool replace, posix = false;
	struct stat old;
	bool had_old = false;
	int ret;

	if (ex) {
		if (b->len < 20)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		replace = get_le32(b->p) & FILE_RENAME_REPLACE_IF_EXISTS;
		posix = o->posix && get_le32(b->p) & FILE_RENAME_POSIX_SEMANTICS;
	} else {
		replace = b->len && b->p[0];
	}

	if ((!(o->access & DELETE_ACCESS) && !link) || sh->devdax)
		return -EACCES;
	if (o->file->stream || (b->len >= 22 && b->p[20] == ':' && !b->p[21]))
		return rename_stream(o, b, link);
	ret = target_path(b, to, sizeof(to));
	if (!ret && !o->posix)
		ret = target_resolve(o, to, sizeof(to));
	if (ret)
		return ret;
	if (!*to)
		return -E_SMB_OBJECT_NAME_INVALID;
	ret = srv_file_rename_target_ok(sh, o, to);
	if (ret)
		return ret;
	/* the target directory's kept DACL may refuse the new name (as Samba) */
	ret = srv_sd_parent_access(sh, to, o->is_dir ? FILE_ADD_SUBDIRECTORY : FILE_ADD_FILE,
				   req->tree->ident);
	if (ret == -EACCES || ret == -EPERM)
		return -EACCES;
	if (!link) {
		ret = rename_wait_handle_leases(req, o);
		if (ret)
			return ret;
	}
	if (replace && !store_lstat(&sh->root, to, &old) &&
	    (old.st_dev != o->file->dev || old.st_ino != o->file->ino)) {
		if (!posix && srv_file_open_by_anyone(sh, &old))
			return -EACCES;
		had_old = true;
	}
	if (!link) {
		ret = srv_file_path(o->file, from, sizeof(from));
		if (!ret && o->is_dir && srv_share_open_below(sh, from))
			return -EACCES;
		if (!ret)
			ret = srv_file_rename(o->file, to, replace);
		if (!ret && had_old)
			srv_file_replaced(sh, &old, to);
		if (!ret) {
			srv_durable_journal_file(o->file);
			srv_dir_lease_break(req->conn->srv, sh, from, o);
			srv_dir_lease_break(req->conn->srv, sh, to, o);
		}
		return ret;
	}
	if (srv_file_unlinked(o->file))
		return -ENOENT;
	ret = srv_file_path(o->file, from, sizeof(from));
	if (ret)
		return ret;
	if (replace) {
		ret = store_unlink(&sh->root, to, false);
		if (ret && ret != -ENOENT)
			return ret;
		if (!ret && had_old)
			srv_file_replaced(sh, &old, to);
	}
	return store_link(&sh->root, from, to);
}

int smb_set_info(struct srv_req *req)
{
	struct smb2_set_info_req r;
	struct srv_open *o;
	int ret;

	if (smb2_set_info_req_decode(req->pdu, req->len, &r))
		return -EINVAL;
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (req->tree->read_only)
		return -EACCES;
	if (r.info_type == SMB2_0_INFO_SECURITY) {
		ret = srv_sd_set(req, o, r.additional, r.data.p, r.data.len);
		goto done;
	}
	if (r.info_type != SMB2_0_INFO_FILE)
		return -EOPNOTSUPP;
	switch (r.info_class) {
	case FileBasicInformation:
		ret = set_basic(req, o, &r.data);
		break;
	case FileDispositionInformation:
		if (r.data.len < 1)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		ret = set_disposition(req, o, r.data.p[0] & 1);
		break;
	case FileDispositionInformationEx:
		if (r.data.len < 4)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		if (get_le32(r.data.p) & ~FILE_DISPOSITION_KNOWN)
			return -EINVAL;
		ret = set_disposition(req, o, get_le32(r.data.p));
		break;
	case FileRenameInformation:
		ret = set_rename(req, o, &r.data, false, false);
		break;
	case FileRenameInformationEx:
		ret = set_rename(req, o, &r.data, false, true);
		break;
	case FileLinkInformation:
		ret = set_rename(req, o, &r.data, true, false);
		break;
	case FileEndOfFileInformation:
	case FileAllocationInformation:
		if (r.data.len < 8)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		if (!(o->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)))
			return -EACCES;
		if (o->is_dir)
			return -E_SMB_INVALID_DEVICE_REQUEST;
		srv_oplock_contend(req->conn->srv, o);
		o->modified = true;
		if (r.info_class == FileEndOfFileInformation) {
			ret = srv_ftruncate(o, get_le64(r.data.p));
		} else {
			struct stat st;
			uint64_t a = get_le64(r.data.p);

			ret = srv_fstat(o, &st);
			if (ret)
				return ret;
			ret = a < (uint64_t)st.st_size ? srv_ftruncate(o, a)
						       : srv_fallocate(o, a);
		}
		if (!ret)
			srv_wt_flush(o);
		break;
	case FilePositionInformation:
		if (r.data.len < 8)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		o->position = get_le64(r.data.p);
		ret = 0;
		break;
	case FileModeInformation:
		if (r.data.len < 4)
			return -E_SMB_INFO_LENGTH_MISMATCH;
		o->mode = get_le32(r.data.p);
		ret = 0;
		break;
	case FileValidDataLengthInformation:
		ret = 0;
		break;
	case FileFullEaInformation:
		if (!(o->access & FILE_WRITE_EA))
			return -EACCES;
		if (o->file->stream)
			return -EINVAL;
		ret = srv_ea_set(o->fd, r.data.p, r.data.len);
		break;
	default:
		return -E_SMB_INVALID_INFO_CLASS;
	}
done:
	if (ret)
		return ret;
	if (srv_req_room(req, 4))
		return -ENOMEM;
	wcur_le16(&req->w, 2);
	return 0;
}

/* ---- QUERY_DIRECTORY ---- */

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/*
 * Windows wildcard match, ASCII case-insensitive (nocase) or, for a POSIX
 * open, exact; DOS_* forms approximated.
 */
static bool wild_match(const char *p, const char *s, bool nocase)
{
	const char *star = NULL, *ss = NULL;

	while (*s) {
		char pc = *p;

		if (pc == '<')
			pc = '*';
		else if (pc == '>')
			pc = '?';
		else if (pc == '"')
			pc = '.';
		if (pc == '*') {
			star = ++p;
			ss = s;
			continue;
		}
		if (pc && (pc == '?' || pc == *s ||
			   (nocase && fold((unsigned char)pc) == fold((unsigned char)*s)))) {
			p++;
			s++;
			continue;
		}
		if (!star)
			return false;
		p = star;
		s = ++ss;
	}
	while (*p == '*' || *p == '<' || *p == '>' || *p == '"')
		p++;
	return !*p;
}

static bool has_wildcard(const char *p)
{
	return strpbrk(p, "*?<>\"") != NULL;
}

/* One entry's DOS view; ".." of the share root reports the root itself. */
static int entry_attr(struct srv_req *req, struct srv_open *o, const char *name,
		      bool at_root, struct srv_attr *a)
{
	int fd = o->dir ? store_dir_fd(o->dir) : o->fd;

	return srv_attr_get(o->share, fd, !strcmp(name, "..") && at_root ? "." : name, name,
			    req->tree->ident, a);
}

static int query_directory(struct srv_req *req, struct srv_open *o,
			   const struct smb2_query_dir_req *rq);

/* One entry of any class, FilePosixInformation included. */
static int dirent_encode(struct wcur *d, size_t limit, int cls, const struct srv_attr *a,
			 struct fscc_info *fi, const uint8_t *name16, uint32_t n)
{
	struct posix_info pi;

	if (cls != FilePosixInformation)
		return fscc_dirent_encode(d, limit, cls, fi, name16, n);
	srv_posix_attrs(&a->st, fi);
	srv_posix_info(&a->st, &pi);
	return posix_dirent_encode(d, limit, fi, &pi, name16, n);
}

int smb_query_directory(struct srv_req *req)
{
	struct smb2_query_dir_req r;
	struct srv_open *o;
	int ret;

	if (smb2_query_dir_req_decode(req->pdu, req->len, &r))
		return -EINVAL;
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	/* an enumeration goes one request at a time, whatever the channel */
	pthread_mutex_lock(&o->dir_lock);
	ret = query_directory(req, o, &r);
	pthread_mutex_unlock(&o->dir_lock);
	return ret;
}

static int query_directory(struct srv_req *req, struct srv_open *o,
			   const struct smb2_query_dir_req *rq)
{
	struct smb2_query_dir_req r = *rq;
	struct fscc_info fi;
	struct srv_attr a;
	struct wcur d;
	uint8_t name16[512];
	char pat[1024], path[4096];
	const char *name;
	bool restart, at_root, single, posix;
	int ret, n, count = 0, prev = -1, off;
	uint32_t limit;

	if (!o->is_dir)
		return -EINVAL;
	if (!(o->access & FILE_LIST_DIRECTORY))
		return -EACCES;
	posix = r.info_class == FilePosixInformation;
	if (posix ? !req->conn->posix : !fscc_dirent_class_ok(r.info_class))
		return -E_SMB_INVALID_INFO_CLASS;
	if (!r.output_len)
		return -EINVAL;
	limit = r.output_len < QD_MAX_OUTPUT ? r.output_len : QD_MAX_OUTPUT;

	restart = !o->enum_started || (r.flags & (SMB2_RESTART_SCANS | SMB2_REOPEN));
	if (restart) {
		if (r.pattern.len) {
			n = utf16le_to_utf8(r.pattern.p, r.pattern.len, pat, sizeof(pat));
			if (n < 0)
				return -E_SMB_OBJECT_NAME_INVALID;
		} else {
			strcpy(pat, "*");
		}
		free(o->pattern);
		o->pattern = strdup(pat);
		free(o->pending_name);
		o->pending_name = NULL;
		if (!o->pattern)
			return -ENOMEM;
		if (o->dir)
			store_dir_rewind(o->dir);
		o->enum_done = false;
	}
	if (o->enum_done)
		return -E_SMB_NO_MORE_FILES;
	single = r.flags & SMB2_RETURN_SINGLE_ENTRY;
	ret = srv_file_path(o->file, path, sizeof(path));
	if (ret)
		return ret;
	at_root = !path[0];

	ret = srv_req_room(req, 8 + (size_t)limit);
	if (ret)
		return ret;
	wcur_init(&d, req->w.p + req->w.off + 8, limit);

	if (!has_wildcard(o->pattern)) {
		/* exact name: one lookup, no directory scan */
		o->enum_started = true;
		o->enum_done = true;
		char real[256];

		name = o->pattern;
		if (!strchr(name, '/') && entry_attr(req, o, name, at_root, &a) && !o->posix &&
		    srv_name_match(o->share, path, name, real, sizeof(real)) == 1)
			name = real;	/* the entry's name, as it is */
		if (strchr(name, '/') || entry_attr(req, o, name, at_root, &a))
			return restart ? -E_SMB_NO_SUCH_FILE : -E_SMB_NO_MORE_FILES;
		srv_attr_to_info(&a, 0, &fi);
		short_name_info(o->share, name, &fi);
		n = utf8_to_utf16le(name, name16, sizeof(name16));
		if (n < 0)
			return -E_SMB_NO_SUCH_FILE;
		off = dirent_encode(&d, limit, r.info_class, &a, &fi, name16, (uint32_t)n);
		if (off < 0)
			return off == -ENOSPC ? -E_SMB_INFO_LENGTH_MISMATCH : off;
		smb2_out_buf_rsp_encode(&req->w, (uint32_t)d.off);
		req->w.off += d.off;
		return 0;
	}
	if (!o->dir) {
		ret = store_dir_open(o->fd, &o->dir);
		if (ret)
			return ret;
	}
	o->enum_started = true;
	for (;;) {
		if (o->pending_name) {
			name = o->pending_name;
		} else {
			ret = store_dir_next(o->dir, &name);
			if (ret < 0)
				return ret;
			if (!ret) {
				o->enum_done = true;
				break;
			}
		}
		if (!wild_match(o->pattern, name, !o->posix) ||
		    entry_attr(req, o, name, at_root, &a))
			goto next;
		n = utf8_to_utf16le(name, name16, sizeof(name16));
		if (n < 0)
			goto next;	/* not representable: skip */
		srv_attr_to_info(&a, 0, &fi);
		short_name_info(o->share, name, &fi);
		off = dirent_encode(&d, limit, r.info_class, &a, &fi, name16, (uint32_t)n);
		if (off == -ENOSPC) {
			if (!o->pending_name) {
				o->pending_name = strdup(name);
				if (!o->pending_name)
					return -ENOMEM;
			}
			if (!count)
				return -E_SMB_INFO_LENGTH_MISMATCH;
			break;
		}
		if (off < 0)
			return off;
		if (prev >= 0)
			put_le32(d.p + prev, (uint32_t)(off - prev));
		prev = off;
		count++;
next:
		if (o->pending_name) {
			free(o->pending_name);
			o->pending_name = NULL;
		}
		if (single && count)
			break;
	}
	if (!count)
		return restart ? -E_SMB_NO_SUCH_FILE : -E_SMB_NO_MORE_FILES;
	smb2_out_buf_rsp_encode(&req->w, (uint32_t)d.off);
	req->w.off += d.off;
	return 0;
}
