// SPDX-License-Identifier: MIT
/*
 * Sends malformed SMB2 traffic to a running rdaxd: truncated headers,
 * out-of-bounds offsets, unknown commands, bad credit charges, broken
 * compound chains and NTLMSSP with bad offsets. Each case must get an
 * error response or a dropped connection; the server must not crash
 * and a second, established connection must keep working throughout.
 *
 * usage: badinput HOST PORT GUESTSHARE
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "proto/ntstatus.h"
#include "proto/posix.h"
#include "proto/smb2.h"
#include "transport/transport.h"
#include "util/utf16.h"

struct raw {
	int fd;
	uint64_t mid;
	uint64_t sid;
	uint32_t tid;
	struct smb2_fid fid;
	uint8_t *rx;
	size_t rx_cap;
};

static const char *host, *share;
static unsigned int port;
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static void hdr(uint8_t *p, uint16_t cmd, uint64_t mid, uint64_t sid,
		uint32_t tid, uint16_t charge)
{
	struct smb2_hdr h = { 0 };

	h.command = cmd;
	h.message_id = mid;
	h.session_id = sid;
	h.tree_id = tid;
	h.credits = 64;
	h.credit_charge = charge;
	smb2_hdr_encode(p, &h);
}

static int send_raw(struct raw *r, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };

	return tcp_send_msg(r->fd, &iov, 1);
}

/* One response: its status, or -ECONNRESET when the server hung up. */
static long recv_status(struct raw *r, uint32_t *status)
{
	long n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 32 << 20, 5000);

	if (n < 0)
		return n;
	if (n < SMB2_HDR_SIZE)
		return -EPROTO;
	*status = get_le32(r->rx + 8);
	return n;
}

/* A request PDU built by fn(wcur); returns the response status. */
static long call(struct raw *r, uint16_t cmd, uint16_t charge,
		 void (*fn)(struct wcur *, void *), void *arg, uint32_t *status)
{
	uint8_t buf[4096];
	struct wcur w;
	long ret;

	wcur_init(&w, buf, sizeof(buf));
	w.off = SMB2_HDR_SIZE;
	fn(&w, arg);
	hdr(buf, cmd, r->mid, r->sid, r->tid, charge);
	r->mid += charge ? charge : 1;
	ret = send_raw(r, buf, w.off);
	if (ret)
		return ret;
	do {
		ret = recv_status(r, status);
	} while (ret > 0 && *status == STATUS_PENDING);
	return ret;
}

static void enc_negotiate(struct wcur *w, void *arg)
{
	struct smb2_negotiate_req n = { 0 };

	n.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	n.dialects[n.ndialects++] = SMB2_DIALECT_210;
	n.dialects[n.ndialects++] = SMB2_DIALECT_300;
	n.dialects[n.ndialects++] = SMB2_DIALECT_311;
	crypto_random(n.ctx.salt, 32);
	n.ctx.ciphers[n.ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	n.ctx.posix = true;	/* the POSIX extensions where the server has them */
	smb2_negotiate_req_encode(w, &n);
}

struct blob {
	const uint8_t *p;
	size_t len;
};

static void enc_sess(struct wcur *w, void *arg)
{
	struct blob *b = arg;
	struct smb2_sess_setup_req s = { .security = { b->p, (uint32_t)b->len } };

	smb2_sess_setup_req_encode(w, &s);
}

static void enc_tcon(struct wcur *w, void *arg)
{
	struct smb2_tree_connect_req t = { 0 };
	uint8_t path[512];
	char unc[300];
	int n;

	snprintf(unc, sizeof(unc), "\\\\%s\\%s", host, share);
	n = utf8_to_utf16le(unc, path, sizeof(path));
	t.path.p = path;
	t.path.len = (uint32_t)n;
	smb2_tree_connect_req_encode(w, &t);
}

static void enc_create(struct wcur *w, void *arg)
{
	struct smb2_create_req c = { 0 };
	uint8_t name[1024];
	int n = utf8_to_utf16le(arg, name, sizeof(name));

	c.impersonation = 2;
	c.desired_access = FILE_GENERIC_READ | FILE_GENERIC_WRITE | DELETE_ACCESS;
	c.share_access = 7;
	c.disposition = FILE_OPEN_IF;
	c.name.p = name;
	c.name.len = (uint32_t)n;
	smb2_create_req_encode(w, &c);
}

/* A CREATE (open-if) of name with one create context (tag, data). */
struct ctx_create {
	const char *name;
	const char *tag;
	uint32_t tag_len;
	const uint8_t *data;
	uint32_t len;
	uint32_t access;
};

static void enc_create_ctx(struct wcur *w, void *arg)
{
	const struct ctx_create *cc = arg;
	struct smb2_create_req c = { 0 };
	uint8_t name[256], ctx[512];
	struct wcur cw;
	size_t prev = SIZE_MAX;
	int n = utf8_to_utf16le(cc->name, name, sizeof(name));

	wcur_init(&cw, ctx, sizeof(ctx));
	smb2_create_ctx_add_name(&cw, &prev, cc->tag, cc->tag_len, cc->data, cc->len);
	c.impersonation = 2;
	c.desired_access = cc->access;
	c.share_access = 7;
	c.disposition = FILE_OPEN_IF;
	c.name.p = name;
	c.name.len = (uint32_t)n;
	c.contexts.p = ctx;
	c.contexts.len = (uint32_t)cw.off;
	smb2_create_req_encode(w, &c);
}

static int raw_open(struct raw *r, bool full);
static void raw_close(struct raw *r);
static void expect_rejected(struct raw *r, const char *what);
static void still_serving(struct raw *keep, const char *after);

/*
 * The SMB3 POSIX extensions' bad input (the share has them): a POSIX
 * context of the wrong size, reparse buffers that are malformed or name
 * a target outside the share or too long. Each fails alone.
 */
static void posix_cases(struct raw *keep)
{
	static const uint8_t mode3[3] = { 0xa4, 0x01, 0 }, mode4[4] = { 0xa4, 0x01, 0, 0 };
	static const struct { const char *what, *target; bool absolute; int cut; } rp[] = {
		{ "a truncated reparse buffer", "x", false, 5 },
		{ "a target climbing out of the share", "../../etc/passwd", false, 0 },
		{ "an absolute Windows target", "C:\\Windows", true, 0 },
		{ "an absolute POSIX target", "/etc/passwd", false, 0 },
		{ "an over-long target", NULL, false, 0 },
	};
	struct ctx_create pc = { "px-bad", POSIX_CTX_TAG, POSIX_CTX_TAG_LEN, mode3, 3,
				  FILE_GENERIC_READ | FILE_GENERIC_WRITE | DELETE_ACCESS };
	static uint8_t in[40000], t16[20000], big[48000];
	struct smb2_ioctl_req io = { 0 };
	struct smb2_fid fid;
	struct wcur w;
	struct raw r;
	uint32_t st;
	unsigned int i;
	int n;

	if (raw_open(&r, true)) {
		BAD("POSIX cases: setup failed");
		return;
	}
	if (call(&r, SMB2_CREATE, 1, enc_create_ctx, &pc, &st) > 0 && nt_is_error(st))
		OK("POSIX create context of 3 bytes: %s", ntstatus_name(st));
	else
		BAD("POSIX create context of 3 bytes: accepted (0x%08x)", st);
	for (i = 0; i < sizeof(rp) / sizeof(rp[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "px-%u", i);
		pc.name = name;
		pc.data = mode4;
		pc.len = 4;
		if (call(&r, SMB2_CREATE, 1, enc_create_ctx, &pc, &st) < 0 || st) {
			BAD("POSIX create of %s: 0x%08x", name, st);
			continue;
		}
		fid.persistent = get_le64(r.rx + 128);
		fid.volatile_id = get_le64(r.rx + 136);
		if (rp[i].target) {
			n = utf8_to_utf16le(rp[i].target, t16, sizeof(t16));
		} else {
			for (n = 0; n < 18000; n += 2) {
				t16[n] = 'a';
				t16[n + 1] = 0;
			}
		}
		wcur_init(&w, in, sizeof(in));
		reparse_symlink_encode(&w, t16, (uint32_t)n);
		if (rp[i].absolute)
			put_le32(in + 16, 0);
		wcur_init(&w, big, sizeof(big));
		w.off = 64;
		io.ctl_code = FSCTL_SET_REPARSE_POINT;
		io.fid = fid;
		io.input.p = in;
		io.input.len = rp[i].cut ? (uint32_t)rp[i].cut : 20 + 2 * (uint32_t)n;
		io.flags = SMB2_0_IOCTL_IS_FSCTL;
		smb2_ioctl_req_encode(&w, &io);
		hdr(big, SMB2_IOCTL, r.mid, r.sid, r.tid, 1);
		r.mid++;
		send_raw(&r, big, w.off);
		expect_rejected(&r, rp[i].what);
	}
	raw_close(&r);
	still_serving(keep, "bad POSIX contexts and reparse buffers");
}

static void enc_echo(struct wcur *w, void *arg)
{
	smb2_simple_encode(w);
}

/*
 * The quota fake file ($Extend\$Quota:$Q:$INDEX_ALLOCATION) has no file
 * behind it: every command on its handle but QUERY_INFO of the QUOTA
 * type and CLOSE is refused, and the server keeps serving.
 */
static void enc_quota_open(struct wcur *w, void *arg)
{
	struct smb2_create_req c = { 0 };
	uint8_t name[128];
	int n = utf8_to_utf16le("$Extend\\$Quota:$Q:$INDEX_ALLOCATION", name, sizeof(name));

	c.impersonation = 2;
	c.desired_access = FILE_GENERIC_READ;
	c.share_access = 7;
	c.disposition = FILE_OPEN;
	c.name.p = name;
	c.name.len = (uint32_t)n;
	smb2_create_req_encode(w, &c);
}

static void q_read(struct wcur *w, const struct smb2_fid *f)
{
	smb2_read_req_encode(w, &(struct smb2_read_req){ .length = 4096, .fid = *f });
}

static void q_write(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t data[16] = "quota file data";

	smb2_write_req_encode(w, &(struct smb2_write_req){ .length = sizeof(data), .fid = *f });
	wcur_bytes(w, data, sizeof(data));
}

static void q_flush(struct wcur *w, const struct smb2_fid *f)
{
	smb2_flush_req_encode(w, f);
}

static void q_lock(struct wcur *w, const struct smb2_fid *f)
{
	wcur_le16(w, 48);
	wcur_le16(w, 1);		/* LockCount */
	wcur_le32(w, 0);
	wcur_le64(w, f->persistent);
	wcur_le64(w, f->volatile_id);
	wcur_le64(w, 0);		/* Offset */
	wcur_le64(w, 10);		/* Length */
	wcur_le32(w, SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY);
	wcur_le32(w, 0);
}

static void q_break_ack(struct wcur *w, const struct smb2_fid *f)
{
	wcur_le16(w, 24);
	wcur_u8(w, 0);			/* OplockLevel */
	wcur_zero(w, 5);
	wcur_le64(w, f->persistent);
	wcur_le64(w, f->volatile_id);
}

static void q_ioctl(struct wcur *w, const struct smb2_fid *f, uint32_t code)
{
	static const uint8_t in[16];

	smb2_ioctl_req_encode(w, &(struct smb2_ioctl_req){
		.ctl_code = code, .fid = *f, .input = { in, sizeof(in) }, .max_output_response = 4096,
		.flags = SMB2_0_IOCTL_IS_FSCTL });
}

static void q_resume_key(struct wcur *w, const struct smb2_fid *f)
{
	q_ioctl(w, f, FSCTL_SRV_REQUEST_RESUME_KEY);
}

static void q_sparse(struct wcur *w, const struct smb2_fid *f)
{
	q_ioctl(w, f, FSCTL_SET_SPARSE);
}

static void q_ranges(struct wcur *w, const struct smb2_fid *f)
{
	q_ioctl(w, f, FSCTL_QUERY_ALLOCATED_RANGES);
}

static void q_reparse(struct wcur *w, const struct smb2_fid *f)
{
	q_ioctl(w, f, FSCTL_GET_REPARSE_POINT);
}

static void q_pipe(struct wcur *w, const struct smb2_fid *f)
{
	q_ioctl(w, f, FSCTL_PIPE_TRANSCEIVE);
}

static void q_dir(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t star[2] = { '*', 0 };

	smb2_query_dir_req_encode(w, &(struct smb2_query_dir_req){
		.info_class = FileIdBothDirectoryInformation, .fid = *f,
		.pattern = { star, 2 }, .output_len = 65536 });
}

static void q_notify(struct wcur *w, const struct smb2_fid *f)
{
	smb2_notify_req_encode(w, &(struct smb2_notify_req){
		.output_len = 4096, .fid = *f, .filter = 0xfff });
}

static void q_query(struct wcur *w, const struct smb2_fid *f, uint8_t type, uint8_t cls,
		    uint32_t additional)
{
	smb2_query_info_req_encode(w, &(struct smb2_query_info_req){
		.info_type = type, .info_class = cls, .output_len = 65536,
		.additional = additional, .fid = *f });
}

static void q_basic(struct wcur *w, const struct smb2_fid *f)
{
	q_query(w, f, SMB2_0_INFO_FILE, FileBasicInformation, 0);
}

static void q_all(struct wcur *w, const struct smb2_fid *f)
{
	q_query(w, f, SMB2_0_INFO_FILE, FileAllInformation, 0);
}

static void q_streams(struct wcur *w, const struct smb2_fid *f)
{
	q_query(w, f, SMB2_0_INFO_FILE, FileStreamInformation, 0);
}

static void q_fs(struct wcur *w, const struct smb2_fid *f)
{
	q_query(w, f, SMB2_0_INFO_FILESYSTEM, FileFsSizeInformation, 0);
}

static void q_sd(struct wcur *w, const struct smb2_fid *f)
{
	q_query(w, f, SMB2_0_INFO_SECURITY, 0, 7);
}

static void q_set(struct wcur *w, const struct smb2_fid *f, uint8_t type, uint8_t cls,
		  const uint8_t *data, uint32_t len)
{
	smb2_set_info_req_encode(w, &(struct smb2_set_info_req){
		.info_type = type, .info_class = cls, .data = { data, len }, .fid = *f });
}

static void q_set_basic(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t basic[40];

	q_set(w, f, SMB2_0_INFO_FILE, FileBasicInformation, basic, sizeof(basic));
}

static void q_set_delete(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t del[1] = { 1 };

	q_set(w, f, SMB2_0_INFO_FILE, FileDispositionInformation, del, 1);
}

static void q_set_eof(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t eof[8] = { 0, 0x10 };

	q_set(w, f, SMB2_0_INFO_FILE, FileEndOfFileInformation, eof, sizeof(eof));
}

static void q_set_rename(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t ren[26] = { 1, [16] = 6, [20] = 'q', [22] = 'r', [24] = 'n' };

	q_set(w, f, SMB2_0_INFO_FILE, FileRenameInformation, ren, sizeof(ren));
}

static void q_set_quota(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t quota[64];

	q_set(w, f, SMB2_0_INFO_QUOTA, 0, quota, sizeof(quota));
}

static void q_set_sd(struct wcur *w, const struct smb2_fid *f)
{
	static const uint8_t sd[20] = { 1, 0, 0x04, 0x80 };

	q_set(w, f, SMB2_0_INFO_SECURITY, 0, sd, sizeof(sd));
}

/*
 * EA lists that are malformed or name what is not an EA (the xattrs of
 * DOS attributes, streams, ACLs): each CREATE fails, no file is made.
 */
static void ea_cases(struct raw *keep)
{
	/* NextEntryOffset, Flags, NameLength, ValueLength, Name, NUL, Value */
	static const uint8_t past[] = { 0, 0, 0, 0, 0, 4, 200, 0, 'A', 'B', 'C', 'D', 0, 'v' };
	static const uint8_t loop[] = { 4, 0, 0, 0, 0, 1, 1, 0, 'A', 0, 'v', 0 };
	static const uint8_t nonul[] = { 0, 0, 0, 0, 0, 2, 1, 0, 'A', 'B', 'C', 'v' };
	static const uint8_t dosattr[] = { 0, 0, 0, 0, 0, 9, 1, 0, 'D', 'O', 'S', 'A', 'T', 'T',
					   'R', 'I', 'B', 0, 'x' };
	static const uint8_t stream[] = { 0, 0, 0, 0, 0, 12, 1, 0, 'D', 'o', 's', 'S', 't', 'r',
					  'e', 'a', 'm', '.', 'x', 'y', 0, 'x' };
	static const uint8_t ntacl[] = { 0, 0, 0, 0, 0, 10, 1, 0, 'r', 'd', 'a', 'x', '.', 'n',
					 't', 'a', 'c', 'l', 0, 'x' };
	static const uint8_t colon[] = { 0, 0, 0, 0, 0, 3, 1, 0, 'A', ':', 'B', 0, 'x' };
	static const struct { const char *what; const uint8_t *p; uint32_t len; } cases[] = {
		{ "an EA value running past the list", past, sizeof(past) },
		{ "an EA list pointing into its own entry", loop, sizeof(loop) },
		{ "an EA name without its NUL", nonul, sizeof(nonul) },
		{ "the EA DOSATTRIB (Samba's DOS attributes)", dosattr, sizeof(dosattr) },
		{ "an EA DosStream.xy (a stream's xattr)", stream, sizeof(stream) },
		{ "the EA rdax.ntacl (rdaxd's ACL)", ntacl, sizeof(ntacl) },
		{ "an EA name with ':'", colon, sizeof(colon) },
	};
	struct ctx_create ec = { NULL, SMB2_CTX_EXTA, 4, NULL, 0,
				 FILE_GENERIC_READ | FILE_GENERIC_WRITE };
	struct raw r;
	unsigned int i;
	uint32_t st;

	if (raw_open(&r, true)) {
		BAD("EA cases: setup failed");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "ea-bad-%u", i);
		ec.name = name;
		ec.data = cases[i].p;
		ec.len = cases[i].len;
		/* STATUS_INVALID_EA_NAME is a warning, yet no open */
		if (call(&r, SMB2_CREATE, 1, enc_create_ctx, &ec, &st) > 0 && st &&
		    st != STATUS_PENDING)
			OK("%s: %s", cases[i].what, ntstatus_name(st) ? ntstatus_name(st) : "error");
		else
			BAD("%s: accepted (0x%08x)", cases[i].what, st);
	}
	raw_close(&r);
	still_serving(keep, "bad EA lists");
}

static void quota_fake_cases(struct raw *keep)
{
	static const struct {
		const char *what;
		uint16_t cmd;
		void (*enc)(struct wcur *w, const struct smb2_fid *f);
	} cmds[] = {
		{ "READ", SMB2_READ, q_read },
		{ "WRITE", SMB2_WRITE, q_write },
		{ "FLUSH", SMB2_FLUSH, q_flush },
		{ "LOCK", SMB2_LOCK, q_lock },
		{ "OPLOCK_BREAK acknowledgement", SMB2_OPLOCK_BREAK, q_break_ack },
		{ "IOCTL FSCTL_SRV_REQUEST_RESUME_KEY", SMB2_IOCTL, q_resume_key },
		{ "IOCTL FSCTL_SET_SPARSE", SMB2_IOCTL, q_sparse },
		{ "IOCTL FSCTL_QUERY_ALLOCATED_RANGES", SMB2_IOCTL, q_ranges },
		{ "IOCTL FSCTL_GET_REPARSE_POINT", SMB2_IOCTL, q_reparse },
		{ "IOCTL FSCTL_PIPE_TRANSCEIVE", SMB2_IOCTL, q_pipe },
		{ "QUERY_DIRECTORY", SMB2_QUERY_DIRECTORY, q_dir },
		{ "CHANGE_NOTIFY", SMB2_CHANGE_NOTIFY, q_notify },
		{ "QUERY_INFO FileBasicInformation", SMB2_QUERY_INFO, q_basic },
		{ "QUERY_INFO FileAllInformation", SMB2_QUERY_INFO, q_all },
		{ "QUERY_INFO FileStreamInformation", SMB2_QUERY_INFO, q_streams },
		{ "QUERY_INFO FileFsSizeInformation", SMB2_QUERY_INFO, q_fs },
		{ "QUERY_INFO security", SMB2_QUERY_INFO, q_sd },
		{ "SET_INFO FileBasicInformation", SMB2_SET_INFO, q_set_basic },
		{ "SET_INFO FileDispositionInformation", SMB2_SET_INFO, q_set_delete },
		{ "SET_INFO FileEndOfFileInformation", SMB2_SET_INFO, q_set_eof },
		{ "SET_INFO FileRenameInformation", SMB2_SET_INFO, q_set_rename },
		{ "SET_INFO quota", SMB2_SET_INFO, q_set_quota },
		{ "SET_INFO security", SMB2_SET_INFO, q_set_sd },
	};
	uint8_t buf[4096];
	struct smb2_fid fid;
	struct wcur w;
	struct raw r;
	unsigned int i;
	uint32_t st;

	if (raw_open(&r, true)) {
		BAD("quota fake file: setup failed");
		return;
	}
	if (call(&r, SMB2_CREATE, 1, enc_quota_open, NULL, &st) < 0 || st) {
		BAD("quota fake file: not opened (0x%08x)", st);
		raw_close(&r);
		return;
	}
	fid.persistent = get_le64(r.rx + 128);
	fid.volatile_id = get_le64(r.rx + 136);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char what[96];

		wcur_init(&w, buf, sizeof(buf));
		w.off = SMB2_HDR_SIZE;
		cmds[i].enc(&w, &fid);
		hdr(buf, cmds[i].cmd, r.mid, r.sid, r.tid, 1);
		r.mid++;
		snprintf(what, sizeof(what), "quota fake file, %s", cmds[i].what);
		if (send_raw(&r, buf, w.off)) {
			BAD("%s: send failed", what);
			break;
		}
		expect_rejected(&r, what);
	}
	wcur_init(&w, buf, sizeof(buf));
	w.off = SMB2_HDR_SIZE;
	q_query(&w, &fid, SMB2_0_INFO_QUOTA, 0, 0);
	hdr(buf, SMB2_QUERY_INFO, r.mid, r.sid, r.tid, 1);
	r.mid++;
	if (send_raw(&r, buf, w.off) || recv_status(&r, &st) < 0 || st)
		BAD("quota fake file, QUERY_INFO quota: 0x%08x, not success", st);
	else
		OK("quota fake file, QUERY_INFO quota: success (no quotas)");
	wcur_init(&w, buf, sizeof(buf));
	w.off = SMB2_HDR_SIZE;
	smb2_close_req_encode(&w, &(struct smb2_close_req){ .fid = fid });
	hdr(buf, SMB2_CLOSE, r.mid, r.sid, r.tid, 1);
	r.mid++;
	if (send_raw(&r, buf, w.off) || recv_status(&r, &st) < 0 || st)
		BAD("quota fake file, CLOSE: 0x%08x, not success", st);
	else
		OK("quota fake file, CLOSE: success");
	raw_close(&r);
	still_serving(keep, "commands on the quota fake file");
}

/* Connect, negotiate, anonymous session, tree connect, open a file. */
static int raw_open(struct raw *r, bool full)
{
	struct auth_client_cfg acfg = { .anonymous = true, .spnego = true,
					.workstation = "BAD" };
	struct auth_client *ac;
	uint8_t out[AUTH_TOKEN_MAX], in[AUTH_TOKEN_MAX];
	size_t out_len, in_len = 0;
	struct smb2_sess_setup_rsp ss;
	struct blob b;
	uint32_t st;
	int step;

	memset(r, 0, sizeof(*r));
	r->fd = tcp_connect(host, port, 5000, NULL);
	if (r->fd < 0)
		return r->fd;
	if (!full)
		return 0;
	if (call(r, SMB2_NEGOTIATE, 0, enc_negotiate, NULL, &st) < 0 || st)
		return -EPROTO;
	if (auth_client_new(&ac, &acfg))
		return -ENOMEM;
	for (;;) {
		step = auth_client_step(ac, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0)
			break;
		b.p = out;
		b.len = out_len;
		if (call(r, SMB2_SESSION_SETUP, 1, enc_sess, &b, &st) < 0)
			break;
		r->sid = get_le64(r->rx + 40);
		if (st != STATUS_MORE_PROCESSING_REQUIRED)
			break;
		if (smb2_sess_setup_rsp_decode(r->rx, 4096, &ss))
			break;
		memcpy(in, ss.security.p, ss.security.len);
		in_len = ss.security.len;
	}
	auth_client_delete(&ac);
	if (st)
		return -EACCES;
	if (call(r, SMB2_TREE_CONNECT, 1, enc_tcon, NULL, &st) < 0 || st)
		return -ENOENT;
	r->tid = get_le32(r->rx + 36);
	if (call(r, SMB2_CREATE, 1, enc_create, "badinput.dat", &st) < 0 || st)
		return -EIO;
	r->fid.persistent = get_le64(r->rx + 128);
	r->fid.volatile_id = get_le64(r->rx + 136);
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

/* The response to the last request was an error or a hang-up. */
static void expect_rejected(struct raw *r, const char *what)
{
	uint32_t st = 0;
	long n = recv_status(r, &st);

	if (n == -ECONNRESET || n == -EPIPE)
		OK("%s: connection dropped", what);
	else if (n > 0 && nt_is_error(st))
		OK("%s: answered %s", what, ntstatus_name(st) ? ntstatus_name(st) : "error");
	else if (n == -ETIMEDOUT)
		BAD("%s: no answer within 5 s and the connection is still open", what);
	else
		BAD("%s: unexpected result (n=%ld status 0x%08x)", what, n, st);
}

/* The established connection still answers, and a new one still logs on. */
static void still_serving(struct raw *keep, const char *after)
{
	struct raw fresh;
	uint32_t st;

	if (call(keep, SMB2_ECHO, 1, enc_echo, NULL, &st) < 0 || st)
		BAD("established connection stopped working after: %s", after);
	if (raw_open(&fresh, true))
		BAD("new connections fail after: %s", after);
	raw_close(&fresh);
}

static void send_and_check(struct raw *keep, const char *what,
			   const uint8_t *buf, size_t len, bool full)
{
	struct raw r;

	if (raw_open(&r, full)) {
		BAD("%s: setup failed", what);
		return;
	}
	if (send_raw(&r, buf, len)) {
		OK("%s: connection dropped on send", what);
	} else {
		expect_rejected(&r, what);
	}
	raw_close(&r);
	still_serving(keep, what);
}

int main(int argc, char **argv)
{
	struct raw keep, r;
	uint8_t buf[8192];
	struct wcur w;
	uint32_t st;

	if (argc != 4) {
		fprintf(stderr, "usage: badinput HOST PORT GUESTSHARE\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	if (crypto_init())
		return 99;
	if (raw_open(&keep, true)) {
		BAD("cannot set up the reference connection");
		return 1;
	}
	OK("reference connection established");

	/* 1. truncated header */
	memset(buf, 0, sizeof(buf));
	put_le32(buf, SMB2_PROTO_ID);
	put_le16(buf + 4, 64);
	send_and_check(&keep, "truncated header (20 of 64 bytes)", buf, 20, false);

	/* 2. a frame shorter than 4 bytes */
	send_and_check(&keep, "2-byte message", buf, 2, false);

	/* 3. not SMB at all */
	memcpy(buf, "GET / HTTP/1.1\r\n\r\n", 18);
	send_and_check(&keep, "HTTP request instead of SMB2", buf, 18, false);

	/* 4. NEGOTIATE whose DialectCount runs past the end */
	wcur_init(&w, buf, sizeof(buf));
	w.off = 64;
	enc_negotiate(&w, NULL);
	hdr(buf, SMB2_NEGOTIATE, 0, 0, 0, 0);
	put_le16(buf + 66, 2000);
	send_and_check(&keep, "NEGOTIATE DialectCount past the end", buf, w.off, false);

	/* 5. NEGOTIATE with a context offset past the end */
	wcur_init(&w, buf, sizeof(buf));
	w.off = 64;
	enc_negotiate(&w, NULL);
	hdr(buf, SMB2_NEGOTIATE, 0, 0, 0, 0);
	put_le32(buf + 92, 0x7FFFFFF8);
	send_and_check(&keep, "NEGOTIATE context offset past the end", buf, w.off, false);

	/* 6. unknown command after a real logon */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		smb2_simple_encode(&w);
		hdr(buf, 0x0055, r.mid++, r.sid, r.tid, 1);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "unknown command 0x55");
		raw_close(&r);
		still_serving(&keep, "unknown command");
	}

	/* 7. CreditCharge that does not cover the payload */
	if (!raw_open(&r, true)) {
		struct smb2_read_req rd = { 0 };

		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		rd.length = 4u << 20;	/* needs 64 credits */
		rd.fid = r.fid;
		smb2_read_req_encode(&w, &rd);
		hdr(buf, SMB2_READ, r.mid, r.sid, r.tid, 1);
		r.mid += 1;
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "READ of 4 MiB with CreditCharge 1");
		raw_close(&r);
		still_serving(&keep, "bad CreditCharge");
	}

	/* 8. WRITE whose DataOffset/Length point past the end */
	if (!raw_open(&r, true)) {
		struct smb2_write_req wr = { 0 };

		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		wr.length = 16;
		wr.fid = r.fid;
		smb2_write_req_encode(&w, &wr);
		wcur_zero(&w, 16);
		hdr(buf, SMB2_WRITE, r.mid, r.sid, r.tid, 1);
		r.mid++;
		put_le32(buf + 68, 60000);	/* Length far past the message */
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "WRITE Length past the end of the message");
		raw_close(&r);
		still_serving(&keep, "WRITE out of bounds");
	}

	/* 9. CREATE with a name offset past the end */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		enc_create(&w, "x");
		hdr(buf, SMB2_CREATE, r.mid++, r.sid, r.tid, 1);
		put_le16(buf + 108, 0xFFF0);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "CREATE NameOffset past the end");
		raw_close(&r);
		still_serving(&keep, "CREATE out of bounds");
	}

	/* 10. compound whose NextCommand points back into the PDU (loop) */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		smb2_simple_encode(&w);
		hdr(buf, SMB2_ECHO, r.mid++, r.sid, r.tid, 1);
		put_le32(buf + 20, 8);		/* NextCommand smaller than a header */
		wcur_zero(&w, 64);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "compound NextCommand 8 (loop)");
		raw_close(&r);
		still_serving(&keep, "looping compound");
	}

	/* 11. compound whose NextCommand runs out of bounds */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		smb2_simple_encode(&w);
		wcur_align(&w, 8);
		hdr(buf, SMB2_ECHO, r.mid++, r.sid, r.tid, 1);
		put_le32(buf + 20, 4096);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "compound NextCommand past the end");
		raw_close(&r);
		still_serving(&keep, "out-of-bounds compound");
	}

	/* 12. a compound of 1000 requests */
	if (!raw_open(&r, true)) {
		static uint8_t big[1000 * 72];
		size_t off;
		int i;

		for (i = 0, off = 0; i < 1000; i++, off += 72) {
			hdr(big + off, SMB2_ECHO, r.mid++, r.sid, r.tid, 1);
			put_le32(big + off + 20, i < 999 ? 72 : 0);
			put_le16(big + off + 64, 4);
		}
		send_raw(&r, big, sizeof(big));
		expect_rejected(&r, "compound of 1000 requests");
		raw_close(&r);
		still_serving(&keep, "oversized compound");
	}

	/* 13. replayed MessageId */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		smb2_simple_encode(&w);
		hdr(buf, SMB2_ECHO, r.mid - 1, r.sid, r.tid, 1);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "replayed MessageId");
		raw_close(&r);
		still_serving(&keep, "replayed MessageId");
	}

	/* 14. NTLMSSP AUTHENTICATE with fields pointing outside the blob */
	if (!raw_open(&r, false)) {
		static const uint8_t ntlm_neg[] = "NTLMSSP\0\x01\0\0\0\x07\x82\x08\xa2"
						  "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
		uint8_t auth[88] = "NTLMSSP";
		struct blob b;

		if (call(&r, SMB2_NEGOTIATE, 0, enc_negotiate, NULL, &st) >= 0 && !st) {
			b.p = ntlm_neg;
			b.len = 32;
			if (call(&r, SMB2_SESSION_SETUP, 1, enc_sess, &b, &st) >= 0 &&
			    st == STATUS_MORE_PROCESSING_REQUIRED) {
				r.sid = get_le64(r.rx + 40);
				put_le32(auth + 8, 3);
				/* NtChallengeResponse: len 24 at offset 0x7fff0000 */
				put_le16(auth + 20, 24);
				put_le16(auth + 22, 24);
				put_le32(auth + 24, 0x7fff0000);
				put_le16(auth + 36, 200);	/* UserName past the end */
				put_le16(auth + 38, 200);
				put_le32(auth + 40, 64);
				b.p = auth;
				b.len = sizeof(auth);
				if (call(&r, SMB2_SESSION_SETUP, 1, enc_sess, &b, &st) == -ECONNRESET)
					OK("NTLMSSP with bad offsets: connection dropped");
				else if (nt_is_error(st) && st != STATUS_MORE_PROCESSING_REQUIRED)
					OK("NTLMSSP with bad offsets: answered %s",
					   ntstatus_name(st) ? ntstatus_name(st) : "error");
				else
					BAD("NTLMSSP with bad offsets: status 0x%08x", st);
			} else {
				BAD("NTLMSSP NEGOTIATE not answered with MORE_PROCESSING");
			}
		}
		raw_close(&r);
		still_serving(&keep, "bad NTLMSSP");
	}

	/* 15. SESSION_SETUP whose security buffer points past the end */
	if (!raw_open(&r, false)) {
		if (call(&r, SMB2_NEGOTIATE, 0, enc_negotiate, NULL, &st) >= 0 && !st) {
			struct blob b = { (const uint8_t *)"NTLMSSP", 8 };

			wcur_init(&w, buf, sizeof(buf));
			w.off = 64;
			enc_sess(&w, &b);
			hdr(buf, SMB2_SESSION_SETUP, r.mid++, 0, 0, 1);
			put_le16(buf + 78, 4000);
			send_raw(&r, buf, w.off);
			expect_rejected(&r, "SESSION_SETUP buffer past the end");
		}
		raw_close(&r);
		still_serving(&keep, "bad SESSION_SETUP");
	}

	/* 16. a request on someone else's session id */
	if (!raw_open(&r, true)) {
		wcur_init(&w, buf, sizeof(buf));
		w.off = 64;
		enc_create(&w, "y");
		hdr(buf, SMB2_CREATE, r.mid++, keep.sid, keep.tid, 1);
		send_raw(&r, buf, w.off);
		expect_rejected(&r, "CREATE with another connection's SessionId");
		raw_close(&r);
		still_serving(&keep, "foreign SessionId");
	}

	/* 17. a frame announcing 16 MiB before any session */
	put_be32(buf, 0x00FFFFFF);
	if (!raw_open(&r, false)) {
		if (write(r.fd, buf, 4) == 4)
			expect_rejected(&r, "16 MiB frame before authentication");
		raw_close(&r);
		still_serving(&keep, "huge pre-auth frame");
	}

	/* 18. malformed stream names: refused with a status, nothing made */
	if (!raw_open(&r, true)) {
		static const char *const names[] = {
			"bs.txt::$DATA:x", "bs.txt:a:b:c", "bs.txt:", "bs.txt:s:$FOO",
			"bs.txt:x\\y", "bs.txt:x/y", "bs*.txt:s", ":", "::",
		};
		char longname[400];
		size_t i;

		for (i = 0; i <= sizeof(names) / sizeof(names[0]); i++) {
			const char *n = names[i % (sizeof(names) / sizeof(names[0]))];

			if (i == sizeof(names) / sizeof(names[0])) {
				memset(longname, 'x', sizeof(longname) - 1);
				memcpy(longname, "bs.txt:", 7);
				longname[sizeof(longname) - 1] = 0;
				n = longname;
			}
			if (call(&r, SMB2_CREATE, 1, enc_create, (void *)n, &st) < 0)
				BAD("stream name '%.20s': no answer", n);
			else if (!nt_is_error(st))
				BAD("stream name '%.20s': opened", n);
			else
				OK("stream name '%.20s': answered %s", n,
				   ntstatus_name(st) ? ntstatus_name(st) : "error");
		}
		raw_close(&r);
		still_serving(&keep, "malformed stream names");
	}

	/* 19. SET_INFO security descriptors that are malformed or too big */
	if (!raw_open(&r, true)) {
		static const struct {
			const char *what, *hex;
			size_t len;
			uint32_t status;
		} sds[] = {
			{ "owner offset past the end", "01000480 f0000000", 20,
			  STATUS_INVALID_SECURITY_DESCR },
			{ "SID with 200 sub-authorities", "01000080 14000000 0000000000000000"
			  "01c8000000000016", 28, STATUS_INVALID_SECURITY_DESCR },
			{ "DACL of 5000 ACEs in 8 bytes", "01000480 00000000 00000000 00000000"
			  "14000000 02000800 88130000", 28, STATUS_INVALID_PARAMETER },
			{ "not self-relative", "01000400", 20, STATUS_INVALID_SECURITY_DESCR },
			{ "60 KB descriptor", "01000080", 60000, STATUS_INVALID_SECURITY_DESCR },
		};
		static uint8_t big[65536], sd[60000];
		size_t i;

		for (i = 0; i < sizeof(sds) / sizeof(sds[0]); i++) {
			struct smb2_set_info_req si = { 0 };
			uint32_t st = 0;
			const char *h = sds[i].hex;
			size_t k;

			memset(sd, 0, sizeof(sd));
			for (k = 0; *h && k < sizeof(sd); h++) {
				if (*h == ' ')
					continue;
				sscanf(h, "%2hhx", &sd[k++]);
				h++;
			}
			wcur_init(&w, big, sizeof(big));
			w.off = 64;
			si.info_type = SMB2_0_INFO_SECURITY;
			si.additional = 0x7;	/* owner, group, DACL */
			si.data.p = sd;
			si.data.len = (uint32_t)sds[i].len;
			si.fid = r.fid;
			smb2_set_info_req_encode(&w, &si);
			hdr(big, SMB2_SET_INFO, r.mid, r.sid, r.tid, 1);
			r.mid++;
			send_raw(&r, big, w.off);
			if (recv_status(&r, &st) > 0 && st == sds[i].status)
				OK("SET_INFO security, %s: %s", sds[i].what, ntstatus_name(st));
			else
				BAD("SET_INFO security, %s: 0x%08x, not %s", sds[i].what, st,
				    ntstatus_name(sds[i].status));
		}
		raw_close(&r);
		still_serving(&keep, "bad security descriptors");
	}

	posix_cases(&keep);
	quota_fake_cases(&keep);
	ea_cases(&keep);

	raw_close(&keep);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
