// SPDX-License-Identifier: MIT
/*
 * Sparse files on the wire against a running server: FSCTL_SET_SPARSE,
 * FSCTL_SET_ZERO_DATA and FSCTL_QUERY_ALLOCATED_RANGES round trips
 * (ranges, zeros read back, partial output with STATUS_BUFFER_OVERFLOW),
 * and bad input refused (short buffers, negative and overflowing
 * offsets, a bogus duplicate-extents source) with the server still
 * answering. The share's file system must punch holes (ext4, XFS).
 *
 * usage: fsctl -u USER -A PASSWORD_FILE HOST PORT SHARE
 */
#include "rawsmb.h"
#include "proto/fsctl.h"

#define MiB (1u << 20)
#define NEG 0x8000000000000000ull

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)
#define EXPECT(st, want, what) do {						\
	uint32_t _s = (st);							\
	if (_s == (want))							\
		OK("%s: %s", what, raw_sname(_s));				\
	else									\
		BAD("%s: %s, expected %s", what, raw_sname(_s), raw_sname(want)); \
} while (0)

static uint8_t out[4096];
static uint32_t out_len;

static uint32_t fsctl(struct raw *r, const struct smb2_fid *fid, uint32_t ctl,
		      const void *in, uint32_t in_len, uint32_t max_out)
{
	static uint8_t b[SMB2_HDR_SIZE + 56 + 256];
	struct smb2_ioctl_req q = {
		.ctl_code = ctl,
		.fid = *fid,
		.input = { in, in_len },
		.max_output_response = max_out,
		.flags = SMB2_0_IOCTL_IS_FSCTL,
	};
	struct smb2_ioctl_rsp rsp;
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_ioctl_req_encode(&w, &q);
	out_len = 0;
	if (w.err || raw_xchg(r, SMB2_IOCTL, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!smb2_ioctl_rsp_decode(r->rx, r->rx_len, &rsp) && rsp.output.len <= sizeof(out)) {
		if (rsp.output.len)
			memcpy(out, rsp.output.p, rsp.output.len);
		out_len = rsp.output.len;
	}
	return r->status;
}

static uint32_t qar(struct raw *r, const struct smb2_fid *fid, uint64_t off,
		    uint64_t len, uint32_t max_out)
{
	struct fsctl_range q = { off, len };
	uint8_t in[FSCTL_RANGE_LEN];
	struct wcur w;

	wcur_init(&w, in, sizeof(in));
	fsctl_range_encode(&w, &q);
	return fsctl(r, fid, FSCTL_QUERY_ALLOCATED_RANGES, in, sizeof(in), max_out);
}

static uint32_t zero(struct raw *r, const struct smb2_fid *fid, uint64_t off, uint64_t beyond)
{
	uint8_t in[FSCTL_ZERO_DATA_LEN];
	struct wcur w;

	wcur_init(&w, in, sizeof(in));
	fsctl_zero_data_encode(&w, off, beyond);
	return fsctl(r, fid, FSCTL_SET_ZERO_DATA, in, sizeof(in), 0);
}

static struct fsctl_range range(uint32_t i)
{
	struct fsctl_range g = { 0 };

	fsctl_range_decode(out + i * FSCTL_RANGE_LEN, out_len - i * FSCTL_RANGE_LEN, &g);
	return g;
}

static uint32_t fill(struct raw *r, const struct smb2_fid *fid, uint64_t off, uint8_t v)
{
	static uint8_t buf[MiB];
	uint32_t st;

	memset(buf, v, sizeof(buf));
	st = raw_write(r, fid, off, buf, 256 * 1024);
	for (uint32_t i = 1; !st && i < 4; i++)
		st = raw_write(r, fid, off + i * 256 * 1024, buf, 256 * 1024);
	return st;
}

/* Every byte of [off, off + len) is v. */
static bool all(struct raw *r, const struct smb2_fid *fid, uint64_t off, uint32_t len, uint8_t v)
{
	static uint8_t buf[64 * 1024];
	uint32_t got, i, n;

	for (n = 0; n < len; n += got) {
		if (raw_read(r, fid, off + n, buf, sizeof(buf) < len - n ? sizeof(buf) : len - n, &got) ||
		    !got)
			return false;
		for (i = 0; i < got; i++)
			if (buf[i] != v)
				return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct raw_cred cred = { 0 };
	struct smb2_fid f, ro, dir;
	uint8_t in[64] = { 0 };
	char password[256], name[64], dname[64];
	struct fsctl_range g0, g1;
	struct raw r;
	FILE *pf;

	if (argc != 8 || strcmp(argv[1], "-u") || strcmp(argv[3], "-A")) {
		fprintf(stderr, "usage: fsctl -u USER -A PASSWORD_FILE HOST PORT SHARE\n");
		return 2;
	}
	pf = fopen(argv[4], "r");
	if (!pf || !fgets(password, sizeof(password), pf)) {
		fprintf(stderr, "fsctl: cannot read %s\n", argv[4]);
		return 2;
	}
	fclose(pf);
	password[strcspn(password, "\r\n")] = 0;
	cred.user = argv[2];
	cred.password = password;
	if (crypto_init())
		return 99;
	if (raw_session(&r, argv[5], (unsigned int)atoi(argv[6]), SMB2_DIALECT_311, &cred, argv[7])) {
		BAD("no session on %s:%s/%s", argv[5], argv[6], argv[7]);
		return 1;
	}
	snprintf(name, sizeof(name), "sparse.%d", (int)getpid());
	snprintf(dname, sizeof(dname), "sdir.%d", (int)getpid());
	if (raw_create(&r, name, FILE_READ_DATA | FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES |
		       FILE_READ_ATTRIBUTES | DELETE_ACCESS, FILE_OVERWRITE_IF, 0, &f) ||
	    fill(&r, &f, 0, 0xa5) || fill(&r, &f, 8 * MiB, 0x5a)) {
		BAD("cannot make %s: %s", name, raw_sname(r.status));
		return 1;
	}

	/* not sparse yet: all of it is allocated, as Windows says */
	EXPECT(qar(&r, &f, 0, 16 * MiB, 1024), STATUS_SUCCESS, "ranges of a file not marked sparse");
	g0 = range(0);
	if (out_len == FSCTL_RANGE_LEN && g0.off == 0 && g0.len == 9 * MiB)
		OK("... one range, the whole file (0, 9 MiB)");
	else
		BAD("... %u bytes, first (%llu, %llu)", out_len, (unsigned long long)g0.off,
		    (unsigned long long)g0.len);

	EXPECT(fsctl(&r, &f, FSCTL_SET_SPARSE, NULL, 0, 0), STATUS_SUCCESS, "SET_SPARSE");
	EXPECT(qar(&r, &f, 0, 16 * MiB, 1024), STATUS_SUCCESS, "ranges of the sparse file");
	g0 = range(0);
	g1 = range(1);
	if (out_len == 2 * FSCTL_RANGE_LEN && g0.off == 0 && g0.len >= MiB && g0.len < 8 * MiB &&
	    g1.off <= 8 * MiB && g1.off >= g0.len && g1.off + g1.len == 9 * MiB)
		OK("... two ranges: (0, %llu) and (%llu, %llu), the hole between",
		   (unsigned long long)g0.len, (unsigned long long)g1.off,
		   (unsigned long long)g1.len);
	else
		BAD("... %u bytes: (%llu, %llu) (%llu, %llu)", out_len,
		    (unsigned long long)g0.off, (unsigned long long)g0.len,
		    (unsigned long long)g1.off, (unsigned long long)g1.len);
	EXPECT(qar(&r, &f, 0, 16 * MiB, FSCTL_RANGE_LEN), STATUS_BUFFER_OVERFLOW,
	       "ranges into room for one");
	if (out_len == FSCTL_RANGE_LEN && range(0).off == 0)
		OK("... the first range given (16 bytes)");
	else
		BAD("... %u bytes of output", out_len);
	EXPECT(qar(&r, &f, 0, 16 * MiB, 8), STATUS_BUFFER_TOO_SMALL, "ranges into room for none");
	EXPECT(qar(&r, &f, 2 * MiB, MiB, 1024), STATUS_SUCCESS, "ranges of a hole");
	if (!out_len)
		OK("... none");
	else
		BAD("... %u bytes", out_len);

	EXPECT(zero(&r, &f, 0, 512 * 1024), STATUS_SUCCESS, "ZERO_DATA of the first 512 KiB");
	if (all(&r, &f, 0, 512 * 1024, 0) && all(&r, &f, 512 * 1024, 512 * 1024, 0xa5) &&
	    all(&r, &f, 8 * MiB, MiB, 0x5a))
		OK("... reads back as zeros, the rest untouched");
	else
		BAD("... data wrong after ZERO_DATA");
	EXPECT(qar(&r, &f, 0, 16 * MiB, 1024), STATUS_SUCCESS, "ranges after ZERO_DATA");
	g0 = range(0);
	if (out_len >= FSCTL_RANGE_LEN && g0.off >= 512 * 1024 && g0.off < MiB)
		OK("... the first range starts at %llu: the hole was punched",
		   (unsigned long long)g0.off);
	else
		BAD("... first range (%llu, %llu)", (unsigned long long)g0.off,
		    (unsigned long long)g0.len);
	EXPECT(zero(&r, &f, 16 * MiB, 32 * MiB), STATUS_SUCCESS, "ZERO_DATA past the end");
	EXPECT(qar(&r, &f, 0, UINT64_MAX >> 1, 1024), STATUS_SUCCESS, "... the size stays");
	if (out_len && range(out_len / FSCTL_RANGE_LEN - 1).off +
		       range(out_len / FSCTL_RANGE_LEN - 1).len == 9 * MiB)
		OK("... data still ends at 9 MiB");
	else
		BAD("... ranges end elsewhere");

	/* bad input */
	EXPECT(fsctl(&r, &f, FSCTL_QUERY_ALLOCATED_RANGES, in, 8, 1024), STATUS_INVALID_PARAMETER,
	       "QUERY_ALLOCATED_RANGES, 8-byte input");
	EXPECT(qar(&r, &f, NEG, 16, 1024), STATUS_INVALID_PARAMETER,
	       "QUERY_ALLOCATED_RANGES, negative offset");
	EXPECT(qar(&r, &f, 0, NEG, 1024), STATUS_INVALID_PARAMETER,
	       "QUERY_ALLOCATED_RANGES, negative length");
	EXPECT(qar(&r, &f, 512, UINT64_MAX, 1024), STATUS_INVALID_PARAMETER,
	       "QUERY_ALLOCATED_RANGES, offset + length overflows");
	EXPECT(fsctl(&r, &f, FSCTL_SET_ZERO_DATA, in, 15, 0), STATUS_INVALID_PARAMETER,
	       "ZERO_DATA, 15-byte input");
	EXPECT(zero(&r, &f, MiB, 4096), STATUS_INVALID_PARAMETER,
	       "ZERO_DATA, BeyondFinalZero before FileOffset");
	EXPECT(zero(&r, &f, NEG, NEG + 4096), STATUS_INVALID_PARAMETER, "ZERO_DATA, negative offset");
	EXPECT(fsctl(&r, &f, FSCTL_DUPLICATE_EXTENTS_TO_FILE, in, 39, 0), STATUS_INVALID_PARAMETER,
	       "DUPLICATE_EXTENTS, 39-byte input");
	memset(in, 0x77, 40);
	{
		uint32_t st = fsctl(&r, &f, FSCTL_DUPLICATE_EXTENTS_TO_FILE, in, 40, 0);

		if (st == STATUS_INVALID_HANDLE || st == STATUS_NOT_SUPPORTED)
			OK("DUPLICATE_EXTENTS from a made-up handle: %s", raw_sname(st));
		else
			BAD("DUPLICATE_EXTENTS from a made-up handle: %s", raw_sname(st));
	}
	EXPECT(raw_create(&r, name, FILE_READ_DATA | FILE_READ_ATTRIBUTES, FILE_OPEN, 0, &ro),
	       STATUS_SUCCESS, "a read-only open");
	EXPECT(zero(&r, &ro, 0, 4096), STATUS_ACCESS_DENIED, "ZERO_DATA on it");
	EXPECT(fsctl(&r, &ro, FSCTL_SET_SPARSE, NULL, 0, 0), STATUS_ACCESS_DENIED,
	       "SET_SPARSE on it");
	raw_close_fid(&r, &ro);
	EXPECT(raw_create(&r, dname, FILE_READ_DATA | FILE_WRITE_DATA | DELETE_ACCESS,
			  FILE_CREATE, FILE_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE, &dir),
	       STATUS_SUCCESS, "a directory");
	EXPECT(fsctl(&r, &dir, FSCTL_SET_SPARSE, NULL, 0, 0), STATUS_INVALID_PARAMETER,
	       "SET_SPARSE on it");
	raw_close_fid(&r, &dir);

	/* clear the flag: one range again */
	in[0] = 0;
	EXPECT(fsctl(&r, &f, FSCTL_SET_SPARSE, in, 1, 0), STATUS_SUCCESS, "SET_SPARSE(FALSE)");
	EXPECT(qar(&r, &f, 0, 16 * MiB, 1024), STATUS_SUCCESS, "... ranges");
	if (out_len == FSCTL_RANGE_LEN)
		OK("... one range again");
	else
		BAD("... %u bytes", out_len);
	EXPECT(raw_echo(&r), STATUS_SUCCESS, "the server still answers");
	{
		uint8_t one = 1;
		struct smb2_set_info_req si = {
			.info_type = SMB2_0_INFO_FILE,
			.info_class = FileDispositionInformation,
			.fid = f,
			.data = { &one, 1 },
		};
		uint8_t b[256];
		struct wcur w;

		raw_begin(&w, b, sizeof(b));
		smb2_set_info_req_encode(&w, &si);
		raw_xchg(&r, SMB2_SET_INFO, b, w.off);
	}
	raw_close_fid(&r, &f);
	raw_close(&r);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
