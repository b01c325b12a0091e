// SPDX-License-Identifier: MIT
/*
 * Named pipes on IPC$ and the DCE/RPC server behind them: srvsvc and
 * wkssvc, enough for share enumeration and server information.
 *
 * A pipe is a byte stream of PDUs. WRITE (or the input of an IOCTL
 * FSCTL_PIPE_TRANSCEIVE) appends to it; each complete PDU is answered
 * at once into the pipe's output, which READ (or the transceive's
 * output) takes one fragment at a time. REQUEST fragments are
 * reassembled (bounded) before their opnum's handler runs; a response
 * is split at the client's max_recv_frag. A PDU that breaks the
 * protocol's framing breaks the pipe; a bad request gets a FAULT.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/dcerpc.h"
#include "proto/ntstatus.h"
#include "proto/srvsvc.h"
#include "server/server.h"
#include "util/log.h"

#define RPC_MAX_FRAG 4280u		/* our max_xmit/max_recv (Samba's) */
#define RPC_IN_MAX 65536u		/* one PDU: frag_length is 16 bits */
#define RPC_REQ_MAX (256u << 10)	/* a reassembled request's stub */
#define RPC_REQ_MAX_FRAGS 1024u
#define RPC_OUT_FIRST (16u << 10)
#define RPC_OUT_MAX (16u << 20)		/* one response's stub */
#define RPC_PENDING_MAX (32u << 20)	/* output the client has not read */
#define RPC_MAX_CTX 16u
#define RPC_PATH_MAX (sizeof(((struct srv_share *)0)->path) + 2)	/* "C:" + path */

typedef int (*rpc_fn)(struct srv *srv, const uint8_t *in, size_t len, struct ndr_w *out);

struct rpc_iface {
	const char *name;		/* pipe name */
	struct dcerpc_syntax syntax;
	const rpc_fn *ops;
	uint16_t nops;
};

struct srv_pipe {
	pthread_mutex_t lock;
	struct srv *srv;
	const struct rpc_iface *iface;
	bool bound;
	bool broken;
	uint16_t ctx_id;
	uint16_t max_xmit;		/* the client's max_recv_frag */
	/* bytes written that do not make a whole PDU yet */
	uint8_t *in;
	size_t in_len;
	/* the request being reassembled */
	bool in_req;
	bool skipping;			/* the rest of a call that faulted */
	uint32_t call_id;
	uint16_t opnum;
	uint8_t *req;
	size_t req_len;
	unsigned int req_frags;
	/* response PDUs not read yet */
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	size_t frag_left;		/* of the fragment being read */
};

/* ---- srvsvc ---- */

/* "C:\path\to\share" as Samba shows a share's path. */
static void share_path(const struct srv_share *sh, char *buf, size_t cap)
{
	char *p;

	snprintf(buf, cap, "C:%s", sh->ipc ? "\\tmp" : sh->path);
	for (p = buf; *p; p++)
		if (*p == '/')
			*p = '\\';
}

static void share_info(const struct srv_share *sh,
		       struct srvsvc_share *s, char *path, size_t cap)
{
	share_path(sh, path, cap);
	s->name = sh->name;
	s->type = sh->ipc ? STYPE_IPC | STYPE_SPECIAL : STYPE_DISKTREE;
	s->comment = sh->comment;
	s->path = path;
	s->users = 0;
}

/* NetShareEnumAll, and NetShareEnum (special shares, "NAME$", left out) */
static int share_enum(struct srv *srv, const uint8_t *in, size_t len,
		      struct ndr_w *out, bool special)
{
	struct srv_config *cfg = srv->cfg;
	struct srvsvc_share *shares;
	struct srvsvc_enum_req r;
	char (*paths)[RPC_PATH_MAX];
	struct srv_share *sh;
	uint32_t n = 0;
	/* a reload may add shares meanwhile: this many are listed */
	int i, nshares = srv_config_nshares(cfg);

	if (srvsvc_enum_req_decode(in, len, &r))
		return -EBADMSG;
	shares = calloc((size_t)nshares + 1, sizeof(*shares));
	paths = calloc((size_t)nshares + 1, sizeof(*paths));
	if (!shares || !paths) {
		free(shares);
		free(paths);
		return -ENOMEM;
	}
	for (i = 0; i < nshares; i++) {
		sh = cfg->shares[i];
		if (atomic_load(&sh->removed) || !sh->browseable ||
		    (!special && sh->name[strlen(sh->name) - 1] == '$'))
			continue;
		share_info(sh, &shares[n], paths[n], sizeof(paths[n]));
		n++;
	}
	srvsvc_enum_rsp_encode(out, &r, shares, n);
	free(shares);
	free(paths);
	return 0;
}

static int net_share_enum_all(struct srv *srv, const uint8_t *in, size_t len,
			      struct ndr_w *out)
{
	return share_enum(srv, in, len, out, true);
}

static int net_share_enum(struct srv *srv, const uint8_t *in, size_t len,
			  struct ndr_w *out)
{
	return share_enum(srv, in, len, out, false);
}

static int net_share_get_info(struct srv *srv, const uint8_t *in, size_t len,
			      struct ndr_w *out)
{
	struct srvsvc_getinfo_req r;
	struct srvsvc_share s;
	struct srv_share *sh;
	char path[RPC_PATH_MAX];

	if (srvsvc_getinfo_req_decode(in, len, &r))
		return -EBADMSG;
	sh = srv_share_find(srv->cfg, r.name);
	if (!sh) {
		srvsvc_getinfo_rsp_encode(out, r.level, NULL, WERR_INVALID_NAME);
		return 0;
	}
	share_info(sh, &s, path, sizeof(path));
	srvsvc_getinfo_rsp_encode(out, r.level, &s, WERR_OK);
	return 0;
}

static void server_info(struct srv *srv, struct srvsvc_server *s)
{
	s->name = srv->cfg->netbios_name;
	s->domain = srv->cfg->workgroup;
	s->comment = srv->cfg->server_string;
	s->major = 6;			/* as Windows Server 2008 R2 and Samba */
	s->minor = 1;
	s->type = SV_TYPE_RDAX;
}

static int net_server_get_info(struct srv *srv, const uint8_t *in, size_t len,
			       struct ndr_w *out)
{
	struct srvsvc_server s;
	uint32_t level;

	if (srvsvc_level_req_decode(in, len, &level))
		return -EBADMSG;
	server_info(srv, &s);
	srvsvc_srvinfo_rsp_encode(out, level, &s);
	return 0;
}

static int net_wksta_get_info(struct srv *srv, const uint8_t *in, size_t len,
			      struct ndr_w *out)
{
	struct srvsvc_server s;
	uint32_t level;

	if (srvsvc_level_req_decode(in, len, &level))
		return -EBADMSG;
	server_info(srv, &s);
	wkssvc_info_rsp_encode(out, level, &s);
	return 0;
}

static const rpc_fn srvsvc_ops[] = {
	[SRVSVC_NET_SHARE_ENUM_ALL] = net_share_enum_all,
	[SRVSVC_NET_SHARE_GET_INFO] = net_share_get_info,
	[SRVSVC_NET_SERVER_GET_INFO] = net_server_get_info,
	[SRVSVC_NET_SHARE_ENUM] = net_share_enum,
};

static const rpc_fn wkssvc_ops[] = {
	[WKSSVC_NET_WKSTA_GET_INFO] = net_wksta_get_info,
};

static const struct rpc_iface ifaces[] = {
	{ "srvsvc",	/* 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3.0 */
	  { { 0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01,
	      0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88 }, 3 },
	  srvsvc_ops, sizeof(srvsvc_ops) / sizeof(srvsvc_ops[0]) },
	{ "wkssvc",	/* 6bffd098-a112-3610-9833-46c3f87e345a v1.0 */
	  { { 0x98, 0xd0, 0xff, 0x6b, 0x12, 0xa1, 0x10, 0x36,
	      0x98, 0x33, 0x46, 0xc3, 0xf8, 0x7e, 0x34, 0x5a }, 1 },
	  wkssvc_ops, sizeof(wkssvc_ops) / sizeof(wkssvc_ops[0]) },
};

/* ---- pipes ---- */

int srv_pipe_open(struct srv *srv, const char *name, struct srv_pipe **out)
{
	const struct rpc_iface *iface = NULL;
	struct srv_pipe *p;
	size_t i;

	/* "srvsvc", "\srvsvc", "\PIPE\srvsvc" */
	while (*name == '\\' || *name == '/')
		name++;
	if (!strncasecmp(name, "PIPE", 4) && (name[4] == '\\' || name[4] == '/'))
		name += 5;
	for (i = 0; i < sizeof(ifaces) / sizeof(ifaces[0]); i++)
		if (!strcasecmp(name, ifaces[i].name))
			iface = &ifaces[i];
	if (!iface)
		return -E_SMB_OBJECT_NAME_NOT_FOUND;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in = malloc(RPC_IN_MAX);
	if (!p->in) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	p->srv = srv;
	p->iface = iface;
	p->max_xmit = DCERPC_MIN_FRAG;	/* until a BIND says */
	*out = p;
	return 0;
}

void srv_pipe_free(struct srv_pipe *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->in);
	free(p->req);
	free(p->out);
	free(p);
}

/* Room for n more output bytes. */
static int out_room(struct srv_pipe *p, size_t n)
{
	size_t cap;
	uint8_t *b;

	if (p->out_off && p->out_len + n > p->out_cap) {
		memmove(p->out, p->out + p->out_off, p->out_len - p->out_off);
		p->out_len -= p->out_off;
		p->out_off = 0;
	}
	if (p->out_len - p->out_off + n > RPC_PENDING_MAX)
		return -ENOMEM;
	if (p->out_len + n <= p->out_cap)
		return 0;
	cap = p->out_cap ? p->out_cap : 8192;
	while (cap < p->out_len + n)
		cap *= 2;
	b = realloc(p->out, cap);
	if (!b)
		return -ENOMEM;
	p->out = b;
	p->out_cap = cap;
	return 0;
}

static struct wcur out_cursor(struct srv_pipe *p, size_t n)
{
	struct wcur w;

	wcur_init(&w, p->out + p->out_len, n);
	return w;
}

static void fault(struct srv_pipe *p, uint32_t call_id, uint32_t status)
{
	struct wcur w;

	if (out_room(p, DCERPC_FAULT_LEN))
		return;
	w = out_cursor(p, DCERPC_FAULT_LEN);
	dcerpc_fault_encode(&w, call_id, p->ctx_id, status);
	p->out_len += w.off;
	log_ratelimited(LOG_INFO, "rpc %s: call %u fault 0x%08x", p->iface->name,
			call_id, status);
}

/* A context we accept: our interface in NDR 2.0. */
static void bind_result(const struct srv_pipe *p, const struct dcerpc_ctx *c,
			struct dcerpc_result *r)
{
	struct dcerpc_syntax x;
	uint16_t features;
	unsigned int j;

	memset(r, 0, sizeof(*r));
	r->result = DCERPC_PROVIDER_REJECT;
	r->reason = DCERPC_REASON_TRANSFER;
	for (j = 0; j < c->n_xfer; j++) {
		dcerpc_ctx_xfer(c, j, &x);
		if (dcerpc_is_btfn(&x, &features)) {
			/* no optional features: none acknowledged */
			r->result = DCERPC_NEGOTIATE_ACK;
			r->reason = 0;
			return;
		}
		if (dcerpc_syntax_eq(&x, &dcerpc_ndr20)) {
			if (!dcerpc_syntax_eq(&c->abstract, &p->iface->syntax)) {
				r->reason = DCERPC_REASON_ABSTRACT;
				return;
			}
			r->result = DCERPC_ACCEPT;
			r->reason = 0;
			r->xfer = dcerpc_ndr20;
			return;
		}
	}
}

static int do_bind(struct srv_pipe *p, const uint8_t *pdu, const struct dcerpc_hdr *h)
{
	struct dcerpc_result res[RPC_MAX_CTX];
	struct dcerpc_bind_ack a = { 0 };
	struct dcerpc_bind b;
	struct dcerpc_ctx c;
	char addr[32];
	unsigned int i;
	struct wcur w;
	int ret;

	ret = out_room(p, 128 + RPC_MAX_CTX * 24);
	if (ret)
		return ret;
	w = out_cursor(p, 128 + RPC_MAX_CTX * 24);
	if (dcerpc_bind_decode(pdu, h, &b) || b.n_ctx > RPC_MAX_CTX ||
	    b.max_recv < DCERPC_MIN_FRAG || (h->ptype == DCERPC_BIND && p->bound)) {
		if (h->ptype != DCERPC_BIND)
			return -EPROTO;
		dcerpc_bind_nak_encode(&w, h->call_id, DCERPC_REASON_NONE);
		p->out_len += w.off;
		return 0;
	}
	for (i = 0; i < b.n_ctx; i++) {
		dcerpc_bind_ctx(&b, i, &c);
		bind_result(p, &c, &res[i]);
		if (res[i].result == DCERPC_ACCEPT && !p->bound) {
			p->bound = true;
			p->ctx_id = c.id;
		}
	}
	if (h->ptype == DCERPC_BIND)
		p->max_xmit = b.max_recv < RPC_MAX_FRAG ? b.max_recv : RPC_MAX_FRAG;
	snprintf(addr, sizeof(addr), "\\PIPE\\%s", p->iface->name);
	a.max_xmit = p->max_xmit;
	a.max_recv = RPC_MAX_FRAG;
	a.assoc_group = b.assoc_group ? b.assoc_group : 0x12345;
	a.sec_addr = h->ptype == DCERPC_BIND ? addr : "";
	a.n = b.n_ctx;
	a.res = res;
	dcerpc_bind_ack_encode(&w, h->ptype == DCERPC_BIND ? DCERPC_BIND_ACK :
			       DCERPC_ALTER_RESP, h->call_id, &a);
	if (w.err)
		return -EIO;
	p->out_len += w.off;
	return 0;
}

/* Run the reassembled request and queue its response fragments. */
static void run_request(struct srv_pipe *p)
{
	size_t cap = RPC_OUT_FIRST, off, chunk, max, nfrag;
	rpc_fn fn = p->opnum < p->iface->nops ? p->iface->ops[p->opnum] : NULL;
	struct ndr_w n;
	uint8_t *stub = NULL, *b, flags;
	struct wcur w;
	int ret;

	if (!fn) {
		fault(p, p->call_id, DCERPC_NCA_OP_RNG_ERROR);
		return;
	}
	for (;;) {
		b = realloc(stub, cap);
		if (!b) {
			fault(p, p->call_id, DCERPC_FAULT_NO_MEMORY);
			goto out;
		}
		stub = b;
		ndr_w_init(&n, stub, cap);
		ret = fn(p->srv, p->req, p->req_len, &n);
		if (ret || !n.w.err)
			break;
		if (cap >= RPC_OUT_MAX) {
			ret = -ENOMEM;
			break;
		}
		cap *= 4;
	}
	if (ret) {
		fault(p, p->call_id, ret == -EBADMSG ? DCERPC_FAULT_NDR :
						      DCERPC_FAULT_NO_MEMORY);
		goto out;
	}
	max = dcerpc_frag_stub_max(p->max_xmit);
	nfrag = n.w.off ? (n.w.off + max - 1) / max : 1;
	if (out_room(p, n.w.off + nfrag * DCERPC_REQ_HDR_LEN)) {
		fault(p, p->call_id, DCERPC_FAULT_NO_MEMORY);
		goto out;
	}
	off = 0;
	do {
		chunk = n.w.off - off < max ? n.w.off - off : max;
		flags = (off ? 0 : DCERPC_PFC_FIRST_FRAG) |
			(off + chunk == n.w.off ? DCERPC_PFC_LAST_FRAG : 0);
		w = out_cursor(p, DCERPC_REQ_HDR_LEN + chunk);
		dcerpc_response_encode(&w, p->call_id, flags, p->ctx_id,
				       (uint32_t)(n.w.off - off), stub + off, chunk);
		p->out_len += w.off;
		off += chunk;
	} while (off < n.w.off);
out:
	free(stub);
}

static void req_reset(struct srv_pipe *p)
{
	free(p->req);
	p->req = NULL;
	p->req_len = 0;
	p->req_frags = 0;
	p->in_req = false;
}

/* Fault a call whose reassembly failed; its later fragments are dropped. */
static void req_fail(struct srv_pipe *p, const struct dcerpc_hdr *h, uint32_t status)
{
	req_reset(p);
	p->skipping = !(h->flags & DCERPC_PFC_LAST_FRAG);
	p->call_id = h->call_id;
	fault(p, h->call_id, status);
}

static void do_request(struct srv_pipe *p, const uint8_t *pdu, const struct dcerpc_hdr *h)
{
	struct dcerpc_request r;
	uint8_t *b;

	if (p->skipping && !(h->flags & DCERPC_PFC_FIRST_FRAG) && h->call_id == p->call_id) {
		p->skipping = !(h->flags & DCERPC_PFC_LAST_FRAG);
		return;
	}
	p->skipping = false;

	if (dcerpc_request_decode(pdu, h, &r) || !p->bound) {
		req_reset(p);
		fault(p, h->call_id, DCERPC_NCA_PROTO_ERROR);
		return;
	}
	if (h->flags & DCERPC_PFC_FIRST_FRAG) {
		req_reset(p);
		p->in_req = true;
		p->call_id = h->call_id;
		p->opnum = r.opnum;
		if (r.ctx_id != p->ctx_id) {
			req_fail(p, h, DCERPC_NCA_UNK_IF);
			return;
		}
	} else if (!p->in_req || h->call_id != p->call_id) {
		req_reset(p);
		fault(p, h->call_id, DCERPC_NCA_PROTO_ERROR);
		return;
	}
	/* alloc_hint is only a hint: the buffer grows with what came */
	if (p->req_len + r.stub_len > RPC_REQ_MAX || ++p->req_frags > RPC_REQ_MAX_FRAGS) {
		req_fail(p, h, DCERPC_FAULT_NO_MEMORY);
		return;
	}
	if (r.stub_len) {
		b = realloc(p->req, p->req_len + r.stub_len);
		if (!b) {
			req_fail(p, h, DCERPC_FAULT_NO_MEMORY);
			return;
		}
		p->req = b;
		memcpy(p->req + p->req_len, r.stub, r.stub_len);
		p->req_len += r.stub_len;
	}
	if (h->flags & DCERPC_PFC_LAST_FRAG) {
		run_request(p);
		req_reset(p);
	}
}

static int do_pdu(struct srv_pipe *p, const uint8_t *pdu, const struct dcerpc_hdr *h)
{
	switch (h->ptype) {
	case DCERPC_BIND:
	case DCERPC_ALTER:
		return do_bind(p, pdu, h);
	case DCERPC_REQUEST:
		do_request(p, pdu, h);
		return 0;
	case DCERPC_AUTH3:
	case DCERPC_CO_CANCEL:
	case DCERPC_ORPHANED:
		req_reset(p);
		return 0;
	default:
		fault(p, h->call_id, DCERPC_NCA_PROTO_ERROR);
		return 0;
	}
}

static int pipe_write_locked(struct srv_pipe *p, const uint8_t *data, size_t len)
{
	struct dcerpc_hdr h;
	size_t take;
	int ret;

	if (p->broken)
		return -E_SMB_PIPE_DISCONNECTED;
	while (len) {
		take = RPC_IN_MAX - p->in_len < len ? RPC_IN_MAX - p->in_len : len;
		memcpy(p->in + p->in_len, data, take);
		p->in_len += take;
		data += take;
		len -= take;
		for (;;) {
			ret = dcerpc_hdr_decode(p->in, p->in_len, &h);
			if (ret == -EAGAIN)
				break;
			if (!ret)
				ret = do_pdu(p, p->in, &h);
			if (ret) {
				log_ratelimited(LOG_INFO, "rpc %s: bad PDU, the pipe is broken",
						p->iface->name);
				p->broken = true;
				return -E_SMB_PIPE_DISCONNECTED;
			}
			memmove(p->in, p->in + h.frag_len, p->in_len - h.frag_len);
			p->in_len -= h.frag_len;
		}
	}
	return 0;
}

int srv_pipe_write(struct srv_pipe *p, const uint8_t *data, size_t len)
{
	int ret;

	pthread_mutex_lock(&p->lock);
	ret = pipe_write_locked(p, data, len);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int srv_pipe_read(struct srv_pipe *p, uint8_t *dst, size_t cap, size_t *n)
{
	size_t take;
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	*n = 0;
	if (p->broken) {
		ret = -E_SMB_PIPE_DISCONNECTED;
		goto out;
	}
	if (p->out_off == p->out_len) {
		ret = -E_SMB_PIPE_EMPTY;
		goto out;
	}
	/* one fragment a read, as a message-mode pipe gives them */
	if (!p->frag_left)
		p->frag_left = get_le16(p->out + p->out_off + 8);
	take = cap < p->frag_left ? cap : p->frag_left;
	memcpy(dst, p->out + p->out_off, take);
	p->out_off += take;
	p->frag_left -= take;
	*n = take;
	if (p->frag_left)
		ret = -E_SMB_BUFFER_OVERFLOW;	/* the rest of it next time */
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}
