/* SPDX-License-Identifier: MIT */
/* NTLMv2 one-way functions and NTLM2 session security ([MS-NLMP] 3.3, 3.4). */
#ifndef RDAX_CRYPTO_NTLM_H
#define RDAX_CRYPTO_NTLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct crypto_rc4;

/* NT hash = MD4(UTF-16LE(password)); -EILSEQ for invalid UTF-8. */
int ntlm_nt_hash(const char *password_utf8, uint8_t out[16]);

/*
 * NTOWFv2 = HMAC_MD5(nt_hash, UTF-16LE(UPPER(user)) || UTF-16LE(domain)).
 * The _utf16 variant takes wire UTF-16LE and upper-cases a copy of user.
 */
int ntlm_ntowfv2(const uint8_t nt_hash[16], const char *user_utf8,
		 const char *domain_utf8, uint8_t out[16]);
int ntlm_ntowfv2_utf16(const uint8_t nt_hash[16], const uint8_t *user16,
		       size_t ulen, const uint8_t *dom16, size_t dlen,
		       uint8_t out[16]);

/* NTProofStr = HMAC_MD5(NTOWFv2, server_chal || blob), blob = "temp". */
int ntlm_v2_proof(const uint8_t ntowfv2[16], const uint8_t server_chal[8],
		  const uint8_t *blob, size_t blen, uint8_t proof[16]);

/* SessionBaseKey = HMAC_MD5(NTOWFv2, NTProofStr) (= KeyExchangeKey). */
int ntlm_v2_session_base_key(const uint8_t ntowfv2[16],
			     const uint8_t proof[16], uint8_t key[16]);

/* LMv2 = HMAC_MD5(NTOWFv2, server_chal || client_chal) || client_chal. */
int ntlm_lmv2_response(const uint8_t ntowfv2[16],
		       const uint8_t server_chal[8],
		       const uint8_t client_chal[8], uint8_t out[24]);

/* Offset and size of the MIC field in an AUTHENTICATE message. */
#define NTLM_MIC_OFF 72
#define NTLM_MIC_LEN 16

/*
 * MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE ||
 * AUTHENTICATE) with the AUTHENTICATE MIC field taken as zero (the input
 * is not modified). -EINVAL if alen < 88.
 */
int ntlm_mic(const uint8_t exported[16], const uint8_t *neg, size_t nlen,
	     const uint8_t *chal, size_t clen, const uint8_t *auth,
	     size_t alen, uint8_t mic[16]);

/* Session security keys ([MS-NLMP] 3.4.5.2/3.4.5.3); client = C->S key. */
int ntlm_sign_key(const uint8_t exported[16], bool client, uint8_t out[16]);
int ntlm_seal_key(const uint8_t exported[16], uint32_t flags, bool client,
		  uint8_t out[16]);

/*
 * NTLM2 session security with extended session security (GSS_GetMIC,
 * GSS_VerifyMIC, GSS_WrapEx/UnwrapEx of [MS-NLMP] 3.4.3/3.4.4.2). One
 * sealing handle and sequence number per direction. -EOPNOTSUPP without
 * NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY.
 */
struct ntlm_sec {
	uint8_t sign_out[16];
	uint8_t sign_in[16];
	struct crypto_rc4 *seal_out;
	struct crypto_rc4 *seal_in;
	uint32_t seq_out;
	uint32_t seq_in;
	bool key_exch;
};

/* flags = the negotiated NTLMSSP flags; client selects the direction. */
int ntlm_sec_init(struct ntlm_sec *s, const uint8_t exported[16],
		  uint32_t flags, bool client);
void ntlm_sec_free(struct ntlm_sec *s);
int ntlm_sec_sign(struct ntlm_sec *s, const void *msg, size_t len,
		  uint8_t sig[16]);
/* 0 or -EBADMSG. */
int ntlm_sec_verify(struct ntlm_sec *s, const void *msg, size_t len,
		    const uint8_t sig[16]);
int ntlm_sec_seal(struct ntlm_sec *s, const void *in, void *out, size_t len,
		  uint8_t sig[16]);
int ntlm_sec_unseal(struct ntlm_sec *s, const void *in, void *out,
		    size_t len, const uint8_t sig[16]);

#endif
