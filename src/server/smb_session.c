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

/* ---- tables ---- */

struct srv_session *srv_session_find(struct srv_conn *c, uint64_t id)
{
	struct list_head *pos, *tmp;

	if (!id)
		return NULL;
	list_for_each_safe(pos, tmp, &c->sessions) {
		struct srv_session *s = list_entry(pos, struct srv_session, conn_link);

		if (s->id == id)
			return s;
	}
	return NULL;
}

int srv_session_new(struct srv_conn *c, struct srv_session **out)
{
	struct srv_session *s;

	if (c->nsessions >= c->srv->cfg->max_sessions)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = atomic_fetch_add(&c->srv->next_session_id, 1);
	s->conn = c;
	s->state = SESS_IN_PROGRESS;
	s->next_tree_id = 1;
	s->next_persistent = 1;
	list_init(&s->opens);
	memcpy(s->preauth, c->preauth, sizeof(s->preauth));
	list_add_tail(&s->conn_link, &c->sessions);
	c->nsessions++;
	*out = s;
	return 0;
}

static void session_close_opens(struct srv_session *s, struct srv_tree *only)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &s->opens) {
		struct srv_open *o = list_entry(pos, struct srv_open, sess_link);

		if (!only || o->tree == only)
			srv_open_close(o);
	}
}

static void session_unlink(struct srv_session *s)
{
	if (!list_empty(&s->conn_link)) {
		list_del(&s->conn_link);
		s->conn->nsessions--;
	}
}

void srv_session_free(struct srv_session *s)
{
	int i;

	session_close_opens(s, NULL);
	for (i = 0; i < s->ntrees; i++) {
		srv_ident_put(&s->trees[i]->ident);
		free(s->trees[i]);
	}
	free(s->trees);
	srv_ident_put(&s->ident);
	auth_server_delete(&s->auth);
	session_unlink(s);
	explicit_bzero(&s->keys, sizeof(s->keys));
	explicit_bzero(s->session_key, sizeof(s->session_key));
	free(s);
}

struct srv_tree *srv_tree_find(struct srv_session *s, uint32_t id)
{
	int i;

	for (i = 0; i < s->ntrees; i++)
		if (s->trees[i]->id == id)
			return s->trees[i];
	return NULL;
}

void srv_tree_free(struct srv_session *s, struct srv_tree *t)
{
	int i;

	session_close_opens(s, t);
	for (i = 0; i < s->ntrees; i++) {
		if (s->trees[i] == t) {
			s->trees[i] = s->trees[--s->ntrees];
			break;
		}
	}
	srv_ident_put(&t->ident);
	free(t);
}

static unsigned int open_bucket(uint64_t volatile_id)
{
	return (unsigned int)((volatile_id * 0x9E3779B97F4A7C15ull) >> 56) %
	       SRV_OPEN_HASH;
}

struct srv_open *srv_open_find(struct srv_session *s, const struct smb2_fid *fid)
{
	struct srv_open *o = s->open_hash[open_bucket(fid->volatile_id)];

	for (; o; o = o->hnext)
		if (o->volatile_id == fid->volatile_id &&
		    o->persistent == fid->persistent)
			return o;
	return NULL;
}

int srv_open_insert(struct srv_session *s, struct srv_open *o)
{
	unsigned int b;

	if (s->nopens >= s->conn->srv->cfg->max_opens) {
		log_ratelimited(LOG_WARN, "%s: open refused: %d files open in session 0x%llx (max open files)",
				s->conn->x->peer, s->nopens, (unsigned long long)s->id);
		return -EMFILE;
	}
	o->sess = s;
	o->persistent = s->next_persistent++;
	o->volatile_id = atomic_fetch_add(&s->conn->srv->next_volatile, 1);
	b = open_bucket(o->volatile_id);
	o->hnext = s->open_hash[b];
	s->open_hash[b] = o;
	list_add_tail(&o->sess_link, &s->opens);
	s->nopens++;
	return 0;
}

/* The last holder is gone: close the file for real. */
static void open_release(struct srv_open *o)
{
	store_dir_close(&o->dir);
	if (o->fd >= 0)
		close(o->fd);
	if (o->file)
		srv_file_put(o->share, o->file);
	srv_ident_put(&o->ident);
	free(o->pattern);
	free(o->pending_name);
	free(o);
}

int srv_open_close(struct srv_open *o)
{
	struct srv_session *s = o->sess;
	struct srv_open **pp = &s->open_hash[open_bucket(o->volatile_id)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == o) {
			*pp = o->hnext;
			break;
		}
	}
	list_del(&o->sess_link);
	s->nopens--;
	o->closed = true;
	o->sess = NULL;
	o->tree = NULL;
	if (o->file && o->delete_on_close)
		srv_file_set_delete(o->share, o->file, true, o->ident);
	if (!o->refs)
		open_release(o);
	return 0;
}

void srv_open_unref(struct srv_open *o)
{
	if (!--o->refs && o->closed)
		open_release(o);
}

int srv_req_open(struct srv_req *req, const struct smb2_fid *fid,
		 struct srv_open **out)
{
	struct srv_chain *ch = req->chain;
	struct smb2_fid f = *fid;
	struct srv_open *o;

	if (smb2_fid_is_compound(fid) && req->related) {
		if (ch->create_failed)
			return ntstatus_to_err(ch->create_status);
		if (!ch->have_fid)
			return -E_SMB_FILE_CLOSED;
		f = ch->fid;
	}
	/* the FileId this PDU used is what a related next one inherits */
	ch->have_fid = true;
	ch->fid = f;
	o = srv_open_find(req->sess, &f);
	if (!o || o->tree != req->tree)
		return -E_SMB_FILE_CLOSED;
	*out = o;
	return 0;
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
	for (i = 0; i < ctx->nsign; i++)
		if (ctx->signs[i] == SMB2_SIGNING_AES_GMAC ||
		    ctx->signs[i] == SMB2_SIGNING_AES_CMAC)
			return ctx->signs[i];
	/* HMAC-SHA256 is not allowed for 3.x sessions */
	return SMB2_SIGNING_AES_CMAC;
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

	for (i = 0; i < cfg->nshares; i++)
		if (!cfg->shares[i]->ipc && cfg->shares[i]->guest_ok)
			return true;
	return false;
}

static int srv_user_lookup(void *arg, const char *user, uint8_t nt_hash[16])
{
	struct srv_session *s = arg;

	if (!srv_logon_hash(s->conn->srv, user, nt_hash))
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
	struct srv_session *s;
	uint8_t out[SRV_AUTH_MAX];
	size_t outlen = 0;
	uint16_t flags = 0;
	bool created = false;
	struct iovec iov;
	int ret;

	ret = smb2_sess_setup_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	if (r.flags & SMB2_SESSION_FLAG_BINDING)
		return -E_SMB_REQUEST_NOT_ACCEPTED;	/* no multichannel yet */
	if (!req->hdr.session_id) {
		ret = srv_session_new(c, &s);
		if (ret == -E_SMB_REQUEST_NOT_ACCEPTED)
			log_ratelimited(LOG_WARN, "%s: session refused: %d sessions on the connection (max sessions per connection)",
					c->x->peer, c->nsessions);
		if (ret)
			return ret;
		created = true;
	} else {
		s = srv_session_find(c, req->hdr.session_id);
		if (!s)
			return -E_SMB_USER_SESSION_DELETED;
	}
	req->new_session_id = s->id;
	if (c->dialect == SMB2_DIALECT_311 && s->state != SESS_VALID) {
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
		if (c->dialect == SMB2_DIALECT_311 && s->state != SESS_VALID) {
			req->hash_rsp = true;
			req->hash_target = s->preauth;
		}
		return -E_SMB_MORE_PROCESSING;
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
	if (s->state != SESS_VALID)
		pr_notice("%s: session 0x%llx for %s%s as %s, SMB %s%s%s", c->x->peer,
			  (unsigned long long)s->id, s->user,
			  s->guest ? " (guest)" : "", s->ident ? s->unix_name : "nobody (no guest account)",
			  dialect_name(c->dialect),
			  s->signing_required ? ", signed" : "",
			  s->encrypt ? ", encrypted" : "");
	s->state = SESS_VALID;
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
	req->sign_sess = s;
	req->sess = s;
	req->force_sign = s->have_key &&
			  (c->dialect == SMB2_DIALECT_311 || s->signing_required);
	return 0;
out_fail:
	if (created || s->state != SESS_VALID) {
		/* a failed setup ends the session: [MS-SMB2] 3.3.5.5 */
		session_unlink(s);
		req->chain->dead[req->chain->ndead++] = s;
	}
	return ret;
}

int smb_logoff(struct srv_req *req)
{
	struct srv_session *s = req->sess;

	session_close_opens(s, NULL);
	session_unlink(s);
	req->chain->dead[req->chain->ndead++] = s;
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}

/* ---- TREE_CONNECT / TREE_DISCONNECT ---- */

/* "valid users": the SMB name, the Unix account it maps to, or @group */
static bool user_valid(const struct srv_share *sh, const struct srv_session *s)
{
	struct group gr, *res;
	char buf[16384];
	const char *v;
	int i;

	if (!sh->nvalid)
		return true;
	for (i = 0; i < sh->nvalid; i++) {
		v = sh->valid_users[i];
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
	struct srv_tree *t, **v;
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
	v = realloc(s->trees, sizeof(*v) * (size_t)(s->ntrees + 1));
	if (!v) {
		ret = -ENOMEM;
		goto out_free;
	}
	s->trees = v;
	t->id = s->next_tree_id++;
	t->share = sh;
	t->read_only = sh->read_only;
	t->maximal_access = t->read_only ? (FILE_GENERIC_READ | FILE_GENERIC_EXECUTE)
					 : FILE_ALL_ACCESS;
	s->trees[s->ntrees++] = t;
	req->new_tree_id = t->id;
	req->tree = t;
	rsp.share_type = sh->ipc ? SMB2_SHARE_TYPE_PIPE : SMB2_SHARE_TYPE_DISK;
	rsp.share_flags = SMB2_SHAREFLAG_MANUAL_CACHING;
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
	srv_tree_free(req->sess, req->tree);
	req->tree = NULL;
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

int smb_change_notify(struct srv_req *req)
{
	return -EOPNOTSUPP;
}

int smb_oplock_break(struct srv_req *req)
{
	/* no oplocks or leases are ever granted */
	return -EINVAL;
}
