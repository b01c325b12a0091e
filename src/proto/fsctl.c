// SPDX-License-Identifier: MIT
/* Server-side copy FSCTL payloads ([MS-SMB2] 2.2.31.1, 2.2.32.1, 2.2.32.3). */
#include <errno.h>

#include "proto/fsctl.h"

void fsctl_resume_key_rsp_encode(struct wcur *w, const uint8_t *key, size_t len)
{
	wcur_bytes(w, key, FSCTL_RESUME_KEY_LEN);
	wcur_le32(w, 0);		/* ContextLength */
	if (len >= FSCTL_RESUME_KEY_RSP_LEN)
		wcur_le32(w, 0);	/* Context: reserved */
}

int fsctl_resume_key_rsp_decode(const uint8_t *p, size_t len, uint8_t *key)
{
	if (len < FSCTL_RESUME_KEY_RSP_MIN)
		return -EBADMSG;
	memcpy(key, p, FSCTL_RESUME_KEY_LEN);
	return 0;
}

int fsctl_copychunk_decode(const uint8_t *p, size_t len, struct fsctl_copychunk *c)
{
	c->key = NULL;
	c->count = 0;
	c->chunks = NULL;
	if (len < FSCTL_RESUME_KEY_LEN)
		return -EBADMSG;
	c->key = p;
	if (len < FSCTL_COPYCHUNK_HDR_LEN)
		return -EBADMSG;
	c->count = get_le32(p + 24);
	if (!range_ok(FSCTL_COPYCHUNK_HDR_LEN,
		      (uint64_t)c->count * FSCTL_COPYCHUNK_CHUNK_LEN, len))
		return -EBADMSG;
	c->chunks = p + FSCTL_COPYCHUNK_HDR_LEN;
	return 0;
}

void fsctl_copychunk_get(const struct fsctl_copychunk *c, uint32_t i,
			 struct fsctl_chunk *ch)
{
	const uint8_t *p = c->chunks + (size_t)i * FSCTL_COPYCHUNK_CHUNK_LEN;

	ch->src_off = get_le64(p);
	ch->dst_off = get_le64(p + 8);
	ch->len = get_le32(p + 16);
}

void fsctl_copychunk_encode(struct wcur *w, const uint8_t *key,
			    const struct fsctl_chunk *chunks, uint32_t count)
{
	uint32_t i;

	wcur_bytes(w, key, FSCTL_RESUME_KEY_LEN);
	wcur_le32(w, count);
	wcur_le32(w, 0);
	for (i = 0; i < count; i++) {
		wcur_le64(w, chunks[i].src_off);
		wcur_le64(w, chunks[i].dst_off);
		wcur_le32(w, chunks[i].len);
		wcur_le32(w, 0);
	}
}

void fsctl_copychunk_rsp_encode(struct wcur *w, const struct fsctl_copychunk_rsp *r)
{
	wcur_le32(w, r->chunks_written);
	wcur_le32(w, r->chunk_bytes_written);
	wcur_le32(w, r->total_bytes_written);
}

int fsctl_copychunk_rsp_decode(const uint8_t *p, size_t len,
			       struct fsctl_copychunk_rsp *r)
{
	if (len < FSCTL_COPYCHUNK_RSP_LEN)
		return -EBADMSG;
	r->chunks_written = get_le32(p);
	r->chunk_bytes_written = get_le32(p + 4);
	r->total_bytes_written = get_le32(p + 8);
	return 0;
}
