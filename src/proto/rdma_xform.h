/* SPDX-License-Identifier: MIT */
/*
 * The SMB 3.1.1 RDMA transform ([MS-SMB2] 2.2.3.1.6, 2.2.43, 2.2.43.1):
 * the channel info of a READ or WRITE with Channel
 * SMB2_CHANNEL_RDMA_TRANSFORM, and the Buffer of a READ response with
 * SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM. Pure codec, bounds-checked.
 *
 * rdax lays a transform out as (docs/rdma-transform.md):
 *   SMB2_RDMA_TRANSFORM (16)  RdmaDescriptorOffset/Length, inner Channel,
 *                             TransformCount = 1, Reserved1/2
 *   SMB2_RDMA_CRYPTO_TRANSFORM (8 + SignatureLength + NonceLength,
 *                             padded to 8)
 *   descriptors               at RdmaDescriptorOffset (none in a response)
 */
#ifndef RDAX_PROTO_RDMA_XFORM_H
#define RDAX_PROTO_RDMA_XFORM_H

#include <stddef.h>
#include <stdint.h>

/* RDMATransformIds of the negotiate context (2.2.3.1.6) */
#define SMB2_RDMA_TRANSFORM_NONE 0x0000
#define SMB2_RDMA_TRANSFORM_ENCRYPTION 0x0001
#define SMB2_RDMA_TRANSFORM_SIGNING 0x0002
/* TransformType of SMB2_RDMA_CRYPTO_TRANSFORM (2.2.43.1) */
#define SMB2_RDMA_XFORM_TYPE_ENCRYPTION 0x0001
#define SMB2_RDMA_XFORM_TYPE_SIGNING 0x0002
/* READ response Flags (2.2.20) */
#define SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM 0x00000001u

#define SMB2_RDMA_XFORM_HDR 16
#define SMB2_RDMA_CRYPTO_HDR 8
#define SMB2_RDMA_XFORM_SIG_MAX 16
#define SMB2_RDMA_XFORM_NONCE_MAX 16
/* the largest transform rdax writes: headers, 16 + 16, descriptors */
#define SMB2_RDMA_XFORM_MAX(desc_len) (SMB2_RDMA_XFORM_HDR + SMB2_RDMA_CRYPTO_HDR + \
				       SMB2_RDMA_XFORM_SIG_MAX + SMB2_RDMA_XFORM_NONCE_MAX + \
				       (desc_len))

struct smb2_rdma_xform {
	uint32_t channel;		/* inner: NONE, RDMA_V1, RDMA_V1_INVALIDATE */
	const uint8_t *desc;		/* decode: the descriptors, NULL if none */
	uint32_t desc_len;
	uint16_t type;			/* SMB2_RDMA_XFORM_TYPE_* */
	uint16_t sig_len;
	uint16_t nonce_len;
	uint8_t sig[SMB2_RDMA_XFORM_SIG_MAX];
	uint8_t nonce[SMB2_RDMA_XFORM_NONCE_MAX];
};

/*
 * Decode the transform in p[0..len): exactly one crypto transform of a
 * known type, SignatureLength and NonceLength at most 16, the inner
 * channel one of the three, its descriptors inside len and after the
 * crypto transform (none for SMB2_CHANNEL_NONE). 0 or -EBADMSG.
 */
int smb2_rdma_xform_decode(const uint8_t *p, size_t len, struct smb2_rdma_xform *x);

/* Bytes smb2_rdma_xform_encode writes for x with desc_len bytes of descriptors. */
size_t smb2_rdma_xform_size(const struct smb2_rdma_xform *x, uint32_t desc_len);

/*
 * Write x and desc_len bytes of descriptors (desc) at p, which holds cap
 * bytes: the length written, or -ENOSPC / -EINVAL (lengths over 16).
 */
int smb2_rdma_xform_encode(uint8_t *p, size_t cap, const struct smb2_rdma_xform *x,
			   const uint8_t *desc, uint32_t desc_len);

/*
 * The receiver's nonce check (rdax's, the spec does not say how): the
 * peer's nonces are a 64-bit counter (bytes 0..7) and a salt fixed for
 * the session. A nonce is taken once, and only if its counter is above
 * the highest seen less SMB2_XFORM_WINDOW (requests on several
 * channels and several workers arrive a little out of order).
 */
#define SMB2_XFORM_WINDOW 1024

struct smb2_xform_replay {
	uint64_t top;			/* highest counter seen + 1; 0: none yet */
	uint64_t seen[SMB2_XFORM_WINDOW / 64];	/* bit ctr % WINDOW: ctr seen */
	uint8_t salt[8];
	uint16_t salt_len;
};

/* 0 and the nonce recorded, or -EBADMSG: reused, too old, another salt. */
int smb2_xform_replay_check(struct smb2_xform_replay *r, const uint8_t *nonce,
			    uint16_t nonce_len);

#endif
