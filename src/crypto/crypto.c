// SPDX-License-Identifier: MIT
/* OpenSSL set-up and the generic primitives (hashes, MACs, RC4, KDF). */
#include "crypto/crypto.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "crypto/crypto_int.h"
#include "util/bytes.h"

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static int crypto_init_rc;
static struct crypto_algs algs;
static OSSL_PROVIDER *prov_default;
static OSSL_PROVIDER *prov_legacy;

static void crypto_do_init(void)
{
	OSSL_LIB_CTX *lib;

	lib = OSSL_LIB_CTX_new();
	if (!lib) {
		crypto_init_rc = -ENOMEM;
		return;
	}
	prov_default = OSSL_PROVIDER_load(lib, "default");
	if (!prov_default)
		goto out_free_lib;
	/* MD4 and RC4 live in the legacy provider in OpenSSL 3 */
	prov_legacy = OSSL_PROVIDER_load(lib, "legacy");
	if (!prov_legacy)
		goto out_unload_default;

	algs.lib = lib;
	algs.md4 = EVP_MD_fetch(lib, "MD4", NULL);
	algs.md5 = EVP_MD_fetch(lib, "MD5", NULL);
	algs.sha256 = EVP_MD_fetch(lib, "SHA256", NULL);
	algs.sha512 = EVP_MD_fetch(lib, "SHA512", NULL);
	algs.hmac = EVP_MAC_fetch(lib, "HMAC", NULL);
	algs.cmac = EVP_MAC_fetch(lib, "CMAC", NULL);
	algs.rc4 = EVP_CIPHER_fetch(lib, "RC4", NULL);
	algs.aes128_ccm = EVP_CIPHER_fetch(lib, "AES-128-CCM", NULL);
	algs.aes128_gcm = EVP_CIPHER_fetch(lib, "AES-128-GCM", NULL);
	algs.aes256_ccm = EVP_CIPHER_fetch(lib, "AES-256-CCM", NULL);
	algs.aes256_gcm = EVP_CIPHER_fetch(lib, "AES-256-GCM", NULL);
	if (algs.md4 && algs.md5 && algs.sha256 && algs.sha512 && algs.hmac &&
	    algs.cmac && algs.rc4 && algs.aes128_ccm && algs.aes128_gcm &&
	    algs.aes256_ccm && algs.aes256_gcm) {
		crypto_init_rc = 0;
		return;
	}

	EVP_MD_free(algs.md4);
	EVP_MD_free(algs.md5);
	EVP_MD_free(algs.sha256);
	EVP_MD_free(algs.sha512);
	EVP_MAC_free(algs.hmac);
	EVP_MAC_free(algs.cmac);
	EVP_CIPHER_free(algs.rc4);
	EVP_CIPHER_free(algs.aes128_ccm);
	EVP_CIPHER_free(algs.aes128_gcm);
	EVP_CIPHER_free(algs.aes256_ccm);
	EVP_CIPHER_free(algs.aes256_gcm);
	memset(&algs, 0, sizeof(algs));
	OSSL_PROVIDER_unload(prov_legacy);
	prov_legacy = NULL;
out_unload_default:
	OSSL_PROVIDER_unload(prov_default);
	prov_default = NULL;
out_free_lib:
	OSSL_LIB_CTX_free(lib);
	crypto_init_rc = -ENOPKG;
}

int crypto_init(void)
{
	if (pthread_once(&crypto_once, crypto_do_init))
		return -EAGAIN;
	return crypto_init_rc;
}

const struct crypto_algs *crypto_algs(void)
{
	return crypto_init() ? NULL : &algs;
}

int crypto_random(void *buf, size_t n)
{
	int rc = crypto_init();

	if (rc)
		return rc;
	if (n > INT_MAX)
		return -EINVAL;
	if (n && RAND_bytes_ex(algs.lib, buf, n, 0) != 1)
		return -EIO;
	return 0;
}

/* Digest of prefix || iov... (prefix may be NULL). */
static int digestv(const EVP_MD *md, const void *pre, size_t plen,
		   const struct iovec *iov, int n, uint8_t *out)
{
	EVP_MD_CTX *ctx;
	int i, rc = -EIO;

	if (n < 0 || (n && !iov))
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1)
		goto out_free_ctx;
	if (plen && EVP_DigestUpdate(ctx, pre, plen) != 1)
		goto out_free_ctx;
	for (i = 0; i < n; i++)
		if (iov[i].iov_len &&
		    EVP_DigestUpdate(ctx, iov[i].iov_base, iov[i].iov_len) != 1)
			goto out_free_ctx;
	if (EVP_DigestFinal_ex(ctx, out, NULL) == 1)
		rc = 0;
out_free_ctx:
	EVP_MD_CTX_free(ctx);
	return rc;
}

int crypto_md4(const void *data, size_t len, uint8_t out[16])
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	int rc = crypto_init();

	return rc ? rc : digestv(algs.md4, NULL, 0, &iov, 1, out);
}

int crypto_md5v(const struct iovec *iov, int n, uint8_t out[16])
{
	int rc = crypto_init();

	return rc ? rc : digestv(algs.md5, NULL, 0, iov, n, out);
}

int crypto_sha512v(const struct iovec *iov, int n, uint8_t out[64])
{
	int rc = crypto_init();

	return rc ? rc : digestv(algs.sha512, NULL, 0, iov, n, out);
}

int crypto_preauth_update(uint8_t hash[64], const struct iovec *iov, int n)
{
	int rc = crypto_init();

	return rc ? rc : digestv(algs.sha512, hash, 64, iov, n, hash);
}

/* HMAC or CMAC over an iovec list; sub names the digest or cipher. */
static int macv(EVP_MAC *mac, const char *pname, const char *sub,
		const uint8_t *key, size_t klen, const struct iovec *iov,
		int n, uint8_t *out, size_t outlen)
{
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx;
	uint8_t buf[EVP_MAX_MD_SIZE];
	size_t got = 0;
	int i, rc = -EIO;

	if (n < 0 || (n && !iov))
		return -EINVAL;
	ctx = EVP_MAC_CTX_new(mac);
	if (!ctx)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_utf8_string(pname, (char *)sub, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_init(ctx, key, klen, params) != 1)
		goto out_free_ctx;
	for (i = 0; i < n; i++)
		if (iov[i].iov_len &&
		    EVP_MAC_update(ctx, iov[i].iov_base, iov[i].iov_len) != 1)
			goto out_free_ctx;
	if (EVP_MAC_final(ctx, buf, &got, sizeof(buf)) != 1 || got < outlen)
		goto out_wipe;
	memcpy(out, buf, outlen);
	rc = 0;
out_wipe:
	OPENSSL_cleanse(buf, sizeof(buf));
out_free_ctx:
	EVP_MAC_CTX_free(ctx);
	return rc;
}

void crypto_kept_free(struct crypto_kept *k)
{
	if (!k)
		return;
	EVP_CIPHER_CTX_free(k->cctx);
	EVP_MAC_CTX_free(k->mctx);
	k->cctx = NULL;
	k->mctx = NULL;
}

EVP_CIPHER_CTX *crypto_kept_cipher(struct crypto_kept *k)
{
	if (!k->cctx)
		k->cctx = EVP_CIPHER_CTX_new();
	return k->cctx;
}

EVP_MAC_CTX *crypto_kept_mac(struct crypto_kept *k, bool cmac)
{
	EVP_MAC *mac = cmac ? algs.cmac : algs.hmac;
	OSSL_PARAM params[2];

	if (k->mctx && EVP_MAC_CTX_get0_mac(k->mctx) == mac)
		return k->mctx;
	EVP_MAC_CTX_free(k->mctx);
	k->mctx = EVP_MAC_CTX_new(mac);
	if (!k->mctx)
		return NULL;
	/* set once: setting the digest or cipher by name fetches it each time */
	params[0] = OSSL_PARAM_construct_utf8_string(cmac ? OSSL_MAC_PARAM_CIPHER :
							    OSSL_MAC_PARAM_DIGEST,
						     (char *)(cmac ? "AES-128-CBC" : "SHA256"), 0);
	params[1] = OSSL_PARAM_construct_end();
	if (EVP_MAC_CTX_set_params(k->mctx, params) != 1) {
		EVP_MAC_CTX_free(k->mctx);
		k->mctx = NULL;
	}
	return k->mctx;
}

int crypto_hmac_md5v(const uint8_t *key, size_t klen,
		     const struct iovec *iov, int n, uint8_t out[16])
{
	int rc = crypto_init();

	return rc ? rc : macv(algs.hmac, OSSL_MAC_PARAM_DIGEST, "MD5", key,
			      klen, iov, n, out, 16);
}

int crypto_hmac_md5(const uint8_t *key, size_t klen, const void *data,
		    size_t len, uint8_t out[16])
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };

	return crypto_hmac_md5v(key, klen, &iov, 1, out);
}

int crypto_hmac_sha256v(const uint8_t *key, size_t klen,
			const struct iovec *iov, int n, uint8_t out[32])
{
	int rc = crypto_init();

	return rc ? rc : macv(algs.hmac, OSSL_MAC_PARAM_DIGEST, "SHA256", key,
			      klen, iov, n, out, 32);
}

int crypto_aes_cmacv(const uint8_t key[16], const struct iovec *iov, int n,
		     uint8_t out[16])
{
	int rc = crypto_init();

	return rc ? rc : macv(algs.cmac, OSSL_MAC_PARAM_CIPHER, "AES-128-CBC",
			      key, 16, iov, n, out, 16);
}

struct crypto_rc4 {
	EVP_CIPHER_CTX *ctx;
};

int crypto_rc4_new(struct crypto_rc4 **out, const uint8_t *key, size_t klen)
{
	struct crypto_rc4 *h;
	int rc = crypto_init();

	*out = NULL;
	if (rc)
		return rc;
	if (!klen || klen > 256)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ctx = EVP_CIPHER_CTX_new();
	if (!h->ctx) {
		rc = -ENOMEM;
		goto out_free_h;
	}
	if (EVP_EncryptInit_ex2(h->ctx, algs.rc4, NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_key_length(h->ctx, (int)klen) != 1 ||
	    EVP_EncryptInit_ex2(h->ctx, NULL, key, NULL, NULL) != 1) {
		rc = -EIO;
		goto out_free_ctx;
	}
	*out = h;
	return 0;
out_free_ctx:
	EVP_CIPHER_CTX_free(h->ctx);
out_free_h:
	free(h);
	return rc;
}

int crypto_rc4_update(struct crypto_rc4 *h, const void *in, void *out,
		      size_t len)
{
	const uint8_t *s = in;
	uint8_t *d = out;

	while (len) {
		int chunk = len > (1u << 30) ? 1 << 30 : (int)len;
		int outl = 0;

		if (EVP_EncryptUpdate(h->ctx, d, &outl, s, chunk) != 1 ||
		    outl != chunk)
			return -EIO;
		s += chunk;
		d += chunk;
		len -= (size_t)chunk;
	}
	return 0;
}

void crypto_rc4_delete(struct crypto_rc4 **h)
{
	if (!h || !*h)
		return;
	EVP_CIPHER_CTX_free((*h)->ctx);
	free(*h);
	*h = NULL;
}

int crypto_rc4(const uint8_t *key, size_t klen, const void *in, void *out,
	       size_t len)
{
	struct crypto_rc4 *h;
	int rc;

	rc = crypto_rc4_new(&h, key, klen);
	if (rc)
		return rc;
	rc = crypto_rc4_update(h, in, out, len);
	crypto_rc4_delete(&h);
	return rc;
}

int smb3_kdf(const uint8_t *key, size_t klen, const void *label, size_t llen,
	     const void *context, size_t clen, uint8_t *out, size_t outlen)
{
	static const uint8_t one[4] = { 0, 0, 0, 1 };
	static const uint8_t zero;
	uint8_t l[4], mac[32];
	struct iovec iov[5];
	int rc;

	if (outlen != 16 && outlen != 32)
		return -EINVAL;
	put_be32(l, (uint32_t)(outlen * 8));
	iov[0] = (struct iovec){ (void *)one, 4 };
	iov[1] = (struct iovec){ (void *)label, llen };
	iov[2] = (struct iovec){ (void *)&zero, 1 };
	iov[3] = (struct iovec){ (void *)context, clen };
	iov[4] = (struct iovec){ l, 4 };
	rc = crypto_hmac_sha256v(key, klen, iov, 5, mac);
	if (!rc)
		memcpy(out, mac, outlen);
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}
