// SPDX-License-Identifier: MIT
/*
 * Self-relative security descriptors ([MS-DTYP] 2.4.6): a descriptor
 * laid out by hand from the spec decodes and encodes to the same bytes;
 * each part alone; what is malformed is refused.
 */
#include <errno.h>

#include "proto/secdesc.h"
#include "proto/smb2.h"
#include "t.h"

/* owner S-1-22-1-1000, group S-1-22-2-1000, DACL: owner full, Everyone read */
static const char sd_hex[] =
	"01000480 14000000 24000000 00000000 34000000"
	"0102000000000016 01000000 e8030000"
	"0102000000000016 02000000 e8030000"
	"02003400 02000000"
	"00001800 ff011f00 0102000000000016 01000000 e8030000"
	"00001400 89001200 0101000000000001 00000000";

static void round_trip(void)
{
	uint8_t b[256], out[256];
	struct secdesc sd;
	char s[64];
	size_t n;

	t_section("a descriptor decodes and encodes to the same bytes");
	n = t_unhex(b, sizeof(b), sd_hex);
	T_EQ(n, 104);
	T_EQ(secdesc_decode(b, n, &sd), 0);
	T_ASSERT(sd.has_owner && sd.has_group && sd.has_dacl && !sd.has_sacl);
	sid_to_string(&sd.owner, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-22-1-1000"));
	sid_to_string(&sd.group, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-22-2-1000"));
	T_EQ(sd.dacl.n, 2);
	T_EQ(sd.dacl.ace[0].mask, 0x001f01ff);
	T_EQ(sd.dacl.ace[1].mask, 0x00120089);
	sid_to_string(&sd.dacl.ace[1].sid, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-1-0"));
	T_EQ(secdesc_encode(&sd, 0xf, out, sizeof(out)), n);
	T_MEMEQ(out, b, n);
	T_EQ(secdesc_encode(&sd, 0xf, out, n - 1), n);	/* the size needed */

	t_section("one part alone");
	T_EQ(secdesc_encode(&sd, OWNER_SECURITY_INFORMATION, out, sizeof(out)), 36);
	T_EQ(secdesc_decode(out, 36, &sd), 0);
	T_ASSERT(sd.has_owner && !sd.has_group && !sd.has_dacl);
	T_EQ(out[2] | out[3] << 8, SE_SELF_RELATIVE);
}

static void malformed(void)
{
	uint8_t b[256];
	struct secdesc sd;
	size_t n;

	t_section("malformed descriptors are refused");
	n = t_unhex(b, sizeof(b), sd_hex);
	T_EQ(secdesc_decode(b, 19, &sd), -EBADMSG);
	T_EQ(secdesc_decode(b, n - 1, &sd), -EBADMSG);	/* ACE past the end */
	b[0] = 2;
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0] = 1;
	b[0x15] = 16;				/* owner: 16 sub-authorities */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x15] = 2;
	b[0x10] = 0xf0;				/* DACL offset outside */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x10] = 0x34;
	b[0x3c] = 0x11;				/* an object ACE type */
	T_EQ(secdesc_decode(b, n, &sd), -EOPNOTSUPP);
	b[0x3c] = 0;
	b[0x38] = 65;				/* AceCount above the limit */
	T_EQ(secdesc_decode(b, n, &sd), -E2BIG);
	b[0x38] = 3;				/* one ACE more than there is */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x38] = 2;
	b[2] = 0x04;				/* not self-relative */
	b[3] = 0;
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
}

static void null_dacl(void)
{
	uint8_t b[64], out[64];
	struct secdesc sd;
	size_t n;

	t_section("a NULL DACL: present, without an offset");
	n = t_unhex(b, sizeof(b), "01000480 00000000 00000000 00000000 00000000");
	T_EQ(secdesc_decode(b, n, &sd), 0);
	T_ASSERT(sd.has_dacl && sd.null_dacl);
	T_EQ(secdesc_encode(&sd, DACL_SECURITY_INFORMATION, out, sizeof(out)), n);
	T_MEMEQ(out, b, n);
}


/* ---- access checks ([MS-DTYP] 2.5.3.2) and inheritance (2.5.3.4) ---- */

/* the token of Unix user 1000 in group 100 (and Everyone) */
static bool tok_has(const struct sid *s, const void *arg)
{
	(void)arg;
	if (s->auth == 1 && s->n == 1 && s->sub[0] == 0)
		return true;
	return s->auth == 22 && s->n == 2 &&
	       ((s->sub[0] == 1 && s->sub[1] == 1000) || (s->sub[0] == 2 && s->sub[1] == 100));
}

static const struct sec_token tok = { tok_has, NULL, false };

static void unix_sid(struct sid *s, uint32_t dom, uint32_t id)
{
	uint32_t sub[2] = { dom, id };

	sid_make(s, 22, 2, sub);
}

static void well_known(struct sid *s, uint64_t auth, uint32_t rid)
{
	sid_make(s, auth, 1, &rid);
}

static void ace(struct secdesc *sd, uint8_t type, uint8_t flags, uint32_t mask,
		const struct sid *sid)
{
	struct ace *e = &sd->dacl.ace[sd->dacl.n++];

	e->type = type;
	e->flags = flags;
	e->mask = mask;
	e->sid = *sid;
}

/* a descriptor owned by owner_uid with an empty DACL */
static void sd_init(struct secdesc *sd, uint32_t owner_uid)
{
	memset(sd, 0, sizeof(*sd));
	sd->control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd->has_owner = sd->has_dacl = true;
	unix_sid(&sd->owner, 1, owner_uid);
	sd->dacl.rev = 2;
}

static void access_checks(void)
{
	struct secdesc sd;
	struct sid me, grp, other, world, owner_rights;
	uint32_t g;

	unix_sid(&me, 1, 1000);
	unix_sid(&grp, 2, 100);
	unix_sid(&other, 1, 1001);
	well_known(&world, 1, 0);
	well_known(&owner_rights, 3, 4);

	t_section("generic bits map to file rights");
	T_EQ(secdesc_map_generic(GENERIC_READ), FILE_GENERIC_READ);
	T_EQ(secdesc_map_generic(GENERIC_ALL | GENERIC_WRITE), FILE_ALL_ACCESS);
	T_EQ(secdesc_map_generic(GENERIC_EXECUTE | DELETE_ACCESS),
	     FILE_GENERIC_EXECUTE | DELETE_ACCESS);

	t_section("the owner has READ_CONTROL and WRITE_DAC, no more, from an empty DACL");
	sd_init(&sd, 1000);
	T_EQ(secdesc_max_allowed(&sd, &tok), READ_CONTROL | WRITE_DAC);
	T_EQ(secdesc_access_check(&sd, &tok, READ_CONTROL, &g), 0);
	T_EQ(secdesc_access_check(&sd, &tok, FILE_READ_DATA | READ_CONTROL, &g), -EACCES);
	T_EQ(g, FILE_READ_DATA);
	sd_init(&sd, 1001);
	T_EQ(secdesc_max_allowed(&sd, &tok), 0);

	t_section("ACEs in order: the first to decide a bit wins");
	sd_init(&sd, 1001);
	ace(&sd, ACCESS_DENIED_ACE_TYPE, 0, FILE_WRITE_DATA, &grp);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, 0, GENERIC_ALL, &world);
	T_EQ(secdesc_max_allowed(&sd, &tok), FILE_ALL_ACCESS & ~FILE_WRITE_DATA);
	T_EQ(secdesc_access_check(&sd, &tok, GENERIC_WRITE, &g), -EACCES);
	T_EQ(g, FILE_WRITE_DATA);
	T_EQ(secdesc_access_check(&sd, &tok, MAXIMUM_ALLOWED | FILE_READ_DATA, &g), 0);
	T_EQ(g, FILE_ALL_ACCESS & ~FILE_WRITE_DATA);
	sd_init(&sd, 1001);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_WRITE_DATA, &me);
	ace(&sd, ACCESS_DENIED_ACE_TYPE, 0, FILE_WRITE_DATA | FILE_READ_DATA, &world);
	T_EQ(secdesc_max_allowed(&sd, &tok), FILE_WRITE_DATA);
	T_EQ(secdesc_access_check(&sd, &tok, FILE_WRITE_DATA, &g), 0);
	T_EQ(secdesc_access_check(&sd, &tok, FILE_READ_DATA, &g), -EACCES);

	t_section("inherit-only ACEs and others' ACEs do not apply");
	sd_init(&sd, 1001);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE, FILE_READ_DATA, &me);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_WRITE_DATA, &other);
	T_EQ(secdesc_max_allowed(&sd, &tok), 0);

	t_section("OWNER RIGHTS replaces the owner's implicit rights");
	sd_init(&sd, 1000);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_READ_DATA, &owner_rights);
	T_EQ(secdesc_max_allowed(&sd, &tok), FILE_READ_DATA);
	T_EQ(secdesc_access_check(&sd, &tok, WRITE_DAC, &g), -EACCES);
	sd_init(&sd, 1001);
	ace(&sd, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_READ_DATA, &owner_rights);
	T_EQ(secdesc_max_allowed(&sd, &tok), 0);

	t_section("a NULL DACL grants all; the SACL needs the privilege");
	sd_init(&sd, 1001);
	sd.null_dacl = true;
	T_EQ(secdesc_max_allowed(&sd, &tok), FILE_ALL_ACCESS);
	T_EQ(secdesc_access_check(&sd, &tok, GENERIC_ALL, &g), 0);
	T_EQ(secdesc_access_check(&sd, &tok, ACCESS_SYSTEM_SECURITY, &g), -EPERM);
	{
		struct sec_token priv = tok;

		priv.priv_security = true;
		T_EQ(secdesc_access_check(&sd, &priv, ACCESS_SYSTEM_SECURITY | READ_CONTROL, &g), 0);
	}
}

static void inheritance(void)
{
	struct secdesc parent, child;
	struct sid me, grp, creator, world;
	int n;

	unix_sid(&me, 1, 1000);
	unix_sid(&grp, 2, 100);
	well_known(&creator, 3, 0);
	well_known(&world, 1, 0);

	t_section("a file inherits OBJECT_INHERIT ACEs, CREATOR OWNER made its owner");
	sd_init(&parent, 1000);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, OBJECT_INHERIT_ACE, GENERIC_READ, &creator);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, CONTAINER_INHERIT_ACE, FILE_WRITE_DATA, &world);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, &world);
	n = secdesc_inherit(&parent, false, &me, &grp, &child);
	T_EQ(n, 1);
	T_ASSERT(sid_equal(&child.dacl.ace[0].sid, &me));
	T_EQ(child.dacl.ace[0].mask, FILE_GENERIC_READ);
	T_EQ(child.dacl.ace[0].flags, 0);
	T_EQ(child.control & SE_DACL_AUTO_INHERITED, 0);

	t_section("a directory: CREATOR OWNER splits into effective and inherit-only ACEs");
	n = secdesc_inherit(&parent, true, &me, &grp, &child);
	/* OI: inherit-only for its files; CI: effective and inherited on */
	T_EQ(n, 2);
	T_ASSERT(sid_equal(&child.dacl.ace[0].sid, &creator));
	T_EQ(child.dacl.ace[0].flags, INHERIT_ONLY_ACE | OBJECT_INHERIT_ACE);
	T_EQ(child.dacl.ace[0].mask, GENERIC_READ);
	T_EQ(child.dacl.ace[1].flags, CONTAINER_INHERIT_ACE);
	sd_init(&parent, 1000);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE,
	    FILE_WRITE_DATA, &creator);
	n = secdesc_inherit(&parent, true, &me, &grp, &child);
	T_EQ(n, 2);
	T_ASSERT(sid_equal(&child.dacl.ace[0].sid, &me));
	T_EQ(child.dacl.ace[0].flags, 0);
	T_ASSERT(sid_equal(&child.dacl.ace[1].sid, &creator));
	T_EQ(child.dacl.ace[1].flags,
	     INHERIT_ONLY_ACE | CONTAINER_INHERIT_ACE | OBJECT_INHERIT_ACE);

	t_section("NO_PROPAGATE: effective only; AUTO_INHERITED: flagged INHERITED");
	sd_init(&parent, 1000);
	parent.control |= SE_DACL_AUTO_INHERITED;
	ace(&parent, ACCESS_DENIED_ACE_TYPE, CONTAINER_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE,
	    FILE_WRITE_DATA, &grp);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, OBJECT_INHERIT_ACE | NO_PROPAGATE_INHERIT_ACE,
	    FILE_READ_DATA, &grp);
	n = secdesc_inherit(&parent, true, &me, &grp, &child);
	T_EQ(n, 1);
	T_EQ(child.dacl.ace[0].type, ACCESS_DENIED_ACE_TYPE);
	T_EQ(child.dacl.ace[0].flags, INHERITED_ACE);
	T_ASSERT(child.control & SE_DACL_AUTO_INHERITED);
	n = secdesc_inherit(&parent, false, &me, &grp, &child);
	T_EQ(n, 1);
	T_EQ(child.dacl.ace[0].mask, FILE_READ_DATA);

	t_section("nothing inheritable: no ACE");
	sd_init(&parent, 1000);
	ace(&parent, ACCESS_ALLOWED_ACE_TYPE, 0, FILE_ALL_ACCESS, &world);
	T_EQ(secdesc_inherit(&parent, false, &me, &grp, &child), 0);
	T_EQ(secdesc_inherit(&parent, true, &me, &grp, &child), 0);
}

int main(void)
{
	round_trip();
	malformed();
	null_dacl();
	access_checks();
	inheritance();
	return t_done();
}
