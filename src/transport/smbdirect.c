// SPDX-License-Identifier: MIT
/*
 * SMB-Direct transport ([MS-SMBD]) on librdmacm + libibverbs.
 *
 * Per connection: one RC QP, one CQ with a completion channel, receive
 * and send buffers allocated and registered once. Credits follow
 * [MS-SMBD] 3.1.5 (the accounting is transport/smbd_flow.c): every
 * message costs a send credit; the last credit is never spent on a
 * message that grants nothing; fragments of one upper-layer message are
 * never interleaved with anything else; receives are reposted in
 * batches and granted in the next message.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "transport/smbdirect.h"
#include "util/list.h"
#include "util/log.h"

#define SMBD_DEFAULT_CREDITS 255
/*
 * Both roles: transport retries as usual; no RNR retries, since credits
 * guarantee a posted receive and an RNR NAK means a broken peer.
 */
#define SMBD_CONN_PARAM { .retry_count = 6, .rnr_retry_count = 0 }
#define SMBD_DEFAULT_SEND_SLOTS 64
#define SMBD_DEFAULT_SIZE 8192
#define SMBD_DEFAULT_RW (8u << 20)
#define SMBD_RW_WRS 512			/* send queue room for RDMA ops */
#define SMBD_MAX_SGE 16
#define SMBD_INV_RING 8

enum { WR_RECV = 1, WR_SEND, WR_RW, WR_MW };
enum { SRC_CM = 0, SRC_CQ = 1 };

enum smbd_state {
	SMBD_CONNECTING,
	SMBD_NEGOTIATING,
	SMBD_CONNECTED,
	SMBD_ERROR,
};

struct smbd_recv {
	uint8_t wr_type;
	uint8_t *buf;
};

struct smbd_send {
	uint8_t wr_type;
	uint8_t *buf;
	struct smbd_send *next_free;
};

struct smbd_conn {
	struct xprt x;
	struct xprt_ev ev_cm, ev_cq;
	bool server;
	enum smbd_state state;
	struct smbd_params prm;
	struct rdma_cm_id *id;
	struct rdma_event_channel *cm_ch;
	struct ibv_pd *pd;
	bool own_pd;
	struct ibv_comp_channel *comp_ch;
	struct ibv_cq *cq;
	bool armed;			/* the next completion raises an event */
	struct ibv_qp *qp;
	int max_sge;
	bool mw_ok;
	uint8_t ord, ird;
	/* negotiated sizes, credits, posted receives, reassembly */
	struct smbd_flow flow;
	/* receive side */
	uint8_t *recv_mem;
	struct ibv_mr *recv_mr;
	struct smbd_recv *recvs;
	int nrecv;
	/* consumed, waiting to be reposted: flow.recv_idle of them */
	struct smbd_recv **repost;
	/* send side */
	uint8_t *send_mem;
	struct ibv_mr *send_mr;
	struct smbd_send *sends;
	struct smbd_send *send_free;
	int sq_used;			/* send queue entries in use */
	int sq_cap;
	struct xbuf *tx_head, *tx_tail;
	size_t tx_queued;
	bool keepalive_rsp;		/* peer asked for a response */
	bool keepalive_sent;
	uint64_t last_rx_ms;
	uint64_t keepalive_at_ms;
	/* RDMA ops waiting for send-queue room, in order */
	struct smbd_rw *rw_head, *rw_tail;
	int rw_active;
	/* client: the messages received, for smbd_client_recv */
	uint8_t *cl_msg;
	size_t cl_cap, cl_len;
	bool cl_have;
	uint32_t inv_ring[SMBD_INV_RING];
	int inv_pos;
	struct smbd_info info;
	char errbuf[128];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void smbd_params_default(struct smbd_params *p)
{
	p->recv_credit_max = SMBD_DEFAULT_CREDITS;
	p->send_credit_target = SMBD_DEFAULT_CREDITS;
	p->send_slots = SMBD_DEFAULT_SEND_SLOTS;
	p->max_send_size = SMBD_DEFAULT_SIZE;
	p->max_recv_size = SMBD_DEFAULT_SIZE;
	p->max_read_write_size = SMBD_DEFAULT_RW;
	p->keepalive_ms = 120000;
	p->negotiate_timeout_ms = 120000;
}

static int fail(struct smbd_conn *c, const char *why)
{
	if (c->state != SMBD_ERROR)
		log_ratelimited(LOG_WARN, "%s: SMB-Direct: %s, disconnecting",
				c->x.peer, why);
	c->state = SMBD_ERROR;
	return -EPROTO;
}

/* ---- buffers ---- */

static int alloc_buffers(struct smbd_conn *c)
{
	int i;

	c->nrecv = c->prm.recv_credit_max;
	c->recv_mem = aligned_alloc(4096, (size_t)c->nrecv * c->prm.max_recv_size);
	c->recvs = calloc((size_t)c->nrecv, sizeof(*c->recvs));
	c->repost = calloc((size_t)c->nrecv, sizeof(*c->repost));
	c->send_mem = aligned_alloc(4096, (size_t)c->prm.send_slots * c->prm.max_send_size);
	c->sends = calloc(c->prm.send_slots, sizeof(*c->sends));
	if (!c->recv_mem || !c->recvs || !c->repost || !c->send_mem || !c->sends)
		return -ENOMEM;
	c->recv_mr = ibv_reg_mr(c->pd, c->recv_mem,
				(size_t)c->nrecv * c->prm.max_recv_size,
				IBV_ACCESS_LOCAL_WRITE);
	if (!c->recv_mr)
		return -errno;
	c->send_mr = ibv_reg_mr(c->pd, c->send_mem,
				(size_t)c->prm.send_slots * c->prm.max_send_size, 0);
	if (!c->send_mr)
		return -errno;
	for (i = 0; i < c->nrecv; i++) {
		c->recvs[i].wr_type = WR_RECV;
		c->recvs[i].buf = c->recv_mem + (size_t)i * c->prm.max_recv_size;
		c->repost[i] = &c->recvs[i];
	}
	for (i = 0; i < c->prm.send_slots; i++) {
		c->sends[i].wr_type = WR_SEND;
		c->sends[i].buf = c->send_mem + (size_t)i * c->prm.max_send_size;
		c->sends[i].next_free = c->send_free;
		c->send_free = &c->sends[i];
	}
	return 0;
}

static void free_buffers(struct smbd_conn *c)
{
	if (c->recv_mr)
		ibv_dereg_mr(c->recv_mr);
	if (c->send_mr)
		ibv_dereg_mr(c->send_mr);
	free(c->recv_mem);
	free(c->recvs);
	free(c->repost);
	free(c->send_mem);
	free(c->sends);
	smbd_flow_free(&c->flow);
	free(c->cl_msg);
}

/* Post every consumed receive buffer again, in one batch. */
static int repost_receives(struct smbd_conn *c)
{
	struct ibv_recv_wr wrs[64], *bad;
	struct ibv_sge sges[64];
	int n, i, ret;

	while (c->flow.recv_idle) {
		n = c->flow.recv_idle < 64 ? c->flow.recv_idle : 64;
		for (i = 0; i < n; i++) {
			struct smbd_recv *r = c->repost[c->flow.recv_idle - 1 - i];

			sges[i].addr = (uintptr_t)r->buf;
			sges[i].length = c->prm.max_recv_size;
			sges[i].lkey = c->recv_mr->lkey;
			wrs[i].wr_id = (uintptr_t)r;
			wrs[i].sg_list = &sges[i];
			wrs[i].num_sge = 1;
			wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		}
		ret = ibv_post_recv(c->qp, wrs, &bad);
		if (ret)
			return -ret;
		smbd_flow_reposted(&c->flow, n);
	}
	return 0;
}

/* ---- sending ---- */

static int post_send(struct smbd_conn *c, struct smbd_send *s, size_t len,
		     bool inv, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf,
		.length = (uint32_t)len,
		.lkey = c->send_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)s,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	if (inv)
		wr.invalidate_rkey = rkey;
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return -ret;
	c->sq_used++;
	return 0;
}

/* A send buffer, send queue room and credits for a message granting grant. */
static bool can_send(struct smbd_conn *c, int grant)
{
	if (!c->send_free || c->sq_used >= c->sq_cap)
		return false;
	return smbd_flow_can_send(&c->flow, grant);
}

/* Copy n bytes at offset off of an xbuf's (data, tail) concatenation. */
static void xbuf_copy(const struct xbuf *b, size_t off, uint8_t *dst, size_t n)
{
	if (off < b->len) {
		size_t k = b->len - off < n ? b->len - off : n;

		memcpy(dst, b->data + off, k);
		dst += k;
		off += k;
		n -= k;
	}
	if (n)
		memcpy(dst, b->tail + (off - b->len), n);
}

static int send_data_msg(struct smbd_conn *c, const uint8_t *payload,
			 uint32_t len, uint32_t remaining, uint16_t flags,
			 bool inv, uint32_t rkey)
{
	struct smbd_send *s = c->send_free;
	struct smbd_data d = { 0 };
	size_t hdr;
	int ret;

	d.credits_requested = c->prm.send_credit_target;
	d.credits_granted = (uint16_t)smbd_flow_grant_now(&c->flow);
	d.flags = flags;
	d.remaining = remaining;
	d.data_length = len;
	hdr = smbd_data_encode(s->buf, &d);
	if (len && payload)
		memcpy(s->buf + hdr, payload, len);
	else if (len)
		xbuf_copy(c->tx_head, c->tx_head->off, s->buf + hdr, len);
	ret = post_send(c, s, hdr + len, inv, rkey);
	if (ret)
		return ret;
	c->send_free = s->next_free;
	smbd_flow_on_send(&c->flow, d.credits_granted);
	c->info.fragments_out++;
	c->info.inline_bytes_out += len;
	return 0;
}

/* Push queued messages, fragment by fragment, as credits allow. */
static int push(struct smbd_conn *c)
{
	uint32_t room = c->flow.max_send_size - SMBD_DATA_OFFSET;
	struct xbuf *b;
	int ret;

	/*
	 * Not past RDMA ops waiting for room: an answer goes after the
	 * Writes it reports on the send queue (RC ordering does the rest).
	 */
	if (c->state != SMBD_CONNECTED || c->rw_head)
		return 0;
	while ((b = c->tx_head)) {
		size_t left = b->len + b->tail_len - b->off;
		uint32_t n = left < room ? (uint32_t)left : room;
		bool last = n == left;

		if (!can_send(c, smbd_flow_grant_now(&c->flow))) {
			c->info.credit_stalls++;
			return 0;
		}
		ret = send_data_msg(c, NULL, n, (uint32_t)(left - n),
				    0, last && b->invalidate, b->invalidate_rkey);
		if (ret)
			return ret;
		b->off += n;
		c->tx_queued -= n;
		if (!last)
			continue;
		c->tx_head = b->next;
		if (!c->tx_head)
			c->tx_tail = NULL;
		c->x.stats.msgs_out++;
		c->x.stats.bytes_out += b->len + b->tail_len;
		b->release(b);
	}
	/* nothing queued: an empty message for a keep-alive or a refill */
	for (;;) {
		int g = smbd_flow_grant_now(&c->flow);
		bool refill = smbd_flow_refill_due(&c->flow, g);

		if (!c->keepalive_rsp && !refill)
			break;
		if (!can_send(c, g))
			break;
		ret = send_data_msg(c, NULL, 0, 0, 0, false, 0);
		if (ret)
			return ret;
		c->keepalive_rsp = false;
	}
	return 0;
}

static int smbd_send(struct xprt *x, struct xbuf *b)
{
	struct smbd_conn *c = (struct smbd_conn *)x;

	if (x->dead || c->state == SMBD_ERROR) {
		b->release(b);
		return -ENOTCONN;
	}
	if (b->len + b->tail_len > c->flow.max_frag_send) {
		b->release(b);
		return -EMSGSIZE;
	}
	b->off = 0;
	b->next = NULL;
	if (c->tx_tail)
		c->tx_tail->next = b;
	else
		c->tx_head = b;
	c->tx_tail = b;
	c->tx_queued += b->len + b->tail_len;
	return push(c);
}

/* ---- RDMA read/write ---- */

static int rw_wrs_needed(struct smbd_conn *c, const struct smbd_rw *rw)
{
	int i, j = 0, n = 0;
	uint32_t soff = 0;

	/* count WRs: split at descriptor edges and at max_sge segments */
	for (i = 0; i < rw->nd; i++) {
		uint32_t left = rw->d[i].length;

		while (left) {
			int sge = 0;

			while (left && sge < c->max_sge && j < rw->nsg) {
				uint32_t take = rw->sg[j].len - soff;

				if (take > left)
					take = left;
				left -= take;
				soff += take;
				if (soff == rw->sg[j].len) {
					j++;
					soff = 0;
				}
				sge++;
			}
			n++;
			if (!sge)
				return -EINVAL;
		}
	}
	return n;
}

static int rw_issue(struct smbd_conn *c, struct smbd_rw *rw)
{
	struct ibv_send_wr wrs[32], *bad;
	struct ibv_sge sges[32][SMBD_MAX_SGE];
	int i, j = 0, k = 0, ret;
	uint32_t soff = 0;

	for (i = 0; i < rw->nd; i++) {
		uint32_t left = rw->d[i].length;
		uint64_t raddr = rw->d[i].offset;

		while (left) {
			struct ibv_send_wr *w = &wrs[k];
			uint32_t wlen = 0;
			int sge = 0;

			while (left && sge < c->max_sge && j < rw->nsg) {
				uint32_t take = rw->sg[j].len - soff;

				if (take > left)
					take = left;
				sges[k][sge].addr = (uintptr_t)rw->sg[j].addr + soff;
				sges[k][sge].length = take;
				sges[k][sge].lkey = rw->sg[j].lkey;
				left -= take;
				soff += take;
				wlen += take;
				if (soff == rw->sg[j].len) {
					j++;
					soff = 0;
				}
				sge++;
			}
			memset(w, 0, sizeof(*w));
			w->sg_list = sges[k];
			w->num_sge = sge;
			w->opcode = rw->write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
			w->wr.rdma.remote_addr = raddr;
			w->wr.rdma.rkey = rw->d[i].token;
			raddr += wlen;
			k++;
			if (k == 32 || (!left && i + 1 == rw->nd)) {
				bool final = !left && i + 1 == rw->nd;

				if (final) {
					wrs[k - 1].send_flags = IBV_SEND_SIGNALED;
					wrs[k - 1].wr_id = (uintptr_t)&rw->wr_type;
				}
				for (int q = 0; q + 1 < k; q++)
					wrs[q].next = &wrs[q + 1];
				wrs[k - 1].next = NULL;
				ret = ibv_post_send(c->qp, wrs, &bad);
				if (ret)
					return -ret;
				c->sq_used += k;
				k = 0;
			}
		}
	}
	if (rw->write)
		c->info.rdma_write_bytes += rw->bytes;
	else
		c->info.rdma_read_bytes += rw->bytes;
	c->rw_active++;
	return 0;
}

/* Start waiting RDMA ops while the send queue has room, in order. */
static int rw_kick(struct smbd_conn *c)
{
	struct smbd_rw *rw;
	int ret;

	while ((rw = c->rw_head)) {
		if (c->sq_used + (int)rw->nwr > c->sq_cap)
			return 0;
		c->rw_head = rw->next;
		if (!c->rw_head)
			c->rw_tail = NULL;
		ret = rw_issue(c, rw);
		if (ret) {
			fail(c, "posting an RDMA op failed");
			rw->status = -EIO;
			rw->done(rw);
			return ret;
		}
	}
	return 0;
}

int smbd_rw_post(struct xprt *x, bool write, const struct smbd_desc *d,
		 int nd, const struct smbd_sge *sg, int nsg, struct smbd_rw *rw)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	uint64_t dt = 0, st = 0;
	int i, n;

	for (i = 0; i < nd; i++)
		dt += d[i].length;
	for (i = 0; i < nsg; i++)
		st += sg[i].len;
	if (!nd || dt != st)
		return -EINVAL;
	if (c->state != SMBD_CONNECTED)
		return -ENOTCONN;
	rw->wr_type = WR_RW;
	rw->write = write;
	rw->d = d;
	rw->nd = nd;
	rw->sg = sg;
	rw->nsg = nsg;
	rw->status = 0;
	rw->bytes = dt;
	rw->next = NULL;
	n = rw_wrs_needed(c, rw);
	if (n < 0)
		return n;
	if (n > c->sq_cap / 2)
		return -E2BIG;
	rw->nwr = (uint32_t)n;
	if (c->rw_tail)
		c->rw_tail->next = rw;
	else
		c->rw_head = rw;
	c->rw_tail = rw;
	/* queued: a failure to post it is reported through done() */
	rw_kick(c);
	return 0;
}

/* ---- receiving ---- */

static void deliver_client(struct smbd_conn *c, const uint8_t *msg, size_t len)
{
	if (len > c->cl_cap) {
		uint8_t *p = realloc(c->cl_msg, len);

		if (!p) {
			fail(c, "out of memory for a message");
			return;
		}
		c->cl_msg = p;
		c->cl_cap = len;
	}
	memcpy(c->cl_msg, msg, len);
	c->cl_len = len;
	c->cl_have = true;
}

static int deliver(struct smbd_conn *c, uint8_t *msg, size_t len)
{
	c->x.stats.msgs_in++;
	c->x.stats.bytes_in += len;
	c->info.inline_bytes_in += len;
	if (!c->x.on_msg) {
		deliver_client(c, msg, len);
		return 0;
	}
	return c->x.on_msg(c->x.upper, msg, len);
}

static int handle_data(struct smbd_conn *c, uint8_t *buf, uint32_t len)
{
	struct smbd_data d;
	uint8_t *msg;
	size_t n;
	int ret;

	if (smbd_flow_recv(&c->flow, buf, len, &d, &msg, &n))
		return fail(c, c->flow.why);
	c->info.fragments_in++;
	if (d.flags & SMBD_FLAG_RESPONSE_REQUESTED)
		c->keepalive_rsp = true;
	if (!msg)
		return 0;
	ret = deliver(c, msg, n);
	smbd_flow_msg_done(&c->flow);
	return ret;
}

/* Server: [MS-SMBD] 3.1.5.6 / 3.1.5.7 for the first message. */
static int server_negotiate(struct smbd_conn *c, const uint8_t *buf, uint32_t len)
{
	struct smbd_flow *f = &c->flow;
	struct smbd_send *s = c->send_free;
	struct smbd_neg_rsp rsp;
	int ret;

	ret = smbd_flow_server_negotiate(f, buf, len, &rsp);
	if (ret == -EPROTONOSUPPORT) {
		smbd_neg_rsp_encode(s->buf, &rsp);
		post_send(c, s, SMBD_NEG_RSP_SIZE, false, 0);
	}
	if (ret)
		return fail(c, f->why);
	smbd_neg_rsp_encode(s->buf, &rsp);
	ret = post_send(c, s, SMBD_NEG_RSP_SIZE, false, 0);
	if (ret)
		return ret;
	c->send_free = s->next_free;
	c->state = SMBD_CONNECTED;
	pr_info("%s: SMB-Direct negotiated: send %u recv %u fragmented %u/%u rw %u",
		c->x.peer, f->max_send_size, f->max_recv_size, f->max_frag_send,
		f->max_frag_recv, f->max_rw);
	return 0;
}

/* Client: [MS-SMBD] 3.1.5.7 validation of the response. */
static int client_negotiated(struct smbd_conn *c, const uint8_t *buf, uint32_t len)
{
	if (smbd_flow_client_negotiated(&c->flow, buf, len))
		return fail(c, c->flow.why);
	c->state = SMBD_CONNECTED;
	return 0;
}

static int handle_recv(struct smbd_conn *c, struct ibv_wc *wc)
{
	struct smbd_recv *r = (struct smbd_recv *)(uintptr_t)wc->wr_id;
	int ret = 0;

	c->repost[c->flow.recv_idle] = r;
	smbd_flow_recv_done(&c->flow);
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			return -ECONNRESET;
		snprintf(c->errbuf, sizeof(c->errbuf), "receive failed: %s",
			 ibv_wc_status_str(wc->status));
		return fail(c, c->errbuf);
	}
	c->last_rx_ms = now_ms();
	c->keepalive_sent = false;
	/*
	 * rxe passes the kernel's flag value (4) for "with invalidate"
	 * instead of IBV_WC_WITH_INV (8); accept both on RC receives.
	 */
	if (wc->wc_flags & IBV_WC_WITH_INV ||
	    (wc->wc_flags & 4 && !(wc->wc_flags & IBV_WC_WITH_IMM)))
		c->inv_ring[c->inv_pos++ % SMBD_INV_RING] = wc->invalidated_rkey;
	switch (c->state) {
	case SMBD_NEGOTIATING:
		ret = c->server ? server_negotiate(c, r->buf, wc->byte_len)
				: client_negotiated(c, r->buf, wc->byte_len);
		break;
	case SMBD_CONNECTED:
		ret = handle_data(c, r->buf, wc->byte_len);
		break;
	default:
		ret = fail(c, "message in an unexpected state");
	}
	return ret;
}

static int handle_wc(struct smbd_conn *c, struct ibv_wc *wc)
{
	uint8_t type = *(uint8_t *)(uintptr_t)wc->wr_id;
	struct smbd_send *s;
	struct smbd_rw *rw;

	switch (type) {
	case WR_RECV:
		return handle_recv(c, wc);
	case WR_SEND:
		s = (struct smbd_send *)(uintptr_t)wc->wr_id;
		s->next_free = c->send_free;
		c->send_free = s;
		c->sq_used--;
		if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR) {
			snprintf(c->errbuf, sizeof(c->errbuf), "send failed: %s",
				 ibv_wc_status_str(wc->status));
			return fail(c, c->errbuf);
		}
		return 0;
	case WR_RW:
		rw = container_of((uint8_t *)(uintptr_t)wc->wr_id, struct smbd_rw,
				  wr_type);
		c->sq_used -= (int)rw->nwr;
		c->rw_active--;
		rw->status = wc->status == IBV_WC_SUCCESS ? 0 : -EIO;
		if (rw->status && wc->status != IBV_WC_WR_FLUSH_ERR) {
			snprintf(c->errbuf, sizeof(c->errbuf), "RDMA %s failed: %s",
				 rw->write ? "write" : "read",
				 ibv_wc_status_str(wc->status));
			fail(c, c->errbuf);
		}
		rw->done(rw);
		return c->state == SMBD_ERROR ? -EIO : 0;
	case WR_MW:
		c->sq_used--;
		return wc->status == IBV_WC_SUCCESS ? 0 : fail(c, "memory window operation failed");
	default:
		return fail(c, "unknown completion");
	}
}

/* Drain the CQ; then repost receives and push in one batch. Returns the completions. */
static int poll_cq(struct smbd_conn *c)
{
	struct ibv_wc wcs[SMBD_POLL_BATCH];
	int n, i, ret = 0, err = 0, got = 0;

	do {
		n = ibv_poll_cq(c->cq, SMBD_POLL_BATCH, wcs);
		if (n < 0)
			return -EIO;
		got += n;
		for (i = 0; i < n; i++) {
			ret = handle_wc(c, &wcs[i]);
			if (ret && !err)
				err = ret;
		}
		if (err)
			return err;
		if (c->state == SMBD_ERROR)
			return -EPROTO;
		/*
		 * Repost each batch: a long drain (requests served inline)
		 * must not leave the peer's credits without receives, nor
		 * our answers with nothing to grant.
		 */
		ret = repost_receives(c);
		if (ret)
			return ret;
	} while (n == SMBD_POLL_BATCH);
	if (!got)
		return 0;
	ret = rw_kick(c);
	if (ret)
		return ret;
	ret = push(c);
	return ret ? ret : got;
}

static int arm_cq(struct smbd_conn *c)
{
	if (c->armed)
		return 0;
	if (ibv_req_notify_cq(c->cq, 0))
		return -EIO;
	c->armed = true;
	return 0;
}

static int handle_cq_event(struct smbd_conn *c)
{
	struct ibv_cq *cq;
	void *ctx;
	int ret;

	if (ibv_get_cq_event(c->comp_ch, &cq, &ctx))
		return errno == EAGAIN ? 0 : -errno;
	ibv_ack_cq_events(cq, 1);
	c->armed = false;
	/* a spinning owner polls on and arms before it sleeps */
	if (!c->x.spin) {
		ret = arm_cq(c);
		if (ret)
			return ret;
	}
	ret = poll_cq(c);
	if (ret < 0 || c->x.spin)
		return ret < 0 ? ret : 0;
	/* completions that raced with re-arming */
	ret = poll_cq(c);
	return ret < 0 ? ret : 0;
}

static int smbd_poll(struct xprt *x, bool arm)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	int ret, got;

	if (c->state != SMBD_CONNECTED && c->state != SMBD_NEGOTIATING)
		return 0;
	if (arm) {
		ret = arm_cq(c);
		if (ret)
			return ret;
	}
	got = poll_cq(c);
	if (got >= 0 && c->state == SMBD_ERROR)
		got = -EPROTO;
	return got;
}

static int handle_cm_event(struct smbd_conn *c)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	if (rdma_get_cm_event(c->cm_ch, &ev))
		return errno == EAGAIN ? 0 : -errno;
	type = ev->event;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->state == SMBD_CONNECTING)
			c->state = SMBD_NEGOTIATING;
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return -ECONNRESET;
	default:
		return 0;
	}
}

static int smbd_handle_events(struct xprt *x, uint32_t events, int src)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	int ret;

	ret = src == SRC_CM ? handle_cm_event(c) : handle_cq_event(c);
	if (!ret && c->state == SMBD_ERROR)
		ret = -EPROTO;
	return ret;
}

static int smbd_tick(struct xprt *x, uint64_t now)
{
	struct smbd_conn *c = (struct smbd_conn *)x;

	if (c->state == SMBD_NEGOTIATING && c->server &&
	    now - c->last_rx_ms > (uint64_t)c->prm.negotiate_timeout_ms)
		return fail(c, "no negotiate request in time");
	if (c->state != SMBD_CONNECTED || c->prm.keepalive_ms <= 0)
		return 0;
	if (c->keepalive_sent) {
		if (now - c->keepalive_at_ms > (uint64_t)c->prm.keepalive_ms)
			return fail(c, "keep-alive timed out");
		return 0;
	}
	if (now - c->last_rx_ms > (uint64_t)c->prm.keepalive_ms && !c->tx_head &&
	    can_send(c, smbd_flow_grant_now(&c->flow))) {
		c->keepalive_sent = true;
		c->keepalive_at_ms = now;
		return send_data_msg(c, NULL, 0, 0, SMBD_FLAG_RESPONSE_REQUESTED,
				     false, 0);
	}
	return 0;
}

static size_t smbd_queued(const struct xprt *x)
{
	return ((const struct smbd_conn *)x)->tx_queued;
}

/* The verbs objects of a connection, and the connection itself. */
static void release_verbs(struct smbd_conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	free_buffers(c);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->comp_ch)
		ibv_destroy_comp_channel(c->comp_ch);
	if (c->own_pd && c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
	free(c);
}

static void *release_run(void *arg)
{
	release_verbs(arg);
	return NULL;
}

/*
 * After a link loss, destroying a QP can wait until the packets it still
 * has queued on the link are gone (minutes on rxe), and destroying the id
 * until its connection manager messages time out. A failed connection's
 * verbs objects are therefore released by a thread of their own, so the
 * caller's other connections go on.
 */
static void release_verbs_async(struct smbd_conn *c)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (pthread_attr_init(&attr)) {
		release_verbs(c);
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &attr, release_run, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		release_verbs(c);
}

static void smbd_destroy(struct xprt *x)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	struct ibv_wc wc;
	struct xbuf *b;
	struct smbd_rw *rw;
	bool failed = c->state == SMBD_ERROR;
	int tries;

	if (c->id && c->state != SMBD_CONNECTING)
		rdma_disconnect(c->id);
	if (c->qp) {
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
		/* flush: every RDMA op gets its completion before teardown */
		for (tries = 0; tries < 1000 && (c->rw_active || c->sq_used > 0); tries++) {
			while (ibv_poll_cq(c->cq, 1, &wc) == 1) {
				wc.status = wc.status == IBV_WC_SUCCESS ?
					    IBV_WC_WR_FLUSH_ERR : wc.status;
				c->state = SMBD_ERROR;
				handle_wc(c, &wc);
			}
			if (c->rw_active || c->sq_used > 0)
				usleep(1000);
		}
	}
	while ((rw = c->rw_head)) {
		c->rw_head = rw->next;
		rw->status = -ECONNRESET;
		rw->done(rw);
	}
	while ((b = c->tx_head)) {
		c->tx_head = b->next;
		b->release(b);
	}
	if (x->epfd >= 0) {
		if (c->cm_ch)
			epoll_ctl(x->epfd, EPOLL_CTL_DEL, c->cm_ch->fd, NULL);
		if (c->comp_ch)
			epoll_ctl(x->epfd, EPOLL_CTL_DEL, c->comp_ch->fd, NULL);
	}
	if (failed && c->qp)
		release_verbs_async(c);
	else
		release_verbs(c);
}

static const struct xprt_ops smbd_ops = {
	.name = "smbdirect",
	.send = smbd_send,
	.handle_events = smbd_handle_events,
	.tick = smbd_tick,
	.queued = smbd_queued,
	.destroy = smbd_destroy,
	.poll = smbd_poll,
};

/* ---- connection setup shared by both roles ---- */

static void peer_name(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa && sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
		port = ntohs(((struct sockaddr_in *)sa)->sin_port);
	} else if (sa && sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
		port = ntohs(((struct sockaddr_in6 *)sa)->sin6_port);
	}
	snprintf(buf, len, "rdma://%s:%u", host, port);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

static int setup_qp(struct smbd_conn *c, struct ibv_device_attr *attr)
{
	struct ibv_device_attr_ex dattr;
	struct ibv_qp_init_attr qa = { 0 };
	int ret, cqe;

	if (ibv_query_device_ex(c->id->verbs, NULL, &dattr))
		return -errno;
	*attr = dattr.orig_attr;
	c->max_sge = dattr.orig_attr.max_sge < SMBD_MAX_SGE ?
		     dattr.orig_attr.max_sge : SMBD_MAX_SGE;
	if (dattr.orig_attr.max_sge_rd && dattr.orig_attr.max_sge_rd < c->max_sge)
		c->max_sge = dattr.orig_attr.max_sge_rd;
	if (c->max_sge < 1)
		c->max_sge = 1;
	c->mw_ok = dattr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	snprintf(c->info.device, sizeof(c->info.device), "%s",
		 ibv_get_device_name(c->id->verbs->device));
	c->sq_cap = c->prm.send_slots + SMBD_RW_WRS;
	if (c->sq_cap > dattr.orig_attr.max_qp_wr)
		c->sq_cap = dattr.orig_attr.max_qp_wr;
	cqe = c->sq_cap + c->prm.recv_credit_max;
	if (cqe > dattr.orig_attr.max_cqe)
		cqe = dattr.orig_attr.max_cqe;
	c->comp_ch = ibv_create_comp_channel(c->id->verbs);
	if (!c->comp_ch)
		return -errno;
	ret = set_nonblock(c->comp_ch->fd);
	if (ret)
		return ret;
	c->cq = ibv_create_cq(c->id->verbs, cqe, c, c->comp_ch, 0);
	if (!c->cq)
		return -errno;
	ret = arm_cq(c);
	if (ret)
		return ret;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = (uint32_t)c->sq_cap;
	qa.cap.max_recv_wr = c->prm.recv_credit_max;
	qa.cap.max_send_sge = (uint32_t)c->max_sge;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -errno;
	c->qp = c->id->qp;
	ret = alloc_buffers(c);
	if (ret)
		return ret;
	return repost_receives(c);
}

/*
 * The connection's verbs resources on its device: the given protection
 * domain (a worker's, shared with its bounce pool) or one of its own, the
 * QP, and the device's limits for IRD/ORD.
 */
static int setup_verbs(struct smbd_conn *c, struct ibv_pd *pd, struct ibv_device_attr *attr)
{
	c->pd = pd;
	if (!c->pd) {
		c->pd = ibv_alloc_pd(c->id->verbs);
		c->own_pd = true;
	}
	if (!c->pd)
		return -ENOMEM;
	return setup_qp(c, attr);
}

static struct smbd_conn *conn_new(const struct smbd_params *prm, bool server)
{
	struct smbd_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->x.ops = &smbd_ops;
	c->x.fd = -1;
	c->x.epfd = -1;
	c->x.max_msg = 0xFFFFFFFF;
	c->x.rdma = true;
	c->ev_cm.x = &c->x;
	c->ev_cm.src = SRC_CM;
	c->ev_cq.x = &c->x;
	c->ev_cq.src = SRC_CQ;
	c->server = server;
	c->state = SMBD_CONNECTING;
	if (prm)
		c->prm = *prm;
	else
		smbd_params_default(&c->prm);
	smbd_flow_init(&c->flow, &c->prm);
	c->last_rx_ms = now_ms();
	return c;
}

struct ibv_pd *smbd_pd(struct xprt *x)
{
	return ((struct smbd_conn *)x)->pd;
}

struct ibv_context *smbd_verbs(struct xprt *x)
{
	return ((struct smbd_conn *)x)->pd->context;
}

struct ibv_pd *smbd_pd_alloc(struct ibv_context *v)
{
	return ibv_alloc_pd(v);
}

void smbd_pd_free(struct ibv_pd *pd)
{
	if (pd)
		ibv_dealloc_pd(pd);
}

const char *smbd_dev_name(struct ibv_context *v)
{
	return ibv_get_device_name(v->device);
}

int smbd_max_sge(struct xprt *x)
{
	return ((struct smbd_conn *)x)->max_sge;
}

void smbd_get_info(struct xprt *x, struct smbd_info *info)
{
	struct smbd_conn *c = (struct smbd_conn *)x;

	*info = c->info;
	info->max_send_size = c->flow.max_send_size;
	info->max_recv_size = c->flow.max_recv_size;
	info->max_fragmented_send = c->flow.max_frag_send;
	info->max_fragmented_recv = c->flow.max_frag_recv;
	info->max_read_write = c->flow.max_rw;
	info->send_credits = (uint16_t)c->flow.send_credits;
	info->peer_credits = (uint16_t)(c->flow.peer_credits > 0 ? c->flow.peer_credits : 0);
	info->initiator_depth = c->ord;
	info->responder_resources = c->ird;
}

/* ---- server ---- */

struct smbd_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

struct smbd_pending {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	struct rdma_conn_param param;
	char peer[64];
};

int smbd_listen(const char *addr, unsigned int port, int backlog,
		struct smbd_listener **out)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct smbd_listener *l;
	char portstr[8];
	int ret;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	snprintf(portstr, sizeof(portstr), "%u", port);
	if (rdma_getaddrinfo(addr && *addr ? addr : NULL, portstr, &hints, &res)) {
		ret = -(errno ? errno : EADDRNOTAVAIL);
		goto out_free;
	}
	l->ch = rdma_create_event_channel();
	if (!l->ch) {
		ret = -errno;
		goto out_freeai;
	}
	if (rdma_create_id(l->ch, &l->id, NULL, RDMA_PS_TCP)) {
		ret = -errno;
		goto out_destroy_ch;
	}
	if (rdma_bind_addr(l->id, res->ai_src_addr) || rdma_listen(l->id, backlog)) {
		ret = -errno;
		goto out_destroy_id;
	}
	ret = set_nonblock(l->ch->fd);
	if (ret)
		goto out_destroy_id;
	rdma_freeaddrinfo(res);
	*out = l;
	return 0;
out_destroy_id:
	rdma_destroy_id(l->id);
out_destroy_ch:
	rdma_destroy_event_channel(l->ch);
out_freeai:
	rdma_freeaddrinfo(res);
out_free:
	free(l);
	return ret;
}

struct ibv_context *smbd_listener_verbs(const struct smbd_listener *l)
{
	return l->id->verbs;
}

/* librdmacm keeps the contexts open for the process: only the list goes. */
int smbd_listener_devices(struct smbd_listener *const *l, int n, struct ibv_context **devs,
			  int max)
{
	struct ibv_context **all = NULL;
	int ndev = 0, nall = 0, i, j;
	bool wildcard = false;

	for (i = 0; i < n; i++) {
		struct ibv_context *v = l[i]->id->verbs;

		if (!v) {
			wildcard = true;
			continue;
		}
		for (j = 0; j < ndev && devs[j] != v; j++)
			;
		if (j == ndev && ndev < max)
			devs[ndev++] = v;
	}
	if (wildcard)
		all = rdma_get_devices(&nall);
	for (i = 0; all && i < nall; i++) {
		for (j = 0; j < ndev && devs[j] != all[i]; j++)
			;
		if (j == ndev && ndev < max)
			devs[ndev++] = all[i];
	}
	if (all)
		rdma_free_devices(all);
	return ndev;
}

int smbd_listener_fd(const struct smbd_listener *l)
{
	return l->ch->fd;
}

int smbd_listener_process(struct smbd_listener *l,
			  void (*cb)(void *arg, struct smbd_pending *p),
			  void *arg)
{
	struct rdma_cm_event *ev;
	struct smbd_pending *p;

	while (!rdma_get_cm_event(l->ch, &ev)) {
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		p = calloc(1, sizeof(*p));
		if (p) {
			p->id = ev->id;
			p->param = ev->param.conn;
			p->ch = rdma_create_event_channel();
		}
		rdma_ack_cm_event(ev);
		if (!p || !p->ch || rdma_migrate_id(p->id, p->ch)) {
			log_ratelimited(LOG_WARN, "SMB-Direct: cannot take a connection request");
			if (p && p->ch)
				rdma_destroy_event_channel(p->ch);
			if (p)
				rdma_reject(p->id, NULL, 0);
			free(p);
			continue;
		}
		peer_name(p->id, p->peer, sizeof(p->peer));
		cb(arg, p);
	}
	return errno == EAGAIN ? 0 : -errno;
}

void smbd_listener_close(struct smbd_listener **lp)
{
	struct smbd_listener *l = *lp;

	if (!l)
		return;
	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->ch);
	free(l);
	*lp = NULL;
}

void smbd_pending_reject(struct smbd_pending *p)
{
	rdma_reject(p->id, NULL, 0);
	rdma_destroy_id(p->id);
	rdma_destroy_event_channel(p->ch);
	free(p);
}

const char *smbd_pending_peer(const struct smbd_pending *p)
{
	return p->peer;
}

int smbd_accept(struct smbd_pending *p, int epfd, const struct smbd_params *prm,
		smbd_pd_fn pd_for, void *pd_arg, struct xprt **out)
{
	struct rdma_conn_param cp = SMBD_CONN_PARAM;
	struct ibv_device_attr attr;
	struct epoll_event ev;
	struct smbd_conn *c;
	int ret;

	c = conn_new(prm, true);
	if (!c) {
		smbd_pending_reject(p);
		return -ENOMEM;
	}
	c->id = p->id;
	c->cm_ch = p->ch;
	snprintf(c->x.peer, sizeof(c->x.peer), "%s", p->peer);
	ret = set_nonblock(c->cm_ch->fd);
	if (ret)
		goto out_reject;
	ret = setup_verbs(c, pd_for ? pd_for(pd_arg, c->id->verbs) : NULL, &attr);
	if (ret)
		goto out_reject;
	/* IRD/ORD: we issue RDMA reads, so ORD is bounded by the peer's IRD */
	c->ord = (uint8_t)(p->param.responder_resources < attr.max_qp_init_rd_atom ?
			   p->param.responder_resources : attr.max_qp_init_rd_atom);
	if (!c->ord)
		c->ord = (uint8_t)(attr.max_qp_init_rd_atom < 8 ? attr.max_qp_init_rd_atom : 8);
	c->ird = (uint8_t)(p->param.initiator_depth < attr.max_qp_rd_atom ?
			   p->param.initiator_depth : attr.max_qp_rd_atom);
	cp.initiator_depth = c->ord;
	cp.responder_resources = c->ird;
	if (rdma_accept(c->id, &cp)) {
		ret = -errno;
		goto out_reject;
	}
	c->state = SMBD_NEGOTIATING;	/* the request may beat ESTABLISHED */
	c->x.epfd = epfd;
	ev.events = EPOLLIN;
	ev.data.ptr = &c->ev_cm;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->cm_ch->fd, &ev)) {
		ret = -errno;
		goto out_destroy;
	}
	ev.data.ptr = &c->ev_cq;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->comp_ch->fd, &ev)) {
		ret = -errno;
		goto out_destroy;
	}
	free(p);
	*out = &c->x;
	return 0;
out_reject:
	rdma_reject(c->id, NULL, 0);
out_destroy:
	free(p);
	smbd_destroy(&c->x);
	return ret;
}

/* ---- client ---- */

static int wait_cm(struct smbd_conn *c, enum rdma_cm_event_type want, int timeout_ms)
{
	struct pollfd pfd = { .fd = c->cm_ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type got;
	int status;

	for (;;) {
		if (!rdma_get_cm_event(c->cm_ch, &ev))
			break;
		if (errno != EAGAIN)
			return -errno;
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
	}
	got = ev->event;
	status = ev->status;
	if (got == RDMA_CM_EVENT_ESTABLISHED) {
		c->ord = ev->param.conn.initiator_depth;
		c->ird = ev->param.conn.responder_resources;
	}
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	if (got == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	if (got == RDMA_CM_EVENT_UNREACHABLE || got == RDMA_CM_EVENT_ADDR_ERROR ||
	    got == RDMA_CM_EVENT_ROUTE_ERROR)
		return -EHOSTUNREACH;
	return status ? (status < 0 ? status : -status) : -EPROTO;
}

/* Wait for CQ activity and process it (client). */
static int client_poll(struct smbd_conn *c, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = c->comp_ch->fd, .events = POLLIN },
		{ .fd = c->cm_ch->fd, .events = POLLIN },
	};
	int n, ret;

	/* it sleeps: the next completion must wake it (x.spin or not) */
	ret = arm_cq(c);
	if (!ret)
		ret = poll_cq(c);
	if (ret)
		return ret < 0 ? ret : 0;
	n = poll(pfd, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (pfd[1].revents) {
		ret = handle_cm_event(c);
		if (ret)
			return ret;
	}
	if (pfd[0].revents)
		return handle_cq_event(c);
	return 0;
}

int smbd_connect(const char *host, unsigned int port,
		 const struct smbd_params *prm, int timeout_ms,
		 struct xprt **out)
{
	return smbd_connect_pd(host, port, prm, timeout_ms, NULL, NULL, out);
}

int smbd_connect_pd(const char *host, unsigned int port,
		    const struct smbd_params *prm, int timeout_ms,
		    smbd_pd_fn pd_for, void *pd_arg, struct xprt **out)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_conn_param cp = SMBD_CONN_PARAM;
	struct smbd_neg_req nr;
	struct rdma_addrinfo *res;
	struct ibv_device_attr attr;
	struct smbd_conn *c;
	char portstr[8];
	uint64_t deadline;
	/* address and route resolution want a bound: none means "very long" */
	int resolve_ms = timeout_ms < 0 ? INT_MAX : timeout_ms;
	int ret;

	c = conn_new(prm, false);
	if (!c)
		return -ENOMEM;
	snprintf(c->x.peer, sizeof(c->x.peer), "rdma://%s:%u", host, port);
	snprintf(portstr, sizeof(portstr), "%u", port);
	if (rdma_getaddrinfo(host, portstr, &hints, &res)) {
		/* a name that does not resolve at all, or no RDMA address */
		ret = xprt_resolve_check(host, port, NULL);
		if (!ret)
			ret = -EHOSTUNREACH;
		goto out_free;
	}
	c->cm_ch = rdma_create_event_channel();
	if (!c->cm_ch || set_nonblock(c->cm_ch->fd) ||
	    rdma_create_id(c->cm_ch, &c->id, c, RDMA_PS_TCP)) {
		ret = -errno;
		rdma_freeaddrinfo(res);
		goto out_destroy;
	}
	ret = rdma_resolve_addr(c->id, res->ai_src_addr, res->ai_dst_addr, resolve_ms) ?
	      -errno : wait_cm(c, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms);
	rdma_freeaddrinfo(res);
	if (ret)
		goto out_destroy;
	ret = rdma_resolve_route(c->id, resolve_ms) ? -errno :
	      wait_cm(c, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms);
	if (ret)
		goto out_destroy;
	ret = setup_verbs(c, pd_for ? pd_for(pd_arg, c->id->verbs) : NULL, &attr);
	if (ret)
		goto out_destroy;
	/* the server reads and writes our memory: offer IRD, need little ORD */
	cp.responder_resources = (uint8_t)(attr.max_qp_rd_atom < 32 ? attr.max_qp_rd_atom : 32);
	cp.initiator_depth = 1;
	if (rdma_connect(c->id, &cp)) {
		ret = -errno;
		goto out_destroy;
	}
	ret = wait_cm(c, RDMA_CM_EVENT_ESTABLISHED, timeout_ms);
	if (ret)
		goto out_destroy;
	/* [MS-SMBD] 3.1.5.2: the negotiate request is the first message */
	c->state = SMBD_NEGOTIATING;
	smbd_flow_neg_request(&c->flow, &nr);
	smbd_neg_req_encode(c->send_free->buf, &nr);
	ret = post_send(c, c->send_free, SMBD_NEG_REQ_SIZE, false, 0);
	if (ret)
		goto out_destroy;
	c->send_free = c->send_free->next_free;
	/* timeout_ms < 0: no deadline (it would wrap to the past) */
	deadline = timeout_ms < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout_ms;
	while (c->state == SMBD_NEGOTIATING) {
		ret = client_poll(c, 100);
		if (ret && ret != -ETIMEDOUT)
			goto out_destroy;
		if (now_ms() > deadline) {
			ret = -ETIMEDOUT;
			goto out_destroy;
		}
	}
	if (c->state != SMBD_CONNECTED) {
		ret = -EPROTO;
		goto out_destroy;
	}
	*out = &c->x;
	return 0;
out_destroy:
	smbd_destroy(&c->x);
	return ret;
out_free:
	free(c);
	return ret;
}

static void noop_release(struct xbuf *b)
{
}

int smbd_client_send(struct xprt *x, const void *msg, size_t len, int timeout_ms)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	struct xbuf b = { .data = (uint8_t *)msg, .len = len, .release = noop_release };
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int ret;

	ret = smbd_send(x, &b);
	if (ret)
		return ret;
	/* the payload is copied into send buffers as credits allow */
	while (c->tx_head) {
		ret = client_poll(c, 100);
		if (ret && ret != -ETIMEDOUT)
			goto out_unlink;
		if (timeout_ms >= 0 && now_ms() > deadline) {
			ret = -ETIMEDOUT;
			goto out_unlink;
		}
	}
	return 0;
out_unlink:
	/* never leave our stack xbuf in the queue */
	c->tx_head = c->tx_tail = NULL;
	c->tx_queued = 0;
	return ret;
}

long smbd_client_recv(struct xprt *x, uint8_t **buf, size_t *cap, int timeout_ms)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
	int ret;

	while (!c->cl_have) {
		ret = client_poll(c, 100);
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (timeout_ms >= 0 && now_ms() > deadline)
			return -ETIMEDOUT;
	}
	c->cl_have = false;
	if (c->cl_len > *cap) {
		uint8_t *p = realloc(*buf, c->cl_len);

		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = c->cl_len;
	}
	memcpy(*buf, c->cl_msg, c->cl_len);
	return (long)c->cl_len;
}

void smbd_client_destroy(struct xprt *x)
{
	smbd_destroy(x);
}

int smbd_attach(struct xprt *x, int epfd)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	struct epoll_event ev = { .events = EPOLLIN };

	ev.data.ptr = &c->ev_cm;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->cm_ch->fd, &ev))
		return -errno;
	ev.data.ptr = &c->ev_cq;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->comp_ch->fd, &ev)) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->cm_ch->fd, NULL);
		return -errno;
	}
	x->epfd = epfd;
	return 0;
}

bool smbd_mw_supported(struct xprt *x)
{
	return ((struct smbd_conn *)x)->mw_ok;
}

static uint8_t mw_wr_type = WR_MW;

int smbd_mw_bind(struct xprt *x, struct ibv_mw *mw, struct ibv_mr *mr,
		 void *addr, size_t len, unsigned int access, uint32_t *rkey)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	while (c->sq_used >= c->sq_cap) {
		ret = client_poll(c, 100);
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
	wr.wr_id = (uintptr_t)&mw_wr_type;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return -ret;
	c->sq_used++;
	mw->rkey = wr.bind_mw.rkey;
	*rkey = mw->rkey;
	return 0;
}

int smbd_mw_invalidate(struct xprt *x, uint32_t rkey)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	struct ibv_send_wr wr = { 0 }, *bad;
	int ret;

	while (c->sq_used >= c->sq_cap) {
		ret = client_poll(c, 100);
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
	wr.wr_id = (uintptr_t)&mw_wr_type;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret)
		return -ret;
	c->sq_used++;
	return 0;
}

bool smbd_was_invalidated(struct xprt *x, uint32_t rkey)
{
	struct smbd_conn *c = (struct smbd_conn *)x;
	int i;

	for (i = 0; i < SMBD_INV_RING; i++)
		if (c->inv_ring[i] == rkey)
			return true;
	return false;
}
