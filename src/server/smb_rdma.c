// SPDX-License-Identifier: MIT
/*
 * SMB2 READ and WRITE over SMB-Direct RDMA channels ([MS-SMB2] 3.3.5.12,
 * 3.3.5.13; [MS-SMBD] 3.1.4.x): descriptor checks before any RDMA is
 * posted, a registered bounce pool per worker and device, RDMA Write of
 * read data / RDMA Read of written data, and Send-With-Invalidate of
 * the client's token when the channel asks for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fcntl.h>

#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"


/* ---- RDMA I/O ---- */

static void wake_waiters(struct srv_rdev *d);

static void rio_free(struct srv_rio *io)
{
	struct srv_rdev *d = io->c->rdev;
	bool gave_back = io->nseg > 0;

	if (io->nseg)
		mem_pool_put(d->bounce, io->seg, io->nseg);
	if (io->win)
		io->o->sf.ops->window_put(&io->o->sf);
	io->c->rio_active--;
	srv_chanseq_done(&io->cseq);
	srv_open_put(io->o);
	explicit_bzero(&io->signer, sizeof(io->signer));
	free(io);
	if (gave_back)
		wake_waiters(d);
}

static void read_rsp_body(struct wcur *w, void *arg)
{
	struct srv_rio *io = arg;
	struct smb2_read_rsp r = {
		.data_offset = SMB2_READ_RSP_DATA_OFF,
		.data_remaining = io->done,
	};

	/* 80 bytes: the data went by RDMA (Linux cifs reads exactly this) */
	smb2_read_rsp_encode(w, &r);
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
	struct srv_channel *ch = srv_channel_find(io->c, io->hdr.session_id);

	if (ch)
		atomic_fetch_add_explicit(io->write ? &ch->st.bytes_in : &ch->st.bytes_out,
					  io->done, memory_order_relaxed);
	srv_io_account(io->c->w, io->o->share, true, io->write, io->done, io->start_ns);
}

static void rio_respond(struct srv_rio *io, int err)
{
	int ret;

	if (io->responded || io->c->closing)
		return;
	io->responded = true;
	if (!err)
		rio_count(io);
	ret = srv_respond_async(io->c, &io->hdr, io->hdr.session_id,
				io->hdr.tree_id, io->sign ? &io->signer : NULL, err,
				io->write ? write_rsp_body : read_rsp_body, io,
				io->invalidate, io->desc[0].token);
	if (ret)
		io->c->closing = true;
}

/* RDMA Write of read data finished: only the bounce space is left. */
static void read_done(struct smbd_rw *rw)
{
	struct srv_rio *io = container_of(rw, struct srv_rio, rw);

	rio_free(io);
}

static void write_stored(struct store_rw *srw);
static void read_loaded(struct store_rw *srw);

/*
 * The bounce segments go to or come from the file asynchronously where
 * the open's store can (io_uring, fixed buffers), and the request goes
 * on in write_stored/read_loaded. False: do it inline.
 */
static bool rio_store_async(struct srv_rio *io)
{
	struct srv_conn *c = io->c;
	struct srv_worker *w = c->w;
	struct store_rw *srw = &io->srw;
	struct store_file *sf = &io->o->sf;
	int i;

	if (io->nseg > STORE_RW_MAX_SEG)
		return false;
	memset(srw, 0, sizeof(*srw));
	srw->write = io->write;
	srw->niov = io->nseg;
	srw->off = io->offset;
	srw->buf_index = (int)(c->rdev - w->rdev);
	for (i = 0; i < io->nseg; i++) {
		srw->iov[i].iov_base = io->seg[i].addr;
		srw->iov[i].iov_len = io->seg[i].len;
	}
	srw->rwflags = io->write && io->write_through ? RWF_DSYNC : 0;
	srw->done = io->write ? write_stored : read_loaded;
	if (sf->ops->submit(sf, w->ring, srw))
		return false;
	w->uring_ops++;
	w->uring_direct_ops += srw->direct;
	c->store_active++;
	return true;
}

/* RDMA Read of written data finished: store it, then answer. */
static void write_done(struct smbd_rw *rw)
{
	struct srv_rio *io = container_of(rw, struct srv_rio, rw);
	struct iovec iov[SRV_MAX_SEG];
	ssize_t n = 0;
	int i, err = 0;

	if (rw->status) {
		err = -EIO;
		goto out;
	}
	if (io->win) {
		/* the NIC wrote the file's memory: flush it to persistence */
		io->o->sf.ops->persist(&io->o->sf, io->win, io->length);
		n = io->length;
		io->c->stats.zero_copy_bytes += (uint64_t)n;
		goto done;
	}
	if (rio_store_async(io))
		return;		/* write_stored() answers */
	for (i = 0; i < io->nseg; i++) {
		iov[i].iov_base = io->seg[i].addr;
		iov[i].iov_len = io->seg[i].len;
	}
	n = srv_pwritev(io->o, iov, io->nseg, io->offset, io->write_through);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
done:
	io->done = (uint32_t)n;
	io->c->stats.bytes_written += (uint64_t)n;
	io->c->stats.rdma_bytes += (uint64_t)n;
out:
	rio_respond(io, err);
	rio_free(io);
}

static int rio_start(struct srv_rio *io, bool woken);
static void rio_read_post(struct srv_rio *io, ssize_t n);

static void write_stored(struct store_rw *srw)
{
	struct srv_rio *io = container_of(srw, struct srv_rio, srw);
	int err = 0;

	io->c->store_active--;
	if (srw->res < 0) {
		err = (int)srw->res;
	} else {
		io->o->sf.ops->complete(&io->o->sf, srw);
		io->done = (uint32_t)srw->res;
		io->c->stats.bytes_written += (uint64_t)srw->res;
		io->c->stats.rdma_bytes += (uint64_t)srw->res;
	}
	rio_respond(io, err);
	rio_free(io);
}

static void read_loaded(struct store_rw *srw)
{
	struct srv_rio *io = container_of(srw, struct srv_rio, srw);

	io->c->store_active--;
	if (io->c->closing) {
		rio_free(io);
		return;
	}
	rio_read_post(io, srw->res);
}

/*
 * Bounce space came back: start the waiters that now fit, in order. The
 * first that still does not (free bytes are not always a fit: the space
 * may be in too many pieces) goes back to the head and ends the walk
 * until more comes back.
 */
static void wake_waiters(struct srv_rdev *d)
{
	while (!list_empty(&d->waiters)) {
		struct srv_rio *io = list_entry(d->waiters.next, struct srv_rio, wait_link);

		if (mem_pool_free_bytes(d->bounce) < io->length)
			return;
		list_del(&io->wait_link);
		if (rio_start(io, true) == -EAGAIN)
			return;
	}
}

/*
 * Direct and odp rungs: the NIC moves the data straight between the
 * client's buffer and the file's mapping. Only ranges already mapped
 * (below EOF) qualify; growth, EOF trimming and the rest take the
 * bounce pool. Returns 1 if started, 0 to fall back, <0 on failure.
 */
static int rio_zero_copy(struct srv_rio *io)
{
	struct srv_share *sh = io->o->share;
	struct srv_rdev *d = io->c->rdev;
	uint32_t lkey;
	int ret;

	if ((sh->rung != MEM_RUNG_DIRECT && sh->rung != MEM_RUNG_ODP) ||
	    sh->idx >= d->nshare_mr || !d->share_mr[sh->idx])
		return 0;
	lkey = mem_mr_lkey(d->share_mr[sh->idx]);
	io->win = io->o->sf.ops->window(&io->o->sf, io->offset, io->length, io->write);
	if (!io->win)
		return 0;
	io->sge[0].addr = io->win;
	io->sge[0].len = io->length;
	io->sge[0].lkey = lkey;
	io->rw.done = io->write ? write_done : read_done;
	ret = smbd_rw_post(io->c->x, !io->write, io->desc, io->ndesc, io->sge, 1, &io->rw);
	if (ret)
		return ret;
	if (io->write) {
		io->c->stats.rdma_writes++;
		return 1;
	}
	io->done = io->length;
	io->c->stats.rdma_reads++;
	io->c->stats.bytes_read += io->done;
	io->c->stats.rdma_bytes += io->done;
	io->c->stats.zero_copy_bytes += io->done;
	rio_respond(io, 0);
	return 1;
}

/* -EAGAIN: queued for bounce space (a woken waiter at the head again) */
static int rio_start(struct srv_rio *io, bool woken)
{
	struct srv_rdev *d = io->c->rdev;
	struct iovec iov[SRV_MAX_SEG];
	ssize_t n;
	int i, ret;

	ret = rio_zero_copy(io);
	if (ret > 0)
		return 0;
	if (ret < 0)
		goto out_fail;
	ret = mem_pool_get(d->bounce, io->length, io->seg, SRV_MAX_SEG);
	if (ret == -EAGAIN) {
		if (woken)
			list_add(&io->wait_link, &d->waiters);
		else
			list_add_tail(&io->wait_link, &d->waiters);
		return -EAGAIN;
	}
	if (ret < 0)
		goto out_fail;
	io->nseg = ret;
	for (i = 0; i < io->nseg; i++) {
		io->sge[i].addr = io->seg[i].addr;
		io->sge[i].len = io->seg[i].len;
		io->sge[i].lkey = io->seg[i].lkey;
	}
	if (io->write) {
		io->rw.done = write_done;
		ret = smbd_rw_post(io->c->x, false, io->desc, io->ndesc, io->sge,
				   io->nseg, &io->rw);
		if (ret)
			goto out_fail;
		io->c->stats.rdma_writes++;
		return 0;
	}
	if (rio_store_async(io))
		return 0;	/* read_loaded() goes on */
	for (i = 0; i < io->nseg; i++) {
		iov[i].iov_base = io->seg[i].addr;
		iov[i].iov_len = io->seg[i].len;
	}
	n = srv_preadv(io->o, iov, io->nseg, io->offset);
	rio_read_post(io, n);
	return 0;
out_fail:
	rio_respond(io, ret);
	rio_free(io);
	return 0;
}

/* The bounce holds n bytes of the file (or n < 0): send them by RDMA. */
static void rio_read_post(struct srv_rio *io, ssize_t n)
{
	uint64_t left;
	int i, nd, ret;

	if (n < 0) {
		ret = (int)n;
		goto out_fail;
	}
	if (n == 0) {
		ret = -E_SMB_END_OF_FILE;
		goto out_fail;
	}
	/* short read at EOF: trim segments and descriptors to n bytes */
	io->done = (uint32_t)n;
	left = io->done;
	for (i = 0; i < io->nseg; i++) {
		if (io->sge[i].len > left)
			io->sge[i].len = (uint32_t)left;
		left -= io->sge[i].len;
		if (!io->sge[i].len)
			break;
	}
	nd = 0;
	left = io->done;
	while (left) {
		if (io->desc[nd].length > left)
			io->desc[nd].length = (uint32_t)left;
		left -= io->desc[nd].length;
		nd++;
	}
	io->rw.done = read_done;
	ret = smbd_rw_post(io->c->x, true, io->desc, nd, io->sge, i ? i : 1, &io->rw);
	if (ret)
		goto out_fail;
	io->c->stats.rdma_reads++;
	io->c->stats.bytes_read += io->done;
	io->c->stats.rdma_bytes += io->done;
	/* RC ordering puts the data before this send at the client */
	rio_respond(io, 0);
	return;
out_fail:
	rio_respond(io, ret);
	rio_free(io);
}

/* [MS-SMB2] 3.3.5.12/13 + [MS-SMBD] checks; then the I/O goes async. */
static int rio_new(struct srv_req *req, struct srv_open *o, bool write,
		   uint32_t channel, const struct smb2_buf *ci, uint64_t offset,
		   uint32_t want, struct srv_rio **out)
{
	struct srv_conn *c = req->conn;
	struct smbd_info info;
	struct srv_rio *io;
	uint64_t total = 0;
	int i, n;

	if (!c->x->rdma || !c->rdev) {
		log_ratelimited(LOG_WARN, "%s: RDMA channel on a TCP connection", c->x->peer);
		return -EINVAL;
	}
	if (channel != SMB2_CHANNEL_RDMA_V1 && channel != SMB2_CHANNEL_RDMA_V1_INVALIDATE)
		return -EINVAL;
	/* invalidation exists from 3.0.2 on */
	if (channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE && c->dialect < SMB2_DIALECT_302)
		return -EINVAL;
	if (req->encrypted || !req->single) {
		log_ratelimited(LOG_WARN, "%s: RDMA channel %s refused", c->x->peer,
				req->encrypted ? "on an encrypted message" :
				"inside a compound");
		return -EINVAL;
	}
	if (!c->rdev->bounce)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	n = smbd_desc_decode(ci->p, ci->len, io->desc, SRV_MAX_DESC);
	if (n < 0) {
		log_ratelimited(LOG_WARN, "%s: bad buffer descriptor list (%u bytes)",
				c->x->peer, ci->len);
		free(io);
		return -EINVAL;
	}
	smbd_get_info(c->x, &info);
	for (i = 0; i < n; i++) {
		if (io->desc[i].length > info.max_read_write) {
			free(io);
			return -EINVAL;
		}
		total += io->desc[i].length;
	}
	if (total > info.max_read_write || total > SMB2_MAX_IO_SIZE ||
	    (write ? total != want : total < want) || !want) {
		log_ratelimited(LOG_WARN, "%s: descriptors total %llu for a %s of %u (limit %u)",
				c->x->peer, (unsigned long long)total,
				write ? "WRITE" : "READ", want, info.max_read_write);
		free(io);
		return -EINVAL;
	}
	io->ndesc = n;
	io->c = c;
	io->o = o;
	io->hdr = req->hdr;
	io->start_ns = req->start_ns;
	io->hdr.session_id = req->sess->id;
	io->hdr.tree_id = req->tree->id;
	io->write = write;
	io->offset = offset;
	io->length = want;
	io->invalidate = channel == SMB2_CHANNEL_RDMA_V1_INVALIDATE;
	io->sign = req->have_signer &&
		   (req->sess->signing_required || req->hdr.flags & SMB2_FLAGS_SIGNED);
	io->signer = req->signer;
	io->cancel = rio_free;
	/* answered later: the transfer keeps the request's count */
	io->cseq = req->cseq;
	req->cseq.o = NULL;
	srv_open_ref(o);
	c->rio_active++;
	*out = io;
	return 0;
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
	rio_start(io, false);
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
	rio_start(io, false);
	return SRV_ASYNC;
}
