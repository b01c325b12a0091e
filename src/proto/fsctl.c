// SPDX-License-Identifier: MIT
/* Server-side copy FSCTL payloads ([MS-SMB2] 2.2.31.1, 2.2.32.1, 2.2.32.3). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

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

/* SOCKADDR_STORAGE: Family, then per family: port and address. */
static int netif_addr(const uint8_t *sa, struct fsctl_netif *n)
{
	switch (get_le16(sa)) {
	case FSCTL_NETIF_FAMILY_INET:
		n->family = AF_INET;
		memcpy(n->addr, sa + 4, 4);
		return 0;
	case FSCTL_NETIF_FAMILY_INET6:
		n->family = AF_INET6;
		memcpy(n->addr, sa + 8, 16);
		n->scope_id = get_le32(sa + 24);
		return 0;
	default:
		return -EAFNOSUPPORT;
	}
}

int fsctl_netif_decode(const uint8_t *p, size_t len, struct fsctl_netif *out,
		       unsigned int max)
{
	unsigned int kept = 0, walked = 0;
	size_t off = 0;
	uint32_t next;

	if (!len)
		return 0;
	for (;;) {
		struct fsctl_netif n = { 0 };
		const uint8_t *e = p + off;

		if (!range_ok(off, FSCTL_NETIF_ENTRY_LEN, len) ||
		    ++walked > FSCTL_NETIF_MAX_WALK)
			return -EBADMSG;
		next = get_le32(e);
		n.if_index = get_le32(e + 4);
		n.caps = get_le32(e + 8);
		n.link_speed = get_le64(e + 16);
		if (!netif_addr(e + 24, &n) && kept < max)
			out[kept++] = n;
		if (!next)
			return (int)kept;
		if (next < FSCTL_NETIF_ENTRY_LEN)
			return -EBADMSG;
		off += next;
	}
}

void fsctl_netif_encode(struct wcur *w, const struct fsctl_netif *n, uint32_t next)
{
	uint8_t sa[128] = { 0 };

	wcur_le32(w, next);
	wcur_le32(w, n->if_index);
	wcur_le32(w, n->caps);
	wcur_le32(w, 0);
	wcur_le64(w, n->link_speed);
	if (n->family == AF_INET6) {
		put_le16(sa, FSCTL_NETIF_FAMILY_INET6);
		memcpy(sa + 8, n->addr, 16);
		put_le32(sa + 24, n->scope_id);
	} else {
		put_le16(sa, FSCTL_NETIF_FAMILY_INET);
		memcpy(sa + 4, n->addr, 4);
	}
	wcur_bytes(w, sa, sizeof(sa));
}

int fsctl_range_decode(const uint8_t *p, size_t len, struct fsctl_range *r)
{
	if (len < FSCTL_RANGE_LEN)
		return -EBADMSG;
	r->off = get_le64(p);
	r->len = get_le64(p + 8);
	return 0;
}

void fsctl_range_encode(struct wcur *w, const struct fsctl_range *r)
{
	wcur_le64(w, r->off);
	wcur_le64(w, r->len);
}

int fsctl_zero_data_decode(const uint8_t *p, size_t len, uint64_t *off, uint64_t *beyond)
{
	if (len < FSCTL_ZERO_DATA_LEN)
		return -EBADMSG;
	*off = get_le64(p);
	*beyond = get_le64(p + 8);
	return 0;
}

void fsctl_zero_data_encode(struct wcur *w, uint64_t off, uint64_t beyond)
{
	wcur_le64(w, off);
	wcur_le64(w, beyond);
}

int fsctl_dup_extents_decode(const uint8_t *p, size_t len, struct fsctl_dup_extents *d)
{
	if (len < FSCTL_DUP_EXTENTS_LEN)
		return -EBADMSG;
	d->src_persistent = get_le64(p);
	d->src_volatile = get_le64(p + 8);
	d->src_off = get_le64(p + 16);
	d->dst_off = get_le64(p + 24);
	d->len = get_le64(p + 32);
	return 0;
}

void fsctl_dup_extents_encode(struct wcur *w, const struct fsctl_dup_extents *d)
{
	wcur_le64(w, d->src_persistent);
	wcur_le64(w, d->src_volatile);
	wcur_le64(w, d->src_off);
	wcur_le64(w, d->dst_off);
	wcur_le64(w, d->len);
}
