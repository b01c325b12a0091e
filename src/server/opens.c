// SPDX-License-Identifier: MIT
/*
 * Server-wide state: opens and the files behind them.
 *
 * Opens sit in a liburcu lock-free hash table by volatile FileId
 * (srv.opens), each on its session's list too. A lookup takes a
 * reference only while the open is live; a close marks it closed, takes
 * it out of both at once and drops the table's reference; the last
 * reference (a request, an RDMA transfer, a response sent from a DAX
 * mapping) releases the descriptor and the file, and the memory goes
 * after a grace period.
 *
 * An open is on its file's list (files.c) from CREATE to close: its
 * share mode, byte-range locks, oplock or lease live there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

/* ---- opens ---- */

static unsigned long open_hash(uint64_t volatile_id)
{
	return (unsigned long)(volatile_id * 0x9E3779B97F4A7C15ull);
}

static int open_match(struct cds_lfht_node *node, const void *key)
{
	const struct srv_open *o = caa_container_of(node, struct srv_open, node);

	return o->volatile_id == *(const uint64_t *)key;
}

static void open_free_rcu(struct rcu_head *head)
{
	struct srv_open *o = caa_container_of(head, struct srv_open, rcu);

	pthread_mutex_destroy(&o->dir_lock);
	free(o);
}

/* The last holder is gone: close the file for real. */
void srv_open_put(struct srv_open *o)
{
	if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
		return;
	srv_notify_end(o);
	store_dir_close(&o->dir);
	if (o->fd >= 0)
		close(o->fd);
	if (o->file)
		srv_file_put(o->file);
	srv_pipe_free(o->pipe);
	srv_ident_put(&o->ident);
	free(o->pattern);
	free(o->pending_name);
	call_rcu(&o->rcu, open_free_rcu);
}

int srv_open_insert(struct srv_session *s, struct srv_tree *t, struct srv_open *o)
{
	struct srv *srv = s->srv;

	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->state) == SESS_GONE || atomic_load(&t->gone)) {
		pthread_mutex_unlock(&s->lock);
		return -E_SMB_NETWORK_NAME_DELETED;
	}
	if (s->nopens >= srv->cfg->max_opens) {
		pthread_mutex_unlock(&s->lock);
		log_ratelimited(LOG_WARN, "open refused: %d files open in session 0x%llx (max open files)",
				s->nopens, (unsigned long long)s->id);
		return -EMFILE;
	}
	o->srv = srv;
	o->sess = s;
	o->sess_id = s->id;
	o->tree_id = t->id;
	o->persistent = atomic_fetch_add(&srv->next_persistent, 1) + 1;
	o->volatile_id = atomic_fetch_add(&srv->next_volatile, 1);
	atomic_init(&o->refs, 1);	/* the table's */
	atomic_init(&o->closed, false);
	pthread_mutex_init(&o->dir_lock, NULL);
	list_add_tail(&o->sess_link, &s->opens);
	s->nopens++;
	rcu_read_lock();
	cds_lfht_add(srv->opens, open_hash(o->volatile_id), &o->node);
	rcu_read_unlock();
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int srv_open_reattach(struct srv_session *s, struct srv_tree *t, struct srv_open *o)
{
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->state) == SESS_GONE || atomic_load(&t->gone)) {
		pthread_mutex_unlock(&s->lock);
		return -E_SMB_NETWORK_NAME_DELETED;
	}
	o->sess = s;
	o->sess_id = s->id;
	o->tree_id = t->id;
	/* its FileId stays; lookups match it to this session now */
	list_add_tail(&o->sess_link, &s->opens);
	s->nopens++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int srv_open_restore(struct srv *srv, struct srv_open *o)
{
	uint64_t next = atomic_load(&srv->next_persistent);

	/* later opens get persistent ids above every journaled one */
	while (next < o->persistent &&
	       !atomic_compare_exchange_weak(&srv->next_persistent, &next, o->persistent))
		;
	o->volatile_id = atomic_fetch_add(&srv->next_volatile, 1);
	atomic_init(&o->refs, 1);	/* the table's */
	atomic_init(&o->closed, false);
	pthread_mutex_init(&o->dir_lock, NULL);
	list_init(&o->sess_link);
	rcu_read_lock();
	cds_lfht_add(srv->opens, open_hash(o->volatile_id), &o->node);
	rcu_read_unlock();
	return 0;
}

struct srv_open *srv_open_get(struct srv_session *s, const struct smb2_fid *fid)
{
	struct srv_open *o = NULL;
	struct cds_lfht_node *node;
	struct cds_lfht_iter it;
	int n;

	rcu_read_lock();
	cds_lfht_lookup(s->srv->opens, open_hash(fid->volatile_id), open_match,
			&fid->volatile_id, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		o = caa_container_of(node, struct srv_open, node);
		n = atomic_load(&o->refs);
		while (n > 0 && !atomic_compare_exchange_weak(&o->refs, &n, n + 1))
			;
		if (n <= 0) {
			o = NULL;
		} else if (atomic_load(&o->closed) || o->persistent != fid->persistent ||
			   o->sess_id != s->id) {
			/* a foreign or stale FileId names nothing */
			rcu_read_unlock();
			srv_open_put(o);
			return NULL;
		}
	}
	rcu_read_unlock();
	return o;
}

/*
 * Is the open of this FileId still attached to a session of this client?
 * (Its connection dropped, but the worker that owns it has not seen it
 * go yet.)
 */
bool srv_open_attached(struct srv *srv, const struct smb2_fid *fid, const uint8_t *client_guid)
{
	struct cds_lfht_node *node;
	struct cds_lfht_iter it;
	struct srv_open *o;
	bool attached = false;

	rcu_read_lock();
	cds_lfht_lookup(srv->opens, open_hash(fid->volatile_id), open_match,
			&fid->volatile_id, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		o = caa_container_of(node, struct srv_open, node);
		attached = !atomic_load(&o->closed) && o->persistent == fid->persistent &&
			   o->durable && !memcmp(o->client_guid, client_guid, 16);
	}
	rcu_read_unlock();
	return attached;
}

/*
 * The open leaves its file: its share mode, locks, oplock or lease go,
 * and whoever waited on them runs again.
 */
void srv_open_leave_file(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct srv_ident *old = NULL;
	char gone[4096];
	bool unlinked = false;
	int ret;

	srv_notify_end(o);	/* its watches go; its waiting requests below */
	if (!f || !o->on_file)
		return;
	pthread_mutex_lock(&f->lock);
	srv_wt_close_locked(o);
	list_del(&o->file_link);
	o->on_file = false;
	srv_oplock_close_locked(o->srv, o);
	srv_brl_close_locked(o);
	srv_async_end_locks_locked(f, o, -E_SMB_RANGE_NOT_LOCKED);
	if (o->delete_on_close && !f->delete_pending) {
		f->delete_pending = true;
		old = f->delete_ident;
		f->delete_ident = srv_ident_get(o->ident);
	}
	/* a directory to be deleted has nothing more to report */
	if (f->delete_pending)
		srv_async_end_notify_locked(f, -E_SMB_DELETE_PENDING);
	/* POSIX delete: the name goes with this open, others keep the file */
	if (o->posix_delete && f->delete_pending && !f->unlinked &&
	    !list_empty(&f->opens)) {
		snprintf(gone, sizeof(gone), "%s", f->path);
		ret = srv_file_unlink_now_locked(f, o->ident);
		if (ret)
			pr_warn("[%s] POSIX delete of %s: %s", o->share->name, gone,
				strerror(-ret));
		unlinked = !ret;
	} else if (f->delete_pending && !f->unlinked && list_empty(&f->opens) &&
		   !srv_file_has_streams_locked(f)) {
		/*
		 * The last handle: the name goes before this CLOSE is
		 * answered, not when the last reference does (a break the
		 * timer has not looked at yet, a waiter), so the client's
		 * next CREATE of the name finds it free.
		 */
		snprintf(gone, sizeof(gone), "%s", f->path);
		ret = srv_file_unlink_now_locked(f, f->delete_ident);
		if (ret)
			pr_warn("[%s] delete on close of %s as %s: %s", o->share->name, gone,
				f->delete_ident ? f->delete_ident->name : "rdaxd",
				strerror(-ret));
		unlinked = !ret;
	}
	if (f->unlinked && list_empty(&f->opens))
		srv_file_unhash_locked(f);
	srv_file_wake_locked(f);
	pthread_mutex_unlock(&f->lock);
	srv_ident_put(&old);
	if (unlinked)
		srv_dir_lease_break(o->srv, o->share, gone, NULL);
	srv_durable_forget(o);
	/* a written file's close changes its directory (last write time) */
	if (o->modified && !f->is_dir) {
		char path[4096];

		if (!srv_file_path(f, path, sizeof(path)))
			srv_dir_lease_break(o->srv, o->share, path, o);
	}
}

/* Closed and off the session's list already: out of the table, then go. */
void srv_open_detached(struct srv_open *o)
{
	rcu_read_lock();
	cds_lfht_del(o->srv->opens, &o->node);
	rcu_read_unlock();
	srv_open_leave_file(o);
	srv_open_put(o);		/* the table's */
}

int srv_open_close(struct srv_open *o)
{
	struct srv_session *s;

	if (atomic_exchange(&o->closed, true))
		return -E_SMB_FILE_CLOSED;
	s = o->sess;
	pthread_mutex_lock(&s->lock);
	list_del(&o->sess_link);
	s->nopens--;
	o->sess = NULL;
	pthread_mutex_unlock(&s->lock);
	srv_open_detached(o);
	return 0;
}

/* ---- ChannelSequence ([MS-SMB2] 3.3.5.2.10; the rules as Samba's smbd) ---- */

#define CS_SEQ(v) ((uint16_t)((v) >> 48))
#define CS_GEN(v) ((uint8_t)((v) >> 40))
#define CS_REQ(v) ((uint32_t)((v) >> 20) & 0xFFFFF)
#define CS_PRE(v) ((uint32_t)(v) & 0xFFFFF)
#define CS_MAKE(seq, gen, req, pre) ((uint64_t)(seq) << 48 | (uint64_t)(gen) << 40 | \
				     (uint64_t)((req) & 0xFFFFF) << 20 | ((pre) & 0xFFFFF))

/*
 * Count the request against the open's ChannelSequence. A newer sequence
 * (a client that failed over) moves what was outstanding to "before"; a
 * stale one, or a replay while requests from before a failover are still
 * outstanding, fails a modifying request (WRITE, SET_INFO, IOCTL) with
 * STATUS_FILE_NOT_AVAILABLE, so nothing runs twice or out of order.
 */
int srv_chanseq_count(struct srv_open *o, const struct srv_conn *c,
		      const struct smb2_hdr *h, struct srv_chanseq *out)
{
	uint16_t cmd = h->command, seq = (uint16_t)h->status;
	bool modify = cmd == SMB2_WRITE || cmd == SMB2_SET_INFO || cmd == SMB2_IOCTL;
	bool replay = h->flags & SMB2_FLAGS_REPLAY_OPERATION;
	uint64_t v, nv;
	uint32_t rq, pre;
	uint8_t gen;
	int cmp;

	if (c->dialect < SMB2_DIALECT_300 || out->o)
		return 0;
	v = atomic_load(&o->chanseq);
	for (;;) {
		cmp = (int)seq - (int)CS_SEQ(v);
		gen = CS_GEN(v) + (cmp < 0);	/* a wrap of the client's 16 bits */
		if (abs(cmp) > INT16_MAX)
			cmp = -cmp;		/* far behind: it wrapped, it is newer */
		rq = CS_REQ(v);
		pre = CS_PRE(v);
		if (cmp == 0 && (!replay || !pre)) {
			nv = CS_MAKE(CS_SEQ(v), CS_GEN(v), rq + 1, pre);
			gen = CS_GEN(v);
		} else if (cmp > 0 && (!replay || !pre)) {
			nv = CS_MAKE(seq, gen, 1, pre + rq);
		} else if (modify) {
			log_ratelimited(LOG_NOTICE, "%s: %s%s with ChannelSequence %u on an open at %u: "
					"STATUS_FILE_NOT_AVAILABLE", c->x->peer,
					smb2_cmd_name(cmd), replay ? " (replay)" : "", seq,
					CS_SEQ(v));
			return -E_SMB_FILE_NOT_AVAILABLE;
		} else {
			return 0;	/* not counted */
		}
		if (atomic_compare_exchange_weak(&o->chanseq, &v, nv))
			break;
	}
	out->o = srv_open_ref(o);
	out->seq = CS_SEQ(nv);
	out->gen = gen;
	return 0;
}

void srv_chanseq_done(struct srv_chanseq *cs)
{
	struct srv_open *o = cs->o;
	uint64_t v, nv;

	if (!o)
		return;
	v = atomic_load(&o->chanseq);
	do {
		/* on the sequence it was counted on, or on one before it */
		if (CS_SEQ(v) == cs->seq && CS_GEN(v) == cs->gen && CS_REQ(v))
			nv = CS_MAKE(CS_SEQ(v), CS_GEN(v), CS_REQ(v) - 1, CS_PRE(v));
		else if (CS_PRE(v))
			nv = CS_MAKE(CS_SEQ(v), CS_GEN(v), CS_REQ(v), CS_PRE(v) - 1);
		else
			break;
	} while (!atomic_compare_exchange_weak(&o->chanseq, &v, nv));
	cs->o = NULL;
	srv_open_put(o);
}

int srv_req_hold(struct srv_req *req, struct srv_open *o)
{
	if (req->nheld == SRV_REQ_HELD) {
		srv_open_put(o);
		return -EIO;
	}
	req->held[req->nheld++] = o;
	return 0;
}

#define CMD(c) (1u << (c))

/*
 * What each kind of open takes: SMB2 commands (others get
 * STATUS_INVALID_DEVICE_REQUEST here, before any handler) and QUERY_INFO
 * types. A pipe answers its own info classes (query_pipe); the quota
 * fake file only the QUOTA type and CLOSE.
 */
static const struct {
	uint32_t cmds;
	uint32_t info_types;
} srv_open_kinds[SRV_OPEN_KINDS] = {
	[SRV_OPEN_FILE] = { .cmds = ~0u, .info_types = ~0u },
	[SRV_OPEN_PIPE] = { .cmds = CMD(SMB2_READ) | CMD(SMB2_WRITE) | CMD(SMB2_CLOSE) |
				    CMD(SMB2_IOCTL) | CMD(SMB2_QUERY_INFO) | CMD(SMB2_FLUSH),
			    .info_types = ~0u },
	[SRV_OPEN_QUOTA] = { .cmds = CMD(SMB2_CLOSE) | CMD(SMB2_QUERY_INFO),
			     .info_types = CMD(SMB2_0_INFO_QUOTA) },
};

bool srv_open_has_file(const struct srv_open *o)
{
	return o->kind == SRV_OPEN_FILE;
}

bool srv_open_takes_info(const struct srv_open *o, uint8_t info_type)
{
	return info_type < 32 && srv_open_kinds[o->kind].info_types & CMD(info_type);
}

int srv_req_open(struct srv_req *req, const struct smb2_fid *fid,
		 struct srv_open **out)
{
	struct srv_chain *ch = req->chain;
	struct smb2_fid f = *fid;
	struct srv_open *o;
	int ret;

	if (smb2_fid_is_compound(fid) && req->related) {
		if (ch->create_failed)
			return -ntstatus_to_err(ch->create_status);
		if (!ch->have_fid)
			return -E_SMB_FILE_CLOSED;
		f = ch->fid;
	}
	/* the FileId this PDU used is what a related next one inherits */
	ch->have_fid = true;
	ch->fid = f;
	o = srv_open_get(req->sess, &f);
	if (!o)
		return -E_SMB_FILE_CLOSED;
	if (o->tree_id != req->tree->id) {
		srv_open_put(o);
		return -E_SMB_FILE_CLOSED;
	}
	if (req->hdr.command >= 32 ||
	    !(srv_open_kinds[o->kind].cmds & CMD(req->hdr.command))) {
		srv_open_put(o);
		return -E_SMB_INVALID_DEVICE_REQUEST;
	}
	ret = srv_req_hold(req, o);
	if (ret)
		return ret;
	ret = srv_chanseq_count(o, req->conn, &req->hdr, &req->cseq);
	if (ret)
		return ret;
	*out = o;
	return 0;
}
