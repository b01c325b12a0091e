// SPDX-License-Identifier: MIT
/*
 * A write on an open handle right after another identity's request on
 * the same worker (rdaxd --workers 1): WRITER opens FILE, OTHER opens
 * and closes it (the worker now acts as OTHER), WRITER writes 4 bytes.
 * tests/integ/identity.sh checks the set-ID bits afterwards: a write
 * clears them unless root opened the file, whoever the worker last
 * acted as.
 *
 *   identsuid HOST PORT WRITER-SHARE WRITER WRITER-PWFILE OTHER-SHARE OTHER OTHER-PWFILE FILE
 *
 * Exit 0 when the write was done, 1 when a step failed (printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rawsmb.h"

static int logon(struct raw *r, const char *host, unsigned int port, const char *share,
		 const char *user, const char *pwfile)
{
	struct raw_cred c = { user, NULL, NULL };
	char pw[256] = "";
	FILE *f = fopen(pwfile, "r");

	if (!f || !fgets(pw, sizeof(pw), f)) {
		fprintf(stderr, "identsuid: cannot read %s\n", pwfile);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	pw[strcspn(pw, "\n")] = 0;
	c.password = pw;
	if (raw_session(r, host, port, SMB2_DIALECT_311, &c, share)) {
		fprintf(stderr, "identsuid: %s cannot log on to %s\n", user, share);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct smb2_fid wfid = { 0 }, ofid = { 0 };
	struct raw w = { 0 }, o = { 0 };
	unsigned int port;
	uint32_t st;
	int ret = 1;

	if (argc != 10) {
		fprintf(stderr, "usage: identsuid HOST PORT WRITER-SHARE WRITER WRITER-PWFILE "
			"OTHER-SHARE OTHER OTHER-PWFILE FILE\n");
		return 1;
	}
	port = (unsigned int)atoi(argv[2]);
	if (logon(&w, argv[1], port, argv[3], argv[4], argv[5]))
		return 1;
	if (logon(&o, argv[1], port, argv[6], argv[7], argv[8]))
		goto out_w;
	st = raw_create(&w, argv[9], FILE_WRITE_DATA, FILE_OPEN, FILE_NON_DIRECTORY_FILE, &wfid);
	if (st) {
		printf("%s opens %s: %s\n", argv[4], argv[9], raw_sname(st));
		goto out_o;
	}
	st = raw_create(&o, argv[9], FILE_READ_ATTRIBUTES, FILE_OPEN, 0, &ofid);
	if (!st)
		raw_close_fid(&o, &ofid);
	printf("%s opens %s: %s\n", argv[7], argv[9], raw_sname(st));
	st = raw_write(&w, &wfid, 0, "data", 4);
	printf("%s writes: %s\n", argv[4], raw_sname(st));
	ret = st ? 1 : 0;
	raw_close_fid(&w, &wfid);
out_o:
	raw_close(&o);
out_w:
	raw_close(&w);
	return ret;
}
