// SPDX-License-Identifier: MIT
/* SPNEGO codec: known encodings, round trips, malformed DER rejection. */
#include <errno.h>

#include "proto/spnego.h"
#include "t.h"

/* NegTokenInit2 {mechTypes [NTLMSSP], negHints {hintName}}, DER by hand. */
static const char hint_hex[] =
	"604806062b0601050502a03e303ca00e300c060a2b06010401823702020aa32a"
	"3028a0261b246e6f745f646566696e65645f696e5f524643343137384070"
	"6c656173655f69676e6f7265";

/* Windows' final SESSION_SETUP blob from KAT-6: accept-completed + MIC. */
static const char win_final[] =
	"A11B3019A0030A0100A3120410010000003B453CDC3524164200000000";

static uint8_t buf[4096], buf2[4096];

static void known(void)
{
	struct spnego_token t;
	size_t n;
	struct wcur w;

	t_section("known encodings (NegTokenInit2 hint, Windows final token)");
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_init(&w, &spnego_oid_ntlmssp, 1, NULL, 0, NULL, 0,
				SPNEGO_HINT_NAME), 0);
	T_HEXEQ(buf, w.off, hint_hex);
	T_EQ(spnego_decode(buf, w.off, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_INIT);
	T_EQ(t.init.n_mechs, 1);
	T_ASSERT(t.init.has_hints && t.init.hint_name_len == 36 &&
		 !memcmp(t.init.hint_name, SPNEGO_HINT_NAME, 36));
	T_ASSERT(!t.init.token && !t.init.mic);
	T_HEXEQ(t.init.mech_types, t.init.mech_types_len,
		"300c060a2b06010401823702020a");

	n = t_unhex(buf, sizeof(buf), win_final);
	T_EQ(spnego_decode(buf, n, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_RESP);
	T_EQ(t.resp.neg_state, SPNEGO_ACCEPT_COMPLETED);
	T_ASSERT(!t.resp.mech && !t.resp.token);
	T_EQ(t.resp.mic_len, 16);
	T_HEXEQ(t.resp.mic, 16, "010000003B453CDC3524164200000000");
	/* re-encoding gives the same bytes */
	wcur_init(&w, buf2, sizeof(buf2));
	T_EQ(spnego_encode_resp(&w, &t.resp), 0);
	T_EQ(w.off, n);
	T_MEMEQ(buf2, buf, n);
}

static void roundtrip(void)
{
	const struct spnego_oid mechs[3] = { spnego_oid_mskrb5,
					     spnego_oid_krb5,
					     spnego_oid_ntlmssp };
	uint8_t tok[300], mic[16], mt[64];
	struct spnego_token t;
	struct spnego_resp r = { 0 };
	struct wcur w;
	size_t i, mtl;

	t_section("NegTokenInit / NegTokenResp round trips");
	for (i = 0; i < sizeof(tok); i++)
		tok[i] = (uint8_t)i;
	memset(mic, 0x5c, 16);
	wcur_init(&w, buf, sizeof(buf));
	/* 300-byte token forces 2-byte DER lengths */
	T_EQ(spnego_encode_init(&w, mechs, 3, tok, sizeof(tok), mic, 16, NULL),
	     0);
	T_EQ(spnego_decode(buf, w.off, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_INIT);
	T_EQ(t.init.n_mechs, 3);
	T_EQ(spnego_mech_index(&t.init, &spnego_oid_ntlmssp), 2);
	T_EQ(spnego_mech_index(&t.init, &spnego_oid_mskrb5), 0);
	T_EQ(spnego_mech_index(&t.init, &spnego_oid_spnego), -ENOENT);
	T_EQ(t.init.token_len, sizeof(tok));
	T_MEMEQ(t.init.token, tok, sizeof(tok));
	T_EQ(t.init.mic_len, 16);
	T_MEMEQ(t.init.mic, mic, 16);
	T_ASSERT(!t.init.has_hints);
	wcur_init(&w, mt, sizeof(mt));
	T_EQ(spnego_encode_mech_types(&w, mechs, 3), 0);
	mtl = w.off;
	T_EQ(t.init.mech_types_len, mtl);
	T_MEMEQ(t.init.mech_types, mt, mtl);

	/* resp with every field, then with none */
	r.neg_state = SPNEGO_ACCEPT_INCOMPLETE;
	r.mech = spnego_oid_ntlmssp.der;
	r.mech_len = spnego_oid_ntlmssp.len;
	r.token = tok;
	r.token_len = 200;
	r.mic = mic;
	r.mic_len = 16;
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_resp(&w, &r), 0);
	T_EQ(spnego_decode(buf, w.off, &t), 0);
	T_EQ(t.type, SPNEGO_TOKEN_RESP);
	T_EQ(t.resp.neg_state, SPNEGO_ACCEPT_INCOMPLETE);
	T_ASSERT(spnego_oid_eq(t.resp.mech, t.resp.mech_len,
			       &spnego_oid_ntlmssp));
	T_EQ(t.resp.token_len, 200);
	T_MEMEQ(t.resp.token, tok, 200);
	T_EQ(t.resp.mic_len, 16);

	memset(&r, 0, sizeof(r));
	r.neg_state = SPNEGO_STATE_NONE;
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_resp(&w, &r), 0);
	T_HEXEQ(buf, w.off, "a1023000");
	T_EQ(spnego_decode(buf, w.off, &t), 0);
	T_EQ(t.resp.neg_state, SPNEGO_STATE_NONE);
	T_ASSERT(!t.resp.mech && !t.resp.token && !t.resp.mic);

	/* an empty responseToken is present, not absent */
	r.token = tok;
	r.token_len = 0;
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_resp(&w, &r), 0);
	T_EQ(spnego_decode(buf, w.off, &t), 0);
	T_ASSERT(t.resp.token != NULL && t.resp.token_len == 0);

	/* bare negTokenInit [0] without the GSS header */
	{
		size_t n = t_unhex(buf, sizeof(buf),
				   "a011300fa00d300b06092a864886f712010202");

		T_EQ(spnego_decode(buf, n, &t), 0);
		T_EQ(t.type, SPNEGO_TOKEN_INIT);
		T_EQ(spnego_mech_index(&t.init, &spnego_oid_krb5), 0);
	}
	/* encoder limits */
	wcur_init(&w, buf, 10);
	T_EQ(spnego_encode_init(&w, mechs, 3, tok, 100, NULL, 0, NULL),
	     -ENOSPC);
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_init(&w, mechs, 0, NULL, 0, NULL, 0, NULL),
	     -EINVAL);
	r.neg_state = 7;
	T_EQ(spnego_encode_resp(&w, &r), -EINVAL);
}

static int dec(const char *hex)
{
	static uint8_t b[4096];
	struct spnego_token t;
	size_t n = t_unhex(b, sizeof(b), hex);

	return spnego_decode(b, n, &t);
}

static void malformed(void)
{
	struct spnego_token t;
	size_t n, i;
	int rc;

	t_section("malformed DER is rejected");
	/* every truncation of a valid token */
	n = t_unhex(buf, sizeof(buf), hint_hex);
	for (i = 0; i < n; i++)
		T_EQ(spnego_decode(buf, i, &t), -EBADMSG);
	n = t_unhex(buf, sizeof(buf), win_final);
	for (i = 0; i < n; i++)
		T_EQ(spnego_decode(buf, i, &t), -EBADMSG);
	/* trailing garbage */
	buf[n] = 0;
	T_EQ(spnego_decode(buf, n + 1, &t), -EBADMSG);

	/* indefinite length */
	T_EQ(dec("a1803000 0000"), -EBADMSG);
	/* 5 length octets, and a 4-octet length past the end */
	T_EQ(dec("a185000000000430 00"), -EBADMSG);
	T_EQ(dec("a184ffffffff3000"), -EBADMSG);
	T_EQ(dec("a1847fffffff3000"), -EBADMSG);
	/* inner length past its parent */
	T_EQ(dec("a1043005a0030a0100"), -EBADMSG);
	/* multi-byte tag */
	T_EQ(dec("bf81003000"), -EBADMSG);
	/* wrong outer tags / OID */
	T_EQ(dec("3000"), -EBADMSG);
	T_EQ(dec("a2023000"), -EBADMSG);
	rc = dec("600d06092a864886f712010202a000");
	T_EQ(rc, -EPROTONOSUPPORT);
	/* negState out of range, wrong inner type, bad ENUM length */
	T_EQ(dec("a1073005a0030a0104"), -EBADMSG);
	T_EQ(dec("a1073005a003020100"), -EBADMSG);
	T_EQ(dec("a1083006a0040a020000"), -EBADMSG);
	/* out-of-order and duplicate elements */
	T_EQ(dec("a10c300aa2030401aaa0030a0100"), -EBADMSG);
	T_EQ(dec("a10c300aa0030a0100a0030a0100"), -EBADMSG);
	/* unknown element [5] */
	T_EQ(dec("a1073005a5030401aa"), -EBADMSG);
	/* two TLVs inside one element */
	T_EQ(dec("a10a3008a0060a01000a0100"), -EBADMSG);
	/* NegTokenInit without mechTypes, with an empty list, non-OIDs */
	T_EQ(dec("a0073005a2030401aa"), -EBADMSG);
	T_EQ(dec("a0063004a0023000"), -EBADMSG);
	T_EQ(dec("a0083006a0043002" "0400"), -EBADMSG);
	/* nested-too-deep: SEQUENCEs where OIDs belong */
	T_EQ(dec("a0123010a00e300c300a30083006300430023000"), -EBADMSG);
	/* one mechListMIC is fine, two ([3] and [4]) are not */
	T_EQ(dec("a0153013a00d300b06092a864886f712010202a3020400"), 0);
	/* two mechListMICs ([3] and [4]) */
	T_EQ(dec("a0193017a00d300b06092a864886f712010202a3020400a4020400"),
	     -EBADMSG);

	/* 10000 nested SEQUENCEs (long-form lengths): rejected, no recursion */
	{
		static uint8_t deep[70000];
		size_t o = 0, lvl, inner = 0;

		/* build from inside out: each level 30 83 LL LL LL */
		for (lvl = 0; lvl < 10000; lvl++)
			inner += 5;
		o = 0;
		deep[o++] = 0xa1;
		deep[o++] = 0x83;
		deep[o++] = (uint8_t)(inner >> 16);
		deep[o++] = (uint8_t)(inner >> 8);
		deep[o++] = (uint8_t)inner;
		for (lvl = 0; lvl < 10000; lvl++) {
			size_t left = inner - 5 * (lvl + 1);

			deep[o++] = 0x30;
			deep[o++] = 0x83;
			deep[o++] = (uint8_t)(left >> 16);
			deep[o++] = (uint8_t)(left >> 8);
			deep[o++] = (uint8_t)left;
		}
		T_EQ(spnego_decode(deep, o, &t), -EBADMSG);
	}
	T_EQ(spnego_decode(NULL, 0, &t), -EBADMSG);
}

static void fuzz(void)
{
	const struct spnego_oid mechs[2] = { spnego_oid_krb5,
					     spnego_oid_ntlmssp };
	uint8_t tok[40] = { 0x4e }, mic[16] = { 1 };
	struct spnego_token t;
	uint32_t x = 99;
	size_t base, i, k;
	struct wcur w;
	int it;

	t_section("mutation fuzz (no crash; run with ASan)");
	wcur_init(&w, buf, sizeof(buf));
	T_EQ(spnego_encode_init(&w, mechs, 2, tok, sizeof(tok), mic, 16,
				SPNEGO_HINT_NAME), 0);
	base = w.off;
	for (it = 0; it < 30000; it++) {
		memcpy(buf2, buf, base);
		for (k = 0; k < 3; k++) {
			x = x * 1103515245 + 12345;
			i = (x >> 8) % base;
			buf2[i] = (uint8_t)(x >> 20);
		}
		if (!spnego_decode(buf2, (x >> 4) % (base + 1), &t) &&
		    t.type == SPNEGO_TOKEN_INIT)
			(void)spnego_mech_index(&t.init, &spnego_oid_ntlmssp);
	}
	T_ASSERT(1);
}

int main(void)
{
	known();
	roundtrip();
	malformed();
	fuzz();
	return t_done();
}
