// SPDX-License-Identifier: MIT
/* Known-answer tests for src/crypto (protocol-facts E, KAT-1/4/5/6/7/8). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "crypto/crypto.h"
#include "crypto/ntlm.h"
#include "util/bytes.h"
#include "t.h"

static uint8_t buf[8192], buf2[8192], buf3[8192];

static void kat1(void)
{
	static const struct {
		const char *in, *md4;
	} v[] = {
		{ "", "31d6cfe0d16ae931b73c59d7e0c089c0" },
		{ "a", "bde52cb31de33e46245e05fbdbd6fb24" },
		{ "abc", "a448017aaf21d8525fc10ae87aa6729d" },
		{ "message digest", "d9130a8164549fe818874806e1c7014b" },
	};
	uint8_t out[16], key[16];
	size_t i;

	t_section("KAT-1 MD4 (RFC 1320), NT hash, HMAC-MD5 (RFC 2202)");
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		T_EQ(crypto_md4(v[i].in, strlen(v[i].in), out), 0);
		T_HEXEQ(out, 16, v[i].md4);
	}
	T_EQ(ntlm_nt_hash("Password", out), 0);
	T_HEXEQ(out, 16, "a4f49c406510bdcab6824ee7c30fd852");
	T_EQ(ntlm_nt_hash("Password01!", out), 0);
	T_HEXEQ(out, 16, "7c4fe5eada682714a036e39378362bab");

	memset(key, 0x0b, 16);
	T_EQ(crypto_hmac_md5(key, 16, "Hi There", 8, out), 0);
	T_HEXEQ(out, 16, "9294727a3638bb1c13f48ef8158bfc9d");
	T_EQ(crypto_hmac_md5((const uint8_t *)"Jefe", 4,
			     "what do ya want for nothing?", 28, out), 0);
	T_HEXEQ(out, 16, "750c783e6ab0b503eaa86e310a5db738");
}

static void kat_misc(void)
{
	uint8_t out[64], k[16], a[16], b[16];
	struct iovec iov[2];
	struct crypto_rc4 *h;

	t_section("RC4 (RFC 6229 key 0102030405), SHA-512, HMAC-SHA256");
	/* RFC 6229, 40-bit key 0x0102030405, keystream offset 0 */
	memcpy(k, "\x01\x02\x03\x04\x05", 5);
	memset(a, 0, 16);
	T_EQ(crypto_rc4(k, 5, a, b, 16), 0);
	T_HEXEQ(b, 16, "b2396305f03dc027ccc3524a0a1118a8");
	/* streaming gives the same keystream in pieces */
	T_EQ(crypto_rc4_new(&h, k, 5), 0);
	T_EQ(crypto_rc4_update(h, a, b, 7), 0);
	T_EQ(crypto_rc4_update(h, a + 7, b + 7, 9), 0);
	crypto_rc4_delete(&h);
	T_ASSERT(h == NULL);
	T_HEXEQ(b, 16, "b2396305f03dc027ccc3524a0a1118a8");

	/* FIPS 180-2 "abc" split over two iovecs */
	iov[0] = (struct iovec){ "a", 1 };
	iov[1] = (struct iovec){ "bc", 2 };
	T_EQ(crypto_sha512v(iov, 2, out), 0);
	T_HEXEQ(out, 64,
		"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
		"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	/* RFC 4231 test case 2 */
	iov[0] = (struct iovec){ "what do ya want ", 16 };
	iov[1] = (struct iovec){ "for nothing?", 12 };
	T_EQ(crypto_hmac_sha256v((const uint8_t *)"Jefe", 4, iov, 2, out), 0);
	T_HEXEQ(out, 32,
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	T_EQ(crypto_random(a, 16), 0);
	T_EQ(crypto_random(b, 16), 0);
	T_ASSERT(memcmp(a, b, 16) != 0);
}

static void kat8_cmac(void)
{
	static const char *mac[] = {
		"bb1d6929e95937287fa37d129b756746",
		"070a16b46b4d4144f79bdd9dd04a287c",
		"dfa66747de9ae63030ca32611497c827",
		"51f0bebf7e3b9d92fc49741779363cfe",
	};
	static const size_t lens[] = { 0, 16, 40, 64 };
	uint8_t k[16], m[64], out[16];
	struct iovec iov[2];
	int i;

	t_section("KAT-8 AES-128-CMAC (RFC 4493 section 4)");
	t_unhex(k, 16, "2b7e151628aed2a6abf7158809cf4f3c");
	t_unhex(m, 64, "6bc1bee22e409f96e93d7e117393172a"
		       "ae2d8a571e03ac9c9eb76fac45af8e51"
		       "30c81c46a35ce411e5fbc1191a0a52ef"
		       "f69f2445df4f9b17ad2b417be66c3710");
	for (i = 0; i < 4; i++) {
		/* split each message unevenly over two iovecs */
		iov[0] = (struct iovec){ m, lens[i] / 3 };
		iov[1] = (struct iovec){ m + lens[i] / 3, lens[i] - lens[i] / 3 };
		T_EQ(crypto_aes_cmacv(k, iov, 2, out), 0);
		T_HEXEQ(out, 16, mac[i]);
	}
}

static void kat4(void)
{
	uint8_t sk[16], out[32];
	struct smb3_keys keys;

	t_section("KAT-4 SMB 3.0 KDF");
	t_unhex(sk, 16, "7CD451825D0450D235424E44BA6E78CC");
	T_EQ(smb3_kdf(sk, 16, "SMB2AESCMAC", 12, "SmbSign", 8, out, 16), 0);
	T_HEXEQ(out, 16, "0B7E9C5CAC36C0F6EA9AB275298CEDCE");
	T_EQ(smb3_derive_keys(SMB2_DIALECT_300, sk, NULL, 0, &keys), 0);
	T_HEXEQ(keys.signing, 16, "0B7E9C5CAC36C0F6EA9AB275298CEDCE");
	T_HEXEQ(keys.c2s, 16, "FAD27796665B313EBB578F388632B4F7");
	T_HEXEQ(keys.s2c, 16, "B0F0427F7CEB416D1D9DCC0CD4F99447");
	T_HEXEQ(keys.app, 16, "BB23A4575AA26C721AF525AF15A87B4F");
	T_EQ(keys.cipher_keylen, 16);
	t_unhex(sk, 16, "4E01A2B313BCF660CC250BEF021AEDE6");
	T_EQ(smb3_derive_keys(SMB2_DIALECT_302, sk, NULL, 1, &keys), 0);
	T_HEXEQ(keys.signing, 16, "BA1A17DBBFEC349BCA105563D598952F");
	/* bad parameters */
	T_EQ(smb3_derive_keys(SMB2_DIALECT_300, sk, NULL, 2, &keys), -EINVAL);
	T_EQ(smb3_derive_keys(SMB2_DIALECT_311, sk, NULL, 2, &keys), -EINVAL);
	T_EQ(smb3_derive_keys(0x0299, sk, NULL, 0, &keys), -EINVAL);
	T_EQ(smb3_kdf(sk, 16, "a", 2, "b", 2, out, 20), -EINVAL);
	/* 2.x: signing key is the session key */
	T_EQ(smb3_derive_keys(SMB2_DIALECT_210, sk, NULL, 0, &keys), 0);
	T_MEMEQ(keys.signing, sk, 16);
	T_EQ(keys.cipher_keylen, 0);
}

static const char kat5_plain[] =
	"FE534D4240000100000000000900400008000000000000000400000000000000"
	"FFFE0000010000001100001400E4080000000000000000000000000000000000"
	"3100700017000000000000000000000015010000390000020100000039020000"
	"00000000000000007000000000000000536D623320656E6372797074696F6E20"
	"74657374696E67";
static const char kat5_msg[] =
	"FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A"
	"744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5"
	"2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4"
	"4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5"
	"AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6"
	"C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB";
static const char kat5_rsp[] =
	"FD534D42A6015530A18F6D9AFFE22AFAE8E66484860000000000000011000014"
	"00E4080050000000000001001100001400E40800DBF46435C5F14169293CE079"
	"E344479BF670227E49873F458672C3098DAC467DD5809F369D67409166515787"
	"1483E01F7BECD02064EAC3E235F913668BBC2F097980D4B378F1993EFF6E60D1"
	"77309E5B";
static const char kat5_rsp_plain[] =
	"FE534D4240000100000000000900210009000000000000000400000000000000"
	"FFFE0000010000001100001400E4080000000000000000000000000000000000"
	"11000000170000000000000000000000";

static void kat5(void)
{
	uint8_t sk[16], nonce[16], plain[256], msg[512];
	struct smb3_keys keys;
	struct iovec iov[3];
	size_t plen, mlen;
	uint64_t sid;
	int rc;

	t_section("KAT-5 SMB 3.0 AES-128-CCM");
	t_unhex(sk, 16, "B4546771B515F766A86735532DD6C4F0");
	T_EQ(smb3_derive_keys(SMB2_DIALECT_300, sk, NULL, 1, &keys), 0);
	T_HEXEQ(keys.signing, 16, "F773CD23C18FD1E08EE510CADA7CF852");
	T_HEXEQ(keys.c2s, 16, "261B72350558F2E9DCF613070383EDBF");
	T_HEXEQ(keys.s2c, 16, "8FE2B57EC34D2DB5B1A9727F526BBDB5");
	T_HEXEQ(keys.app, 16, "77432F808CE99156B5BC6A3676D730D1");

	plen = t_unhex(plain, sizeof(plain), kat5_plain);
	mlen = t_unhex(msg, sizeof(msg), kat5_msg);
	T_EQ(plen, 135);
	T_EQ(mlen, 187);
	T_EQ(smb2_transform_session_id(msg, mlen, &sid), 0);
	T_EQ(sid, 0x0008E40014000011ull);

	/* decrypt the WRITE request with the client EncryptionKey */
	rc = smb2_decrypt(NULL, SMB2_CIPHER_AES128_CCM, keys.c2s, msg, mlen, buf);
	T_EQ(rc, 135);
	T_MEMEQ(buf, plain, 135);

	/* re-encrypt with the same nonce: identical message, split iovecs */
	memcpy(nonce, msg + 20, 16);
	iov[0] = (struct iovec){ plain, 64 };
	iov[1] = (struct iovec){ plain + 64, 0 };
	iov[2] = (struct iovec){ plain + 64, plen - 64 };
	rc = smb2_encrypt_nonce(NULL, SMB2_CIPHER_AES128_CCM, keys.c2s, sid, nonce,
				iov, 3, buf);
	T_EQ(rc, 187);
	T_MEMEQ(buf, msg, 187);

	/* in-place decryption */
	memcpy(buf2, msg, mlen);
	rc = smb2_decrypt(NULL, SMB2_CIPHER_AES128_CCM, keys.c2s, buf2, mlen,
			  buf2 + SMB2_TF_LEN);
	T_EQ(rc, 135);
	T_MEMEQ(buf2 + SMB2_TF_LEN, plain, 135);

	/* in-place encryption (plaintext already at out + 52) */
	memcpy(buf3 + SMB2_TF_LEN, plain, plen);
	iov[0] = (struct iovec){ buf3 + SMB2_TF_LEN, plen };
	rc = smb2_encrypt_nonce(NULL, SMB2_CIPHER_AES128_CCM, keys.c2s, sid, nonce,
				iov, 1, buf3);
	T_EQ(rc, 187);
	T_MEMEQ(buf3, msg, 187);

	/* the response with the client DecryptionKey (S2C) */
	mlen = t_unhex(msg, sizeof(msg), kat5_rsp);
	T_EQ(mlen, 132);
	rc = smb2_decrypt(NULL, SMB2_CIPHER_AES128_CCM, keys.s2c, msg, mlen, buf);
	T_EQ(rc, 80);
	T_HEXEQ(buf, 80, kat5_rsp_plain);
	/* wrong key fails */
	rc = smb2_decrypt(NULL, SMB2_CIPHER_AES128_CCM, keys.c2s, msg, mlen, buf);
	T_EQ(rc, -EBADMSG);
}

static const char kat6_negreq[] =
	"FE534D4240000100000000000000800000000000000000000100000000000000"
	"FFFE000000000000000000000000000000000000000000000000000000000000"
	"24000500000000003F000000ECD86F326276024F9F7752B89BB33F3A70000000"
	"020000000202100200030203110300000100260000000000010020000100FA49"
	"E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF0000"
	"0200060000000000020002000100";
static const char kat6_final_hash[] =
	"0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB79"
	"28622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01";
static const char kat6_final_rsp[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000"
	"FFFE0000000000001900000000100000EBE146DA120BA25FC3376A49DFE31BC1"
	"0900000048001D00A11B3019A0030A0100A3120410010000003B453CDC352416"
	"4200000000";
static const char kat6_bind_rsp[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000"
	"FFFE00000000000019000000001000008D604217FFBACF40635BF9D872992150"
	"0900000048001D00A11B3019A0030A0100A312041001000000CFB046FC5D368E"
	"2200000000";

static void kat6(void)
{
	uint8_t h[64], sk[16], msg[512], sig[16];
	struct smb3_keys keys;
	struct iovec iov[2];
	size_t n;

	t_section("KAT-6 SMB 3.1.1 preauth hash, KDF, AES-CMAC signing");
	memset(h, 0, 64);
	n = t_unhex(msg, sizeof(msg), kat6_negreq);
	T_EQ(n, 174);
	iov[0] = (struct iovec){ msg, 100 };
	iov[1] = (struct iovec){ msg + 100, n - 100 };
	T_EQ(crypto_preauth_update(h, iov, 2), 0);
	T_HEXEQ(h, 64,
		"DD94EFC5321BB618A2E208BA8920D2F422992526947A409B5037DE1E0FE8C736"
		"2B8C47122594CDE0CE26AA9DFC8BCDBDE0621957672623351A7540F1E54A0426");

	t_unhex(h, 64, kat6_final_hash);
	t_unhex(sk, 16, "270E1BA896585EEB7AF3472D3B4C75A7");
	T_EQ(smb3_derive_keys(SMB2_DIALECT_311, sk, h, SMB2_CIPHER_AES128_GCM,
			      &keys), 0);
	T_HEXEQ(keys.signing, 16, "73FE7A9A77BEF0BDE49C650D8CCB5F76");
	T_HEXEQ(keys.c2s, 16, "629BCBC54422A0F572B97F45989B6073");
	T_HEXEQ(keys.s2c, 16, "E2AF0DCEFAC68DA71A0DFBD0D1350D74");
	T_HEXEQ(keys.app, 16, "6D7AD7954E9EC61E907B4D473DC178FF");
	T_EQ(keys.cipher_keylen, 16);

	n = t_unhex(msg, sizeof(msg), kat6_final_rsp);
	T_EQ(n, 101);
	T_EQ(smb2_sign_compute(NULL, SMB2_SIGN_AES_CMAC, keys.signing, msg, n, sig),
	     0);
	T_HEXEQ(sig, 16, "EBE146DA120BA25FC3376A49DFE31BC1");
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, keys.signing, msg, n), 0);
	/* the input's signature field is untouched */
	T_HEXEQ(msg + 48, 16, "EBE146DA120BA25FC3376A49DFE31BC1");

	/* second channel (session binding) */
	t_unhex(h, 64,
		"EA3BF912B11CBFEC5B1889E8209614218687F82FA5294521AD3063425E49E88A"
		"10BD022124CE25123BC9111F52D9566BA88BF46344E6063DC5E3FF0389026F6C");
	t_unhex(sk, 16, "84B9DBB730116A8FA6E9889555C265F9");
	T_EQ(smb3_derive_keys(SMB2_DIALECT_311, sk, h, 0, &keys), 0);
	T_HEXEQ(keys.signing, 16, "C962BCA1A9DD1697B030644199705431");
	n = t_unhex(msg, sizeof(msg), kat6_bind_rsp);
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, keys.signing, msg, n), 0);

	/* AES-256 cipher keys are 32 bytes */
	T_EQ(smb3_derive_keys(SMB2_DIALECT_311, sk, h, SMB2_CIPHER_AES256_GCM,
			      &keys), 0);
	T_EQ(keys.cipher_keylen, 32);
	T_HEXEQ(keys.signing, 16, "C962BCA1A9DD1697B030644199705431");
}

static void kat7(void)
{
	uint8_t key[16], nonce[16], plain[256], msg[512];
	struct iovec iov;
	size_t n;
	int rc;

	t_section("KAT-7 SMB 3.1.1 AES-128-GCM");
	t_unhex(key, 16, "A2F5E80E5D59103034F32E52F698E5EC");
	t_unhex(nonce, 16, "D7AA8C6D36859243B715E0A600000000");
	n = t_unhex(plain, sizeof(plain),
		    "FE534D4240000100000000000800010008000000000000000600000000000000"
		    "FFFE000001000000250000000010000000000000000000000000000000000000"
		    "3100000017000000000000000000000006000000040000000100000004000000"
		    "0000000000000000000000000000000000");
	T_EQ(n, 113);
	iov = (struct iovec){ plain, n };
	rc = smb2_encrypt_nonce(NULL, SMB2_CIPHER_AES128_GCM, key, 0x0000100000000025ull,
				nonce, &iov, 1, msg);
	T_EQ(rc, 52 + 113);
	T_HEXEQ(msg + 4, 16, "6DAC0B6FD85A3ED42BB917DA38FE0386");
	T_HEXEQ(msg + 20, 32,
		"D7AA8C6D36859243B715E0A60000000071000000000001002500000000100000");
	T_HEXEQ(msg + 52, 113,
		"88A47BF09CA3C3141CDD7306BE9D9475AB24FCCB833D77461C041F8FB983D0C1"
		"88F0729272B31D9D3D0DC6B687C069EEE0CC8EACA2C536D019ACC9E185D1EB63"
		"0E0FCB793EEECEB06D82A1D77706E700DBEBFB4FEB54D7AD2D97E7288804F907"
		"57FE4D08D6A84A3FF433E7451E768E4699");
	rc = smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, msg, 52 + n, buf);
	T_EQ(rc, 113);
	T_MEMEQ(buf, plain, 113);
	/* tamper: ciphertext, AAD (SessionId) and tag each break it */
	msg[60] ^= 1;
	T_EQ(smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, msg, 52 + n, buf),
	     -EBADMSG);
	msg[60] ^= 1;
	msg[44] ^= 1;
	T_EQ(smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, msg, 52 + n, buf),
	     -EBADMSG);
	msg[44] ^= 1;
	msg[4] ^= 0x80;
	T_EQ(smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, msg, 52 + n, buf),
	     -EBADMSG);
	msg[4] ^= 0x80;
	T_EQ(smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, msg, 52 + n, buf), 113);
}

static void kat8_gmac(void)
{
	uint8_t key[16], iv[12], aad[16], tag[16], hdr[72], sig[16], zhdr[72];
	struct iovec iov;

	t_section("KAT-8 AES-128-GMAC (NIST GCM vectors) and SMB2 GMAC nonce");
	/* McGrew/Viega test case 1: K = 0, IV = 0, no AAD */
	memset(key, 0, 16);
	memset(iv, 0, 12);
	T_EQ(crypto_aes_gmacv(key, iv, NULL, 0, tag), 0);
	T_HEXEQ(tag, 16, "58e2fccefa7e3061367f1d57a4e7455a");
	/* CAVP gcmEncryptExtIV128: PTlen 0, AADlen 128, count 0 */
	t_unhex(key, 16, "77be63708971c4e240d1cb79e8d77feb");
	t_unhex(iv, 12, "e0e00f19fed7ba0136a797f3");
	t_unhex(aad, 16, "7a43ec1d9c0a5a78a0b16533a6213cab");
	iov = (struct iovec){ aad, 16 };
	T_EQ(crypto_aes_gmacv(key, iv, &iov, 1, tag), 0);
	T_HEXEQ(tag, 16, "209fcc8d3675ed938e9c7166709dd946");

	/*
	 * [MS-SMB2] 3.1.4.1: nonce = MessageId (LE64) || LE32 bits
	 * (bit0 server-to-redir, bit1 CANCEL request); AAD = the PDU with
	 * a zero signature.
	 */
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, "\xfeSMB", 4);
	hdr[4] = 64;
	memcpy(hdr + 24, "\x07\x06\x05\x04\x03\x02\x01\x00", 8);
	memset(hdr + 48, 0xaa, 16);
	memset(hdr + 64, 0x33, 8);
	memcpy(zhdr, hdr, sizeof(hdr));
	memset(zhdr + 48, 0, 16);
	iov = (struct iovec){ zhdr, sizeof(zhdr) };
	memcpy(iv, "\x07\x06\x05\x04\x03\x02\x01\x00", 8);

	hdr[12] = 0x0c; /* CANCEL request: bits = 2 */
	memcpy(iv + 8, "\x02\x00\x00\x00", 4);
	zhdr[12] = 0x0c;
	T_EQ(crypto_aes_gmacv(key, iv, &iov, 1, tag), 0);
	T_EQ(smb2_sign_compute(NULL, SMB2_SIGN_AES_GMAC, key, hdr, 72, sig), 0);
	T_MEMEQ(sig, tag, 16);

	hdr[16] = zhdr[16] = 1; /* CANCEL response: bits = 1 */
	memcpy(iv + 8, "\x01\x00\x00\x00", 4);
	T_EQ(crypto_aes_gmacv(key, iv, &iov, 1, tag), 0);
	T_EQ(smb2_sign_compute(NULL, SMB2_SIGN_AES_GMAC, key, hdr, 72, sig), 0);
	T_MEMEQ(sig, tag, 16);

	hdr[16] = zhdr[16] = 0; /* READ request: bits = 0 */
	hdr[12] = zhdr[12] = 0x08;
	memcpy(iv + 8, "\x00\x00\x00\x00", 4);
	T_EQ(crypto_aes_gmacv(key, iv, &iov, 1, tag), 0);
	T_EQ(smb2_sign_compute(NULL, SMB2_SIGN_AES_GMAC, key, hdr, 72, sig), 0);
	T_MEMEQ(sig, tag, 16);
	T_HEXEQ(hdr + 48, 16, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

static void sign_roundtrips(void)
{
	uint8_t key[16], pdu[200], sig[16];
	int alg;

	t_section("signing round trip and tamper detection (all algorithms)");
	memset(key, 0x5a, 16);
	for (alg = 0; alg <= 2; alg++) {
		size_t i;

		for (i = 0; i < sizeof(pdu); i++)
			pdu[i] = (uint8_t)(i * 7 + alg);
		pdu[0] = 0xfe;
		T_EQ(smb2_sign_compute(NULL, alg, key, pdu, sizeof(pdu), sig), 0);
		memcpy(pdu + 48, sig, 16);
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), 0);
		pdu[150] ^= 0x10;
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), -EBADMSG);
		pdu[150] ^= 0x10;
		pdu[24] ^= 1; /* MessageId */
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), -EBADMSG);
		pdu[24] ^= 1;
		pdu[60] ^= 1; /* signature itself */
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), -EBADMSG);
		pdu[60] ^= 1;
		key[3] ^= 1;
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), -EBADMSG);
		key[3] ^= 1;
		T_EQ(smb2_sign_verify(NULL, alg, key, pdu, sizeof(pdu)), 0);
	}
	T_EQ(smb2_sign_compute(NULL, 0, key, pdu, 63, sig), -EBADMSG);
	T_EQ(smb2_sign_compute(NULL, 7, key, pdu, 64, sig), -EINVAL);
}

static void transform_roundtrips(void)
{
	uint8_t key[32], plain[3000];
	struct iovec iov[3];
	uint16_t c;
	size_t i;

	t_section("encryption round trip, all ciphers, malformed headers");
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0xa0 + i);
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 13);
	for (c = 1; c <= 4; c++) {
		int rc;

		iov[0] = (struct iovec){ plain, 100 };
		iov[1] = (struct iovec){ plain + 100, 1900 };
		iov[2] = (struct iovec){ plain + 2000, 1000 };
		rc = smb2_encrypt(NULL, c, key, 0x1122334455667788ull, iov, 3, buf);
		T_EQ(rc, 52 + 3000);
		/* nonce: random part then zeros */
		T_ASSERT(buf[20 + (c & 1 ? 11 : 12)] == 0 && buf[35] == 0);
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3052, buf2), 3000);
		T_MEMEQ(buf2, plain, 3000);
		/* two encryptions use different nonces */
		rc = smb2_encrypt(NULL, c, key, 0x1122334455667788ull, iov, 3, buf3);
		T_ASSERT(memcmp(buf + 20, buf3 + 20, 16) != 0);
		/* malformed: length, protocol id, size field, flags */
		T_EQ(smb2_decrypt(NULL, c, key, buf, 52, buf2), -EBADMSG);
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3051, buf2), -EBADMSG);
		buf[0] = 0xfe;
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3052, buf2), -EBADMSG);
		buf[0] = 0xfd;
		buf[42] = 2;
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3052, buf2), -EBADMSG);
		buf[42] = 1;
		buf[1000] ^= 4;
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3052, buf2), -EBADMSG);
		buf[1000] ^= 4;
		T_EQ(smb2_decrypt(NULL, c, key, buf, 3052, buf + 52), 3000);
		T_MEMEQ(buf + 52, plain, 3000);
	}
	T_EQ(smb2_encrypt(NULL, 9, key, 0, iov, 1, buf), -EINVAL);

	t_section("counter nonces");
	{
		struct smb2_nonce_gen g;
		uint8_t n1[16], n2[16];

		T_EQ(smb2_nonce_gen_init(&g), 0);
		T_EQ(smb2_nonce_next(&g, SMB2_CIPHER_AES128_CCM, n1), 0);
		T_EQ(smb2_nonce_next(&g, SMB2_CIPHER_AES128_CCM, n2), 0);
		T_EQ(get_le64(n1), 0);
		T_EQ(get_le64(n2), 1);
		T_MEMEQ(n1 + 8, g.salt, 3);
		T_ASSERT(n1[11] == 0 && n1[15] == 0);
		T_EQ(smb2_nonce_next(&g, SMB2_CIPHER_AES256_GCM, n1), 0);
		T_EQ(get_le64(n1), 2);
		T_MEMEQ(n1 + 8, g.salt, 4);
		T_ASSERT(n1[12] == 0);
		T_EQ(smb2_nonce_next(&g, 0, n1), -EINVAL);
		iov[0] = (struct iovec){ plain, 300 };
		T_EQ(smb2_encrypt_nonce(NULL, SMB2_CIPHER_AES128_GCM, key, 5, n2, iov,
					1, buf), 352);
		T_MEMEQ(buf + 20, n2, 16);
		T_EQ(smb2_decrypt(NULL, SMB2_CIPHER_AES128_GCM, key, buf, 352, buf2),
		     300);
	}
	T_EQ(smb2_decrypt(NULL, 0, key, buf, 3052, buf2), -EINVAL);
}

/* One kept set through every algorithm in turn, failures between: the bytes of fresh contexts. */
static void kept_reuse(void)
{
	uint8_t key[32], plain[1000], pdu[300], nonce[16], sig[16], sig2[16], tag[16], tag2[16];
	struct crypto_kept k = { 0 };
	struct iovec iov, v[2];
	int round, alg;
	uint16_t c;
	size_t i;

	t_section("kept contexts: every algorithm in turn, failures between");
	for (i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 11 + 5);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)(i * 3 + round);
		memset(nonce, 0, sizeof(nonce));
		for (i = 0; i < 12; i++)
			nonce[i] = (uint8_t)(0x40 + i + round);
		for (c = 1; c <= 4; c++) {
			iov = (struct iovec){ plain, sizeof(plain) };
			T_EQ(smb2_encrypt_nonce(&k, c, key, 7, nonce, &iov, 1, buf), 1052);
			T_EQ(smb2_encrypt_nonce(NULL, c, key, 7, nonce, &iov, 1, buf3), 1052);
			T_MEMEQ(buf, buf3, 1052);
			buf[500] ^= 1;
			T_EQ(smb2_decrypt(&k, c, key, buf, 1052, buf2), -EBADMSG);
			buf[500] ^= 1;
			T_EQ(smb2_decrypt(&k, c, key, buf, 1052, buf2), 1000);
			T_MEMEQ(buf2, plain, sizeof(plain));
			/* the RDMA transform's payload, in place */
			memcpy(buf, plain, sizeof(plain));
			memcpy(buf2, plain, sizeof(plain));
			v[0] = (struct iovec){ buf, 10 };
			v[1] = (struct iovec){ buf + 10, sizeof(plain) - 10 };
			iov = (struct iovec){ buf2, sizeof(plain) };
			T_EQ(smb2_xform_encrypt(&k, c, key, nonce, v, 2, tag), 0);
			T_EQ(smb2_xform_encrypt(NULL, c, key, nonce, &iov, 1, tag2), 0);
			T_MEMEQ(tag, tag2, 16);
			T_MEMEQ(buf, buf2, sizeof(plain));
			tag2[0] ^= 1;
			T_EQ(smb2_xform_decrypt(&k, c, key, nonce, &iov, 1, tag2), -EBADMSG);
			T_EQ(smb2_xform_decrypt(&k, c, key, nonce, v, 2, tag), 0);
			T_MEMEQ(buf, plain, sizeof(plain));
		}
		for (alg = 0; alg <= 2; alg++) {
			for (i = 0; i < sizeof(pdu); i++)
				pdu[i] = (uint8_t)(i * 7 + alg + round);
			T_EQ(smb2_sign_compute(&k, alg, key, pdu, sizeof(pdu), sig), 0);
			T_EQ(smb2_sign_compute(NULL, alg, key, pdu, sizeof(pdu), sig2), 0);
			T_MEMEQ(sig, sig2, 16);
			memcpy(pdu + 48, sig, 16);
			pdu[100] ^= 1;
			T_EQ(smb2_sign_verify(&k, alg, key, pdu, sizeof(pdu)), -EBADMSG);
			pdu[100] ^= 1;
			T_EQ(smb2_sign_verify(&k, alg, key, pdu, sizeof(pdu)), 0);
			iov = (struct iovec){ plain, sizeof(plain) };
			T_EQ(smb2_xform_sign(&k, alg, key, nonce, &iov, 1, tag), 0);
			T_EQ(smb2_xform_sign(NULL, alg, key, nonce, &iov, 1, tag2), 0);
			T_MEMEQ(tag, tag2, 16);
			T_EQ(smb2_xform_verify(&k, alg, key, nonce, &iov, 1, tag), 0);
			tag[5] ^= 1;
			T_EQ(smb2_xform_verify(&k, alg, key, nonce, &iov, 1, tag), -EBADMSG);
		}
	}
	crypto_kept_free(&k);
	crypto_kept_free(&k);
	crypto_kept_free(NULL);
}

/* OpenSSL's allocations, counted (CRYPTO_set_mem_functions, before its first) */
static unsigned long ossl_allocs;
static bool ossl_counting;

static void *count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	ossl_allocs++;
	return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	ossl_allocs++;
	return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

/*
 * The per-message calls of one algorithm (op 0-2: signing algorithm,
 * 3-6: cipher 1-4): a message and an RDMA transform payload each way.
 * Returns how many calls.
 */
static int kept_ops(struct crypto_kept *k, int op)
{
	uint8_t key[32] = { 1, 2, 3 }, nonce[16] = { 4, 5, 6 }, sig[16], tag[16];
	struct iovec iov = { buf3, 4000 };
	struct smb2_xpass p;
	uint16_t c = (uint16_t)(op - 2);

	if (op < 3) {
		T_EQ(smb2_sign_compute(k, op, key, buf3, 4000, sig), 0);
		memcpy(buf3 + 48, sig, 16);
		T_EQ(smb2_sign_verify(k, op, key, buf3, 4000), 0);
		T_EQ(smb2_xform_sign(k, op, key, nonce, &iov, 1, tag), 0);
		if (!k)
			return 3;
		T_EQ(smb2_xpass_begin(&p, k, SMB2_XPASS_VERIFY, op, key, nonce), 0);
		T_EQ(smb2_xpass_step(&p, &iov, 1), 0);
		T_EQ(smb2_xpass_end(&p, tag), 0);
		return 4;
	}
	T_EQ(smb2_encrypt_nonce(k, c, key, 9, nonce, &iov, 1, buf), 4052);
	T_EQ(smb2_decrypt(k, c, key, buf, 4052, buf2), 4000);
	T_EQ(smb2_xform_encrypt(k, c, key, nonce, &iov, 1, tag), 0);
	T_EQ(smb2_xform_decrypt(k, c, key, nonce, &iov, 1, tag), 0);
	return 4;
}

/*
 * Signing and encrypting with kept contexts allocates nothing in
 * OpenSSL (issue 16), but for HMAC-SHA256 (SMB 2.0.2/2.1): OpenSSL 3.0
 * re-makes its digest states when an HMAC is keyed, kept context or not.
 */
static void kept_allocs(void)
{
	static const char *const what[] = {
		"HMAC-SHA256", "AES-CMAC", "AES-GMAC",
		"AES-128-CCM", "AES-128-GCM", "AES-256-CCM", "AES-256-GCM",
	};
	struct crypto_kept k = { 0 };
	unsigned long fresh, kept;
	int op, round, nf, nk = 0;

	t_section("kept contexts: no allocation per message");
	if (!ossl_counting) {
		t_skip_case("allocations", "OpenSSL allocated before CRYPTO_set_mem_functions");
		return;
	}
	memset(buf3, 0x3c, 4000);
	for (op = 0; op < 7; op++) {
		fresh = ossl_allocs;
		nf = kept_ops(NULL, op);
		fresh = ossl_allocs - fresh;
		/* round 0 makes the contexts */
		for (round = 0; round < 3; round++) {
			kept = ossl_allocs;
			nk = kept_ops(&k, op);
			kept = ossl_allocs - kept;
		}
		if (op)
			T_EQ(kept, 0);
		printf("  %-12s OpenSSL allocations per call: %2lu fresh contexts, %lu kept\n",
		       what[op], fresh / (unsigned long)nf, kept / (unsigned long)nk);
	}
	crypto_kept_free(&k);
}

int main(void)
{
	ossl_counting = CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) == 1;
	/* OpenSSL, its legacy provider (MD4, RC4) included, is a build dependency */
	T_REQUIRE(crypto_init() == 0);
	T_EQ(crypto_init(), 0);		/* again: a second call is harmless */
	kat1();
	kat_misc();
	kat8_cmac();
	kat4();
	kat5();
	kat6();
	kat7();
	kat8_gmac();
	sign_roundtrips();
	transform_roundtrips();
	kept_reuse();
	kept_allocs();
	return t_done();
}
