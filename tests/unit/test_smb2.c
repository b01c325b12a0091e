// SPDX-License-Identifier: MIT
/* SMB2 codec: headers, compounds, validation, commands, FSCC, NTSTATUS,
 * server path handling and URL parsing, against spec packets. */
#include <errno.h>

#include "t.h"
#include "rdax.h"
#include "proto/fscc.h"
#include "proto/fsctl.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/utf16.h"

/* [MS-SMB2] NEGOTIATE request from a Windows 10 client (protocol-facts KAT-6). */
static const char neg_req_hex[] =
	"FE534D4240000100000000000000800000000000000000000100000000000000"
	"FFFE000000000000000000000000000000000000000000000000000000000000"
	"24000500000000003F000000ECD86F326276024F9F7752B89BB33F3A70000000"
	"020000000202100200030203110300000100260000000000010020000100FA49"
	"E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF0000"
	"0200060000000000020002000100";

/* WRITE request of "Smb3 encryption testing" (KAT-5 plaintext). */
static const char write_req_hex[] =
	"FE534D4240000100000000000900400008000000000000000400000000000000"
	"FFFE0000010000001100001400E4080000000000000000000000000000000000"
	"3100700017000000000000000000000015010000390000020100000039020000"
	"00000000000000007000000000000000536D623320656E6372797074696F6E20"
	"74657374696E67";

/* READ request (KAT-7 plaintext). */
static const char read_req_hex[] =
	"FE534D4240000100000000000800010008000000000000000600000000000000"
	"FFFE000001000000250000000010000000000000000000000000000000000000"
	"3100000017000000000000000000000006000000040000000100000004000000"
	"0000000000000000000000000000000000";

static void test_header(void)
{
	uint8_t p[64], q[64];
	struct smb2_hdr h = { 0 }, d;

	t_section("header");
	h.credit_charge = 3;
	h.command = SMB2_WRITE;
	h.credits = 31;
	h.flags = SMB2_FLAGS_SIGNED;
	h.message_id = 0x1122334455667788ull;
	h.process_id = 0xfeff;
	h.tree_id = 7;
	h.session_id = 0x0000100000000019ull;
	smb2_hdr_encode(p, &h);
	T_EQ(smb2_hdr_decode(p, 64, &d), 0);
	T_EQ(d.command, SMB2_WRITE);
	T_EQ(d.credit_charge, 3);
	T_EQ(d.message_id, 0x1122334455667788ull);
	T_EQ(d.tree_id, 7);
	smb2_hdr_encode(q, &d);
	T_MEMEQ(p, q, 64);
	T_EQ(smb2_hdr_decode(p, 63, &d), -EBADMSG);
	p[0] = 0xFF;
	T_EQ(smb2_hdr_decode(p, 64, &d), -EBADMSG);
	p[0] = 0xFE;
	put_le16(p + 4, 65);
	T_EQ(smb2_hdr_decode(p, 64, &d), -EBADMSG);
	/* async form carries an AsyncId instead of ProcessId/TreeId */
	h.flags = SMB2_FLAGS_ASYNC_COMMAND;
	h.async_id = 0xabcdef;
	smb2_hdr_encode(p, &h);
	T_EQ(smb2_hdr_decode(p, 64, &d), 0);
	T_EQ(d.async_id, 0xabcdef);
	T_EQ(d.tree_id, 0);
}

static void test_negotiate(void)
{
	uint8_t msg[256], out[512];
	struct smb2_negotiate_req r;
	struct smb2_negotiate_rsp rsp = { 0 }, back;
	struct smb2_hdr h;
	struct wcur w;
	size_t n = t_unhex(msg, sizeof(msg), neg_req_hex);

	t_section("NEGOTIATE request (Windows 10 packet)");
	T_EQ(n, 174);
	T_EQ(smb2_hdr_decode(msg, n, &h), 0);
	T_EQ(smb2_req_validate(msg, n, &h), 0);
	T_EQ(smb2_negotiate_req_decode(msg, n, &r), 0);
	T_EQ(r.ndialects, 5);
	T_EQ(r.dialects[0], 0x0202);
	T_EQ(r.dialects[4], 0x0311);
	T_EQ(r.capabilities, 0x3F);
	T_ASSERT(r.ctx.preauth && r.ctx.preauth_sha512);
	T_EQ(r.ctx.salt_len, 32);
	T_HEXEQ(r.ctx.salt, 4, "FA49E657");
	T_EQ(r.ctx.ncipher, 2);
	T_EQ(r.ctx.ciphers[0], SMB2_CIPHER_AES128_GCM);
	/* lengths past the end are refused */
	put_le16(msg + 66, 60);
	T_EQ(smb2_negotiate_req_decode(msg, n, &r), -EBADMSG);
	put_le16(msg + 66, 5);
	put_le32(msg + 92, 170);	/* context offset near the end */
	T_EQ(smb2_negotiate_req_decode(msg, n, &r), -EBADMSG);

	t_section("NEGOTIATE response round trip");
	rsp.dialect = SMB2_DIALECT_311;
	rsp.security_mode = 1;
	rsp.max_read = rsp.max_write = rsp.max_transact = SMB2_MAX_IO_SIZE;
	rsp.preauth = true;
	memset(rsp.salt, 0x5a, 32);
	rsp.cipher = SMB2_CIPHER_AES128_CCM;
	rsp.sign_ctx = true;
	rsp.signing = SMB2_SIGNING_AES_GMAC;
	wcur_init(&w, out, sizeof(out));
	w.off = 64;
	memset(out, 0, 64);
	put_le32(out, SMB2_PROTO_ID);
	put_le16(out + 4, 64);
	smb2_negotiate_rsp_encode(&w, &rsp);
	T_ASSERT(!w.err);
	T_EQ(get_le32(out + 124) % 8, 0);
	T_EQ(smb2_negotiate_rsp_decode(out, w.off, &back), 0);
	T_EQ(back.dialect, SMB2_DIALECT_311);
	T_EQ(back.cipher, SMB2_CIPHER_AES128_CCM);
	T_EQ(back.signing, SMB2_SIGNING_AES_GMAC);
	T_EQ(back.max_read, SMB2_MAX_IO_SIZE);
}

static void test_rw(void)
{
	uint8_t msg[256], out[256];
	struct smb2_write_req wr;
	struct smb2_read_req rd, rd2;
	struct smb2_hdr h;
	struct wcur w;
	size_t n;

	t_section("WRITE request (KAT-5 packet)");
	n = t_unhex(msg, sizeof(msg), write_req_hex);
	T_EQ(n, 135);
	T_EQ(smb2_hdr_decode(msg, n, &h), 0);
	T_EQ(h.command, SMB2_WRITE);
	T_EQ(smb2_req_validate(msg, n, &h), 0);
	T_EQ(smb2_req_credits_needed(msg, n, &h), 1);
	T_EQ(smb2_write_req_decode(msg, n, &wr), 0);
	T_EQ(wr.length, 23);
	T_EQ(wr.data_offset, 112);
	T_MEMEQ(wr.data.p, "Smb3 encryption testing", 23);
	put_le32(msg + 68, 24);		/* one byte more than sent */
	T_EQ(smb2_write_req_decode(msg, n, &wr), -EBADMSG);

	t_section("READ request (KAT-7 packet) and re-encoding");
	n = t_unhex(msg, sizeof(msg), read_req_hex);
	T_EQ(n, 113);
	T_EQ(smb2_hdr_decode(msg, n, &h), 0);
	T_EQ(smb2_read_req_decode(msg, n, &rd), 0);
	T_EQ(rd.length, 23);
	T_EQ(rd.channel, 0);
	wcur_init(&w, out, sizeof(out));
	memcpy(out, msg, 64);
	w.off = 64;
	smb2_read_req_encode(&w, &rd);
	T_EQ(w.off, 113);
	T_EQ(smb2_read_req_decode(out, w.off, &rd2), 0);
	T_EQ(rd2.offset, rd.offset);
	T_EQ(rd2.fid.volatile_id, rd.fid.volatile_id);
	/* multi-credit: a 1 MiB read needs 16 credits */
	put_le32(msg + 68, 1u << 20);
	T_EQ(smb2_req_credits_needed(msg, n, &h), 16);
	T_EQ(smb2_credit_charge_for(65537), 2);
	T_EQ(smb2_credit_charge_for(0), 1);
}

static void test_validate_chain(void)
{
	uint8_t m[512] = { 0 };
	struct smb2_hdr h = { .command = SMB2_ECHO };
	size_t plen, next;

	t_section("compound walk");
	smb2_hdr_encode(m, &h);
	put_le16(m + 64, 4);
	put_le32(m + 20, 72);
	smb2_hdr_encode(m + 72, &h);
	put_le16(m + 72 + 64, 4);
	T_EQ(smb2_chain_pdu(m, 140, 0, &plen, &next), 0);
	T_EQ(plen, 72);
	T_EQ(next, 72);
	T_EQ(smb2_chain_pdu(m, 140, 72, &plen, &next), 0);
	T_EQ(plen, 68);
	T_EQ(next, 0);
	put_le32(m + 20, 8);		/* points into the header */
	T_EQ(smb2_chain_pdu(m, 140, 0, &plen, &next), -EBADMSG);
	put_le32(m + 20, 76);		/* not 8-aligned */
	T_EQ(smb2_chain_pdu(m, 200, 0, &plen, &next), -EBADMSG);
	put_le32(m + 20, 200);		/* past the end */
	T_EQ(smb2_chain_pdu(m, 140, 0, &plen, &next), -EBADMSG);
	put_le32(m + 20, 0xFFFFFFF8u);	/* wraps */
	T_EQ(smb2_chain_pdu(m, 140, 0, &plen, &next), -EBADMSG);

	t_section("request validation");
	put_le32(m + 20, 0);
	T_EQ(smb2_hdr_decode(m, 68, &h), 0);
	T_EQ(smb2_req_validate(m, 68, &h), 0);
	put_le16(m + 64, 5);
	T_EQ(smb2_req_validate(m, 68, &h), -EBADMSG);
	h.command = SMB2_CREATE;
	put_le16(m + 64, 57);
	T_EQ(smb2_req_validate(m, 100, &h), -EBADMSG);	/* body too short */
	h.command = 0x33;
	T_EQ(smb2_req_validate(m, 100, &h), -EOPNOTSUPP);
	h.command = SMB2_ECHO;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	put_le16(m + 64, 4);
	T_EQ(smb2_req_validate(m, 68, &h), -EBADMSG);
}

static void test_create_ctx(void)
{
	struct smb2_create_ctx ctx[4];
	uint8_t buf[256];
	size_t prev = SIZE_MAX;
	struct wcur w;
	uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	t_section("create contexts");
	wcur_init(&w, buf, sizeof(buf));
	smb2_create_ctx_add(&w, &prev, SMB2_CTX_MXAC, d, 8);
	smb2_create_ctx_add(&w, &prev, SMB2_CTX_QFID, NULL, 0);
	T_ASSERT(!w.err);
	T_EQ(smb2_create_ctx_parse(buf, w.off, ctx, 4), 2);
	T_MEMEQ(ctx[0].name.p, "MxAc", 4);
	T_EQ(ctx[0].data.len, 8);
	T_MEMEQ(ctx[0].data.p, d, 8);
	T_MEMEQ(ctx[1].name.p, "QFid", 4);
	T_EQ(ctx[1].data.len, 0);
	put_le32(buf + 12, 4000);	/* data length past the context */
	T_EQ(smb2_create_ctx_parse(buf, w.off, ctx, 4), -EBADMSG);
	put_le32(buf + 12, 8);
	put_le32(buf, 12);		/* Next not aligned */
	T_EQ(smb2_create_ctx_parse(buf, w.off, ctx, 4), -EBADMSG);
	put_le32(buf, 0);
	T_EQ(smb2_create_ctx_parse(buf, 10, ctx, 4), -EBADMSG);
}

static void test_fscc(void)
{
	uint8_t buf[1024], name[32];
	struct fscc_info fi = { 0 }, got;
	const uint8_t *np;
	uint32_t nl;
	size_t off = 0;
	struct wcur w;
	int a, b, n;

	t_section("directory entries");
	fi.end_of_file = 12345;
	fi.file_id = 77;
	fi.attributes = FILE_ATTRIBUTE_ARCHIVE;
	n = utf8_to_utf16le("hello.txt", name, sizeof(name));
	wcur_init(&w, buf, sizeof(buf));
	a = fscc_dirent_encode(&w, sizeof(buf), FileIdBothDirectoryInformation, &fi,
			       name, (uint32_t)n);
	b = fscc_dirent_encode(&w, sizeof(buf), FileIdBothDirectoryInformation, &fi,
			       name, (uint32_t)n);
	T_EQ(a, 0);
	T_EQ(b % 8, 0);
	put_le32(buf + a, (uint32_t)(b - a));
	T_EQ(fscc_dirent_next(buf, w.off, &off, FileIdBothDirectoryInformation,
			      &got, &np, &nl), 1);
	T_EQ(got.end_of_file, 12345);
	T_EQ(got.file_id, 77);
	T_EQ(nl, (uint32_t)n);
	T_EQ(fscc_dirent_next(buf, w.off, &off, FileIdBothDirectoryInformation,
			      &got, &np, &nl), 1);
	T_EQ(fscc_dirent_next(buf, w.off, &off, FileIdBothDirectoryInformation,
			      &got, &np, &nl), 0);
	/* an entry that does not fit is refused and leaves w unchanged */
	a = (int)w.off;
	T_EQ(fscc_dirent_encode(&w, w.off + 50, FileIdBothDirectoryInformation,
				&fi, name, (uint32_t)n), -ENOSPC);
	T_EQ(w.off, (size_t)a);
	/* a name length running past the buffer is malformed */
	off = 0;
	put_le32(buf + 60, 5000);
	T_EQ(fscc_dirent_next(buf, w.off, &off, FileIdBothDirectoryInformation,
			      &got, &np, &nl), -EBADMSG);

	t_section("FileAllInformation");
	wcur_init(&w, buf, sizeof(buf));
	fi.nlink = 2;
	T_EQ(fscc_file_info_encode(&w, FileAllInformation, &fi, name, (uint32_t)n), 0);
	T_EQ(w.off, 100u + (size_t)n);
	memset(&got, 0, sizeof(got));
	T_EQ(fscc_all_info_decode(buf, w.off, &got), 0);
	T_EQ(got.nlink, 2);
	T_EQ(got.end_of_file, 12345);
	T_EQ(fscc_file_info_encode(&w, 250, &fi, NULL, 0), -E_SMB_INVALID_INFO_CLASS);

	t_section("FILETIME");
	{
		int64_t s;
		long ns;

		T_EQ(filetime_from_unix(0, 0), FILETIME_UNIX_EPOCH);
		filetime_to_unix(filetime_from_unix(1700000000, 123456700), &s, &ns);
		T_EQ(s, 1700000000);
		T_EQ(ns, 123456700);
	}
}

static void test_ntstatus(void)
{
	t_section("NTSTATUS table");
	T_EQ(ntstatus_from_err(-ENOENT), STATUS_OBJECT_NAME_NOT_FOUND);
	T_EQ(ntstatus_from_err(-EEXIST), STATUS_OBJECT_NAME_COLLISION);
	T_EQ(ntstatus_from_err(-E_SMB_LOGON_FAILURE), STATUS_LOGON_FAILURE);
	T_EQ(ntstatus_from_err(-E_SMB_MORE_PROCESSING), STATUS_MORE_PROCESSING_REQUIRED);
	T_EQ(ntstatus_from_err(0), STATUS_SUCCESS);
	T_EQ(ntstatus_from_err(-ENOTEMPTY), STATUS_DIRECTORY_NOT_EMPTY);
	T_EQ(ntstatus_from_err(-12345), STATUS_INTERNAL_ERROR);
	T_EQ(ntstatus_to_errno(STATUS_OBJECT_NAME_NOT_FOUND), ENOENT);
	T_EQ(ntstatus_to_errno(STATUS_LOGON_FAILURE), EACCES);
	T_EQ(ntstatus_to_errno(0xC0FFEE01u), EIO);
	T_ASSERT(!strcmp(ntstatus_name(STATUS_ACCESS_DENIED), "STATUS_ACCESS_DENIED"));
	T_ASSERT(!strcmp(ntstatus_text(STATUS_NO_MORE_FILES), "no more files"));
	T_ASSERT(nt_is_error(STATUS_ACCESS_DENIED) && !nt_is_error(STATUS_BUFFER_OVERFLOW));
	/* every E_SMB_* code has a status */
	for (int e = E_SMB_BASE + 1; e < E_SMB_LAST; e++)
		T_ASSERT(ntstatus_from_err(-e) != STATUS_INTERNAL_ERROR);
	T_ASSERT(strstr(rdax_status_str(STATUS_BAD_NETWORK_NAME), "no such share"));
}

static int path(const char *in, char *out)
{
	uint8_t u[512];
	int n = utf8_to_utf16le(in, u, sizeof(u));

	return srv_path_from_utf16(u, (size_t)n, out, 512);
}

static void test_paths(void)
{
	char out[512];
	uint8_t u[64];
	int n;

	t_section("SMB paths");
	T_EQ(path("\\dir\\file.txt", out), 0);
	T_ASSERT(!strcmp(out, "dir/file.txt"));
	T_EQ(path("a\\b\\", out), 0);
	T_ASSERT(!strcmp(out, "a/b"));
	T_EQ(path("", out), 0);
	T_ASSERT(!strcmp(out, ""));
	T_EQ(path("file::$DATA", out), 0);
	T_ASSERT(!strcmp(out, "file"));
	T_EQ(path("file:stream", out), -ENOENT);
	T_EQ(path("a*b", out), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(path("dir\\x?", out), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(path("a\\\\b", out), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(path(".\\a\\.\\b", out), 0);
	T_ASSERT(!strcmp(out, "a/b"));
	/* ".." is left for openat2(RESOLVE_BENEATH) to judge */
	T_EQ(path("..\\..\\etc", out), 0);
	T_ASSERT(!strcmp(out, "../../etc"));
	/* a NUL inside the name */
	n = utf8_to_utf16le("ab", u, sizeof(u));
	u[2] = 0;
	u[3] = 0;
	T_EQ(srv_path_from_utf16(u, (size_t)n + 2, out, sizeof(out)),
	     -E_SMB_OBJECT_NAME_INVALID);
	/* an unpaired surrogate */
	u[0] = 0x00;
	u[1] = 0xD8;
	T_EQ(srv_path_from_utf16(u, 2, out, sizeof(out)), -E_SMB_OBJECT_NAME_INVALID);
	n = srv_path_to_utf16("a/b", true, u, sizeof(u));
	T_EQ(n, 8);
	T_HEXEQ(u, 8, "5c0061005c006200");
}

static int spath(const char *in, char *out, char *stream, int *kind)
{
	uint8_t u[1024];
	int n = utf8_to_utf16le(in, u, sizeof(u));

	return srv_path_stream_from_utf16(u, (size_t)n, out, 512, stream, 256, kind);
}

static void test_stream_names(void)
{
	char out[512], st[256], big[400];
	int kind;

	t_section("stream names");
	T_EQ(spath("dir\\f.txt:s1", out, st, &kind), 0);
	T_ASSERT(!strcmp(out, "dir/f.txt") && !strcmp(st, "s1") && kind == SRV_STREAM_NAMED);
	T_EQ(spath("f:s1:$dAtA", out, st, &kind), 0);
	T_ASSERT(!strcmp(st, "s1") && kind == SRV_STREAM_NAMED);
	T_EQ(spath("f::$DATA", out, st, &kind), 0);
	T_ASSERT(!strcmp(out, "f") && kind == SRV_STREAM_DEFAULT);
	T_EQ(spath("f", out, st, &kind), 0);
	T_EQ(kind, SRV_STREAM_NONE);
	/* wildcards are allowed in a stream's name, not in the file's */
	T_EQ(spath("f:?s*:$DATA", out, st, &kind), 0);
	T_ASSERT(!strcmp(st, "?s*"));
	T_EQ(spath("f*:s", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f::$DATA:x", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f:a:b:c", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f:", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f:s:", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f:s:$FOO", out, st, &kind), -EINVAL);
	T_EQ(spath("f:a\\b", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("f:a/b", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	T_EQ(spath("d:s\\f", out, st, &kind), -E_SMB_OBJECT_NAME_INVALID);
	memset(big, 'x', 256);
	big[256] = 0;
	T_EQ(fscc_stream_parse(big, st, sizeof(st)), -E_SMB_OBJECT_NAME_INVALID);
	big[255] = 0;
	T_EQ(fscc_stream_parse(big, st, sizeof(st)), 0);
}

static void test_stream_info(void)
{
	uint8_t buf[128], n1[4] = { ':', 0, 'a', 0 };
	struct wcur w;
	long prev = -1;

	t_section("FILE_STREAM_INFORMATION");
	wcur_init(&w, buf, sizeof(buf));
	T_ASSERT(fscc_stream_entry_encode(&w, 64, &prev, n1, 4, 5, 4096));
	T_ASSERT(fscc_stream_entry_encode(&w, 64, &prev, n1, 4, 7, 4096));
	T_ASSERT(!fscc_stream_entry_encode(&w, 64, &prev, n1, 4, 9, 4096));
	T_ASSERT(!w.err);
	T_EQ(get_le32(buf), 32);		/* 24 + 4, aligned to 8 */
	T_EQ(get_le32(buf + 4), 4);
	T_EQ(get_le64(buf + 8), 5);
	T_EQ(get_le32(buf + 32), 0);		/* the last */
	T_EQ(get_le64(buf + 40), 7);
	T_EQ(w.off, 60);
}

static void test_url(void)
{
	struct rdax_url u;

	t_section("URLs");
	T_EQ(rdax_url_parse("smb://host/share/dir/file", &u), 0);
	T_ASSERT(!strcmp(u.host, "host") && !strcmp(u.share, "share"));
	T_ASSERT(!strcmp(u.path, "dir/file"));
	T_EQ(u.port, 0);
	T_EQ(rdax_url_parse("smb://bob@10.0.0.1:4455/s", &u), 0);
	T_ASSERT(!strcmp(u.user, "bob") && !strcmp(u.host, "10.0.0.1"));
	T_EQ(u.port, 4455);
	T_ASSERT(!strcmp(u.share, "s") && !u.path[0]);
	T_EQ(rdax_url_parse("smb://[::1]:445/s/p/", &u), 0);
	T_ASSERT(!strcmp(u.host, "::1") && !strcmp(u.path, "p"));
	T_EQ(rdax_url_parse("http://x/y", &u), -EINVAL);
	T_EQ(rdax_url_parse("smb://:445/s", &u), -EINVAL);
	T_EQ(rdax_url_parse("smb://h:0/s", &u), -EINVAL);
	T_EQ(rdax_url_parse("smb://h:99999/s", &u), -EINVAL);
	T_EQ(rdax_url_parse("smb://h:12x/s", &u), -EINVAL);
}

/* CHANGE_NOTIFY request and FILE_NOTIFY_INFORMATION ([MS-FSCC] 2.4.42). */
static void test_notify(void)
{
	struct smb2_notify_req r = { .flags = SMB2_WATCH_TREE, .output_len = 4096,
				     .fid = { 1, 2 }, .filter = 0x17 }, d;
	uint8_t pdu[SMB2_HDR_SIZE + 32], buf[64];
	const uint8_t a16[] = { 'a', 0 }, bc16[] = { 'b', 0, 'c', 0 };
	const uint8_t *name;
	uint32_t action, n;
	struct wcur w;
	size_t off;
	int prev = -1;

	wcur_init(&w, pdu + SMB2_HDR_SIZE, 32);
	smb2_notify_req_encode(&w, &r);
	T_EQ(w.off, 32);
	T_EQ(get_le16(pdu + SMB2_HDR_SIZE), 32);
	smb2_notify_req_decode(pdu, sizeof(pdu), &d);
	T_EQ(d.flags, SMB2_WATCH_TREE);
	T_EQ(d.output_len, 4096);
	T_EQ(d.fid.persistent, 1);
	T_EQ(d.fid.volatile_id, 2);
	T_EQ(d.filter, 0x17);

	memset(buf, 0xAA, sizeof(buf));
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(fscc_notify_encode(&w, sizeof(buf), &prev, FILE_ACTION_ADDED, a16, 2), 0);
	T_EQ(prev, 0);
	T_EQ(w.off, 14);
	T_EQ(fscc_notify_encode(&w, sizeof(buf), &prev, FILE_ACTION_RENAMED_NEW_NAME, bc16, 4), 0);
	/* the second entry starts 4-aligned, padded with zeros; the first points at it */
	T_EQ(prev, 16);
	T_EQ(get_le32(buf), 16);
	T_EQ(buf[14], 0);
	T_EQ(buf[15], 0);
	T_EQ(get_le32(buf + 16), 0);
	T_EQ(get_le32(buf + 20), FILE_ACTION_RENAMED_NEW_NAME);
	T_EQ(get_le32(buf + 24), 4);
	T_EQ(w.off, 32);
	/* does not fit: nothing written */
	T_EQ(fscc_notify_encode(&w, 40, &prev, FILE_ACTION_REMOVED, bc16, 4), -ENOSPC);
	T_EQ(w.off, 32);
	T_EQ(prev, 16);

	off = 0;
	T_EQ(fscc_notify_decode(buf, w.off, &off, &action, &name, &n), 0);
	T_EQ(action, FILE_ACTION_ADDED);
	T_EQ(n, 2);
	T_EQ(off, 16);
	T_EQ(fscc_notify_decode(buf, w.off, &off, &action, &name, &n), 0);
	T_EQ(n, 4);
	T_EQ(memcmp(name, bc16, 4), 0);
	T_EQ(off, 0);
	/* a name past the end, a misaligned next entry */
	off = 0;
	T_EQ(fscc_notify_decode(buf, 20, &off, &action, &name, &n), 0);
	off = 16;
	T_EQ(fscc_notify_decode(buf, 20, &off, &action, &name, &n), -EBADMSG);
	put_le32(buf, 13);
	off = 0;
	T_EQ(fscc_notify_decode(buf, w.off, &off, &action, &name, &n), -EBADMSG);
}

/* [MS-FSCC] 2.3.8, 2.3.33, 2.3.67: little-endian, fixed layout, short refused */
static void test_fsctl_extents(void)
{
	static const uint8_t dup[FSCTL_DUP_EXTENTS_LEN] = {
		1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
		0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0,
		0, 0, 1, 0, 0, 0, 0, 0,
	};
	static const uint8_t neg[FSCTL_RANGE_LEN] = {
		0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	struct fsctl_dup_extents d;
	struct fsctl_range r;
	uint64_t off, beyond;
	uint8_t buf[64];
	struct wcur w;

	T_EQ(fsctl_dup_extents_decode(dup, sizeof(dup), &d), 0);
	T_EQ(d.src_persistent, 1);
	T_EQ(d.src_volatile, 2);
	T_EQ(d.src_off, 0x1000);
	T_EQ(d.dst_off, 0x2000);
	T_EQ(d.len, 0x10000);
	T_EQ(fsctl_dup_extents_decode(dup, sizeof(dup) - 1, &d), -EBADMSG);
	wcur_init(&w, buf, sizeof(buf));
	fsctl_dup_extents_encode(&w, &d);
	T_EQ(w.off, sizeof(dup));
	T_MEMEQ(buf, dup, sizeof(dup));
	/* a "negative" offset decodes as it is: the server refuses it */
	T_EQ(fsctl_range_decode(neg, sizeof(neg), &r), 0);
	T_EQ(r.off, 0x8000000000000000ull);
	T_EQ(r.len, UINT64_MAX);
	T_EQ(fsctl_range_decode(neg, 15, &r), -EBADMSG);
	T_EQ(fsctl_zero_data_decode(dup, 16, &off, &beyond), 0);
	T_EQ(off, 1);
	T_EQ(beyond, 2);
	T_EQ(fsctl_zero_data_decode(dup, 8, &off, &beyond), -EBADMSG);
}

static void test_eas(void)
{
	static const uint8_t v1[] = "VALUE1", v2[] = "ValueTwo";
	struct fscc_ea e1 = { 0, "EAONE", 5, v1, 6 }, e2 = { 0x80, "SECONDEA", 8, v2, 8 }, got;
	uint8_t buf[256];
	size_t prev = SIZE_MAX, off = 0;
	struct wcur w;

	t_section("FILE_FULL_EA_INFORMATION");
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(fscc_ea_encode(&w, &prev, &e1), 0);
	T_EQ(fscc_ea_encode(&w, &prev, &e2), 0);
	T_EQ(get_le32(buf), 20u);		/* 8 + 5 + 1 + 6 */
	T_EQ(fscc_ea_next(buf, w.off, &off, &got), 1);
	T_EQ(got.name_len, 5);
	T_ASSERT(!strcmp(got.name, "EAONE"));
	T_EQ(got.value_len, 6);
	T_ASSERT(!memcmp(got.value, "VALUE1", 6));
	T_EQ(fscc_ea_next(buf, w.off, &off, &got), 1);
	T_EQ(got.flags, 0x80);
	T_ASSERT(!strcmp(got.name, "SECONDEA"));
	T_EQ(fscc_ea_next(buf, w.off, &off, &got), 0);
	/* an empty chain is no entry; malformed ones are refused */
	off = 0;
	T_EQ(fscc_ea_next(buf, 0, &off, &got), 0);
	off = 0;
	T_EQ(fscc_ea_next(buf, 12, &off, &got), -EBADMSG);	/* value past the end */
	off = 0;
	put_le32(buf, 18);				/* NextEntryOffset not aligned */
	T_EQ(fscc_ea_next(buf, w.off, &off, &got), -EBADMSG);
	put_le32(buf, 20);
	buf[8 + 5] = 'x';				/* name not NUL-terminated */
	off = 0;
	T_EQ(fscc_ea_next(buf, w.off, &off, &got), -EBADMSG);
	T_ASSERT(fscc_ea_name_ok("EAONE", 5));
	T_ASSERT(!fscc_ea_name_ok("A:B", 3));
	T_ASSERT(!fscc_ea_name_ok("", 0));
	/* no room: -ENOSPC and w unchanged */
	wcur_init(&w, buf, 10);
	prev = SIZE_MAX;
	T_EQ(fscc_ea_encode(&w, &prev, &e1), -ENOSPC);
	T_EQ(w.off, 0u);
}

static void test_short_name_entry(void)
{
	struct fscc_info fi = { 0 }, got;
	uint8_t buf[512], name[64];
	const uint8_t *np;
	uint32_t nl;
	size_t off = 0;
	struct wcur w;
	int n;

	t_section("ShortName in FileBothDirectoryInformation");
	n = utf8_to_utf16le("a long file name.txt", name, sizeof(name));
	fi.short_len = (uint8_t)utf8_to_utf16le("A12345~6.TXT", fi.short_name,
						 sizeof(fi.short_name));
	T_EQ(fi.short_len, 24);
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(fscc_dirent_encode(&w, sizeof(buf), FileBothDirectoryInformation, &fi, name,
				(uint32_t)n), 0);
	T_EQ(fscc_dirent_next(buf, w.off, &off, FileBothDirectoryInformation, &got, &np, &nl), 1);
	T_EQ(got.short_len, 24);
	T_ASSERT(!memcmp(got.short_name, fi.short_name, 24));
	T_EQ(buf[68], 24);
}

int main(void)
{
	test_header();
	test_negotiate();
	test_rw();
	test_validate_chain();
	test_create_ctx();
	test_fscc();
	test_ntstatus();
	test_paths();
	test_stream_names();
	test_stream_info();
	test_url();
	test_notify();
	test_fsctl_extents();
	test_eas();
	test_short_name_entry();
	return t_done();
}
