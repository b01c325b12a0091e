// SPDX-License-Identifier: MIT
/*
 * MS-SMBD messages as an SMB-Direct peer receives them: the first four
 * bytes are the negotiated max_fragmented_size (LE32), the rest one
 * receive buffer, decoded as a negotiate request, a negotiate response
 * and a data transfer message ([MS-SMBD] 2.2, 3.1.5.8). Whatever decodes
 * is re-encoded and must decode to the same fields.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/smbd.h"

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
	free(copy);
	return 0;
}
