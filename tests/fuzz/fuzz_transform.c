// SPDX-License-Identifier: MIT
/*
 * SMB3 transform messages ([MS-SMB2] 2.2.41) under a fixed key. Byte 0
 * picks the cipher (low 3 bits, 0 and 5..7 are invalid ids) and the mode:
 *
 *   bit 7 clear: the rest is a received message. smb2_decrypt must fail
 *         cleanly (garbage never authenticates), into a separate buffer
 *         and in place as rdaxd does; smb2_transform_session_id agrees
 *         with the header.
 *   bit 7 set: the rest is nonce (16) + session id (8) + plaintext;
 *         encrypt, decrypt back, then flip the bit selected by byte 1
 *         and expect -EBADMSG.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "crypto/crypto.h"
#include "fuzz.h"

static const uint8_t key[32] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
};

/* kept across inputs as a connection keeps them: no input may spoil the next */
static struct crypto_kept kept;

static void received(uint16_t cipher, const uint8_t *msg, size_t len)
{
	uint8_t *out, *copy;
	uint64_t sid;
	int rc;

	rc = smb2_transform_session_id(msg, len, &sid);
	if (len >= SMB2_TF_LEN && get_le32(msg) == 0x424d53fdu) {
		FUZZ_ASSERT(rc == 0 && sid == get_le64(msg + SMB2_TF_SESSION_OFF));
	} else {
		FUZZ_ASSERT(rc == -EBADMSG);
	}
	out = malloc(len > SMB2_TF_LEN ? len - SMB2_TF_LEN : 1);
	copy = malloc(len ? len : 1);
	if (!out || !copy)
		goto out_free;
	rc = smb2_decrypt(&kept, cipher, key, msg, len, out);
	FUZZ_ASSERT(rc == -EBADMSG || rc == -EINVAL);
	if (smb2_cipher_keylen(cipher) > 0)
		FUZZ_ASSERT(rc == -EBADMSG);
	memcpy(copy, msg, len);
	if (len > SMB2_TF_LEN) {
		rc = smb2_decrypt(&kept, cipher, key, copy, len, copy + SMB2_TF_LEN);
		FUZZ_ASSERT(rc == -EBADMSG || rc == -EINVAL);
	}
out_free:
	free(out);
	free(copy);
}

static void round_trip(uint16_t cipher, uint8_t sel, const uint8_t *p,
		       size_t len)
{
	struct iovec iov;
	uint8_t *msg, *plain;
	uint64_t sid, sid2;
	size_t mlen, bit;
	int rc;

	if (len <= 24 || smb2_cipher_keylen(cipher) < 0)
		return;
	sid = get_le64(p + 16);
	iov.iov_base = (void *)(p + 24);
	iov.iov_len = len - 24;
	mlen = SMB2_TF_LEN + iov.iov_len;
	msg = malloc(mlen);
	plain = malloc(iov.iov_len);
	if (!msg || !plain)
		goto out_free;
	rc = smb2_encrypt_nonce(&kept, cipher, key, sid, p, &iov, 1, msg);
	FUZZ_ASSERT(rc == (int)mlen);
	FUZZ_ASSERT(!smb2_transform_session_id(msg, mlen, &sid2) && sid2 == sid);
	rc = smb2_decrypt(&kept, cipher, key, msg, mlen, plain);
	FUZZ_ASSERT(rc == (int)iov.iov_len);
	FUZZ_ASSERT(!memcmp(plain, iov.iov_base, iov.iov_len));
	/* any changed bit fails: protocol id, tag, AAD or ciphertext */
	bit = (sel * 2654435761u) % (mlen * 8);
	msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	FUZZ_ASSERT(smb2_decrypt(&kept, cipher, key, msg, mlen, plain) == -EBADMSG);
out_free:
	free(msg);
	free(plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t cipher;

	if (size < 2)
		return 0;
	cipher = data[0] & 7;
	if (data[0] & 0x80)
		round_trip(cipher, data[1], data + 2, size - 2);
	else
		received(cipher, data + 1, size - 1);
	return 0;
}
