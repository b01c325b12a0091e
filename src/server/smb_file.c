// SPDX-License-Identifier: MIT
/*
 * CREATE, CLOSE, FLUSH, READ, WRITE, LOCK; the per-share file table and
 * SMB path handling.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "proto/fscc.h"
#include "proto/lease.h"
#include "proto/ntstatus.h"
#include "proto/posix.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"
#include "util/utf16.h"

#define SRV_PATH_MAX 4096

/* ---- paths ---- */

/*
 * A "/"-separated path made relative and tidy in place: no leading or
 * trailing separators, "." components dropped; empty ones, and ".." ones
 * when asked, are refused.
 */
int srv_path_tidy(char *out, bool refuse_dotdot)
{
	char *p, *q;
	size_t n;

	for (p = out; *p == '/'; p++)
		;
	memmove(out, p, strlen(p) + 1);
	n = strlen(out);
	while (n && out[n - 1] == '/')
		out[--n] = 0;
	for (p = out; *p;) {
		q = strchr(p, '/');
		n = q ? (size_t)(q - p) : strlen(p);
		if (!n || (refuse_dotdot && n == 2 && !memcmp(p, "..", 2)))
			return -E_SMB_OBJECT_NAME_INVALID;
		if (n == 1 && *p == '.') {
			if (!q) {
				/* a trailing ".": drop it and its separator */
				*(p > out ? p - 1 : p) = 0;
				break;
			}
			memmove(p, q + 1, strlen(q + 1) + 1);
			continue;
		}
		if (!q)
			break;
		p = q + 1;
	}
	return 0;
}

int srv_path_stream_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap,
			       char *stream, size_t scap, int *kind)
{
	char *p, *colon;
	int n;

	*kind = SRV_STREAM_NONE;
	n = utf16le_to_utf8(name, len, out, cap);
	if (n == -E2BIG)
		return -ENAMETOOLONG;
	if (n < 0)
		return -E_SMB_OBJECT_NAME_INVALID;
	colon = strchr(out, ':');
	if (colon) {
		/* a stream of the last component only */
		if (strchr(colon, '\\'))
			return -E_SMB_OBJECT_NAME_INVALID;
		n = fscc_stream_parse(colon + 1, stream, scap);
		if (n < 0)
			return n;
		*kind = n ? SRV_STREAM_DEFAULT : SRV_STREAM_NAMED;
		*colon = 0;
	}
	/* no wildcards in a name (a stream's may have them), as Samba */
	if (strpbrk(out, "*?<>\""))
		return -E_SMB_OBJECT_NAME_INVALID;
	for (p = out; *p; p++)
		if (*p == '\\')
			*p = '/';
	return srv_path_tidy(out, false);
}

int srv_path_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap)
{
	char stream[SRV_STREAM_XNAME_MAX];
	int kind, ret;

	ret = srv_path_stream_from_utf16(name, len, out, cap, stream, sizeof(stream), &kind);
	if (!ret && kind == SRV_STREAM_NAMED)
		return -ENOENT;
	return ret;
}

int srv_path_to_utf16(const char *path, bool lead, uint8_t *out, size_t cap)
{
	size_t off = 0;
	int n, i;

	if (lead) {
		if (cap < 2)
			return -E2BIG;
		out[0] = '\\';
		out[1] = 0;
		off = 2;
	}
	n = utf8_to_utf16le(path, out + off, cap - off);
	if (n < 0)
		return n;
	for (i = 0; i < n; i += 2)
		if (out[off + i] == '/' && out[off + i + 1] == 0)
			out[off + i] = '\\';
	return (int)off + n;
}

/* The last component of a share-relative path (for "hide dot files"). */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* ---- CREATE ---- */

#define WRITE_LIKE (FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA | \
		    FILE_WRITE_ATTRIBUTES | DELETE_ACCESS | WRITE_DAC | \
		    WRITE_OWNER | FILE_DELETE_CHILD)

static uint32_t map_access(uint32_t a, const struct srv_tree *t)
{
	uint32_t max = t->maximal_access;

	if (a & (MAXIMUM_ALLOWED | GENERIC_ALL))
		a |= max;
	if (a & GENERIC_READ)
		a |= FILE_GENERIC_READ;
	if (a & GENERIC_WRITE)
		a |= FILE_GENERIC_WRITE;
	if (a & GENERIC_EXECUTE)
		a |= FILE_GENERIC_EXECUTE;
	return a & FILE_ALL_ACCESS;
}

/* ENOENT from an open: is the parent directory missing too? */
static int not_found_err(const struct store_root *root, const char *path)
{
	char parent[SRV_PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		return -ENOENT;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	if (store_stat(root, parent, &st))
		return -E_SMB_PATH_NOT_FOUND;
	return S_ISDIR(st.st_mode) ? -ENOENT : -E_SMB_PATH_NOT_FOUND;
}

/* What a CREATE's contexts ask for ([MS-SMB2] 2.2.13.2). */
struct create_ctxs {
	bool mxac;
	bool qfid;
	uint64_t alloc;			/* AlSi: AllocationSize (0: none) */
	struct smb2_buf secd;		/* SecD: the new file's descriptor */
	struct smb2_buf eas;		/* ExtA: the new or overwritten file's EAs */
	bool posix;			/* the POSIX context, on a share with them */
	uint32_t ntmax;			/* MxAc from a kept DACL (0: none) */
	uint32_t posix_mode;		/* its mode for a new file */
	struct srv_cache_req cache;
	struct srv_durable_req durable;
};

/* The durable-handle contexts, with the checks Samba's smbd makes. */
static int durable_ctxs(const struct smb2_create_ctx *ctx, int n, struct create_ctxs *cx)
{
	const struct smb2_create_ctx *dhnq = NULL, *dh2q = NULL, *dhnc = NULL, *dh2c = NULL;
	struct srv_durable_req *d = &cx->durable;
	struct smb2_durable_v2 v2;
	int i, allowed;

	for (i = 0; i < n; i++) {
		const uint8_t *tag = ctx[i].name.p;

		if (ctx[i].name.len != 4)
			continue;
		if (!memcmp(tag, SMB2_CTX_DHNQ, 4))
			dhnq = &ctx[i];
		else if (!memcmp(tag, SMB2_CTX_DH2Q, 4))
			dh2q = &ctx[i];
		else if (!memcmp(tag, SMB2_CTX_DHNC, 4))
			dhnc = &ctx[i];
		else if (!memcmp(tag, SMB2_CTX_DH2C, 4))
			dh2c = &ctx[i];
	}
	if ((dhnc && dh2c) || (dhnc && dh2q) || (dh2c && dhnq) || (dh2q && dh2c) ||
	    (dhnq && dh2q))
		return -EINVAL;
	/*
	 * A reconnect may come with its lease (and, v1, a DHnQ), as in
	 * Samba, and with a QFid: Linux cifs.ko adds one to every CREATE,
	 * its reconnects included, and it only asks for the on-disk id.
	 * Anything else: STATUS_OBJECT_NAME_NOT_FOUND.
	 */
	if (dhnc) {
		if (dhnc->data.len != 16)
			return -EINVAL;
		allowed = 1 + !!dhnq + cx->cache.lease + cx->qfid;
		if (n != allowed)
			return -E_SMB_OBJECT_NAME_NOT_FOUND;
		smb2_dhnc_decode(dhnc->data.p, dhnc->data.len, &d->reconnect_fid);
		d->reconnect = true;
		return 0;
	}
	if (dh2c) {
		if (dh2c->data.len != 36)
			return -EINVAL;
		if (n != 1 + cx->cache.lease + cx->qfid)
			return -E_SMB_OBJECT_NAME_NOT_FOUND;
		smb2_dh2c_decode(dh2c->data.p, dh2c->data.len, &v2);
		d->reconnect_fid = v2.fid;
		memcpy(d->create_guid, v2.create_guid, 16);
		d->reconnect = true;
		d->v2 = true;
		return 0;
	}
	if (dhnq) {
		if (dhnq->data.len != 16)
			return -EINVAL;
		d->want = true;
	}
	if (dh2q) {
		if (dh2q->data.len != 32)
			return -EINVAL;
		smb2_dh2q_decode(dh2q->data.p, dh2q->data.len, &v2);
		d->want = true;
		d->v2 = true;
		d->timeout = v2.timeout;
		d->persistent = v2.flags & SMB2_DHANDLE_FLAG_PERSISTENT;
		memcpy(d->create_guid, v2.create_guid, 16);
	}
	return 0;
}

static int create_ctxs_parse(struct srv_req *req, const struct srv_share *sh,
			     const struct smb2_create_req *r, struct create_ctxs *cx)
{
	struct smb2_create_ctx ctx[SMB2_MAX_CREATE_CTX];
	int i, n, ret;

	memset(cx, 0, sizeof(*cx));
	/* as Samba: on a share with oplocks = no, a lease is not asked for either */
	cx->cache.oplock = sh->oplocks ? r->oplock : SMB2_OPLOCK_LEVEL_NONE;
	n = smb2_create_ctx_parse(r->contexts.p, r->contexts.len, ctx,
				  SMB2_MAX_CREATE_CTX);
	if (n < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const uint8_t *tag = ctx[i].name.p;

		if (ctx[i].name.len == POSIX_CTX_TAG_LEN &&
		    !memcmp(tag, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN)) {
			/* ignored where the extensions are off, as any unknown context */
			if (!srv_posix_on(req))
				continue;
			if (posix_cc_decode(ctx[i].data.p, ctx[i].data.len, &cx->posix_mode))
				return -EINVAL;
			cx->posix = true;
			continue;
		}
		if (ctx[i].name.len != 4)
			continue;
		if (!memcmp(tag, SMB2_CTX_MXAC, 4)) {
			cx->mxac = true;
		} else if (!memcmp(tag, SMB2_CTX_QFID, 4)) {
			cx->qfid = true;
		} else if (!memcmp(tag, SMB2_CTX_ALSI, 4)) {
			if (ctx[i].data.len != 8)
				return -EINVAL;
			cx->alloc = get_le64(ctx[i].data.p);
		} else if (!memcmp(tag, SMB2_CTX_EXTA, 4)) {
			ret = srv_ea_check(ctx[i].data.p, ctx[i].data.len);
			if (ret)
				return ret;
			cx->eas.p = ctx[i].data.p;
			cx->eas.len = ctx[i].data.len;
		} else if (!memcmp(tag, SMB2_CTX_SECD, 4)) {
			ret = srv_sd_check(ctx[i].data.p, ctx[i].data.len);
			if (ret)
				return ret;
			cx->secd.p = ctx[i].data.p;
			cx->secd.len = ctx[i].data.len;
		} else if (!memcmp(tag, SMB2_CTX_LEASE, 4)) {
			/* leases are SMB 2.1 and later; v2 is SMB 3 */
			if (!(req->conn->server_caps & SMB2_GLOBAL_CAP_LEASING) || !sh->oplocks)
				continue;
			if (smb2_lease_ctx_decode(ctx[i].data.p, ctx[i].data.len,
						  &cx->cache.lc))
				return -EINVAL;
			if (cx->cache.lc.version == 2 && req->conn->dialect < SMB2_DIALECT_300)
				cx->cache.lc.version = 1;
			cx->cache.lease = true;
		}
	}
	ret = durable_ctxs(ctx, n, cx);
	if (ret || cx->durable.reconnect)
		return ret;	/* a reconnect names its lease whatever the level */
	/* a lease context counts only with the lease level, and vice versa */
	if (r->oplock != SMB2_OPLOCK_LEVEL_LEASE)
		cx->cache.lease = false;
	else if (!cx->cache.lease)
		cx->cache.oplock = SMB2_OPLOCK_LEVEL_NONE;
	return 0;
}

static int create_ctxs_answer(struct srv_req *req, const struct create_ctxs *cx,
			      const struct srv_open *o, const struct stat *st,
			      uint8_t *buf, size_t cap, size_t *len)
{
	size_t prev = SIZE_MAX;
	struct wcur w;

	wcur_init(&w, buf, cap);
	if (cx->mxac) {
		uint8_t d[8];

		put_le32(d, 0);
		/* a symlink's ACL is its target's: not looked at */
		put_le32(d + 4, req->tree->maximal_access &
				(o->symlink ? ~0u : cx->ntmax ? cx->ntmax :
				 srv_sd_maximal(o->fd, st, req->tree->ident)));
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_MXAC, d, 8);
	}
	if (cx->qfid) {
		uint8_t d[32] = { 0 };

		put_le64(d, st->st_ino);
		put_le64(d + 8, st->st_dev);
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_QFID, d, 32);
	}
	if (o->lease) {
		uint8_t d[SMB2_LEASE_CTX_V2_SIZE];
		size_t n;

		pthread_mutex_lock(&o->file->lock);
		n = srv_lease_rsp(o, d);
		pthread_mutex_unlock(&o->file->lock);
		smb2_create_ctx_add(&w, &prev, SMB2_CTX_LEASE, d, (uint32_t)n);
	}
	if (cx->posix) {
		struct posix_info pi;
		uint8_t d[12 + 2 * (8 + 4 * SID_MAX_SUB)];
		struct wcur pw;

		srv_posix_info(st, &pi);
		wcur_init(&pw, d, sizeof(d));
		posix_cc_rsp_encode(&pw, &pi);
		smb2_create_ctx_add_name(&w, &prev, POSIX_CTX_TAG, POSIX_CTX_TAG_LEN, d,
					 (uint32_t)pw.off);
	}
	if (o->durable && cx->durable.want && !cx->durable.reconnect) {
		uint8_t d[8] = { 0 };

		if (o->durable_v2)
			smb2_dh2q_rsp_encode(d, o->durable_timeout,
					     o->persistent_handle ? SMB2_DHANDLE_FLAG_PERSISTENT : 0);
		smb2_create_ctx_add(&w, &prev, o->durable_v2 ? SMB2_CTX_DH2Q : SMB2_CTX_DHNQ,
				    d, 8);
	}
	if (w.err)
		return -ENOMEM;
	*len = w.off;
	return 0;
}

#define DATA_READ (FILE_READ_DATA | FILE_EXECUTE)
#define DATA_WRITE (FILE_WRITE_DATA | FILE_APPEND_DATA)

/*
 * Open (or create) path as the thread's identity with the access the
 * request needs. What MAXIMUM_ALLOWED alone asked for is dropped from
 * *access when the kernel refuses it: write first, then read, down to an
 * attributes-only O_PATH descriptor (*path_only), as a stat of a file
 * one may not read still works. What the client asked for by name is
 * never dropped.
 */
static int open_as_asked(struct srv_share *sh, const char *path,
			 const struct smb2_create_req *r, bool exists, bool is_dir,
			 bool truncate, uint32_t *access, int *fd, bool *path_only)
{
	uint32_t asked = r->desired_access;
	bool named_write = truncate || !exists ||
			   asked & (DATA_WRITE | GENERIC_WRITE | GENERIC_ALL);
	bool named_read = asked & (DATA_READ | GENERIC_READ | GENERIC_EXECUTE | GENERIC_ALL);
	int flags, ret;

	*path_only = false;
	if (is_dir) {
		ret = store_open(&sh->root, path, O_RDONLY | O_DIRECTORY, 0, fd);
		if ((ret == -EACCES || ret == -EPERM) && !named_read) {
			*access &= ~DATA_READ;
			*path_only = true;
			ret = store_open(&sh->root, path, O_PATH | O_DIRECTORY, 0, fd);
		}
		return ret;
	}
	flags = O_NONBLOCK | O_NOCTTY;
	if (!exists)
		flags |= O_CREAT | O_EXCL;
	/* truncation waits for the file table: a DAX mapping may exist */
	if (*access & DATA_WRITE || truncate) {
		ret = store_open(&sh->root, path, flags | O_RDWR, 0644, fd);
		/* a right to write but not to read (the POSIX ACL of a DACL) */
		if ((ret == -EACCES || ret == -EPERM) && exists && !(*access & DATA_READ))
			ret = store_open(&sh->root, path, flags | O_WRONLY, 0, fd);
		if ((ret != -EACCES && ret != -EPERM) || named_write)
			return ret;
		*access &= ~(DATA_WRITE | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA);
	}
	ret = store_open(&sh->root, path, flags | O_RDONLY, 0644, fd);
	if ((ret != -EACCES && ret != -EPERM) || !exists || named_read ||
	    *access & DATA_WRITE)
		return ret;
	*access &= ~DATA_READ;
	*path_only = true;
	return store_open(&sh->root, path, O_PATH, 0, fd);
}

/* The CREATE response for open o. */
static int create_answer(struct srv_req *req, struct srv_open *o, const struct create_ctxs *cx,
			 uint32_t action)
{
	struct smb2_create_rsp rsp = { 0 };
	char path[SRV_PATH_MAX];
	uint8_t ctxbuf[512];
	struct fscc_info fi;
	struct srv_attr a;
	size_t ctxlen;
	int ret;

	ret = srv_file_path(o->file, path, sizeof(path));
	if (ret)
		return ret;
	ret = srv_attr_get(o->share, o->fd, NULL, base_name(path), req->tree->ident, &a);
	if (ret)
		return ret;
	srv_wt_attr(o, &a.st);
	ret = create_ctxs_answer(req, cx, o, &a.st, ctxbuf, sizeof(ctxbuf), &ctxlen);
	if (ret)
		return ret;
	srv_attr_to_info(&a, o->initial_alloc, &fi);
	if (o->file->stream)
		srv_stream_info(o, &fi);
	srv_posix_attrs(&a.st, &fi);
	rsp.oplock = srv_oplock_level(o);
	rsp.action = action;
	rsp.t = fi.t;
	rsp.allocation_size = fi.allocation_size;
	rsp.end_of_file = fi.end_of_file;
	rsp.attributes = fi.attributes;
	rsp.fid.persistent = o->persistent;
	rsp.fid.volatile_id = o->volatile_id;
	rsp.contexts.p = ctxbuf;
	rsp.contexts.len = (uint32_t)ctxlen;
	req->chain->have_fid = true;
	req->chain->fid = rsp.fid;
	if (srv_req_room(req, 96 + ctxlen))
		return -ENOMEM;
	smb2_create_rsp_encode(&req->w, &rsp);
	return 0;
}

/* DHnC / DH2C: a durable open comes back to this session. */
static int create_reconnect(struct srv_req *req, const struct create_ctxs *cx,
			    const char *path)
{
	struct srv_open *o;
	int ret;

	if (req->tree->share->ipc)
		return -E_SMB_OBJECT_NAME_NOT_FOUND;
	ret = srv_durable_reconnect(req, &cx->durable, &cx->cache, path, &o);
	if (ret)
		return ret;
	ret = srv_req_hold(req, o);
	if (ret)
		return ret;
	return create_answer(req, o, cx, FILE_OPENED);
}

/*
 * The new open joins its file: delete-pending, share modes, the breaks
 * of the others' oplocks and leases, and what it is granted. It may
 * have to wait for breaks (SRV_PENDING: the request runs again later).
 */
static int create_join_file(struct srv_req *req, struct srv_open *o,
			    const struct create_ctxs *cx, uint32_t disposition)
{
	struct srv *srv = req->conn->srv;
	struct srv_file *f = o->file;
	bool first = !(req->async && req->async->resumed);
	struct list_head purge;
	struct srv_breaks b;
	int ret;

	if (cx->cache.lease) {
		ret = srv_lease_check_key(srv, f, o->client_guid, &cx->cache.lc);
		if (ret)
			return ret;
	}
	srv_breaks_init(&b);
	list_init(&purge);
	pthread_mutex_lock(&f->lock);
	if (f->delete_pending) {
		ret = -E_SMB_DELETE_PENDING;
	} else {
		ret = srv_oplock_open_locked(srv, f, o, &cx->cache, disposition, first,
					     &b, &purge);
		if (ret == SRV_PENDING && srv_async_wait(req, f, SRV_WAIT_BREAK))
			ret = -ENOMEM;
	}
	if (!ret) {
		list_add_tail(&o->file_link, &f->opens);
		o->on_file = true;
	}
	pthread_mutex_unlock(&f->lock);
	srv_breaks_send(srv, &b);
	srv_durable_purge(srv, &purge);
	return ret;
}

/*
 * What an existing file's DOS attributes refuse, as Samba's open does:
 * an overwrite that would drop HIDDEN or SYSTEM (as kept in the xattr),
 * writing a READONLY file (what only MAXIMUM_ALLOWED asked for is
 * dropped, as Windows does), deleting it on close.
 */
static int create_attr_checks(struct srv_share *sh, int fd, const char *path,
			      const struct smb2_create_req *r, bool truncate, uint32_t *access,
			      const struct srv_ident *id)
{
	const uint32_t keep = FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM;
	struct srv_attr a;
	int ret;

	ret = srv_attr_get(sh, fd, NULL, base_name(path), id, &a);
	if (ret)
		return ret;
	if ((r->disposition == FILE_OVERWRITE || r->disposition == FILE_OVERWRITE_IF) &&
	    a.stored & keep & ~r->file_attributes)
		return -EACCES;
	if (!(a.attrib & FILE_ATTRIBUTE_READONLY))
		return 0;
	if (truncate || r->desired_access & (DATA_WRITE | GENERIC_WRITE | GENERIC_ALL))
		return -EACCES;
	if (r->options & FILE_DELETE_ON_CLOSE && !sh->dos.delete_readonly)
		return -E_SMB_CANNOT_DELETE;
	*access &= ~DATA_WRITE;
	return 0;
}

/*
 * The access of an open of an existing file with a kept DACL, decided by
 * it as Samba decides by the NT ACL (smbd_check_access_rights_fsp, an
 * overwrite needing FILE_WRITE_DATA):
 * FILE_READ_ATTRIBUTES is always granted, DELETE also by the parent's
 * FILE_DELETE_CHILD, MAXIMUM_ALLOWED (and MxAc, *ntmax) is what the DACL
 * grants. 1 with *access set (the kernel still judges the open), 0 when there is no
 * kept DACL (the POSIX ACL decides), or the refusal.
 */
static int create_nt_access(struct srv_share *sh, const char *path,
			    const struct smb2_create_req *r, bool truncate, uint32_t *access,
			    uint32_t *ntmax, const struct srv_ident *id)
{
	uint32_t want = secdesc_map_generic(r->desired_access & ~MAXIMUM_ALLOWED);
	uint32_t max, refused;
	int fd, ret, del = -EACCES;

	ret = store_open(&sh->root, path, O_PATH, 0, &fd);
	if (ret)
		return ret;
	ret = srv_sd_access(fd, id, MAXIMUM_ALLOWED, &max);
	if (ret != 1)
		goto out;
	if (!(max & DELETE_ACCESS))
		del = srv_sd_parent_access(sh, path, FILE_DELETE_CHILD, id);
	if (del == 0) {	/* no kept DACL on the parent: may the user unlink? */
		struct stat st;

		del = !fstat(fd, &st) && !store_may_delete(&sh->root, path, &st) ? 1 : -EACCES;
	}
	*ntmax = max | FILE_READ_ATTRIBUTES | (del == 1 ? DELETE_ACCESS : 0);
	if (r->desired_access & MAXIMUM_ALLOWED)
		want |= *ntmax;
	/* an overwrite writes, whatever was asked */
	ret = srv_sd_access(fd, id, (want & ~FILE_READ_ATTRIBUTES) |
				    (truncate ? FILE_WRITE_DATA : 0), &refused);
	if (ret == -EACCES && refused == DELETE_ACCESS && del == 1)
		ret = 1;
	if (ret == 1)
		*access = want & (FILE_ALL_ACCESS | ACCESS_SYSTEM_SECURITY);
	if (ret == -EPERM)
		ret = -E_SMB_PRIVILEGE_NOT_HELD;
out:
	close(fd);
	return ret;
}

/* A new file inherits its parent's kept DACL (failures are logged only). */
static void create_inherit(struct srv_share *sh, const char *path, int fd,
			   const struct srv_ident *id)
{
	int pfd, ret;

	ret = srv_share_open_parent(sh, path, &pfd);
	if (!ret) {
		ret = srv_sd_inherit(pfd, fd, id);
		close(pfd);
	}
	if (ret)
		pr_debug("share [%s]: %s: no inherited DACL: %s", sh->name, path,
			 strerror(-ret));
}

/*
 * A POSIX create's mode, set exactly (the client applied its umask), but
 * as mkdir(2): a directory made in a set-group-ID directory keeps the bit
 * the kernel gave it, whatever the mode asked (xfstests generic/314).
 * Unchanged bits are not set again (a chmod by a user outside the file's
 * group would drop that bit).
 */
static void create_posix_mode(struct srv_share *sh, const char *path, int fd, bool is_dir,
			      mode_t mode)
{
	struct stat st;

	if (fstat(fd, &st))
		st.st_mode = 0;
	else if (is_dir)
		mode |= st.st_mode & S_ISGID;
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode))
		pr_debug("share [%s]: %s: mode %o not set: %s", sh->name, path, mode,
			 strerror(errno));
}

/*
 * A file made or overwritten takes the CREATE's FileAttributes, ARCHIVE
 * added to a file's (as Samba; failures do not fail the create there).
 */
static void create_set_attrs(struct srv_share *sh, struct srv_open *o, const char *path,
			     uint32_t attrib, const struct srv_ident *id)
{
	struct srv_attr a;
	int ret;

	ret = srv_attr_get(sh, o->fd, NULL, base_name(path), id, &a);
	if (!ret) {
		attrib = o->is_dir ? attrib | FILE_ATTRIBUTE_DIRECTORY
				   : (attrib & ~FILE_ATTRIBUTE_DIRECTORY) | FILE_ATTRIBUTE_ARCHIVE;
		ret = srv_attr_set(sh, o->fd, &a, attrib, 0);
	}
	if (ret)
		pr_debug("share [%s]: %s: attributes not set: %s", sh->name, path,
			 strerror(-ret));
}

/* Room for an AllocationSize asked at create (Samba checks, allocates not). */
static int create_alloc_room(struct srv_share *sh, uint64_t alloc)
{
	struct statvfs sv;
	int ret;

	ret = store_statvfs(&sh->root, &sv);
	if (ret)
		return ret;
	return alloc > (uint64_t)sv.f_bavail * sv.f_frsize ? -ENOSPC : 0;
}

/* A new open of fd on tree t, as CREATE asked for it; NULL: no memory. */
static struct srv_open *open_new(struct srv_req *req, struct srv_tree *t, int fd,
				 const struct smb2_create_req *r, uint32_t access, bool truncate)
{
	struct srv_open *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	srv_open_store_init(o, fd);
	o->srv = req->conn->srv;
	o->share = t->share;
	o->ident = srv_ident_get(t->ident);
	o->access = access;
	o->share_access = r->share_access;
	/* an overwrite writes: sharing and breaks see it so ([MS-FSA] 2.1.5.1.2) */
	o->sharing = access | (truncate ? FILE_WRITE_DATA : 0);
	o->write_through = r->options & FILE_WRITE_THROUGH;
	o->delete_on_close = r->options & FILE_DELETE_ON_CLOSE;
	memcpy(o->client_guid, req->conn->client_guid, sizeof(o->client_guid));
	memset(o->lock_seq, 0xFF, sizeof(o->lock_seq));
	o->jslot = -1;
	return o;
}

/* A named pipe on IPC$: an open with a DCE/RPC endpoint behind it. */
/*
 * An open with no file behind it (a pipe, the quota fake file), answered
 * with rsp's attributes, times and sizes; o is the caller's, freed on error.
 */
static int create_fileless(struct srv_req *req, const struct smb2_create_req *r,
			   struct srv_open *o, uint32_t access, struct smb2_create_rsp *rsp)
{
	int ret;

	srv_open_store_init(o, -1);
	o->share = req->tree->share;
	o->access = access;
	o->share_access = r->share_access;
	o->jslot = -1;
	memset(o->lock_seq, 0xFF, sizeof(o->lock_seq));
	memcpy(o->client_guid, req->conn->client_guid, sizeof(o->client_guid));
	snprintf(o->owner, sizeof(o->owner), "%s", req->sess->user);
	ret = srv_open_insert(req->sess, req->tree, o);
	if (ret) {
		srv_pipe_free(o->pipe);
		free(o);
		return ret;
	}
	ret = srv_req_hold(req, srv_open_ref(o));
	if (ret)
		return ret;
	rsp->fid.persistent = o->persistent;
	rsp->fid.volatile_id = o->volatile_id;
	req->chain->have_fid = true;
	req->chain->fid = rsp->fid;
	if (srv_req_room(req, 96))
		return -ENOMEM;
	smb2_create_rsp_encode(&req->w, rsp);
	return 0;
}

static int create_pipe(struct srv_req *req, const struct smb2_create_req *r)
{
	struct smb2_create_rsp rsp = {
		.action = FILE_OPENED,
		.allocation_size = 4096,	/* as Samba answers for a pipe */
		.attributes = FILE_ATTRIBUTE_NORMAL,
	};
	struct srv_open *o;
	char name[256];
	int ret;

	if (utf16le_to_utf8(r->name.p, r->name.len, name, sizeof(name)) < 0)
		return -E_SMB_OBJECT_NAME_NOT_FOUND;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->kind = SRV_OPEN_PIPE;
	ret = srv_pipe_open(req->conn->srv, name, &o->pipe);
	if (ret) {
		free(o);
		return ret;
	}
	return create_fileless(req, r, o, r->desired_access, &rsp);
}

#define QUOTA_FAKE_NAME "$Extend\\$Quota:$Q:$INDEX_ALLOCATION"
#define QUOTA_ACCESS (FILE_READ_DATA | FILE_READ_EA | FILE_READ_ATTRIBUTES | \
		      READ_CONTROL | SYNCHRONIZE)

/* The quota fake file's name, in any case (not for POSIX opens). */
static bool is_quota_fake(const struct smb2_create_req *r)
{
	char name[64];

	return utf16le_to_utf8(r->name.p, r->name.len, name, sizeof(name)) > 0 &&
	       !strcasecmp(name, QUOTA_FAKE_NAME);
}

/*
 * The quota fake file ([MS-FSCC] 2.1.5: NTFS's $Extend\$Quota index): a
 * directory opened for reading, with Windows' attributes and no times,
 * that only takes QUERY_INFO of the QUOTA type and CLOSE (no quotas:
 * an empty answer). Any user may open it (Samba: root only).
 */
static int create_quota(struct srv_req *req, const struct smb2_create_req *r, uint32_t access)
{
	struct smb2_create_rsp rsp = {
		.action = FILE_OPENED,
		.attributes = FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM |
			      FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_ARCHIVE,
	};
	struct srv_open *o;

	if (r->disposition == FILE_CREATE)
		return -EEXIST;
	if (r->disposition != FILE_OPEN && r->disposition != FILE_OPEN_IF)
		return -EACCES;
	if (r->options & FILE_NON_DIRECTORY_FILE)
		return -EISDIR;
	if (r->desired_access & MAXIMUM_ALLOWED)
		access &= QUOTA_ACCESS;
	if (access & ~QUOTA_ACCESS || r->options & FILE_DELETE_ON_CLOSE)
		return -EACCES;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->kind = SRV_OPEN_QUOTA;
	o->is_dir = true;
	return create_fileless(req, r, o, access, &rsp);
}

/* The base file of a stream, opened (made if the disposition says so). */
static int stream_base_open(struct srv_share *sh, const char *path,
			    const struct smb2_create_req *r, uint32_t *access,
			    bool *made, struct stat *st, int *fd)
{
	int ret, flags = O_NONBLOCK | O_NOCTTY;

	*made = false;
	ret = store_stat(&sh->root, path, st);
	if (ret == -ENOENT) {
		if (r->disposition == FILE_OPEN || r->disposition == FILE_OVERWRITE)
			return not_found_err(&sh->root, path);
		ret = store_open(&sh->root, path, flags | O_CREAT | O_EXCL | O_RDWR, 0644, fd);
		if (ret == -ENOENT)
			return not_found_err(&sh->root, path);
		*made = !ret;
		return ret ? ret : fstat(*fd, st) ? -errno : 0;
	}
	if (ret)
		return ret;
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
		return -EACCES;
	if (S_ISDIR(st->st_mode))
		return store_open(&sh->root, path, O_RDONLY | O_DIRECTORY, 0, fd);
	if (*access & DATA_WRITE) {
		ret = store_open(&sh->root, path, flags | O_RDWR, 0, fd);
		if ((ret != -EACCES && ret != -EPERM) ||
		    r->desired_access & (DATA_WRITE | GENERIC_WRITE | GENERIC_ALL))
			return ret;
		*access &= ~(DATA_WRITE | FILE_WRITE_ATTRIBUTES | FILE_WRITE_EA);
	}
	return store_open(&sh->root, path, flags | O_RDONLY, 0, fd);
}

/*
 * CREATE of "path:stream": the base file (made first if need be) is
 * opened, the stream's xattr made, overwritten or opened, and the open
 * joins the stream's own srv_file. Its data goes through srv_stream_ops.
 */
static int create_stream(struct srv_req *req, const struct smb2_create_req *r,
			 struct create_ctxs *cx, const char *path, const char *sname,
			 uint32_t access)
{
	struct srv_tree *t = req->tree;
	struct srv_share *sh = t->share;
	char xname[SRV_STREAM_XNAME_MAX];
	bool made, truncate = false;
	uint32_t action;
	struct srv_open *o;
	struct stat st;
	int ret, fd = -1;

	if (r->options & FILE_DIRECTORY_FILE)
		return -ENOTDIR;		/* a stream is never a directory */
	ret = stream_base_open(sh, path, r, &access, &made, &st, &fd);
	if (ret)
		return ret;
	/* a stream is judged by its file's kept DACL, as Samba judges it */
	if (!made) {
		ret = create_nt_access(sh, path, r, false, &access, &cx->ntmax, t->ident);
		if (ret < 0)
			goto out_close_fd;
	}
	ret = srv_stream_lookup(fd, sname, xname, sizeof(xname));
	if (ret < 0)
		goto out_close_fd;
	if (ret) {
		if (r->disposition == FILE_CREATE) {
			ret = -EEXIST;
			goto out_close_fd;
		}
		truncate = r->disposition == FILE_OVERWRITE ||
			   r->disposition == FILE_OVERWRITE_IF ||
			   r->disposition == FILE_SUPERSEDE;
		action = r->disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED :
			 truncate ? FILE_OVERWRITTEN : FILE_OPENED;
	} else {
		if (r->disposition == FILE_OPEN || r->disposition == FILE_OVERWRITE) {
			ret = -ENOENT;
			goto out_close_fd;
		}
		action = FILE_CREATED;
	}
	if (action != FILE_OPENED && t->read_only) {
		ret = -EACCES;
		goto out_close_fd;
	}
	o = open_new(req, t, fd, r, access, truncate);
	if (!o) {
		ret = -ENOMEM;
		goto out_close_fd;
	}
	o->file = srv_file_get_stream(req->conn->srv, sh, st.st_dev, st.st_ino, path,
				      S_ISDIR(st.st_mode), xname);
	if (!o->file) {
		ret = -ENOMEM;
		goto out_free_open;
	}
	o->sf.ops = &srv_stream_ops;
	if (srv_file_delete_pending(o->file->base)) {
		ret = -E_SMB_DELETE_PENDING;
		goto out_put_file;
	}
	cx->cache.existed = action != FILE_CREATED;
	ret = create_join_file(req, o, cx, r->disposition);
	if (ret)
		goto out_put_file;
	if (action == FILE_CREATED || truncate) {
		/* an empty value, as Samba makes it; a racing creator loses */
		ret = srv_stream_make(fd, xname, action == FILE_CREATED);
		if (ret == -ENOSPC || ret == -E2BIG)
			ret = -ENOSPC;
		if (ret)
			goto out_leave_file;
		o->modified = true;
	}
	if (made)
		create_set_attrs(sh, o, path, r->file_attributes, t->ident);
	snprintf(o->owner, sizeof(o->owner), "%s", req->sess->user);
	ret = srv_open_insert(req->sess, t, o);
	if (ret)
		goto out_leave_file;
	ret = srv_req_hold(req, srv_open_ref(o));
	if (ret)
		return ret;
	ret = create_answer(req, o, cx, action);
	if (ret) {
		srv_open_close(o);
		return ret;
	}
	if (made)
		srv_dir_lease_break(req->conn->srv, sh, path, o);
	return 0;
out_leave_file:
	srv_open_leave_file(o);
out_put_file:
	srv_file_put(o->file);
out_free_open:
	srv_ident_put(&o->ident);
	free(o);
out_close_fd:
	if (made)
		store_unlink(&sh->root, path, false);
	close(fd);
	return ret;
}

/*
 * A symlink, FIFO, socket or device itself: an attributes-only O_PATH
 * open of the node (its data is never served), no lease; what may
 * follow is a query, FSCTL_GET_REPARSE_POINT, a rename or a delete.
 */
static int create_node(struct srv_req *req, const struct smb2_create_req *r,
		       struct create_ctxs *cx, const char *path, uint32_t access,
		       const struct stat *lst)
{
	struct srv_tree *t = req->tree;
	struct srv_share *sh = t->share;
	struct srv_open *o;
	struct stat st;
	int ret, fd;

	if (r->disposition == FILE_CREATE)
		return -EEXIST;
	if (r->disposition != FILE_OPEN && r->disposition != FILE_OPEN_IF)
		return -EACCES;
	if (r->options & FILE_DIRECTORY_FILE)
		return -ENOTDIR;
	if (access & DELETE_ACCESS && store_may_delete(&sh->root, path, lst)) {
		if (r->desired_access & (DELETE_ACCESS | GENERIC_ALL))
			return -EACCES;
		access &= ~DELETE_ACCESS;
	}
	access &= ~(DATA_READ | DATA_WRITE);
	cx->cache.oplock = SMB2_OPLOCK_LEVEL_NONE;
	cx->cache.lease = false;
	cx->durable.want = false;
	ret = store_open(&sh->root, path, O_PATH | O_NOFOLLOW, 0, &fd);
	if (ret)
		return ret;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close_fd;
	}
	o = open_new(req, t, fd, r, access, false);
	if (!o) {
		ret = -ENOMEM;
		goto out_close_fd;
	}
	o->path_only = true;
	o->posix = cx->posix;
	o->symlink = S_ISLNK(st.st_mode);
	o->file = srv_file_get(req->conn->srv, sh, st.st_dev, st.st_ino, path, false);
	if (!o->file) {
		ret = -ENOMEM;
		goto out_free_open;
	}
	cx->cache.existed = true;
	ret = create_join_file(req, o, cx, r->disposition);
	if (ret)
		goto out_put_file;
	snprintf(o->owner, sizeof(o->owner), "%s", req->sess->user);
	ret = srv_open_insert(req->sess, t, o);
	if (ret)
		goto out_leave_file;
	ret = srv_req_hold(req, srv_open_ref(o));
	if (ret)
		return ret;
	ret = create_answer(req, o, cx, FILE_OPENED);
	if (ret)
		srv_open_close(o);
	return ret;
out_leave_file:
	srv_open_leave_file(o);
out_put_file:
	srv_file_put(o->file);
out_free_open:
	srv_ident_put(&o->ident);
	free(o);
out_close_fd:
	close(fd);
	return ret;
}

int smb_create(struct srv_req *req)
{
	struct srv_tree *t = req->tree;
	struct srv_share *sh = t->share;
	struct smb2_create_req r;
	struct create_ctxs cx;
	char path[SRV_PATH_MAX], sname[SRV_STREAM_XNAME_MAX];
	struct srv_open *o;
	struct stat st;
	uint32_t access, action;
	bool exists, is_dir, truncate = false, path_only = false;
	int ret, fd = -1, skind;

	ret = smb2_create_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	if (sh->ipc)
		return create_pipe(req, &r);
	ret = create_ctxs_parse(req, sh, &r, &cx);
	if (ret)
		return ret;
	/* a reconnect looks at the FileId, the lease and the name only */
	if (cx.durable.reconnect) {
		ret = srv_path_from_utf16(r.name.p, r.name.len, path, sizeof(path));
		return create_reconnect(req, &cx, ret ? "" : path);
	}
	if (r.impersonation > SMB2_IMPERSONATION_MAX)
		return -E_SMB_BAD_IMPERSONATION;
	if (r.disposition > FILE_OVERWRITE_IF ||
	    (r.options & FILE_DIRECTORY_FILE && r.options & FILE_NON_DIRECTORY_FILE))
		return -EINVAL;
	if (r.options & FILE_OPEN_BY_FILE_ID)
		return -EOPNOTSUPP;
	/* no temporary directory (Samba: an IFS kit test) */
	if (r.options & FILE_DIRECTORY_FILE && r.file_attributes & FILE_ATTRIBUTE_TEMPORARY)
		return -EINVAL;
	/* [MS-SMB2] 3.3.5.9: a name starting with a separator is refused */
	if (r.name.len >= 2 && r.name.p[0] == '\\' && !r.name.p[1])
		return -EINVAL;
	if (!cx.posix && is_quota_fake(&r))
		return create_quota(req, &r, map_access(r.desired_access, t));
	if (cx.posix) {
		skind = SRV_STREAM_NONE;
		ret = srv_path_posix_from_utf16(r.name.p, r.name.len, path, sizeof(path));
	} else {
		ret = srv_path_stream_from_utf16(r.name.p, r.name.len, path, sizeof(path),
						 sname, sizeof(sname), &skind);
	}
	if (!ret && !cx.posix)
		ret = srv_name_resolve(sh, path, sizeof(path));
	if (ret)
		return ret;
	if (skind == SRV_STREAM_NAMED && (!sh->streams || sh->devdax))
		return -E_SMB_OBJECT_NAME_INVALID;	/* as Samba without streams_xattr */
	if (skind == SRV_STREAM_DEFAULT && r.options & FILE_DIRECTORY_FILE)
		return -ENOTDIR;
	access = map_access(r.desired_access, t);
	/* the SACL: SeSecurityPrivilege, and never alone over SMB2 (as Windows) */
	if (r.desired_access & ACCESS_SYSTEM_SECURITY) {
		if (!srv_sd_privileged(t->ident))
			return -E_SMB_PRIVILEGE_NOT_HELD;
		if (r.desired_access == ACCESS_SYSTEM_SECURITY)
			return -EACCES;
		access |= ACCESS_SYSTEM_SECURITY;
	}
	if (sh->devdax) {
		/* a device share: one fixed file, no names made or removed */
		access &= ~DELETE_ACCESS;
		if (r.options & FILE_DELETE_ON_CLOSE ||
		    (r.disposition != FILE_OPEN && r.disposition != FILE_OPEN_IF))
			return -EACCES;
	}
	if (r.options & FILE_DELETE_ON_CLOSE && !(access & DELETE_ACCESS))
		return -EINVAL;
	if (t->read_only) {
		if (r.desired_access & (MAXIMUM_ALLOWED | GENERIC_ALL))
			access &= ~WRITE_LIKE;
		if (access & WRITE_LIKE ||
		    (r.disposition != FILE_OPEN && r.disposition != FILE_OPEN_IF))
			return -EACCES;
	}
	if (skind == SRV_STREAM_NAMED)
		return create_stream(req, &r, &cx, path, sname, access);
	/*
	 * A symlink is opened itself with FILE_OPEN_REPARSE_POINT; a POSIX
	 * open stops on it (a plain one follows it beneath the share). A
	 * POSIX open of a FIFO, socket or device opens the node itself.
	 */
	if (*path && !sh->devdax && !store_lstat(&sh->root, path, &st) &&
	    !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		bool lnk = S_ISLNK(st.st_mode);

		if (r.disposition == FILE_CREATE)
			return -EEXIST;
		if (lnk && !(r.options & FILE_OPEN_REPARSE_POINT) && cx.posix)
			return srv_posix_stopped_on_symlink(req, path);
		if ((lnk && r.options & FILE_OPEN_REPARSE_POINT) || (!lnk && cx.posix))
			return create_node(req, &r, &cx, path, access, &st);
	}

	ret = store_stat(&sh->root, path, &st);
	if (ret && ret != -ENOENT)
		return ret;
	exists = !ret;
	is_dir = exists && S_ISDIR(st.st_mode);
	/* a directory has named streams but no data stream */
	if (is_dir && skind == SRV_STREAM_DEFAULT)
		return -E_SMB_FILE_IS_A_DIRECTORY;
	if (exists) {
		if (r.disposition == FILE_CREATE)
			return -EEXIST;
		if (is_dir && r.options & FILE_NON_DIRECTORY_FILE)
			return -EISDIR;
		if (!is_dir && r.options & FILE_DIRECTORY_FILE)
			return -ENOTDIR;
		if (r.disposition == FILE_OVERWRITE ||
		    r.disposition == FILE_OVERWRITE_IF ||
		    r.disposition == FILE_SUPERSEDE) {
			if (is_dir)
				return -EINVAL;
			if (t->read_only)
				return -EACCES;
			truncate = true;
		}
		action = r.disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED :
			 truncate ? FILE_OVERWRITTEN : FILE_OPENED;
	} else {
		if (r.disposition == FILE_OPEN || r.disposition == FILE_OVERWRITE)
			return not_found_err(&sh->root, path);
		if (t->read_only || sh->devdax)
			return -EACCES;
		if (!*path)
			return -EINVAL;
		/* a new READONLY file may not be deleted on close: not made */
		if (!(r.options & FILE_DIRECTORY_FILE) && r.options & FILE_DELETE_ON_CLOSE &&
		    r.file_attributes & FILE_ATTRIBUTE_READONLY && !sh->dos.delete_readonly)
			return -E_SMB_CANNOT_DELETE;
		/* the parent's kept DACL may refuse a new name (as Samba) */
		ret = srv_sd_parent_access(sh, path, r.options & FILE_DIRECTORY_FILE ?
					      FILE_ADD_SUBDIRECTORY : FILE_ADD_FILE, t->ident);
		if (ret == -EACCES || ret == -EPERM)
			return -EACCES;
		action = FILE_CREATED;
		if (r.options & FILE_DIRECTORY_FILE) {
			ret = store_mkdir(&sh->root, path, 0755);
			if (ret == -EEXIST && r.disposition == FILE_OPEN_IF) {
				/* lost a race with another creator: open it */
				ret = store_stat(&sh->root, path, &st);
				if (!ret && !S_ISDIR(st.st_mode))
					ret = -ENOTDIR;
				exists = !ret;
				action = FILE_OPENED;
			}
			if (ret == -ENOENT)
				return not_found_err(&sh->root, path);
			if (ret)
				return ret;
			is_dir = true;
		}
	}

	if (cx.alloc && (!exists || truncate) && !(r.options & FILE_DIRECTORY_FILE)) {
		ret = create_alloc_room(sh, cx.alloc);
		if (ret)
			return ret;
	}
	if (exists) {
		ret = create_nt_access(sh, path, &r, truncate, &access, &cx.ntmax, t->ident);
		if (ret < 0)
			return ret;
		if (ret && t->read_only)
			access &= ~WRITE_LIKE;	/* what was asked by name was refused above */
	}
	if (exists && access & DELETE_ACCESS) {
		/* as the kernel would judge an unlink by this user, now */
		ret = store_may_delete(&sh->root, path, &st);
		if (ret && r.desired_access & (DELETE_ACCESS | GENERIC_ALL))
			return ret;
		if (ret)
			access &= ~DELETE_ACCESS;	/* only MAXIMUM_ALLOWED asked for it */
	}
	ret = open_as_asked(sh, path, &r, exists, is_dir, truncate, &access, &fd,
			    &path_only);
	if (ret == -EEXIST && !is_dir && r.disposition == FILE_OPEN_IF) {
		/* lost a race with another creator: open it instead */
		action = FILE_OPENED;
		ret = open_as_asked(sh, path, &r, true, false, false, &access, &fd,
				    &path_only);
	}
	if (ret == -ENOENT)
		return not_found_err(&sh->root, path);
	if (ret)
		return ret;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close_fd;
	}
	if (!is_dir && !S_ISREG(st.st_mode)) {
		ret = -EACCES;		/* devices, fifos, sockets are not served */
		goto out_close_fd;
	}
	if (action != FILE_CREATED && !is_dir &&
	    (access & DATA_WRITE || truncate || r.options & FILE_DELETE_ON_CLOSE)) {
		ret = create_attr_checks(sh, fd, path, &r, truncate, &access, t->ident);
		if (ret)
			goto out_close_fd;
	}
	/* O_NONBLOCK only guarded the open; io_uring would honour it */
	if (!is_dir && !path_only && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		ret = -errno;
		goto out_close_fd;
	}
	o = open_new(req, t, fd, &r, access, truncate);
	if (!o) {
		ret = -ENOMEM;
		goto out_close_fd;
	}
	o->is_dir = is_dir;
	o->path_only = path_only;
	o->posix = cx.posix;
	o->file = srv_file_get(req->conn->srv, sh, st.st_dev, st.st_ino, path, is_dir);
	if (!o->file) {
		ret = -ENOMEM;
		goto out_free_open;
	}
	/* a stream open without FILE_SHARE_DELETE keeps its file from deletion */
	if (access & DELETE_ACCESS && srv_file_streams_refuse_delete(o->file)) {
		ret = -E_SMB_SHARING_VIOLATION;
		goto out_put_file;
	}
	cx.cache.existed = action != FILE_CREATED;
	ret = create_join_file(req, o, &cx, r.disposition);
	if (ret)
		goto out_put_file;
	ret = srv_open_bind_store(o);
	if (ret)
		goto out_leave_file;
	if (truncate) {
		ret = srv_ftruncate(o, 0);
		if (ret)
			goto out_leave_file;
		if (fstat(fd, &st)) {
			ret = -errno;
			goto out_leave_file;
		}
	}
	if (action != FILE_OPENED)
		create_set_attrs(sh, o, path, r.file_attributes, t->ident);
	if (action != FILE_OPENED && cx.eas.len) {
		/* as Samba: EAs that cannot be set undo the create */
		ret = srv_ea_set(fd, cx.eas.p, cx.eas.len);
		if (ret) {
			if (action == FILE_CREATED)
				store_unlink(&sh->root, path, is_dir);
			goto out_leave_file;
		}
	}
	if (action == FILE_CREATED && !cx.secd.len)
		create_inherit(sh, path, fd, t->ident);
	/* a POSIX create's mode, exactly: the client applied its umask */
	if (action == FILE_CREATED && cx.posix)
		create_posix_mode(sh, path, fd, is_dir, cx.posix_mode);
	/* last: the descriptor may take away the right to set attributes */
	if (action == FILE_CREATED && cx.secd.len) {
		/* as Samba: a descriptor that cannot be set undoes the create */
		ret = srv_sd_create(fd, cx.secd.p, cx.secd.len, t->ident);
		if (ret) {
			store_unlink(&sh->root, path, is_dir);
			goto out_leave_file;
		}
	}
	/* as Samba: what it asked for, reported while it is more than the file has */
	if (action != FILE_OPENED && !is_dir)
		o->initial_alloc = cx.alloc;
	snprintf(o->owner, sizeof(o->owner), "%s", req->sess->user);
	ret = srv_open_insert(req->sess, t, o);
	if (ret)
		goto out_leave_file;
	/* its persistent FileId known now: a persistent open is journaled */
	srv_durable_grant(req, o, &cx.durable);
	/* this request's reference too: another channel may close it now */
	ret = srv_req_hold(req, srv_open_ref(o));
	if (ret)
		return ret;
	ret = create_answer(req, o, &cx, action);
	if (ret) {
		srv_open_close(o);
		return ret;
	}
	if (action == FILE_CREATED)
		srv_dir_lease_break(req->conn->srv, sh, path, o);
	return 0;
out_leave_file:
	srv_open_leave_file(o);
out_put_file:
	srv_file_put(o->file);
out_free_open:
	srv_ident_put(&o->ident);
	free(o);
out_close_fd:
	close(fd);
	return ret;
}

/* ---- CLOSE / FLUSH ---- */

int smb_close(struct srv_req *req)
{
	struct smb2_close_rsp rsp = { 0 };
	struct smb2_close_req r;
	char path[SRV_PATH_MAX];
	struct srv_open *o;
	struct fscc_info fi;
	struct srv_attr a;
	int ret;

	smb2_close_req_decode(req->pdu, req->len, &r);
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	srv_wt_close(o);
	/* not as the user (CLOSE needs no identity): the attributes of its file */
	if (r.flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB && o->file &&
	    !srv_file_path(o->file, path, sizeof(path)) &&
	    !srv_attr_get(o->share, o->fd, NULL, base_name(path), NULL, &a)) {
		srv_wt_attr(o, &a.st);
		srv_attr_to_info(&a, 0, &fi);
		rsp.flags = SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB;
		rsp.t = fi.t;
		rsp.allocation_size = fi.allocation_size;
		rsp.end_of_file = fi.end_of_file;
		rsp.attributes = fi.attributes;
	}
	srv_open_close(o);
	if (srv_req_room(req, 64))
		return -ENOMEM;
	smb2_close_rsp_encode(&req->w, &rsp);
	return 0;
}

int smb_flush(struct srv_req *req)
{
	struct smb2_fid fid;
	struct srv_open *o;
	int ret;

	smb2_flush_req_decode(req->pdu, req->len, &fid);
	ret = srv_req_open(req, &fid, &o);
	if (ret)
		return ret;
	if (o->pipe)
		goto done;		/* nothing buffered */
	if (!(o->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)))
		return -EACCES;
	ret = srv_fflush(o);
	if (ret)
		return ret;
	srv_wt_flush(o);
done:
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}

/* ---- READ / WRITE ---- */

/* A READ of a named pipe: the next response fragment, or what fits of it. */
static int pipe_read(struct srv_req *req, struct srv_open *o,
		     const struct smb2_read_req *r)
{
	struct smb2_read_rsp rsp = { 0 };
	size_t n;
	int ret;

	if (r->channel != SMB2_CHANNEL_NONE || r->length > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	ret = srv_req_room(req, 16 + (size_t)r->length);
	if (ret)
		return ret;
	ret = srv_pipe_read(o->pipe, req->w.p + SMB2_READ_RSP_DATA_OFF, r->length, &n);
	if (ret && ret != -E_SMB_BUFFER_OVERFLOW)
		return ret;
	rsp.data_offset = SMB2_READ_RSP_DATA_OFF;
	rsp.data_length = (uint32_t)n;
	smb2_read_rsp_encode(&req->w, &rsp);
	req->w.off += n;
	req->keep_body = ret != 0;
	return ret;
}

int smb_read(struct srv_req *req)
{
	struct smb2_read_req r;
	struct srv_open *o;
	int ret;

	ret = smb2_read_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (o->pipe)
		return pipe_read(req, o, &r);
	if (o->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (!(o->access & (FILE_READ_DATA | FILE_EXECUTE)))
		return -EACCES;
	ret = srv_brl_check_io(o, r.offset, r.length, false);
	if (ret)
		return ret;
	if (r.channel != SMB2_CHANNEL_NONE)
		return srv_rdma_read(req, o, &r);
	if (r.length > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	return srv_tcp_read(req, o, &r);
}

int smb_write(struct srv_req *req)
{
	struct smb2_write_rsp rsp = { 0 };
	struct smb2_write_req r;
	struct xprt_place *pl;
	struct srv_open *o;
	void *win = NULL;
	bool placed;
	uint64_t off;
	struct stat st;
	int ret;

	ret = smb2_write_req_decode(req->pdu, req->len, &r);
	if (ret)
		return -EINVAL;
	pl = &req->conn->x->placed;
	placed = pl->cookie && req->single && pl->len == r.length &&
		 r.data.p == req->pdu + pl->off;
	if (placed) {
		/* counted when the payload was placed */
		req->cseq = req->conn->place.cseq;
		req->conn->place.cseq.o = NULL;
	}
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (o->pipe) {
		if (r.channel != SMB2_CHANNEL_NONE || r.length > SMB2_MAX_IO_SIZE)
			return -EINVAL;
		ret = srv_pipe_write(o->pipe, r.data.p, r.length);
		if (ret)
			return ret;
		o->position = r.length;
		o->modified = true;
		rsp.count = r.length;
		if (srv_req_room(req, 24))
			return -ENOMEM;
		smb2_write_rsp_encode(&req->w, &rsp);
		srv_req_count_io(req, true, r.length);
		return 0;
	}
	if (o->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (!(o->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)))
		return -EACCES;
	if (r.channel != SMB2_CHANNEL_NONE) {
		if (r.offset > INT64_MAX || r.remaining > INT64_MAX - r.offset)
			return -EFBIG;
		ret = srv_brl_check_io(o, r.offset, r.remaining, true);
		if (ret)
			return ret;
		srv_oplock_contend(req->conn->srv, o);
		srv_wt_write(o);
		o->modified = true;
		return srv_rdma_write(req, o, &r);
	}
	if (r.length > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	off = r.offset;
	if (off == UINT64_MAX) {	/* write at end of file */
		ret = srv_fstat(o, &st);
		if (ret)
			return ret;
		off = (uint64_t)st.st_size;
	}
	if (off > INT64_MAX || r.length > INT64_MAX - off)
		return -EFBIG;
	ret = srv_brl_check_io(o, off, r.length, true);
	if (ret)
		return ret;
	srv_oplock_contend(req->conn->srv, o);
	srv_wt_write(o);
	if (placed && req->conn->place.o == o) {
		/* the payload is in the store's window already */
		win = srv_write_place_take(pl);
	} else {
		/* set-ID bits: cleared unless root wrote, as the kernel does */
		ret = srv_ident_io(o->ident);
		if (ret)
			return ret;
	}
	return srv_tcp_write(req, o, off, r.data.p, r.length,
			     o->write_through || (r.flags & SMB2_WRITEFLAG_WRITE_THROUGH), win);
}
