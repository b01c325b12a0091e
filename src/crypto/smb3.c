// SPDX-License-Identifier: MIT
/* SMB2/3 key derivation, signing and transform (encryption). */
#include "crypto/crypto.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "crypto/crypto_int.h"
#include "util/bytes.h"

#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001u
#define SMB2_CMD_CANCEL 0x000c
#define SMB2_TF_PROTO 0x424d53fdu

/* Labels and contexts of [MS-SMB2] 3.1.4.2 / protocol-facts B.4. */
#define LBL(s) s, sizeof(s)

static int derive_300(const uint8_t sk[16], struct smb3_keys *k)
{
	int rc;

	rc = smb3_kdf(sk, 16, LBL("SMB2AESCMAC"), LBL("SmbSign"), k->signing,
		      16);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMB2AESCCM"), LBL("ServerIn "),
			      k->c2s, 16);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMB2AESCCM"), LBL("ServerOut"),
			      k->s2c, 16);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMB2APP"), LBL("SmbRpc"), k->app,
			      16);
	return rc;
}

static int derive_311(const uint8_t sk[16], const uint8_t *h, size_t klen,
		      struct smb3_keys *k)
{
	int rc;

	rc = smb3_kdf(sk, 16, LBL("SMBSigningKey"), h, 64, k->signing, 16);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMBC2SCipherKey"), h, 64, k->c2s,
			      klen);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMBS2CCipherKey"), h, 64, k->s2c,
			      klen);
	if (!rc)
		rc = smb3_kdf(sk, 16, LBL("SMBAppKey"), h, 64, k->app, 16);
	return rc;
}

int smb2_cipher_keylen(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_CIPHER_AES128_CCM:
	case SMB2_CIPHER_AES128_GCM:
		return 16;
	case SMB2_CIPHER_AES256_CCM:
	case SMB2_CIPHER_AES256_GCM:
		return 32;
	default:
		return -EINVAL;
	}
}

int smb3_derive_keys(uint16_t dialect, const uint8_t session_key[16],
		     const uint8_t *preauth, uint16_t cipher,
		     struct smb3_keys *out)
{
	int rc, klen = 16;

	memset(out, 0, sizeof(*out));
	switch (dialect) {
	case SMB2_DIALECT_202:
	case SMB2_DIALECT_210:
		memcpy(out->signing, session_key, 16);
		memcpy(out->app, session_key, 16);
		return 0;
	case SMB2_DIALECT_300:
	case SMB2_DIALECT_302:
		if (cipher > SMB2_CIPHER_AES128_CCM)
			return -EINVAL;
		rc = derive_300(session_key, out);
		break;
	case SMB2_DIALECT_311:
		if (!preauth)
			return -EINVAL;
		if (cipher != SMB2_CIPHER_NONE) {
			klen = smb2_cipher_keylen(cipher);
			if (klen < 0)
				return klen;
		}
		rc = derive_311(session_key, preauth, (size_t)klen, out);
		break;
	default:
		return -EINVAL;
	}
	if (rc) {
		OPENSSL_cleanse(out, sizeof(*out));
		return rc;
	}
	out->cipher_keylen = (unsigned int)klen;
	return 0;
}

static const EVP_CIPHER *aead_cipher(const struct crypto_algs *a,
				     uint16_t cipher, bool *ccm)
{
	*ccm = cipher == SMB2_CIPHER_AES128_CCM ||
	       cipher == SMB2_CIPHER_AES256_CCM;
	switch (cipher) {
	case SMB2_CIPHER_AES128_CCM:
		return a->aes128_ccm;
	case SMB2_CIPHER_AES128_GCM:
		return a->aes128_gcm;
	case SMB2_CIPHER_AES256_CCM:
		return a->aes256_ccm;
	case SMB2_CIPHER_AES256_GCM:
		return a->aes256_gcm;
	default:
		return NULL;
	}
}

/*
 * Start ctx on cipher c in the direction enc, ready for its key. A
 * context already on c keeps its set-up (IV length; a CCM tag length is
 * set again by the caller) and is only re-keyed: passing the cipher again
 * would make OpenSSL free and make its inner state.
 */
static int cipher_start(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, bool enc, int ivlen)
{
	if (EVP_CIPHER_CTX_get0_cipher(ctx) == c)
		return EVP_CipherInit_ex2(ctx, NULL, NULL, NULL, enc, NULL) == 1 ? 0 : -EIO;
	if (EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, ivlen, NULL) != 1)
		return -EIO;
	return 0;
}

/* AES-128-GMAC on k's cipher context (NULL: one of its own) */
static int gmacv(struct crypto_kept *k, const uint8_t key[16], const uint8_t nonce[12],
		 const struct iovec *iov, int n, uint8_t tag[16])
{
	const struct crypto_algs *a = crypto_algs();
	struct crypto_kept tmp = { 0 };
	EVP_CIPHER_CTX *ctx;
	uint8_t dummy[16];
	int i, outl, rc = -EIO;

	if (!a)
		return -ENOPKG;
	if (n < 0 || (n && !iov))
		return -EINVAL;
	ctx = crypto_kept_cipher(k ? k : &tmp);
	if (!ctx)
		return -ENOMEM;
	if (cipher_start(ctx, a->aes128_gcm, true, 12) ||
	    EVP_EncryptInit_ex2(ctx, NULL, key, nonce, NULL) != 1)
		goto out_free_ctx;
	for (i = 0; i < n; i++) {
		const uint8_t *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			int chunk = left > (1u << 30) ? 1 << 30 : (int)left;

			if (EVP_EncryptUpdate(ctx, NULL, &outl, p, chunk) != 1)
				goto out_free_ctx;
			p += chunk;
			left -= (size_t)chunk;
		}
	}
	if (EVP_EncryptFinal_ex(ctx, dummy, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
		goto out_free_ctx;
	rc = 0;
out_free_ctx:
	crypto_kept_free(&tmp);
	return rc;
}

int crypto_aes_gmacv(const uint8_t key[16], const uint8_t nonce[12],
		     const struct iovec *iov, int n, uint8_t tag[16])
{
	return gmacv(NULL, key, nonce, iov, n, tag);
}

/* HMAC-SHA256 (truncated to 16 bytes) or AES-CMAC over iov, on k's MAC context */
static int sign_macv(struct crypto_kept *k, int alg, const uint8_t key[16],
		     const struct iovec *iov, int n, uint8_t sig[16])
{
	struct crypto_kept tmp = { 0 };
	uint8_t mac[EVP_MAX_MD_SIZE];
	EVP_MAC_CTX *ctx;
	size_t got = 0;
	int i, rc = -EIO;

	if (!crypto_algs())
		return -ENOPKG;
	ctx = crypto_kept_mac(k ? k : &tmp, alg == SMB2_SIGN_AES_CMAC);
	if (!ctx)
		return -ENOMEM;
	if (EVP_MAC_init(ctx, key, 16, NULL) != 1)
		goto out;
	for (i = 0; i < n; i++)
		if (iov[i].iov_len && EVP_MAC_update(ctx, iov[i].iov_base, iov[i].iov_len) != 1)
			goto out;
	if (EVP_MAC_final(ctx, mac, &got, sizeof(mac)) != 1 || got < 16)
		goto out;
	memcpy(sig, mac, 16);
	rc = 0;
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	crypto_kept_free(&tmp);
	return rc;
}

int smb2_sign_compute(struct crypto_kept *k, int alg, const uint8_t key[16],
		      const uint8_t *pdu, size_t len, uint8_t sig[16])
{
	static const uint8_t zsig[SMB2_SIG_LEN];
	uint8_t nonce[12];
	struct iovec iov[3];
	uint32_t flags, bits = 0;

	if (len < SMB2_HDR_LEN)
		return -EBADMSG;
	iov[0] = (struct iovec){ (void *)pdu, SMB2_SIG_OFF };
	iov[1] = (struct iovec){ (void *)zsig, SMB2_SIG_LEN };
	iov[2] = (struct iovec){ (void *)(pdu + SMB2_HDR_LEN),
				 len - SMB2_HDR_LEN };
	switch (alg) {
	case SMB2_SIGN_HMAC_SHA256:
	case SMB2_SIGN_AES_CMAC:
		return sign_macv(k, alg, key, iov, 3, sig);
	case SMB2_SIGN_AES_GMAC:
		/* [MS-SMB2] 3.1.4.1: MessageId || role/cancel bits */
		flags = get_le32(pdu + 16);
		if (flags & SMB2_FLAGS_SERVER_TO_REDIR)
			bits |= 1;
		else if (get_le16(pdu + 12) == SMB2_CMD_CANCEL)
			bits |= 2;
		memcpy(nonce, pdu + 24, 8);
		put_le32(nonce + 8, bits);
		return gmacv(k, key, nonce, iov, 3, sig);
	default:
		return -EINVAL;
	}
}

int smb2_sign_verify(struct crypto_kept *k, int alg, const uint8_t key[16],
		     const uint8_t *pdu, size_t len)
{
	uint8_t sig[16];
	int rc;

	rc = smb2_sign_compute(k, alg, key, pdu, len, sig);
	if (rc)
		return rc;
	if (CRYPTO_memcmp(sig, pdu + SMB2_SIG_OFF, SMB2_SIG_LEN))
		return -EBADMSG;
	return 0;
}

/* Set up an AEAD context for one message (nonce = first 11/12 bytes). */
static int aead_init(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, bool ccm,
		     bool enc, const uint8_t *key, const uint8_t *nonce,
		     const uint8_t *tag)
{
	if (cipher_start(ctx, c, enc, ccm ? 11 : 12))
		return -EIO;
	/* CCM wants the tag (length) before the key */
	if (ccm && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16,
				       (void *)tag) != 1)
		return -EIO;
	if (EVP_CipherInit_ex2(ctx, NULL, key, nonce, enc, NULL) != 1)
		return -EIO;
	return 0;
}

int smb2_encrypt_nonce(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       uint64_t session_id, const uint8_t nonce[16],
		       const struct iovec *plain, int n, uint8_t *out)
{
	const struct crypto_algs *a = crypto_algs();
	struct crypto_kept tmp = { 0 };
	const EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx;
	uint8_t *ct = out + SMB2_TF_LEN;
	size_t total = 0, off;
	bool ccm;
	int i, outl, rc;

	if (!a)
		return -ENOPKG;
	c = aead_cipher(a, cipher, &ccm);
	if (!c || n < 0 || (n && !plain))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (plain[i].iov_len > (size_t)INT_MAX - SMB2_TF_LEN - total)
			return -EMSGSIZE;
		total += plain[i].iov_len;
	}
	if (!total)
		return -EINVAL;

	put_le32(out, SMB2_TF_PROTO);
	memset(out + SMB2_TF_SIG_OFF, 0, 16);
	memcpy(out + SMB2_TF_NONCE_OFF, nonce, 16);
	put_le32(out + SMB2_TF_SIZE_OFF, (uint32_t)total);
	put_le16(out + 40, 0);
	put_le16(out + SMB2_TF_FLAGS_OFF, SMB2_TF_FLAG_ENCRYPTED);
	put_le64(out + SMB2_TF_SESSION_OFF, session_id);

	ctx = crypto_kept_cipher(k ? k : &tmp);
	if (!ctx)
		return -ENOMEM;
	rc = aead_init(ctx, c, ccm, true, key, out + SMB2_TF_NONCE_OFF, NULL);
	if (rc)
		goto out_free_ctx;
	rc = -EIO;
	if (ccm) {
		/* CCM takes the whole plaintext in one update: gather first */
		for (i = 0, off = 0; i < n; i++) {
			if (plain[i].iov_len)
				memmove(ct + off, plain[i].iov_base,
					plain[i].iov_len);
			off += plain[i].iov_len;
		}
		if (EVP_EncryptUpdate(ctx, NULL, &outl, NULL, (int)total) != 1 ||
		    EVP_EncryptUpdate(ctx, NULL, &outl, out + SMB2_TF_NONCE_OFF,
				      32) != 1 ||
		    EVP_EncryptUpdate(ctx, ct, &outl, ct, (int)total) != 1)
			goto out_free_ctx;
	} else {
		if (EVP_EncryptUpdate(ctx, NULL, &outl, out + SMB2_TF_NONCE_OFF,
				      32) != 1)
			goto out_free_ctx;
		for (i = 0, off = 0; i < n; i++) {
			if (!plain[i].iov_len)
				continue;
			if (EVP_EncryptUpdate(ctx, ct + off, &outl,
					      plain[i].iov_base,
					      (int)plain[i].iov_len) != 1)
				goto out_free_ctx;
			off += plain[i].iov_len;
		}
	}
	if (EVP_EncryptFinal_ex(ctx, ct + total, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16,
				out + SMB2_TF_SIG_OFF) != 1)
		goto out_free_ctx;
	rc = (int)(SMB2_TF_LEN + total);
out_free_ctx:
	crypto_kept_free(&tmp);
	return rc;
}

int smb2_encrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		 uint64_t session_id, const struct iovec *plain, int n, uint8_t *out)
{
	uint8_t nonce[16] = { 0 };
	bool ccm = cipher == SMB2_CIPHER_AES128_CCM ||
		   cipher == SMB2_CIPHER_AES256_CCM;
	int rc;

	if (smb2_cipher_keylen(cipher) < 0)
		return -EINVAL;
	rc = crypto_random(nonce, ccm ? 11 : 12);
	if (rc)
		return rc;
	return smb2_encrypt_nonce(k, cipher, key, session_id, nonce, plain, n, out);
}

int smb2_nonce_gen_init(struct smb2_nonce_gen *g)
{
	g->ctr = 0;
	return crypto_random(g->salt, sizeof(g->salt));
}

int smb2_nonce_next(struct smb2_nonce_gen *g, uint16_t cipher,
		    uint8_t nonce[16])
{
	bool ccm = cipher == SMB2_CIPHER_AES128_CCM ||
		   cipher == SMB2_CIPHER_AES256_CCM;
	uint64_t n;

	if (smb2_cipher_keylen(cipher) < 0)
		return -EINVAL;
	n = __atomic_fetch_add(&g->ctr, 1, __ATOMIC_RELAXED);
	if (n == UINT64_MAX)
		return -EOVERFLOW;
	memset(nonce, 0, 16);
	put_le64(nonce, n);
	memcpy(nonce + 8, g->salt, ccm ? 3 : 4);
	return 0;
}

int smb2_decrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		 const uint8_t *msg, size_t len, uint8_t *out_plain)
{
	const struct crypto_algs *a = crypto_algs();
	struct crypto_kept tmp = { 0 };
	const uint8_t *ct = msg + SMB2_TF_LEN;
	const EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx;
	size_t clen;
	bool ccm;
	int outl, rc;

	if (!a)
		return -ENOPKG;
	c = aead_cipher(a, cipher, &ccm);
	if (!c)
		return -EINVAL;
	if (len <= SMB2_TF_LEN || len - SMB2_TF_LEN > (size_t)INT_MAX - 64)
		return -EBADMSG;
	clen = len - SMB2_TF_LEN;
	if (get_le32(msg) != SMB2_TF_PROTO ||
	    get_le32(msg + SMB2_TF_SIZE_OFF) != clen ||
	    get_le16(msg + SMB2_TF_FLAGS_OFF) != SMB2_TF_FLAG_ENCRYPTED)
		return -EBADMSG;

	ctx = crypto_kept_cipher(k ? k : &tmp);
	if (!ctx)
		return -ENOMEM;
	rc = aead_init(ctx, c, ccm, false, key, msg + SMB2_TF_NONCE_OFF,
		       msg + SMB2_TF_SIG_OFF);
	if (rc)
		goto out_free_ctx;
	rc = -EBADMSG;
	if (ccm) {
		if (EVP_DecryptUpdate(ctx, NULL, &outl, NULL, (int)clen) != 1 ||
		    EVP_DecryptUpdate(ctx, NULL, &outl, msg + SMB2_TF_NONCE_OFF,
				      32) != 1)
			goto out_free_ctx;
		/* the tag is checked here for CCM */
		if (EVP_DecryptUpdate(ctx, out_plain, &outl, ct, (int)clen) <= 0)
			goto out_wipe;
	} else {
		if (EVP_DecryptUpdate(ctx, NULL, &outl, msg + SMB2_TF_NONCE_OFF,
				      32) != 1 ||
		    EVP_DecryptUpdate(ctx, out_plain, &outl, ct,
				      (int)clen) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16,
					(void *)(msg + SMB2_TF_SIG_OFF)) != 1)
			goto out_wipe;
		if (EVP_DecryptFinal_ex(ctx, out_plain + clen, &outl) <= 0)
			goto out_wipe;
	}
	rc = (int)clen;
	goto out_free_ctx;
out_wipe:
	/* never hand out unauthenticated plaintext */
	OPENSSL_cleanse(out_plain, clen);
out_free_ctx:
	crypto_kept_free(&tmp);
	return rc;
}

int smb2_transform_session_id(const uint8_t *msg, size_t len, uint64_t *sid)
{
	if (len < SMB2_TF_LEN || get_le32(msg) != SMB2_TF_PROTO)
		return -EBADMSG;
	*sid = get_le64(msg + SMB2_TF_SESSION_OFF);
	return 0;
}

/* ---- the RDMA transform's payload ([MS-SMB2] 2.2.43.1) ---- */

static int iov_total(const struct iovec *iov, int n, size_t *total)
{
	int i;

	*total = 0;
	if (n < 0 || (n && !iov))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (iov[i].iov_len > (size_t)INT_MAX - *total)
			return -EMSGSIZE;
		*total += iov[i].iov_len;
	}
	return *total ? 0 : -EINVAL;
}

/* CCM takes its input in one update: iov gathered into tmp, or iov[0] itself. */
static uint8_t *ccm_flat(const struct iovec *iov, int n, size_t total, uint8_t **tmp)
{
	size_t off = 0;
	int i;

	*tmp = NULL;
	if (n == 1)
		return iov[0].iov_base;
	*tmp = malloc(total);
	if (!*tmp)
		return NULL;
	for (i = 0; i < n; i++) {
		memcpy(*tmp + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return *tmp;
}

static void ccm_scatter(const struct iovec *iov, int n, const uint8_t *flat)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(iov[i].iov_base, flat + off, iov[i].iov_len);
		off += iov[i].iov_len;
	}
}

/* ---- the payload in steps (AES-GCM, the signing algorithms) ---- */

static bool xpass_signs(enum smb2_xpass_op op)
{
	return op == SMB2_XPASS_SIGN || op == SMB2_XPASS_VERIFY;
}

bool smb2_xpass_can(enum smb2_xpass_op op, int alg)
{
	if (xpass_signs(op))
		return alg == SMB2_SIGN_AES_GMAC || alg == SMB2_SIGN_AES_CMAC ||
		       alg == SMB2_SIGN_HMAC_SHA256;
	return (op == SMB2_XPASS_ENCRYPT || op == SMB2_XPASS_DECRYPT) &&
	       (alg == SMB2_CIPHER_AES128_GCM || alg == SMB2_CIPHER_AES256_GCM);
}

/* HMAC-SHA256 or AES-CMAC, keyed, the nonce its first 12 bytes */
static int xpass_mac_begin(struct smb2_xpass *p, int alg, const uint8_t *key,
			   const uint8_t *nonce)
{
	EVP_MAC_CTX *ctx = crypto_kept_mac(p->k, alg == SMB2_SIGN_AES_CMAC);

	if (!ctx)
		return -ENOMEM;
	p->mac = true;
	if (EVP_MAC_init(ctx, key, 16, NULL) != 1 || EVP_MAC_update(ctx, nonce, 12) != 1)
		return -EIO;
	return 0;
}

int smb2_xpass_begin(struct smb2_xpass *p, struct crypto_kept *k, enum smb2_xpass_op op,
		     int alg, const uint8_t *key, const uint8_t *nonce)
{
	const struct crypto_algs *a = crypto_algs();
	const EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx;
	bool ccm;
	int rc;

	memset(p, 0, sizeof(*p));
	if (!a)
		return -ENOPKG;
	if (!k)
		return -EINVAL;
	if (!smb2_xpass_can(op, alg))
		return xpass_signs(op) || (alg != SMB2_CIPHER_AES128_CCM &&
					   alg != SMB2_CIPHER_AES256_CCM) ? -EINVAL : -EOPNOTSUPP;
	p->k = k;
	p->op = op;
	if (xpass_signs(op) && alg != SMB2_SIGN_AES_GMAC) {
		rc = xpass_mac_begin(p, alg, key, nonce);
		goto out;
	}
	/* AES-GMAC: AES-128-GCM with the payload as its additional data */
	c = xpass_signs(op) ? a->aes128_gcm : aead_cipher(a, (uint16_t)alg, &ccm);
	ctx = crypto_kept_cipher(k);
	if (!ctx) {
		rc = -ENOMEM;
		goto out;
	}
	rc = aead_init(ctx, c, false, op != SMB2_XPASS_DECRYPT, key, nonce, NULL);
out:
	if (rc)
		smb2_xpass_abort(p);
	return rc;
}

int smb2_xpass_step(struct smb2_xpass *p, const struct iovec *iov, int n)
{
	int i, outl, ok;

	if (!p->k || n < 0 || (n && !iov))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint8_t *b = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			int chunk = left > (1u << 30) ? 1 << 30 : (int)left;

			if (p->mac)
				ok = EVP_MAC_update(p->k->mctx, b, (size_t)chunk);
			else if (xpass_signs(p->op))
				ok = EVP_EncryptUpdate(p->k->cctx, NULL, &outl, b, chunk);
			else
				ok = EVP_CipherUpdate(p->k->cctx, b, &outl, b, chunk);
			if (ok != 1)
				return -EIO;
			b += chunk;
			left -= (size_t)chunk;
		}
	}
	return 0;
}

int smb2_xpass_end(struct smb2_xpass *p, uint8_t tag[16])
{
	bool dec = p->op == SMB2_XPASS_DECRYPT;
	uint8_t t[EVP_MAX_MD_SIZE], fin[16];
	size_t got = 0;
	int outl, rc = -EIO;

	if (!p->k) {
		rc = -EINVAL;
		goto out;
	}
	if (p->mac) {
		if (EVP_MAC_final(p->k->mctx, t, &got, sizeof(t)) != 1 || got < 16)
			goto out;
	} else {
		EVP_CIPHER_CTX *ctx = p->k->cctx;

		if (dec && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) != 1)
			goto out;
		if (EVP_CipherFinal_ex(ctx, fin, &outl) != 1) {
			rc = dec ? -EBADMSG : -EIO;
			goto out;
		}
		if (!dec && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, t) != 1)
			goto out;
	}
	rc = 0;
	if (p->op == SMB2_XPASS_VERIFY)
		rc = CRYPTO_memcmp(t, tag, 16) ? -EBADMSG : 0;
	else if (!dec)
		memcpy(tag, t, 16);
out:
	OPENSSL_cleanse(t, sizeof(t));
	smb2_xpass_abort(p);
	return rc;
}

void smb2_xpass_abort(struct smb2_xpass *p)
{
	/* the contexts stay with their owner: the next begin re-keys them */
	p->k = NULL;
	p->mac = false;
}

/* One pass over the whole payload; a DECRYPT that fails wipes it. */
static int xform_steps(struct crypto_kept *k, enum smb2_xpass_op op, int alg,
		       const uint8_t *key, const uint8_t *nonce, const struct iovec *iov, int n,
		       uint8_t tag[16])
{
	struct crypto_kept tmp = { 0 };
	struct smb2_xpass p;
	size_t total;
	int i, rc;

	rc = iov_total(iov, n, &total);
	if (rc)
		return rc;
	rc = smb2_xpass_begin(&p, k ? k : &tmp, op, alg, key, nonce);
	if (!rc) {
		rc = smb2_xpass_step(&p, iov, n);
		if (rc)
			smb2_xpass_abort(&p);
		else
			rc = smb2_xpass_end(&p, tag);
	}
	crypto_kept_free(&tmp);
	/* never leave unauthenticated plaintext behind */
	if (rc && op == SMB2_XPASS_DECRYPT)
		for (i = 0; i < n; i++)
			OPENSSL_cleanse(iov[i].iov_base, iov[i].iov_len);
	return rc;
}

/* AES-CCM, in place over iov (one update); enc: tag out, else tag checked (-EBADMSG). */
static int xform_ccm(struct crypto_kept *k, bool enc, uint16_t cipher, const uint8_t *key,
		     const uint8_t *nonce, const struct iovec *iov, int n, uint8_t tag[16])
{
	const struct crypto_algs *a = crypto_algs();
	uint8_t *flat = NULL, *tmp = NULL, fin[16];
	struct crypto_kept own = { 0 };
	const EVP_CIPHER *c;
	EVP_CIPHER_CTX *ctx;
	size_t total;
	bool ccm;
	int i, outl, rc;

	if (!a)
		return -ENOPKG;
	c = aead_cipher(a, cipher, &ccm);
	if (!c || !ccm)
		return -EINVAL;
	rc = iov_total(iov, n, &total);
	if (rc)
		return rc;
	ctx = crypto_kept_cipher(k ? k : &own);
	if (!ctx)
		return -ENOMEM;
	rc = aead_init(ctx, c, true, enc, key, nonce, enc ? NULL : tag);
	if (rc)
		goto out_free_ctx;
	rc = enc ? -EIO : -EBADMSG;
	flat = ccm_flat(iov, n, total, &tmp);
	if (!flat) {
		rc = -ENOMEM;
		goto out_free_ctx;
	}
	if (EVP_CipherUpdate(ctx, NULL, &outl, NULL, (int)total) != 1 ||
	    EVP_CipherUpdate(ctx, flat, &outl, flat, (int)total) != 1)
		goto out_wipe;
	if (tmp)
		ccm_scatter(iov, n, tmp);
	/* a decrypt checked its tag in the update */
	if (enc && (EVP_CipherFinal_ex(ctx, fin, &outl) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1))
		goto out_wipe;
	rc = 0;
	goto out_free;
out_wipe:
	/* never leave unauthenticated plaintext behind */
	if (!enc)
		for (i = 0; i < n; i++)
			OPENSSL_cleanse(iov[i].iov_base, iov[i].iov_len);
out_free:
	if (tmp) {
		OPENSSL_cleanse(tmp, total);
		free(tmp);
	}
out_free_ctx:
	crypto_kept_free(&own);
	return rc;
}

int smb2_xform_encrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       const uint8_t *nonce, const struct iovec *iov, int n, uint8_t tag[16])
{
	if (smb2_xpass_can(SMB2_XPASS_ENCRYPT, cipher))
		return xform_steps(k, SMB2_XPASS_ENCRYPT, cipher, key, nonce, iov, n, tag);
	return xform_ccm(k, true, cipher, key, nonce, iov, n, tag);
}

int smb2_xform_decrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       const uint8_t *nonce, const struct iovec *iov, int n,
		       const uint8_t tag[16])
{
	uint8_t t[16];

	memcpy(t, tag, 16);
	if (smb2_xpass_can(SMB2_XPASS_DECRYPT, cipher))
		return xform_steps(k, SMB2_XPASS_DECRYPT, cipher, key, nonce, iov, n, t);
	return xform_ccm(k, false, cipher, key, nonce, iov, n, t);
}

int smb2_xform_sign(struct crypto_kept *k, int alg, const uint8_t key[16],
		    const uint8_t nonce[12], const struct iovec *iov, int n, uint8_t sig[16])
{
	return xform_steps(k, SMB2_XPASS_SIGN, alg, key, nonce, iov, n, sig);
}

int smb2_xform_verify(struct crypto_kept *k, int alg, const uint8_t key[16],
		      const uint8_t nonce[12], const struct iovec *iov, int n,
		      const uint8_t sig[16])
{
	uint8_t s[16];

	memcpy(s, sig, 16);
	return xform_steps(k, SMB2_XPASS_VERIFY, alg, key, nonce, iov, n, s);
}
