// SPDX-License-Identifier: MIT
/*
 * SMB-Direct flow control (transport/smbd_flow.c) without a device:
 * negotiation, credit grants against posted receives, the peer that
 * sends without a credit, reposting, fragment reassembly, and two peers
 * on a model wire that counts the receives really posted.
 */
#include <errno.h>
#include <stdbool.h>

#include "transport/smbd_flow.h"
#include "t.h"

#define N_RECV 255
#define SIZE 8192

static const struct smbd_params def_params = {
	.recv_credit_max = N_RECV,
	.send_credit_target = N_RECV,
	.send_slots = 64,
	.max_send_size = SIZE,
	.max_recv_size = SIZE,
	.max_read_write_size = 8u << 20,
};

static bool why_is(const struct smbd_flow *f, const char *why)
{
	return f->why && !strcmp(f->why, why);
}

/* A data transfer message in buf: header, then n bytes of payload. */
static uint32_t mk_data(uint8_t *buf, uint16_t req, uint16_t granted,
			uint32_t n, uint32_t remaining, const uint8_t *payload)
{
	struct smbd_data d = {
		.credits_requested = req,
		.credits_granted = granted,
		.remaining = remaining,
		.data_length = n,
	};
	size_t hdr = smbd_data_encode(buf, &d);

	if (n)
		memcpy(buf + hdr, payload, n);
	return (uint32_t)(hdr + n);
}

/* A flow with every receive posted, as setup_qp leaves it. */
static void posted_flow(struct smbd_flow *f, const struct smbd_params *p)
{
	smbd_flow_init(f, p);
	smbd_flow_reposted(f, f->recv_idle);
}

/* Server after a default client's negotiate request (not yet reposted). */
static void server_up(struct smbd_flow *f, const struct smbd_params *p,
		      struct smbd_neg_rsp *rsp)
{
	struct smbd_flow cl;
	struct smbd_neg_req r;
	uint8_t b[SMBD_NEG_REQ_SIZE];

	smbd_flow_init(&cl, &def_params);
	smbd_flow_neg_request(&cl, &r);
	smbd_neg_req_encode(b, &r);
	posted_flow(f, p);
	smbd_flow_recv_done(f);
	T_EQ(smbd_flow_server_negotiate(f, b, sizeof(b), rsp), 0);
}

/* ---- receive accounting ---- */

static void recv_accounting(void)
{
	struct smbd_flow f;
	int i;

	t_section("receive accounting: init, completions, reposts");
	smbd_flow_init(&f, &def_params);
	T_EQ(f.recv_idle, N_RECV);
	T_EQ(f.recv_posted, 0);
	T_EQ(smbd_flow_recv_ungranted(&f), 0);
	T_EQ(smbd_flow_grant_now(&f), 0);
	smbd_flow_reposted(&f, f.recv_idle);
	T_EQ(f.recv_posted, N_RECV);
	T_EQ(f.recv_idle, 0);
	for (i = 0; i < 40; i++)
		smbd_flow_recv_done(&f);
	T_EQ(f.recv_posted, N_RECV - 40);
	T_EQ(f.recv_idle, 40);
	T_EQ(f.recv_posted + f.recv_idle, N_RECV);
	/* what sits waiting for a repost cannot be granted */
	f.recv_target = N_RECV;
	T_EQ(smbd_flow_recv_ungranted(&f), N_RECV - 40);
	T_EQ(smbd_flow_grant_now(&f), N_RECV - 40);
	smbd_flow_reposted(&f, SMBD_POLL_BATCH);
	T_EQ(f.recv_idle, 40 - SMBD_POLL_BATCH);
	T_EQ(smbd_flow_grant_now(&f), N_RECV - 40 + SMBD_POLL_BATCH);
	smbd_flow_reposted(&f, f.recv_idle);
	T_EQ(f.recv_posted, N_RECV);
	smbd_flow_free(&f);
}

/* ---- negotiation ---- */

static void server_negotiation(void)
{
	struct smbd_neg_rsp rsp;
	struct smbd_flow f;

	t_section("server negotiate: the negotiate receive is not grantable");
	server_up(&f, &def_params, &rsp);
	T_EQ(rsp.status, SMBD_STATUS_SUCCESS);
	T_EQ(rsp.negotiated_version, SMBD_VERSION);
	T_EQ(rsp.credits_requested, N_RECV);
	/* 255 receives, one of them holding the request: 254 granted */
	T_EQ(rsp.credits_granted, N_RECV - 1);
	T_EQ(f.peer_credits, N_RECV - 1);
	T_EQ(f.recv_posted, N_RECV - 1);
	T_ASSERT(f.peer_credits <= f.recv_posted);
	T_EQ(smbd_flow_recv_ungranted(&f), 0);
	T_EQ(smbd_flow_grant_now(&f), 0);
	/* no credits of ours until the client grants some */
	T_EQ(f.send_credits, 0);
	T_ASSERT(!smbd_flow_can_send(&f, 1));
	T_EQ(f.max_send_size, SIZE);
	T_EQ(f.max_recv_size, SIZE);
	T_EQ(f.max_frag_send, N_RECV * SIZE / 2);
	T_EQ(f.max_frag_recv, N_RECV * SIZE / 2);
	T_EQ(f.max_rw, 8u << 20);
	T_EQ(rsp.preferred_send_size, SIZE);
	T_EQ(rsp.max_receive_size, SIZE);
	T_EQ(rsp.max_fragmented_size, f.max_frag_recv);
	T_EQ(rsp.max_read_write_size, 8u << 20);
	T_EQ(f.recv_target, N_RECV);
	/* the request's receive posted again: exactly one more to grant */
	smbd_flow_reposted(&f, 1);
	T_EQ(smbd_flow_recv_ungranted(&f), 1);
	T_EQ(smbd_flow_grant_now(&f), 1);
	smbd_flow_free(&f);
}

struct neg_req_case {
	const char *name;
	uint16_t min_version, max_version, credits;
	uint32_t pref_send, max_recv, max_frag;
	int ret;
	const char *why;
};

static const struct neg_req_case neg_req_cases[] = {
	{ "version 2 only", 0x0200, 0x0200, 255, SIZE, SIZE, 1u << 20,
	  -EPROTONOSUPPORT, "peer does not speak SMB-Direct 1.0" },
	{ "version 0.9 only", 0x0009, 0x0009, 255, SIZE, SIZE, 1u << 20,
	  -EPROTONOSUPPORT, "peer does not speak SMB-Direct 1.0" },
	{ "no credits requested", 0x0100, 0x0100, 0, SIZE, SIZE, 1u << 20,
	  -EPROTO, "negotiate request out of range" },
	{ "max receive size 127", 0x0100, 0x0100, 255, SIZE, 127, 1u << 20,
	  -EPROTO, "negotiate request out of range" },
	{ "max fragmented 131071", 0x0100, 0x0100, 255, SIZE, SIZE, 131071,
	  -EPROTO, "negotiate request out of range" },
	{ "versions 1.0 to 2.0", 0x0100, 0x0200, 255, SIZE, SIZE, 1u << 20,
	  0, NULL },
	{ "minimum sizes", 0x0100, 0x0100, 1, SIZE, 128, 131072, 0, NULL },
};

static void server_negotiation_errors(void)
{
	uint8_t b[SMBD_NEG_REQ_SIZE];
	struct smbd_neg_req r;
	struct smbd_neg_rsp rsp;
	struct smbd_flow f;
	size_t i;

	t_section("server negotiate: refusals and limits");
	posted_flow(&f, &def_params);
	smbd_flow_recv_done(&f);
	memset(b, 0, sizeof(b));
	T_EQ(smbd_flow_server_negotiate(&f, b, SMBD_NEG_REQ_SIZE - 1, &rsp), -EPROTO);
	T_ASSERT(why_is(&f, "short negotiate request"));
	for (i = 0; i < sizeof(neg_req_cases) / sizeof(neg_req_cases[0]); i++) {
		const struct neg_req_case *c = &neg_req_cases[i];

		posted_flow(&f, &def_params);
		smbd_flow_recv_done(&f);
		f.why = NULL;
		r = (struct smbd_neg_req){
			.min_version = c->min_version,
			.max_version = c->max_version,
			.credits_requested = c->credits,
			.preferred_send_size = c->pref_send,
			.max_receive_size = c->max_recv,
			.max_fragmented_size = c->max_frag,
		};
		smbd_neg_req_encode(b, &r);
		t_cur = c->name;
		T_EQ(smbd_flow_server_negotiate(&f, b, sizeof(b), &rsp), c->ret);
		if (c->ret) {
			T_ASSERT(why_is(&f, c->why));
			/* a refusal grants nothing */
			T_EQ(rsp.credits_granted, 0);
			T_EQ(f.peer_credits, 0);
		} else {
			T_EQ(rsp.credits_granted, N_RECV - 1);
			T_EQ(f.recv_target, c->credits);
			T_EQ(f.max_send_size, c->max_recv < SIZE ? c->max_recv : SIZE);
		}
		T_EQ(rsp.status, c->ret == -EPROTONOSUPPORT ?
			SMBD_STATUS_NOT_SUPPORTED : SMBD_STATUS_SUCCESS);
	}
	t_cur = "server negotiate: refusals and limits";

	/* a tiny preferred send size still gives 128-byte receives */
	posted_flow(&f, &def_params);
	smbd_flow_recv_done(&f);
	smbd_flow_neg_request(&f, &r);
	r.preferred_send_size = 64;
	smbd_neg_req_encode(b, &r);
	T_EQ(smbd_flow_server_negotiate(&f, b, sizeof(b), &rsp), 0);
	T_EQ(f.max_recv_size, SMBD_MIN_RECEIVE_SIZE);
	T_EQ(rsp.max_receive_size, SMBD_MIN_RECEIVE_SIZE);

	/*
	 * Small sends from the client: 255 receives of 1024 bytes hold
	 * 130560 bytes, which a client must refuse as a max fragmented size
	 */
	for (i = 0; i < 2; i++) {
		uint8_t rb[SMBD_NEG_RSP_SIZE];
		struct smbd_flow cl;

		posted_flow(&f, &def_params);
		smbd_flow_recv_done(&f);
		smbd_flow_neg_request(&f, &r);
		r.preferred_send_size = i ? 64 : 1024;
		smbd_neg_req_encode(b, &r);
		T_EQ(smbd_flow_server_negotiate(&f, b, sizeof(b), &rsp), 0);
		T_EQ(rsp.max_fragmented_size, SMBD_MIN_FRAGMENTED_SIZE);
		T_EQ(f.max_frag_recv, SMBD_MIN_FRAGMENTED_SIZE);
		posted_flow(&cl, &def_params);
		smbd_flow_recv_done(&cl);
		smbd_neg_rsp_encode(rb, &rsp);
		T_EQ(smbd_flow_client_negotiated(&cl, rb, sizeof(rb)), 0);
		smbd_flow_free(&cl);
	}

	/* and a client with few receives asks for at least the minimum */
	{
		struct smbd_params few = def_params;

		few.recv_credit_max = 16;
		smbd_flow_init(&f, &few);
		smbd_flow_neg_request(&f, &r);
		T_EQ(r.max_fragmented_size, SMBD_MIN_FRAGMENTED_SIZE);
		smbd_flow_init(&f, &def_params);
		smbd_flow_neg_request(&f, &r);
		T_EQ(r.max_fragmented_size, N_RECV * SIZE / 2);
	}

	/* grants in the response stop at 65535 */
	smbd_flow_init(&f, &def_params);
	f.recv_max = 0xFFFF;
	f.recv_posted = 70000;
	f.recv_idle = 0;
	smbd_flow_neg_request(&f, &r);
	smbd_neg_req_encode(b, &r);
	T_EQ(smbd_flow_server_negotiate(&f, b, sizeof(b), &rsp), 0);
	T_EQ(rsp.credits_granted, 0xFFFF);
	T_EQ(f.peer_credits, 0xFFFF);
	smbd_flow_free(&f);
}

struct neg_rsp_case {
	const char *name;
	void (*edit)(struct smbd_neg_rsp *r);
	const char *why;
};

static void rsp_status(struct smbd_neg_rsp *r) { r->status = SMBD_STATUS_NOT_SUPPORTED; }
static void rsp_version(struct smbd_neg_rsp *r) { r->negotiated_version = 0x0200; }
static void rsp_no_grant(struct smbd_neg_rsp *r) { r->credits_granted = 0; }
static void rsp_no_request(struct smbd_neg_rsp *r) { r->credits_requested = 0; }
static void rsp_big_send(struct smbd_neg_rsp *r) { r->preferred_send_size = SIZE + 1; }
static void rsp_small_recv(struct smbd_neg_rsp *r) { r->max_receive_size = 127; }
static void rsp_small_frag(struct smbd_neg_rsp *r) { r->max_fragmented_size = 131071; }

static const struct neg_rsp_case neg_rsp_cases[] = {
	{ "refusal status", rsp_status, "server refused SMB-Direct 1.0" },
	{ "version 2.0", rsp_version, "server refused SMB-Direct 1.0" },
	{ "no credits granted", rsp_no_grant, "server granted no credits" },
	{ "no credits requested", rsp_no_request, "server granted no credits" },
	{ "sends above our receives", rsp_big_send, "negotiate response out of range" },
	{ "max receive size 127", rsp_small_recv, "negotiate response out of range" },
	{ "max fragmented 131071", rsp_small_frag, "negotiate response out of range" },
};

static void client_negotiation(void)
{
	uint8_t b[SMBD_NEG_RSP_SIZE];
	struct smbd_neg_rsp good, r;
	struct smbd_flow srv, f;
	size_t i;

	t_section("client negotiate: the response's credits and sizes");
	server_up(&srv, &def_params, &good);
	posted_flow(&f, &def_params);
	smbd_flow_recv_done(&f);
	smbd_neg_rsp_encode(b, &good);
	T_EQ(smbd_flow_client_negotiated(&f, b, sizeof(b)), 0);
	T_EQ(f.send_credits, N_RECV - 1);
	T_EQ(f.peer_credits, 0);	/* the request granted nothing */
	T_EQ(f.recv_target, N_RECV);
	T_EQ(f.max_send_size, SIZE);
	T_EQ(f.max_recv_size, SIZE);
	T_EQ(f.max_frag_send, srv.max_frag_recv);
	T_EQ(f.max_frag_recv, srv.max_frag_send);
	T_EQ(f.max_rw, 8u << 20);
	/* the response's receive is not grantable either */
	T_EQ(smbd_flow_grant_now(&f), N_RECV - 1);
	smbd_flow_reposted(&f, 1);
	T_EQ(smbd_flow_grant_now(&f), N_RECV);

	t_section("client negotiate: refusals");
	posted_flow(&f, &def_params);
	T_EQ(smbd_flow_client_negotiated(&f, b, SMBD_NEG_RSP_SIZE - 1), -EPROTO);
	T_ASSERT(why_is(&f, "short negotiate response"));
	for (i = 0; i < sizeof(neg_rsp_cases) / sizeof(neg_rsp_cases[0]); i++) {
		posted_flow(&f, &def_params);
		r = good;
		neg_rsp_cases[i].edit(&r);
		smbd_neg_rsp_encode(b, &r);
		t_cur = neg_rsp_cases[i].name;
		T_EQ(smbd_flow_client_negotiated(&f, b, sizeof(b)), -EPROTO);
		T_ASSERT(why_is(&f, neg_rsp_cases[i].why));
		T_EQ(f.send_credits, 0);
	}
	smbd_flow_free(&srv);
	smbd_flow_free(&f);
}

/* ---- sending ---- */

struct grant_case {
	const char *name;
	int send_credits, peer_credits, posted, target;
	int grant;
	bool can_send;
};

static const struct grant_case grant_cases[] = {
	{ "room limits", 5, 0, 10, 255, 10, true },
	{ "target limits", 5, 0, 255, 4, 4, true },
	{ "tops up to the target", 5, 250, 255, 255, 5, true },
	{ "all posted are granted", 5, 255, 255, 255, 0, true },
	{ "target below outstanding", 5, 100, 255, 10, 0, true },
	{ "outstanding above posted", 5, 200, 100, 255, 0, true },
	{ "last credit, nothing wanted: one grant", 1, 200, 255, 100, 1, true },
	{ "last credit, nothing grantable", 1, 255, 255, 255, 0, false },
	{ "last credit, wanted and grantable", 1, 0, 255, 255, 255, true },
	{ "two credits, nothing wanted", 2, 255, 255, 255, 0, true },
	{ "no credits", 0, 0, 255, 255, 255, false },
	{ "capped at 65535", 5, 0, 100000, 100000, 0xFFFF, true },
};

static void grants(void)
{
	struct smbd_flow f;
	size_t i;
	int g;

	t_section("grant_now and can_send");
	for (i = 0; i < sizeof(grant_cases) / sizeof(grant_cases[0]); i++) {
		const struct grant_case *c = &grant_cases[i];

		smbd_flow_init(&f, &def_params);
		f.send_credits = c->send_credits;
		f.peer_credits = c->peer_credits;
		f.recv_posted = c->posted;
		f.recv_target = c->target;
		t_cur = c->name;
		g = smbd_flow_grant_now(&f);
		T_EQ(g, c->grant);
		T_EQ(smbd_flow_can_send(&f, g), c->can_send);
		/* never more than posted receives minus credits outstanding */
		T_ASSERT(g <= smbd_flow_recv_ungranted(&f));
	}
	t_cur = "grant_now and can_send";

	/* the last credit is never spent on a message that grants nothing */
	smbd_flow_init(&f, &def_params);
	f.send_credits = 1;
	T_ASSERT(!smbd_flow_can_send(&f, 0));
	T_ASSERT(smbd_flow_can_send(&f, 1));
	f.send_credits = 2;
	T_ASSERT(smbd_flow_can_send(&f, 0));

	/* on_send: one credit spent, the grant outstanding */
	posted_flow(&f, &def_params);
	f.send_credits = 10;
	f.recv_target = 100;
	g = smbd_flow_grant_now(&f);
	T_EQ(g, 100);
	smbd_flow_on_send(&f, g);
	T_EQ(f.send_credits, 9);
	T_EQ(f.peer_credits, 100);
	T_EQ(smbd_flow_grant_now(&f), 0);
	T_ASSERT(!smbd_flow_refill_due(&f, 0));
	/* refill: only with something to grant and the peer at a quarter */
	f.peer_credits = 25;
	T_ASSERT(smbd_flow_refill_due(&f, smbd_flow_grant_now(&f)));
	f.peer_credits = 26;
	T_ASSERT(!smbd_flow_refill_due(&f, smbd_flow_grant_now(&f)));
	f.peer_credits = 0;
	f.recv_posted = 0;
	f.recv_idle = N_RECV;
	T_ASSERT(!smbd_flow_refill_due(&f, smbd_flow_grant_now(&f)));
	smbd_flow_free(&f);
}

/* Grants over many sends never exceed posted receives minus outstanding. */
static void grants_bounded(void)
{
	struct smbd_flow f;
	uint32_t seed = 1;
	int i, worst = 0;

	t_section("grants stay within posted receives");
	posted_flow(&f, &def_params);
	f.send_credits = 0xFFFF;
	f.recv_target = N_RECV;
	for (i = 0; i < 100000; i++) {
		int g;

		seed = seed * 1103515245 + 12345;
		switch (seed >> 16 & 3) {
		case 0:		/* we send */
			g = smbd_flow_grant_now(&f);
			if (g > smbd_flow_recv_ungranted(&f))
				worst++;
			smbd_flow_on_send(&f, g);
			f.send_credits++;
			break;
		case 1:		/* the peer's message arrives */
			if (f.peer_credits > 0) {
				smbd_flow_recv_done(&f);
				f.peer_credits--;
			}
			break;
		case 2:		/* a repost batch */
			smbd_flow_reposted(&f, f.recv_idle < SMBD_POLL_BATCH ?
					   f.recv_idle : SMBD_POLL_BATCH);
			break;
		default:	/* the peer asks for another target */
			f.recv_target = 1 + (int)(seed >> 8) % N_RECV;
		}
		if (f.peer_credits > f.recv_posted)
			worst++;
	}
	T_EQ(worst, 0);
	T_EQ(f.recv_posted + f.recv_idle, N_RECV);
	smbd_flow_free(&f);
}

/* ---- receiving ---- */

static uint8_t msg_buf[SIZE], payload[4 << 20];

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

/* A connected server flow, with credits either way. */
static void connected(struct smbd_flow *f)
{
	struct smbd_neg_rsp rsp;

	server_up(f, &def_params, &rsp);
	smbd_flow_reposted(f, 1);
	f->send_credits = 10;
}

static void receive_credits(void)
{
	struct smbd_flow f, cl;
	struct smbd_neg_rsp rsp;
	struct smbd_data d;
	uint8_t rb[SMBD_NEG_RSP_SIZE];
	uint8_t *msg;
	size_t n;
	uint32_t len;
	int i;

	t_section("receive: the peer's grants and target");
	connected(&f);
	len = mk_data(msg_buf, 17, 5, 0, 0, NULL);
	smbd_flow_recv_done(&f);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), 0);
	T_ASSERT(!msg);
	T_EQ(f.send_credits, 15);
	T_EQ(f.peer_credits, N_RECV - 2);
	T_EQ(f.recv_target, 17);
	/* a target above our receives is cut to them */
	len = mk_data(msg_buf, 1000, 0, 0, 0, NULL);
	smbd_flow_recv_done(&f);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), 0);
	T_EQ(f.recv_target, N_RECV);

	t_section("receive: send_credits overflow from the peer");
	f.send_credits = 0xFFFF - 10;
	len = mk_data(msg_buf, 1, 10, 0, 0, NULL);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), 0);
	T_EQ(f.send_credits, 0xFFFF);
	len = mk_data(msg_buf, 1, 1, 0, 0, NULL);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "peer granted more than 65535 credits"));
	smbd_flow_free(&f);

	t_section("receive: a peer that sends without a credit");
	/* a client right after negotiation has granted the server nothing */
	server_up(&f, &def_params, &rsp);
	posted_flow(&cl, &def_params);
	smbd_flow_recv_done(&cl);
	smbd_neg_rsp_encode(rb, &rsp);
	T_EQ(smbd_flow_client_negotiated(&cl, rb, sizeof(rb)), 0);
	T_EQ(cl.peer_credits, 0);
	len = mk_data(msg_buf, 1, 0, 0, 0, NULL);
	cl.why = NULL;
	T_EQ(smbd_flow_recv(&cl, msg_buf, len, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&cl, "peer sent a message without a credit"));
	/* k credits granted: the k+1st message is the violation */
	posted_flow(&cl, &def_params);
	cl.send_credits = 10;
	cl.recv_target = 3;
	smbd_flow_on_send(&cl, smbd_flow_grant_now(&cl));
	T_EQ(cl.peer_credits, 3);
	for (i = 0; i < 3; i++) {
		smbd_flow_recv_done(&cl);
		T_EQ(smbd_flow_recv(&cl, msg_buf, len, &d, &msg, &n), 0);
	}
	smbd_flow_recv_done(&cl);
	T_EQ(smbd_flow_recv(&cl, msg_buf, len, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&cl, "peer sent a message without a credit"));
	T_EQ(cl.peer_credits, 0);
	smbd_flow_free(&cl);
	smbd_flow_free(&f);

	t_section("receive: malformed and oversized messages");
	connected(&f);
	len = mk_data(msg_buf, 0, 0, 0, 0, NULL);	/* requests no credits */
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "malformed data transfer message"));
	T_EQ(smbd_flow_recv(&f, msg_buf, SMBD_DATA_MIN - 1, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "malformed data transfer message"));
	fill(payload, 64, 1);
	len = mk_data(msg_buf, 1, 0, 64, 0, payload);
	T_EQ(smbd_flow_recv(&f, msg_buf, len - 1, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "malformed data transfer message"));
	/* a total one above the negotiated max fragmented size */
	len = mk_data(msg_buf, 1, 0, 64, f.max_frag_recv - 63, payload);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "message above the negotiated max fragmented size"));
	/* exactly the max is fine */
	len = mk_data(msg_buf, 1, 0, 64, f.max_frag_recv - 64, payload);
	T_EQ(smbd_flow_recv(&f, msg_buf, len, &d, &msg, &n), 0);
	T_ASSERT(f.reasm_active);
	T_EQ(f.reasm_total, f.max_frag_recv);
	smbd_flow_free(&f);
}

/* Feed one fragment of payload[off, off + n) with remaining after it. */
static int frag(struct smbd_flow *f, size_t off, uint32_t n, uint32_t remaining,
		uint8_t **msg, size_t *len)
{
	static uint8_t b[SMBD_DATA_OFFSET + SIZE];
	struct smbd_data d;
	uint32_t blen;

	blen = mk_data(b, 1, 0, n, remaining, payload + off);
	f->peer_credits++;
	return smbd_flow_recv(f, b, blen, &d, msg, len);
}

static void reassembly(void)
{
	uint8_t one[SMBD_DATA_OFFSET + 100];
	struct smbd_flow f;
	struct smbd_data d;
	uint8_t *msg;
	size_t n, keep;
	uint32_t len, room = SIZE - SMBD_DATA_OFFSET, total, off;

	t_section("reassembly: single fragment");
	connected(&f);
	fill(payload, 100, 3);
	len = mk_data(one, 1, 0, 100, 0, payload);
	T_EQ(smbd_flow_recv(&f, one, len, &d, &msg, &n), 0);
	T_ASSERT(msg == one + SMBD_DATA_OFFSET);	/* in place, no copy */
	T_EQ(n, 100);
	T_ASSERT(msg && !memcmp(msg, payload, 100));
	T_ASSERT(!f.reasm_active && !f.reasm);
	smbd_flow_msg_done(&f);

	t_section("reassembly: many fragments");
	total = 5 * room + 123;
	fill(payload, total, 9);
	for (off = 0; off < total; off += len) {
		len = total - off < room ? total - off : room;
		T_EQ(frag(&f, off, len, total - off - len, &msg, &n), 0);
		if (off + len < total) {
			T_ASSERT(!msg);
			T_ASSERT(f.reasm_active);
			T_EQ(f.reasm_len, off + len);
		}
	}
	T_ASSERT(msg == f.reasm);
	T_EQ(n, total);
	T_ASSERT(msg && !memcmp(msg, payload, total));
	T_ASSERT(!f.reasm_active);
	smbd_flow_msg_done(&f);
	/* a small buffer is kept for the next message */
	T_ASSERT(f.reasm != NULL);
	T_EQ(f.reasm_cap, total);

	t_section("reassembly: credit-only messages between fragments");
	T_EQ(frag(&f, 0, 1000, 500, &msg, &n), 0);
	T_EQ(frag(&f, 0, 0, 0, &msg, &n), 0);
	T_ASSERT(!msg && f.reasm_active && f.reasm_len == 1000);
	T_EQ(frag(&f, 1000, 500, 0, &msg, &n), 0);
	T_EQ(n, 1500);
	T_ASSERT(msg && !memcmp(msg, payload, 1500));

	t_section("reassembly: remaining on an empty message");
	T_EQ(frag(&f, 0, 0, 10, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "empty message with remaining data"));
	smbd_flow_free(&f);
	connected(&f);
	T_EQ(frag(&f, 0, 100, 100, &msg, &n), 0);
	T_EQ(frag(&f, 0, 0, 100, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "empty message with remaining data"));
	smbd_flow_free(&f);

	t_section("reassembly: fragment lengths that do not add up");
	{
		static const struct { uint32_t n, rem; } bad[] = {
			{ 40, 0 },	/* ends short */
			{ 60, 0 },	/* ends long */
			{ 50, 10 },	/* claims more than the total */
			{ 10, 30 },	/* claims less */
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			connected(&f);
			T_EQ(frag(&f, 0, 100, 50, &msg, &n), 0);
			f.why = NULL;
			T_EQ(frag(&f, 100, bad[i].n, bad[i].rem, &msg, &n), -EPROTO);
			T_ASSERT(why_is(&f, "fragment lengths do not add up"));
			T_ASSERT(!msg);
			smbd_flow_free(&f);
		}
	}

	t_section("reassembly: a total above the max fragmented size");
	connected(&f);
	d = (struct smbd_data){ .credits_requested = 1, .data_offset = 24,
				.data_length = 100,
				.remaining = f.max_frag_recv - 99 };
	T_EQ(smbd_flow_reasm(&f, &d, one, &msg, &n), -EPROTO);
	T_ASSERT(why_is(&f, "message above the negotiated max fragmented size"));
	T_ASSERT(!f.reasm_active && !msg);
	d.remaining = 0;
	d.data_length = f.max_frag_recv + 1;
	T_EQ(smbd_flow_reasm(&f, &d, one, &msg, &n), -EPROTO);
	smbd_flow_free(&f);

	t_section("reassembly: fragments after the message completed");
	connected(&f);
	fill(payload, 300, 5);
	T_EQ(frag(&f, 0, 100, 50, &msg, &n), 0);
	T_EQ(frag(&f, 100, 50, 0, &msg, &n), 0);
	T_EQ(n, 150);
	smbd_flow_msg_done(&f);
	/* what follows is a message of its own, not more of the last one */
	T_EQ(frag(&f, 150, 30, 0, &msg, &n), 0);
	T_ASSERT(msg && msg != f.reasm);
	T_EQ(n, 30);
	T_ASSERT(msg && !memcmp(msg, payload + 150, 30));
	T_EQ(frag(&f, 180, 20, 40, &msg, &n), 0);
	T_ASSERT(!msg && f.reasm_active);
	T_EQ(f.reasm_len, 20);
	T_EQ(f.reasm_total, 60);
	T_EQ(frag(&f, 200, 40, 0, &msg, &n), 0);
	T_EQ(n, 60);
	T_ASSERT(msg && !memcmp(msg, payload + 180, 60));
	smbd_flow_free(&f);

	t_section("reassembly: a large buffer is released after use");
	connected(&f);
	f.max_frag_recv = 4u << 20;
	total = 2u << 20;
	fill(payload, total, 11);
	for (off = 0; off < total; off += len) {
		len = total - off < room ? total - off : room;
		T_EQ(frag(&f, off, len, total - off - len, &msg, &n), 0);
		if (off + len < total) {
			/* not while the message is still being put together */
			smbd_flow_msg_done(&f);
			T_ASSERT(f.reasm != NULL);
		}
	}
	T_EQ(n, total);
	T_ASSERT(msg && !memcmp(msg, payload, total));
	T_ASSERT(f.reasm_cap > SMBD_REASM_KEEP);
	smbd_flow_msg_done(&f);
	T_ASSERT(f.reasm == NULL);
	T_EQ(f.reasm_cap, 0);
	/* and one at the limit is kept */
	keep = SMBD_REASM_KEEP;
	T_EQ(frag(&f, 0, 1000, (uint32_t)keep - 1000, &msg, &n), 0);
	T_EQ(f.reasm_cap, keep);
	for (off = 1000; off < keep; off += len) {
		len = keep - off < room ? (uint32_t)(keep - off) : room;
		T_EQ(frag(&f, off, len, (uint32_t)(keep - off - len), &msg, &n), 0);
	}
	T_EQ(n, keep);
	smbd_flow_msg_done(&f);
	T_ASSERT(f.reasm != NULL);
	T_EQ(f.reasm_cap, keep);
	smbd_flow_free(&f);
	T_ASSERT(f.reasm == NULL);
}

/* ---- two peers on a model wire ---- */

/*
 * Each side keeps a CQ of landed messages and counts the receives the
 * model HCA really has posted: a message that lands on none is an RNR
 * (the phantom credit of last round). Sides act in random order, as
 * smbdirect.c does: poll one batch of SMBD_POLL_BATCH completions and
 * repost (a drain is several batches, the peer acting in between), push
 * when the CQ ran dry or send slots came back, and queue requests or
 * answer them inline as they arrive. In phantom mode the server's flow
 * counts the negotiate receive as posted, as last round's code did.
 */
#define SIM_QD 32
#define SIM_SQ 8			/* sends in flight, as send_slots */
#define SIM_MAX_MSG (3 * SIZE + 500)

struct sim_out {
	uint32_t id, len, rsp_len;
	uint32_t off;
};

struct sim_side {
	struct smbd_flow f;
	bool server, connected, phantom;
	int hw_posted;
	int sq_used;
	uint8_t (*cq)[SIZE];
	uint32_t *cq_len;
	int cq_head, cq_n;
	struct sim_out txq[4 * SIM_QD];
	int tx_head, tx_n;
	struct sim_side *peer;
	int overruns, errors, bad_msgs, delivered;
	int stalls;			/* pushes stopped by credits */
	const char *why;
};

static uint32_t sim_rng = 1;

static uint32_t sim_rand(void)
{
	sim_rng ^= sim_rng << 13;
	sim_rng ^= sim_rng >> 17;
	sim_rng ^= sim_rng << 5;
	return sim_rng;
}

static uint8_t sim_byte(uint32_t id, uint32_t i)
{
	return (uint8_t)(id * 131 + i * 7 + (i >> 8));
}

/* Bytes [off, off + n) of message id: id, response length, pattern. */
static void sim_bytes(const struct sim_out *m, uint32_t off, uint8_t *p, uint32_t n)
{
	uint8_t head[8];
	uint32_t i;

	put_le32(head, m->id);
	put_le32(head + 4, m->rsp_len);
	for (i = 0; i < n; i++)
		p[i] = off + i < 8 ? head[off + i] : sim_byte(m->id, off + i);
}

/* Put one message on the wire into the peer's next posted receive. */
static uint8_t *sim_land(struct sim_side *a, uint32_t len)
{
	struct sim_side *b = a->peer;
	int slot;

	if (b->hw_posted <= 0) {
		a->overruns++;
		return NULL;
	}

	b->hw_posted--;
	slot = (b->cq_head + b->cq_n++) % (b->f.recv_max + 1);
	b->cq_len[slot] = len;
	return b->cq[slot];
}

static void sim_send_data(struct sim_side *a, struct sim_out *m, uint32_t n,
			  uint32_t remaining)
{
	int g = smbd_flow_grant_now(&a->f);
	struct smbd_data d = {
		.credits_requested = a->f.credit_target,
		.credits_granted = (uint16_t)g,
		.remaining = remaining,
		.data_length = n,
	};
	uint8_t hdr[SMBD_DATA_OFFSET], *p;
	size_t hl = smbd_data_encode(hdr, &d);

	p = sim_land(a, (uint32_t)hl + n);
	if (p) {
		memcpy(p, hdr, hl);
		if (n)
			sim_bytes(m, m->off, p + hl, n);
	}
	smbd_flow_on_send(&a->f, g);
	a->sq_used++;
}

/* can_send(): a free send slot and the flow's word */
static bool sim_can_send(const struct sim_side *a, int grant)
{
	return a->sq_used < SIM_SQ && smbd_flow_can_send(&a->f, grant);
}

/* push(): fragments as credits allow, then an empty refill if due. */
static void sim_push(struct sim_side *a)
{
	uint32_t room = a->f.max_send_size - SMBD_DATA_OFFSET;
	struct sim_out e = { 0 };
	int g;

	if (!a->connected)
		return;
	while (a->tx_n) {
		struct sim_out *m = &a->txq[a->tx_head];
		uint32_t left = m->len - m->off;
		uint32_t n = left < room ? left : room;

		if (!sim_can_send(a, smbd_flow_grant_now(&a->f))) {
			a->stalls += a->sq_used < SIM_SQ;
			return;
		}
		sim_send_data(a, m, n, left - n);
		m->off += n;
		if (m->off < m->len)
			continue;
		a->tx_head = (a->tx_head + 1) % (4 * SIM_QD);
		a->tx_n--;
	}
	for (;;) {
		g = smbd_flow_grant_now(&a->f);
		if (!smbd_flow_refill_due(&a->f, g) || !sim_can_send(a, g))
			break;
		sim_send_data(a, &e, 0, 0);
	}
}

static void sim_queue(struct sim_side *a, uint32_t id, uint32_t len, uint32_t rsp_len)
{
	struct sim_out *m = &a->txq[(a->tx_head + a->tx_n++) % (4 * SIM_QD)];

	*m = (struct sim_out){ .id = id, .len = len, .rsp_len = rsp_len };
	sim_push(a);		/* smbd_send pushes at once */
}

static void sim_deliver(struct sim_side *a, const uint8_t *msg, size_t len)
{
	uint32_t id, rsp_len, i;

	if (len < 8) {
		a->bad_msgs++;
		return;
	}
	id = get_le32(msg);
	rsp_len = get_le32(msg + 4);
	for (i = 8; i < len; i++)
		if (msg[i] != sim_byte(id, i)) {
			a->bad_msgs++;
			return;
		}
	a->delivered++;
	/* the server answers inline, in the middle of its drain */
	if (a->server)
		sim_queue(a, id | 0x80000000u, rsp_len, 0);
}

static void sim_error(struct sim_side *a, const char *why)
{
	a->errors++;
	a->why = why;
}

static void sim_negotiate(struct sim_side *a, uint8_t *buf, uint32_t len)
{
	struct smbd_neg_rsp rsp;
	uint8_t *p;

	if (!a->server) {
		if (smbd_flow_client_negotiated(&a->f, buf, len))
			sim_error(a, a->f.why);
		a->connected = true;
		return;
	}
	if (a->phantom) {
		/* last round's accounting: the negotiate receive still counted */
		a->f.recv_posted++;
		a->f.recv_idle--;
	}
	if (smbd_flow_server_negotiate(&a->f, buf, len, &rsp)) {
		sim_error(a, a->f.why);
		return;
	}
	p = sim_land(a, SMBD_NEG_RSP_SIZE);
	if (p)
		smbd_neg_rsp_encode(p, &rsp);
	a->connected = true;
}

/* One ibv_poll_cq batch; returns whether the CQ ran dry. */
static bool sim_poll(struct sim_side *a)
{
	int k = a->cq_n < SMBD_POLL_BATCH ? a->cq_n : SMBD_POLL_BATCH;
	bool dry = k < SMBD_POLL_BATCH;
	struct smbd_data d;
	uint8_t *msg, *buf;
	uint32_t len;
	size_t n;
	int i;

	for (i = 0; i < k; i++) {
		buf = a->cq[a->cq_head];
		len = a->cq_len[a->cq_head];

		a->cq_head = (a->cq_head + 1) % (a->f.recv_max + 1);
		a->cq_n--;
		smbd_flow_recv_done(&a->f);
		if (!a->connected) {
			sim_negotiate(a, buf, len);
			continue;
		}
		if (smbd_flow_recv(&a->f, buf, len, &d, &msg, &n)) {
			sim_error(a, a->f.why);
			continue;
		}
		if (msg)
			sim_deliver(a, msg, n);
		smbd_flow_msg_done(&a->f);
	}
	a->hw_posted += a->f.recv_idle;
	smbd_flow_reposted(&a->f, a->f.recv_idle);
	if (dry)
		sim_push(a);
	return dry;
}

static bool sim_consistent(const struct sim_side *a)
{
	const struct smbd_flow *f = &a->f;

	if (f->recv_posted + f->recv_idle != f->recv_max)
		return false;
	/* what the flow believes posted is what the HCA has, CQ aside */
	if (!a->phantom && f->recv_posted - a->cq_n != a->hw_posted)
		return false;
	/* every credit outstanding has a receive behind it */
	return a->phantom || f->peer_credits <= f->recv_posted;
}

struct sim_result {
	int overruns, errors, bad, inconsistent;
	int requests, responses, steps, stalls;
	bool idle;
	const char *why;
};

static void sim_init_side(struct sim_side *a, const struct smbd_params *p,
			  bool server, struct sim_side *peer)
{
	memset(a, 0, sizeof(*a));
	posted_flow(&a->f, p);
	a->hw_posted = a->f.recv_posted;
	a->server = server;
	a->peer = peer;
	a->cq = calloc(a->f.recv_max + 1u, sizeof(*a->cq));
	a->cq_len = calloc(a->f.recv_max + 1u, sizeof(*a->cq_len));
}

static void sim_run(const struct smbd_params *p, uint32_t seed, int nreq,
		    bool phantom, bool busy_server, struct sim_result *res)
{
	struct sim_side cl, sv;
	struct smbd_neg_req nr;
	int made = 0, step, max_steps = 400 * nreq + 10000;
	uint8_t *b;

	memset(res, 0, sizeof(*res));
	sim_rng = seed;
	sim_init_side(&cl, p, false, &sv);
	sim_init_side(&sv, p, true, &cl);
	sv.phantom = phantom;
	if (!cl.cq || !sv.cq || !cl.cq_len || !sv.cq_len) {
		res->errors = 1;
		res->why = "out of memory";
		goto out_free;
	}
	smbd_flow_neg_request(&cl.f, &nr);
	b = sim_land(&cl, SMBD_NEG_REQ_SIZE);
	if (b)
		smbd_neg_req_encode(b, &nr);
	for (step = 0; step < max_steps; step++) {
		uint32_t r = sim_rand();

		switch (r % 10) {
		case 8:
			/* send completions free the slots; poll_cq pushes */
			cl.sq_used = 0;
			sim_push(&cl);
			break;
		case 9:
			sv.sq_used = 0;
			sim_push(&sv);
			break;
		case 0:
		case 1:
			if (cl.cq_n)
				sim_poll(&cl);
			break;
		case 2:
		case 3:
			/* a busy server leaves its CQ longer */
			if (sv.cq_n && (!busy_server || r % 64 < 8))
				sim_poll(&sv);
			break;
		case 4:
		case 5:
			if (cl.connected && made < nreq &&
			    made - cl.delivered < SIM_QD) {
				uint32_t len = 8 + (r >> 8) % (SIM_MAX_MSG - 8);
				uint32_t rsp = 8 + (r >> 4) % SIM_MAX_MSG;

				sim_queue(&cl, (uint32_t)made++, len, rsp);
			}
			break;
		default:
			/* a drain: batch after batch until the CQ is dry */
			if (r % 16 == 7)
				while (sv.cq_n && !sim_poll(&sv))
					;
			break;
		}
		if (!sim_consistent(&cl) || !sim_consistent(&sv))
			res->inconsistent++;
		if (cl.overruns || sv.overruns || cl.errors || sv.errors)
			break;
		if (made == nreq && cl.delivered == nreq && !cl.cq_n && !sv.cq_n &&
		    !cl.tx_n && !sv.tx_n) {
			res->idle = true;
			break;
		}
	}
	res->steps = step;
	res->stalls = cl.stalls + sv.stalls;
	res->overruns = cl.overruns + sv.overruns;
	res->errors = cl.errors + sv.errors;
	res->why = cl.why ? cl.why : sv.why;
	res->bad = cl.bad_msgs + sv.bad_msgs;
	res->requests = sv.delivered;
	res->responses = cl.delivered;
out_free:
	free(cl.cq);
	free(cl.cq_len);
	free(sv.cq);
	free(sv.cq_len);
	smbd_flow_free(&cl.f);
	smbd_flow_free(&sv.f);
}

static void simulation(void)
{
	struct smbd_params small = def_params;
	struct sim_result res;
	uint32_t seed;
	int phantom_rnr = 0, stalls = 0;

	t_section("model wire: requests and responses, no RNR, no deadlock");
	small.recv_credit_max = 32;
	small.send_credit_target = 32;
	for (seed = 1; seed <= 20; seed++) {
		const struct smbd_params *p = seed % 2 ? &def_params : &small;

		sim_run(p, seed, 1000, false, seed % 4 >= 2, &res);
		T_EQ(res.overruns, 0);
		T_EQ(res.errors, 0);
		if (res.why)
			printf("  seed %u: %s\n", seed, res.why);
		T_EQ(res.bad, 0);
		T_EQ(res.inconsistent, 0);
		T_ASSERT(res.idle);
		T_EQ(res.requests, 1000);
		T_EQ(res.responses, 1000);
		stalls += res.stalls;
	}
	/* the runs did press on credits */
	printf("  %d pushes stopped by credits\n", stalls);
	T_ASSERT(stalls > 0);

	/* the model does see last round's phantom credit */
	t_section("model wire: the phantom credit of last round is caught");
	for (seed = 1; seed <= 20; seed++) {
		sim_run(&small, seed, 1000, true, seed % 2, &res);
		phantom_rnr += res.overruns > 0;
	}
	printf("  an RNR in %d of 20 runs\n", phantom_rnr);
	T_ASSERT(phantom_rnr > 0);
}

int main(void)
{
	recv_accounting();
	server_negotiation();
	server_negotiation_errors();
	client_negotiation();
	grants();
	grants_bounded();
	receive_credits();
	reassembly();
	simulation();
	return t_done();
}
