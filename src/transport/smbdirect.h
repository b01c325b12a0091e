/* SPDX-License-Identifier: MIT */
/*
 * SMB-Direct ([MS-SMBD]) over librdmacm and libibverbs, both roles.
 * Moves upper-layer messages (fragmented into data transfer messages
 * under SMBD credits) and RDMA Read/Write by buffer descriptor. Knows
 * nothing of SMB2.
 */
#ifndef RDAX_TRANSPORT_SMBDIRECT_H
#define RDAX_TRANSPORT_SMBDIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/smbd.h"
#include "transport/smbd_flow.h"
#include "transport/transport.h"

/* verbs objects pass through here by pointer only: no verbs header */
struct ibv_context;
struct ibv_pd;
struct ibv_mr;
struct ibv_mw;

#define SMBD_PORT_IB 445		/* IB, RoCE */
#define SMBD_PORT_IWARP 5445		/* iWARP shares TCP's port space */

/* struct smbd_params is in transport/smbd_flow.h */
void smbd_params_default(struct smbd_params *p);

/* What a connection negotiated, for stats and logs. */
struct smbd_info {
	uint32_t max_send_size;
	uint32_t max_recv_size;
	uint32_t max_fragmented_send;
	uint32_t max_fragmented_recv;
	uint32_t max_read_write;
	uint16_t send_credits;
	uint16_t peer_credits;		/* what we believe the peer holds */
	uint8_t initiator_depth;	/* ORD */
	uint8_t responder_resources;	/* IRD */
	char device[64];
	uint64_t rdma_read_bytes;	/* RDMA Read we issued */
	uint64_t rdma_write_bytes;	/* RDMA Write we issued */
	uint64_t inline_bytes_in;	/* upper-layer payload received */
	uint64_t inline_bytes_out;
	uint64_t fragments_in;
	uint64_t fragments_out;
	uint64_t credit_stalls;		/* sends that waited for credits */
};

/* ---- RDMA Read/Write ---- */

/* One local segment of registered memory. */
struct smbd_sge {
	void *addr;
	uint32_t len;
	uint32_t lkey;
};

struct smbd_rw {
	/* filled by the caller */
	void (*done)(struct smbd_rw *rw);
	void *arg;
	/* result: 0 or -EIO */
	int status;
	/* private */
	uint8_t wr_type;
	struct smbd_rw *next;
	bool write;
	const struct smbd_desc *d;
	int nd;
	const struct smbd_sge *sg;
	int nsg;
	uint32_t nwr;
	uint64_t bytes;
};

/*
 * Move data between local segments and the peer's buffers: write = RDMA
 * Write to the peer, else RDMA Read from it. The descriptor total must
 * equal the segment total. 0: queued, done() runs on completion (also
 * on failure or teardown, and at once if posting it fails); d and sg
 * must stay valid until then. Ops wait in order when the send queue is
 * full, and messages sent meanwhile wait behind them. <0: not queued.
 */
int smbd_rw_post(struct xprt *x, bool write, const struct smbd_desc *d,
		 int nd, const struct smbd_sge *sg, int nsg, struct smbd_rw *rw);

struct ibv_pd *smbd_pd(struct xprt *x);
/* The device of a connection. */
struct ibv_context *smbd_verbs(struct xprt *x);
/* Protection domains, and a device's name, for those that hold them. */
struct ibv_pd *smbd_pd_alloc(struct ibv_context *v);
void smbd_pd_free(struct ibv_pd *pd);
const char *smbd_dev_name(struct ibv_context *v);
void smbd_get_info(struct xprt *x, struct smbd_info *info);
/* Max local segments in one RDMA work request. */
int smbd_max_sge(struct xprt *x);

/* ---- server side ---- */

struct smbd_listener;
struct smbd_pending;

int smbd_listen(const char *addr, unsigned int port, int backlog,
		struct smbd_listener **out);
int smbd_listener_fd(const struct smbd_listener *l);
/* The device a listener is bound to; NULL for a wildcard address. */
struct ibv_context *smbd_listener_verbs(const struct smbd_listener *l);
/*
 * The devices n listeners use (every device for a wildcard one), at most
 * max, each once; how many.
 */
int smbd_listener_devices(struct smbd_listener *const *l, int n, struct ibv_context **devs,
			  int max);
/*
 * Drain CM events of a listener. Each connection request arrives as a
 * pending connection on its own event channel; cb must either
 * smbd_accept() it (on any thread) or smbd_pending_reject() it.
 */
int smbd_listener_process(struct smbd_listener *l,
			  void (*cb)(void *arg, struct smbd_pending *p),
			  void *arg);
void smbd_listener_close(struct smbd_listener **l);

/*
 * Get a PD (and the caller's per-device state) for the device of a
 * pending connection: pd_for(arg, verbs) returns the protection domain
 * to use, so that memory registered once per device serves every QP.
 */
typedef struct ibv_pd *(*smbd_pd_fn)(void *arg, struct ibv_context *verbs);

int smbd_accept(struct smbd_pending *p, int epfd, const struct smbd_params *prm,
		smbd_pd_fn pd_for, void *pd_arg, struct xprt **out);
void smbd_pending_reject(struct smbd_pending *p);
const char *smbd_pending_peer(const struct smbd_pending *p);

/* ---- client side (blocking with timeouts) ---- */

/*
 * timeout_ms < 0: no timeout. A host name that does not resolve gives
 * -ENXIO (or -EAGAIN), as tcp_connect; no RDMA path to it -EHOSTUNREACH.
 */
int smbd_connect(const char *host, unsigned int port,
		 const struct smbd_params *prm, int timeout_ms,
		 struct xprt **out);
/*
 * The same with the protection domain pd_for(pd_arg, verbs) gives for
 * the device the route resolved to (NULL from it: a PD of its own), so that
 * memory registered once per device serves every connection on it. The
 * PD stays the caller's: it must outlive the connection.
 */
int smbd_connect_pd(const char *host, unsigned int port,
		    const struct smbd_params *prm, int timeout_ms,
		    smbd_pd_fn pd_for, void *pd_arg, struct xprt **out);
/* Send one message (a copy is taken). */
int smbd_client_send(struct xprt *x, const void *msg, size_t len,
		     int timeout_ms);
/* Wait for the next whole message; *buf grows as needed. */
long smbd_client_recv(struct xprt *x, uint8_t **buf, size_t *cap,
		      int timeout_ms);
void smbd_client_destroy(struct xprt *x);
/*
 * Hand a connected client transport to an event loop: its descriptors
 * join epfd and complete messages go to x->on_msg from then on.
 */
int smbd_attach(struct xprt *x, int epfd);

/*
 * Client memory windows: bind a type 2 window over [addr, addr+len) of
 * mr for one I/O (posted before the request, so it is in place when
 * the server acts on the request), and invalidate it locally when the
 * server did not do it with Send-With-Invalidate.
 */
bool smbd_mw_supported(struct xprt *x);
int smbd_mw_bind(struct xprt *x, struct ibv_mw *mw, struct ibv_mr *mr,
		 void *addr, size_t len, unsigned int access, uint32_t *rkey);
int smbd_mw_invalidate(struct xprt *x, uint32_t rkey);
/* Did the last response received invalidate rkey remotely? */
bool smbd_was_invalidated(struct xprt *x, uint32_t rkey);

#endif
