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

/*
 * Access decisions ([MS-DTYP] 2.5.3.2, without object types, conditional
 * ACEs or central policies). Who asks is a token: a test of whether a
 * SID is one of its user's (the user, its groups, Everyone ...), and
 * whether it holds SeSecurityPrivilege (ACCESS_SYSTEM_SECURITY).
 */
struct sec_token {
	bool (*has)(const struct sid *s, const void *arg);
	const void *arg;
	bool priv_security;
};

/* GENERIC_* bits of a mask (and of every ACE of an ACL) as file rights. */
uint32_t secdesc_map_generic(uint32_t mask);
void secdesc_acl_map_generic(struct acl *a);

/*
 * What the DACL grants the token: ACEs in order, the first to decide a
 * bit wins; the owner has READ_CONTROL and WRITE_DAC unless an effective
 * OWNER RIGHTS (S-1-3-4) ACE says what the owner has; a NULL or absent
 * DACL grants FILE_ALL_ACCESS. Generic bits in ACEs count as mapped;
 * no ACE grants a bit outside FILE_ALL_ACCESS (ACCESS_SYSTEM_SECURITY is
 * a privilege's, the rest is not a file right).
 */
uint32_t secdesc_max_allowed(const struct secdesc *sd, const struct sec_token *t);

/*
 * The check for desired (generic bits mapped first, MAXIMUM_ALLOWED as
 * above): 0 and *granted = what is granted; -EACCES and *granted = the
 * bits refused; -EPERM when ACCESS_SYSTEM_SECURITY is asked without the
 * privilege.
 */
int secdesc_access_check(const struct secdesc *sd, const struct sec_token *t,
			 uint32_t desired, uint32_t *granted);

/*
 * The DACL a new file (dir false) or directory inherits from its
 * parent's ([MS-DTYP] 2.5.3.4.1, without object types): OBJECT_INHERIT
 * ACEs for a file; CONTAINER_INHERIT ones for a directory (inheriting on
 * unless NO_PROPAGATE), OBJECT_INHERIT ones inherit-only for its files.
 * CREATOR OWNER / GROUP become owner and group, and generic bits are
 * mapped, in the ACE that takes effect; an ACE that must also pass on
 * keeps its original form, inherit-only. INHERITED, and the DACL
 * AUTO_INHERITED, when the parent's is. The number of ACEs.
 */
int secdesc_inherit(const struct secdesc *parent, bool dir, const struct sid *owner,
		    const struct sid *group, struct secdesc *child);

#endif
