/* SPDX-License-Identifier: MIT */
/*
 * SMB-Direct ([MS-SMBD] 3.1.5) flow control without verbs: negotiation
 * of sizes and first credits, send credits, the credits granted to the
 * peer against the receives posted for them, and reassembly of
 * fragmented messages. transport/smbdirect.c drives it from its
 * completions; tests drive it directly.
 *
 * Credits: every message costs the sender one credit, and a credit is a
 * promise of a posted receive. So grants never exceed the receives
 * posted minus the credits outstanding, and the last credit is never
 * spent on a message that grants nothing.
 */
#ifndef RDAX_TRANSPORT_SMBD_FLOW_H
#define RDAX_TRANSPORT_SMBD_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/smbd.h"

#define SMBD_CREDITS_MAX 0xFFFF		/* a 16-bit credit field */
#define SMBD_POLL_BATCH 32		/* completions between reposts */
#define SMBD_REASM_KEEP (1u << 20)	/* larger buffers go after use */

struct smbd_params {
	uint16_t recv_credit_max;	/* receives posted and granted */
	uint16_t send_credit_target;	/* credits we ask the peer for */
	uint16_t send_slots;		/* registered send buffers */
	uint32_t max_send_size;		/* our preference, before min() */
	uint32_t max_recv_size;
	uint32_t max_read_write_size;	/* server: offered per RDMA op */
	int keepalive_ms;
	int negotiate_timeout_ms;
};

struct smbd_flow {
	/* ours, from the parameters */
	uint16_t recv_max;		/* receive buffers */
	uint16_t credit_target;		/* credits we ask the peer for */
	uint32_t pref_send_size;
	uint32_t pref_recv_size;	/* also the receive buffer size */
	uint32_t pref_rw_size;
	/* negotiated */
	uint32_t max_send_size;
	uint32_t max_recv_size;
	uint32_t max_frag_send;
	uint32_t max_frag_recv;
	uint32_t max_rw;
	/* credits */
	int send_credits;		/* granted by the peer, not yet spent */
	int peer_credits;		/* granted to the peer, not yet used */
	int recv_target;		/* credits the peer asked for */
	/* receive buffers: posted + idle == recv_max */
	int recv_posted;		/* receives the peer may fill */
	int recv_idle;			/* consumed, waiting to be reposted */
	/* reassembly of one fragmented message */
	uint8_t *reasm;
	size_t reasm_cap, reasm_len, reasm_total;
	bool reasm_active;
	const char *why;		/* the last protocol violation */
};

/* Every receive buffer idle (to be posted), no credits either way. */
void smbd_flow_init(struct smbd_flow *f, const struct smbd_params *p);
void smbd_flow_free(struct smbd_flow *f);

/* ---- negotiation ([MS-SMBD] 3.1.5.2, 3.1.5.6, 3.1.5.7) ---- */

/* Client: the negotiate request, the first message. */
void smbd_flow_neg_request(const struct smbd_flow *f, struct smbd_neg_req *r);

/*
 * Server: the peer's negotiate request of len bytes (its receive already
 * counted done). Fills *rsp and takes the sizes and first grant: 0, send
 * rsp; -EPROTONOSUPPORT, send rsp (a refusal) and disconnect; -EPROTO,
 * disconnect. f->why names the violation.
 */
int smbd_flow_server_negotiate(struct smbd_flow *f, const uint8_t *buf,
			       uint32_t len, struct smbd_neg_rsp *rsp);

/* Client: the server's negotiate response. 0 or -EPROTO (f->why). */
int smbd_flow_client_negotiated(struct smbd_flow *f, const uint8_t *buf,
				uint32_t len);

/* ---- sending ---- */

/* Posted receives not yet covered by a credit: all that may be granted. */
int smbd_flow_recv_ungranted(const struct smbd_flow *f);
/* Credits to grant in the next message. */
int smbd_flow_grant_now(const struct smbd_flow *f);
/* May a message granting grant credits go out? */
bool smbd_flow_can_send(const struct smbd_flow *f, int grant);
/* Nothing to send: is an empty message worth it to refill the peer? */
bool smbd_flow_refill_due(const struct smbd_flow *f, int grant);
/* A data message granting granted credits was posted. */
void smbd_flow_on_send(struct smbd_flow *f, int granted);

/* ---- receiving ---- */

/*
 * A receive completed. The caller keeps idle buffers in a stack of
 * recv_max slots: the buffer goes to slot recv_idle before this call.
 */
void smbd_flow_recv_done(struct smbd_flow *f);
/* n idle receives, the top n of the stack, were posted again. */
void smbd_flow_reposted(struct smbd_flow *f, int n);

/*
 * The credit fields of a data message: uses one of the peer's credits,
 * adds its grants to ours, takes its credit target. 0 or -EPROTO.
 */
int smbd_flow_on_data(struct smbd_flow *f, const struct smbd_data *d);

/*
 * The payload of data message d in buf, into the upper-layer message:
 * *msg and *len are the whole message once it is complete (inside buf
 * for a single fragment, else the reassembly buffer), else *msg is NULL.
 * 0, -EPROTO or -ENOMEM (f->why).
 */
int smbd_flow_reasm(struct smbd_flow *f, const struct smbd_data *d,
		    uint8_t *buf, uint8_t **msg, size_t *len);
/* The message from smbd_flow_reasm was delivered: drop a large buffer. */
void smbd_flow_msg_done(struct smbd_flow *f);

/*
 * A data transfer message of len bytes in a receive buffer ([MS-SMBD]
 * 3.1.5.8): decode and check it against the negotiated sizes, then
 * smbd_flow_on_data() and smbd_flow_reasm(). *d gets the header.
 */
int smbd_flow_recv(struct smbd_flow *f, uint8_t *buf, uint32_t len,
		   struct smbd_data *d, uint8_t **msg, size_t *msg_len);

#endif
