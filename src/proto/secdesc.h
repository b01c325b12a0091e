/* SPDX-License-Identifier: MIT */
/*
 * Self-relative SECURITY_DESCRIPTOR ([MS-DTYP] 2.4.6): the owner and
 * group SIDs (2.4.2.2), the SACL and the DACL (2.4.5) with their ACEs
 * (2.4.4): ACCESS_ALLOWED, ACCESS_DENIED, SYSTEM_AUDIT and SYSTEM_ALARM,
 * which share one layout (header, mask, SID). Other ACE types are
 * refused. Encoded in Samba's order: header, owner, group, SACL, DACL.
 * Pure codec: no I/O.
 */
#ifndef RDAX_PROTO_SECDESC_H
#define RDAX_PROTO_SECDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SecurityInformation flags of QUERY_INFO / SET_INFO ([MS-SMB2] 2.2.37) */
#define OWNER_SECURITY_INFORMATION 0x01u
#define GROUP_SECURITY_INFORMATION 0x02u
#define DACL_SECURITY_INFORMATION 0x04u
#define SACL_SECURITY_INFORMATION 0x08u
#define LABEL_SECURITY_INFORMATION 0x10u

/* Control */
#define SE_OWNER_DEFAULTED 0x0001u
#define SE_GROUP_DEFAULTED 0x0002u
#define SE_DACL_PRESENT 0x0004u
#define SE_DACL_DEFAULTED 0x0008u
#define SE_SACL_PRESENT 0x0010u
#define SE_SACL_DEFAULTED 0x0020u
#define SE_DACL_AUTO_INHERIT_REQ 0x0100u
#define SE_SACL_AUTO_INHERIT_REQ 0x0200u
#define SE_DACL_AUTO_INHERITED 0x0400u
#define SE_SACL_AUTO_INHERITED 0x0800u
#define SE_DACL_PROTECTED 0x1000u
#define SE_SACL_PROTECTED 0x2000u
#define SE_SELF_RELATIVE 0x8000u

/* ACE types and flags */
#define ACCESS_ALLOWED_ACE_TYPE 0
#define ACCESS_DENIED_ACE_TYPE 1
#define SYSTEM_AUDIT_ACE_TYPE 2
#define SYSTEM_ALARM_ACE_TYPE 3
#define OBJECT_INHERIT_ACE 0x01u
#define CONTAINER_INHERIT_ACE 0x02u
#define NO_PROPAGATE_INHERIT_ACE 0x04u
#define INHERIT_ONLY_ACE 0x08u
#define INHERITED_ACE 0x10u

#define SID_MAX_SUB 15
#define SECDESC_MAX_ACES 64
#define SECDESC_HDR_LEN 20
#define ACL_HDR_LEN 8
#define ACE_HDR_LEN 8		/* type, flags, size, mask */

struct sid {
	uint8_t rev;			/* 1 */
	uint8_t n;			/* sub-authorities, <= SID_MAX_SUB */
	uint64_t auth;			/* IdentifierAuthority, 48 bits */
	uint32_t sub[SID_MAX_SUB];
};

struct ace {
	uint8_t type;
	uint8_t flags;
	uint32_t mask;
	struct sid sid;
};

struct acl {
	uint8_t rev;			/* 2 to 4, as Windows accepts */
	uint16_t n;
	struct ace ace[SECDESC_MAX_ACES];
};

struct secdesc {
	uint16_t control;		/* SE_*; SE_SELF_RELATIVE always set */
	bool has_owner, has_group;
	bool has_sacl, has_dacl;	/* present; a present ACL may be NULL: */
	bool null_sacl, null_dacl;	/* ... the flag without an offset */
	struct sid owner, group;
	struct acl sacl, dacl;
};

/* Wire size of a SID (8 + 4 per sub-authority). */
static inline size_t sid_size(const struct sid *s)
{
	return 8 + 4 * (size_t)s->n;
}

/* S-1-auth-sub... into a SID. */
void sid_make(struct sid *s, uint64_t auth, int n, const uint32_t *sub);
bool sid_equal(const struct sid *a, const struct sid *b);
/* A SID at p (len bytes left): its size, or -EBADMSG; and back (sid_size bytes). */
int sid_decode(const uint8_t *p, size_t len, struct sid *s);
void sid_encode(const struct sid *s, uint8_t *p);
/* "S-1-22-1-1000" into buf; the length, as snprintf. */
int sid_to_string(const struct sid *s, char *buf, size_t cap);

/*
 * A self-relative descriptor of len bytes: 0; -EBADMSG when malformed
 * (offsets or sizes outside the buffer, bad revisions, a SID with more
 * than 15 sub-authorities, an ACE past its ACL); -E2BIG for an ACL with
 * more than SECDESC_MAX_ACES ACEs; -EOPNOTSUPP for an ACE type other
 * than the four above.
 */
int secdesc_decode(const uint8_t *p, size_t len, struct secdesc *sd);

/*
 * The parts of sd that secinfo asks for (OWNER/GROUP/DACL/SACL_*), in
 * self-relative form. The length encoded or needed: nothing is written
 * when it exceeds cap.
 */
size_t secdesc_encode(const struct secdesc *sd, uint32_t secinfo, uint8_t *buf, size_t cap);

#endif
