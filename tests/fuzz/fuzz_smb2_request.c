// SPDX-License-Identifier: MIT
/*
 * One SMB2 message as rdaxd receives it (after the TCP framing): walk the
 * chain, decode and validate each header, then run the request decoder of
 * its command as the server does, and the parsers behind it (create
 * contexts, names, security blobs, RDMA buffer descriptors, copychunk
 * lists). The same PDU also goes through the
 * response decoders librdax uses, so server->client traffic is covered.
 * Every decoded buffer must lie inside its PDU.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/fscc.h"
#include "proto/fsctl.h"
#include "proto/ntlmssp.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "proto/spnego.h"
#include "server/server.h"
#include "util/utf16.h"

struct pdu {
	const uint8_t *p;
	size_t len;
};

#define CHECK_BUF(b, pdu)                                                   \
	do {                                                                \
		FUZZ_ASSERT_INSIDE((b).p, (b).len, (pdu)->p, (pdu)->len);   \
		FUZZ_ASSERT(!(b).len == !(b).p);                            \
		fuzz_touch((b).p, (b).len);                                 \
	} while (0)

static void name_utf8(const struct smb2_buf *b, size_t cap)
{
	char out[4096];
	int n;

	if (cap > sizeof(out))
		cap = sizeof(out);
	n = utf16le_to_utf8(b->p, b->len, out, cap);
	if (n >= 0) {
		FUZZ_ASSERT((size_t)n < cap);
		FUZZ_ASSERT(strlen(out) == (size_t)n);
	}
}

static void server_path(const uint8_t *p, size_t len)
{
	char out[4096];

	if (!srv_path_from_utf16(p, len, out, sizeof(out)))
		FUZZ_ASSERT(strlen(out) < sizeof(out));
}

static void ntlmssp_any(const uint8_t *p, size_t len)
{
	struct ntlmssp_negotiate n;
	struct ntlmssp_challenge c;
	struct ntlmssp_auth a;

	switch (ntlmssp_msg_type(p, len)) {
	case NTLMSSP_NEGOTIATE:
		ntlmssp_decode_negotiate(p, len, &n);
		break;
	case NTLMSSP_CHALLENGE:
		if (!ntlmssp_decode_challenge(p, len, &c) && c.target_info.len)
			ntlmssp_av_validate(c.target_info.p, c.target_info.len,
					    NULL);
		break;
	case NTLMSSP_AUTH:
		ntlmssp_decode_auth(p, len, &a);
		break;
	}
}

static void security_blob(const struct smb2_buf *b)
{
	struct spnego_token t;

	if (!b->len)
		return;
	if (ntlmssp_is_ntlmssp(b->p, b->len)) {
		ntlmssp_any(b->p, b->len);
		return;
	}
	if (spnego_decode(b->p, b->len, &t))
		return;
	if (t.type == SPNEGO_TOKEN_INIT) {
		FUZZ_ASSERT_INSIDE(t.init.mech_types, t.init.mech_types_len,
				   b->p, b->len);
		spnego_mech_index(&t.init, &spnego_oid_ntlmssp);
		if (t.init.token)
			ntlmssp_any(t.init.token, t.init.token_len);
	} else if (t.resp.token) {
		ntlmssp_any(t.resp.token, t.resp.token_len);
	}
}

static void create_contexts(const struct smb2_buf *b)
{
	struct smb2_create_ctx ctx[SMB2_MAX_CREATE_CTX];
	int i, n;

	n = smb2_create_ctx_parse(b->p, b->len, ctx, SMB2_MAX_CREATE_CTX);
	FUZZ_ASSERT(n == -EBADMSG || (n >= 0 && n <= SMB2_MAX_CREATE_CTX));
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT_INSIDE(ctx[i].name.p, ctx[i].name.len, b->p, b->len);
		FUZZ_ASSERT_INSIDE(ctx[i].data.p, ctx[i].data.len, b->p, b->len);
		fuzz_touch(ctx[i].name.p, ctx[i].name.len);
		fuzz_touch(ctx[i].data.p, ctx[i].data.len);
	}
}

/* SET_INFO rename/link bodies as smb_info.c reads them. */
static void rename_target(const struct smb2_buf *b)
{
	uint32_t nlen;

	if (b->len < 20)
		return;
	nlen = get_le32(b->p + 16);
	if (!range_ok(20, nlen, b->len) || !nlen)
		return;
	server_path(b->p + 20, nlen);
}

/* READ/WRITE channel info: buffer descriptors for the RDMA channels. */
static void channel_info(uint32_t channel, const struct smb2_buf *b)
{
	struct smbd_desc d[64];
	int i, n;

	if (channel != SMB2_CHANNEL_RDMA_V1 &&
	    channel != SMB2_CHANNEL_RDMA_V1_INVALIDATE)
		return;
	n = smbd_desc_decode(b->p, b->len, d, 64);
	FUZZ_ASSERT(n == -EINVAL || (n >= 1 && n <= 64));
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(d[i].length && d[i].offset + d[i].length > d[i].offset);
}

static void ioctl_input(uint32_t code, const struct smb2_buf *b)
{
	struct fsctl_copychunk c;
	struct fsctl_chunk ch;
	uint32_t i;

	if (code != FSCTL_SRV_COPYCHUNK && code != FSCTL_SRV_COPYCHUNK_WRITE)
		return;
	if (fsctl_copychunk_decode(b->p, b->len, &c))
		return;
	FUZZ_ASSERT_INSIDE(c.chunks, (size_t)c.count * FSCTL_COPYCHUNK_CHUNK_LEN,
			   b->p, b->len);
	for (i = 0; i < c.count; i++)
		fsctl_copychunk_get(&c, i, &ch);
}

static void ioctl_output(uint32_t code, const struct smb2_buf *b)
{
	uint8_t key[FSCTL_RESUME_KEY_LEN];
	struct fsctl_copychunk_rsp r;

	if (code == FSCTL_SRV_REQUEST_RESUME_KEY)
		fsctl_resume_key_rsp_decode(b->p, b->len, key);
	else if (code == FSCTL_SRV_COPYCHUNK || code == FSCTL_SRV_COPYCHUNK_WRITE)
		fsctl_copychunk_rsp_decode(b->p, b->len, &r);
}

static void request(const struct pdu *u, const struct smb2_hdr *h)
{
	union {
		struct smb2_negotiate_req neg;
		struct smb2_sess_setup_req ss;
		struct smb2_tree_connect_req tc;
		struct smb2_create_req cr;
		struct smb2_close_req cl;
		struct smb2_fid fid;
		struct smb2_read_req rd;
		struct smb2_write_req wr;
		struct smb2_lock_req lk;
		struct smb2_ioctl_req io;
		struct smb2_query_dir_req qd;
		struct smb2_query_info_req qi;
		struct smb2_set_info_req si;
		struct smb2_notify_req nt;
	} r;
	struct smb2_lock_elem e;
	uint32_t credits;
	int i;

	if (smb2_req_validate(u->p, u->len, h))
		return;
	FUZZ_ASSERT(h->command < SMB2_NR_COMMANDS);
	credits = smb2_req_credits_needed(u->p, u->len, h);
	FUZZ_ASSERT(credits >= 1 && credits <= 0xFFFF);

	memset(&r, 0, sizeof(r));
	switch (h->command) {
	case SMB2_NEGOTIATE:
		if (smb2_negotiate_req_decode(u->p, u->len, &r.neg))
			break;
		FUZZ_ASSERT(r.neg.ndialects >= 1 &&
			    r.neg.ndialects <= SMB2_MAX_DIALECTS);
		FUZZ_ASSERT(r.neg.ctx.salt_len <= sizeof(r.neg.ctx.salt));
		FUZZ_ASSERT(r.neg.ctx.ncipher <= 8 && r.neg.ctx.nsign <= 8);
		break;
	case SMB2_SESSION_SETUP:
		if (smb2_sess_setup_req_decode(u->p, u->len, &r.ss))
			break;
		CHECK_BUF(r.ss.security, u);
		security_blob(&r.ss.security);
		break;
	case SMB2_TREE_CONNECT:
		if (smb2_tree_connect_req_decode(u->p, u->len, &r.tc))
			break;
		CHECK_BUF(r.tc.path, u);
		name_utf8(&r.tc.path, 1024);
		break;
	case SMB2_CREATE:
		if (smb2_create_req_decode(u->p, u->len, &r.cr))
			break;
		CHECK_BUF(r.cr.name, u);
		CHECK_BUF(r.cr.contexts, u);
		FUZZ_ASSERT(!(r.cr.name.len & 1));
		server_path(r.cr.name.p, r.cr.name.len);
		create_contexts(&r.cr.contexts);
		break;
	case SMB2_CLOSE:
		smb2_close_req_decode(u->p, u->len, &r.cl);
		break;
	case SMB2_FLUSH:
		smb2_flush_req_decode(u->p, u->len, &r.fid);
		break;
	case SMB2_READ:
		if (smb2_read_req_decode(u->p, u->len, &r.rd))
			break;
		CHECK_BUF(r.rd.channel_info, u);
		channel_info(r.rd.channel, &r.rd.channel_info);
		break;
	case SMB2_WRITE:
		if (smb2_write_req_decode(u->p, u->len, &r.wr))
			break;
		CHECK_BUF(r.wr.channel_info, u);
		CHECK_BUF(r.wr.data, u);
		FUZZ_ASSERT(r.wr.data.len == r.wr.length);
		channel_info(r.wr.channel, &r.wr.channel_info);
		break;
	case SMB2_LOCK:
		if (smb2_lock_req_decode(u->p, u->len, &r.lk))
			break;
		FUZZ_ASSERT_INSIDE(r.lk.locks, 24u * r.lk.count, u->p, u->len);
		for (i = 0; i < r.lk.count; i++)
			smb2_lock_elem_get(&r.lk, i, &e);
		break;
	case SMB2_IOCTL:
		if (smb2_ioctl_req_decode(u->p, u->len, &r.io))
			break;
		CHECK_BUF(r.io.input, u);
		ioctl_input(r.io.ctl_code, &r.io.input);
		break;
	case SMB2_QUERY_DIRECTORY:
		if (smb2_query_dir_req_decode(u->p, u->len, &r.qd))
			break;
		CHECK_BUF(r.qd.pattern, u);
		if (r.qd.pattern.len)
			name_utf8(&r.qd.pattern, 1024);
		fscc_dirent_class_ok(r.qd.info_class);
		break;
	case SMB2_QUERY_INFO:
		if (smb2_query_info_req_decode(u->p, u->len, &r.qi))
			break;
		CHECK_BUF(r.qi.input, u);
		fscc_file_info_min_size(r.qi.info_class);
		fscc_fs_info_min_size(r.qi.info_class);
		break;
	case SMB2_CHANGE_NOTIFY:
		smb2_notify_req_decode(u->p, u->len, &r.nt);
		break;
	case SMB2_SET_INFO:
		if (smb2_set_info_req_decode(u->p, u->len, &r.si))
			break;
		CHECK_BUF(r.si.data, u);
		if (r.si.info_type == SMB2_0_INFO_FILE &&
		    (r.si.info_class == FileRenameInformation ||
		     r.si.info_class == FileLinkInformation))
			rename_target(&r.si.data);
		break;
	default:
		break;
	}
}

/* A FILE_NOTIFY_INFORMATION list: every entry and name inside it. */
static void notify_list(const struct smb2_buf *b)
{
	const uint8_t *name;
	uint32_t action, n;
	size_t off = 0;
	int guard = 0;

	do {
		if (fscc_notify_decode(b->p, b->len, &off, &action, &name, &n))
			return;
		FUZZ_ASSERT(name >= b->p && name + n <= b->p + b->len);
	} while (off && ++guard < 100000);
}

static void dir_listing(const struct smb2_buf *b)
{
	static const int classes[] = {
		FileDirectoryInformation, FileFullDirectoryInformation,
		FileBothDirectoryInformation, FileNamesInformation,
		FileIdBothDirectoryInformation, FileIdFullDirectoryInformation,
	};
	struct fscc_info fi;
	const uint8_t *name;
	uint32_t nlen;
	size_t i, off, n;
	int ret;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		off = 0;
		n = 0;
		while ((ret = fscc_dirent_next(b->p, b->len, &off, classes[i],
					       &fi, &name, &nlen)) == 1) {
			FUZZ_ASSERT_INSIDE(name, nlen, b->p, b->len);
			fuzz_touch(name, nlen);
			/* each entry is at least 12 bytes: the walk ends */
			FUZZ_ASSERT(++n <= b->len / 12 + 1);
		}
		FUZZ_ASSERT(ret == 0 || ret == -EBADMSG);
	}
}

static void response(const struct pdu *u, const struct smb2_hdr *h)
{
	union {
		struct smb2_negotiate_rsp neg;
		struct smb2_sess_setup_rsp ss;
		struct smb2_tree_connect_rsp tc;
		struct smb2_create_rsp cr;
		struct smb2_close_rsp cl;
		struct smb2_read_rsp rd;
		struct smb2_write_rsp wr;
		struct smb2_ioctl_rsp io;
		struct smb2_buf out;
	} r;
	struct fscc_fsinfo fs;
	struct fscc_info fi;

	memset(&r, 0, sizeof(r));
	switch (h->command) {
	case SMB2_NEGOTIATE:
		if (smb2_negotiate_rsp_decode(u->p, u->len, &r.neg))
			break;
		CHECK_BUF(r.neg.security, u);
		security_blob(&r.neg.security);
		break;
	case SMB2_SESSION_SETUP:
		if (smb2_sess_setup_rsp_decode(u->p, u->len, &r.ss))
			break;
		CHECK_BUF(r.ss.security, u);
		security_blob(&r.ss.security);
		break;
	case SMB2_TREE_CONNECT:
		smb2_tree_connect_rsp_decode(u->p, u->len, &r.tc);
		break;
	case SMB2_CREATE:
		if (smb2_create_rsp_decode(u->p, u->len, &r.cr))
			break;
		CHECK_BUF(r.cr.contexts, u);
		create_contexts(&r.cr.contexts);
		break;
	case SMB2_CLOSE:
		smb2_close_rsp_decode(u->p, u->len, &r.cl);
		break;
	case SMB2_READ:
		if (!smb2_read_rsp_decode(u->p, u->len, &r.rd))
			CHECK_BUF(r.rd.data, u);
		break;
	case SMB2_WRITE:
		smb2_write_rsp_decode(u->p, u->len, &r.wr);
		break;
	case SMB2_IOCTL:
		if (smb2_ioctl_rsp_decode(u->p, u->len, &r.io))
			break;
		CHECK_BUF(r.io.output, u);
		ioctl_output(r.io.ctl_code, &r.io.output);
		break;
	case SMB2_QUERY_DIRECTORY:
	case SMB2_QUERY_INFO:
		if (smb2_out_buf_rsp_decode(u->p, u->len, &r.out))
			break;
		CHECK_BUF(r.out, u);
		dir_listing(&r.out);
		fscc_all_info_decode(r.out.p, r.out.len, &fi);
		fscc_basic_info_decode(r.out.p, r.out.len, &fi);
		fscc_standard_info_decode(r.out.p, r.out.len, &fi);
		fscc_fs_full_size_decode(r.out.p, r.out.len, &fs);
		break;
	case SMB2_CHANGE_NOTIFY:
		if (smb2_out_buf_rsp_decode(u->p, u->len, &r.out))
			break;
		CHECK_BUF(r.out, u);
		notify_list(&r.out);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, plen, next;
	int n = 0;

	do {
		struct smb2_hdr h;
		struct pdu u;
		uint8_t *copy;

		if (smb2_chain_pdu(data, size, off, &plen, &next))
			break;
		/* each PDU in its own exact-size buffer: ASan sees overreads */
		copy = malloc(plen);
		if (!copy)
			break;
		memcpy(copy, data + off, plen);
		u.p = copy;
		u.len = plen;
		if (!smb2_hdr_decode(u.p, u.len, &h)) {
			request(&u, &h);
			response(&u, &h);
		}
		free(copy);
		off = next;
	} while (off && ++n < 2 * SMB2_MAX_COMPOUND);
	return 0;
}
