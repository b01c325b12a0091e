// SPDX-License-Identifier: MIT
/*
 * Server-side copy against a running server, on the wire: resume keys,
 * FSCTL_SRV_COPYCHUNK / _WRITE, the limits (256 chunks, 1 MiB a chunk,
 * 16 MiB a request, no empty chunk), forged and foreign resume keys,
 * partial copies, access rules, overlapping ranges. Every case checks
 * the NTSTATUS, the SRV_COPYCHUNK_RESPONSE counts and the file data.
 *
 * usage: copychunk [--peer] [-u USER -A PASSWORD_FILE] HOST PORT SHARE
 *   anonymous logon unless -u; --peer accepts what other servers answer
 *   where [MS-SMB2] leaves room (Samba: ACCESS_DENIED for a foreign key,
 *   BUFFER_TOO_SMALL for a short resume key buffer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "proto/fsctl.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "transport/transport.h"
#include "util/utf16.h"

#define MiB (1u << 20)
#define IO (64u * 1024)
#define SRC_SIZE (4 * MiB)

struct raw {
	int fd;
	uint64_t mid;
	uint64_t sid;
	uint32_t tid;
	uint8_t *rx;
	size_t rx_cap;
	size_t rx_len;
	uint32_t status;
};

static const char *host, *share, *user;
static char password[256];
static unsigned int port;
static int nfail;
static bool peer;
/* per-run names: cc_src.<pid> ... */
static char n_src[64], n_dst[64], n_b[64], n_wo[64];

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i ^ (i >> 8) ^ (i >> 16) * 7 ^ (i >> 20) * 13);
}

/* Send one PDU whose body is in b[64..len) and wait for its final response. */
static int xchg(struct raw *r, uint16_t cmd, uint8_t *b, size_t len)
{
	struct smb2_hdr h = { 0 };
	struct iovec iov = { b, len };
	long n;
	int ret;

	h.command = cmd;
	h.message_id = r->mid++;
	h.session_id = r->sid;
	h.tree_id = r->tid;
	h.credits = 64;
	h.credit_charge = 1;
	smb2_hdr_encode(b, &h);
	ret = tcp_send_msg(r->fd, &iov, 1);
	if (ret)
		return ret;
	do {
		n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 32 << 20, 10000);
		if (n < 0)
			return (int)n;
		if (n < SMB2_HDR_SIZE)
			return -EPROTO;
		r->status = get_le32(r->rx + 8);
	} while (r->status == STATUS_PENDING);
	r->rx_len = (size_t)n;
	return 0;
}

static int raw_session(struct raw *r)
{
	struct auth_client_cfg acfg = { .anonymous = !user, .spnego = true,
					.workstation = "CC", .user = user,
					.password = user ? password : NULL };
	uint8_t out[AUTH_TOKEN_MAX], in[AUTH_TOKEN_MAX], b[4096];
	struct smb2_negotiate_req neg = { 0 };
	struct smb2_sess_setup_rsp ss;
	struct smb2_tree_connect_req tc = { 0 };
	struct auth_client *ac;
	size_t out_len, in_len = 0;
	char unc[300];
	struct wcur w;
	int n, step, ret = -EACCES;

	memset(r, 0, sizeof(*r));
	r->fd = tcp_connect(host, port, 5000, NULL);
	if (r->fd < 0)
		return r->fd;
	neg.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	neg.dialects[neg.ndialects++] = SMB2_DIALECT_210;
	neg.dialects[neg.ndialects++] = SMB2_DIALECT_300;
	/* a user session on 3.1.1 would have to sign its TREE_CONNECT */
	if (!user)
		neg.dialects[neg.ndialects++] = SMB2_DIALECT_311;
	crypto_random(neg.ctx.salt, 32);
	neg.ctx.ciphers[neg.ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_negotiate_req_encode(&w, &neg);
	if (xchg(r, SMB2_NEGOTIATE, b, w.off) || r->status)
		return -EPROTO;
	if (auth_client_new(&ac, &acfg))
		return -ENOMEM;
	for (;;) {
		struct smb2_sess_setup_req s = { 0 };

		step = auth_client_step(ac, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0)
			break;
		s.security.p = out;
		s.security.len = (uint32_t)out_len;
		wcur_init(&w, b, sizeof(b));
		w.off = SMB2_HDR_SIZE;
		smb2_sess_setup_req_encode(&w, &s);
		if (xchg(r, SMB2_SESSION_SETUP, b, w.off))
			break;
		r->sid = get_le64(r->rx + 40);
		if (r->status == STATUS_SUCCESS) {
			ret = 0;
			break;
		}
		if (r->status != STATUS_MORE_PROCESSING_REQUIRED ||
		    smb2_sess_setup_rsp_decode(r->rx, r->rx_len, &ss) ||
		    ss.security.len > sizeof(in))
			break;
		memcpy(in, ss.security.p, ss.security.len);
		in_len = ss.security.len;
	}
	auth_client_delete(&ac);
	if (ret)
		return ret;
	snprintf(unc, sizeof(unc), "\\\\%s\\%s", host, share);
	n = utf8_to_utf16le(unc, out, sizeof(out));
	if (n < 0)
		return n;
	tc.path.p = out;
	tc.path.len = (uint32_t)n;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_tree_connect_req_encode(&w, &tc);
	if (xchg(r, SMB2_TREE_CONNECT, b, w.off) || r->status)
		return -ENOENT;
	r->tid = get_le32(r->rx + 36);
	return 0;
}

static void raw_close(struct raw *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->rx);
	r->fd = -1;
	r->rx = NULL;
}

static uint32_t create(struct raw *r, const char *name, uint32_t access,
		       uint32_t disposition, struct smb2_fid *fid)
{
	struct smb2_create_req c = { 0 };
	struct smb2_create_rsp rsp;
	uint8_t b[1024], n16[512];
	struct wcur w;
	int n = utf8_to_utf16le(name, n16, sizeof(n16));

	c.impersonation = 2;
	c.desired_access = access;
	c.file_attributes = FILE_ATTRIBUTE_ARCHIVE;
	c.share_access = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	c.disposition = disposition;
	c.options = FILE_NON_DIRECTORY_FILE;
	c.name.p = n16;
	c.name.len = (uint32_t)n;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_create_req_encode(&w, &c);
	if (xchg(r, SMB2_CREATE, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!r->status && !smb2_create_rsp_decode(r->rx, r->rx_len, &rsp))
		*fid = rsp.fid;
	return r->status;
}

static uint32_t close_fid(struct raw *r, const struct smb2_fid *fid)
{
	struct smb2_close_req c = { .fid = *fid };
	uint8_t b[128];
	struct wcur w;

	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_close_req_encode(&w, &c);
	if (xchg(r, SMB2_CLOSE, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

static void remove_file(struct raw *r, const char *name)
{
	struct smb2_create_req c = { 0 };
	struct smb2_create_rsp rsp;
	uint8_t b[1024], n16[512];
	struct wcur w;
	int n = utf8_to_utf16le(name, n16, sizeof(n16));

	c.impersonation = 2;
	c.desired_access = DELETE_ACCESS | FILE_READ_ATTRIBUTES;
	c.share_access = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	c.disposition = FILE_OPEN;
	c.options = FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE;
	c.name.p = n16;
	c.name.len = (uint32_t)n;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_create_req_encode(&w, &c);
	if (!xchg(r, SMB2_CREATE, b, w.off) && !r->status &&
	    !smb2_create_rsp_decode(r->rx, r->rx_len, &rsp))
		close_fid(r, &rsp.fid);
}

static int write_file(struct raw *r, const struct smb2_fid *fid, uint64_t size)
{
	static uint8_t b[SMB2_HDR_SIZE + 48 + IO];
	struct smb2_write_req wr = { 0 };
	uint64_t off, i;
	struct wcur w;

	for (off = 0; off < size; off += IO) {
		wr.fid = *fid;
		wr.offset = off;
		wr.length = IO;
		wcur_init(&w, b, sizeof(b));
		w.off = SMB2_HDR_SIZE;
		smb2_write_req_encode(&w, &wr);
		for (i = 0; i < IO; i++)
			b[w.off + i] = pattern(off + i);
		if (xchg(r, SMB2_WRITE, b, w.off + IO) || r->status)
			return -EIO;
	}
	return 0;
}

/* Read [off, off + len) of a file into buf; returns bytes read. */
static long read_file(struct raw *r, const struct smb2_fid *fid, uint64_t off,
		      uint8_t *buf, uint64_t len)
{
	struct smb2_read_req rd = { 0 };
	struct smb2_read_rsp rsp;
	uint64_t done = 0;
	uint8_t b[256];
	struct wcur w;

	while (done < len) {
		rd.fid = *fid;
		rd.offset = off + done;
		rd.length = len - done < IO ? (uint32_t)(len - done) : IO;
		wcur_init(&w, b, sizeof(b));
		w.off = SMB2_HDR_SIZE;
		smb2_read_req_encode(&w, &rd);
		if (xchg(r, SMB2_READ, b, w.off))
			return -EIO;
		if (r->status == STATUS_END_OF_FILE)
			break;
		if (r->status || smb2_read_rsp_decode(r->rx, r->rx_len, &rsp))
			return -EIO;
		memcpy(buf + done, rsp.data.p, rsp.data_length);
		done += rsp.data_length;
		if (rsp.data_length < rd.length)
			break;
	}
	return (long)done;
}

static uint32_t lock(struct raw *r, const struct smb2_fid *fid, uint64_t off,
		     uint64_t len, uint32_t flags)
{
	uint8_t b[256];
	struct wcur w;

	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	wcur_le16(&w, 48);
	wcur_le16(&w, 1);
	wcur_le32(&w, 0);
	wcur_le64(&w, fid->persistent);
	wcur_le64(&w, fid->volatile_id);
	wcur_le64(&w, off);
	wcur_le64(&w, len);
	wcur_le32(&w, flags);
	wcur_le32(&w, 0);
	if (xchg(r, SMB2_LOCK, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

/* IOCTL; the output (present on some errors too) lands in out/out_len. */
static uint32_t fsctl(struct raw *r, const struct smb2_fid *fid, uint32_t ctl,
		      const void *in, uint32_t in_len, uint32_t max_out,
		      uint8_t *out, uint32_t *out_len)
{
	static uint8_t b[SMB2_HDR_SIZE + 56 + 8192];
	struct smb2_ioctl_req q = { 0 };
	struct smb2_ioctl_rsp rsp;
	struct wcur w;

	q.ctl_code = ctl;
	q.fid = *fid;
	q.input.p = in;
	q.input.len = in_len;
	q.max_output_response = max_out;
	q.flags = SMB2_0_IOCTL_IS_FSCTL;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_ioctl_req_encode(&w, &q);
	*out_len = 0;
	if (w.err || xchg(r, SMB2_IOCTL, b, w.off))
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

	st = fsctl(r, fid, FSCTL_SRV_REQUEST_RESUME_KEY, NULL, 0, 32, out, &len);
	if (!st && (len != FSCTL_RESUME_KEY_RSP_LEN || get_le32(out + 24)))
		return STATUS_INVALID_NETWORK_RESPONSE;
	if (!st)
		memcpy(key, out, FSCTL_RESUME_KEY_LEN);
	return st;
}

/* One COPYCHUNK request; *have says whether a response body came back. */
static uint32_t copychunk(struct raw *r, const struct smb2_fid *dst, uint32_t ctl,
			  const uint8_t *key, const struct fsctl_chunk *ch,
			  uint32_t n, uint32_t max_out,
			  struct fsctl_copychunk_rsp *rsp, bool *have)
{
	static uint8_t in[FSCTL_COPYCHUNK_HDR_LEN + 300 * FSCTL_COPYCHUNK_CHUNK_LEN];
	uint8_t out[64];
	uint32_t len, st;
	struct wcur w;

	wcur_init(&w, in, sizeof(in));
	fsctl_copychunk_encode(&w, key, ch, n);
	st = fsctl(r, dst, ctl, in, (uint32_t)w.off, max_out, out, &len);
	*have = len >= FSCTL_COPYCHUNK_RSP_LEN &&
		!fsctl_copychunk_rsp_decode(out, len, rsp);
	return st;
}

static const char *sname(uint32_t st)
{
	static char buf[32];
	const char *n = ntstatus_name(st);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "0x%08x", st);
	return buf;
}

static void expect(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		OK("%s: %s", what, sname(got));
	else
		BAD("%s: got %s, want %s", what, sname(got), sname(want));
}

/* want, or (with --peer) alt */
static void expect2(const char *what, uint32_t got, uint32_t want, uint32_t alt)
{
	if (peer && got == alt && got != want)
		OK("%s: %s (accepted from a peer server)", what, sname(got));
	else
		expect(what, got, want);
}

static void expect_counts(const char *what, bool have,
			  const struct fsctl_copychunk_rsp *r, uint32_t chunks,
			  uint32_t chunk_bytes, uint32_t total)
{
	if (!have)
		BAD("%s: no SRV_COPYCHUNK_RESPONSE", what);
	else if (r->chunks_written != chunks || r->chunk_bytes_written != chunk_bytes ||
		 r->total_bytes_written != total)
		BAD("%s: response %u/%u/%u, want %u/%u/%u", what, r->chunks_written,
		    r->chunk_bytes_written, r->total_bytes_written, chunks,
		    chunk_bytes, total);
	else
		OK("%s: response %u/%u/%u", what, chunks, chunk_bytes, total);
}

static void expect_limits(const char *what, uint32_t st, bool have,
			  const struct fsctl_copychunk_rsp *r)
{
	expect(what, st, STATUS_INVALID_PARAMETER);
	expect_counts(what, have, r, FSCTL_COPYCHUNK_MAX_CHUNKS,
		      FSCTL_COPYCHUNK_MAX_CHUNK_LEN, FSCTL_COPYCHUNK_MAX_TOTAL);
}

/* dst[dst_off, +len) must equal the pattern from src_off. */
static void expect_data(struct raw *r, const struct smb2_fid *fid, const char *what,
			uint64_t dst_off, uint64_t src_off, uint64_t len)
{
	uint8_t *buf = malloc(len);
	uint64_t i;
	long n;

	if (!buf) {
		BAD("%s: out of memory", what);
		return;
	}
	n = read_file(r, fid, dst_off, buf, len);
	if (n != (long)len) {
		BAD("%s: read %ld of %llu bytes", what, n, (unsigned long long)len);
		goto out;
	}
	for (i = 0; i < len; i++)
		if (buf[i] != pattern(src_off + i))
			break;
	if (i < len)
		BAD("%s: data differs at offset %llu", what,
		    (unsigned long long)(dst_off + i));
	else
		OK("%s: %llu bytes as expected", what, (unsigned long long)len);
out:
	free(buf);
}

static uint64_t file_size(struct raw *r, const struct smb2_fid *fid)
{
	struct smb2_query_info_req q = { 0 };
	struct smb2_buf out;
	uint8_t b[256];
	struct wcur w;

	q.info_type = SMB2_0_INFO_FILE;
	q.info_class = FileStandardInformation;
	q.output_len = 64;
	q.fid = *fid;
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_query_info_req_encode(&w, &q);
	if (xchg(r, SMB2_QUERY_INFO, b, w.off) || r->status ||
	    smb2_out_buf_rsp_decode(r->rx, r->rx_len, &out) || out.len < 16)
		return UINT64_MAX;
	return get_le64(out.p + 8);
}

#define RW (FILE_GENERIC_READ | FILE_GENERIC_WRITE)

int main(int argc, char **argv)
{
	struct fsctl_chunk ch[300];
	struct fsctl_copychunk_rsp rsp;
	struct smb2_fid src, dst, dst2, wo, ro, noread, other;
	uint8_t key[FSCTL_RESUME_KEY_LEN], bkey[FSCTL_RESUME_KEY_LEN];
	uint8_t out[64];
	struct raw a, b;
	uint32_t st, len, i;
	bool have;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--peer")) {
			peer = true;
		} else if (!strcmp(argv[1], "-u") && argc > 2) {
			user = argv[2];
			argv++;
			argc--;
		} else if (!strcmp(argv[1], "-A") && argc > 2) {
			FILE *f = fopen(argv[2], "r");

			if (!f || !fgets(password, sizeof(password), f)) {
				fprintf(stderr, "copychunk: cannot read %s\n", argv[2]);
				return 2;
			}
			fclose(f);
			password[strcspn(password, "\r\n")] = 0;
			argv++;
			argc--;
		} else {
			break;
		}
		argv++;
		argc--;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: copychunk [--peer] [-u USER -A PASSWORD_FILE] HOST PORT SHARE\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	if (crypto_init())
		return 99;
	snprintf(n_src, sizeof(n_src), "cc_src.%d", (int)getpid());
	snprintf(n_dst, sizeof(n_dst), "cc_dst.%d", (int)getpid());
	snprintf(n_b, sizeof(n_b), "cc_b.%d", (int)getpid());
	snprintf(n_wo, sizeof(n_wo), "cc_wo.%d", (int)getpid());
	if (raw_session(&a) || raw_session(&b)) {
		BAD("cannot set up two sessions on %s:%u/%s", host, port, share);
		return 1;
	}
	OK("two sessions (%s)", user ? user : "anonymous");
	st = create(&a, n_src, RW, FILE_OVERWRITE_IF, &src);
	if (!st)
		st = write_file(&a, &src, SRC_SIZE) ? STATUS_IO_DEVICE_ERROR : 0;
	if (!st)
		st = create(&a, n_dst, RW, FILE_OVERWRITE_IF, &dst);
	if (st) {
		BAD("cannot create the test files: %s", sname(st));
		return 1;
	}

	/* resume key */
	st = resume_key(&a, &src, key);
	expect("FSCTL_SRV_REQUEST_RESUME_KEY: 24-byte key + ContextLength 0", st, 0);
	st = fsctl(&a, &src, FSCTL_SRV_REQUEST_RESUME_KEY, NULL, 0, 24, out, &len);
	expect2("resume key with MaxOutputResponse 24", st, STATUS_INVALID_PARAMETER,
		STATUS_BUFFER_TOO_SMALL);

	/* a plain copy: 3 chunks, the last one short of 1 MiB */
	ch[0] = (struct fsctl_chunk){ 0, 0, MiB };
	ch[1] = (struct fsctl_chunk){ MiB, MiB, MiB };
	ch[2] = (struct fsctl_chunk){ 2 * MiB, 2 * MiB, MiB - 4096 };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 3, 12, &rsp, &have);
	expect("COPYCHUNK of 3 chunks", st, 0);
	expect_counts("COPYCHUNK of 3 chunks", have, &rsp, 3, 0, 3 * MiB - 4096);
	expect_data(&a, &dst, "copied data", 0, 0, 3 * MiB - 4096);

	/* the limits, answered with the server's limits */
	for (i = 0; i < 257; i++)
		ch[i] = (struct fsctl_chunk){ 0, i * 4096ull, 4096 };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 257, 12, &rsp, &have);
	expect_limits("257 chunks", st, have, &rsp);
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 256, 12, &rsp, &have);
	expect("256 chunks of 4 KiB", st, 0);
	ch[0] = (struct fsctl_chunk){ 0, 0, 2 * MiB };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 1, 12, &rsp, &have);
	expect_limits("a 2 MiB chunk", st, have, &rsp);
	ch[0] = (struct fsctl_chunk){ 0, 0, MiB + 1 };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 1, 12, &rsp, &have);
	expect_limits("a chunk of 1 MiB + 1", st, have, &rsp);
	for (i = 0; i < 17; i++)
		ch[i] = (struct fsctl_chunk){ 0, (uint64_t)i * MiB, MiB };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 17, 12, &rsp, &have);
	expect_limits("17 MiB in one request", st, have, &rsp);
	ch[0] = (struct fsctl_chunk){ 0, 0, 4096 };
	ch[1] = (struct fsctl_chunk){ 4096, 4 * MiB, 0 };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 2, 12, &rsp, &have);
	expect_limits("a zero-length chunk", st, have, &rsp);
	if (file_size(&a, &dst) == 3 * MiB - 4096)
		OK("nothing was copied by the rejected requests");
	else
		BAD("a rejected request changed the destination");
	ch[0] = (struct fsctl_chunk){ 0, 0, 4096 };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 1, 11, &rsp, &have);
	expect("MaxOutputResponse 11", st, STATUS_INVALID_PARAMETER);
	memcpy(out, key, FSCTL_RESUME_KEY_LEN);
	put_le32(out + FSCTL_RESUME_KEY_LEN, 1);	/* ChunkCount 1, no chunk */
	st = fsctl(&a, &dst, FSCTL_SRV_COPYCHUNK, out, 28, 12, out, &len);
	expect("SRV_COPYCHUNK_COPY cut short (28 bytes)", st, STATUS_INVALID_PARAMETER);

	/* resume keys that are not ours */
	crypto_random(bkey, sizeof(bkey));
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
	expect("a random resume key", st, STATUS_OBJECT_NAME_NOT_FOUND);
	memcpy(bkey, key, sizeof(bkey));
	bkey[23] ^= 1;
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
	expect("our key with one bit of its MAC flipped", st, STATUS_OBJECT_NAME_NOT_FOUND);
	put_le64(bkey, dst.volatile_id);
	put_le64(bkey + 8, dst.persistent);
	memset(bkey + 16, 0, 8);
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
	expect("a key made from a FileId of ours", st, STATUS_OBJECT_NAME_NOT_FOUND);
	if (create(&b, n_src, FILE_GENERIC_READ, FILE_OPEN, &other) ||
	    resume_key(&b, &other, bkey)) {
		BAD("second session cannot open the source");
	} else {
		st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
		expect2("a resume key of another session", st,
			STATUS_OBJECT_NAME_NOT_FOUND, STATUS_ACCESS_DENIED);
		if (!create(&b, n_b, RW, FILE_OVERWRITE_IF, &dst2)) {
			st = copychunk(&b, &dst2, FSCTL_SRV_COPYCHUNK, key, ch, 1, 12,
				       &rsp, &have);
			expect2("our key used by the other session", st,
				STATUS_OBJECT_NAME_NOT_FOUND, STATUS_ACCESS_DENIED);
			st = copychunk(&b, &dst2, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12,
				       &rsp, &have);
			expect("the other session with its own key", st, 0);
			close_fid(&b, &dst2);
		}
		close_fid(&b, &other);
	}

	/* partial copies report what was done */
	ch[0] = (struct fsctl_chunk){ 0, 0, MiB };
	ch[1] = (struct fsctl_chunk){ SRC_SIZE - MiB / 2, MiB, MiB };
	st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 2, 12, &rsp, &have);
	expect("second chunk past the source's end", st, STATUS_INVALID_VIEW_SIZE);
	expect_counts("second chunk past the source's end", have, &rsp, 1, 0, MiB);
	st = create(&a, n_dst, RW, FILE_OPEN, &dst2);
	if (st) {
		BAD("second open of the destination: %s", sname(st));
	} else {
		ch[0] = (struct fsctl_chunk){ MiB, 0, MiB };
		ch[1] = (struct fsctl_chunk){ 0, 3 * MiB, 64 * 1024 };
		ch[2] = (struct fsctl_chunk){ 0, 5 * MiB, 64 * 1024 };
		if (lock(&a, &dst2, 5 * MiB, 4096, SMB2_LOCKFLAG_EXCLUSIVE |
			 SMB2_LOCKFLAG_FAIL_IMMEDIATELY)) {
			BAD("cannot lock the destination through a second open");
		} else {
			st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, key, ch, 3, 12,
				       &rsp, &have);
			expect("third chunk into a range another open locked", st,
			       STATUS_FILE_LOCK_CONFLICT);
			expect_counts("third chunk into a locked range", have, &rsp, 2,
				      0, MiB + 64 * 1024);
			expect_data(&a, &dst, "data of the chunks before the lock",
				    0, MiB, MiB);
		}
		close_fid(&a, &dst2);
	}

	/* access rules */
	if (!create(&a, n_dst, FILE_GENERIC_READ, FILE_OPEN, &ro)) {
		ch[0] = (struct fsctl_chunk){ 0, 0, 4096 };
		st = copychunk(&a, &ro, FSCTL_SRV_COPYCHUNK_WRITE, key, ch, 1, 12,
			       &rsp, &have);
		expect("destination opened read-only", st, STATUS_ACCESS_DENIED);
		close_fid(&a, &ro);
	}
	if (!create(&a, n_wo, FILE_GENERIC_WRITE, FILE_OVERWRITE_IF, &wo)) {
		ch[0] = (struct fsctl_chunk){ 0, 0, MiB };
		st = copychunk(&a, &wo, FSCTL_SRV_COPYCHUNK, key, ch, 1, 12, &rsp, &have);
		expect("COPYCHUNK to a destination without FILE_READ_DATA", st,
		       STATUS_ACCESS_DENIED);
		st = copychunk(&a, &wo, FSCTL_SRV_COPYCHUNK_WRITE, key, ch, 1, 12,
			       &rsp, &have);
		expect("COPYCHUNK_WRITE to the same destination", st, 0);
		expect_counts("COPYCHUNK_WRITE", have, &rsp, 1, 0, MiB);
		close_fid(&a, &wo);
		if (!create(&a, n_wo, FILE_GENERIC_READ, FILE_OPEN, &wo)) {
			expect_data(&a, &wo, "COPYCHUNK_WRITE data", 0, 0, MiB);
			close_fid(&a, &wo);
		}
	}
	if (!create(&a, n_src, FILE_READ_ATTRIBUTES, FILE_OPEN, &noread) &&
	    !resume_key(&a, &noread, bkey)) {
		ch[0] = (struct fsctl_chunk){ 0, 0, 4096 };
		st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
		expect("source opened without FILE_READ_DATA", st, STATUS_ACCESS_DENIED);
		close_fid(&a, &noread);
		st = copychunk(&a, &dst, FSCTL_SRV_COPYCHUNK, bkey, ch, 1, 12, &rsp, &have);
		expect("the key of a closed open", st, STATUS_OBJECT_NAME_NOT_FOUND);
	} else {
		BAD("cannot open the source for attributes only");
	}

	/* one file, overlapping ranges: as memmove */
	ch[0] = (struct fsctl_chunk){ 0, MiB / 2, MiB };
	st = copychunk(&a, &src, FSCTL_SRV_COPYCHUNK, key, ch, 1, 12, &rsp, &have);
	expect("overlapping copy within the source", st, 0);
	expect_data(&a, &src, "head left alone", 0, 0, MiB / 2);
	expect_data(&a, &src, "overlapping copy moved like memmove", MiB / 2, 0, MiB);

	close_fid(&a, &dst);
	close_fid(&a, &src);
	remove_file(&a, n_src);
	remove_file(&a, n_dst);
	remove_file(&a, n_b);
	remove_file(&a, n_wo);
	raw_close(&a);
	raw_close(&b);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
