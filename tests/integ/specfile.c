// SPDX-License-Identifier: MIT
/*
 * Makes a special file over SMB as a Linux client newer than 6.1 does:
 * CREATE of a new empty file, FSCTL_SET_REPARSE_POINT with an NFS
 * reparse buffer (FIFO, SOCK, CHR, BLK), CLOSE. tests/integ/posix.sh
 * runs it; the server decides ("rdax special files", and devices need
 * CAP_MKNOD: a root session's only).
 *
 *   specfile HOST PORT SHARE USER PASSWORD-FILE NAME fifo|sock|chr|blk [MAJOR MINOR]
 *
 * Prints the status; exit 0 when made, 1 when refused, 2 on other errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/fsctl.h"
#include "proto/posix.h"
#include "rawsmb.h"

static const struct {
	const char *name;
	uint64_t type;
} kinds[] = {
	{ "fifo", NFS_SPECFILE_FIFO },
	{ "sock", NFS_SPECFILE_SOCK },
	{ "chr", NFS_SPECFILE_CHR },
	{ "blk", NFS_SPECFILE_BLK },
};

static uint32_t set_reparse(struct raw *r, const struct smb2_fid *fid, const void *in,
			    uint32_t len)
{
	struct smb2_ioctl_req q = { 0 };
	uint8_t b[512];
	struct wcur w;

	q.ctl_code = FSCTL_SET_REPARSE_POINT;
	q.fid = *fid;
	q.input.p = in;
	q.input.len = len;
	q.flags = SMB2_0_IOCTL_IS_FSCTL;
	raw_begin(&w, b, sizeof(b));
	smb2_ioctl_req_encode(&w, &q);
	if (w.err || raw_xchg(r, SMB2_IOCTL, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

int main(int argc, char **argv)
{
	struct raw_cred c = { 0 };
	struct smb2_fid fid = { 0 };
	struct raw r = { 0 };
	uint8_t buf[64];
	char pw[256] = "";
	struct wcur w;
	unsigned int i;
	uint32_t st;
	FILE *f;

	if (argc != 8 && argc != 10) {
		fprintf(stderr, "usage: specfile HOST PORT SHARE USER PASSWORD-FILE NAME "
			"fifo|sock|chr|blk [MAJOR MINOR]\n");
		return 2;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[i].name, argv[7]); i++)
		;
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		fprintf(stderr, "specfile: no kind %s\n", argv[7]);
		return 2;
	}
	f = fopen(argv[5], "r");
	if (!f || !fgets(pw, sizeof(pw), f)) {
		fprintf(stderr, "specfile: cannot read %s\n", argv[5]);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	pw[strcspn(pw, "\n")] = 0;
	c.user = argv[4];
	c.password = pw;
	if (raw_session(&r, argv[1], (unsigned int)atoi(argv[2]), SMB2_DIALECT_311, &c, argv[3])) {
		fprintf(stderr, "specfile: %s cannot log on to %s\n", argv[4], argv[3]);
		return 2;
	}
	wcur_init(&w, buf, sizeof(buf));
	reparse_nfs_encode(&w, kinds[i].type, argc == 10 ? (uint32_t)atoi(argv[8]) : 0,
			   argc == 10 ? (uint32_t)atoi(argv[9]) : 0);
	st = raw_create(&r, argv[6], FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES,
			FILE_CREATE, FILE_NON_DIRECTORY_FILE, &fid);
	if (!st) {
		st = set_reparse(&r, &fid, buf, (uint32_t)w.off);
		raw_close_fid(&r, &fid);
	}
	raw_close(&r);
	printf("%s makes %s (%s): %s\n", argv[4], argv[6], argv[7], raw_sname(st));
	return st ? 1 : 0;
}
