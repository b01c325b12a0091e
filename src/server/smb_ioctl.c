// SPDX-License-Identifier: MIT
/*
 * IOCTL: FSCTL_VALIDATE_NEGOTIATE_INFO, FSCTL_QUERY_NETWORK_INTERFACE_INFO,
 * server-side copy (FSCTL_SRV_REQUEST_RESUME_KEY, FSCTL_SRV_COPYCHUNK[_WRITE]).
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
	return srv_req_hold(req, *out) ? -ENOENT : 0;
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

int smb_ioctl(struct srv_req *req)
{
	struct smb2_ioctl_rsp rsp = { 0 };
	struct smb2_ioctl_req r;
	struct srv_open *o;
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
	/* handle-based controls check the handle first */
	if (r.ctl_code != FSCTL_VALIDATE_NEGOTIATE_INFO &&
	    r.ctl_code != FSCTL_QUERY_NETWORK_INTERFACE_INFO &&
	    r.ctl_code != FSCTL_DFS_GET_REFERRALS &&
	    r.ctl_code != FSCTL_DFS_GET_REFERRALS_EX) {
		if (!req->tree)
			return -E_SMB_NETWORK_NAME_DELETED;
		ret = srv_req_open(req, &r.fid, &o);
		if (ret)
			return ret;
		rsp.fid.persistent = o->persistent;
		rsp.fid.volatile_id = o->volatile_id;
		if (o->pipe && r.ctl_code != FSCTL_PIPE_TRANSCEIVE)
			return -E_SMB_INVALID_DEVICE_REQUEST;
	}
	switch (r.ctl_code) {
	case FSCTL_VALIDATE_NEGOTIATE_INFO:
		ret = validate_negotiate(req, &r, &d);
		break;
	case FSCTL_QUERY_NETWORK_INTERFACE_INFO:
		ret = network_interfaces(req, &d);
		break;
	case FSCTL_DFS_GET_REFERRALS:
	case FSCTL_DFS_GET_REFERRALS_EX:
		return -E_SMB_FS_DRIVER_REQUIRED;
	case FSCTL_SET_SPARSE:
		break;		/* files are sparse whenever they have holes */
	case FSCTL_CREATE_OR_GET_OBJECT_ID:
		ret = object_id(o, &d);
		break;
	case FSCTL_PIPE_TRANSCEIVE:
		ret = transceive(o, &r, &d);
		req->keep_body = ret == -E_SMB_BUFFER_OVERFLOW;
		break;
	case FSCTL_SRV_REQUEST_RESUME_KEY:
		ret = request_resume_key(o, &r, &d);
		break;
	case FSCTL_SRV_COPYCHUNK:
	case FSCTL_SRV_COPYCHUNK_WRITE:
		ret = copychunk(req, o, &r, &d);
		break;
	default:
		return -E_SMB_INVALID_DEVICE_REQUEST;
	}
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
