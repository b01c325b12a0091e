// SPDX-License-Identifier: MIT
/*
 * A security descriptor as a client sends it in SET_INFO (or as rdaxd
 * reads it back from user.rdax.ntacl): secdesc_decode on the input;
 * what decodes encodes within its own size and decodes to the same. The
 * access check and inheritance run on it: what MAXIMUM_ALLOWED grants
 * is file rights and passes the check; an inherited DACL encodes.
 */
#include <errno.h>

#include "fuzz.h"
#include "proto/secdesc.h"
#include "proto/smb2.h"

/* a token holding every SID whose last sub-authority is odd */
static bool odd(const struct sid *s, const void *arg)
{
	(void)arg;
	return s->n && s->sub[s->n - 1] & 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct secdesc sd, sd2;
	static uint8_t buf[65536], buf2[65536];
	size_t n, n2;
	int rc;

	rc = secdesc_decode(data, size, &sd);
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -E2BIG || rc == -EOPNOTSUPP);
	if (rc)
		return 0;
	n = secdesc_encode(&sd, 0xf, buf, sizeof(buf));
	FUZZ_ASSERT(n >= SECDESC_HDR_LEN && n <= sizeof(buf));
	FUZZ_ASSERT(secdesc_encode(&sd, 0xf, buf2, n - 1) == n);
	FUZZ_ASSERT(!secdesc_decode(buf, n, &sd2));
	n2 = secdesc_encode(&sd2, 0xf, buf2, sizeof(buf2));
	FUZZ_ASSERT(n2 == n && !memcmp(buf, buf2, n));

	{
		static const struct sec_token tok = { odd, NULL, false };
		uint32_t max = secdesc_max_allowed(&sd, &tok), g;
		int dir;

		FUZZ_ASSERT(!(max & ~FILE_ALL_ACCESS));
		FUZZ_ASSERT(secdesc_access_check(&sd, &tok, max, &g) == 0 && g == max);
		FUZZ_ASSERT(secdesc_access_check(&sd, &tok, ACCESS_SYSTEM_SECURITY, &g) == -EPERM);
		for (dir = 0; dir < 2; dir++) {
			int k = secdesc_inherit(&sd, dir, &sd.owner, &sd.group, &sd2);

			FUZZ_ASSERT(k >= 0 && k <= SECDESC_MAX_ACES && k == sd2.dacl.n);
			FUZZ_ASSERT(secdesc_encode(&sd2, 0xf, buf2, sizeof(buf2)) <= sizeof(buf2));
		}
	}
	return 0;
}
