// SPDX-License-Identifier: MIT
/*
 * NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT/DISCONNECT, ECHO and
 * the session / tree / open tables they manage.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "crypto/passdb.h"
#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"
#include "util/utf16.h"

#define SRV_AUTH_MAX AUTH_TOKEN_MAX
#define SRV_MAX_TREES 1024		/* tree connects per session */

static const char *dialect_name(uint16_t d)
{
	switch (d) {
	case SMB2_DIALECT_202: return "2.0.2";
	case SMB2_DIALECT_210: return "2.1";
	case SMB2_DIALECT_300: return "3.0";
	case SMB2_DIALECT_302: return "3.0.2";
	case SMB2_DIALECT_311: return "3.1.1";
	default: return "?";
	}
}

/* ---- NEGOTIATE ---- */

static bool dialect_ok(const struct srv_config *cfg, uint16_t d)
{
	return d >= cfg->min_dialect && d <= cfg->max_dialect &&
	       (d == SMB2_DIALECT_202 || d == SMB2_DIALECT_210 ||
		d == SMB2_DIALECT_300 || d == SMB2_DIALECT_302 ||
		d == SMB2_DIALECT_311);
}

static uint16_t pick_cipher(const struct smb2_negctx *ctx)
{
	int i;

	/* client order, first one we support */
	for (i = 0; i < ctx->ncipher; i++)
		if (ctx->ciphers[i] >= SMB2_CIPHER_AES128_CCM &&
		    ctx->ciphers[i] <= SMB2_CIPHER_AES256_GCM)
			return ctx->ciphers[i];
	return 0;
}

static uint16_t pick_signing(const struct smb2_negctx *ctx, bool *have)
{
	int i;

	*have = ctx->nsign > 0;
	/* the client's order, as Samba: HMAC-SHA256 too when it asks ([MS-SMB2] 3.3.5.4) */
	for (i = 0; i < ctx->nsign; i++)
		if (ctx->signs[i] == SMB2_SIGNING_AES_GMAC ||
		    ctx->signs[i] == SMB2_SIGNING_AES_CMAC ||
		    ctx->signs[i] == SMB2_SIGNING_HMAC_SHA256)
			return ctx->signs[i];
	/* no list, or nothing in common: the 3.1.1 default */
	return SMB2_SIGNING_AES_CMAC;
}

/*
 * The RDMA transforms of the client's list that this connection takes:
 * SMB-Direct only, when configured; encryption only with a cipher.
 */
static void pick_xforms(struct srv_conn *c, const struct smb2_negctx *ctx)
{
	int i;

	c->xform_enc = c->xform_sign = false;
	if (!c->x->rdma || !c->srv->cfg->rdma_transform)
		return;
	for (i = 0; i < ctx->nxform; i++) {
		if (ctx->xforms[i] == SMB2_RDMA_TRANSFORM_ENCRYPTION)
			c->xform_enc = c->cipher != 0;
		else if (ctx->xforms[i] == SMB2_RDMA_TRANSFORM_SIGNING)
			c->xform_sign = true;
	}
}

/*
 * Once per session: a signed or encrypted session over SMB-Direct whose
 * client did not take the RDMA transform offered to it (cifs.ko, older
 * clients) protects only its messages: encrypted file data must go
 * inline, a signed session's RDMA channel data is not signed. Called at
 * session setup and at each encrypted message (a client may encrypt
 * unasked, as cifs.ko's seal).
 */
void srv_xform_fallback_note(const struct srv_conn *c, struct srv_session *s, bool enc)
{
	if (!c->x->rdma || !c->srv->cfg->rdma_transform ||
	    (enc ? c->xform_enc : c->xform_sign) || atomic_load(&s->xform_noted) ||
	    atomic_exchange(&s->xform_noted, true))
		return;
	pr_notice("%s: %s session 0x%llx over SMB-Direct without the RDMA transform (%s): %s",
		  c->x->peer, enc ? "encrypted" : "signed", (unsigned long long)s->id,
		  c->dialect != SMB2_DIALECT_311 ? "not SMB 3.1.1" : "the client did not ask for it",
		  enc ? "its file data must go inline" : "its RDMA channel data is not signed");
}

static uint64_t now_filetime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return filetime_from_unix(ts.tv_sec, ts.tv_nsec);
}

static int negotiate_reply(struct srv_req *req, uint16_t dialect,
			   const struct smb2_negctx *ctx)
{
	struct srv_conn *c = req->conn;
	const struct srv_config *cfg = c->srv->cfg;
	struct smb2_negotiate_rsp r = { 0 };
	uint8_t hint[512];
	size_t hint_len = 0;
	bool multi = dialect >= SMB2_DIALECT_210 && dialect != SMB2_DIALECT_WILDCARD;

	r.dialect = dialect;
	r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	if (cfg->signing == SRV_SIGN_MANDATORY)
		r.security_mode |= SMB2_NEGOTIATE_SIGNING_REQUIRED;
	memcpy(r.server_guid, c->srv->guid, 16);
	if (multi)
		r.capabilities |= SMB2_GLOBAL_CAP_LARGE_MTU;
	/* persistent handles: SMB 3, where a share is continuously available */
	if (dialect >= SMB2_DIALECT_300 && dialect != SMB2_DIALECT_WILDCARD &&
	    srv_config_has_ca(cfg))
		r.capabilities |= SMB2_GLOBAL_CAP_PERSISTENT_HANDLES;
	if (multi && cfg->leases && cfg->oplocks) {
		r.capabilities |= SMB2_GLOBAL_CAP_LEASING;
		if (dialect >= SMB2_DIALECT_300 && cfg->dir_leases)
			r.capabilities |= SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
	}
	/* as Samba: to a 3.x client that asks for it */
	if (dialect >= SMB2_DIALECT_300 && dialect != SMB2_DIALECT_WILDCARD &&
	    cfg->multichannel && (c->client_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
		r.capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	if ((dialect == SMB2_DIALECT_300 || dialect == SMB2_DIALECT_302) &&
	    cfg->encrypt != SRV_ENC_OFF &&
	    (c->client_caps & SMB2_GLOBAL_CAP_ENCRYPTION))
		r.capabilities |= SMB2_GLOBAL_CAP_ENCRYPTION;
	r.max_transact = multi ? SMB2_MAX_IO_SIZE : 65536;
	r.max_read = r.max_transact;
	r.max_write = r.max_transact;
	r.system_time = now_filetime();
	r.start_time = 0;
	if (!auth_negotiate_hint(hint, sizeof(hint), &hint_len)) {
		r.security.p = hint;
		r.security.len = (uint32_t)hint_len;
	}
	if (dialect == SMB2_DIALECT_311) {
		r.preauth = true;
		crypto_random(r.salt, sizeof(r.salt));
		r.cipher = c->cipher;
		r.signing = pick_signing(ctx, &r.sign_ctx);
		c->sign_alg = r.signing;
		/* POSIX-SMB2 3.3.5.4: answered only to a client that asked */
		r.posix = ctx->posix && srv_config_has_posix(cfg);
		c->posix = r.posix;
		if (c->xform_enc)
			r.xforms[r.nxform++] = SMB2_RDMA_TRANSFORM_ENCRYPTION;
		if (c->xform_sign)
			r.xforms[r.nxform++] = SMB2_RDMA_TRANSFORM_SIGNING;
	}
	c->server_caps = r.capabilities;
	c->server_secmode = r.security_mode;
	if (srv_req_room(req, 512 + hint_len))
		return -ENOMEM;
	smb2_negotiate_rsp_encode(&req->w, &r);
	return 0;
}

int smb_negotiate(struct srv_req *req)
{
	struct srv_conn *c = req->conn;
	const struct srv_config *cfg = c->srv->cfg;
	struct smb2_negotiate_req r;
	struct iovec iov;
	uint16_t best = 0;
	int i, ret;

	if (c->negotiated) {
		/* [MS-SMB2] 3.3.5.3: a second NEGOTIATE ends the connection */
		c->closing = true;
		return -EINVAL;
	}
	ret = smb2_negotiate_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	for (i = 0; i < r.ndialects; i++)
		if (dialect_ok(cfg, r.dialects[i]) && r.dialects[i] > best)
			best = r.dialects[i];
	if (!best) {
		log_ratelimited(LOG_WARN, "%s: no common dialect", c->x->peer);
		return -EOPNOTSUPP;
	}
	c->client_secmode = r.security_mode;
	c->client_caps = r.capabilities;
	memcpy(c->client_guid, r.client_guid, 16);
	c->nclient_dialects = r.ndialects;
	memcpy(c->client_dialects, r.dialects, sizeof(r.dialects));
	if (best == SMB2_DIALECT_311) {
		if (!r.ctx.preauth || !r.ctx.preauth_sha512)
			return -EINVAL;
		if (cfg->encrypt != SRV_ENC_OFF)
			c->cipher = pick_cipher(&r.ctx);
		pick_xforms(c, &r.ctx);
		memset(c->preauth, 0, sizeof(c->preauth));
		iov.iov_base = (void *)req->pdu;
		iov.iov_len = req->len;
		ret = crypto_preauth_update(c->preauth, &iov, 1);
		if (ret)
			return ret;
		req->hash_rsp = true;
		req->hash_target = c->preauth;
	} else if ((best == SMB2_DIALECT_300 || best == SMB2_DIALECT_302) &&
		   cfg->encrypt != SRV_ENC_OFF &&
		   (r.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION)) {
		c->cipher = SMB2_CIPHER_AES128_CCM;
	}
	c->dialect = best;
	ret = negotiate_reply(req, best, &r.ctx);
	if (ret)
		return ret;
	c->negotiated = true;
	if (best >= SMB2_DIALECT_210 && best != SMB2_DIALECT_WILDCARD)
		srv_client_add(c);	/* lease breaks reach the client here */
	pr_info("%s: negotiated SMB %s%s", c->x->peer, dialect_name(best),
		c->cipher ? ", encryption available" : "");
	return 0;
}

/* SMB1 NEGOTIATE with "SMB 2.002"/"SMB 2.???": reply with SMB2, [MS-SMB2] 3.3.5.3.1 */
int smb1_negotiate(struct srv_conn *c, const uint8_t *msg, size_t len)
{
	struct srv_rbuf *rb;
	struct smb2_negotiate_rsp r = { 0 };
	struct smb2_hdr h = { 0 };
	struct wcur w;
	bool wild = false, v2002 = false;
	size_t i, bc, off;
	uint8_t hint[512];
	size_t hint_len = 0;
	int ret;

	/* SMB1 header 32 bytes, WordCount 0, ByteCount, then 0x02 "dialect" */
	if (len < 35 || msg[4] != 0x72 || msg[32] != 0)
		return -EPROTO;
	bc = get_le16(msg + 33);
	if (!range_ok(35, bc, len))
		return -EPROTO;
	for (off = 35; off < 35 + bc;) {
		const char *d = (const char *)msg + off + 1;
		size_t max = 35 + bc - off - 1;

		if (msg[off] != 0x02)
			return -EPROTO;
		for (i = 0; i < max && d[i]; i++)
			;
		if (i == max)
			return -EPROTO;
		if (!strcmp(d, "SMB 2.???"))
			wild = true;
		if (!strcmp(d, "SMB 2.002"))
			v2002 = true;
		off += i + 2;
	}
	if (wild && c->srv->cfg->max_dialect >= SMB2_DIALECT_210)
		r.dialect = SMB2_DIALECT_WILDCARD;
	else if ((wild || v2002) && c->srv->cfg->min_dialect <= SMB2_DIALECT_202)
		r.dialect = SMB2_DIALECT_202;
	else
		return -EPROTONOSUPPORT;
	rb = srv_rbuf_get(c->w, 1024);
	if (!rb)
		return -ENOMEM;
	r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	memcpy(r.server_guid, c->srv->guid, 16);
	r.max_transact = r.max_read = r.max_write = 65536;
	r.system_time = now_filetime();
	if (!auth_negotiate_hint(hint, sizeof(hint), &hint_len)) {
		r.security.p = hint;
		r.security.len = (uint32_t)hint_len;
	}
	wcur_init(&w, rb->mem + XPRT_HEADROOM + SMB2_TRANSFORM_SIZE, rb->cap);
	w.off = SMB2_HDR_SIZE;
	smb2_negotiate_rsp_encode(&w, &r);
	h.command = SMB2_NEGOTIATE;
	h.credits = 1;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	smb2_hdr_encode(w.p, &h);
	rb->len = w.off;
	rb->xb.data = w.p;
	rb->xb.len = w.off;
	/* the SMB1 request consumed MessageId 0 */
	c->seq_low = 1;
	c->seq_range = 1;
	ret = c->x->ops->send(c->x, &rb->xb);
	return ret;
}

/* ---- SESSION_SETUP ---- */

/* Is there a share (IPC$ aside) that guest and null sessions may use? */
static bool guest_share(const struct srv_config *cfg)
{
	int i;

	for (i = 0; i < srv_config_nshares(cfg); i++)
		if (!cfg->shares[i]->ipc && cfg->shares[i]->guest_ok &&
		    !atomic_load(&cfg->shares[i]->removed))
			return true;
	return false;
}

static int srv_user_lookup(void *arg, const char *user, uint8_t nt_hash[16])
{
	struct srv_session *s = arg;

	if (!srv_logon_hash(s->srv, user, nt_hash))
		return 0;
	s->user_unknown = true;
	return -ENOENT;
}

/*
 * The Unix account the session acts as, once, at its first logon: the
 * user's own (or the username map's choice), the guest account for
 * guests. A user without one is refused, as Samba and ksmbd refuse.
 */
static int session_ident(struct srv_conn *c, struct srv_session *s)
{
	bool guest = s->guest || s->anonymous;
	int ret;

	if (s->ident)
		return 0;
	ret = srv_logon_ident(c->srv, s->user, guest, &s->ident, s->unix_name,
			      sizeof(s->unix_name));
	if (ret == -ENOENT) {
		log_ratelimited(LOG_NOTICE, "%s: logon refused for '%s': no Unix account '%s'%s",
				c->x->peer, s->user, s->unix_name,
				strcasecmp(s->user, s->unix_name) ? " (username map)" : "");
		return -E_SMB_LOGON_FAILURE;
	}
	if (ret)
		log_ratelimited(LOG_ERR, "%s: logon of '%s': looking up Unix account '%s': %s",
				c->x->peer, s->user, s->unix_name, strerror(-ret));
	return ret;
}

static int sess_setup_reply(struct srv_req *req, uint16_t flags,
			    const uint8_t *blob, size_t len);

static int session_keys(struct srv_conn *c, struct srv_session *s)
{
	int ret;

	ret = smb3_derive_keys(c->dialect, s->session_key,
			       c->dialect == SMB2_DIALECT_311 ? s->preauth : NULL,
			       c->dialect >= SMB2_DIALECT_300 ? c->cipher : 0,
			       &s->keys);
	if (ret)
		return ret;
	if (c->dialect < SMB2_DIALECT_300)
		s->sign_alg = SMB2_SIGN_HMAC_SHA256;
	else if (c->dialect == SMB2_DIALECT_311)
		s->sign_alg = c->sign_alg;
	else
		s->sign_alg = SMB2_SIGN_AES_CMAC;
	s->have_key = true;
	return 0;
}

static int sess_setup_reply(struct srv_req *req, uint16_t flags,
			    const uint8_t *blob, size_t len)
{
	struct smb2_sess_setup_rsp r = {
		.session_flags = flags,
		.security = { blob, (uint32_t)len },
	};

	if (srv_req_room(req, 16 + len))
		return -ENOMEM;
	smb2_sess_setup_rsp_encode(&req->w, &r);
	return 0;
}

/* The signing algorithm of this connection (its channels use it). */
static uint16_t conn_sign_alg(const struct srv_conn *c)
{
	if (c->dialect < SMB2_DIALECT_300)
		return SMB2_SIGN_HMAC_SHA256;
	return c->dialect == SMB2_DIALECT_311 ? c->sign_alg : SMB2_SIGN_AES_CMAC;
}

/*
 * Until its channel has a key, a bind is signed as its session signs,
 * and so are the interim and failed responses; the channel then signs
 * with its own key and this connection's algorithm (as Samba).
 */
static void session_signer(struct srv_req *req, const struct srv_session *s)
{
	req->signer.alg = s->sign_alg;
	memcpy(req->signer.key, s->keys.signing, sizeof(req->signer.key));
	req->have_signer = s->have_key;
}

static int chan_user_lookup(void *arg, const char *user, uint8_t nt_hash[16])
{
	struct srv_channel *ch = arg;

	return srv_logon_hash(ch->conn->srv, user, nt_hash);
}

/*
 * SESSION_SETUP with SMB2_SESSION_FLAG_BINDING ([MS-SMB2] 3.3.5.5,
 * 3.3.5.5.2): a new channel for a session of this client. The checks
 * and their statuses follow Samba's smbd, which smbtorture's binding
 * tests are written against. The requests are signed with the
 * session's key, the final response with the new channel's.
 */
/*
 * A session set up with PreviousSessionId replaces that one of the same
 * user ([MS-SMB2] 3.3.5.5.3): it ends as if its connection had gone, so
 * its durable opens wait for a reconnect on the new one.
 */
static void session_replace(struct srv_conn *c, struct srv_session *s, uint64_t prev_id)
{
	struct srv_session *prev = srv_session_lookup(c->srv, prev_id);

	if (!prev)
		return;
	if (!s->anonymous && !s->guest && !strcasecmp(prev->user, s->user)) {
		pr_info("%s: session 0x%llx replaces 0x%llx of %s", c->x->peer,
			(unsigned long long)s->id, (unsigned long long)prev_id, s->user);
		srv_session_end(prev, true);
	}
	srv_session_put(prev);
}

static int session_bind(struct srv_req *req, const struct smb2_sess_setup_req *r)
{
	struct srv_conn *c = req->conn;
	const struct srv_config *cfg = c->srv->cfg;
	struct auth_server_cfg acfg = {
		.netbios_name = cfg->netbios_name,
		.domain_name = cfg->workgroup,
		.lookup = chan_user_lookup,
	};
	struct srv_session *s = NULL;
	const struct srv_signer *bind_key = NULL;
	struct srv_channel *ch;
	struct smb3_keys k;
	struct auth_result res;
	uint8_t out[SRV_AUTH_MAX];
	size_t outlen = 0;
	struct iovec iov;
	int ret;

	/* the checks in Samba's order, which smbtorture's bind tests know */
	if (!req->hdr.session_id)
		return -EINVAL;
	s = srv_session_lookup(c->srv, req->hdr.session_id);
	if (!s) {
		ret = -E_SMB_USER_SESSION_DELETED;
		goto out_put;
	}
	req->new_session_id = s->id;
	session_signer(req, s);
	/* a connection that carries the session already checks with its own key */
	ch = srv_channel_find(c, s->id);
	if (ch && ch->state == CHAN_VALID)
		bind_key = &ch->sign;
	if (req->hdr.flags & SMB2_FLAGS_SIGNED &&
	    (!s->have_key ||
	     (bind_key ? smb2_sign_verify(&c->kept, bind_key->alg, bind_key->key, req->pdu,
					  req->len) :
			 smb2_sign_verify(&c->kept, s->sign_alg, s->keys.signing, req->pdu,
					  req->len)))) {
		log_ratelimited(LOG_WARN, "%s: binding to session 0x%llx: bad signature",
				c->x->peer, (unsigned long long)s->id);
		req->have_signer = false;
		ret = -EACCES;
		goto out_put;
	}
	/* GMAC binds only to GMAC; other algorithms may differ per channel */
	if (s->sign_alg == SMB2_SIGN_AES_GMAC && conn_sign_alg(c) != s->sign_alg) {
		ret = -E_SMB_REQUEST_OUT_OF_SEQUENCE;
		goto out_put;
	}
	if (conn_sign_alg(c) == SMB2_SIGN_AES_GMAC && s->sign_alg != SMB2_SIGN_AES_GMAC) {
		ret = -EOPNOTSUPP;
		goto out_put;
	}
	if (c->dialect < SMB2_DIALECT_300 || !cfg->multichannel) {
		log_ratelimited(LOG_NOTICE, "%s: binding to session 0x%llx refused: %s", c->x->peer,
				(unsigned long long)s->id, cfg->multichannel ?
				"SMB 2 has no multichannel" : "server multi channel support = no");
		ret = -E_SMB_REQUEST_NOT_ACCEPTED;
		goto out_put;
	}
	if (!(req->hdr.flags & SMB2_FLAGS_SIGNED) || s->dialect != c->dialect ||
	    s->cipher != c->cipher) {
		log_ratelimited(LOG_NOTICE, "%s: binding to session 0x%llx refused: %s", c->x->peer,
				(unsigned long long)s->id,
				!(req->hdr.flags & SMB2_FLAGS_SIGNED) ? "unsigned" :
				s->dialect != c->dialect ? "another dialect" : "another cipher");
		ret = -EINVAL;
		goto out_put;
	}
	/* another client's session is as good as none */
	if (memcmp(s->client_guid, c->client_guid, sizeof(s->client_guid))) {
		log_ratelimited(LOG_NOTICE, "%s: binding to session 0x%llx refused: another client",
				c->x->peer, (unsigned long long)s->id);
		ret = -E_SMB_USER_SESSION_DELETED;
		goto out_put;
	}
	if (atomic_load(&s->state) != SESS_VALID) {
		ret = -E_SMB_REQUEST_NOT_ACCEPTED;
		goto out_put;
	}
	ch = srv_channel_find(c, s->id);
	if (ch && ch->state == CHAN_VALID) {
		ret = -E_SMB_REQUEST_NOT_ACCEPTED;	/* bound here already */
		goto out_put;
	}
	if (s->guest || s->anonymous) {
		ret = -EOPNOTSUPP;
		goto out_put;
	}
	if (!ch && s->nchannels >= SRV_MAX_CHANNELS) {
		/* Samba's and Windows' bound: 32 channels a session */
		log_ratelimited(LOG_WARN, "%s: binding refused: session 0x%llx has %d channels",
				c->x->peer, (unsigned long long)s->id, s->nchannels);
		ret = -ENOMEM;
		goto out_put;
	}
	if (!ch) {
		ret = srv_channel_bind(c, s, &ch);
		if (ret)
			goto out_put;
		s = NULL;		/* the channel's reference now */
		acfg.lookup_arg = ch;
		ret = auth_server_new(&ch->auth, &acfg);
		if (ret)
			goto out_drop;
	} else {
		srv_session_put(s);
		s = NULL;
	}
	if (c->dialect == SMB2_DIALECT_311) {
		iov.iov_base = (void *)req->pdu;
		iov.iov_len = req->len;
		ret = crypto_preauth_update(ch->preauth, &iov, 1);
		if (ret)
			goto out_drop;
	}
	ret = auth_server_step(ch->auth, r->security.p, r->security.len, out,
			       sizeof(out), &outlen);
	if (ret == 1) {
		ret = sess_setup_reply(req, 0, out, outlen);
		if (ret)
			goto out_drop;
		req->keep_body = true;
		if (c->dialect == SMB2_DIALECT_311) {
			req->hash_rsp = true;
			req->hash_target = ch->preauth;
		}
		return -E_SMB_MORE_PROCESSING;
	}
	if (ret < 0) {
		ret = ret == -EACCES ? -E_SMB_LOGON_FAILURE : -EINVAL;
		goto out_drop;
	}
	auth_server_result(ch->auth, &res);
	if (res.anonymous || strcasecmp(res.user, ch->sess->user)) {
		log_ratelimited(LOG_NOTICE, "%s: binding to session 0x%llx of %s refused: logged on as %s",
				c->x->peer, (unsigned long long)ch->sess->id, ch->sess->user,
				res.anonymous ? "anonymous" : res.user);
		ret = -EACCES;
		goto out_drop;
	}
	if (!res.have_key) {
		ret = -EOPNOTSUPP;
		goto out_drop;
	}
	/* the channel's signing key: from this logon (and its preauth hash) */
	ret = smb3_derive_keys(c->dialect, res.session_key,
			       c->dialect == SMB2_DIALECT_311 ? ch->preauth : NULL,
			       c->cipher, &k);
	explicit_bzero(&res, sizeof(res));
	if (ret)
		goto out_drop;
	ch->sign.alg = conn_sign_alg(c);
	memcpy(ch->sign.key, k.signing, sizeof(ch->sign.key));
	explicit_bzero(&k, sizeof(k));
	ret = sess_setup_reply(req, 0, out, outlen);
	if (ret)
		goto out_drop;
	srv_channel_valid(ch);
	pr_notice("%s: channel %d of session 0x%llx for %s (%s)", c->x->peer,
		  ch->sess->nchannels, (unsigned long long)ch->sess->id, ch->sess->user,
		  c->x->rdma ? "SMB-Direct" : "TCP");
	c->x->max_msg = SRV_MAX_MSG;
	c->x->rx_strict = false;
	req->chan = ch;
	req->sess = ch->sess;
	req->signer = ch->sign;
	req->have_signer = true;
	req->force_sign = true;
	return 0;
out_drop:
	srv_channel_drop(ch);
out_put:
	srv_session_put(s);
	return ret;
}

int smb_session_setup(struct srv_req *req)
{
	struct srv_conn *c = req->conn;
	const struct srv_config *cfg = c->srv->cfg;
	struct auth_server_cfg acfg = {
		.netbios_name = cfg->netbios_name,
		.domain_name = cfg->workgroup,
		.lookup = srv_user_lookup,
	};
	struct smb2_sess_setup_req r;
	struct auth_result res;
	struct srv_channel *ch;
	struct srv_session *s;
	uint8_t out[SRV_AUTH_MAX];
	size_t outlen = 0;
	uint16_t flags = 0;
	bool valid;
	struct iovec iov;
	int ret;

	ret = smb2_sess_setup_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	if (r.flags & SMB2_SESSION_FLAG_BINDING)
		return session_bind(req, &r);
	if (!req->hdr.session_id) {
		ret = srv_session_new(c, &ch);
		if (ret == -E_SMB_REQUEST_NOT_ACCEPTED)
			log_ratelimited(LOG_WARN, "%s: session refused: %d sessions on the connection (max sessions per connection)",
					c->x->peer, c->nchannels);
		if (ret)
			return ret;
	} else {
		ch = srv_channel_find(c, req->hdr.session_id);
		if (!ch || ch->state != CHAN_VALID) {
			srv_req_sign_as_session(req, req->hdr.session_id);
			return -E_SMB_USER_SESSION_DELETED;
		}
		/* a session that seals takes nothing in the clear, this neither */
		if (ch->sess->encrypt && !req->encrypted)
			return -EACCES;
		/* re-authentication is signed as everything else on the session */
		if (!req->encrypted && ch->sess->have_key) {
			req->signer = ch->sign;
			req->have_signer = true;
			if (req->hdr.flags & SMB2_FLAGS_SIGNED ?
			    smb2_sign_verify(&req->conn->kept, ch->sign.alg, ch->sign.key, req->pdu,
					     req->len) :
			    ch->sess->signing_required)
				return -EACCES;
		}
	}
	s = ch->sess;
	valid = atomic_load(&s->state) == SESS_VALID;
	req->chan = ch;
	req->new_session_id = s->id;
	if (c->dialect == SMB2_DIALECT_311 && !valid) {
		iov.iov_base = (void *)req->pdu;
		iov.iov_len = req->len;
		/* a hash that missed a message would give keys the client lacks */
		ret = crypto_preauth_update(s->preauth, &iov, 1);
		if (ret)
			goto out_fail;
	}
	if (!s->auth) {
		acfg.lookup_arg = s;
		ret = auth_server_new(&s->auth, &acfg);
		if (ret)
			goto out_fail;
	}
	s->user_unknown = false;
	ret = auth_server_step(s->auth, r.security.p, r.security.len, out,
			       sizeof(out), &outlen);
	if (ret == 1) {
		ret = sess_setup_reply(req, 0, out, outlen);
		if (ret)
			goto out_fail;
		req->keep_body = true;
		if (c->dialect == SMB2_DIALECT_311 && !valid) {
			req->hash_rsp = true;
			req->hash_target = s->preauth;
		}
		return -E_SMB_MORE_PROCESSING;
	}
	if (valid) {
		/* a re-authentication: the session and its keys stay as they are */
		auth_server_delete(&s->auth);
		if (ret < 0) {
			/* ... unless it fails: then the session ends, as Samba's does */
			ret = ret == -EACCES ? -E_SMB_LOGON_FAILURE : -EINVAL;
			goto out_fail;
		}
		ret = sess_setup_reply(req, s->guest ? SMB2_SESSION_FLAG_IS_GUEST : 0, out, outlen);
		if (ret)
			return ret;
		goto signed_reply;
	}
	if (ret < 0) {
		if (ret == -EACCES && s->user_unknown && cfg->map_to_guest) {
			s->guest = true;
			snprintf(s->user, sizeof(s->user), "guest");
		} else {
			auth_server_result(s->auth, &res);
			log_ratelimited(LOG_NOTICE, "%s: logon failure%s%s%s", c->x->peer,
					res.user[0] ? " for user '" : "",
					res.user, res.user[0] ? "'" : "");
			ret = ret == -EACCES ? -E_SMB_LOGON_FAILURE : -EINVAL;
			goto out_fail;
		}
	} else {
		auth_server_result(s->auth, &res);
		if (res.anonymous) {
			s->anonymous = true;
			snprintf(s->user, sizeof(s->user), "anonymous");
		} else {
			snprintf(s->user, sizeof(s->user), "%s", res.user);
			if (res.have_key) {
				memcpy(s->session_key, res.session_key, 16);
				ret = session_keys(c, s);
				if (ret)
					goto out_fail;
			}
		}
		explicit_bzero(&res, sizeof(res));
	}
	auth_server_delete(&s->auth);
	if (s->guest)
		flags |= SMB2_SESSION_FLAG_IS_GUEST;
	if (s->anonymous)
		flags |= SMB2_SESSION_FLAG_IS_NULL;
	if (s->have_key) {
		s->signing_required = cfg->signing == SRV_SIGN_MANDATORY ||
				      (r.security_mode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
		if (cfg->encrypt == SRV_ENC_REQUIRED && !c->cipher) {
			ret = -EACCES;
			goto out_fail;
		}
		if (c->cipher && cfg->encrypt >= SRV_ENC_DESIRED) {
			s->encrypt = true;
			flags |= SMB2_SESSION_FLAG_ENCRYPT_DATA;
		}
		/* the first channel signs with the session's key */
		ch->sign.alg = s->sign_alg;
		memcpy(ch->sign.key, s->keys.signing, sizeof(ch->sign.key));
	} else if (cfg->encrypt == SRV_ENC_REQUIRED) {
		ret = -EACCES;		/* guests cannot encrypt */
		goto out_fail;
	}
	ret = session_ident(c, s);
	if (ret)
		goto out_fail;
	ret = sess_setup_reply(req, flags, out, outlen);
	if (ret)
		goto out_fail;
	pr_notice("%s: session 0x%llx for %s%s as %s, SMB %s%s%s", c->x->peer,
		  (unsigned long long)s->id, s->user,
		  s->guest ? " (guest)" : "", s->ident ? s->unix_name : "nobody (no guest account)",
		  dialect_name(c->dialect),
		  s->signing_required ? ", signed" : "",
		  s->encrypt ? ", encrypted" : "");
	if (s->encrypt || s->signing_required)
		srv_xform_fallback_note(c, s, s->encrypt);
	atomic_store(&s->state, SESS_VALID);
	if (r.prev_session_id && r.prev_session_id != s->id)
		session_replace(c, s, r.prev_session_id);
	/*
	 * Large messages, and no deadline on whole messages (only on
	 * stalls), once a session can use a share: a user's, or a guest's
	 * where a share lets guests in. A null session on a server without
	 * such a share keeps the limits of an unauthenticated connection.
	 */
	if (c->x->rdma || !(s->guest || s->anonymous) || guest_share(cfg)) {
		c->x->max_msg = SRV_MAX_MSG;
		c->x->rx_strict = false;
	}
signed_reply:
	req->sess = s;
	req->signer = ch->sign;
	req->have_signer = s->have_key;
	req->force_sign = s->have_key &&
			  (c->dialect == SMB2_DIALECT_311 || s->signing_required);
	return 0;
out_fail:
	/* a failed setup or re-authentication ends the session, as Samba */
	srv_session_end(s, false);
	return ret;
}

int smb_logoff(struct srv_req *req)
{
	/* every channel goes: this one when the next message comes */
	/* as Samba: durable opens survive a logoff, for a reconnect */
	srv_session_end(req->sess, true);
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}

/* ---- TREE_CONNECT / TREE_DISCONNECT ---- */

/* "valid users": the SMB name, the Unix account it maps to, or @group */
static bool user_valid(const struct srv_share *sh, const struct srv_session *s)
{
	char **users = __atomic_load_n(&sh->valid_users, __ATOMIC_ACQUIRE);
	struct group gr, *res;
	char buf[16384];
	const char *v;
	int i;

	if (!users || !users[0])
		return true;
	for (i = 0; users[i]; i++) {
		v = users[i];
		if (*v == '@' || *v == '+') {
			res = NULL;
			if (s->ident && !getgrnam_r(v + 1, &gr, buf, sizeof(buf), &res) && res &&
			    srv_ident_in_group(s->ident, res->gr_gid))
				return true;
		} else if (!strcasecmp(v, s->user) || !strcasecmp(v, s->unix_name)) {
			return true;
		}
	}
	return false;
}

static int may_enter(void *share)
{
	struct srv_share *sh = share;

	return store_access(&sh->root, "", X_OK);
}

/* The session's identity as this share sees it: force user, force group. */
static int tree_ident(const struct srv_session *s, const struct srv_share *sh,
		      struct srv_ident **out)
{
	if (!srv_ident_switching() || (!sh->force_ident && sh->force_gid == (gid_t)-1)) {
		*out = srv_ident_get(s->ident);
		return 0;
	}
	return srv_ident_force(s->ident, sh->force_ident, sh->force_gid,
			       sh->force_group_member, out);
}

int smb_tree_connect(struct srv_req *req)
{
	struct srv_session *s = req->sess;
	struct smb2_tree_connect_rsp rsp = { 0 };
	struct smb2_tree_connect_req r;
	struct srv_share *sh;
	struct srv_tree *t;
	char path[512], *name;
	int ret;

	/* [MS-SMB2] 3.3.5.7: an authenticated 3.1.1 tree connect is signed */
	if (req->conn->dialect == SMB2_DIALECT_311 && s->have_key &&
	    !req->encrypted && !(req->hdr.flags & SMB2_FLAGS_SIGNED)) {
		log_ratelimited(LOG_WARN, "%s: unsigned SMB 3.1.1 TREE_CONNECT, disconnecting",
				req->conn->x->peer);
		req->conn->closing = true;
		return -EACCES;
	}
	ret = smb2_tree_connect_req_decode(req->pdu, req->len, &r);
	if (ret || !r.path.len)
		return -EINVAL;
	ret = utf16le_to_utf8(r.path.p, r.path.len, path, sizeof(path));
	if (ret < 0)
		return -E_SMB_BAD_NETWORK_NAME;
	name = strrchr(path, '\\');
	name = name ? name + 1 : path;
	sh = srv_share_find(req->conn->srv->cfg, name);
	if (!sh)
		return -E_SMB_BAD_NETWORK_NAME;
	if ((s->guest || s->anonymous) && !sh->guest_ok) {
		log_ratelimited(LOG_NOTICE, "%s: %s may not use share [%s] (not guest ok)",
				req->conn->x->peer, s->user, sh->name);
		return -EACCES;
	}
	if (!s->guest && !s->anonymous && !user_valid(sh, s)) {
		log_ratelimited(LOG_NOTICE, "%s: user %s is not in 'valid users' of [%s]",
				req->conn->x->peer, s->user, sh->name);
		return -EACCES;
	}
	if (s->ntrees >= SRV_MAX_TREES) {
		log_ratelimited(LOG_WARN, "%s: tree connect refused: %d trees in session 0x%llx",
				req->conn->x->peer, s->ntrees, (unsigned long long)s->id);
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	}
	if (!sh->ipc && !s->ident) {
		log_ratelimited(LOG_NOTICE, "%s: %s may not use share [%s] (no guest account)",
				req->conn->x->peer, s->user, sh->name);
		return -EACCES;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (!sh->ipc) {
		ret = tree_ident(s, sh, &t->ident);
		if (ret)
			goto out_free;
		/* Samba's rule too: a share its user cannot enter is refused */
		ret = srv_ident_run(t->ident, may_enter, sh);
		if (ret) {
			log_ratelimited(LOG_NOTICE, "%s: %s (as %s) may not enter share [%s] (%s): %s",
					req->conn->x->peer, s->user, t->ident->name, sh->name,
					sh->path, strerror(-ret));
			ret = -EACCES;
			goto out_free;
		}
	}
	t->share = sh;
	t->read_only = sh->read_only;
	t->maximal_access = t->read_only ? (FILE_GENERIC_READ | FILE_GENERIC_EXECUTE)
					 : FILE_ALL_ACCESS;
	ret = srv_tree_add(s, t);
	if (ret)
		goto out_free;
	req->new_tree_id = t->id;
	/* the request's reference, as if it had looked the tree up */
	atomic_fetch_add(&t->refs, 1);
	req->tree = t;
	rsp.share_type = sh->ipc ? SMB2_SHARE_TYPE_PIPE : SMB2_SHARE_TYPE_DISK;
	rsp.share_flags = SMB2_SHAREFLAG_MANUAL_CACHING;
	if (sh->ca && req->conn->dialect >= SMB2_DIALECT_300)
		rsp.capabilities |= SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY;
	if (s->encrypt)
		rsp.share_flags |= SMB2_SHAREFLAG_ENCRYPT_DATA;
	rsp.maximal_access = t->maximal_access;
	if (srv_req_room(req, 32))
		return -ENOMEM;
	smb2_tree_connect_rsp_encode(&req->w, &rsp);
	return 0;
out_free:
	srv_ident_put(&t->ident);
	free(t);
	return ret;
}

int smb_tree_disconnect(struct srv_req *req)
{
	req->new_tree_id = req->tree->id;
	srv_tree_remove(req->sess, req->tree);
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}

int smb_echo(struct srv_req *req)
{
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}

