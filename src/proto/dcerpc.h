/* SPDX-License-Identifier: MIT */
/*
 * Connection-oriented DCE/RPC PDUs (C706 chapter 12, [MS-RPCE] 2.2.2):
 * the common header, BIND / ALTER_CONTEXT and their acks, BIND_NAK,
 * REQUEST, RESPONSE and FAULT. Little-endian data representation only,
 * no authentication verifiers. Pure, bounds-checked codec.
 */
#ifndef RDAX_PROTO_DCERPC_H
#define RDAX_PROTO_DCERPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define DCERPC_HDR_LEN 16
#define DCERPC_REQ_HDR_LEN 24		/* REQUEST and RESPONSE */
#define DCERPC_FAULT_LEN 32
#define DCERPC_SYNTAX_LEN 20		/* UUID + version */
#define DCERPC_MIN_FRAG 1432u		/* smallest max_recv_frag allowed (C706) */

enum dcerpc_ptype {
	DCERPC_REQUEST = 0,
	DCERPC_RESPONSE = 2,
	DCERPC_FAULT = 3,
	DCERPC_BIND = 11,
	DCERPC_BIND_ACK = 12,
	DCERPC_BIND_NAK = 13,
	DCERPC_ALTER = 14,
	DCERPC_ALTER_RESP = 15,
	DCERPC_AUTH3 = 16,
	DCERPC_SHUTDOWN = 17,
	DCERPC_CO_CANCEL = 18,
	DCERPC_ORPHANED = 19,
};

#define DCERPC_PFC_FIRST_FRAG 0x01
#define DCERPC_PFC_LAST_FRAG 0x02
#define DCERPC_PFC_DID_NOT_EXECUTE 0x20
#define DCERPC_PFC_OBJECT_UUID 0x80

/* p_cont_def_result_t and p_provider_reason_t */
#define DCERPC_ACCEPT 0
#define DCERPC_PROVIDER_REJECT 2
#define DCERPC_NEGOTIATE_ACK 3
#define DCERPC_REASON_NONE 0
#define DCERPC_REASON_ABSTRACT 1	/* abstract syntax not supported */
#define DCERPC_REASON_TRANSFER 2	/* transfer syntaxes not supported */
#define DCERPC_REASON_LIMIT 3		/* local limit exceeded */
#define DCERPC_NAK_PROTOCOL 4		/* BIND_NAK: protocol version not supported */

/* Fault statuses ([MS-RPCE] 3.1.1.5.5, [MS-ERREF]) */
#define DCERPC_NCA_OP_RNG_ERROR 0x1C010002u
#define DCERPC_NCA_UNK_IF 0x1C010003u
#define DCERPC_NCA_PROTO_ERROR 0x1C01000Bu
#define DCERPC_FAULT_NDR 0x000006F7u	/* RPC_X_BAD_STUB_DATA */
#define DCERPC_FAULT_NO_MEMORY 0x1C00001Bu	/* nca_s_fault_remote_no_memory */

struct dcerpc_syntax {
	uint8_t uuid[16];		/* as on the wire (little-endian fields) */
	uint32_t version;		/* major | minor << 16 */
};

extern const struct dcerpc_syntax dcerpc_ndr20, dcerpc_ndr64;

struct dcerpc_hdr {
	uint8_t vers_minor;
	uint8_t ptype;
	uint8_t flags;
	uint16_t frag_len;
	uint16_t auth_len;
	uint32_t call_id;
};

/*
 * The common header of a PDU that starts at p: version 5.0 or 5.1,
 * little-endian ASCII IEEE data representation, frag_len at least the
 * header and no more than len holds. -EAGAIN: fewer than
 * DCERPC_HDR_LEN bytes, or the PDU is not all there yet (frag_len says
 * how much); -EBADMSG: not a PDU we can read.
 */
int dcerpc_hdr_decode(const uint8_t *p, size_t len, struct dcerpc_hdr *h);
void dcerpc_hdr_encode(struct wcur *w, const struct dcerpc_hdr *h);
/* Set frag_len of the PDU at pdu to its length n. */
void dcerpc_set_frag_len(uint8_t *pdu, size_t n);

struct dcerpc_bind {
	uint16_t max_xmit;
	uint16_t max_recv;
	uint32_t assoc_group;
	uint8_t n_ctx;
	const uint8_t *ctx;		/* n_ctx presentation contexts, checked */
};

struct dcerpc_ctx {
	uint16_t id;
	uint8_t n_xfer;
	struct dcerpc_syntax abstract;
	const uint8_t *xfer;		/* n_xfer syntaxes */
};

/* BIND or ALTER_CONTEXT: every context lies inside the PDU. */
int dcerpc_bind_decode(const uint8_t *pdu, const struct dcerpc_hdr *h,
		       struct dcerpc_bind *b);
/* The i-th context (i < n_ctx), and the j-th transfer syntax of one. */
void dcerpc_bind_ctx(const struct dcerpc_bind *b, unsigned int i, struct dcerpc_ctx *c);
void dcerpc_ctx_xfer(const struct dcerpc_ctx *c, unsigned int j, struct dcerpc_syntax *s);
bool dcerpc_syntax_eq(const struct dcerpc_syntax *a, const struct dcerpc_syntax *b);
/* A bind time feature negotiation syntax ([MS-RPCE] 3.3.1.5.3): its bits. */
bool dcerpc_is_btfn(const struct dcerpc_syntax *s, uint16_t *features);

struct dcerpc_result {
	uint16_t result;
	uint16_t reason;
	struct dcerpc_syntax xfer;
};

struct dcerpc_bind_ack {
	uint16_t max_xmit;
	uint16_t max_recv;
	uint32_t assoc_group;
	const char *sec_addr;		/* "\PIPE\srvsvc"; "" for ALTER_CONTEXT_RESP */
	uint8_t n;
	const struct dcerpc_result *res;
};

/* BIND_ACK or ALTER_CONTEXT_RESP (ptype), with frag_len set. */
void dcerpc_bind_ack_encode(struct wcur *w, uint8_t ptype, uint32_t call_id,
			    const struct dcerpc_bind_ack *a);
void dcerpc_bind_nak_encode(struct wcur *w, uint32_t call_id, uint16_t reason);

struct dcerpc_request {
	uint32_t alloc_hint;
	uint16_t ctx_id;
	uint16_t opnum;
	const uint8_t *stub;
	size_t stub_len;
};

int dcerpc_request_decode(const uint8_t *pdu, const struct dcerpc_hdr *h,
			  struct dcerpc_request *r);
/* One RESPONSE fragment carrying stub[0, n). */
void dcerpc_response_encode(struct wcur *w, uint32_t call_id, uint8_t flags,
			    uint16_t ctx_id, uint32_t alloc_hint,
			    const uint8_t *stub, size_t n);
void dcerpc_fault_encode(struct wcur *w, uint32_t call_id, uint16_t ctx_id,
			 uint32_t status);
/* Stub bytes per RESPONSE fragment for a max_xmit_frag: a multiple of 8. */
size_t dcerpc_frag_stub_max(uint16_t max_xmit);

#endif
