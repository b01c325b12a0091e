// SPDX-License-Identifier: MIT
/* IOCTL: FSCTL_VALIDATE_NEGOTIATE_INFO, FSCTL_QUERY_NETWORK_INTERFACE_INFO. */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

#define NI_ENTRY 152
#define NI_MAX 32

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

static uint64_t link_speed(const char *ifname)
{
	char p[128];
	FILE *f;
	long mbps = 0;

	snprintf(p, sizeof(p), "/sys/class/net/%s/speed", ifname);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%ld", &mbps) != 1)
			mbps = 0;
		fclose(f);
	}
	return mbps > 0 ? (uint64_t)mbps * 1000000 : 10000000000ull;
}

static int put_iface(struct wcur *d, struct ifaddrs *ifa, int *prev)
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
	put_le32(e + 4, if_nametoindex(ifa->ifa_name));
	put_le32(e + 8, 0);		/* capabilities: no RSS, no RDMA yet */
	put_le64(e + 16, link_speed(ifa->ifa_name));
	if (ifa->ifa_addr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ifa->ifa_addr;

		put_le16(e + 24, 0x0002);
		memcpy(e + 28, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const void *)ifa->ifa_addr;

		put_le16(e + 24, 0x0017);
		memcpy(e + 32, &sin6->sin6_addr, 16);
		put_le32(e + 48, sin6->sin6_scope_id);
	}
	return 0;
}

static int network_interfaces(struct srv_req *req, struct wcur *d)
{
	struct ifaddrs *ifs, *ifa;
	int prev = -1, n = 0, pass;

	if (getifaddrs(&ifs))
		return -errno;
	/* real interfaces first; loopback only if there is nothing else */
	for (pass = 0; pass < 2 && !n; pass++) {
		for (ifa = ifs; ifa && n < NI_MAX; ifa = ifa->ifa_next) {
			if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
				continue;
			if (ifa->ifa_addr->sa_family != AF_INET &&
			    ifa->ifa_addr->sa_family != AF_INET6)
				continue;
			if (!pass == !!(ifa->ifa_flags & IFF_LOOPBACK))
				continue;
			if (put_iface(d, ifa, &prev))
				break;
			n++;
		}
	}
	freeifaddrs(ifs);
	return n ? 0 : -E_SMB_NOT_FOUND;
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
		return -E_SMB_FILE_CLOSED;
	default:
		return -E_SMB_INVALID_DEVICE_REQUEST;
	}
	if (ret)
		return ret;
	if (d.err)
		return -ERANGE;
	smb2_ioctl_rsp_encode(&req->w, &rsp, (uint32_t)d.off);
	req->w.off += d.off;
	return 0;
}
