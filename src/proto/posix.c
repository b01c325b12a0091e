// SPDX-License-Identifier: MIT
/* SMB3 POSIX extension codecs (posix.h has the layouts and references). */
#include <errno.h>
#include <string.h>

#include "proto/posix.h"

int posix_cc_decode(const uint8_t *p, size_t len, uint32_t *mode)
{
	if (len != 4)
		return -EBADMSG;
	/* cifs.ko sends the type bits too (S_IFREG): only the permissions count */
	*mode = get_le32(p) & POSIX_PERM_MASK;
	return 0;
}

void posix_fs_info_encode(struct wcur *w, const struct posix_fsinfo *fs)
{
	wcur_le32(w, fs->optimal_io);
	wcur_le32(w, fs->block_size);
	wcur_le64(w, fs->blocks);
	wcur_le64(w, fs->bfree);
	wcur_le64(w, fs->bavail);
	wcur_le64(w, fs->files);
	wcur_le64(w, fs->ffree);
	wcur_le64(w, fs->fsid);
}

int posix_fs_info_decode(const uint8_t *p, size_t len, struct posix_fsinfo *fs)
{
	memset(fs, 0, sizeof(*fs));
	if (len < POSIX_FS_INFO_LEN)
		return -EBADMSG;
	fs->optimal_io = get_le32(p);
	fs->block_size = get_le32(p + 4);
	fs->blocks = get_le64(p + 8);
	fs->bfree = get_le64(p + 16);
	fs->bavail = get_le64(p + 24);
	fs->files = get_le64(p + 32);
	fs->ffree = get_le64(p + 40);
	fs->fsid = get_le64(p + 48);
	return 0;
}

void posix_cc_encode(struct wcur *w, uint32_t mode)
{
	wcur_le32(w, mode & POSIX_PERM_MASK);
}

static void sid_put(struct wcur *w, const struct sid *s)
{
	uint8_t *p = wcur_reserve(w, sid_size(s));

	if (p)
		sid_encode(s, p);
}

void posix_cc_rsp_encode(struct wcur *w, const struct posix_info *pi)
{
	wcur_le32(w, pi->nlink);
	wcur_le32(w, pi->reparse_tag);
	wcur_le32(w, pi->mode & POSIX_PERM_MASK);
	sid_put(w, &pi->owner);
	sid_put(w, &pi->group);
}

/* NumberOfLinks ... group SID at p: the bytes used, or -EBADMSG. */
static int cc_part_decode(const uint8_t *p, size_t len, struct posix_info *pi)
{
	int n1, n2;

	if (len < 12)
		return -EBADMSG;
	pi->nlink = get_le32(p);
	pi->reparse_tag = get_le32(p + 4);
	pi->mode = get_le32(p + 8);
	n1 = sid_decode(p + 12, len - 12, &pi->owner);
	if (n1 < 0)
		return n1;
	n2 = sid_decode(p + 12 + n1, len - 12 - (size_t)n1, &pi->group);
	if (n2 < 0)
		return n2;
	return 12 + n1 + n2;
}

int posix_cc_rsp_decode(const uint8_t *p, size_t len, struct posix_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	return cc_part_decode(p, len, pi) < 0 ? -EBADMSG : 0;
}

static void info_fixed_put(struct wcur *w, const struct fscc_info *fi,
			   const struct posix_info *pi)
{
	wcur_le64(w, fi->t.creation);
	wcur_le64(w, fi->t.last_access);
	wcur_le64(w, fi->t.last_write);
	wcur_le64(w, fi->t.change);
	wcur_le64(w, fi->end_of_file);
	wcur_le64(w, fi->allocation_size);
	wcur_le32(w, fi->attributes);
	wcur_le64(w, pi->ino);
	wcur_le32(w, pi->dev);
	wcur_le32(w, 0);		/* Zero */
}

void posix_info_encode(struct wcur *w, const struct fscc_info *fi, const struct posix_info *pi)
{
	info_fixed_put(w, fi, pi);
	posix_cc_rsp_encode(w, pi);
}

/* The 68 bytes before NumberOfLinks. */
static void info_fixed_get(const uint8_t *p, struct fscc_info *fi, struct posix_info *pi)
{
	fi->t.creation = get_le64(p);
	fi->t.last_access = get_le64(p + 8);
	fi->t.last_write = get_le64(p + 16);
	fi->t.change = get_le64(p + 24);
	fi->end_of_file = get_le64(p + 32);
	fi->allocation_size = get_le64(p + 40);
	fi->attributes = get_le32(p + 48);
	pi->ino = get_le64(p + 52);
	pi->dev = get_le32(p + 60);
	fi->file_id = pi->ino;
	fi->directory = fi->attributes & FILE_ATTRIBUTE_DIRECTORY;
}

int posix_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi,
		      struct posix_info *pi)
{
	memset(fi, 0, sizeof(*fi));
	memset(pi, 0, sizeof(*pi));
	if (len < POSIX_INFO_FIXED)
		return -EBADMSG;
	info_fixed_get(p, fi, pi);
	if (cc_part_decode(p + 68, len - 68, pi) < 0)
		return -EBADMSG;
	fi->nlink = pi->nlink;
	fi->mode = pi->mode;
	return 0;
}

int posix_dirent_encode(struct wcur *w, size_t limit, const struct fscc_info *fi,
			const struct posix_info *pi, const uint8_t *name, uint32_t name_len)
{
	size_t start = (w->off + 7) & ~(size_t)7;
	size_t need = POSIX_DIRENT_FIXED + sid_size(&pi->owner) + sid_size(&pi->group) + 4 +
		      name_len;
	struct wcur save = *w;

	if (start > limit || need > limit - start || start + need > w->cap)
		return -ENOSPC;
	wcur_align(w, 8);
	wcur_le32(w, 0);		/* NextEntryOffset */
	wcur_le32(w, 0);		/* FileIndex */
	info_fixed_put(w, fi, pi);
	posix_cc_rsp_encode(w, pi);
	wcur_le32(w, name_len);
	wcur_bytes(w, name, name_len);
	if (w->err) {
		*w = save;
		return -ENOSPC;
	}
	return (int)start;
}

int posix_dirent_next(const uint8_t *p, size_t len, size_t *off, struct fscc_info *fi,
		      struct posix_info *pi, const uint8_t **name, uint32_t *name_len)
{
	size_t o = *off, rest;
	uint32_t next, nl;
	int n;

	if (o >= len)
		return 0;
	memset(fi, 0, sizeof(*fi));
	memset(pi, 0, sizeof(*pi));
	if (len - o < POSIX_DIRENT_FIXED)
		return -EBADMSG;
	next = get_le32(p + o);
	info_fixed_get(p + o + 8, fi, pi);
	n = cc_part_decode(p + o + 76, len - o - 76, pi);
	if (n < 0)
		return -EBADMSG;
	rest = len - o - 76 - (size_t)n;
	if (rest < 4)
		return -EBADMSG;
	nl = get_le32(p + o + 76 + n);
	if (nl > rest - 4)
		return -EBADMSG;
	*name = p + o + 80 + n;
	*name_len = nl;
	fi->nlink = pi->nlink;
	fi->mode = pi->mode;
	if (!next) {
		*off = len;
	} else {
		if (next < (size_t)80 + (size_t)n + nl || next > len - o)
			return -EBADMSG;
		*off = o + next;
	}
	return 1;
}

#define REPARSE_HDR 8

int reparse_decode(const uint8_t *p, size_t len, struct reparse_data *rd)
{
	uint16_t dlen, soff, slen;
	const uint8_t *d;

	memset(rd, 0, sizeof(*rd));
	if (len < REPARSE_HDR)
		return -EBADMSG;
	rd->tag = get_le32(p);
	dlen = get_le16(p + 4);
	if ((size_t)dlen > len - REPARSE_HDR)
		return -EBADMSG;
	d = p + REPARSE_HDR;
	switch (rd->tag) {
	case IO_REPARSE_TAG_SYMLINK:
		/* offsets are from PathBuffer, 12 bytes into the data */
		if (dlen < 12)
			return -EBADMSG;
		soff = get_le16(d);
		slen = get_le16(d + 2);
		if ((size_t)soff + slen > (size_t)dlen - 12 || slen & 1)
			return -EBADMSG;
		if (!(get_le32(d + 8) & SYMLINK_FLAG_RELATIVE))
			return -EOPNOTSUPP;	/* a Windows absolute path */
		rd->type = NFS_SPECFILE_LNK;
		rd->target = d + 12 + soff;
		rd->tlen = slen;
		return 0;
	case IO_REPARSE_TAG_NFS:
		if (dlen < 8)
			return -EBADMSG;
		rd->type = get_le64(d);
		switch (rd->type) {
		case NFS_SPECFILE_LNK:
			if ((dlen - 8) & 1)
				return -EBADMSG;
			rd->target = d + 8;
			rd->tlen = dlen - 8u;
			return 0;
		case NFS_SPECFILE_CHR:
		case NFS_SPECFILE_BLK:
			if (dlen != 16)
				return -EBADMSG;
			rd->major = get_le32(d + 8);
			rd->minor = get_le32(d + 12);
			return 0;
		case NFS_SPECFILE_FIFO:
		case NFS_SPECFILE_SOCK:
			return dlen == 8 ? 0 : -EBADMSG;
		default:
			return -EOPNOTSUPP;
		}
	default:
		return -EOPNOTSUPP;
	}
}

/* A relative symlink's reparse buffer; reserved: its Reserved field. */
static void symlink_reparse_encode(struct wcur *w, const uint8_t *target16, uint32_t tlen,
				   uint16_t reserved)
{
	wcur_le32(w, IO_REPARSE_TAG_SYMLINK);
	wcur_le16(w, (uint16_t)(12 + 2 * tlen));	/* ReparseDataLength */
	wcur_le16(w, reserved);
	wcur_le16(w, 0);		/* SubstituteNameOffset */
	wcur_le16(w, (uint16_t)tlen);
	wcur_le16(w, (uint16_t)tlen);	/* PrintNameOffset */
	wcur_le16(w, (uint16_t)tlen);
	wcur_le32(w, SYMLINK_FLAG_RELATIVE);
	wcur_bytes(w, target16, tlen);
	wcur_bytes(w, target16, tlen);
}

void reparse_symlink_encode(struct wcur *w, const uint8_t *target16, uint32_t tlen)
{
	symlink_reparse_encode(w, target16, tlen, 0);
}

void reparse_nfs_encode(struct wcur *w, uint64_t type, uint32_t major, uint32_t minor)
{
	bool dev = type == NFS_SPECFILE_CHR || type == NFS_SPECFILE_BLK;

	wcur_le32(w, IO_REPARSE_TAG_NFS);
	wcur_le16(w, dev ? 16 : 8);
	wcur_le16(w, 0);
	wcur_le64(w, type);
	if (dev) {
		wcur_le32(w, major);
		wcur_le32(w, minor);
	}
}

#define SYMLINK_ERR_FIXED 28	/* SymLinkLength ... Flags */

void symlink_err_encode(struct wcur *w, bool ctx, const uint8_t *target16, uint32_t tlen,
			uint16_t unparsed)
{
	uint32_t body = SYMLINK_ERR_FIXED + 2 * tlen;

	if (ctx) {
		wcur_le32(w, body);	/* ErrorDataLength */
		wcur_le32(w, 0);	/* ErrorId: SMB2_ERROR_ID_DEFAULT */
	}
	wcur_le32(w, body - 4);		/* SymLinkLength: what follows it */
	wcur_le32(w, SYMLINK_ERROR_TAG);
	/* the reparse buffer, its Reserved field as UnparsedPathLength */
	symlink_reparse_encode(w, target16, tlen, unparsed);
}

int symlink_err_decode(const uint8_t *p, size_t len, bool ctx, const uint8_t **target16,
		       uint32_t *tlen)
{
	uint16_t soff, slen;

	if (ctx) {
		if (len < 8 || get_le32(p + 4) != 0)
			return -EBADMSG;
		p += 8;
		len -= 8;
	}
	if (len < SYMLINK_ERR_FIXED || get_le32(p + 4) != SYMLINK_ERROR_TAG ||
	    get_le32(p + 8) != IO_REPARSE_TAG_SYMLINK)
		return -EBADMSG;
	soff = get_le16(p + 16);
	slen = get_le16(p + 18);
	if ((size_t)soff + slen > len - SYMLINK_ERR_FIXED || slen & 1)
		return -EBADMSG;
	*target16 = p + SYMLINK_ERR_FIXED + soff;
	*tlen = slen;
	return 0;
}

int posix_target_check(const char *link, const char *target)
{
	const char *p, *q;
	long depth = 0;

	if (!*target || *target == '/')
		return -EINVAL;
	/* the link's own directory depth within the share */
	for (p = link; (p = strchr(p, '/')); p++)
		depth++;
	for (p = target; *p; p = q) {
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		if (q - p == 2 && !memcmp(p, "..", 2)) {
			if (--depth < 0)
				return -EINVAL;
		} else if (q - p && !(q - p == 1 && *p == '.')) {
			depth++;
		}
		if (*q)
			q++;
	}
	return 0;
}
