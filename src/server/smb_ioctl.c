// SPDX-License-Identifier: MIT
/*
 * IOCTL: FSCTL_VALIDATE_NEGOTIATE_INFO, FSCTL_QUERY_NETWORK_INTERFACE_INFO,
 * server-side copy (FSCTL_SRV_REQUEST_RESUME_KEY, FSCTL_SRV_COPYCHUNK[_WRITE],
 * FSCTL_DUPLICATE_EXTENTS_TO_FILE), sparse files (FSCTL_SET_SPARSE,
 * FSCTL_SET_ZERO_DATA, FSCTL_QUERY_ALLOCATED_RANGES), named pipes
 * (FSCTL_PIPE_TRANSCEIVE), by the fsctls[] table.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto/crypto.h"
#include "proto/fsctl.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

#define NI_ENTRY 152

/* [MS-SMB2] 3.3.5.15.12: the client's view of NEGOTIATE must match ours. */
static int validate_negotiate(struct srv_req *req, const struct smb2_ioctl_req *r,
			      struct wcur *d)
{
	struct srv_conn *c = req->conn;
	const uint8_t *in = r->input.p;
	uint16_t n, i;
	bool ok;

	if (r->input.len < 24)
		return -EINVAL;
	n = get_le16(in + 22);
	if (!range_ok(24, 2u * n, r->input.len))
		return -EINVAL;
	ok = get_le32(in) == c->client_caps &&
	     !memcmp(in + 4, c->client_guid, 16) &&
	     get_le16(in + 20) == c->client_secmode &&
	     n == c->nclient_dialects;
	for (i = 0; ok && i < n && i < SMB2_MAX_DIALECTS; i++)
		ok = get_le16(in + 24 + 2 * i) == c->client_dialects[i];
	if (!ok) {
		pr_warn("%s: VALIDATE_NEGOTIATE_INFO mismatch: possible downgrade, disconnecting",
			c->x->peer);
		c->closing = true;
		return -EACCES;
	}
	wcur_le32(d, c->server_caps);
	wcur_bytes(d, c->srv->guid, 16);
	wcur_le16(d, c->server_secmode);
	wcur_le16(d, c->dialect);
	req->force_sign = true;
	return 0;
}

/* [MS-FSCC] 2.3.7 FILE_OBJECTID_BUFFER from the inode: stable per file. */
static int object_id(struct srv_open *o, struct wcur *d)
{
	struct stat st;

	if (fstat(o->fd, &st))
		return -errno;
	wcur_le64(d, st.st_ino);
	wcur_le64(d, st.st_dev);
	wcur_zero(d, 48);	/* birth volume/object/domain ids */
	return 0;
}

/* NETWORK_INTERFACE_INFO entries ([MS-SMB2] 2.2.32.5), chained by Next. */
static int put_iface(struct wcur *d, const struct srv_iface *ifc, int *prev)
{
	int start = (int)d->off;
	uint8_t *e;

	e = wcur_reserve(d, NI_ENTRY);
	if (!e)
		return -ENOSPC;
	memset(e, 0, NI_ENTRY);
	if (*prev >= 0)
		put_le32(d->p + *prev, (uint32_t)(start - *prev));
	*prev = start;
	put_le32(e + 4, ifc->if_index);
	put_le32(e + 8, ifc->caps);
	put_le64(e + 16, ifc->speed);
	if (ifc->addr.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)&ifc->addr;

		put_le16(e + 24, 0x0002);
		memcpy(e + 28, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)&ifc->addr;

		put_le16(e + 24, 0x0017);
		memcpy(e + 32, &sin6->sin6_addr, 16);
		put_le32(e + 48, sin6->sin6_scope_id);
	}
	return 0;
}

static int network_interfaces(struct srv_req *req, struct wcur *d)
{
	struct srv_iface ifs[SRV_MAX_IFACES];
	int prev = -1, n, i;

	n = srv_ifaces(req->conn->srv->cfg, ifs, SRV_MAX_IFACES);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (put_iface(d, &ifs[i], &prev))
			return -E_SMB_BUFFER_OVERFLOW;
	return n ? 0 : -E_SMB_NOT_FOUND;
}

/* ---- server-side copy [MS-SMB2] 3.3.5.15.5, 3.3.5.15.6 ---- */

/*
 * A resume key is the open's FileId (volatile, persistent) and 8 bytes
 * of HMAC-SHA256 over it and the session id under a per-process random
 * secret: it names an open only for the session that asked for it, and
 * a made-up or foreign key fails the MAC.
 */
static uint8_t resume_secret[32];
static pthread_once_t resume_once = PTHREAD_ONCE_INIT;
static int resume_init_err;

static void resume_secret_init(void)
{
	resume_init_err = crypto_random(resume_secret, sizeof(resume_secret));
}

static int resume_mac(uint64_t sess_id, const uint8_t *fid, uint8_t mac[8])
{
	static const char label[] = "rdax resume key";
	uint8_t sid[8], out[32];
	struct iovec iov[3] = {
		{ (void *)label, sizeof(label) },
		{ sid, sizeof(sid) },
		{ (void *)fid, 16 },
	};
	int ret;

	if (pthread_once(&resume_once, resume_secret_init))
		return -EIO;
	if (resume_init_err)
		return resume_init_err;
	put_le64(sid, sess_id);
	ret = crypto_hmac_sha256v(resume_secret, sizeof(resume_secret), iov, 3, out);
	if (ret)
		return ret;
	memcpy(mac, out, 8);
	return 0;
}

static int request_resume_key(struct srv_open *o, const struct smb2_ioctl_req *r,
			      struct wcur *d)
{
	uint8_t key[FSCTL_RESUME_KEY_LEN];
	int ret;

	if (r->max_output_response < FSCTL_RESUME_KEY_RSP_MIN)
		return -EINVAL;
	put_le64(key, o->volatile_id);
	put_le64(key + 8, o->persistent);
	ret = resume_mac(o->sess_id, key, key + 16);
	if (ret)
		return ret;
	fsctl_resume_key_rsp_encode(d, key, r->max_output_response);
	return 0;
}

/* The open a resume key names in this session; -ENOENT otherwise. */
static int resume_key_open(struct srv_req *req, const uint8_t *key,
			   struct srv_open **out)
{
	struct smb2_fid fid;
	uint8_t mac[8], diff = 0;
	int i;

	if (resume_mac(req->sess->id, key, mac))
		return -ENOENT;
	for (i = 0; i < 8; i++)		/* constant time */
		diff |= mac[i] ^ key[16 + i];
	if (diff)
		return -ENOENT;
	fid.volatile_id = get_le64(key);
	fid.persistent = get_le64(key + 8);
	*out = srv_open_get(req->sess, &fid);
	if (!*out)
		return -ENOENT;
	if (srv_req_hold(req, *out))
		return -ENOENT;
	return srv_open_has_file(*out) ? 0 : -ENOENT;
}

/* Check every chunk against the limits before copying anything. */
static bool chunks_valid(const struct fsctl_copychunk *cc)
{
	struct fsctl_chunk ch;
	uint64_t total = 0;
	uint32_t i;

	if (cc->count > FSCTL_COPYCHUNK_MAX_CHUNKS)
		return false;
	for (i = 0; i < cc->count; i++) {
		fsctl_copychunk_get(cc, i, &ch);
		total += ch.len;
		if (!ch.len || ch.len > FSCTL_COPYCHUNK_MAX_CHUNK_LEN ||
		    total > FSCTL_COPYCHUNK_MAX_TOTAL || ch.src_off > INT64_MAX ||
		    (ch.dst_off > INT64_MAX && ch.dst_off != FSCTL_COPYCHUNK_OFF_EOF))
			return false;
	}
	return true;
}

/* One chunk: source range inside the file, no conflicting locks, copy. */
static int copy_chunk(struct srv_open *src, struct srv_open *dst,
		      const struct fsctl_chunk *ch, uint64_t *copied)
{
	uint64_t dst_off = ch->dst_off;
	struct stat st;
	int ret;

	*copied = 0;
	if (fstat(src->fd, &st))
		return -errno;
	if (ch->src_off > (uint64_t)st.st_size ||
	    ch->len > (uint64_t)st.st_size - ch->src_off)
		return -E_SMB_INVALID_VIEW_SIZE;
	if (dst_off == FSCTL_COPYCHUNK_OFF_EOF) {
		if (fstat(dst->fd, &st))
			return -errno;
		dst_off = (uint64_t)st.st_size;
	}
	if (dst_off > (uint64_t)INT64_MAX - ch->len)
		return -EFBIG;
	/* a read of the source and a write of the destination, as any I/O */
	ret = srv_brl_check_io(src, ch->src_off, ch->len, false);
	if (!ret)
		ret = srv_brl_check_io(dst, dst_off, ch->len, true);
	if (!ret) {
		srv_oplock_contend(dst->srv, dst);
		ret = srv_copy_range(src, ch->src_off, dst, dst_off, ch->len, copied);
	}
	if (!ret && *copied < ch->len)
		ret = -E_SMB_INVALID_VIEW_SIZE;	/* the source shrank */
	return ret;
}

/*
 * [MS-SMB2] 3.3.5.15.6. Errors found while copying and limit violations
 * still answer with an SRV_COPYCHUNK_RESPONSE: what was done, or the
 * limits (ChunksWritten = max chunks, ChunkBytesWritten = max chunk
 * size, TotalBytesWritten = max total).
 */
static int copychunk(struct srv_req *req, struct srv_open *dst,
		     const struct smb2_ioctl_req *r, struct wcur *d)
{
	struct fsctl_copychunk_rsp rsp = { 0 };
	struct fsctl_copychunk cc;
	struct fsctl_chunk ch;
	struct srv_open *src = NULL;
	uint64_t n;
	uint32_t i;
	int ret, bad;

	bad = fsctl_copychunk_decode(r->input.p, r->input.len, &cc);
	if (cc.key && resume_key_open(req, cc.key, &src))
		return -ENOENT;
	if (r->max_output_response < FSCTL_COPYCHUNK_RSP_LEN)
		return -EINVAL;
	if (bad || !src || !chunks_valid(&cc)) {
		rsp.chunks_written = FSCTL_COPYCHUNK_MAX_CHUNKS;
		rsp.chunk_bytes_written = FSCTL_COPYCHUNK_MAX_CHUNK_LEN;
		rsp.total_bytes_written = FSCTL_COPYCHUNK_MAX_TOTAL;
		ret = -EINVAL;
		goto out;
	}
	if (!(src->access & (FILE_READ_DATA | FILE_EXECUTE)) ||
	    !(dst->access & (FILE_WRITE_DATA | FILE_APPEND_DATA)) ||
	    (r->ctl_code == FSCTL_SRV_COPYCHUNK && !(dst->access & FILE_READ_DATA)))
		return -EACCES;
	if (src->is_dir || dst->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	ret = 0;
	for (i = 0; i < cc.count; i++) {
		fsctl_copychunk_get(&cc, i, &ch);
		ret = copy_chunk(src, dst, &ch, &n);
		rsp.total_bytes_written += (uint32_t)n;
		if (ret) {
			rsp.chunk_bytes_written = (uint32_t)n;
			break;
		}
		rsp.chunks_written++;
	}
	if (rsp.total_bytes_written && dst->write_through) {
		int fret = srv_fflush(dst);

		if (!ret)
			ret = fret;
	}
out:
	fsctl_copychunk_rsp_encode(d, &rsp);
	if (ret)
		req->keep_body = true;
	return ret;
}

/* A named pipe: the input as a WRITE, the output as a READ. */
static int transceive(struct srv_open *o, const struct smb2_ioctl_req *r, struct wcur *d)
{
	size_t n;
	int ret;

	if (!o->pipe)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	ret = srv_pipe_write(o->pipe, r->input.p, r->input.len);
	if (ret)
		return ret;
	ret = srv_pipe_read(o->pipe, d->p, d->cap, &n);
	if (ret && ret != -E_SMB_BUFFER_OVERFLOW)
		return ret;
	d->off = n;
	return ret;
}

/* ---- sparse files [MS-FSCC] 2.3.64, 2.3.67, 2.3.33 ---- */

static int open_sparse(struct srv_req *req, struct srv_open *o, struct srv_attr *a)
{
	int ret = srv_attr_get(o->share, o->fd, NULL, NULL, req->tree->ident, a);

	if (ret)
		return ret;
	return !!(a->attrib & FILE_ATTRIBUTE_SPARSE_FILE);
}

/* No buffer or a non-zero SetSparse byte sets it, as Windows. */
static int set_sparse(struct srv_req *req, struct srv_open *o,
		      const struct smb2_ioctl_req *r, struct wcur *d)
{
	bool sparse = !r->input.len || r->input.p[0];
	struct srv_attr a;
	int ret;

	(void)d;
	if (!(o->access & (FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES | FILE_APPEND_DATA)))
		return -EACCES;
	if (o->is_dir)
		return -EINVAL;
	if (o->file && o->file->stream)
		return 0;	/* as Samba: a stream's flag is not kept */
	ret = open_sparse(req, o, &a);
	if (ret < 0)
		return ret;
	return srv_attr_set_sparse(o->share, o->fd, &a, sparse);
}

/* Zeros over [FileOffset, BeyondFinalZero), deallocated where it can be. */
static int zero_data(struct srv_req *req, struct srv_open *o,
		     const struct smb2_ioctl_req *r, struct wcur *d)
{
	uint64_t off, beyond;
	int ret;

	(void)req;
	(void)d;
	if (!(o->access & FILE_WRITE_DATA))
		return -EACCES;
	if (fsctl_zero_data_decode(r->input.p, r->input.len, &off, &beyond) ||
	    off > INT64_MAX || beyond > INT64_MAX || beyond < off)
		return -EINVAL;
	if (o->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (beyond == off)
		return 0;
	ret = srv_brl_check_io(o, off, beyond - off, true);
	if (ret)
		return ret;
	srv_oplock_contend(o->srv, o);
	ret = srv_punch(o, off, beyond - off);
	if (!ret && o->write_through)
		ret = srv_fflush(o);
	return ret;
}

/*
 * The data ranges in [FileOffset, FileOffset + Length) below the end of
 * file: one range for a file not marked sparse (as Windows and Samba),
 * SEEK_DATA/SEEK_HOLE for a sparse one. Fewer ranges than found fit the
 * output: as many as fit and STATUS_BUFFER_OVERFLOW; not one fits:
 * STATUS_BUFFER_TOO_SMALL.
 */
static int allocated_ranges(struct srv_req *req, struct srv_open *o,
			    const struct smb2_ioctl_req *r, struct wcur *d)
{
	struct fsctl_range q, out;
	uint64_t end, at, data, hole;
	struct srv_attr a;
	struct stat st;
	int sparse, ret;

	if (!(o->access & FILE_READ_DATA))
		return -EACCES;
	if (fsctl_range_decode(r->input.p, r->input.len, &q) ||
	    q.off > INT64_MAX || q.len > INT64_MAX || q.len > INT64_MAX - q.off)
		return -EINVAL;
	if (o->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	sparse = open_sparse(req, o, &a);
	if (sparse < 0)
		return sparse;
	ret = srv_fstat(o, &st);	/* a stream's own size */
	if (ret)
		return ret;
	end = q.off + q.len;
	if (end > (uint64_t)st.st_size)
		end = (uint64_t)st.st_size;
	for (at = q.off; at < end; at = hole) {
		if (sparse) {
			ret = srv_data_range(o, at, &data, &hole);
			if (ret <= 0)
				return ret;
		} else {
			data = at;
			hole = end;
		}
		if (data >= end)
			break;
		out.off = data;
		out.len = (hole < end ? hole : end) - data;
		if (d->cap - d->off < FSCTL_RANGE_LEN) {
			if (!d->off)
				return -ERANGE;
			req->keep_body = true;
			return -E_SMB_BUFFER_OVERFLOW;
		}
		fsctl_range_encode(d, &out);
	}
	return 0;
}

/* ---- FSCTL_DUPLICATE_EXTENTS_TO_FILE [MS-FSCC] 2.3.8, [MS-FSA] 2.1.5.9.4 ---- */

/* The source open named in the request, of this session; held. */
static int dup_source(struct srv_req *req, const struct fsctl_dup_extents *x,
		      struct srv_open **out)
{
	struct smb2_fid fid = { .persistent = x->src_persistent,
				.volatile_id = x->src_volatile };

	*out = srv_open_get(req->sess, &fid);
	if (!*out)
		return -E_SMB_INVALID_HANDLE;
	if (srv_req_hold(req, *out))
		return -E_SMB_INVALID_HANDLE;
	return srv_open_has_file(*out) ? 0 : -E_SMB_INVALID_HANDLE;
}

static int dup_extents(struct srv_req *req, struct srv_open *dst,
		       const struct smb2_ioctl_req *r, struct wcur *d)
{
	struct fsctl_dup_extents x;
	struct srv_open *src;
	struct srv_attr sa, da;
	int ssparse, dsparse, ret;

	(void)d;
	if (fsctl_dup_extents_decode(r->input.p, r->input.len, &x))
		return -EINVAL;
	if (!srv_share_reflinks(dst->share, req->tree->ident))
		return -EOPNOTSUPP;
	ret = dup_source(req, &x, &src);
	if (ret)
		return ret;
	if (src->share != dst->share)
		return -EOPNOTSUPP;
	if (!(src->access & FILE_READ_DATA) || !(dst->access & FILE_WRITE_DATA))
		return -EACCES;
	if (src->is_dir || dst->is_dir)
		return -E_SMB_INVALID_DEVICE_REQUEST;
	if (!x.len)
		return 0;
	if (x.src_off > INT64_MAX || x.dst_off > INT64_MAX ||
	    x.len > INT64_MAX - x.src_off || x.len > INT64_MAX - x.dst_off)
		return -EINVAL;
	ssparse = open_sparse(req, src, &sa);
	if (ssparse < 0)
		return ssparse;
	dsparse = open_sparse(req, dst, &da);
	if (dsparse < 0)
		return dsparse;
	/* as Windows Server 2016: a sparse source needs a sparse target */
	if (ssparse && !dsparse)
		return -EOPNOTSUPP;
	if (x.src_off + x.len > (uint64_t)sa.st.st_size)
		return -EOPNOTSUPP;
	/* the target does not grow: the count stops at its end */
	if (x.dst_off > (uint64_t)da.st.st_size)
		return -EINVAL;
	if (x.dst_off + x.len > (uint64_t)da.st.st_size)
		x.len = (uint64_t)da.st.st_size - x.dst_off;
	if (!x.len)
		return 0;	/* FICLONERANGE would take 0 as "to the end" */
	if (sa.st.st_ino == da.st.st_ino && sa.st.st_dev == da.st.st_dev &&
	    x.src_off < x.dst_off + x.len && x.dst_off < x.src_off + x.len)
		return -EOPNOTSUPP;
	/* byte-range locks do not stop it, as on Windows (unlike copychunk) */
	srv_oplock_contend(dst->srv, dst);
	ret = srv_clone(src, x.src_off, dst, x.dst_off, x.len);
	if (!ret && dst->write_through)
		ret = srv_fflush(dst);
	return ret;
}

/* ---- the table ---- */

static int dfs_referrals(struct srv_req *req, struct srv_open *o,
			 const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)req, (void)o, (void)r, (void)d;
	return -E_SMB_FS_DRIVER_REQUIRED;
}

static int pipe_transceive(struct srv_req *req, struct srv_open *o,
			   const struct smb2_ioctl_req *r, struct wcur *d)
{
	int ret = transceive(o, r, d);

	req->keep_body = ret == -E_SMB_BUFFER_OVERFLOW;
	return ret;
}

static int get_reparse_point(struct srv_req *req, struct srv_open *o,
			     const struct smb2_ioctl_req *r, struct wcur *d)
{
	/* a symlink or special file opened itself (FILE_OPEN_REPARSE_POINT) */
	(void)req, (void)r;
	return srv_reparse_get(o, d);
}

static int set_reparse_point(struct srv_req *req, struct srv_open *o,
			     const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)d;
	if (req->tree->read_only)
		return -EACCES;
	return srv_reparse_set(req, o, r->input.p, r->input.len);
}

static int validate_negotiate_h(struct srv_req *req, struct srv_open *o,
				const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)o;
	return validate_negotiate(req, r, d);
}

static int network_interfaces_h(struct srv_req *req, struct srv_open *o,
				const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)o, (void)r;
	return network_interfaces(req, d);
}

static int object_id_h(struct srv_req *req, struct srv_open *o,
		       const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)req, (void)r;
	return object_id(o, d);
}

static int resume_key_h(struct srv_req *req, struct srv_open *o,
			const struct smb2_ioctl_req *r, struct wcur *d)
{
	(void)req;
	return request_resume_key(o, r, d);
}

#define F_HANDLE 1	/* on an open: the FileId is checked first */
#define F_PIPE 2	/* also on a named pipe (IPC$) */

static const struct {
	uint32_t code;
	unsigned int flags;
	int (*fn)(struct srv_req *req, struct srv_open *o,
		  const struct smb2_ioctl_req *r, struct wcur *d);
} fsctls[] = {
	{ FSCTL_VALIDATE_NEGOTIATE_INFO, 0, validate_negotiate_h },
	{ FSCTL_QUERY_NETWORK_INTERFACE_INFO, 0, network_interfaces_h },
	{ FSCTL_DFS_GET_REFERRALS, 0, dfs_referrals },
	{ FSCTL_DFS_GET_REFERRALS_EX, 0, dfs_referrals },
	{ FSCTL_PIPE_TRANSCEIVE, F_HANDLE | F_PIPE, pipe_transceive },
	{ FSCTL_CREATE_OR_GET_OBJECT_ID, F_HANDLE, object_id_h },
	{ FSCTL_GET_REPARSE_POINT, F_HANDLE, get_reparse_point },
	{ FSCTL_SET_REPARSE_POINT, F_HANDLE, set_reparse_point },
	{ FSCTL_SET_SPARSE, F_HANDLE, set_sparse },
	{ FSCTL_SET_ZERO_DATA, F_HANDLE, zero_data },
	{ FSCTL_QUERY_ALLOCATED_RANGES, F_HANDLE, allocated_ranges },
	{ FSCTL_SRV_REQUEST_RESUME_KEY, F_HANDLE, resume_key_h },
	{ FSCTL_SRV_COPYCHUNK, F_HANDLE, copychunk },
	{ FSCTL_SRV_COPYCHUNK_WRITE, F_HANDLE, copychunk },
	{ FSCTL_DUPLICATE_EXTENTS_TO_FILE, F_HANDLE, dup_extents },
};

int smb_ioctl(struct srv_req *req)
{
	struct smb2_ioctl_rsp rsp = { 0 };
	struct smb2_ioctl_req r;
	struct srv_open *o = NULL;
	unsigned int i, n = sizeof(fsctls) / sizeof(fsctls[0]);
	struct wcur d;
	uint32_t cap;
	int ret;

	if (smb2_ioctl_req_decode(req->pdu, req->len, &r))
		return -EINVAL;
	if (!(r.flags & SMB2_0_IOCTL_IS_FSCTL))
		return -EOPNOTSUPP;
	if (r.max_output_response > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	cap = r.max_output_response;
	ret = srv_req_room(req, 48 + (size_t)cap);
	if (ret)
		return ret;
	wcur_init(&d, req->w.p + 112, cap);
	rsp.ctl_code = r.ctl_code;
	rsp.fid = r.fid;
	for (i = 0; i < n && fsctls[i].code != r.ctl_code; i++)
		;
	/* handle-based controls (and unknown ones) check the handle first */
	if (i == n || fsctls[i].flags & F_HANDLE) {
		if (!req->tree)
			return -E_SMB_NETWORK_NAME_DELETED;
		ret = srv_req_open(req, &r.fid, &o);
		if (ret)
			return ret;
		rsp.fid.persistent = o->persistent;
		rsp.fid.volatile_id = o->volatile_id;
	}
	if (i == n || (o && o->pipe && !(fsctls[i].flags & F_PIPE)))
		return -E_SMB_INVALID_DEVICE_REQUEST;
	ret = fsctls[i].fn(req, o, &r, &d);
	/* keep_body: an error status that still carries an output buffer */
	if (ret && !req->keep_body)
		return ret;
	if (d.err) {
		req->keep_body = false;
		return -ERANGE;
	}
	smb2_ioctl_rsp_encode(&req->w, &rsp, (uint32_t)d.off);
	req->w.off += d.off;
	return ret;
}
