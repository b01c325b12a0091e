// SPDX-License-Identifier: MIT
/* Self-relative security descriptors (secdesc.h has the layout). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/secdesc.h"
#include "proto/smb2.h"
#include "util/bytes.h"

#define AUTH_CREATOR 3
#define RID_CREATOR_OWNER 0
#define RID_CREATOR_GROUP 1
#define RID_OWNER_RIGHTS 4

void sid_make(struct sid *s, uint64_t auth, int n, const uint32_t *sub)
{
	memset(s, 0, sizeof(*s));
	s->rev = 1;
	s->n = (uint8_t)n;
	s->auth = auth;
	memcpy(s->sub, sub, sizeof(*sub) * (size_t)n);
}

bool sid_equal(const struct sid *a, const struct sid *b)
{
	return a->rev == b->rev && a->n == b->n && a->auth == b->auth &&
	       !memcmp(a->sub, b->sub, sizeof(a->sub[0]) * a->n);
}

int sid_to_string(const struct sid *s, char *buf, size_t cap)
{
	int len, i;

	len = snprintf(buf, cap, "S-%u-%llu", s->rev, (unsigned long long)s->auth);
	for (i = 0; i < s->n && len >= 0; i++)
		len += snprintf(buf + ((size_t)len < cap ? (size_t)len : cap),
				(size_t)len < cap ? cap - (size_t)len : 0, "-%u", s->sub[i]);
	return len;
}

int sid_decode(const uint8_t *p, size_t len, struct sid *s)
{
	int i;

	if (len < 8 || p[0] != 1 || p[1] > SID_MAX_SUB || len < 8 + 4 * (size_t)p[1])
		return -EBADMSG;
	s->rev = p[0];
	s->n = p[1];
	s->auth = 0;
	for (i = 0; i < 6; i++)
		s->auth = s->auth << 8 | p[2 + i];
	for (i = 0; i < s->n; i++)
		s->sub[i] = get_le32(p + 8 + 4 * i);
	return 8 + 4 * s->n;
}

void sid_encode(const struct sid *s, uint8_t *p)
{
	int i;

	p[0] = s->rev;
	p[1] = s->n;
	for (i = 0; i < 6; i++)
		p[2 + i] = (uint8_t)(s->auth >> (8 * (5 - i)));
	for (i = 0; i < s->n; i++)
		put_le32(p + 8 + 4 * i, s->sub[i]);
}

static int acl_decode(const uint8_t *p, size_t len, struct acl *a)
{
	size_t size, off = ACL_HDR_LEN;
	int i, n;

	if (len < ACL_HDR_LEN || p[0] < 2 || p[0] > 4)
		return -EBADMSG;
	size = get_le16(p + 2);
	n = get_le16(p + 4);
	if (size < ACL_HDR_LEN || size > len)
		return -EBADMSG;
	if (n > SECDESC_MAX_ACES)
		return -E2BIG;
	a->rev = p[0];
	a->n = (uint16_t)n;
	for (i = 0; i < n; i++) {
		struct ace *e = &a->ace[i];
		size_t asz;
		int ret;

		if (!range_ok(off, 4, size))
			return -EBADMSG;
		e->type = p[off];
		e->flags = p[off + 1];
		asz = get_le16(p + off + 2);
		if (asz < ACE_HDR_LEN || !range_ok(off, asz, size))
			return -EBADMSG;
		if (e->type > SYSTEM_ALARM_ACE_TYPE)
			return -EOPNOTSUPP;
		e->mask = get_le32(p + off + 4);
		ret = sid_decode(p + off + 8, asz - 8, &e->sid);
		if (ret < 0)
			return ret;
		off += asz;
	}
	return 0;
}

static size_t acl_size(const struct acl *a)
{
	size_t n = ACL_HDR_LEN;
	int i;

	for (i = 0; i < a->n; i++)
		n += ACE_HDR_LEN + sid_size(&a->ace[i].sid);
	return n;
}

static void acl_encode(const struct acl *a, uint8_t *p)
{
	size_t off = ACL_HDR_LEN;
	int i;

	p[0] = a->rev;
	p[1] = 0;
	put_le16(p + 2, (uint16_t)acl_size(a));
	put_le16(p + 4, a->n);
	put_le16(p + 6, 0);
	for (i = 0; i < a->n; i++) {
		const struct ace *e = &a->ace[i];
		size_t asz = ACE_HDR_LEN + sid_size(&e->sid);

		p[off] = e->type;
		p[off + 1] = e->flags;
		put_le16(p + off + 2, (uint16_t)asz);
		put_le32(p + off + 4, e->mask);
		sid_encode(&e->sid, p + off + 8);
		off += asz;
	}
}

int secdesc_decode(const uint8_t *p, size_t len, struct secdesc *sd)
{
	uint32_t o_owner, o_group, o_sacl, o_dacl;
	int ret;

	memset(sd, 0, sizeof(*sd));
	if (len < SECDESC_HDR_LEN || p[0] != 1)
		return -EBADMSG;
	sd->control = get_le16(p + 2);
	if (!(sd->control & SE_SELF_RELATIVE))
		return -EBADMSG;
	o_owner = get_le32(p + 4);
	o_group = get_le32(p + 8);
	o_sacl = get_le32(p + 12);
	o_dacl = get_le32(p + 16);
	if ((o_owner && (o_owner < SECDESC_HDR_LEN || o_owner >= len)) ||
	    (o_group && (o_group < SECDESC_HDR_LEN || o_group >= len)) ||
	    (o_sacl && (o_sacl < SECDESC_HDR_LEN || o_sacl >= len)) ||
	    (o_dacl && (o_dacl < SECDESC_HDR_LEN || o_dacl >= len)))
		return -EBADMSG;
	if (o_owner) {
		ret = sid_decode(p + o_owner, len - o_owner, &sd->owner);
		if (ret < 0)
			return ret;
		sd->has_owner = true;
	}
	if (o_group) {
		ret = sid_decode(p + o_group, len - o_group, &sd->group);
		if (ret < 0)
			return ret;
		sd->has_group = true;
	}
	if (sd->control & SE_SACL_PRESENT) {
		sd->has_sacl = true;
		sd->null_sacl = !o_sacl;
		if (o_sacl) {
			ret = acl_decode(p + o_sacl, len - o_sacl, &sd->sacl);
			if (ret)
				return ret;
		}
	}
	if (sd->control & SE_DACL_PRESENT) {
		sd->has_dacl = true;
		sd->null_dacl = !o_dacl;
		if (o_dacl) {
			ret = acl_decode(p + o_dacl, len - o_dacl, &sd->dacl);
			if (ret)
				return ret;
		}
	}
	return 0;
}

size_t secdesc_encode(const struct secdesc *sd, uint32_t secinfo, uint8_t *buf, size_t cap)
{
	bool owner = secinfo & OWNER_SECURITY_INFORMATION && sd->has_owner;
	bool group = secinfo & GROUP_SECURITY_INFORMATION && sd->has_group;
	bool sacl = secinfo & SACL_SECURITY_INFORMATION && sd->has_sacl;
	bool dacl = secinfo & DACL_SECURITY_INFORMATION && sd->has_dacl;
	uint16_t control = SE_SELF_RELATIVE;
	size_t o_owner = 0, o_group = 0, o_sacl = 0, o_dacl = 0;
	size_t len = SECDESC_HDR_LEN;

	if (owner) {
		o_owner = len;
		len += sid_size(&sd->owner);
	}
	if (group) {
		o_group = len;
		len += sid_size(&sd->group);
	}
	if (sacl) {
		control |= sd->control & (SE_SACL_PRESENT | SE_SACL_DEFAULTED |
					  SE_SACL_AUTO_INHERITED | SE_SACL_PROTECTED);
		control |= SE_SACL_PRESENT;
		if (!sd->null_sacl) {
			o_sacl = len;
			len += acl_size(&sd->sacl);
		}
	}
	if (dacl) {
		control |= sd->control & (SE_DACL_PRESENT | SE_DACL_DEFAULTED |
					  SE_DACL_AUTO_INHERITED | SE_DACL_PROTECTED);
		control |= SE_DACL_PRESENT;
		if (!sd->null_dacl) {
			o_dacl = len;
			len += acl_size(&sd->dacl);
		}
	}
	if (len > cap)
		return len;
	memset(buf, 0, SECDESC_HDR_LEN);
	buf[0] = 1;
	put_le16(buf + 2, control);
	put_le32(buf + 4, (uint32_t)o_owner);
	put_le32(buf + 8, (uint32_t)o_group);
	put_le32(buf + 12, (uint32_t)o_sacl);
	put_le32(buf + 16, (uint32_t)o_dacl);
	if (o_owner)
		sid_encode(&sd->owner, buf + o_owner);
	if (o_group)
		sid_encode(&sd->group, buf + o_group);
	if (o_sacl)
		acl_encode(&sd->sacl, buf + o_sacl);
	if (o_dacl)
		acl_encode(&sd->dacl, buf + o_dacl);
	return len;
}

/* ---- access checks ---- */

static const struct {
	uint32_t generic, specific;
} generic_map[] = {
	{ GENERIC_READ, FILE_GENERIC_READ },
	{ GENERIC_WRITE, FILE_GENERIC_WRITE },
	{ GENERIC_EXECUTE, FILE_GENERIC_EXECUTE },
	{ GENERIC_ALL, FILE_ALL_ACCESS },
};

uint32_t secdesc_map_generic(uint32_t mask)
{
	size_t i;

	for (i = 0; i < sizeof(generic_map) / sizeof(generic_map[0]); i++)
		if (mask & generic_map[i].generic)
			mask = (mask & ~generic_map[i].generic) | generic_map[i].specific;
	return mask;
}

void secdesc_acl_map_generic(struct acl *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		a->ace[i].mask = secdesc_map_generic(a->ace[i].mask);
}

static bool sid_is_creator(const struct sid *s, uint32_t rid)
{
	return s->rev == 1 && s->auth == AUTH_CREATOR && s->n == 1 && s->sub[0] == rid;
}

static bool is_owner(const struct secdesc *sd, const struct sec_token *t)
{
	return sd->has_owner && t->has(&sd->owner, t->arg);
}

/* An effective OWNER RIGHTS ACE: the owner has what it says, no more. */
static bool has_owner_rights(const struct acl *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (!(a->ace[i].flags & INHERIT_ONLY_ACE) &&
		    sid_is_creator(&a->ace[i].sid, RID_OWNER_RIGHTS))
			return true;
	return false;
}

/* Does ACE e speak of the token's user? */
static bool ace_applies(const struct ace *e, bool owner, const struct sec_token *t)
{
	if (e->flags & INHERIT_ONLY_ACE)
		return false;
	if (sid_is_creator(&e->sid, RID_OWNER_RIGHTS))
		return owner;
	return t->has(&e->sid, t->arg);
}

uint32_t secdesc_max_allowed(const struct secdesc *sd, const struct sec_token *t)
{
	uint32_t granted = 0, denied = 0;
	bool owner;
	int i;

	if (!sd->has_dacl || sd->null_dacl)
		return FILE_ALL_ACCESS;
	owner = is_owner(sd, t);
	if (owner && !has_owner_rights(&sd->dacl))
		granted = READ_CONTROL | WRITE_DAC;
	for (i = 0; i < sd->dacl.n; i++) {
		const struct ace *e = &sd->dacl.ace[i];
		uint32_t m = secdesc_map_generic(e->mask) & FILE_ALL_ACCESS;

		if (!ace_applies(e, owner, t))
			continue;
		if (e->type == ACCESS_ALLOWED_ACE_TYPE)
			granted |= m & ~denied;
		else if (e->type == ACCESS_DENIED_ACE_TYPE)
			denied |= m & ~granted;
	}
	return granted;
}

int secdesc_access_check(const struct secdesc *sd, const struct sec_token *t,
			 uint32_t desired, uint32_t *granted)
{
	uint32_t want = secdesc_map_generic(desired & ~MAXIMUM_ALLOWED);
	uint32_t left, denied = 0;
	bool owner;
	int i;

	if (desired & MAXIMUM_ALLOWED)
		want |= secdesc_max_allowed(sd, t);
	left = want;
	if (sd->has_dacl && !sd->null_dacl) {
		owner = is_owner(sd, t);
		if (owner && !has_owner_rights(&sd->dacl))
			left &= ~(READ_CONTROL | WRITE_DAC);
		for (i = 0; i < sd->dacl.n && left; i++) {
			const struct ace *e = &sd->dacl.ace[i];
			uint32_t m = secdesc_map_generic(e->mask) & FILE_ALL_ACCESS;

			if (!ace_applies(e, owner, t))
				continue;
			if (e->type == ACCESS_ALLOWED_ACE_TYPE)
				left &= ~(m & ~denied);
			else if (e->type == ACCESS_DENIED_ACE_TYPE)
				denied |= left & m;
		}
		left |= denied;
	} else {
		left &= ACCESS_SYSTEM_SECURITY;	/* no DACL: all but the SACL */
	}
	/* a privilege, not an ACE, opens the SACL */
	if (left & ACCESS_SYSTEM_SECURITY) {
		if (!t->priv_security) {
			*granted = ACCESS_SYSTEM_SECURITY;
			return -EPERM;
		}
		left &= ~ACCESS_SYSTEM_SECURITY;
	}
	*granted = left ? left : want;
	return left ? -EACCES : 0;
}

static void ace_put(struct acl *a, const struct ace *e, uint8_t flags, uint32_t mask,
		    const struct sid *sid)
{
	struct ace *n;

	if (a->n >= SECDESC_MAX_ACES)
		return;
	n = &a->ace[a->n++];
	n->type = e->type;
	n->flags = flags;
	n->mask = mask;
	n->sid = *sid;
}

int secdesc_inherit(const struct secdesc *parent, bool dir, const struct sid *owner,
		    const struct sid *group, struct secdesc *child)
{
	bool autoinh = parent->control & SE_DACL_AUTO_INHERITED;
	uint8_t inh = autoinh ? INHERITED_ACE : 0;
	struct acl *out = &child->dacl;
	int i;

	memset(child, 0, sizeof(*child));
	child->control = SE_SELF_RELATIVE | SE_DACL_PRESENT | (autoinh ? SE_DACL_AUTO_INHERITED : 0);
	child->has_dacl = true;
	out->rev = parent->dacl.rev ? parent->dacl.rev : 2;
	if (!parent->has_dacl || parent->null_dacl)
		return 0;
	for (i = 0; i < parent->dacl.n; i++) {
		const struct ace *e = &parent->dacl.ace[i];
		bool oi = e->flags & OBJECT_INHERIT_ACE, ci = e->flags & CONTAINER_INHERIT_ACE;
		bool np = e->flags & NO_PROPAGATE_INHERIT_ACE;
		uint8_t pass = e->flags & (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE);
		uint32_t mask = secdesc_map_generic(e->mask);
		const struct sid *who = &e->sid;
		bool split;

		if (e->type != ACCESS_ALLOWED_ACE_TYPE && e->type != ACCESS_DENIED_ACE_TYPE)
			continue;
		if (sid_is_creator(who, RID_CREATOR_OWNER))
			who = owner;
		else if (sid_is_creator(who, RID_CREATOR_GROUP))
			who = group;
		if (!dir) {
			if (oi)
				ace_put(out, e, inh, mask, who);
			continue;
		}
		if (ci) {
			split = !np && (who != &e->sid || mask != e->mask);
			if (np || split)
				ace_put(out, e, inh, mask, who);
			else
				ace_put(out, e, inh | pass, mask, who);
			if (split)
				ace_put(out, e, inh | INHERIT_ONLY_ACE | pass, e->mask, &e->sid);
		} else if (oi && !np) {
			ace_put(out, e, inh | INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE, e->mask, &e->sid);
		}
	}
	return out->n;
}
