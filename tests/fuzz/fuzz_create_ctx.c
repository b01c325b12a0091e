// SPDX-License-Identifier: MIT
/*
 * CREATE context chains ([MS-SMB2] 2.2.13.2): smb2_create_ctx_parse on
 * the input (byte 0 sets the context limit), every name and data inside
 * its own context, and a rebuild with smb2_create_ctx_add that must
 * parse back to the same contexts.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/smb2.h"

static uint8_t buf[SMB2_MAX_CREATE_CTX * (24 + 8) + (1 << 20)];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smb2_create_ctx ctx[SMB2_MAX_CREATE_CTX], ctx2[SMB2_MAX_CREATE_CTX];
	const uint8_t *p;
	size_t len, prev = SIZE_MAX, off = 0;
	struct wcur w;
	int i, n, n2, max, ntag = 0;

	if (!size)
		return 0;
	max = data[0] % (SMB2_MAX_CREATE_CTX + 1);
	p = data + 1;
	len = size - 1;
	n = smb2_create_ctx_parse(p, len, ctx, max);
	FUZZ_ASSERT(n == -EBADMSG || (n >= 0 && n <= max));
	if (!len)
		FUZZ_ASSERT(n == 0);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t next = get_le32(p + off);
		size_t end = next ? off + next : len;

		/* context i starts at off and ends at its Next (or the end) */
		FUZZ_ASSERT(off % 8 == 0 && end <= len);
		FUZZ_ASSERT_INSIDE(ctx[i].name.p, ctx[i].name.len, p + off,
				   end - off);
		FUZZ_ASSERT_INSIDE(ctx[i].data.p, ctx[i].data.len, p + off,
				   end - off);
		FUZZ_ASSERT(ctx[i].name.p >= p + off + 16);
		FUZZ_ASSERT(!ctx[i].data.len || ctx[i].data.p >= p + off + 16);
		FUZZ_ASSERT(!ctx[i].data.len == !ctx[i].data.p);
		fuzz_touch(ctx[i].name.p, ctx[i].name.len);
		fuzz_touch(ctx[i].data.p, ctx[i].data.len);
		FUZZ_ASSERT((i == n - 1) == !next);
		off = end;
	}

	/* rebuild the 4-byte-tag contexts and parse them again */
	wcur_init(&w, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		char tag[4];

		if (ctx[i].name.len != 4)
			continue;
		memcpy(tag, ctx[i].name.p, 4);
		smb2_create_ctx_add(&w, &prev, tag, ctx[i].data.p,
				    ctx[i].data.len);
		ntag++;
	}
	FUZZ_ASSERT(!w.err);
	n2 = smb2_create_ctx_parse(buf, w.off, ctx2, SMB2_MAX_CREATE_CTX);
	FUZZ_ASSERT(n2 == ntag);
	for (i = 0, n2 = 0; i < n; i++) {
		if (ctx[i].name.len != 4)
			continue;
		FUZZ_ASSERT(ctx2[n2].name.len == 4 &&
			    !memcmp(ctx2[n2].name.p, ctx[i].name.p, 4));
		FUZZ_ASSERT(ctx2[n2].data.len == ctx[i].data.len);
		FUZZ_ASSERT(!ctx[i].data.len ||
			    !memcmp(ctx2[n2].data.p, ctx[i].data.p,
				    ctx[i].data.len));
		n2++;
	}
	return 0;
}
