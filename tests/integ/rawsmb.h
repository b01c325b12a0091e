/* SPDX-License-Identifier: MIT */
/*
 * A small raw SMB2 client for the protocol tests (abuse.c, sectest.c):
 * every field of every request is the test's to choose, and nothing is
 * retried or repaired. Logon is NTLMv2 (or anonymous) through the
 * project's auth code; with signing on, requests are signed with the
 * session's key ([MS-SMB2] 3.2.4.1.1), SMB 3.1.1 preauth included.
 */
#ifndef RDAX_TESTS_RAWSMB_H
#define RDAX_TESTS_RAWSMB_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "transport/transport.h"
#include "util/utf16.h"

#define RAW_FN static __attribute__((unused))
#define RAW_TIMEOUT_MS 10000

struct raw {
	int fd;
	const char *host;
	uint64_t mid;
	uint64_t sid;
	uint32_t tid;
	uint16_t dialect;
	uint16_t sign_alg;
	uint16_t cipher;
	uint16_t charge;		/* CreditCharge of the next request (0: 1) */
	uint16_t credit_req;		/* CreditRequest of each request */
	bool sign;			/* sign every request */
	bool have_key;
	bool guest;			/* the server said IS_GUEST or IS_NULL */
	/* multichannel: the ClientGuid to send (random unless set) */
	uint8_t guid[16];
	bool guid_set;
	uint16_t chanseq;		/* ChannelSequence of 3.x requests */
	bool replay;			/* SMB2_FLAGS_REPLAY_OPERATION */
	bool share_set;			/* CREATE's ShareAccess is share, not all */
	uint32_t share;
	bool posix;			/* NEGOTIATE offers the POSIX extensions */
	struct smb3_keys keys;
	uint8_t preauth[64];
	/* the last response */
	uint8_t *rx;
	size_t rx_cap;
	size_t rx_len;
	uint32_t status;
	uint16_t granted;		/* its CreditResponse */
	uint64_t granted_total;		/* sum over the connection */
};

/* Who logs on: user NULL = anonymous. */
struct raw_cred {
	const char *user;
	const char *password;
	const char *domain;
};

RAW_FN const char *raw_sname(uint32_t st)
{
	static char buf[32];
	const char *n = ntstatus_name(st);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "0x%08x", st);
	return buf;
}

RAW_FN int raw_connect(struct raw *r, const char *host, unsigned int port)
{
	memset(r, 0, sizeof(*r));
	r->host = host;
	r->credit_req = 64;
	r->fd = tcp_connect(host, port, 5000, NULL);
	return r->fd < 0 ? r->fd : 0;
}

RAW_FN void raw_close(struct raw *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->rx);
	r->rx = NULL;
	r->rx_cap = 0;
}

/* Start a request body: w positioned after the 64-byte header of b. */
RAW_FN void raw_begin(struct wcur *w, uint8_t *b, size_t cap)
{
	wcur_init(w, b, cap);
	memset(b, 0, SMB2_HDR_SIZE);
	w->off = SMB2_HDR_SIZE;
}

/*
 * Fill the header of the PDU b[0..len) from r (MessageId r->mid, which
 * advances by the charge) and sign it when r->sign and a key exists.
 */
RAW_FN void raw_seal(struct raw *r, uint16_t cmd, uint8_t *b, size_t len)
{
	struct smb2_hdr h = { 0 };
	uint16_t charge = r->charge ? r->charge : 1;

	h.command = cmd;
	h.message_id = r->mid;
	h.session_id = r->sid;
	h.tree_id = r->tid;
	h.credits = r->credit_req;
	h.credit_charge = cmd == SMB2_NEGOTIATE ? 0 : charge;
	if (r->dialect >= SMB2_DIALECT_300)
		h.status = r->chanseq;
	if (r->replay)
		h.flags |= SMB2_FLAGS_REPLAY_OPERATION;
	smb2_hdr_encode(b, &h);
	r->mid += charge;
	r->charge = 0;
	if (r->sign && r->have_key) {
		put_le32(b + 16, get_le32(b + 16) | SMB2_FLAGS_SIGNED);
		smb2_sign_compute(NULL, r->sign_alg, r->keys.signing, b, len, b + 48);
	}
}

/* Frame and send a message as it is. */
RAW_FN int raw_send(struct raw *r, const void *b, size_t len)
{
	struct iovec iov = { (void *)b, len };

	return tcp_send_msg(r->fd, &iov, 1);
}

/*
 * The next final response (interim STATUS_PENDING ones are skipped):
 * 0, -ECONNRESET when the server hung up, -ETIMEDOUT, -EPROTO.
 */
RAW_FN int raw_recv_timeout(struct raw *r, int timeout_ms)
{
	long n;

	do {
		n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 32u << 20, timeout_ms);
		if (n == -EPIPE)
			n = -ECONNRESET;
		if (n < 0)
			return (int)n;
		if (n < SMB2_HDR_SIZE || get_le32(r->rx) != SMB2_PROTO_ID)
			return -EPROTO;
		r->rx_len = (size_t)n;
		r->status = get_le32(r->rx + 8);
		r->granted = get_le16(r->rx + 14);
		r->granted_total += r->granted;
	} while (r->status == STATUS_PENDING);
	return 0;
}

RAW_FN int raw_recv(struct raw *r)
{
	return raw_recv_timeout(r, RAW_TIMEOUT_MS);
}

/* raw_seal + raw_send + raw_recv; the status is in r->status. */
RAW_FN int raw_xchg(struct raw *r, uint16_t cmd, uint8_t *b, size_t len)
{
	int ret;

	raw_seal(r, cmd, b, len);
	ret = raw_send(r, b, len);
	if (ret)
		return ret == -EPIPE ? -ECONNRESET : ret;
	return raw_recv(r);
}

/* NEGOTIATE offering dialects up to max (SMB2_DIALECT_*). */
RAW_FN int raw_negotiate(struct raw *r, uint16_t max)
{
	static const uint16_t all[] = { SMB2_DIALECT_210, SMB2_DIALECT_300,
					SMB2_DIALECT_302, SMB2_DIALECT_311 };
	struct smb2_negotiate_req n = { 0 };
	struct smb2_negotiate_rsp rsp;
	uint8_t b[1024];
	struct iovec iov;
	struct wcur w;
	size_t i;
	int ret;

	n.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	n.capabilities = SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] <= max)
			n.dialects[n.ndialects++] = all[i];
	if (!r->guid_set) {
		crypto_random(r->guid, 16);
		r->guid_set = true;
	}
	memcpy(n.client_guid, r->guid, 16);
	crypto_random(n.ctx.salt, 32);
	n.ctx.ciphers[n.ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	n.ctx.signs[n.ctx.nsign++] = SMB2_SIGNING_AES_CMAC;
	n.ctx.posix = r->posix;
	raw_begin(&w, b, sizeof(b));
	smb2_negotiate_req_encode(&w, &n);
	raw_seal(r, SMB2_NEGOTIATE, b, w.off);
	ret = raw_send(r, b, w.off);
	if (!ret)
		ret = raw_recv(r);
	if (ret)
		return ret;
	if (r->status)
		return -EPROTO;
	if (smb2_negotiate_rsp_decode(r->rx, r->rx_len, &rsp))
		return -EPROTO;
	r->dialect = rsp.dialect;
	r->posix = rsp.posix;		/* what the server answered */
	memset(r->preauth, 0, sizeof(r->preauth));
	if (r->dialect == SMB2_DIALECT_311) {
		r->cipher = rsp.cipher;
		r->sign_alg = rsp.sign_ctx ? rsp.signing : SMB2_SIGN_AES_CMAC;
		iov.iov_base = b;
		iov.iov_len = w.off;
		crypto_preauth_update(r->preauth, &iov, 1);
		iov.iov_base = r->rx;
		iov.iov_len = r->rx_len;
		crypto_preauth_update(r->preauth, &iov, 1);
	} else if (r->dialect >= SMB2_DIALECT_300) {
		r->sign_alg = SMB2_SIGN_AES_CMAC;
	} else {
		r->sign_alg = SMB2_SIGN_HMAC_SHA256;
	}
	return 0;
}

/*
 * SESSION_SETUP rounds until a final status: 0 with r->sid set (and the
 * keys when the logon has one), or the NTSTATUS of the refusal as a
 * positive number, or -errno when the exchange broke.
 */
RAW_FN long raw_logon_bind(struct raw *r, const struct raw_cred *cred,
			   const struct raw *first, bool sign_bind);

RAW_FN long raw_logon(struct raw *r, const struct raw_cred *cred)
{
	return raw_logon_bind(r, cred, NULL, false);
}

/*
 * With first: SESSION_SETUP with SMB2_SESSION_FLAG_BINDING for first's
 * session on r's connection, signed (sign_bind) with first's key; on
 * success r signs with the new channel's key, and seals with first's.
 */
RAW_FN long raw_logon_bind(struct raw *r, const struct raw_cred *cred,
			   const struct raw *first, bool sign_bind)
{
	struct auth_client_cfg acfg = {
		.anonymous = !cred || !cred->user, .spnego = true,
		.workstation = "RAWSMB",
		.user = cred ? cred->user : NULL,
		.password = cred ? cred->password : NULL,
		.domain = cred ? cred->domain : NULL,
	};
	static uint8_t out[AUTH_TOKEN_MAX], in[AUTH_TOKEN_MAX], b[AUTH_TOKEN_MAX + 256];
	uint8_t preauth[64], key[16];
	struct smb2_sess_setup_rsp ss;
	struct auth_client *ac;
	size_t out_len, in_len = 0;
	struct iovec iov;
	struct wcur w;
	long ret;
	int step;

	if (auth_client_new(&ac, &acfg))
		return -ENOMEM;
	memcpy(preauth, r->preauth, sizeof(preauth));
	r->sid = first ? first->sid : 0;
	if (first) {
		/* the binding requests are signed with the session's key */
		r->keys = first->keys;
		r->sign_alg = first->sign_alg;
		r->have_key = first->have_key;
		r->sign = sign_bind;
	}
	for (;;) {
		struct smb2_sess_setup_req s = {
			.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED,
			.flags = first ? SMB2_SESSION_FLAG_BINDING : 0,
		};

		step = auth_client_step(ac, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0) {
			ret = step;
			goto out;
		}
		s.security.p = out;
		s.security.len = (uint32_t)out_len;
		raw_begin(&w, b, sizeof(b));
		smb2_sess_setup_req_encode(&w, &s);
		raw_seal(r, SMB2_SESSION_SETUP, b, w.off);
		if (r->dialect == SMB2_DIALECT_311) {
			iov.iov_base = b;
			iov.iov_len = w.off;
			crypto_preauth_update(preauth, &iov, 1);
		}
		ret = raw_send(r, b, w.off);
		if (!ret)
			ret = raw_recv(r);
		if (ret)
			goto out;
		r->sid = get_le64(r->rx + 40);
		if (r->status != STATUS_MORE_PROCESSING_REQUIRED)
			break;
		if (r->dialect == SMB2_DIALECT_311) {
			iov.iov_base = r->rx;
			iov.iov_len = r->rx_len;
			crypto_preauth_update(preauth, &iov, 1);
		}
		if (smb2_sess_setup_rsp_decode(r->rx, r->rx_len, &ss) ||
		    ss.security.len > sizeof(in)) {
			ret = -EPROTO;
			goto out;
		}
		memcpy(in, ss.security.p, ss.security.len);
		in_len = ss.security.len;
	}
	if (r->status) {
		ret = r->status;
		goto out;
	}
	if (smb2_sess_setup_rsp_decode(r->rx, r->rx_len, &ss)) {
		ret = -EPROTO;
		goto out;
	}
	r->guest = ss.session_flags & (SMB2_SESSION_FLAG_IS_GUEST |
				       SMB2_SESSION_FLAG_IS_NULL);
	if (!r->guest && !auth_client_session_key(ac, key)) {
		struct smb3_keys k;

		ret = smb3_derive_keys(r->dialect, key,
				       r->dialect == SMB2_DIALECT_311 ? preauth : NULL,
				       r->cipher, &k);
		if (ret)
			goto out;
		if (first) {
			/* a channel signs with its own key; the session seals */
			memcpy(r->keys.signing, k.signing, sizeof(k.signing));
			r->sign = true;
		} else {
			r->keys = k;
		}
		r->have_key = true;
		/* 3.1.1 requires signed TREE_CONNECTs of an authenticated session */
		if (r->dialect == SMB2_DIALECT_311)
			r->sign = true;
	}
	ret = 0;
out:
	auth_client_delete(&ac);
	return ret;
}

/* TREE_CONNECT \\host\share: r->tid set; returns the status. */
RAW_FN uint32_t raw_tcon(struct raw *r, const char *share)
{
	struct smb2_tree_connect_req t = { 0 };
	uint8_t path[600], b[1024];
	char unc[300];
	struct wcur w;
	int n;

	snprintf(unc, sizeof(unc), "\\\\%s\\%s", r->host, share);
	n = utf8_to_utf16le(unc, path, sizeof(path));
	if (n < 0)
		return STATUS_INVALID_PARAMETER;
	t.path.p = path;
	t.path.len = (uint32_t)n;
	raw_begin(&w, b, sizeof(b));
	smb2_tree_connect_req_encode(&w, &t);
	if (raw_xchg(r, SMB2_TREE_CONNECT, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!r->status)
		r->tid = get_le32(r->rx + 36);
	return r->status;
}

/* Connect, negotiate (up to max), log on, tree connect: 0 or -errno. */
RAW_FN int raw_session(struct raw *r, const char *host, unsigned int port,
		       uint16_t max, const struct raw_cred *cred,
		       const char *share)
{
	long st;

	if (raw_connect(r, host, port))
		return -ECONNREFUSED;
	if (raw_negotiate(r, max))
		return -EPROTO;
	st = raw_logon(r, cred);
	if (st)
		return st > 0 ? -EACCES : (int)st;
	if (share && raw_tcon(r, share))
		return -ENOENT;
	return 0;
}

/* CREATE of a name given as UTF-16LE bytes; returns the status. */
RAW_FN uint32_t raw_create16(struct raw *r, const uint8_t *name, size_t nlen,
			     uint32_t access, uint32_t disposition,
			     uint32_t options, struct smb2_fid *fid)
{
	struct smb2_create_req c = { 0 };
	struct smb2_create_rsp rsp;
	uint8_t b[2048];
	struct wcur w;

	c.impersonation = 2;
	c.desired_access = access;
	c.file_attributes = FILE_ATTRIBUTE_NORMAL;
	c.share_access = r->share_set ? r->share :
			 FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	c.disposition = disposition;
	c.options = options;
	c.name.p = name;
	c.name.len = (uint32_t)nlen;
	raw_begin(&w, b, sizeof(b));
	smb2_create_req_encode(&w, &c);
	if (raw_xchg(r, SMB2_CREATE, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!r->status && fid && !smb2_create_rsp_decode(r->rx, r->rx_len, &rsp))
		*fid = rsp.fid;
	return r->status;
}

RAW_FN uint32_t raw_create(struct raw *r, const char *name, uint32_t access,
			   uint32_t disposition, uint32_t options,
			   struct smb2_fid *fid)
{
	uint8_t n16[1024];
	int n = utf8_to_utf16le(name, n16, sizeof(n16));

	if (n < 0)
		return STATUS_INVALID_PARAMETER;
	return raw_create16(r, n16, (size_t)n, access, disposition, options, fid);
}

RAW_FN uint32_t raw_close_fid(struct raw *r, const struct smb2_fid *fid)
{
	struct smb2_close_req c = { .fid = *fid };
	uint8_t b[128];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_close_req_encode(&w, &c);
	if (raw_xchg(r, SMB2_CLOSE, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

RAW_FN uint32_t raw_echo(struct raw *r)
{
	uint8_t b[128];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_simple_encode(&w);
	if (raw_xchg(r, SMB2_ECHO, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

RAW_FN uint32_t raw_logoff(struct raw *r)
{
	uint8_t b[128];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_simple_encode(&w);
	if (raw_xchg(r, SMB2_LOGOFF, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

/* WRITE len bytes of data at off (one request); returns the status. */
RAW_FN uint32_t raw_write(struct raw *r, const struct smb2_fid *fid,
			  uint64_t off, const void *data, uint32_t len)
{
	struct smb2_write_req wr = { 0 };
	uint8_t *b = malloc(SMB2_HDR_SIZE + 64 + len);
	struct wcur w;
	uint32_t st;

	if (!b)
		return STATUS_NO_MEMORY;
	wr.fid = *fid;
	wr.offset = off;
	wr.length = len;
	raw_begin(&w, b, SMB2_HDR_SIZE + 64 + len);
	smb2_write_req_encode(&w, &wr);
	wcur_bytes(&w, data, len);
	r->charge = smb2_credit_charge_for(len);
	st = raw_xchg(r, SMB2_WRITE, b, w.off) ? STATUS_CONNECTION_DISCONNECTED
					       : r->status;
	free(b);
	return st;
}

/* READ up to len bytes at off into buf; returns the status, *got the count. */
RAW_FN uint32_t raw_read(struct raw *r, const struct smb2_fid *fid,
			 uint64_t off, void *buf, uint32_t len, uint32_t *got)
{
	struct smb2_read_req rd = { 0 };
	struct smb2_read_rsp rsp;
	uint8_t b[256];
	struct wcur w;

	*got = 0;
	rd.fid = *fid;
	rd.offset = off;
	rd.length = len;
	raw_begin(&w, b, sizeof(b));
	smb2_read_req_encode(&w, &rd);
	r->charge = smb2_credit_charge_for(len);
	if (raw_xchg(r, SMB2_READ, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (!r->status && !smb2_read_rsp_decode(r->rx, r->rx_len, &rsp)) {
		*got = rsp.data_length < len ? rsp.data_length : len;
		memcpy(buf, rsp.data.p, *got);
	}
	return r->status;
}

/* SET_INFO of len bytes of data: type (SMB2_0_INFO_*), class, additional. */
RAW_FN uint32_t raw_set_info(struct raw *r, const struct smb2_fid *fid, uint8_t type,
			     uint8_t cls, uint32_t additional, const void *data, uint32_t len)
{
	struct smb2_set_info_req s = {
		.info_type = type,
		.info_class = cls,
		.additional = additional,
		.fid = *fid,
		.data = { data, len },
	};
	uint8_t b[2048];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_set_info_req_encode(&w, &s);
	if (raw_xchg(r, SMB2_SET_INFO, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

/* SET_INFO FileRenameInformation (or FileLinkInformation) to a UTF-8 name. */
RAW_FN uint32_t raw_rename(struct raw *r, const struct smb2_fid *fid,
			   const char *to, bool link)
{
	uint8_t n16[1024], info[1200];
	struct wcur wi;
	int n = utf8_to_utf16le(to, n16, sizeof(n16));

	if (n < 0)
		return STATUS_INVALID_PARAMETER;
	wcur_init(&wi, info, sizeof(info));
	fscc_rename_info_put(&wi, false, n16, (uint32_t)n);
	return raw_set_info(r, fid, SMB2_0_INFO_FILE,
			    link ? FileLinkInformation : FileRenameInformation, 0, info,
			    (uint32_t)wi.off);
}

/* Did the server hang up (EOF or reset) within timeout_ms? */
RAW_FN bool raw_hung_up(struct raw *r, int timeout_ms)
{
	int ret = raw_recv_timeout(r, timeout_ms);

	return ret == -ECONNRESET || ret == -EPIPE;
}

#endif
