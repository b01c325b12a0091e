// SPDX-License-Identifier: MIT
/*
 * The compound chain walker alone ([MS-SMB2] 3.3.5.2.7): every PDU lies
 * inside the message, offsets strictly increase and stay 8-byte aligned,
 * the walk terminates, and it agrees with a naive reference walk. Also
 * checks that the header codec round-trips each PDU header.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/smb2.h"

/* Reference: number of PDUs of a well-formed chain, or -1. */
static long ref_walk(const uint8_t *msg, size_t len)
{
	size_t off = 0;
	long n = 0;

	for (;;) {
		uint32_t next;

		if (len < off + SMB2_HDR_SIZE ||
		    memcmp(msg + off, "\xfeSMB", 4))
			return -1;
		n++;
		next = get_le32(msg + off + 20);
		if (!next)
			return n;
		if (next < SMB2_HDR_SIZE || next % 8 || off + next >= len)
			return -1;
		off += next;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, prev = 0, plen, next, covered = 0;
	long n = 0, ref = ref_walk(data, size);
	int ret;

	for (;;) {
		struct smb2_hdr h;
		uint8_t enc[SMB2_HDR_SIZE];

		ret = smb2_chain_pdu(data, size, off, &plen, &next);
		if (ret) {
			FUZZ_ASSERT(ret == -EBADMSG);
			break;
		}
		n++;
		FUZZ_ASSERT(n <= (long)(size / SMB2_HDR_SIZE));
		FUZZ_ASSERT(off % 8 == 0);
		FUZZ_ASSERT(plen >= SMB2_HDR_SIZE);
		FUZZ_ASSERT_INSIDE(data + off, plen, data, size);
		FUZZ_ASSERT(off == covered);
		covered += plen;
		fuzz_touch(data + off, plen);

		/* the header codec (StructureSize must be 64) round-trips */
		if (!smb2_hdr_decode(data + off, plen, &h)) {
			FUZZ_ASSERT(h.next_command == (next ? next - off : 0));
			smb2_hdr_encode(enc, &h);
			FUZZ_ASSERT(!memcmp(enc, data + off, SMB2_HDR_SIZE));
		} else {
			FUZZ_ASSERT(get_le16(data + off + 4) != SMB2_HDR_SIZE);
		}
		if (!next) {
			/* the last PDU runs to the end of the message */
			FUZZ_ASSERT(off + plen == size);
			FUZZ_ASSERT(ref == n);
			return 0;
		}
		FUZZ_ASSERT(next > off);
		FUZZ_ASSERT(next == off + plen);
		prev = off;
		off = next;
		FUZZ_ASSERT(off > prev);
	}
	FUZZ_ASSERT(ref == -1);
	return 0;
}
