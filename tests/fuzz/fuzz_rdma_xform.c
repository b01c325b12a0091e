// SPDX-License-Identifier: MIT
/*
 * The RDMA transform ([MS-SMB2] 2.2.43, 2.2.43.1) as it arrives in the
 * channel info of a READ/WRITE or the Buffer of a READ response, and the
 * receiver's nonce window. Byte 0 picks what runs:
 *
 *   bit 0 clear: the rest is a transform. A good one has its descriptors
 *         inside the input and after the crypto transform, and encodes
 *         back to a transform that decodes to the same fields; its
 *         payload never authenticates under a fixed key (the input
 *         after the transform, as GCM and CCM ciphertext and as signed
 *         data).
 *   bit 0 set: the rest is a list of 12-byte nonces through one window:
 *         no nonce is taken twice.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "crypto/crypto.h"
#include "fuzz.h"
#include "proto/rdma_xform.h"
#include "proto/smb2.h"

static const uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* kept across inputs as a connection keeps them: no input may spoil the next */
static struct crypto_kept kept;

static void payload(const struct smb2_rdma_xform *x, const uint8_t *p, size_t len)
{
	static const uint16_t ciphers[] = { SMB2_CIPHER_AES128_GCM, SMB2_CIPHER_AES256_CCM };
	uint8_t *buf, nonce[16] = { 0 };
	struct iovec iov[2];
	size_t i, half;

	if (!len || len > 4096)
		return;
	buf = malloc(len);
	if (!buf)
		return;
	memcpy(nonce, x->nonce, x->nonce_len);
	half = len / 2;
	for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		memcpy(buf, p, len);
		iov[0] = (struct iovec){ buf, half };
		iov[1] = (struct iovec){ buf + half, len - half };
		FUZZ_ASSERT(smb2_xform_decrypt(&kept, ciphers[i], key, nonce, half ? iov : iov + 1,
					       half ? 2 : 1, x->sig) == -EBADMSG);
	}
	iov[0] = (struct iovec){ (void *)p, len };
	FUZZ_ASSERT(smb2_xform_verify(&kept, SMB2_SIGN_AES_GMAC, key, nonce, iov, 1, x->sig) ==
		    -EBADMSG);
	free(buf);
}

static void transform(const uint8_t *p, size_t len)
{
	struct smb2_rdma_xform x, y;
	uint8_t *b;
	size_t n;
	int ret;

	if (smb2_rdma_xform_decode(p, len, &x))
		return;
	FUZZ_ASSERT(x.sig_len <= 16 && x.nonce_len <= 16);
	if (x.channel != SMB2_CHANNEL_NONE) {
		FUZZ_ASSERT(x.desc && x.desc_len && x.desc >= p + 24 &&
			    x.desc + x.desc_len <= p + len);
	}
	n = smb2_rdma_xform_size(&x, x.desc_len);
	b = malloc(n);
	if (!b)
		return;
	ret = smb2_rdma_xform_encode(b, n, &x, x.desc, x.desc_len);
	FUZZ_ASSERT(ret == (int)n);
	FUZZ_ASSERT(smb2_rdma_xform_encode(b, n - 1, &x, x.desc, x.desc_len) == -ENOSPC);
	ret = smb2_rdma_xform_encode(b, n, &x, x.desc, x.desc_len);
	FUZZ_ASSERT(!smb2_rdma_xform_decode(b, n, &y));
	FUZZ_ASSERT(y.channel == x.channel && y.type == x.type && y.sig_len == x.sig_len &&
		    y.nonce_len == x.nonce_len && y.desc_len == x.desc_len);
	FUZZ_ASSERT(!memcmp(y.sig, x.sig, x.sig_len) && !memcmp(y.nonce, x.nonce, x.nonce_len));
	if (x.desc_len)
		FUZZ_ASSERT(!memcmp(y.desc, x.desc, x.desc_len));
	if (x.sig_len == 16 && n - x.desc_len <= len)
		payload(&x, p + n - x.desc_len, len - (n - x.desc_len));
	free(b);
}

static void window(const uint8_t *p, size_t len)
{
	struct smb2_xform_replay r = { 0 };
	uint64_t taken[256];
	size_t i, j, nt = 0;

	for (i = 0; i + 12 <= len && nt < 256; i += 12) {
		uint8_t nonce[12];

		memcpy(nonce, p + i, 12);
		/* one salt for the session; small counters collide often */
		memset(nonce + 8, 0xA5, 4);
		nonce[1] = nonce[2] = nonce[3] = nonce[4] = nonce[5] = nonce[6] = nonce[7] = 0;
		if (smb2_xform_replay_check(&r, nonce, 12))
			continue;
		for (j = 0; j < nt; j++)
			FUZZ_ASSERT(taken[j] != get_le64(nonce));
		taken[nt++] = get_le64(nonce);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		window(data + 1, size - 1);
	else
		transform(data + 1, size - 1);
	return 0;
}
