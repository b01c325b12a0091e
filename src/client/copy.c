// SPDX-License-Identifier: MIT
/*
 * librdax file copy. Server-side: where the share's file system shares
 * extents (FileFsAttributeInformation has FILE_SUPPORTS_BLOCK_REFCOUNTING),
 * FSCTL_DUPLICATE_EXTENTS_TO_FILE ([MS-FSCC] 2.3.8) on a destination
 * sized first, so no data is copied at all; else, or when the server
 * refuses it (STATUS_NOT_SUPPORTED, STATUS_INVALID_DEVICE_REQUEST), the
 * source's resume key (FSCTL_SRV_REQUEST_RESUME_KEY) and
 * FSCTL_SRV_COPYCHUNK_WRITE requests of up to 16 MiB ([MS-SMB2]
 * 3.2.4.20.2), so the data never crosses the network. Servers without
 * either get the data read and written through the client instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/client.h"
#include "proto/fscc.h"
#include "proto/fsctl.h"
#include "proto/ntstatus.h"

#define LIMIT_RETRIES 3
#define PATH16_MAX 2048
#define DUP_STEP (1ull << 30)		/* bytes per DUPLICATE_EXTENTS request */
#define FS_ATTR_OUT 512
#define COPY_FLAGS (RDAX_COPY_SERVER_ONLY | RDAX_COPY_CLIENT | RDAX_COPY_NO_CLONE)

struct copy_ctx {
	struct rdax_file *src;
	struct rdax_file *dst;
	unsigned int flags;
	uint8_t key[FSCTL_RESUME_KEY_LEN];
	uint32_t ctl;			/* FSCTL_SRV_COPYCHUNK[_WRITE] */
	uint32_t max_chunks;		/* what the server accepts */
	uint32_t max_chunk_len;
	uint32_t max_total;
	uint32_t key_status;		/* why the server gave no resume key */
	bool try_dup;			/* one connection, not RDAX_COPY_CLIENT */
	bool sizes_known;
	uint64_t src_size, dst_size;	/* EndOfFile of both, for duplicate extents */
	uint64_t base;			/* bytes done before this call, for progress */
	uint64_t total;
	int (*progress)(void *arg, uint64_t done, uint64_t total);
	void *arg;
};


static void ctx_init(struct copy_ctx *x, struct rdax_file *src, struct rdax_file *dst,
		     unsigned int flags)
{
	memset(x, 0, sizeof(*x));
	x->src = src;
	x->dst = dst;
	x->flags = flags;
	x->ctl = FSCTL_SRV_COPYCHUNK_WRITE;
	x->max_chunks = FSCTL_COPYCHUNK_MAX_CHUNKS;
	x->max_chunk_len = FSCTL_COPYCHUNK_MAX_CHUNK_LEN;
	x->max_total = FSCTL_COPYCHUNK_MAX_TOTAL;
}

/* Statuses of a server that does not do server-side copy. */
static bool not_supported(uint32_t status)
{
	return status == STATUS_NOT_SUPPORTED ||
	       status == STATUS_INVALID_DEVICE_REQUEST ||
	       status == STATUS_NOT_IMPLEMENTED;
}

static int report(struct copy_ctx *x, uint64_t done)
{
	if (x->progress && x->progress(x->arg, x->base + done, x->total))
		return cli_err(x->dst->t->c, -ECANCELED, "copy to %s cancelled",
			       x->dst->path);
	return 0;
}

/* ---- PDUs ---- */

/* CREATE of a regular file for the copy */
static int add_create(struct rdax_tree *t, struct cli_chain *ch, const char *path,
		      uint32_t access, uint32_t disposition)
{
	const struct cli_create_args a = {
		.path = path,
		.access = access,
		.disposition = disposition,
		.options = FILE_NON_DIRECTORY_FILE,
		.attributes = FILE_ATTRIBUTE_ARCHIVE,
	};

	return cli_add_create(t, ch, &a);
}

/* QUERY_INFO FileInternalInformation (IndexNumber) of the CREATE before */
static int add_query_id(struct rdax_tree *t, struct cli_chain *ch)
{
	return cli_add_query_info(t, ch, &cli_related_fid, SMB2_0_INFO_FILE,
				  FileInternalInformation, 8);
}

/* The output buffer of an IOCTL response, error responses included. */
static bool ioctl_output(const struct cli_rsp *rsp, struct smb2_buf *out)
{
	struct smb2_ioctl_rsp r;

	if (smb2_ioctl_rsp_decode(rsp->pdu, rsp->len, &r))
		return false;
	*out = r.output;
	return true;
}

/*
 * The source's resume key. -EOPNOTSUPP when the server gives no key (not
 * supported, or any other refusal: the client path still works). Asked
 * before the destination is touched, so that a copy that must be
 * server-side fails without changing it. Not compounded with the CREATE:
 * Samba answers a related resume key request (FileId all ones) with
 * STATUS_INTERNAL_ERROR.
 */
static int request_resume_key(struct copy_ctx *x)
{
	struct rdax_tree *t = x->src->t;
	struct rdax_conn *c = t->c;
	struct smb2_buf out;
	struct cli_chain ch;
	int ret;

	cli_chain_init(c, &ch);
	ret = cli_add_ioctl(t, &ch, &x->src->fid, FSCTL_SRV_REQUEST_RESUME_KEY,
			NULL, 0, FSCTL_RESUME_KEY_RSP_LEN);
	if (!ret)
		ret = cli_chain_run(c, &ch);
	else
		cli_chain_abort(c, &ch);
	if (ret)
		return ret;
	if (ch.rsp[0].status) {
		x->key_status = ch.rsp[0].status;
		return -EOPNOTSUPP;
	}
	if (!ioctl_output(&ch.rsp[0], &out) ||
	    fsctl_resume_key_rsp_decode(out.p, out.len, x->key))
		return cli_err(c, -EPROTO, "malformed resume key response from %s",
			       c->host);
	return 0;
}

/* ---- duplicate extents ---- */

/* FILE_SUPPORTS_BLOCK_REFCOUNTING in a FileFsAttributeInformation response */
static void note_fs_attributes(struct rdax_tree *t, const struct cli_rsp *rsp)
{
	struct smb2_buf o;

	if (rsp->status || smb2_out_buf_rsp_decode(rsp->pdu, rsp->len, &o) || o.len < 4)
		t->refcounting = -1;
	else
		t->refcounting = get_le32(o.p) & FILE_SUPPORTS_BLOCK_REFCOUNTING ? 1 : -1;
}

/* EndOfFile in a FileStandardInformation response */
static int rsp_eof(const struct cli_rsp *rsp, uint64_t *eof)
{
	struct smb2_buf o;

	if (rsp->status || smb2_out_buf_rsp_decode(rsp->pdu, rsp->len, &o) || o.len < 16)
		return -EPROTO;
	*eof = get_le64(o.p + 8);
	return 0;
}

/* The sizes of both files and (once per tree) whether extents are shared. */
static int query_sizes(struct copy_ctx *x)
{
	struct rdax_tree *t = x->dst->t;
	struct cli_chain ch;
	int ret, fsi = -1;

	cli_chain_init(t->c, &ch);
	ret = cli_add_query_info(t, &ch, &x->src->fid, SMB2_0_INFO_FILE,
				 FileStandardInformation, 24);
	if (!ret)
		ret = cli_add_query_info(t, &ch, &x->dst->fid, SMB2_0_INFO_FILE,
					 FileStandardInformation, 24);
	if (!ret && !t->refcounting) {
		fsi = ch.n;
		ret = cli_add_query_info(t, &ch, &x->dst->fid, SMB2_0_INFO_FILESYSTEM,
					 FileFsAttributeInformation, FS_ATTR_OUT);
	}
	if (!ret)
		ret = cli_chain_run(t->c, &ch);
	else
		cli_chain_abort(t->c, &ch);
	if (ret)
		return ret;
	if (fsi >= 0)
		note_fs_attributes(t, &ch.rsp[fsi]);
	if (rsp_eof(&ch.rsp[0], &x->src_size) || rsp_eof(&ch.rsp[1], &x->dst_size))
		return -EOPNOTSUPP;
	return 0;
}

static int set_eof(struct copy_ctx *x, uint64_t eof, uint32_t *status)
{
	struct rdax_tree *t = x->dst->t;
	struct smb2_set_info_req si = {
		.info_type = SMB2_0_INFO_FILE,
		.info_class = FileEndOfFileInformation,
		.fid = x->dst->fid,
	};
	struct cli_chain ch;
	uint8_t eofb[8];
	struct wcur w;
	int ret;

	put_le64(eofb, eof);
	si.data.p = eofb;
	si.data.len = 8;
	cli_chain_init(t->c, &ch);
	ret = cli_chain_add(t->c, &ch, SMB2_SET_INFO, t->id, false, 0, 40 + 8, &w);
	if (ret) {
		cli_chain_abort(t->c, &ch);
		return ret;
	}
	smb2_set_info_req_encode(&w, &si);
	cli_chain_end(t->c, &ch, &w);
	ret = cli_chain_run(t->c, &ch);
	if (!ret)
		*status = ch.rsp[0].status;
	return ret;
}

/*
 * FSCTL_DUPLICATE_EXTENTS_TO_FILE until len bytes are shared or the
 * source ends. The target does not grow by it: it is sized first (and
 * put back if the server refuses at once). -EOPNOTSUPP (message unset)
 * where the share's file system does not share extents.
 */
static int copy_dup(struct copy_ctx *x, uint64_t src_off, uint64_t dst_off,
		    uint64_t len, uint64_t *done)
{
	struct rdax_tree *t = x->dst->t;
	struct rdax_conn *c = t->c;
	struct fsctl_dup_extents d = {
		.src_persistent = x->src->fid.persistent,
		.src_volatile = x->src->fid.volatile_id,
	};
	uint8_t in[FSCTL_DUP_EXTENTS_LEN];
	uint64_t old_size, step;
	struct cli_chain ch;
	uint32_t st = 0;
	struct wcur w;
	int ret;

	if (t->refcounting < 0)
		return -EOPNOTSUPP;
	if (!x->sizes_known) {
		ret = query_sizes(x);
		if (ret)
			return ret;
	}
	if (t->refcounting < 0 || src_off >= x->src_size)
		return -EOPNOTSUPP;
	if (len > x->src_size - src_off)
		len = x->src_size - src_off;
	old_size = x->dst_size;
	if (dst_off + len > x->dst_size) {
		ret = set_eof(x, dst_off + len, &st);
		if (ret)
			return ret;
		if (st)
			return cli_status(c, st, "size", x->dst->path);
	}
	while (*done < len) {
		step = len - *done < DUP_STEP ? len - *done : DUP_STEP;
		d.src_off = src_off + *done;
		d.dst_off = dst_off + *done;
		d.len = step;
		wcur_init(&w, in, sizeof(in));
		fsctl_dup_extents_encode(&w, &d);
		cli_chain_init(c, &ch);
		ret = cli_add_ioctl(t, &ch, &x->dst->fid, FSCTL_DUPLICATE_EXTENTS_TO_FILE,
				in, (uint32_t)w.off, 0);
		if (!ret)
			ret = cli_chain_run(c, &ch);
		else
			cli_chain_abort(c, &ch);
		if (ret)
			return ret;
		st = ch.rsp[0].status;
		if (not_supported(st)) {
			/* the rest by COPYCHUNK; nothing shared yet: the old size back */
			if (!*done && old_size < dst_off + len)
				set_eof(x, old_size, &st);
			return -EOPNOTSUPP;
		}
		if (st)
			return cli_status(c, st, "duplicate extents to", x->dst->path);
		*done += step;
		c->stats.cloned_bytes += step;
		ret = report(x, *done);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- server-side ---- */

/* The server answered INVALID_PARAMETER with its limits: adopt smaller ones. */
static bool adopt_limits(struct copy_ctx *x, const struct fsctl_copychunk_rsp *l)
{
	bool changed = false;

	if (l->chunks_written && l->chunks_written < x->max_chunks) {
		x->max_chunks = l->chunks_written;
		changed = true;
	}
	if (l->chunk_bytes_written && l->chunk_bytes_written < x->max_chunk_len) {
		x->max_chunk_len = l->chunk_bytes_written;
		changed = true;
	}
	if (l->total_bytes_written && l->total_bytes_written < x->max_total) {
		x->max_total = l->total_bytes_written;
		changed = true;
	}
	return changed;
}

/* Chunks for the next request; returns how many, total in *want. */
static uint32_t plan_chunks(const struct copy_ctx *x, struct fsctl_chunk *chunks,
			    uint64_t src_off, uint64_t dst_off, uint64_t left,
			    uint64_t *want)
{
	uint64_t off = 0, cap = left < x->max_total ? left : x->max_total;
	uint32_t n = 0, l;

	while (off < cap && n < x->max_chunks) {
		l = cap - off < x->max_chunk_len ? (uint32_t)(cap - off) : x->max_chunk_len;
		chunks[n].src_off = src_off + off;
		chunks[n].dst_off = dst_off + off;
		chunks[n].len = l;
		off += l;
		n++;
	}
	*want = off;
	return n;
}

/*
 * COPYCHUNK requests until len bytes are copied or the source ends.
 * -EOPNOTSUPP (message unset) when the server has no server-side copy.
 */
static int copy_server(struct copy_ctx *x, uint64_t src_off, uint64_t dst_off,
		       uint64_t len, uint64_t *done)
{
	struct fsctl_chunk chunks[FSCTL_COPYCHUNK_MAX_CHUNKS];
	uint8_t in[FSCTL_COPYCHUNK_HDR_LEN +
		   FSCTL_COPYCHUNK_MAX_CHUNKS * FSCTL_COPYCHUNK_CHUNK_LEN];
	struct rdax_tree *t = x->dst->t;
	struct rdax_conn *c = t->c;
	struct fsctl_copychunk_rsp r;
	const struct cli_rsp *rsp;
	struct smb2_buf out;
	struct cli_chain ch;
	int ret, retries = 0;
	uint64_t want;
	uint32_t n;
	struct wcur w;
	bool body;

	while (*done < len) {
		n = plan_chunks(x, chunks, src_off + *done, dst_off + *done,
				len - *done, &want);
		wcur_init(&w, in, sizeof(in));
		fsctl_copychunk_encode(&w, x->key, chunks, n);
		cli_chain_init(c, &ch);
		ret = cli_add_ioctl(t, &ch, &x->dst->fid, x->ctl, in,
				(uint32_t)w.off, FSCTL_COPYCHUNK_RSP_LEN);
		if (!ret)
			ret = cli_chain_run(c, &ch);
		else
			cli_chain_abort(c, &ch);
		if (ret)
			return ret;
		rsp = &ch.rsp[0];
		body = ioctl_output(rsp, &out) &&
		       !fsctl_copychunk_rsp_decode(out.p, out.len, &r);
		if (rsp->status == STATUS_SUCCESS) {
			if (!body || r.total_bytes_written > want)
				return cli_err(c, -EPROTO, "malformed COPYCHUNK response from %s",
					       c->host);
			*done += r.total_bytes_written;
			ret = report(x, *done);
			if (ret)
				return ret;
			if (r.total_bytes_written < want)
				return 0;	/* the source ended */
			retries = 0;
			continue;
		}
		if (rsp->status == STATUS_INVALID_PARAMETER && body &&
		    retries++ < LIMIT_RETRIES && adopt_limits(x, &r))
			continue;
		if (not_supported(rsp->status) && x->ctl == FSCTL_SRV_COPYCHUNK_WRITE) {
			/* before SMB 3 (Windows 7): plain COPYCHUNK only */
			x->ctl = FSCTL_SRV_COPYCHUNK;
			continue;
		}
		if (not_supported(rsp->status))
			return -EOPNOTSUPP;
		if (body && rsp->status != STATUS_INVALID_PARAMETER &&
		    r.total_bytes_written <= want)
			*done += r.total_bytes_written;
		return cli_status(c, rsp->status, "server-side copy to", x->dst->path);
	}
	return 0;
}

/* ---- through the client ---- */

static int copy_report(void *arg, uint64_t done)
{
	return report(arg, done);
}

/* READs and WRITEs in flight, several pieces at a time (cli_copy_pipe). */
static int copy_client(struct copy_ctx *x, uint64_t src_off, uint64_t dst_off,
		       uint64_t len, uint64_t *done)
{
	uint64_t base = *done;

	if (*done >= len)
		return 0;
	return cli_copy_pipe(x->src, src_off + base, x->dst, dst_off + base, len - base,
			     done, copy_report, x);
}

/* RDAX_COPY_SERVER_ONLY, and the server cannot copy. */
static int no_server_copy(struct copy_ctx *x)
{
	struct rdax_conn *c = x->src->t->c;

	if (x->key_status)
		return cli_err(c, -EOPNOTSUPP, "%s: no server-side copy on %s: resume key refused with %s",
			       x->dst->path, c->host, rdax_status_str(x->key_status));
	return cli_err(c, -EOPNOTSUPP, "%s: server-side copy not supported by %s",
		       x->dst->path, c->host);
}

/* Server-side when possible and allowed, else (or for the rest) client. */
static int copy_run(struct copy_ctx *x, bool have_key, uint64_t src_off,
		    uint64_t dst_off, uint64_t len, uint64_t *done)
{
	int ret = -EOPNOTSUPP;

	if (!len)
		return 0;
	if (x->try_dup) {
		ret = copy_dup(x, src_off, dst_off, len, done);
		if (ret != -EOPNOTSUPP || *done >= len)
			return ret;
	}
	if (have_key)
		ret = copy_server(x, src_off, dst_off, len, done);
	if (ret != -EOPNOTSUPP)
		return ret;
	if (x->flags & RDAX_COPY_SERVER_ONLY)
		return no_server_copy(x);
	return copy_client(x, src_off, dst_off, len, done);
}

/* ---- public API ---- */

int64_t rdax_copy_range(struct rdax_file *src, uint64_t src_off,
			struct rdax_file *dst, uint64_t dst_off, uint64_t len,
			unsigned int flags)
{
	struct rdax_conn *c = dst->t->c;
	struct copy_ctx x;
	uint64_t done = 0;
	bool have_key = false;
	int ret;

	cli_begin(c);
	if (src->t->c != c)
		cli_begin(src->t->c);
	if (flags & ~COPY_FLAGS)
		return cli_err(c, -EINVAL, "unknown copy flags %#x", flags & ~COPY_FLAGS);
	if ((flags & RDAX_COPY_CLIENT) && (flags & RDAX_COPY_SERVER_ONLY))
		return cli_err(c, -EINVAL, "RDAX_COPY_CLIENT and RDAX_COPY_SERVER_ONLY conflict");
	ctx_init(&x, src, dst, flags);
	x.try_dup = src->t->c == c && !(flags & (RDAX_COPY_CLIENT | RDAX_COPY_NO_CLONE));
	if (src->t->c != c) {
		if (flags & RDAX_COPY_SERVER_ONLY)
			return cli_err(c, -EXDEV,
				       "server-side copy needs both files on one connection");
	} else if (!(flags & RDAX_COPY_CLIENT) && len) {
		ret = request_resume_key(&x);
		if (ret && ret != -EOPNOTSUPP)
			return cli_done(c, ret, "copy to", dst->path);
		have_key = !ret;
	}
	ret = copy_run(&x, have_key, src_off, dst_off, len, &done);
	cli_file_changed(dst);
	if (ret && !done)
		return cli_done(c, ret, "copy to", dst->path);
	return (int64_t)done;
}

/* The IndexNumber in a QUERY_INFO(FileInternalInformation) response, 0 if none. */
static uint64_t rsp_file_id(const struct cli_rsp *rsp)
{
	struct smb2_buf o;

	if (rsp->status || smb2_out_buf_rsp_decode(rsp->pdu, rsp->len, &o) || o.len < 8)
		return 0;
	return get_le64(o.p);
}

/* Same file? By IndexNumber when both servers answered, else by name. */
static bool same_file(uint64_t id_a, uint64_t id_b, const char *a, const char *b)
{
	if (id_a && id_b)
		return id_a == id_b;
	while (*a == '/')
		a++;
	while (*b == '/')
		b++;
	return !strcasecmp(a, b);
}

/*
 * Close the pair in one round trip; with eof set, first cut dst to *eof
 * (a destination that was longer than what was copied into it).
 */
static int close_pair(struct rdax_tree *t, struct rdax_file *src,
		      struct rdax_file *dst, const uint64_t *eof)
{
	struct smb2_set_info_req si = {
		.info_type = SMB2_0_INFO_FILE,
		.info_class = FileEndOfFileInformation,
	};
	struct rdax_file *of[CLI_MAX_CHAIN];
	struct cli_chain ch;
	uint8_t eofb[8];
	struct wcur w;
	int ret = 0, i;

	cli_chain_init(t->c, &ch);
	if (dst && eof) {
		put_le64(eofb, *eof);
		si.data.p = eofb;
		si.data.len = 8;
		si.fid = dst->fid;
		ret = cli_chain_add(t->c, &ch, SMB2_SET_INFO, t->id, false, 0, 40 + 8, &w);
		if (!ret) {
			smb2_set_info_req_encode(&w, &si);
			cli_chain_end(t->c, &ch, &w);
			of[ch.n - 1] = NULL;	/* the truncation */
		}
	}
	if (!ret && src) {
		ret = cli_add_close(t, &ch, &src->fid, 0);
		of[ch.n - 1] = src;
	}
	if (!ret && dst) {
		ret = cli_add_close(t, &ch, &dst->fid, 0);
		of[ch.n - 1] = dst;
	}
	if (!ret && ch.n)
		ret = cli_chain_run(t->c, &ch);
	else
		cli_chain_abort(t->c, &ch);
	if (ret)
		return ret;
	for (i = 0; i < ch.n; i++)
		if (ch.rsp[i].status)
			return cli_status(t->c, ch.rsp[i].status, of[i] ? "close" : "truncate",
					  of[i] ? of[i]->path : dst->path);
	return 0;
}

/* CREATE(dst, open-if) and its IndexNumber. */
static int open_dst(struct rdax_tree *t, const char *dst, struct smb2_create_rsp *cd,
		    uint64_t *id, bool *ok)
{
	struct rdax_conn *c = t->c;
	struct cli_chain ch;
	int ret;

	cli_chain_init(c, &ch);
	ret = add_create(t, &ch, dst, FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OPEN_IF);
	if (!ret)
		ret = add_query_id(t, &ch);
	if (!ret)
		ret = cli_chain_run(c, &ch);
	else
		cli_chain_abort(c, &ch);
	if (ret)
		return ret;
	*ok = !ch.rsp[0].status && !smb2_create_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, cd);
	if (!*ok)
		return ch.rsp[0].status ? cli_status(c, ch.rsp[0].status, "open", dst) :
		       cli_err(c, -EPROTO, "malformed CREATE response from %s", c->host);
	*id = rsp_file_id(&ch.rsp[1]);
	return 0;
}

int64_t rdax_copy(struct rdax_tree *t, const char *src, const char *dst,
		  unsigned int flags,
		  int (*progress)(void *arg, uint64_t done, uint64_t total),
		  void *arg)
{
	struct rdax_file fs = { .t = t }, fd = { .t = t };
	struct smb2_create_rsp cs, cd;
	struct rdax_conn *c = t->c;
	bool server_only = flags & RDAX_COPY_SERVER_ONLY;
	bool want_key, have_key = false, src_ok, dst_ok = false, created = false;
	uint64_t src_id, dst_id = 0, eof;
	int ret, cdi = 0, fsi = 0;
	char msg[sizeof(c->errmsg)];
	uint32_t st = 0;
	struct copy_ctx x;
	struct cli_chain ch;
	uint64_t done = 0;

	cli_begin(c);
	if (flags & ~COPY_FLAGS)
		return cli_err(c, -EINVAL, "unknown copy flags %#x", flags & ~COPY_FLAGS);
	if ((flags & RDAX_COPY_CLIENT) && (flags & RDAX_COPY_SERVER_ONLY))
		return cli_err(c, -EINVAL, "RDAX_COPY_CLIENT and RDAX_COPY_SERVER_ONLY conflict");
	snprintf(fs.path, sizeof(fs.path), "%s", src);
	snprintf(fd.path, sizeof(fd.path), "%s", dst);
	want_key = !(flags & RDAX_COPY_CLIENT);

	/*
	 * One round trip: CREATE(src) + its IndexNumber, CREATE(dst, open-if)
	 * + its IndexNumber. A copy that must be server-side opens the
	 * destination only once the server gave the source's resume key, so
	 * that a server without server-side copy leaves it alone. Nothing is
	 * truncated up front: the data lands over the old, and a longer
	 * destination is cut to size at the end.
	 */
	cli_chain_init(c, &ch);
	ret = add_create(t, &ch, src, FILE_GENERIC_READ, FILE_OPEN);
	if (!ret)
		ret = add_query_id(t, &ch);
	if (!ret && want_key && !t->refcounting) {
		fsi = ch.n;
		ret = cli_add_query_info(t, &ch, &cli_related_fid, SMB2_0_INFO_FILESYSTEM,
					 FileFsAttributeInformation, FS_ATTR_OUT);
	}
	if (!ret && !server_only) {
		cdi = ch.n;
		ret = add_create(t, &ch, dst, FILE_GENERIC_READ | FILE_GENERIC_WRITE,
				 FILE_OPEN_IF);
		if (!ret)
			ret = add_query_id(t, &ch);
	}
	if (!ret)
		ret = cli_chain_run(c, &ch);
	else
		cli_chain_abort(c, &ch);
	if (ret)
		return cli_done(c, ret, "copy", src);

	src_ok = !ch.rsp[0].status &&
		 !smb2_create_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &cs);
	src_id = rsp_file_id(&ch.rsp[1]);
	if (fsi && src_ok)
		note_fs_attributes(t, &ch.rsp[fsi]);
	if (cdi) {
		dst_ok = !ch.rsp[cdi].status &&
			 !smb2_create_rsp_decode(ch.rsp[cdi].pdu, ch.rsp[cdi].len, &cd);
		dst_id = rsp_file_id(&ch.rsp[cdi + 1]);
	}
	if (src_ok)
		fs.fid = cs.fid;
	if (dst_ok) {
		fd.fid = cd.fid;
		created = cd.action == FILE_CREATED;
	}
	if (!src_ok || (cdi && !dst_ok)) {
		st = !src_ok ? ch.rsp[0].status : ch.rsp[cdi].status;
		ret = st ? cli_status(c, st, "open", !src_ok ? src : dst) :
		      cli_err(c, -EPROTO, "malformed CREATE response from %s", c->host);
		goto out_close;
	}

	ctx_init(&x, &fs, &fd, flags);
	x.try_dup = !(flags & (RDAX_COPY_CLIENT | RDAX_COPY_NO_CLONE));
	x.total = cs.end_of_file;
	x.progress = progress;
	x.arg = arg;
	if (want_key && x.total) {
		ret = request_resume_key(&x);
		if (ret && ret != -EOPNOTSUPP)
			goto out_close;
		have_key = !ret;
		if (!have_key && server_only) {
			ret = no_server_copy(&x);
			goto out_close;
		}
	}
	if (server_only) {
		ret = open_dst(t, dst, &cd, &dst_id, &dst_ok);
		if (ret)
			goto out_close;
		fd.fid = cd.fid;
		created = cd.action == FILE_CREATED;
	}
	x.sizes_known = true;
	x.src_size = cs.end_of_file;
	x.dst_size = cd.end_of_file;
	if (same_file(src_id, dst_id, src, dst)) {
		ret = cli_err(c, -EINVAL, "%s and %s are the same file", src, dst);
		goto out_close;
	}
	ret = copy_run(&x, have_key, 0, 0, cs.end_of_file, &done);
out_close:
	/* keep the first error's message over the close's */
	ret = cli_done(c, ret, "copy to", dst);
	snprintf(msg, sizeof(msg), "%s", c->errmsg);
	st = c->last_status;
	if (src_ok || dst_ok) {
		int cret;

		/* what was there before and is longer than the copy goes */
		eof = done;
		cret = close_pair(t, src_ok ? &fs : NULL, dst_ok ? &fd : NULL,
				  !ret && dst_ok && !created ? &eof : NULL);
		if (dst_ok)
			cli_lease_changed(t, dst);
		/* a destination created for a copy that wrote nothing: remove it */
		if (ret && dst_ok && created && !done)
			rdax_unlink(t, dst);
		if (!ret) {
			ret = cret;
		} else {
			snprintf(c->errmsg, sizeof(c->errmsg), "%s", msg);
			c->last_status = st;
		}
	}
	return ret ? ret : (int64_t)done;
}
