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
	int refs;			/* the chain's and the transport's */
	struct cli_txbuf *next_free;
};

static uint8_t *tb_base(struct cli_txbuf *tb)
{
	return tb->mem + TB_HEADROOM;
}

static void tb_put(struct cli_txbuf *tb)
{
	struct rdax_conn *c = tb->c;

	if (--tb->refs > 0)
		return;

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
	tb->refs = 1;
	return tb;
}

int cli_chain_init(struct rdax_conn *c, struct cli_chain *ch)
{
	memset(ch, 0, sizeof(*ch));
	list_init(&ch->link);
	/* built while the session is set up again: one of its steps */
	ch->recon = c->reconnecting;
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

/*
 * STATUS_FILE_NOT_AVAILABLE: an older ChannelSequence, or a replay while
 * the server still works on the original ([MS-SMB2] 3.3.5.2.10). Such a
 * request goes again after 1, 2, 4 ... ms, at most 1 s apart, about 4 s
 * in all.
 */
#define CLI_STATUS_FILE_NOT_AVAILABLE 0xC0000467u
#define CLI_MAX_RESENDS 12
#define CLI_TICK_MS 500
#define CLI_RESEND_MAX_MS 1000

static bool need_sign(const struct rdax_conn *c, const struct cli_chain *ch)
{
	if (ch->setup)
		return ch->sign_key != NULL;
	return c->have_key && (c->signing || ch->sign) && !c->encrypt;
}

static uint32_t chain_charge(const struct cli_chain *ch)
{
	return cli_credits_chain_charge(ch->charge, ch->n);
}

/*
 * librdax prints nothing: what the shared modules log goes to the log
 * callback of the connection the thread is in (cli_begin), or nowhere.
 */
__attribute__((constructor)) static void cli_log_quiet(void)
{
	log_set_sink(NULL, NULL);
}

void cli_log(struct rdax_conn *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!c->cfg.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->cfg.log(c->cfg.log_arg, msg);
}

/* as much of src as fits (a message cut short is still a message) */
static void text_copy(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);

	memcpy(dst, src, l);
	dst[l] = 0;
}

static bool chan_usable(const struct cli_chan *chan)
{
	return chan->bound && !chan->dead;
}

unsigned int cli_chans_alive(const struct rdax_conn *c)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nchan; i++)
		n += chan_usable(&c->chans[i]);
	return n;
}

uint32_t cli_credits_best(const struct rdax_conn *c)
{
	uint32_t best = 0;
	unsigned int i;

	for (i = 0; i < c->nchan; i++)
		if (chan_usable(&c->chans[i]) && c->chans[i].cr.held > best)
			best = c->chans[i].cr.held;
	return best;
}

uint32_t cli_credits_total(const struct rdax_conn *c)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i < c->nchan; i++)
		if (chan_usable(&c->chans[i]))
			sum += c->chans[i].cr.held;
	return sum;
}

/* Complete a chain: take it off the lists and tell its owner. */
static void chain_finish(struct rdax_conn *c, struct cli_chain *ch, int err)
{
	if (ch->done)
		return;
	if (!list_empty(&ch->link)) {
		list_del(&ch->link);
		if (ch->chan) {
			ch->chan->ninflight--;
			c->ninflight--;
		}
	}
	ch->chan = NULL;
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

/* A resend keeps the plaintext: encrypt into a buffer of its own. */
static int encrypt_copy(struct rdax_conn *c, struct iovec *iov, struct xbuf **out)
{
	struct cli_txbuf *eb = tb_get(c);
	int ret;

	if (!eb)
		return -ENOMEM;
	ret = tb_reserve(eb, iov->iov_len);
	if (!ret)
		ret = smb2_encrypt(&c->kept, c->cipher, c->keys.c2s, c->session_id, iov, 1,
				   tb_base(eb) - SMB2_TRANSFORM_SIZE);
	if (ret < 0) {
		tb_put(eb);
		return ret;
	}
	eb->xb.data = tb_base(eb) - SMB2_TRANSFORM_SIZE;
	eb->xb.len = (size_t)ret;
	*out = &eb->xb;
	return 0;
}

/*
 * Headers (ch->mid[] and ask[] taken from the channel's credit window,
 * ChannelSequence, the replay flag), signing with the channel's key,
 * preauth and encryption, then hand to the channel's transport. *fatal
 * is set when the transport failed (the channel is unusable); other
 * errors concern this chain only.
 */
static int chain_transmit(struct rdax_conn *c, struct cli_chan *chan,
			  struct cli_chain *ch, const uint16_t *ask, bool *fatal)
{
	struct cli_txbuf *tb = ch->tb;
	uint8_t *base = tb_base(tb);
	const uint8_t *key;
	struct xbuf *xb = &tb->xb;
	struct iovec iov[2];
	size_t end, len;
	int i, ret, niov = 1;

	ch->seq = c->channel_seq;
	for (i = 0; i < ch->n; i++) {
		uint8_t *p = base + ch->off[i];

		put_le64(p + 24, ch->mid[i]);
		put_le16(p + 14, ask[i]);
		if (c->dialect <= SMB2_DIALECT_202)
			put_le16(p + 6, 0);
		if (c->dialect >= SMB2_DIALECT_300 && !ch->setup) {
			put_le16(p + 8, ch->seq);
			if (ch->replay)
				put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_REPLAY_OPERATION);
		}
		end = i + 1 < ch->n ? ch->off[i + 1] : ch->len;
		put_le32(p + 20, i + 1 < ch->n ? (uint32_t)(end - ch->off[i]) : 0);
		ch->rsp[i].done = false;
	}
	/* signing, encryption and SMB-Direct fragments want one buffer */
	if (ch->tail_len && (need_sign(c, ch) || (c->encrypt && !ch->setup))) {
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
		key = ch->setup ? ch->sign_key : chan->signing_key;
		for (i = 0; i < ch->n; i++) {
			uint8_t *p = base + ch->off[i];

			end = i + 1 < ch->n ? ch->off[i + 1] : ch->len;
			put_le32(p + 16, get_le32(p + 16) | SMB2_FLAGS_SIGNED);
			ret = smb2_sign_compute(&c->kept, c->sign_alg, key, p, end - ch->off[i],
						p + 48);
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
	/* a resend needs the buffer as it was: kept while other channels live */
	/*
	 * A resend needs the buffer as it was: kept while other channels
	 * live, or while a reconnect may send it on the next session.
	 */
	ch->keep = !ch->setup && !ch->encode &&
		   (ch->replay || cli_chans_alive(c) > 1 || cli_recon_wanted(c));
	memset(xb, 0, sizeof(*xb));
	xb->release = tb_release;
	xb->data = base;
	xb->len = len;
	xb->tail = ch->tail;
	xb->tail_len = ch->tail_len;
	if (c->encrypt && c->have_key && !ch->setup) {
		if (ch->keep) {
			ret = encrypt_copy(c, iov, &xb);
		} else {
			ret = smb2_encrypt(&c->kept, c->cipher, c->keys.c2s, c->session_id, iov, 1,
					   base - SMB2_TRANSFORM_SIZE);
			if (ret >= 0) {
				xb->data = base - SMB2_TRANSFORM_SIZE;
				xb->len = (size_t)ret;
				ret = 0;
			}
		}
		if (ret < 0)
			return cli_err(c, ret, "encryption failed");
	}
	c->stats.requests += (uint64_t)ch->n;
	c->stats.bytes_sent += xb->len + xb->tail_len;
	chan->requests += (uint64_t)ch->n;
	chan->bytes_sent += xb->len + xb->tail_len;
	if (ch->replay)
		chan->replays += (uint64_t)ch->n;
	if (xb == &tb->xb) {
		if (ch->keep)
			tb->refs++;	/* the transport's reference */
		else
			ch->tb = NULL;	/* the transport owns the buffer now */
	}
	ret = chan->xp->ops->send(chan->xp, xb);
	if (ret) {
		*fatal = true;
		return cli_err(c, ret, "send to %s: %s", chan->peer,
			       ret == -EPIPE || ret == -ECONNRESET ?
			       "connection closed by server" : strerror(-ret));
	}
	return 0;
}

static void fail_all(struct rdax_conn *c, int err);
static void chan_fail(struct rdax_conn *c, struct cli_chan *chan, int err);

static int credits_err(struct rdax_conn *c, uint32_t need)
{
	return cli_err(c, -EAGAIN, "not enough SMB credits (%u held, %u needed)",
		       cli_credits_best(c), need);
}

/*
 * Channels a chain may go on: its pinned one, or any bound and alive;
 * file data that can go by RDMA goes on SMB-Direct channels while one
 * lives (a TCP channel beside them carries the small requests).
 */
static bool chan_may_carry(const struct cli_chan *chan, const struct cli_chain *ch,
			   bool rdma_alive)
{
	if (ch->pin)
		return chan == ch->pin && !chan->dead;
	if (ch->bulk && rdma_alive && !chan->rdma)
		return false;
	return chan_usable(chan);
}

static bool rdma_alive(const struct rdax_conn *c)
{
	unsigned int i;

	for (i = 0; c->rdma && i < c->nchan; i++)
		if (c->chans[i].rdma && chan_usable(&c->chans[i]))
			return true;
	return false;
}

/*
 * The channel to send ch on now: of those that may carry it and whose
 * credits cover it, the one with the fewest chains in flight (ties go
 * round robin). NULL with *waiting set when one of them has responses
 * to come.
 */
static struct cli_chan *pick_chan(struct rdax_conn *c, const struct cli_chain *ch,
				  bool *waiting)
{
	uint32_t need = chain_charge(ch);
	struct cli_chan *best = NULL;
	bool on_rdma = ch->bulk && rdma_alive(c);
	unsigned int i;

	*waiting = false;
	if (c->nchan == 1) {
		/* one channel: no choice to make */
		best = &c->chans[0];
		if (!chan_may_carry(best, ch, on_rdma))
			return NULL;
		*waiting = best->ninflight > 0;
		return best->cr.held >= need ? best : NULL;
	}
	for (i = 0; i < c->nchan; i++) {
		struct cli_chan *chan = &c->chans[(c->rr + i) % c->nchan];

		if (!chan_may_carry(chan, ch, on_rdma))
			continue;
		if (chan->ninflight)
			*waiting = true;
		if (chan->cr.held >= need && (!best || chan->ninflight < best->ninflight))
			best = chan;
	}
	if (best)
		c->rr = (best->index + 1) % c->nchan;
	return best;
}

/*
 * Build a chain for the channel it goes on (again, after a failover):
 * a buffer from the pool if the last one went with the transport.
 */
static int chain_encode(struct rdax_conn *c, struct cli_chan *chan, struct cli_chain *ch)
{
	if (!ch->tb) {
		ch->tb = tb_get(c);
		if (!ch->tb)
			return -ENOMEM;
	}
	ch->n = 0;
	ch->len = 0;
	ch->tail = NULL;
	ch->tail_len = 0;
	return ch->encode(ch, chan);
}

/*
 * Send queued chains in order while some channel's credits cover them.
 * A chain that cannot be sent completes with its error (once, through
 * chain_finish), as does one no channel covers with nothing in flight to
 * bring more. A transport failure fails that channel (its chains move to
 * the others, or everything fails when it was the last); returns
 * -ENOTCONN once no channel is left.
 */
/*
 * The next chain to send: the first in the queue; none while the session
 * waits to be set up again, and only the steps of that while it is.
 */
static struct cli_chain *next_sendable(struct rdax_conn *c)
{
	struct list_head *pos;

	if (c->need_recon)
		return NULL;
	list_for_each(pos, &c->sendq) {
		struct cli_chain *ch = list_entry(pos, struct cli_chain, link);

		if (!c->reconnecting || ch->recon)
			return ch;
	}
	return NULL;
}

static int send_queued(struct rdax_conn *c)
{
	uint16_t ask[CLI_MAX_CHAIN];
	struct cli_chain *ch;
	struct cli_chan *chan;
	bool fatal, waiting;
	int ret;

	/* an event handled while a window is bound does not send meanwhile */
	if (c->sending)
		return c->broken ? -ENOTCONN : 0;
	c->sending = true;
	while (!c->broken && (ch = next_sendable(c))) {
		chan = pick_chan(c, ch, &waiting);
		if (!chan) {
			if (waiting)
				break;		/* responses bring credits */
			if (!ch->pin && !cli_chans_alive(c) && !c->reconnecting &&
			    cli_recon_wanted(c)) {
				/* no channel left: it waits for the next session */
				c->need_recon = true;
				break;
			}
			list_del(&ch->link);
			chain_finish(c, ch, ch->pin ?
				     cli_err(c, -ENOTCONN, "its channel to %s is gone",
					     ch->pin->peer) :
				     credits_err(c, chain_charge(ch)));
			continue;
		}
		/* off the queue while it is built: binding a window may wait */
		list_del(&ch->link);
		if (ch->encode) {
			ret = chain_encode(c, chan, ch);
			if (ret) {
				chain_finish(c, ch, ret);
				continue;
			}
			if (chan->dead || c->broken) {
				/* its channel failed meanwhile: it goes elsewhere */
				list_add(&ch->link, &c->sendq);
				continue;
			}
		}
		cli_credits_take(&chan->cr, ch->charge, ch->n, ch->mid, ask);
		list_add_tail(&ch->link, &chan->inflight);
		ch->chan = chan;
		chan->ninflight++;
		c->ninflight++;
		ch->pending = ch->n;
		fatal = false;
		ret = chain_transmit(c, chan, ch, ask, &fatal);
		if (!ret)
			continue;
		if (fatal) {
			chan_fail(c, chan, ret);
			continue;
		}
		/* it never reached the wire: no MessageId may be skipped */
		cli_credits_return(&chan->cr, ch->charge, ch->n, ch->mid);
		chain_finish(c, ch, ret);
	}
	c->sending = false;
	return c->broken ? -ENOTCONN : 0;
}

int cli_check_credits(struct rdax_conn *c, uint32_t need)
{
	/* a session set up again brings credits, as responses do */
	bool outstanding = c->ninflight || !list_empty(&c->sendq) ||
			   !list_empty(&c->delayq) || c->need_recon || c->reconnecting ||
			   (!cli_chans_alive(c) && cli_recon_wanted(c));
	struct cli_credits best = { .held = cli_credits_best(c) };

	/* a dead connection is that, not a shortage of credits */
	if (c->broken)
		return cli_err(c, -ENOTCONN, "connection to %s is broken", c->host);

	if (!cli_credits_check(&best, need, outstanding))
		return 0;
	return credits_err(c, need);
}

static void reap_dead(struct rdax_conn *c);

int cli_chain_submit(struct rdax_conn *c, struct cli_chain *ch)
{
	if (c->broken)
		return cli_err(c, -ENOTCONN, "connection to %s is broken", c->host);
	if (ch->err)
		return cli_err(c, ch->err, "request to %s: %s", c->host, strerror(-ch->err));
	list_add_tail(&ch->link, &c->sendq);
	/* from here on the chain's outcome is its completion, reported once */
	send_queued(c);
	if (!c->dispatching)
		reap_dead(c);
	return 0;
}

static struct cli_chain *find_chain(struct cli_chan *chan, uint64_t mid, int *idx)
{
	struct list_head *pos, *tmp;
	int i;

	list_for_each_safe(pos, tmp, &chan->inflight) {
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

/* Back to the front of the send queue, to go again on a live channel. */
static void chain_requeue(struct rdax_conn *c, struct cli_chain *ch)
{
	if (ch->release)
		ch->release(ch);
	list_del(&ch->link);
	if (ch->chan) {
		ch->chan->ninflight--;
		c->ninflight--;
	}
	ch->chan = NULL;
	ch->replay = true;
	ch->resends++;
	list_add(&ch->link, &c->sendq);
}

/*
 * A single request refused for an older ChannelSequence (it was sent
 * before a channel failed), or a replay refused while the server still
 * works on the original: it goes again, with the current ChannelSequence,
 * after a pause that doubles each time.
 */
static bool resend_stale(struct rdax_conn *c, struct cli_chain *ch,
			 const struct smb2_hdr *h)
{
	uint64_t pause;

	if (h->status != CLI_STATUS_FILE_NOT_AVAILABLE || ch->n != 1 || ch->setup ||
	    !(ch->tb || ch->encode) || ch->resends >= CLI_MAX_RESENDS ||
	    (ch->seq == c->channel_seq && !ch->replay))
		return false;
	pause = 1ull << (ch->resends < 10 ? ch->resends : 10);
	chain_requeue(c, ch);
	list_del(&ch->link);
	ch->not_before = cli_now_ms() + (pause < CLI_RESEND_MAX_MS ? pause : CLI_RESEND_MAX_MS);
	list_add_tail(&ch->link, &c->delayq);
	return true;
}

/* Resends whose pause is over go to the front of the send queue. */
static void delayed_due(struct rdax_conn *c)
{
	struct list_head *pos, *tmp;
	uint64_t now = cli_now_ms();

	list_for_each_safe(pos, tmp, &c->delayq) {
		struct cli_chain *ch = list_entry(pos, struct cli_chain, link);

		if (ch->not_before > now)
			continue;
		list_del(&ch->link);
		list_add(&ch->link, &c->sendq);
	}
}

/* ms until the first pause ends, or -1 when nothing waits */
static int delayed_wait(const struct rdax_conn *c)
{
	const struct list_head *pos;
	uint64_t now = cli_now_ms(), first = UINT64_MAX;

	for (pos = c->delayq.next; pos != &c->delayq; pos = pos->next) {
		const struct cli_chain *ch = list_entry(pos, struct cli_chain, link);

		if (ch->not_before < first)
			first = ch->not_before;
	}
	if (first == UINT64_MAX)
		return -1;
	return first > now ? (int)(first - now) : 0;
}

/* A lease or oplock break: the server's own message (MessageId all ones). */
static bool is_break(const struct smb2_hdr *h)
{
	return h->message_id == UINT64_MAX && h->command == SMB2_OPLOCK_BREAK;
}

/*
 * A message in clear on a session that encrypts: only a break
 * notification, which servers send in clear (SessionId 0); it can only
 * make the client drop what it caches.
 */
static bool clear_break(const uint8_t *msg, size_t len)
{
	struct smb2_hdr h;

	return !smb2_hdr_decode(msg, len, &h) && is_break(&h) && !h.next_command &&
	       h.flags & SMB2_FLAGS_SERVER_TO_REDIR;
}

/*
 * TCP: the response to a lone READ, unsigned and in clear, is received
 * straight into the reader's buffer (the transport asks once the header
 * and the READ's fixed part are in), not copied there from the message.
 */
static int read_place(void *arg, const uint8_t *msg, size_t have, size_t total,
		      struct xprt_place *p)
{
	struct cli_chan *chan = arg;
	struct cli_chain *ch;
	struct smb2_hdr h;
	uint32_t doff, dlen;
	int i;

	if (chan->c->signing || chan->c->encrypt || have < SMB2_READ_RSP_DATA_OFF ||
	    get_le32(msg) != SMB2_PROTO_ID || smb2_hdr_decode(msg, have, &h) ||
	    h.command != SMB2_READ || h.next_command || h.status ||
	    (h.flags & (SMB2_FLAGS_SIGNED | SMB2_FLAGS_SERVER_TO_REDIR)) !=
	    SMB2_FLAGS_SERVER_TO_REDIR || get_le16(msg + SMB2_HDR_SIZE) != 17)
		return 0;
	ch = find_chain(chan, h.message_id, &i);
	if (!ch || !ch->place || ch->n != 1)
		return 0;
	doff = msg[SMB2_HDR_SIZE + 2];
	dlen = get_le32(msg + SMB2_HDR_SIZE + 4);
	if (doff < SMB2_READ_RSP_DATA_OFF || doff > total || dlen > total - doff ||
	    dlen > ch->place_len)
		return 0;
	p->off = doff;
	p->len = dlen;
	p->dst = ch->place;
	p->cookie = ch;
	return 0;
}

/* One message from the server: match its PDUs to chains by MessageId. */
static int on_msg(void *arg, uint8_t *msg, size_t len)
{
	struct cli_chan *chan = arg;
	struct rdax_conn *c = chan->c;
	size_t off = 0, plen, next;
	struct cli_chain *ch;
	struct smb2_hdr h;
	bool enc = false;
	uint64_t sid;
	long n;
	int i, ret;

	c->stats.bytes_received += len;
	chan->bytes_received += len;
	if (len >= 4 && get_le32(msg) == SMB2_TRANSFORM_ID) {
		if (!c->have_key || smb2_transform_session_id(msg, len, &sid) ||
		    sid != c->session_id)
			return cli_err(c, -EPROTO, "unexpected encrypted message from %s",
				       chan->peer);
		n = smb2_decrypt(&c->kept, c->cipher, c->keys.s2c, msg, len,
				 msg + SMB2_TRANSFORM_SIZE);
		if (n < 0)
			return cli_err(c, -EBADMSG, "response from %s failed to decrypt",
				       chan->peer);
		msg += SMB2_TRANSFORM_SIZE;
		len = (size_t)n;
		enc = true;
	} else if (c->encrypt && c->have_key && chan->bound && !clear_break(msg, len)) {
		return cli_err(c, -EPROTO, "unencrypted response from %s on an encrypted session",
			       chan->peer);
	}
	do {
		if (smb2_chain_pdu(msg, len, off, &plen, &next) ||
		    smb2_hdr_decode(msg + off, plen, &h) ||
		    !(h.flags & SMB2_FLAGS_SERVER_TO_REDIR))
			return cli_err(c, -EPROTO, "malformed response from %s", chan->peer);
		cli_credits_grant(&chan->cr, h.credits);
		if (is_break(&h)) {
			cli_on_break(c, msg + off, plen);
			goto next;
		}
		ch = find_chain(chan, h.message_id, &i);
		if (!ch)
			goto next;	/* not ours: a late reply */
		if (h.status == STATUS_PENDING && h.flags & SMB2_FLAGS_ASYNC_COMMAND)
			goto next;	/* interim: the final response follows */
		/*
		 * Channel setup checks its own signatures. A badly signed
		 * answer is dropped and fails its request alone: the
		 * connection goes on (MS-SMB2 3.2.5.1.3), as a reconnect
		 * would only replay the request into the same answer.
		 */
		if (!enc && !ch->setup && c->have_key && h.flags & SMB2_FLAGS_SIGNED &&
		    smb2_sign_verify(&c->kept, c->sign_alg, chan->signing_key, msg + off, plen)) {
			chain_finish(c, ch, cli_err(c, -EBADMSG, "bad signature on %s response from %s",
						    smb2_cmd_name(h.command), chan->peer));
			goto next;
		}
		if (!enc && !ch->setup && c->signing && c->have_key &&
		    !(h.flags & SMB2_FLAGS_SIGNED))
			return cli_err(c, -EBADMSG, "unsigned %s response from %s on a signed session",
				       smb2_cmd_name(h.command), chan->peer);
		if (resend_stale(c, ch, &h))
			goto next;
		ch->rsp[i].hdr = h;
		ch->rsp[i].status = h.status;
		ch->rsp[i].done = true;
		ch->placed = chan->xp->placed.len && chan->xp->placed.cookie == ch;
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
	send_queued(c);
	return 0;
}

static void fail_list(struct rdax_conn *c, struct list_head *l, int err)
{
	while (!list_empty(l))
		chain_finish(c, list_entry(l->next, struct cli_chain, link), err);
}

static void fail_all(struct rdax_conn *c, int err)
{
	unsigned int i;

	if (!c->broken)
		c->broken_err = err;
	c->broken = true;
	for (i = 0; i < c->nchan; i++) {
		c->chans[i].dead = true;
		fail_list(c, &c->chans[i].inflight, err);
	}
	fail_list(c, &c->sendq, err);
	fail_list(c, &c->delayq, err);
}

/*
 * A channel's transport failed. With another bound channel alive its
 * chains go again there once the transport is closed (reap_dead), and
 * the requests sent from now on carry the next ChannelSequence
 * ([MS-SMB2] 3.2.4.1.1 / 3.2.7.1); without one the connection is broken.
 * A channel still being bound fails only its own setup.
 */
static void chan_fail(struct rdax_conn *c, struct cli_chan *chan, int err)
{
	if (chan->dead)
		return;
	chan->dead = true;
	text_copy(chan->error, sizeof(chan->error), c->errmsg[0] ? c->errmsg : strerror(-err));
	if (!chan->bound) {
		fail_list(c, &chan->inflight, err);
		chan->reap = true;
		return;
	}
	if (!cli_chans_alive(c) && c->reconnecting) {
		/* a step of the reconnect failed: that attempt fails */
		fail_list(c, &chan->inflight, err);
		chan->reap = true;
		return;
	}
	if (!cli_chans_alive(c) && cli_recon_wanted(c)) {
		/* its chains wait for the next session (reap_dead) */
		c->need_recon = true;
		chan->reap = true;
		c->errmsg[0] = 0;
		cli_log(c, "connection to %s lost (%s): reconnecting", chan->peer, chan->error);
		return;
	}
	if (!cli_chans_alive(c)) {
		fail_all(c, err);
		return;
	}
	/* the connection lives on: this is no error of the current call */
	c->errmsg[0] = 0;
	if (c->dialect >= SMB2_DIALECT_300)
		c->channel_seq++;
	chan->reap = true;
	cli_log(c, "channel %u to %s failed (%s); %d request%s go again on the other channel%s",
		chan->index, chan->peer, chan->error, chan->ninflight,
		chan->ninflight == 1 ? "" : "s", cli_chans_alive(c) == 1 ? "" : "s");
}

/*
 * Close the transports of failed channels (outside their event
 * handlers, so no event in hand points into freed memory), then resend
 * their chains: only then does no transport hold those buffers. A chain
 * that carried RDMA descriptors is built again for its next channel;
 * the memory stays registered in its device's PD for the channels left.
 */
static void reap_dead(struct rdax_conn *c)
{
	struct cli_chain *ch;
	unsigned int i;
	bool any = false;

	for (i = 0; i < c->nchan; i++) {
		struct cli_chan *chan = &c->chans[i];

		if (!chan->reap)
			continue;
		chan->reap = false;
		if (chan->xp) {
			cli_chan_mw_free(chan);
			chan->xp->ops->destroy(chan->xp);
			chan->xp = NULL;
			chan->x = NULL;
		}
		while (!list_empty(&chan->inflight)) {
			ch = list_entry(chan->inflight.prev, struct cli_chain, link);
			if (c->broken || ch->setup || !(ch->tb || ch->encode)) {
				chain_finish(c, ch, -ENOTCONN);
				continue;
			}
			/* from the back, so the front of sendq keeps their order */
			chain_requeue(c, ch);
		}
		any = true;
	}
	if (any && !c->broken)
		send_queued(c);
	/* outside every event handler: the session can be set up again */
	if (c->need_recon && !c->reconnecting && !c->dispatching && !c->broken) {
		cli_reconnect(c);
		if (!c->broken)
			send_queued(c);
	}
}

/* Its requests fail with err; its transport and windows go. */
static void chan_teardown(struct rdax_conn *c, struct cli_chan *chan, int err)
{
	fail_list(c, &chan->inflight, err);
	cli_chan_mw_free(chan);
	if (chan->xp)
		chan->xp->ops->destroy(chan->xp);
	chan->xp = NULL;
	chan->x = NULL;
	chan->dead = true;
	chan->reap = false;
}

void cli_chans_clear(struct rdax_conn *c)
{
	unsigned int i;

	for (i = 0; i < c->nchan; i++) {
		struct cli_chan *chan = &c->chans[i];

		chan_teardown(c, chan, -ENOTCONN);
	}
	c->nchan = 0;
	c->rr = 0;
}

void cli_chains_fixup(struct rdax_conn *c,
		      int (*fix)(void *arg, struct cli_chain *ch, uint8_t *pdu, size_t len),
		      void *arg)
{
	struct list_head *lists[2] = { &c->sendq, &c->delayq };
	struct list_head *pos, *tmp;
	int i, k, ret;

	for (k = 0; k < 2; k++) {
		list_for_each_safe(pos, tmp, lists[k]) {
			struct cli_chain *ch = list_entry(pos, struct cli_chain, link);

			/*
			 * READ/WRITE are built when they go: the hook looks,
			 * whatever their buffer holds (nothing yet, while one
			 * waits for credits, or what its last channel took)
			 */
			for (i = 0, ret = 0; !ch->encode && ch->tb && i < ch->n && !ret; i++) {
				size_t end = i + 1 < ch->n ? ch->off[i + 1] : ch->len;

				ret = fix(arg, ch, tb_base(ch->tb) + ch->off[i], end - ch->off[i]);
			}
			if (!ret && ch->encode)
				ret = fix(arg, ch, NULL, 0);
			if (ret)
				chain_finish(c, ch, ret);
		}
	}
}

void cli_chains_fail(struct rdax_conn *c, int err)
{
	fail_all(c, err);
}

/*
 * With several channels an SMB-Direct one whose link died must fail soon
 * so its requests go again elsewhere: a queue pair learns of it only when
 * it sends, so its keep-alive (short with channels: cli_rdma_open) is run
 * from here. True when a channel failed.
 */
static bool tick_chans(struct rdax_conn *c)
{
	uint64_t now = cli_now_ms();
	bool failed = false;
	unsigned int i;
	int ret;

	if (now < c->next_tick)
		return false;
	c->next_tick = now + CLI_TICK_MS;
	for (i = 0; i < c->nchan && !c->broken; i++) {
		struct cli_chan *chan = &c->chans[i];

		if (!chan->x || !chan_usable(chan) || !chan->xp->ops->tick)
			continue;
		ret = chan->xp->ops->tick(chan->xp, now);
		if (ret < 0) {
			cli_err(c, ret, "%s: SMB-Direct keep-alive: %s", chan->peer, strerror(-ret));
			chan_fail(c, chan, ret);
			failed = true;
		}
	}
	return failed;
}

/*
 * epoll_wait, ticking the SMB-Direct channels: a silent peer fails its
 * channel by the keepalive, one channel or many (a wait with no timeout
 * would otherwise wait for ever).
 */
static int wait_events(struct rdax_conn *c, struct epoll_event *ev, int n, int timeout_ms,
		       bool *failed)
{
	uint64_t end, now;
	int got, step;

	*failed = false;
	if (!c->rdma)
		return epoll_wait(c->epfd, ev, n, timeout_ms);
	now = cli_now_ms();
	end = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms;
	for (;;) {
		step = end - now < CLI_TICK_MS ? (int)(end - now) : CLI_TICK_MS;
		got = epoll_wait(c->epfd, ev, n, step);
		*failed = tick_chans(c);
		now = cli_now_ms();
		if (got || *failed || c->broken || now >= end)
			return got;
	}
}

static uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Completions of the SMB-Direct channels, without their events. */
static int poll_chans(struct rdax_conn *c)
{
	unsigned int i;
	int ret, got = 0;

	for (i = 0; i < c->nchan && !c->broken; i++) {
		struct cli_chan *chan = &c->chans[i];

		if (!chan->x || !chan_usable(chan) || !chan->xp->ops->poll)
			continue;
		c->dispatching = true;
		ret = chan->xp->ops->poll(chan->xp, false);
		c->dispatching = false;
		if (ret < 0) {
			cli_err(c, ret, "%s: %s", chan->peer, strerror(-ret));
			chan_fail(c, chan, ret);
			continue;
		}
		got += ret;
	}
	return got;
}

/*
 * Adaptive and busy polling: before sleeping, spin on the CQs and on
 * epoll with no timeout, for the budget (adaptive) or the whole wait
 * (busy). The CQs stay armed (handle_events arms them as before), so a
 * later sleep hears what comes. 1: completions handled; 0: epoll has
 * events (*n of them in ev) or the budget is spent.
 */
static int spin(struct rdax_conn *c, int timeout_ms, struct epoll_event *ev, int nev, int *n)
{
	uint64_t now = cli_now_ns(), end;

	end = now + (uint64_t)c->cfg.poll_spin_us * 1000;
	if (c->cfg.poll == RDAX_POLL_BUSY)
		end = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000000;
	else if (timeout_ms >= 0 && (uint64_t)timeout_ms * 1000000 < end - now)
		end = now + (uint64_t)timeout_ms * 1000000;
	*n = 0;
	do {
		if (poll_chans(c) > 0 || c->broken)
			return 1;
		*n = epoll_wait(c->epfd, ev, nev, 0);
		if (*n)
			return 0;
	} while (cli_now_ns() < end);
	return 0;
}

int cli_progress(struct rdax_conn *c, int timeout_ms)
{
	struct epoll_event ev[8];
	int i, n = 0, ret, pause;
	bool short_wait = false, tick_failed = false;

	if (c->broken)
		return -ENOTCONN;
	reap_dead(c);
	pause = delayed_wait(c);
	if (pause >= 0 && (timeout_ms < 0 || pause < timeout_ms)) {
		timeout_ms = pause;
		short_wait = true;
	}
	if (c->rdma && timeout_ms && !short_wait && c->cfg.poll != RDAX_POLL_EVENT) {
		if (spin(c, timeout_ms, ev, 8, &n)) {
			if (!c->broken)
				reap_dead(c);
			return c->broken ? (c->broken_err ? c->broken_err : -ENOTCONN) : 0;
		}
	}
	if (!n)
		n = wait_events(c, ev, 8, timeout_ms, &tick_failed);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (short_wait) {
		delayed_due(c);
		send_queued(c);
	}
	if (n == 0 && tick_failed && !c->broken) {
		reap_dead(c);
		return c->broken ? c->broken_err : 0;
	}
	if (n == 0)
		return short_wait && !c->broken ? 0 : c->broken ? c->broken_err : -ETIMEDOUT;
	for (i = 0; i < n && !c->broken; i++) {
		struct xprt_ev *e = ev[i].data.ptr;
		struct cli_chan *chan = e->x->upper;

		if (chan->dead)
			continue;
		c->dispatching = true;
		ret = e->x->ops->handle_events(e->x, ev[i].events, e->src);
		c->dispatching = false;
		if (ret < 0) {
			if (!c->errmsg[0] || ret == -ECONNRESET)
				cli_err(c, ret, "%s: %s", chan->peer,
					ret == -ECONNRESET ? "connection closed by server" :
					strerror(-ret));
			chan_fail(c, chan, ret);
		}
	}
	if (!c->broken)
		reap_dead(c);
	if (c->broken)
		return c->broken_err ? c->broken_err : -ENOTCONN;
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
	uint64_t recons = c->stats.reconnects;
	int i, ret;

	ret = cli_check_credits(c, chain_charge(ch));
	if (ret)
		goto out_free;
	/*
	 * A reconnect runs its chains inside another's wait: theirs go after
	 * what the outer one kept, which it finds by offset.
	 */
	if (!c->sync_depth)
		c->sync_len = 0;
	ret = cli_chain_submit(c, ch);
	if (ret)
		goto out_free;
	c->stats.round_trips++;
	c->sync_depth++;
	while (!ch->done) {
		int left;

		if (c->stats.reconnects != recons) {
			/* sent again on a new session: its time starts again */
			recons = c->stats.reconnects;
			deadline = cli_now_ms() + (uint64_t)c->cfg.timeout_ms;
		}
		left = (int)(deadline - cli_now_ms());

		if (c->cfg.timeout_ms >= 0 && left <= 0) {
			cli_err(c, -ETIMEDOUT, "%s did not answer within %d ms", c->host,
				c->cfg.timeout_ms);
			if (ch->setup && ch->pin)
				chan_fail(c, ch->pin, -ETIMEDOUT);
			else
				fail_all(c, -ETIMEDOUT);
			break;
		}
		ret = cli_progress(c, c->cfg.timeout_ms < 0 ? 1000 : left);
		if (ret && ret != -ETIMEDOUT)
			break;
	}
	c->sync_depth--;
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

struct cli_chan *cli_chan_add(struct rdax_conn *c, struct xprt *x, const char *peer)
{
	struct cli_chan *chan;

	if (c->nchan >= CLI_MAX_CHANNELS)
		return NULL;
	chan = &c->chans[c->nchan];
	memset(chan, 0, sizeof(*chan));
	chan->c = c;
	chan->index = c->nchan++;
	chan->xp = x;
	chan->x = x->rdma ? x : NULL;
	chan->rdma = x->rdma;
	list_init(&chan->inflight);
	cli_credits_init(&chan->cr);
	snprintf(chan->peer, sizeof(chan->peer), "%s", peer && *peer ? peer : x->peer);
	x->upper = chan;
	x->on_msg = on_msg;
	if (!x->rdma) {
		x->place = read_place;
		x->place_peek = SMB2_READ_RSP_DATA_OFF;
		x->place_min = SMB2_READ_RSP_DATA_OFF + CLI_PLACE_MIN;
	}
	return chan;
}

void cli_chan_drop(struct rdax_conn *c, struct cli_chan *chan)
{
	chan_teardown(c, chan, -ESHUTDOWN);
	/* only the last one added is given back */
	if (chan->index == c->nchan - 1)
		c->nchan--;
}

int cli_engine_start(struct rdax_conn *c, struct xprt *x)
{
	struct cli_chan *chan;

	if (!c->sendq.next)
		list_init(&c->sendq);
	if (!c->delayq.next)
		list_init(&c->delayq);
	chan = cli_chan_add(c, x, NULL);
	if (!chan)
		return -ENOSPC;
	/* the first connection carries the session from its NEGOTIATE on */
	chan->bound = true;
	return 0;
}

void cli_engine_stop(struct rdax_conn *c)
{
	struct cli_txbuf *tb;
	unsigned int i;

	fail_all(c, -ESHUTDOWN);
	for (i = 0; i < c->nchan; i++) {
		struct cli_chan *chan = &c->chans[i];

		cli_chan_mw_free(chan);
		if (chan->xp)
			chan->xp->ops->destroy(chan->xp);
		chan->xp = NULL;
		chan->x = NULL;
	}
	cli_rdev_free(c);
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
