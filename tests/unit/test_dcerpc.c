// SPDX-License-Identifier: MIT
/* DCE/RPC and NDR codecs: known encodings, bounds, the srvsvc stubs. */
#include <errno.h>

#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "proto/srvsvc.h"
#include "t.h"

static uint8_t buf[8192];

static void ndr_strings(void)
{
	char s[16];
	struct ndr_w n;
	struct rcur r;

	t_section("NDR conformant varying strings");
	ndr_w_init(&n, buf, sizeof(buf));
	ndr_u16(&n, 7);
	ndr_string(&n, "ab");
	T_REQUIRE(!n.w.err);
	/* u16, two bytes of padding, max 3, offset 0, actual 3, "ab\0" */
	T_HEXEQ(buf, n.w.off, "07000000030000000000000003000000610062000000");
	rcur_init(&r, buf, n.w.off);
	T_EQ(ndr_get_u16(&r), 7);
	T_EQ(ndr_get_string(&r, s, sizeof(s)), 0);
	T_ASSERT(!strcmp(s, "ab") && r.off == n.w.off);
	/* too small for it */
	rcur_init(&r, buf, n.w.off);
	ndr_get_u16(&r);
	T_EQ(ndr_get_string(&r, s, 2), -E2BIG);
	/* truncated, offset not 0, actual > max */
	rcur_init(&r, buf, n.w.off - 1);
	ndr_get_u16(&r);
	T_EQ(ndr_get_string(&r, s, sizeof(s)), -EBADMSG);
	put_le32(buf + 8, 1);
	rcur_init(&r, buf, n.w.off);
	ndr_get_u16(&r);
	T_EQ(ndr_get_string(&r, s, sizeof(s)), -EBADMSG);
	put_le32(buf + 8, 0);
	put_le32(buf + 12, 4);
	rcur_init(&r, buf, n.w.off);
	ndr_get_u16(&r);
	T_EQ(ndr_get_string(&r, s, sizeof(s)), -EBADMSG);
	/* unique pointers: fresh referent ids, 0 for null */
	ndr_w_init(&n, buf, sizeof(buf));
	ndr_ptr(&n, true);
	ndr_ptr(&n, false);
	ndr_ptr(&n, true);
	T_HEXEQ(buf, n.w.off, "000002000000000004000200");
	/* a full buffer latches err */
	ndr_w_init(&n, buf, 10);
	ndr_string(&n, "abc");
	T_ASSERT(n.w.err);
}

static void header(void)
{
	struct dcerpc_hdr h = { .ptype = DCERPC_REQUEST, .flags = 3, .frag_len = 24,
				.call_id = 9 };
	struct dcerpc_hdr d;
	struct wcur w;

	t_section("common header");
	wcur_init(&w, buf, sizeof(buf));
	dcerpc_hdr_encode(&w, &h);
	wcur_zero(&w, 8);
	T_HEXEQ(buf, 16, "05000003100000001800000009000000");
	T_EQ(dcerpc_hdr_decode(buf, 24, &d), 0);
	T_ASSERT(d.ptype == DCERPC_REQUEST && d.flags == 3 && d.frag_len == 24 &&
		 d.call_id == 9);
	T_EQ(dcerpc_hdr_decode(buf, 15, &d), -EAGAIN);
	T_EQ(dcerpc_hdr_decode(buf, 20, &d), -EAGAIN);	/* not all there */
	buf[4] = 0;				/* big-endian */
	T_EQ(dcerpc_hdr_decode(buf, 24, &d), -EBADMSG);
	buf[4] = 0x10;
	buf[0] = 4;
	T_EQ(dcerpc_hdr_decode(buf, 24, &d), -EBADMSG);
	buf[0] = 5;
	put_le16(buf + 8, 12);			/* shorter than a header */
	T_EQ(dcerpc_hdr_decode(buf, 24, &d), -EBADMSG);
	put_le16(buf + 8, 24);
	put_le16(buf + 10, 9);			/* auth longer than the body */
	T_EQ(dcerpc_hdr_decode(buf, 24, &d), -EBADMSG);
}

static void bind(void)
{
	static const struct dcerpc_syntax abstract = { { 1, 2, 3 }, 3 };
	struct dcerpc_result res[2] = {
		{ DCERPC_ACCEPT, 0, dcerpc_ndr20 },
		{ DCERPC_PROVIDER_REJECT, DCERPC_REASON_TRANSFER, { { 0 }, 0 } },
	};
	struct dcerpc_bind_ack a = { 4280, 4280, 0x1234, "\\PIPE\\srvsvc", 2, res };
	struct dcerpc_hdr h = { .ptype = DCERPC_BIND, .flags = 3, .call_id = 1 };
	struct dcerpc_syntax x;
	struct dcerpc_bind b;
	struct dcerpc_ctx c;
	struct wcur w;
	uint16_t feat;

	t_section("BIND and BIND_ACK");
	wcur_init(&w, buf, sizeof(buf));
	dcerpc_hdr_encode(&w, &h);
	wcur_le16(&w, 4280);
	wcur_le16(&w, 1432);
	wcur_le32(&w, 0);
	wcur_u8(&w, 2);
	wcur_zero(&w, 3);
	wcur_le16(&w, 0);		/* context 0: NDR64 and NDR */
	wcur_u8(&w, 2);
	wcur_u8(&w, 0);
	wcur_bytes(&w, abstract.uuid, 16);
	wcur_le32(&w, abstract.version);
	wcur_bytes(&w, dcerpc_ndr64.uuid, 16);
	wcur_le32(&w, 1);
	wcur_bytes(&w, dcerpc_ndr20.uuid, 16);
	wcur_le32(&w, 2);
	wcur_le16(&w, 1);		/* context 1: feature negotiation */
	wcur_u8(&w, 1);
	wcur_u8(&w, 0);
	wcur_bytes(&w, abstract.uuid, 16);
	wcur_le32(&w, abstract.version);
	wcur_bytes(&w, "\x2c\x1c\xb7\x6c\x12\x98\x40\x45\x03\0\0\0\0\0\0\0", 16);
	wcur_le32(&w, 1);
	dcerpc_set_frag_len(buf, w.off);
	T_EQ(dcerpc_hdr_decode(buf, w.off, &h), 0);
	T_EQ(dcerpc_bind_decode(buf, &h, &b), 0);
	T_ASSERT(b.max_xmit == 4280 && b.max_recv == 1432 && b.n_ctx == 2);
	dcerpc_bind_ctx(&b, 0, &c);
	T_ASSERT(c.id == 0 && c.n_xfer == 2 && dcerpc_syntax_eq(&c.abstract, &abstract));
	dcerpc_ctx_xfer(&c, 1, &x);
	T_ASSERT(dcerpc_syntax_eq(&x, &dcerpc_ndr20));
	dcerpc_bind_ctx(&b, 1, &c);
	dcerpc_ctx_xfer(&c, 0, &x);
	T_ASSERT(c.id == 1 && dcerpc_is_btfn(&x, &feat) && feat == 3);
	T_ASSERT(!dcerpc_is_btfn(&dcerpc_ndr20, &feat));
	/* a context list that runs past the PDU */
	h.frag_len = (uint16_t)(w.off - 1);
	T_EQ(dcerpc_bind_decode(buf, &h, &b), -EBADMSG);

	wcur_init(&w, buf, sizeof(buf));
	dcerpc_bind_ack_encode(&w, DCERPC_BIND_ACK, 1, &a);
	T_REQUIRE(!w.err);
	/* 24 fixed, 2 + 13 address, 1 pad, 4 list header, 2 x 24 results */
	T_EQ(w.off, 24 + 16 + 4 + 48);
	T_EQ(get_le16(buf + 8), w.off);
	T_EQ(get_le16(buf + 24), 13);
	T_ASSERT(!memcmp(buf + 26, "\\PIPE\\srvsvc", 13));
	T_EQ(buf[40], 2);
	T_EQ(get_le16(buf + 44), DCERPC_ACCEPT);
	T_MEMEQ(buf + 48, dcerpc_ndr20.uuid, 16);
	T_EQ(get_le16(buf + 68), DCERPC_PROVIDER_REJECT);
	T_EQ(get_le16(buf + 70), DCERPC_REASON_TRANSFER);
}

static void request_fault(void)
{
	struct dcerpc_hdr h;
	struct dcerpc_request r;
	struct wcur w;

	t_section("REQUEST, RESPONSE, FAULT");
	wcur_init(&w, buf, sizeof(buf));
	dcerpc_response_encode(&w, 5, 3, 0, 4, (const uint8_t *)"abcd", 4);
	T_EQ(w.off, 28);
	buf[2] = DCERPC_REQUEST;
	put_le16(buf + 22, 15);		/* opnum */
	T_EQ(dcerpc_hdr_decode(buf, w.off, &h), 0);
	T_EQ(dcerpc_request_decode(buf, &h, &r), 0);
	T_ASSERT(r.opnum == 15 && r.stub_len == 4 && !memcmp(r.stub, "abcd", 4));
	h.flags |= DCERPC_PFC_OBJECT_UUID;	/* an object UUID it has no room for */
	T_EQ(dcerpc_request_decode(buf, &h, &r), -EBADMSG);
	wcur_init(&w, buf, sizeof(buf));
	dcerpc_fault_encode(&w, 7, 0, DCERPC_NCA_OP_RNG_ERROR);
	T_EQ(w.off, DCERPC_FAULT_LEN);
	T_HEXEQ(buf, w.off, "05000323100000002000000007000000"
			    "0000000000000000020001 1c00000000");
	T_EQ(dcerpc_frag_stub_max(4280), 4256);
	T_EQ(dcerpc_frag_stub_max(1432), 1408);
}

static void srvsvc(void)
{
	static const struct srvsvc_share shares[2] = {
		{ "data", STYPE_DISKTREE, "the data", "C:\\srv\\data", 0 },
		{ "IPC$", STYPE_IPC | STYPE_SPECIAL, "", "C:\\tmp", 0 },
	};
	struct srvsvc_getinfo_req g;
	struct srvsvc_enum_req e;
	char s[64];
	struct ndr_w n;
	struct rcur r;
	uint32_t level;

	t_section("srvsvc stubs");
	/* NetShareEnumAll level 1 as rpcclient sends it */
	ndr_w_init(&n, buf, sizeof(buf));
	ndr_ptr(&n, true);
	ndr_string(&n, "\\\\srv");
	ndr_u32(&n, 1);
	ndr_u32(&n, 1);
	ndr_ptr(&n, true);
	ndr_u32(&n, 0);
	ndr_ptr(&n, false);
	ndr_u32(&n, UINT32_MAX);
	ndr_ptr(&n, true);
	ndr_u32(&n, 0);
	T_EQ(srvsvc_enum_req_decode(buf, n.w.off, &e), 0);
	T_ASSERT(e.level == 1 && e.has_resume && e.max_buffer == UINT32_MAX);
	T_EQ(srvsvc_enum_req_decode(buf, n.w.off - 1, &e), -EBADMSG);
	/* NetShareGetInfo */
	ndr_w_init(&n, buf, sizeof(buf));
	ndr_ptr(&n, false);
	ndr_string(&n, "data");
	ndr_u32(&n, 502);
	T_EQ(srvsvc_getinfo_req_decode(buf, n.w.off, &g), 0);
	T_ASSERT(!strcmp(g.name, "data") && g.level == 502);
	/* NetServerGetInfo: no server name, level 101 */
	put_le32(buf, 0);
	put_le32(buf + 4, 101);
	T_EQ(srvsvc_level_req_decode(buf, 8, &level), 0);
	T_EQ(level, 101);
	T_EQ(srvsvc_level_req_decode(buf, 7, &level), -EBADMSG);

	/* the level 1 answer, read back field by field */
	e.has_resume = false;
	ndr_w_init(&n, buf, sizeof(buf));
	srvsvc_enum_rsp_encode(&n, &e, shares, 2);
	T_REQUIRE(!n.w.err);
	rcur_init(&r, buf, n.w.off);
	T_EQ(ndr_get_u32(&r), 1);		/* level */
	T_EQ(ndr_get_u32(&r), 1);		/* switch */
	T_ASSERT(ndr_get_u32(&r));		/* ctr1 */
	T_EQ(ndr_get_u32(&r), 2);		/* count */
	T_ASSERT(ndr_get_u32(&r));		/* array */
	T_EQ(ndr_get_u32(&r), 2);		/* conformance */
	T_ASSERT(ndr_get_u32(&r));		/* [0] name */
	T_EQ(ndr_get_u32(&r), STYPE_DISKTREE);
	T_ASSERT(ndr_get_u32(&r));		/* [0] comment */
	T_ASSERT(ndr_get_u32(&r));		/* [1] name */
	T_EQ(ndr_get_u32(&r), STYPE_IPC | STYPE_SPECIAL);
	T_ASSERT(ndr_get_u32(&r));
	T_ASSERT(!ndr_get_string(&r, s, sizeof(s)) && !strcmp(s, "data"));
	T_ASSERT(!ndr_get_string(&r, s, sizeof(s)) && !strcmp(s, "the data"));
	T_ASSERT(!ndr_get_string(&r, s, sizeof(s)) && !strcmp(s, "IPC$"));
	T_ASSERT(!ndr_get_string(&r, s, sizeof(s)) && !strcmp(s, ""));
	T_EQ(ndr_get_u32(&r), 2);		/* total */
	T_EQ(ndr_get_u32(&r), 0);		/* no resume handle */
	T_EQ(ndr_get_u32(&r), WERR_OK);
	T_ASSERT(!r.err && r.off == n.w.off);

	/* an unknown level: the empty arm and WERR_INVALID_LEVEL */
	e.level = 7;
	ndr_w_init(&n, buf, sizeof(buf));
	srvsvc_enum_rsp_encode(&n, &e, shares, 2);
	T_HEXEQ(buf, n.w.off, "07000000070000000000000000000000 7c000000");
	/* GetInfo of no share: a null arm */
	ndr_w_init(&n, buf, sizeof(buf));
	srvsvc_getinfo_rsp_encode(&n, 2, NULL, WERR_INVALID_NAME);
	T_HEXEQ(buf, n.w.off, "02000000000000007b000000");
}

int main(void)
{
	ndr_strings();
	header();
	bind();
	request_fault();
	srvsvc();
	return t_done();
}
