// SPDX-License-Identifier: MIT
/*
 * SMB3 POSIX extension codecs (proto/posix.c): the create context and its
 * response laid out by hand from POSIX-SMB2 2.2.13.2.16 / 2.2.14.2.16,
 * FilePosixInformation and its directory entry (POSIX-FSCC 2.2.1), the
 * symlink and NFS reparse buffers ([MS-FSCC] 2.1.2.4, 2.1.2.6), the
 * STOPPED_ON_SYMLINK error data ([MS-SMB2] 2.2.2.2.1), and which symlink
 * targets stay beneath a share.
 */
#include <errno.h>
#include <string.h>

#include "proto/posix.h"
#include "t.h"

static void pi_make(struct posix_info *pi)
{
	uint32_t u[2] = { 1, 1000 }, g[2] = { 2, 100 };

	memset(pi, 0, sizeof(*pi));
	pi->nlink = 1;
	pi->mode = 0644;
	pi->ino = 0x1122334455667788ull;
	pi->dev = 0x801;
	sid_make(&pi->owner, 22, 2, u);
	sid_make(&pi->group, 22, 2, g);
}

static void create_ctx(void)
{
	uint8_t b[128];
	struct posix_info pi, back;
	struct wcur w;
	uint32_t mode;

	t_section("the create context: the mode, type bits ignored; 4 bytes only");
	t_unhex(b, sizeof(b), "a4810000");	/* S_IFREG | 0644, as cifs.ko sends it */
	T_EQ(posix_cc_decode(b, 4, &mode), 0);
	T_EQ(mode, 0644);
	T_EQ(posix_cc_decode(b, 3, &mode), -EBADMSG);
	T_EQ(posix_cc_decode(b, 8, &mode), -EBADMSG);

	t_section("the response: links, tag, mode, owner and group SIDs");
	pi_make(&pi);
	wcur_init(&w, b, sizeof(b));
	posix_cc_rsp_encode(&w, &pi);
	T_HEXEQ(b, w.off, "01000000 00000000 a4010000"
			  "0102000000000016 01000000 e8030000"
			  "0102000000000016 02000000 64000000");
	T_EQ(posix_cc_rsp_decode(b, w.off, &back), 0);
	T_EQ(back.mode, 0644);
	T_EQ(back.owner.sub[1], 1000);
	T_EQ(back.group.sub[1], 100);
	T_EQ(posix_cc_rsp_decode(b, w.off - 1, &back), -EBADMSG);
}

static void info(void)
{
	uint8_t b[512], n16[6] = { 'a', 0, 'b', 0, 'c', 0 };
	struct posix_info pi, pb;
	struct fscc_info fi = { 0 }, fb;
	const uint8_t *name;
	uint32_t nlen;
	struct wcur w;
	size_t off;
	int o1, o2;

	pi_make(&pi);
	fi.end_of_file = 5;
	fi.attributes = FILE_ATTRIBUTE_ARCHIVE;
	t_section("FilePosixInformation: 80 fixed bytes, then the SIDs");
	wcur_init(&w, b, sizeof(b));
	posix_info_encode(&w, &fi, &pi);
	T_EQ(w.off, POSIX_INFO_FIXED + 32);
	T_EQ(get_le64(b + 52), pi.ino);		/* Inode after DosAttributes */
	T_EQ(get_le32(b + 68), 1);		/* HardLinks */
	T_EQ(posix_info_decode(b, w.off, &fb, &pb), 0);
	T_EQ(fb.end_of_file, 5);
	T_EQ(pb.mode, 0644);
	T_EQ(pb.dev, 0x801);
	T_EQ(posix_info_decode(b, 79, &fb, &pb), -EBADMSG);

	t_section("two directory entries: 8-aligned, linked, names after the SIDs");
	wcur_init(&w, b, sizeof(b));
	o1 = posix_dirent_encode(&w, sizeof(b), &fi, &pi, n16, 6);
	o2 = posix_dirent_encode(&w, sizeof(b), &fi, &pi, n16, 4);
	T_EQ(o1, 0);
	T_EQ(o2, (POSIX_DIRENT_FIXED + 32 + 4 + 6 + 7) & ~7);
	put_le32(b + o1, (uint32_t)(o2 - o1));
	off = 0;
	T_EQ(posix_dirent_next(b, w.off, &off, &fb, &pb, &name, &nlen), 1);
	T_EQ(nlen, 6);
	T_MEMEQ(name, n16, 6);
	T_EQ(posix_dirent_next(b, w.off, &off, &fb, &pb, &name, &nlen), 1);
	T_EQ(nlen, 4);
	T_EQ(posix_dirent_next(b, w.off, &off, &fb, &pb, &name, &nlen), 0);
	T_EQ(posix_dirent_encode(&w, w.off + 10, &fi, &pi, n16, 6), -ENOSPC);
	off = 0;
	put_le32(b + POSIX_DIRENT_FIXED + 32, 1000);	/* a name past the end */
	T_EQ(posix_dirent_next(b, (size_t)o2, &off, &fb, &pb, &name, &nlen), -EBADMSG);
}

static void reparse(void)
{
	uint8_t b[128], t16[4] = { 'x', 0, '\\', 0 };
	struct reparse_data rd;
	const uint8_t *tp;
	uint32_t tl;
	struct wcur w;

	t_section("a relative symlink reparse buffer");
	wcur_init(&w, b, sizeof(b));
	reparse_symlink_encode(&w, t16, 4);
	T_HEXEQ(b, w.off, "0c0000a0 1400 0000 0000 0400 0400 0400 01000000"
			  "78005c00 78005c00");
	T_EQ(reparse_decode(b, w.off, &rd), 0);
	T_EQ(rd.type, NFS_SPECFILE_LNK);
	T_EQ(rd.tlen, 4);
	T_MEMEQ(rd.target, t16, 4);
	b[16] = 0;				/* Flags: absolute */
	T_EQ(reparse_decode(b, w.off, &rd), -EOPNOTSUPP);
	T_EQ(reparse_decode(b, 7, &rd), -EBADMSG);
	put_le16(b + 4, 200);			/* ReparseDataLength past the end */
	T_EQ(reparse_decode(b, w.off, &rd), -EBADMSG);

	t_section("NFS reparse buffers: a link, a FIFO, a char device");
	t_unhex(b, sizeof(b), "14000080 0a00 0000 4c4e4b0100000000 7800");
	T_EQ(reparse_decode(b, 18, &rd), 0);
	T_EQ(rd.type, NFS_SPECFILE_LNK);
	T_EQ(rd.tlen, 2);
	wcur_init(&w, b, sizeof(b));
	reparse_nfs_encode(&w, NFS_SPECFILE_FIFO, 0, 0);
	T_HEXEQ(b, w.off, "14000080 0800 0000 4649464f00000000");
	T_EQ(reparse_decode(b, w.off, &rd), 0);
	T_EQ(rd.type, NFS_SPECFILE_FIFO);
	wcur_init(&w, b, sizeof(b));
	reparse_nfs_encode(&w, NFS_SPECFILE_CHR, 1, 3);
	T_EQ(reparse_decode(b, w.off, &rd), 0);
	T_EQ(rd.major, 1);
	T_EQ(rd.minor, 3);
	T_EQ(reparse_decode(b, w.off - 1, &rd), -EBADMSG);

	t_section("the STOPPED_ON_SYMLINK error data, with and without a context");
	wcur_init(&w, b, sizeof(b));
	symlink_err_encode(&w, true, t16, 4, 0);
	T_EQ(w.off, 8 + 28 + 8);
	T_EQ(get_le32(b), 28 + 8);		/* ErrorDataLength */
	T_EQ(get_le32(b + 8), 28 + 8 - 4);	/* SymLinkLength */
	T_EQ(symlink_err_decode(b, w.off, true, &tp, &tl), 0);
	T_EQ(tl, 4);
	T_MEMEQ(tp, t16, 4);
	T_EQ(symlink_err_decode(b + 8, w.off - 8, false, &tp, &tl), 0);
	T_EQ(symlink_err_decode(b, 20, true, &tp, &tl), -EBADMSG);
}

static void targets(void)
{
	t_section("symlink targets beneath the share");
	T_EQ(posix_target_check("l", "f"), 0);
	T_EQ(posix_target_check("d/l", "../f"), 0);
	T_EQ(posix_target_check("d/e/l", "../../f"), 0);
	T_EQ(posix_target_check("l", "a/../b"), 0);
	T_EQ(posix_target_check("l", "./x"), 0);
	T_EQ(posix_target_check("l", "../f"), -EINVAL);
	T_EQ(posix_target_check("d/l", "../../f"), -EINVAL);
	T_EQ(posix_target_check("d/l", "x/../../../f"), -EINVAL);
	T_EQ(posix_target_check("l", "/etc/passwd"), -EINVAL);
	T_EQ(posix_target_check("l", ""), -EINVAL);
}

static void fs_info(void)
{
	struct posix_fsinfo fs = { 4096, 1024, 1000, 600, 500, 64, 32, 0x0102030405060708ull }, fb;
	uint8_t b[64];
	struct wcur w;

	t_section("FileFsPosixInformation: 56 bytes, statfs in BlockSize units");
	wcur_init(&w, b, sizeof(b));
	posix_fs_info_encode(&w, &fs);
	T_EQ(w.off, POSIX_FS_INFO_LEN);
	T_EQ(get_le32(b), 4096);		/* OptimalTransferSize */
	T_EQ(get_le32(b + 4), 1024);		/* BlockSize */
	T_EQ(get_le64(b + 16), 600);		/* BlocksAvail (free) */
	T_EQ(get_le64(b + 24), 500);		/* UserBlocksAvail */
	T_EQ(get_le64(b + 48), 0x0102030405060708ull);
	T_EQ(posix_fs_info_decode(b, w.off, &fb), 0);
	T_EQ(fb.blocks, 1000);
	T_EQ(fb.ffree, 32);
	T_EQ(posix_fs_info_decode(b, 55, &fb), -EBADMSG);
}

int main(void)
{
	create_ctx();
	info();
	fs_info();
	reparse();
	targets();
	return t_done();
}
