// SPDX-License-Identifier: MIT
/*
 * POSIX unlink and rename semantics on opens made with the POSIX create
 * context (docs/posix.md), against a running rdaxd, with a raw client:
 * Linux 6.1's cifs.ko sends neither. FileDispositionInformationEx with
 * FILE_DISPOSITION_POSIX_SEMANTICS: the name goes when that open closes,
 * the other opens keep reading and writing the nameless file, the name
 * is free at once. FileRenameInformationEx with
 * FILE_RENAME_REPLACE_IF_EXISTS|FILE_RENAME_POSIX_SEMANTICS: a rename
 * over a file someone holds open (without the flag: ACCESS_DENIED), the
 * holder keeps the old file. FileFsPosixInformation (statfs of a POSIX
 * mount). Bad input refused, the server still serving.
 *
 * usage: posix_sem -u USER -A PASSWORD_FILE HOST PORT SHARE DIR
 * (DIR: the share's directory on this machine, to look at the disk)
 */
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "rawsmb.h"
#include "proto/posix.h"

static int nfail;
static const char *dir;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)
#define EXPECT(st, want, what) do {						\
	uint32_t _s = (st);							\
	if (_s == (want))							\
		OK("%s: %s", what, raw_sname(_s));				\
	else									\
		BAD("%s: %s, expected %s", what, raw_sname(_s), raw_sname(want)); \
} while (0)
#define TRUE(cond, what) do {							\
	if (cond)								\
		OK("%s", what);							\
	else									\
		BAD("%s", what);						\
} while (0)

#define RW (FILE_READ_DATA | FILE_WRITE_DATA | FILE_READ_ATTRIBUTES)
#define RWD (RW | DELETE_ACCESS)

/* CREATE with the POSIX create context (mode 0644) unless plain. */
static uint32_t pcreate(struct raw *r, const char *name, uint32_t access, uint32_t disp,
			uint32_t options, bool plain, struct smb2_fid *fid)
{
	struct smb2_create_req c = { 0 };
	struct smb2_create_rsp rsp;
	uint8_t n16[512], ctx[128], b[2048], mode[4];
	size_t prev = SIZE_MAX;
	struct wcur w, wc;
	int n = utf8_to_utf16le(name, n16, sizeof(n16));

	if (n < 0)
		return STATUS_INVALID_PARAMETER;
	put_le32(mode, 0644);
	wcur_init(&wc, ctx, sizeof(ctx));
	if (!plain)
		smb2_create_ctx_add_name(&wc, &prev, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN, mode, 4);
	c.impersonation = 2;
	c.desired_access = access;
	c.file_attributes = FILE_ATTRIBUTE_NORMAL;
	c.share_access = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	c.disposition = disp;
	c.options = options;
	c.name.p = n16;
	c.name.len = (uint32_t)n;
	c.contexts.p = ctx;
	c.contexts.len = (uint32_t)wc.off;
	raw_begin(&w, b, sizeof(b));
	smb2_create_req_encode(&w, &c);
	if (raw_xchg(r, SMB2_CREATE, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!r->status && fid && !smb2_create_rsp_decode(r->rx, r->rx_len, &rsp))
		*fid = rsp.fid;
	return r->status;
}

static uint32_t setinfo(struct raw *r, const struct smb2_fid *fid, uint8_t cls,
			const void *data, uint32_t len)
{
	return raw_set_info(r, fid, SMB2_0_INFO_FILE, cls, 0, data, len);
}

static uint32_t dispose(struct raw *r, const struct smb2_fid *fid, uint32_t flags)
{
	uint8_t d[4];

	put_le32(d, flags);
	return setinfo(r, fid, FileDispositionInformationEx, d, 4);
}

/* FILE_RENAME_INFORMATION_EX: Flags, Reserved, RootDirectory, length, name */
static uint32_t rename_ex(struct raw *r, const struct smb2_fid *fid, const char *to,
			  uint32_t flags)
{
	uint8_t d[600] = { 0 };
	int n = utf8_to_utf16le(to, d + 20, sizeof(d) - 20);

	if (n < 0)
		return STATUS_INVALID_PARAMETER;
	put_le32(d, flags);
	put_le32(d + 16, (uint32_t)n);
	return setinfo(r, fid, FileRenameInformationEx, d, 20 + (uint32_t)n);
}

static bool reads(struct raw *r, const struct smb2_fid *fid, const char *want)
{
	char buf[64] = { 0 };
	uint32_t got;

	return !raw_read(r, fid, 0, buf, sizeof(buf) - 1, &got) && got == strlen(want) &&
	       !memcmp(buf, want, got);
}

static bool on_disk(const char *name)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return !lstat(p, &st);
}

static bool disk_has(const char *name, const char *want)
{
	char p[4096], buf[64] = { 0 };
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	return n == strlen(want) && !memcmp(buf, want, n);
}

static uint32_t make(struct raw *r, const char *name, const char *data, struct smb2_fid *fid)
{
	uint32_t st = pcreate(r, name, RWD, FILE_OVERWRITE_IF, 0, false, fid);

	if (!st && data)
		st = raw_write(r, fid, 0, data, (uint32_t)strlen(data));
	return st;
}

static void unlink_cases(struct raw *r)
{
	struct smb2_fid a, b, c, d, e, p1, p2;

	/* a file: A deletes it POSIX-style while B holds it */
	EXPECT(make(r, "u1", "old", &a), STATUS_SUCCESS, "create u1 (POSIX open A)");
	EXPECT(pcreate(r, "u1", RW, FILE_OPEN, 0, false, &b), STATUS_SUCCESS, "open u1 again (B)");
	EXPECT(dispose(r, &a, 0x1 | 0x2), STATUS_SUCCESS,
	       "A: FileDispositionInformationEx DELETE|POSIX_SEMANTICS");
	EXPECT(pcreate(r, "u1", RW, FILE_OPEN, 0, false, &c), STATUS_DELETE_PENDING,
	       "  a new open before A closes: delete pending");
	EXPECT(raw_close_fid(r, &a), STATUS_SUCCESS, "close A");
	TRUE(!on_disk("u1"), "  the name is gone from the server's disk, B still open");
	EXPECT(pcreate(r, "u1", RW, FILE_OPEN, 0, false, &c), STATUS_OBJECT_NAME_NOT_FOUND,
	       "  opening the name: not found");
	TRUE(reads(r, &b, "old"), "  B still reads the file's data");
	EXPECT(raw_write(r, &b, 3, "+b", 2), STATUS_SUCCESS, "  B still writes");
	TRUE(reads(r, &b, "old+b"), "  and reads that back");
	EXPECT(make(r, "u1", "new", &c), STATUS_SUCCESS, "  the name is free: a new u1");
	EXPECT(raw_rename(r, &b, "u1-moved", false), STATUS_ACCESS_DENIED,
	       "  B (no DELETE access) cannot rename");
	EXPECT(setinfo(r, &b, FileDispositionInformation, "\1", 1), STATUS_ACCESS_DENIED,
	       "  B (no DELETE access) cannot set delete");
	EXPECT(raw_close_fid(r, &b), STATUS_SUCCESS, "close B");
	EXPECT(raw_close_fid(r, &c), STATUS_SUCCESS, "close the new u1");
	TRUE(disk_has("u1", "new"), "  the new u1 is untouched by the old file's closes");

	/* a nameless file's other DELETE opener sets delete: the new name stays */
	EXPECT(make(r, "u2", "x", &a), STATUS_SUCCESS, "create u2 (A)");
	EXPECT(pcreate(r, "u2", RWD, FILE_OPEN, 0, false, &b), STATUS_SUCCESS, "open u2 with DELETE (B)");
	EXPECT(dispose(r, &a, 0x3), STATUS_SUCCESS, "A: POSIX delete");
	EXPECT(raw_close_fid(r, &a), STATUS_SUCCESS, "close A");
	EXPECT(make(r, "u2", "y", &c), STATUS_SUCCESS, "a new u2");
	raw_close_fid(r, &c);
	EXPECT(raw_rename(r, &b, "u2-moved", false), STATUS_OBJECT_NAME_NOT_FOUND,
	       "B cannot rename the nameless file");
	TRUE(!on_disk("u2-moved") && disk_has("u2", "y"), "  nothing moved");
	EXPECT(dispose(r, &b, 0x1), STATUS_SUCCESS, "B: a plain delete of the nameless file");
	EXPECT(raw_close_fid(r, &b), STATUS_SUCCESS, "close B");
	TRUE(disk_has("u2", "y"), "  the new u2 is still there");

	/* undone before the close: nothing goes */
	EXPECT(make(r, "u3", "z", &a), STATUS_SUCCESS, "create u3");
	EXPECT(pcreate(r, "u3", RW, FILE_OPEN, 0, false, &b), STATUS_SUCCESS, "  open it again");
	EXPECT(dispose(r, &a, 0x3), STATUS_SUCCESS, "  POSIX delete");
	EXPECT(dispose(r, &a, 0x2), STATUS_SUCCESS, "  then DO_NOT_DELETE");
	raw_close_fid(r, &a);
	raw_close_fid(r, &b);
	TRUE(disk_has("u3", "z"), "  u3 is still there");

	/* an empty directory, held open by another handle */
	EXPECT(pcreate(r, "ud", RWD, FILE_CREATE, FILE_DIRECTORY_FILE, false, &d), STATUS_SUCCESS,
	       "mkdir ud");
	EXPECT(pcreate(r, "ud", FILE_READ_ATTRIBUTES, FILE_OPEN, FILE_DIRECTORY_FILE, false, &e),
	       STATUS_SUCCESS, "  open it again");
	EXPECT(dispose(r, &d, 0x3), STATUS_SUCCESS, "  POSIX delete of the directory");
	raw_close_fid(r, &d);
	TRUE(!on_disk("ud"), "  gone once the deleting open closed, the other still open");
	raw_close_fid(r, &e);

	/* a plain (non-POSIX) open: the flag is ignored, the last close deletes */
	EXPECT(pcreate(r, "u4", RWD, FILE_OVERWRITE_IF, 0, true, &p1), STATUS_SUCCESS,
	       "create u4 without the POSIX context");
	EXPECT(pcreate(r, "u4", RW, FILE_OPEN, 0, true, &p2), STATUS_SUCCESS, "  open it again");
	EXPECT(dispose(r, &p1, 0x3), STATUS_SUCCESS, "  DELETE|POSIX_SEMANTICS on the plain open");
	raw_close_fid(r, &p1);
	TRUE(on_disk("u4"), "  still there while the other open lasts (Windows rules)");
	raw_close_fid(r, &p2);
	TRUE(!on_disk("u4"), "  gone at the last close");
}

static void rename_cases(struct raw *r)
{
	struct smb2_fid s, t, x, n;

	EXPECT(make(r, "t1", "target", &t), STATUS_SUCCESS, "create t1, kept open (holder)");
	EXPECT(make(r, "s1", "source", &s), STATUS_SUCCESS, "create s1");
	EXPECT(raw_rename(r, &s, "t1", false), STATUS_OBJECT_NAME_COLLISION,
	       "FileRenameInformation s1 -> t1 without replace");
	{
		uint8_t d[600] = { 0 };
		int len = utf8_to_utf16le("t1", d + 20, sizeof(d) - 20);

		d[0] = 1;	/* ReplaceIfExists */
		put_le32(d + 16, (uint32_t)len);
		EXPECT(setinfo(r, &s, FileRenameInformation, d, 20 + (uint32_t)len),
		       STATUS_ACCESS_DENIED, "  with replace, t1 open: access denied (as Windows)");
	}
	EXPECT(rename_ex(r, &s, "t1", 0x1), STATUS_ACCESS_DENIED,
	       "FileRenameInformationEx REPLACE_IF_EXISTS, t1 open: access denied");
	EXPECT(rename_ex(r, &s, "t1", 0x2), STATUS_OBJECT_NAME_COLLISION,
	       "  POSIX_SEMANTICS without REPLACE_IF_EXISTS: collision");
	EXPECT(rename_ex(r, &s, "t1", 0x3), STATUS_SUCCESS,
	       "  REPLACE_IF_EXISTS|POSIX_SEMANTICS: replaced over the open t1");
	TRUE(disk_has("t1", "source") && !on_disk("s1"), "  t1 on disk is the source now");
	TRUE(reads(r, &t, "target"), "  the holder still reads the old t1");
	EXPECT(raw_write(r, &t, 0, "TARGET", 6), STATUS_SUCCESS, "  and writes it");
	EXPECT(pcreate(r, "t1", RW, FILE_OPEN, 0, false, &n), STATUS_SUCCESS, "  a new open of t1");
	TRUE(reads(r, &n, "source"), "  reads the renamed file");
	raw_close_fid(r, &n);
	EXPECT(raw_rename(r, &t, "t1-old", false), STATUS_OBJECT_NAME_NOT_FOUND,
	       "  the holder cannot rename the nameless old t1");
	EXPECT(make(r, "t2", "two", &x), STATUS_SUCCESS, "create t2");
	EXPECT(rename_ex(r, &x, "t1", 0x3), STATUS_SUCCESS, "  t2 renamed over t1 (held by s's open)");
	EXPECT(dispose(r, &s, 0x1), STATUS_SUCCESS, "  the replaced file's open sets delete");
	raw_close_fid(r, &s);
	TRUE(disk_has("t1", "two"), "  its close leaves the new t1 alone");
	raw_close_fid(r, &t);
	raw_close_fid(r, &x);
	TRUE(disk_has("t1", "two"), "  all closed: t1 holds t2's data");

	/* a plain (non-POSIX) open: the POSIX flag is ignored */
	EXPECT(pcreate(r, "t3", RW, FILE_OVERWRITE_IF, 0, true, &t), STATUS_SUCCESS, "plain t3, kept open");
	EXPECT(pcreate(r, "s3", RWD, FILE_OVERWRITE_IF, 0, true, &s), STATUS_SUCCESS, "plain s3");
	EXPECT(rename_ex(r, &s, "t3", 0x3), STATUS_ACCESS_DENIED,
	       "  REPLACE|POSIX on a plain open over an open t3: access denied");
	raw_close_fid(r, &t);
	EXPECT(rename_ex(r, &s, "t3", 0x1), STATUS_SUCCESS, "  t3 closed: replaced");
	raw_close_fid(r, &s);
}

/* QUERY_INFO of the file system, class 100: statfs through cifs.ko -o posix */
static uint32_t qfs_posix(struct raw *r, const struct smb2_fid *fid, uint32_t out_len,
			  struct posix_fsinfo *fs)
{
	struct smb2_query_info_req q = {
		.info_type = SMB2_0_INFO_FILESYSTEM,
		.info_class = FileFsPosixInformation,
		.output_len = out_len,
		.fid = *fid,
	};
	uint8_t b[256];
	struct wcur w;

	memset(fs, 0, sizeof(*fs));
	raw_begin(&w, b, sizeof(b));
	smb2_query_info_req_encode(&w, &q);
	if (raw_xchg(r, SMB2_QUERY_INFO, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	/* OutputBufferOffset, OutputBufferLength after the header */
	if (!r->status && r->rx_len >= SMB2_HDR_SIZE + 8) {
		uint16_t off = get_le16(r->rx + SMB2_HDR_SIZE + 2);
		uint32_t len = get_le32(r->rx + SMB2_HDR_SIZE + 4);

		if (len != POSIX_FS_INFO_LEN || (size_t)off + len > r->rx_len ||
		    posix_fs_info_decode(r->rx + off, len, fs))
			return STATUS_INVALID_NETWORK_RESPONSE;
	}
	return r->status;
}

static void fs_cases(struct raw *r)
{
	struct posix_fsinfo fs;
	struct statvfs sv;
	struct smb2_fid f;

	EXPECT(pcreate(r, "", FILE_READ_ATTRIBUTES, FILE_OPEN, FILE_DIRECTORY_FILE, false, &f),
	       STATUS_SUCCESS, "open the share's root");
	EXPECT(qfs_posix(r, &f, 56, &fs), STATUS_SUCCESS, "FileFsPosixInformation (statfs)");
	if (!statvfs(dir, &sv) && fs.block_size == sv.f_frsize && fs.blocks == sv.f_blocks &&
	    fs.files == sv.f_files)
		OK("  block size %u, %llu blocks, %llu inodes: the share's statvfs", fs.block_size,
		   (unsigned long long)fs.blocks, (unsigned long long)fs.files);
	else
		BAD("  block size %u, %llu blocks: not the share's statvfs", fs.block_size,
		    (unsigned long long)fs.blocks);
	EXPECT(qfs_posix(r, &f, 55, &fs), STATUS_INFO_LENGTH_MISMATCH,
	       "  with a 55-byte output buffer");
	raw_close_fid(r, &f);
}

/*
 * The create context's mode is set exactly, but a directory made in a
 * set-group-ID directory keeps that bit, as mkdir(2) (xfstests
 * generic/314); a file does not get it.
 */
static void mode_cases(struct raw *r)
{
	char path[4096];
	struct stat st;
	struct smb2_fid f;

	snprintf(path, sizeof(path), "%s/sgd", dir);
	if (mkdir(path, 0777) || chmod(path, 02777)) {
		BAD("mkdir %s: %s", path, strerror(errno));
		return;
	}
	EXPECT(pcreate(r, "sgd/sub", FILE_READ_ATTRIBUTES, FILE_CREATE, FILE_DIRECTORY_FILE, false,
		       &f), STATUS_SUCCESS, "mkdir (mode 0644) in a set-group-ID directory");
	raw_close_fid(r, &f);
	snprintf(path, sizeof(path), "%s/sgd/sub", dir);
	if (!stat(path, &st) && (st.st_mode & 07777) == 02644)
		OK("  mode 2644 on disk: the set-group-ID bit kept");
	else
		BAD("  mode %o on disk, want 2644", (unsigned int)(st.st_mode & 07777));
	EXPECT(pcreate(r, "sgd/f", RW, FILE_CREATE, 0, false, &f), STATUS_SUCCESS,
	       "a file (mode 0644) there");
	raw_close_fid(r, &f);
	snprintf(path, sizeof(path), "%s/sgd/f", dir);
	if (!stat(path, &st) && (st.st_mode & 07777) == 0644)
		OK("  mode 644 on disk");
	else
		BAD("  mode %o on disk, want 644", (unsigned int)(st.st_mode & 07777));
}

static void bad_cases(struct raw *r)
{
	struct smb2_fid f;
	uint8_t d[64] = { 0 };

	EXPECT(make(r, "bad", "b", &f), STATUS_SUCCESS, "create bad");
	EXPECT(setinfo(r, &f, FileDispositionInformationEx, d, 3), STATUS_INFO_LENGTH_MISMATCH,
	       "FileDispositionInformationEx of 3 bytes");
	EXPECT(dispose(r, &f, 0x80000003u), STATUS_INVALID_PARAMETER,
	       "FileDispositionInformationEx with an unknown flag");
	EXPECT(setinfo(r, &f, FileRenameInformationEx, d, 19), STATUS_INFO_LENGTH_MISMATCH,
	       "FileRenameInformationEx of 19 bytes");
	put_le32(d, 3);
	put_le32(d + 16, 40);	/* name longer than the buffer */
	EXPECT(setinfo(r, &f, FileRenameInformationEx, d, 24), STATUS_INVALID_PARAMETER,
	       "FileRenameInformationEx, name length past the buffer");
	put_le32(d + 16, 0);
	EXPECT(setinfo(r, &f, FileRenameInformationEx, d, 20), STATUS_INVALID_PARAMETER,
	       "FileRenameInformationEx, empty name");
	put_le32(d + 8, 7);	/* RootDirectory */
	put_le32(d + 16, 2);
	d[20] = 'x';
	EXPECT(setinfo(r, &f, FileRenameInformationEx, d, 22), STATUS_INVALID_PARAMETER,
	       "FileRenameInformationEx with a RootDirectory");
	put_le32(d + 8, 0);
	TRUE(rename_ex(r, &f, "../escape", 0x3) != STATUS_SUCCESS && !on_disk("../escape"),
	     "FileRenameInformationEx to ../escape refused");
	EXPECT(dispose(r, &f, 0x3), STATUS_SUCCESS, "POSIX delete of bad");
	raw_close_fid(r, &f);
	TRUE(!on_disk("bad"), "  gone");
	EXPECT(raw_echo(r), STATUS_SUCCESS, "the server still answers");
}

int main(int argc, char **argv)
{
	struct raw_cred cred = { 0 };
	char password[256];
	struct raw r;
	FILE *pf;
	long st;

	if (argc != 9 || strcmp(argv[1], "-u") || strcmp(argv[3], "-A")) {
		fprintf(stderr, "usage: posix_sem -u USER -A PASSWORD_FILE HOST PORT SHARE DIR\n");
		return 2;
	}
	pf = fopen(argv[4], "r");
	if (!pf || !fgets(password, sizeof(password), pf)) {
		fprintf(stderr, "posix_sem: cannot read %s\n", argv[4]);
		return 2;
	}
	fclose(pf);
	password[strcspn(password, "\r\n")] = 0;
	cred.user = argv[2];
	cred.password = password;
	dir = argv[8];
	if (crypto_init())
		return 99;
	if (raw_connect(&r, argv[5], (unsigned int)atoi(argv[6]))) {
		BAD("cannot connect to %s:%s", argv[5], argv[6]);
		return 1;
	}
	r.posix = true;
	if (raw_negotiate(&r, SMB2_DIALECT_311) || !r.posix) {
		BAD("no POSIX extensions negotiated");
		return 1;
	}
	st = raw_logon(&r, &cred);
	if (st || raw_tcon(&r, argv[7])) {
		BAD("no session on %s (%ld, %s)", argv[7], st, raw_sname(r.status));
		return 1;
	}
	unlink_cases(&r);
	rename_cases(&r);
	fs_cases(&r);
	mode_cases(&r);
	bad_cases(&r);
	raw_close(&r);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
