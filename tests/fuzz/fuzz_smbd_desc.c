// SPDX-License-Identifier: MIT
/*
 * RDMA buffer descriptor lists ([MS-SMBD] 2.2.3.1) as they arrive in the
 * channel info of an SMB2 READ or WRITE: byte 0 sets the list limit, the
 * rest is the list. A good list re-encodes to the same bytes.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/smbd.h"

#define MAX_DESC 255

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smbd_desc d[MAX_DESC];
	uint64_t total = 0;
	uint8_t *b;
	int i, n, max;

	if (!size)
		return 0;
	max = data[0];
	data++;
	size--;
	n = smbd_desc_decode(data, size, d, max);
	FUZZ_ASSERT(n == -EINVAL || (n >= 1 && n <= max));
	if (n < 0)
		return 0;
	FUZZ_ASSERT((size_t)n * SMBD_DESC_SIZE == size);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(d[i].length);
		FUZZ_ASSERT(d[i].offset + d[i].length >= d[i].offset);
		total += d[i].length;
	}
	FUZZ_ASSERT(total <= (uint64_t)n * UINT32_MAX);
	b = malloc(size);
	if (!b)
		return 0;
	smbd_desc_encode(b, d, n);
	FUZZ_ASSERT(!memcmp(b, data, size));
	free(b);
	return 0;
}
