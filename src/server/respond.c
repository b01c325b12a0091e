// SPDX-License-Identifier: MIT
/*
 * The one way handlers answer: response buffers (a per-worker pool),
 * room in the response being built, and sending: each PDU signed with
 * its channel's key or the whole chain sealed, then one send. Requests
 * answered later (RDMA, io_uring) go out through srv_respond_async.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

#define RB_HEADROOM (XPRT_HEADROOM + SMB2_TRANSFORM_SIZE)
#define RB_POOL_MAX 8
#define RB_KEEP_MAX (16u << 20)

static void rbuf_release(struct xbuf *b)
{
	srv_rbuf_put(container_of(b, struct srv_rbuf, xb));
}

struct srv_rbuf *srv_rbuf_get(struct srv_worker *w, size_t want)
{
	struct srv_rbuf *rb = w->rb_free;

	if (rb) {
		w->rb_free = rb->next_free;
		w->rb_free_count--;
	} else {
		rb = calloc(1, sizeof(*rb));
		if (!rb)
			return NULL;
		rb->w = w;
		rb->xb.release = rbuf_release;
	}
	rb->len = 0;
	rb->next_free = NULL;
	if (srv_rbuf_reserve(rb, want)) {
		free(rb->mem);
		free(rb);
		return NULL;
	}
	return rb;
}

int srv_rbuf_reserve(struct srv_rbuf *rb, size_t need)
{
	size_t cap = rb->cap ? rb->cap : 4096;
	uint8_t *p;

	if (need <= rb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(rb->mem, cap + RB_HEADROOM);
	if (!p)
		return -ENOMEM;
	rb->mem = p;
	rb->cap = cap;
	return 0;
}

void srv_rbuf_put(struct srv_rbuf *rb)
{
	struct srv_worker *w = rb->w;

	/* a READ sent from a DAX mapping: the window and the open go now */
	if (rb->hold_window)
		rb->hold_open->sf.ops->window_put(&rb->hold_open->sf);
	if (rb->hold_open)
		srv_open_put(rb->hold_open);
	rb->hold_window = false;
	rb->hold_open = NULL;
	rb->xb.tail = NULL;
	rb->xb.tail_len = 0;
	rb->xb.tail_file = false;

	if (w->rb_free_count >= RB_POOL_MAX || rb->cap > RB_KEEP_MAX) {
		free(rb->mem);
		free(rb);
		return;
	}
	rb->next_free = w->rb_free;
	w->rb_free = rb;
	w->rb_free_count++;
}

void srv_rbuf_pool_free(struct srv_worker *w)
{
	struct srv_rbuf *rb;

	while ((rb = w->rb_free)) {
		w->rb_free = rb->next_free;
		free(rb->mem);
		free(rb);
	}
	w->rb_free_count = 0;
}

uint8_t *srv_rbuf_payload(struct srv_rbuf *rb)
{
	return rb->mem + RB_HEADROOM;
}

int srv_req_room(struct srv_req *req, size_t n)
{
	struct srv_rbuf *rb = req->rb;
	int ret;

	ret = srv_rbuf_reserve(rb, req->rsp_off + req->w.off + n);
	if (ret)
		return ret;
	req->w.p = srv_rbuf_payload(rb) + req->rsp_off;
	req->w.cap = rb->cap - req->rsp_off;
	return 0;
}

int srv_send_response(struct srv_conn *c, struct srv_rbuf *rb,
		      struct srv_pdu_out *outs, int nout,
		      struct srv_session *enc_sess)
{
	uint8_t *base = srv_rbuf_payload(rb);
	struct iovec iov;
	int i, ret;

	for (i = 0; i < nout; i++) {
		size_t end = i + 1 < nout ? outs[i + 1].off : rb->len;

		outs[i].len = end - outs[i].off;
		put_le32(base + outs[i].off + 20,
			 i + 1 < nout ? (uint32_t)outs[i].len : 0);
	}
	for (i = 0; i < nout; i++) {
		const struct srv_signer *s = outs[i].sign ? &outs[i].signer : NULL;
		uint8_t *p = base + outs[i].off;

		if (s && !enc_sess) {
			put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
			ret = smb2_sign_compute(&c->kept, s->alg, s->key, p, outs[i].len, p + 48);
			if (ret)
				goto out_put;
		}
		if (outs[i].hash) {
			iov.iov_base = p;
			iov.iov_len = outs[i].len;
			ret = crypto_preauth_update(outs[i].hash, &iov, 1);
			if (ret)
				goto out_put;
		}
	}
	if (enc_sess) {
		iov.iov_base = base;
		iov.iov_len = rb->len;
		ret = smb2_encrypt(&c->kept, enc_sess->cipher, enc_sess->keys.s2c, enc_sess->id,
				   &iov, 1, base - SMB2_TRANSFORM_SIZE);
		if (ret < 0)
			goto out_put;
		rb->xb.data = base - SMB2_TRANSFORM_SIZE;
		rb->xb.len = (size_t)ret;
	} else {
		rb->xb.data = base;
		rb->xb.len = rb->len;
	}
	rb->xb.invalidate = false;
	return c->x->ops->send(c->x, &rb->xb);
out_put:
	/* not sent: the buffer (and what it holds) is still ours */
	srv_rbuf_put(rb);
	return ret;
}


int srv_respond_async(struct srv_conn *c, const struct smb2_hdr *req_hdr,
		      uint64_t sess_id, uint32_t tree_id, const struct srv_signer *sign,
		      const struct srv_sealer *seal, int err,
		      void (*body)(struct wcur *w, void *arg), void *arg,
		      bool invalidate, uint32_t rkey)
{
	struct smb2_hdr h = *req_hdr;
	struct srv_rbuf *rb;
	struct wcur w;
	uint8_t *p;
	int ret;

	rb = srv_rbuf_get(c->w, 4096);
	if (!rb)
		return -ENOMEM;
	p = srv_rbuf_payload(rb);
	wcur_init(&w, p, rb->cap);
	w.off = SMB2_HDR_SIZE;
	if (err)
		smb2_error_rsp_encode(&w, NULL, 0);
	else
		body(&w, arg);
	h.status = ntstatus_from_err(err);
	h.credits = srv_conn_credit_grant(c, req_hdr->credits);
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR | (req_hdr->flags & SMB2_FLAGS_PRIORITY_MASK);
	h.next_command = 0;
	h.session_id = sess_id;
	h.tree_id = tree_id;
	memset(h.signature, 0, sizeof(h.signature));
	smb2_hdr_encode(p, &h);
	rb->len = w.off;
	rb->xb.data = p;
	rb->xb.len = rb->len;
	if (seal) {
		struct iovec iov = { p, rb->len };

		ret = smb2_encrypt(&c->kept, seal->cipher, seal->key, sess_id, &iov, 1,
				   p - SMB2_TRANSFORM_SIZE);
		if (ret < 0) {
			srv_rbuf_put(rb);
			return ret;
		}
		rb->xb.data = p - SMB2_TRANSFORM_SIZE;
		rb->xb.len = (size_t)ret;
	} else if (sign) {
		put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
		ret = smb2_sign_compute(&c->kept, sign->alg, sign->key, p, rb->len, p + 48);
		if (ret) {
			srv_rbuf_put(rb);
			return ret;
		}
	}
	rb->xb.invalidate = invalidate;
	rb->xb.invalidate_rkey = rkey;
	return c->x->ops->send(c->x, &rb->xb);
}
