// SPDX-License-Identifier: MIT
/*
 * Gives a file to another owner or group over SMB: SET_INFO of a
 * security descriptor holding only the owner (S-1-22-1-ID) or the group
 * (S-1-22-2-ID), as smbcacls --chown/--chgrp sends it (which cannot use
 * another port than 445). tests/integ/identity.sh runs it.
 *
 *   identchown HOST PORT SHARE USER PASSWORD-FILE FILE owner|group ID
 *
 * Prints the status of the CREATE (with WRITE_OWNER) or of the SET_INFO;
 * exit 0 when the file was given, 1 when refused, 2 on other errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/secdesc.h"
#include "rawsmb.h"

int main(int argc, char **argv)
{
	uint8_t sd[20 + 16] = { 1, 0, 0x00, 0x80 };	/* revision 1, SE_SELF_RELATIVE */
	struct raw_cred c = { 0 };
	struct smb2_fid fid = { 0 };
	struct raw r = { 0 };
	char pw[256] = "";
	bool group;
	uint32_t st, id;
	FILE *f;

	if (argc != 9 || (strcmp(argv[7], "owner") && strcmp(argv[7], "group"))) {
		fprintf(stderr, "usage: identchown HOST PORT SHARE USER PASSWORD-FILE FILE owner|group ID\n");
		return 2;
	}
	f = fopen(argv[5], "r");
	if (!f || !fgets(pw, sizeof(pw), f)) {
		fprintf(stderr, "identchown: cannot read %s\n", argv[5]);
		return 2;
	}
	fclose(f);
	pw[strcspn(pw, "\n")] = 0;
	group = !strcmp(argv[7], "group");
	id = (uint32_t)strtoul(argv[8], NULL, 10);
	/* OffsetOwner or OffsetGroup: the SID right after the header */
	put_le32(sd + (group ? 8 : 4), 20);
	sd[20] = 1;			/* S-1-22-(1|2)-ID */
	sd[21] = 2;
	sd[27] = 22;
	put_le32(sd + 28, group ? 2 : 1);
	put_le32(sd + 32, id);
	c.user = argv[4];
	c.password = pw;
	if (raw_session(&r, argv[1], (unsigned int)atoi(argv[2]), SMB2_DIALECT_311, &c, argv[3])) {
		fprintf(stderr, "identchown: %s cannot log on to %s\n", argv[4], argv[3]);
		return 2;
	}
	st = raw_create(&r, argv[6], WRITE_OWNER | READ_CONTROL, FILE_OPEN, 0, &fid);
	if (!st) {
		st = raw_set_info(&r, &fid, SMB2_0_INFO_SECURITY, 0,
				  group ? GROUP_SECURITY_INFORMATION : OWNER_SECURITY_INFORMATION,
				  sd, sizeof(sd));
		raw_close_fid(&r, &fid);
	}
	raw_close(&r);
	printf("%s %s of %s to %u: %s\n", argv[4], group ? "chgrp" : "chown", argv[6], id,
	       raw_sname(st));
	return st ? 1 : 0;
}
