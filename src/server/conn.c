// SPDX-License-Identifier: MIT
/*
 * Connection message processing: transform (decrypt), compound walk,
 * credit window, session/tree lookup, signing checks, dispatch, and
 * response assembly (sign, encrypt, send).
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
#define NEED_SESSION 1
#define NEED_TREE 2
#define NEEDS_FID 4
#define AS_USER 8	/* names paths or changes metadata: as the tree's identity */

struct handler {
	int (*fn)(struct srv_req *req);
	unsigned int flags;
};

static const struct handler handlers[SMB2_NR_COMMANDS] = {
	[SMB2_NEGOTIATE] = { smb_negotiate, 0 },
	[SMB2_SESSION_SETUP] = { smb_session_setup, 0 },
	[SMB2_LOGOFF] = { smb_logoff, NEED_SESSION },
	[SMB2_TREE_CONNECT] = { smb_tree_connect, NEED_SESSION },
	[SMB2_TREE_DISCONNECT] = { smb_tree_disconnect, NEED_SESSION | NEED_TREE },
	[SMB2_CREATE] = { smb_create, NEED_SESSION | NEED_TREE | AS_USER },
	[SMB2_CLOSE] = { smb_close, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_FLUSH] = { smb_flush, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_READ] = { smb_read, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_WRITE] = { smb_write, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_LOCK] = { smb_lock, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_IOCTL] = { smb_ioctl, NEED_SESSION | AS_USER },
	[SMB2_ECHO] = { smb_echo, 0 },
	[SMB2_QUERY_DIRECTORY] = { smb_query_directory, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_CHANGE_NOTIFY] = { smb_change_notify, NEED_SESSION | NEED_TREE | NEEDS_FID },
	[SMB2_QUERY_INFO] = { smb_query_info, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_SET_INFO] = { smb_set_info, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_OPLOCK_BREAK] = { smb_oplock_break, NEED_SESSION | NEED_TREE },
};

static uint8_t *rb_payload(struct srv_rbuf *rb)
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
	req->w.p = rb_payload(rb) + req->rsp_off;
	req->w.cap = rb->cap - req->rsp_off;
	return 0;
}

/* ---- credits [MS-SMB2] 3.3.1.1, 3.3.5.2.3 ---- */

static bool seq_test(struct srv_conn *c, uint64_t id)
{
	uint32_t b = (uint32_t)(id % SRV_MAX_CREDITS);

	return c->seq_used[b / 8] & (1u << (b % 8));
}

static void seq_set(struct srv_conn *c, uint64_t id, bool v)
{
	uint32_t b = (uint32_t)(id % SRV_MAX_CREDITS);

	if (v)
		c->seq_used[b / 8] |= (uint8_t)(1u << (b % 8));
	else
		c->seq_used[b / 8] &= (uint8_t)~(1u << (b % 8));
}

static int credit_consume(struct srv_conn *c, uint64_t mid, uint32_t charge)
{
	uint32_t i;

	if (mid < c->seq_low || mid - c->seq_low >= c->seq_range ||
	    charge > c->seq_range - (mid - c->seq_low))
		return -ERANGE;
	for (i = 0; i < charge; i++)
		if (seq_test(c, mid + i))
			return -EALREADY;
	for (i = 0; i < charge; i++)
		seq_set(c, mid + i, true);
	c->seq_inflight += charge;
	while (c->seq_range && seq_test(c, c->seq_low)) {
		seq_set(c, c->seq_low, false);
		c->seq_low++;
		c->seq_range--;
		c->seq_inflight--;
	}
	return 0;
}

static uint16_t credit_grant(struct srv_conn *c, uint16_t requested)
{
	uint32_t avail = c->seq_range - c->seq_inflight;
	uint32_t room = SRV_MAX_CREDITS - c->seq_range;
	uint32_t grant = requested ? requested : 1;

	if (grant > room)
		grant = room;
	if (avail + grant == 0 && room)
		grant = 1;
	c->seq_range += grant;
	return (uint16_t)grant;
}

/* ---- per-PDU processing ---- */

static void rsp_header(struct srv_req *req, uint32_t status, uint16_t credits)
{
	struct smb2_hdr h = req->hdr;
	uint8_t *p = rb_payload(req->rb) + req->rsp_off;

	h.status = status;
	h.credits = credits;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR |
		  (req->hdr.flags & (SMB2_FLAGS_RELATED_OPERATIONS |
				     SMB2_FLAGS_PRIORITY_MASK));
	h.flags &= ~SMB2_FLAGS_ASYNC_COMMAND;
	h.next_command = 0;
	if (req->new_session_id)
		h.session_id = req->new_session_id;
	else if (req->sess)
		h.session_id = req->sess->id;
	if (req->new_tree_id)
		h.tree_id = req->new_tree_id;
	else if (req->tree)
		h.tree_id = req->tree->id;
	memset(h.signature, 0, sizeof(h.signature));
	smb2_hdr_encode(p, &h);
}

/* Signing rules for a request, [MS-SMB2] 3.3.5.2.4. */
static int check_signature(struct srv_req *req)
{
	struct srv_session *s = req->sess;
	bool signed_req = req->hdr.flags & SMB2_FLAGS_SIGNED;

	if (req->encrypted || !s->have_key)
		return 0;
	if (!signed_req) {
		if (s->signing_required && req->hdr.command != SMB2_ECHO)
			return -EACCES;
		return 0;
	}
	if (smb2_sign_verify(s->sign_alg, s->keys.signing, req->pdu, req->len)) {
		log_ratelimited(LOG_WARN, "%s: bad signature on %s (session 0x%llx)",
				req->conn->x->peer, smb2_cmd_name(req->hdr.command),
				(unsigned long long)s->id);
		return -EACCES;
	}
	return 0;
}

struct handler_call {
	int (*fn)(struct srv_req *req);
	struct srv_req *req;
};

static int call_handler(void *arg)
{
	struct handler_call *hc = arg;

	return hc->fn(hc->req);
}

static int process_pdu(struct srv_req *req)
{
	struct srv_conn *c = req->conn;
	struct srv_chain *ch = req->chain;
	const struct handler *hd;
	uint64_t sid = req->hdr.session_id;
	uint32_t tid = req->hdr.tree_id;
	int ret;

	hd = &handlers[req->hdr.command];
	req->related = req->hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS;
	if (req->related) {
		/*
		 * [MS-SMB2] 3.3.5.2.7.2: a related first PDU is invalid, and
		 * so is every related one after it until an unrelated one.
		 */
		if (!ch->have_prev)
			ch->invalid = true;
		if (ch->invalid)
			return -EINVAL;
		sid = ch->session_id;
		tid = ch->tree_id;
	} else {
		ch->invalid = false;
	}
	ret = smb2_req_validate(req->pdu, req->len, &req->hdr);
	if (ret)
		return -EINVAL;
	if (c->negotiated && c->dialect >= SMB2_DIALECT_210) {
		uint32_t need = smb2_req_credits_needed(req->pdu, req->len, &req->hdr);
		uint32_t charge = req->hdr.credit_charge ? req->hdr.credit_charge : 1;

		if (charge < need) {
			log_ratelimited(LOG_WARN, "%s: %s CreditCharge %u below the %u its payload needs",
					c->x->peer, smb2_cmd_name(req->hdr.command),
					charge, need);
			return -EINVAL;
		}
	}
	if (hd->flags & NEED_SESSION) {
		/* the previous PDU produced no session to inherit */
		if (req->related && !sid)
			return -EINVAL;
		req->sess = srv_session_find(c, sid);
		if (!req->sess || req->sess->state != SESS_VALID)
			return -E_SMB_USER_SESSION_DELETED;
		if (req->sess->encrypt && !req->encrypted)
			return -EACCES;
		ret = check_signature(req);
		if (ret)
			return ret;
	}
	if (hd->flags & NEED_TREE || (req->hdr.command == SMB2_IOCTL && tid)) {
		if (req->related && !tid && hd->flags & NEED_TREE)
			return -EINVAL;
		req->tree = srv_tree_find(req->sess, tid);
		if (!req->tree && hd->flags & NEED_TREE)
			return -E_SMB_NETWORK_NAME_DELETED;
	}
	/*
	 * I/O on an open handle needs no identity: the kernel checked it at
	 * the open. Everything that resolves a name does.
	 */
	if (hd->flags & AS_USER && req->tree) {
		struct handler_call hc = { hd->fn, req };

		return srv_ident_run(req->tree->ident, call_handler, &hc);
	}
	return hd->fn(req);
}

/* Handle one PDU and append its response; false = drop the connection. */
static bool do_pdu(struct srv_conn *c, struct srv_req *req)
{
	struct srv_chain *ch = req->chain;
	uint32_t charge, status;
	uint16_t granted;
	int ret;

	if (req->hdr.command >= SMB2_NR_COMMANDS) {
		log_ratelimited(LOG_WARN, "%s: unknown command 0x%x", c->x->peer,
				req->hdr.command);
		return false;	/* [MS-SMB2] 3.3.5.2.6: disconnect */
	}
	if (!c->negotiated && req->hdr.command != SMB2_NEGOTIATE) {
		log_ratelimited(LOG_WARN, "%s: %s before NEGOTIATE", c->x->peer,
				smb2_cmd_name(req->hdr.command));
		return false;
	}
	if (req->hdr.command == SMB2_CANCEL) {
		/* Every request completes synchronously: nothing to cancel. */
		req->no_response = true;
		return true;
	}
	charge = (c->negotiated && c->dialect > SMB2_DIALECT_202 &&
		  req->hdr.credit_charge) ? req->hdr.credit_charge : 1;
	ret = credit_consume(c, req->hdr.message_id, charge);
	if (ret) {
		log_ratelimited(LOG_WARN, "%s: MessageId %llu (charge %u) %s; window [%llu, +%u)",
				c->x->peer, (unsigned long long)req->hdr.message_id,
				charge, ret == -EALREADY ? "was already used" :
				"is outside the credit window",
				(unsigned long long)c->seq_low, c->seq_range);
		return false;
	}
	req->rsp_off = align8(req->rb->len);
	if (srv_rbuf_reserve(req->rb, req->rsp_off + SMB2_HDR_SIZE + 4096))
		return false;
	if (req->rsp_off > req->rb->len)
		memset(rb_payload(req->rb) + req->rb->len, 0, req->rsp_off - req->rb->len);
	wcur_init(&req->w, rb_payload(req->rb) + req->rsp_off,
		  req->rb->cap - req->rsp_off);
	req->w.off = SMB2_HDR_SIZE;

	ret = process_pdu(req);
	c->stats.requests++;
	if (ret == SRV_ASYNC) {
		/* the response (and its credits) goes out on completion */
		req->no_response = true;
		req->chain->have_prev = true;
		return true;
	}
	if (ret && !req->keep_body) {
		req->w.off = SMB2_HDR_SIZE;
		req->w.err = false;
		smb2_error_rsp_encode(&req->w, NULL, 0);
	}
	if (req->w.err) {
		/* an encoder ran out of room: a bug, not the client's fault */
		pr_err("%s: response to %s overflowed its buffer", c->x->peer,
		       smb2_cmd_name(req->hdr.command));
		ret = -EIO;
		req->w.off = SMB2_HDR_SIZE;
		req->w.err = false;
		smb2_error_rsp_encode(&req->w, NULL, 0);
	}
	status = ntstatus_from_err(ret);
	if (ret) {
		c->stats.errors++;
		pr_debug("%s: %s (mid %llu) -> %s", c->x->peer,
			 smb2_cmd_name(req->hdr.command),
			 (unsigned long long)req->hdr.message_id,
			 ntstatus_name(status) ? ntstatus_name(status) : "?");
	}

	/*
	 * Related-chain bookkeeping, [MS-SMB2] 3.3.5.2.7.2: the next related
	 * PDU inherits the session and tree this one resolved (none if it
	 * failed to), and the FileId it used or created (srv_req_open).
	 */
	ch->have_prev = true;
	if (req->hdr.command == SMB2_SESSION_SETUP)
		ch->session_id = req->new_session_id;
	else
		ch->session_id = req->sess ? req->sess->id : 0;
	if (req->hdr.command == SMB2_TREE_CONNECT)
		ch->tree_id = ret ? 0 : req->new_tree_id;
	else
		ch->tree_id = req->tree ? req->tree->id : 0;
	if (req->hdr.command == SMB2_CREATE) {
		ch->create_failed = ret != 0;
		ch->create_status = status;
		if (ret)
			ch->have_fid = false;
	}

	granted = credit_grant(c, req->hdr.credits);
	rsp_header(req, status, granted);
	req->rb->len = req->rsp_off + req->w.off;
	return true;
}

struct pdu_out {
	size_t off;
	size_t len;
	struct srv_session *sign;
	uint8_t *hash;
};

static int send_response(struct srv_conn *c, struct srv_rbuf *rb,
			 struct pdu_out *outs, int nout,
			 struct srv_session *enc_sess)
{
	uint8_t *base = rb_payload(rb);
	struct iovec iov;
	int i, ret;

	for (i = 0; i < nout; i++) {
		size_t end = i + 1 < nout ? outs[i + 1].off : rb->len;

		outs[i].len = end - outs[i].off;
		put_le32(base + outs[i].off + 20,
			 i + 1 < nout ? (uint32_t)outs[i].len : 0);
	}
	for (i = 0; i < nout; i++) {
		struct srv_session *s = outs[i].sign;
		uint8_t *p = base + outs[i].off;

		if (s && !enc_sess) {
			put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
			ret = smb2_sign_compute(s->sign_alg, s->keys.signing, p,
						outs[i].len, p + 48);
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
		ret = smb2_encrypt(c->cipher, enc_sess->keys.s2c, enc_sess->id,
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

static int process_chain(struct srv_conn *c, const uint8_t *msg, size_t len,
			 struct srv_session *enc_sess)
{
	struct pdu_out outs[SMB2_MAX_COMPOUND];
	struct srv_chain chain = { 0 };
	struct srv_rbuf *rb;
	size_t off = 0, plen, next;
	int n = 0, nout = 0, ret;

	/* Frame check of the whole chain before anything runs. */
	do {
		if (smb2_chain_pdu(msg, len, off, &plen, &next)) {
			log_ratelimited(LOG_WARN, "%s: malformed compound chain at offset %zu",
					c->x->peer, off);
			return -EBADMSG;
		}
		if (++n > SMB2_MAX_COMPOUND) {
			log_ratelimited(LOG_WARN, "%s: compound of more than %d requests",
					c->x->peer, SMB2_MAX_COMPOUND);
			return -E2BIG;
		}
		off = next;
	} while (off);

	rb = srv_rbuf_get(c->w, 8192);
	if (!rb)
		return -ENOMEM;
	off = 0;
	do {
		struct srv_req req = {
			.conn = c,
			.chain = &chain,
			.rb = rb,
			.encrypted = enc_sess != NULL,
			.single = n == 1,
		};

		smb2_chain_pdu(msg, len, off, &plen, &next);
		req.pdu = msg + off;
		req.len = plen;
		if (smb2_hdr_decode(req.pdu, plen, &req.hdr)) {
			ret = -EBADMSG;
			goto out_put;
		}
		if (!do_pdu(c, &req)) {
			ret = -EPROTO;
			goto out_put;
		}
		if (!req.no_response) {
			struct srv_session *s = req.sign_sess ? req.sign_sess : req.sess;
			bool sign = s && s->have_key &&
				    (req.force_sign || s->signing_required ||
				     (req.hdr.flags & SMB2_FLAGS_SIGNED));

			outs[nout].off = req.rsp_off;
			outs[nout].sign = sign ? s : NULL;
			outs[nout].hash = req.hash_rsp ? req.hash_target : NULL;
			nout++;
		}
		off = next;
	} while (off && !c->closing);

	if (!nout) {
		srv_rbuf_put(rb);
		ret = 0;
	} else {
		ret = send_response(c, rb, outs, nout, enc_sess);
	}
	goto out_dead;
out_put:
	srv_rbuf_put(rb);
out_dead:
	while (chain.ndead)
		srv_session_free(chain.dead[--chain.ndead]);
	return ret;
}

static int process_msg(struct srv_conn *c, uint8_t *msg, size_t len);

int srv_process_msg(void *conn, uint8_t *msg, size_t len)
{
	struct srv_conn *c = conn;
	int ret = process_msg(c, msg, len);

	/* a placed payload the WRITE did not take: give its window back */
	if (c->x->placed.cookie)
		srv_write_place_release(c, &c->x->placed);
	return ret;
}

static int process_msg(struct srv_conn *c, uint8_t *msg, size_t len)
{
	struct srv_session *s;
	uint64_t sid;
	int n;

	if (len < 4)
		return -EBADMSG;
	switch (get_le32(msg)) {
	case SMB2_PROTO_ID:
		return process_chain(c, msg, len, NULL);
	case SMB2_TRANSFORM_ID:
		if (smb2_transform_session_id(msg, len, &sid))
			return -EBADMSG;
		s = srv_session_find(c, sid);
		if (!s || !s->have_key || !c->cipher) {
			log_ratelimited(LOG_WARN, "%s: encrypted message for unknown session 0x%llx",
					c->x->peer, (unsigned long long)sid);
			return -EACCES;
		}
		n = smb2_decrypt(c->cipher, s->keys.c2s, msg, len,
				 msg + SMB2_TRANSFORM_SIZE);
		if (n < 0) {
			log_ratelimited(LOG_WARN, "%s: message failed to decrypt",
					c->x->peer);
			return -EBADMSG;
		}
		if (n < SMB2_HDR_SIZE ||
		    get_le32(msg + SMB2_TRANSFORM_SIZE) != SMB2_PROTO_ID)
			return -EBADMSG;
		return process_chain(c, msg + SMB2_TRANSFORM_SIZE, (size_t)n, s);
	case SMB1_PROTO_ID:
		if (c->negotiated)
			return -EPROTO;
		return smb1_negotiate(c, msg, len);
	default:
		log_ratelimited(LOG_WARN, "%s: not an SMB2 message (id 0x%08x)",
				c->x->peer, get_le32(msg));
		return -EPROTO;
	}
}

int srv_conn_attach(struct srv_worker *w, struct xprt *x, struct srv_conn **out)
{
	struct srv_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->x = x;
	x->upper = c;
	x->on_msg = srv_process_msg;
	x->max_msg = x->rdma ? x->max_msg : SRV_MAX_MSG_PREAUTH;
	/* whole messages in time until a session is set up (slowloris) */
	x->rx_timeout_ms = w->srv->cfg->receive_timeout * 1000;
	x->rx_strict = true;
	if (!x->rdma) {
		x->place = srv_write_place;
		x->place_abort = srv_write_place_release;
		x->place_peek = SMB2_WRITE_REQ_DATA_OFF;
		x->place_min = SMB2_WRITE_REQ_DATA_OFF + SRV_ZC_WRITE_MIN;
	}
	c->srv = w->srv;
	c->w = w;
	c->seq_low = 0;
	c->seq_range = 1;
	list_init(&c->sessions);
	list_add_tail(&c->worker_link, &w->conns);
	w->nconns++;
	pr_info("%s: connected (worker %d, %s)", x->peer, w->idx, x->ops->name);
	*out = c;
	return 0;
}

int srv_conn_new(struct srv_worker *w, int fd, struct srv_conn **out)
{
	struct xprt *x;
	int ret;

	ret = tcp_xprt_new(fd, w->epfd, &x);
	if (ret)
		return ret;
	ret = srv_conn_attach(w, x, out);
	if (ret) {
		/* the caller closes fd */
		x->fd = -1;
		x->ops->destroy(x);
	}
	return ret;
}

void srv_conn_free(struct srv_conn *c)
{
	/* RDMA I/O in flight completes (flushed) while opens still exist */
	c->closing = true;
	srv_rdma_conn_gone(c);
	/* file I/O of its requests on the worker's ring finishes first */
	while (c->store_active > 0 && c->w->ring)
		if (store_ring_wait(c->w->ring) < 0)
			break;
	c->x->ops->destroy(c->x);
	while (!list_empty(&c->sessions))
		srv_session_free(list_entry(c->sessions.next, struct srv_session,
					    conn_link));
	c->w->gone.requests += c->stats.requests;
	c->w->gone.bytes_read += c->stats.bytes_read;
	c->w->gone.bytes_written += c->stats.bytes_written;
	c->w->gone.errors += c->stats.errors;
	c->w->gone.rdma_reads += c->stats.rdma_reads;
	c->w->gone.rdma_writes += c->stats.rdma_writes;
	c->w->gone.rdma_bytes += c->stats.rdma_bytes;
	c->w->gone.zero_copy_bytes += c->stats.zero_copy_bytes;
	c->w->gone.tcp_zero_copy_bytes += c->stats.tcp_zero_copy_bytes;
	c->w->gone.inline_io_bytes += c->stats.inline_io_bytes;
	list_del(&c->worker_link);
	c->w->nconns--;
	atomic_fetch_sub(&c->srv->nconns, 1);
	free(c);
}

int srv_respond_async(struct srv_conn *c, const struct smb2_hdr *req_hdr,
		      uint64_t sess_id, uint32_t tree_id, bool sign, int err,
		      void (*body)(struct wcur *w, void *arg), void *arg,
		      bool invalidate, uint32_t rkey)
{
	struct srv_session *s = sign ? srv_session_find(c, sess_id) : NULL;
	struct smb2_hdr h = *req_hdr;
	struct srv_rbuf *rb;
	struct wcur w;
	uint8_t *p;
	int ret;

	rb = srv_rbuf_get(c->w, 4096);
	if (!rb)
		return -ENOMEM;
	p = rb_payload(rb);
	wcur_init(&w, p, rb->cap);
	w.off = SMB2_HDR_SIZE;
	if (err)
		smb2_error_rsp_encode(&w, NULL, 0);
	else
		body(&w, arg);
	h.status = ntstatus_from_err(err);
	h.credits = credit_grant(c, req_hdr->credits);
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR | (req_hdr->flags & SMB2_FLAGS_PRIORITY_MASK);
	h.next_command = 0;
	h.session_id = sess_id;
	h.tree_id = tree_id;
	memset(h.signature, 0, sizeof(h.signature));
	smb2_hdr_encode(p, &h);
	rb->len = w.off;
	if (s && s->have_key) {
		put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
		ret = smb2_sign_compute(s->sign_alg, s->keys.signing, p, rb->len, p + 48);
		if (ret) {
			srv_rbuf_put(rb);
			return ret;
		}
	}
	rb->xb.data = p;
	rb->xb.len = rb->len;
	rb->xb.invalidate = invalidate;
	rb->xb.invalidate_rkey = rkey;
	return c->x->ops->send(c->x, &rb->xb);
}
