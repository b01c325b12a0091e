// SPDX-License-Identifier: MIT
/*
 * The client's SMB2 credit window, [MS-SMB2] 3.2.4.1.5 and 3.2.5.1.4:
 * struct cli_credits on its own, then the request engine behind a fake
 * transport whose scripted server keeps the server's view of the window
 * (3.3.1.1) and grants what a test tells it to: none, one, or more than
 * asked. No network.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "t.h"
#include "client/client.h"
#include "client/credits.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

/* a window as after NEGOTIATE: the next MessageId and the credits held */
static void window(struct cli_credits *cr, uint64_t mid, uint32_t held)
{
	cli_credits_init(cr);
	cr->next_mid = mid;
	cr->held = held;
}

/* ---- struct cli_credits ---- */

static void test_init(void)
{
	struct cli_credits cr;

	t_section("init: MessageId 0, one credit");
	memset(&cr, 0xa5, sizeof(cr));
	cli_credits_init(&cr);
	T_EQ(cr.next_mid, 0);
	T_EQ(cr.held, 1);
}

static void test_ask(void)
{
	static const struct {
		uint32_t held;
		uint16_t charge;
		uint16_t ask;
	} t[] = {
		{ 0, 1, 1 + CLI_CREDIT_ASK_MAX },
		{ 1, 1, 1 + CLI_CREDIT_ASK_MAX },
		{ 0, 0, 1 + CLI_CREDIT_ASK_MAX },	/* charge 0 counts as 1 */
		{ 256, 1, 1 + CLI_CREDIT_ASK_MAX },
		{ 300, 4, 4 + CLI_CREDIT_TARGET - 300 },
		{ CLI_CREDIT_TARGET - 1, 1, 2 },
		{ CLI_CREDIT_TARGET, 1, 1 },
		{ CLI_CREDIT_TARGET, 128, 128 },
		{ 5000, 8, 8 },
	};
	struct cli_credits cr;
	size_t i;

	t_section("ask: the charge, topped up towards CLI_CREDIT_TARGET");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		window(&cr, 0, t[i].held);
		T_EQ(cli_credits_ask(&cr, t[i].charge), t[i].ask);
	}
}

static void test_take(void)
{
	const uint16_t chain[] = { 1, 4, 2 }, big[] = { 4 }, one[] = { 1 };
	const uint16_t zero[] = { 0, 0 };
	struct cli_credits cr;
	uint64_t mid[3] = { 0 };
	uint16_t ask[3] = { 0 };

	t_section("take: a chain's MessageIds advance by CreditCharge");
	window(&cr, 10, 10);
	T_EQ(cli_credits_chain_charge(chain, 3), 7);
	T_EQ(cli_credits_take(&cr, chain, 3, mid, ask), 0);
	T_EQ(mid[0], 10);
	T_EQ(mid[1], 11);
	T_EQ(mid[2], 15);
	T_EQ(cr.next_mid, 17);
	T_EQ(cr.held, 3);
	/* each PDU asks with the credits left after the ones before it */
	T_EQ(ask[0], 1 + CLI_CREDIT_ASK_MAX);
	T_EQ(ask[1], 4 + CLI_CREDIT_ASK_MAX);
	T_EQ(ask[2], 2 + CLI_CREDIT_ASK_MAX);

	t_section("take: more than held is refused, nothing spent");
	mid[0] = 99;
	T_EQ(cli_credits_take(&cr, big, 1, mid, ask), -EAGAIN);
	T_EQ(mid[0], 99);
	T_EQ(cr.next_mid, 17);
	T_EQ(cr.held, 3);

	t_section("take: the last credit, then none");
	window(&cr, 0, 1);
	T_EQ(cli_credits_take(&cr, one, 1, mid, ask), 0);
	T_EQ(mid[0], 0);
	T_EQ(cr.held, 0);
	T_EQ(cli_credits_take(&cr, one, 1, mid, ask), -EAGAIN);
	T_EQ(cr.next_mid, 1);

	t_section("take: CreditCharge 0 spends one credit and one MessageId");
	window(&cr, 4, 2);
	T_EQ(cli_credits_chain_charge(zero, 2), 2);
	T_EQ(cli_credits_take(&cr, zero, 2, mid, ask), 0);
	T_EQ(mid[0], 4);
	T_EQ(mid[1], 5);
	T_EQ(cr.held, 0);
}

static void test_return(void)
{
	const uint16_t a[] = { 2, 1 }, b[] = { 4 };
	struct cli_credits cr;
	uint64_t ma[2], mb[1];
	uint16_t ask[2];

	t_section("return: an unsent chain's MessageIds and credits come back");
	window(&cr, 30, 10);
	T_EQ(cli_credits_take(&cr, a, 2, ma, ask), 0);
	T_EQ(cli_credits_return(&cr, a, 2, ma), 0);
	T_EQ(cr.next_mid, 30);
	T_EQ(cr.held, 10);
	T_EQ(cli_credits_take(&cr, b, 1, mb, ask), 0);
	T_EQ(mb[0], 30);

	t_section("return: only the last chain taken");
	T_EQ(cli_credits_take(&cr, a, 2, ma, ask), 0);
	T_EQ(cli_credits_return(&cr, b, 1, mb), -EINVAL);
	T_EQ(cr.next_mid, 37);
	T_EQ(cr.held, 3);
}

static void test_grant(void)
{
	struct cli_credits cr;

	t_section("grant: adds the CreditResponse");
	window(&cr, 0, 3);
	cli_credits_grant(&cr, 0);
	T_EQ(cr.held, 3);
	cli_credits_grant(&cr, 1);
	T_EQ(cr.held, 4);
	/* more than was asked is taken as granted */
	cli_credits_grant(&cr, 1000);
	T_EQ(cr.held, 1004);
	T_EQ(cr.next_mid, 0);
}

static void test_grant_cap(void)
{
	struct cli_credits cr;
	uint32_t last;
	int i, wrapped = 0;

	t_section("grant: capped at CLI_CREDIT_MAX, never wraps");
	window(&cr, 0, CLI_CREDIT_MAX - 1);
	cli_credits_grant(&cr, 5);
	T_EQ(cr.held, CLI_CREDIT_MAX);
	window(&cr, 0, 0);
	last = 0;
	for (i = 0; i < 70000; i++) {
		cli_credits_grant(&cr, 0xffff);
		if (cr.held < last)
			wrapped++;
		last = cr.held;
	}
	T_EQ(wrapped, 0);
	T_EQ(cr.held, CLI_CREDIT_MAX);

	t_section("ask: saturates at 65535");
	window(&cr, 0, 0);
	T_EQ(cli_credits_ask(&cr, 0xffff), 0xffff);
	T_EQ(cli_credits_ask(&cr, 0xffff - 10), 0xffff);
}

static void test_check(void)
{
	static const struct {
		uint32_t held, need;
		bool outstanding;
		int ret;
	} t[] = {
		{ 1, 1, false, 0 },
		{ 8, 4, false, 0 },
		{ 0, 1, false, -EAGAIN },
		{ 3, 4, false, -EAGAIN },
		{ 0, 1, true, 0 },		/* credits may come back */
		{ 3, 128, true, 0 },
	};
	struct cli_credits cr;
	size_t i;

	t_section("check: -EAGAIN only when nothing can bring credits back");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		window(&cr, 0, t[i].held);
		T_EQ(cli_credits_check(&cr, t[i].need, t[i].outstanding), t[i].ret);
	}
}

static void test_io_max(void)
{
	static const struct {
		uint32_t held;
		uint64_t max;
	} t[] = {
		{ 0, 64 * KIB },		/* the send is refused elsewhere */
		{ 1, 64 * KIB },
		{ 3, 192 * KIB },
		{ 128, 8 * MIB },
		{ 0xffffffffu, 0xffffffffull * 64 * KIB },
	};
	struct cli_credits cr;
	size_t i;

	t_section("io_max: one credit per 64 KiB");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		window(&cr, 0, t[i].held);
		T_EQ(cli_credits_io_max(&cr), t[i].max);
	}
}

/* a long run against a server that grants what is asked */
static void test_mid_sequence(void)
{
	struct cli_credits cr;
	uint64_t expect = 0, mid;
	uint32_t seed = 12345, bad = 0, most = 0;
	uint16_t charge, ask;
	int i;

	t_section("MessageIds: contiguous, no gap, no reuse");
	window(&cr, 0, 1);
	for (i = 0; i < 100000; i++) {
		seed = seed * 1103515245u + 12345u;
		charge = (uint16_t)(1 + (seed >> 16) % 128);
		while (cli_credits_take(&cr, &charge, 1, &mid, &ask))
			cli_credits_grant(&cr, 1);
		if (mid != expect)
			bad++;
		expect += charge;
		cli_credits_grant(&cr, ask);
		if (cr.held > most)
			most = cr.held;
	}
	T_EQ(bad, 0);
	T_EQ(cr.next_mid, expect);
	/* asking stops at the target: the window does not grow without end */
	T_EQ(most, CLI_CREDIT_TARGET);
}

/* ---- the engine against a scripted server ---- */

struct fake_msg {
	struct fake_msg *next;
	size_t len;
	uint8_t data[];
};

struct fake_req {
	uint16_t cmd;
	uint16_t charge;
	uint16_t ask;
	uint64_t mid;
	uint32_t flags;
	uint16_t seq;			/* ChannelSequence */
};

#define FAKE_MAX_REQ 1024
#define FAKE_WINDOW (1u << 16)
#define GRANT_ASKED (-1)

struct fake {
	struct xprt x;
	struct xprt_ev ev;
	int efd;
	bool reply;			/* answer each request as it is sent */
	int grant;			/* CreditResponse, or GRANT_ASKED */
	struct fake_req req[FAKE_MAX_REQ];
	int nreq;
	int bad_mid;			/* PDUs beyond the window or reused */
	uint64_t expect_mid;		/* MessageIds go out in order, no gap */
	int gaps;
	struct fake_msg *head, **tail;
	/* the server's window: MessageIds it will take */
	uint8_t avail[FAKE_WINDOW];
	uint64_t top;			/* the next a grant opens */
	uint8_t *file;
	size_t file_len;
	const uint8_t *key;		/* this channel's signing key: check and sign */
	int bad_sig;			/* requests not signed with it */
	bool fail;			/* the transport fails at its next event */
};

struct mbuf {
	uint8_t *p;
	size_t len, cap, last;
	bool any;
};

static void fake_open(struct fake *s, uint64_t mid, uint32_t n)
{
	uint64_t end = mid + n;

	for (; mid < end && mid < FAKE_WINDOW; mid++)
		s->avail[mid] = 1;
	if (end > s->top)
		s->top = end;
}

static void fake_use(struct fake *s, const struct smb2_hdr *h, uint16_t dialect)
{
	uint32_t k = dialect > SMB2_DIALECT_202 && h->credit_charge ? h->credit_charge : 1;
	uint64_t m;

	for (m = h->message_id; m < h->message_id + k; m++) {
		if (m >= FAKE_WINDOW || !s->avail[m]) {
			printf("  fake: %s MessageId %llu (charge %u) outside the window\n",
			       smb2_cmd_name(h->command), (unsigned long long)h->message_id, k);
			s->bad_mid++;
			return;
		}
	}
	for (m = h->message_id; m < h->message_id + k; m++)
		s->avail[m] = 0;
}

/* Append one response PDU; its grant opens the server's window. */
static void mb_pdu(struct fake *s, struct mbuf *m, const struct smb2_hdr *h,
		   const void *body, size_t blen, const void *data, size_t dlen)
{
	size_t off = m->any ? align8(m->len) : 0, need = off + SMB2_HDR_SIZE + blen + dlen;
	struct smb2_hdr r = *h;

	if (need > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		p = realloc(m->p, cap);
		if (!p)
			exit(2);
		m->p = p;
		m->cap = cap;
	}
	memset(m->p + m->len, 0, off - m->len);
	if (m->any)
		put_le32(m->p + m->last + 20, (uint32_t)(off - m->last));
	r.flags |= SMB2_FLAGS_SERVER_TO_REDIR;
	r.next_command = 0;
	smb2_hdr_encode(m->p + off, &r);
	memcpy(m->p + off + SMB2_HDR_SIZE, body, blen);
	if (dlen)
		memcpy(m->p + off + SMB2_HDR_SIZE + blen, data, dlen);
	m->last = off;
	m->len = need;
	m->any = true;
	fake_open(s, s->top, h->credits);
}

/* a response PDU with a small body (ECHO, FLUSH, or an error) */
static void mb_simple(struct fake *s, struct mbuf *m, uint16_t cmd, uint64_t mid,
		      uint32_t status, uint16_t credits, uint32_t flags)
{
	static const uint8_t ok[4] = { 4 }, err[9] = { 9 };
	struct smb2_hdr h = { .command = cmd, .message_id = mid, .status = status,
			      .credits = credits, .flags = flags, .credit_charge = 1 };

	if (flags & SMB2_FLAGS_ASYNC_COMMAND)
		h.async_id = 0x42;
	if (status)
		mb_pdu(s, m, &h, err, sizeof(err), NULL, 0);
	else
		mb_pdu(s, m, &h, ok, sizeof(ok), NULL, 0);
}

static void fake_queue(struct fake *s, struct mbuf *m)
{
	struct fake_msg *f = malloc(sizeof(*f) + m->len);
	uint64_t one = 1;

	if (!f)
		exit(2);
	memcpy(f->data, m->p, m->len);
	f->len = m->len;
	f->next = NULL;
	*s->tail = f;
	s->tail = &f->next;
	free(m->p);
	memset(m, 0, sizeof(*m));
	if (write(s->efd, &one, sizeof(one)) != sizeof(one))
		exit(2);
}

/* hand a message to the engine now, as the transport would */
static int fake_deliver(struct fake *s, struct mbuf *m)
{
	int ret = s->x.on_msg(s->x.upper, m->p, m->len);

	free(m->p);
	memset(m, 0, sizeof(*m));
	return ret;
}

static void pattern(uint8_t *p, size_t len, uint64_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((off + i) * 7 + ((off + i) >> 9));
}

/* the server's answer to one request PDU */
static void fake_answer(struct fake *s, struct mbuf *m, const uint8_t *pdu, size_t len,
			const struct smb2_hdr *h)
{
	struct smb2_hdr r = { .command = h->command, .message_id = h->message_id,
			      .credit_charge = h->credit_charge };
	uint8_t body[16] = { 0 };
	struct smb2_write_req wq;
	struct smb2_read_req rq;
	struct wcur w;

	r.credits = s->grant == GRANT_ASKED ? h->credits : (uint16_t)s->grant;
	switch (h->command) {
	case SMB2_READ:
		if (smb2_read_req_decode(pdu, len, &rq) || rq.offset >= s->file_len)
			break;
		if (rq.length > s->file_len - rq.offset)
			rq.length = (uint32_t)(s->file_len - rq.offset);
		wcur_init(&w, body, sizeof(body));
		smb2_read_rsp_encode(&w, &(struct smb2_read_rsp){
			.data_offset = SMB2_READ_RSP_DATA_OFF, .data_length = rq.length });
		mb_pdu(s, m, &r, body, sizeof(body), s->file + rq.offset, rq.length);
		return;
	case SMB2_WRITE:
		if (smb2_write_req_decode(pdu, len, &wq) || wq.offset > s->file_len ||
		    wq.length > s->file_len - wq.offset)
			break;
		memcpy(s->file + wq.offset, wq.data.p, wq.length);
		wcur_init(&w, body, sizeof(body));
		smb2_write_rsp_encode(&w, &(struct smb2_write_rsp){ .count = wq.length });
		mb_pdu(s, m, &r, body, sizeof(body), NULL, 0);
		return;
	default:
		mb_simple(s, m, h->command, h->message_id, 0, r.credits, 0);
		return;
	}
	mb_simple(s, m, h->command, h->message_id, STATUS_END_OF_FILE, r.credits, 0);
}

/* Sign every response PDU of m with the channel's key. */
static void fake_sign(struct fake *s, struct mbuf *m)
{
	size_t off = 0, plen, next;

	if (!s->key)
		return;
	do {
		if (smb2_chain_pdu(m->p, m->len, off, &plen, &next))
			return;
		put_le32(m->p + off + 16, get_le32(m->p + off + 16) | SMB2_FLAGS_SIGNED);
		smb2_sign_compute(NULL, SMB2_SIGN_AES_CMAC, s->key, m->p + off, plen,
				  m->p + off + 48);
		off = next;
	} while (off);
}

static int fake_send(struct xprt *x, struct xbuf *b)
{
	struct fake *s = container_of(x, struct fake, x);
	struct rdax_conn *c = ((struct cli_chan *)x->upper)->c;
	size_t len = b->len + b->tail_len, off = 0, plen, next;
	uint8_t *msg = malloc(len);
	struct mbuf m = { 0 };
	struct smb2_hdr h;

	if (!msg)
		exit(2);
	memcpy(msg, b->data, b->len);
	if (b->tail_len)
		memcpy(msg + b->len, b->tail, b->tail_len);
	b->release(b);
	do {
		if (smb2_chain_pdu(msg, len, off, &plen, &next) ||
		    smb2_hdr_decode(msg + off, plen, &h)) {
			printf("  fake: malformed request\n");
			s->bad_mid++;
			break;
		}
		if (s->nreq < FAKE_MAX_REQ)
			s->req[s->nreq++] = (struct fake_req){ .cmd = h.command,
				.charge = h.credit_charge, .ask = h.credits, .mid = h.message_id,
				.flags = h.flags, .seq = (uint16_t)h.status };
		if (s->key && (!(h.flags & SMB2_FLAGS_SIGNED) ||
			       smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, s->key, msg + off, plen)))
			s->bad_sig++;
		if (h.message_id != s->expect_mid) {
			printf("  fake: MessageId %llu sent, %llu expected\n",
			       (unsigned long long)h.message_id,
			       (unsigned long long)s->expect_mid);
			s->gaps++;
		}
		s->expect_mid = h.message_id + (h.credit_charge ? h.credit_charge : 1);
		fake_use(s, &h, c->dialect);
		if (s->reply)
			fake_answer(s, &m, msg + off, plen, &h);
		off = next;
	} while (off);
	if (m.any) {
		fake_sign(s, &m);
		fake_queue(s, &m);
	}
	free(msg);
	return 0;
}

static int fake_handle_events(struct xprt *x, uint32_t events, int src)
{
	struct fake *s = container_of(x, struct fake, x);
	struct fake_msg *f;
	uint64_t n;
	int ret = 0;

	if (read(s->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return -errno;
	if (s->fail)
		return -ECONNRESET;
	/* answers to what the engine sends meanwhile join the queue */
	while (!ret && (f = s->head)) {
		s->head = f->next;
		if (!s->head)
			s->tail = &s->head;
		ret = x->on_msg(x->upper, f->data, f->len);
		free(f);
	}
	return ret < 0 ? ret : 0;
}

static size_t fake_queued(const struct xprt *x)
{
	return 0;
}

static void fake_destroy(struct xprt *x)
{
	struct fake *s = container_of(x, struct fake, x);
	struct fake_msg *f;

	while ((f = s->head)) {
		s->head = f->next;
		free(f);
	}
	close(s->efd);
	free(s->file);
	free(s);
}

static const struct xprt_ops fake_ops = {
	.name = "fake",
	.send = fake_send,
	.handle_events = fake_handle_events,
	.queued = fake_queued,
	.destroy = fake_destroy,
};

/*
 * A connection past NEGOTIATE (SMB 3.1.1, 1 MiB I/O) whose window
 * holds `held` credits from MessageId `mid`, as the server sees it too.
 */
static struct rdax_conn *conn_new(struct fake **out, uint64_t mid, uint32_t held)
{
	struct rdax_conn *c = calloc(1, sizeof(*c));
	struct fake *s = calloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!c || !s)
		exit(2);
	list_init(&c->sendq);
	list_init(&c->trees);
	cli_leases_init(c);
	snprintf(c->host, sizeof(c->host), "fake");
	c->cfg.timeout_ms = 2000;
	c->dialect = SMB2_DIALECT_311;
	c->max_read = c->max_write = MIB;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->epfd < 0 || s->efd < 0)
		exit(2);
	s->x.ops = &fake_ops;
	s->x.fd = s->efd;
	s->x.epfd = -1;
	s->ev.x = &s->x;
	s->tail = &s->head;
	s->grant = GRANT_ASKED;
	s->top = mid;
	s->expect_mid = mid;
	fake_open(s, mid, held);
	ev.data.ptr = &s->ev;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, s->efd, &ev))
		exit(2);
	cli_engine_start(c, &s->x);
	window(&c->chans[0].cr, mid, held);
	*out = s;
	return c;
}

/* every test: nothing beyond the window, no MessageId skipped */
static void conn_done(struct rdax_conn **c, struct fake *s)
{
	T_EQ(s->bad_mid, 0);
	T_EQ(s->gaps, 0);
	rdax_disconnect(c);
}

static void fake_file(struct fake *s, size_t len)
{
	s->file = malloc(len);
	if (!s->file)
		exit(2);
	s->file_len = len;
	pattern(s->file, len, 0);
}

struct tally {
	int pdus;
	int done;
	int err;
};

static void tally_pdu(struct cli_chain *ch, int i, const uint8_t *pdu, size_t len)
{
	struct tally *t = ch->arg;

	t->pdus++;
}

static void tally_done(struct cli_chain *ch)
{
	struct tally *t = ch->arg;

	t->done++;
	t->err = ch->err;
}

/* A chain of n cmd PDUs of these charges; async (on_done) when t is set. */
static int simple_chain(struct rdax_conn *c, struct cli_chain *ch, uint16_t cmd,
			const uint16_t *charge, int n, struct tally *t)
{
	struct wcur w;
	int i, ret;

	ret = cli_chain_init(c, ch);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		ret = cli_chain_add(c, ch, cmd, 0, i > 0, charge[i], 4, &w);
		if (ret) {
			cli_chain_abort(c, ch);
			return ret;
		}
		smb2_simple_encode(&w);
		cli_chain_end(c, ch, &w);
	}
	if (t) {
		memset(t, 0, sizeof(*t));
		ch->arg = t;
		ch->on_pdu = tally_pdu;
		ch->on_done = tally_done;
	}
	return 0;
}

static int echo_chain(struct rdax_conn *c, struct cli_chain *ch, const uint16_t *charge,
		      int n, struct tally *t)
{
	return simple_chain(c, ch, SMB2_ECHO, charge, n, t);
}

static int echo_submit(struct rdax_conn *c, struct cli_chain *ch, const uint16_t *charge,
		       int n, struct tally *t)
{
	int ret = echo_chain(c, ch, charge, n, t);

	return ret ? ret : cli_chain_submit(c, ch);
}

static void test_zero_window(void)
{
	const uint16_t one[] = { 1 }, one_two[] = { 1, 2 }, pair[] = { 1, 1 };
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	struct rdax_io io = { .opcode = RDAX_OP_READ, .file = &file, .len = 64 * KIB };
	struct rdax_ioq *q = NULL;
	struct cli_chain ch;
	struct rdax_conn *c;
	static uint8_t buf[64 * KIB];
	struct fake *s;

	t_section("no credits, nothing in flight: -EAGAIN, nothing sent");
	c = conn_new(&s, 7, 0);
	s->reply = true;
	tree.c = c;
	io.buf = buf;
	T_EQ(cli_check_credits(c, 1), -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
	T_EQ(echo_chain(c, &ch, one, 1, NULL), 0);
	cli_begin(c);
	T_EQ(cli_chain_run(c, &ch), -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
	T_EQ(rdax_ioq_new(c, 4, &q), 0);
	if (q) {
		T_EQ(rdax_ioq_submit(q, &io, 1), -EAGAIN);
		T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
		T_EQ(rdax_ioq_inflight(q), 0);
		rdax_ioq_delete(&q);
	}
	T_EQ(s->nreq, 0);
	T_EQ(c->chans[0].cr.next_mid, 7);
	T_EQ(c->chans[0].cr.held, 0);
	T_ASSERT(!c->broken);
	conn_done(&c, s);

	t_section("a compound is checked as a whole");
	c = conn_new(&s, 0, 2);
	s->reply = true;
	T_EQ(echo_chain(c, &ch, one_two, 2, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "2 held, 3 needed") != NULL);
	T_EQ(s->nreq, 0);
	T_EQ(echo_chain(c, &ch, pair, 2, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), 0);
	T_EQ(s->nreq, 2);
	conn_done(&c, s);
}

static void test_wire(void)
{
	const uint16_t a[] = { 1 }, b[] = { 1, 2, 1 }, d[] = { 8 };
	struct cli_chain ch[3];
	struct tally t[3];
	struct rdax_conn *c;
	struct fake *s;
	int i;

	t_section("on the wire: MessageId, CreditCharge, CreditRequest");
	c = conn_new(&s, 10, 100);
	T_EQ(echo_submit(c, &ch[0], a, 1, &t[0]), 0);
	T_EQ(echo_submit(c, &ch[1], b, 3, &t[1]), 0);
	T_EQ(echo_submit(c, &ch[2], d, 1, &t[2]), 0);
	T_EQ(s->nreq, 5);
	if (s->nreq == 5) {
		static const uint64_t mid[] = { 10, 11, 12, 14, 15 };
		static const uint16_t charge[] = { 1, 1, 2, 1, 8 };

		for (i = 0; i < 5; i++) {
			T_EQ(s->req[i].mid, mid[i]);
			T_EQ(s->req[i].charge, charge[i]);
			T_EQ(s->req[i].ask, charge[i] + CLI_CREDIT_ASK_MAX);
		}
	}
	T_EQ(c->chans[0].cr.next_mid, 23);
	T_EQ(c->chans[0].cr.held, 100 - 13);
	T_EQ(c->ninflight, 3);
	conn_done(&c, s);
	for (i = 0; i < 3; i++) {
		T_EQ(t[i].done, 1);
		T_EQ(t[i].err, -ESHUTDOWN);
	}
}

static void test_wait_for_credit(void)
{
	const uint16_t one[] = { 1 };
	struct cli_chain a, b;
	struct tally ta, tb;
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct fake *s;

	t_section("window empty with one in flight: the next waits, unsent");
	c = conn_new(&s, 3, 1);
	T_EQ(echo_submit(c, &a, one, 1, &ta), 0);
	T_EQ(echo_submit(c, &b, one, 1, &tb), 0);
	T_EQ(s->nreq, 1);
	T_EQ(c->chans[0].cr.held, 0);
	T_EQ(tb.done, 0);

	t_section("a grant of 1 sends it with the next MessageId");
	mb_simple(s, &m, SMB2_ECHO, 3, 0, 1, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(ta.done, 1);
	T_EQ(ta.err, 0);
	T_EQ(s->nreq, 2);
	if (s->nreq == 2)
		T_EQ(s->req[1].mid, 4);
	T_EQ(c->chans[0].cr.held, 0);
	mb_simple(s, &m, SMB2_ECHO, 4, 0, 1, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(tb.done, 1);
	T_EQ(tb.err, 0);
	T_EQ(c->chans[0].cr.held, 1);
	T_EQ(c->ninflight, 0);
	conn_done(&c, s);
}

static void test_never_enough(void)
{
	const uint16_t one[] = { 1 }, four[] = { 4 };
	struct cli_chain a, b, d;
	struct tally ta, tb, td;
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct fake *s;

	t_section("queued behind the last in flight, its grant too small: -EAGAIN");
	c = conn_new(&s, 0, 1);
	T_EQ(echo_submit(c, &a, one, 1, &ta), 0);
	T_EQ(echo_submit(c, &b, four, 1, &tb), 0);
	T_EQ(s->nreq, 1);
	cli_begin(c);
	mb_simple(s, &m, SMB2_ECHO, 0, 0, 2, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(ta.done, 1);
	T_EQ(tb.done, 1);
	T_EQ(tb.err, -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
	T_EQ(s->nreq, 1);
	T_EQ(c->chans[0].cr.held, 2);
	T_EQ(c->chans[0].cr.next_mid, 1);
	T_EQ(c->ninflight, 0);
	T_ASSERT(list_empty(&c->sendq));
	T_ASSERT(!c->broken);

	t_section("the connection goes on with what it holds");
	T_EQ(echo_submit(c, &d, one, 1, &td), 0);
	T_EQ(s->nreq, 2);
	if (s->nreq == 2)
		T_EQ(s->req[1].mid, 1);
	conn_done(&c, s);

	t_section("a grant of 0 on the last in flight: the queue fails, no hang");
	c = conn_new(&s, 0, 1);
	T_EQ(echo_submit(c, &a, one, 1, &ta), 0);
	T_EQ(echo_submit(c, &b, one, 1, &tb), 0);
	T_EQ(echo_submit(c, &d, one, 1, &td), 0);
	mb_simple(s, &m, SMB2_ECHO, 0, 0, 0, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(tb.done, 1);
	T_EQ(tb.err, -EAGAIN);
	T_EQ(td.done, 1);
	T_EQ(td.err, -EAGAIN);
	T_EQ(s->nreq, 1);
	T_EQ(c->ninflight, 0);
	T_ASSERT(!c->broken);
	conn_done(&c, s);
}

/* an rdax_ioq whose second read waits for credits that never come */
static void test_ioq_never_enough(void)
{
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	struct rdax_io io[2];
	struct rdax_cqe cqe[2];
	struct rdax_ioq *q = NULL;
	struct rdax_conn *c;
	struct fake *s;
	uint8_t *buf = malloc(512 * KIB);
	int i, n, got = 0, res[2] = { 1, 1 };

	t_section("rdax_ioq_submit: a read the window never covers completes with -EAGAIN");
	if (!buf)
		exit(2);
	c = conn_new(&s, 0, 4);
	tree.c = c;
	fake_file(s, MIB);
	s->reply = true;
	s->grant = 1;
	for (i = 0; i < 2; i++)
		io[i] = (struct rdax_io){ .opcode = RDAX_OP_READ, .file = &file,
					  .buf = buf + i * 256 * KIB, .len = 256 * KIB,
					  .offset = (uint64_t)i * 256 * KIB, .user_data = (uint64_t)i };
	T_EQ(rdax_ioq_new(c, 4, &q), 0);
	if (!q)
		goto out;
	T_EQ(rdax_ioq_submit(q, io, 2), 2);
	T_EQ(s->nreq, 1);
	while (got < 2) {
		n = rdax_ioq_reap(q, cqe, 1, 2, 5000);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			if (cqe[i].user_data < 2)
				res[cqe[i].user_data] = (int)cqe[i].res;
		got += n;
	}
	T_EQ(got, 2);
	T_EQ(res[0], 256 * KIB);
	T_EQ(res[1], -EAGAIN);
	T_EQ(s->nreq, 1);
	T_ASSERT(!c->broken);
	rdax_ioq_delete(&q);
out:
	conn_done(&c, s);
	free(buf);
}

static void test_unsent(void)
{
	const uint16_t three[] = { 3 }, one[] = { 1 };
	struct cli_chain a, b;
	struct tally ta, tb;
	struct rdax_conn *c;
	struct fake *s;

	t_section("a chain that fails before the wire gives its credits back");
	c = conn_new(&s, 5, 10);
	c->have_key = true;
	c->signing = true;
	c->sign_alg = 0x7777;		/* signing fails */
	T_EQ(echo_submit(c, &a, three, 1, &ta), 0);
	T_EQ(ta.done, 1);
	T_EQ(ta.err, -EINVAL);
	T_EQ(s->nreq, 0);
	T_EQ(c->chans[0].cr.held, 10);
	T_EQ(c->chans[0].cr.next_mid, 5);
	T_EQ(c->ninflight, 0);

	t_section("the next chain takes the MessageIds it did not use");
	c->sign_alg = SMB2_SIGN_AES_CMAC;
	T_EQ(echo_submit(c, &b, one, 1, &tb), 0);
	T_EQ(s->nreq, 1);
	if (s->nreq == 1)
		T_EQ(s->req[0].mid, 5);
	T_EQ(c->chans[0].cr.held, 9);
	conn_done(&c, s);
}

static void test_fail_all(void)
{
	const uint16_t one[] = { 1 };
	struct cli_chain a, b;
	struct tally ta, tb;
	struct rdax_conn *c;
	struct fake *s;

	t_section("a broken connection fails what is in flight and queued, once");
	c = conn_new(&s, 0, 1);
	T_EQ(echo_submit(c, &a, one, 1, &ta), 0);
	T_EQ(echo_submit(c, &b, one, 1, &tb), 0);
	T_EQ(c->ninflight, 1);
	cli_engine_stop_inflight(c, -EIO);
	T_EQ(ta.done, 1);
	T_EQ(ta.err, -EIO);
	T_EQ(tb.done, 1);
	T_EQ(tb.err, -EIO);
	T_EQ(c->ninflight, 0);
	T_ASSERT(list_empty(&c->chans[0].inflight));
	T_ASSERT(list_empty(&c->sendq));
	conn_done(&c, s);
	T_EQ(ta.done + tb.done, 2);
}

static void test_negotiate(void)
{
	const uint16_t one[] = { 1 };
	struct cli_chain neg, a, b;
	struct tally tn, ta, tb;
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct fake *s;

	t_section("NEGOTIATE spends the connection's first credit");
	c = conn_new(&s, 0, 1);
	c->dialect = 0;
	cli_credits_init(&c->chans[0].cr);
	T_EQ(simple_chain(c, &neg, SMB2_NEGOTIATE, one, 1, &tn), 0);
	T_EQ(cli_chain_submit(c, &neg), 0);
	T_EQ(s->nreq, 1);
	T_EQ(c->chans[0].cr.held, 0);
	mb_simple(s, &m, SMB2_NEGOTIATE, 0, 0, 1, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(tn.done, 1);
	c->dialect = SMB2_DIALECT_311;
	/* the server granted one: one request may be in flight, not two */
	T_EQ(c->chans[0].cr.held, 1);
	T_EQ(echo_submit(c, &a, one, 1, &ta), 0);
	T_EQ(echo_submit(c, &b, one, 1, &tb), 0);
	T_EQ(s->nreq, 2);
	T_EQ(s->bad_mid, 0);
	mb_simple(s, &m, SMB2_ECHO, 1, 0, 1, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(s->nreq, 3);
	if (s->nreq == 3)
		T_EQ(s->req[2].mid, 2);
	conn_done(&c, s);
}

static void test_grant_above_ask(void)
{
	const uint16_t one[] = { 1 };
	struct rdax_conn *c;
	struct cli_chain ch;
	struct fake *s;

	t_section("a grant above the request is taken");
	c = conn_new(&s, 0, 1);
	s->reply = true;
	s->grant = 1000;
	T_EQ(echo_chain(c, &ch, one, 1, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), 0);
	T_EQ(s->nreq, 1);
	if (s->nreq == 1)
		T_EQ(s->req[0].ask, 1 + CLI_CREDIT_ASK_MAX);
	T_EQ(c->chans[0].cr.held, 1000);
	/* and used, one by one, by a server that grants nothing more */
	s->grant = 0;
	while (s->nreq < 1001 && !echo_chain(c, &ch, one, 1, NULL) &&
	       !cli_chain_run(c, &ch))
		;
	T_EQ(s->nreq, 1001);
	T_EQ(c->chans[0].cr.held, 0);
	T_EQ(echo_chain(c, &ch, one, 1, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), -EAGAIN);
	T_EQ(s->nreq, 1001);
	conn_done(&c, s);
}

static void test_grant_flood(void)
{
	const uint16_t one[] = { 1 };
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct cli_chain ch;
	uint32_t last = 0;
	int i, wrapped = 0;
	struct fake *s;

	t_section("a server granting 65535 again and again: no wrap");
	c = conn_new(&s, 0, 0);
	for (i = 0; i < 70000; i++) {
		mb_simple(s, &m, SMB2_ECHO, 1u << 20, 0, 0xffff, 0);
		if (fake_deliver(s, &m))
			break;
		if (c->chans[0].cr.held < last)
			wrapped++;
		last = c->chans[0].cr.held;
	}
	T_EQ(i, 70000);
	T_EQ(wrapped, 0);
	T_EQ(c->chans[0].cr.held, CLI_CREDIT_MAX);
	/* still usable */
	s->reply = true;
	T_EQ(echo_chain(c, &ch, one, 1, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), 0);
	T_EQ(s->nreq, 1);
	if (s->nreq == 1)
		T_EQ(s->req[0].ask, 1);
	conn_done(&c, s);
}

static void test_interim(void)
{
	const uint16_t one[] = { 1 };
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct cli_chain ch;
	struct tally t;
	struct fake *s;

	t_section("STATUS_PENDING interim: its grant counts, the PDU stays open");
	c = conn_new(&s, 20, 10);
	T_EQ(echo_submit(c, &ch, one, 1, &t), 0);
	T_EQ(c->chans[0].cr.held, 9);
	mb_simple(s, &m, SMB2_ECHO, 20, STATUS_PENDING, 5, SMB2_FLAGS_ASYNC_COMMAND);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(c->chans[0].cr.held, 14);
	T_EQ(t.pdus, 0);
	T_EQ(t.done, 0);
	T_EQ(c->ninflight, 1);

	t_section("the final response completes it once, its grant added once");
	mb_simple(s, &m, SMB2_ECHO, 20, 0, 0, SMB2_FLAGS_ASYNC_COMMAND);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(c->chans[0].cr.held, 14);
	T_EQ(t.pdus, 1);
	T_EQ(t.done, 1);
	T_EQ(t.err, 0);
	T_EQ(c->ninflight, 0);
	T_EQ(c->chans[0].cr.next_mid, 21);
	conn_done(&c, s);

	t_section("a synchronous chain through interim and final");
	c = conn_new(&s, 0, 2);
	mb_simple(s, &m, SMB2_ECHO, 0, STATUS_PENDING, 3, SMB2_FLAGS_ASYNC_COMMAND);
	fake_queue(s, &m);
	mb_simple(s, &m, SMB2_ECHO, 0, 0, 2, SMB2_FLAGS_ASYNC_COMMAND);
	fake_queue(s, &m);
	T_EQ(echo_chain(c, &ch, one, 1, NULL), 0);
	T_EQ(cli_chain_run(c, &ch), 0);
	T_EQ(ch.rsp[0].status, 0);
	T_EQ(c->chans[0].cr.held, 1 + 3 + 2);
	conn_done(&c, s);
}

static void test_compound(void)
{
	const uint16_t three[] = { 1, 1, 2 };
	struct rdax_conn *c;
	struct mbuf m = { 0 };
	struct cli_chain ch;
	struct tally t;
	struct fake *s;

	t_section("compound response: each PDU's grant counts");
	c = conn_new(&s, 0, 10);
	T_EQ(echo_submit(c, &ch, three, 3, &t), 0);
	T_EQ(c->chans[0].cr.held, 6);
	mb_simple(s, &m, SMB2_ECHO, 0, 0, 1, 0);
	mb_simple(s, &m, SMB2_ECHO, 1, 0, 2, SMB2_FLAGS_RELATED_OPERATIONS);
	mb_simple(s, &m, SMB2_ECHO, 2, 0, 3, SMB2_FLAGS_RELATED_OPERATIONS);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(c->chans[0].cr.held, 12);
	T_EQ(t.pdus, 3);
	T_EQ(t.done, 1);
	T_EQ(c->ninflight, 0);
	conn_done(&c, s);

	t_section("compound answered PDU by PDU, out of order");
	c = conn_new(&s, 0, 10);
	T_EQ(echo_submit(c, &ch, three, 3, &t), 0);
	mb_simple(s, &m, SMB2_ECHO, 2, 0, 3, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(t.done, 0);
	mb_simple(s, &m, SMB2_ECHO, 0, 0, 1, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(t.done, 0);
	mb_simple(s, &m, SMB2_ECHO, 1, 0, 2, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(c->chans[0].cr.held, 12);
	T_EQ(t.pdus, 3);
	T_EQ(t.done, 1);
	conn_done(&c, s);

	t_section("a PDU that is not ours still grants");
	c = conn_new(&s, 0, 4);
	mb_simple(s, &m, SMB2_OPLOCK_BREAK, UINT64_MAX, 0, 0, 0);
	mb_simple(s, &m, SMB2_ECHO, 77, 0, 2, 0);
	T_EQ(fake_deliver(s, &m), 0);
	T_EQ(c->chans[0].cr.held, 6);
	conn_done(&c, s);
}

static void test_io_chunk(void)
{
	struct rdax_conn *c;
	struct fake *s;

	t_section("cli_io_chunk: sized by the credits held");
	c = conn_new(&s, 0, 3);
	T_EQ(cli_io_chunk(c, false, 4 * MIB), 192 * KIB);
	T_EQ(cli_io_chunk(c, true, 100 * KIB), 100 * KIB);
	c->chans[0].cr.held = 0;
	T_EQ(cli_io_chunk(c, false, 4 * MIB), 64 * KIB);
	c->chans[0].cr.held = 1000;
	T_EQ(cli_io_chunk(c, false, 4 * MIB), MIB);
	/* with requests in flight too: what is held now, not what may come */
	c->chans[0].cr.held = 2;
	c->ninflight = 1;
	T_EQ(cli_io_chunk(c, false, 4 * MIB), 128 * KIB);
	c->chans[0].cr.held = 0;
	T_EQ(cli_io_chunk(c, true, 4 * MIB), 64 * KIB);
	c->ninflight = 0;
	/* SMB 2.0.2 has no multi-credit requests */
	c->dialect = SMB2_DIALECT_202;
	c->chans[0].cr.held = 1;
	T_EQ(cli_io_chunk(c, false, 4 * MIB), MIB);
	conn_done(&c, s);
}

/* rdax_pread/rdax_pwrite of len bytes against a server granting `grant` */
static void rw_against(int grant, uint32_t held, size_t len)
{
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	uint8_t *buf = malloc(len), *exp = malloc(len);
	struct rdax_conn *c;
	struct fake *s;
	ssize_t n;
	int i, most = 0;

	if (!buf || !exp)
		exit(2);
	c = conn_new(&s, 0, held);
	tree.c = c;
	snprintf(file.path, sizeof(file.path), "f");
	s->reply = true;
	s->grant = grant;
	fake_file(s, len);
	n = rdax_pread(&file, buf, len, 0);
	T_EQ(n, (ssize_t)len);
	pattern(exp, len, 0);
	T_ASSERT(n == (ssize_t)len && !memcmp(buf, exp, len));
	pattern(buf, len, 12345);
	n = rdax_pwrite(&file, buf, len, 0);
	T_EQ(n, (ssize_t)len);
	T_ASSERT(n == (ssize_t)len && !memcmp(s->file, buf, len));
	T_ASSERT(!c->broken);
	for (i = 0; i < s->nreq; i++)
		if (s->req[i].charge > most)
			most = s->req[i].charge;
	printf("  %d requests, largest charge %d\n", s->nreq, most);
	conn_done(&c, s);
	free(buf);
	free(exp);
}

static void test_rw(void)
{
	t_section("pread/pwrite, the server grants what is asked");
	rw_against(GRANT_ASKED, 1, 4 * MIB);
}

static void test_rw_stingy(void)
{
	t_section("pread/pwrite, the server grants 1 per response");
	rw_against(1, 1, MIB);
	t_section("pread/pwrite, 8 credits, then 1 per response");
	rw_against(1, 8, 2 * MIB);
}

static void test_rw_no_credits(void)
{
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	uint64_t t0;
	struct rdax_conn *c;
	struct fake *s;
	uint8_t buf[4096];

	t_section("pread/pwrite with no credits: -EAGAIN at once, nothing sent");
	c = conn_new(&s, 0, 0);
	tree.c = c;
	snprintf(file.path, sizeof(file.path), "f");
	s->reply = true;
	fake_file(s, sizeof(buf));
	t0 = cli_now_ms();
	T_EQ(rdax_pread(&file, buf, sizeof(buf), 0), -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
	T_EQ(rdax_pwrite(&file, buf, sizeof(buf), 0), -EAGAIN);
	T_ASSERT(strstr(rdax_conn_errmsg(c), "not enough SMB credits") != NULL);
	T_ASSERT(cli_now_ms() - t0 < 1000);
	T_EQ(s->nreq, 0);
	T_ASSERT(!c->broken);
	conn_done(&c, s);
}

/* ---- channels ---- */

/* another fake transport, bound to c as a channel with held credits */
static struct fake *chan_new(struct rdax_conn *c, uint32_t held)
{
	struct fake *s = calloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN };
	struct cli_chan *chan;

	if (!s)
		exit(2);
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->efd < 0)
		exit(2);
	s->x.ops = &fake_ops;
	s->x.fd = s->efd;
	s->x.epfd = -1;
	s->ev.x = &s->x;
	s->tail = &s->head;
	s->grant = GRANT_ASKED;
	fake_open(s, 0, held);
	ev.data.ptr = &s->ev;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, s->efd, &ev))
		exit(2);
	chan = cli_chan_add(c, &s->x, "fake2");
	if (!chan)
		exit(2);
	chan->bound = true;
	window(&chan->cr, 0, held);
	return s;
}

static int run_until(struct rdax_conn *c, const struct tally *t, int n)
{
	uint64_t end = cli_now_ms() + 2000;
	int i, done;

	for (;;) {
		for (i = 0, done = 0; i < n; i++)
			done += t[i].done;
		if (done == n || cli_now_ms() > end || c->broken)
			return done;
		cli_progress(c, 100);
	}
}

static void test_channels_signed(void)
{
	static const uint8_t k0[16] = { 1, 2, 3 }, k1[16] = { 9, 8, 7 };
	const uint16_t one[] = { 1 };
	struct cli_chain ch[8];
	struct tally t[8];
	struct fake *s0, *s1;
	struct rdax_conn *c;
	int i, errs = 0;

	t_section("two channels: chains spread, each signed with its channel's key");
	c = conn_new(&s0, 0, 100);
	s1 = chan_new(c, 100);
	s0->reply = s1->reply = true;
	c->have_key = c->signing = true;
	c->sign_alg = SMB2_SIGN_AES_CMAC;
	memcpy(c->chans[0].signing_key, k0, 16);
	memcpy(c->chans[1].signing_key, k1, 16);
	s0->key = k0;
	s1->key = k1;
	for (i = 0; i < 8; i++)
		T_EQ(echo_submit(c, &ch[i], one, 1, &t[i]), 0);
	T_EQ(run_until(c, t, 8), 8);
	for (i = 0; i < 8; i++)
		errs += t[i].err != 0;
	T_EQ(errs, 0);
	T_ASSERT(s0->nreq >= 3 && s1->nreq >= 3);
	T_EQ(s0->nreq + s1->nreq, 8);
	T_EQ(s0->bad_sig, 0);
	T_EQ(s1->bad_sig, 0);
	T_EQ(c->chans[1].requests, (uint64_t)s1->nreq);
	T_EQ(s1->gaps, 0);
	conn_done(&c, s0);
}

static void test_channels_failover(void)
{
	const uint16_t one[] = { 1 };
	struct cli_chain ch[6];
	struct tally t[6];
	struct fake *s0, *s1;
	struct rdax_conn *c;
	int i, n1, replays = 0, errs = 0, seq1 = 0;
	uint64_t one_ev = 1;

	t_section("a channel fails: its chains go again on the other, REPLAY_OPERATION, ChannelSequence 1");
	c = conn_new(&s0, 0, 100);
	s1 = chan_new(c, 100);
	s0->reply = true;		/* the second channel never answers */
	for (i = 0; i < 6; i++)
		T_EQ(echo_submit(c, &ch[i], one, 1, &t[i]), 0);
	n1 = s1->nreq;
	T_ASSERT(n1 >= 2);
	for (i = 0; i < s0->nreq; i++)
		T_EQ(s0->req[i].flags & SMB2_FLAGS_REPLAY_OPERATION, 0);
	s1->fail = true;
	if (write(s1->efd, &one_ev, sizeof(one_ev)) != sizeof(one_ev))
		exit(2);
	T_EQ(run_until(c, t, 6), 6);	/* s1 is freed with its channel's transport */
	for (i = 0; i < 6; i++)
		errs += t[i].err != 0;
	T_EQ(errs, 0);
	T_EQ(s0->nreq, 6);
	for (i = 0; i < s0->nreq; i++) {
		if (s0->req[i].flags & SMB2_FLAGS_REPLAY_OPERATION) {
			replays++;
			seq1 += s0->req[i].seq == 1;
		}
	}
	T_EQ(replays, n1);
	T_EQ(seq1, n1);
	T_EQ(c->channel_seq, 1);
	T_ASSERT(c->chans[1].dead && !c->broken);
	T_EQ(c->chans[0].replays, (uint64_t)n1);
	T_EQ(rdax_conn_errmsg(c)[0], 0);

	t_section("the last channel fails: the connection is broken");
	s0->fail = true;
	T_EQ(echo_submit(c, &ch[0], one, 1, &t[0]), 0);
	T_EQ(run_until(c, t, 1), 1);
	T_ASSERT(t[0].err < 0);
	T_ASSERT(c->broken);
	T_EQ(cli_check_credits(c, 1), -ENOTCONN);
	conn_done(&c, s0);
}


/* Write len bytes as 64 KiB WRITEs through an rdax_ioq; the results. */
static int ioq_write_all(struct rdax_conn *c, struct rdax_file *file, uint8_t *buf,
			 size_t len, int *errs)
{
	enum { N = 16 };
	struct rdax_io io[N];
	struct rdax_cqe cqe[N];
	struct rdax_ioq *q = NULL;
	int i, n, got = 0, nio = (int)(len / (64 * KIB));

	*errs = 0;
	if (nio > N || rdax_ioq_new(c, N, &q))
		return -1;
	for (i = 0; i < nio; i++)
		io[i] = (struct rdax_io){ .opcode = RDAX_OP_WRITE, .file = file,
					  .buf = buf + (size_t)i * 64 * KIB, .len = 64 * KIB,
					  .offset = (uint64_t)i * 64 * KIB, .user_data = (uint64_t)i };
	if (rdax_ioq_submit(q, io, (unsigned int)nio) != nio) {
		rdax_ioq_delete(&q);
		return -1;
	}
	while (got < nio) {
		n = rdax_ioq_reap(q, cqe, 1, N, 3000);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			*errs += cqe[i].res != 64 * KIB;
		got += n;
	}
	rdax_ioq_delete(&q);
	return got;
}

/* fail a fake channel at its next event */
static void fake_kill(struct fake *s)
{
	uint64_t one = 1;

	s->fail = true;
	if (write(s->efd, &one, sizeof(one)) != sizeof(one))
		exit(2);
}

static int replays_seen(const struct fake *s, int *seq1)
{
	int i, n = 0;

	*seq1 = 0;
	for (i = 0; i < s->nreq; i++) {
		if (s->req[i].flags & SMB2_FLAGS_REPLAY_OPERATION) {
			n++;
			*seq1 += s->req[i].seq == 1;
		}
	}
	return n;
}

static void test_channels_io_failover(void)
{
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	size_t len = 16 * 64 * KIB;
	uint8_t *buf = malloc(len);
	struct fake *s0, *s1;
	struct rdax_conn *c;
	int errs, seq1, n1;

	t_section("WRITEs in flight on a channel that fails are built again and replayed");
	if (!buf)
		exit(2);
	c = conn_new(&s0, 0, 200);
	tree.c = c;
	s1 = chan_new(c, 200);
	fake_file(s0, len);
	s0->reply = true;		/* the second channel never answers */
	pattern(buf, len, 777);
	/* the writes spread; those on channel 1 wait for answers that never come */
	{
		struct rdax_ioq *q = NULL;
		struct rdax_io io[16];
		struct rdax_cqe cqe[16];
		int i, n, got = 0;

		T_EQ(rdax_ioq_new(c, 16, &q), 0);
		for (i = 0; i < 16; i++)
			io[i] = (struct rdax_io){ .opcode = RDAX_OP_WRITE, .file = &file,
						  .buf = buf + (size_t)i * 64 * KIB, .len = 64 * KIB,
						  .offset = (uint64_t)i * 64 * KIB };
		T_EQ(rdax_ioq_submit(q, io, 16), 16);
		n1 = s1->nreq;
		T_ASSERT(n1 >= 4);
		fake_kill(s1);
		errs = 0;
		while (got < 16) {
			n = rdax_ioq_reap(q, cqe, 1, 16, 3000);
			if (n <= 0)
				break;
			for (i = 0; i < n; i++)
				errs += cqe[i].res != 64 * KIB;
			got += n;
		}
		T_EQ(got, 16);
		rdax_ioq_delete(&q);
	}
	T_EQ(errs, 0);
	T_ASSERT(!memcmp(s0->file, buf, len));
	T_EQ(replays_seen(s0, &seq1), n1);
	T_EQ(seq1, n1);
	T_EQ(s0->nreq, 16);
	T_ASSERT(c->chans[1].dead && !c->broken);
	conn_done(&c, s0);
	free(buf);
}

/*
 * Channel 1 plays an SMB-Direct channel (no verbs here: its I/O goes
 * inline, but the scheduler treats it as RDMA).
 */
static void test_channels_bulk_on_rdma(void)
{
	struct rdax_tree tree = { .id = 1 };
	struct rdax_file file = { .t = &tree };
	size_t len = 8 * 64 * KIB;
	uint8_t *buf = malloc(len);
	struct fake *s0, *s1;
	struct rdax_conn *c;
	int errs, seq1, i, bulk0 = 0;
	const uint16_t one[] = { 1 };
	struct cli_chain ch[4];
	struct tally t[4];

	t_section("file data goes on the SMB-Direct channel while it lives, small requests anywhere");
	if (!buf)
		exit(2);
	c = conn_new(&s0, 0, 200);
	tree.c = c;
	s1 = chan_new(c, 200);
	c->rdma = true;
	c->rdma_max = c->inline_max = MIB;
	c->cfg.rdma_threshold = 4096;
	c->chans[1].rdma = true;
	fake_file(s0, len);
	fake_file(s1, len);
	s0->reply = s1->reply = true;
	pattern(buf, len, 99);
	T_EQ(ioq_write_all(c, &file, buf, len, &errs), 8);
	T_EQ(errs, 0);
	for (i = 0; i < s0->nreq; i++)
		bulk0 += s0->req[i].cmd == SMB2_WRITE;
	T_EQ(bulk0, 0);
	T_EQ(s1->nreq, 8);
	T_ASSERT(!memcmp(s1->file, buf, len));
	for (i = 0; i < 4; i++)
		T_EQ(echo_submit(c, &ch[i], one, 1, &t[i]), 0);
	T_EQ(run_until(c, t, 4), 4);
	T_ASSERT(s0->nreq >= 1);

	t_section("the SMB-Direct channel fails: its WRITEs go inline on the TCP one, replayed");
	s1->reply = false;
	pattern(buf, len, 1234);
	{
		struct rdax_ioq *q = NULL;
		struct rdax_io io[8];
		struct rdax_cqe cqe[8];
		int n, got = 0;

		int before = s1->nreq;

		T_EQ(rdax_ioq_new(c, 8, &q), 0);
		for (i = 0; i < 8; i++)
			io[i] = (struct rdax_io){ .opcode = RDAX_OP_WRITE, .file = &file,
						  .buf = buf + (size_t)i * 64 * KIB, .len = 64 * KIB,
						  .offset = (uint64_t)i * 64 * KIB };
		T_EQ(rdax_ioq_submit(q, io, 8), 8);
		T_EQ(s1->nreq - before, 8);
		fake_kill(s1);
		errs = 0;
		while (got < 8) {
			n = rdax_ioq_reap(q, cqe, 1, 8, 3000);
			if (n <= 0)
				break;
			for (i = 0; i < n; i++)
				errs += cqe[i].res != 64 * KIB;
			got += n;
		}
		T_EQ(got, 8);
		rdax_ioq_delete(&q);
	}
	T_EQ(errs, 0);
	T_ASSERT(!memcmp(s0->file, buf, len));
	T_EQ(replays_seen(s0, &seq1), 8);
	T_EQ(seq1, 8);

	t_section("no SMB-Direct channel left: file data goes on TCP, not replayed");
	pattern(buf, len, 4321);
	T_EQ(ioq_write_all(c, &file, buf, len, &errs), 8);
	T_EQ(errs, 0);
	T_ASSERT(!memcmp(s0->file, buf, len));
	conn_done(&c, s0);
	free(buf);
}

int main(void)
{
	test_init();
	test_ask();
	test_take();
	test_return();
	test_grant();
	test_grant_cap();
	test_check();
	test_io_max();
	test_mid_sequence();
	test_zero_window();
	test_wire();
	test_wait_for_credit();
	test_never_enough();
	test_ioq_never_enough();
	test_unsent();
	test_fail_all();
	test_negotiate();
	test_grant_above_ask();
	test_grant_flood();
	test_interim();
	test_compound();
	test_io_chunk();
	test_rw();
	test_rw_stingy();
	test_rw_no_credits();
	test_channels_signed();
	test_channels_failover();
	test_channels_io_failover();
	test_channels_bulk_on_rdma();
	return t_done();
}
