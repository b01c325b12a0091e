// SPDX-License-Identifier: MIT
/*
 * The SMB 3.1.1 RDMA transform against rdaxd, from a client built on
 * librdax's internals (run in the testbed, rdaxd with "server smb3
 * encryption over rdma = yes"): WRITEs carrying a transform the library
 * would never send, one request each, on a signed and on an encrypted
 * session:
 *
 *   the payload changed after it was signed (or encrypted): the server's
 *   check fails that request; a Signature or Nonce of the wrong length,
 *   an unknown TransformType, TransformCount 2, descriptors outside the
 *   transform; a nonce the server saw before; a transform on a 3.0
 *   connection (no transform negotiated there).
 *
 * Each must fail only its request: the same connection then reads back
 * what the good WRITEs wrote, by RDMA through the transform, and a second
 * connection keeps working throughout.
 *
 * usage: rdma_xform_bad ADDR PORT SHARE USER PASSWORD-FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "proto/ntstatus.h"
#include "proto/rdma_xform.h"

/*
 * WRITE sizes: one piece (rdaxd checks the payload at once), and several
 * (its RDMA Reads overlap the check in steps; the tag after the last)
 */
static const uint32_t lens[] = { 256u << 10, (1u << 20) + (12u << 10) };
#define LEN_MAX ((1u << 20) + (12u << 10))

static const char *host, *share, *user, *pwfile;
static unsigned int port;
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

enum mutation {
	M_NONE,
	M_TAMPER,		/* payload changed after the transform was made */
	M_SIG_LEN,		/* SignatureLength 12 */
	M_NONCE_LEN,		/* NonceLength 8 */
	M_TYPE,			/* TransformType 3 */
	M_COUNT,		/* TransformCount 2 */
	M_DESC,			/* RdmaDescriptorLength past the end */
	M_REUSE,		/* the nonce of the last good WRITE */
	M_WRONG_KIND,		/* signing on an encrypted message, or the reverse */
};

static const char *const mname[] = {
	"a good transform", "payload changed after the transform",
	"SignatureLength 12", "NonceLength 8", "TransformType 3", "TransformCount 2",
	"descriptors past the channel info", "a nonce the server saw before",
	"the other kind of transform",
};

static uint8_t last_nonce[16];

/*
 * One WRITE of len bytes of buf at offset 0 with a transform of the session's
 * kind, changed as m says; the response status, or -errno when the
 * request could not be made or the connection failed.
 */
static long xform_write(struct rdax_conn *c, struct rdax_file *f, uint8_t *buf, uint32_t len,
			enum mutation m)
{
	struct smb2_rdma_xform x = { 0 };
	struct smb2_write_req wr = { .fid = f->fid };
	struct cli_chan *chan = &c->chans[0];
	uint8_t ci[SMB2_RDMA_XFORM_MAX(SMBD_DESC_SIZE) + 16], di[SMBD_DESC_SIZE];
	uint8_t *payload = buf;
	struct rdax_buf *xb = NULL;
	struct cli_chain ch;
	struct cli_rdma r;
	struct iovec iov;
	struct wcur w;
	bool enc = c->encrypt;
	long ret;
	int n;

	x.type = enc ? SMB2_RDMA_XFORM_TYPE_ENCRYPTION : SMB2_RDMA_XFORM_TYPE_SIGNING;
	if (m == M_WRONG_KIND)
		x.type = enc ? SMB2_RDMA_XFORM_TYPE_SIGNING : SMB2_RDMA_XFORM_TYPE_ENCRYPTION;
	x.sig_len = 16;
	x.nonce_len = enc && (c->cipher == SMB2_CIPHER_AES128_CCM ||
			      c->cipher == SMB2_CIPHER_AES256_CCM) ? 11 : 12;
	if (m == M_REUSE) {
		memcpy(x.nonce, last_nonce, sizeof(x.nonce));
	} else {
		smb2_nonce_next(&c->xform_nonce, x.nonce_len == 11 ? SMB2_CIPHER_AES128_CCM :
				SMB2_CIPHER_AES128_GCM, x.nonce);
		x.nonce[x.nonce_len - 1] |= 0x80;
	}
	if (enc) {
		if (cli_xbuf_get(c, len, &xb))
			return -ENOMEM;
		memcpy(xb->addr, buf, len);
		payload = xb->addr;
		iov = (struct iovec){ payload, len };
		ret = smb2_xform_encrypt(NULL, c->cipher, c->keys.c2s, x.nonce, &iov, 1, x.sig);
	} else {
		iov = (struct iovec){ payload, len };
		ret = smb2_xform_sign(NULL, c->sign_alg, chan->signing_key, x.nonce, &iov, 1,
				      x.sig);
	}
	if (ret)
		goto out_xb;
	if (m == M_NONE)
		memcpy(last_nonce, x.nonce, sizeof(last_nonce));
	if (m == M_TAMPER)
		payload[len / 2] ^= 0x01;	/* after the transform: the NIC reads this */
	ret = cli_rdma_prepare(c, chan, xb, payload, len, false, &r);
	if (ret || !r.channel) {
		ret = ret ? ret : -EOPNOTSUPP;
		goto out_xb;
	}
	smbd_desc_encode(di, &r.desc, 1);
	x.channel = r.channel;
	if (m == M_SIG_LEN)
		x.sig_len = 12;
	if (m == M_NONCE_LEN)
		x.nonce_len = 8;
	n = smb2_rdma_xform_encode(ci, sizeof(ci), &x, di, SMBD_DESC_SIZE);
	if (n < 0) {
		ret = n;
		goto out_rdma;
	}
	if (m == M_TYPE)
		put_le16(ci + SMB2_RDMA_XFORM_HDR, 3);
	if (m == M_COUNT)
		put_le16(ci + 8, 2);
	if (m == M_DESC)
		put_le16(ci + 2, SMBD_DESC_SIZE + 8);
	wr.channel = SMB2_CHANNEL_RDMA_TRANSFORM;
	wr.remaining = len;
	wr.channel_info.p = ci;
	wr.channel_info.len = (uint32_t)n;
	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_WRITE, f->t->id, false, smb2_credit_charge_for(len),
			    48 + sizeof(ci), &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		goto out_rdma;
	}
	smb2_write_req_encode(&w, &wr);
	cli_chain_end(c, &ch, &w);
	ch.bulk = true;
	ret = cli_chain_run(c, &ch);
	if (!ret)
		ret = ch.rsp[0].status;
out_rdma:
	cli_rdma_finish(c, &r);
out_xb:
	if (xb)
		cli_xbuf_put(c, xb);
	return ret;
}

static struct rdax_conn *conn(uint16_t max_dialect, bool encrypt)
{
	struct rdax_cfg *cfg;
	struct rdax_conn *c = NULL;
	int ret;

	if (rdax_cfg_new(&cfg))
		return NULL;
	rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA);
	rdax_cfg_set_password_file(cfg, pwfile);
	rdax_cfg_set_credentials(cfg, user, NULL);
	rdax_cfg_set_signing(cfg, true);
	rdax_cfg_set_encryption(cfg, encrypt);
	rdax_cfg_set_rdma_transform(cfg, true);
	rdax_cfg_set_dialects(cfg, RDAX_SMB_2_1, max_dialect);
	ret = rdax_connect(&c, host, port, cfg);
	if (ret)
		BAD("connect (%s): %s", encrypt ? "encrypted" : "signed", rdax_errormsg());
	rdax_cfg_delete(&cfg);
	return c;
}

/* The second connection answers a stat. */
static void still_serving(struct rdax_tree *keep, const char *after)
{
	struct rdax_stat st;

	if (rdax_stat(keep, "", &st))
		BAD("the second connection stopped working after: %s", after);
}

/* A request that must have been refused: an error status, the connection up. */
static void refused(const char *kind, const char *what, long ret)
{
	if (ret > 0 && nt_is_error((uint32_t)ret))
		OK("%s: %s: refused (%s)", kind, what,
		   ntstatus_name((uint32_t)ret) ? ntstatus_name((uint32_t)ret) : "error");
	else if (ret < 0)
		BAD("%s: %s: the request failed locally or the connection went (%ld)",
		    kind, what, ret);
	else
		BAD("%s: %s: taken (status 0x%08lx)", kind, what, ret);
}

static void close_all(struct rdax_file **f, struct rdax_tree **t, struct rdax_conn **c)
{
	if (*f)
		rdax_close(f);
	if (*t)
		rdax_tree_disconnect(t);
	rdax_disconnect(c);
}

static void session_cases(bool encrypt, struct rdax_tree *keep)
{
	const char *kind = encrypt ? "encrypted" : "signed";
	struct rdax_conn *c = conn(RDAX_SMB_3_1_1, encrypt);
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	uint8_t *buf = NULL, *back = NULL;
	struct rdax_stats s0, s1;
	enum mutation m;
	char what[96];
	uint32_t len = 0;
	size_t i;
	long ret;

	if (!c)
		return;
	if (!(encrypt ? c->xform_enc : c->xform_sign)) {
		BAD("%s session: the server took no %s transform", kind, kind);
		goto out;
	}
	buf = aligned_alloc(4096, LEN_MAX);
	back = aligned_alloc(4096, LEN_MAX);
	if (!buf || !back || rdax_tree_connect(c, share, &t) ||
	    rdax_open(t, encrypt ? "xform-enc.bin" : "xform-sign.bin",
		      O_RDWR | O_CREAT | O_TRUNC, &f)) {
		BAD("%s session: open: %s", kind, rdax_conn_errmsg(c));
		goto out;
	}
	crypto_random(buf, LEN_MAX);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		len = lens[i];
		ret = xform_write(c, f, buf, len, M_NONE);
		if (ret)
			BAD("%s, %u bytes: %s: status/errno %ld", kind, len, mname[M_NONE], ret);
		else
			OK("%s, %u bytes: %s is taken", kind, len, mname[M_NONE]);
		for (m = M_TAMPER; m <= M_WRONG_KIND; m++) {
			/* taken, the tampered ones would change what is read back below */
			ret = xform_write(c, f, buf, len, m);
			if (m == M_TAMPER)	/* signed: put it back */
				buf[len / 2] ^= (uint8_t)(encrypt ? 0 : 0x01);
			snprintf(what, sizeof(what), "%u bytes: %s", len, mname[m]);
			refused(kind, what, ret);
			still_serving(keep, what);
		}
	}
	/* the same connection serves on: a transformed RDMA READ of the good data */
	rdax_conn_stats(c, &s0);
	if (rdax_pread(f, back, len, 0) != (ssize_t)len || memcmp(back, buf, len))
		BAD("%s: read back after the refusals: %s", kind, rdax_conn_errmsg(c));
	else if (rdax_conn_stats(c, &s1), s1.rdma_bytes - s0.rdma_bytes < len)
		BAD("%s: read back, but not by RDMA", kind);
	else
		OK("%s: the connection reads back the good WRITE's data by RDMA", kind);
out:
	close_all(&f, &t, &c);
	free(buf);
	free(back);
}

/* SMB 3.0: no transform is negotiated, and one sent anyway is refused. */
static void dialect_300(struct rdax_tree *keep)
{
	struct rdax_conn *c = conn(RDAX_SMB_3_0, false);
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	uint8_t *buf = aligned_alloc(4096, lens[0]);
	long ret;

	if (!c || !buf)
		goto out;
	if (c->xform_sign || c->xform_enc)
		BAD("3.0: a transform was negotiated");
	if (rdax_tree_connect(c, share, &t) ||
	    rdax_open(t, "xform-300.bin", O_RDWR | O_CREAT | O_TRUNC, &f)) {
		BAD("3.0: open: %s", rdax_conn_errmsg(c));
		goto out;
	}
	memset(buf, 0x5a, lens[0]);
	/*
	 * A client that sends one anyway: the library moves this signed
	 * session's data by RDMA only as if the transform were there, with a
	 * nonce source it has not on 3.0
	 */
	smb2_nonce_gen_init(&c->xform_nonce);
	c->xform_sign = true;
	ret = xform_write(c, f, buf, lens[0], M_NONE);
	c->xform_sign = false;
	refused("3.0", "a transform on a 3.0 connection", ret);
	still_serving(keep, "a transform on 3.0");
	if (rdax_pwrite(f, buf, lens[0], 0) != (ssize_t)lens[0])
		BAD("3.0: the connection stopped serving: %s", rdax_conn_errmsg(c));
	else
		OK("3.0: the connection serves on");
out:
	close_all(&f, &t, &c);
	free(buf);
}

int main(int argc, char **argv)
{
	struct rdax_conn *keep;
	struct rdax_tree *kt = NULL;

	if (argc != 6) {
		fprintf(stderr, "usage: rdma_xform_bad ADDR PORT SHARE USER PASSWORD-FILE\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	user = argv[4];
	pwfile = argv[5];
	keep = conn(RDAX_SMB_3_1_1, false);
	if (!keep || rdax_tree_connect(keep, share, &kt)) {
		BAD("reference connection");
		return 1;
	}
	OK("reference connection established");
	session_cases(false, kt);
	session_cases(true, kt);
	dialect_300(kt);
	still_serving(kt, "all cases");
	rdax_tree_disconnect(&kt);
	rdax_disconnect(&keep);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
