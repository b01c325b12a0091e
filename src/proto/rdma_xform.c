// SPDX-License-Identifier: MIT
/* SMB2_RDMA_TRANSFORM and SMB2_RDMA_CRYPTO_TRANSFORM ([MS-SMB2] 2.2.43). */
#include <errno.h>
#include <string.h>

#include "proto/rdma_xform.h"
#include "proto/smb2.h"
#include "util/bytes.h"

static size_t crypto_size(const struct smb2_rdma_xform *x)
{
	return align8(SMB2_RDMA_CRYPTO_HDR + (size_t)x->sig_len + x->nonce_len);
}

static bool channel_ok(uint32_t ch)
{
	return ch == SMB2_CHANNEL_NONE || ch == SMB2_CHANNEL_RDMA_V1 ||
	       ch == SMB2_CHANNEL_RDMA_V1_INVALIDATE;
}

int smb2_rdma_xform_decode(const uint8_t *p, size_t len, struct smb2_rdma_xform *x)
{
	uint16_t doff, dlen;
	size_t end;

	memset(x, 0, sizeof(*x));
	if (len < SMB2_RDMA_XFORM_HDR + SMB2_RDMA_CRYPTO_HDR)
		return -EBADMSG;
	doff = get_le16(p);
	dlen = get_le16(p + 2);
	x->channel = get_le32(p + 4);
	/* rdax sends one crypto transform; more has no meaning for it */
	if (!channel_ok(x->channel) || get_le16(p + 8) != 1)
		return -EBADMSG;
	p += SMB2_RDMA_XFORM_HDR;
	x->type = get_le16(p);
	x->sig_len = get_le16(p + 2);
	x->nonce_len = get_le16(p + 4);
	if ((x->type != SMB2_RDMA_XFORM_TYPE_ENCRYPTION &&
	     x->type != SMB2_RDMA_XFORM_TYPE_SIGNING) ||
	    x->sig_len > SMB2_RDMA_XFORM_SIG_MAX || x->nonce_len > SMB2_RDMA_XFORM_NONCE_MAX)
		return -EBADMSG;
	/* the padding may be cut at the end of a message */
	if (!range_ok(SMB2_RDMA_XFORM_HDR + SMB2_RDMA_CRYPTO_HDR,
		      (uint64_t)x->sig_len + x->nonce_len, len))
		return -EBADMSG;
	memcpy(x->sig, p + SMB2_RDMA_CRYPTO_HDR, x->sig_len);
	memcpy(x->nonce, p + SMB2_RDMA_CRYPTO_HDR + x->sig_len, x->nonce_len);
	if (x->channel == SMB2_CHANNEL_NONE)
		return 0;	/* offset and length ignored, 2.2.43 */
	end = SMB2_RDMA_XFORM_HDR + crypto_size(x);
	if (!dlen || doff < end || !range_ok(doff, dlen, len))
		return -EBADMSG;
	x->desc = p - SMB2_RDMA_XFORM_HDR + doff;
	x->desc_len = dlen;
	return 0;
}

size_t smb2_rdma_xform_size(const struct smb2_rdma_xform *x, uint32_t desc_len)
{
	return SMB2_RDMA_XFORM_HDR + crypto_size(x) + desc_len;
}

int smb2_rdma_xform_encode(uint8_t *p, size_t cap, const struct smb2_rdma_xform *x,
			   const uint8_t *desc, uint32_t desc_len)
{
	size_t doff = SMB2_RDMA_XFORM_HDR + crypto_size(x);
	size_t n = doff + desc_len;
	uint8_t *c = p + SMB2_RDMA_XFORM_HDR;

	if (x->sig_len > SMB2_RDMA_XFORM_SIG_MAX || x->nonce_len > SMB2_RDMA_XFORM_NONCE_MAX ||
	    desc_len > UINT16_MAX || (desc_len && x->channel == SMB2_CHANNEL_NONE))
		return -EINVAL;
	if (n > cap)
		return -ENOSPC;
	memset(p, 0, n);
	put_le16(p, desc_len ? (uint16_t)doff : 0);
	put_le16(p + 2, (uint16_t)desc_len);
	put_le32(p + 4, x->channel);
	put_le16(p + 8, 1);
	put_le16(c, x->type);
	put_le16(c + 2, x->sig_len);
	put_le16(c + 4, x->nonce_len);
	memcpy(c + SMB2_RDMA_CRYPTO_HDR, x->sig, x->sig_len);
	memcpy(c + SMB2_RDMA_CRYPTO_HDR + x->sig_len, x->nonce, x->nonce_len);
	if (desc_len)
		memcpy(p + doff, desc, desc_len);
	return (int)n;
}

int smb2_xform_replay_check(struct smb2_xform_replay *r, const uint8_t *nonce,
			    uint16_t nonce_len)
{
	uint16_t salt_len;
	uint64_t ctr, back;

	if (nonce_len < 9 || nonce_len > 8 + sizeof(r->salt))
		return -EBADMSG;
	salt_len = nonce_len - 8;
	ctr = get_le64(nonce);
	if (ctr == UINT64_MAX)
		return -EBADMSG;
	if (!r->top) {
		memcpy(r->salt, nonce + 8, salt_len);
		r->salt_len = salt_len;
	} else if (salt_len != r->salt_len || memcmp(r->salt, nonce + 8, salt_len)) {
		return -EBADMSG;
	}
	if (ctr + 1 > r->top) {
		/* forget the counters the window moves past */
		for (back = r->top; back < ctr + 1 && back < r->top + SMB2_XFORM_WINDOW; back++)
			r->seen[back / 64 % (SMB2_XFORM_WINDOW / 64)] &= ~(1ull << (back % 64));
		r->top = ctr + 1;
	} else if (r->top - 1 - ctr >= SMB2_XFORM_WINDOW) {
		return -EBADMSG;
	}
	if (r->seen[ctr / 64 % (SMB2_XFORM_WINDOW / 64)] >> (ctr % 64) & 1)
		return -EBADMSG;
	r->seen[ctr / 64 % (SMB2_XFORM_WINDOW / 64)] |= 1ull << (ctr % 64);
	return 0;
}
