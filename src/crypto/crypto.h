/* SPDX-License-Identifier: MIT */
/* Cryptographic primitives and SMB2/3 signing, KDF and encryption. */
#ifndef RDAX_CRYPTO_CRYPTO_H
#define RDAX_CRYPTO_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/*
 * Every function returns 0 (or a length) on success and -errno on
 * failure. All of them call crypto_init() themselves; calling it early
 * only moves the cost (and reports a missing legacy provider sooner).
 * Algorithms come from a private OpenSSL library context, so loading the
 * legacy provider does not change the host application's OpenSSL state.
 */

/* Idempotent and thread-safe; -ENOPKG if a provider/algorithm is missing. */
int crypto_init(void);

int crypto_random(void *buf, size_t n);

/* Hashes and MACs; an iovec list is hashed as its concatenation. */
int crypto_md4(const void *data, size_t len, uint8_t out[16]);
int crypto_md5v(const struct iovec *iov, int n, uint8_t out[16]);
int crypto_hmac_md5v(const uint8_t *key, size_t klen,
		     const struct iovec *iov, int n, uint8_t out[16]);
int crypto_hmac_md5(const uint8_t *key, size_t klen, const void *data,
		    size_t len, uint8_t out[16]);
int crypto_hmac_sha256v(const uint8_t *key, size_t klen,
			const struct iovec *iov, int n, uint8_t out[32]);
int crypto_sha512v(const struct iovec *iov, int n, uint8_t out[64]);
int crypto_aes_cmacv(const uint8_t key[16], const struct iovec *iov, int n,
		     uint8_t out[16]);
/* AES-128-GMAC: GCM with the iovecs as AAD, empty plaintext, tag = MAC. */
int crypto_aes_gmacv(const uint8_t key[16], const uint8_t nonce[12],
		     const struct iovec *iov, int n, uint8_t tag[16]);

/*
 * OpenSSL contexts kept by an owner that one thread uses at a time (a
 * connection, a transfer), so that signing and encrypting a message
 * allocates nothing: made at first use, re-keyed for each message,
 * freed by crypto_kept_free(). Zeroed is empty. A call that takes one
 * and gets NULL makes and frees contexts for that call alone.
 */
struct crypto_kept {
	void *cctx;			/* EVP_CIPHER_CTX: AES-GCM, AES-CCM, AES-GMAC */
	void *mctx;			/* EVP_MAC_CTX: HMAC-SHA256 or AES-CMAC */
};

/* Frees what k holds and leaves it empty (NULL: nothing). */
void crypto_kept_free(struct crypto_kept *k);

/* hash = SHA-512(hash || iov...), the SMB 3.1.1 preauth integrity update. */
int crypto_preauth_update(uint8_t hash[64], const struct iovec *iov, int n);

/* One-shot RC4 (in == out allowed). */
int crypto_rc4(const uint8_t *key, size_t klen, const void *in, void *out,
	       size_t len);

/* Stateful RC4 stream (NTLM sealing handles). */
struct crypto_rc4;
int crypto_rc4_new(struct crypto_rc4 **out, const uint8_t *key, size_t klen);
int crypto_rc4_update(struct crypto_rc4 *h, const void *in, void *out,
		      size_t len);
void crypto_rc4_delete(struct crypto_rc4 **h);

/*
 * SP800-108 counter-mode KDF, PRF HMAC-SHA256, r = 32, one block:
 * out = HMAC-SHA256(key, 00000001 || label || 00 || context || L)[0..outlen)
 * with L = outlen * 8; outlen 16 or 32. label/context include their NUL
 * as [MS-SMB2] 3.1.4.2 (and protocol-facts B.4) spell them.
 */
int smb3_kdf(const uint8_t *key, size_t klen, const void *label, size_t llen,
	     const void *context, size_t clen, uint8_t *out, size_t outlen);

/* Dialects and cipher ids ([MS-SMB2] 2.2.3.1.2). */
#define SMB2_DIALECT_202 0x0202
#define SMB2_DIALECT_210 0x0210
#define SMB2_DIALECT_300 0x0300
#define SMB2_DIALECT_302 0x0302
#define SMB2_DIALECT_311 0x0311

#define SMB2_CIPHER_NONE 0
#define SMB2_CIPHER_AES128_CCM 1
#define SMB2_CIPHER_AES128_GCM 2
#define SMB2_CIPHER_AES256_CCM 3
#define SMB2_CIPHER_AES256_GCM 4

/*
 * Session keys. c2s = client->server (client encrypts, server decrypts),
 * s2c = server->client. Only the first cipher_keylen bytes of c2s/s2c
 * are used (16, or 32 for AES-256; 0 for 2.x).
 */
struct smb3_keys {
	uint8_t signing[16];
	uint8_t c2s[32];
	uint8_t s2c[32];
	uint8_t app[16];
	unsigned int cipher_keylen;
};

/*
 * Derive the keys of [MS-SMB2] 3.2.5.3.1 / 3.3.5.5.3 from the 16-byte
 * session key. 2.0.2/2.1: signing = app = session key (sign with
 * SMB2_SIGN_HMAC_SHA256), no cipher keys. 3.0/3.0.2: fixed labels,
 * cipher 0 or 1 (16-byte CCM keys). 3.1.1: preauth (64 bytes) is the
 * context and must not be NULL; cipher 0..4 (0: 16-byte keys derived
 * anyway). -EINVAL for anything else.
 */
int smb3_derive_keys(uint16_t dialect, const uint8_t session_key[16],
		     const uint8_t *preauth, uint16_t cipher,
		     struct smb3_keys *out);

/* Signing algorithm ids = [MS-SMB2] 2.2.3.1.7 SIGNING_CAPABILITIES. */
#define SMB2_SIGN_HMAC_SHA256 0
#define SMB2_SIGN_AES_CMAC 1
#define SMB2_SIGN_AES_GMAC 2

#define SMB2_HDR_LEN 64
#define SMB2_SIG_OFF 48
#define SMB2_SIG_LEN 16

/*
 * Signature of one SMB2 PDU (64-byte header + body + padding up to
 * NextCommand) with its Signature field taken as zero; the input is not
 * modified. -EBADMSG if len < 64, -EINVAL for an unknown alg.
 */
int smb2_sign_compute(struct crypto_kept *k, int alg, const uint8_t key[16],
		      const uint8_t *pdu, size_t len, uint8_t sig[16]);

/* Check the Signature field in constant time: 0 or -EBADMSG. */
int smb2_sign_verify(struct crypto_kept *k, int alg, const uint8_t key[16],
		     const uint8_t *pdu, size_t len);

/* [MS-SMB2] 2.2.41 TRANSFORM_HEADER, 52 bytes. */
#define SMB2_TF_LEN 52
#define SMB2_TF_SIG_OFF 4
#define SMB2_TF_NONCE_OFF 20
#define SMB2_TF_SIZE_OFF 36
#define SMB2_TF_FLAGS_OFF 42
#define SMB2_TF_SESSION_OFF 44
#define SMB2_TF_FLAG_ENCRYPTED 0x0001

/* Key length of a cipher id: 16, 32, or -EINVAL. */
int smb2_cipher_keylen(uint16_t cipher);

/*
 * Encrypt the concatenated plaintext iovecs into a complete transform
 * message at out, which must hold SMB2_TF_LEN + total plaintext bytes.
 * The nonce is random (11 bytes for CCM, 12 for GCM, rest zero). key is
 * cipher_keylen bytes. Returns the message length or -errno. A single
 * iovec located exactly at out + SMB2_TF_LEN is encrypted in place; any
 * other overlap between plaintext and out is not allowed.
 */
int smb2_encrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		 uint64_t session_id, const struct iovec *plain, int n, uint8_t *out);

/* Same with a caller-chosen 16-byte Nonce field (tests, known answers). */
int smb2_encrypt_nonce(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       uint64_t session_id, const uint8_t nonce[16],
		       const struct iovec *plain, int n, uint8_t *out);

/*
 * Unique transform nonces for one key without the random-nonce limit
 * (about 2^32 messages per key for GCM): a 64-bit counter followed by a
 * random salt (3 bytes for CCM, 4 for GCM), rest zero. Share one
 * generator per session key across all channels; smb2_nonce_next() is
 * thread-safe (atomic counter). Use with smb2_encrypt_nonce().
 */
struct smb2_nonce_gen {
	uint64_t ctr;
	uint8_t salt[4];
};

int smb2_nonce_gen_init(struct smb2_nonce_gen *g);
int smb2_nonce_next(struct smb2_nonce_gen *g, uint16_t cipher,
		    uint8_t nonce[16]);

/*
 * Validate and decrypt a transform message (protocol id, len >= 52,
 * OriginalMessageSize == len - 52 and > 0, Flags == 1). out_plain needs
 * len - 52 bytes; out_plain == msg + SMB2_TF_LEN (in place) is allowed.
 * Returns the plaintext length, or -EBADMSG when malformed or when the
 * authentication tag does not match (out_plain content is then
 * unspecified and must not be used).
 */
int smb2_decrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		 const uint8_t *msg, size_t len, uint8_t *out_plain);

/*
 * The RDMA transform's payload ([MS-SMB2] 2.2.43.1; what rdax does
 * where the spec is silent: docs/rdma-transform.md). In place over the
 * iovecs: encrypted with the session's cipher and key, nonce of 11 (CCM)
 * or 12 (GCM) bytes, no additional data, tag = Signature. Decrypt checks
 * the tag: -EBADMSG (the iovecs are then wiped). CCM over more than one
 * iovec goes through a temporary copy.
 */
int smb2_xform_encrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       const uint8_t *nonce, const struct iovec *iov, int n, uint8_t tag[16]);
int smb2_xform_decrypt(struct crypto_kept *k, uint16_t cipher, const uint8_t *key,
		       const uint8_t *nonce, const struct iovec *iov, int n,
		       const uint8_t tag[16]);
/*
 * Signed payload: the session's signing algorithm and key over
 * nonce (12 bytes) || payload (AES-GMAC: the nonce is GMAC's IV, the
 * payload its AAD). At most 32 iovecs. Verify: 0 or -EBADMSG.
 */
int smb2_xform_sign(struct crypto_kept *k, int alg, const uint8_t key[16],
		    const uint8_t nonce[12], const struct iovec *iov, int n, uint8_t sig[16]);
int smb2_xform_verify(struct crypto_kept *k, int alg, const uint8_t key[16],
		      const uint8_t nonce[12], const struct iovec *iov, int n,
		      const uint8_t sig[16]);

/*
 * The same payload crypto in steps, for a payload that arrives or leaves
 * in pieces (rdaxd's pipelined RDMA): begin, step over each piece in
 * order (in place), end. AES-GCM and all three signing algorithms; CCM
 * takes its input in one call (-EOPNOTSUPP: use the one-shot calls).
 * end writes the tag (ENCRYPT, SIGN) or checks it (DECRYPT, VERIFY:
 * -EBADMSG; a DECRYPT's pieces then hold unauthenticated plaintext: the
 * caller wipes them). end and abort end the pass (its contexts are kept);
 * abort of a pass never begun or already ended does nothing.
 */
enum smb2_xpass_op {
	SMB2_XPASS_ENCRYPT = 1,
	SMB2_XPASS_DECRYPT,
	SMB2_XPASS_SIGN,
	SMB2_XPASS_VERIFY,
};

struct smb2_xpass {
	struct crypto_kept *k;		/* the contexts it runs on; NULL: not begun */
	enum smb2_xpass_op op;
	bool mac;			/* HMAC-SHA256, AES-CMAC: k->mctx; else k->cctx */
};

/*
 * alg: the cipher (ENCRYPT, DECRYPT) or the signing algorithm (SIGN,
 * VERIFY). The pass runs on k's contexts (not NULL), which stay k's:
 * one pass at a time per k.
 */
int smb2_xpass_begin(struct smb2_xpass *p, struct crypto_kept *k, enum smb2_xpass_op op,
		     int alg, const uint8_t *key, const uint8_t *nonce);
int smb2_xpass_step(struct smb2_xpass *p, const struct iovec *iov, int n);
int smb2_xpass_end(struct smb2_xpass *p, uint8_t tag[16]);
void smb2_xpass_abort(struct smb2_xpass *p);
/* 1 if smb2_xpass_begin takes (op, alg) */
bool smb2_xpass_can(enum smb2_xpass_op op, int alg);

/* SessionId of a transform message (LE u64 at 44): 0 or -EBADMSG. */
int smb2_transform_session_id(const uint8_t *msg, size_t len,
			      uint64_t *sid);

#endif
