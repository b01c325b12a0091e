// SPDX-License-Identifier: MIT
/*
 * SPNEGO tokens (RFC 4178, [MS-SPNG]): spnego_decode on every input, every
 * pointer inside the input, and a re-encode/decode round trip of what
 * decoded (NegTokenInit with its mechanisms, token and MIC; NegTokenResp
 * with every field).
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/spnego.h"

#define PTR_INSIDE(p, n, base, len)                                         \
	do {                                                                \
		FUZZ_ASSERT_INSIDE(p, n, base, len);                        \
		fuzz_touch(p, n);                                           \
	} while (0)

static uint8_t buf[1 << 20];

static void same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	FUZZ_ASSERT(!a == !b);
	FUZZ_ASSERT(alen == blen);
	FUZZ_ASSERT(!alen || !memcmp(a, b, alen));
}

static void init_token(const struct spnego_init *in, const uint8_t *p,
		       size_t len)
{
	struct spnego_oid mechs[SPNEGO_MAX_MECHS];
	struct spnego_token t2;
	struct rcur r, seq;
	const uint8_t *v;
	unsigned int n = 0;
	struct wcur w;
	size_t l;
	int rc;

	PTR_INSIDE(in->mech_types, in->mech_types_len, p, len);
	PTR_INSIDE(in->req_flags, in->req_flags_len, p, len);
	PTR_INSIDE(in->token, in->token_len, p, len);
	PTR_INSIDE(in->mic, in->mic_len, p, len);
	PTR_INSIDE(in->hint_name, in->hint_name_len, p, len);
	PTR_INSIDE(in->hint_addr, in->hint_addr_len, p, len);
	FUZZ_ASSERT(in->mech_types && in->n_mechs >= 1 &&
		    in->n_mechs <= SPNEGO_MAX_MECHS);
	rc = spnego_mech_index(in, &spnego_oid_ntlmssp);
	FUZZ_ASSERT(rc == -ENOENT || (rc >= 0 && (unsigned int)rc < in->n_mechs));
	if (rc >= 0)
		FUZZ_ASSERT(in->n_mechs > (unsigned int)rc);

	/*
	 * Collect the OIDs again from the raw MechTypeList: decode accepted
	 * it, so it is SEQUENCE { OID... } with short or long lengths.
	 */
	rcur_init(&r, in->mech_types, in->mech_types_len);
	v = rcur_take(&r, 2);
	FUZZ_ASSERT(v && v[0] == 0x30);
	if (v[1] & 0x80)
		rcur_take(&r, v[1] & 0x7f);
	rcur_init(&seq, r.p + r.off, r.len - r.off);
	while (seq.off < seq.len && n < SPNEGO_MAX_MECHS) {
		size_t k;

		v = rcur_take(&seq, 2);
		FUZZ_ASSERT(v && v[0] == 0x06);
		l = v[1];
		if (l & 0x80) {
			const uint8_t *lb = rcur_take(&seq, l & 0x7f);

			FUZZ_ASSERT(lb);
			for (k = 0, l = 0; k < (v[1] & 0x7fu); k++)
				l = l << 8 | lb[k];
		}
		mechs[n].der = rcur_take(&seq, l);
		mechs[n].len = l;
		FUZZ_ASSERT(mechs[n].der);
		n++;
	}
	FUZZ_ASSERT(!seq.err && n == in->n_mechs);

	wcur_init(&w, buf, sizeof(buf));
	if (spnego_encode_init(&w, mechs, n, in->token, in->token_len,
			       in->mic, in->mic_len, NULL))
		return;
	FUZZ_ASSERT(!spnego_decode(buf, w.off, &t2));
	FUZZ_ASSERT(t2.type == SPNEGO_TOKEN_INIT);
	FUZZ_ASSERT(t2.init.n_mechs == n);
	same(in->token, in->token_len, t2.init.token, t2.init.token_len);
	same(in->mic, in->mic_len, t2.init.mic, t2.init.mic_len);
	FUZZ_ASSERT(spnego_mech_index(in, &spnego_oid_ntlmssp) ==
		    spnego_mech_index(&t2.init, &spnego_oid_ntlmssp));
}

static void resp_token(const struct spnego_resp *rs, const uint8_t *p,
		       size_t len)
{
	struct spnego_token t2;
	struct wcur w;

	PTR_INSIDE(rs->mech, rs->mech_len, p, len);
	PTR_INSIDE(rs->token, rs->token_len, p, len);
	PTR_INSIDE(rs->mic, rs->mic_len, p, len);
	FUZZ_ASSERT(rs->neg_state >= SPNEGO_STATE_NONE &&
		    rs->neg_state <= SPNEGO_REQUEST_MIC);
	spnego_oid_eq(rs->mech, rs->mech_len, &spnego_oid_ntlmssp);

	wcur_init(&w, buf, sizeof(buf));
	if (spnego_encode_resp(&w, rs))
		return;
	FUZZ_ASSERT(!spnego_decode(buf, w.off, &t2));
	FUZZ_ASSERT(t2.type == SPNEGO_TOKEN_RESP);
	FUZZ_ASSERT(t2.resp.neg_state == rs->neg_state);
	same(rs->mech, rs->mech_len, t2.resp.mech, t2.resp.mech_len);
	same(rs->token, rs->token_len, t2.resp.token, t2.resp.token_len);
	same(rs->mic, rs->mic_len, t2.resp.mic, t2.resp.mic_len);
	/* DER is canonical here: the same bytes come back */
	if (w.off == len)
		FUZZ_ASSERT(!memcmp(buf, p, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spnego_token t;
	int rc;

	rc = spnego_decode(data, size, &t);
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -EPROTONOSUPPORT);
	if (rc)
		return 0;
	if (t.type == SPNEGO_TOKEN_INIT)
		init_token(&t.init, data, size);
	else
		resp_token(&t.resp, data, size);
	return 0;
}
