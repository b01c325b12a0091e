// SPDX-License-Identifier: MIT
/* MS-SMBD PDUs and buffer descriptors ([MS-SMBD] 2.2). */
#include <errno.h>

#include "proto/smbd.h"

int smbd_neg_req_decode(const uint8_t *p, size_t len, struct smbd_neg_req *r)
{
	if (len < SMBD_NEG_REQ_SIZE)
		return -EPROTO;
	r->min_version = get_le16(p);
	r->max_version = get_le16(p + 2);
	r->credits_requested = get_le16(p + 6);
	r->preferred_send_size = get_le32(p + 8);
	r->max_receive_size = get_le32(p + 12);
	r->max_fragmented_size = get_le32(p + 16);
	return 0;
}

void smbd_neg_req_encode(uint8_t p[SMBD_NEG_REQ_SIZE], const struct smbd_neg_req *r)
{
	put_le16(p, r->min_version);
	put_le16(p + 2, r->max_version);
	put_le16(p + 4, 0);
	put_le16(p + 6, r->credits_requested);
	put_le32(p + 8, r->preferred_send_size);
	put_le32(p + 12, r->max_receive_size);
	put_le32(p + 16, r->max_fragmented_size);
}

int smbd_neg_rsp_decode(const uint8_t *p, size_t len, struct smbd_neg_rsp *r)
{
	if (len < SMBD_NEG_RSP_SIZE)
		return -EPROTO;
	r->min_version = get_le16(p);
	r->max_version = get_le16(p + 2);
	r->negotiated_version = get_le16(p + 4);
	r->credits_requested = get_le16(p + 8);
	r->credits_granted = get_le16(p + 10);
	r->status = get_le32(p + 12);
	r->max_read_write_size = get_le32(p + 16);
	r->preferred_send_size = get_le32(p + 20);
	r->max_receive_size = get_le32(p + 24);
	r->max_fragmented_size = get_le32(p + 28);
	return 0;
}

void smbd_neg_rsp_encode(uint8_t p[SMBD_NEG_RSP_SIZE], const struct smbd_neg_rsp *r)
{
	put_le16(p, r->min_version);
	put_le16(p + 2, r->max_version);
	put_le16(p + 4, r->negotiated_version);
	put_le16(p + 6, 0);
	put_le16(p + 8, r->credits_requested);
	put_le16(p + 10, r->credits_granted);
	put_le32(p + 12, r->status);
	put_le32(p + 16, r->max_read_write_size);
	put_le32(p + 20, r->preferred_send_size);
	put_le32(p + 24, r->max_receive_size);
	put_le32(p + 28, r->max_fragmented_size);
}

int smbd_data_decode(const uint8_t *p, size_t len, uint32_t max_fragmented,
		     struct smbd_data *d)
{
	if (len < SMBD_DATA_MIN)
		return -EPROTO;
	d->credits_requested = get_le16(p);
	d->credits_granted = get_le16(p + 2);
	d->flags = get_le16(p + 4);
	d->remaining = get_le32(p + 8);
	d->data_offset = get_le32(p + 12);
	d->data_length = get_le32(p + 16);
	if (!d->credits_requested)
		return -EPROTO;
	if (d->data_length) {
		if (d->data_offset % 8 || d->data_offset < SMBD_DATA_MIN ||
		    !range_ok(d->data_offset, d->data_length, len))
			return -EPROTO;
	} else if (d->data_offset && d->data_offset % 8) {
		return -EPROTO;
	}
	if (d->data_length > max_fragmented || d->remaining > max_fragmented ||
	    (uint64_t)d->data_length + d->remaining > max_fragmented)
		return -EPROTO;
	return 0;
}

size_t smbd_data_encode(uint8_t *p, const struct smbd_data *d)
{
	put_le16(p, d->credits_requested);
	put_le16(p + 2, d->credits_granted);
	put_le16(p + 4, d->flags);
	put_le16(p + 6, 0);
	put_le32(p + 8, d->remaining);
	put_le32(p + 12, d->data_length ? SMBD_DATA_OFFSET : 0);
	put_le32(p + 16, d->data_length);
	if (!d->data_length)
		return SMBD_DATA_MIN;
	put_le32(p + 20, 0);		/* padding */
	return SMBD_DATA_OFFSET;
}

int smbd_desc_decode(const uint8_t *p, size_t len, struct smbd_desc *out,
		     int max)
{
	int i, n;

	if (len == 0 || len % SMBD_DESC_SIZE)
		return -EINVAL;
	n = (int)(len / SMBD_DESC_SIZE);
	if (n > max)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		out[i].offset = get_le64(p + 16 * i);
		out[i].token = get_le32(p + 16 * i + 8);
		out[i].length = get_le32(p + 16 * i + 12);
		if (!out[i].length || out[i].offset + out[i].length < out[i].offset)
			return -EINVAL;
	}
	return n;
}

void smbd_desc_encode(uint8_t *p, const struct smbd_desc *d, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		put_le64(p + 16 * i, d[i].offset);
		put_le32(p + 16 * i + 8, d[i].token);
		put_le32(p + 16 * i + 12, d[i].length);
	}
}
