// SPDX-License-Identifier: MIT
/*
 * MS-SMBD messages as an SMB-Direct peer receives them: the first four
 * bytes are the negotiated max_fragmented_size (LE32), the rest one
 * receive buffer, decoded as a negotiate request, a negotiate response
 * and a data transfer message ([MS-SMBD] 2.2, 3.1.5.8). Whatever decodes
 * is re-encoded and must decode to the same fields. Then the buffer, cut
 * at FUZZ_SEP into up to 16 messages, goes through a connected
 * smbd_flow: credits and reassembly as smbdirect.c runs them.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/smbd.h"
#include "transport/smbd_flow.h"

#define FLOW_MSGS 16
#define FLOW_MAX_FRAG (1u << 21)	/* keep reassembly buffers small */

static void negotiate(const uint8_t *p, size_t len)
{
	struct smbd_neg_req q, q2;
	struct smbd_neg_rsp r, r2;
	uint8_t b[SMBD_NEG_RSP_SIZE];
	int rc;

	/* zeroed, so memcmp of the structs ignores padding */
	memset(&q, 0, sizeof(q));
	memset(&q2, 0, sizeof(q2));
	memset(&r, 0, sizeof(r));
	memset(&r2, 0, sizeof(r2));
	rc = smbd_neg_req_decode(p, len, &q);
	FUZZ_ASSERT(rc == (len < SMBD_NEG_REQ_SIZE ? -EPROTO : 0));
	if (!rc) {
		smbd_neg_req_encode(b, &q);
		FUZZ_ASSERT(!smbd_neg_req_decode(b, SMBD_NEG_REQ_SIZE, &q2));
		FUZZ_ASSERT(!memcmp(&q, &q2, sizeof(q)));
		/* everything but the reserved field comes back */
		FUZZ_ASSERT(!memcmp(b, p, 4) && !memcmp(b + 6, p + 6, 14));
	}
	rc = smbd_neg_rsp_decode(p, len, &r);
	FUZZ_ASSERT(rc == (len < SMBD_NEG_RSP_SIZE ? -EPROTO : 0));
	if (!rc) {
		smbd_neg_rsp_encode(b, &r);
		FUZZ_ASSERT(!smbd_neg_rsp_decode(b, SMBD_NEG_RSP_SIZE, &r2));
		FUZZ_ASSERT(!memcmp(&r, &r2, sizeof(r)));
		FUZZ_ASSERT(!memcmp(b, p, 6) && !memcmp(b + 8, p + 8, 24));
	}
}

static void data_transfer(const uint8_t *p, size_t len, uint32_t maxfrag)
{
	struct smbd_data d, d2;
	uint8_t *b;
	size_t hl;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = smbd_data_decode(p, len, maxfrag, &d);
	FUZZ_ASSERT(rc == 0 || rc == -EPROTO);
	if (rc)
		return;
	FUZZ_ASSERT(len >= SMBD_DATA_MIN && d.credits_requested >= 1);
	FUZZ_ASSERT((uint64_t)d.data_length + d.remaining <= maxfrag);
	if (d.data_length) {
		FUZZ_ASSERT(d.data_offset % 8 == 0 &&
			    d.data_offset >= SMBD_DATA_MIN);
		FUZZ_ASSERT_INSIDE(p + d.data_offset, d.data_length, p, len);
		fuzz_touch(p + d.data_offset, d.data_length);
	}
	b = malloc(SMBD_DATA_OFFSET + (size_t)d.data_length);
	if (!b)
		return;
	hl = smbd_data_encode(b, &d);
	FUZZ_ASSERT(hl == (d.data_length ? SMBD_DATA_OFFSET : SMBD_DATA_MIN));
	if (d.data_length)
		memcpy(b + hl, p + d.data_offset, d.data_length);
	memset(&d2, 0, sizeof(d2));
	FUZZ_ASSERT(!smbd_data_decode(b, hl + d.data_length, maxfrag, &d2));
	FUZZ_ASSERT(d2.credits_requested == d.credits_requested &&
		    d2.credits_granted == d.credits_granted &&
		    d2.flags == d.flags && d2.remaining == d.remaining &&
		    d2.data_length == d.data_length);
	FUZZ_ASSERT(!d.data_length ||
		    !memcmp(b + d2.data_offset, p + d.data_offset, d.data_length));
	free(b);
}

static void flow_check(const struct smbd_flow *f)
{
	FUZZ_ASSERT(f->peer_credits >= 0);
	FUZZ_ASSERT(f->send_credits >= 0 && f->send_credits <= SMBD_CREDITS_MAX);
	FUZZ_ASSERT(f->recv_target >= 1 && f->recv_target <= f->recv_max);
	if (f->reasm_active)
		FUZZ_ASSERT(f->reasm_len < f->reasm_total &&
			    f->reasm_total <= f->max_frag_recv &&
			    f->reasm_total <= f->reasm_cap);
}

/* A stream of data messages into a server flow past negotiation. */
static void flow_stream(const uint8_t *p, size_t len, uint32_t maxfrag)
{
	static const struct smbd_params prm = {
		.recv_credit_max = 255, .send_credit_target = 255,
		.max_send_size = 8192, .max_recv_size = 8192,
	};
	struct fuzz_part parts[FLOW_MSGS];
	struct smbd_flow f;
	struct smbd_data d;
	uint8_t *copy, *msg;
	size_t n;
	int np, i, rc;

	smbd_flow_init(&f, &prm);
	smbd_flow_reposted(&f, f.recv_idle);
	f.max_frag_recv = maxfrag < FLOW_MAX_FRAG ? maxfrag : FLOW_MAX_FRAG;
	f.peer_credits = f.recv_posted;
	f.recv_target = f.recv_max;
	np = fuzz_split(p, len, parts, FLOW_MSGS);
	for (i = 0; i < np; i++) {
		copy = malloc(parts[i].len ? parts[i].len : 1);
		if (!copy)
			break;
		memcpy(copy, parts[i].p, parts[i].len);
		smbd_flow_recv_done(&f);
		rc = smbd_flow_recv(&f, copy, (uint32_t)parts[i].len, &d, &msg, &n);
		if (rc) {
			/* the connection goes, with a reason */
			FUZZ_ASSERT(rc == -EPROTO || rc == -ENOMEM);
			FUZZ_ASSERT(f.why && *f.why);
			FUZZ_ASSERT(!msg);
			free(copy);
			break;
		}
		flow_check(&f);
		if (msg) {
			FUZZ_ASSERT(n >= 1 && n <= f.max_frag_recv);
			FUZZ_ASSERT(fuzz_inside(msg, n, copy, parts[i].len) ||
				    (msg == f.reasm && n <= f.reasm_cap));
			fuzz_touch(msg, n);
			smbd_flow_msg_done(&f);
		}
		free(copy);
		smbd_flow_reposted(&f, f.recv_idle);
	}
	smbd_flow_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	uint32_t maxfrag;
	uint8_t *copy;
	size_t len;

	if (size < 4)
		return 0;
	maxfrag = get_le32(data);
	len = size - 4;
	/* an exact-size receive buffer */
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 4, len);
	p = copy;
	negotiate(p, len);
	data_transfer(p, len, maxfrag);
	data_transfer(p, len, SMBD_MIN_FRAGMENTED_SIZE);
	data_transfer(p, len, UINT32_MAX);
	flow_stream(p, len, maxfrag);
	free(copy);
	return 0;
}
