// SPDX-License-Identifier: MIT
/* librdax shares, files, directories and path operations. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "client/client.h"
#include "proto/fscc.h"
#include "proto/lease.h"
#include "proto/ntstatus.h"
#include "util/utf16.h"

#define PATH16_MAX 2048

const char *rdax_version(void)
{
	return RDAX_VERSION;
}

/* ---- TREE_CONNECT ---- */

int cli_tree_connect_req(struct rdax_conn *c, const char *share, uint32_t *id,
			 uint32_t *flags, uint32_t *caps)
{
	struct smb2_tree_connect_req r = { 0 };
	struct smb2_tree_connect_rsp rsp;
	uint8_t path16[600];
	char unc[400];
	struct cli_chain ch;
	struct wcur w;
	int n, ret;

	if (snprintf(unc, sizeof(unc), "\\\\%s\\%s", c->host, share) >= (int)sizeof(unc))
		return cli_err(c, -ENAMETOOLONG, "share name too long");
	n = utf8_to_utf16le(unc, path16, sizeof(path16));
	if (n < 0)
		return cli_err(c, n == -E2BIG ? -ENAMETOOLONG : n, "invalid share name %s", share);
	r.path.p = path16;
	r.path.len = (uint32_t)n;
	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_TREE_CONNECT, 0, false, 0, 16 + (size_t)n, &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		return cli_done(c, ret, "tree connect to share", share);
	}
	smb2_tree_connect_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	/* [MS-SMB2] 3.2.4.1.1: 3.1.1 tree connects are always signed */
	ch.sign = c->dialect == SMB2_DIALECT_311;
	ret = cli_chain_run(c, &ch);
	if (ret)
		return cli_done(c, ret, "tree connect to share", share);
	if (ch.rsp[0].status)
		return cli_status(c, ch.rsp[0].status, "tree connect to share", share);
	if (smb2_tree_connect_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp))
		return cli_err(c, -EPROTO, "malformed TREE_CONNECT response");
	if (rsp.share_flags & SMB2_SHAREFLAG_ENCRYPT_DATA) {
		if (!c->cipher || !c->have_key)
			return cli_err(c, -EPROTONOSUPPORT, "share %s requires encryption", share);
		c->encrypt = true;
		cli_xform_fallback_log(c);
	}
	*id = ch.rsp[0].hdr.tree_id;
	*flags = rsp.share_flags;
	*caps = rsp.capabilities;
	return 0;
}

int rdax_tree_connect(struct rdax_conn *c, const char *share,
		      struct rdax_tree **out)
{
	struct rdax_tree *t;
	int ret;

	cli_begin(c);
	if (!share || !*share)
		return cli_err(c, -EINVAL, "tree connect: no share name");
	t = calloc(1, sizeof(*t));
	if (!t)
		return cli_err(c, -ENOMEM, "tree connect to share %s: out of memory", share);
	ret = cli_tree_connect_req(c, share, &t->id, &t->share_flags, &t->caps);
	if (ret) {
		free(t);
		return ret;
	}
	t->c = c;
	snprintf(t->share, sizeof(t->share), "%s", share);
	list_init(&t->files);
	list_add_tail(&t->link, &c->trees);
	*out = t;
	return 0;
}

int cli_tree_disconnect_req(struct rdax_conn *c, uint32_t id, const char *share)
{
	struct cli_chain ch;
	struct wcur w;
	int ret;

	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_TREE_DISCONNECT, id, false, 0, 8, &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		return ret;
	}
	smb2_simple_encode(&w);
	cli_chain_end(c, &ch, &w);
	ret = cli_chain_run(c, &ch);
	if (!ret && ch.rsp[0].status)
		ret = cli_status(c, ch.rsp[0].status, "tree disconnect", share);
	return ret;
}

void rdax_tree_disconnect(struct rdax_tree **tp)
{
	struct rdax_tree *t = *tp;
	int ret;

	if (!t)
		return;
	if (list_empty(&t->link)) {
		/* its connection is gone already (rdax_disconnect) */
		free(t);
		*tp = NULL;
		return;
	}
	cli_begin(t->c);
	/* the server closes the tree's opens, cached handles included */
	cli_leases_tree_gone(t);
	while (!list_empty(&t->files))
		list_del(t->files.next);
	list_del(&t->link);
	ret = cli_tree_disconnect_req(t->c, t->id, t->share);
	cli_done(t->c, ret, "tree disconnect", t->share);
	free(t);
	*tp = NULL;
}

/* Run a chain that was built (ret 0), or drop one that could not be. */
static int chain_run(struct rdax_conn *c, struct cli_chain *ch, int ret)
{
	if (ret) {
		cli_chain_abort(c, ch);
		return ret;
	}
	return cli_chain_run(c, ch);
}

/* ---- building blocks of compounds ---- */

int cli_add_create(struct rdax_tree *t, struct cli_chain *ch,
		   const struct cli_create_args *a)
{
	struct rdax_conn *c = t->c;
	struct smb2_create_req r = { 0 };
	uint8_t name[PATH16_MAX];
	struct wcur w;
	int n, ret;

	n = cli_path16(a->path, name, sizeof(name));
	if (n < 0)
		return cli_err(c, n == -E2BIG ? -ENAMETOOLONG : n, "invalid path %s", a->path);
	r.impersonation = 2;
	r.desired_access = a->access;
	r.file_attributes = a->attributes;
	r.share_access = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	r.disposition = a->disposition;
	r.options = a->options;
	r.oplock = a->oplock;
	r.name.p = name;
	r.name.len = (uint32_t)n;
	r.contexts.p = a->ctx;
	r.contexts.len = a->ctx_len;
	ret = cli_chain_add(c, ch, SMB2_CREATE, t->id, false, 0,
			    64 + (size_t)n + 8 + a->ctx_len, &w);
	if (ret)
		return ret;
	smb2_create_req_encode(&w, &r);
	cli_chain_end(c, ch, &w);
	return 0;
}

const struct smb2_fid cli_related_fid = { SMB2_FID_COMPOUND, SMB2_FID_COMPOUND };

int cli_add_close(struct rdax_tree *t, struct cli_chain *ch,
		  const struct smb2_fid *fid, uint16_t flags)
{
	struct smb2_close_req r = { .flags = flags, .fid = *fid };
	struct wcur w;
	int ret;

	ret = cli_chain_add(t->c, ch, SMB2_CLOSE, t->id, fid == &cli_related_fid, 0, 24, &w);
	if (ret)
		return ret;
	smb2_close_req_encode(&w, &r);
	cli_chain_end(t->c, ch, &w);
	return 0;
}

int cli_add_set_info(struct rdax_tree *t, struct cli_chain *ch,
		     const struct smb2_fid *fid, uint8_t cls,
		     const void *data, uint32_t len)
{
	struct smb2_set_info_req r = {
		.info_type = SMB2_0_INFO_FILE,
		.info_class = cls,
		.data = { data, len },
		.fid = *fid,
	};
	struct wcur w;
	int ret;

	ret = cli_chain_add(t->c, ch, SMB2_SET_INFO, t->id, fid == &cli_related_fid,
			    smb2_credit_charge_for(len), 40 + len, &w);
	if (ret)
		return ret;
	smb2_set_info_req_encode(&w, &r);
	cli_chain_end(t->c, ch, &w);
	return 0;
}

int cli_add_ioctl(struct rdax_tree *t, struct cli_chain *ch, const struct smb2_fid *fid,
		  uint32_t ctl, const void *in, uint32_t in_len, uint32_t max_out)
{
	struct smb2_ioctl_req r = {
		.ctl_code = ctl,
		.fid = *fid,
		.input = { in, in_len },
		.max_output_response = max_out,
		.flags = SMB2_0_IOCTL_IS_FSCTL,
	};
	struct wcur w;
	int ret;

	ret = cli_chain_add(t->c, ch, SMB2_IOCTL, t->id, fid == &cli_related_fid,
			    smb2_credit_charge_for(in_len > max_out ? in_len : max_out),
			    56 + (size_t)in_len, &w);
	if (ret)
		return ret;
	smb2_ioctl_req_encode(&w, &r);
	cli_chain_end(t->c, ch, &w);
	return 0;
}

int cli_add_query_info(struct rdax_tree *t, struct cli_chain *ch,
		       const struct smb2_fid *fid, uint8_t type, uint8_t cls,
		       uint32_t out_len)
{
	struct smb2_query_info_req r = {
		.info_type = type,
		.info_class = cls,
		.output_len = out_len,
		.fid = *fid,
	};
	struct wcur w;
	int ret;

	ret = cli_chain_add(t->c, ch, SMB2_QUERY_INFO, t->id, fid == &cli_related_fid,
			    smb2_credit_charge_for(out_len), 48, &w);
	if (ret)
		return ret;
	smb2_query_info_req_encode(&w, &r);
	cli_chain_end(t->c, ch, &w);
	return 0;
}

/*
 * First failing status of a chain from its PDU from on (the one that
 * caused the others; those before close cached handles).
 */
static int chain_result(struct rdax_tree *t, struct cli_chain *ch, int from,
			const char *op, const char *path)
{
	int i;

	for (i = from; i < ch->n; i++)
		if (nt_is_error(ch->rsp[i].status))
			return cli_status(t->c, ch->rsp[i].status, op, path);
	return 0;
}

static void ts_from_filetime(uint64_t ft, struct timespec *ts)
{
	int64_t sec;
	long nsec;

	filetime_to_unix(ft, &sec, &nsec);
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = nsec;
}

static void stat_from_info(const struct fscc_info *fi, struct rdax_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->size = fi->end_of_file;
	st->alloc_size = fi->allocation_size;
	st->ino = fi->file_id;
	st->attributes = fi->attributes;
	st->nlink = fi->nlink;
	st->is_dir = fi->directory;
	ts_from_filetime(fi->t.last_access, &st->atime);
	ts_from_filetime(fi->t.last_write, &st->mtime);
	ts_from_filetime(fi->t.change, &st->ctime);
	ts_from_filetime(fi->t.creation, &st->btime);
}

/* FilePosixInformation: the type from the attributes and the reparse tag. */
void cli_posix_stat_fill(const struct fscc_info *fi, const struct posix_info *pi,
			 struct rdax_stat *st)
{
	uint32_t type = S_IFREG;

	stat_from_info(fi, st);
	if (fi->attributes & FILE_ATTRIBUTE_DIRECTORY)
		type = S_IFDIR;
	else if (pi->reparse_tag == IO_REPARSE_TAG_SYMLINK)
		type = S_IFLNK;
	st->is_dir = type == S_IFDIR;
	st->nlink = pi->nlink;
	st->mode = type | (pi->mode & POSIX_PERM_MASK);
	/* S-1-22-1-UID, S-1-22-2-GID: anything else is not a Unix id */
	st->uid = pi->owner.auth == 22 && pi->owner.n == 2 ? pi->owner.sub[1] : (uint32_t)-1;
	st->gid = pi->group.auth == 22 && pi->group.n == 2 ? pi->group.sub[1] : (uint32_t)-1;
	st->posix = true;
}

int cli_posix_stat_decode(struct rdax_conn *c, const struct cli_rsp *rsp,
			  struct rdax_stat *st)
{
	struct posix_info pi;
	struct fscc_info fi;
	struct smb2_buf out;

	if (smb2_out_buf_rsp_decode(rsp->pdu, rsp->len, &out) ||
	    posix_info_decode(out.p, out.len, &fi, &pi))
		return cli_err(c, -EPROTO, "malformed QUERY_INFO response");
	cli_posix_stat_fill(&fi, &pi, st);
	return 0;
}

int cli_decode_all_info(struct rdax_conn *c, const struct cli_rsp *rsp,
			struct rdax_stat *st)
{
	struct fscc_info fi = { 0 };
	struct smb2_buf out;

	if (smb2_out_buf_rsp_decode(rsp->pdu, rsp->len, &out) ||
	    fscc_all_info_decode(out.p, out.len, &fi))
		return cli_err(c, -EPROTO, "malformed QUERY_INFO response");
	stat_from_info(&fi, st);
	return 0;
}

/* ---- path operations: one compound round trip each ---- */

/*
 * A path operation on a file this client holds a lease on (its handles
 * are open) names the lease's key: the server then breaks nothing of
 * ours for it.
 */
static void path_lease(struct rdax_tree *t, const char *path, struct cli_create_args *a,
		       struct cli_ctx *x)
{
	struct cli_lease *l = cli_lease_find(t, path);

	if (!l || !l->granted || !(l->nfiles || l->cached) || !cli_lease_ok(t, l->is_dir))
		return;
	cli_ctx_init(x);
	cli_ctx_lease(x, t, l, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
	a->ctx = x->buf;
	a->ctx_len = (uint32_t)x->len;
	a->oplock = SMB2_OPLOCK_LEVEL_LEASE;
}

/* CREATE + QUERY_INFO + CLOSE: the stat of a path nothing caches. */
static int stat_plain(struct rdax_tree *t, const char *path, struct rdax_stat *st)
{
	struct cli_create_args a = { path, FILE_READ_ATTRIBUTES, FILE_OPEN, 0, 0 };
	struct cli_chain ch;
	int ret;

	cli_chain_init(t->c, &ch);
	ret = cli_add_create(t, &ch, &a);
	if (!ret)
		ret = cli_add_query_info(t, &ch, &cli_related_fid, SMB2_0_INFO_FILE,
				     t->c->posix ? FilePosixInformation : FileAllInformation,
				     4096);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	if (!ret)
		ret = chain_result(t, &ch, 0, "stat", path);
	if (!ret)
		ret = t->c->posix ? cli_posix_stat_decode(t->c, &ch.rsp[1], st)
				  : cli_decode_all_info(t->c, &ch.rsp[1], st);
	return ret;
}

/*
 * With leases, the first stat of a path keeps its handle under the
 * lease, and the next ones are answered from the client's cache while
 * the lease has R (lease.c).
 */
int rdax_stat(struct rdax_tree *t, const char *path, struct rdax_stat *st)
{
	int ret = -EAGAIN;

	cli_begin(t->c);
	/* the lease cache keeps FileAllInformation: no modes in it */
	if (cli_lease_ok(t, false) && !t->no_lease && !t->c->posix)
		ret = cli_lease_stat(t, path, st);
	if (ret == -EAGAIN)
		ret = stat_plain(t, path, st);
	return cli_done(t->c, ret, "stat", path);
}

int rdax_unlink(struct rdax_tree *t, const char *path)
{
	struct cli_create_args a = { path, DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN,
				 FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE, 0 };
	struct cli_lease *l;
	struct cli_chain ch;
	struct cli_ctx x;
	int ret, first;

	cli_begin(t->c);
	cli_chain_init(t->c, &ch);
	/* a handle of ours kept open would keep the file, delete-pending */
	ret = first = cli_lease_close_cached(t, path, false, &ch);
	if (ret >= 0) {
		path_lease(t, path, &a, &x);
		ret = cli_add_create(t, &ch, &a);
	}
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	if (!ret)
		ret = chain_result(t, &ch, first, "unlink", path);
	if (!ret) {
		cli_lease_changed(t, path);
		/* the name is gone: the application's handles keep the file */
		l = cli_lease_find(t, path);
		if (l)
			list_del(&l->hlink);
	}
	return cli_done(t->c, ret, "unlink", path);
}

int rdax_mkdir(struct rdax_tree *t, const char *path)
{
	struct cli_create_args a = { path, FILE_READ_ATTRIBUTES, FILE_CREATE,
				 FILE_DIRECTORY_FILE, FILE_ATTRIBUTE_DIRECTORY };
	struct cli_chain ch;
	int ret;

	cli_begin(t->c);
	cli_chain_init(t->c, &ch);
	ret = cli_add_create(t, &ch, &a);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	if (!ret)
		ret = chain_result(t, &ch, 0, "mkdir", path);
	cli_lease_changed(t, path);
	return cli_done(t->c, ret, "mkdir", path);
}

int rdax_rmdir(struct rdax_tree *t, const char *path)
{
	struct cli_create_args a = { path, DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN,
				 FILE_DIRECTORY_FILE, 0 };
	uint8_t del = 1;
	struct cli_chain ch;
	struct cli_ctx x;
	int ret, first;

	cli_begin(t->c);
	cli_chain_init(t->c, &ch);
	ret = first = cli_lease_close_cached(t, path, true, &ch);
	if (ret >= 0) {
		path_lease(t, path, &a, &x);
		ret = cli_add_create(t, &ch, &a);
	}
	if (!ret)
		ret = cli_add_set_info(t, &ch, &cli_related_fid, FileDispositionInformation, &del, 1);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	if (!ret)
		ret = chain_result(t, &ch, first, "rmdir", path);
	cli_lease_changed(t, path);
	return cli_done(t->c, ret, "rmdir", path);
}

int rdax_rename(struct rdax_tree *t, const char *from, const char *to,
		unsigned int flags)
{
	struct cli_create_args a = { from, DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN, 0, 0 };
	uint8_t name[PATH16_MAX], info[PATH16_MAX + 24];
	struct cli_chain ch;
	struct cli_ctx x;
	struct wcur w;
	int n, ret, first;

	cli_begin(t->c);
	n = cli_path16(to, name, sizeof(name));
	if (n < 0)
		return cli_err(t->c, n == -E2BIG ? -ENAMETOOLONG : n, "rename %s: %s",
			       from, n == -E2BIG ? "target path too long" : "invalid target path");
	if (flags & ~RDAX_RENAME_NOREPLACE)
		return cli_err(t->c, -EINVAL, "rename %s: unknown flags 0x%x", from, flags);
	wcur_init(&w, info, sizeof(info));
	fscc_rename_info_put(&w, !(flags & RDAX_RENAME_NOREPLACE), name, (uint32_t)n);
	cli_chain_init(t->c, &ch);
	/*
	 * Servers refuse to rename a directory with handles open under it,
	 * or over a file that is open: the cached ones go first.
	 */
	ret = first = cli_lease_close_cached(t, from, true, &ch);
	if (ret >= 0) {
		ret = cli_lease_close_cached(t, to, false, &ch);
		first += ret > 0 ? ret : 0;
	}
	if (ret >= 0) {
		path_lease(t, from, &a, &x);
		ret = cli_add_create(t, &ch, &a);
	}
	if (!ret)
		ret = cli_add_set_info(t, &ch, &cli_related_fid, FileRenameInformation, info,
				   (uint32_t)w.off);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	if (!ret)
		ret = chain_result(t, &ch, first, "rename", from);
	if (!ret)
		cli_lease_renamed(t, from, to);
	return cli_done(t->c, ret, "rename", from);
}

int rdax_truncate(struct rdax_tree *t, const char *path, uint64_t size)
{
	struct cli_create_args a = { path, FILE_WRITE_DATA | FILE_READ_ATTRIBUTES, FILE_OPEN,
				 FILE_NON_DIRECTORY_FILE, 0 };
	uint8_t eof[8];
	struct cli_chain ch;
	struct cli_ctx x;
	int ret;

	put_le64(eof, size);
	cli_begin(t->c);
	path_lease(t, path, &a, &x);
	cli_chain_init(t->c, &ch);
	ret = cli_add_create(t, &ch, &a);
	if (!ret)
		ret = cli_add_set_info(t, &ch, &cli_related_fid, FileEndOfFileInformation, eof, 8);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	cli_lease_changed(t, path);
	return cli_done(t->c, ret ? ret : chain_result(t, &ch, 0, "truncate", path), "truncate",
			path);
}

int rdax_touch(struct rdax_tree *t, const char *path)
{
	struct cli_create_args a = { path, FILE_WRITE_ATTRIBUTES | FILE_READ_ATTRIBUTES,
				 FILE_OPEN_IF, FILE_NON_DIRECTORY_FILE, FILE_ATTRIBUTE_ARCHIVE };
	struct smb2_file_times ft = { 0 };
	struct timespec now;
	uint8_t info[40];
	struct cli_chain ch;
	struct cli_ctx x;
	struct wcur w;
	int ret;

	clock_gettime(CLOCK_REALTIME, &now);
	ft.last_write = filetime_from_unix(now.tv_sec, now.tv_nsec);
	ft.last_access = ft.last_write;
	wcur_init(&w, info, sizeof(info));
	fscc_basic_info_put(&w, &ft, 0);
	cli_begin(t->c);
	path_lease(t, path, &a, &x);
	cli_chain_init(t->c, &ch);
	ret = cli_add_create(t, &ch, &a);
	if (!ret)
		ret = cli_add_set_info(t, &ch, &cli_related_fid, FileBasicInformation, info, 40);
	if (!ret)
		ret = cli_add_close(t, &ch, &cli_related_fid, 0);
	ret = chain_run(t->c, &ch, ret);
	cli_lease_changed(t, path);
	return cli_done(t->c, ret ? ret : chain_result(t, &ch, 0, "touch", path), "touch", path);
}

/* ---- open files ---- */

static int file_close(struct rdax_file *f);

/* what rdax_open takes (O_CLOEXEC and O_LARGEFILE change nothing) */
#define OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_DIRECTORY | O_SYNC | \
		    O_CLOEXEC | O_LARGEFILE)

int rdax_open(struct rdax_tree *t, const char *path, int flags,
	      struct rdax_file **out)
{
	struct cli_create_args a = { path, FILE_READ_ATTRIBUTES, FILE_OPEN, 0, 0 };
	struct cli_lease *l = NULL;
	struct smb2_create_rsp rsp;
	struct rdax_file *f;
	struct cli_grant g = { 0 };
	struct cli_chain ch;
	struct cli_ctx x;
	uint8_t guid[16] = { 0 };
	bool durable = false;
	int acc = flags & O_ACCMODE, ret;

	if (acc == O_RDONLY || acc == O_RDWR)
		a.access |= FILE_GENERIC_READ;
	if (acc == O_WRONLY || acc == O_RDWR)
		a.access |= FILE_GENERIC_WRITE;
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		a.disposition = FILE_CREATE;
	else if ((flags & (O_CREAT | O_TRUNC)) == (O_CREAT | O_TRUNC))
		a.disposition = FILE_OVERWRITE_IF;
	else if (flags & O_CREAT)
		a.disposition = FILE_OPEN_IF;
	else if (flags & O_TRUNC)
		a.disposition = FILE_OVERWRITE;
	if (flags & O_DIRECTORY) {
		a.options |= FILE_DIRECTORY_FILE;
		if (flags & O_CREAT)
			a.attributes = FILE_ATTRIBUTE_DIRECTORY;
	} else if (flags & O_CREAT) {
		a.options |= FILE_NON_DIRECTORY_FILE;
		a.attributes = FILE_ATTRIBUTE_ARCHIVE;
	}
	if (flags & O_SYNC)
		a.options |= FILE_WRITE_THROUGH;
	cli_begin(t->c);
	if (flags & ~OPEN_FLAGS)
		return cli_err(t->c, -EINVAL, "open %s: unknown flags 0%o", path,
			       (unsigned int)(flags & ~OPEN_FLAGS));
	if (acc == O_ACCMODE)
		return cli_err(t->c, -EINVAL, "open %s: access mode 3", path);
	/* the path's lease key: the handles a stat keeps share the lease */
	if (cli_lease_ok(t, flags & O_DIRECTORY) && !t->no_lease)
		l = cli_lease_get(t, path);
	if (l) {
		l->nfiles++;
		cli_ctx_init(&x);
		cli_ctx_lease(&x, t, l, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
		/* durable v2 under the lease's H: a reconnect gets it back */
		if (cli_recon_wanted(t->c) && !crypto_random(guid, sizeof(guid))) {
			cli_ctx_durable(&x, t, guid);
			durable = true;
		}
		a.ctx = x.buf;
		a.ctx_len = (uint32_t)x.len;
		a.oplock = SMB2_OPLOCK_LEVEL_LEASE;
	}
	cli_chain_init(t->c, &ch);
	ret = cli_add_create(t, &ch, &a);
	ret = chain_run(t->c, &ch, ret);
	if (ret)
		goto out_put;
	if (ch.rsp[0].status) {
		ret = cli_status(t->c, ch.rsp[0].status, "open", path);
		goto out_put;
	}
	if (smb2_create_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp)) {
		ret = cli_err(t->c, -EPROTO, "malformed CREATE response");
		goto out_put;
	}
	if (a.disposition != FILE_OPEN)
		cli_lease_changed(t, path);	/* made or cut to nothing */
	if (l) {
		ret = cli_grant_parse(t->c, &rsp, l->key, &g);
		if (ret)
			goto out_close;
		if (g.lease)
			cli_lease_granted(l, &g);
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		ret = cli_err(t->c, -ENOMEM, "open %s: out of memory", path);
		goto out_close;
	}
	f->t = t;
	f->fid = rsp.fid;
	f->is_dir = rsp.attributes & FILE_ATTRIBUTE_DIRECTORY;
	f->write_through = flags & O_SYNC;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->lease = l;
	f->durable = durable && g.durable;
	f->persistent = f->durable && g.persistent;
	memcpy(f->create_guid, guid, sizeof(guid));
	f->access = a.access;
	f->options = a.options;
	list_add_tail(&f->tlink, &t->files);
	*out = f;
	return 0;
out_close:
	{
		struct rdax_file tmp = { .t = t, .fid = rsp.fid };
		char why[sizeof(t->c->errmsg)];

		/* the close must not replace why the open failed */
		snprintf(why, sizeof(why), "%s", t->c->errmsg);
		file_close(&tmp);
		snprintf(t->c->errmsg, sizeof(t->c->errmsg), "%s", why);
	}
out_put:
	if (l) {
		l->nfiles--;
		cli_lease_put(t->c, l);
	}
	return cli_done(t->c, ret, "open", path);
}

void cli_file_changed(struct rdax_file *f)
{
	if (f->lease)
		f->lease->have_stat = false;
}

/* CLOSE a handle (the struct stays the caller's). */
static int file_close(struct rdax_file *f)
{
	struct cli_chain ch;
	int ret;

	cli_chain_init(f->t->c, &ch);
	ret = cli_add_close(f->t, &ch, &f->fid, 0);
	ret = chain_run(f->t->c, &ch, ret);
	if (!ret && ch.rsp[0].status)
		ret = cli_status(f->t->c, ch.rsp[0].status, "close", f->path);
	return cli_done(f->t->c, ret, "close", f->path);
}

void rdax_close(struct rdax_file **fp)
{
	struct rdax_file *f = *fp;

	if (!f)
		return;
	cli_begin(f->t->c);
	/* a failure stays in the connection's message and status */
	file_close(f);
	if (f->tlink.next)
		list_del(&f->tlink);
	if (f->lease) {
		f->lease->nfiles--;
		cli_lease_put(f->t->c, f->lease);
	}
	free(f);
	*fp = NULL;
}

int rdax_fsync(struct rdax_file *f)
{
	struct cli_chain ch;
	struct wcur w;
	int ret;

	cli_begin(f->t->c);
	cli_chain_init(f->t->c, &ch);
	ret = cli_chain_add(f->t->c, &ch, SMB2_FLUSH, f->t->id, false, 0, 24, &w);
	if (ret) {
		cli_chain_abort(f->t->c, &ch);
		return cli_done(f->t->c, ret, "flush", f->path);
	}
	smb2_flush_req_encode(&w, &f->fid);
	cli_chain_end(f->t->c, &ch, &w);
	ret = cli_chain_run(f->t->c, &ch);
	if (!ret && ch.rsp[0].status)
		ret = cli_status(f->t->c, ch.rsp[0].status, "flush", f->path);
	return cli_done(f->t->c, ret, "flush", f->path);
}

int rdax_fstat(struct rdax_file *f, struct rdax_stat *st)
{
	struct cli_chain ch;
	int ret;

	bool posix = f->t->c->posix;

	cli_begin(f->t->c);
	if (!posix && cli_lease_fstat_hit(f, st))
		return 0;
	cli_chain_init(f->t->c, &ch);
	ret = cli_add_query_info(f->t, &ch, &f->fid, SMB2_0_INFO_FILE,
			     posix ? FilePosixInformation : FileAllInformation, 4096);
	ret = chain_run(f->t->c, &ch, ret);
	if (!ret && ch.rsp[0].status)
		ret = cli_status(f->t->c, ch.rsp[0].status, "stat", f->path);
	if (!ret)
		ret = posix ? cli_posix_stat_decode(f->t->c, &ch.rsp[0], st)
			    : cli_decode_all_info(f->t->c, &ch.rsp[0], st);
	if (!ret && !posix)
		cli_lease_fstat_fill(f, st);
	return cli_done(f->t->c, ret, "stat", f->path);
}

int rdax_ftruncate(struct rdax_file *f, uint64_t size)
{
	cli_begin(f->t->c);
	return cli_ftruncate(f, size);
}

int cli_ftruncate(struct rdax_file *f, uint64_t size)
{
	struct cli_chain ch;
	uint8_t eof[8];
	int ret;

	put_le64(eof, size);
	cli_chain_init(f->t->c, &ch);
	ret = cli_add_set_info(f->t, &ch, &f->fid, FileEndOfFileInformation, eof, 8);
	ret = chain_run(f->t->c, &ch, ret);
	cli_file_changed(f);
	if (!ret && ch.rsp[0].status)
		ret = cli_status(f->t->c, ch.rsp[0].status, "truncate", f->path);
	return cli_done(f->t->c, ret, "truncate", f->path);
}

/* ---- directories ---- */

#define DIR_BUF (64 * 1024)

struct rdax_dir {
	struct rdax_tree *t;
	struct smb2_fid fid;
	char path[1024];
	uint8_t *buf;
	size_t len;
	size_t off;
	bool eof;
};

/* One QUERY_DIRECTORY; with create set, CREATE + QUERY_DIRECTORY. */
static int dir_fill(struct rdax_dir *d, bool create)
{
	struct rdax_conn *c = d->t->c;
	struct cli_create_args a = { d->path, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES,
				 FILE_OPEN, FILE_DIRECTORY_FILE, 0 };
	struct smb2_query_dir_req r = { 0 };
	static const uint8_t star[2] = { '*', 0 };
	struct smb2_create_rsp crsp;
	struct smb2_buf out;
	struct cli_chain ch;
	struct wcur w;
	int ret, qi = 0;

	r.info_class = c->posix ? FilePosixInformation : FileIdBothDirectoryInformation;
	r.output_len = DIR_BUF;
	r.fid = create ? cli_related_fid : d->fid;
	/* every query carries the pattern: Samba rejects an empty one */
	r.pattern.p = star;
	r.pattern.len = 2;
	cli_chain_init(c, &ch);
	if (create) {
		ret = cli_add_create(d->t, &ch, &a);
		if (ret) {
			cli_chain_abort(c, &ch);
			return ret;
		}
		qi = 1;
	}
	ret = cli_chain_add(c, &ch, SMB2_QUERY_DIRECTORY, d->t->id, create,
			    smb2_credit_charge_for(DIR_BUF), 40, &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		return ret;
	}
	smb2_query_dir_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	ret = cli_chain_run(c, &ch);
	if (ret)
		return ret;
	if (create) {
		if (ch.rsp[0].status)
			return cli_status(c, ch.rsp[0].status, "opendir", d->path);
		if (smb2_create_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &crsp))
			return cli_err(c, -EPROTO, "malformed CREATE response");
		d->fid = crsp.fid;
	}
	if (ch.rsp[qi].status == STATUS_NO_MORE_FILES ||
	    ch.rsp[qi].status == STATUS_NO_SUCH_FILE) {
		d->eof = true;
		d->len = 0;
		return 0;
	}
	if (ch.rsp[qi].status)
		return cli_status(c, ch.rsp[qi].status, "readdir", d->path);
	if (smb2_out_buf_rsp_decode(ch.rsp[qi].pdu, ch.rsp[qi].len, &out))
		return cli_err(c, -EPROTO, "malformed QUERY_DIRECTORY response");
	memcpy(d->buf, out.p, out.len);
	d->len = out.len;
	d->off = 0;
	return 0;
}

int rdax_opendir(struct rdax_tree *t, const char *path, struct rdax_dir **out)
{
	struct rdax_dir *d;
	int ret;

	cli_begin(t->c);
	d = calloc(1, sizeof(*d));
	if (!d)
		return cli_err(t->c, -ENOMEM, "opendir %s: out of memory", path);
	d->buf = malloc(DIR_BUF);
	if (!d->buf) {
		ret = cli_err(t->c, -ENOMEM, "opendir %s: out of memory", path);
		goto out_free;
	}
	d->t = t;
	snprintf(d->path, sizeof(d->path), "%s", path);
	ret = cli_done(t->c, dir_fill(d, true), "opendir", path);
	if (ret) {
		if (d->fid.volatile_id || d->fid.persistent) {
			struct rdax_file tmp = { .t = t, .fid = d->fid };
			char msg[sizeof(t->c->errmsg)];
			uint32_t st = t->c->last_status;

			/* the message stays opendir's */
			snprintf(msg, sizeof(msg), "%s", t->c->errmsg);
			file_close(&tmp);
			snprintf(t->c->errmsg, sizeof(t->c->errmsg), "%s", msg);
			t->c->last_status = st;
		}
		goto out_free_buf;
	}
	*out = d;
	return 0;
out_free_buf:
	free(d->buf);
out_free:
	free(d);
	return ret;
}

int rdax_readdir(struct rdax_dir *d, struct rdax_dirent *ent)
{
	struct posix_info pi;
	struct fscc_info fi;
	const uint8_t *name;
	uint32_t nlen;
	int ret;

	cli_begin(d->t->c);
	for (;;) {
		if (d->off == SIZE_MAX || d->off >= d->len) {
			if (d->eof)
				return 0;
			ret = dir_fill(d, false);
			if (ret)
				return cli_done(d->t->c, ret, "readdir", d->path);
			if (d->eof)
				return 0;
		}
		if (d->t->c->posix)
			ret = posix_dirent_next(d->buf, d->len, &d->off, &fi, &pi, &name, &nlen);
		else
			ret = fscc_dirent_next(d->buf, d->len, &d->off,
					       FileIdBothDirectoryInformation, &fi, &name, &nlen);
		if (ret < 0)
			return cli_err(d->t->c, -EPROTO, "malformed directory entry");
		if (!ret) {
			d->off = d->len;
			continue;
		}
		if (utf16le_to_utf8(name, nlen, ent->name, sizeof(ent->name)) < 0)
			continue;
		if (!strcmp(ent->name, ".") || !strcmp(ent->name, ".."))
			continue;
		if (d->t->c->posix)
			cli_posix_stat_fill(&fi, &pi, &ent->st);
		else
			stat_from_info(&fi, &ent->st);
		memset(ent->reserved, 0, sizeof(ent->reserved));
		return 1;
	}
}

void rdax_closedir(struct rdax_dir **dp)
{
	struct rdax_dir *d = *dp;
	struct rdax_file f = { 0 };

	if (!d)
		return;
	cli_begin(d->t->c);
	f.t = d->t;
	f.fid = d->fid;
	snprintf(f.path, sizeof(f.path), "%s", d->path);
	file_close(&f);
	free(d->buf);
	free(d);
	*dp = NULL;
}

/* ---- helpers ---- */

static int url_parse(const char *url, struct rdax_url *u)
{
	const char *p, *host, *end, *at, *slash;
	size_t n;

	memset(u, 0, sizeof(*u));
	if (strncmp(url, "smb://", 6))
		return -EINVAL;
	p = url + 6;
	slash = strchr(p, '/');
	end = slash ? slash : p + strlen(p);
	/* the last '@' before the host: a user name may hold '@' itself */
	at = memrchr(p, '@', (size_t)(end - p));
	if (at) {
		n = (size_t)(at - p);
		if (n >= sizeof(u->user))
			return -ENAMETOOLONG;
		memcpy(u->user, p, n);
		p = at + 1;
	}
	host = p;
	if (*host == '[') {
		const char *rb = memchr(host, ']', (size_t)(end - host));

		if (!rb)
			return -EINVAL;
		n = (size_t)(rb - host - 1);
		if (n >= sizeof(u->host))
			return -ENAMETOOLONG;
		memcpy(u->host, host + 1, n);
		p = rb + 1;
	} else {
		const char *colon = memchr(host, ':', (size_t)(end - host));

		n = (size_t)((colon ? colon : end) - host);
		if (n >= sizeof(u->host))
			return -ENAMETOOLONG;
		memcpy(u->host, host, n);
		p = colon ? colon : end;
	}
	if (!u->host[0])
		return -EINVAL;
	if (*p == ':') {
		char *e;
		unsigned long port = strtoul(p + 1, &e, 10);

		if (e != end || !port || port > 65535)
			return -EINVAL;
		u->port = (unsigned int)port;
	} else if (p != end) {
		return -EINVAL;
	}
	if (!slash)
		return 0;
	p = slash + 1;
	slash = strchr(p, '/');
	n = slash ? (size_t)(slash - p) : strlen(p);
	if (n >= sizeof(u->share))
		return -ENAMETOOLONG;
	memcpy(u->share, p, n);
	if (slash) {
		p = slash;
		while (*p == '/')
			p++;
		if (strlen(p) >= sizeof(u->path))
			return -ENAMETOOLONG;
		strcpy(u->path, p);
		n = strlen(u->path);
		while (n && u->path[n - 1] == '/')
			u->path[--n] = 0;
	}
	return 0;
}

int rdax_url_parse(const char *url, struct rdax_url *u)
{
	int ret;

	cli_thread_begin();
	if (!url || !u)
		return cli_thread_err(-EINVAL, "rdax_url_parse: no %s", url ? "result" : "URL");
	ret = url_parse(url, u);
	if (ret)
		return cli_thread_err(ret, "URL '%s': %s", url, ret == -ENAMETOOLONG ?
				      "a part is too long" :
				      "not smb://[user@]host[:port][/share[/path]]");
	return 0;
}
