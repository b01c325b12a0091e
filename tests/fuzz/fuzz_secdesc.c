// SPDX-License-Identifier: MIT
/*
 * A security descriptor as a client sends it in SET_INFO (or as rdaxd
 * reads it back from user.rdax.ntacl): secdesc_decode on the input;
 * what decodes encodes within its own size and decodes to the same.
 */
#include <errno.h>

#include "fuzz.h"
#include "proto/secdesc.h"

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
	return 0;
}
