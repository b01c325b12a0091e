/* SPDX-License-Identifier: MIT */
/*
 * SMB3 POSIX extensions (smb3posix.org: POSIX-SMB2, POSIX-FSCC): the
 * POSIX create context, the POSIX information class (0x64) for
 * QUERY_INFO and QUERY_DIRECTORY, and the symlink forms around them:
 * the symbolic link reparse buffer ([MS-FSCC] 2.1.2.4), the NFS reparse
 * buffer ([MS-FSCC] 2.1.2.6) and the STATUS_STOPPED_ON_SYMLINK error
 * data ([MS-SMB2] 2.2.2.1, 2.2.2.2.1).
 */
#ifndef RDAX_PROTO_POSIX_H
#define RDAX_PROTO_POSIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/fscc.h"
#include "proto/secdesc.h"
#include "util/bytes.h"

/* The create context's name, also the negotiate context's data. */
#define POSIX_CTX_TAG "\x93\xAD\x25\x50\x9C\xB4\x11\xE7\xB4\x23\x83\xDE\x96\x8B\xCD\x7C"
#define POSIX_CTX_TAG_LEN 16

#define FilePosixInformation 100
#define POSIX_PERM_MASK 07777u

#define IO_REPARSE_TAG_SYMLINK 0xA000000Cu
#define IO_REPARSE_TAG_NFS 0x80000014u
#define SYMLINK_FLAG_RELATIVE 0x00000001u
#define NFS_SPECFILE_LNK 0x00000000014B4E4Cull
#define NFS_SPECFILE_CHR 0x0000000000524843ull
#define NFS_SPECFILE_BLK 0x00000000004B4C42ull
#define NFS_SPECFILE_FIFO 0x000000004F464946ull
#define NFS_SPECFILE_SOCK 0x000000004B434F53ull
#define SYMLINK_ERROR_TAG 0x4C4D5953u

/* POSIX-FSCC 2.2.1: the fixed part of FilePosixInformation, and of an entry */
#define POSIX_INFO_FIXED 80
#define POSIX_DIRENT_FIXED 88
/* a symlink's target: at most this many UTF-16 bytes on the wire */
#define POSIX_TARGET16_MAX 8190

/* What the POSIX create context answers and the info class carries. */
struct posix_info {
	uint32_t nlink;
	uint32_t reparse_tag;
	uint32_t mode;			/* permission bits only (07777) */
	uint64_t ino;
	uint32_t dev;
	struct sid owner, group;
};

/*
 * FileFsPosixInformation (QUERY_INFO of the file system, class 100; 56
 * bytes): what statfs(2) reports, in BlockSize units. cifs.ko -o posix
 * asks for it on every statfs.
 */
#define FileFsPosixInformation 100
#define POSIX_FS_INFO_LEN 56
struct posix_fsinfo {
	uint32_t optimal_io;		/* OptimalTransferSize */
	uint32_t block_size;
	uint64_t blocks, bfree, bavail;	/* TotalBlocks, BlocksAvail, UserBlocksAvail */
	uint64_t files, ffree;		/* TotalFileNodes, FreeFileNodes */
	uint64_t fsid;			/* FileSysIdentifier */
};
void posix_fs_info_encode(struct wcur *w, const struct posix_fsinfo *fs);
int posix_fs_info_decode(const uint8_t *p, size_t len, struct posix_fsinfo *fs);

/* The request's Data: the mode of a new file (4 bytes), 0 or -EBADMSG. */
int posix_cc_decode(const uint8_t *p, size_t len, uint32_t *mode);
void posix_cc_encode(struct wcur *w, uint32_t mode);
/* The response's Data: NumberOfLinks, ReparseTag, Mode, owner and group SIDs. */
void posix_cc_rsp_encode(struct wcur *w, const struct posix_info *pi);
int posix_cc_rsp_decode(const uint8_t *p, size_t len, struct posix_info *pi);

/* FilePosixInformation (QUERY_INFO): times, sizes, attributes, then as above. */
void posix_info_encode(struct wcur *w, const struct fscc_info *fi, const struct posix_info *pi);
int posix_info_decode(const uint8_t *p, size_t len, struct fscc_info *fi,
		      struct posix_info *pi);
/*
 * One QUERY_DIRECTORY entry of the class at the 8-aligned end of w: its
 * offset, or -ENOSPC when it does not fit in limit bytes (w unchanged).
 */
int posix_dirent_encode(struct wcur *w, size_t limit, const struct fscc_info *fi,
			const struct posix_info *pi, const uint8_t *name, uint32_t name_len);
/*
 * The entry at *off of a listing of len bytes: 1 and *off moved to the
 * next (len when it was the last), 0 at the end, -EBADMSG if malformed.
 */
int posix_dirent_next(const uint8_t *p, size_t len, size_t *off, struct fscc_info *fi,
		      struct posix_info *pi, const uint8_t **name, uint32_t *name_len);

/*
 * A reparse buffer as FSCTL_SET_REPARSE_POINT carries it: a symlink
 * (IO_REPARSE_TAG_SYMLINK, relative only; or IO_REPARSE_TAG_NFS "LNK"),
 * or an NFS special file. *type is NFS_SPECFILE_*; for a link, target
 * points at the UTF-16LE target (SubstituteName) of *tlen bytes; for a
 * device, *major and *minor. 0, -EBADMSG (malformed) or -EOPNOTSUPP
 * (another tag, an absolute Windows link).
 */
struct reparse_data {
	uint32_t tag;
	uint64_t type;
	const uint8_t *target;
	uint32_t tlen;
	uint32_t major, minor;
};
int reparse_decode(const uint8_t *p, size_t len, struct reparse_data *rd);
/* A relative symlink's reparse buffer (IO_REPARSE_TAG_SYMLINK) for target16. */
void reparse_symlink_encode(struct wcur *w, const uint8_t *target16, uint32_t tlen);
/* An NFS special file's (FIFO, SOCK, CHR, BLK). */
void reparse_nfs_encode(struct wcur *w, uint64_t type, uint32_t major, uint32_t minor);

/*
 * The ErrorData of STATUS_STOPPED_ON_SYMLINK: for SMB 3.1.1 wrapped in
 * one error context (ctx), else the bare symbolic link error response.
 */
void symlink_err_encode(struct wcur *w, bool ctx, const uint8_t *target16, uint32_t tlen,
			uint16_t unparsed);
/* What a client reads from it: 0 and the target, or -EBADMSG. */
int symlink_err_decode(const uint8_t *p, size_t len, bool ctx, const uint8_t **target16,
		       uint32_t *tlen);

/*
 * A symlink target as a client asks for it, for a link at the
 * share-relative path link: relative, not empty, no NUL, and its ".."
 * never climbing above the share's root. 0 or -EINVAL.
 */
int posix_target_check(const char *link, const char *target);

#endif
