// SPDX-License-Identifier: MIT
/*
 * SMB2 READ and WRITE of a file's data ([MS-SMB2] 3.3.5.12, 3.3.5.13),
 * over TCP and over SMB-Direct RDMA channels ([MS-SMBD] 3.1.4.x):
 * descriptor checks before any RDMA is posted, RDMA Read of written
 * data / RDMA Write of read data, and Send-With-Invalidate of the
 * client's token when the channel asks. Over TCP the data is in the
 * messages: the RDMA steps are skipped.
 *
 * Each transfer is one state machine (enum srv_rio_state), moved on by
 * rio_advance only: at the request, when bounce space comes back, and
 * at each completion (RDMA, io_uring). Transfers come from their
 * connection's pool (sized by the credits it granted), so nothing is
 * allocated per I/O once the pool has grown.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

static void rio_advance(struct srv_rio *io);

/* ---- the connection's pool ---- */

static struct srv_rio *rio_get(struct srv_conn *c)
{
	struct srv_rio *io = c->rio_pool;

	if (io) {
		c->rio_pool = io->pool_next;
		c->rio_pooled--;
		/* everything before the arrays starts clean */
		memset(io, 0, offsetof(struct srv_rio, desc));
		return io;
	}
	return calloc(1, sizeof(*io));
}

/* Kept while the pool holds fewer than the credits granted. */
static void rio_put(struct srv_conn *c, struct srv_rio *io)
{
	if (c->rio_pooled < c->seq_range && !c->closing) {
		io->pool_next = c->rio_pool;
		c->rio_pool = io;
		c->rio_pooled++;
		return;
	}
	crypto_kept_free(&io->kept);
	free(io);
}

void srv_rio_pool_free(struct srv_conn *c)
{
	struct srv_rio *io;

	while ((io = c->rio_pool)) {
		c->rio_pool = io->pool_next;
		crypto_kept_free(&io->kept);
		free(io);
	}
	c->rio_pooled = 0;
}

/* ---- the steps ---- */

static void read_rsp_body(struct wcur *w, void *arg)
{
	struct srv_rio *io = arg;
	struct smb2_read_rsp r = {
		.data_offset = SMB2_READ_RSP_DATA_OFF,
		.data_remaining = io->done,
	};
	struct smb2_rdma_xform x = {
		.channel = SMB2_CHANNEL_NONE,
		.type = io->xform,
		.sig_len = 16,
		.nonce_len = io->xnonce_len,
	};
	uint8_t *p;
	size_t n;

	if (!io->xform) {
		/* 80 bytes: the data went by RDMA (Linux cifs reads exactly this) */
		smb2_read_rsp_encode(w, &r);
		return;
	}
	/* DataOffset/DataLength name the transform, DataRemaining the RDMA bytes */
	n = smb2_rdma_xform_size(&x, 0);
	r.data_length = (uint32_t)n;
	r.flags = SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM;
	memcpy(x.sig, io->xsig, 16);
	memcpy(x.nonce, io->xnonce, io->xnonce_len);
	smb2_read_rsp_encode(w, &r);
	p = wcur_reserve(w, n);
	if (p)
		smb2_rdma_xform_encode(p, n, &x, NULL, 0);
}

static void write_rsp_body(struct wcur *w, void *arg)
{
	struct srv_rio *io = arg;
	struct smb2_write_rsp r = { .count = io->done };

	smb2_write_rsp_encode(w, &r);
}

/*
 * The bytes this transfer moved, on its session's channel here: a READ at
 * EOF moves fewer than it asked for (or none), so they are counted at the
 * answer, not at the request.
 */
static void rio_count(struct srv_rio *io)
{
	struct srv_conn_stats *st = &io->c->stats;
	struct srv_channel *ch = srv_channel_find(io->c, io->hdr.session_id);
	bool zc = io->win || io->sendfile;

	if (io->write)
		st->bytes_written += io->done;
	else
		st->bytes_read += io->done;
	if (io->tcp) {
		if (zc)
			st->tcp_zero_copy_bytes += io->done;
	} else {
		if (!io->write)
			st->rdma_reads++;
		st->rdma_bytes += io->done;
		if (zc)
			st->zero_copy_bytes += io->done;
		else
			st->bounce_bytes += io->done;
	}
	if (ch)
		atomic_fetch_add_explicit(io->write ? &ch->st.bytes_in : &ch->st.bytes_out,
					  io->done, memory_order_relaxed);
	srv_io_account(io->c->w, io->o->share, !io->tcp, io->write, io->done, io->start_ns);
}

/*
 * TCP, answered inline: the body into the request's response (a READ's
 * data is there already, or goes from the window or the descriptor as
 * the buffer's second segment); the handler returns *io->ret.
 */
static void rio_answer_inline(struct srv_rio *io)
{
	struct srv_req *req = io->req;
	struct smb2_read_rsp rr = { 0 };
	struct smb2_write_rsp wr = { 0 };
	struct srv_rbuf *rb = req->rb;

	*io->ret = io->err;
	if (io->err)
		return;
	if (srv_req_room(req, io->write ? 24 : 16)) {
		*io->ret = -ENOMEM;
		return;
	}
	rio_count(io);
	if (io->write) {
		wr.count = io->done;
		smb2_write_rsp_encode(&req->w, &wr);
	} else {
		rr.data_offset = SMB2_READ_RSP_DATA_OFF;
		rr.data_length = io->done;
		smb2_read_rsp_encode(&req->w, &rr);
		if (io->win) {
			/* the response's buffer holds the window until sent */
			rb->xb.tail = io->win;
			rb->hold_window = true;
			io->win = NULL;
		} else if (io->sendfile) {
			rb->xb.tail = NULL;
			rb->xb.tail_file = true;
			rb->xb.tail_fd = io->o->fd;
			rb->xb.tail_off = io->offset;
		} else {
			req->w.off += io->done;
		}
		if (rb->hold_window || rb->xb.tail_file) {
			rb->xb.tail_len = io->done;
			rb->hold_open = io->o;	/* its descriptor or mapping stays until sent */
			srv_open_ref(io->o);
		}
	}
}

static void rio_respond(struct srv_rio *io)
{
	if (io->tcp && !io->err) {
		io->o->position = io->offset + io->done;
		if (io->write)
			io->o->modified = true;
	}
	if (io->req) {
		rio_answer_inline(io);
		return;
	}
	if (io->c->closing)
		return;
	if (!io->err)
		rio_count(io);
	if (srv_respond_async(io->c, &io->hdr, io->hdr.session_id, io->hdr.tree_id,
			      io->sign ? &io->signer : NULL, io->seal ? &io->sealer : NULL, io->err,
			      io->write ? write_rsp_body : read_rsp_body, io,
			      io->invalidate, io->invalidate ? io->desc[0].token : 0))
		io->c->closing = true;
}

/*
 * Where the data is while it moves: the file's own memory when the
 * share's rung lets the NIC reach it and the range is mapped (the RDMA
 * zero-copy decision, made here only), else bounce space. 1: have it;
 * 0: waiting for bounce space; <0: failed.
 */
static int rio_buffer(struct srv_rio *io)
{
	struct srv_share *sh = io->o->share;
	struct srv_rdev *d = io->c->rdev;
	struct store_file *sf = &io->o->sf;
	int i, ret;

	/*
	 * A transformed payload is checked (WRITE: nothing unverified may
	 * reach the file) or encrypted (READ: never in the file) in bounce
	 * space; a signed READ is signed where it is (the data unchanged).
	 */
	if ((!io->xform || (io->xform == SMB2_RDMA_XFORM_TYPE_SIGNING && !io->write)) &&
	    (sh->rung == MEM_RUNG_DIRECT || sh->rung == MEM_RUNG_ODP) &&
	    sh->idx < d->nshare_mr && d->share_mr[sh->idx] &&
	    (io->win = sf->ops->window(sf, io->offset, io->length, io->write))) {
		io->sge[0].addr = io->win;
		io->sge[0].len = io->length;
		io->sge[0].lkey = mem_mr_lkey(d->share_mr[sh->idx]);
		io->nsge = 1;
		return 1;
	}
	ret = mem_pool_get(d->bounce, io->length, io->seg, SRV_MAX_SEG);
	if (ret == -EAGAIN) {
		/* a woken waiter goes back to the head: order is kept */
		if (io->woken)
			list_add(&io->wait_link, &d->waiters);
		else
			list_add_tail(&io->wait_link, &d->waiters);
		io->waiting = true;
		return 0;
	}
	if (ret < 0)
		return ret;
	io->nseg = ret;
	io->nsge = ret;
	for (i = 0; i < io->nseg; i++) {
		io->sge[i].addr = io->seg[i].addr;
		io->sge[i].len = io->seg[i].len;
		io->sge[i].lkey = io->seg[i].lkey;
	}
	return 1;
}

/*
 * Data in the messages (TCP, or SMB-Direct without an RDMA channel):
 * where it is. A WRITE's is in the message (io->buf) or was
 * received into the store's window (io->win) already. A READ goes from
 * the store's window or the descriptor where srv_tcp_zc (the one TCP
 * zero-copy decision) says so, else into room in the response.
 */
static int rio_tcp_buffer(struct srv_rio *io)
{
	struct srv_req *req = io->req;
	struct srv_session *s = req->sess;
	uint32_t len = io->length;
	enum srv_zc allow = io->c->x->rdma ? SRV_ZC_WINDOW : SRV_ZC_FILE;
	int ret;

	if (io->write)
		return 1;
	/* a signature or a cipher needs the data in the message */
	if (!req->single || req->encrypted || req->rb->hold_open ||
	    (s && s->have_key && (s->signing_required || req->hdr.flags & SMB2_FLAGS_SIGNED)))
		allow = SRV_ZC_NONE;
	switch (srv_tcp_zc(io->o, allow, io->offset, &len, io->minimum, false, &io->win)) {
	case SRV_ZC_WINDOW:
		io->done = io->length;
		return 1;
	case SRV_ZC_FILE:
		io->sendfile = true;
		io->done = len;
		return 1;
	case SRV_ZC_NONE:
		break;
	}
	ret = srv_req_room(req, 16 + (size_t)io->length);
	if (ret)
		return ret;
	io->buf = req->w.p + SMB2_READ_RSP_DATA_OFF;
	return 1;
}

/* An RDMA op's completion: io->rw, or a pipelined READ piece's prw[k]. */
static void rio_rw_done(struct smbd_rw *rw)
{
	struct srv_rio *io = rw->arg;

	io->inflight--;
	if (rw->status && !io->err)
		io->err = -EIO;
	/* a post that failed at once: its caller goes on */
	if (!io->posting)
		rio_advance(io);
}

static void rio_store_done(struct store_rw *srw)
{
	struct srv_rio *io = container_of(srw, struct srv_rio, srw);

	io->c->store_active--;
	io->inflight--;
	io->o->sf.ops->complete(&io->o->sf, srw);
	io->res = srw->res;
	rio_advance(io);
}

/*
 * RDMA Read from (to_client: false) or Write to the client's buffers d,
 * on rw. 0: rio_rw_done follows (at once, io->err set, if posting it
 * failed); else nothing was posted.
 */
static int rio_rdma(struct srv_rio *io, struct smbd_rw *rw, bool to_client,
		    const struct smbd_desc *d, int nd, const struct smbd_sge *sg, int nsg)
{
	int ret;

	rw->done = rio_rw_done;
	rw->arg = io;
	io->inflight++;
	io->posting = true;
	ret = smbd_rw_post(io->c->x, to_client, d, nd, sg, nsg, rw);
	io->posting = false;
	if (ret)
		io->inflight--;
	return ret;
}

static int rio_post(struct srv_rio *io, bool to_client)
{
	return rio_rdma(io, &io->rw, to_client, io->desc, io->ndesc, io->sge, io->nsge);
}

/*
 * A TCP WRITE answered later keeps its message's buffer: the transport
 * reads on into the connection's spare, and messages that come
 * meanwhile wait (srv_process_msg) until its store ends.
 */
static void rio_keep_msg(struct srv_rio *io)
{
	struct srv_conn *c = io->c;

	io->rxbuf = c->rx_spare;
	io->rxcap = c->rx_spare_cap;
	c->rx_spare = NULL;
	c->rx_spare_cap = 0;
	c->x->ops->rx_swap(c->x, &io->rxbuf, &io->rxcap);
	c->tcp_writes++;
	io->req = NULL;		/* answered later, by srv_respond_async */
	io->ret = NULL;
}

/*
 * Bounce space (TCP: the message or the response) and the file, on the
 * worker's ring where the transfer and the open's store can (io_uring,
 * fixed buffers): 1 submitted (rio_store_done goes on), 0 done inline
 * (io->res).
 */
static int rio_store(struct srv_rio *io)
{
	struct srv_worker *w = io->c->w;
	struct store_file *sf = &io->o->sf;
	struct store_rw *srw = &io->srw;
	struct iovec iov[SRV_MAX_SEG];
	int i, n = io->nseg;

	for (i = 0; i < io->nseg; i++) {
		iov[i].iov_base = io->seg[i].addr;
		iov[i].iov_len = io->seg[i].len;
	}
	if (io->tcp) {
		iov[0].iov_base = io->buf;
		iov[0].iov_len = io->length;
		n = 1;
	}
	if (io->may_submit && n <= STORE_RW_MAX_SEG) {
		memset(srw, 0, offsetof(struct store_rw, pending));	/* uring sets the rest */
		srw->write = io->write;
		srw->niov = n;
		srw->off = io->offset;
		srw->buf_index = io->tcp ? -1 : (int)(io->c->rdev - w->rdev);
		/* TCP: the copy from the message overlaps the next receive */
		srw->offload = io->tcp;
		memcpy(srw->iov, iov, sizeof(iov[0]) * (size_t)n);
		srw->rwflags = io->write && io->write_through ? RWF_DSYNC : 0;
		srw->done = rio_store_done;
		if (!sf->ops->submit(sf, w->ring, srw)) {
			w->uring_ops++;
			w->uring_direct_ops += srw->direct;
			io->c->store_active++;
			io->inflight++;
			if (io->tcp) {
				io->c->stats.tcp_async_writes++;
				rio_keep_msg(io);
			}
			return 1;
		}
	}
	io->res = io->write ? sf->ops->pwritev(sf, iov, n, io->offset, io->write_through)
			    : sf->ops->preadv(sf, iov, n, io->offset);
	return 0;
}

/* ---- the pipelined bounce ---- */

/* Bytes per piece: the RDMA of one overlaps the CPU copy of the next. */
#define RIO_PIECE (256u << 10)
/*
 * A READ's least piece. 1 MiB fsdax reads at QD8 on rxe in one boot
 * (bench/rdma-to-dax): 512 KiB pieces 0.98x of unpipelined, 128 KiB
 * 0.85x, 256 KiB 0.36x (not understood; rxe posts inline, see
 * docs/testbed.md).
 */
#define RIO_READ_PIECE (512u << 10)

/* A READ's pieces of total bytes: at least least, at most SRV_RIO_PIECES of them. */
static uint32_t read_piece(uint32_t total, uint32_t least)
{
	uint32_t per = (total + SRV_RIO_PIECES - 1) / SRV_RIO_PIECES;

	per = (per + 4095) & ~4095u;
	return per > least ? per : least;
}

/*
 * Pipelined: a transfer through bounce space, more than one piece, on a
 * store that copies inline and is persistent on return (DAX, device
 * DAX). A WRITE also needs its whole range in the mapping now (one that
 * grows the file goes to the ring whole); a READ copies what is there
 * (the store reads the rest, a short copy is the end of the file). A
 * READ's pieces grow so that at most SRV_RIO_PIECES are in flight.
 */
static bool rio_pipe_ok(struct srv_rio *io)
{
	struct store_file *sf = &io->o->sf;

	if (io->win || (io->xform && (io->write || !io->xsteps)) || io->length <= RIO_PIECE ||
	    !(sf->ops->flags & STORE_PERSISTENT))
		return false;
	io->piece = io->write ? RIO_PIECE : RIO_READ_PIECE;
	if (!io->write) {
		if (io->length <= io->piece)
			return false;
		io->piece = read_piece(io->length, io->piece);
		return true;
	}
	if (!sf->ops->window || !sf->ops->window(sf, io->offset, io->length, io->write))
		return false;
	sf->ops->window_put(sf);
	return true;
}

/* The part [pos, pos + len) of the bounce space sge[0..n) in out: its count. */
static int sge_slice(const struct smbd_sge *sge, int nsge, uint64_t pos, uint64_t len,
		     struct smbd_sge *out)
{
	int i, n = 0;

	for (i = 0; i < nsge && len; i++) {
		uint64_t l = sge[i].len;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		out[n] = sge[i];
		out[n].addr = (uint8_t *)sge[i].addr + pos;
		out[n].len = (uint32_t)(l - pos < len ? l - pos : len);
		len -= out[n++].len;
		pos = 0;
	}
	return n;
}

/*
 * The descriptors (pd, *npd) and bounce space (ps, *nps) of bytes
 * [pos, pos + len) of the transfer.
 */
static void rio_slice(const struct srv_rio *io, uint32_t pos, uint32_t len,
		      struct smbd_desc *pd, int *npd, struct smbd_sge *ps, int *nps)
{
	uint64_t skip = pos, left = len;
	int i, n = 0;

	for (i = 0; i < io->ndesc && left; i++) {
		uint32_t l = io->desc[i].length;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		pd[n] = io->desc[i];
		pd[n].offset += skip;
		pd[n].length = (uint32_t)(l - skip < left ? l - skip : left);
		left -= pd[n++].length;
		skip = 0;
	}
	*npd = n;
	*nps = sge_slice(io->sge, io->nsge, pos, len, ps);
}

/* ---- the RDMA transform ([MS-SMB2] 2.2.43; docs/rdma-transform.md) ---- */

static int rio_xform_iov(const struct srv_rio *io, uint32_t pos, uint32_t len,
			 struct iovec *iov)
{
	struct smbd_sge part[SRV_MAX_SEG];
	int i, n = sge_slice(io->sge, io->nsge, pos, len, part);

	for (i = 0; i < n; i++) {
		iov[i].iov_base = part[i].addr;
		iov[i].iov_len = part[i].len;
	}
	return n;
}

/* Bytes [0, len) of the payload wiped: a failed decrypt leaves no plaintext. */
static void rio_xform_wipe(struct srv_rio *io, uint32_t len)
{
	struct iovec iov[SRV_MAX_SEG];
	int i, n = rio_xform_iov(io, 0, len, iov);

	for (i = 0; i < n; i++)
		explicit_bzero(iov[i].iov_base, iov[i].iov_len);
}

/* WRITE: the check's outcome ret counted; -EACCES if it failed. */
static int rio_xform_checked(struct srv_rio *io, int ret)
{
	if (!ret) {
		io->c->stats.xform_bytes += io->length;
		return 0;
	}
	io->c->stats.xform_bad++;
	log_ratelimited(LOG_WARN, "%s: RDMA transform: WRITE payload of %u bytes %s",
			io->c->x->peer, io->length,
			ret == -EBADMSG ? "fails its check" : "not checked");
	return -EACCES;
}

/* WRITE: the client's payload is in bounce space: decrypt it, or check it, at once. */
static int rio_xform_check(struct srv_rio *io)
{
	struct iovec iov[SRV_MAX_SEG];
	int n = rio_xform_iov(io, 0, io->length, iov), ret;

	if (io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION)
		ret = smb2_xform_decrypt(&io->kept, io->xcipher, io->xkey, io->xnonce, iov, n,
					 io->xsig);
	else
		ret = smb2_xform_verify(&io->kept, io->signer.alg, io->signer.key, io->xnonce, iov, n,
					io->xsig);
	return rio_xform_checked(io, ret);
}

/* READ: a fresh nonce from the session's generator. */
static int rio_xform_nonce(struct srv_rio *io)
{
	struct srv_channel *ch = srv_channel_find(io->c, io->hdr.session_id);
	uint16_t cipher = io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION ? io->xcipher :
			  SMB2_CIPHER_AES128_GCM;	/* signing: a 12-byte nonce */
	int ret;

	if (!ch)
		return -ENETRESET;
	ret = smb2_nonce_next(&ch->sess->xform_nonce, cipher, io->xnonce);
	if (ret)
		return ret;
	io->xnonce_len = cipher == SMB2_CIPHER_AES128_CCM || cipher == SMB2_CIPHER_AES256_CCM ?
			 11 : 12;
	/* apart from any GMAC message nonce (MessageId || 0..3) of the same key */
	io->xnonce[io->xnonce_len - 1] |= 0x80;
	return 0;
}

/* READ, at once (AES-CCM): the file's data in bounce space encrypted or signed. */
static int rio_xform_apply(struct srv_rio *io)
{
	struct iovec iov[SRV_MAX_SEG];
	int n = rio_xform_iov(io, 0, io->done, iov), ret;

	ret = rio_xform_nonce(io);
	if (ret)
		return ret;
	if (io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION)
		ret = smb2_xform_encrypt(&io->kept, io->xcipher, io->xkey, io->xnonce, iov, n,
					 io->xsig);
	else
		ret = smb2_xform_sign(&io->kept, io->signer.alg, io->signer.key, io->xnonce, iov, n,
				      io->xsig);
	if (!ret)
		io->c->stats.xform_bytes += io->done;
	return ret;
}

/*
 * In steps (io->xsteps), pipelined with the RDMA of the pieces: begun
 * with the nonce in io->xnonce (a READ takes a fresh one first), a step
 * per piece in order, ended with the tag in or out of io->xsig.
 */
static int rio_xform_begin(struct srv_rio *io)
{
	static const enum smb2_xpass_op op[2][2] = {
		{ SMB2_XPASS_SIGN, SMB2_XPASS_ENCRYPT },	/* READ */
		{ SMB2_XPASS_VERIFY, SMB2_XPASS_DECRYPT },	/* WRITE */
	};
	bool enc = io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION;
	int ret = io->write ? 0 : rio_xform_nonce(io);

	if (ret)
		return ret;
	return smb2_xpass_begin(&io->xpass, &io->kept, op[io->write][enc],
				enc ? io->xcipher : io->signer.alg, enc ? io->xkey : io->signer.key,
				io->xnonce);
}

/* The step over bytes [pos, pos + len) of the payload (bounce space or window). */
static int rio_xform_step(struct srv_rio *io, uint32_t pos, uint32_t len)
{
	struct iovec iov[SRV_MAX_SEG];
	int n = rio_xform_iov(io, pos, len, iov);

	return smb2_xpass_step(&io->xpass, iov, n);
}

/* WRITE, every piece stepped over: the tag checked (a failed decrypt wiped). */
static int rio_xform_end_check(struct srv_rio *io, int ret, uint32_t upto)
{
	if (!ret)
		ret = smb2_xpass_end(&io->xpass, io->xsig);
	smb2_xpass_abort(&io->xpass);
	if (ret && io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION)
		rio_xform_wipe(io, upto);
	return rio_xform_checked(io, ret);
}

/*
 * WRITE with the transform in pieces: the RDMA Read of one overlaps
 * the check's step over the one before. The tag or signature covers
 * the whole payload, so nothing is stored until it checked: then the
 * payload goes to the file whole (RIO_STORE, any store).
 */
static bool rio_xpipe_ok(struct srv_rio *io)
{
	if (!io->xsteps || io->length <= RIO_PIECE || rio_xform_begin(io))
		return false;
	io->piece = RIO_PIECE;
	return true;
}

/* WRITE with the transform, piece [pos, pos + len) is here: the next state. */
static enum srv_rio_state rio_xpipe_fetched(struct srv_rio *io, uint32_t pos, uint32_t len)
{
	int ret = rio_xform_step(io, pos, len);

	if (!ret && pos + len < io->length)
		return RIO_FETCH;
	io->err = rio_xform_end_check(io, ret, pos + len);
	if (io->err)
		return RIO_RESPOND;	/* it waits for a Read in flight */
	io->pipe = false;		/* stored as a transfer that was not pipelined */
	return RIO_STORE;
}

/* WRITE: the RDMA Read of bytes [pos, pos + len) from the client. */
static int rio_post_piece(struct srv_rio *io, uint32_t pos, uint32_t len)
{
	int ret;

	rio_slice(io, pos, len, io->pdesc, &io->npdesc, io->psge, &io->npsge);
	ret = rio_rdma(io, &io->rw, false, io->pdesc, io->npdesc, io->psge, io->npsge);
	if (!ret) {
		io->pos = pos;
		io->plen = len;
	}
	return ret;
}

/*
 * The CPU copy of bytes [pos, pos + len) between bounce space and the
 * file (pdesc and psge belong to the RDMA in flight: not touched).
 */
static ssize_t rio_copy_piece(struct srv_rio *io, uint32_t pos, uint32_t len)
{
	struct store_file *sf = &io->o->sf;
	struct smbd_sge part[SRV_MAX_SEG];
	struct iovec iov[SRV_MAX_SEG];
	int i, n;

	n = sge_slice(io->sge, io->nsge, pos, len, part);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = part[i].addr;
		iov[i].iov_len = part[i].len;
	}
	return io->write ? sf->ops->pwritev(sf, iov, n, io->offset + pos, io->write_through)
			 : sf->ops->preadv(sf, iov, n, io->offset + pos);
}

static uint32_t piece_len(const struct srv_rio *io, uint32_t pos)
{
	return io->length - pos < io->piece ? io->length - pos : io->piece;
}

/*
 * WRITE, a piece has arrived (RIO_FETCH): post the next one's RDMA Read,
 * then copy this one into the file. Returns the next state, or
 * RIO_FETCH while a Read is in flight.
 */
static enum srv_rio_state rio_pipe_fetched(struct srv_rio *io)
{
	uint32_t pos = io->pos, len = io->plen, next = pos + len;
	ssize_t n;
	int ret;

	if (next < io->length) {
		ret = rio_post_piece(io, next, piece_len(io, next));
		if (ret) {
			io->err = ret;
			return RIO_RESPOND;
		}
	}
	if (io->xform)
		return rio_xpipe_fetched(io, pos, len);
	n = rio_copy_piece(io, pos, len);
	if (n < 0 || (uint32_t)n != len) {
		io->err = n < 0 ? (int)n : -EIO;
		return RIO_RESPOND;	/* it waits for a Read in flight */
	}
	io->done = next;
	return next < io->length ? RIO_FETCH : RIO_RESPOND;
}

/*
 * READ, a piece at a time: copied from the file into bounce space when
 * copy (RIO_STORE of a pipelined READ), the transform's step over it
 * when there is one, then its RDMA Write posted at once on its own rw,
 * so the NIC moves the pieces before it while the CPU copies or
 * ciphers the next (the transport keeps them in order, within the send
 * queue). A short copy is the end of the file. The answer (with the
 * transform's tag, known after the last piece) is posted after the
 * last Write on the same send queue; RC ordering puts the data first
 * at the client.
 */
static enum srv_rio_state rio_push_pieces(struct srv_rio *io, bool copy)
{
	struct smbd_desc *pd = io->pdesc;
	struct smbd_sge *ps = io->psge;
	uint32_t pos = 0, total = copy ? io->length : io->done;
	int k, nd, ns, ret;

	if (io->xform && (ret = rio_xform_begin(io))) {
		io->err = ret;
		return RIO_RESPOND;
	}
	for (k = 0; k < SRV_RIO_PIECES && pos < total; k++) {
		uint32_t len = total - pos < io->piece ? total - pos : io->piece;
		ssize_t n = len;

		if (io->c->closing || io->err)
			break;
		if (copy)
			n = rio_copy_piece(io, pos, len);
		if (n <= 0) {
			if (n < 0)
				io->err = (int)n;
			else if (!pos)
				io->err = -E_SMB_END_OF_FILE;
			break;
		}
		if (io->xform && (ret = rio_xform_step(io, pos, (uint32_t)n))) {
			io->err = ret;
			break;
		}
		rio_slice(io, pos, (uint32_t)n, pd, &nd, ps, &ns);
		ret = rio_rdma(io, &io->prw[k], true, pd, nd, ps, ns);
		if (ret) {
			io->err = ret;
			break;
		}
		pd += nd;
		ps += ns;
		pos += (uint32_t)n;
		io->done = pos;
		if ((uint32_t)n < len)
			break;
	}
	if (io->xform && !io->err && !(io->err = smb2_xpass_end(&io->xpass, io->xsig)))
		io->c->stats.xform_bytes += io->done;
	smb2_xpass_abort(&io->xpass);
	return RIO_RESPOND;
}

/*
 * Segments and descriptors trimmed to the n bytes read (short at EOF;
 * a READ's descriptors may total more than its Length).
 */
static void rio_trim(struct srv_rio *io, uint32_t n)
{
	uint64_t left = n;
	int i, nd = 0;

	for (i = 0; i < io->nsge && left; i++) {
		if (io->sge[i].len > left)
			io->sge[i].len = (uint32_t)left;
		left -= io->sge[i].len;
	}
	io->nsge = i ? i : 1;
	left = n;
	while (left) {
		if (io->desc[nd].length > left)
			io->desc[nd].length = (uint32_t)left;
		left -= io->desc[nd].length;
		nd++;
	}
	io->ndesc = nd;
}

/* Bounce space came back: start the waiters that now fit, in order. */
static void wake_waiters(struct srv_rdev *d)
{
	while (!list_empty(&d->waiters)) {
		struct srv_rio *io = list_entry(d->waiters.next, struct srv_rio, wait_link);

		if (mem_pool_free_bytes(d->bounce) < io->length)
			return;
		list_del(&io->wait_link);
		io->waiting = false;
		io->woken = true;
		rio_advance(io);
		/* it did not fit after all (space in too many pieces): wait */
		if (io->waiting)
			return;
	}
}

static void rio_release(struct srv_rio *io)
{
	struct srv_conn *c = io->c;
	struct srv_rdev *d = c->rdev;
	bool gave_back = io->nseg > 0;

	if (io->nseg)
		mem_pool_put(d->bounce, io->seg, io->nseg);
	if (io->win)
		io->o->sf.ops->window_put(&io->o->sf);
	c->rio_active--;
	srv_chanseq_done(&io->cseq);
	srv_open_put(io->o);
	explicit_bzero(&io->signer, sizeof(io->signer));
	explicit_bzero(&io->sealer, sizeof(io->sealer));
	explicit_bzero(io->xkey, sizeof(io->xkey));
	smb2_xpass_abort(&io->xpass);
	if (io->rxbuf) {
		/* the kept message buffer: the connection's next spare */
		if (!c->rx_spare) {
			c->rx_spare = io->rxbuf;
			c->rx_spare_cap = io->rxcap;
		} else {
			free(io->rxbuf);
		}
		c->tcp_writes--;
	}
	rio_put(c, io);
	if (gave_back)
		wake_waiters(d);
	/* the message held meanwhile runs now */
	if (!c->tcp_writes && c->held && !c->closing) {
		c->held = false;
		if (c->x->ops->resume(c->x) < 0)
			c->closing = true;
	}
}

/*
 * The one place a transfer moves on:
 *   NEW -> BUFFER -> (WRITE) FETCH -> STORE -> RESPOND -> DONE
 *                 -> (READ)  STORE -> PUSH  -> RESPOND -> DONE
 * A zero-copy READ skips STORE, a zero-copy WRITE persists in STORE.
 * It returns whenever something is in flight (RDMA, io_uring) or the
 * transfer waits for bounce space; its completion calls it again. An
 * error goes straight to RESPOND; a connection closing answers nothing.
 */
static void rio_advance(struct srv_rio *io)
{
	int ret;

	for (;;) {
		switch (io->state) {
		case RIO_NEW:
			io->state = RIO_BUFFER;
			break;
		case RIO_BUFFER:
			ret = io->tcp ? rio_tcp_buffer(io) : rio_buffer(io);
			if (!ret)
				return;		/* wake_waiters calls again */
			if (ret < 0) {
				io->err = ret;
				io->state = RIO_RESPOND;
			} else if (io->tcp) {
				/* the data is in the message, or goes from the window or file */
				io->state = io->write || !(io->win || io->sendfile) ? RIO_STORE
										   : RIO_RESPOND;
			} else if (io->write) {
				io->state = RIO_FETCH;
				io->pipe = io->xform ? rio_xpipe_ok(io) : rio_pipe_ok(io);
				ret = io->pipe ? rio_post_piece(io, 0, piece_len(io, 0))
					       : rio_post(io, false);
				if (ret) {
					io->err = ret;
					io->state = RIO_RESPOND;
					break;
				}
				io->c->stats.rdma_writes++;
				if (io->inflight)
					return;
			} else {
				io->pipe = rio_pipe_ok(io);
				io->state = io->win ? RIO_PUSH : RIO_STORE;
			}
			break;
		case RIO_FETCH:
			/* the client's data is here (or the RDMA Read failed) */
			if (io->err)
				io->state = RIO_RESPOND;
			else if (io->pipe)
				io->state = rio_pipe_fetched(io);
			else if (io->xform && (io->err = rio_xform_check(io)))
				io->state = RIO_RESPOND;
			else
				io->state = RIO_STORE;
			if (io->state == RIO_FETCH && io->inflight)
				return;		/* the next piece's Read is in flight */
			break;
		case RIO_STORE:
			if (io->pipe) {
				io->state = rio_push_pieces(io, true);
				break;
			}
			if (io->win) {
				/* the NIC wrote the file's memory: make it persistent */
				io->o->sf.ops->persist(&io->o->sf, io->win, io->length);
				io->res = io->length;
			} else if (rio_store(io)) {
				io->state = RIO_STORED;
				return;
			}
			io->state = RIO_STORED;
			break;
		case RIO_STORED:
			if (io->res < 0)
				io->err = (int)io->res;
			else if (!io->write && ((!io->res && io->length) ||
						(uint64_t)io->res < io->minimum))
				io->err = -E_SMB_END_OF_FILE;
			else
				io->done = (uint32_t)io->res;
			io->state = io->err || io->write || io->tcp ? RIO_RESPOND : RIO_PUSH;
			break;
		case RIO_PUSH:
			if (io->c->closing) {
				io->state = RIO_DONE;
				break;
			}
			if (io->win)
				io->done = io->length;
			/* what moves: done bytes (a READ's descriptors may hold more) */
			rio_trim(io, io->done);
			if (io->xsteps) {
				/* the cipher or signature pass overlaps the Writes */
				io->piece = read_piece(io->done, RIO_PIECE);
				io->state = rio_push_pieces(io, false);
				break;
			}
			if (io->xform && (io->err = rio_xform_apply(io))) {
				io->state = RIO_RESPOND;
				break;
			}
			ret = rio_post(io, true);
			if (ret)
				io->err = ret;
			/* RC ordering puts the data before this send at the client */
			io->state = RIO_RESPOND;
			break;
		case RIO_RESPOND:
			if (!io->responded) {
				io->responded = true;
				rio_respond(io);
			}
			if (io->inflight)
				return;		/* the RDMA Write's completion ends it */
			io->state = RIO_DONE;
			break;
		case RIO_DONE:
			rio_release(io);
			return;
		}
	}
}

/* Dropped while it waits for bounce space (its connection goes). */
static void rio_cancel(struct srv_rio *io)
{
	io->waiting = false;
	io->state = RIO_DONE;
	rio_advance(io);
}

static int nonce_len_of(uint16_t cipher)
{
	return cipher == SMB2_CIPHER_AES128_CCM || cipher == SMB2_CIPHER_AES256_CCM ? 11 : 12;
}

/*
 * Channel SMB2_CHANNEL_RDMA_TRANSFORM ([MS-SMB2] 2.2.43): a transform
 * this connection took, of the kind the message is (encryption in an
 * encrypted message, signing in a signed one), a WRITE's signature and
 * nonce of the lengths its algorithm has and a nonce not seen before.
 * Its inner channel and descriptors are the request's from here on.
 */
static int rio_xform_in(struct srv_req *req, struct srv_rio *io, const struct smb2_buf *ci,
			uint32_t *channel, struct smb2_buf *desc)
{
	struct srv_conn *c = req->conn;
	struct srv_session *sess = req->sess;
	struct smb2_rdma_xform x;
	const char *why;
	bool enc;

	if (c->dialect != SMB2_DIALECT_311 || (!c->xform_enc && !c->xform_sign)) {
		why = c->dialect != SMB2_DIALECT_311 ? "on a connection below SMB 3.1.1" :
		      "not negotiated on this connection";
		goto bad;
	}
	if (smb2_rdma_xform_decode(ci->p, ci->len, &x) || x.channel == SMB2_CHANNEL_NONE) {
		why = "malformed";
		goto bad;
	}
	enc = x.type == SMB2_RDMA_XFORM_TYPE_ENCRYPTION;
	if (enc != req->encrypted || (enc ? !c->xform_enc : !c->xform_sign) ||
	    (!enc && !io->sign)) {
		why = enc ? "encryption where the message is not encrypted (or not negotiated)" :
		      "signing where the message is not signed (or not negotiated)";
		goto bad;
	}
	io->xform = x.type;
	io->xcipher = sess->cipher;
	io->xsteps = smb2_xpass_can(enc ? SMB2_XPASS_ENCRYPT : SMB2_XPASS_SIGN,
				    enc ? sess->cipher : io->signer.alg);
	if (enc)
		memcpy(io->xkey, io->write ? sess->keys.c2s : sess->keys.s2c, sizeof(io->xkey));
	if (io->write) {
		if (x.sig_len != 16 || x.nonce_len != nonce_len_of(enc ? sess->cipher :
								   SMB2_CIPHER_AES128_GCM)) {
			why = "with a signature or nonce of the wrong length";
			goto bad;
		}
		if (smb2_xform_replay_check(&c->xform_seen, x.nonce, x.nonce_len)) {
			why = "with a nonce seen before (or out of its window)";
			goto bad;
		}
		memcpy(io->xsig, x.sig, 16);
		memcpy(io->xnonce, x.nonce, x.nonce_len);
		io->xnonce_len = x.nonce_len;
	}
	*channel = x.channel;
	desc->p = x.desc;
	desc->len = x.desc_len;
	return 0;
bad:
	c->stats.xform_bad++;
	log_ratelimited(LOG_WARN, "%s: RDMA transform %s refused", c->x->peer, why);
	return -EINVAL;
}

/* What every transfer takes from its request. */
static void rio_init(struct srv_rio *io, struct srv_req *req, struct srv_open *o,
		     bool write, uint64_t offset, uint32_t length)
{
	io->c = req->conn;
	io->o = o;
	io->hdr = req->hdr;
	io->start_ns = req->start_ns;
	io->hdr.session_id = req->sess->id;
	io->hdr.tree_id = req->tree->id;
	io->write = write;
	io->offset = offset;
	io->length = length;
	io->sign = req->have_signer &&
		   (req->sess->signing_required || req->hdr.flags & SMB2_FLAGS_SIGNED);
	io->signer = req->signer;
	io->cancel = rio_cancel;
	io->state = RIO_NEW;
	/* answered later: the transfer keeps the request's count */
	io->cseq = req->cseq;
	req->cseq.o = NULL;
	srv_open_ref(o);
	io->c->rio_active++;
}

/* [MS-SMB2] 3.3.5.12/13 + [MS-SMBD] checks; then the transfer starts. */
static int rio_new(struct srv_req *req, struct srv_open *o, bool write,
		   uint32_t channel, const struct smb2_buf *ci, uint64_t offset,
		   uint32_t want, struct srv_rio **out)
{
	struct srv_conn *c = req->conn;
	bool xform = channel == SMB2_CHANNEL_RDMA_TRANSFORM;
	struct smb2_buf dl = *ci;
	struct smbd_info info;
	struct srv_rio *io;
	uint64_t total = 0;
	int i, n;

	if (!c->x->rdma || !c->rdev) {
		log_ratelimited(LOG_WARN, "%s: RDMA channel on a TCP connection", c->x->peer);
		return -EINVAL;
	}
	if (!xform && channel != SMB2_CHANNEL_RDMA_V1 &&
	    channel != SMB2_CHANNEL_RDMA_V1_INVALIDATE)
		return -EINVAL;
	/* an encrypted message's data moves by RDMA only transformed */
	if ((req->encrypted && !xform) || !req->single) {
		log_ratelimited(LOG_WARN, "%s: RDMA channel %s refused", c->x->peer,
				req->single ? "on an encrypted message" :
				"inside a compound");
		return -EINVAL;
	}
	if (!c->rdev->bounce)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	io = rio_get(c);
	if (!io)
		return -ENOMEM;
	io->write = write;
	io->sign = req->have_signer &&
		   (req->sess->signing_required || req->hdr.flags & SMB2_FLAGS_SIGNED);
	io->signer = req->signer;
	if (xform && rio_xform_in(req, io, ci, &channel, &dl))
		goto out_put;
	/* invalidation exists from 3.0.2 on */
	if (channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE && c->dialect < SMB2_DIALECT_302)
		goto out_put;
	n = smbd_desc_decode(dl.p, dl.len, io->desc, SRV_MAX_DESC);
	if (n < 0) {
		log_ratelimited(LOG_WARN, "%s: bad buffer descriptor list (%u bytes)",
				c->x->peer, dl.len);
		goto out_put;
	}
	smbd_get_info(c->x, &info);
	for (i = 0; i < n; i++) {
		if (io->desc[i].length > info.max_read_write)
			goto out_put;
		total += io->desc[i].length;
	}
	if (total > info.max_read_write || total > SMB2_MAX_IO_SIZE ||
	    (write ? total != want : total < want) || !want) {
		log_ratelimited(LOG_WARN, "%s: descriptors total %llu for a %s of %u (limit %u)",
				c->x->peer, (unsigned long long)total,
				write ? "WRITE" : "READ", want, info.max_read_write);
		goto out_put;
	}
	if (req->encrypted) {
		io->seal = true;
		io->sealer.cipher = req->sess->cipher;
		memcpy(io->sealer.key, req->sess->keys.s2c, sizeof(io->sealer.key));
	}
	io->ndesc = n;
	rio_init(io, req, o, write, offset, want);
	io->may_submit = true;
	io->invalidate = channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE;
	*out = io;
	return 0;
out_put:
	explicit_bzero(io->xkey, sizeof(io->xkey));
	explicit_bzero(&io->signer, sizeof(io->signer));
	rio_put(c, io);
	return -EINVAL;
}

int srv_rdma_read(struct srv_req *req, struct srv_open *o,
		  const struct smb2_read_req *r)
{
	struct srv_rio *io;
	int ret;

	ret = rio_new(req, o, false, r->channel, &r->channel_info, r->offset,
		      r->length, &io);
	if (ret)
		return ret;
	rio_advance(io);
	return SRV_ASYNC;
}

int srv_rdma_write(struct srv_req *req, struct srv_open *o,
		   const struct smb2_write_req *r)
{
	struct srv_rio *io;
	int ret;

	/* data comes by RDMA: Length and DataOffset are 0 */
	if (r->length || r->data_offset)
		return -EINVAL;
	ret = rio_new(req, o, true, r->channel, &r->channel_info, r->offset,
		      r->remaining, &io);
	if (ret)
		return ret;
	io->write_through = o->write_through || (r->flags & SMB2_WRITEFLAG_WRITE_THROUGH);
	rio_advance(io);
	return SRV_ASYNC;
}

/*
 * TCP: the transfer starts answered inline (io->req); if its store goes
 * async it is answered later. ret is the handler's answer.
 */
static int rio_tcp_run(struct srv_rio *io, struct srv_req *req)
{
	int ret = SRV_ASYNC;

	io->tcp = true;
	io->req = req;
	io->ret = &ret;
	rio_advance(io);
	return ret;
}

int srv_tcp_read(struct srv_req *req, struct srv_open *o, const struct smb2_read_req *r)
{
	struct srv_rio *io = rio_get(req->conn);

	if (!io)
		return -ENOMEM;
	rio_init(io, req, o, false, r->offset, r->length);
	io->minimum = r->minimum;
	return rio_tcp_run(io, req);
}

int srv_tcp_write(struct srv_req *req, struct srv_open *o, uint64_t off,
		  const uint8_t *data, uint32_t len, bool write_through, void *win)
{
	struct srv_conn *c = req->conn;
	struct srv_rio *io = rio_get(c);

	if (!io) {
		if (win)
			o->sf.ops->window_put(&o->sf);
		return -ENOMEM;
	}
	rio_init(io, req, o, true, off, len);
	io->write_through = write_through;
	io->buf = (uint8_t *)data;
	io->win = win;
	/*
	 * A large lone clear WRITE may be answered later: its message's
	 * buffer goes with it (rio_keep_msg), the response is signed
	 * alone. Small ones cost less inline than a handoff.
	 */
	io->may_submit = c->srv->cfg->tcp_async_write && !win && req->single &&
			 !req->encrypted && c->x->ops->rx_swap && len >= SRV_ASYNC_WRITE_MIN;
	return rio_tcp_run(io, req);
}
