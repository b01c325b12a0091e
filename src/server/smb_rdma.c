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
#include <rdma/rdma_cma.h>

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
		dax_window_put(io->o->file->dax);
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
 * POSIX store with a worker ring: the bounce segments go to or come from
 * the file through io_uring (fixed buffers; O_DIRECT when aligned), and
 * the request continues in write_stored/read_loaded. False: do it inline.
 */
static bool rio_store_async(struct srv_rio *io)
{
	struct srv_conn *c = io->c;
	struct srv_worker *w = c->w;
	struct store_rw *srw = &io->srw;
	struct dax_file *dax = io->o->file ? io->o->file->dax : NULL;
	int i, dfd, tfd = -1;

	if (!w->ring || io->nseg > STORE_RW_MAX_SEG)
		return false;
	/*
	 * DAX: growth goes through the file system with RWF_DSYNC (a journal
	 * commit); on the ring several of them share commits. The rest is
	 * a CPU copy into the mapping, done inline.
	 */
	if (dax && (!io->write || (tfd = dax_tail_fd(dax, io->offset)) < 0))
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
	if (io->write)
		srw->rwflags = io->write_through ? RWF_DSYNC : 0;
	srw->fd = io->o->fd;
	if (tfd >= 0) {
		srw->fd = tfd;
		srw->rwflags = RWF_DSYNC;
		io->dax_tail = true;
	} else if (store_rw_aligned(srw, 4096)) {
		dfd = srv_file_direct_fd(io->o, io->write);
		if (dfd >= 0) {
			srw->fd = dfd;
			w->uring_direct_ops++;
		}
	}
	srw->done = io->write ? write_stored : read_loaded;
	if (store_ring_submit(w->ring, srw))
		return false;
	w->uring_ops++;
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
		dax_persist(io->o->file->dax, io->win, io->length);
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
		if (io->dax_tail)
			dax_tail_written(io->o->file->dax, (uint64_t)srw->res);
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
	struct dax_file *dax = io->o->file ? io->o->file->dax : NULL;
	struct srv_rdev *d = io->c->rdev;
	struct ibv_mr *mr;
	int ret;

	if ((sh->rung != SRV_RUNG_DIRECT && sh->rung != SRV_RUNG_ODP) || !dax ||
	    io->o->is_dir || sh->idx >= d->nshare_mr || !(mr = d->share_mr[sh->idx]))
		return 0;
	io->win = dax_window(dax, io->offset, io->length, io->write);
	if (!io->win)
		return 0;
	io->sge[0].addr = io->win;
	io->sge[0].len = io->length;
	io->sge[0].lkey = mr->lkey;
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

/* ---- the registration ladder ---- */

const char *srv_rung_name(enum srv_rung r)
{
	switch (r) {
	case SRV_RUNG_DIRECT:
		return "direct";
	case SRV_RUNG_ODP:
		return "odp";
	case SRV_RUNG_BOUNCE:
		return "bounce";
	case SRV_RUNG_NONE:
		return "none";
	default:
		return "auto";
	}
}

/* Implicit ODP with RC RDMA Read and Write: what the odp rung needs. */
static bool dev_odp(struct ibv_context *v, char *why, size_t len)
{
	struct ibv_device_attr_ex a;
	uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;

	memset(&a, 0, sizeof(a));
	if (ibv_query_device_ex(v, NULL, &a)) {
		snprintf(why, len, "%s: ibv_query_device_ex: %s",
			 ibv_get_device_name(v->device), strerror(errno));
		return false;
	}
	if (!(a.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    !(a.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) ||
	    (a.odp_caps.per_transport_caps.rc_odp_caps & need) != need) {
		snprintf(why, len, "%s has no implicit on-demand paging for RC RDMA Read/Write "
			 "(odp general caps 0x%llx, rc 0x%x)", ibv_get_device_name(v->device),
			 (unsigned long long)a.odp_caps.general_caps,
			 a.odp_caps.per_transport_caps.rc_odp_caps);
		return false;
	}
	snprintf(why, len, "%s supports implicit ODP", ibv_get_device_name(v->device));
	return true;
}

/*
 * A 2 MiB unnamed file in each DAX share, mapped as files are, for
 * dev_direct. Made at start before the capability drop: rdaxd is then
 * still allowed to write into a share root that belongs to a user (0755);
 * afterwards, without CAP_DAC_OVERRIDE, it is not. A share without one
 * (it could not be made) ends on the bounce or odp rung, with the reason.
 */
void srv_ladder_prepare(struct srv *s)
{
	char why[256];
	int i, fd;

	for (i = 0; i < s->cfg->nlisten && !s->cfg->listen[i].rdma; i++)
		;
	if (i == s->cfg->nlisten)
		return;
	for (i = 0; i < s->cfg->nshares; i++) {
		struct srv_share *sh = s->cfg->shares[i];

		if (sh->ipc || sh->store != SRV_STORE_DAX || sh->devdax ||
		    sh->rung_want == SRV_RUNG_BOUNCE)
			continue;
		fd = openat(sh->root.fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd < 0) {
			pr_warn("share [%s]: no registration probe file in %s: %s", sh->name,
				sh->path, strerror(errno));
			continue;
		}
		if (ftruncate(fd, 2 << 20))
			pr_warn("share [%s]: sizing the registration probe file: %s", sh->name,
				strerror(errno));
		else if (dax_open(fd, &sh->rung_probe, why, sizeof(why)))
			pr_warn("share [%s]: mapping the registration probe file: %s", sh->name, why);
		close(fd);
	}
}

void srv_ladder_done(struct srv *s)
{
	int i;

	for (i = 0; i < s->cfg->nshares; i++)
		dax_close(&s->cfg->shares[i]->rung_probe);
}

/* Can the NIC take the share's file memory as a plain (pinned) MR? */
static bool dev_direct(struct srv_share *sh, struct ibv_context *v, char *why,
		       size_t len)
{
	struct dax_file *probe = sh->rung_probe;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	size_t mlen = 0;
	void *addr = NULL;
	int e = 0;

	if (sh->store != SRV_STORE_DAX) {
		snprintf(why, len, "posix store: data passes through the registered bounce pool");
		return false;
	}
	pd = ibv_alloc_pd(v);
	if (!pd) {
		snprintf(why, len, "%s: ibv_alloc_pd: %s", ibv_get_device_name(v->device),
			 strerror(errno));
		return false;
	}
	if (sh->devdax) {
		addr = dax_base(sh->devdax, &mlen);
	} else if (probe) {
		mlen = 2 << 20;
		addr = dax_window(probe, 0, mlen, true);
	}
	if (addr) {
		mr = ibv_reg_mr(pd, addr, mlen, IBV_ACCESS_LOCAL_WRITE);
		e = errno;
	}
	if (mr) {
		snprintf(why, len, "ibv_reg_mr of the %s mapping works on %s",
			 sh->devdax ? "device-DAX" : "DAX file", ibv_get_device_name(v->device));
		ibv_dereg_mr(mr);
	} else if (addr) {
		snprintf(why, len, "ibv_reg_mr of the DAX mapping on %s: %s%s",
			 ibv_get_device_name(v->device), strerror(e),
			 e == EOPNOTSUPP ? " (the kernel refuses long-term pins of fsdax pages)" : "");
	} else {
		snprintf(why, len, "cannot map a probe file in %.200s", sh->path);
	}
	if (probe && addr)
		dax_window_put(probe);
	ibv_dealloc_pd(pd);
	return mr != NULL;
}

/* One share on one device: the best rung allowed, or an error. */
static int share_rung(struct srv_share *sh, struct ibv_context *v, enum srv_rung *out,
		      char *why, size_t len)
{
	char dwhy[320], owhy[320];
	bool direct, odp;

	if (sh->rung_want == SRV_RUNG_BOUNCE) {
		*out = SRV_RUNG_BOUNCE;
		snprintf(why, len, "rdma registration = bounce");
		return 0;
	}
	direct = dev_direct(sh, v, dwhy, sizeof(dwhy));
	odp = sh->store == SRV_STORE_DAX && dev_odp(v, owhy, sizeof(owhy));
	if (sh->store != SRV_STORE_DAX)
		snprintf(owhy, sizeof(owhy), "posix store");
	switch (sh->rung_want) {
	case SRV_RUNG_DIRECT:
		if (!direct) {
			snprintf(why, len, "rdma registration = direct: %s", dwhy);
			return -EINVAL;
		}
		break;
	case SRV_RUNG_ODP:
		if (!odp) {
			snprintf(why, len, "rdma registration = odp: %s", owhy);
			return -EINVAL;
		}
		*out = SRV_RUNG_ODP;
		snprintf(why, len, "%s", owhy);
		return 0;
	default:
		break;
	}
	if (direct) {
		*out = SRV_RUNG_DIRECT;
		snprintf(why, len, "%s", dwhy);
	} else if (odp) {
		*out = SRV_RUNG_ODP;
		snprintf(why, len, "%s; %s", dwhy, owhy);
	} else {
		*out = SRV_RUNG_BOUNCE;
		snprintf(why, len, "%s%s%s", dwhy, sh->store == SRV_STORE_DAX ? "; " : "",
			 sh->store == SRV_STORE_DAX ? owhy : "");
	}
	return 0;
}

/*
 * Once, at start: each share's rung on the devices the RDMA listeners
 * use (a wildcard listener: every device). With several devices the
 * share takes the lowest rung any of them allows.
 */
int srv_ladder_select(struct srv *s)
{
	struct srv_config *cfg = s->cfg;
	struct ibv_context **all = NULL, *devs[16];
	int ndev = 0, i, j, ret = 0;
	bool wildcard = false;

	for (i = 0; i < s->nrdma_listen; i++) {
		struct ibv_context *v = smbd_listener_verbs(s->rdma_listen[i]);

		if (!v) {
			wildcard = true;
			continue;
		}
		for (j = 0; j < ndev && devs[j] != v; j++)
			;
		if (j == ndev && ndev < 16)
			devs[ndev++] = v;
	}
	if (wildcard) {
		int n = 0;

		all = rdma_get_devices(&n);
		for (i = 0; all && i < n; i++) {
			for (j = 0; j < ndev && devs[j] != all[i]; j++)
				;
			if (j == ndev && ndev < 16)
				devs[ndev++] = all[i];
		}
	}
	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];

		if (sh->ipc)
			continue;
		if (!ndev) {
			sh->rung = SRV_RUNG_NONE;
			snprintf(sh->rung_why, sizeof(sh->rung_why), "no RDMA listener");
			if (sh->rung_want == SRV_RUNG_DIRECT || sh->rung_want == SRV_RUNG_ODP)
				pr_warn("[%s] rdma registration = %s has no effect without an rdma:// listener",
					sh->name, srv_rung_name(sh->rung_want));
			continue;
		}
		sh->rung = SRV_RUNG_DIRECT;
		for (j = 0; j < ndev; j++) {
			enum srv_rung r;
			char why[sizeof(sh->rung_why)];

			ret = share_rung(sh, devs[j], &r, why, sizeof(why));
			if (ret) {
				pr_err("share [%s]: %s", sh->name, why);
				goto out;
			}
			if (r >= sh->rung) {
				sh->rung = r;
				snprintf(sh->rung_why, sizeof(sh->rung_why), "%s", why);
			}
		}
	}
out:
	if (all)
		rdma_free_devices(all);
	return ret;
}
