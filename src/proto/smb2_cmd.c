// SPDX-License-Identifier: MIT
/* SMB2 command bodies: requests and responses, both directions. */
#include <errno.h>

#include "proto/posix.h"
#include "proto/smb2.h"

/* A buffer given by offset/length from the header; absent when len 0. */
static int get_buf(const uint8_t *p, size_t len, uint32_t off, uint32_t n,
		   struct smb2_buf *b)
{
	if (n == 0) {
		b->p = NULL;
		b->len = 0;
		return 0;
	}
	if (off < SMB2_HDR_SIZE || !range_ok(off, n, len))
		return -EBADMSG;
	b->p = p + off;
	b->len = n;
	return 0;
}

static void get_fid(const uint8_t *p, struct smb2_fid *f)
{
	f->persistent = get_le64(p);
	f->volatile_id = get_le64(p + 8);
}

static void put_fid(struct wcur *w, const struct smb2_fid *f)
{
	wcur_le64(w, f->persistent);
	wcur_le64(w, f->volatile_id);
}

static void get_times(const uint8_t *p, struct smb2_file_times *t)
{
	t->creation = get_le64(p);
	t->last_access = get_le64(p + 8);
	t->last_write = get_le64(p + 16);
	t->change = get_le64(p + 24);
}

static void put_times(struct wcur *w, const struct smb2_file_times *t)
{
	wcur_le64(w, t->creation);
	wcur_le64(w, t->last_access);
	wcur_le64(w, t->last_write);
	wcur_le64(w, t->change);
}

/* ---- NEGOTIATE ---- */

static int negctx_decode(const uint8_t *p, size_t len, uint32_t off,
			 uint16_t count, struct smb2_negctx *c)
{
	uint16_t i, j, type, dlen, n;
	const uint8_t *d;
	uint32_t seen = 0;

	if (count > 32 || (off & 7))
		return -EBADMSG;
	for (i = 0; i < count; i++) {
		if (!range_ok(off, 8, len))
			return -EBADMSG;
		type = get_le16(p + off);
		dlen = get_le16(p + off + 2);
		if (!range_ok(off + 8, dlen, len))
			return -EBADMSG;
		d = p + off + 8;
		switch (type) {
		case SMB2_PREAUTH_INTEGRITY_CAPABILITIES:
			if (seen & 1 || dlen < 4)
				return -EBADMSG;
			seen |= 1;
			n = get_le16(d);
			c->salt_len = get_le16(d + 2);
			if (!n || !range_ok(4 + 2u * n, c->salt_len, dlen))
				return -EBADMSG;
			c->preauth = true;
			for (j = 0; j < n; j++)
				if (get_le16(d + 4 + 2 * j) == SMB2_PREAUTH_SHA512)
					c->preauth_sha512 = true;
			if (c->salt_len > sizeof(c->salt))
				c->salt_len = sizeof(c->salt);
			memcpy(c->salt, d + 4 + 2 * n, c->salt_len);
			break;
		case SMB2_ENCRYPTION_CAPABILITIES:
			if (seen & 2 || dlen < 2)
				return -EBADMSG;
			seen |= 2;
			n = get_le16(d);
			if (!n || !range_ok(2, 2u * n, dlen))
				return -EBADMSG;
			for (j = 0; j < n && c->ncipher < 8; j++)
				c->ciphers[c->ncipher++] = get_le16(d + 2 + 2 * j);
			break;
		case SMB2_SIGNING_CAPABILITIES:
			if (seen & 4 || dlen < 2)
				return -EBADMSG;
			seen |= 4;
			n = get_le16(d);
			if (!n || !range_ok(2, 2u * n, dlen))
				return -EBADMSG;
			for (j = 0; j < n && c->nsign < 8; j++)
				c->signs[c->nsign++] = get_le16(d + 2 + 2 * j);
			break;
		case SMB2_RDMA_TRANSFORM_CAPABILITIES:
			/* TransformCount, Reserved1, Reserved2, ids */
			if (seen & 8 || dlen < 8)
				return -EBADMSG;
			seen |= 8;
			n = get_le16(d);
			if (!n || !range_ok(8, 2u * n, dlen))
				return -EBADMSG;
			for (j = 0; j < n && c->nxform < 4; j++)
				c->xforms[c->nxform++] = get_le16(d + 8 + 2 * j);
			break;
		case SMB2_POSIX_EXTENSIONS_AVAILABLE:
			/* POSIX-SMB2 2.2.3.1.8: a list of the versions (GUIDs) asked for */
			if (dlen % POSIX_CTX_TAG_LEN)
				return -EBADMSG;
			for (j = 0; j < dlen; j += POSIX_CTX_TAG_LEN)
				if (!memcmp(d + j, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN))
					c->posix = true;
			break;
		case SMB2_NETNAME_NEGOTIATE_CONTEXT_ID:
			c->has_netname = true;
			break;
		default:
			break;	/* ignored, [MS-SMB2] 3.3.5.4 */
		}
		off = (uint32_t)align8(off + 8u + dlen);
	}
	return 0;
}

int smb2_negotiate_req_decode(const uint8_t *p, size_t len,
			      struct smb2_negotiate_req *r)
{
	uint16_t i, n;
	bool smb311 = false;

	memset(r, 0, sizeof(*r));
	n = get_le16(p + 66);
	if (n == 0 || !range_ok(100, 2u * n, len))
		return -EBADMSG;
	r->security_mode = get_le16(p + 68);
	r->capabilities = get_le32(p + 72);
	memcpy(r->client_guid, p + 76, 16);
	for (i = 0; i < n; i++) {
		uint16_t d = get_le16(p + 100 + 2 * i);

		if (d == SMB2_DIALECT_311)
			smb311 = true;
		if (r->ndialects < SMB2_MAX_DIALECTS)
			r->dialects[r->ndialects++] = d;
	}
	if (smb311) {
		uint32_t off = get_le32(p + 92);

		r->ctx_count = get_le16(p + 96);
		if (r->ctx_count) {
			if (off < 100u + 2u * n)
				return -EBADMSG;
			return negctx_decode(p, len, off, r->ctx_count, &r->ctx);
		}
	}
	return 0;
}

static void negctx_hdr(struct wcur *w, uint16_t type, uint16_t dlen)
{
	wcur_align(w, 8);
	wcur_le16(w, type);
	wcur_le16(w, dlen);
	wcur_le32(w, 0);
}

static void xform_ctx_encode(struct wcur *w, const uint16_t *ids, uint16_t n)
{
	uint16_t i;

	negctx_hdr(w, SMB2_RDMA_TRANSFORM_CAPABILITIES, 8 + 2 * n);
	wcur_le16(w, n);
	wcur_le16(w, 0);
	wcur_le32(w, 0);
	for (i = 0; i < n; i++)
		wcur_le16(w, ids[i]);
}

void smb2_negotiate_req_encode(struct wcur *w, const struct smb2_negotiate_req *r)
{
	bool smb311 = false;
	size_t ctx_off_pos;
	uint16_t i, nctx = 0;

	wcur_le16(w, 36);
	wcur_le16(w, r->ndialects);
	wcur_le16(w, r->security_mode);
	wcur_le16(w, 0);
	wcur_le32(w, r->capabilities);
	wcur_bytes(w, r->client_guid, 16);
	ctx_off_pos = w->off;
	wcur_le32(w, 0);	/* NegotiateContextOffset */
	wcur_le16(w, 0);	/* NegotiateContextCount */
	wcur_le16(w, 0);
	for (i = 0; i < r->ndialects; i++) {
		wcur_le16(w, r->dialects[i]);
		if (r->dialects[i] == SMB2_DIALECT_311)
			smb311 = true;
	}
	if (!smb311 || w->err)
		return;
	wcur_align(w, 8);
	put_le32(w->p + ctx_off_pos, (uint32_t)w->off);
	negctx_hdr(w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES, 6 + 32);
	wcur_le16(w, 1);
	wcur_le16(w, 32);
	wcur_le16(w, SMB2_PREAUTH_SHA512);
	wcur_bytes(w, r->ctx.salt, 32);
	nctx++;
	if (r->ctx.ncipher) {
		negctx_hdr(w, SMB2_ENCRYPTION_CAPABILITIES, 2 + 2 * r->ctx.ncipher);
		wcur_le16(w, r->ctx.ncipher);
		for (i = 0; i < r->ctx.ncipher; i++)
			wcur_le16(w, r->ctx.ciphers[i]);
		nctx++;
	}
	if (r->ctx.nsign) {
		negctx_hdr(w, SMB2_SIGNING_CAPABILITIES, 2 + 2 * r->ctx.nsign);
		wcur_le16(w, r->ctx.nsign);
		for (i = 0; i < r->ctx.nsign; i++)
			wcur_le16(w, r->ctx.signs[i]);
		nctx++;
	}
	if (r->ctx.nxform) {
		xform_ctx_encode(w, r->ctx.xforms, r->ctx.nxform);
		nctx++;
	}
	if (r->ctx.posix) {
		negctx_hdr(w, SMB2_POSIX_EXTENSIONS_AVAILABLE, POSIX_CTX_TAG_LEN);
		wcur_bytes(w, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN);
		nctx++;
	}
	if (!w->err)
		put_le16(w->p + ctx_off_pos + 4, nctx);
}

int smb2_negotiate_rsp_decode(const uint8_t *p, size_t len,
			      struct smb2_negotiate_rsp *r)
{
	struct smb2_negctx c;
	uint16_t n;
	int ret;

	memset(r, 0, sizeof(*r));
	if (len < 128 || get_le16(p + 64) != 65)
		return -EBADMSG;
	r->security_mode = get_le16(p + 66);
	r->dialect = get_le16(p + 68);
	memcpy(r->server_guid, p + 72, 16);
	r->capabilities = get_le32(p + 88);
	r->max_transact = get_le32(p + 92);
	r->max_read = get_le32(p + 96);
	r->max_write = get_le32(p + 100);
	r->system_time = get_le64(p + 104);
	r->start_time = get_le64(p + 112);
	ret = get_buf(p, len, get_le16(p + 120), get_le16(p + 122), &r->security);
	if (ret)
		return ret;
	if (r->dialect != SMB2_DIALECT_311)
		return 0;
	n = get_le16(p + 70);
	memset(&c, 0, sizeof(c));
	ret = negctx_decode(p, len, get_le32(p + 124), n, &c);
	if (ret)
		return ret;
	if (!c.preauth || !c.preauth_sha512 || c.ncipher > 1 || c.nsign > 1)
		return -EBADMSG;
	r->preauth = true;
	memcpy(r->salt, c.salt, c.salt_len);
	r->cipher = c.ncipher ? c.ciphers[0] : 0;
	r->sign_ctx = c.nsign == 1;
	r->signing = c.nsign ? c.signs[0] : SMB2_SIGNING_AES_CMAC;
	r->posix = c.posix;
	r->nxform = c.nxform;
	memcpy(r->xforms, c.xforms, sizeof(r->xforms));
	return 0;
}

void smb2_negotiate_rsp_encode(struct wcur *w, const struct smb2_negotiate_rsp *r)
{
	size_t ctx_off_pos;
	uint16_t nctx = 0;

	wcur_le16(w, 65);
	wcur_le16(w, r->security_mode);
	wcur_le16(w, r->dialect);
	wcur_le16(w, 0);	/* NegotiateContextCount, fixed below */
	wcur_bytes(w, r->server_guid, 16);
	wcur_le32(w, r->capabilities);
	wcur_le32(w, r->max_transact);
	wcur_le32(w, r->max_read);
	wcur_le32(w, r->max_write);
	wcur_le64(w, r->system_time);
	wcur_le64(w, r->start_time);
	wcur_le16(w, r->security.len ? 128 : 0);
	wcur_le16(w, (uint16_t)r->security.len);
	ctx_off_pos = w->off;
	wcur_le32(w, 0);
	wcur_bytes(w, r->security.p, r->security.len);
	if (r->dialect != SMB2_DIALECT_311) {
		if (!r->security.len)
			wcur_u8(w, 0);	/* the 1-byte Buffer */
		return;
	}
	wcur_align(w, 8);
	if (w->err)
		return;
	put_le32(w->p + ctx_off_pos, (uint32_t)w->off);
	negctx_hdr(w, SMB2_PREAUTH_INTEGRITY_CAPABILITIES, 6 + 32);
	wcur_le16(w, 1);
	wcur_le16(w, 32);
	wcur_le16(w, SMB2_PREAUTH_SHA512);
	wcur_bytes(w, r->salt, 32);
	nctx++;
	if (r->cipher) {
		negctx_hdr(w, SMB2_ENCRYPTION_CAPABILITIES, 4);
		wcur_le16(w, 1);
		wcur_le16(w, r->cipher);
		nctx++;
	}
	if (r->sign_ctx) {
		negctx_hdr(w, SMB2_SIGNING_CAPABILITIES, 4);
		wcur_le16(w, 1);
		wcur_le16(w, r->signing);
		nctx++;
	}
	if (r->nxform) {
		xform_ctx_encode(w, r->xforms, r->nxform);
		nctx++;
	}
	if (r->posix) {
		negctx_hdr(w, SMB2_POSIX_EXTENSIONS_AVAILABLE, POSIX_CTX_TAG_LEN);
		wcur_bytes(w, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN);
		nctx++;
	}
	if (!w->err)
		put_le16(w->p + 70, nctx);
}

/* ---- SESSION_SETUP ---- */

int smb2_sess_setup_req_decode(const uint8_t *p, size_t len,
			       struct smb2_sess_setup_req *r)
{
	r->flags = p[66];
	r->security_mode = p[67];
	r->capabilities = get_le32(p + 68);
	r->prev_session_id = get_le64(p + 80);
	return get_buf(p, len, get_le16(p + 76), get_le16(p + 78), &r->security);
}

void smb2_sess_setup_req_encode(struct wcur *w, const struct smb2_sess_setup_req *r)
{
	wcur_le16(w, 25);
	wcur_u8(w, r->flags);
	wcur_u8(w, r->security_mode);
	wcur_le32(w, r->capabilities);
	wcur_le32(w, 0);	/* Channel */
	wcur_le16(w, 88);
	wcur_le16(w, (uint16_t)r->security.len);
	wcur_le64(w, r->prev_session_id);
	if (r->security.len)
		wcur_bytes(w, r->security.p, r->security.len);
	else
		wcur_u8(w, 0);
}

int smb2_sess_setup_rsp_decode(const uint8_t *p, size_t len,
			       struct smb2_sess_setup_rsp *r)
{
	if (len < 72 || get_le16(p + 64) != 9)
		return -EBADMSG;
	r->session_flags = get_le16(p + 66);
	return get_buf(p, len, get_le16(p + 68), get_le16(p + 70), &r->security);
}

void smb2_sess_setup_rsp_encode(struct wcur *w, const struct smb2_sess_setup_rsp *r)
{
	wcur_le16(w, 9);
	wcur_le16(w, r->session_flags);
	wcur_le16(w, r->security.len ? 72 : 0);
	wcur_le16(w, (uint16_t)r->security.len);
	if (r->security.len)
		wcur_bytes(w, r->security.p, r->security.len);
	else
		wcur_u8(w, 0);
}

void smb2_simple_encode(struct wcur *w)
{
	wcur_le16(w, 4);
	wcur_le16(w, 0);
}

/* ---- TREE_CONNECT ---- */

int smb2_tree_connect_req_decode(const uint8_t *p, size_t len,
				 struct smb2_tree_connect_req *r)
{
	r->flags = get_le16(p + 66);
	return get_buf(p, len, get_le16(p + 68), get_le16(p + 70), &r->path);
}

void smb2_tree_connect_req_encode(struct wcur *w, const struct smb2_tree_connect_req *r)
{
	wcur_le16(w, 9);
	wcur_le16(w, r->flags);
	wcur_le16(w, 72);
	wcur_le16(w, (uint16_t)r->path.len);
	wcur_bytes(w, r->path.p, r->path.len);
}

int smb2_tree_connect_rsp_decode(const uint8_t *p, size_t len,
				 struct smb2_tree_connect_rsp *r)
{
	if (len < 80 || get_le16(p + 64) != 16)
		return -EBADMSG;
	r->share_type = p[66];
	r->share_flags = get_le32(p + 68);
	r->capabilities = get_le32(p + 72);
	r->maximal_access = get_le32(p + 76);
	return 0;
}

void smb2_tree_connect_rsp_encode(struct wcur *w, const struct smb2_tree_connect_rsp *r)
{
	wcur_le16(w, 16);
	wcur_u8(w, r->share_type);
	wcur_u8(w, 0);
	wcur_le32(w, r->share_flags);
	wcur_le32(w, r->capabilities);
	wcur_le32(w, r->maximal_access);
}

/* ---- CREATE ---- */

int smb2_create_req_decode(const uint8_t *p, size_t len, struct smb2_create_req *r)
{
	int ret;

	r->oplock = p[67];
	r->impersonation = get_le32(p + 68);
	r->desired_access = get_le32(p + 88);
	r->file_attributes = get_le32(p + 92);
	r->share_access = get_le32(p + 96);
	r->disposition = get_le32(p + 100);
	r->options = get_le32(p + 104);
	ret = get_buf(p, len, get_le16(p + 108), get_le16(p + 110), &r->name);
	if (ret)
		return ret;
	if (r->name.len & 1)
		return -EBADMSG;
	return get_buf(p, len, get_le32(p + 112), get_le32(p + 116), &r->contexts);
}

void smb2_create_req_encode(struct wcur *w, const struct smb2_create_req *r)
{
	size_t ctx_pos;

	wcur_le16(w, 57);
	wcur_u8(w, 0);		/* SecurityFlags */
	wcur_u8(w, r->oplock);
	wcur_le32(w, r->impersonation);
	wcur_le64(w, 0);	/* SmbCreateFlags */
	wcur_le64(w, 0);
	wcur_le32(w, r->desired_access);
	wcur_le32(w, r->file_attributes);
	wcur_le32(w, r->share_access);
	wcur_le32(w, r->disposition);
	wcur_le32(w, r->options);
	wcur_le16(w, 120);
	wcur_le16(w, (uint16_t)r->name.len);
	ctx_pos = w->off;
	wcur_le32(w, 0);
	wcur_le32(w, 0);
	if (r->name.len)
		wcur_bytes(w, r->name.p, r->name.len);
	else
		wcur_u8(w, 0);
	if (r->contexts.len && !w->err) {
		wcur_align(w, 8);
		if (w->err)
			return;
		put_le32(w->p + ctx_pos, (uint32_t)w->off);
		put_le32(w->p + ctx_pos + 4, r->contexts.len);
		wcur_bytes(w, r->contexts.p, r->contexts.len);
	}
}

int smb2_create_rsp_decode(const uint8_t *p, size_t len, struct smb2_create_rsp *r)
{
	if (len < 152 || get_le16(p + 64) != 89)
		return -EBADMSG;
	r->oplock = p[66];
	r->flags = p[67];
	r->action = get_le32(p + 68);
	get_times(p + 72, &r->t);
	r->allocation_size = get_le64(p + 104);
	r->end_of_file = get_le64(p + 112);
	r->attributes = get_le32(p + 120);
	get_fid(p + 128, &r->fid);
	return get_buf(p, len, get_le32(p + 144), get_le32(p + 148), &r->contexts);
}

void smb2_create_rsp_encode(struct wcur *w, const struct smb2_create_rsp *r)
{
	wcur_le16(w, 89);
	wcur_u8(w, r->oplock);
	wcur_u8(w, r->flags);
	wcur_le32(w, r->action);
	put_times(w, &r->t);
	wcur_le64(w, r->allocation_size);
	wcur_le64(w, r->end_of_file);
	wcur_le32(w, r->attributes);
	wcur_le32(w, 0);
	put_fid(w, &r->fid);
	wcur_le32(w, r->contexts.len ? 152 : 0);
	wcur_le32(w, r->contexts.len);
	if (r->contexts.len)
		wcur_bytes(w, r->contexts.p, r->contexts.len);
	else
		wcur_u8(w, 0);
}

int smb2_create_ctx_parse(const uint8_t *p, size_t len,
			  struct smb2_create_ctx *out, int max)
{
	size_t off = 0;
	int n = 0;

	if (!len)
		return 0;
	for (;;) {
		uint32_t next;
		uint16_t noff, nlen, doff;
		uint32_t dlen;

		if (!range_ok(off, 16, len) || n >= max)
			return -EBADMSG;
		next = get_le32(p + off);
		noff = get_le16(p + off + 4);
		nlen = get_le16(p + off + 6);
		doff = get_le16(p + off + 10);
		dlen = get_le32(p + off + 12);
		if (next && (next < 16 || (next & 7) || !range_ok(off, next, len)))
			return -EBADMSG;
		/* name and data must lie inside this context */
		if (noff < 16 || !range_ok(noff, nlen, next ? next : len - off) ||
		    (dlen && (doff < 16 ||
			      !range_ok(doff, dlen, next ? next : len - off))))
			return -EBADMSG;
		out[n].name.p = p + off + noff;
		out[n].name.len = nlen;
		out[n].data.p = dlen ? p + off + doff : NULL;
		out[n].data.len = dlen;
		n++;
		if (!next)
			return n;
		off += next;
	}
}

void smb2_create_ctx_add(struct wcur *w, size_t *prev_off, const char *tag,
			 const void *data, uint32_t len)
{
	smb2_create_ctx_add_name(w, prev_off, tag, 4, data, len);
}

void smb2_create_ctx_add_name(struct wcur *w, size_t *prev_off, const char *name,
			      uint16_t nlen, const void *data, uint32_t len)
{
	uint16_t data_off = (uint16_t)align8(16u + nlen);
	size_t start;

	wcur_align(w, 8);
	if (w->err)
		return;
	start = w->off;
	if (*prev_off != SIZE_MAX)
		put_le32(w->p + *prev_off, (uint32_t)(start - *prev_off));
	*prev_off = start;
	wcur_le32(w, 0);	/* Next */
	wcur_le16(w, 16);	/* NameOffset */
	wcur_le16(w, nlen);
	wcur_le16(w, 0);
	wcur_le16(w, len ? data_off : 0);
	wcur_le32(w, len);
	wcur_bytes(w, name, nlen);
	wcur_zero(w, data_off - 16u - nlen);
	wcur_bytes(w, data, len);
}

/* ---- CLOSE / FLUSH ---- */

int smb2_close_req_decode(const uint8_t *p, size_t len, struct smb2_close_req *r)
{
	r->flags = get_le16(p + 66);
	get_fid(p + 72, &r->fid);
	return 0;
}

void smb2_close_req_encode(struct wcur *w, const struct smb2_close_req *r)
{
	wcur_le16(w, 24);
	wcur_le16(w, r->flags);
	wcur_le32(w, 0);
	put_fid(w, &r->fid);
}

int smb2_close_rsp_decode(const uint8_t *p, size_t len, struct smb2_close_rsp *r)
{
	if (len < 124 || get_le16(p + 64) != 60)
		return -EBADMSG;
	r->flags = get_le16(p + 66);
	get_times(p + 72, &r->t);
	r->allocation_size = get_le64(p + 104);
	r->end_of_file = get_le64(p + 112);
	r->attributes = get_le32(p + 120);
	return 0;
}

void smb2_close_rsp_encode(struct wcur *w, const struct smb2_close_rsp *r)
{
	wcur_le16(w, 60);
	wcur_le16(w, r->flags);
	wcur_le32(w, 0);
	put_times(w, &r->t);
	wcur_le64(w, r->allocation_size);
	wcur_le64(w, r->end_of_file);
	wcur_le32(w, r->attributes);
}

int smb2_flush_req_decode(const uint8_t *p, size_t len, struct smb2_fid *fid)
{
	get_fid(p + 72, fid);
	return 0;
}

void smb2_flush_req_encode(struct wcur *w, const struct smb2_fid *fid)
{
	wcur_le16(w, 24);
	wcur_le16(w, 0);
	wcur_le32(w, 0);
	put_fid(w, fid);
}

/* ---- READ / WRITE ---- */

int smb2_read_req_decode(const uint8_t *p, size_t len, struct smb2_read_req *r)
{
	int ret;

	r->padding = p[66];
	r->flags = p[67];
	r->length = get_le32(p + 68);
	r->offset = get_le64(p + 72);
	get_fid(p + 80, &r->fid);
	r->minimum = get_le32(p + 96);
	r->channel = get_le32(p + 100);
	r->remaining = get_le32(p + 104);
	ret = get_buf(p, len, get_le16(p + 108), get_le16(p + 110),
		      &r->channel_info);
	if (ret)
		return ret;
	/* Channel info must follow the fixed part. */
	if (r->channel_info.len && get_le16(p + 108) < 112)
		return -EBADMSG;
	return 0;
}

void smb2_read_req_encode(struct wcur *w, const struct smb2_read_req *r)
{
	wcur_le16(w, 49);
	wcur_u8(w, r->padding);
	wcur_u8(w, r->flags);
	wcur_le32(w, r->length);
	wcur_le64(w, r->offset);
	put_fid(w, &r->fid);
	wcur_le32(w, r->minimum);
	wcur_le32(w, r->channel);
	wcur_le32(w, r->remaining);
	wcur_le16(w, r->channel_info.len ? 112 : 0);
	wcur_le16(w, (uint16_t)r->channel_info.len);
	if (r->channel_info.len)
		wcur_bytes(w, r->channel_info.p, r->channel_info.len);
	else
		wcur_u8(w, 0);
}

int smb2_read_rsp_decode(const uint8_t *p, size_t len, struct smb2_read_rsp *r)
{
	if (len < 80 || get_le16(p + 64) != 17)
		return -EBADMSG;
	r->data_offset = p[66];
	r->data_length = get_le32(p + 68);
	r->data_remaining = get_le32(p + 72);
	r->flags = get_le32(p + 76);
	return get_buf(p, len, r->data_offset, r->data_length, &r->data);
}

void smb2_read_rsp_encode(struct wcur *w, const struct smb2_read_rsp *r)
{
	wcur_le16(w, 17);
	wcur_u8(w, r->data_offset);
	wcur_u8(w, 0);
	wcur_le32(w, r->data_length);
	wcur_le32(w, r->data_remaining);
	wcur_le32(w, r->flags);
}

int smb2_write_req_decode(const uint8_t *p, size_t len, struct smb2_write_req *r)
{
	int ret;

	r->data_offset = get_le16(p + 66);
	r->length = get_le32(p + 68);
	r->offset = get_le64(p + 72);
	get_fid(p + 80, &r->fid);
	r->channel = get_le32(p + 96);
	r->remaining = get_le32(p + 100);
	r->flags = get_le32(p + 108);
	ret = get_buf(p, len, get_le16(p + 104), get_le16(p + 106),
		      &r->channel_info);
	if (ret)
		return ret;
	if (r->channel_info.len && get_le16(p + 104) < 112)
		return -EBADMSG;
	ret = get_buf(p, len, r->data_offset, r->length, &r->data);
	if (ret)
		return ret;
	if (r->length && r->data_offset < 112)
		return -EBADMSG;
	return 0;
}

void smb2_write_req_encode(struct wcur *w, const struct smb2_write_req *r)
{
	wcur_le16(w, 49);
	wcur_le16(w, r->length ? SMB2_WRITE_REQ_DATA_OFF : 0);
	wcur_le32(w, r->length);
	wcur_le64(w, r->offset);
	put_fid(w, &r->fid);
	wcur_le32(w, r->channel);
	wcur_le32(w, r->remaining);
	wcur_le16(w, r->channel_info.len ? 112 : 0);
	wcur_le16(w, (uint16_t)r->channel_info.len);
	wcur_le32(w, r->flags);
	if (r->channel_info.len)
		wcur_bytes(w, r->channel_info.p, r->channel_info.len);
}

int smb2_write_rsp_decode(const uint8_t *p, size_t len, struct smb2_write_rsp *r)
{
	if (len < 80 || get_le16(p + 64) != 17)
		return -EBADMSG;
	r->count = get_le32(p + 68);
	r->remaining = get_le32(p + 72);
	return 0;
}

void smb2_write_rsp_encode(struct wcur *w, const struct smb2_write_rsp *r)
{
	wcur_le16(w, 17);
	wcur_le16(w, 0);
	wcur_le32(w, r->count);
	wcur_le32(w, r->remaining);
	wcur_le16(w, 0);
	wcur_le16(w, 0);
	/* 80 bytes, no Buffer byte: what Windows, Samba and ksmbd send */
}

/* ---- LOCK ---- */

int smb2_lock_req_decode(const uint8_t *p, size_t len, struct smb2_lock_req *r)
{
	r->count = get_le16(p + 66);
	get_fid(p + 72, &r->fid);
	if (r->count == 0 || !range_ok(88, 24u * r->count, len))
		return -EBADMSG;
	r->locks = p + 88;
	return 0;
}

void smb2_lock_elem_get(const struct smb2_lock_req *r, int i, struct smb2_lock_elem *e)
{
	const uint8_t *q = r->locks + 24 * i;

	e->offset = get_le64(q);
	e->length = get_le64(q + 8);
	e->flags = get_le32(q + 16);
}

/* ---- IOCTL ---- */

int smb2_ioctl_req_decode(const uint8_t *p, size_t len, struct smb2_ioctl_req *r)
{
	r->ctl_code = get_le32(p + 68);
	get_fid(p + 72, &r->fid);
	r->max_input_response = get_le32(p + 96);
	r->max_output_response = get_le32(p + 108);
	r->flags = get_le32(p + 112);
	return get_buf(p, len, get_le32(p + 88), get_le32(p + 92), &r->input);
}

void smb2_ioctl_req_encode(struct wcur *w, const struct smb2_ioctl_req *r)
{
	wcur_le16(w, 57);
	wcur_le16(w, 0);
	wcur_le32(w, r->ctl_code);
	put_fid(w, &r->fid);
	wcur_le32(w, r->input.len ? 120 : 0);
	wcur_le32(w, r->input.len);
	wcur_le32(w, r->max_input_response);
	wcur_le32(w, 0);	/* OutputOffset */
	wcur_le32(w, 0);
	wcur_le32(w, r->max_output_response);
	wcur_le32(w, r->flags);
	wcur_le32(w, 0);
	if (r->input.len)
		wcur_bytes(w, r->input.p, r->input.len);
}

int smb2_ioctl_rsp_decode(const uint8_t *p, size_t len, struct smb2_ioctl_rsp *r)
{
	if (len < 112 || get_le16(p + 64) != 49)
		return -EBADMSG;
	r->ctl_code = get_le32(p + 68);
	get_fid(p + 72, &r->fid);
	return get_buf(p, len, get_le32(p + 96), get_le32(p + 100), &r->output);
}

void smb2_ioctl_rsp_encode(struct wcur *w, const struct smb2_ioctl_rsp *r,
			   uint32_t output_len)
{
	wcur_le16(w, 49);
	wcur_le16(w, 0);
	wcur_le32(w, r->ctl_code);
	put_fid(w, &r->fid);
	wcur_le32(w, 112);	/* InputOffset */
	wcur_le32(w, 0);
	wcur_le32(w, 112);	/* OutputOffset */
	wcur_le32(w, output_len);
	wcur_le32(w, 0);
	wcur_le32(w, 0);
}

/* ---- QUERY_DIRECTORY / QUERY_INFO / SET_INFO ---- */

/* The fixed part was checked by smb2_req_validate. */
void smb2_notify_req_decode(const uint8_t *p, size_t len, struct smb2_notify_req *r)
{
	(void)len;
	r->flags = get_le16(p + 66);
	r->output_len = get_le32(p + 68);
	get_fid(p + 72, &r->fid);
	r->filter = get_le32(p + 88);
}

void smb2_notify_req_encode(struct wcur *w, const struct smb2_notify_req *r)
{
	wcur_le16(w, 32);
	wcur_le16(w, r->flags);
	wcur_le32(w, r->output_len);
	put_fid(w, &r->fid);
	wcur_le32(w, r->filter);
	wcur_le32(w, 0);
}

int smb2_query_dir_req_decode(const uint8_t *p, size_t len, struct smb2_query_dir_req *r)
{
	int ret;

	r->info_class = p[66];
	r->flags = p[67];
	r->file_index = get_le32(p + 68);
	get_fid(p + 72, &r->fid);
	r->output_len = get_le32(p + 92);
	ret = get_buf(p, len, get_le16(p + 88), get_le16(p + 90), &r->pattern);
	if (ret)
		return ret;
	return (r->pattern.len & 1) ? -EBADMSG : 0;
}

void smb2_query_dir_req_encode(struct wcur *w, const struct smb2_query_dir_req *r)
{
	wcur_le16(w, 33);
	wcur_u8(w, r->info_class);
	wcur_u8(w, r->flags);
	wcur_le32(w, r->file_index);
	put_fid(w, &r->fid);
	wcur_le16(w, r->pattern.len ? 96 : 0);
	wcur_le16(w, (uint16_t)r->pattern.len);
	wcur_le32(w, r->output_len);
	if (r->pattern.len)
		wcur_bytes(w, r->pattern.p, r->pattern.len);
	else
		wcur_u8(w, 0);
}

int smb2_out_buf_rsp_decode(const uint8_t *p, size_t len, struct smb2_buf *out)
{
	if (len < 72 || get_le16(p + 64) != 9)
		return -EBADMSG;
	return get_buf(p, len, get_le16(p + 66), get_le32(p + 68), out);
}

void smb2_out_buf_rsp_encode(struct wcur *w, uint32_t out_len)
{
	wcur_le16(w, 9);
	wcur_le16(w, out_len ? 72 : 0);
	wcur_le32(w, out_len);
}

int smb2_query_info_req_decode(const uint8_t *p, size_t len, struct smb2_query_info_req *r)
{
	r->info_type = p[66];
	r->info_class = p[67];
	r->output_len = get_le32(p + 68);
	r->additional = get_le32(p + 80);
	r->flags = get_le32(p + 84);
	get_fid(p + 88, &r->fid);
	return get_buf(p, len, get_le16(p + 72), get_le32(p + 76), &r->input);
}

void smb2_query_info_req_encode(struct wcur *w, const struct smb2_query_info_req *r)
{
	wcur_le16(w, 41);
	wcur_u8(w, r->info_type);
	wcur_u8(w, r->info_class);
	wcur_le32(w, r->output_len);
	wcur_le16(w, r->input.len ? 104 : 0);
	wcur_le16(w, 0);
	wcur_le32(w, r->input.len);
	wcur_le32(w, r->additional);
	wcur_le32(w, r->flags);
	put_fid(w, &r->fid);
	if (r->input.len)
		wcur_bytes(w, r->input.p, r->input.len);
	else
		wcur_u8(w, 0);
}

int smb2_set_info_req_decode(const uint8_t *p, size_t len, struct smb2_set_info_req *r)
{
	r->info_type = p[66];
	r->info_class = p[67];
	r->additional = get_le32(p + 76);
	get_fid(p + 80, &r->fid);
	return get_buf(p, len, get_le16(p + 72), get_le32(p + 68), &r->data);
}

void smb2_set_info_req_encode(struct wcur *w, const struct smb2_set_info_req *r)
{
	wcur_le16(w, 33);
	wcur_u8(w, r->info_type);
	wcur_u8(w, r->info_class);
	wcur_le32(w, r->data.len);
	wcur_le16(w, 96);
	wcur_le16(w, 0);
	wcur_le32(w, r->additional);
	put_fid(w, &r->fid);
	if (r->data.len)
		wcur_bytes(w, r->data.p, r->data.len);
	else
		wcur_u8(w, 0);
}
