// SPDX-License-Identifier: MIT
/*
 * Server-side copy FSCTL payloads: the input is an IOCTL input buffer for
 * FSCTL_SRV_COPYCHUNK(_WRITE) ([MS-SMB2] 2.2.31.1) and, as the client
 * reads them, a resume key response and a copychunk response
 * (2.2.32.3, 2.2.32.1). A decoded chunk list re-encodes and decodes the
 * same.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/fsctl.h"

static uint8_t buf[FSCTL_COPYCHUNK_HDR_LEN + 4096 * FSCTL_COPYCHUNK_CHUNK_LEN];

static void copychunk(const uint8_t *p, size_t len)
{
	struct fsctl_copychunk c, c2;
	struct fsctl_chunk ch[64], ch2;
	uint32_t i, n;
	struct wcur w;
	int rc;

	rc = fsctl_copychunk_decode(p, len, &c);
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG);
	if (len >= FSCTL_RESUME_KEY_LEN)
		FUZZ_ASSERT(c.key == p);
	if (rc)
		return;
	FUZZ_ASSERT_INSIDE(c.chunks, (size_t)c.count * FSCTL_COPYCHUNK_CHUNK_LEN,
			   p, len);
	for (i = 0; i < c.count; i++)
		fsctl_copychunk_get(&c, i, i < 64 ? &ch[i] : &ch2);
	/* the first chunks again through the encoder */
	n = c.count < 64 ? c.count : 64;
	wcur_init(&w, buf, sizeof(buf));
	fsctl_copychunk_encode(&w, c.key, ch, n);
	FUZZ_ASSERT(!w.err && w.off == FSCTL_COPYCHUNK_HDR_LEN +
				  (size_t)n * FSCTL_COPYCHUNK_CHUNK_LEN);
	FUZZ_ASSERT(!fsctl_copychunk_decode(buf, w.off, &c2));
	FUZZ_ASSERT(c2.count == n && !memcmp(c2.key, c.key, FSCTL_RESUME_KEY_LEN));
	for (i = 0; i < n; i++) {
		fsctl_copychunk_get(&c2, i, &ch2);
		FUZZ_ASSERT(ch2.src_off == ch[i].src_off &&
			    ch2.dst_off == ch[i].dst_off && ch2.len == ch[i].len);
	}
}

/* QUERY_ALLOCATED_RANGES, ZERO_DATA, DUPLICATE_EXTENTS: decode, re-encode, same bytes */
static void extents(const uint8_t *p, size_t len)
{
	struct fsctl_dup_extents d;
	struct fsctl_range r;
	uint64_t off, beyond;
	struct wcur w;
	int rc;

	rc = fsctl_range_decode(p, len, &r);
	FUZZ_ASSERT(rc == (len < FSCTL_RANGE_LEN ? -EBADMSG : 0));
	if (!rc) {
		wcur_init(&w, buf, sizeof(buf));
		fsctl_range_encode(&w, &r);
		FUZZ_ASSERT(w.off == FSCTL_RANGE_LEN && !memcmp(buf, p, w.off));
	}
	rc = fsctl_zero_data_decode(p, len, &off, &beyond);
	FUZZ_ASSERT(rc == (len < FSCTL_ZERO_DATA_LEN ? -EBADMSG : 0));
	if (!rc) {
		wcur_init(&w, buf, sizeof(buf));
		fsctl_zero_data_encode(&w, off, beyond);
		FUZZ_ASSERT(w.off == FSCTL_ZERO_DATA_LEN && !memcmp(buf, p, w.off));
	}
	rc = fsctl_dup_extents_decode(p, len, &d);
	FUZZ_ASSERT(rc == (len < FSCTL_DUP_EXTENTS_LEN ? -EBADMSG : 0));
	if (!rc) {
		wcur_init(&w, buf, sizeof(buf));
		fsctl_dup_extents_encode(&w, &d);
		FUZZ_ASSERT(w.off == FSCTL_DUP_EXTENTS_LEN && !memcmp(buf, p, w.off));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsctl_copychunk_rsp r, r2;
	uint8_t key[FSCTL_RESUME_KEY_LEN];
	struct wcur w;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&r2, 0, sizeof(r2));
	copychunk(data, size);
	extents(data, size);
	rc = fsctl_resume_key_rsp_decode(data, size, key);
	FUZZ_ASSERT(rc == (size < FSCTL_RESUME_KEY_RSP_MIN ? -EBADMSG : 0));
	if (!rc) {
		FUZZ_ASSERT(!memcmp(key, data, FSCTL_RESUME_KEY_LEN));
		wcur_init(&w, buf, sizeof(buf));
		fsctl_resume_key_rsp_encode(&w, key, FSCTL_RESUME_KEY_RSP_LEN);
		FUZZ_ASSERT(!fsctl_resume_key_rsp_decode(buf, w.off, key));
	}
	rc = fsctl_copychunk_rsp_decode(data, size, &r);
	FUZZ_ASSERT(rc == (size < FSCTL_COPYCHUNK_RSP_LEN ? -EBADMSG : 0));
	if (!rc) {
		wcur_init(&w, buf, sizeof(buf));
		fsctl_copychunk_rsp_encode(&w, &r);
		FUZZ_ASSERT(!fsctl_copychunk_rsp_decode(buf, w.off, &r2));
		FUZZ_ASSERT(!memcmp(&r, &r2, sizeof(r)));
		FUZZ_ASSERT(!memcmp(buf, data, FSCTL_COPYCHUNK_RSP_LEN));
	}
	return 0;
}
