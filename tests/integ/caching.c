// SPDX-License-Identifier: MIT
/*
 * Bad input to rdaxd's caching and durable-handle state, on the wire:
 *
 *   acks       break acknowledgements for breaks never sent, for leases
 *              never granted, for another client's lease
 *   reconnect  durable v2 reconnects with a wrong CreateGuid, a forged
 *              lease key, by another user; then the right one
 *   cifs       a durable v1 reconnect as Linux cifs.ko sends it: lease,
 *              DHnC and a QFid; one with an MxAc as well is refused
 *   purge      a disconnected durable open whose share mode refuses a new
 *              open is closed for it: the open succeeds, the reconnect
 *              finds nothing
 *   unlink     a file whose lease was broken and acknowledged, closed and
 *              then deleted on close: its name is gone when the CLOSE is
 *              answered, so a FILE_CREATE of it at once succeeds (the
 *              break's bookkeeping outlived the handles: cifs.ko's
 *              rm + cp in xfstests generic/087 got "File exists")
 *   flood      more opens that each wait for a break than a connection
 *              may have waiting: the rest get STATUS_INSUFFICIENT_RESOURCES,
 *              the waiting ones finish when the holder goes
 *
 * usage: caching HOST PORT SHARE CASE (users in CACHE_USER/CACHE_PW and
 * CACHE_USER2/CACHE_PW2). Prints "ok: ..." or "FAIL: ..." per check;
 * exits 1 on any failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/lease.h"
#include "rawsmb.h"

#define FLOOD 600

static const char *host, *share;
static unsigned int port;
static struct raw_cred user1, user2;
static int nfail;

#define EXPECT(cond, ...) do { \
	if (cond) { printf("ok: "); } else { printf("FAIL: "); nfail++; } \
	printf(__VA_ARGS__); printf("\n"); } while (0)

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "caching: %s is not set\n", name);
		exit(2);
	}
	return v;
}

/* One CREATE with contexts: what the caller needs of the response. */
struct cr_out {
	uint32_t status;
	uint8_t oplock;
	struct smb2_fid fid;
	bool lease;
	struct smb2_lease_ctx lc;
	bool durable;
	bool persistent;
	bool qfid;
};

/* The ShareAccess and CreateOptions of the CREATEs sent */
static uint32_t create_share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
static uint32_t create_options;

/* Send a CREATE (not waiting for it): its MessageId. */
static uint64_t create_send(struct raw *r, const char *name, uint32_t access, uint32_t disp,
			    uint8_t oplock, const uint8_t *ctx, size_t ctxlen)
{
	struct smb2_create_req c = { 0 };
	uint8_t n16[512], b[2048];
	struct wcur w;
	uint64_t mid = r->mid;
	int n = utf8_to_utf16le(name, n16, sizeof(n16));

	c.oplock = oplock;
	c.impersonation = 2;
	c.desired_access = access;
	c.file_attributes = FILE_ATTRIBUTE_NORMAL;
	c.share_access = create_share;
	c.options = create_options;
	c.disposition = disp;
	c.name.p = n16;
	c.name.len = n < 0 ? 0 : (uint32_t)n;
	c.contexts.p = ctx;
	c.contexts.len = (uint32_t)ctxlen;
	raw_begin(&w, b, sizeof(b));
	smb2_create_req_encode(&w, &c);
	raw_seal(r, SMB2_CREATE, b, w.off);
	raw_send(r, b, w.off);
	return mid;
}

/*
 * The next response that is not an unsolicited notification; interim
 * ones count in *interim if given, and are skipped otherwise.
 */
static int recv_rsp(struct raw *r, bool stop_at_interim)
{
	long n;

	for (;;) {
		n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 32u << 20, RAW_TIMEOUT_MS);
		if (n < 0)
			return (int)n;
		if (n < SMB2_HDR_SIZE || get_le32(r->rx) != SMB2_PROTO_ID)
			return -EPROTO;
		r->rx_len = (size_t)n;
		r->status = get_le32(r->rx + 8);
		if (get_le64(r->rx + 24) == UINT64_MAX)
			continue;	/* a break notification */
		if (r->status == STATUS_PENDING && !stop_at_interim)
			continue;
		return 0;
	}
}

static void create_parse(struct raw *r, struct cr_out *o)
{
	struct smb2_create_ctx ctx[SMB2_MAX_CREATE_CTX];
	struct smb2_create_rsp rsp;
	int i, n;

	memset(o, 0, sizeof(*o));
	o->status = r->status;
	if (r->status || smb2_create_rsp_decode(r->rx, r->rx_len, &rsp))
		return;
	o->oplock = rsp.oplock;
	o->fid = rsp.fid;
	n = smb2_create_ctx_parse(rsp.contexts.p, rsp.contexts.len, ctx, SMB2_MAX_CREATE_CTX);
	for (i = 0; i < n; i++) {
		if (ctx[i].name.len != 4)
			continue;
		if (!memcmp(ctx[i].name.p, SMB2_CTX_LEASE, 4))
			o->lease = !smb2_lease_ctx_decode(ctx[i].data.p, ctx[i].data.len, &o->lc);
		else if (!memcmp(ctx[i].name.p, SMB2_CTX_DH2Q, 4)) {
			uint32_t t, fl;

			o->durable = true;
			o->persistent = !smb2_dh2q_rsp_decode(ctx[i].data.p, ctx[i].data.len,
							      &t, &fl) &&
					fl & SMB2_DHANDLE_FLAG_PERSISTENT;
		} else if (!memcmp(ctx[i].name.p, SMB2_CTX_DHNQ, 4))
			o->durable = true;
		else if (!memcmp(ctx[i].name.p, SMB2_CTX_QFID, 4))
			o->qfid = ctx[i].data.len == 32;
	}
}

static void create(struct raw *r, const char *name, uint32_t access, uint32_t disp,
		   uint8_t oplock, const uint8_t *ctx, size_t ctxlen, struct cr_out *o)
{
	create_send(r, name, access, disp, oplock, ctx, ctxlen);
	if (recv_rsp(r, false)) {
		memset(o, 0, sizeof(*o));
		o->status = STATUS_CONNECTION_DISCONNECTED;
		return;
	}
	create_parse(r, o);
}

/*
 * A lease context (v2), a DH2Q or DH2C after it when asked (with
 * durable flags dflags), and an empty context tagged extra (a query
 * such as QFid) last when given.
 */
static size_t contexts_ex(uint8_t *buf, size_t cap, const uint8_t key[16], uint32_t state,
			  const uint8_t *guid, uint32_t timeout, const struct smb2_fid *reconnect,
			  uint32_t dflags, const char *extra)
{
	struct smb2_lease_ctx lc = { .version = 2, .state = state };
	struct smb2_durable_v2 d = { .timeout = timeout, .flags = dflags };
	uint8_t data[64];
	size_t prev = SIZE_MAX, n;
	struct wcur w;

	wcur_init(&w, buf, cap);
	if (key) {
		memcpy(lc.key, key, 16);
		n = smb2_lease_ctx_encode(data, &lc);
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_LEASE, data, (uint32_t)n);
	}
	if (guid) {
		memcpy(d.create_guid, guid, 16);
		if (reconnect) {
			d.fid = *reconnect;
			n = smb2_dh2c_encode(data, &d);
			smb2_create_ctx_add(&w, &prev, SMB2_CTX_DH2C, data, (uint32_t)n);
		} else {
			n = smb2_dh2q_encode(data, &d);
			smb2_create_ctx_add(&w, &prev, SMB2_CTX_DH2Q, data, (uint32_t)n);
		}
	}
	if (extra)
		smb2_create_ctx_add(&w, &prev, extra, NULL, 0);
	return w.off;
}

static size_t contexts(uint8_t *buf, size_t cap, const uint8_t key[16], uint32_t state,
		       const uint8_t *guid, uint32_t timeout, const struct smb2_fid *reconnect)
{
	return contexts_ex(buf, cap, key, state, guid, timeout, reconnect, 0, NULL);
}

/*
 * What Linux cifs.ko (6.1) puts in every CREATE on a share with leases:
 * a v2 lease, a DHnQ (a DHnC with reconnect's FileId), a QFid last;
 * extra: an MxAc after them.
 */
static size_t contexts_cifs(uint8_t *buf, size_t cap, const uint8_t key[16],
			    const struct smb2_fid *reconnect, bool extra)
{
	struct smb2_lease_ctx lc = { .version = 2, .state = SMB2_LEASE_RWH };
	uint8_t data[64];
	size_t prev = SIZE_MAX, n;
	struct wcur w;

	wcur_init(&w, buf, cap);
	memcpy(lc.key, key, 16);
	n = smb2_lease_ctx_encode(data, &lc);
	smb2_create_ctx_add(&w, &prev, SMB2_CTX_LEASE, data, (uint32_t)n);
	if (reconnect) {
		n = smb2_dhnc_encode(data, reconnect);
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_DHNC, data, (uint32_t)n);
	} else {
		n = smb2_dhnq_encode(data);
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_DHNQ, data, (uint32_t)n);
	}
	smb2_create_ctx_add(&w, &prev, SMB2_CTX_QFID, data, 0);
	if (extra)
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_MXAC, data, 0);
	return w.off;
}

static uint32_t oplock_ack(struct raw *r, const struct smb2_fid *fid, uint8_t level)
{
	struct smb2_oplock_break ob = { .level = level, .fid = *fid };
	uint8_t b[256];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_oplock_break_encode(&w, &ob);
	raw_seal(r, SMB2_OPLOCK_BREAK, b, w.off);
	raw_send(r, b, w.off);
	return recv_rsp(r, false) ? STATUS_CONNECTION_DISCONNECTED : r->status;
}

static uint32_t lease_ack(struct raw *r, const uint8_t key[16], uint32_t state)
{
	struct smb2_lease_ack a = { .state = state };
	uint8_t b[256];
	struct wcur w;

	memcpy(a.key, key, 16);
	raw_begin(&w, b, sizeof(b));
	smb2_lease_ack_encode(&w, &a);
	raw_seal(r, SMB2_OPLOCK_BREAK, b, w.off);
	raw_send(r, b, w.off);
	return recv_rsp(r, false) ? STATUS_CONNECTION_DISCONNECTED : r->status;
}

/* A session of the client with ClientGuid guid, on a tree of the share. */
static int session(struct raw *r, const struct raw_cred *c, const uint8_t *guid)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (raw_connect(r, host, port)) {
		printf("FAIL: connect\n");
		nfail++;
		return -1;
	}
	memcpy(r->guid, guid, 16);
	r->guid_set = true;
	if (raw_negotiate(r, SMB2_DIALECT_311) || raw_logon(r, c) || raw_tcon(r, share)) {
		printf("FAIL: session set-up as %s\n", c->user);
		nfail++;
		return -1;
	}
	return 0;
}

static void fill(uint8_t *p, uint8_t v)
{
	memset(p, v, 16);
}

/* ---- the cases ---- */

static void case_acks(void)
{
	struct raw a, b;
	struct cr_out o, ob;
	uint8_t key[16], ctx[256], ga[16], gb[16];
	size_t n;

	fill(ga, 0xA1);
	fill(gb, 0xB2);
	if (session(&a, &user1, ga) || session(&b, &user1, gb))
		return;
	create(&a, "acks-none.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_NONE, NULL, 0, &o);
	EXPECT(!o.status, "an open with no oplock: %s", raw_sname(o.status));
	EXPECT(oplock_ack(&a, &o.fid, SMB2_OPLOCK_LEVEL_II) == STATUS_INVALID_OPLOCK_PROTOCOL,
	       "an oplock break acknowledged that was never sent: %s", raw_sname(a.status));
	fill(key, 0x5A);
	EXPECT(lease_ack(&a, key, 0) == STATUS_OBJECT_NAME_NOT_FOUND,
	       "a lease break acknowledged for a lease never granted: %s", raw_sname(a.status));
	/* client B's lease; A names its key */
	fill(key, 0x6B);
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, NULL, 0, NULL);
	create(&b, "acks-lease.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &ob);
	EXPECT(!ob.status && ob.lease && ob.lc.state == SMB2_LEASE_RWH,
	       "client B holds an RWH lease: %s", raw_sname(ob.status));
	EXPECT(lease_ack(&a, key, 0) == STATUS_OBJECT_NAME_NOT_FOUND,
	       "client A acknowledges client B's lease: %s", raw_sname(a.status));
	EXPECT(oplock_ack(&a, &ob.fid, SMB2_OPLOCK_LEVEL_NONE) == STATUS_FILE_CLOSED,
	       "client A acknowledges an oplock break on B's FileId: %s", raw_sname(a.status));
	EXPECT(lease_ack(&b, key, SMB2_LEASE_READ) == STATUS_UNSUCCESSFUL,
	       "B acknowledges a break of its own lease that was never sent: %s",
	       raw_sname(b.status));
	raw_close_fid(&b, &ob.fid);
	raw_close_fid(&a, &o.fid);
	raw_close(&a);
	raw_close(&b);
}

static void case_reconnect(void)
{
	struct raw a, a2, bu;
	struct cr_out o, r;
	uint8_t key[16], bad[16], cguid[16], other[16], ga[16], ctx[256];
	char buf[64];
	uint32_t got;
	size_t n;

	fill(ga, 0xC3);
	fill(key, 0x7C);
	fill(cguid, 0xD4);
	if (session(&a, &user1, ga))
		return;
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 5000, NULL);
	create(&a, "durable.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
	EXPECT(!o.status && o.durable && o.lease,
	       "a durable v2 open under an RWH lease: %s, durable %d", raw_sname(o.status),
	       o.durable);
	EXPECT(!raw_write(&a, &o.fid, 0, "kept\n", 5), "write to it");
	raw_close(&a);		/* the connection drops: the open stays */
	usleep(300000);

	if (session(&a2, &user1, ga))
		return;
	fill(other, 0xEE);
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, other, 0, &o.fid);
	create(&a2, "durable.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
	       "a reconnect with a wrong CreateGuid: %s", raw_sname(r.status));
	fill(bad, 0x11);
	n = contexts(ctx, sizeof(ctx), bad, SMB2_LEASE_RWH, cguid, 0, &o.fid);
	create(&a2, "durable.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
	       "a reconnect naming a forged lease key: %s", raw_sname(r.status));
	if (!session(&bu, &user2, ga)) {
		n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 0, &o.fid);
		create(&bu, "durable.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
		EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
		       "another user reconnects the handle: %s", raw_sname(r.status));
		raw_close(&bu);
	}
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 0, &o.fid);
	create(&a2, "durable.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(!r.status && r.lease && r.lc.state == SMB2_LEASE_RWH,
	       "the owner reconnects it, lease and all: %s", raw_sname(r.status));
	if (!r.status) {
		EXPECT(!raw_read(&a2, &r.fid, 0, buf, sizeof(buf), &got) && got == 5 &&
		       !memcmp(buf, "kept\n", 5), "the data written before the drop is there");
		EXPECT(!raw_close_fid(&a2, &r.fid), "close the reconnected handle");
	}
	raw_close(&a2);
}

static void case_cifs(void)
{
	struct raw a, a2;
	struct cr_out o, r;
	uint8_t key[16], ga[16], ctx[256];
	char buf[64];
	uint32_t got;
	size_t n;

	fill(ga, 0xC7);
	fill(key, 0x8D);
	if (session(&a, &user1, ga))
		return;
	n = contexts_cifs(ctx, sizeof(ctx), key, NULL, false);
	create(&a, "durable-v1.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
	EXPECT(!o.status && o.lease && o.lc.state == SMB2_LEASE_RWH && o.durable,
	       "a durable v1 open under an RWH lease, with a QFid: %s, durable %d",
	       raw_sname(o.status), o.durable);
	EXPECT(!raw_write(&a, &o.fid, 0, "v1\n", 3), "write to it");
	raw_close(&a);
	usleep(300000);

	if (session(&a2, &user1, ga))
		return;
	n = contexts_cifs(ctx, sizeof(ctx), key, &o.fid, true);
	create(&a2, "durable-v1.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OPEN,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
	       "a reconnect with an MxAc too is refused, as in Samba: %s", raw_sname(r.status));
	n = contexts_cifs(ctx, sizeof(ctx), key, &o.fid, false);
	create(&a2, "durable-v1.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OPEN,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(!r.status && r.lease && r.lc.state == SMB2_LEASE_RWH && r.qfid,
	       "lease, DHnC and QFid (cifs.ko's reconnect) get the open back: %s, QFid %d",
	       raw_sname(r.status), r.qfid);
	if (!r.status) {
		EXPECT(!raw_read(&a2, &r.fid, 0, buf, sizeof(buf), &got) && got == 3 &&
		       !memcmp(buf, "v1\n", 3), "the data written before the drop is there");
		EXPECT(!raw_close_fid(&a2, &r.fid), "close the reconnected handle");
	}
	raw_close(&a2);
}

static void case_purge(void)
{
	struct raw a, a2, b;
	struct cr_out o, ob, r;
	uint8_t key[16], cguid[16], ga[16], gb[16], ctx[256];
	size_t n;

	fill(ga, 0xC9);
	fill(gb, 0xBA);
	fill(key, 0x9E);
	fill(cguid, 0xD6);
	if (session(&a, &user1, ga))
		return;
	/* smbtorture's durable-open.open2-lease: RH, sharing nothing */
	create_share = 0;
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_READ | SMB2_LEASE_HANDLE, cguid, 0, NULL);
	create(&a, "durable-purge.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
	       FILE_OVERWRITE_IF, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
	create_share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	EXPECT(!o.status && o.durable && o.lease && o.lc.state == (SMB2_LEASE_READ | SMB2_LEASE_HANDLE),
	       "a durable open under an RH lease that shares nothing: %s", raw_sname(o.status));
	raw_close(&a);
	usleep(300000);		/* rdaxd has seen the connection go */

	if (session(&b, &user1, gb))
		return;
	create(&b, "durable-purge.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OPEN,
	       SMB2_OPLOCK_LEVEL_NONE, NULL, 0, &ob);
	EXPECT(!ob.status, "another client opens the file: %s", raw_sname(ob.status));
	if (!session(&a2, &user1, ga)) {
		n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_READ | SMB2_LEASE_HANDLE, cguid, 0,
			     &o.fid);
		create(&a2, "durable-purge.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
		EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
		       "the durable open was closed for it: its reconnect gets %s",
		       raw_sname(r.status));
		if (!r.status)
			raw_close_fid(&a2, &r.fid);
		raw_close(&a2);
	}
	if (!ob.status)
		raw_close_fid(&b, &ob.fid);
	raw_close(&b);
}

static void case_flood(void)
{
	struct raw a, b;
	struct cr_out o;
	uint8_t ga[16], gb[16];
	char name[64];
	int i, pending = 0, refused = 0, done = 0, other = 0;

	fill(ga, 0xE5);
	fill(gb, 0xF6);
	if (session(&a, &user1, ga) || session(&b, &user1, gb))
		return;
	for (i = 0; i < FLOOD; i++) {
		snprintf(name, sizeof(name), "flood-%d.txt", i);
		create(&a, name, FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
		       SMB2_OPLOCK_LEVEL_BATCH, NULL, 0, &o);
		if (o.status || o.oplock != SMB2_OPLOCK_LEVEL_BATCH)
			break;
	}
	EXPECT(i == FLOOD, "client A holds %d files with batch oplocks (%d)", FLOOD, i);
	/* credits for the flood */
	b.credit_req = 2048;
	raw_echo(&b);
	b.credit_req = 0;
	/* A never acknowledges: each of B's opens waits on a break */
	for (i = 0; i < FLOOD; i++) {
		snprintf(name, sizeof(name), "flood-%d.txt", i);
		create_send(&b, name, FILE_GENERIC_READ, FILE_OPEN, SMB2_OPLOCK_LEVEL_NONE,
			    NULL, 0);
	}
	for (i = 0; i < FLOOD; i++) {
		if (recv_rsp(&b, true))
			break;
		if (b.status == STATUS_PENDING)
			pending++;
		else if (b.status == STATUS_INSUFFICIENT_RESOURCES)
			refused++;
		else
			other++;
	}
	EXPECT(pending == 512 && refused == FLOOD - 512 && !other,
	       "%d opens wait (interim responses), %d are refused with STATUS_INSUFFICIENT_RESOURCES, %d else",
	       pending, refused, other);
	EXPECT(!raw_echo(&a), "client A is still served while B's opens wait");
	raw_close(&a);		/* its opens close: everything waiting goes on */
	for (i = 0; i < pending; i++) {
		if (recv_rsp(&b, false))
			break;
		if (!b.status)
			done++;
	}
	EXPECT(done == pending, "when A goes, the %d waiting opens succeed (%d)", pending, done);
	EXPECT(!raw_echo(&b), "client B is still served");
	raw_close(&b);
}

/* The next break notification on r (MessageId all ones), within 5 s. */
static int recv_break(struct raw *r)
{
	long n;

	for (;;) {
		n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 1u << 20, 5000);
		if (n < 0)
			return (int)n;
		if (n >= SMB2_HDR_SIZE && get_le64(r->rx + 24) == UINT64_MAX)
			return 0;
	}
}

#define UNLINK_ROUNDS 8

static void case_unlink(void)
{
	struct raw a, b;
	struct cr_out o, ob, d;
	uint8_t key[16], ga[16], gb[16], ctx[256];
	int i, broken = 0, acked = 0, gone = 0;
	uint32_t last = 0;
	char name[64];
	size_t n;

	fill(ga, 0xA7);
	fill(gb, 0xB7);
	if (session(&a, &user1, ga) || session(&b, &user1, gb))
		return;
	for (i = 0; i < UNLINK_ROUNDS; i++) {
		snprintf(name, sizeof(name), "unlink-%d.txt", i);
		fill(key, (uint8_t)(0x40 + i));
		n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, NULL, 0, NULL);
		create(&a, name, FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
		       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
		if (o.status || !o.lease || o.lc.state != SMB2_LEASE_RWH) {
			EXPECT(0, "round %d: an RWH lease on %s (%s)", i, name, raw_sname(o.status));
			break;
		}
		/* B's write open breaks A's lease to RH: B waits for the ack */
		create_send(&b, name, FILE_GENERIC_WRITE, FILE_OPEN, SMB2_OPLOCK_LEVEL_NONE, NULL, 0);
		if (!recv_break(&a)) {
			broken++;
			if (!lease_ack(&a, key, SMB2_LEASE_READ | SMB2_LEASE_HANDLE))
				acked++;
		}
		if (recv_rsp(&b, false) || b.status) {
			EXPECT(0, "round %d: B's open after the break (%s)", i, raw_sname(b.status));
			break;
		}
		create_parse(&b, &ob);
		raw_close_fid(&b, &ob.fid);
		raw_close_fid(&a, &o.fid);
		/* rm: open for delete on close, close */
		create_options = FILE_DELETE_ON_CLOSE;
		create(&a, name, DELETE_ACCESS, FILE_OPEN, SMB2_OPLOCK_LEVEL_NONE, NULL, 0, &d);
		create_options = 0;
		if (d.status) {
			EXPECT(0, "round %d: open for delete (%s)", i, raw_sname(d.status));
			break;
		}
		raw_close_fid(&a, &d.fid);
		/* cp: create it again, at once */
		create(&a, name, FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_CREATE,
		       SMB2_OPLOCK_LEVEL_NONE, NULL, 0, &d);
		last = d.status;
		if (d.status)
			continue;
		gone++;
		raw_close_fid(&a, &d.fid);
	}
	EXPECT(broken == UNLINK_ROUNDS && acked == UNLINK_ROUNDS,
	       "each round's lease broken (%d) and acknowledged (%d)", broken, acked);
	EXPECT(gone == UNLINK_ROUNDS,
	       "the name is gone when the delete's CLOSE is answered: %d of %d created again at once%s%s",
	       gone, UNLINK_ROUNDS, gone == UNLINK_ROUNDS ? "" : ", last: ",
	       gone == UNLINK_ROUNDS ? "" : raw_sname(last));
	raw_close(&a);
	raw_close(&b);
}

/* Wait for the test script: it touches DIR/NAME. */
static void wait_for(const char *name)
{
	const char *dir = getenv("CACHE_HOLD");
	char path[512];
	int i;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

static void tell(const char *name)
{
	const char *dir = getenv("CACHE_HOLD");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

static uint32_t lock1(struct raw *r, const struct smb2_fid *fid, uint64_t off, uint64_t len,
		      uint32_t flags)
{
	uint8_t b[256];
	struct wcur w;

	/* [MS-SMB2] 2.2.26: one LOCK_ELEMENT */
	raw_begin(&w, b, sizeof(b));
	wcur_le16(&w, 48);
	wcur_le16(&w, 1);
	wcur_le32(&w, 0);
	wcur_le64(&w, fid->persistent);
	wcur_le64(&w, fid->volatile_id);
	wcur_le64(&w, off);
	wcur_le64(&w, len);
	wcur_le32(&w, flags);
	wcur_le32(&w, 0);
	raw_seal(r, SMB2_LOCK, b, w.off);
	raw_send(r, b, w.off);
	return recv_rsp(r, false) ? STATUS_CONNECTION_DISCONNECTED : r->status;
}

/*
 * A persistent handle on a continuously available share survives a
 * kill -9 of rdaxd: the client holds it (with an RWH lease and a
 * byte-range lock) when the server dies, reconnects after the restart
 * and goes on.
 */
static void case_persist(void)
{
	struct raw a, a2, b;
	struct cr_out o, r, ob;
	uint8_t key[16], cguid[16], ga[16], gb[16], ctx[256];
	char buf[64];
	uint32_t got;
	size_t n;

	fill(ga, 0x31);
	fill(gb, 0x42);
	fill(key, 0x53);
	crypto_random(cguid, 16);
	if (session(&a, &user1, ga))
		return;
	n = contexts_ex(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 120000, NULL,
			SMB2_DHANDLE_FLAG_PERSISTENT, NULL);
	create(&a, "ca.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
	EXPECT(!o.status && o.durable && o.persistent,
	       "a persistent open on the CA share: %s, durable %d, persistent %d",
	       raw_sname(o.status), o.durable, o.persistent);
	EXPECT(!raw_write(&a, &o.fid, 0, "before the crash\n", 17), "write to it");
	EXPECT(lock1(&a, &o.fid, 100, 10, SMB2_LOCKFLAG_EXCLUSIVE |
		     SMB2_LOCKFLAG_FAIL_IMMEDIATELY) == 0, "lock bytes 100-109");
	tell("opened");
	wait_for("restarted");	/* rdaxd was killed with -9 and started again */

	/* another client meets the lock the journal kept (a stat open: it
	 * breaks nothing, so it does not wait for the absent client) */
	if (!session(&b, &user1, gb)) {
		create(&b, "ca.txt", FILE_READ_ATTRIBUTES | SYNCHRONIZE, FILE_OPEN,
		       SMB2_OPLOCK_LEVEL_NONE, NULL, 0, &ob);
		if (!ob.status) {
			EXPECT(lock1(&b, &ob.fid, 100, 10, SMB2_LOCKFLAG_SHARED |
				     SMB2_LOCKFLAG_FAIL_IMMEDIATELY) == STATUS_LOCK_NOT_GRANTED,
			       "after the restart another open still meets the lock: %s",
			       raw_sname(b.status));
			raw_close_fid(&b, &ob.fid);
		} else {
			EXPECT(0, "another client opens the file after the restart: %s",
			       raw_sname(ob.status));
		}
		raw_close(&b);
	}
	raw_close(&a);
	if (session(&a2, &user1, ga))
		return;
	/* a reconnect with a context that asks something of the open: refused */
	n = contexts_ex(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 0, &o.fid,
			SMB2_DHANDLE_FLAG_PERSISTENT, SMB2_CTX_MXAC);
	create(&a2, "ca.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(r.status == STATUS_OBJECT_NAME_NOT_FOUND,
	       "a DH2C with an MxAc beside its lease is refused, as Samba does: %s",
	       raw_sname(r.status));
	/* as Linux cifs.ko reconnects: lease, DH2C, QFid */
	n = contexts_ex(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, cguid, 0, &o.fid,
			SMB2_DHANDLE_FLAG_PERSISTENT, SMB2_CTX_QFID);
	create(&a2, "ca.txt", 0, FILE_OPEN, SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &r);
	EXPECT(!r.status && r.qfid, "the client reconnects its handle after the restart, "
	       "with a QFid as cifs.ko sends: %s, QFid answered %d", raw_sname(r.status), r.qfid);
	if (!r.status) {
		EXPECT(r.lease && (r.lc.state & SMB2_LEASE_HANDLE),
		       "with its lease (state %x)", r.lc.state);
		EXPECT(!raw_read(&a2, &r.fid, 0, buf, 17, &got) && got == 17 &&
		       !memcmp(buf, "before the crash\n", 17), "the data is there");
		EXPECT(lock1(&a2, &r.fid, 100, 10, SMB2_LOCKFLAG_UNLOCK) == 0,
		       "its lock is still its own: unlocked");
		EXPECT(!raw_write(&a2, &r.fid, 17, "after\n", 6), "it goes on writing");
		EXPECT(!raw_close_fid(&a2, &r.fid), "close");
	}
	raw_close(&a2);
}

/* On a share with "oplocks = no": neither a lease nor an oplock, as Samba. */
static void case_nolease(void)
{
	struct raw a;
	struct cr_out o;
	uint8_t key[16], ctx[256], ga[16];
	size_t n;

	fill(ga, 0xC3);
	if (session(&a, &user1, ga))
		return;
	fill(key, 0x7C);
	n = contexts(ctx, sizeof(ctx), key, SMB2_LEASE_RWH, NULL, 0, NULL);
	create(&a, "nolease.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF,
	       SMB2_OPLOCK_LEVEL_LEASE, ctx, n, &o);
	EXPECT(!o.status && o.oplock == SMB2_OPLOCK_LEVEL_NONE && !o.lease,
	       "an RWH lease asked for: the open works, with no lease (%s, oplock %u, lease %d)",
	       raw_sname(o.status), o.oplock, o.lease);
	if (!o.status)
		raw_close_fid(&a, &o.fid);
	create(&a, "nolease.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OPEN,
	       SMB2_OPLOCK_LEVEL_BATCH, NULL, 0, &o);
	EXPECT(!o.status && o.oplock == SMB2_OPLOCK_LEVEL_NONE,
	       "a batch oplock asked for: none (%s, oplock %u)", raw_sname(o.status), o.oplock);
	if (!o.status)
		raw_close_fid(&a, &o.fid);
	raw_close(&a);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "persist", case_persist },
	{ "acks", case_acks },
	{ "reconnect", case_reconnect },
	{ "cifs", case_cifs },
	{ "purge", case_purge },
	{ "flood", case_flood },
	{ "unlink", case_unlink },
	{ "nolease", case_nolease },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 5) {
		fprintf(stderr, "usage: caching HOST PORT SHARE acks|reconnect|cifs|purge|flood|unlink|persist|nolease\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	user1.user = env("CACHE_USER");
	user1.password = env("CACHE_PW");
	user2.user = env("CACHE_USER2");
	user2.password = env("CACHE_PW2");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[4], cases[i].name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "caching: unknown case %s\n", argv[4]);
		return 2;
	}
	cases[i].run();
	return nfail ? 1 : 0;
}
