/* SPDX-License-Identifier: MIT */
/*
 * MS-SMBD (SMB2 over RDMA) PDUs and RDMA buffer descriptors. Pure codec:
 * no verbs, no allocation; every length is checked against the buffer.
 */
#ifndef RDAX_PROTO_SMBD_H
#define RDAX_PROTO_SMBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define SMBD_VERSION 0x0100
#define SMBD_NEG_REQ_SIZE 20		/* [MS-SMBD] 2.2.1 */
#define SMBD_NEG_RSP_SIZE 32		/* [MS-SMBD] 2.2.2 */
#define SMBD_DATA_MIN 20		/* [MS-SMBD] 2.2.3, header without padding */
#define SMBD_DATA_OFFSET 24		/* payload offset Linux and Windows use */
#define SMBD_FLAG_RESPONSE_REQUESTED 0x0001
#define SMBD_MIN_RECEIVE_SIZE 128
#define SMBD_MIN_FRAGMENTED_SIZE 131072
#define SMBD_DESC_SIZE 16		/* [MS-SMBD] 2.2.3.1 buffer descriptor v1 */

#define SMBD_STATUS_SUCCESS 0x00000000u
#define SMBD_STATUS_NOT_SUPPORTED 0xC00000BBu

/* [MS-SMBD] 2.2.1 Negotiate Request */
struct smbd_neg_req {
	uint16_t min_version;
	uint16_t max_version;
	uint16_t credits_requested;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};

/* [MS-SMBD] 2.2.2 Negotiate Response */
struct smbd_neg_rsp {
	uint16_t min_version;
	uint16_t max_version;
	uint16_t negotiated_version;
	uint16_t credits_requested;
	uint16_t credits_granted;
	uint32_t status;
	uint32_t max_read_write_size;
	uint32_t preferred_send_size;
	uint32_t max_receive_size;
	uint32_t max_fragmented_size;
};

/* [MS-SMBD] 2.2.3 Data Transfer Message header */
struct smbd_data {
	uint16_t credits_requested;
	uint16_t credits_granted;
	uint16_t flags;
	uint32_t remaining;		/* RemainingDataLength */
	uint32_t data_offset;
	uint32_t data_length;
};

/* [MS-SMBD] 2.2.3.1 Buffer Descriptor V1 */
struct smbd_desc {
	uint64_t offset;		/* remote address */
	uint32_t token;			/* rkey */
	uint32_t length;
};

int smbd_neg_req_decode(const uint8_t *p, size_t len, struct smbd_neg_req *r);
void smbd_neg_req_encode(uint8_t p[SMBD_NEG_REQ_SIZE], const struct smbd_neg_req *r);
int smbd_neg_rsp_decode(const uint8_t *p, size_t len, struct smbd_neg_rsp *r);
void smbd_neg_rsp_encode(uint8_t p[SMBD_NEG_RSP_SIZE], const struct smbd_neg_rsp *r);

/*
 * Decode and validate a received data transfer message of len bytes
 * ([MS-SMBD] 3.1.5.8): CreditsRequested >= 1, 8-byte aligned
 * DataOffset, payload inside the message, and the logical message not
 * larger than max_fragmented. -EPROTO names a violation.
 */
int smbd_data_decode(const uint8_t *p, size_t len, uint32_t max_fragmented,
		     struct smbd_data *d);
/* Header of a data message (24 bytes with payload, 20 without). */
size_t smbd_data_encode(uint8_t *p, const struct smbd_data *d);

/*
 * A descriptor list of len bytes: count, and each descriptor checked
 * for a zero length or an offset + length that wraps. Returns the
 * number of descriptors, -EINVAL if malformed or more than max.
 */
int smbd_desc_decode(const uint8_t *p, size_t len, struct smbd_desc *out,
		     int max);
void smbd_desc_encode(uint8_t *p, const struct smbd_desc *d, int n);

#endif
