// SPDX-License-Identifier: MIT
/*
 * Security descriptors of files: the POSIX owner, group, mode and ACLs
 * seen as an NT descriptor, and a descriptor a client sets mapped back
 * (docs/identity.md, "Security descriptors").
 *
 * Unix users are S-1-22-1-UID, groups S-1-22-2-GID (Samba's "Unix User"
 * and "Unix Group" domains), "other" is Everyone (S-1-1-0); a directory's
 * default ACL shows as inherit-only ACEs, its owning entries as CREATOR
 * OWNER (S-1-3-0) and CREATOR GROUP (S-1-3-1). A DACL set by a client
 * becomes the access ACL (and the default ACL of a directory, from its
 * inheritable ACEs) and is kept verbatim in the xattr user.rdax.ntacl
 * with a stamp of the POSIX state it was mapped to: while the stamp
 * matches, the kept DACL is what QUERY_INFO shows and its denied ACEs
 * are enforced at CREATE; after a chmod or setfacl it is stale and
 * ignored.
 */
#include <acl/libacl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "proto/ntstatus.h"
#include "proto/secdesc.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/bytes.h"
#include "util/log.h"

#define NTACL_XATTR "user.rdax.ntacl"
#define NTACL_MAGIC "RDAXNTA1"
#define NTACL_HDR 24			/* magic, then the stamp (u64 hash, uid, gid) */
#define NTACL_MAX 16384

#define AUTH_WORLD 1
#define AUTH_CREATOR 3
#define AUTH_NT 5
#define AUTH_UNIX 22
#define UNIX_USERS 1
#define UNIX_GROUPS 2
#define NFS_RID 88			/* S-1-5-88: Windows NFS's Unix ids and mode */

#define ACL_RWX (ACL_READ | ACL_WRITE | ACL_EXECUTE)
#define INHERIT_FLAGS (OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE)
#define SPECIFIC_READ (FILE_READ_DATA | FILE_READ_EA)
#define SPECIFIC_WRITE (FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA)

static void sid_unix(struct sid *s, uint32_t domain, uint32_t id)
{
	uint32_t sub[2] = { domain, id };

	sid_make(s, AUTH_UNIX, 2, sub);
}

static void sid_well_known(struct sid *s, uint64_t auth, uint32_t rid)
{
	sid_make(s, auth, 1, &rid);
}

/*
 * S-1-22-1-UID / S-1-22-2-GID, or the NFS form cifs.ko's "idsfromsid"
 * sends, S-1-5-88-1-UID / S-1-5-88-2-GID: the id, or -1
 */
static int64_t sid_unix_id(const struct sid *s, uint32_t domain)
{
	if (s->rev == 1 && s->auth == AUTH_NT && s->n == 3 && s->sub[0] == NFS_RID &&
	    s->sub[1] == domain)
		return s->sub[2];
	if (s->rev != 1 || s->auth != AUTH_UNIX || s->n != 2 || s->sub[0] != domain)
		return -1;
	return s->sub[1];
}

/*
 * cifs.ko's "modefromsid" chmod: an ACE for S-1-5-88-3-MODE in the DACL.
 * Taken out of it; the mode, or -1.
 */
static int64_t dacl_take_mode(struct acl *a)
{
	int64_t mode = -1;
	int i, j;

	for (i = j = 0; i < a->n; i++) {
		const struct sid *s = &a->ace[i].sid;

		if (s->rev == 1 && s->auth == AUTH_NT && s->n == 3 && s->sub[0] == NFS_RID &&
		    s->sub[1] == 3) {
			mode = s->sub[2] & 07777;
			continue;
		}
		a->ace[j++] = a->ace[i];
	}
	a->n = (uint16_t)j;
	return mode;
}

static bool sid_is(const struct sid *s, uint64_t auth, uint32_t rid)
{
	return s->rev == 1 && s->auth == auth && s->n == 1 && s->sub[0] == rid;
}

/* rwx as an access mask, as Samba's map_canon_ace_perms ("acl map full control") */
static uint32_t perm_to_mask(unsigned int perm, bool dir)
{
	uint32_t m = 0;

	if ((perm & ACL_RWX) == ACL_RWX)
		return dir ? FILE_ALL_ACCESS : FILE_ALL_ACCESS & ~DELETE_ACCESS;
	if (perm & ACL_READ)
		m |= FILE_GENERIC_READ;
	if (perm & ACL_WRITE)
		m |= FILE_GENERIC_WRITE | (dir ? FILE_DELETE_CHILD : 0);
	if (perm & ACL_EXECUTE)
		m |= FILE_GENERIC_EXECUTE;
	return m;
}

/* and back, as Samba's map_nt_perms */
static unsigned int mask_to_perm(uint32_t m)
{
	unsigned int perm = 0;

	if (m & GENERIC_ALL || (m & FILE_ALL_ACCESS) == FILE_ALL_ACCESS)
		return ACL_RWX;
	if (m & (GENERIC_READ | SPECIFIC_READ))
		perm |= ACL_READ;
	if (m & (GENERIC_WRITE | SPECIFIC_WRITE))
		perm |= ACL_WRITE;
	if (m & (GENERIC_EXECUTE | FILE_EXECUTE))
		perm |= ACL_EXECUTE;
	return perm;
}

static int fd_path(int fd, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "/proc/self/fd/%d", fd);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The file's ACL of type (a minimal one from the mode when it has none). */
static acl_t acl_read(const char *path, const struct stat *st, acl_type_t type)
{
	acl_t a = acl_get_file(path, type);

	if (!a && type == ACL_TYPE_ACCESS && (errno == ENOTSUP || errno == EOPNOTSUPP))
		a = acl_from_mode(st->st_mode);
	return a;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* FNV-1a over an ACL's entries, sorted: the same for the same ACL. */
static uint64_t acl_hash(acl_t a, uint64_t h)
{
	uint64_t e[SECDESC_MAX_ACES * 2 + 8];
	acl_entry_t ent;
	int n = 0, i, b, id = ACL_FIRST_ENTRY;

	while (a && n < (int)(sizeof(e) / sizeof(e[0])) && acl_get_entry(a, id, &ent) == 1) {
		acl_permset_t ps;
		acl_tag_t tag;
		void *q;
		uint64_t qual = 0;

		id = ACL_NEXT_ENTRY;
		acl_get_tag_type(ent, &tag);
		acl_get_permset(ent, &ps);
		if (tag == ACL_USER || tag == ACL_GROUP) {
			q = acl_get_qualifier(ent);
			if (q) {
				qual = *(id_t *)q;
				acl_free(q);
			}
		}
		e[n++] = (uint64_t)tag << 48 | qual << 8 |
			 (uint64_t)(acl_get_perm(ps, ACL_READ) << 2 |
				    acl_get_perm(ps, ACL_WRITE) << 1 |
				    acl_get_perm(ps, ACL_EXECUTE));
	}
	qsort(e, (size_t)n, sizeof(e[0]), cmp_u64);
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			h = (h ^ ((e[i] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;	/* ends the ACL */
}

static uint64_t stamp_of(acl_t access, acl_t dflt)
{
	return acl_hash(dflt, acl_hash(access, 0xcbf29ce484222325ull));
}

/* The stamp of the file's POSIX state now. */
static int stamp_now(const char *path, const struct stat *st, uint64_t *out)
{
	acl_t a, d = NULL;

	a = acl_read(path, st, ACL_TYPE_ACCESS);
	if (!a)
		return -errno;
	if (S_ISDIR(st->st_mode))
		d = acl_get_file(path, ACL_TYPE_DEFAULT);
	*out = stamp_of(a, d);
	acl_free(a);
	if (d)
		acl_free(d);
	return 0;
}

struct xget {
	int fd;
	uint8_t *buf;
	ssize_t n;
};

static int xget(void *arg)
{
	struct xget *x = arg;

	x->n = store_getxattr(x->fd, NULL, NTACL_XATTR, x->buf, NTACL_MAX);
	return 0;
}

/*
 * The descriptor kept for the file: 1 (without its DACL when the stamp
 * no longer matches), 0 when none is kept or the owner or group changed,
 * or a negative errno.
 */
static int kept_read(int fd, const char *path, const struct stat *st,
		     const struct srv_ident *back, struct secdesc *sd)
{
	uint8_t *buf = malloc(NTACL_MAX);
	struct xget x = { fd, buf, -ENODATA };
	uint64_t stamp = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	xget(&x);
	if (x.n == -EACCES || x.n == -EPERM) {
		ret = srv_ident_run_self(back, xget, &x);
		if (ret < 0)
			goto out;
		ret = 0;
	}
	if (x.n < NTACL_HDR || memcmp(buf, NTACL_MAGIC, 8))
		goto out;
	if (get_le32(buf + 16) != st->st_uid || get_le32(buf + 20) != st->st_gid)
		goto out;
	ret = secdesc_decode(buf + NTACL_HDR, (size_t)x.n - NTACL_HDR, sd) ? 0 : 1;
	/* a chmod or setfacl since: the DACL is stale, the SACL is not */
	if (ret == 1 && (stamp_now(path, st, &stamp) || stamp != get_le64(buf + 8))) {
		sd->has_dacl = sd->null_dacl = false;
		sd->dacl.n = 0;
		sd->control &= (uint16_t)~(SE_DACL_PRESENT | SE_DACL_DEFAULTED |
					   SE_DACL_AUTO_INHERITED | SE_DACL_PROTECTED);
	}
out:
	free(buf);
	return ret;
}

static void ace_add(struct acl *a, uint8_t type, uint8_t flags, uint32_t mask,
		    const struct sid *sid)
{
	struct ace *e;

	if (a->n >= SECDESC_MAX_ACES)
		return;
	e = &a->ace[a->n++];
	e->type = type;
	e->flags = flags;
	e->mask = mask;
	e->sid = *sid;
}

/* The ACEs of a POSIX ACL (flags: the inheritance of a default ACL). */
static void dacl_from_posix(acl_t acl, bool dir, uint8_t flags, struct acl *out)
{
	unsigned int mask_perm = ACL_RWX;
	acl_entry_t ent;
	int id;

	for (id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &ent) == 1; id = ACL_NEXT_ENTRY) {
		acl_tag_t tag;
		acl_permset_t ps;

		acl_get_tag_type(ent, &tag);
		acl_get_permset(ent, &ps);
		if (tag == ACL_MASK)
			mask_perm = (unsigned int)(acl_get_perm(ps, ACL_READ) * ACL_READ |
						   acl_get_perm(ps, ACL_WRITE) * ACL_WRITE |
						   acl_get_perm(ps, ACL_EXECUTE) * ACL_EXECUTE);
	}
	for (id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &ent) == 1; id = ACL_NEXT_ENTRY) {
		unsigned int perm;
		acl_permset_t ps;
		struct sid sid;
		acl_tag_t tag;
		id_t *q;

		acl_get_tag_type(ent, &tag);
		acl_get_permset(ent, &ps);
		perm = (unsigned int)(acl_get_perm(ps, ACL_READ) * ACL_READ |
				      acl_get_perm(ps, ACL_WRITE) * ACL_WRITE |
				      acl_get_perm(ps, ACL_EXECUTE) * ACL_EXECUTE);
		switch (tag) {
		case ACL_USER_OBJ:
			if (flags)
				sid_well_known(&sid, AUTH_CREATOR, 0);
			break;
		case ACL_GROUP_OBJ:
			perm &= mask_perm;
			if (flags)
				sid_well_known(&sid, AUTH_CREATOR, 1);
			break;
		case ACL_USER:
		case ACL_GROUP:
			perm &= mask_perm;
			q = acl_get_qualifier(ent);
			if (!q)
				continue;
			sid_unix(&sid, tag == ACL_USER ? UNIX_USERS : UNIX_GROUPS, *q);
			acl_free(q);
			break;
		case ACL_OTHER:
			sid_well_known(&sid, AUTH_WORLD, 0);
			break;
		default:
			continue;
		}
		if (!flags && tag == ACL_USER_OBJ)
			continue;	/* the caller adds owner and group */
		if (!flags && tag == ACL_GROUP_OBJ)
			continue;
		ace_add(out, ACCESS_ALLOWED_ACE_TYPE, flags, perm_to_mask(perm, dir), &sid);
	}
}

/* The owner's and owning group's perms of an access ACL. */
static void obj_perms(acl_t acl, unsigned int *user, unsigned int *group)
{
	unsigned int mask_perm = ACL_RWX, g = 0;
	acl_entry_t ent;
	int id;

	for (id = ACL_FIRST_ENTRY; acl_get_entry(acl, id, &ent) == 1; id = ACL_NEXT_ENTRY) {
		acl_permset_t ps;
		acl_tag_t tag;
		unsigned int perm;

		acl_get_tag_type(ent, &tag);
		acl_get_permset(ent, &ps);
		perm = (unsigned int)(acl_get_perm(ps, ACL_READ) * ACL_READ |
				      acl_get_perm(ps, ACL_WRITE) * ACL_WRITE |
				      acl_get_perm(ps, ACL_EXECUTE) * ACL_EXECUTE);
		if (tag == ACL_USER_OBJ)
			*user = perm;
		else if (tag == ACL_GROUP_OBJ)
			g = perm;
		else if (tag == ACL_MASK)
			mask_perm = perm;
	}
	*group = g & mask_perm;
}

/* The DACL of the POSIX state: owner, named users, group, named groups, Everyone. */
static int dacl_derive(const char *path, const struct stat *st, struct acl *out)
{
	bool dir = S_ISDIR(st->st_mode);
	unsigned int up = 0, gp = 0;
	struct acl named = { 0 };
	struct sid sid;
	acl_t a, d;
	int i;

	out->rev = 2;
	out->n = 0;
	a = acl_read(path, st, ACL_TYPE_ACCESS);
	if (!a)
		return -errno;
	obj_perms(a, &up, &gp);
	dacl_from_posix(a, dir, 0, &named);
	acl_free(a);
	sid_unix(&sid, UNIX_USERS, st->st_uid);
	ace_add(out, ACCESS_ALLOWED_ACE_TYPE, 0, perm_to_mask(up, dir), &sid);
	for (i = 0; i < named.n; i++)
		if (sid_unix_id(&named.ace[i].sid, UNIX_USERS) >= 0)
			ace_add(out, named.ace[i].type, 0, named.ace[i].mask, &named.ace[i].sid);
	sid_unix(&sid, UNIX_GROUPS, st->st_gid);
	ace_add(out, ACCESS_ALLOWED_ACE_TYPE, 0, perm_to_mask(gp, dir), &sid);
	for (i = 0; i < named.n; i++)
		if (sid_unix_id(&named.ace[i].sid, UNIX_USERS) < 0)
			ace_add(out, named.ace[i].type, 0, named.ace[i].mask, &named.ace[i].sid);
	if (dir) {
		d = acl_get_file(path, ACL_TYPE_DEFAULT);
		if (d && acl_entries(d) > 0)
			dacl_from_posix(d, dir, INHERIT_FLAGS | INHERIT_ONLY_ACE, out);
		if (d)
			acl_free(d);
	}
	return 0;
}

/* The kept descriptor of fd as kept_read gives it, with fd's path and stat. */
static int kept_of_fd(int fd, const struct srv_ident *id, char *path, size_t cap,
		      struct stat *st, struct secdesc *sd)
{
	int ret;

	if (fstat(fd, st))
		return -errno;
	ret = fd_path(fd, path, cap);
	if (ret)
		return ret;
	return kept_read(fd, path, st, id, sd);
}

/* Owner and group from the file where the descriptor names none. */
static void sd_ids_from_file(struct secdesc *sd, const struct stat *st)
{
	if (!sd->has_owner)
		sid_unix(&sd->owner, UNIX_USERS, st->st_uid);
	if (!sd->has_group)
		sid_unix(&sd->group, UNIX_GROUPS, st->st_gid);
	sd->has_owner = sd->has_group = true;
}

static int sd_of(int fd, const struct srv_ident *back, struct secdesc *sd)
{
	char path[64];
	struct stat st;
	int ret;

	ret = kept_of_fd(fd, back, path, sizeof(path), &st, sd);
	if (ret < 0)
		return ret;
	if (!ret)
		memset(sd, 0, sizeof(*sd));
	if (!sd->has_dacl) {
		ret = dacl_derive(path, &st, &sd->dacl);
		if (ret)
			return ret;
		sd->has_dacl = true;
		sd->null_dacl = false;
	}
	sd->control |= SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd_ids_from_file(sd, &st);
	return 0;
}

int srv_sd_query(struct srv_req *req, struct srv_open *o, uint32_t secinfo,
		 uint8_t *buf, size_t cap, size_t *len)
{
	struct secdesc *sd;
	int ret;

	if (o->symlink)
		return -EOPNOTSUPP;	/* its ACL would be its target's */
	if (secinfo & SACL_SECURITY_INFORMATION && !(o->access & ACCESS_SYSTEM_SECURITY))
		return -EACCES;
	if (secinfo & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
		       DACL_SECURITY_INFORMATION) && !(o->access & READ_CONTROL))
		return -EACCES;
	sd = malloc(sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	ret = sd_of(o->fd, req->tree->ident, sd);
	if (!ret)
		*len = secdesc_encode(sd, secinfo, buf, cap);
	free(sd);
	return ret;
}

/* One ACE into the POSIX ACL being built. */
static int posix_add(acl_t *acl, acl_tag_t tag, id_t id, unsigned int perm)
{
	acl_permset_t ps;
	acl_entry_t ent;
	int i;

	/* an entry for the same tag and id takes the union */
	for (i = ACL_FIRST_ENTRY; acl_get_entry(*acl, i, &ent) == 1; i = ACL_NEXT_ENTRY) {
		acl_tag_t t;
		id_t *q;
		bool same;

		acl_get_tag_type(ent, &t);
		if (t != tag)
			continue;
		same = true;
		if (tag == ACL_USER || tag == ACL_GROUP) {
			q = acl_get_qualifier(ent);
			same = q && *q == id;
			if (q)
				acl_free(q);
		}
		if (same)
			goto set;
	}
	if (acl_create_entry(acl, &ent) || acl_set_tag_type(ent, tag))
		return -errno;
	if ((tag == ACL_USER || tag == ACL_GROUP) && acl_set_qualifier(ent, &id))
		return -errno;
set:
	acl_get_permset(ent, &ps);
	if (perm & ACL_READ)
		acl_add_perm(ps, ACL_READ);
	if (perm & ACL_WRITE)
		acl_add_perm(ps, ACL_WRITE);
	if (perm & ACL_EXECUTE)
		acl_add_perm(ps, ACL_EXECUTE);
	return acl_set_permset(ent, ps) ? -errno : 0;
}

/*
 * USER_OBJ, GROUP_OBJ and OTHER, and a mask when there are named entries.
 * Everyone's perms (world) go to every user and group entry too: an NT
 * ACE for Everyone applies to the owner and the groups as well.
 *
 * The POSIX ACL beside a kept DACL is its envelope: the kernel must let
 * through whatever the DACL grants, and the DACL decides (srv_sd_access).
 * So the owner has at least r (rwx on a directory, and in a default ACL:
 * Samba's ensure_minimal_owner_ace_perms; the owner may chmod anyway),
 * and on a directory r or w brings x (listing and adding need search).
 */
static int posix_complete(acl_t *acl, unsigned int world, unsigned int owner_min, bool dir)
{
	acl_entry_t ent;
	int ret, id;

	ret = posix_add(acl, ACL_USER_OBJ, 0, owner_min) ?: posix_add(acl, ACL_GROUP_OBJ, 0, 0) ?:
	      posix_add(acl, ACL_OTHER, 0, 0);
	if (ret)
		return ret;
	for (id = ACL_FIRST_ENTRY; acl_get_entry(*acl, id, &ent) == 1; id = ACL_NEXT_ENTRY) {
		acl_permset_t ps;
		acl_tag_t tag;

		acl_get_tag_type(ent, &tag);
		if (tag == ACL_MASK)
			continue;
		acl_get_permset(ent, &ps);
		if (tag != ACL_OTHER && world & ACL_READ)
			acl_add_perm(ps, ACL_READ);
		if (tag != ACL_OTHER && world & ACL_WRITE)
			acl_add_perm(ps, ACL_WRITE);
		if (tag != ACL_OTHER && world & ACL_EXECUTE)
			acl_add_perm(ps, ACL_EXECUTE);
		if (dir && (acl_get_perm(ps, ACL_READ) == 1 || acl_get_perm(ps, ACL_WRITE) == 1))
			acl_add_perm(ps, ACL_EXECUTE);
		if (acl_set_permset(ent, ps))
			return -errno;
	}
	if (acl_entries(*acl) > 3 && acl_calc_mask(acl))
		return -errno;
	return 0;
}

/*
 * The allowed ACEs of a DACL as POSIX ACLs: the access ACL from the
 * effective ones, a directory's default ACL from the inheritable ones.
 * Denied ACEs and SIDs without a Unix id have no POSIX form (the kept
 * DACL has them). *dflt is NULL when there is no default ACL.
 */
static int dacl_to_posix(const struct acl *dacl, const struct stat *st, acl_t *acc,
			 acl_t *dflt)
{
	bool dir = S_ISDIR(st->st_mode);
	unsigned int world = 0, dworld = 0;
	int i, ret = 0;

	for (i = 0; i < dacl->n; i++) {
		const struct ace *e = &dacl->ace[i];

		if (e->type != ACCESS_ALLOWED_ACE_TYPE || !sid_is(&e->sid, AUTH_WORLD, 0))
			continue;
		if (!(e->flags & INHERIT_ONLY_ACE))
			world |= mask_to_perm(e->mask);
		if (e->flags & INHERIT_FLAGS)
			dworld |= mask_to_perm(e->mask);
	}
	*acc = acl_init(8);
	*dflt = dir ? acl_init(8) : NULL;
	if (!*acc || (dir && !*dflt))
		return -ENOMEM;
	for (i = 0; i < dacl->n && !ret; i++) {
		const struct ace *e = &dacl->ace[i];
		unsigned int perm = mask_to_perm(e->mask);
		acl_tag_t tag, dtag;
		int64_t uid = sid_unix_id(&e->sid, UNIX_USERS);
		int64_t gid = sid_unix_id(&e->sid, UNIX_GROUPS);
		id_t id = 0;

		if (e->type != ACCESS_ALLOWED_ACE_TYPE)
			continue;
		if (uid >= 0) {
			tag = (uid_t)uid == st->st_uid ? ACL_USER_OBJ : ACL_USER;
			id = (id_t)uid;
		} else if (gid >= 0) {
			tag = (gid_t)gid == st->st_gid ? ACL_GROUP_OBJ : ACL_GROUP;
			id = (id_t)gid;
		} else if (sid_is(&e->sid, AUTH_WORLD, 0)) {
			tag = ACL_OTHER;
		} else if (sid_is(&e->sid, AUTH_CREATOR, 4)) {
			tag = ACL_USER_OBJ;	/* OWNER RIGHTS */
		} else if (sid_is(&e->sid, AUTH_CREATOR, 0) || sid_is(&e->sid, AUTH_CREATOR, 1)) {
			tag = -1;	/* only inherited */
		} else {
			continue;
		}
		dtag = sid_is(&e->sid, AUTH_CREATOR, 0) ? ACL_USER_OBJ :
		       sid_is(&e->sid, AUTH_CREATOR, 1) ? ACL_GROUP_OBJ : tag;
		if (!(e->flags & INHERIT_ONLY_ACE) && tag != (acl_tag_t)-1)
			ret = posix_add(acc, tag, id, perm);
		if (!ret && dir && e->flags & INHERIT_FLAGS)
			ret = posix_add(dflt, dtag, id, perm);
	}
	if (!ret)
		ret = posix_complete(acc, world, dir ? ACL_RWX : ACL_READ, dir);
	if (!ret && dir && acl_entries(*dflt) > 0)
		ret = posix_complete(dflt, dworld, ACL_RWX, true);
	if (!ret && dir && acl_entries(*dflt) == 0) {
		acl_free(*dflt);
		*dflt = NULL;
	}
	return ret;
}

/*
 * The owner or group a descriptor sets: a Unix id changes the file's
 * (*id; the kernel decides), another SID is kept as it was sent, the
 * file's own staying on disk (Samba's acl_xattr: "force unknown acl
 * user").
 */
static void owner_part(const struct sid *s, uint32_t domain, uint32_t now, uint32_t *id,
		       bool *kept, struct sid *keep)
{
	int64_t v = sid_unix_id(s, domain);

	*kept = v < 0;
	if (*kept)
		*keep = *s;
	else if ((uint32_t)v != now)
		*id = (uint32_t)v;
}

/* Write the kept descriptor k for the POSIX state given by the stamp. */
static int kept_write(int fd, const struct secdesc *k, uint64_t stamp, const struct stat *st)
{
	uint8_t *buf;
	size_t n;
	int ret;

	if (!k->has_owner && !k->has_group && !k->has_dacl && !k->has_sacl) {
		ret = store_setxattr(fd, NTACL_XATTR, "", 0);
		return ret == -EOPNOTSUPP ? 0 : ret;
	}
	buf = malloc(NTACL_MAX);
	if (!buf)
		return -ENOMEM;
	n = secdesc_encode(k, 0xf, buf + NTACL_HDR, NTACL_MAX - NTACL_HDR);
	ret = -E_SMB_INVALID_SECURITY_DESCR;
	if (n <= NTACL_MAX - NTACL_HDR) {
		memcpy(buf, NTACL_MAGIC, 8);
		put_le64(buf + 8, stamp);
		put_le32(buf + 16, st->st_uid);
		put_le32(buf + 20, st->st_gid);
		ret = store_setxattr(fd, NTACL_XATTR, buf, NTACL_HDR + n);
		if (ret == -EOPNOTSUPP)
			ret = 0;	/* no user xattrs: the POSIX form alone */
	}
	free(buf);
	return ret;
}

static int posix_set(const char *path, const struct stat *st, acl_t acc, acl_t dflt)
{
	if (acl_set_file(path, ACL_TYPE_ACCESS, acc))
		return errno == EPERM ? -EACCES : -errno;
	if (S_ISDIR(st->st_mode) && (dflt ? acl_set_file(path, ACL_TYPE_DEFAULT, dflt)
					  : acl_delete_def_file(path)))
		return errno == EPERM ? -EACCES : -errno;
	return 0;
}

/*
 * Apply the parts of sd that secinfo names: the owner and group (chown
 * as the user: the kernel decides; only a root session holds CAP_CHOWN), the DACL
 * as POSIX ACLs; what has no POSIX form is kept in user.rdax.ntacl.
 */
static int sd_apply(int fd, struct secdesc *sd, uint32_t secinfo,
		    const struct srv_ident *back)
{
	int64_t mode = -1;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	acl_t acc = NULL, dflt = NULL;
	struct secdesc *k;
	uint64_t stamp = 0;
	struct stat st;
	char path[64];
	int ret;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	ret = kept_of_fd(fd, back, path, sizeof(path), &st, k);
	if (ret < 0)
		goto out;
	if (!ret)
		memset(k, 0, sizeof(*k));
	if (secinfo & OWNER_SECURITY_INFORMATION && sd->has_owner)
		owner_part(&sd->owner, UNIX_USERS, st.st_uid, &uid, &k->has_owner, &k->owner);
	if (secinfo & GROUP_SECURITY_INFORMATION && sd->has_group)
		owner_part(&sd->group, UNIX_GROUPS, st.st_gid, &gid, &k->has_group, &k->group);
	if (uid != (uid_t)-1 || gid != (gid_t)-1) {
		if (chown(path, uid, gid)) {
			ret = errno == EPERM ? -EACCES : -errno;
			goto out;
		}
		if (fstat(fd, &st)) {
			ret = -errno;
			goto out;
		}
	}
	if (secinfo & SACL_SECURITY_INFORMATION && sd->has_sacl) {
		/* kept as set, for those who hold the privilege to read it */
		secdesc_acl_map_generic(&sd->sacl);
		k->has_sacl = true;
		k->null_sacl = sd->null_sacl;
		k->sacl = sd->sacl;
		k->control &= (uint16_t)~(SE_SACL_PRESENT | SE_SACL_PROTECTED | SE_SACL_AUTO_INHERITED);
		k->control |= SE_SACL_PRESENT | (sd->control & SE_SACL_PROTECTED);
		if ((sd->control & (SE_SACL_AUTO_INHERITED | SE_SACL_AUTO_INHERIT_REQ)) ==
		    (SE_SACL_AUTO_INHERITED | SE_SACL_AUTO_INHERIT_REQ))
			k->control |= SE_SACL_AUTO_INHERITED;
	}
	if (secinfo & DACL_SECURITY_INFORMATION && sd->has_dacl && !sd->null_dacl) {
		mode = dacl_take_mode(&sd->dacl);
		if (mode >= 0 && !sd->dacl.n)
			secinfo &= ~DACL_SECURITY_INFORMATION;	/* a chmod only */
	}
	if (secinfo & DACL_SECURITY_INFORMATION && sd->has_dacl) {
		/* kept as file rights, as Windows and Samba keep them */
		secdesc_acl_map_generic(&sd->dacl);
		/* as Windows: AUTO_INHERITED sticks only with AUTO_INHERIT_REQ */
		k->control &= (uint16_t)~(SE_DACL_PROTECTED | SE_DACL_AUTO_INHERITED);
		k->control |= sd->control & SE_DACL_PROTECTED;
		if ((sd->control & (SE_DACL_AUTO_INHERITED | SE_DACL_AUTO_INHERIT_REQ)) ==
		    (SE_DACL_AUTO_INHERITED | SE_DACL_AUTO_INHERIT_REQ))
			k->control |= SE_DACL_AUTO_INHERITED;
		if (sd->null_dacl) {
			/* no DACL: everyone may do everything */
			struct acl all = { .rev = 2, .n = 1 };

			sid_well_known(&all.ace[0].sid, AUTH_WORLD, 0);
			all.ace[0].mask = FILE_ALL_ACCESS;
			ret = dacl_to_posix(&all, &st, &acc, &dflt);
		} else {
			ret = dacl_to_posix(&sd->dacl, &st, &acc, &dflt);
		}
		if (ret)
			goto out;
		k->has_dacl = true;
		k->null_dacl = sd->null_dacl;
		k->dacl = sd->dacl;
		stamp = stamp_of(acc, dflt);
	} else {
		ret = stamp_now(path, &st, &stamp);
		if (ret)
			goto out;
	}
	k->control |= SE_SELF_RELATIVE | (k->has_dacl ? SE_DACL_PRESENT : 0);
	/* kept first: the DACL may take away the right to write it */
	ret = kept_write(fd, k, stamp, &st);
	if (ret == -EACCES && acc && !chmod(path, (st.st_mode & 07777) | S_IWUSR))
		ret = kept_write(fd, k, stamp, &st);	/* the owner's, back by posix_set */
	if (!ret && acc)
		ret = posix_set(path, &st, acc, dflt);
	if (!ret && mode >= 0 && chmod(path, (mode_t)mode))
		ret = errno == EPERM ? -EACCES : -errno;
out:
	if (acc)
		acl_free(acc);
	if (dflt)
		acl_free(dflt);
	free(k);
	return ret;
}

/* A descriptor as a client sends it: the status a malformed one gets. */
static int sd_decode(const uint8_t *p, size_t len, struct secdesc *sd)
{
	int ret;

	if (len > NTACL_MAX)
		return -E_SMB_INVALID_SECURITY_DESCR;
	ret = secdesc_decode(p, len, sd);
	if (ret == -EOPNOTSUPP || ret == -E2BIG)
		return -EINVAL;
	return ret ? -E_SMB_INVALID_SECURITY_DESCR : 0;
}

int srv_sd_set(struct srv_req *req, struct srv_open *o, uint32_t secinfo,
	       const uint8_t *p, size_t len)
{
	struct secdesc *sd;
	int ret;

	if (o->symlink)
		return -EOPNOTSUPP;
	sd = malloc(sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	ret = sd_decode(p, len, sd);
	if (ret)
		goto out;
	/* as Samba: the descriptor is read before the access is checked */
	ret = -EACCES;
	if (secinfo & (OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION) &&
	    !(o->access & WRITE_OWNER))
		goto out;
	if (secinfo & DACL_SECURITY_INFORMATION && !(o->access & WRITE_DAC))
		goto out;
	/* as Samba (smbtorture3 SMB2-SACL): a SACL needs WRITE_DAC too */
	if (secinfo & SACL_SECURITY_INFORMATION &&
	    (o->access & (ACCESS_SYSTEM_SECURITY | WRITE_DAC)) != (ACCESS_SYSTEM_SECURITY | WRITE_DAC))
		goto out;
	ret = sd_apply(o->fd, sd, secinfo, req->tree->ident);
out:
	free(sd);
	return ret;
}

int srv_sd_inherit(int parent, int fd, const struct srv_ident *id)
{
	struct secdesc *ps = NULL, *k = NULL;
	struct sid owner, group;
	struct stat pst, st;
	char ppath[64], path[64];
	uint64_t stamp;
	int ret;

	if (fstat(parent, &pst) || fstat(fd, &st))
		return -errno;
	ret = fd_path(parent, ppath, sizeof(ppath)) ?: fd_path(fd, path, sizeof(path));
	if (ret)
		return ret;
	ps = calloc(1, sizeof(*ps));
	k = calloc(1, sizeof(*k));
	ret = -ENOMEM;
	if (!ps || !k)
		goto out;
	ret = kept_read(parent, ppath, &pst, id, ps);
	if (ret <= 0 || !ps->has_dacl || ps->null_dacl)
		goto out;	/* the POSIX default ACL did it all */
	sid_unix(&owner, UNIX_USERS, st.st_uid);
	sid_unix(&group, UNIX_GROUPS, st.st_gid);
	/* nothing inheritable: the POSIX view is the default DACL */
	if (!secdesc_inherit(ps, S_ISDIR(st.st_mode), &owner, &group, k))
		goto out;
	ret = stamp_now(path, &st, &stamp);
	if (!ret)
		ret = kept_write(fd, k, stamp, &st);
out:
	free(ps);
	free(k);
	return ret;
}

int srv_sd_check(const uint8_t *p, size_t len)
{
	struct secdesc *sd = malloc(sizeof(*sd));
	int ret;

	if (!sd)
		return -ENOMEM;
	ret = sd_decode(p, len, sd);
	free(sd);
	return ret;
}

int srv_sd_create(int fd, const uint8_t *p, size_t len, const struct srv_ident *id)
{
	struct secdesc *sd = malloc(sizeof(*sd));
	int ret;

	if (!sd)
		return -ENOMEM;
	ret = sd_decode(p, len, sd);
	if (!ret)
		ret = sd_apply(fd, sd, OWNER_SECURITY_INFORMATION | GROUP_SECURITY_INFORMATION |
				       DACL_SECURITY_INFORMATION, id);
	/*
	 * An owner the user may not give away (cifs.ko's "idsfromsid" names
	 * the client process's uid on every create): the new file stays the
	 * creator's, as on a local file system; the rest of it applies.
	 */
	if (ret == -EACCES && (sd->has_owner || sd->has_group)) {
		pr_debug("create: owner/group of the descriptor not given: the creator's");
		ret = sd_decode(p, len, sd);	/* sd_apply took its mode ACE out */
		if (!ret)
			ret = sd_apply(fd, sd, DACL_SECURITY_INFORMATION, id);
	}
	free(sd);
	return ret;
}

/* The session user's SIDs: the user, every group, Everyone, Authenticated Users. */
static bool ident_has(const struct sid *s, const void *arg)
{
	const struct srv_ident *id = arg;
	int64_t v;
	int i;

	if (sid_is(s, AUTH_WORLD, 0) || sid_is(s, AUTH_NT, 11))
		return true;
	v = sid_unix_id(s, UNIX_USERS);
	if (v >= 0)
		return (uid_t)v == id->uid;
	v = sid_unix_id(s, UNIX_GROUPS);
	if (v < 0)
		return false;
	if ((gid_t)v == id->gid)
		return true;
	for (i = 0; i < id->ngroups; i++)
		if ((gid_t)v == id->groups[i])
			return true;
	return false;
}

int srv_share_open_parent(struct srv_share *sh, const char *path, int *fd)
{
	char parent[4096];
	const char *slash = strrchr(path, '/');

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - path) : 0, path);
	return store_open(&sh->root, *parent ? parent : ".", O_PATH | O_DIRECTORY, 0, fd);
}

int srv_sd_parent_access(struct srv_share *sh, const char *path, uint32_t right,
			 const struct srv_ident *id)
{
	uint32_t granted;
	int pfd, ret;

	if (!*path)
		return 0;
	ret = srv_share_open_parent(sh, path, &pfd);
	if (ret)
		return ret;
	ret = srv_sd_access(pfd, id, right, &granted);
	close(pfd);
	return ret;
}

bool srv_sd_privileged(const struct srv_ident *id)
{
	return !id || id->uid == 0;
}

/*
 * The kept descriptor of fd, owner and group from the file where it
 * keeps none: 1; 0 when none is kept (or it is stale); a negative errno.
 */
static int kept_for_check(int fd, const struct srv_ident *id, struct secdesc *sd)
{
	struct stat st;
	char path[64];
	int ret;

	ret = kept_of_fd(fd, id, path, sizeof(path), &st, sd);
	if (ret != 1 || !sd->has_dacl)
		return ret < 0 ? ret : 0;
	sd_ids_from_file(sd, &st);
	return 1;
}

int srv_sd_access(int fd, const struct srv_ident *id, uint32_t desired, uint32_t *granted)
{
	struct sec_token tok = { ident_has, id, srv_sd_privileged(id) };
	struct secdesc *sd;
	int ret;

	*granted = 0;
	if (srv_sd_privileged(id))
		return 0;	/* as Samba: root is not checked */
	sd = malloc(sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	ret = kept_for_check(fd, id, sd);
	if (ret == 1)
		ret = secdesc_access_check(sd, &tok, desired, granted) ?: 1;
	free(sd);
	return ret;
}

uint32_t srv_sd_maximal(int fd, const struct stat *st, const struct srv_ident *id)
{
	uint32_t m = READ_CONTROL | SYNCHRONIZE | FILE_READ_ATTRIBUTES;
	bool dir = S_ISDIR(st->st_mode);
	uint32_t granted;

	/* a kept descriptor says it all (the kernel is asked at the open) */
	if (srv_sd_access(fd, id, MAXIMUM_ALLOWED, &granted) == 1)
		return granted | FILE_READ_ATTRIBUTES;
	if (!store_access_at(fd, NULL, R_OK))
		m |= FILE_GENERIC_READ;
	if (!store_access_at(fd, NULL, W_OK))
		m |= FILE_GENERIC_WRITE | DELETE_ACCESS | (dir ? FILE_DELETE_CHILD : 0);
	if (!store_access_at(fd, NULL, X_OK))
		m |= FILE_GENERIC_EXECUTE;
	if (!id || id->uid == st->st_uid || id->uid == 0)
		m |= WRITE_DAC | WRITE_OWNER | FILE_WRITE_ATTRIBUTES;
	return m;
}
