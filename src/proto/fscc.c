// SPDX-License-Identifier: MIT
/* [MS-FSCC] 2.4 / 2.5 information classes. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"

static void put_times(struct wcur *w, const struct smb2_file_times *t)
{
	wcur_le64(w, t->creation);
	wcur_le64(w, t->last_access);
	wcur_le64(w, t->last_write);
	wcur_le64(w, t->change);
}

static void get_times(const uint8_t *p, struct smb2_file_times *t)
{
	t->creation = get_le64(p);
	t->last_access = get_le64(p + 8);
	t->last_write = get_le64(p + 16);
	t->change = get_le64(p + 24);
}

static void put_basic(struct wcur *w, const struct fscc_info *fi)
{
	put_times(w, &fi->t);
	wcur_le32(w, fi->attributes);
	wcur_le32(w, 0);
}

static void put_standard(struct wcur *w, const struct fscc_info *fi)
{
	wcur_le64(w, fi->allocation_size);
	wcur_le64(w, fi->end_of_file);
	wcur_le32(w, fi->nlink);
	wcur_u8(w, fi->delete_pending);
	wcur_u8(w, fi->directory);
	wcur_le16(w, 0);
}

uint32_t fscc_file_info_min_size(int cls)
{
	switch (cls) {
	case FileBasicInformation: return 40;
	case FileStandardInformation: return 24;
	case FileInternalInformation: return 8;
	case FileEaInformation: return 4;
	case FileAccessInformation: return 4;
	case FilePositionInformation: return 8;
	case FileModeInformation: return 4;
	case FileAlignmentInformation: return 4;
	case FileNameInformation:
	case FileNormalizedNameInformation: return 4;
	case FileAlternateNameInformation: return 8;	/* Windows' and Samba's */
	case FileAllInformation: return 104;	/* Samba's and Windows' (a name of 4) */
	case FileNetworkOpenInformation: return 56;
	case FileAttributeTagInformation: return 8;
	case FileStreamInformation: return 32;	/* Samba's */
	case FileCompressionInformation: return 16;
	case FileIdInformation: return 24;
	default: return 0;
	}
}

int fscc_file_info_encode(struct wcur *w, int cls, const struct fscc_info *fi,
			  const uint8_t *name, uint32_t name_len)
{
	static const uint8_t data_stream[] = { ':', 0, ':', 0, '$', 0, 'D', 0,
					       'A', 0, 'T', 0, 'A', 0 };

	switch (cls) {
	case FileBasicInformation:
		put_basic(w, fi);
		break;
	case FileStandardInformation:
		put_standard(w, fi);
		break;
	case FileInternalInformation:
		wcur_le64(w, fi->file_id);
		break;
	case FileEaInformation:
		wcur_le32(w, fi->ea_size);
		break;
	case FileAccessInformation:
		wcur_le32(w, fi->access);
		break;
	case FilePositionInformation:
		wcur_le64(w, fi->position);
		break;
	case FileModeInformation:
		wcur_le32(w, fi->mode);
		break;
	case FileAlignmentInformation:
		wcur_le32(w, 0);
		break;
	case FileNameInformation:
	case FileAlternateNameInformation:
	case FileNormalizedNameInformation:
		wcur_le32(w, name_len);
		wcur_bytes(w, name, name_len);
		break;
	case FileAllInformation:
		put_basic(w, fi);
		put_standard(w, fi);
		wcur_le64(w, fi->file_id);
		wcur_le32(w, fi->ea_size);
		wcur_le32(w, fi->access);
		wcur_le64(w, fi->position);
		wcur_le32(w, fi->mode);
		wcur_le32(w, 0);	/* alignment */
		wcur_le32(w, name_len);
		wcur_bytes(w, name, name_len);
		break;
	case FileNetworkOpenInformation:
		put_times(w, &fi->t);
		wcur_le64(w, fi->allocation_size);
		wcur_le64(w, fi->end_of_file);
		wcur_le32(w, fi->attributes);
		wcur_le32(w, 0);
		break;
	case FileAttributeTagInformation:
		wcur_le32(w, fi->attributes);
		wcur_le32(w, 0);
		break;
	case FileStreamInformation:
		if (fi->directory)
			break;
		wcur_le32(w, 0);
		wcur_le32(w, sizeof(data_stream));
		wcur_le64(w, fi->end_of_file);
		wcur_le64(w, fi->allocation_size);
		wcur_bytes(w, data_stream, sizeof(data_stream));
		break;
	case FileCompressionInformation:
		wcur_le64(w, fi->end_of_file);
		wcur_le16(w, 0);
		wcur_zero(w, 6);
		break;
	case FileIdInformation:
		wcur_le64(w, 0);
		wcur_le64(w, fi->file_id);
		wcur_le64(w, 0);
		break;
	default:
		return -E_SMB_INVALID_INFO_CLASS;
	}
	return 0;
}

uint32_t fscc_fs_info_min_size(int cls)
{
	switch (cls) {
	case FileFsVolumeInformation: return 24;	/* Windows' and Samba's */
	case FileFsSizeInformation: return 24;
	case FileFsDeviceInformation: return 8;
	case FileFsAttributeInformation: return 16;
	case FileFsControlInformation: return 48;
	case FileFsFullSizeInformation: return 32;
	case FileFsObjectIdInformation: return 64;
	case FileFsSectorSizeInformation: return 28;
	default: return 0;
	}
}

int fscc_fs_info_encode(struct wcur *w, int cls, const struct fscc_fsinfo *fs)
{
	static const uint8_t fsname[] = { 'N', 0, 'T', 0, 'F', 0, 'S', 0 };
	uint32_t sector = fs->bytes_per_sector;

	switch (cls) {
	case FileFsVolumeInformation:
		wcur_le64(w, fs->created);
		wcur_le32(w, fs->serial);
		wcur_le32(w, fs->label_len);
		wcur_u8(w, 0);
		wcur_u8(w, 0);
		wcur_bytes(w, fs->label, fs->label_len);
		break;
	case FileFsSizeInformation:
		wcur_le64(w, fs->total_units);
		wcur_le64(w, fs->avail_units);
		wcur_le32(w, fs->sectors_per_unit);
		wcur_le32(w, sector);
		break;
	case FileFsDeviceInformation:
		wcur_le32(w, 0x00000007);	/* FILE_DEVICE_DISK */
		wcur_le32(w, 0x00000020);	/* FILE_DEVICE_IS_MOUNTED */
		break;
	case FileFsAttributeInformation:
		/* case sensitive + preserved, unicode, sparse files, reflink */
		wcur_le32(w, 0x00000001 | 0x00000002 | 0x00000004 | FILE_SUPPORTS_SPARSE_FILES |
			  (fs->block_refcounting ? FILE_SUPPORTS_BLOCK_REFCOUNTING : 0));
		wcur_le32(w, fs->max_name_len);
		wcur_le32(w, sizeof(fsname));
		wcur_bytes(w, fsname, sizeof(fsname));
		break;
	case FileFsFullSizeInformation:
		wcur_le64(w, fs->total_units);
		wcur_le64(w, fs->avail_units);
		wcur_le64(w, fs->avail_units);
		wcur_le32(w, fs->sectors_per_unit);
		wcur_le32(w, sector);
		break;
	case FileFsControlInformation:
		/* no quotas: no thresholds or limits, nothing enabled */
		wcur_zero(w, 48);
		break;
	case FileFsObjectIdInformation:
		wcur_le32(w, fs->serial);
		wcur_zero(w, 60);
		break;
	case FileFsSectorSizeInformation:
		wcur_le32(w, sector);
		wcur_le32(w, sector);
		wcur_le32(w, sector);
		wcur_le32(w, sector);
		wcur_le32(w, 0x3);	/* aligned device + partition */
		wcur_le32(w, 0);
		wcur_le32(w, 0);
		break;
	default:
		return -E_SMB_INVALID_INFO_CLASS;
	}
	return 0;
}

/* Fixed size of each directory class, before the file name. */
static uint32_t dirent_fixed(int cls)
{
	switch (cls) {
	case FileDirectoryInformation: return 64;
	case FileFullDirectoryInformation: return 68;
	case FileBothDirectoryInformation: return 94;
	case FileNamesInformation: return 12;
	case FileIdBothDirectoryInformation: return 104;
	case FileIdFullDirectoryInformation: return 80;
	default: return 0;
	}
}

bool fscc_dirent_class_ok(int cls)
{
	return dirent_fixed(cls) != 0;
}

int fscc_dirent_encode(struct wcur *w, size_t limit, int cls,
		       const struct fscc_info *fi, const uint8_t *name,
		       uint32_t name_len)
{
	uint32_t fixed = dirent_fixed(cls);
	size_t start = align8(w->off);
	struct wcur save = *w;
	uint8_t n;

	if (!fixed)
		return -E_SMB_INVALID_INFO_CLASS;
	if (start > limit || fixed + (size_t)name_len > limit - start ||
	    start + fixed + name_len > w->cap)
		return -ENOSPC;
	wcur_align(w, 8);
	wcur_le32(w, 0);		/* NextEntryOffset */
	wcur_le32(w, 0);		/* FileIndex */
	if (cls == FileNamesInformation) {
		wcur_le32(w, name_len);
		goto name;
	}
	put_times(w, &fi->t);
	wcur_le64(w, fi->end_of_file);
	wcur_le64(w, fi->allocation_size);
	wcur_le32(w, fi->attributes);
	wcur_le32(w, name_len);
	if (cls == FileDirectoryInformation)
		goto name;
	wcur_le32(w, fi->ea_size);
	if (cls == FileFullDirectoryInformation)
		goto name;
	if (cls == FileIdFullDirectoryInformation) {
		wcur_le32(w, 0);
		wcur_le64(w, fi->file_id);
		goto name;
	}
	n = fi->short_len < sizeof(fi->short_name) ? fi->short_len : sizeof(fi->short_name);
	wcur_u8(w, n);			/* ShortNameLength */
	wcur_u8(w, 0);
	wcur_bytes(w, fi->short_name, n);
	wcur_zero(w, sizeof(fi->short_name) - n);	/* ShortName */
	if (cls == FileIdBothDirectoryInformation) {
		wcur_le16(w, 0);
		wcur_le64(w, fi->file_id);
	}
name:
	wcur_bytes(w, name, name_len);
	if (w->err) {
		*w = save;
		return -ENOSPC;
	}
	return (int)start;
}

int fscc_basic_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi)
{
	if (len < 40)
		return -EBADMSG;
	get_times(p, &fi->t);
	fi->attributes = get_le32(p + 32);
	fi->directory = fi->attributes & FILE_ATTRIBUTE_DIRECTORY;
	return 0;
}

int fscc_standard_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi)
{
	if (len < 24)
		return -EBADMSG;
	fi->allocation_size = get_le64(p);
	fi->end_of_file = get_le64(p + 8);
	fi->nlink = get_le32(p + 16);
	fi->delete_pending = p[20];
	fi->directory = p[21];
	return 0;
}

int fscc_all_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi)
{
	if (len < 100)
		return -EBADMSG;
	fscc_basic_info_decode(p, len, fi);
	fscc_standard_info_decode(p + 40, len - 40, fi);
	fi->file_id = get_le64(p + 64);
	fi->ea_size = get_le32(p + 72);
	fi->access = get_le32(p + 76);
	fi->position = get_le64(p + 80);
	fi->mode = get_le32(p + 88);
	return 0;
}

int fscc_fs_full_size_decode(const uint8_t *p, size_t len, struct fscc_fsinfo *fs)
{
	if (len < 32)
		return -EBADMSG;
	fs->total_units = get_le64(p);
	fs->avail_units = get_le64(p + 8);
	fs->sectors_per_unit = get_le32(p + 24);
	fs->bytes_per_sector = get_le32(p + 28);
	return 0;
}

int fscc_dirent_next(const uint8_t *p, size_t len, size_t *off, int cls,
		     struct fscc_info *fi, const uint8_t **name,
		     uint32_t *name_len)
{
	uint32_t fixed = dirent_fixed(cls), next, nlen;
	const uint8_t *e;

	if (!fixed)
		return -EINVAL;
	if (*off == SIZE_MAX || *off >= len)
		return 0;
	if (!range_ok(*off, fixed, len))
		return -EBADMSG;
	e = p + *off;
	next = get_le32(e);
	memset(fi, 0, sizeof(*fi));
	if (cls == FileNamesInformation) {
		nlen = get_le32(e + 8);
	} else {
		get_times(e + 8, &fi->t);
		fi->end_of_file = get_le64(e + 40);
		fi->allocation_size = get_le64(e + 48);
		fi->attributes = get_le32(e + 56);
		fi->directory = fi->attributes & FILE_ATTRIBUTE_DIRECTORY;
		nlen = get_le32(e + 60);
		if (cls == FileIdFullDirectoryInformation)
			fi->file_id = get_le64(e + 72);
		else if (cls == FileIdBothDirectoryInformation)
			fi->file_id = get_le64(e + 96);
		if (cls == FileBothDirectoryInformation || cls == FileIdBothDirectoryInformation) {
			fi->short_len = e[68] < sizeof(fi->short_name) ? e[68] :
					sizeof(fi->short_name);
			memcpy(fi->short_name, e + 70, fi->short_len);
		}
	}
	if (!range_ok(*off + fixed, nlen, len) || (next && next < fixed + nlen))
		return -EBADMSG;
	*name = e + fixed;
	*name_len = nlen;
	*off = next ? *off + next : SIZE_MAX;
	return 1;
}

void fscc_basic_info_put(struct wcur *w, const struct smb2_file_times *t,
			 uint32_t attributes)
{
	put_times(w, t);
	wcur_le32(w, attributes);
	wcur_le32(w, 0);
}

void fscc_rename_info_put(struct wcur *w, bool replace, const uint8_t *name,
			  uint32_t name_len)
{
	/* FILE_RENAME_INFORMATION_TYPE_2 for SMB2, [MS-FSCC] 2.4.37.2 */
	wcur_u8(w, replace);
	wcur_zero(w, 7);
	wcur_le64(w, 0);		/* RootDirectory */
	wcur_le32(w, name_len);
	wcur_bytes(w, name, name_len);
}

/* ---- FILE_NOTIFY_INFORMATION [MS-FSCC] 2.4.42 ---- */

int fscc_notify_encode(struct wcur *w, size_t limit, int *prev, uint32_t action,
		       const uint8_t *name, uint32_t name_len)
{
	size_t start = (w->off + 3) & ~(size_t)3;

	if (limit > w->cap)
		limit = w->cap;
	if (start > limit || 12 + (size_t)name_len > limit - start || start > INT32_MAX)
		return -ENOSPC;
	wcur_align(w, 4);
	wcur_le32(w, 0);		/* NextEntryOffset: set by the next one */
	wcur_le32(w, action);
	wcur_le32(w, name_len);
	wcur_bytes(w, name, name_len);
	if (*prev >= 0)
		put_le32(w->p + *prev, (uint32_t)(start - (size_t)*prev));
	*prev = (int)start;
	return 0;
}

int fscc_notify_decode(const uint8_t *p, size_t len, size_t *off, uint32_t *action,
		       const uint8_t **name, uint32_t *name_len)
{
	size_t o = *off;
	uint32_t next, n;

	if (o & 3 || o > len || len - o < 12)
		return -EBADMSG;
	next = get_le32(p + o);
	n = get_le32(p + o + 8);
	if (n > len - o - 12 || (next && (next & 3 || next < 12 + (uint64_t)n ||
					  next > len - o)))
		return -EBADMSG;
	*action = get_le32(p + o + 4);
	*name = p + o + 12;
	*name_len = n;
	*off = next ? o + next : 0;
	return 0;
}

/* ---- alternate data streams ---- */

static size_t utf16_units(const char *s, size_t n)
{
	size_t i, u = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c & 0xC0) != 0x80)
			u += c >= 0xF0 ? 2 : 1;
	}
	return u;
}

int fscc_stream_parse(const char *part, char *name, size_t cap)
{
	const char *type = strchr(part, ':');
	size_t n = type ? (size_t)(type - part) : strlen(part);

	if (type && strcasecmp(type + 1, "$DATA")) {
		/* a second name part, or a type that is not one */
		if (strchr(type + 1, ':') || type[1] != '$')
			return -E_SMB_OBJECT_NAME_INVALID;
		return -EINVAL;
	}
	if (!n)
		return type ? 1 : -E_SMB_OBJECT_NAME_INVALID;
	if (memchr(part, '/', n) || memchr(part, '\\', n) ||
	    utf16_units(part, n) > FSCC_STREAM_NAME_MAX || n >= cap)
		return -E_SMB_OBJECT_NAME_INVALID;
	memcpy(name, part, n);
	name[n] = 0;
	return 0;
}

bool fscc_stream_entry_encode(struct wcur *w, size_t limit, long *prev, const uint8_t *name,
			      uint32_t name_len, uint64_t size, uint64_t alloc)
{
	size_t at = (w->off + 7) & ~(size_t)7;

	if (at + 24 + name_len > limit)
		return false;
	wcur_align(w, 8);
	if (*prev >= 0 && !w->err && at <= w->cap)
		put_le32(w->p + *prev, (uint32_t)(at - (size_t)*prev));
	*prev = (long)at;
	wcur_le32(w, 0);
	wcur_le32(w, name_len);
	wcur_le64(w, size);
	wcur_le64(w, alloc);
	wcur_bytes(w, name, name_len);
	return true;
}

/* ---- FILE_FULL_EA_INFORMATION ---- */

#define EA_FIXED 8

int fscc_ea_next(const uint8_t *p, size_t len, size_t *off, struct fscc_ea *e)
{
	const uint8_t *x;
	uint32_t next;
	size_t need;

	if (*off == SIZE_MAX || (!*off && !len))
		return 0;
	if (*off >= len || len - *off < EA_FIXED)
		return -EBADMSG;
	x = p + *off;
	next = get_le32(x);
	e->flags = x[4];
	e->name_len = x[5];
	e->value_len = get_le16(x + 6);
	need = EA_FIXED + (size_t)e->name_len + 1 + e->value_len;
	if (!e->name_len || need > len - *off || x[EA_FIXED + e->name_len] ||
	    memchr(x + EA_FIXED, 0, e->name_len))
		return -EBADMSG;
	if (next && (next < need || next % 4 || next >= len - *off))
		return -EBADMSG;
	e->name = (const char *)x + EA_FIXED;
	e->value = x + EA_FIXED + e->name_len + 1;
	*off = next ? *off + next : SIZE_MAX;
	return 1;
}

int fscc_ea_encode(struct wcur *w, size_t *prev, const struct fscc_ea *e)
{
	struct wcur save = *w;
	size_t start;

	if (*prev != SIZE_MAX) {
		wcur_align(w, 4);
		start = w->off;
	} else {
		start = w->off;
	}
	wcur_le32(w, 0);
	wcur_u8(w, e->flags);
	wcur_u8(w, e->name_len);
	wcur_le16(w, e->value_len);
	wcur_bytes(w, e->name, e->name_len);
	wcur_u8(w, 0);
	wcur_bytes(w, e->value, e->value_len);
	if (w->err) {
		*w = save;
		return -ENOSPC;
	}
	if (*prev != SIZE_MAX)
		put_le32(w->p + *prev, (uint32_t)(start - *prev));
	*prev = start;
	return 0;
}

bool fscc_ea_name_ok(const char *name, size_t len)
{
	size_t i;

	if (!len || len > 255)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] > 0x7e ||
		    strchr("\"*+,/:;<=>?[\\]|", name[i]))
			return false;
	return true;
}
