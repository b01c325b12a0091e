/* SPDX-License-Identifier: MIT */
/* Internal: the algorithms fetched once by crypto_init(). */
#ifndef RDAX_CRYPTO_CRYPTO_INT_H
#define RDAX_CRYPTO_CRYPTO_INT_H

#include <stdbool.h>

#include <openssl/evp.h>

/* Read-only after crypto_init() succeeded. */
struct crypto_algs {
	OSSL_LIB_CTX *lib;
	EVP_MD *md4;
	EVP_MD *md5;
	EVP_MD *sha256;
	EVP_MD *sha512;
	EVP_MAC *hmac;
	EVP_MAC *cmac;
	EVP_CIPHER *rc4;
	EVP_CIPHER *aes128_ccm;
	EVP_CIPHER *aes128_gcm;
	EVP_CIPHER *aes256_ccm;
	EVP_CIPHER *aes256_gcm;
};

/* NULL if crypto_init() failed. */
const struct crypto_algs *crypto_algs(void);

struct crypto_kept;

/* k's cipher context, made at first use; NULL: out of memory. */
EVP_CIPHER_CTX *crypto_kept_cipher(struct crypto_kept *k);
/*
 * k's MAC context of HMAC-SHA256 (cmac false) or AES-128-CMAC, its
 * algorithm set: key it with EVP_MAC_init(ctx, key, 16, NULL). Made at
 * first use or when the algorithm changes; NULL: out of memory.
 */
EVP_MAC_CTX *crypto_kept_mac(struct crypto_kept *k, bool cmac);

#endif
