// SPDX-License-Identifier: MIT
/* SPNEGO (RFC 4178, [MS-SPNG]) minimal DER codec. Pure, bounds-checked. */
#include "proto/spnego.h"

#include <errno.h>
#include <string.h>

static const uint8_t oid_spnego[] = { 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };
static const uint8_t oid_ntlmssp[] = { 0x2b, 0x06, 0x01, 0x04, 0x01,
				       0x82, 0x37, 0x02, 0x02, 0x0a };
static const uint8_t oid_krb5[] = { 0x2a, 0x86, 0x48, 0x86, 0xf7,
				    0x12, 0x01, 0x02, 0x02 };
static const uint8_t oid_mskrb5[] = { 0x2a, 0x86, 0x48, 0x82, 0xf7,
				      0x12, 0x01, 0x02, 0x02 };

const struct spnego_oid spnego_oid_spnego = { oid_spnego, sizeof(oid_spnego) };
const struct spnego_oid spnego_oid_ntlmssp = { oid_ntlmssp,
					       sizeof(oid_ntlmssp) };
const struct spnego_oid spnego_oid_krb5 = { oid_krb5, sizeof(oid_krb5) };
const struct spnego_oid spnego_oid_mskrb5 = { oid_mskrb5, sizeof(oid_mskrb5) };

/* DER tags used here */
#define T_BITSTR 0x03
#define T_OCTSTR 0x04
#define T_OID 0x06
#define T_ENUM 0x0a
#define T_GENSTR 0x1b
#define T_SEQ 0x30
#define T_APP0 0x60
#define T_CTX(n) (0xa0 | (n))

struct tlv {
	uint8_t tag;
	const uint8_t *val;
	size_t len;
	const uint8_t *start; /* first byte of the tag */
	size_t tlv_len;       /* tag + length + value */
};

/* Read one TLV; definite lengths of at most 4 octets only. */
static int der_get(struct rcur *r, struct tlv *t)
{
	const uint8_t *start = r->p + r->off;
	const uint8_t *p;
	size_t len = 0;
	unsigned int i, n;

	p = rcur_take(r, 2);
	if (!p)
		return -EBADMSG;
	t->tag = p[0];
	if ((t->tag & 0x1f) == 0x1f)
		return -EBADMSG; /* multi-byte tag */
	if (p[1] < 0x80) {
		len = p[1];
	} else {
		n = p[1] & 0x7f;
		if (!n || n > 4)
			return -EBADMSG; /* indefinite or absurd */
		p = rcur_take(r, n);
		if (!p)
			return -EBADMSG;
		for (i = 0; i < n; i++)
			len = len << 8 | p[i];
	}
	t->val = rcur_take(r, len);
	if (!t->val)
		return -EBADMSG;
	t->len = len;
	t->start = start;
	t->tlv_len = (size_t)(t->val - start) + len;
	return 0;
}

static int der_expect(struct rcur *r, uint8_t tag, struct tlv *t)
{
	if (der_get(r, t) || t->tag != tag)
		return -EBADMSG;
	return 0;
}

/* The value of t must be exactly one TLV with the given tag. */
static int der_only(const struct tlv *t, uint8_t tag, struct tlv *in)
{
	struct rcur r;

	rcur_init(&r, t->val, t->len);
	if (der_expect(&r, tag, in) || r.off != r.len)
		return -EBADMSG;
	return 0;
}

/* Context-tagged element [n] of a SEQUENCE, strictly ascending. */
static int next_ctx(struct rcur *r, int *last, struct tlv *t)
{
	int n;

	if (der_get(r, t) || (t->tag & 0xe0) != 0xa0)
		return -EBADMSG;
	n = t->tag & 0x1f;
	if (n <= *last)
		return -EBADMSG;
	*last = n;
	return n;
}

static int decode_mech_types(const struct tlv *seq, struct spnego_init *in)
{
	struct rcur r;
	struct tlv oid;

	in->mech_types = seq->start;
	in->mech_types_len = seq->tlv_len;
	in->n_mechs = 0;
	rcur_init(&r, seq->val, seq->len);
	while (r.off < r.len) {
		if (der_expect(&r, T_OID, &oid) || !oid.len)
			return -EBADMSG;
		if (++in->n_mechs > SPNEGO_MAX_MECHS)
			return -EBADMSG;
	}
	return in->n_mechs ? 0 : -EBADMSG;
}

static int decode_hints(const struct tlv *seq, struct spnego_init *in)
{
	struct tlv t, v;
	struct rcur r;
	int n, last = -1;

	in->has_hints = true;
	rcur_init(&r, seq->val, seq->len);
	while (r.off < r.len) {
		n = next_ctx(&r, &last, &t);
		if (n == 0 && !der_only(&t, T_GENSTR, &v)) {
			in->hint_name = v.val;
			in->hint_name_len = v.len;
		} else if (n == 1 && !der_only(&t, T_OCTSTR, &v)) {
			in->hint_addr = v.val;
			in->hint_addr_len = v.len;
		} else {
			return -EBADMSG;
		}
	}
	return 0;
}

/* NegTokenInit / NegTokenInit2: the value of the [0] choice. */
static int decode_init(const struct tlv *choice, struct spnego_init *in)
{
	struct tlv seq, t, v;
	struct rcur r;
	int n, last = -1;

	memset(in, 0, sizeof(*in));
	if (der_only(choice, T_SEQ, &seq))
		return -EBADMSG;
	rcur_init(&r, seq.val, seq.len);
	while (r.off < r.len) {
		struct rcur c;

		n = next_ctx(&r, &last, &t);
		if (n < 0)
			return -EBADMSG;
		/* each element holds exactly one TLV */
		rcur_init(&c, t.val, t.len);
		if (der_get(&c, &v) || c.off != c.len)
			return -EBADMSG;
		switch (n) {
		case 0:
			if (v.tag != T_SEQ || decode_mech_types(&v, in))
				return -EBADMSG;
			break;
		case 1:
			if (v.tag != T_BITSTR)
				return -EBADMSG;
			in->req_flags = v.val;
			in->req_flags_len = v.len;
			break;
		case 2:
			if (v.tag != T_OCTSTR)
				return -EBADMSG;
			in->token = v.val;
			in->token_len = v.len;
			break;
		case 3:
			/* mechListMIC (RFC 4178) or negHints (NegTokenInit2) */
			if (v.tag == T_OCTSTR) {
				in->mic = v.val;
				in->mic_len = v.len;
			} else if (v.tag != T_SEQ || decode_hints(&v, in)) {
				return -EBADMSG;
			}
			break;
		case 4:
			/* NegTokenInit2 mechListMIC */
			if (v.tag != T_OCTSTR || in->mic)
				return -EBADMSG;
			in->mic = v.val;
			in->mic_len = v.len;
			break;
		default:
			return -EBADMSG;
		}
	}
	return in->mech_types ? 0 : -EBADMSG;
}

/* NegTokenResp: the value of the [1] choice. */
static int decode_resp(const struct tlv *choice, struct spnego_resp *rs)
{
	struct tlv seq, t, v;
	struct rcur r;
	int n, last = -1;

	memset(rs, 0, sizeof(*rs));
	rs->neg_state = SPNEGO_STATE_NONE;
	if (der_only(choice, T_SEQ, &seq))
		return -EBADMSG;
	rcur_init(&r, seq.val, seq.len);
	while (r.off < r.len) {
		n = next_ctx(&r, &last, &t);
		switch (n) {
		case 0:
			if (der_only(&t, T_ENUM, &v) || v.len != 1 ||
			    v.val[0] > SPNEGO_REQUEST_MIC)
				return -EBADMSG;
			rs->neg_state = v.val[0];
			break;
		case 1:
			if (der_only(&t, T_OID, &v) || !v.len)
				return -EBADMSG;
			rs->mech = v.val;
			rs->mech_len = v.len;
			break;
		case 2:
			if (der_only(&t, T_OCTSTR, &v))
				return -EBADMSG;
			rs->token = v.val;
			rs->token_len = v.len;
			break;
		case 3:
			if (der_only(&t, T_OCTSTR, &v))
				return -EBADMSG;
			rs->mic = v.val;
			rs->mic_len = v.len;
			break;
		default:
			return -EBADMSG;
		}
	}
	return 0;
}

bool spnego_oid_eq(const uint8_t *der, size_t len,
		   const struct spnego_oid *oid)
{
	return der && len == oid->len && !memcmp(der, oid->der, len);
}

int spnego_decode(const uint8_t *p, size_t len, struct spnego_token *out)
{
	struct tlv outer, oid, choice;
	struct rcur r, in;

	memset(out, 0, sizeof(*out));
	if (!p || !len)
		return -EBADMSG;
	rcur_init(&r, p, len);
	if (der_get(&r, &outer) || r.off != r.len)
		return -EBADMSG;
	switch (outer.tag) {
	case T_APP0:
		rcur_init(&in, outer.val, outer.len);
		if (der_expect(&in, T_OID, &oid))
			return -EBADMSG;
		if (!spnego_oid_eq(oid.val, oid.len, &spnego_oid_spnego))
			return -EPROTONOSUPPORT;
		if (der_expect(&in, T_CTX(0), &choice) || in.off != in.len)
			return -EBADMSG;
		out->type = SPNEGO_TOKEN_INIT;
		return decode_init(&choice, &out->init);
	case T_CTX(0):
		out->type = SPNEGO_TOKEN_INIT;
		return decode_init(&outer, &out->init);
	case T_CTX(1):
		out->type = SPNEGO_TOKEN_RESP;
		return decode_resp(&outer, &out->resp);
	default:
		return -EBADMSG;
	}
}

int spnego_mech_index(const struct spnego_init *init,
		      const struct spnego_oid *oid)
{
	struct tlv seq, t;
	struct rcur r;
	int i = 0;

	if (!init->mech_types)
		return -ENOENT;
	rcur_init(&r, init->mech_types, init->mech_types_len);
	if (der_expect(&r, T_SEQ, &seq))
		return -ENOENT;
	rcur_init(&r, seq.val, seq.len);
	while (r.off < r.len) {
		if (der_expect(&r, T_OID, &t))
			return -ENOENT;
		if (spnego_oid_eq(t.val, t.len, oid))
			return i;
		i++;
	}
	return -ENOENT;
}

/* Encoding: sizes are computed bottom-up, then written top-down. */
static size_t len_size(size_t n)
{
	if (n < 0x80)
		return 1;
	if (n < 0x100)
		return 2;
	if (n < 0x10000)
		return 3;
	if (n < 0x1000000)
		return 4;
	return 5;
}

static size_t tlv_size(size_t n)
{
	return 1 + len_size(n) + n;
}

static void put_hdr(struct wcur *w, uint8_t tag, size_t n)
{
	size_t ls = len_size(n), i;

	wcur_u8(w, tag);
	if (ls == 1) {
		wcur_u8(w, (uint8_t)n);
		return;
	}
	wcur_u8(w, (uint8_t)(0x80 | (ls - 1)));
	for (i = ls - 1; i > 0; i--)
		wcur_u8(w, (uint8_t)(n >> (8 * (i - 1))));
}

static void put_tlv(struct wcur *w, uint8_t tag, const void *v, size_t n)
{
	put_hdr(w, tag, n);
	if (n)
		wcur_bytes(w, v, n);
}

/* [n] { OCTET STRING v } */
static size_t ctx_octets_size(size_t n)
{
	return tlv_size(tlv_size(n));
}

static void put_ctx_octets(struct wcur *w, int ctx, const void *v, size_t n)
{
	put_hdr(w, T_CTX(ctx), tlv_size(n));
	put_tlv(w, T_OCTSTR, v, n);
}

static size_t mech_list_len(const struct spnego_oid *mechs, unsigned int n)
{
	size_t c = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		c += tlv_size(mechs[i].len);
	return c;
}

static int check_len(size_t n)
{
	/* keep every length well inside 32 bits */
	return n > 0x3fffffff ? -EINVAL : 0;
}

int spnego_encode_mech_types(struct wcur *w, const struct spnego_oid *mechs,
			     unsigned int n)
{
	unsigned int i;

	if (!n || n > SPNEGO_MAX_MECHS)
		return -EINVAL;
	put_hdr(w, T_SEQ, mech_list_len(mechs, n));
	for (i = 0; i < n; i++)
		put_tlv(w, T_OID, mechs[i].der, mechs[i].len);
	return w->err ? -ENOSPC : 0;
}

int spnego_encode_init(struct wcur *w, const struct spnego_oid *mechs,
		       unsigned int n, const uint8_t *token, size_t token_len,
		       const uint8_t *mic, size_t mic_len,
		       const char *hint_name)
{
	size_t mt, e0, e2 = 0, e3 = 0, em = 0, hn = 0, hs = 0, seq, body;

	if (!n || n > SPNEGO_MAX_MECHS || check_len(token_len) ||
	    check_len(mic_len))
		return -EINVAL;
	mt = tlv_size(mech_list_len(mechs, n));
	e0 = tlv_size(mt);
	if (token)
		e2 = ctx_octets_size(token_len);
	if (hint_name) {
		hn = tlv_size(strlen(hint_name));
		hs = tlv_size(tlv_size(hn));
		e3 = tlv_size(hs);
	}
	if (mic)
		em = ctx_octets_size(mic_len);
	seq = e0 + e2 + e3 + em;
	body = tlv_size(spnego_oid_spnego.len) + tlv_size(tlv_size(seq));

	put_hdr(w, T_APP0, body);
	put_tlv(w, T_OID, spnego_oid_spnego.der, spnego_oid_spnego.len);
	put_hdr(w, T_CTX(0), tlv_size(seq));
	put_hdr(w, T_SEQ, seq);
	put_hdr(w, T_CTX(0), mt);
	spnego_encode_mech_types(w, mechs, n);
	if (token)
		put_ctx_octets(w, 2, token, token_len);
	if (hint_name) {
		put_hdr(w, T_CTX(3), hs);
		put_hdr(w, T_SEQ, tlv_size(hn));
		put_hdr(w, T_CTX(0), hn);
		put_tlv(w, T_GENSTR, hint_name, strlen(hint_name));
	}
	if (mic)
		put_ctx_octets(w, hint_name ? 4 : 3, mic, mic_len);
	return w->err ? -ENOSPC : 0;
}

int spnego_encode_resp(struct wcur *w, const struct spnego_resp *r)
{
	size_t seq = 0;

	if ((r->token && check_len(r->token_len)) ||
	    (r->mic && check_len(r->mic_len)) ||
	    (r->mech && check_len(r->mech_len)) ||
	    r->neg_state > SPNEGO_REQUEST_MIC)
		return -EINVAL;
	if (r->neg_state >= 0)
		seq += tlv_size(tlv_size(1));
	if (r->mech)
		seq += tlv_size(tlv_size(r->mech_len));
	if (r->token)
		seq += ctx_octets_size(r->token_len);
	if (r->mic)
		seq += ctx_octets_size(r->mic_len);

	put_hdr(w, T_CTX(1), tlv_size(seq));
	put_hdr(w, T_SEQ, seq);
	if (r->neg_state >= 0) {
		uint8_t st = (uint8_t)r->neg_state;

		put_hdr(w, T_CTX(0), tlv_size(1));
		put_tlv(w, T_ENUM, &st, 1);
	}
	if (r->mech) {
		put_hdr(w, T_CTX(1), tlv_size(r->mech_len));
		put_tlv(w, T_OID, r->mech, r->mech_len);
	}
	if (r->token)
		put_ctx_octets(w, 2, r->token, r->token_len);
	if (r->mic)
		put_ctx_octets(w, 3, r->mic, r->mic_len);
	return w->err ? -ENOSPC : 0;
}
