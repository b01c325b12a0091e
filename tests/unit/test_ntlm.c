// SPDX-License-Identifier: MIT
/* NTLMv2 known answers (KAT-2, KAT-3) and auth client<->server exchanges. */
#include <errno.h>
#include <strings.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "crypto/ntlm.h"
#include "proto/ntlmssp.h"
#include "proto/spnego.h"
#include "util/utf16.h"
#include "t.h"

static void kat2(void)
{
	uint8_t nt[16], ntowf[16], temp[128], chal[8], cchal[8], proof[16];
	uint8_t sbk[16], lm[24], rsk[16], enc[16], key[16], pt[18], ct[18];
	uint8_t sig[16], back[18];
	uint32_t flags = 0xe28a8233;
	struct ntlm_sec cli, srv;
	size_t tlen;

	t_section("KAT-2 [MS-NLMP] 4.2.4 NTLMv2");
	T_EQ(ntlm_nt_hash("Password", nt), 0);
	T_HEXEQ(nt, 16, "a4f49c406510bdcab6824ee7c30fd852");
	T_EQ(ntlm_ntowfv2(nt, "User", "Domain", ntowf), 0);
	T_HEXEQ(ntowf, 16, "0c868a403bfd7a93a3001ef22ef02e3f");
	/* lower-case user hashes the same (user is upper-cased) */
	T_EQ(ntlm_ntowfv2(nt, "uSER", "Domain", key), 0);
	T_MEMEQ(key, ntowf, 16);
	/* domain is NOT upper-cased */
	T_EQ(ntlm_ntowfv2(nt, "User", "DOMAIN", key), 0);
	T_ASSERT(memcmp(key, ntowf, 16) != 0);

	t_unhex(chal, 8, "0123456789abcdef");
	memset(cchal, 0xaa, 8);
	tlen = t_unhex(temp, sizeof(temp),
		       "01010000000000000000000000000000AAAAAAAAAAAAAAAA0000000002000C00"
		       "44006F006D00610069006E0001000C0053006500720076006500720000000000"
		       "00000000");
	T_EQ(ntlm_v2_proof(ntowf, chal, temp, tlen, proof), 0);
	T_HEXEQ(proof, 16, "68cd0ab851e51c96aabc927bebef6a1c");
	T_EQ(ntlm_v2_session_base_key(ntowf, proof, sbk), 0);
	T_HEXEQ(sbk, 16, "8de40ccadbc14a82f15cb0ad0de95ca3");
	T_EQ(ntlm_lmv2_response(ntowf, chal, cchal, lm), 0);
	T_HEXEQ(lm, 24, "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
	memset(rsk, 0x55, 16);
	T_EQ(crypto_rc4(sbk, 16, rsk, enc, 16), 0);
	T_HEXEQ(enc, 16, "c5dad2544fc9799094ce1ce90bc9d03e");
	T_EQ(crypto_rc4(sbk, 16, enc, key, 16), 0);
	T_MEMEQ(key, rsk, 16);

	T_EQ(ntlm_sign_key(rsk, true, key), 0);
	T_HEXEQ(key, 16, "4788dc861b4782f35d43fd98fe1a2d39");
	T_EQ(ntlm_seal_key(rsk, flags, true, key), 0);
	T_HEXEQ(key, 16, "59f600973cc4960a25480a7c196e4c58");

	t_section("KAT-2 [MS-NLMP] 4.2.4.4 GSS_WrapEx (seal + signature)");
	T_EQ(utf8_to_utf16le("Plaintext", pt, sizeof(pt)), 18);
	T_EQ(ntlm_sec_init(&cli, rsk, flags, true), 0);
	T_EQ(ntlm_sec_seal(&cli, pt, ct, 18, sig), 0);
	T_HEXEQ(ct, 18, "54e50165bf1936dc996020c1811b0f06fb5f");
	T_HEXEQ(sig, 16, "010000007fb38ec5c55d497600000000");
	/* the server side unseals and verifies */
	T_EQ(ntlm_sec_init(&srv, rsk, flags, false), 0);
	T_EQ(ntlm_sec_unseal(&srv, ct, back, 18, sig), 0);
	T_MEMEQ(back, pt, 18);
	/* GetMIC/VerifyMIC, seq 1 in both directions now */
	T_EQ(ntlm_sec_sign(&cli, pt, 18, sig), 0);
	T_HEXEQ(sig + 12, 4, "01000000");
	T_EQ(ntlm_sec_verify(&srv, pt, 18, sig), 0);
	T_EQ(ntlm_sec_sign(&srv, pt, 18, sig), 0);
	sig[5] ^= 1;
	T_EQ(ntlm_sec_verify(&cli, pt, 18, sig), -EBADMSG);
	ntlm_sec_free(&cli);
	ntlm_sec_free(&srv);
	T_EQ(ntlm_sec_init(&cli, rsk, flags & ~0x00080000u, true), -EOPNOTSUPP);
}

static void kat3(void)
{
	uint8_t nt[16], ntowf[16], temp[512], chal[8], proof[16], sbk[16];
	uint8_t enc[16], esk[16], key[16];
	uint32_t flags = NTLMSSP_NEGOTIATE_128 |
			 NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
			 NTLMSSP_NEGOTIATE_KEY_EXCH;
	size_t tlen;

	t_section("KAT-3 NTLMv2 from a real Windows exchange (blog-keys)");
	T_EQ(ntlm_nt_hash("Password01!", nt), 0);
	T_HEXEQ(nt, 16, "7C4FE5EADA682714A036E39378362BAB");
	T_EQ(ntlm_ntowfv2(nt, "administrator", "SUT311", ntowf), 0);
	T_HEXEQ(ntowf, 16, "AEE3959B44A815F1EB28C9511B4F533B");
	t_unhex(chal, 8, "0D1D8BA31179D008");
	tlen = t_unhex(temp, sizeof(temp),
		       "0101000000000000A1A1F5ADCBAED001BC4AD05F223CC90F0000000002000C00"
		       "53005500540033003100310001000C0053005500540033003100310004000C00"
		       "53005500540033003100310003000C0053005500540033003100310007000800"
		       "A1A1F5ADCBAED001060004000200000008003000300000000000000000000000"
		       "00300000B61FEFCAA857EA57BF1EDCEBF8974B8E0EBA5A6DFD9D07A31D11B548"
		       "F8C9D0CC0A001000000000000000000000000000000000000900160063006900"
		       "660073002F00530055005400330031003100000000000000000000000000");
	T_EQ(ntlm_v2_proof(ntowf, chal, temp, tlen, proof), 0);
	T_HEXEQ(proof, 16, "63078EB639FE03E20A231C3AE3BF2308");
	T_EQ(ntlm_v2_session_base_key(ntowf, proof, sbk), 0);
	T_HEXEQ(sbk, 16, "B4CF22566926B1C069ACD80E4D73C814");
	t_unhex(enc, 16, "3B9BDFF38F5EE8F9663F11A0F4C03A78");
	T_EQ(crypto_rc4(sbk, 16, enc, esk, 16), 0);
	T_HEXEQ(esk, 16, "270E1BA896585EEB7AF3472D3B4C75A7");
	T_EQ(ntlm_sign_key(esk, true, key), 0);
	T_HEXEQ(key, 16, "D43F36C44BCE0630250A09EA0C2E8C2C");
	T_EQ(ntlm_sign_key(esk, false, key), 0);
	T_HEXEQ(key, 16, "E1BD8B416B0B709D295E12F2CF18E6C5");
	T_EQ(ntlm_seal_key(esk, flags, true, key), 0);
	T_HEXEQ(key, 16, "31E5557D99BE13F1B2665C7C7C52CE70");
	T_EQ(ntlm_seal_key(esk, flags, false, key), 0);
	T_HEXEQ(key, 16, "B0F5A0B32C81FF34A878E1409B3B0EF2");

	/* the AV pairs of the real blob parse: MsvAvFlags = 2 (MIC) */
	{
		struct ntlmssp_av av;

		T_EQ(ntlmssp_av_find(temp + 28, tlen - 28, MSV_AV_FLAGS, &av),
		     0);
		T_EQ(av.len, 4);
		T_EQ(get_le32(av.val), 2);
		T_EQ(ntlmssp_av_validate(temp + 28, tlen - 28, NULL), 0);
	}
}

/* ---- client <-> server ------------------------------------------------ */

static int lookup(void *arg, const char *user, uint8_t h[16])
{
	(void)arg;
	if (!strcasecmp(user, "alice"))
		return ntlm_nt_hash("Secret1", h);
	if (!strcasecmp(user, "bob"))
		return ntlm_nt_hash("p\xc3\xa4ssw\xc3\xb6rd \xf0\x9f\x94\x91", h);
	return -ENOENT;
}

static const struct auth_server_cfg scfg = {
	.netbios_name = "RDAX",
	.domain_name = "WORKGROUP",
	.lookup = lookup,
};

enum tamper {
	T_NONE,
	T_NTPROOF,
	T_MIC,
	T_MECHMIC,
	T_SERVER_MIC,
	T_BLOB,
};

struct xres {
	int srv1, cli2, srv2, fin;
	struct auth_result res;
	uint8_t ckey[16];
	int ckey_rc;
	bool client_sent_mechmic;
	bool server_sent_mechmic;
};

/* Locate the NTLMSSP AUTHENTICATE inside a client token. */
static uint8_t *auth_msg(uint8_t *tok, size_t len, bool spnego, size_t *mlen,
			 uint8_t **mechmic)
{
	struct spnego_token t;

	*mechmic = NULL;
	if (!spnego) {
		*mlen = len;
		return tok;
	}
	if (spnego_decode(tok, len, &t) || t.type != SPNEGO_TOKEN_RESP)
		return NULL;
	*mechmic = (uint8_t *)t.resp.mic;
	*mlen = t.resp.token_len;
	return (uint8_t *)t.resp.token;
}

static void exchange(const struct auth_client_cfg *ccfg, bool hint,
		     enum tamper tm, struct xres *x)
{
	static uint8_t a[AUTH_TOKEN_MAX], b[AUTH_TOKEN_MAX];
	struct auth_server *s;
	struct auth_client *c;
	size_t al = 0, bl = 0;
	int rc;

	memset(x, 0, sizeof(*x));
	T_EQ(auth_server_new(&s, &scfg), 0);
	T_EQ(auth_client_new(&c, ccfg), 0);
	if (hint) {
		T_EQ(auth_negotiate_hint(b, sizeof(b), &bl), 0);
		rc = auth_client_step(c, b, bl, a, sizeof(a), &al);
	} else {
		rc = auth_client_step(c, NULL, 0, a, sizeof(a), &al);
	}
	T_EQ(rc, 1);
	T_ASSERT(ccfg->spnego ? a[0] == 0x60 : !memcmp(a, "NTLMSSP", 8));
	x->srv1 = auth_server_step(s, a, al, b, sizeof(b), &bl);
	T_EQ(x->srv1, 1);
	T_ASSERT(ccfg->spnego ? b[0] == 0xa1 : !memcmp(b, "NTLMSSP", 8));
	x->cli2 = auth_client_step(c, b, bl, a, sizeof(a), &al);
	T_EQ(x->cli2, 0);

	{
		uint8_t *mechmic, *m;
		struct ntlmssp_auth am;
		size_t ml = 0;

		m = auth_msg(a, al, ccfg->spnego, &ml, &mechmic);
		T_REQUIRE(m != NULL);
		x->client_sent_mechmic = mechmic != NULL;
		T_EQ(ntlmssp_decode_auth(m, ml, &am), 0);
		if (tm == T_NTPROOF && am.nt.len)
			((uint8_t *)am.nt.p)[3] ^= 0x01;
		if (tm == T_BLOB && am.nt.len)
			((uint8_t *)am.nt.p)[30] ^= 0x01; /* timestamp */
		if (tm == T_MIC)
			m[NTLMSSP_AUTH_MIC_OFF + 5] ^= 0x01;
		if (tm == T_MECHMIC && mechmic)
			mechmic[9] ^= 0x01;
	}

	x->srv2 = auth_server_step(s, a, al, b, sizeof(b), &bl);
	if (!x->srv2) {
		T_EQ(auth_server_result(s, &x->res), 0);
		if (ccfg->spnego) {
			struct spnego_token t;

			T_EQ(spnego_decode(b, bl, &t), 0);
			T_EQ(t.type, SPNEGO_TOKEN_RESP);
			T_EQ(t.resp.neg_state, SPNEGO_ACCEPT_COMPLETED);
			x->server_sent_mechmic = t.resp.mic != NULL;
			if (tm == T_SERVER_MIC && t.resp.mic)
				((uint8_t *)t.resp.mic)[10] ^= 0x01;
		} else {
			T_EQ(bl, 0);
		}
		x->fin = auth_client_finish(c, b, bl);
		/* a finished exchange takes no more input */
		T_EQ(auth_server_step(s, a, al, b, sizeof(b), &bl), -EINVAL);
	} else {
		T_EQ(auth_server_result(s, &x->res), -EAGAIN);
		T_ASSERT(!x->res.have_key);
		T_EQ(bl, 0);
	}
	x->ckey_rc = auth_client_session_key(c, x->ckey);
	auth_server_delete(&s);
	auth_client_delete(&c);
	T_ASSERT(s == NULL && c == NULL);
}

static void roundtrips(void)
{
	struct auth_client_cfg cc = {
		.user = "alice", .password = "Secret1",
		.workstation = "CLIENT1",
	};
	struct xres x;
	int sp;

	for (sp = 0; sp <= 1; sp++) {
		cc.spnego = sp;
		cc.user = "alice";
		cc.password = "Secret1";
		t_section(sp ? "exchange over SPNEGO" : "exchange, raw NTLMSSP");

		exchange(&cc, sp, T_NONE, &x);
		T_EQ(x.srv2, 0);
		T_EQ(x.fin, 0);
		T_ASSERT(!strcmp(x.res.user, "alice"));
		T_ASSERT(!strcmp(x.res.domain, "WORKGROUP"));
		T_ASSERT(!x.res.anonymous && x.res.have_key);
		T_EQ(x.ckey_rc, 0);
		T_MEMEQ(x.ckey, x.res.session_key, 16);
		T_EQ(x.client_sent_mechmic, sp);
		T_EQ(x.server_sent_mechmic, sp);

		/* SPNEGO without the NEGOTIATE hint; user case differs */
		cc.user = "ALICE";
		cc.domain = "SomeDomain";
		exchange(&cc, false, T_NONE, &x);
		T_EQ(x.srv2, 0);
		T_EQ(x.fin, 0);
		T_ASSERT(!strcmp(x.res.user, "ALICE"));
		T_ASSERT(!strcmp(x.res.domain, "SomeDomain"));
		T_MEMEQ(x.ckey, x.res.session_key, 16);
		cc.domain = NULL;

		/* non-ASCII password and user lookup */
		cc.user = "Bob";
		cc.password = "p\xc3\xa4ssw\xc3\xb6rd \xf0\x9f\x94\x91";
		exchange(&cc, sp, T_NONE, &x);
		T_EQ(x.srv2, 0);
		T_MEMEQ(x.ckey, x.res.session_key, 16);

		cc.user = "alice";
		cc.password = "secret1";
		exchange(&cc, sp, T_NONE, &x);
		T_EQ(x.srv2, -EACCES);
		T_ASSERT(!strcmp(x.res.user, "alice")); /* kept for logging */
		T_EQ(x.ckey_rc, 0); /* the client cannot know yet */

		cc.user = "mallory";
		cc.password = "Secret1";
		exchange(&cc, sp, T_NONE, &x);
		T_EQ(x.srv2, -EACCES);

		cc.user = "alice";
		cc.password = "Secret1";
		exchange(&cc, sp, T_NTPROOF, &x);
		T_EQ(x.srv2, -EACCES);
		exchange(&cc, sp, T_BLOB, &x);
		T_EQ(x.srv2, -EACCES);
		exchange(&cc, sp, T_MIC, &x);
		T_EQ(x.srv2, -EACCES);
		if (sp) {
			exchange(&cc, sp, T_MECHMIC, &x);
			T_EQ(x.srv2, -EACCES);
			exchange(&cc, sp, T_SERVER_MIC, &x);
			T_EQ(x.srv2, 0);
			T_EQ(x.fin, -EACCES);
			T_EQ(x.ckey_rc, -ENOKEY);
		}

		cc.user = NULL;
		cc.password = NULL;
		cc.anonymous = true;
		exchange(&cc, sp, T_NONE, &x);
		T_EQ(x.srv2, 0);
		T_EQ(x.fin, 0);
		T_ASSERT(x.res.anonymous && !x.res.have_key);
		T_ASSERT(!x.res.user[0]);
		T_EQ(x.ckey_rc, -ENOKEY);
		T_EQ(x.server_sent_mechmic, 0);
		cc.anonymous = false;
	}
}

/* Hand-built AUTHENTICATE: OEM, no KEY_EXCH, no MIC, or NTLMv1. */
static int manual(uint32_t nflags, const char *user, const char *dom,
		  const char *pw, bool v1, struct auth_result *res,
		  uint8_t sbk_out[16])
{
	static uint8_t out[AUTH_TOKEN_MAX], nbuf[256], abuf[2048], nt[1024];
	struct ntlmssp_negotiate neg = { .flags = nflags };
	struct ntlmssp_challenge ch;
	struct ntlmssp_auth m;
	struct auth_server *s;
	uint8_t h[16], ntowf[16], u16[128], d16[128];
	size_t ol, ntl;
	struct wcur w;
	int rc, ul, dl;

	T_EQ(auth_server_new(&s, &scfg), 0);
	wcur_init(&w, nbuf, sizeof(nbuf));
	T_EQ(ntlmssp_encode_negotiate(&w, &neg), 0);
	T_EQ(auth_server_step(s, nbuf, w.off, out, sizeof(out), &ol), 1);
	T_EQ(ntlmssp_decode_challenge(out, ol, &ch), 0);

	if (ch.flags & NTLMSSP_NEGOTIATE_UNICODE) {
		ul = utf8_to_utf16le(user, u16, sizeof(u16));
		dl = utf8_to_utf16le(dom, d16, sizeof(d16));
	} else {
		ul = (int)strlen(user);
		dl = (int)strlen(dom);
		memcpy(u16, user, (size_t)ul);
		memcpy(d16, dom, (size_t)dl);
	}
	T_EQ(ntlm_nt_hash(pw, h), 0);
	T_EQ(ntlm_ntowfv2(h, user, dom, ntowf), 0);
	memset(nt, 0, sizeof(nt));
	nt[16] = nt[17] = 1;
	memset(nt + 32, 0x77, 8);
	memcpy(nt + 44, ch.target_info.p, ch.target_info.len);
	ntl = 44 + ch.target_info.len + 4;
	T_EQ(ntlm_v2_proof(ntowf, ch.challenge, nt + 16, ntl - 16, nt), 0);
	T_EQ(ntlm_v2_session_base_key(ntowf, nt, sbk_out), 0);

	memset(&m, 0, sizeof(m));
	m.flags = ch.flags & ~NTLMSSP_NEGOTIATE_KEY_EXCH;
	m.nt.p = nt;
	m.nt.len = (uint16_t)(v1 ? 24 : ntl);
	m.user.p = u16;
	m.user.len = (uint16_t)ul;
	m.domain.p = d16;
	m.domain.len = (uint16_t)dl;
	wcur_init(&w, abuf, sizeof(abuf));
	T_EQ(ntlmssp_encode_auth(&w, &m), 0);
	rc = auth_server_step(s, abuf, w.off, out, sizeof(out), &ol);
	if (!rc)
		T_EQ(auth_server_result(s, res), 0);
	auth_server_delete(&s);
	return rc;
}

static void manual_cases(void)
{
	struct auth_result r;
	uint8_t sbk[16];
	uint32_t uni = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM |
		       NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY;

	t_section("hand-built AUTHENTICATE: no KEY_EXCH, OEM, v1, domains");
	T_EQ(manual(uni, "alice", "WG", "Secret1", false, &r, sbk), 0);
	T_ASSERT(r.have_key);
	T_MEMEQ(r.session_key, sbk, 16); /* ExportedSessionKey = SBK */
	T_EQ(manual(uni, "alice", "WG", "Secret1", true, &r, sbk), -EACCES);
	T_EQ(manual(uni, "alice", "WG", "wrong", false, &r, sbk), -EACCES);
	/* OEM (no UNICODE): names as 8-bit strings */
	T_EQ(manual(NTLMSSP_NEGOTIATE_OEM | NTLMSSP_NEGOTIATE_NTLM, "alice",
		    "wg", "Secret1", false, &r, sbk), 0);
	T_ASSERT(!strcmp(r.user, "alice") && !strcmp(r.domain, "wg"));
	T_MEMEQ(r.session_key, sbk, 16);
}

/* RFC 4178 downgrade: Kerberos first, NTLMSSP second -> request-mic. */
static void downgrade(void)
{
	static uint8_t a[AUTH_TOKEN_MAX], b[AUTH_TOKEN_MAX], raw[AUTH_TOKEN_MAX];
	const struct spnego_oid mechs[2] = { spnego_oid_mskrb5,
					     spnego_oid_ntlmssp };
	struct auth_client_cfg cc = { .user = "alice", .password = "Secret1" };
	uint8_t mt[64], mic[16], key[16];
	struct spnego_token t;
	struct spnego_resp r;
	struct ntlmssp_auth am;
	struct auth_server *s;
	struct auth_client *c;
	struct ntlm_sec sec;
	size_t al, bl, rl, mtl;
	struct wcur w;

	t_section("SPNEGO downgrade (NTLMSSP not first): request-mic + MICs");
	T_EQ(auth_server_new(&s, &scfg), 0);
	T_EQ(auth_client_new(&c, &cc), 0); /* raw: we wrap by hand */
	wcur_init(&w, mt, sizeof(mt));
	T_EQ(spnego_encode_mech_types(&w, mechs, 2), 0);
	mtl = w.off;

	wcur_init(&w, a, sizeof(a));
	T_EQ(spnego_encode_init(&w, mechs, 2, (const uint8_t *)"krb5-ap-req",
				11, NULL, 0, NULL), 0);
	T_EQ(auth_server_step(s, a, w.off, b, sizeof(b), &bl), 1);
	T_EQ(spnego_decode(b, bl, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_RESP);
	T_EQ(t.resp.neg_state, SPNEGO_REQUEST_MIC);
	T_ASSERT(spnego_oid_eq(t.resp.mech, t.resp.mech_len,
			       &spnego_oid_ntlmssp));
	T_ASSERT(t.resp.token == NULL);

	/* NTLMSSP NEGOTIATE in a negTokenResp */
	T_EQ(auth_client_step(c, NULL, 0, raw, sizeof(raw), &rl), 1);
	memset(&r, 0, sizeof(r));
	r.neg_state = SPNEGO_STATE_NONE;
	r.token = raw;
	r.token_len = rl;
	wcur_init(&w, a, sizeof(a));
	T_EQ(spnego_encode_resp(&w, &r), 0);
	T_EQ(auth_server_step(s, a, w.off, b, sizeof(b), &bl), 1);
	T_EQ(spnego_decode(b, bl, &t), 0);
	T_REQUIRE(t.resp.token != NULL);

	T_EQ(auth_client_step(c, t.resp.token, t.resp.token_len, raw,
			      sizeof(raw), &rl), 0);
	T_EQ(auth_client_session_key(c, key), 0);
	T_EQ(ntlmssp_decode_auth(raw, rl, &am), 0);
	T_EQ(ntlm_sec_init(&sec, key, am.flags, true), 0);
	T_EQ(ntlm_sec_sign(&sec, mt, mtl, mic), 0);
	r.token = raw;
	r.token_len = rl;
	r.mic = mic;
	r.mic_len = 16;
	wcur_init(&w, a, sizeof(a));
	T_EQ(spnego_encode_resp(&w, &r), 0);
	al = w.off;
	T_EQ(auth_server_step(s, a, al, b, sizeof(b), &bl), 0);
	T_EQ(spnego_decode(b, bl, &t), 0);
	T_EQ(t.resp.neg_state, SPNEGO_ACCEPT_COMPLETED);
	T_ASSERT(t.resp.mic && t.resp.mic_len == 16);
	/* the server's MIC is over the client's (2-mech) list */
	T_EQ(ntlm_sec_verify(&sec, mt, mtl, t.resp.mic), 0);
	ntlm_sec_free(&sec);
	auth_server_delete(&s);
	auth_client_delete(&c);
}

static void bad_inputs(void)
{
	static uint8_t a[AUTH_TOKEN_MAX], b[AUTH_TOKEN_MAX];
	const struct spnego_oid krb = spnego_oid_krb5;
	struct auth_client_cfg cc = { .user = "alice", .password = "Secret1",
				      .spnego = true };
	struct spnego_resp rej = { .neg_state = SPNEGO_REJECT };
	struct auth_server *s;
	struct auth_client *c;
	size_t al, bl;
	struct wcur w;

	t_section("bad inputs to the state machines");
	T_EQ(auth_server_new(&s, &scfg), 0);
	T_EQ(auth_server_step(s, (const uint8_t *)"garbage", 7, b, sizeof(b),
			      &bl), -EBADMSG);
	T_EQ(auth_server_step(s, a, 0, b, sizeof(b), &bl), -EINVAL);
	auth_server_delete(&s);

	/* SPNEGO without NTLMSSP in mechTypes */
	T_EQ(auth_server_new(&s, &scfg), 0);
	wcur_init(&w, a, sizeof(a));
	T_EQ(spnego_encode_init(&w, &krb, 1, a, 0, NULL, 0, NULL), 0);
	T_EQ(auth_server_step(s, a, w.off, b, sizeof(b), &bl), -EINVAL);
	auth_server_delete(&s);

	/* output buffer too small */
	T_EQ(auth_server_new(&s, &scfg), 0);
	T_EQ(auth_client_new(&c, &cc), 0);
	T_EQ(auth_client_step(c, NULL, 0, a, sizeof(a), &al), 1);
	T_EQ(auth_server_step(s, a, al, b, 40, &bl), -ENOSPC);
	auth_server_delete(&s);

	/* hint without NTLMSSP */
	auth_client_delete(&c);
	T_EQ(auth_client_new(&c, &cc), 0);
	wcur_init(&w, b, sizeof(b));
	T_EQ(spnego_encode_init(&w, &krb, 1, NULL, 0, NULL, 0,
				SPNEGO_HINT_NAME), 0);
	T_EQ(auth_client_step(c, b, w.off, a, sizeof(a), &al),
	     -EPROTONOSUPPORT);
	auth_client_delete(&c);

	/* the server rejects */
	T_EQ(auth_client_new(&c, &cc), 0);
	T_EQ(auth_client_step(c, NULL, 0, a, sizeof(a), &al), 1);
	wcur_init(&w, b, sizeof(b));
	T_EQ(spnego_encode_resp(&w, &rej), 0);
	T_EQ(auth_client_step(c, b, w.off, a, sizeof(a), &al), -EACCES);
	T_EQ(auth_client_session_key(c, b), -ENOKEY);
	auth_client_delete(&c);

	/* config errors */
	cc.password = NULL;
	T_EQ(auth_client_new(&c, &cc), -EINVAL);
	{
		struct auth_server_cfg bad = scfg;

		bad.netbios_name = NULL;
		T_EQ(auth_server_new(&s, &bad), -EINVAL);
	}
}

static void hint(void)
{
	uint8_t b[256];
	struct spnego_token t;
	size_t bl;

	t_section("NEGOTIATE hint (NegTokenInit2)");
	T_EQ(auth_negotiate_hint(b, sizeof(b), &bl), 0);
	T_EQ(spnego_decode(b, bl, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_INIT);
	T_EQ(t.init.n_mechs, 1);
	T_EQ(spnego_mech_index(&t.init, &spnego_oid_ntlmssp), 0);
	T_ASSERT(t.init.has_hints);
	T_EQ(t.init.hint_name_len, strlen(SPNEGO_HINT_NAME));
	T_EQ(auth_negotiate_hint(b, 20, &bl), -ENOSPC);
}

int main(void)
{
	/* OpenSSL, its legacy provider (MD4, RC4) included, is a build dependency */
	T_REQUIRE(crypto_init() == 0);
	kat2();
	kat3();
	hint();
	roundtrips();
	manual_cases();
	downgrade();
	bad_inputs();
	return t_done();
}
