// SPDX-License-Identifier: MIT
/* NDR 2.0 helpers (ndr.h). */
#include <errno.h>

#include "proto/ndr.h"
#include "util/utf16.h"

/* The first referent id Windows uses; any non-zero value would do. */
#define NDR_FIRST_REF 0x00020000u

void ndr_w_init(struct ndr_w *n, void *buf, size_t cap)
{
	wcur_init(&n->w, buf, cap);
	n->next_ref = NDR_FIRST_REF;
}

void ndr_u16(struct ndr_w *n, uint16_t v)
{
	wcur_align(&n->w, 2);
	wcur_le16(&n->w, v);
}

void ndr_u32(struct ndr_w *n, uint32_t v)
{
	wcur_align(&n->w, 4);
	wcur_le32(&n->w, v);
}

void ndr_ptr(struct ndr_w *n, bool present)
{
	ndr_u32(n, present ? n->next_ref : 0);
	if (present)
		n->next_ref += 4;
}

void ndr_string(struct ndr_w *n, const char *s)
{
	int len = utf8_to_utf16le(s, NULL, 0);
	uint32_t units;
	uint8_t *p;

	if (len < 0) {
		n->w.err = true;
		return;
	}
	units = (uint32_t)len / 2 + 1;
	ndr_u32(n, units);		/* maximum count */
	ndr_u32(n, 0);			/* offset */
	ndr_u32(n, units);		/* actual count */
	p = wcur_reserve(&n->w, (size_t)units * 2);
	if (!p)
		return;
	utf8_to_utf16le(s, p, (size_t)len);
	put_le16(p + len, 0);
}

static void ndr_get_align(struct rcur *r, size_t a)
{
	size_t pad = ((r->off + a - 1) & ~(a - 1)) - r->off;

	rcur_take(r, pad);
}

uint16_t ndr_get_u16(struct rcur *r)
{
	ndr_get_align(r, 2);
	return rcur_le16(r);
}

uint32_t ndr_get_u32(struct rcur *r)
{
	ndr_get_align(r, 4);
	return rcur_le32(r);
}

int ndr_get_string(struct rcur *r, char *out, size_t cap)
{
	uint32_t max, off, count;
	const uint8_t *p;
	int ret;

	max = ndr_get_u32(r);
	off = ndr_get_u32(r);
	count = ndr_get_u32(r);
	if (r->err || off || count > max || max > NDR_STRING_MAX)
		goto bad;
	p = rcur_take(r, (size_t)count * 2);
	if (!p)
		goto bad;
	if (count && !get_le16(p + 2 * (count - 1)))
		count--;		/* its terminator */
	ret = utf16le_to_utf8(p, (size_t)count * 2, out, cap);
	if (ret == -E2BIG)
		return ret;
	if (ret < 0)
		goto bad;
	return 0;
bad:
	r->err = true;
	return -EBADMSG;
}

int ndr_get_unique_string(struct rcur *r, char *out, size_t cap)
{
	uint32_t ref = ndr_get_u32(r);

	if (r->err)
		return -EBADMSG;
	if (cap)
		*out = 0;
	return ref ? ndr_get_string(r, out, cap) : 0;
}
