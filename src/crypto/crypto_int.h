/* SPDX-License-Identifier: MIT */
/* Internal: the algorithms fetched once by crypto_init(). */
#ifndef RDAX_CRYPTO_CRYPTO_INT_H
#define RDAX_CRYPTO_CRYPTO_INT_H

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

#endif
