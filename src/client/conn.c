// SPDX-License-Identifier: MIT
/* librdax connection: configuration, NEGOTIATE, SESSION_SETUP and the
 * request engine (credits, signing, encryption, compounds). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/client.h"
#include "crypto/auth.h"
#include "proto/ntstatus.h"
#include "transport/transport.h"
#include "util/utf16.h"

#define CLI_MAX_MSG (SMB2_MAX_IO_SIZE + (1u << 20))
#define CLI_AUTH_MAX AUTH_TOKEN_MAX

/* ---- configuration ---- */

int rdax_cfg_new(struct rdax_cfg **out)
{
	struct rdax_cfg *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return -ENOMEM;
	cfg->transport = RDAX_TRANSPORT_TCP;
	cfg->min_dialect = RDAX_SMB_2_1;
	cfg->max_dialect = RDAX_SMB_3_1_1;
	cfg->timeout_ms = 60000;
	*out = cfg;
	return 0;
}

void rdax_cfg_delete(struct rdax_cfg **cfg)
{
	if (!*cfg)
		return;
	explicit_bzero((*cfg)->password, sizeof((*cfg)->password));
	free(*cfg);
	*cfg = NULL;
}

int rdax_cfg_set_transport(struct rdax_cfg *cfg, enum rdax_transport t)
{
	if (t != RDAX_TRANSPORT_TCP && t != RDAX_TRANSPORT_RDMA)
		return -EINVAL;
	cfg->transport = t;
	return 0;
}

int rdax_cfg_set_credentials(struct rdax_cfg *cfg, const char *user,
			     const char *password)
{
	const char *sep;

	if (!user || strlen(user) >= sizeof(cfg->user) ||
	    (password && strlen(password) >= sizeof(cfg->password)))
		return -EINVAL;
	cfg->domain[0] = 0;
	sep = strchr(user, '\\');
	if (sep) {
		snprintf(cfg->domain, sizeof(cfg->domain), "%.*s",
			 (int)(sep - user), user);
		snprintf(cfg->user, sizeof(cfg->user), "%s", sep + 1);
	} else if ((sep = strchr(user, '@'))) {
		snprintf(cfg->user, sizeof(cfg->user), "%.*s", (int)(sep - user), user);
		snprintf(cfg->domain, sizeof(cfg->domain), "%s", sep + 1);
	} else {
		snprintf(cfg->user, sizeof(cfg->user), "%s", user);
	}
	if (password) {
		snprintf(cfg->password, sizeof(cfg->password), "%s", password);
		cfg->have_password = true;
	}
	cfg->guest = false;
	return 0;
}

int rdax_cfg_set_password_file(struct rdax_cfg *cfg, const char *path)
{
	char buf[sizeof(cfg->password) + 2];
	struct stat st;
	ssize_t n;
	int fd, ret = 0;
	char *nl;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (st.st_mode & 077) {
		ret = -EPERM;
		goto out_close;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		ret = -errno;
		goto out_close;
	}
	buf[n] = 0;
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = 0;
	if (strlen(buf) >= sizeof(cfg->password)) {
		ret = -ENAMETOOLONG;
		goto out_wipe;
	}
	strcpy(cfg->password, buf);
	cfg->have_password = true;
out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}

int rdax_cfg_set_guest(struct rdax_cfg *cfg, bool guest)
{
	cfg->guest = guest;
	return 0;
}

int rdax_cfg_set_signing(struct rdax_cfg *cfg, bool required)
{
	cfg->sign_required = required;
	return 0;
}

int rdax_cfg_set_encryption(struct rdax_cfg *cfg, bool required)
{
	cfg->encrypt_required = required;
	return 0;
}

int rdax_cfg_set_dialects(struct rdax_cfg *cfg, uint16_t min, uint16_t max)
{
	if (min > max || min < RDAX_SMB_2_1 || max > RDAX_SMB_3_1_1)
		return -EINVAL;
	cfg->min_dialect = min;
	cfg->max_dialect = max;
	return 0;
}

int rdax_cfg_set_timeout(struct rdax_cfg *cfg, int ms)
{
	cfg->timeout_ms = ms;
	return 0;
}

/* ---- errors ---- */

/* Where rdax_connect leaves its error, for rdax_errmsg(NULL). */
static __thread char cli_last_connect_error[512];
static __thread uint32_t cli_last_connect_status;

int cli_err(struct rdax_conn *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

int cli_status(struct rdax_conn *c, uint32_t status, const char *op,
	       const char *path)
{
	c->last_status = status;
	return cli_err(c, -ntstatus_to_errno(status), "%s%s%s: %s", op,
		       path ? " " : "", path ? path : "", rdax_status_str(status));
}

const char *rdax_errmsg(const struct rdax_conn *c)
{
	return c ? c->errmsg : cli_last_connect_error;
}

uint32_t rdax_last_status(const struct rdax_conn *c)
{
	return c ? c->last_status : cli_last_connect_status;
}

const char *rdax_status_str(uint32_t status)
{
	static __thread char buf[160];
	const char *name = ntstatus_name(status);

	if (name)
		snprintf(buf, sizeof(buf), "%s (%s)", name, ntstatus_text(status));
	else
		snprintf(buf, sizeof(buf), "NTSTATUS 0x%08x", status);
	return buf;
}

int rdax_conn_info(const struct rdax_conn *c, struct rdax_conn_info *info)
{
	memset(info, 0, sizeof(*info));
	info->dialect = c->dialect;
	info->signing = c->signing;
	info->encryption = c->encrypt;
	info->guest = c->guest;
	info->max_read = c->max_read;
	info->max_write = c->max_write;
	snprintf(info->transport, sizeof(info->transport), "tcp");
	return 0;
}

int rdax_conn_stats(const struct rdax_conn *c, struct rdax_stats *st)
{
	*st = c->stats;
	st->credits = c->credits;
	return 0;
}

void rdax_conn_stats_reset(struct rdax_conn *c)
{
	memset(&c->stats, 0, sizeof(c->stats));
}

/* ---- request engine ---- */

static int tx_reserve(struct rdax_conn *c, size_t need)
{
	size_t cap = c->tx_cap ? c->tx_cap : 16384;
	uint8_t *p;

	need += CLI_TF_ROOM;
	if (need <= c->tx_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(c->tx, cap);
	if (!p)
		return -ENOMEM;
	c->tx = p;
	c->tx_cap = cap;
	return 0;
}

static uint8_t *tx_base(struct rdax_conn *c)
{
	return c->tx + CLI_TF_ROOM;
}

void cli_chain_init(struct rdax_conn *c, struct cli_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	c->tx_len = 0;
}

int cli_chain_add(struct rdax_conn *c, struct cli_chain *ch, uint16_t cmd,
		  uint32_t tree_id, bool related, uint16_t charge,
		  size_t body_max, struct wcur *w)
{
	struct smb2_hdr h = { 0 };
	size_t off = align8(c->tx_len);
	int ret;

	if (ch->n >= CLI_MAX_CHAIN)
		return -E2BIG;
	ret = tx_reserve(c, off + SMB2_HDR_SIZE + body_max + 8);
	if (ret)
		return ret;
	memset(tx_base(c) + c->tx_len, 0, off - c->tx_len);
	h.command = cmd;
	h.credit_charge = charge;
	h.tree_id = tree_id;
	h.session_id = c->session_id;
	h.flags = related ? SMB2_FLAGS_RELATED_OPERATIONS : 0;
	smb2_hdr_encode(tx_base(c) + off, &h);
	ch->off[ch->n] = off;
	ch->charge[ch->n] = charge ? charge : 1;
	ch->n++;
	wcur_init(w, tx_base(c) + off, SMB2_HDR_SIZE + body_max);
	w->off = SMB2_HDR_SIZE;
	return 0;
}

void cli_chain_end(struct rdax_conn *c, struct cli_chain *ch, struct wcur *w)
{
	c->tx_len = ch->off[ch->n - 1] + w->off;
}

static bool need_sign(const struct rdax_conn *c, const struct cli_chain *ch)
{
	return c->have_key && (c->signing || ch->sign) && !c->encrypt;
}

static int chain_send(struct rdax_conn *c, struct cli_chain *ch)
{
	uint8_t *base = tx_base(c);
	struct iovec iov[2];
	uint32_t total = 0;
	int i, ret, niov = 1;
	size_t end;

	for (i = 0; i < ch->n; i++)
		total += ch->charge[i];
	if (total > c->credits && c->dialect)
		return cli_err(c, -EAGAIN, "not enough SMB credits (%u held, %u needed)",
			       c->credits, total);
	for (i = 0; i < ch->n; i++) {
		uint8_t *p = base + ch->off[i];
		uint16_t want = ch->charge[i];

		if (c->credits < CLI_CREDIT_TARGET)
			want += (uint16_t)(CLI_CREDIT_TARGET - c->credits > 256 ?
					   256 : CLI_CREDIT_TARGET - c->credits);
		ch->mid[i] = c->next_mid;
		c->next_mid += ch->charge[i];
		c->credits -= c->dialect ? ch->charge[i] : 0;
		put_le64(p + 24, ch->mid[i]);
		put_le16(p + 14, want);
		if (c->dialect <= SMB2_DIALECT_202)
			put_le16(p + 6, 0);
		end = i + 1 < ch->n ? ch->off[i + 1] : c->tx_len;
		put_le32(p + 20, i + 1 < ch->n ? (uint32_t)(end - ch->off[i]) : 0);
		ch->rsp[i].done = false;
	}
	iov[0].iov_base = base;
	iov[0].iov_len = c->tx_len;
	if (ch->tail_len && (need_sign(c, ch) || c->encrypt)) {
		/* signing and encryption need the whole PDU in one buffer */
		ret = tx_reserve(c, c->tx_len + ch->tail_len);
		if (ret)
			return ret;
		base = tx_base(c);
		memcpy(base + c->tx_len, ch->tail, ch->tail_len);
		c->tx_len += ch->tail_len;
		iov[0].iov_base = base;
		iov[0].iov_len = c->tx_len;
	} else if (ch->tail_len) {
		iov[1].iov_base = (void *)ch->tail;
		iov[1].iov_len = ch->tail_len;
		niov = 2;
	}
	if (need_sign(c, ch)) {
		for (i = 0; i < ch->n; i++) {
			uint8_t *p = base + ch->off[i];

			end = i + 1 < ch->n ? ch->off[i + 1] : c->tx_len;
			put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
			ret = smb2_sign_compute(c->sign_alg, c->keys.signing, p,
						end - ch->off[i], p + 48);
			if (ret)
				return cli_err(c, ret, "signing failed");
		}
	}
	if (ch->preauth)
		crypto_preauth_update(ch->preauth, iov, niov);
	if (c->encrypt && c->have_key) {
		ret = smb2_encrypt(c->cipher, c->keys.c2s, c->session_id, iov, 1,
				   base - SMB2_TRANSFORM_SIZE);
		if (ret < 0)
			return cli_err(c, ret, "encryption failed");
		iov[0].iov_base = base - SMB2_TRANSFORM_SIZE;
		iov[0].iov_len = (size_t)ret;
	}
	ret = tcp_send_msg(c->fd, iov, niov);
	if (ret)
		return cli_err(c, ret, "send to %s: %s", c->host, strerror(-ret));
	c->stats.requests += (uint64_t)ch->n;
	c->stats.bytes_sent += iov[0].iov_len + (niov > 1 ? iov[1].iov_len : 0);
	return 0;
}

/* Match the PDUs of one received message to the chain's requests. */
static int take_message(struct rdax_conn *c, struct cli_chain *ch,
			uint8_t *msg, size_t len, bool encrypted, int *pending)
{
	size_t off = 0, plen, next;
	struct smb2_hdr h;
	int i;

	do {
		if (smb2_chain_pdu(msg, len, off, &plen, &next) ||
		    smb2_hdr_decode(msg + off, plen, &h) ||
		    !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
			return cli_err(c, -EPROTO, "malformed response from %s", c->host);
		c->credits += h.credits;
		for (i = 0; i < ch->n; i++)
			if (!ch->rsp[i].done && ch->mid[i] == h.message_id)
				break;
		if (i == ch->n)
			goto next;	/* not ours (e.g. an oplock break) */
		if (h.status == STATUS_PENDING && h.flags & SMB2_FLAGS_ASYNC_COMMAND)
			goto next;	/* interim response: the final one follows */
		if (!encrypted && c->have_key && h.flags & SMB2_FLAGS_SIGNED &&
		    smb2_sign_verify(c->sign_alg, c->keys.signing, msg + off, plen))
			return cli_err(c, -EBADMSG, "bad signature on %s response from %s",
				       smb2_cmd_name(h.command), c->host);
		if (!encrypted && c->signing && c->have_key &&
		    !(h.flags & SMB2_FLAGS_SIGNED) && h.status != STATUS_PENDING)
			return cli_err(c, -EBADMSG, "unsigned %s response from %s on a signed session",
				       smb2_cmd_name(h.command), c->host);
		ch->rsp[i].hdr = h;
		ch->rsp[i].pdu = msg + off;
		ch->rsp[i].len = plen;
		ch->rsp[i].status = h.status;
		ch->rsp[i].done = true;
		(*pending)--;
next:
		off = next;
	} while (off);
	return 0;
}

int cli_chain_run(struct rdax_conn *c, struct cli_chain *ch)
{
	int pending = ch->n, k = 0, ret;
	uint64_t sid;
	long n;

	ret = chain_send(c, ch);
	if (ret)
		return ret;
	c->stats.round_trips++;
	while (pending) {
		uint8_t *msg;
		bool enc = false;

		if (k == CLI_MAX_CHAIN)
			return cli_err(c, -EPROTO, "too many response messages from %s", c->host);
		n = tcp_recv_msg(c->fd, &c->rx[k], &c->rx_cap[k], CLI_MAX_MSG,
				 c->cfg.timeout_ms);
		if (n < 0)
			return cli_err(c, (int)n, "%s: %s", c->host,
				       n == -ECONNRESET ? "connection closed by server" :
				       strerror((int)-n));
		c->stats.bytes_received += (uint64_t)n + 4;
		msg = c->rx[k++];
		if (n >= 4 && get_le32(msg) == SMB2_TRANSFORM_ID) {
			if (!c->have_key || smb2_transform_session_id(msg, (size_t)n, &sid) ||
			    sid != c->session_id)
				return cli_err(c, -EPROTO, "unexpected encrypted message from %s",
					       c->host);
			n = smb2_decrypt(c->cipher, c->keys.s2c, msg, (size_t)n,
					 msg + SMB2_TRANSFORM_SIZE);
			if (n < 0)
				return cli_err(c, -EBADMSG, "response from %s failed to decrypt",
					       c->host);
			msg += SMB2_TRANSFORM_SIZE;
			enc = true;
		} else if (c->encrypt && c->have_key) {
			return cli_err(c, -EPROTO, "unencrypted response from %s on an encrypted session",
				       c->host);
		}
		ret = take_message(c, ch, msg, (size_t)n, enc, &pending);
		if (ret)
			return ret;
	}
	return 0;
}

int cli_path16(const char *path, uint8_t *out, size_t cap)
{
	int n, i;

	while (*path == '/')
		path++;
	n = utf8_to_utf16le(path, out, cap);
	if (n < 0)
		return n;
	for (i = 0; i + 1 < n; i += 2)
		if (out[i] == '/' && out[i + 1] == 0)
			out[i] = '\\';
	/* no trailing separator */
	while (n >= 2 && out[n - 2] == '\\' && out[n - 1] == 0)
		n -= 2;
	return n;
}

/* ---- NEGOTIATE and SESSION_SETUP ---- */

static int negotiate(struct rdax_conn *c, uint8_t *hint, size_t *hint_len)
{
	static const uint16_t all[] = { SMB2_DIALECT_210, SMB2_DIALECT_300,
					SMB2_DIALECT_302, SMB2_DIALECT_311 };
	struct smb2_negotiate_req r = { 0 };
	struct smb2_negotiate_rsp rsp;
	struct cli_chain ch;
	struct iovec iov;
	struct wcur w;
	size_t i;
	int ret;

	r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED |
			  (c->cfg.sign_required ? SMB2_NEGOTIATE_SIGNING_REQUIRED : 0);
	r.capabilities = SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_ENCRYPTION;
	memcpy(r.client_guid, c->client_guid, 16);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] >= c->cfg.min_dialect && all[i] <= c->cfg.max_dialect)
			r.dialects[r.ndialects++] = all[i];
	crypto_random(r.ctx.salt, 32);
	r.ctx.ciphers[r.ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	r.ctx.ciphers[r.ctx.ncipher++] = SMB2_CIPHER_AES128_CCM;
	r.ctx.ciphers[r.ctx.ncipher++] = SMB2_CIPHER_AES256_GCM;
	r.ctx.ciphers[r.ctx.ncipher++] = SMB2_CIPHER_AES256_CCM;
	r.ctx.signs[r.ctx.nsign++] = SMB2_SIGNING_AES_GMAC;
	r.ctx.signs[r.ctx.nsign++] = SMB2_SIGNING_AES_CMAC;

	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_NEGOTIATE, 0, false, 0, 512, &w);
	if (ret)
		return ret;
	smb2_negotiate_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	memset(c->preauth, 0, sizeof(c->preauth));
	ch.preauth = c->preauth;
	ret = cli_chain_run(c, &ch);
	if (ret)
		return ret;
	if (ch.rsp[0].status)
		return cli_status(c, ch.rsp[0].status, "negotiate", NULL);
	if (smb2_negotiate_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp))
		return cli_err(c, -EPROTO, "malformed NEGOTIATE response from %s", c->host);
	for (i = 0; i < r.ndialects; i++)
		if (r.dialects[i] == rsp.dialect)
			break;
	if (i == r.ndialects)
		return cli_err(c, -EPROTO, "server chose dialect 0x%04x we did not offer",
			       rsp.dialect);
	c->dialect = rsp.dialect;
	c->server_secmode = rsp.security_mode;
	c->server_caps = rsp.capabilities;
	c->max_read = rsp.max_read < SMB2_MAX_IO_SIZE ? rsp.max_read : SMB2_MAX_IO_SIZE;
	c->max_write = rsp.max_write < SMB2_MAX_IO_SIZE ? rsp.max_write : SMB2_MAX_IO_SIZE;
	c->max_trans = rsp.max_transact;
	if (c->max_read < 65536 || c->max_write < 65536)
		return cli_err(c, -EPROTO, "server offers I/O sizes below 64 KiB");
	if (c->dialect == SMB2_DIALECT_311) {
		c->cipher = rsp.cipher;
		c->sign_alg = rsp.sign_ctx ? rsp.signing : SMB2_SIGN_AES_CMAC;
		iov.iov_base = (void *)ch.rsp[0].pdu;
		iov.iov_len = ch.rsp[0].len;
		crypto_preauth_update(c->preauth, &iov, 1);
	} else if (c->dialect >= SMB2_DIALECT_300) {
		c->cipher = rsp.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION ?
			    SMB2_CIPHER_AES128_CCM : 0;
		c->sign_alg = SMB2_SIGN_AES_CMAC;
	} else {
		c->sign_alg = SMB2_SIGN_HMAC_SHA256;
	}
	*hint_len = rsp.security.len < CLI_AUTH_MAX ? rsp.security.len : 0;
	memcpy(hint, rsp.security.p, *hint_len);
	return 0;
}

static int session_setup(struct rdax_conn *c, const uint8_t *hint, size_t hint_len)
{
	struct auth_client_cfg acfg = {
		.user = c->cfg.user,
		.domain = c->cfg.domain,
		.password = c->cfg.password,
		.anonymous = c->cfg.guest,
		.workstation = "RDAX",
		.spnego = true,
	};
	struct smb2_sess_setup_req r = { 0 };
	struct smb2_sess_setup_rsp rsp;
	struct auth_client *auth;
	uint8_t in[CLI_AUTH_MAX], out[CLI_AUTH_MAX], preauth[64];
	size_t in_len = hint_len, out_len;
	struct cli_chain ch;
	struct iovec iov;
	struct wcur w;
	uint8_t session_key[16];
	int ret, step;

	ret = auth_client_new(&auth, &acfg);
	if (ret)
		return cli_err(c, ret, "authentication setup failed");
	memcpy(in, hint, hint_len);
	memcpy(preauth, c->preauth, sizeof(preauth));
	for (;;) {
		step = auth_client_step(auth, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0) {
			ret = cli_err(c, step, "authentication to %s failed: %s",
				      c->host, strerror(-step));
			goto out_free;
		}
		r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED |
				  (c->cfg.sign_required ? SMB2_NEGOTIATE_SIGNING_REQUIRED : 0);
		r.security.p = out;
		r.security.len = (uint32_t)out_len;
		cli_chain_init(c, &ch);
		ret = cli_chain_add(c, &ch, SMB2_SESSION_SETUP, 0, false, 0,
				    32 + out_len, &w);
		if (ret)
			goto out_free;
		smb2_sess_setup_req_encode(&w, &r);
		cli_chain_end(c, &ch, &w);
		if (c->dialect == SMB2_DIALECT_311)
			ch.preauth = preauth;
		ret = cli_chain_run(c, &ch);
		if (ret)
			goto out_free;
		c->session_id = ch.rsp[0].hdr.session_id;
		if (ch.rsp[0].status == STATUS_MORE_PROCESSING_REQUIRED) {
			if (c->dialect == SMB2_DIALECT_311) {
				iov.iov_base = (void *)ch.rsp[0].pdu;
				iov.iov_len = ch.rsp[0].len;
				crypto_preauth_update(preauth, &iov, 1);
			}
			if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp) ||
			    rsp.security.len > sizeof(in)) {
				ret = cli_err(c, -EPROTO, "malformed SESSION_SETUP response");
				goto out_free;
			}
			memcpy(in, rsp.security.p, rsp.security.len);
			in_len = rsp.security.len;
			continue;
		}
		if (ch.rsp[0].status) {
			ret = cli_status(c, ch.rsp[0].status, "session setup for user",
					 c->cfg.guest ? "(guest)" : c->cfg.user);
			goto out_free;
		}
		break;
	}
	if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp)) {
		ret = cli_err(c, -EPROTO, "malformed SESSION_SETUP response");
		goto out_free;
	}
	ret = auth_client_finish(auth, rsp.security.p, rsp.security.len);
	if (ret) {
		ret = cli_err(c, ret, "server %s failed mutual authentication", c->host);
		goto out_free;
	}
	c->guest = rsp.session_flags & (SMB2_SESSION_FLAG_IS_GUEST |
					SMB2_SESSION_FLAG_IS_NULL);
	if (!c->guest && !auth_client_session_key(auth, session_key)) {
		ret = smb3_derive_keys(c->dialect, session_key,
				       c->dialect == SMB2_DIALECT_311 ? preauth : NULL,
				       c->cipher, &c->keys);
		explicit_bzero(session_key, sizeof(session_key));
		if (ret) {
			ret = cli_err(c, ret, "key derivation failed");
			goto out_free;
		}
		c->have_key = true;
		c->signing = c->cfg.sign_required ||
			     (c->server_secmode & SMB2_NEGOTIATE_SIGNING_REQUIRED);
		/* the final response of an authenticated 3.1.1 session is signed */
		if ((ch.rsp[0].hdr.flags & SMB2_FLAGS_SIGNED || c->dialect == SMB2_DIALECT_311) &&
		    smb2_sign_verify(c->sign_alg, c->keys.signing, ch.rsp[0].pdu,
				     ch.rsp[0].len)) {
			ret = cli_err(c, -EBADMSG, "SESSION_SETUP response from %s has a bad signature",
				      c->host);
			goto out_free;
		}
		if (c->cfg.encrypt_required ||
		    rsp.session_flags & SMB2_SESSION_FLAG_ENCRYPT_DATA) {
			if (!c->cipher) {
				ret = cli_err(c, -EPROTONOSUPPORT,
					      "%s cannot encrypt (no common cipher)", c->host);
				goto out_free;
			}
			c->encrypt = true;
		}
	} else if (c->cfg.sign_required || c->cfg.encrypt_required) {
		ret = cli_err(c, -EACCES, "a guest session on %s cannot be signed or encrypted",
			      c->host);
		goto out_free;
	}
	ret = 0;
out_free:
	auth_client_delete(&auth);
	return ret;
}

int rdax_connect(struct rdax_conn **out, const char *host, unsigned int port,
		 const struct rdax_cfg *cfg)
{
	uint8_t hint[CLI_AUTH_MAX];
	size_t hint_len = 0;
	struct rdax_conn *c;
	int ret;

	ret = crypto_init();
	if (ret)
		return ret;
	if (cfg->transport != RDAX_TRANSPORT_TCP)
		return -EPROTONOSUPPORT;
	if (!cfg->guest && (!cfg->user[0] || !cfg->have_password))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->fd = -1;
	c->port = port ? port : 445;
	c->credits = 1;
	snprintf(c->host, sizeof(c->host), "%s", host);
	crypto_random(c->client_guid, sizeof(c->client_guid));
	ret = tcp_connect(host, c->port, cfg->timeout_ms);
	if (ret < 0) {
		ret = cli_err(c, ret, "connect to %s:%u: %s", host, c->port, strerror(-ret));
		goto out_fail;
	}
	c->fd = ret;
	ret = negotiate(c, hint, &hint_len);
	if (ret)
		goto out_fail;
	ret = session_setup(c, hint, hint_len);
	if (ret)
		goto out_fail;
	*out = c;
	return 0;
out_fail:
	/* keep the message for the caller through a static buffer */
	snprintf(cli_last_connect_error, sizeof(cli_last_connect_error), "%s",
		 c->errmsg[0] ? c->errmsg : strerror(-ret));
	cli_last_connect_status = c->last_status;
	rdax_disconnect(&c);
	return ret;
}

void rdax_disconnect(struct rdax_conn **cp)
{
	struct rdax_conn *c = *cp;
	struct cli_chain ch;
	struct wcur w;
	int i;

	if (!c)
		return;
	if (c->fd >= 0 && c->session_id) {
		cli_chain_init(c, &ch);
		if (!cli_chain_add(c, &ch, SMB2_LOGOFF, 0, false, 0, 8, &w)) {
			smb2_simple_encode(&w);
			cli_chain_end(c, &ch, &w);
			cli_chain_run(c, &ch);
		}
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c->tx);
	for (i = 0; i < CLI_MAX_CHAIN; i++)
		free(c->rx[i]);
	explicit_bzero(&c->keys, sizeof(c->keys));
	explicit_bzero(&c->cfg, sizeof(c->cfg));
	free(c);
	*cp = NULL;
}
