// SPDX-License-Identifier: MIT
/*
 * Reads, writes and flushes as engine chains: the asynchronous queue
 * (rdax_ioq) and the synchronous rdax_pread/rdax_pwrite, which pipeline
 * a few chunks at a time on the same path.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "client/client.h"
#include "proto/ntstatus.h"

#define SYNC_PIPELINE 4
#define COPY_PIPE 8			/* copy pieces in flight, at most */
#define COPY_CHUNK (8u << 20)

struct cli_io {
	struct cli_chain ch;
	struct rdax_conn *c;
	struct rdax_file *f;
	uint32_t op;
	uint8_t *buf;
	struct rdax_buf *reg;		/* the registered buffer it names, or NULL */
	uint32_t len;
	uint64_t off;
	uint64_t user_data;
	int64_t res;
	uint32_t status;
	bool done;
	struct cli_rdma r;
	uint8_t di[SMBD_DESC_SIZE];
	/* the RDMA transform it went with (xform.c's part of io.c): 0 none */
	int xform;
	struct rdax_buf *xb;		/* an encrypted WRITE's ciphertext */
	uint8_t ci[SMB2_RDMA_XFORM_MAX(SMBD_DESC_SIZE)];
	void (*complete)(struct cli_io *io);
	void *owner;
};

/* ---- the RDMA transform ([MS-SMB2] 2.2.43; docs/rdma-transform.md) ---- */

static void io_xbuf_put(struct cli_io *io)
{
	if (io->xb)
		cli_xbuf_put(io->c, io->xb);
	io->xb = NULL;
}

static uint16_t xform_nonce_len(const struct rdax_conn *c, int type)
{
	bool ccm = c->cipher == SMB2_CIPHER_AES128_CCM || c->cipher == SMB2_CIPHER_AES256_CCM;

	return type == SMB2_RDMA_XFORM_TYPE_ENCRYPTION && ccm ? 11 : 12;
}

/*
 * A WRITE's payload, transformed where the server reads it: encrypted
 * into a buffer of the library's (the application's stays as it is), or
 * signed where it is. A fresh nonce each time (a resend too). *src is
 * what the descriptors name.
 */
static int io_xform_write(struct cli_io *io, struct cli_chan *chan, struct smb2_rdma_xform *x,
			  uint8_t **src, struct rdax_buf **reg)
{
	struct rdax_conn *c = io->c;
	struct iovec iov;
	int ret;

	x->sig_len = 16;
	x->nonce_len = xform_nonce_len(c, x->type);
	ret = smb2_nonce_next(&c->xform_nonce, x->nonce_len == 11 ? SMB2_CIPHER_AES128_CCM :
			      SMB2_CIPHER_AES128_GCM, x->nonce);
	if (ret)
		return cli_err(c, ret, "RDMA transform: no nonce left");
	/* apart from any GMAC message nonce (MessageId || 0..3) of the same key */
	x->nonce[x->nonce_len - 1] |= 0x80;
	if (x->type == SMB2_RDMA_XFORM_TYPE_SIGNING) {
		iov = (struct iovec){ io->buf, io->len };
		ret = smb2_xform_sign(&c->kept, c->sign_alg, chan->signing_key, x->nonce, &iov, 1,
				      x->sig);
		return ret ? cli_err(c, ret, "RDMA transform: signing failed") : 0;
	}
	if (!io->xb) {
		ret = cli_xbuf_get(c, io->len, &io->xb);
		if (ret)
			return ret;
	}
	memcpy(io->xb->addr, io->buf, io->len);
	iov = (struct iovec){ io->xb->addr, io->len };
	ret = smb2_xform_encrypt(&c->kept, c->cipher, c->keys.c2s, x->nonce, &iov, 1, x->sig);
	if (ret)
		return cli_err(c, ret, "RDMA transform: encryption failed");
	*src = io->xb->addr;
	*reg = io->xb;
	return 0;
}

/*
 * A READ answered with its data transformed in buf: the server's
 * transform (of the kind asked, a nonce never seen), then the data
 * decrypted in place or its signature checked. got or -errno; a failed
 * check leaves no data (-EBADMSG), the connection goes on.
 */
static int64_t io_xform_read_done(struct cli_io *io, const struct smb2_read_rsp *rd,
				  uint32_t got)
{
	struct rdax_conn *c = io->c;
	struct smb2_rdma_xform x;
	struct iovec iov = { io->buf, got };
	int ret;

	if (!(rd->flags & SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM) ||
	    smb2_rdma_xform_decode(rd->data.p, rd->data.len, &x) || x.type != io->xform ||
	    x.sig_len != 16 || x.nonce_len != xform_nonce_len(c, io->xform))
		return cli_err(c, -EPROTO, "READ response from %s: no or a malformed RDMA transform",
			       c->host);
	if (smb2_xform_replay_check(&c->xform_seen, x.nonce, x.nonce_len))
		return cli_err(c, -EBADMSG, "READ response from %s: RDMA transform nonce seen before",
			       c->host);
	if (!got)
		return 0;
	if (io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION)
		ret = smb2_xform_decrypt(&c->kept, c->cipher, c->keys.s2c, x.nonce, &iov, 1,
					 x.sig);
	else
		ret = smb2_xform_verify(&c->kept, c->sign_alg, io->ch.chan->signing_key, x.nonce,
					&iov, 1, x.sig);
	if (ret)
		return cli_err(c, ret == -EBADMSG ? -EBADMSG : ret,
			       "READ of %u bytes from %s: the RDMA data fails its %s check", got,
			       c->host, io->xform == SMB2_RDMA_XFORM_TYPE_ENCRYPTION ?
			       "decryption" : "signature");
	return got;
}

/* The response PDU of a READ/WRITE/FLUSH, while it is dispatched. */
static void io_on_pdu(struct cli_chain *ch, int i, const uint8_t *pdu, size_t len)
{
	struct cli_io *io = container_of(ch, struct cli_io, ch);
	struct rdax_conn *c = io->c;
	struct smb2_write_rsp wr;
	struct smb2_read_rsp rd;
	uint32_t got;

	io->status = ch->rsp[i].status;
	if (io->status == STATUS_END_OF_FILE && io->op == RDAX_OP_READ) {
		io->status = 0;
		io->res = 0;
		return;
	}
	if (io->status) {
		c->last_status = io->status;
		io->res = -ntstatus_to_errno(io->status);
		return;
	}
	switch (io->op) {
	case RDAX_OP_READ:
		if (smb2_read_rsp_decode(pdu, len, &rd))
			goto bad;
		if (io->xform) {
			got = rd.data_remaining;
			if (got > io->len)
				goto bad;
			io->res = io_xform_read_done(io, &rd, got);
			if (io->res < 0)
				return;
			c->rdma_bytes += got;
			ch->chan->rdma_bytes += got;
		} else if (io->r.channel && !rd.data_length) {
			/* the server wrote the data into buf by RDMA */
			got = rd.data_remaining;
			if (got > io->len)
				goto bad;
			c->rdma_bytes += got;
			ch->chan->rdma_bytes += got;
		} else {
			got = rd.data_length;
			if (got > io->len)
				goto bad;
			/* received into buf already (read_place), or copied now */
			if (!ch->placed)
				memcpy(io->buf, rd.data.p, got);
			c->inline_bytes += got;
		}
		c->stats.bytes_read += got;
		io->res = got;
		return;
	case RDAX_OP_WRITE:
		if (smb2_write_rsp_decode(pdu, len, &wr) || wr.count > io->len)
			goto bad;
		c->stats.bytes_written += wr.count;
		cli_file_changed(io->f);
		if (io->r.channel) {
			c->rdma_bytes += wr.count;
			ch->chan->rdma_bytes += wr.count;
		} else {
			c->inline_bytes += wr.count;
		}
		io->res = wr.count;
		return;
	default:
		io->res = 0;
		return;
	}
bad:
	io->res = -EPROTO;
	cli_err(c, -EPROTO, "malformed %s response from %s",
		io->op == RDAX_OP_READ ? "READ" : "WRITE", c->host);
}

static void io_on_done(struct cli_chain *ch)
{
	struct cli_io *io = container_of(ch, struct cli_io, ch);

	if (ch->err && !io->res)
		io->res = ch->err;
	cli_rdma_finish(io->c, &io->r);
	io_xbuf_put(io);
	io->done = true;
	if (io->complete)
		io->complete(io);
}

/* What the last encode took for its channel (window, cache entry). */
static void io_release(struct cli_chain *ch)
{
	struct cli_io *io = container_of(ch, struct cli_io, ch);

	cli_rdma_finish(io->c, &io->r);
	io_xbuf_put(io);
}

/*
 * The READ or WRITE for the channel it goes on: by RDMA on an
 * SMB-Direct channel (descriptors for that channel's PD and QP), else
 * inline. Called again when a failover sends it on another channel.
 */
static int io_encode(struct cli_chain *ch, struct cli_chan *chan)
{
	struct cli_io *io = container_of(ch, struct cli_io, ch);
	struct rdax_conn *c = io->c;
	struct rdax_file *f = io->f;
	struct smb2_rdma_xform x = { 0 };
	struct rdax_buf *reg = io->reg;
	uint8_t *src = io->buf;
	struct smb2_buf info = { 0 };
	uint32_t channel = 0;
	struct wcur w;
	int ret;

	cli_rdma_finish(c, &io->r);
	ch->place = NULL;
	/* signed or encrypted by RDMA: the transform the server took */
	io->xform = chan->rdma && cli_io_bulk(c, io->len) ? cli_xform_type(c) : 0;
	if (io->xform < 0)
		io->xform = 0;
	x.type = (uint16_t)io->xform;
	if (io->xform && io->op == RDAX_OP_WRITE) {
		ret = io_xform_write(io, chan, &x, &src, &reg);
		if (ret)
			return ret;
	}
	ret = cli_rdma_prepare(c, chan, reg, src, io->len, io->op == RDAX_OP_READ, &io->r);
	if (ret)
		return ret;
	if (!io->r.channel)
		io->xform = 0;
	ret = cli_chain_add(c, ch, io->op == RDAX_OP_READ ? SMB2_READ : SMB2_WRITE,
			    f->t->id, false, smb2_credit_charge_for(io->len), 128, &w);
	if (ret)
		return ret;
	if (io->r.channel) {
		smbd_desc_encode(io->di, &io->r.desc, 1);
		channel = io->r.channel;
		info.p = io->di;
		info.len = SMBD_DESC_SIZE;
	}
	if (io->xform) {
		/* [MS-SMB2] 2.2.43: the transform, its inner channel, the descriptor */
		x.channel = io->r.channel;
		ret = smb2_rdma_xform_encode(io->ci, sizeof(io->ci), &x, io->di, SMBD_DESC_SIZE);
		if (ret < 0)
			return cli_err(c, ret, "RDMA transform encoding");
		channel = SMB2_CHANNEL_RDMA_TRANSFORM;
		info.p = io->ci;
		info.len = (uint32_t)ret;
	}
	if (io->op == RDAX_OP_READ) {
		struct smb2_read_req r = { .length = io->len, .offset = io->off, .fid = f->fid };

		if (!io->r.channel) {
			ch->place = io->buf;
			ch->place_len = io->len;
		}
		r.channel = channel;
		r.channel_info = info;
		smb2_read_req_encode(&w, &r);
	} else {
		struct smb2_write_req r = { .offset = io->off, .fid = f->fid };

		r.flags = f->write_through ? SMB2_WRITEFLAG_WRITE_THROUGH : 0;
		if (io->r.channel) {
			/* [MS-SMB2] 2.2.21: data by RDMA, Length 0 */
			r.channel = channel;
			r.remaining = io->len;
			r.channel_info = info;
		} else {
			r.length = io->len;
		}
		smb2_write_req_encode(&w, &r);
		if (!io->r.channel) {
			ch->tail = io->buf;
			ch->tail_len = io->len;
		}
	}
	cli_chain_end(c, ch, &w);
	return 0;
}

/*
 * Queue one READ/WRITE/FLUSH; len fits cli_io_chunk(). 0: the request
 * was taken and completes through io_on_done (with an error if it could
 * not be sent); negative: not taken, no completion follows. A READ or
 * WRITE is built when its channel is chosen (io_encode).
 */
static int io_start(struct rdax_conn *c, struct cli_io *io)
{
	struct rdax_file *f = io->f;
	struct wcur w;
	int ret;

	io->done = false;
	io->res = 0;
	io->status = 0;
	io->xform = 0;
	io->xb = NULL;
	memset(&io->r, 0, sizeof(io->r));
	ret = cli_chain_init(c, &io->ch);
	if (ret)
		return ret;
	io->ch.on_pdu = io_on_pdu;
	io->ch.on_done = io_on_done;
	if (io->op == RDAX_OP_FSYNC) {
		ret = cli_chain_add(c, &io->ch, SMB2_FLUSH, f->t->id, false, 0, 24, &w);
		if (ret)
			goto out_free;
		smb2_flush_req_encode(&w, &f->fid);
		cli_chain_end(c, &io->ch, &w);
	} else {
		/* what the credits must cover before it is built */
		io->ch.n = 1;
		io->ch.charge[0] = smb2_credit_charge_for(io->len);
		io->ch.bulk = cli_io_bulk(c, io->len);
		io->ch.encode = io_encode;
		io->ch.release = io_release;
	}
	/* accepted: the outcome comes once, through io_on_done */
	ret = cli_chain_submit(c, &io->ch);
	if (ret)
		goto out_free;
	return 0;
out_free:
	cli_chain_abort(c, &io->ch);
	return ret;
}

/* ---- synchronous reads and writes, pipelined ---- */

static ssize_t sync_rw(struct rdax_file *f, uint32_t op, uint8_t *buf, size_t len,
		       uint64_t off)
{
	struct rdax_conn *c = f->t->c;
	struct cli_io io[SYNC_PIPELINE];
	size_t issued = 0, done = 0;
	int head = 0, active = 0, ret;
	bool stop = false;
	ssize_t err = 0;

	memset(io, 0, sizeof(io));
	while (active || (!stop && issued < len && !err)) {
		/*
		 * Keep up to SYNC_PIPELINE chunks in flight, in order, each
		 * sized by the credits held: with none held, the next waits
		 * for what the chunks in flight bring back.
		 */
		while (!stop && !err && issued < len && active < SYNC_PIPELINE &&
		       (!active || cli_credits_total(c))) {
			struct cli_io *x = &io[(head + active) % SYNC_PIPELINE];
			uint32_t n = cli_io_chunk(c, op == RDAX_OP_WRITE, len - issued);

			x->c = c;
			x->f = f;
			x->op = op;
			x->buf = buf + issued;
			x->len = n;
			x->off = off + issued;
			ret = io_start(c, x);
			if (ret) {
				err = ret;
				break;
			}
			issued += n;
			active++;
			c->stats.round_trips++;
		}
		if (!active)
			break;
		/* consume completions in order */
		while (active && io[head].done) {
			struct cli_io *x = &io[head];

			if (x->res < 0 && !err) {
				err = x->res;
				if (x->status)
					cli_status(c, x->status, op == RDAX_OP_READ ? "read" : "write",
						   f->path);
			} else if (!err && !stop) {
				done += (size_t)x->res;
				if ((uint32_t)x->res < x->len)
					stop = true;	/* EOF or a short write */
			}
			head = (head + 1) % SYNC_PIPELINE;
			active--;
		}
		if (active && !io[head].done) {
			ret = cli_progress(c, c->cfg.timeout_ms);
			if (ret == -ETIMEDOUT) {
				cli_err(c, ret, "%s did not answer within %d ms", c->host,
					c->cfg.timeout_ms);
				err = ret;
				cli_engine_stop_inflight(c, ret);
			} else if (ret && !err) {
				err = ret;
			}
		}
	}
	return err ? err : (ssize_t)done;
}

ssize_t cli_rw(struct rdax_file *f, bool write, void *buf, size_t len, uint64_t off)
{
	struct rdax_conn *c = f->t->c;
	ssize_t ret;

	if (len && !buf)
		return cli_err(c, -EFAULT, "%s %s: no buffer", write ? "write" : "read",
			       f->path);
	ret = sync_rw(f, write ? RDAX_OP_WRITE : RDAX_OP_READ, buf, len, off);
	if (ret < 0)
		cli_done(c, (int)ret, write ? "write" : "read", f->path);
	return ret;
}

ssize_t rdax_pread(struct rdax_file *f, void *buf, size_t len, uint64_t off)
{
	cli_begin(f->t->c);
	return cli_rw(f, false, buf, len, off);
}

ssize_t rdax_pwrite(struct rdax_file *f, const void *buf, size_t len, uint64_t off)
{
	cli_begin(f->t->c);
	return cli_rw(f, true, (void *)buf, len, off);
}

/* ---- copies through the client, pipelined ---- */

/* One piece of a copy: its READ of the source, then its WRITE. */
struct copy_slot {
	struct cli_io io;
	uint64_t pos;			/* from the start of the copy */
	uint32_t len;			/* asked for */
	uint32_t got;			/* read */
	bool writing;
};

struct copy_pipe {
	struct rdax_file *src, *dst;
	struct rdax_conn *sc, *dc;
	uint64_t src_off, dst_off;
	struct copy_slot *slot;
	uint8_t *mem;
	unsigned int depth, head, n;
	size_t chunk;
	int err;
};

/* Both connections' events (one epoll set each); -ETIMEDOUT when none came. */
static int copy_progress(struct copy_pipe *p, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = p->sc->epfd, .events = POLLIN },
		{ .fd = p->dc->epfd, .events = POLLIN },
	};
	int n, ret, ret2;

	if (p->sc == p->dc)
		return cli_progress(p->sc, timeout_ms);
	n = poll(pfd, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	ret = cli_progress(p->sc, 0);
	ret2 = cli_progress(p->dc, 0);
	if (ret == -ETIMEDOUT)
		ret = 0;
	if (ret2 == -ETIMEDOUT)
		ret2 = 0;
	if (ret || ret2)
		return ret ? ret : ret2;
	return n ? 0 : -ETIMEDOUT;
}

static void copy_fail(struct copy_pipe *p, struct copy_slot *sl)
{
	struct cli_io *io = &sl->io;

	if (p->err)
		return;
	p->err = (int)io->res;
	if (io->status)
		cli_status(io->c, io->status, io->op == RDAX_OP_READ ? "read" : "write",
			   io->f->path);
}

static int copy_issue(struct copy_pipe *p, struct copy_slot *sl, bool write)
{
	struct cli_io *io = &sl->io;

	io->c = write ? p->dc : p->sc;
	io->f = write ? p->dst : p->src;
	io->op = write ? RDAX_OP_WRITE : RDAX_OP_READ;
	io->len = write ? sl->got : sl->len;
	io->off = (write ? p->dst_off : p->src_off) + sl->pos;
	sl->writing = write;
	io->c->stats.round_trips++;
	return io_start(io->c, io);
}

/* A READ that came back goes out as a WRITE; a WRITE done frees its slot. */
static void copy_step(struct copy_pipe *p, struct copy_slot *sl, bool *src_end)
{
	if (sl->writing || !sl->io.done)
		return;
	if (sl->io.res < 0) {
		copy_fail(p, sl);
		return;
	}
	sl->got = (uint32_t)sl->io.res;
	if (sl->got < sl->len)
		*src_end = true;
	if (!sl->got || p->err)
		return;
	if (copy_issue(p, sl, true) && !p->err)
		p->err = -EIO;
}

static int copy_pipe_run(struct copy_pipe *p, uint64_t len, uint64_t *done,
			 int (*report)(void *arg, uint64_t done), void *arg)
{
	struct rdax_conn *sc = p->sc;
	uint64_t issued = 0;
	bool src_end = false, stop = false;
	unsigned int i;
	int ret;

	while (p->n || (!stop && !p->err && !src_end && issued < len)) {
		/* READs in file order, as many as the slots hold */
		while (!stop && !p->err && !src_end && issued < len && p->n < p->depth &&
		       (!p->n || cli_credits_total(sc))) {
			struct copy_slot *sl = &p->slot[(p->head + p->n) % p->depth];
			uint64_t want = len - issued < p->chunk ? len - issued : p->chunk;

			sl->pos = issued;
			sl->len = cli_io_chunk(sc, false, (size_t)want);
			sl->got = 0;
			ret = copy_issue(p, sl, false);
			if (ret) {
				p->err = ret;
				break;
			}
			issued += sl->len;
			p->n++;
		}
		for (i = 0; i < p->n; i++)
			copy_step(p, &p->slot[(p->head + i) % p->depth], &src_end);
		/* retire in order: the prefix written */
		while (p->n) {
			struct copy_slot *sl = &p->slot[p->head];

			if (!sl->io.done || (!sl->writing && sl->got && !p->err))
				break;
			if (sl->writing && sl->io.res < 0)
				copy_fail(p, sl);
			if (!p->err && !stop) {
				if (sl->writing && (uint32_t)sl->io.res < sl->got) {
					p->err = cli_err(p->dc, -EIO, "short write to %s", p->dst->path);
				} else if (sl->got) {
					*done += sl->got;
					if (report) {
						ret = report(arg, *done);
						if (ret)
							p->err = ret;
					}
				}
				if (sl->got < sl->len)
					stop = true;	/* the end of the source */
			}
			p->head = (p->head + 1) % p->depth;
			p->n--;
		}
		if (!p->n)
			continue;	/* the loop's test: more to read, or done */
		ret = copy_progress(p, sc->cfg.timeout_ms);
		if (ret == -ETIMEDOUT) {
			cli_err(sc, ret, "%s did not answer within %d ms", sc->host,
				sc->cfg.timeout_ms);
			cli_engine_stop_inflight(p->sc, ret);
			if (p->dc != p->sc)
				cli_engine_stop_inflight(p->dc, ret);
		}
		if (ret && !p->err)
			p->err = ret;
	}
	return p->err;
}

int cli_copy_pipe(struct rdax_file *src, uint64_t src_off, struct rdax_file *dst,
		  uint64_t dst_off, uint64_t len, uint64_t *done,
		  int (*report)(void *arg, uint64_t done), void *arg)
{
	struct copy_pipe p = {
		.src = src, .dst = dst, .sc = src->t->c, .dc = dst->t->c,
		.src_off = src_off, .dst_off = dst_off,
	};
	uint32_t held, per;
	size_t wmax;
	unsigned int i;
	int ret;

	if (!len)
		return 0;
	p.chunk = cli_io_chunk(p.sc, false, COPY_CHUNK);
	wmax = cli_io_chunk(p.dc, true, COPY_CHUNK);
	if (wmax < p.chunk)
		p.chunk = wmax;
	if (p.chunk > len)
		p.chunk = (size_t)len;
	/* as many pieces in flight as the credits held on both sides pay for */
	per = smb2_credit_charge_for(p.chunk);
	held = cli_credits_total(p.sc);
	if (cli_credits_total(p.dc) < held)
		held = cli_credits_total(p.dc);
	p.depth = held / (per ? per : 1);
	p.depth = p.depth < 2 ? 2 : p.depth > COPY_PIPE ? COPY_PIPE : p.depth;
	p.slot = calloc(p.depth, sizeof(*p.slot));
	p.mem = malloc(p.chunk * p.depth);
	if (!p.slot || !p.mem) {
		ret = cli_err(p.dc, -ENOMEM, "copy to %s: out of memory", dst->path);
		goto out_free;
	}
	for (i = 0; i < p.depth; i++)
		p.slot[i].io.buf = p.mem + i * p.chunk;
	ret = copy_pipe_run(&p, len, done, report, arg);
out_free:
	free(p.mem);
	free(p.slot);
	return ret;
}

/* ---- the asynchronous queue ---- */

struct rdax_ioq {
	struct rdax_conn *c;
	unsigned int depth;
	struct cli_io *ios;
	struct cli_io **free;
	unsigned int nfree;
	struct rdax_cqe *cq;		/* ring of completions */
	unsigned int cq_head, cq_len;
	unsigned int active;		/* submitted, not completed */
};

static void ioq_complete(struct cli_io *io)
{
	struct rdax_ioq *q = io->owner;
	struct rdax_cqe *e = &q->cq[(q->cq_head + q->cq_len) % q->depth];

	*e = (struct rdax_cqe){ .user_data = io->user_data, .res = io->res,
				.status = io->status };
	q->cq_len++;
	q->active--;
	q->free[q->nfree++] = io;
}

int rdax_ioq_new(struct rdax_conn *c, unsigned int depth, struct rdax_ioq **out)
{
	struct rdax_ioq *q;
	unsigned int i;

	cli_begin(c);
	if (!depth || depth > 4096)
		return cli_err(c, -EINVAL, "queue depth %u: not in 1..4096", depth);
	q = calloc(1, sizeof(*q));
	if (!q)
		return cli_err(c, -ENOMEM, "queue of depth %u: out of memory", depth);
	q->c = c;
	q->depth = depth;
	q->ios = calloc(depth, sizeof(*q->ios));
	q->free = calloc(depth, sizeof(*q->free));
	q->cq = calloc(depth, sizeof(*q->cq));
	if (!q->ios || !q->free || !q->cq) {
		free(q->ios);
		free(q->free);
		free(q->cq);
		free(q);
		return cli_err(c, -ENOMEM, "queue of depth %u: out of memory", depth);
	}
	for (i = 0; i < depth; i++) {
		q->ios[i].owner = q;
		q->ios[i].complete = ioq_complete;
		q->free[q->nfree++] = &q->ios[depth - 1 - i];
	}
	*out = q;
	return 0;
}

unsigned int rdax_ioq_inflight(const struct rdax_ioq *q)
{
	return q->active;
}

/*
 * Largest READ/WRITE of len bytes the connection carries in one request:
 * over SMB-Direct the data goes by RDMA (up to rdma_max) or, when signed,
 * encrypted or below the RDMA threshold, inline in one message.
 */
static size_t io_limit(const struct rdax_conn *c, size_t len)
{
	size_t m = c->max_read < c->max_write ? c->max_read : c->max_write;
	bool rdma;

	if (!c->rdma)
		return m;
	rdma = cli_io_bulk(c, len);
	if (rdma && m > c->rdma_max)
		m = c->rdma_max;
	if (!rdma && m > c->inline_max)
		m = c->inline_max;
	return m;
}

size_t rdax_ioq_max_io(const struct rdax_ioq *q)
{
	struct rdax_conn *c = q->c;

	/* the largest length that fits its own path */
	if (c->rdma && cli_xform_type(c) >= 0 && c->cfg.rdma_threshold <= c->rdma_max)
		return io_limit(c, SIZE_MAX);
	return io_limit(c, 0);
}

int rdax_ioq_fd(const struct rdax_ioq *q)
{
	return q->c->epfd;
}

/* Is the request well formed (no flags, reserved fields zero)? */
static int io_valid(struct rdax_conn *c, const struct rdax_io *in, unsigned int i)
{
	unsigned int k;

	if (in->flags)
		return cli_err(c, -EINVAL, "request %u: unknown flags 0x%x", i, in->flags);
	for (k = 0; k < sizeof(in->reserved) / sizeof(in->reserved[0]); k++)
		if (in->reserved[k])
			return cli_err(c, -EINVAL, "request %u: reserved[%u] is not zero", i, k);
	if (in->reg && in->opcode != RDAX_OP_FSYNC &&
	    (in->reg->c != c || !cli_buf_holds(in->reg, in->buf, in->len)))
		return cli_err(c, -EINVAL, "request %u: its buffer is not in the registered buffer it names",
			       i);
	return 0;
}

/* Can the connection take this request? 0, or why not (with a message). */
static int io_check(struct rdax_conn *c, const struct rdax_io *in, unsigned int i)
{
	if (!in->file || in->file->t->c != c)
		return cli_err(c, -EINVAL, "request %u: no file open on this connection", i);
	if (in->opcode < RDAX_OP_READ || in->opcode > RDAX_OP_FSYNC)
		return cli_err(c, -EINVAL, "request %u: unknown opcode %u", i, in->opcode);
	if (in->opcode == RDAX_OP_FSYNC)
		return cli_check_credits(c, 1);
	if (!in->buf || !in->len)
		return cli_err(c, -EINVAL, "request %u: no buffer", i);
	if (in->len > io_limit(c, in->len))
		return cli_err(c, -EINVAL, "request %u: %zu bytes, more than the %zu one request carries here",
			       i, in->len, io_limit(c, in->len));
	/* more credits than the server granted, and none coming back */
	return cli_check_credits(c, smb2_credit_charge_for((uint32_t)in->len));
}

int rdax_ioq_submit(struct rdax_ioq *q, const struct rdax_io *ios, unsigned int n)
{
	struct rdax_conn *c = q->c;
	unsigned int i;
	int ret;

	cli_begin(c);
	/* a malformed request: none is taken */
	for (i = 0; i < n; i++) {
		ret = io_valid(c, &ios[i], i);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		const struct rdax_io *in = &ios[i];
		struct cli_io *io;

		if (!q->nfree || q->cq_len + rdax_ioq_inflight(q) >= q->depth)
			break;
		ret = io_check(c, in, i);
		if (ret)
			return i ? (int)i : ret;
		io = q->free[--q->nfree];
		io->c = c;
		io->f = in->file;
		io->op = in->opcode;
		io->buf = in->buf;
		io->reg = in->opcode == RDAX_OP_FSYNC ? NULL : in->reg;
		io->len = (uint32_t)in->len;
		io->off = in->offset;
		io->user_data = in->user_data;
		q->active++;
		ret = io_start(c, io);
		if (ret) {
			/* not taken: no completion will follow */
			q->active--;
			q->free[q->nfree++] = io;
			return i ? (int)i : ret;
		}
	}
	return (int)i;
}

int rdax_ioq_reap(struct rdax_ioq *q, struct rdax_cqe *cqes, unsigned int min,
		  unsigned int max, int timeout_ms)
{
	/* timeout_ms bounds the whole call, however many events arrive */
	uint64_t deadline = cli_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	unsigned int n = 0;
	int ret = 0, wait;

	cli_begin(q->c);
	if (min > max)
		return cli_err(q->c, -EINVAL, "reap: min %u is more than max %u", min, max);
	/* non-blocking progress first */
	if ((q->cq_len < min || !q->cq_len) && rdax_ioq_inflight(q))
		ret = cli_progress(q->c, 0);
	while (q->cq_len < min && rdax_ioq_inflight(q) && (!ret || ret == -ETIMEDOUT)) {
		if (timeout_ms < 0) {
			wait = -1;
		} else {
			uint64_t now = cli_now_ms();

			if (now >= deadline)
				break;
			wait = (int)(deadline - now);
		}
		ret = cli_progress(q->c, wait);
	}
	/*
	 * A broken connection completes what was in flight with errors:
	 * hand those out; the error itself only when there is nothing.
	 */
	if (ret && ret != -ETIMEDOUT && !q->cq_len)
		return cli_done(q->c, ret, "reap", NULL);
	while (n < max && q->cq_len) {
		cqes[n++] = q->cq[q->cq_head];
		q->cq_head = (q->cq_head + 1) % q->depth;
		q->cq_len--;
	}
	return (int)n;
}

void rdax_ioq_delete(struct rdax_ioq **qp)
{
	struct rdax_ioq *q = *qp;
	struct rdax_conn *c;
	unsigned int left;
	uint64_t last;
	int tmo;

	if (!q)
		return;
	c = q->c;
	tmo = c->cfg.timeout_ms;
	/*
	 * Wait for what is in flight, but not for a server that stopped
	 * answering: after the request timeout without a completion, fail
	 * everything still in flight (the connection is then unusable).
	 */
	last = cli_now_ms();
	left = rdax_ioq_inflight(q);
	while (rdax_ioq_inflight(q) && !c->broken) {
		uint64_t now = cli_now_ms();
		int wait = 1000;

		if (rdax_ioq_inflight(q) < left) {
			left = rdax_ioq_inflight(q);
			last = now;
		}
		if (tmo >= 0) {
			if (now - last >= (uint64_t)tmo) {
				cli_err(c, -ETIMEDOUT, "%s did not answer within %d ms", c->host, tmo);
				cli_engine_stop_inflight(c, -ETIMEDOUT);
				break;
			}
			if ((uint64_t)wait > last + (uint64_t)tmo - now)
				wait = (int)(last + (uint64_t)tmo - now);
		}
		if (cli_progress(c, wait) && c->broken)
			break;
	}
	free(q->ios);
	free(q->free);
	free(q->cq);
	free(q);
	*qp = NULL;
}
