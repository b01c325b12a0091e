// SPDX-License-Identifier: MIT
/*
 * Oplock and lease breaks, and the lease and durable-handle CREATE
 * contexts ([MS-SMB2] 2.2.13.2.3-2.2.13.2.12, 2.2.14.2.*, 2.2.23-2.2.26).
 * Bodies are given without the SMB2 header.
 */
#include <errno.h>
#include <string.h>

#include "proto/lease.h"
#include "util/bytes.h"

static void fid_get(const uint8_t *p, struct smb2_fid *f)
{
	f->persistent = get_le64(p);
	f->volatile_id = get_le64(p + 8);
}

static void fid_put(uint8_t *p, const struct smb2_fid *f)
{
	put_le64(p, f->persistent);
	put_le64(p + 8, f->volatile_id);
}

int smb2_oplock_break_decode(const uint8_t *p, size_t len, struct smb2_oplock_break *b)
{
	if (len < SMB2_OPLOCK_BREAK_SIZE || get_le16(p) != SMB2_OPLOCK_BREAK_SIZE)
		return -EBADMSG;
	b->level = p[2];
	fid_get(p + 8, &b->fid);
	return 0;
}

void smb2_oplock_break_encode(struct wcur *w, const struct smb2_oplock_break *b)
{
	uint8_t *p = wcur_reserve(w, SMB2_OPLOCK_BREAK_SIZE);

	if (!p)
		return;
	memset(p, 0, SMB2_OPLOCK_BREAK_SIZE);
	put_le16(p, SMB2_OPLOCK_BREAK_SIZE);
	p[2] = b->level;
	fid_put(p + 8, &b->fid);
}

void smb2_lease_break_encode(struct wcur *w, const struct smb2_lease_break *b)
{
	uint8_t *p = wcur_reserve(w, SMB2_LEASE_BREAK_NOTIFY_SIZE);

	if (!p)
		return;
	memset(p, 0, SMB2_LEASE_BREAK_NOTIFY_SIZE);
	put_le16(p, SMB2_LEASE_BREAK_NOTIFY_SIZE);
	put_le16(p + 2, b->new_epoch);
	put_le32(p + 4, b->flags);
	memcpy(p + 8, b->key, 16);
	put_le32(p + 24, b->current);
	put_le32(p + 28, b->new_state);
	/* BreakReason, AccessMaskHint, ShareMaskHint: 0 */
}

int smb2_lease_break_decode(const uint8_t *p, size_t len, struct smb2_lease_break *b)
{
	if (len < SMB2_LEASE_BREAK_NOTIFY_SIZE ||
	    get_le16(p) != SMB2_LEASE_BREAK_NOTIFY_SIZE)
		return -EBADMSG;
	b->new_epoch = get_le16(p + 2);
	b->flags = get_le32(p + 4);
	memcpy(b->key, p + 8, 16);
	b->current = get_le32(p + 24);
	b->new_state = get_le32(p + 28);
	return 0;
}

int smb2_lease_ack_decode(const uint8_t *p, size_t len, struct smb2_lease_ack *a)
{
	if (len < SMB2_LEASE_ACK_SIZE || get_le16(p) != SMB2_LEASE_ACK_SIZE)
		return -EBADMSG;
	a->flags = get_le32(p + 4);
	memcpy(a->key, p + 8, 16);
	a->state = get_le32(p + 24);
	a->duration = get_le64(p + 28);
	return 0;
}

void smb2_lease_ack_encode(struct wcur *w, const struct smb2_lease_ack *a)
{
	uint8_t *p = wcur_reserve(w, SMB2_LEASE_ACK_SIZE);

	if (!p)
		return;
	memset(p, 0, SMB2_LEASE_ACK_SIZE);
	put_le16(p, SMB2_LEASE_ACK_SIZE);
	put_le32(p + 4, a->flags);
	memcpy(p + 8, a->key, 16);
	put_le32(p + 24, a->state);
	put_le64(p + 28, a->duration);
}

int smb2_lease_ctx_decode(const uint8_t *p, size_t len, struct smb2_lease_ctx *l)
{
	memset(l, 0, sizeof(*l));
	if (len != SMB2_LEASE_CTX_V1_SIZE && len < SMB2_LEASE_CTX_V2_SIZE)
		return -EBADMSG;
	l->version = len >= SMB2_LEASE_CTX_V2_SIZE ? 2 : 1;
	memcpy(l->key, p, 16);
	l->state = get_le32(p + 16);
	l->flags = get_le32(p + 20);
	l->duration = get_le64(p + 24);
	if (l->version == 2) {
		memcpy(l->parent_key, p + 32, 16);
		l->epoch = get_le16(p + 48);
	}
	return 0;
}

size_t smb2_lease_ctx_encode(uint8_t *buf, const struct smb2_lease_ctx *l)
{
	size_t n = l->version == 2 ? SMB2_LEASE_CTX_V2_SIZE : SMB2_LEASE_CTX_V1_SIZE;

	memset(buf, 0, n);
	memcpy(buf, l->key, 16);
	put_le32(buf + 16, l->state);
	put_le32(buf + 20, l->flags);
	put_le64(buf + 24, l->duration);
	if (l->version == 2) {
		memcpy(buf + 32, l->parent_key, 16);
		put_le16(buf + 48, l->epoch);
	}
	return n;
}

int smb2_dhnc_decode(const uint8_t *p, size_t len, struct smb2_fid *fid)
{
	if (len < 16)
		return -EBADMSG;
	fid_get(p, fid);
	return 0;
}

int smb2_dh2q_decode(const uint8_t *p, size_t len, struct smb2_durable_v2 *d)
{
	memset(d, 0, sizeof(*d));
	if (len < 32)
		return -EBADMSG;
	d->timeout = get_le32(p);
	d->flags = get_le32(p + 4);
	memcpy(d->create_guid, p + 16, 16);
	return 0;
}

int smb2_dh2c_decode(const uint8_t *p, size_t len, struct smb2_durable_v2 *d)
{
	memset(d, 0, sizeof(*d));
	if (len < 36)
		return -EBADMSG;
	fid_get(p, &d->fid);
	memcpy(d->create_guid, p + 16, 16);
	d->flags = get_le32(p + 32);
	return 0;
}

size_t smb2_dhnq_encode(uint8_t *buf)
{
	memset(buf, 0, 16);
	return 16;
}

size_t smb2_dhnc_encode(uint8_t *buf, const struct smb2_fid *fid)
{
	fid_put(buf, fid);
	return 16;
}

size_t smb2_dh2q_encode(uint8_t *buf, const struct smb2_durable_v2 *d)
{
	memset(buf, 0, 32);
	put_le32(buf, d->timeout);
	put_le32(buf + 4, d->flags);
	memcpy(buf + 16, d->create_guid, 16);
	return 32;
}

size_t smb2_dh2c_encode(uint8_t *buf, const struct smb2_durable_v2 *d)
{
	fid_put(buf, &d->fid);
	memcpy(buf + 16, d->create_guid, 16);
	put_le32(buf + 32, d->flags);
	return 36;
}

size_t smb2_dh2q_rsp_encode(uint8_t *buf, uint32_t timeout, uint32_t flags)
{
	put_le32(buf, timeout);
	put_le32(buf + 4, flags);
	return 8;
}

int smb2_dh2q_rsp_decode(const uint8_t *p, size_t len, uint32_t *timeout, uint32_t *flags)
{
	if (len < 8)
		return -EBADMSG;
	*timeout = get_le32(p);
	*flags = get_le32(p + 4);
	return 0;
}
