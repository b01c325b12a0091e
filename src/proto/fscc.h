/* SPDX-License-Identifier: MIT */
/* [MS-FSCC] information structures: file, directory and fs classes. */
#ifndef RDAX_PROTO_FSCC_H
#define RDAX_PROTO_FSCC_H

#include "proto/smb2.h"

/* What a file looks like on the wire, independent of the class. */
struct fscc_info {
	struct smb2_file_times t;
	uint64_t end_of_file;
	uint64_t allocation_size;
	uint32_t attributes;
	uint32_t nlink;
	uint64_t file_id;
	uint32_t ea_size;
	uint32_t access;
	uint64_t position;
	uint32_t mode;
	bool directory;
	bool delete_pending;
	/* the 8.3 name (UTF-16LE, short_len bytes, at most 24) of the Both classes */
	uint8_t short_len;
	uint8_t short_name[24];
};

struct fscc_fsinfo {
	uint64_t total_units;
	uint64_t avail_units;
	uint32_t sectors_per_unit;
	uint32_t bytes_per_sector;
	uint32_t serial;
	uint64_t created;
	uint32_t max_name_len;
	const uint8_t *label;		/* UTF-16LE */
	uint32_t label_len;
	bool block_refcounting;		/* FILE_SUPPORTS_BLOCK_REFCOUNTING */
};

#define FILE_SUPPORTS_SPARSE_FILES 0x00000040u
#define FILE_SUPPORTS_BLOCK_REFCOUNTING 0x08000000u

/*
 * File information for QUERY_INFO. name is the UTF-16LE path for the
 * name classes. Returns 0 or -E_SMB_INVALID_INFO_CLASS.
 */
int fscc_file_info_encode(struct wcur *w, int cls, const struct fscc_info *fi,
			  const uint8_t *name, uint32_t name_len);
/* Smallest buffer the class needs, for STATUS_INFO_LENGTH_MISMATCH. */
uint32_t fscc_file_info_min_size(int cls);
int fscc_fs_info_encode(struct wcur *w, int cls, const struct fscc_fsinfo *fs);
uint32_t fscc_fs_info_min_size(int cls);

/*
 * Append one directory entry of class cls at the 8-aligned end of w.
 * Returns the entry's offset, or -ENOSPC when it does not fit in
 * limit bytes (w unchanged), or -E_SMB_INVALID_INFO_CLASS.
 */
int fscc_dirent_encode(struct wcur *w, size_t limit, int cls,
		       const struct fscc_info *fi, const uint8_t *name,
		       uint32_t name_len);
bool fscc_dirent_class_ok(int cls);

/* ---- change notification [MS-FSCC] 2.4.42, [MS-SMB2] 2.2.35 ---- */

#define FILE_NOTIFY_CHANGE_FILE_NAME	0x00000001u
#define FILE_NOTIFY_CHANGE_DIR_NAME	0x00000002u
#define FILE_NOTIFY_CHANGE_ATTRIBUTES	0x00000004u
#define FILE_NOTIFY_CHANGE_SIZE		0x00000008u
#define FILE_NOTIFY_CHANGE_LAST_WRITE	0x00000010u
#define FILE_NOTIFY_CHANGE_LAST_ACCESS	0x00000020u
#define FILE_NOTIFY_CHANGE_CREATION	0x00000040u
#define FILE_NOTIFY_CHANGE_EA		0x00000080u
#define FILE_NOTIFY_CHANGE_SECURITY	0x00000100u
#define FILE_NOTIFY_CHANGE_STREAM_NAME	0x00000200u
#define FILE_NOTIFY_CHANGE_STREAM_SIZE	0x00000400u
#define FILE_NOTIFY_CHANGE_STREAM_WRITE	0x00000800u

#define FILE_ACTION_ADDED		0x00000001u
#define FILE_ACTION_REMOVED		0x00000002u
#define FILE_ACTION_MODIFIED		0x00000003u
#define FILE_ACTION_RENAMED_OLD_NAME	0x00000004u
#define FILE_ACTION_RENAMED_NEW_NAME	0x00000005u

/*
 * Append one FILE_NOTIFY_INFORMATION (name: UTF-16LE, no terminator) at
 * the 4-aligned end of w, within limit bytes, and point the entry at
 * *prev (-1: none) to it; *prev becomes its offset. 0, or -ENOSPC when
 * it does not fit (w unchanged).
 */
int fscc_notify_encode(struct wcur *w, size_t limit, int *prev, uint32_t action,
		       const uint8_t *name, uint32_t name_len);
/*
 * Walk a FILE_NOTIFY_INFORMATION list (a client's view): the entry at
 * *off; *off becomes the next one's (0 after the last). -EBADMSG if an
 * entry or its name lies outside len or is misaligned.
 */
int fscc_notify_decode(const uint8_t *p, size_t len, size_t *off, uint32_t *action,
		       const uint8_t **name, uint32_t *name_len);

/* Client side decoders. */
int fscc_all_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi);
int fscc_basic_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi);
int fscc_standard_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi);
int fscc_fs_full_size_decode(const uint8_t *p, size_t len, struct fscc_fsinfo *fs);
/*
 * Iterate a directory listing: *off is the current entry (0 first).
 * Returns 1 with the entry, 0 at the end, -EBADMSG if malformed.
 */
int fscc_dirent_next(const uint8_t *p, size_t len, size_t *off, int cls,
		     struct fscc_info *fi, const uint8_t **name,
		     uint32_t *name_len);

/* Encoders for SET_INFO bodies the client sends. */
void fscc_basic_info_put(struct wcur *w, const struct smb2_file_times *t,
			 uint32_t attributes);
void fscc_rename_info_put(struct wcur *w, bool replace, const uint8_t *name,
			  uint32_t name_len);

/* Unix time <-> FILETIME (100 ns units since 1601). */
#define FILETIME_UNIX_EPOCH 116444736000000000ull
static inline uint64_t filetime_from_unix(int64_t sec, long nsec)
{
	if (sec < -11644473600ll)
		return 0;
	return (uint64_t)(sec * 10000000ll + nsec / 100) + FILETIME_UNIX_EPOCH;
}

static inline void filetime_to_unix(uint64_t ft, int64_t *sec, long *nsec)
{
	int64_t t = (int64_t)(ft - FILETIME_UNIX_EPOCH);

	*sec = t / 10000000;
	*nsec = (long)(t % 10000000) * 100;
	if (*nsec < 0) {
		*nsec += 1000000000;
		(*sec)--;
	}
}

/*
 * Alternate data streams ([MS-FSCC] 2.1.5, 2.4.44). A stream part is
 * what follows the first ':' of a name: "NAME", "NAME:$DATA" or
 * ":$DATA" (the default stream). Its name is copied to name (UTF-8).
 * Returns 0 (named), 1 (the default stream), -E_SMB_OBJECT_NAME_INVALID
 * (empty, ':' '/' '\\' in the name, too long), -EINVAL (a type other
 * than $DATA, as Samba answers).
 */
/*
 * FILE_FULL_EA_INFORMATION ([MS-FSCC] 2.4.15): a chain of extended
 * attributes (the ExtA create context, FileFullEaInformation). Entries
 * start 4-byte aligned; a name is 1-255 bytes followed by a NUL.
 */
struct fscc_ea {
	uint8_t flags;
	const char *name;		/* into the buffer, NUL-terminated */
	uint8_t name_len;
	const uint8_t *value;
	uint16_t value_len;
};

/*
 * The entry at *off of the chain p[0, len): 1 (then *off is the next
 * entry's, SIZE_MAX after the last), 0 at the end, -EBADMSG malformed.
 * Start with *off = 0.
 */
int fscc_ea_next(const uint8_t *p, size_t len, size_t *off, struct fscc_ea *e);
/*
 * One entry appended to the chain in w, 4-byte aligned, the previous
 * one's NextEntryOffset (at *prev, SIZE_MAX: none) set; -ENOSPC.
 */
int fscc_ea_encode(struct wcur *w, size_t *prev, const struct fscc_ea *e);
/* An EA name as Windows takes it: printable ASCII but "*+,/:;<=>?[\]|. */
bool fscc_ea_name_ok(const char *name, size_t len);

#define FSCC_STREAM_NAME_MAX 255	/* UTF-16 units, as NTFS */
int fscc_stream_parse(const char *part, char *name, size_t cap);

/*
 * One FILE_STREAM_INFORMATION entry (name: UTF-16LE, ":NAME:$DATA"),
 * 8-byte aligned, the previous entry (*prev, -1: none) linked to it.
 * false: it would end past limit (nothing written; whole entries only).
 */
bool fscc_stream_entry_encode(struct wcur *w, size_t limit, long *prev, const uint8_t *name,
			      uint32_t name_len, uint64_t size, uint64_t alloc);

#endif
