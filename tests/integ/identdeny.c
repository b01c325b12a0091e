// SPDX-License-Identifier: MIT
/*
 * What the kernel refuses a user, on the wire (tests/integ/identity.sh
 * runs it): user B against user A's files, each case after the same
 * operation by A (who may) and with the disk checked afterwards.
 *
 *   set-info of A's file by B: times (utimensat: only the owner),
 *     attributes (the read-only bit is a chmod: only the owner), end of
 *     file (B could open it for reading only);
 *   rename of B's own file into A's directory B may not write;
 *   server-side copy (FSCTL_SRV_COPYCHUNK_WRITE) from A's 0600 file (B
 *     gets an attributes-only open and its resume key, no data) and into
 *     A's 0644 file (B's open of it may only read).
 *
 * Each is STATUS_ACCESS_DENIED, and nothing changed on disk.
 *
 *   identdeny HOST PORT SHARE DIR USER_A PW_A USER_B PW_B
 *
 * DIR is the share's directory on this host, where the caller made, as
 * A's: a.txt (0644, "alpha"), a600.txt (0600, "secret"), adir/ (0755);
 * and as B's: b.txt (0644), bsrc.txt (0644, "bravo").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/fsctl.h"
#include "rawsmb.h"

static int nfail;
static const char *dir;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static void expect(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		OK("%s: %s", what, raw_sname(got));
	else
		BAD("%s: %s, want %s", what, raw_sname(got), raw_sname(want));
}

static uint32_t set_info(struct raw *r, const struct smb2_fid *fid, uint8_t class,
			 const void *data, uint32_t len)
{
	return raw_set_info(r, fid, SMB2_0_INFO_FILE, class, 0, data, len);
}

/* FileBasicInformation: the times (FILETIME, 0 = leave) and attributes */
static uint32_t set_basic(struct raw *r, const struct smb2_fid *fid, uint64_t mtime,
			  uint32_t attrs)
{
	uint8_t d[40] = { 0 };

	put_le64(d + 16, mtime);	/* LastWriteTime */
	put_le32(d + 32, attrs);
	return set_info(r, fid, FileBasicInformation, d, sizeof(d));
}

static uint32_t set_eof(struct raw *r, const struct smb2_fid *fid, uint64_t size)
{
	uint8_t d[8];

	put_le64(d, size);
	return set_info(r, fid, FileEndOfFileInformation, d, sizeof(d));
}

static uint32_t fsctl(struct raw *r, const struct smb2_fid *fid, uint32_t ctl,
		      const void *in, uint32_t in_len, uint8_t *out, uint32_t *out_len)
{
	static uint8_t b[SMB2_HDR_SIZE + 56 + 4096];
	struct smb2_ioctl_req q = { 0 };
	struct smb2_ioctl_rsp rsp;
	struct wcur w;

	q.ctl_code = ctl;
	q.fid = *fid;
	q.input.p = in;
	q.input.len = in_len;
	q.max_output_response = 64;
	q.flags = SMB2_0_IOCTL_IS_FSCTL;
	raw_begin(&w, b, sizeof(b));
	smb2_ioctl_req_encode(&w, &q);
	*out_len = 0;
	if (w.err || raw_xchg(r, SMB2_IOCTL, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!smb2_ioctl_rsp_decode(r->rx, r->rx_len, &rsp) && rsp.output.len <= 64) {
		memcpy(out, rsp.output.p, rsp.output.len);
		*out_len = rsp.output.len;
	}
	return r->status;
}

static uint32_t resume_key(struct raw *r, const struct smb2_fid *fid, uint8_t *key)
{
	uint8_t out[64];
	uint32_t len, st;

	st = fsctl(r, fid, FSCTL_SRV_REQUEST_RESUME_KEY, NULL, 0, out, &len);
	if (!st && len < FSCTL_RESUME_KEY_LEN)
		return STATUS_INVALID_NETWORK_RESPONSE;
	if (!st)
		memcpy(key, out, FSCTL_RESUME_KEY_LEN);
	return st;
}

/* copy len bytes from the key's file at 0 to dst at 0 */
static uint32_t copy(struct raw *r, const struct smb2_fid *dst, const uint8_t *key,
		     uint32_t len)
{
	struct fsctl_chunk ch = { 0, 0, len };
	uint8_t in[FSCTL_COPYCHUNK_HDR_LEN + FSCTL_COPYCHUNK_CHUNK_LEN], out[64];
	uint32_t olen;
	struct wcur w;

	wcur_init(&w, in, sizeof(in));
	fsctl_copychunk_encode(&w, key, &ch, 1);
	return fsctl(r, dst, FSCTL_SRV_COPYCHUNK_WRITE, in, (uint32_t)w.off, out, &olen);
}

static uint32_t open_(struct raw *r, const char *name, uint32_t access, uint32_t disp,
		      struct smb2_fid *fid)
{
	return raw_create(r, name, access, disp, FILE_NON_DIRECTORY_FILE, fid);
}

/* what the disk says about a file: size, mode, mtime, contents */
static void disk(const char *name, char *out, size_t len)
{
	char path[4096], data[64] = "";
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st)) {
		snprintf(out, len, "(missing)");
		return;
	}
	f = fopen(path, "r");
	if (f) {
		size_t n = fread(data, 1, sizeof(data) - 1, f);

		data[n] = 0;
		fclose(f);
	}
	snprintf(out, len, "%lld %o %lld.%09ld %s", (long long)st.st_size, st.st_mode & 07777,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, data);
}

static void unchanged(const char *name, const char *before)
{
	char now[256];

	disk(name, now, sizeof(now));
	if (strcmp(now, before))
		BAD("%s changed on disk: '%s' -> '%s'", name, before, now);
	else
		OK("%s unchanged on disk", name);
}

static int logon(struct raw *r, const char *host, unsigned int port, const char *share,
		 const char *user, const char *pw)
{
	struct raw_cred c = { user, pw, NULL };
	int ret = raw_session(r, host, port, SMB2_DIALECT_311, &c, share);

	if (ret)
		BAD("%s cannot log on: %d", user, ret);
	return ret;
}

static void read_pw(const char *file, char *pw, size_t len)
{
	FILE *f = fopen(file, "r");

	pw[0] = 0;
	if (f) {
		if (fgets(pw, (int)len, f))
			pw[strcspn(pw, "\n")] = 0;
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	const uint64_t when = 132000000000000000ull;	/* a FILETIME in 2019 */
	struct smb2_fid fa, fb, fk, fd;
	char pwa[256], pwb[256], before[256];
	uint8_t key[FSCTL_RESUME_KEY_LEN];
	struct raw a, b;
	unsigned int port;

	if (argc != 9) {
		fprintf(stderr, "usage: identdeny HOST PORT SHARE DIR USER_A PW_A USER_B PW_B\n");
		return 2;
	}
	port = (unsigned int)atoi(argv[2]);
	dir = argv[4];
	read_pw(argv[6], pwa, sizeof(pwa));
	read_pw(argv[8], pwb, sizeof(pwb));
	if (crypto_init())
		return 1;
	if (logon(&a, argv[1], port, argv[3], argv[5], pwa) ||
	    logon(&b, argv[1], port, argv[3], argv[7], pwb))
		return 1;

	/* set-info: times and the read-only attribute (chmod) */
	disk("a.txt", before, sizeof(before));
	expect("B opens A's 0644 file for attributes",
	       open_(&b, "a.txt", FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES, FILE_OPEN, &fb), 0);
	expect("B sets its times (not the owner)", set_basic(&b, &fb, when, 0),
	       STATUS_ACCESS_DENIED);
	expect("B sets its read-only attribute (a chmod)",
	       set_basic(&b, &fb, 0, FILE_ATTRIBUTE_READONLY), STATUS_ACCESS_DENIED);
	raw_close_fid(&b, &fb);
	expect("B opens it with MAXIMUM_ALLOWED (reading is all it gets)",
	       open_(&b, "a.txt", MAXIMUM_ALLOWED, FILE_OPEN, &fb), 0);
	expect("B truncates it (end of file)", set_eof(&b, &fb, 0), STATUS_ACCESS_DENIED);
	raw_close_fid(&b, &fb);
	expect("B opens it for writing", open_(&b, "a.txt", GENERIC_WRITE, FILE_OPEN, &fb),
	       STATUS_ACCESS_DENIED);
	unchanged("a.txt", before);
	expect("A opens her file for attributes",
	       open_(&a, "a.txt", FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES, FILE_OPEN, &fa), 0);
	expect("A sets its times", set_basic(&a, &fa, when, 0), 0);
	expect("A sets it read-only", set_basic(&a, &fa, 0, FILE_ATTRIBUTE_READONLY), 0);
	expect("A clears that", set_basic(&a, &fa, 0, FILE_ATTRIBUTE_NORMAL), 0);
	raw_close_fid(&a, &fa);

	/* rename into a directory B may not write */
	disk("b.txt", before, sizeof(before));
	expect("B opens its own file to rename it",
	       open_(&b, "b.txt", DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN, &fb), 0);
	expect("B renames it into A's 0755 directory", raw_rename(&b, &fb, "adir\\b.txt", false),
	       STATUS_ACCESS_DENIED);
	raw_close_fid(&b, &fb);
	unchanged("b.txt", before);
	disk("adir/b.txt", before, sizeof(before));
	if (strcmp(before, "(missing)"))
		BAD("adir/b.txt exists: %s", before);
	expect("A renames her own file in there",
	       open_(&a, "a.txt", DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN, &fa), 0);
	expect("... into adir", raw_rename(&a, &fa, "adir\\a.txt", false), 0);
	expect("... and back", raw_rename(&a, &fa, "a.txt", false), 0);
	raw_close_fid(&a, &fa);

	/* server-side copy from a file B may not read */
	disk("a600.txt", before, sizeof(before));
	expect("B opens A's 0600 file for reading",
	       open_(&b, "a600.txt", FILE_READ_DATA, FILE_OPEN, &fk), STATUS_ACCESS_DENIED);
	expect("B opens it for its attributes",
	       open_(&b, "a600.txt", FILE_READ_ATTRIBUTES, FILE_OPEN, &fk), 0);
	expect("B asks a resume key for that open", resume_key(&b, &fk, key), 0);
	expect("B creates a file to copy into",
	       open_(&b, "bcopy.txt", FILE_READ_DATA | FILE_WRITE_DATA, FILE_CREATE, &fd), 0);
	expect("B copies A's 0600 file into it", copy(&b, &fd, key, 6), STATUS_ACCESS_DENIED);
	raw_close_fid(&b, &fd);
	raw_close_fid(&b, &fk);
	disk("bcopy.txt", before, sizeof(before));
	if (strncmp(before, "0 ", 2))
		BAD("bcopy.txt got data: %s", before);
	else
		OK("bcopy.txt is empty");
	expect("A opens her 0600 file for reading",
	       open_(&a, "a600.txt", FILE_READ_DATA, FILE_OPEN, &fk), 0);
	expect("A asks a resume key", resume_key(&a, &fk, key), 0);
	expect("A creates a file", open_(&a, "acopy.txt", FILE_READ_DATA | FILE_WRITE_DATA,
					  FILE_CREATE, &fd), 0);
	expect("A copies her 0600 file", copy(&a, &fd, key, 6), 0);
	raw_close_fid(&a, &fd);
	raw_close_fid(&a, &fk);
	disk("acopy.txt", before, sizeof(before));
	if (!strstr(before, "secret"))
		BAD("acopy.txt: %s", before);

	/* server-side copy into a file B may only read */
	disk("a.txt", before, sizeof(before));
	expect("B opens its own source", open_(&b, "bsrc.txt", FILE_READ_DATA, FILE_OPEN, &fk), 0);
	expect("B asks its resume key", resume_key(&b, &fk, key), 0);
	expect("B opens A's 0644 file with MAXIMUM_ALLOWED",
	       open_(&b, "a.txt", MAXIMUM_ALLOWED, FILE_OPEN, &fd), 0);
	expect("B copies into it", copy(&b, &fd, key, 5), STATUS_ACCESS_DENIED);
	raw_close_fid(&b, &fd);
	raw_close_fid(&b, &fk);
	unchanged("a.txt", before);

	raw_close(&a);
	raw_close(&b);
	printf("%d failed\n", nfail);
	return nfail ? 1 : 0;
}
