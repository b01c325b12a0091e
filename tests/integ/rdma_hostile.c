// SPDX-License-Identifier: MIT
/*
 * Hostile SMB-Direct buffer descriptors against rdaxd (run in the
 * testbed): a bogus rkey, a length beyond the negotiated maximum, zero
 * descriptors, too many, an offset + length that wraps, and totals that
 * do not match RemainingBytes or Length. Each must fail only its own
 * request (a bad rkey necessarily ends its own RDMA connection), while a
 * second connection keeps working throughout.
 *
 * usage: rdma_hostile ADDR PORT GUESTSHARE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "transport/smbdirect.h"
#include "util/utf16.h"

#define BUF_LEN (1u << 20)

struct raw {
	struct xprt *x;
	uint64_t mid;
	uint64_t sid;
	uint32_t tid;
	struct smb2_fid fid;
	uint8_t *rx;
	size_t rx_cap;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static const char *host, *share;
static unsigned int port;
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

/* Send one PDU built by fn; the status of its response, or -errno. */
static long call(struct raw *r, uint16_t cmd, uint16_t charge,
		 void (*fn)(struct wcur *, void *), void *arg, uint32_t *status)
{
	struct smb2_hdr h = { 0 };
	uint8_t msg[4096];
	struct wcur w;
	long n;

	wcur_init(&w, msg, sizeof(msg));
	w.off = SMB2_HDR_SIZE;
	fn(&w, arg);
	h.command = cmd;
	h.message_id = r->mid;
	h.session_id = r->sid;
	h.tree_id = r->tid;
	h.credits = 64;
	h.credit_charge = charge;
	smb2_hdr_encode(msg, &h);
	r->mid += charge ? charge : 1;
	n = smbd_client_send(r->x, msg, w.off, 10000);
	if (n)
		return n;
	do {
		n = smbd_client_recv(r->x, &r->rx, &r->rx_cap, 10000);
		if (n < 0)
			return n;
		*status = get_le32(r->rx + 8);
	} while (*status == STATUS_PENDING);
	return n;
}

static void enc_negotiate(struct wcur *w, void *arg)
{
	struct smb2_negotiate_req n = { 0 };

	n.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	n.dialects[n.ndialects++] = SMB2_DIALECT_300;
	n.dialects[n.ndialects++] = SMB2_DIALECT_302;
	n.dialects[n.ndialects++] = SMB2_DIALECT_311;
	crypto_random(n.ctx.salt, 32);
	smb2_negotiate_req_encode(w, &n);
}

struct blob {
	const uint8_t *p;
	size_t len;
};

static void enc_sess(struct wcur *w, void *arg)
{
	struct blob *b = arg;
	struct smb2_sess_setup_req s = { .security = { b->p, (uint32_t)b->len } };

	smb2_sess_setup_req_encode(w, &s);
}

static void enc_tcon(struct wcur *w, void *arg)
{
	struct smb2_tree_connect_req t = { 0 };
	uint8_t path[512];
	char unc[300];
	int n;

	snprintf(unc, sizeof(unc), "\\\\%s\\%s", host, share);
	n = utf8_to_utf16le(unc, path, sizeof(path));
	t.path.p = path;
	t.path.len = (uint32_t)n;
	smb2_tree_connect_req_encode(w, &t);
}

static void enc_create(struct wcur *w, void *arg)
{
	struct smb2_create_req c = { 0 };
	uint8_t name[128];
	int n = utf8_to_utf16le(arg, name, sizeof(name));

	c.impersonation = 2;
	c.desired_access = FILE_GENERIC_READ | FILE_GENERIC_WRITE;
	c.share_access = 7;
	c.disposition = FILE_OVERWRITE_IF;
	c.name.p = name;
	c.name.len = (uint32_t)n;
	smb2_create_req_encode(w, &c);
}

/* An inline WRITE of 256 KiB so that reads have something to return. */
static void enc_fill(struct wcur *w, void *arg)
{
	struct raw *r = arg;
	struct smb2_write_req wr = { .length = 2048, .fid = r->fid };

	smb2_write_req_encode(w, &wr);
	wcur_zero(w, 2048);
}

static void enc_echo(struct wcur *w, void *arg)
{
	smb2_simple_encode(w);
}

struct rw_case {
	struct raw *r;
	bool write;
	uint32_t channel;
	uint32_t length;		/* READ Length / WRITE RemainingBytes */
	struct smbd_desc d[80];
	int nd;
};

static void enc_rw(struct wcur *w, void *arg)
{
	struct rw_case *k = arg;
	uint8_t ci[80 * SMBD_DESC_SIZE];

	smbd_desc_encode(ci, k->d, k->nd);
	if (k->write) {
		struct smb2_write_req wr = { 0 };

		wr.fid = k->r->fid;
		wr.channel = k->channel;
		wr.remaining = k->length;
		wr.channel_info.p = ci;
		wr.channel_info.len = (uint32_t)k->nd * SMBD_DESC_SIZE;
		smb2_write_req_encode(w, &wr);
	} else {
		struct smb2_read_req rd = { 0 };

		rd.fid = k->r->fid;
		rd.length = k->length;
		rd.channel = k->channel;
		rd.channel_info.p = k->nd ? ci : NULL;
		rd.channel_info.len = (uint32_t)k->nd * SMBD_DESC_SIZE;
		smb2_read_req_encode(w, &rd);
	}
}

static int raw_open(struct raw *r)
{
	struct auth_client_cfg acfg = { .anonymous = true, .spnego = true,
					.workstation = "HOSTILE" };
	uint8_t out[AUTH_TOKEN_MAX], in[AUTH_TOKEN_MAX];
	size_t out_len, in_len = 0;
	struct smb2_sess_setup_rsp ss;
	struct auth_client *ac;
	struct blob b;
	uint32_t st = 0;
	int step, ret;

	memset(r, 0, sizeof(*r));
	ret = smbd_connect(host, port, NULL, 10000, &r->x);
	if (ret)
		return ret;
	r->buf = aligned_alloc(4096, BUF_LEN);
	r->mr = ibv_reg_mr(smbd_pd(r->x), r->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!r->mr)
		return -errno;
	if (call(r, SMB2_NEGOTIATE, 0, enc_negotiate, NULL, &st) < 0 || st)
		return -EPROTO;
	if (auth_client_new(&ac, &acfg))
		return -ENOMEM;
	for (;;) {
		step = auth_client_step(ac, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0)
			break;
		b.p = out;
		b.len = out_len;
		if (call(r, SMB2_SESSION_SETUP, 1, enc_sess, &b, &st) < 0)
			break;
		r->sid = get_le64(r->rx + 40);
		if (st != STATUS_MORE_PROCESSING_REQUIRED)
			break;
		if (smb2_sess_setup_rsp_decode(r->rx, 4096, &ss))
			break;
		memcpy(in, ss.security.p, ss.security.len);
		in_len = ss.security.len;
	}
	auth_client_delete(&ac);
	if (st)
		return -EACCES;
	if (call(r, SMB2_TREE_CONNECT, 1, enc_tcon, NULL, &st) < 0 || st)
		return -ENOENT;
	r->tid = get_le32(r->rx + 36);
	if (call(r, SMB2_CREATE, 1, enc_create, "hostile.dat", &st) < 0 || st)
		return -EIO;
	r->fid.persistent = get_le64(r->rx + 128);
	r->fid.volatile_id = get_le64(r->rx + 136);
	if (call(r, SMB2_WRITE, 1, enc_fill, r, &st) < 0 || st)
		return -EIO;
	return 0;
}

static void raw_close(struct raw *r)
{
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->x)
		smbd_client_destroy(r->x);
	free(r->buf);
	free(r->rx);
	memset(r, 0, sizeof(*r));
}

static void still_serving(struct raw *keep, const char *after)
{
	uint32_t st = 0;

	if (call(keep, SMB2_ECHO, 1, enc_echo, NULL, &st) < 0 || st)
		BAD("the second connection stopped working after: %s", after);
}

/* Send a READ/WRITE case; expect an error status or, for fatal ones, a drop. */
static void run_case(struct raw *keep, struct raw *r, struct rw_case *k,
		     const char *what, bool fatal_ok)
{
	uint32_t st = 0;
	long n;

	k->r = r;
	n = call(r, k->write ? SMB2_WRITE : SMB2_READ,
		 smb2_credit_charge_for(k->length > (8u << 20) ? 0 : k->length),
		 enc_rw, k, &st);
	if (n < 0 && fatal_ok)
		OK("%s: the RDMA connection was dropped (%ld)", what, n);
	else if (n < 0)
		BAD("%s: connection lost (%ld) instead of an error response", what, n);
	else if (nt_is_error(st))
		OK("%s: %s", what, ntstatus_name(st) ? ntstatus_name(st) : "error");
	else
		BAD("%s: succeeded (status 0x%08x)", what, st);
	still_serving(keep, what);
}

int main(int argc, char **argv)
{
	struct raw keep, r;
	struct rw_case k;
	uint32_t st;
	int i, ret;

	if (argc != 4) {
		fprintf(stderr, "usage: rdma_hostile ADDR PORT GUESTSHARE\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	if (crypto_init())
		return 99;
	ret = raw_open(&keep);
	if (ret) {
		BAD("reference SMB-Direct connection: %s", strerror(-ret));
		return 1;
	}
	OK("reference SMB-Direct connection established");
	if (raw_open(&r)) {
		BAD("second SMB-Direct connection");
		return 1;
	}

	/* a good RDMA read first: the path works on this connection */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 2048;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey, 2048 };
	k.nd = 1;
	k.r = &r;
	if (call(&r, SMB2_READ, 1, enc_rw, &k, &st) >= 0 && !st &&
	    get_le32(r.rx + 72) == 2048)
		OK("a valid RDMA READ returns 2048 bytes by RDMA");
	else
		BAD("a valid RDMA READ failed (status 0x%08x)", st);

	/* length beyond the negotiated maximum (8 MiB) */
	memset(&k, 0, sizeof(k));
	k.write = true;
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 16u << 20;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey, 16u << 20 };
	k.nd = 1;
	run_case(&keep, &r, &k, "descriptor of 16 MiB (limit 8 MiB)", false);

	/* zero descriptors */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 4096;
	run_case(&keep, &r, &k, "RDMA channel with zero descriptors", false);

	/* more descriptors than allowed */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	for (i = 0; i < 80; i++)
		k.d[i] = (struct smbd_desc){ (uintptr_t)r.buf + 16 * i, r.mr->rkey, 16 };
	k.nd = 80;
	k.length = 80 * 16;
	run_case(&keep, &r, &k, "80 descriptors", false);

	/* offset + length wraps */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 8192;
	k.d[0] = (struct smbd_desc){ 0xFFFFFFFFFFFFF000ull, r.mr->rkey, 8192 };
	k.nd = 1;
	run_case(&keep, &r, &k, "descriptor offset + length wraps", false);

	/* total != RemainingBytes */
	memset(&k, 0, sizeof(k));
	k.write = true;
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 8192;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey, 4096 };
	k.nd = 1;
	run_case(&keep, &r, &k, "descriptors total 4096, RemainingBytes 8192", false);

	/* total below READ Length */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 65536;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey, 4096 };
	k.nd = 1;
	run_case(&keep, &r, &k, "descriptors total 4096 for a READ of 65536", false);

	/* still usable after the refused requests */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 1024;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey, 1024 };
	k.nd = 1;
	k.r = &r;
	if (call(&r, SMB2_READ, 1, enc_rw, &k, &st) >= 0 && !st)
		OK("the same connection still serves RDMA READs after the refusals");
	else
		BAD("the connection stopped serving after refused descriptors");

	/* a bogus rkey: the server's RDMA op fails, which ends that QP */
	memset(&k, 0, sizeof(k));
	k.channel = SMB2_CHANNEL_RDMA_V1;
	k.length = 2048;
	k.d[0] = (struct smbd_desc){ (uintptr_t)r.buf, r.mr->rkey ^ 0x5a5a00, 2048 };
	k.nd = 1;
	run_case(&keep, &r, &k, "a bogus rkey", true);
	raw_close(&r);

	/* a fresh connection works after all that */
	if (raw_open(&r) == 0)
		OK("new SMB-Direct connections still work");
	else
		BAD("new SMB-Direct connections fail");
	raw_close(&r);
	raw_close(&keep);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
