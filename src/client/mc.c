// SPDX-License-Identifier: MIT
/*
 * SMB3 multichannel ([MS-SMB2] 3.2.4.20.x, 3.2.5.3): after the session
 * is set up, ask the server for its interfaces
 * (FSCTL_QUERY_NETWORK_INTERFACE_INFO on an IPC$ tree), then for each
 * channel a new connection to a listed address on the first one's port,
 * a NEGOTIATE with the same ClientGuid and dialect, and SESSION_SETUPs
 * with SMB2_SESSION_FLAG_BINDING for the session, signed with the
 * session's key. Each channel signs with its own key, derived from its
 * binding; encryption keys stay the session's. Nothing here fails the
 * connection: a channel that cannot be had is logged and skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client/client.h"
#include "crypto/auth.h"
#include "proto/fsctl.h"
#include "proto/ntstatus.h"
#include "transport/smbdirect.h"

#define MC_MAX_IFACES 64
#define MC_IFACE_OUT 65536		/* MaxOutputResponse of the query */
#define MC_CONNECT_MS 5000		/* a listed address that does not answer */
#define MC_AUTH_MAX AUTH_TOKEN_MAX

static const struct smb2_fid mc_no_fid = { UINT64_MAX, UINT64_MAX };

int cli_channel_signing_key(uint16_t dialect, const uint8_t session_key[16],
			    const uint8_t *preauth, uint8_t key[16])
{
	struct smb3_keys k;
	int ret;

	if (dialect < SMB2_DIALECT_300)
		return -EINVAL;
	ret = smb3_derive_keys(dialect, session_key, preauth, SMB2_CIPHER_NONE, &k);
	if (!ret)
		memcpy(key, k.signing, 16);
	explicit_bzero(&k, sizeof(k));
	return ret;
}

/* ---- the order of the channels to try ---- */

static bool same_addr(const struct fsctl_netif *a, const struct fsctl_netif *b)
{
	return a->family == b->family &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

struct mc_cand {
	unsigned int iface;
	bool rdma;
	bool in_use;			/* the first connection's own */
	uint64_t speed;
};

/* unused before in use, then SMB-Direct first, then speed, then list order */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct mc_cand *a = pa, *b = pb;

	if (a->in_use != b->in_use)
		return a->in_use ? 1 : -1;
	if (a->rdma != b->rdma)
		return a->rdma ? -1 : 1;
	if (a->speed != b->speed)
		return a->speed > b->speed ? -1 : 1;
	return a->iface < b->iface ? -1 : a->iface > b->iface;
}

unsigned int cli_mc_plan(const struct fsctl_netif *ifs, unsigned int n,
			 const struct fsctl_netif *primary, bool primary_rdma,
			 bool rdma, struct cli_mc_pick *out, unsigned int want)
{
	struct mc_cand cand[2 * MC_MAX_IFACES];
	unsigned int i, j, nc = 0, made = 0;
	int pass;

	if (n > MC_MAX_IFACES)
		n = MC_MAX_IFACES;
	for (pass = rdma ? 0 : 1; pass < 2; pass++) {
		bool as_rdma = pass == 0;

		for (i = 0; i < n; i++) {
			bool dup = false;

			if (as_rdma && !(ifs[i].caps & FSCTL_NETIF_RDMA_CAPABLE))
				continue;
			/* a server may list one address twice */
			for (j = 0; j < i; j++)
				if (same_addr(&ifs[i], &ifs[j]))
					dup = true;
			if (dup)
				continue;
			cand[nc].iface = i;
			cand[nc].rdma = as_rdma;
			cand[nc].in_use = primary && same_addr(&ifs[i], primary) &&
					  primary_rdma == as_rdma;
			cand[nc].speed = ifs[i].link_speed;
			nc++;
		}
	}
	qsort(cand, nc, sizeof(cand[0]), cand_cmp);
	while (nc && made < want) {
		out[made].iface = cand[made % nc].iface;
		out[made].rdma = cand[made % nc].rdma;
		made++;
	}
	return made;
}

/* ---- asking the server ---- */

/* IPC$, which no application's tree list holds */
static int ipc_tree(struct rdax_conn *c, uint32_t *tid)
{
	uint32_t flags, caps;

	cli_begin(c);
	return cli_tree_connect_req(c, "IPC$", tid, &flags, &caps);
}

static void ipc_tree_done(struct rdax_conn *c, uint32_t tid)
{
	cli_begin(c);
	cli_tree_disconnect_req(c, tid, "IPC$");
}

/* The server's interface list; count kept, or -errno (with errmsg set). */
static int query_ifaces(struct rdax_conn *c, struct fsctl_netif *ifs, unsigned int max)
{
	struct smb2_ioctl_req r = {
		.ctl_code = FSCTL_QUERY_NETWORK_INTERFACE_INFO,
		.fid = mc_no_fid,
		.max_output_response = MC_IFACE_OUT,
		.flags = SMB2_0_IOCTL_IS_FSCTL,
	};
	struct smb2_ioctl_rsp rsp;
	struct cli_chain ch;
	uint32_t tid;
	struct wcur w;
	int ret;

	ret = ipc_tree(c, &tid);
	if (ret)
		return ret;
	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_IOCTL, tid, false,
			    smb2_credit_charge_for(MC_IFACE_OUT), 56, &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		goto out_tree;
	}
	smb2_ioctl_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	ret = cli_chain_run(c, &ch);
	if (ret)
		goto out_tree;
	if (ch.rsp[0].status) {
		ret = cli_status(c, ch.rsp[0].status, "FSCTL_QUERY_NETWORK_INTERFACE_INFO", NULL);
		goto out_tree;
	}
	if (smb2_ioctl_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp)) {
		ret = cli_err(c, -EPROTO, "malformed IOCTL response");
		goto out_tree;
	}
	ret = fsctl_netif_decode(rsp.output.p, rsp.output.len, ifs, max);
	if (ret < 0)
		cli_err(c, ret, "malformed interface list (%u bytes)", rsp.output.len);
out_tree:
	ipc_tree_done(c, tid);
	return ret;
}

/* ---- binding one channel ---- */

static void addr_text(const struct fsctl_netif *n, char *buf, size_t len)
{
	if (!inet_ntop(n->family, n->addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* A setup chain of one PDU on chan, run to its response. */
static int setup_run(struct rdax_conn *c, struct cli_chan *chan, struct cli_chain *ch,
		     uint8_t *preauth, const uint8_t *sign_key)
{
	ch->setup = true;
	ch->pin = chan;
	ch->preauth = preauth;
	ch->sign_key = sign_key;
	return cli_chain_run(c, ch);
}

static void preauth_add(uint8_t *preauth, const struct cli_rsp *rsp)
{
	struct iovec iov = { (void *)rsp->pdu, rsp->len };

	if (preauth)
		crypto_preauth_update(preauth, &iov, 1);
}

/* NEGOTIATE on the new connection: the session's dialect and ClientGuid. */
static int bind_negotiate(struct rdax_conn *c, struct cli_chan *chan, uint8_t *preauth)
{
	struct smb2_negotiate_req r;
	struct smb2_negotiate_rsp rsp;
	struct cli_chain ch;
	struct wcur w;
	int ret;

	cli_negotiate_req(c, &r);
	r.ndialects = 1;
	r.dialects[0] = c->dialect;
	if (c->dialect == SMB2_DIALECT_311) {
		/* what the first connection settled on, so the server agrees */
		if (c->cipher) {
			r.ctx.ncipher = 1;
			r.ctx.ciphers[0] = c->cipher;
		}
		r.ctx.nsign = 1;
		r.ctx.signs[0] = c->sign_alg == SMB2_SIGN_AES_GMAC ? SMB2_SIGNING_AES_GMAC :
				 SMB2_SIGNING_AES_CMAC;
		if (chan->rdma)
			cli_xform_offer(c, &r);
	}
	cli_chain_init(c, &ch);
	ret = cli_chain_add(c, &ch, SMB2_NEGOTIATE, 0, false, 0, 512, &w);
	if (ret) {
		cli_chain_abort(c, &ch);
		return ret;
	}
	/* no session yet on this connection */
	put_le64(w.p + 40, 0);
	smb2_negotiate_req_encode(&w, &r);
	cli_chain_end(c, &ch, &w);
	ret = setup_run(c, chan, &ch, preauth, NULL);
	if (ret)
		return ret;
	if (ch.rsp[0].status)
		return cli_status(c, ch.rsp[0].status, "negotiate", NULL);
	if (smb2_negotiate_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp))
		return cli_err(c, -EPROTO, "malformed NEGOTIATE response");
	if (rsp.dialect != c->dialect || memcmp(rsp.server_guid, c->server_guid, 16))
		return cli_err(c, -EPROTO, "another server or dialect (0x%04x) answers there",
			       rsp.dialect);
	if (!(rsp.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
		return cli_err(c, -EOPNOTSUPP, "no multichannel on that connection");
	if (c->dialect == SMB2_DIALECT_311 &&
	    ((c->cipher && rsp.cipher != c->cipher) ||
	     (rsp.sign_ctx ? rsp.signing : SMB2_SIGN_AES_CMAC) != c->sign_alg))
		return cli_err(c, -EPROTO, "the server chose other algorithms there");
	preauth_add(c->dialect == SMB2_DIALECT_311 ? preauth : NULL, &ch.rsp[0]);
	return 0;
}

/*
 * SESSION_SETUP with the BINDING flag for c->session_id, the requests
 * signed with the session's key; the final response is signed with the
 * new channel's key, derived from this authentication's session key.
 */
static int bind_session(struct rdax_conn *c, struct cli_chan *chan, uint8_t *preauth)
{
	struct auth_client_cfg acfg = {
		.user = c->cfg.user,
		.domain = c->cfg.domain,
		.password = c->cfg.password,
		.workstation = "RDAX",
		.spnego = true,
	};
	struct smb2_sess_setup_req r = { 0 };
	struct smb2_sess_setup_rsp rsp;
	uint8_t in[MC_AUTH_MAX], out[MC_AUTH_MAX], session_key[16];
	uint8_t *ph = c->dialect == SMB2_DIALECT_311 ? preauth : NULL;
	size_t in_len = 0, out_len;
	struct auth_client *auth;
	struct cli_chain ch;
	struct wcur w;
	int ret, step;

	ret = auth_client_new(&auth, &acfg);
	if (ret)
		return cli_err(c, ret, "authentication setup failed");
	for (;;) {
		step = auth_client_step(auth, in_len ? in : NULL, in_len, out,
					sizeof(out), &out_len);
		if (step < 0) {
			ret = cli_err(c, step, "authentication failed: %s", strerror(-step));
			goto out_free;
		}
		r.flags = SMB2_SESSION_FLAG_BINDING;
		r.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED |
				  (c->cfg.sign_required ? SMB2_NEGOTIATE_SIGNING_REQUIRED : 0);
		r.security.p = out;
		r.security.len = (uint32_t)out_len;
		cli_chain_init(c, &ch);
		ret = cli_chain_add(c, &ch, SMB2_SESSION_SETUP, 0, false, 0, 32 + out_len, &w);
		if (ret) {
			cli_chain_abort(c, &ch);
			goto out_free;
		}
		smb2_sess_setup_req_encode(&w, &r);
		cli_chain_end(c, &ch, &w);
		ret = setup_run(c, chan, &ch, ph, c->keys.signing);
		if (ret)
			goto out_free;
		if (ch.rsp[0].hdr.session_id != c->session_id) {
			ret = cli_err(c, -EPROTO, "binding answered for another session");
			goto out_free;
		}
		if (ch.rsp[0].status != STATUS_MORE_PROCESSING_REQUIRED)
			break;
		preauth_add(ph, &ch.rsp[0]);
		if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp) ||
		    rsp.security.len > sizeof(in)) {
			ret = cli_err(c, -EPROTO, "malformed SESSION_SETUP response");
			goto out_free;
		}
		memcpy(in, rsp.security.p, rsp.security.len);
		in_len = rsp.security.len;
	}
	if (ch.rsp[0].status) {
		ret = cli_status(c, ch.rsp[0].status, "session binding", NULL);
		goto out_free;
	}
	if (smb2_sess_setup_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp) ||
	    auth_client_finish(auth, rsp.security.p, rsp.security.len) ||
	    auth_client_session_key(auth, session_key)) {
		ret = cli_err(c, -EPROTO, "session binding: no session key");
		goto out_free;
	}
	ret = cli_channel_signing_key(c->dialect, session_key, ph, chan->signing_key);
	explicit_bzero(session_key, sizeof(session_key));
	if (ret) {
		ret = cli_err(c, ret, "channel key derivation failed");
		goto out_free;
	}
	if (!(ch.rsp[0].hdr.flags & SMB2_FLAGS_SIGNED) ||
	    smb2_sign_verify(&c->kept, c->sign_alg, chan->signing_key, ch.rsp[0].pdu,
			     ch.rsp[0].len)) {
		ret = cli_err(c, -EBADMSG, "binding response has a bad signature");
		goto out_free;
	}
	ret = 0;
out_free:
	auth_client_delete(&auth);
	return ret;
}

/*
 * A new channel holds the few credits of its setup: ECHOs on it ask for
 * the window the others have, so it can carry large I/O from the start.
 */
static void warm_credits(struct rdax_conn *c, struct cli_chan *chan)
{
	struct cli_chain ch;
	struct wcur w;
	int i;

	for (i = 0; i < 4 && chan->cr.held < CLI_CREDIT_TARGET / 2; i++) {
		cli_chain_init(c, &ch);
		if (cli_chain_add(c, &ch, SMB2_ECHO, 0, false, 0, 8, &w)) {
			cli_chain_abort(c, &ch);
			return;
		}
		smb2_simple_encode(&w);
		cli_chain_end(c, &ch, &w);
		ch.pin = chan;
		if (cli_chain_run(c, &ch) || ch.rsp[0].status)
			return;
	}
}

/* One more channel to addr over TCP or SMB-Direct; 0 once it is bound. */
static int bind_channel(struct rdax_conn *c, const char *addr, bool rdma)
{
	uint8_t preauth[64] = { 0 };
	struct cli_chan *chan;
	struct xprt *x;
	char peer[64];
	int ret, tmo;

	tmo = c->cfg.timeout_ms > 0 && c->cfg.timeout_ms < MC_CONNECT_MS ?
	      c->cfg.timeout_ms : MC_CONNECT_MS;
	ret = rdma ? cli_rdma_open(c, addr, c->port, tmo, &x) :
		     cli_tcp_open(c, addr, c->port, tmo, &x);
	if (ret)
		return ret;
	snprintf(peer, sizeof(peer), strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, c->port);
	chan = cli_chan_add(c, x, peer);
	if (!chan) {
		x->ops->destroy(x);
		return cli_err(c, -ENOSPC, "no room for another channel");
	}
	ret = bind_negotiate(c, chan, preauth);
	if (!ret)
		ret = bind_session(c, chan, preauth);
	if (!ret && rdma)
		ret = cli_rdma_adopt(c, chan);
	if (ret) {
		cli_chan_drop(c, chan);
		return ret;
	}
	memcpy(chan->preauth, preauth, sizeof(preauth));
	chan->bound = true;
	warm_credits(c, chan);
	return 0;
}

/* The first connection's address in the form of a list entry. */
static bool primary_addr(const struct rdax_conn *c, struct fsctl_netif *p)
{
	const char *peer = c->chans[0].peer, *scheme;
	char host[64];
	const char *colon;

	memset(p, 0, sizeof(*p));
	/* an SMB-Direct transport names its peer rdma://address:port */
	scheme = strstr(peer, "://");
	if (scheme)
		peer = scheme + 3;
	if (peer[0] == '[') {
		colon = strstr(peer, "]:");
		if (!colon || colon - peer - 1 >= (long)sizeof(host))
			return false;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - peer - 1), peer + 1);
		p->family = AF_INET6;
	} else {
		colon = strrchr(peer, ':');
		if (!colon || colon - peer >= (long)sizeof(host))
			return false;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - peer), peer);
		p->family = AF_INET;
	}
	return inet_pton(p->family, host, p->addr) == 1;
}

/* Is there an RDMA device here (with a port up) to reach a server with? */
static bool rdma_device_here(void)
{
	struct ibv_device **devs;
	struct ibv_port_attr pa;
	bool up = false;
	int i, n = 0;

	devs = ibv_get_device_list(&n);
	for (i = 0; devs && i < n && !up; i++) {
		struct ibv_context *ctx = ibv_open_device(devs[i]);

		if (!ctx)
			continue;
		up = !ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_ACTIVE;
		ibv_close_device(ctx);
	}
	if (devs)
		ibv_free_device_list(devs);
	return up;
}

/*
 * SMB-Direct channels come first, as Windows does, when the application
 * asked for them, or did not say and the first connection is
 * SMB-Direct or this machine has an RDMA device with a port up;
 * rdax_cfg_set_rdma_channels(cfg, false) keeps every channel on TCP.
 */
bool cli_mc_rdma_first(const struct rdax_conn *c)
{
	if (c->cfg.rdma_channels >= 0)
		return c->cfg.rdma_channels;
	return c->cfg.transport == RDAX_TRANSPORT_RDMA || rdma_device_here();
}

static bool mc_possible(struct rdax_conn *c)
{
	if (c->dialect < SMB2_DIALECT_300 || !(c->server_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL)) {
		cli_log(c, "%s offers no multichannel (dialect 0x%04x): one channel", c->host,
			c->dialect);
		return false;
	}
	if (!c->have_key) {
		cli_log(c, "a guest session cannot bind channels: one channel");
		return false;
	}
	return true;
}

void cli_mc_grow(struct rdax_conn *c)
{
	struct fsctl_netif ifs[MC_MAX_IFACES], primary;
	struct cli_mc_pick picks[4 * CLI_MAX_CHANNELS];
	bool failed[2 * MC_MAX_IFACES] = { false };
	unsigned int i, npick, want;
	bool have_primary;
	char addr[64];
	int n, ret;

	if (c->cfg.channels <= 1 || !mc_possible(c))
		return;
	n = query_ifaces(c, ifs, MC_MAX_IFACES);
	if (n <= 0) {
		cli_log(c, "no interface list from %s (%s): one channel", c->host,
			n ? c->errmsg : "empty");
		goto out;
	}
	have_primary = primary_addr(c, &primary);
	/* a few spare picks for addresses that do not answer */
	want = (c->cfg.channels - 1) * 4;
	npick = cli_mc_plan(ifs, (unsigned int)n, have_primary ? &primary : NULL,
			    c->chans[0].rdma, cli_mc_rdma_first(c),
			    picks, want < 4 * CLI_MAX_CHANNELS ? want : 4 * CLI_MAX_CHANNELS);
	for (i = 0; i < npick && c->nchan < c->cfg.channels && !c->broken; i++) {
		unsigned int slot = picks[i].iface * 2 + picks[i].rdma;

		if (failed[slot])
			continue;
		addr_text(&ifs[picks[i].iface], addr, sizeof(addr));
		c->errmsg[0] = 0;
		ret = bind_channel(c, addr, picks[i].rdma);
		if (ret) {
			failed[slot] = true;
			cli_log(c, "channel to %s%s:%u skipped: %s", picks[i].rdma ? "rdma://" : "",
				addr, c->port, c->errmsg[0] ? c->errmsg : strerror(-ret));
		}
	}
	if (c->nchan < c->cfg.channels)
		cli_log(c, "%u of %u channels to %s", cli_chans_alive(c), c->cfg.channels,
			c->host);
out:
	/* the connection succeeded: nothing above is its error */
	c->errmsg[0] = 0;
	c->last_status = 0;
}
