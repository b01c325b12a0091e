// SPDX-License-Identifier: MIT
/* Connection-oriented DCE/RPC PDUs (dcerpc.h). */
#include <errno.h>
#include <string.h>

#include "proto/dcerpc.h"

#define DCERPC_VERS 5
#define DREP_LE_ASCII_IEEE 0x10		/* packed_drep[0]; [1] = 0: IEEE floats */
#define BIND_FIXED 28			/* header .. p_context_elem count */
#define CTX_FIXED 24			/* p_cont_id, n_transfer_syn, abstract */

/* 8a885d04-1ceb-11c9-9fe8-08002b104860 v2 */
const struct dcerpc_syntax dcerpc_ndr20 = {
	{ 0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
	  0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60 }, 2
};

/* 71710533-beba-4937-8319-b5dbef9ccc36 v1 */
const struct dcerpc_syntax dcerpc_ndr64 = {
	{ 0x33, 0x05, 0x71, 0x71, 0xba, 0xbe, 0x37, 0x49,
	  0x83, 0x19, 0xb5, 0xdb, 0xef, 0x9c, 0xcc, 0x36 }, 1
};

/* 6cb71c2c-9812-4540-: the bind time feature negotiation prefix */
static const uint8_t btfn_prefix[8] = { 0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45 };

int dcerpc_hdr_decode(const uint8_t *p, size_t len, struct dcerpc_hdr *h)
{
	if (len < DCERPC_HDR_LEN)
		return -EAGAIN;
	if (p[0] != DCERPC_VERS || p[1] > 1 || p[4] != DREP_LE_ASCII_IEEE || p[5])
		return -EBADMSG;
	h->vers_minor = p[1];
	h->ptype = p[2];
	h->flags = p[3];
	h->frag_len = get_le16(p + 8);
	h->auth_len = get_le16(p + 10);
	h->call_id = get_le32(p + 12);
	if (h->frag_len < DCERPC_HDR_LEN || h->auth_len > h->frag_len - DCERPC_HDR_LEN)
		return -EBADMSG;
	return h->frag_len > len ? -EAGAIN : 0;
}

void dcerpc_hdr_encode(struct wcur *w, const struct dcerpc_hdr *h)
{
	wcur_u8(w, DCERPC_VERS);
	wcur_u8(w, h->vers_minor);
	wcur_u8(w, h->ptype);
	wcur_u8(w, h->flags);
	wcur_u8(w, DREP_LE_ASCII_IEEE);
	wcur_zero(w, 3);
	wcur_le16(w, h->frag_len);
	wcur_le16(w, h->auth_len);
	wcur_le32(w, h->call_id);
}

void dcerpc_set_frag_len(uint8_t *pdu, size_t n)
{
	put_le16(pdu + 8, (uint16_t)n);
}

static void syntax_get(const uint8_t *p, struct dcerpc_syntax *s)
{
	memcpy(s->uuid, p, 16);
	s->version = get_le32(p + 16);
}

static void syntax_put(struct wcur *w, const struct dcerpc_syntax *s)
{
	wcur_bytes(w, s->uuid, 16);
	wcur_le32(w, s->version);
}

bool dcerpc_syntax_eq(const struct dcerpc_syntax *a, const struct dcerpc_syntax *b)
{
	return !memcmp(a->uuid, b->uuid, 16) && a->version == b->version;
}

bool dcerpc_is_btfn(const struct dcerpc_syntax *s, uint16_t *features)
{
	if (memcmp(s->uuid, btfn_prefix, sizeof(btfn_prefix)) || s->version != 1)
		return false;
	*features = get_le16(s->uuid + 8);
	return true;
}

int dcerpc_bind_decode(const uint8_t *pdu, const struct dcerpc_hdr *h,
		       struct dcerpc_bind *b)
{
	size_t end = (size_t)h->frag_len - h->auth_len, off;
	unsigned int i;
	uint8_t nx;

	if (h->auth_len || end < BIND_FIXED)
		return -EBADMSG;
	b->max_xmit = get_le16(pdu + 16);
	b->max_recv = get_le16(pdu + 18);
	b->assoc_group = get_le32(pdu + 20);
	b->n_ctx = pdu[24];
	b->ctx = pdu + BIND_FIXED;
	for (off = BIND_FIXED, i = 0; i < b->n_ctx; i++) {
		if (!range_ok(off, CTX_FIXED, end))
			return -EBADMSG;
		nx = pdu[off + 2];
		off += CTX_FIXED;
		if (!nx || !range_ok(off, (size_t)nx * DCERPC_SYNTAX_LEN, end))
			return -EBADMSG;
		off += (size_t)nx * DCERPC_SYNTAX_LEN;
	}
	return b->n_ctx ? 0 : -EBADMSG;
}

void dcerpc_bind_ctx(const struct dcerpc_bind *b, unsigned int i, struct dcerpc_ctx *c)
{
	const uint8_t *p = b->ctx;

	for (;;) {
		c->id = get_le16(p);
		c->n_xfer = p[2];
		syntax_get(p + 4, &c->abstract);
		c->xfer = p + CTX_FIXED;
		if (!i--)
			return;
		p = c->xfer + (size_t)c->n_xfer * DCERPC_SYNTAX_LEN;
	}
}

void dcerpc_ctx_xfer(const struct dcerpc_ctx *c, unsigned int j, struct dcerpc_syntax *s)
{
	syntax_get(c->xfer + (size_t)j * DCERPC_SYNTAX_LEN, s);
}

void dcerpc_bind_ack_encode(struct wcur *w, uint8_t ptype, uint32_t call_id,
			    const struct dcerpc_bind_ack *a)
{
	struct dcerpc_hdr h = {
		.ptype = ptype,
		.flags = DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
		.call_id = call_id,
	};
	size_t start = w->off, addr_len = *a->sec_addr ? strlen(a->sec_addr) + 1 : 0;
	unsigned int i;

	dcerpc_hdr_encode(w, &h);
	wcur_le16(w, a->max_xmit);
	wcur_le16(w, a->max_recv);
	wcur_le32(w, a->assoc_group);
	wcur_le16(w, (uint16_t)addr_len);
	wcur_bytes(w, a->sec_addr, addr_len);
	wcur_zero(w, ((w->off - start + 3) & ~(size_t)3) - (w->off - start));
	wcur_u8(w, a->n);
	wcur_zero(w, 3);
	for (i = 0; i < a->n; i++) {
		wcur_le16(w, a->res[i].result);
		wcur_le16(w, a->res[i].reason);
		syntax_put(w, &a->res[i].xfer);
	}
	if (!w->err)
		dcerpc_set_frag_len(w->p + start, w->off - start);
}

void dcerpc_bind_nak_encode(struct wcur *w, uint32_t call_id, uint16_t reason)
{
	struct dcerpc_hdr h = {
		.ptype = DCERPC_BIND_NAK,
		.flags = DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG,
		.frag_len = DCERPC_HDR_LEN + 8,
		.call_id = call_id,
	};

	dcerpc_hdr_encode(w, &h);
	wcur_le16(w, reason);
	wcur_u8(w, 1);			/* protocol versions supported: 5.0 */
	wcur_u8(w, DCERPC_VERS);
	wcur_u8(w, 0);
	wcur_zero(w, 3);
}

int dcerpc_request_decode(const uint8_t *pdu, const struct dcerpc_hdr *h,
			  struct dcerpc_request *r)
{
	size_t start = DCERPC_REQ_HDR_LEN, end = (size_t)h->frag_len - h->auth_len;

	if (h->auth_len)
		return -EBADMSG;	/* no security providers */
	if (h->flags & DCERPC_PFC_OBJECT_UUID)
		start += 16;
	if (end < start)
		return -EBADMSG;
	r->alloc_hint = get_le32(pdu + 16);
	r->ctx_id = get_le16(pdu + 20);
	r->opnum = get_le16(pdu + 22);
	r->stub = pdu + start;
	r->stub_len = end - start;
	return 0;
}

void dcerpc_response_encode(struct wcur *w, uint32_t call_id, uint8_t flags,
			    uint16_t ctx_id, uint32_t alloc_hint,
			    const uint8_t *stub, size_t n)
{
	struct dcerpc_hdr h = {
		.ptype = DCERPC_RESPONSE,
		.flags = flags,
		.frag_len = (uint16_t)(DCERPC_REQ_HDR_LEN + n),
		.call_id = call_id,
	};

	if (n > UINT16_MAX - DCERPC_REQ_HDR_LEN) {
		w->err = true;
		return;
	}
	dcerpc_hdr_encode(w, &h);
	wcur_le32(w, alloc_hint);
	wcur_le16(w, ctx_id);
	wcur_u8(w, 0);			/* cancel count */
	wcur_u8(w, 0);
	wcur_bytes(w, stub, n);
}

void dcerpc_fault_encode(struct wcur *w, uint32_t call_id, uint16_t ctx_id,
			 uint32_t status)
{
	struct dcerpc_hdr h = {
		.ptype = DCERPC_FAULT,
		.flags = DCERPC_PFC_FIRST_FRAG | DCERPC_PFC_LAST_FRAG |
			 DCERPC_PFC_DID_NOT_EXECUTE,
		.frag_len = DCERPC_FAULT_LEN,
		.call_id = call_id,
	};

	dcerpc_hdr_encode(w, &h);
	wcur_le32(w, 0);		/* alloc hint */
	wcur_le16(w, ctx_id);
	wcur_u8(w, 0);
	wcur_u8(w, 0);
	wcur_le32(w, status);
	wcur_le32(w, 0);
}

size_t dcerpc_frag_stub_max(uint16_t max_xmit)
{
	return ((size_t)max_xmit - DCERPC_REQ_HDR_LEN) & ~(size_t)7;
}
