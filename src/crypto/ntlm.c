// SPDX-License-Identifier: MIT
/* NTLMv2 one-way functions and NTLM2 session security ([MS-NLMP] 3.3, 3.4). */
#include "crypto/ntlm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "crypto/crypto.h"
#include "proto/ntlmssp.h"
#include "util/bytes.h"
#include "util/utf16.h"

/* UTF-8 -> freshly allocated UTF-16LE (*out), returns its length. */
static int to_utf16(const char *s, uint8_t **out)
{
	int n = utf8_to_utf16le(s, NULL, 0);

	*out = NULL;
	if (n < 0)
		return n;
	*out = malloc((size_t)n + 1);
	if (!*out)
		return -ENOMEM;
	return utf8_to_utf16le(s, *out, (size_t)n + 1);
}

int ntlm_nt_hash(const char *password_utf8, uint8_t out[16])
{
	uint8_t *pw;
	int n, rc;

	n = to_utf16(password_utf8, &pw);
	if (n < 0)
		return n;
	rc = crypto_md4(pw, (size_t)n, out);
	OPENSSL_cleanse(pw, (size_t)n);
	free(pw);
	return rc;
}

int ntlm_ntowfv2_utf16(const uint8_t nt_hash[16], const uint8_t *user16,
		       size_t ulen, const uint8_t *dom16, size_t dlen,
		       uint8_t out[16])
{
	struct iovec iov[2];
	uint8_t *up;
	int rc;

	up = malloc(ulen + 1);
	if (!up)
		return -ENOMEM;
	if (ulen)
		memcpy(up, user16, ulen);
	utf16le_upper(up, ulen);
	iov[0] = (struct iovec){ up, ulen };
	iov[1] = (struct iovec){ (void *)dom16, dlen };
	rc = crypto_hmac_md5v(nt_hash, 16, iov, 2, out);
	free(up);
	return rc;
}

int ntlm_ntowfv2(const uint8_t nt_hash[16], const char *user_utf8,
		 const char *domain_utf8, uint8_t out[16])
{
	uint8_t *u, *d;
	int ul, dl, rc;

	ul = to_utf16(user_utf8, &u);
	if (ul < 0)
		return ul;
	dl = to_utf16(domain_utf8 ? domain_utf8 : "", &d);
	if (dl < 0) {
		rc = dl;
		goto out_free_user;
	}
	rc = ntlm_ntowfv2_utf16(nt_hash, u, (size_t)ul, d, (size_t)dl, out);
	free(d);
out_free_user:
	free(u);
	return rc;
}

int ntlm_v2_proof(const uint8_t ntowfv2[16], const uint8_t server_chal[8],
		  const uint8_t *blob, size_t blen, uint8_t proof[16])
{
	struct iovec iov[2] = {
		{ (void *)server_chal, 8 },
		{ (void *)blob, blen },
	};

	return crypto_hmac_md5v(ntowfv2, 16, iov, 2, proof);
}

int ntlm_v2_session_base_key(const uint8_t ntowfv2[16],
			     const uint8_t proof[16], uint8_t key[16])
{
	return crypto_hmac_md5(ntowfv2, 16, proof, 16, key);
}

int ntlm_lmv2_response(const uint8_t ntowfv2[16],
		       const uint8_t server_chal[8],
		       const uint8_t client_chal[8], uint8_t out[24])
{
	struct iovec iov[2] = {
		{ (void *)server_chal, 8 },
		{ (void *)client_chal, 8 },
	};
	int rc;

	rc = crypto_hmac_md5v(ntowfv2, 16, iov, 2, out);
	if (!rc)
		memcpy(out + 16, client_chal, 8);
	return rc;
}

int ntlm_mic(const uint8_t exported[16], const uint8_t *neg, size_t nlen,
	     const uint8_t *chal, size_t clen, const uint8_t *auth,
	     size_t alen, uint8_t mic[16])
{
	static const uint8_t zero[NTLM_MIC_LEN];
	struct iovec iov[5];

	if (alen < NTLM_MIC_OFF + NTLM_MIC_LEN)
		return -EINVAL;
	iov[0] = (struct iovec){ (void *)neg, nlen };
	iov[1] = (struct iovec){ (void *)chal, clen };
	iov[2] = (struct iovec){ (void *)auth, NTLM_MIC_OFF };
	iov[3] = (struct iovec){ (void *)zero, NTLM_MIC_LEN };
	iov[4] = (struct iovec){ (void *)(auth + NTLM_MIC_OFF + NTLM_MIC_LEN),
				 alen - NTLM_MIC_OFF - NTLM_MIC_LEN };
	return crypto_hmac_md5v(exported, 16, iov, 5, mic);
}

/* [MS-NLMP] 3.4.5.2 / 3.4.5.3 magic constants (with their NUL). */
static const char sign_c2s[] =
	"session key to client-to-server signing key magic constant";
static const char sign_s2c[] =
	"session key to server-to-client signing key magic constant";
static const char seal_c2s[] =
	"session key to client-to-server sealing key magic constant";
static const char seal_s2c[] =
	"session key to server-to-client sealing key magic constant";

int ntlm_sign_key(const uint8_t exported[16], bool client, uint8_t out[16])
{
	struct iovec iov[2] = {
		{ (void *)exported, 16 },
		{ (void *)(client ? sign_c2s : sign_s2c), sizeof(sign_c2s) },
	};

	return crypto_md5v(iov, 2, out);
}

int ntlm_seal_key(const uint8_t exported[16], uint32_t flags, bool client,
		  uint8_t out[16])
{
	size_t klen = 5;
	struct iovec iov[2];

	if (flags & NTLMSSP_NEGOTIATE_128)
		klen = 16;
	else if (flags & NTLMSSP_NEGOTIATE_56)
		klen = 7;
	iov[0] = (struct iovec){ (void *)exported, klen };
	iov[1] = (struct iovec){ (void *)(client ? seal_c2s : seal_s2c),
				 sizeof(seal_c2s) };
	return crypto_md5v(iov, 2, out);
}

int ntlm_sec_init(struct ntlm_sec *s, const uint8_t exported[16],
		  uint32_t flags, bool client)
{
	uint8_t k_out[16], k_in[16];
	int rc;

	memset(s, 0, sizeof(*s));
	if (!(flags & NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY))
		return -EOPNOTSUPP;
	s->key_exch = flags & NTLMSSP_NEGOTIATE_KEY_EXCH;
	rc = ntlm_sign_key(exported, client, s->sign_out);
	if (!rc)
		rc = ntlm_sign_key(exported, !client, s->sign_in);
	if (!rc)
		rc = ntlm_seal_key(exported, flags, client, k_out);
	if (!rc)
		rc = ntlm_seal_key(exported, flags, !client, k_in);
	if (rc)
		goto out_wipe;
	rc = crypto_rc4_new(&s->seal_out, k_out, 16);
	if (rc)
		goto out_wipe;
	rc = crypto_rc4_new(&s->seal_in, k_in, 16);
	if (rc)
		goto out_free_out;
	goto out_wipe_keys;
out_free_out:
	crypto_rc4_delete(&s->seal_out);
out_wipe:
	OPENSSL_cleanse(s, sizeof(*s));
out_wipe_keys:
	OPENSSL_cleanse(k_out, sizeof(k_out));
	OPENSSL_cleanse(k_in, sizeof(k_in));
	return rc;
}

void ntlm_sec_free(struct ntlm_sec *s)
{
	crypto_rc4_delete(&s->seal_out);
	crypto_rc4_delete(&s->seal_in);
	OPENSSL_cleanse(s, sizeof(*s));
}

/*
 * [MS-NLMP] 3.4.4.2 MAC() with extended session security, split so that
 * sealing can hash the plaintext before encrypting it in place:
 * mac_begin() = HMAC_MD5(key, SeqNum || msg), mac_end() = the signature.
 */
static int mac_begin(const uint8_t key[16], uint32_t seq, const void *msg,
		     size_t len, uint8_t mac[16])
{
	uint8_t sn[4];
	struct iovec iov[2] = {
		{ sn, 4 },
		{ (void *)msg, len },
	};

	put_le32(sn, seq);
	return crypto_hmac_md5v(key, 16, iov, 2, mac);
}

static int mac_end(struct crypto_rc4 *h, bool kx, uint32_t *seq,
		   uint8_t mac[16], uint8_t sig[16])
{
	int rc = 0;

	put_le32(sig, 1);
	if (kx)
		rc = crypto_rc4_update(h, mac, sig + 4, 8);
	else
		memcpy(sig + 4, mac, 8);
	put_le32(sig + 12, *seq);
	(*seq)++;
	OPENSSL_cleanse(mac, 16);
	return rc;
}

int ntlm_sec_sign(struct ntlm_sec *s, const void *msg, size_t len,
		  uint8_t sig[16])
{
	uint8_t mac[16];
	int rc;

	rc = mac_begin(s->sign_out, s->seq_out, msg, len, mac);
	if (rc)
		return rc;
	return mac_end(s->seal_out, s->key_exch, &s->seq_out, mac, sig);
}

int ntlm_sec_verify(struct ntlm_sec *s, const void *msg, size_t len,
		    const uint8_t sig[16])
{
	uint8_t mac[16], want[16];
	int rc;

	rc = mac_begin(s->sign_in, s->seq_in, msg, len, mac);
	if (rc)
		return rc;
	rc = mac_end(s->seal_in, s->key_exch, &s->seq_in, mac, want);
	if (rc)
		return rc;
	return CRYPTO_memcmp(want, sig, 16) ? -EBADMSG : 0;
}

int ntlm_sec_seal(struct ntlm_sec *s, const void *in, void *out, size_t len,
		  uint8_t sig[16])
{
	uint8_t mac[16];
	int rc;

	rc = mac_begin(s->sign_out, s->seq_out, in, len, mac);
	if (!rc)
		rc = crypto_rc4_update(s->seal_out, in, out, len);
	if (rc) {
		OPENSSL_cleanse(mac, sizeof(mac));
		return rc;
	}
	return mac_end(s->seal_out, s->key_exch, &s->seq_out, mac, sig);
}

int ntlm_sec_unseal(struct ntlm_sec *s, const void *in, void *out,
		    size_t len, const uint8_t sig[16])
{
	int rc;

	rc = crypto_rc4_update(s->seal_in, in, out, len);
	if (rc)
		return rc;
	return ntlm_sec_verify(s, out, len, sig);
}
