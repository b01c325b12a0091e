// SPDX-License-Identifier: MIT
/*
 * Surviving a dropped connection ([MS-SMB2] 3.2.4.1.7, 3.2.4.3.6 and
 * 3.2.4.4): when the last channel of a session fails and durable
 * handles are on, its requests wait (engine.c) while this sets the
 * session up again on a new TCP connection to the same server: NEGOTIATE
 * with the same ClientGuid, SESSION_SETUP with PreviousSessionId (the
 * server ends the old session, keeping its durable opens), TREE_CONNECT
 * of every tree, and a CREATE with DH2C (CreateGuid, the old FileId) and
 * the lease for every durable handle. Then the requests that waited go
 * again with the replay flag, their SessionId, TreeIds and FileIds
 * rewritten to the new ones. A handle the server does not give back is
 * lost: its requests fail (-ESTALE), the others go on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "proto/lease.h"
#include "proto/ntstatus.h"

#define RECON_PAUSE_MS 100		/* first pause between attempts */
#define RECON_PAUSE_MAX_MS 2000
#define RECON_DEFAULT_MS 60000		/* with no request timeout */

bool cli_recon_wanted(const struct rdax_conn *c)
{
	return c->cfg.durable && c->established && !c->closing && c->session_id &&
	       c->dialect >= SMB2_DIALECT_300;
}

#define list_each_file(c, t, f, tp, fp)                                     \
	list_for_each(tp, &(c)->trees)                                      \
		for (t = list_entry(tp, struct rdax_tree, link), fp = t->files.next; \
		     fp != &t->files && (f = list_entry(fp, struct rdax_file, tlink)); \
		     fp = fp->next)

/* CREATE with DH2C and the lease: f's open again, or why not. */
static int reopen(struct rdax_tree *t, struct rdax_file *f)
{
	struct cli_create_args a = { f->path, f->access, FILE_OPEN, f->options, 0 };
	struct rdax_conn *c = t->c;
	struct smb2_create_rsp rsp;
	struct cli_chain ch;
	struct cli_grant g;
	struct cli_ctx x;
	int ret;

	cli_ctx_init(&x);
	if (f->lease) {
		cli_ctx_lease(&x, t, f->lease, SMB2_LEASE_READ | SMB2_LEASE_HANDLE);
		a.oplock = SMB2_OPLOCK_LEVEL_LEASE;
	}
	cli_ctx_reconnect(&x, &f->fid, f->create_guid, f->persistent);
	a.ctx = x.buf;
	a.ctx_len = (uint32_t)x.len;
	cli_chain_init(c, &ch);
	ret = cli_add_create(t, &ch, &a);
	if (ret) {
		cli_chain_abort(c, &ch);
		return ret;
	}
	ret = cli_chain_run(c, &ch);
	if (ret)
		return ret;
	if (ch.rsp[0].status) {
		cli_log(c, "durable handle of %s not given back: %s", f->path,
			ntstatus_name(ch.rsp[0].status));
		return 1;	/* the server's answer: the handle is lost */
	}
	if (smb2_create_rsp_decode(ch.rsp[0].pdu, ch.rsp[0].len, &rsp))
		return cli_err(c, -EPROTO, "malformed CREATE response from %s", c->host);
	f->fid = rsp.fid;
	if (f->lease && !cli_grant_parse(c, &rsp, f->lease->key, &g) && g.lease)
		cli_lease_granted(f->lease, &g);
	return 0;
}

/* One attempt: a new connection, session, trees and handles. */
static int recon_once(struct rdax_conn *c, uint64_t prev, unsigned int *back,
		      unsigned int *lost)
{
	struct list_head *tp, *fp;
	struct rdax_tree *t;
	struct rdax_file *f;
	uint32_t flags, caps;
	int ret;

	cli_chans_clear(c);
	c->session_id = 0;
	c->have_key = false;
	c->signing = false;
	c->encrypt = false;
	/* the transport it was opened with; the registrations stay in their PD */
	ret = c->cfg.transport == RDAX_TRANSPORT_RDMA ? cli_rdma_connect(c) :
							 cli_tcp_connect(c);
	if (!ret)
		ret = cli_session_start(c, prev);
	if (ret)
		return ret;
	list_for_each(tp, &c->trees) {
		t = list_entry(tp, struct rdax_tree, link);
		ret = cli_tree_connect_req(c, t->share, &t->id, &flags, &caps);
		if (ret)
			return ret;
	}
	*back = *lost = 0;
	list_each_file(c, t, f, tp, fp) {
		if (!f->durable || f->lost)
			continue;
		ret = reopen(t, f);
		if (ret < 0)
			return ret;
		if (ret > 0)
			f->lost = true;
		*back += !ret;
		*lost += ret > 0;
	}
	return 0;
}

struct recon_fix {
	struct rdax_conn *c;
};

/* The FileId's offset in the body of a request that names one (0: none). */
static size_t fid_off(uint16_t cmd)
{
	switch (cmd) {
	case SMB2_CLOSE:
	case SMB2_FLUSH:
	case SMB2_LOCK:
	case SMB2_IOCTL:
	case SMB2_QUERY_DIRECTORY:
	case SMB2_CHANGE_NOTIFY:
		return 8;
	case SMB2_READ:
	case SMB2_WRITE:
	case SMB2_SET_INFO:
		return 16;
	case SMB2_QUERY_INFO:
		return 24;
	default:
		return 0;
	}
}

static int fix_pdu(void *arg, struct cli_chain *ch, uint8_t *p, size_t len)
{
	struct rdax_conn *c = ((struct recon_fix *)arg)->c;
	struct list_head *tp, *fp;
	struct rdax_tree *t;
	struct rdax_file *f;
	uint32_t tid;
	uint64_t pid, vid;
	size_t off;

	if (!p)
		return 0;	/* built when it goes, from its file's ids */
	if (len < SMB2_HDR_SIZE)
		return -EPROTO;
	put_le64(p + 40, c->session_id);
	tid = get_le32(p + 36);
	list_for_each(tp, &c->trees) {
		t = list_entry(tp, struct rdax_tree, link);
		if (t->old_id == tid) {
			put_le32(p + 36, t->id);
			break;
		}
	}
	off = fid_off(get_le16(p + 12));
	if (!off || len < SMB2_HDR_SIZE + off + 16)
		return 0;
	p += SMB2_HDR_SIZE + off;
	pid = get_le64(p);
	vid = get_le64(p + 8);
	if (pid == UINT64_MAX && vid == UINT64_MAX)
		return 0;	/* the related FileId of a compound */
	list_each_file(c, t, f, tp, fp) {
		if (f->old_fid.persistent != pid || f->old_fid.volatile_id != vid)
			continue;
		if (f->lost)
			return cli_err(c, -ESTALE, "%s: its handle was lost with the connection",
				       f->path);
		put_le64(p, f->fid.persistent);
		put_le64(p + 8, f->fid.volatile_id);
		return 0;
	}
	return 0;
}

static void pause_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void cli_reconnect(struct rdax_conn *c)
{
	uint64_t prev = c->session_id, until;
	unsigned int pause = RECON_PAUSE_MS, back = 0, lost = 0, tries = 0;
	struct recon_fix fx = { c };
	struct list_head *tp, *fp;
	struct rdax_tree *t;
	struct rdax_file *f;
	int ret;

	until = cli_now_ms() + (uint64_t)(c->cfg.timeout_ms > 0 ? c->cfg.timeout_ms :
					   RECON_DEFAULT_MS);
	c->need_recon = false;
	c->reconnecting = true;
	/* the ids the waiting requests carry */
	list_for_each(tp, &c->trees) {
		t = list_entry(tp, struct rdax_tree, link);
		t->old_id = t->id;
	}
	list_each_file(c, t, f, tp, fp)
		f->old_fid = f->fid;
	/* the handles stats kept went with the session */
	cli_leases_session_gone(c);
	for (;;) {
		tries++;
		ret = recon_once(c, prev, &back, &lost);
		/* the new connection may have dropped right after the last step */
		if (!ret && !cli_chans_alive(c))
			ret = cli_err(c, -ECONNRESET, "connection to %s lost again", c->host);
		if (!ret || cli_now_ms() + pause >= until)
			break;
		pause_ms(pause);
		pause = pause * 2 < RECON_PAUSE_MAX_MS ? pause * 2 : RECON_PAUSE_MAX_MS;
	}
	c->reconnecting = false;
	if (ret) {
		char why[sizeof(c->errmsg)];

		snprintf(why, sizeof(why), "%s", c->errmsg[0] ? c->errmsg : strerror(-ret));
		cli_log(c, "reconnect to %s gave up after %u attempts: %s", c->host, tries, why);
		cli_chains_fail(c, -ENOTCONN);
		cli_err(c, -ENOTCONN, "connection to %s lost; reconnect failed: %s", c->host, why);
		return;
	}
	c->errmsg[0] = 0;
	c->stats.reconnects++;
	c->stats.durable_reopens += back;
	c->stats.handles_lost += lost;
	/* a higher ChannelSequence: the server takes the replays as such */
	c->channel_seq++;
	cli_chains_fixup(c, fix_pdu, &fx);
	cli_log(c, "reconnected to %s (attempt %u): %u durable handle%s back, %u lost",
		c->host, tries, back, back == 1 ? "" : "s", lost);
}
