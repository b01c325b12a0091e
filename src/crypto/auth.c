// SPDX-License-Identifier: MIT
/* NTLMv2 authentication over SPNEGO or raw NTLMSSP (server and client). */
#include "crypto/auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "crypto/crypto.h"
#include "crypto/ntlm.h"
#include "proto/ntlmssp.h"
#include "proto/spnego.h"
#include "util/bytes.h"
#include "util/utf16.h"

/* Our VERSION field: 10.0, NTLMSSP revision 15. */
static const struct ntlmssp_version our_version = {
	.major = 10, .minor = 0, .build = 0,
	.revision = NTLMSSP_REVISION_W2K3,
};

/* Flags a modern client asks for ([MS-NLMP] 2.2.2.5). */
#define CLIENT_FLAGS                                                        \
	(NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET |               \
	 NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_SEAL |                  \
	 NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |           \
	 NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |                       \
	 NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 |                \
	 NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_56)

/* Flags the server echoes when the client asked for them. */
#define ECHO_FLAGS                                                          \
	(NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |                  \
	 NTLMSSP_NEGOTIATE_SEAL | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |           \
	 NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |                       \
	 NTLMSSP_NEGOTIATE_VERSION | NTLMSSP_NEGOTIATE_128 |                \
	 NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_56)

/* Size of the NTLMv2_CLIENT_CHALLENGE header before its AV pairs. */
#define V2_BLOB_HDR 28

/* Current time as a FILETIME (100 ns since 1601). */
static uint64_t filetime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec + 11644473600ull) * 10000000ull +
	       (uint64_t)ts.tv_nsec / 100;
}

static uint8_t *memdup(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (d && n)
		memcpy(d, p, n);
	return d;
}

/* Copy a finished token to out; -ENOSPC if it does not fit. */
static int emit(const uint8_t *tok, size_t n, uint8_t *out, size_t cap,
		size_t *outlen)
{
	if (n > cap)
		return -ENOSPC;
	if (n)
		memcpy(out, tok, n);
	*outlen = n;
	return 0;
}

/* UTF-8 name -> malloc'd UTF-16LE, optionally upper/lower-cased ASCII. */
static int name16(const char *s, int fold, uint8_t **out, size_t *len)
{
	char tmp[AUTH_NAME_MAX + 1];
	size_t i, n = strlen(s);
	int rc;

	if (n > AUTH_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i <= n; i++) {
		char c = s[i];

		if (fold > 0 && c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		else if (fold < 0 && c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		tmp[i] = c;
	}
	rc = utf8_to_utf16le(tmp, NULL, 0);
	if (rc < 0)
		return rc;
	*len = (size_t)rc;
	*out = malloc(*len + 1);
	if (!*out)
		return -ENOMEM;
	utf8_to_utf16le(tmp, *out, *len + 1);
	return 0;
}

/* A name received in an AUTHENTICATE message, as UTF-8. */
static int wire_name(const struct ntlmssp_buf *b, bool unicode, char *out,
		     size_t cap)
{
	size_t i, o = 0;
	int rc;

	if (!b->len) {
		out[0] = 0;
		return 0;
	}
	if (unicode) {
		rc = utf16le_to_utf8(b->p, b->len, out, cap);
		return rc < 0 ? rc : 0;
	}
	/* OEM: take it as Latin-1 */
	for (i = 0; i < b->len; i++) {
		uint8_t c = b->p[i];

		if (!c)
			return -EILSEQ;
		if (o + (c < 0x80 ? 1 : 2) >= cap)
			return -E2BIG;
		if (c < 0x80) {
			out[o++] = (char)c;
		} else {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[o] = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                              */

enum srv_state {
	SRV_START,
	SRV_WAIT_NEG,
	SRV_WAIT_AUTH,
	SRV_DONE,
	SRV_FAILED,
};

struct auth_server {
	enum srv_state state;
	bool spnego;
	bool downgraded;
	int (*lookup)(void *arg, const char *user, uint8_t nt_hash[16]);
	void *lookup_arg;
	char netbios[AUTH_NAME_MAX + 1];
	/* UTF-16LE names for the TargetInfo */
	uint8_t *nb_name, *nb_domain, *dns_name, *dns_domain;
	size_t nb_name_len, nb_domain_len, dns_name_len, dns_domain_len;
	uint8_t *mech_types;
	size_t mech_types_len;
	uint8_t *neg_msg;
	size_t neg_len;
	uint8_t *chal_msg;
	size_t chal_len;
	uint32_t chal_flags;
	uint32_t flags; /* negotiated, from AUTHENTICATE */
	struct auth_result res;
};

int auth_server_new(struct auth_server **out, const struct auth_server_cfg *cfg)
{
	const char *dom = cfg->domain_name ? cfg->domain_name : "WORKGROUP";
	struct auth_server *a;
	int rc;

	*out = NULL;
	if (!cfg->netbios_name || !cfg->netbios_name[0] || !cfg->lookup)
		return -EINVAL;
	if (strlen(cfg->netbios_name) > AUTH_NAME_MAX)
		return -ENAMETOOLONG;
	rc = crypto_init();
	if (rc)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->lookup = cfg->lookup;
	a->lookup_arg = cfg->lookup_arg;
	strcpy(a->netbios, cfg->netbios_name);
	rc = name16(cfg->netbios_name, 1, &a->nb_name, &a->nb_name_len);
	if (!rc)
		rc = name16(dom, 1, &a->nb_domain, &a->nb_domain_len);
	if (!rc)
		rc = name16(cfg->dns_name ? cfg->dns_name : cfg->netbios_name,
			    cfg->dns_name ? 0 : -1, &a->dns_name,
			    &a->dns_name_len);
	if (!rc)
		rc = name16(cfg->dns_domain ? cfg->dns_domain : dom,
			    cfg->dns_domain ? 0 : -1, &a->dns_domain,
			    &a->dns_domain_len);
	if (rc) {
		auth_server_delete(&a);
		return rc;
	}
	*out = a;
	return 0;
}

void auth_server_delete(struct auth_server **ap)
{
	struct auth_server *a = ap ? *ap : NULL;

	if (!a)
		return;
	free(a->nb_name);
	free(a->nb_domain);
	free(a->dns_name);
	free(a->dns_domain);
	free(a->mech_types);
	free(a->neg_msg);
	free(a->chal_msg);
	OPENSSL_cleanse(a, sizeof(*a));
	free(a);
	*ap = NULL;
}

static uint32_t server_flags(uint32_t cf)
{
	uint32_t f = NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_TARGET_INFO |
		     NTLMSSP_TARGET_TYPE_SERVER | (cf & ECHO_FLAGS);

	if ((cf & NTLMSSP_NEGOTIATE_OEM) && !(cf & NTLMSSP_NEGOTIATE_UNICODE))
		f |= NTLMSSP_NEGOTIATE_OEM;
	else
		f |= NTLMSSP_NEGOTIATE_UNICODE;
	return f;
}

/* NEGOTIATE in -> CHALLENGE built and kept in a->chal_msg. */
static int srv_negotiate(struct auth_server *a, const uint8_t *msg, size_t len)
{
	struct ntlmssp_negotiate neg;
	struct ntlmssp_challenge ch;
	uint8_t ts[8], *ti, *buf;
	size_t ti_cap, cap;
	struct wcur w;
	int rc;

	if (ntlmssp_decode_negotiate(msg, len, &neg))
		return -EBADMSG;
	a->neg_msg = memdup(msg, len);
	if (!a->neg_msg)
		return -ENOMEM;
	a->neg_len = len;

	memset(&ch, 0, sizeof(ch));
	ch.flags = server_flags(neg.flags);
	rc = crypto_random(ch.challenge, 8);
	if (rc)
		return rc;
	ch.has_version = true;
	ch.version = our_version;
	if (ch.flags & NTLMSSP_REQUEST_TARGET) {
		if (ch.flags & NTLMSSP_NEGOTIATE_UNICODE) {
			ch.target_name.p = a->nb_name;
			ch.target_name.len = (uint16_t)a->nb_name_len;
		} else {
			ch.target_name.p = (const uint8_t *)a->netbios;
			ch.target_name.len = (uint16_t)strlen(a->netbios);
		}
	}

	ti_cap = 4 * 4 + a->nb_domain_len + a->nb_name_len +
		 a->dns_domain_len + a->dns_name_len + 12 + 4;
	ti = malloc(ti_cap);
	if (!ti)
		return -ENOMEM;
	wcur_init(&w, ti, ti_cap);
	ntlmssp_av_put(&w, MSV_AV_NB_DOMAIN_NAME, a->nb_domain,
		       a->nb_domain_len);
	ntlmssp_av_put(&w, MSV_AV_NB_COMPUTER_NAME, a->nb_name,
		       a->nb_name_len);
	ntlmssp_av_put(&w, MSV_AV_DNS_DOMAIN_NAME, a->dns_domain,
		       a->dns_domain_len);
	ntlmssp_av_put(&w, MSV_AV_DNS_COMPUTER_NAME, a->dns_name,
		       a->dns_name_len);
	put_le64(ts, filetime_now());
	ntlmssp_av_put(&w, MSV_AV_TIMESTAMP, ts, 8);
	ntlmssp_av_put_eol(&w);
	ch.target_info.p = ti;
	ch.target_info.len = (uint16_t)w.off;

	cap = NTLMSSP_CHALLENGE_HDR + NTLMSSP_VERSION_LEN +
	      ch.target_name.len + ch.target_info.len;
	buf = malloc(cap);
	if (!buf) {
		rc = -ENOMEM;
		goto out_free_ti;
	}
	wcur_init(&w, buf, cap);
	rc = ntlmssp_encode_challenge(&w, &ch);
	if (rc) {
		free(buf);
		goto out_free_ti;
	}
	a->chal_msg = buf;
	a->chal_len = w.off;
	a->chal_flags = ch.flags;
out_free_ti:
	free(ti);
	return rc;
}

/* Check NTProofStr for one domain spelling; 0 and ntowf on a match. */
static int try_v2(const uint8_t nt_hash[16], const struct ntlmssp_auth *m,
		  const uint8_t *dom, size_t dlen, const uint8_t chal[8],
		  uint8_t ntowf[16])
{
	uint8_t proof[16];
	int rc;

	rc = ntlm_ntowfv2_utf16(nt_hash, m->user.p, m->user.len, dom, dlen,
				ntowf);
	if (rc)
		return rc;
	rc = ntlm_v2_proof(ntowf, chal, m->nt.p + 16, m->nt.len - 16u, proof);
	if (rc)
		return rc;
	rc = CRYPTO_memcmp(proof, m->nt.p, 16) ? -EACCES : 0;
	OPENSSL_cleanse(proof, sizeof(proof));
	return rc;
}

/*
 * NTLMv2 with the domain as sent, then upper-cased, then empty (clients
 * differ in what they hash).
 */
static int verify_v2(struct auth_server *a, const struct ntlmssp_auth *m,
		     const uint8_t nt_hash[16], uint8_t ntowf[16])
{
	const uint8_t *chal = a->chal_msg + 24;
	uint8_t up[2 * (AUTH_NAME_MAX + 1)];
	int rc;

	rc = try_v2(nt_hash, m, m->domain.p, m->domain.len, chal, ntowf);
	if (rc != -EACCES || !m->domain.len)
		return rc;
	if (m->domain.len <= sizeof(up)) {
		memcpy(up, m->domain.p, m->domain.len);
		utf16le_upper(up, m->domain.len);
		if (memcmp(up, m->domain.p, m->domain.len)) {
			rc = try_v2(nt_hash, m, up, m->domain.len, chal, ntowf);
			if (rc != -EACCES)
				return rc;
		}
	}
	return try_v2(nt_hash, m, NULL, 0, chal, ntowf);
}

/* AUTHENTICATE in -> result (0) or -EACCES/-EBADMSG. */
static int srv_auth(struct auth_server *a, const uint8_t *msg, size_t len)
{
	struct ntlmssp_auth m;
	struct ntlmssp_av av;
	uint8_t nt_hash[16], ntowf[16], sbk[16], mic[16];
	bool unicode, unknown;
	int rc;

	if (ntlmssp_decode_auth(msg, len, &m))
		return -EBADMSG;
	a->flags = m.flags ? (m.flags & a->chal_flags) : a->chal_flags;
	unicode = a->chal_flags & NTLMSSP_NEGOTIATE_UNICODE;
	if (wire_name(&m.user, unicode, a->res.user, sizeof(a->res.user)) ||
	    wire_name(&m.domain, unicode, a->res.domain,
		      sizeof(a->res.domain))) {
		a->res.user[0] = 0;
		a->res.domain[0] = 0;
		return -EACCES;
	}

	/* [MS-NLMP] 3.2.5.1.2 anonymous: no user, no NT, LM empty or Z(1) */
	if (!m.user.len && !m.nt.len &&
	    (!m.lm.len || (m.lm.len == 1 && !m.lm.p[0]))) {
		a->res.anonymous = true;
		a->res.have_key = false;
		return 0;
	}
	/* NTLMv1 (24 bytes) and anything too short for v2 */
	if (!m.user.len || m.nt.len < 16 + V2_BLOB_HDR + 4)
		return -EACCES;

	if (!unicode) {
		/* hash the UTF-16 form of an OEM (Latin-1) user name */
		static uint8_t none;
		uint8_t u16[2 * (AUTH_NAME_MAX + 1)];
		int n = utf8_to_utf16le(a->res.user, u16, sizeof(u16));

		if (n < 0)
			return -EACCES;
		m.user.p = memdup(u16, (size_t)n);
		if (!m.user.p)
			return -ENOMEM;
		m.user.len = (uint16_t)n;
		/* domain: same treatment */
		n = utf8_to_utf16le(a->res.domain, u16, sizeof(u16));
		if (n < 0) {
			free((void *)m.user.p);
			return -EACCES;
		}
		m.domain.p = n ? memdup(u16, (size_t)n) : &none;
		m.domain.len = (uint16_t)n;
		if (!m.domain.p) {
			free((void *)m.user.p);
			return -ENOMEM;
		}
	}

	rc = a->lookup(a->lookup_arg, a->res.user, nt_hash);
	if (rc && rc != -ENOENT)
		goto out_wipe;
	/* an unknown user costs the same work as a wrong password */
	unknown = rc == -ENOENT;
	if (unknown)
		memset(nt_hash, 0, sizeof(nt_hash));
	rc = verify_v2(a, &m, nt_hash, ntowf);
	if (!rc && unknown)
		rc = -EACCES;
	if (rc)
		goto out_wipe;
	rc = ntlm_v2_session_base_key(ntowf, m.nt.p, sbk);
	if (rc)
		goto out_wipe;
	if (a->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		if (m.session_key.len != 16) {
			rc = -EACCES;
			goto out_wipe;
		}
		rc = crypto_rc4(sbk, 16, m.session_key.p, a->res.session_key,
				16);
	} else {
		memcpy(a->res.session_key, sbk, 16);
	}
	if (rc)
		goto out_wipe;

	/* MIC, when the client says it sent one (MsvAvFlags bit 0x2) */
	rc = ntlmssp_av_find(m.nt.p + 16 + V2_BLOB_HDR,
			     m.nt.len - 16u - V2_BLOB_HDR, MSV_AV_FLAGS, &av);
	if (rc == -EBADMSG) {
		rc = -EACCES;
		goto out_wipe;
	}
	if (!rc && av.len == 4 && (get_le32(av.val) & MSV_AV_FLAG_MIC_PRESENT)) {
		if (!m.has_mic) {
			rc = -EACCES;
			goto out_wipe;
		}
		rc = ntlm_mic(a->res.session_key, a->neg_msg, a->neg_len,
			      a->chal_msg, a->chal_len, msg, len, mic);
		if (rc)
			goto out_wipe;
		if (CRYPTO_memcmp(mic, m.mic, 16)) {
			rc = -EACCES;
			goto out_wipe;
		}
	}
	a->res.have_key = true;
	rc = 0;
out_wipe:
	OPENSSL_cleanse(nt_hash, sizeof(nt_hash));
	OPENSSL_cleanse(ntowf, sizeof(ntowf));
	OPENSSL_cleanse(sbk, sizeof(sbk));
	if (rc)
		OPENSSL_cleanse(a->res.session_key, 16);
	if (!unicode) {
		free((void *)m.user.p);
		if (m.domain.len)
			free((void *)m.domain.p);
	}
	return rc;
}

static int srv_resp(int state, const uint8_t *token, size_t tlen,
		    const uint8_t *mic, size_t miclen, bool mech,
		    uint8_t *out, size_t cap, size_t *outlen)
{
	struct spnego_resp r = {
		.neg_state = state,
		.token = token,
		.token_len = tlen,
		.mic = mic,
		.mic_len = miclen,
	};
	struct wcur w;
	int rc;

	if (mech) {
		r.mech = spnego_oid_ntlmssp.der;
		r.mech_len = spnego_oid_ntlmssp.len;
	}
	wcur_init(&w, out, cap);
	rc = spnego_encode_resp(&w, &r);
	if (!rc)
		*outlen = w.off;
	return rc;
}

static int srv_start(struct auth_server *a, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t cap, size_t *outlen)
{
	struct spnego_token t;
	int idx, rc;

	if (ntlmssp_is_ntlmssp(in, inlen)) {
		/* raw NTLMSSP (cifs.ko) */
		rc = srv_negotiate(a, in, inlen);
		if (rc)
			return rc;
		rc = emit(a->chal_msg, a->chal_len, out, cap, outlen);
		a->state = SRV_WAIT_AUTH;
		return rc ? rc : 1;
	}
	a->spnego = true;
	rc = spnego_decode(in, inlen, &t);
	if (rc == -EPROTONOSUPPORT)
		return -EINVAL;
	if (rc || t.type != SPNEGO_TOKEN_INIT)
		return -EBADMSG;
	idx = spnego_mech_index(&t.init, &spnego_oid_ntlmssp);
	if (idx < 0)
		return -EINVAL;
	a->mech_types = memdup(t.init.mech_types, t.init.mech_types_len);
	if (!a->mech_types)
		return -ENOMEM;
	a->mech_types_len = t.init.mech_types_len;

	if (idx > 0 || !t.init.token) {
		/* no optimistic NTLMSSP token: ask for it (RFC 4178 5) */
		a->downgraded = idx > 0;
		a->state = SRV_WAIT_NEG;
		rc = srv_resp(idx > 0 ? SPNEGO_REQUEST_MIC :
			      SPNEGO_ACCEPT_INCOMPLETE, NULL, 0, NULL, 0, true,
			      out, cap, outlen);
		return rc ? rc : 1;
	}
	rc = srv_negotiate(a, t.init.token, t.init.token_len);
	if (rc)
		return rc;
	a->state = SRV_WAIT_AUTH;
	rc = srv_resp(SPNEGO_ACCEPT_INCOMPLETE, a->chal_msg, a->chal_len, NULL,
		      0, true, out, cap, outlen);
	return rc ? rc : 1;
}

static int srv_wait_neg(struct auth_server *a, const uint8_t *in,
			size_t inlen, uint8_t *out, size_t cap,
			size_t *outlen)
{
	struct spnego_token t;
	int rc;

	if (spnego_decode(in, inlen, &t) || t.type != SPNEGO_TOKEN_RESP ||
	    !t.resp.token)
		return -EBADMSG;
	rc = srv_negotiate(a, t.resp.token, t.resp.token_len);
	if (rc)
		return rc;
	a->state = SRV_WAIT_AUTH;
	rc = srv_resp(SPNEGO_ACCEPT_INCOMPLETE, a->chal_msg, a->chal_len, NULL,
		      0, true, out, cap, outlen);
	return rc ? rc : 1;
}

/*
 * Final SPNEGO leg: verify the client's mechListMIC when present (and
 * answer with ours, which Samba and Windows clients then require).
 */
static int srv_final(struct auth_server *a, const struct spnego_resp *in,
		     uint8_t *out, size_t cap, size_t *outlen)
{
	struct ntlm_sec sec;
	uint8_t mic[16];
	int rc;

	if (!in->mic || !a->res.have_key)
		return srv_resp(SPNEGO_ACCEPT_COMPLETED, NULL, 0, NULL, 0,
				false, out, cap, outlen);
	if (in->mic_len != 16)
		return -EACCES;
	rc = ntlm_sec_init(&sec, a->res.session_key, a->flags, false);
	if (rc)
		return rc == -EOPNOTSUPP ? -EACCES : rc;
	rc = ntlm_sec_verify(&sec, a->mech_types, a->mech_types_len, in->mic);
	if (rc) {
		rc = -EACCES;
		goto out_free_sec;
	}
	rc = ntlm_sec_sign(&sec, a->mech_types, a->mech_types_len, mic);
	if (!rc)
		rc = srv_resp(SPNEGO_ACCEPT_COMPLETED, NULL, 0, mic, 16, false,
			      out, cap, outlen);
out_free_sec:
	ntlm_sec_free(&sec);
	return rc;
}

int auth_server_step(struct auth_server *a, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t outcap, size_t *outlen)
{
	struct spnego_token t;
	int rc;

	*outlen = 0;
	if (!in && inlen)
		return -EINVAL;
	switch (a->state) {
	case SRV_START:
		rc = srv_start(a, in, inlen, out, outcap, outlen);
		break;
	case SRV_WAIT_NEG:
		rc = srv_wait_neg(a, in, inlen, out, outcap, outlen);
		break;
	case SRV_WAIT_AUTH:
		if (!a->spnego) {
			rc = srv_auth(a, in, inlen);
			break;
		}
		if (spnego_decode(in, inlen, &t) || t.type != SPNEGO_TOKEN_RESP ||
		    !t.resp.token) {
			rc = -EBADMSG;
			break;
		}
		rc = srv_auth(a, t.resp.token, t.resp.token_len);
		if (!rc)
			rc = srv_final(a, &t.resp, out, outcap, outlen);
		break;
	default:
		return -EINVAL;
	}
	if (rc < 0) {
		/* keep the names for logging, never a key */
		a->state = SRV_FAILED;
		*outlen = 0;
		a->res.have_key = false;
		OPENSSL_cleanse(a->res.session_key, 16);
	} else if (rc == 0) {
		a->state = SRV_DONE;
	}
	return rc;
}

int auth_server_result(const struct auth_server *a, struct auth_result *r)
{
	*r = a->res;
	if (a->state == SRV_DONE)
		return 0;
	r->have_key = false;
	memset(r->session_key, 0, 16);
	return -EAGAIN;
}

int auth_negotiate_hint(uint8_t *out, size_t cap, size_t *outlen)
{
	struct wcur w;
	int rc;

	wcur_init(&w, out, cap);
	rc = spnego_encode_init(&w, &spnego_oid_ntlmssp, 1, NULL, 0, NULL, 0,
				SPNEGO_HINT_NAME);
	if (!rc)
		*outlen = w.off;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */

enum cli_state {
	CLI_START,
	CLI_WAIT_CHAL,
	CLI_DONE,
	CLI_FINISHED,
	CLI_FAILED,
};

struct auth_client {
	enum cli_state state;
	bool spnego;
	bool anonymous;
	char *user;
	char *domain;
	char *workstation;
	uint8_t nt_hash[16];
	uint8_t *neg_msg;
	size_t neg_len;
	uint8_t mech_types[32];
	size_t mech_types_len;
	uint32_t flags;
	bool have_key;
	uint8_t session_key[16];
	bool sent_mic;
	bool sec_ready;
	struct ntlm_sec sec;
};

static char *strdup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int auth_client_new(struct auth_client **out, const struct auth_client_cfg *cfg)
{
	struct auth_client *c;
	int rc;

	*out = NULL;
	if (!cfg->anonymous && (!cfg->user || !cfg->user[0] || !cfg->password))
		return -EINVAL;
	if ((cfg->user && strlen(cfg->user) > AUTH_NAME_MAX) ||
	    (cfg->domain && strlen(cfg->domain) > AUTH_NAME_MAX) ||
	    (cfg->workstation && strlen(cfg->workstation) > AUTH_NAME_MAX))
		return -ENAMETOOLONG;
	rc = crypto_init();
	if (rc)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->spnego = cfg->spnego;
	c->anonymous = cfg->anonymous;
	c->user = strdup_or_empty(cfg->anonymous ? NULL : cfg->user);
	c->domain = cfg->domain ? strdup(cfg->domain) : NULL;
	c->workstation = strdup_or_empty(cfg->workstation);
	if (!c->user || (cfg->domain && !c->domain) || !c->workstation) {
		rc = -ENOMEM;
		goto out_delete;
	}
	if (!c->anonymous) {
		rc = ntlm_nt_hash(cfg->password, c->nt_hash);
		if (rc)
			goto out_delete;
	}
	*out = c;
	return 0;
out_delete:
	auth_client_delete(&c);
	return rc;
}

void auth_client_delete(struct auth_client **cp)
{
	struct auth_client *c = cp ? *cp : NULL;

	if (!c)
		return;
	if (c->sec_ready)
		ntlm_sec_free(&c->sec);
	free(c->user);
	free(c->domain);
	free(c->workstation);
	free(c->neg_msg);
	OPENSSL_cleanse(c, sizeof(*c));
	free(c);
	*cp = NULL;
}

static int cli_start(struct auth_client *c, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t cap, size_t *outlen)
{
	struct ntlmssp_negotiate neg = {
		.flags = CLIENT_FLAGS,
		.has_version = true,
		.version = our_version,
	};
	uint8_t buf[NTLMSSP_NEGOTIATE_HDR + NTLMSSP_VERSION_LEN];
	struct spnego_token t;
	struct wcur w;
	int rc;

	if (c->spnego && inlen) {
		/* the server's NegTokenInit2 hint must offer NTLMSSP */
		rc = spnego_decode(in, inlen, &t);
		if (rc == -EPROTONOSUPPORT)
			return rc;
		if (rc || t.type != SPNEGO_TOKEN_INIT)
			return -EBADMSG;
		if (spnego_mech_index(&t.init, &spnego_oid_ntlmssp) < 0)
			return -EPROTONOSUPPORT;
	}
	wcur_init(&w, buf, sizeof(buf));
	rc = ntlmssp_encode_negotiate(&w, &neg);
	if (rc)
		return rc;
	c->neg_msg = memdup(buf, w.off);
	if (!c->neg_msg)
		return -ENOMEM;
	c->neg_len = w.off;
	if (!c->spnego)
		return emit(buf, w.off, out, cap, outlen);

	wcur_init(&w, c->mech_types, sizeof(c->mech_types));
	rc = spnego_encode_mech_types(&w, &spnego_oid_ntlmssp, 1);
	if (rc)
		return rc;
	c->mech_types_len = w.off;
	wcur_init(&w, out, cap);
	rc = spnego_encode_init(&w, &spnego_oid_ntlmssp, 1, c->neg_msg,
				c->neg_len, NULL, 0, NULL);
	if (!rc)
		*outlen = w.off;
	return rc;
}

/*
 * The AV pairs the client returns: the server's TargetInfo without EOL
 * (and without MsvAvFlags), plus MsvAvFlags with MIC_PRESENT when a MIC
 * is sent, then EOL. *ts gets the server's timestamp if it sent one.
 */
static int client_av(const struct ntlmssp_buf *ti, bool *have_ts,
		     uint64_t *ts, uint8_t **out, size_t *outlen)
{
	struct ntlmssp_av av;
	uint32_t avflags = 0;
	struct rcur r;
	struct wcur w;
	size_t cap;
	int rc;

	*have_ts = false;
	if (ti->len && ntlmssp_av_validate(ti->p, ti->len, NULL))
		return -EBADMSG;
	if (ti->len &&
	    !ntlmssp_av_find(ti->p, ti->len, MSV_AV_TIMESTAMP, &av) &&
	    av.len == 8) {
		*have_ts = true;
		*ts = get_le64(av.val);
	}
	cap = (size_t)ti->len + 8 + 4;
	*out = malloc(cap);
	if (!*out)
		return -ENOMEM;
	wcur_init(&w, *out, cap);
	rcur_init(&r, ti->p, ti->len);
	while (ti->len && (rc = ntlmssp_av_next(&r, &av)) > 0) {
		if (av.id == MSV_AV_FLAGS) {
			if (av.len == 4)
				avflags = get_le32(av.val);
			continue;
		}
		ntlmssp_av_put(&w, av.id, av.val, av.len);
	}
	if (*have_ts) {
		uint8_t f[4];

		put_le32(f, avflags | MSV_AV_FLAG_MIC_PRESENT);
		ntlmssp_av_put(&w, MSV_AV_FLAGS, f, 4);
	}
	ntlmssp_av_put_eol(&w);
	if (w.err) {
		free(*out);
		*out = NULL;
		return -EBADMSG;
	}
	*outlen = w.off;
	return 0;
}

/* Domain default: the server's NetBIOS domain from its TargetInfo. */
static int client_domain(struct auth_client *c, const struct ntlmssp_buf *ti,
			 uint8_t **d16, size_t *dlen)
{
	struct ntlmssp_av av;

	if (c->domain)
		return name16(c->domain, 0, d16, dlen);
	if (ti->len &&
	    !ntlmssp_av_find(ti->p, ti->len, MSV_AV_NB_DOMAIN_NAME, &av)) {
		*d16 = memdup(av.val, av.len);
		*dlen = av.len;
		return *d16 ? 0 : -ENOMEM;
	}
	return name16("", 0, d16, dlen);
}

struct cli_auth_parts {
	uint8_t *user16, *dom16, *ws16, *av, *nt;
	size_t user_len, dom_len, ws_len, av_len, nt_len;
	uint8_t lm[24];
	uint8_t enc_key[16];
};

static void parts_free(struct cli_auth_parts *p)
{
	free(p->user16);
	free(p->dom16);
	free(p->ws16);
	free(p->av);
	if (p->nt)
		OPENSSL_cleanse(p->nt, p->nt_len);
	free(p->nt);
	OPENSSL_cleanse(p, sizeof(*p));
}

/* Compute the NTLMv2 responses and keys for a CHALLENGE. */
static int cli_responses(struct auth_client *c,
			 const struct ntlmssp_challenge *ch,
			 struct cli_auth_parts *p, bool *mic)
{
	uint8_t ntowf[16], cchal[8], sbk[16];
	uint64_t ts;
	bool have_ts;
	int rc;

	rc = client_av(&ch->target_info, &have_ts, &ts, &p->av, &p->av_len);
	if (rc)
		return rc;
	*mic = have_ts;
	if (!have_ts)
		ts = filetime_now();
	rc = client_domain(c, &ch->target_info, &p->dom16, &p->dom_len);
	if (rc)
		return rc;
	rc = crypto_random(cchal, 8);
	if (rc)
		return rc;

	/* temp = 0x0101, Z(6), time, client challenge, Z(4), AV pairs, Z(4) */
	p->nt_len = 16 + V2_BLOB_HDR + p->av_len + 4;
	p->nt = calloc(1, p->nt_len);
	if (!p->nt)
		return -ENOMEM;
	p->nt[16] = 1;
	p->nt[17] = 1;
	put_le64(p->nt + 24, ts);
	memcpy(p->nt + 32, cchal, 8);
	memcpy(p->nt + 16 + V2_BLOB_HDR, p->av, p->av_len);

	rc = ntlm_ntowfv2_utf16(c->nt_hash, p->user16, p->user_len, p->dom16,
				p->dom_len, ntowf);
	if (!rc)
		rc = ntlm_v2_proof(ntowf, ch->challenge, p->nt + 16,
				   p->nt_len - 16, p->nt);
	if (!rc)
		rc = ntlm_v2_session_base_key(ntowf, p->nt, sbk);
	if (rc)
		goto out_wipe;
	/* with a server timestamp the LM response is Z(24) (3.1.5.1.2) */
	if (have_ts)
		memset(p->lm, 0, 24);
	else
		rc = ntlm_lmv2_response(ntowf, ch->challenge, cchal, p->lm);
	if (rc)
		goto out_wipe;
	if (c->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		rc = crypto_random(c->session_key, 16);
		if (!rc)
			rc = crypto_rc4(sbk, 16, c->session_key, p->enc_key,
					16);
	} else {
		memcpy(c->session_key, sbk, 16);
	}
out_wipe:
	OPENSSL_cleanse(ntowf, sizeof(ntowf));
	OPENSSL_cleanse(sbk, sizeof(sbk));
	return rc;
}

static int cli_challenge(struct auth_client *c, const uint8_t *tok,
			 size_t toklen, uint8_t *out, size_t cap,
			 size_t *outlen)
{
	struct cli_auth_parts p = { 0 };
	struct ntlmssp_challenge ch;
	struct ntlmssp_auth m;
	uint8_t *msg = NULL, mic[16], lm0 = 0;
	size_t mlen;
	bool want_mic = false;
	struct wcur w;
	int rc;

	if (ntlmssp_decode_challenge(tok, toklen, &ch))
		return -EBADMSG;
	if (!(ch.flags & NTLMSSP_NEGOTIATE_UNICODE))
		return -EPROTONOSUPPORT;
	c->flags = ch.flags & (CLIENT_FLAGS | NTLMSSP_NEGOTIATE_TARGET_INFO |
			       NTLMSSP_TARGET_TYPE_DOMAIN |
			       NTLMSSP_TARGET_TYPE_SERVER);
	memset(&m, 0, sizeof(m));
	m.has_version = true;
	m.version = our_version;

	rc = name16(c->workstation, 0, &p.ws16, &p.ws_len);
	if (rc)
		goto out_free;
	if (c->anonymous) {
		/* [MS-NLMP] 3.1.5.1.2: empty user/NT, LM = Z(1), no key */
		c->flags |= NTLMSSP_NEGOTIATE_ANONYMOUS;
		c->flags &= ~NTLMSSP_NEGOTIATE_KEY_EXCH;
		rc = name16("", 0, &p.dom16, &p.dom_len);
		if (rc)
			goto out_free;
		m.lm.p = &lm0;
		m.lm.len = 1;
	} else {
		rc = name16(c->user, 0, &p.user16, &p.user_len);
		if (rc)
			goto out_free;
		rc = cli_responses(c, &ch, &p, &want_mic);
		if (rc)
			goto out_free;
		m.lm.p = p.lm;
		m.lm.len = 24;
		m.nt.p = p.nt;
		m.nt.len = (uint16_t)p.nt_len;
		if (c->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
			m.session_key.p = p.enc_key;
			m.session_key.len = 16;
		}
		c->have_key = true;
	}
	if (p.nt_len > UINT16_MAX || p.dom_len > UINT16_MAX) {
		rc = -EMSGSIZE;
		goto out_free;
	}
	m.flags = c->flags;
	m.domain.p = p.dom16;
	m.domain.len = (uint16_t)p.dom_len;
	m.user.p = p.user16;
	m.user.len = (uint16_t)p.user_len;
	m.workstation.p = p.ws16;
	m.workstation.len = (uint16_t)p.ws_len;
	m.has_mic = want_mic;

	mlen = NTLMSSP_AUTH_MIC_OFF + NTLMSSP_AUTH_MIC_LEN + m.lm.len +
	       m.nt.len + m.domain.len + m.user.len + m.workstation.len +
	       m.session_key.len;
	msg = malloc(mlen);
	if (!msg) {
		rc = -ENOMEM;
		goto out_free;
	}
	wcur_init(&w, msg, mlen);
	rc = ntlmssp_encode_auth(&w, &m);
	if (rc)
		goto out_free;
	mlen = w.off;
	if (want_mic) {
		rc = ntlm_mic(c->session_key, c->neg_msg, c->neg_len, tok,
			      toklen, msg, mlen, msg + NTLMSSP_AUTH_MIC_OFF);
		if (rc)
			goto out_free;
	}

	if (!c->spnego) {
		rc = emit(msg, mlen, out, cap, outlen);
		goto out_free;
	}
	/* mechListMIC like Samba's "new SPNEGO": with an NTLM MIC and SIGN */
	if (want_mic && (c->flags & NTLMSSP_NEGOTIATE_SIGN)) {
		rc = ntlm_sec_init(&c->sec, c->session_key, c->flags, true);
		if (!rc) {
			c->sec_ready = true;
			rc = ntlm_sec_sign(&c->sec, c->mech_types,
					   c->mech_types_len, mic);
			c->sent_mic = !rc;
		} else if (rc == -EOPNOTSUPP) {
			rc = 0;
		}
		if (rc)
			goto out_free;
	}
	{
		struct spnego_resp r = {
			.neg_state = SPNEGO_STATE_NONE,
			.token = msg,
			.token_len = mlen,
			.mic = c->sent_mic ? mic : NULL,
			.mic_len = c->sent_mic ? 16 : 0,
		};

		wcur_init(&w, out, cap);
		rc = spnego_encode_resp(&w, &r);
		if (!rc)
			*outlen = w.off;
	}
out_free:
	free(msg);
	parts_free(&p);
	return rc;
}

int auth_client_step(struct auth_client *c, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t outcap, size_t *outlen)
{
	struct spnego_token t;
	int rc;

	*outlen = 0;
	if (!in && inlen)
		return -EINVAL;
	switch (c->state) {
	case CLI_START:
		rc = cli_start(c, in, inlen, out, outcap, outlen);
		if (!rc) {
			c->state = CLI_WAIT_CHAL;
			rc = 1;
		}
		break;
	case CLI_WAIT_CHAL:
		if (!c->spnego) {
			rc = cli_challenge(c, in, inlen, out, outcap, outlen);
			break;
		}
		if (spnego_decode(in, inlen, &t) || t.type != SPNEGO_TOKEN_RESP) {
			rc = -EBADMSG;
			break;
		}
		if (t.resp.neg_state == SPNEGO_REJECT) {
			rc = -EACCES;
			break;
		}
		if (t.resp.mech && !spnego_oid_eq(t.resp.mech, t.resp.mech_len,
						  &spnego_oid_ntlmssp)) {
			rc = -EPROTONOSUPPORT;
			break;
		}
		if (!t.resp.token) {
			rc = -EBADMSG;
			break;
		}
		rc = cli_challenge(c, t.resp.token, t.resp.token_len, out,
				   outcap, outlen);
		break;
	default:
		return -EINVAL;
	}
	if (rc < 0) {
		c->state = CLI_FAILED;
		c->have_key = false;
		*outlen = 0;
	} else if (rc == 0) {
		c->state = CLI_DONE;
	}
	return rc;
}

int auth_client_session_key(const struct auth_client *c, uint8_t key[16])
{
	if ((c->state != CLI_DONE && c->state != CLI_FINISHED) || !c->have_key)
		return -ENOKEY;
	memcpy(key, c->session_key, 16);
	return 0;
}

int auth_client_finish(struct auth_client *c, const uint8_t *in, size_t inlen)
{
	struct spnego_token t;
	int rc;

	if (c->state != CLI_DONE)
		return -EINVAL;
	if (!c->spnego || !inlen) {
		/*
		 * Raw NTLMSSP has no final token; some servers (ksmbd) omit
		 * the SPNEGO one or its mechListMIC: accept that.
		 */
		c->state = CLI_FINISHED;
		return 0;
	}
	if (spnego_decode(in, inlen, &t) || t.type != SPNEGO_TOKEN_RESP)
		goto out_fail_msg;
	if (t.resp.neg_state == SPNEGO_REJECT) {
		rc = -EACCES;
		goto out_fail;
	}
	if (t.resp.neg_state != SPNEGO_STATE_NONE &&
	    t.resp.neg_state != SPNEGO_ACCEPT_COMPLETED)
		goto out_fail_msg;
	if (t.resp.mic && c->have_key) {
		if (!c->sec_ready) {
			rc = ntlm_sec_init(&c->sec, c->session_key, c->flags,
					   true);
			if (rc) {
				rc = -EACCES;
				goto out_fail;
			}
			c->sec_ready = true;
		}
		if (t.resp.mic_len != 16 ||
		    ntlm_sec_verify(&c->sec, c->mech_types, c->mech_types_len,
				    t.resp.mic)) {
			rc = -EACCES;
			goto out_fail;
		}
	}
	c->state = CLI_FINISHED;
	return 0;
out_fail_msg:
	rc = -EBADMSG;
out_fail:
	c->state = CLI_FAILED;
	c->have_key = false;
	return rc;
}
