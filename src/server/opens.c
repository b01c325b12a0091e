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
 * The file table: one srv_file per (dev, ino) of a share, shared by the
 * opens of that inode on every worker: delete-pending state, the DAX
 * mapping, the O_DIRECT twin. 64 shards, a mutex each.
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

/* ---- file table ---- */

static struct srv_file_shard *shard_of(struct srv_share *sh, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9E3779B97F4A7C15ull;

	return &sh->shards[(h >> 58) % SRV_FILE_SHARDS];
}

struct srv_file *srv_file_get(struct srv_share *sh, dev_t dev, ino_t ino,
			      const char *path, bool is_dir)
{
	struct srv_file_shard *sd = shard_of(sh, dev, ino);
	struct list_head *pos, *tmp;
	struct srv_file *f;

	pthread_mutex_lock(&sd->lock);
	list_for_each_safe(pos, tmp, &sd->files) {
		f = list_entry(pos, struct srv_file, link);
		if (f->dev == dev && f->ino == ino) {
			f->nopen++;
			goto out_unlock;
		}
	}
	f = calloc(1, sizeof(*f));
	if (f) {
		f->path = strdup(path);
		if (!f->path) {
			free(f);
			f = NULL;
			goto out_unlock;
		}
		f->dev = dev;
		f->ino = ino;
		f->is_dir = is_dir;
		f->nopen = 1;
		pthread_mutex_init(&f->dax_lock, NULL);
		f->direct_fd[0] = f->direct_fd[1] = -1;
		list_add_tail(&f->link, &sd->files);
	}
out_unlock:
	pthread_mutex_unlock(&sd->lock);
	return f;
}

struct unlink_call {
	struct srv_share *sh;
	struct srv_file *f;
};

static int unlink_call(void *arg)
{
	struct unlink_call *uc = arg;

	return store_unlink(&uc->sh->root, uc->f->path, uc->f->is_dir);
}

void srv_file_put(struct srv_share *sh, struct srv_file *f)
{
	struct srv_file_shard *sd = shard_of(sh, f->dev, f->ino);
	int ret;

	pthread_mutex_lock(&sd->lock);
	if (--f->nopen) {
		pthread_mutex_unlock(&sd->lock);
		return;
	}
	list_del(&f->link);
	if (f->delete_pending) {
		struct unlink_call uc = { sh, f };

		/* as the user who asked for it; the kernel may still refuse */
		ret = srv_ident_run(f->delete_ident, unlink_call, &uc);
		if (ret)
			pr_warn("[%s] delete on close of %s as %s: %s", sh->name,
				f->path, f->delete_ident ? f->delete_ident->name : "rdaxd",
				strerror(-ret));
	}
	pthread_mutex_unlock(&sd->lock);
	srv_file_detach_dax(sh, f);
	pthread_mutex_destroy(&f->dax_lock);
	srv_ident_put(&f->delete_ident);
	free(f->path);
	free(f);
}

bool srv_file_delete_pending(struct srv_share *sh, struct srv_file *f)
{
	struct srv_file_shard *sd = shard_of(sh, f->dev, f->ino);
	bool v;

	pthread_mutex_lock(&sd->lock);
	v = f->delete_pending;
	pthread_mutex_unlock(&sd->lock);
	return v;
}

int srv_file_set_delete(struct srv_share *sh, struct srv_file *f, bool del,
			struct srv_ident *id)
{
	struct srv_file_shard *sd = shard_of(sh, f->dev, f->ino);
	struct srv_ident *old;

	pthread_mutex_lock(&sd->lock);
	f->delete_pending = del;
	old = f->delete_ident;
	f->delete_ident = del ? srv_ident_get(id) : NULL;
	pthread_mutex_unlock(&sd->lock);
	srv_ident_put(&old);
	return 0;
}

int srv_file_rename(struct srv_share *sh, struct srv_file *f, const char *to,
		    bool replace)
{
	struct srv_file_shard *sd = shard_of(sh, f->dev, f->ino);
	char *np = strdup(to);
	int ret;

	if (!np)
		return -ENOMEM;
	pthread_mutex_lock(&sd->lock);
	ret = store_rename(&sh->root, f->path, to, replace);
	if (!ret) {
		free(f->path);
		f->path = np;
		np = NULL;
	}
	pthread_mutex_unlock(&sd->lock);
	free(np);
	return ret;
}

int srv_file_path(struct srv_share *sh, struct srv_file *f, char *buf, size_t len)
{
	struct srv_file_shard *sd = shard_of(sh, f->dev, f->ino);
	int ret = 0;

	pthread_mutex_lock(&sd->lock);
	if ((size_t)snprintf(buf, len, "%s", f->path) >= len)
		ret = -ENAMETOOLONG;
	pthread_mutex_unlock(&sd->lock);
	return ret;
}


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
	store_dir_close(&o->dir);
	if (o->fd >= 0)
		close(o->fd);
	if (o->file)
		srv_file_put(o->share, o->file);
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
	o->persistent = s->next_persistent++;
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

/* Closed and off the session's list already: out of the table, then go. */
void srv_open_detached(struct srv_open *o)
{
	rcu_read_lock();
	cds_lfht_del(o->srv->opens, &o->node);
	rcu_read_unlock();
	if (o->file && o->delete_on_close)
		srv_file_set_delete(o->share, o->file, true, o->ident);
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
static int chanseq_count(struct srv_req *req, struct srv_open *o)
{
	uint16_t cmd = req->hdr.command, seq = (uint16_t)req->hdr.status;
	bool modify = cmd == SMB2_WRITE || cmd == SMB2_SET_INFO || cmd == SMB2_IOCTL;
	bool replay = req->hdr.flags & SMB2_FLAGS_REPLAY_OPERATION;
	uint64_t v, nv;
	uint32_t rq, pre;
	uint8_t gen;
	int cmp;

	if (req->conn->dialect < SMB2_DIALECT_300 || req->cseq.o)
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
					"STATUS_FILE_NOT_AVAILABLE", req->conn->x->peer,
					smb2_cmd_name(cmd), replay ? " (replay)" : "", seq,
					CS_SEQ(v));
			return -E_SMB_FILE_NOT_AVAILABLE;
		} else {
			return 0;	/* not counted */
		}
		if (atomic_compare_exchange_weak(&o->chanseq, &v, nv))
			break;
	}
	req->cseq.o = srv_open_ref(o);
	req->cseq.seq = CS_SEQ(nv);
	req->cseq.gen = gen;
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

int srv_req_open(struct srv_req *req, const struct smb2_fid *fid,
		 struct srv_open **out)
{
	struct srv_chain *ch = req->chain;
	struct smb2_fid f = *fid;
	struct srv_open *o;
	int ret;

	if (smb2_fid_is_compound(fid) && req->related) {
		if (ch->create_failed)
			return ntstatus_to_err(ch->create_status);
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
	ret = srv_req_hold(req, o);
	if (ret)
		return ret;
	ret = chanseq_count(req, o);
	if (ret)
		return ret;
	*out = o;
	return 0;
}
