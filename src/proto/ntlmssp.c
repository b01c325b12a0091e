// SPDX-License-Identifier: MIT
/* NTLMSSP message codec, [MS-NLMP] 2.2. Pure: no allocation, no I/O. */
#include "proto/ntlmssp.h"

#include <errno.h>
#include <string.h>

bool ntlmssp_is_ntlmssp(const uint8_t *msg, size_t len)
{
	return len >= NTLMSSP_SIG_LEN &&
	       !memcmp(msg, NTLMSSP_SIGNATURE, NTLMSSP_SIG_LEN);
}

int ntlmssp_msg_type(const uint8_t *msg, size_t len)
{
	uint32_t t;

	if (len < 12 || !ntlmssp_is_ntlmssp(msg, len))
		return -EBADMSG;
	t = get_le32(msg + 8);
	if (t < NTLMSSP_NEGOTIATE || t > NTLMSSP_AUTH)
		return -EBADMSG;
	return (int)t;
}

/*
 * Read the 8-byte field descriptor at msg + at (Len, MaxLen, Offset).
 * A non-empty field must lie in [hdr, len). Tracks the lowest payload
 * offset in *minoff to tell whether Version/MIC fields exist.
 */
static int get_field(const uint8_t *msg, size_t len, size_t at, size_t hdr,
		     struct ntlmssp_buf *b, uint64_t *minoff)
{
	uint16_t l = get_le16(msg + at);
	uint32_t off = get_le32(msg + at + 4);

	b->p = NULL;
	b->len = 0;
	if (!l)
		return 0;
	if (off < hdr || !range_ok(off, l, len))
		return -EBADMSG;
	b->p = msg + off;
	b->len = l;
	if (off < *minoff)
		*minoff = off;
	return 0;
}

static void get_version(const uint8_t *p, struct ntlmssp_version *v)
{
	v->major = p[0];
	v->minor = p[1];
	v->build = get_le16(p + 2);
	v->revision = p[7];
}

/* Version present: flag set and the payload leaves room for it. */
static bool has_room(uint32_t flags, size_t len, uint64_t minoff, size_t at)
{
	return (flags & NTLMSSP_NEGOTIATE_VERSION) &&
	       at + NTLMSSP_VERSION_LEN <= len &&
	       at + NTLMSSP_VERSION_LEN <= minoff;
}

int ntlmssp_decode_negotiate(const uint8_t *msg, size_t len,
			     struct ntlmssp_negotiate *out)
{
	uint64_t minoff = UINT64_MAX;

	memset(out, 0, sizeof(*out));
	if (len < 16 || ntlmssp_msg_type(msg, len) != NTLMSSP_NEGOTIATE)
		return -EBADMSG;
	out->flags = get_le32(msg + 12);
	/* very old clients send only the first 16 bytes */
	if (len < NTLMSSP_NEGOTIATE_HDR)
		return 0;
	if (get_field(msg, len, 16, NTLMSSP_NEGOTIATE_HDR, &out->domain,
		      &minoff) ||
	    get_field(msg, len, 24, NTLMSSP_NEGOTIATE_HDR, &out->workstation,
		      &minoff))
		return -EBADMSG;
	if (has_room(out->flags, len, minoff, NTLMSSP_NEGOTIATE_HDR)) {
		out->has_version = true;
		get_version(msg + NTLMSSP_NEGOTIATE_HDR, &out->version);
	}
	return 0;
}

int ntlmssp_decode_challenge(const uint8_t *msg, size_t len,
			     struct ntlmssp_challenge *out)
{
	uint64_t minoff = UINT64_MAX;
	size_t h = NTLMSSP_CHALLENGE_HDR;

	memset(out, 0, sizeof(*out));
	if (len < 32 || ntlmssp_msg_type(msg, len) != NTLMSSP_CHALLENGE)
		return -EBADMSG;
	/* pre-2000 servers send a 32-byte message without TargetInfo */
	if (len < NTLMSSP_CHALLENGE_HDR)
		h = 32;
	if (get_field(msg, len, 12, h, &out->target_name, &minoff))
		return -EBADMSG;
	out->flags = get_le32(msg + 20);
	memcpy(out->challenge, msg + 24, 8);
	if (h < NTLMSSP_CHALLENGE_HDR)
		return 0;
	if (get_field(msg, len, 40, h, &out->target_info, &minoff))
		return -EBADMSG;
	if (has_room(out->flags, len, minoff, h)) {
		out->has_version = true;
		get_version(msg + h, &out->version);
	}
	return 0;
}

int ntlmssp_decode_auth(const uint8_t *msg, size_t len,
			struct ntlmssp_auth *out)
{
	uint64_t minoff = UINT64_MAX;
	const size_t h = NTLMSSP_AUTH_HDR;

	memset(out, 0, sizeof(*out));
	if (len < h || ntlmssp_msg_type(msg, len) != NTLMSSP_AUTH)
		return -EBADMSG;
	if (get_field(msg, len, 12, h, &out->lm, &minoff) ||
	    get_field(msg, len, 20, h, &out->nt, &minoff) ||
	    get_field(msg, len, 28, h, &out->domain, &minoff) ||
	    get_field(msg, len, 36, h, &out->user, &minoff) ||
	    get_field(msg, len, 44, h, &out->workstation, &minoff) ||
	    get_field(msg, len, 52, h, &out->session_key, &minoff))
		return -EBADMSG;
	out->flags = get_le32(msg + 60);
	if (has_room(out->flags, len, minoff, h)) {
		out->has_version = true;
		get_version(msg + h, &out->version);
	}
	if (len >= NTLMSSP_AUTH_MIC_OFF + NTLMSSP_AUTH_MIC_LEN &&
	    minoff >= NTLMSSP_AUTH_MIC_OFF + NTLMSSP_AUTH_MIC_LEN) {
		out->has_mic = true;
		out->mic = msg + NTLMSSP_AUTH_MIC_OFF;
	}
	return 0;
}

static void put_version(struct wcur *w, bool has,
			const struct ntlmssp_version *v)
{
	uint8_t *p = wcur_reserve(w, NTLMSSP_VERSION_LEN);

	if (!p)
		return;
	memset(p, 0, NTLMSSP_VERSION_LEN);
	if (!has)
		return;
	p[0] = v->major;
	p[1] = v->minor;
	put_le16(p + 2, v->build);
	p[7] = v->revision;
}

/* Field descriptor for a payload at *off (relative to message start). */
static void put_field(struct wcur *w, const struct ntlmssp_buf *b,
		      uint32_t *off)
{
	wcur_le16(w, b->len);
	wcur_le16(w, b->len);
	wcur_le32(w, *off);
	*off += b->len;
}

static void put_payload(struct wcur *w, const struct ntlmssp_buf *b)
{
	if (b->len)
		wcur_bytes(w, b->p, b->len);
}

static void put_header(struct wcur *w, uint32_t type)
{
	wcur_bytes(w, NTLMSSP_SIGNATURE, NTLMSSP_SIG_LEN);
	wcur_le32(w, type);
}

static bool buf_ok(const struct ntlmssp_buf *b)
{
	return !b->len || b->p;
}

int ntlmssp_encode_negotiate(struct wcur *w, const struct ntlmssp_negotiate *m)
{
	uint32_t off = NTLMSSP_NEGOTIATE_HDR + NTLMSSP_VERSION_LEN;

	if (!buf_ok(&m->domain) || !buf_ok(&m->workstation))
		return -EINVAL;
	put_header(w, NTLMSSP_NEGOTIATE);
	wcur_le32(w, m->flags);
	put_field(w, &m->domain, &off);
	put_field(w, &m->workstation, &off);
	put_version(w, m->has_version, &m->version);
	put_payload(w, &m->domain);
	put_payload(w, &m->workstation);
	return w->err ? -ENOSPC : 0;
}

int ntlmssp_encode_challenge(struct wcur *w, const struct ntlmssp_challenge *m)
{
	uint32_t off = NTLMSSP_CHALLENGE_HDR + NTLMSSP_VERSION_LEN;
	uint32_t ti_off;

	if (!buf_ok(&m->target_name) || !buf_ok(&m->target_info))
		return -EINVAL;
	put_header(w, NTLMSSP_CHALLENGE);
	put_field(w, &m->target_name, &off);
	wcur_le32(w, m->flags);
	wcur_bytes(w, m->challenge, 8);
	wcur_zero(w, 8);
	ti_off = off;
	put_field(w, &m->target_info, &ti_off);
	put_version(w, m->has_version, &m->version);
	put_payload(w, &m->target_name);
	put_payload(w, &m->target_info);
	return w->err ? -ENOSPC : 0;
}

int ntlmssp_encode_auth(struct wcur *w, const struct ntlmssp_auth *m)
{
	uint32_t off = NTLMSSP_AUTH_HDR + NTLMSSP_VERSION_LEN;
	const struct ntlmssp_buf *f[6] = {
		&m->lm, &m->nt, &m->domain, &m->user, &m->workstation,
		&m->session_key,
	};
	/* payload order as Windows writes it */
	static const int order[6] = { 2, 3, 4, 0, 1, 5 };
	uint32_t offs[6];
	int i;

	for (i = 0; i < 6; i++)
		if (!buf_ok(f[i]))
			return -EINVAL;
	if (m->has_mic)
		off += NTLMSSP_AUTH_MIC_LEN;
	for (i = 0; i < 6; i++) {
		offs[order[i]] = off;
		off += f[order[i]]->len;
	}
	put_header(w, NTLMSSP_AUTH);
	for (i = 0; i < 6; i++) {
		uint32_t o = offs[i];

		put_field(w, f[i], &o);
	}
	wcur_le32(w, m->flags);
	put_version(w, m->has_version, &m->version);
	if (m->has_mic) {
		if (m->mic)
			wcur_bytes(w, m->mic, NTLMSSP_AUTH_MIC_LEN);
		else
			wcur_zero(w, NTLMSSP_AUTH_MIC_LEN);
	}
	for (i = 0; i < 6; i++)
		put_payload(w, f[order[i]]);
	return w->err ? -ENOSPC : 0;
}

int ntlmssp_av_next(struct rcur *r, struct ntlmssp_av *av)
{
	const uint8_t *hdr = rcur_take(r, 4);

	if (!hdr)
		return -EBADMSG;
	av->id = get_le16(hdr);
	av->len = get_le16(hdr + 2);
	av->val = rcur_take(r, av->len);
	if (!av->val)
		return -EBADMSG;
	return av->id == MSV_AV_EOL ? 0 : 1;
}

int ntlmssp_av_validate(const uint8_t *list, size_t len, size_t *used)
{
	struct ntlmssp_av av;
	struct rcur r;
	int rc;

	rcur_init(&r, list, len);
	while ((rc = ntlmssp_av_next(&r, &av)) > 0)
		;
	if (rc < 0)
		return rc;
	if (used)
		*used = r.off;
	return 0;
}

int ntlmssp_av_find(const uint8_t *list, size_t len, uint16_t id,
		    struct ntlmssp_av *out)
{
	struct ntlmssp_av av;
	struct rcur r;
	int rc;

	rcur_init(&r, list, len);
	while ((rc = ntlmssp_av_next(&r, &av)) > 0) {
		if (av.id == id) {
			*out = av;
			/* keep validating: the list must still be well formed */
			while ((rc = ntlmssp_av_next(&r, &av)) > 0)
				;
			return rc < 0 ? rc : 0;
		}
	}
	return rc < 0 ? rc : -ENOENT;
}

void ntlmssp_av_put(struct wcur *w, uint16_t id, const void *val, size_t len)
{
	if (len > UINT16_MAX) {
		w->err = true;
		return;
	}
	wcur_le16(w, id);
	wcur_le16(w, (uint16_t)len);
	if (len)
		wcur_bytes(w, val, len);
}

void ntlmssp_av_put_eol(struct wcur *w)
{
	wcur_le32(w, 0);
}
