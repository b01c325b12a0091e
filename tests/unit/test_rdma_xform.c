// SPDX-License-Identifier: MIT
/*
 * The RDMA transform: its codec (src/proto/rdma_xform.c), its negotiate
 * context, the payload crypto (src/crypto/smb3.c) and the receiver's
 * nonce window.
 */
#include <errno.h>
#include <sys/uio.h>

#include "crypto/crypto.h"
#include "proto/rdma_xform.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "t.h"

static void codec(void)
{
	struct smb2_rdma_xform x = {
		.channel = SMB2_CHANNEL_RDMA_V1_INVALIDATE,
		.type = SMB2_RDMA_XFORM_TYPE_ENCRYPTION,
		.sig_len = 16, .nonce_len = 12,
	}, y;
	struct smbd_desc d = { .offset = 0x1122334455667788ull, .token = 0xabcd, .length = 1 << 20 };
	uint8_t desc[SMBD_DESC_SIZE], b[128];
	int n, i;

	t_section("codec");
	for (i = 0; i < 16; i++)
		x.sig[i] = (uint8_t)(0xa0 + i);
	for (i = 0; i < 12; i++)
		x.nonce[i] = (uint8_t)i;
	smbd_desc_encode(desc, &d, 1);
	/* 16 + (8 + 16 + 12 -> 40) + 16 */
	T_EQ(smb2_rdma_xform_size(&x, SMBD_DESC_SIZE), 72);
	n = smb2_rdma_xform_encode(b, sizeof(b), &x, desc, SMBD_DESC_SIZE);
	T_EQ(n, 72);
	T_HEXEQ(b, 24, "3800100002000000010000000000000001001000" "0c000000");
	T_EQ(smb2_rdma_xform_encode(b, 71, &x, desc, SMBD_DESC_SIZE), -ENOSPC);
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), 0);
	T_EQ(y.channel, SMB2_CHANNEL_RDMA_V1_INVALIDATE);
	T_EQ(y.type, SMB2_RDMA_XFORM_TYPE_ENCRYPTION);
	T_EQ(y.desc_len, SMBD_DESC_SIZE);
	T_MEMEQ(y.desc, desc, SMBD_DESC_SIZE);
	T_MEMEQ(y.sig, x.sig, 16);
	T_MEMEQ(y.nonce, x.nonce, 12);
	/* the bad ones */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n - 1, &y), -EBADMSG);	/* descriptors cut */
	b[8] = 2;							/* TransformCount 2 */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), -EBADMSG);
	b[8] = 1;
	b[16] = 3;							/* unknown type */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), -EBADMSG);
	b[16] = 1;
	b[18] = 17;							/* SignatureLength 17 */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), -EBADMSG);
	b[18] = 16;
	b[0] = 0x20;							/* descriptors in the crypto part */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), -EBADMSG);
	b[0] = 0x38;
	b[4] = 3;							/* inner channel TRANSFORM */
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), -EBADMSG);
	b[4] = 2;
	T_EQ(smb2_rdma_xform_decode(b, (size_t)n, &y), 0);
	/* a READ response's: no descriptors, padding may be cut */
	x.channel = SMB2_CHANNEL_NONE;
	x.nonce_len = 11;
	n = smb2_rdma_xform_encode(b, sizeof(b), &x, NULL, 0);
	T_EQ(n, 16 + 40);
	T_EQ(smb2_rdma_xform_decode(b, 16 + 8 + 16 + 11, &y), 0);
	T_EQ(y.nonce_len, 11);
	T_ASSERT(y.desc == NULL);
	T_EQ(smb2_rdma_xform_decode(b, 16 + 8 + 16 + 10, &y), -EBADMSG);
	T_EQ(smb2_rdma_xform_encode(b, sizeof(b), &x, desc, SMBD_DESC_SIZE), -EINVAL);
}

static void negctx(void)
{
	struct smb2_negotiate_req q = { .ndialects = 2, .dialects = { 0x0302, 0x0311 } }, q2;
	struct smb2_negotiate_rsp r = { .dialect = 0x0311, .preauth = true }, r2;
	uint8_t b[512];
	struct wcur w;

	t_section("negotiate context 0x0007");
	q.ctx.nxform = 2;
	q.ctx.xforms[0] = SMB2_RDMA_TRANSFORM_ENCRYPTION;
	q.ctx.xforms[1] = SMB2_RDMA_TRANSFORM_SIGNING;
	memset(b, 0, sizeof(b));
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_negotiate_req_encode(&w, &q);
	T_REQUIRE(!w.err);
	T_EQ(smb2_negotiate_req_decode(b, w.off, &q2), 0);
	T_EQ(q2.ctx.nxform, 2);
	T_EQ(q2.ctx.xforms[0], SMB2_RDMA_TRANSFORM_ENCRYPTION);
	T_EQ(q2.ctx.xforms[1], SMB2_RDMA_TRANSFORM_SIGNING);
	T_EQ(q2.ctx_count, 2);
	/* TransformCount 0 is malformed (2.2.3.1.6: MUST be greater than 0) */
	{
		size_t i;

		for (i = SMB2_HDR_SIZE; i + 10 < w.off; i++)
			if (get_le16(b + i) == SMB2_RDMA_TRANSFORM_CAPABILITIES &&
			    get_le16(b + i + 2) == 12 && get_le16(b + i + 8) == 2)
				break;
		T_REQUIRE(i + 10 < w.off);
		put_le16(b + i + 8, 0);
		T_EQ(smb2_negotiate_req_decode(b, w.off, &q2), -EBADMSG);
	}
	r.nxform = 1;
	r.xforms[0] = SMB2_RDMA_TRANSFORM_ENCRYPTION;
	memset(b, 0, sizeof(b));
	wcur_init(&w, b, sizeof(b));
	w.off = SMB2_HDR_SIZE;
	smb2_negotiate_rsp_encode(&w, &r);
	T_REQUIRE(!w.err);
	T_EQ(smb2_negotiate_rsp_decode(b, w.off, &r2), 0);
	T_EQ(r2.nxform, 1);
	T_EQ(r2.xforms[0], SMB2_RDMA_TRANSFORM_ENCRYPTION);
}

static void payload(void)
{
	static const uint16_t ciphers[] = { SMB2_CIPHER_AES128_CCM, SMB2_CIPHER_AES128_GCM,
					    SMB2_CIPHER_AES256_CCM, SMB2_CIPHER_AES256_GCM };
	static const int algs[] = { SMB2_SIGN_HMAC_SHA256, SMB2_SIGN_AES_CMAC, SMB2_SIGN_AES_GMAC };
	uint8_t key[32], nonce[16] = { 7, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4 };
	uint8_t plain[3000], buf[3000], tag[16], tag1[16];
	struct iovec one = { buf, sizeof(buf) }, two[2] = { { buf, 1000 }, { buf + 1000, 2000 } };
	size_t i;

	t_section("payload crypto");
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 3);
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < 4; i++) {
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_encrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), 0);
		T_ASSERT(memcmp(buf, plain, sizeof(buf)) != 0);
		/* the same in two pieces gives the same bytes and tag */
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_encrypt(NULL, ciphers[i], key, nonce, two, 2, tag1), 0);
		T_MEMEQ(tag1, tag, 16);
		T_EQ(smb2_xform_decrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), 0);
		T_MEMEQ(buf, plain, sizeof(buf));
		/* one bit of ciphertext, of the tag, or another nonce: refused, wiped */
		T_EQ(smb2_xform_encrypt(NULL, ciphers[i], key, nonce, two, 2, tag), 0);
		buf[1500] ^= 1;
		T_EQ(smb2_xform_decrypt(NULL, ciphers[i], key, nonce, two, 2, tag), -EBADMSG);
		T_ASSERT(buf[0] == 0 && buf[2999] == 0);
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_encrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), 0);
		tag[15] ^= 0x80;
		T_EQ(smb2_xform_decrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), -EBADMSG);
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_encrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), 0);
		nonce[0]++;
		T_EQ(smb2_xform_decrypt(NULL, ciphers[i], key, nonce, &one, 1, tag), -EBADMSG);
		nonce[0]--;
	}
	for (i = 0; i < 3; i++) {
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_sign(NULL, algs[i], key, nonce, &one, 1, tag), 0);
		T_MEMEQ(buf, plain, sizeof(buf));
		T_EQ(smb2_xform_sign(NULL, algs[i], key, nonce, two, 2, tag1), 0);
		T_MEMEQ(tag1, tag, 16);
		T_EQ(smb2_xform_verify(NULL, algs[i], key, nonce, two, 2, tag), 0);
		buf[2999] ^= 4;
		T_EQ(smb2_xform_verify(NULL, algs[i], key, nonce, &one, 1, tag), -EBADMSG);
		buf[2999] ^= 4;
		nonce[11]++;
		T_EQ(smb2_xform_verify(NULL, algs[i], key, nonce, &one, 1, tag), -EBADMSG);
		nonce[11]--;
	}
}

static void replay(void)
{
	struct smb2_xform_replay r = { 0 };
	uint8_t n[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 9, 9, 9, 9 };

	t_section("nonce window");
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);		/* 0 */
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);	/* 0 again */
	n[0] = 5;
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);
	n[0] = 3;
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);		/* late, in the window */
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);
	put_le64(n, 2000);
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);
	put_le64(n, 2000 - SMB2_XFORM_WINDOW);
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);	/* a window back: too old */
	put_le64(n, 2001 - SMB2_XFORM_WINDOW);
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);
	put_le64(n, 2001);
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);
	/* the slot of 2001 - WINDOW again, for 2001 + WINDOW - 1: taken once */
	put_le64(n, 2000 + SMB2_XFORM_WINDOW);
	T_EQ(smb2_xform_replay_check(&r, n, 12), 0);
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);
	put_le64(n, 2001);
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);	/* seen, still in the window */
	put_le64(n, 3000);
	n[8] = 8;
	T_EQ(smb2_xform_replay_check(&r, n, 12), -EBADMSG);	/* another salt */
	T_EQ(smb2_xform_replay_check(&r, n, 11), -EBADMSG);	/* another length */
	T_EQ(smb2_xform_replay_check(&r, n, 4), -EBADMSG);
}

/* The payload in steps (rdaxd's pipelined RDMA) is the payload in one go. */
static void steps(void)
{
	static const int ops[][2] = {
		{ SMB2_XPASS_ENCRYPT, SMB2_CIPHER_AES128_GCM },
		{ SMB2_XPASS_ENCRYPT, SMB2_CIPHER_AES256_GCM },
		{ SMB2_XPASS_SIGN, SMB2_SIGN_HMAC_SHA256 },
		{ SMB2_XPASS_SIGN, SMB2_SIGN_AES_CMAC },
		{ SMB2_XPASS_SIGN, SMB2_SIGN_AES_GMAC },
	};
	static const size_t cut[] = { 1, 17, 1000, 4096, 2886 };
	uint8_t key[32], nonce[12] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0x80 };
	uint8_t plain[8000], buf[8000], tag[16], tag1[16], mac[32];
	struct iovec one = { buf, sizeof(buf) }, v[2];
	struct crypto_kept kept = { 0 };
	struct smb2_xpass p;
	size_t i, k, pos;

	t_section("payload in steps");
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 5 + 1);
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 13 + 3);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		bool enc = ops[k][0] == SMB2_XPASS_ENCRYPT;

		memcpy(buf, plain, sizeof(buf));
		T_EQ(enc ? smb2_xform_encrypt(NULL, (uint16_t)ops[k][1], key, nonce, &one, 1,
					      tag) :
			   smb2_xform_sign(NULL, ops[k][1], key, nonce, &one, 1, tag), 0);
		memcpy(buf, plain, sizeof(buf));
		T_EQ(smb2_xpass_begin(&p, &kept, ops[k][0], ops[k][1], key, nonce), 0);
		/* pieces of odd sizes, each given as two iovecs */
		for (i = 0, pos = 0; i < sizeof(cut) / sizeof(cut[0]); pos += cut[i++]) {
			v[0] = (struct iovec){ buf + pos, cut[i] / 2 };
			v[1] = (struct iovec){ buf + pos + cut[i] / 2, cut[i] - cut[i] / 2 };
			T_EQ(smb2_xpass_step(&p, v, 2), 0);
		}
		T_EQ(pos, sizeof(buf));
		T_EQ(smb2_xpass_end(&p, tag1), 0);
		T_MEMEQ(tag1, tag, 16);
		/* and back, in two steps; one bit off fails at the end */
		T_EQ(smb2_xpass_begin(&p, &kept, enc ? SMB2_XPASS_DECRYPT : SMB2_XPASS_VERIFY,
				      ops[k][1], key, nonce), 0);
		v[0] = (struct iovec){ buf, 3 };
		v[1] = (struct iovec){ buf + 3, sizeof(buf) - 3 };
		T_EQ(smb2_xpass_step(&p, &v[0], 1), 0);
		T_EQ(smb2_xpass_step(&p, &v[1], 1), 0);
		T_EQ(smb2_xpass_end(&p, tag), 0);
		T_MEMEQ(buf, plain, sizeof(buf));
		tag[0] ^= 1;
		T_EQ(smb2_xpass_begin(&p, &kept, enc ? SMB2_XPASS_DECRYPT : SMB2_XPASS_VERIFY,
				      ops[k][1], key, nonce), 0);
		T_EQ(smb2_xpass_step(&p, &one, 1), 0);
		T_EQ(smb2_xpass_end(&p, tag), -EBADMSG);
		/* begun and dropped: nothing left behind (ASan) */
		T_EQ(smb2_xpass_begin(&p, &kept, ops[k][0], ops[k][1], key, nonce), 0);
		smb2_xpass_abort(&p);
		smb2_xpass_abort(&p);
	}
	/* the MACs are the plain ones over nonce || payload (GMAC: nonce as IV) */
	v[0] = (struct iovec){ nonce, 12 };
	v[1] = (struct iovec){ plain, sizeof(plain) };
	T_EQ(smb2_xform_sign(NULL, SMB2_SIGN_HMAC_SHA256, key, nonce, &v[1], 1, tag), 0);
	T_EQ(crypto_hmac_sha256v(key, 16, v, 2, mac), 0);
	T_MEMEQ(tag, mac, 16);
	T_EQ(smb2_xform_sign(NULL, SMB2_SIGN_AES_CMAC, key, nonce, &v[1], 1, tag), 0);
	T_EQ(crypto_aes_cmacv(key, v, 2, mac), 0);
	T_MEMEQ(tag, mac, 16);
	T_EQ(smb2_xform_sign(NULL, SMB2_SIGN_AES_GMAC, key, nonce, &v[1], 1, tag), 0);
	T_EQ(crypto_aes_gmacv(key, nonce, &v[1], 1, mac), 0);
	T_MEMEQ(tag, mac, 16);
	/* CCM takes its input at once; unknown algorithms are refused */
	T_EQ(smb2_xpass_begin(&p, &kept, SMB2_XPASS_ENCRYPT, SMB2_CIPHER_AES128_CCM, key, nonce),
	     -EOPNOTSUPP);
	T_EQ(smb2_xpass_begin(&p, &kept, SMB2_XPASS_SIGN, 77, key, nonce), -EINVAL);
	T_EQ(smb2_xpass_step(&p, &one, 1), -EINVAL);
	T_ASSERT(!smb2_xpass_can(SMB2_XPASS_DECRYPT, SMB2_CIPHER_AES256_CCM));
	T_ASSERT(smb2_xpass_can(SMB2_XPASS_VERIFY, SMB2_SIGN_AES_GMAC));
	crypto_kept_free(&kept);
	crypto_kept_free(&kept);
}

int main(void)
{
	codec();
	negctx();
	payload();
	steps();
	replay();
	return t_done();
}
