// SPDX-License-Identifier: MIT
/*
 * The librdax request engine: chains (compounds) are built in their own
 * buffers, sent in order as SMB2 credits allow, and completed by
 * MessageId as responses arrive over the connection's transport (TCP or
 * SMB-Direct), driven by a small epoll loop. Synchronous calls are one
 * chain submitted and waited for; the async API keeps many in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "proto/ntstatus.h"
#include "transport/smbdirect.h"

#define TB_HEADROOM (XPRT_HEADROOM + CLI_TF_ROOM)
#define TB_POOL_MAX 64

struct cli_txbuf {
	struct xbuf xb;
	struct rdax_conn *c;
	uint8_t *mem;
	size_t cap;			/* payload bytes after the headroom */
	struct cli_txbuf *next_free;
};

static uint8_t *tb_base(struct cli_txbuf *tb)
{
	return tb->mem + TB_HEADROOM;
}

static void tb_put(struct cli_txbuf *tb)
{
	struct rdax_conn *c = tb->c;

	if (!c || c->tb_free_count >= TB_POOL_MAX || tb->cap > (1u << 20)) {
		free(tb->mem);
		free(tb);
		return;
	}
	tb->next_free = c->tb_free;
	c->tb_free = tb;
	c->tb_free_count++;
}

static void tb_release(struct xbuf *b)
{
	tb_put(container_of(b, struct cli_txbuf, xb));
}

static int tb_reserve(struct cli_txbuf *tb, size_t need)
{
	size_t cap = tb->cap ? tb->cap : 4096;
	uint8_t *p;

	if (need <= tb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(tb->mem, cap + TB_HEADROOM);
	if (!p)
		return -ENOMEM;
	tb->mem = p;
	tb->cap = cap;
	return 0;
}

static struct cli_txbuf *tb_get(struct rdax_conn *c)
{
	struct cli_txbuf *tb = c->tb_free;

	if (tb) {
		c->tb_free = tb->next_free;
		c->tb_free_count--;
	} else {
		tb = calloc(1, sizeof(*tb));
		if (!tb)
			return NULL;
		tb->c = c;
		tb->xb.release = tb_release;
		if (tb_reserve(tb, 4096)) {
			free(tb);
			return NULL;
		}
	}
	memset(&tb->xb, 0, sizeof(tb->xb));
	tb->xb.release = tb_release;
	return tb;
}

int cli_chain_init(struct rdax_conn *c, struct cli_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	list_init(&ch->link);
	ch->tb = tb_get(c);
	if (!ch->tb)
		ch->err = -ENOMEM;
	return ch->err;
}

int cli_chain_add(struct rdax_conn *c, struct cli_chain *ch, uint16_t cmd,
		  uint32_t tree_id, bool related, uint16_t charge,
		  size_t body_max, struct wcur *w)
{
	struct smb2_hdr h = { 0 };
	size_t off = align8(ch->len);
	int ret;

	if (ch->err)
		return ch->err;
	if (ch->n >= CLI_MAX_CHAIN)
		return -E2BIG;
	ret = tb_reserve(ch->tb, off + SMB2_HDR_SIZE + body_max + 8);
	if (ret)
		return ret;
	memset(tb_base(ch->tb) + ch->len, 0, off - ch->len);
	h.command = cmd;
	h.credit_charge = charge;
	h.tree_id = tree_id;
	h.session_id = c->session_id;
	h.flags = related ? SMB2_FLAGS_RELATED_OPERATIONS : 0;
	smb2_hdr_encode(tb_base(ch->tb) + off, &h);
	ch->off[ch->n] = off;
	ch->charge[ch->n] = charge ? charge : 1;
	ch->n++;
	wcur_init(w, tb_base(ch->tb) + off, SMB2_HDR_SIZE + body_max);
	w->off = SMB2_HDR_SIZE;
	return 0;
}

void cli_chain_end(struct rdax_conn *c, struct cli_chain *ch, struct wcur *w)
{
	ch->len = ch->off[ch->n - 1] + w->off;
}

static bool need_sign(const struct rdax_conn *c, const struct cli_chain *ch)
{
	return c->have_key && (c->signing || ch->sign) && !c->encrypt;
}

static uint32_t chain_charge(const struct cli_chain *ch)
{
	return cli_credits_chain_charge(ch->charge, ch->n);
}

/* Complete a chain: take it off the lists and tell its owner. */
static void chain_finish(struct rdax_conn *c, struct cli_chain *ch, int err)
{
	if (ch->done)
		return;
	if (!list_empty(&ch->link)) {
		list_del(&ch->link);
		c->ninflight--;
	}
	if (err && !ch->err)
		ch->err = err;
	ch->done = true;
	if (ch->tb) {
		tb_put(ch->tb);
		ch->tb = NULL;
	}
	if (ch->on_done)
		ch->on_done(ch);
}

/*
 * Headers (ch->mid[] and ask[] taken from the credit window), signing,
 * preauth and encryption, then hand to the transport. *fatal is set when
 * the transport failed (the connection is unusable); other errors
 * concern this chain only.
 */
static int chain_transmit(struct rdax_conn *c, struct cli_chain *ch,
			  const uint16_t *ask, bool *fatal)
{
	struct cli_txbuf *tb = ch->tb;
	uint8_t *base = tb_base(tb);
	struct iovec iov[2];
	size_t end, len;
	int i, ret, niov = 1;

	for (i = 0; i < ch->n; i++) {
		uint8_t *p = base + ch->off[i];

		put_le64(p + 24, ch->mid[i]);
		put_le16(p + 14, ask[i]);
		if (c->dialect <= SMB2_DIALECT_202)
			put_le16(p + 6, 0);
		end = i + 1 < ch->n ? ch->off[i + 1] : ch->len;
		put_le32(p + 20, i + 1 < ch->n ? (uint32_t)(end - ch->off[i]) : 0);
		ch->rsp[i].done = false;
	}
	/* signing, encryption and SMB-Direct fragments want one buffer */
	if (ch->tail_len && (need_sign(c, ch) || c->encrypt)) {
		ret = tb_reserve(tb, ch->len + ch->tail_len);
		if (ret)
			return ret;
		base = tb_base(tb);
		memcpy(base + ch->len, ch->tail, ch->tail_len);
		ch->len += ch->tail_len;
		ch->tail = NULL;
		ch->tail_len = 0;
	}
	len = ch->len;
	if (need_sign(c, ch)) {
		for (i = 0; i < ch->n; i++) {
			uint8_t *p = base + ch->off[i];

			end = i + 1 < ch->n ? ch->off[i + 1] : ch->len;
			put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
			ret = smb2_sign_compute(c->sign_alg, c->keys.signing, p,
						end - ch->off[i], p + 48);
			if (ret)
				return cli_err(c, ret, "signing failed");
		}
	}
	iov[0].iov_base = base;
	iov[0].iov_len = len;
	if (ch->tail_len) {
		iov[1].iov_base = (void *)ch->tail;
		iov[1].iov_len = ch->tail_len;
		niov = 2;
	}
	if (ch->preauth)
		crypto_preauth_update(ch->preauth, iov, niov);
	tb->xb.data = base;
	tb->xb.len = len;
	tb->xb.tail = ch->tail;
	tb->xb.tail_len = ch->tail_len;
	if (c->encrypt && c->have_key) {
		ret = smb2_encrypt(c->cipher, c->keys.c2s, c->session_id, iov, 1,
				   base - SMB2_TRANSFORM_SIZE);
		if (ret < 0)
			return cli_err(c, ret, "encryption failed");
		tb->xb.data = base - SMB2_TRANSFORM_SIZE;
		tb->xb.len = (size_t)ret;
	}
	c->stats.requests += (uint64_t)ch->n;
	c->stats.bytes_sent += tb->xb.len + tb->xb.tail_len;
	/* the transport owns the buffer now */
	ch->tb = NULL;
	ret = c->xp->ops->send(c->xp, &tb->xb);
	if (ret) {
		*fatal = true;
		return cli_err(c, ret, "send to %s: %s", c->host,
			       ret == -EPIPE || ret == -ECONNRESET ?
			       "connection closed by server" : strerror(-ret));
	}
	return 0;
}

static void fail_all(struct rdax_conn *c, int err);

static int credits_err(struct rdax_conn *c, uint32_t need)
{
	return cli_err(c, -EAGAIN, "not enough SMB credits (%u held, %u needed)",
		       c->cr.held, need);
}

/*
 * Send queued chains in order while the credits cover them. A chain that
 * cannot be sent completes with its error (once, through chain_finish),
 * as does one the credits do not cover with nothing in flight to bring
 * more; a transport failure fails every chain and breaks the connection,
 * and is returned.
 */
static int send_queued(struct rdax_conn *c)
{
	uint16_t ask[CLI_MAX_CHAIN];
	struct cli_chain *ch;
	bool fatal;
	int ret;

	while (!list_empty(&c->sendq)) {
		ch = list_entry(c->sendq.next, struct cli_chain, link);
		if (cli_credits_take(&c->cr, ch->charge, ch->n, ch->mid, ask)) {
			if (c->ninflight)
				return 0;	/* responses bring credits */
			list_del(&ch->link);
			chain_finish(c, ch, credits_err(c, chain_charge(ch)));
			continue;
		}
		list_del(&ch->link);
		list_add_tail(&ch->link, &c->inflight);
		c->ninflight++;
		ch->pending = ch->n;
		fatal = false;
		ret = chain_transmit(c, ch, ask, &fatal);
		if (!ret)
			continue;
		if (fatal) {
			fail_all(c, ret);
			return ret;
		}
		/* it never reached the wire: no MessageId may be skipped */
		cli_credits_return(&c->cr, ch->charge, ch->n, ch->mid);
		chain_finish(c, ch, ret);
	}
	return 0;
}

int cli_check_credits(struct rdax_conn *c, uint32_t need)
{
	bool outstanding = c->ninflight || !list_empty(&c->sendq);

	if (!cli_credits_check(&c->cr, need, outstanding))
		return 0;
	return credits_err(c, need);
}

int cli_chain_submit(struct rdax_conn *c, struct cli_chain *ch)
{
	if (c->broken)
		return cli_err(c, -ENOTCONN, "connection to %s is broken", c->host);
	if (ch->err)
		return cli_err(c, ch->err, "request to %s: %s", c->host, strerror(-ch->err));
	list_add_tail(&ch->link, &c->sendq);
	/* from here on the chain's outcome is its completion, reported once */
	send_queued(c);
	return 0;
}

static struct cli_chain *find_chain(struct rdax_conn *c, uint64_t mid, int *idx)
{
	struct list_head *pos, *tmp;
	int i;

	list_for_each_safe(pos, tmp, &c->inflight) {
		struct cli_chain *ch = list_entry(pos, struct cli_chain, link);

		for (i = 0; i < ch->n; i++) {
			if (ch->mid[i] == mid && !ch->rsp[i].done) {
				*idx = i;
				return ch;
			}
		}
	}
	return NULL;
}

/* Keep a copy of a synchronous chain's response. */
static int keep_response(struct rdax_conn *c, struct cli_chain *ch, int i,
			 const uint8_t *pdu, size_t len)
{
	if (c->sync_len + len > c->sync_cap) {
		size_t cap = c->sync_cap ? c->sync_cap : 4096;
		uint8_t *p;

		while (cap < c->sync_len + len)
			cap *= 2;
		p = realloc(c->sync_rsp, cap);
		if (!p)
			return -ENOMEM;
		c->sync_rsp = p;
		c->sync_cap = cap;
	}
	memcpy(c->sync_rsp + c->sync_len, pdu, len);
	ch->rsp_off[i] = c->sync_len;
	ch->rsp[i].len = len;
	c->sync_len += len;
	return 0;
}

/* One message from the server: match its PDUs to chains by MessageId. */
static int on_msg(void *arg, uint8_t *msg, size_t len)
{
	struct rdax_conn *c = arg;
	size_t off = 0, plen, next;
	struct cli_chain *ch;
	struct smb2_hdr h;
	bool enc = false;
	uint64_t sid;
	long n;
	int i, ret;

	c->stats.bytes_received += len;
	if (len >= 4 && get_le32(msg) == SMB2_TRANSFORM_ID) {
		if (!c->have_key || smb2_transform_session_id(msg, len, &sid) ||
		    sid != c->session_id)
			return cli_err(c, -EPROTO, "unexpected encrypted message from %s", c->host);
		n = smb2_decrypt(c->cipher, c->keys.s2c, msg, len, msg + SMB2_TRANSFORM_SIZE);
		if (n < 0)
			return cli_err(c, -EBADMSG, "response from %s failed to decrypt", c->host);
		msg += SMB2_TRANSFORM_SIZE;
		len = (size_t)n;
		enc = true;
	} else if (c->encrypt && c->have_key) {
		return cli_err(c, -EPROTO, "unencrypted response from %s on an encrypted session",
			       c->host);
	}
	do {
		if (smb2_chain_pdu(msg, len, off, &plen, &next) ||
		    smb2_hdr_decode(msg + off, plen, &h) ||
		    !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
			return cli_err(c, -EPROTO, "malformed response from %s", c->host);
		cli_credits_grant(&c->cr, h.credits);
		ch = find_chain(c, h.message_id, &i);
		if (!ch)
			goto next;	/* not ours (an oplock break, a late reply) */
		if (h.status == STATUS_PENDING && h.flags & SMB2_FLAGS_ASYNC_COMMAND)
			goto next;	/* interim: the final response follows */
		if (!enc && c->have_key && h.flags & SMB2_FLAGS_SIGNED &&
		    smb2_sign_verify(c->sign_alg, c->keys.signing, msg + off, plen))
			return cli_err(c, -EBADMSG, "bad signature on %s response from %s",
				       smb2_cmd_name(h.command), c->host);
		if (!enc && c->signing && c->have_key && !(h.flags & SMB2_FLAGS_SIGNED))
			return cli_err(c, -EBADMSG, "unsigned %s response from %s on a signed session",
				       smb2_cmd_name(h.command), c->host);
		ch->rsp[i].hdr = h;
		ch->rsp[i].status = h.status;
		ch->rsp[i].done = true;
		if (ch->on_pdu) {
			ch->rsp[i].pdu = msg + off;
			ch->rsp[i].len = plen;
			ch->on_pdu(ch, i, msg + off, plen);
		} else {
			ret = keep_response(c, ch, i, msg + off, plen);
			if (ret)
				return ret;
		}
		if (--ch->pending == 0)
			chain_finish(c, ch, 0);
next:
		off = next;
	} while (off);
	return send_queued(c);
}

static void fail_all(struct rdax_conn *c, int err)
{
	struct cli_chain *ch;

	c->broken = true;
	while (!list_empty(&c->inflight)) {
		ch = list_entry(c->inflight.next, struct cli_chain, link);
		chain_finish(c, ch, err);
	}
	while (!list_empty(&c->sendq)) {
		ch = list_entry(c->sendq.next, struct cli_chain, link);
		list_del(&ch->link);
		chain_finish(c, ch, err);
	}
}

int cli_progress(struct rdax_conn *c, int timeout_ms)
{
	struct epoll_event ev[8];
	int i, n, ret;

	if (c->broken)
		return -ENOTCONN;
	n = epoll_wait(c->epfd, ev, 8, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ETIMEDOUT;
	for (i = 0; i < n; i++) {
		struct xprt_ev *e = ev[i].data.ptr;

		ret = e->x->ops->handle_events(e->x, ev[i].events, e->src);
		if (ret < 0) {
			if (!c->errmsg[0] || ret == -ECONNRESET)
				cli_err(c, ret, "%s: %s", c->host,
					ret == -ECONNRESET ? "connection closed by server" :
					strerror(-ret));
			fail_all(c, ret);
			return ret;
		}
	}
	return 0;
}

uint64_t cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int cli_chain_run(struct rdax_conn *c, struct cli_chain *ch)
{
	uint64_t deadline = cli_now_ms() + (uint64_t)c->cfg.timeout_ms;
	int i, ret;

	ret = cli_check_credits(c, chain_charge(ch));
	if (ret)
		goto out_free;
	c->sync_len = 0;
	ret = cli_chain_submit(c, ch);
	if (ret)
		goto out_free;
	c->stats.round_trips++;
	while (!ch->done) {
		int left = (int)(deadline - cli_now_ms());

		if (c->cfg.timeout_ms >= 0 && left <= 0) {
			cli_err(c, -ETIMEDOUT, "%s did not answer within %d ms", c->host,
				c->cfg.timeout_ms);
			fail_all(c, -ETIMEDOUT);
			break;
		}
		ret = cli_progress(c, c->cfg.timeout_ms < 0 ? 1000 : left);
		if (ret && ret != -ETIMEDOUT)
			break;
	}
	if (ch->err)
		return ch->err;
	for (i = 0; i < ch->n; i++)
		ch->rsp[i].pdu = c->sync_rsp + ch->rsp_off[i];
	return 0;
out_free:
	if (ch->tb) {
		tb_put(ch->tb);
		ch->tb = NULL;
	}
	return ret;
}

void cli_chain_abort(struct rdax_conn *c, struct cli_chain *ch)
{
	if (ch->tb) {
		tb_put(ch->tb);
		ch->tb = NULL;
	}
	ch->done = true;
}

void cli_engine_stop_inflight(struct rdax_conn *c, int err)
{
	fail_all(c, err);
}

int cli_engine_start(struct rdax_conn *c, struct xprt *x)
{
	x->upper = c;
	x->on_msg = on_msg;
	c->xp = x;
	return 0;
}

void cli_engine_stop(struct rdax_conn *c)
{
	struct cli_txbuf *tb;

	fail_all(c, -ESHUTDOWN);
	if (c->xp) {
		c->xp->ops->destroy(c->xp);
		c->xp = NULL;
		c->x = NULL;
	}
	while ((tb = c->tb_free)) {
		c->tb_free = tb->next_free;
		free(tb->mem);
		free(tb);
	}
	c->tb_free_count = 0;
	free(c->sync_rsp);
	c->sync_rsp = NULL;
	if (c->epfd >= 0)
		close(c->epfd);
	c->epfd = -1;
}
