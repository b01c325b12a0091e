// SPDX-License-Identifier: MIT
/*
 * Dispatch: a message from a transport to its handlers. Transform
 * (decrypt), the compound walk, the credit window, the session's channel
 * on this connection, the signature, the tree, the handler table, then
 * the response through respond.c. Calls go one way: dispatch ->
 * handlers -> state tables and stores.
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
	[SMB2_CHANGE_NOTIFY] = { smb_change_notify, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_QUERY_INFO] = { smb_query_info, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_SET_INFO] = { smb_set_info, NEED_SESSION | NEED_TREE | NEEDS_FID | AS_USER },
	[SMB2_OPLOCK_BREAK] = { smb_oplock_break, NEED_SESSION | NEED_TREE },
};

/* ---- per-PDU processing ---- */

static void rsp_header(struct srv_req *req, uint32_t status, uint16_t credits)
{
	struct smb2_hdr h = req->hdr;
	uint8_t *p = srv_rbuf_payload(req->rb) + req->rsp_off;

	h.status = status;
	h.credits = credits;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR |
		  (req->hdr.flags & (SMB2_FLAGS_RELATED_OPERATIONS |
				     SMB2_FLAGS_PRIORITY_MASK));
	if (req->async && (req->async->resumed || status == STATUS_PENDING)) {
		/* [MS-SMB2] 3.3.4.2, 3.3.4.3: interim and final of an async request */
		h.flags |= SMB2_FLAGS_ASYNC_COMMAND;
		h.async_id = req->async->async_id;
	}
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
	/* each channel has its own key ([MS-SMB2] 3.3.5.2.4) */
	if (smb2_sign_verify(&req->conn->kept, req->chan->sign.alg, req->chan->sign.key,
			     req->pdu, req->len)) {
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
	/* a waiting request cancelled, or whose open went: it ends so */
	if (req->async && req->async->end_err)
		return req->async->end_err;
	if (req->async && req->async->lock_open && atomic_load(&req->async->lock_open->closed))
		return req->async->wait == SRV_WAIT_NOTIFY ? -E_SMB_NOTIFY_CLEANUP :
							     -E_SMB_RANGE_NOT_LOCKED;
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
		req->chan = srv_channel_find(c, sid);
		if (!req->chan || req->chan->state != CHAN_VALID ||
		    atomic_load(&req->chan->sess->state) != SESS_VALID) {
			srv_req_sign_as_session(req, sid);
			return -E_SMB_USER_SESSION_DELETED;
		}
		req->sess = req->chan->sess;
		if (req->sess->have_key) {
			req->signer = req->chan->sign;
			req->have_signer = true;
		}
		if (req->sess->encrypt && !req->encrypted)
			return -EACCES;
		ret = check_signature(req);
		if (ret)
			return ret;
		atomic_fetch_add_explicit(&req->chan->st.requests, 1, memory_order_relaxed);
	}
	if (hd->flags & NEED_TREE || (req->hdr.command == SMB2_IOCTL && tid)) {
		if (req->related && !tid && hd->flags & NEED_TREE)
			return -EINVAL;
		req->tree = srv_tree_get(req->sess, tid);
		/* its share went in a reload: the tree is deleted */
		if (req->tree && atomic_load(&req->tree->share->removed) &&
		    req->hdr.command != SMB2_TREE_DISCONNECT) {
			srv_tree_put(req->tree);
			req->tree = NULL;
			return -E_SMB_NETWORK_NAME_DELETED;
		}
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
		/* no response; the cancelled request answers STATUS_CANCELLED */
		srv_async_cancel(c, &req->hdr);
		req->no_response = true;
		return true;
	}
	charge = (c->negotiated && c->dialect > SMB2_DIALECT_202 &&
		  req->hdr.credit_charge) ? req->hdr.credit_charge : 1;
	/* a resumed request spent its credits when it first came */
	ret = req->async ? 0 : srv_conn_credit_consume(c, req->hdr.message_id, charge);
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
		memset(srv_rbuf_payload(req->rb) + req->rb->len, 0, req->rsp_off - req->rb->len);
	wcur_init(&req->w, srv_rbuf_payload(req->rb) + req->rsp_off,
		  req->rb->cap - req->rsp_off);
	req->w.off = SMB2_HDR_SIZE;

	ret = process_pdu(req);
	c->stats.requests++;
	/* what the PDU held: the opens it resolved, its ChannelSequence count */
	srv_chanseq_done(&req->cseq);
	while (req->nheld)
		srv_open_put(req->held[--req->nheld]);
	if (ret == SRV_ASYNC) {
		/* the response (and its credits) goes out on completion */
		req->no_response = true;
		req->chain->have_prev = true;
		return true;
	}
	if (ret == SRV_PENDING) {
		/* it waits: an interim response the first time, then nothing */
		req->pending = true;
		if (req->async->resumed) {
			req->no_response = true;
			return true;
		}
		req->w.off = SMB2_HDR_SIZE;
		smb2_error_rsp_encode(&req->w, NULL, 0);
		granted = srv_conn_credit_grant(c, req->hdr.credits);
		rsp_header(req, STATUS_PENDING, granted);
		req->rb->len = req->rsp_off + req->w.off;
		req->interim = true;
		return true;
	}
	if (req->async) {
		/* the final response of a request that went async */
		srv_async_unwait(req->async);
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

	/* a final async response grants nothing: the interim did */
	granted = req->async ? 0 : srv_conn_credit_grant(c, req->hdr.credits);
	rsp_header(req, status, granted);
	req->rb->len = req->rsp_off + req->w.off;
	return true;
}

/* Frame check of a whole chain before anything of it runs. */
static int chain_check(struct srv_conn *c, const uint8_t *msg, size_t len, int *count)
{
	size_t off = 0, plen, next;
	int n = 0;

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
	*count = n;
	return 0;
}

/*
 * The waiting request keeps the rest of its chain (from itself on) and
 * the chain's state, to run them when it is woken.
 */
static int chain_park(struct srv_async *a, const uint8_t *rest, size_t len,
		      const struct srv_chain *chain, struct srv_session *enc_sess)
{
	if (!a->msg) {
		a->msg = malloc(len);
		if (!a->msg)
			return -ENOMEM;
		memcpy(a->msg, rest, len);
		a->len = len;
	}
	a->chain = *chain;
	a->enc_sess = enc_sess ? enc_sess->id : 0;
	return 0;
}

/*
 * Run the PDUs of msg in order and send their responses as one chain.
 * resumed: msg is a waiting request's (its first PDU is that request).
 */
static int run_chain(struct srv_conn *c, const uint8_t *msg, size_t len,
		     struct srv_session *enc_sess, struct srv_chain *chain,
		     struct srv_async *resumed, int n)
{
	struct srv_pdu_out outs[SMB2_MAX_COMPOUND];
	struct srv_rbuf *rb;
	size_t off = 0, plen, next;
	int nout = 0, ret = 0;
	bool ok;

	rb = srv_rbuf_get(c->w, 8192);
	if (!rb)
		return -ENOMEM;
	do {
		struct srv_req req = {
			.conn = c,
			.chain = chain,
			.rb = rb,
			.encrypted = enc_sess != NULL,
			.single = n == 1,
			.async = off == 0 ? resumed : NULL,
		};

		smb2_chain_pdu(msg, len, off, &plen, &next);
		req.pdu = msg + off;
		req.start_ns = srv_now_ns();
		req.len = plen;
		if (smb2_hdr_decode(req.pdu, plen, &req.hdr)) {
			ret = -EBADMSG;
			goto out_put;
		}
		ok = do_pdu(c, &req);
		srv_tree_put(req.tree);
		if (!ok) {
			ret = -EPROTO;
			goto out_put;
		}
		if (!req.no_response) {
			bool sign = req.have_signer && !req.interim &&
				    (req.force_sign || (req.sess && req.sess->signing_required) ||
				     (req.hdr.flags & SMB2_FLAGS_SIGNED));

			outs[nout].off = req.rsp_off;
			outs[nout].sign = sign;
			outs[nout].signer = req.signer;
			outs[nout].hash = req.hash_rsp ? req.hash_target : NULL;
			nout++;
		}
		explicit_bzero(&req.signer, sizeof(req.signer));
		if (req.pending) {
			/* this PDU and the rest of the chain wait */
			ret = chain_park(req.async, msg + off, len - off, chain, enc_sess);
			if (ret) {
				pr_warn("%s: out of memory for a waiting request", c->x->peer);
				goto out_put;
			}
			break;
		}
		off = next;
	} while (off && !c->closing);

	if (!nout) {
		srv_rbuf_put(rb);
		return 0;
	}
	ret = srv_send_response(c, rb, outs, nout, enc_sess);
	explicit_bzero(outs, sizeof(outs));
	return ret;
out_put:
	srv_rbuf_put(rb);
	return ret;
}

static int process_chain(struct srv_conn *c, const uint8_t *msg, size_t len,
			 struct srv_session *enc_sess)
{
	struct srv_chain chain = { 0 };
	int n, ret;

	ret = chain_check(c, msg, len, &n);
	if (ret)
		return ret;
	return run_chain(c, msg, len, enc_sess, &chain, NULL, n);
}

/* A waiting request was woken (or cancelled): run it and its chain again. */
void srv_dispatch_resume(struct srv_async *a)
{
	struct srv_conn *c = a->c;
	struct srv_session *enc = NULL;
	struct srv_channel *ch;
	int n, ret;

	atomic_store(&a->posted, false);
	if (!c || c->closing)
		return;
	srv_async_unwait(a);
	if (a->enc_sess) {
		ch = srv_channel_find(c, a->enc_sess);
		enc = ch && ch->state == CHAN_VALID ? ch->sess : NULL;
		if (!enc)
			goto done;	/* its session is gone: nobody to answer */
	}
	a->resumed = true;
	if (chain_check(c, a->msg, a->len, &n))
		goto done;
	ret = run_chain(c, a->msg, a->len, enc, &a->chain, a, n);
	if (ret < 0 && ret != -EAGAIN)
		c->closing = true;
	if (!list_empty(&a->wait_link) || a->file)
		return;		/* waits again */
done:
	list_del(&a->conn_link);
	c->nasyncs--;
	srv_async_put(a);	/* the connection's */
}

/*
 * DAX share over TCP: a large, lone, unsigned, unencrypted WRITE to a
 * range already mapped is received straight into the mapping (called by
 * the transport once the header and the WRITE's fixed part are in).
 * Everything the request will be checked for is checked here first, so
 * data never lands for a request that is then refused.
 */
int srv_write_place(void *conn, const uint8_t *msg, size_t have, size_t total,
		    struct xprt_place *p)
{
	const uint8_t *w = msg + SMB2_HDR_SIZE;
	struct srv_conn *c = conn;
	struct smb2_hdr h;
	struct srv_channel *ch;
	struct srv_session *s;
	struct srv_tree *t;
	struct smb2_fid fid;
	struct srv_open *o;
	uint32_t len;
	uint64_t off;
	uint16_t doff;
	void *win;

	/* a WRITE's store in flight: this message will wait for it (held) */
	if (c->tcp_writes ||
	    have < SMB2_WRITE_REQ_DATA_OFF || get_le32(msg) != SMB2_PROTO_ID ||
	    smb2_hdr_decode(msg, have, &h) || h.command != SMB2_WRITE || h.next_command ||
	    h.flags & (SMB2_FLAGS_SIGNED | SMB2_FLAGS_RELATED_OPERATIONS |
		       SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND) ||
	    get_le16(w) != 49 || c->srv->cfg->encrypt == SRV_ENC_REQUIRED)
		return 0;
	doff = get_le16(w + 2);
	len = get_le32(w + 4);
	off = get_le64(w + 8);
	fid.persistent = get_le64(w + 16);
	fid.volatile_id = get_le64(w + 24);
	if (get_le32(w + 32) != SMB2_CHANNEL_NONE || doff < SMB2_WRITE_REQ_DATA_OFF ||
	    doff > total || len > total - doff ||
	    len > SMB2_MAX_IO_SIZE || off > INT64_MAX || len > INT64_MAX - off)
		return 0;
	ch = srv_channel_find(c, h.session_id);
	s = ch && ch->state == CHAN_VALID ? ch->sess : NULL;
	if (!s || atomic_load(&s->state) != SESS_VALID || s->signing_required || s->encrypt)
		return 0;
	t = srv_tree_get(s, h.tree_id);
	if (!t)
		return 0;
	o = srv_open_get(s, &fid);
	if (!o || o->tree_id != t->id || o->is_dir || t->read_only ||
	    !(o->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)) || !o->file ||
	    atomic_load(&o->file->nlocks) ||	/* the WRITE checks them first */
	    srv_tcp_zc(o, SRV_ZC_WINDOW, off, &len, 0, true, &win) != SRV_ZC_WINDOW) {
		/* growth, or past the mapping: the copy path */
		srv_open_put(o);
		srv_tree_put(t);
		return 0;
	}
	srv_tree_put(t);
	/*
	 * A stale or replayed WRITE must not touch the file: its
	 * ChannelSequence is counted now, before the data lands, and the
	 * WRITE takes that count over.
	 */
	if (srv_chanseq_count(o, c, &h, &c->place.cseq)) {
		o->sf.ops->window_put(&o->sf);
		srv_open_put(o);
		return 0;
	}
	/* the placement holds its reference to the open */
	c->place.o = o;
	p->off = doff;
	p->len = len;
	p->dst = win;
	p->cookie = &c->place;
	return 0;
}

/* A placement's window, count and open go back (used or not). */
void srv_write_place_release(void *conn, struct xprt_place *p)
{
	struct srv_placement *pl = p->cookie;

	(void)conn;
	if (!pl)
		return;
	srv_chanseq_done(&pl->cseq);
	pl->o->sf.ops->window_put(&pl->o->sf);
	srv_open_put(pl->o);
	pl->o = NULL;
	memset(p, 0, sizeof(*p));
}

void *srv_write_place_take(struct xprt_place *p)
{
	struct srv_placement *pl = p->cookie;
	void *win = p->dst;

	srv_chanseq_done(&pl->cseq);
	srv_open_put(pl->o);
	pl->o = NULL;
	memset(p, 0, sizeof(*p));
	return win;
}

static int process_msg(struct srv_conn *c, uint8_t *msg, size_t len);

int srv_process_msg(void *conn, uint8_t *msg, size_t len)
{
	struct srv_conn *c = conn;
	int ret;

	/*
	 * TCP: while a WRITE's store is in flight (its message received,
	 * this one too meanwhile), the next waits for it: requests of a
	 * connection still run one after the other. srv_tcp_write's end
	 * resumes it. A placement is never made meanwhile.
	 */
	if (c->tcp_writes && !c->x->placed.cookie) {
		c->held = true;
		return XPRT_HOLD;
	}
	ret = process_msg(c, msg, len);

	/* a placed payload the WRITE did not take: give its window back */
	if (c->x->placed.cookie)
		srv_write_place_release(c, &c->x->placed);
	return ret;
}

static int process_msg(struct srv_conn *c, uint8_t *msg, size_t len)
{
	struct srv_channel *ch;
	struct srv_session *s;
	uint64_t sid;
	int n;

	if (len < 4)
		return -EBADMSG;
	/* sessions that ended on another channel leave this connection */
	srv_conn_sweep(c);
	switch (get_le32(msg)) {
	case SMB2_PROTO_ID:
		return process_chain(c, msg, len, NULL);
	case SMB2_TRANSFORM_ID:
		if (smb2_transform_session_id(msg, len, &sid))
			return -EBADMSG;
		ch = srv_channel_find(c, sid);
		s = ch && ch->state == CHAN_VALID ? ch->sess : NULL;
		if (!s || !s->have_key || !c->cipher) {
			log_ratelimited(LOG_WARN, "%s: encrypted message for unknown session 0x%llx",
					c->x->peer, (unsigned long long)sid);
			return -EACCES;
		}
		n = smb2_decrypt(&c->kept, s->cipher, s->keys.c2s, msg, len,
				 msg + SMB2_TRANSFORM_SIZE);
		if (n < 0) {
			log_ratelimited(LOG_WARN, "%s: message failed to decrypt",
					c->x->peer);
			return -EBADMSG;
		}
		if (n < SMB2_HDR_SIZE ||
		    get_le32(msg + SMB2_TRANSFORM_SIZE) != SMB2_PROTO_ID)
			return -EBADMSG;
		if (c->x->rdma && !c->xform_enc)
			srv_xform_fallback_note(c, s, true);
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


/* The transport hands this connection's messages (and placements) here. */
void srv_dispatch_attach(struct srv_conn *c)
{
	struct xprt *x = c->x;

	x->on_msg = srv_process_msg;
	if (!x->rdma) {
		x->place = srv_write_place;
		x->place_abort = srv_write_place_release;
		x->place_peek = SMB2_WRITE_REQ_DATA_OFF;
		x->place_min = SMB2_WRITE_REQ_DATA_OFF + SRV_ZC_WRITE_MIN;
	}
}
