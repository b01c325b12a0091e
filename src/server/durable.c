// SPDX-License-Identifier: MIT
/*
 * Durable handles ([MS-SMB2] 3.3.5.9.6-3.3.5.9.12), v1 (DHnQ/DHnC) and
 * v2 (DH2Q/DH2C), with the rules Samba's smbd follows.
 *
 * - An open is durable if it asked and holds handle caching: a batch
 *   oplock or a lease with H. v1 lasts 16 minutes disconnected; v2 what
 *   it asked for, at most 300 s, 60 s if it asked for 0.
 * - When its session goes with its connection (not a logoff), a durable
 *   open stays: off the session, on its file with its share mode, locks
 *   and lease, on the server's list of disconnected opens.
 * - A reconnect on a new session finds it by persistent FileId (and
 *   CreateGuid for v2), checks the user, the lease key and the name, and
 *   gives it back under a new volatile FileId.
 * - The timer closes it when its time is up; an open that must break its
 *   caching closes it at once (srv_durable_purge).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "proto/lease.h"
#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

#define DURABLE_V1_TIMEOUT_MS (16u * 60 * 1000)
#define DURABLE_V2_DEFAULT_MS (60u * 1000)
#define DURABLE_V2_MAX_MS (300u * 1000)

void srv_durable_init(struct srv *srv)
{
	pthread_mutex_init(&srv->durable_lock, NULL);
	list_init(&srv->durables);
}

uint32_t srv_durable_timeout(const struct srv_durable_req *d)
{
	if (d->v2)
		return !d->timeout ? DURABLE_V2_DEFAULT_MS :
		       d->timeout > DURABLE_V2_MAX_MS ? DURABLE_V2_MAX_MS : d->timeout;
	return DURABLE_V1_TIMEOUT_MS;
}

/* Close a disconnected open for good. */
static void durable_close(struct srv_open *o)
{
	if (atomic_exchange(&o->closed, true))
		return;
	srv_open_detached(o);
}

/*
 * After the open was granted its caching: does it become durable? A
 * persistent handle ([MS-SMB2] 3.3.5.9.10) on a continuously available
 * share needs no handle caching; it is journaled before the CREATE is
 * answered. Elsewhere a durable open must hold handle caching.
 */
void srv_durable_grant(struct srv_req *req, struct srv_open *o, const struct srv_durable_req *d)
{
	bool persistent = d->persistent && d->v2 && o->share->ca && o->share->journal &&
			  req->conn->dialect >= SMB2_DIALECT_300 &&
			  req->conn->server_caps & SMB2_GLOBAL_CAP_PERSISTENT_HANDLES;
	uint32_t state;

	o->jslot = -1;
	if (!d->want || o->path_only || !o->file || (o->is_dir && !persistent))
		return;
	pthread_mutex_lock(&o->file->lock);
	state = o->lease ? o->lease->state : o->oplock;
	pthread_mutex_unlock(&o->file->lock);
	if (!persistent && !(state & SMB2_LEASE_HANDLE))
		return;
	o->durable = true;
	o->durable_v2 = d->v2;
	o->durable_timeout = srv_durable_timeout(d);
	memcpy(o->create_guid, d->create_guid, 16);
	if (persistent) {
		o->persistent_handle = true;
		srv_durable_journal(o, false);
		if (o->jslot < 0) {
			/* not journaled: durable only if it could be anyway */
			o->persistent_handle = false;
			o->durable = state & SMB2_LEASE_HANDLE;
		}
	}
}

/*
 * Its session went with its connection: the open waits for a reconnect,
 * unless it was to delete its file (then it closes, as in Samba). Opens
 * waiting on its breaks look again: it is in nobody's way now.
 */
void srv_durable_disconnect(struct srv *srv, struct srv_open *o)
{
	struct srv_file *f = o->file;
	bool doomed;

	pthread_mutex_lock(&f->lock);
	doomed = o->delete_on_close || f->delete_pending;
	pthread_mutex_unlock(&f->lock);
	if (doomed) {
		durable_close(o);
		return;
	}
	o->disconnect_deadline = srv_now_ms() + o->durable_timeout;
	pthread_mutex_lock(&srv->durable_lock);
	o->disconnected = true;
	list_add_tail(&o->durable_link, &srv->durables);
	pthread_mutex_unlock(&srv->durable_lock);
	atomic_fetch_add(&srv->cst.durable_kept, 1);
	atomic_fetch_add(&srv->cst.ndisconnected, 1);
	srv_file_wake(f);
	pr_notice("[%s] %s: durable open kept for %u s after its connection went",
		o->share->name, f->path, o->durable_timeout / 1000);
}

/* Off the disconnected list; false if someone else took it already. */
static bool durable_take(struct srv *srv, struct srv_open *o)
{
	bool mine;

	pthread_mutex_lock(&srv->durable_lock);
	mine = o->disconnected;
	if (mine) {
		o->disconnected = false;
		list_del(&o->durable_link);
	}
	pthread_mutex_unlock(&srv->durable_lock);
	if (mine)
		atomic_fetch_sub(&srv->cst.ndisconnected, 1);
	return mine;
}


void srv_durable_purge(struct srv *srv, struct list_head *purge)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, purge) {
		struct srv_open *o = list_entry(pos, struct srv_open, purge_link);

		list_del(&o->purge_link);
		o->purge = false;
		if (!durable_take(srv, o))
			continue;	/* reconnected meanwhile, or gone */
		pr_info("[%s] %s: a disconnected durable open is closed: another open needs its caching",
			o->share->name, o->file ? o->file->path : "?");
		atomic_fetch_add(&srv->cst.durable_purged, 1);
		durable_close(o);
	}
}

void srv_durable_timer(struct srv *srv)
{
	uint64_t now = srv_now_ms();
	struct list_head *pos, *tmp, gone;

	list_init(&gone);
	pthread_mutex_lock(&srv->durable_lock);
	list_for_each_safe(pos, tmp, &srv->durables) {
		struct srv_open *o = list_entry(pos, struct srv_open, durable_link);

		if (o->disconnect_deadline > now)
			continue;
		o->disconnected = false;
		list_del(&o->durable_link);
		list_add_tail(&o->durable_link, &gone);
		atomic_fetch_sub(&srv->cst.ndisconnected, 1);
		atomic_fetch_add(&srv->cst.durable_expired, 1);
	}
	pthread_mutex_unlock(&srv->durable_lock);
	list_for_each_safe(pos, tmp, &gone) {
		struct srv_open *o = list_entry(pos, struct srv_open, durable_link);

		list_del(&o->durable_link);
		pr_info("[%s] %s: durable open not reconnected in %u s: closed",
			o->share->name, o->file ? o->file->path : "?",
			o->durable_timeout / 1000);
		durable_close(o);
	}
}

/* Server stop: what is still disconnected closes. */
void srv_durable_free(struct srv *srv)
{
	struct list_head *pos;

	pthread_mutex_lock(&srv->durable_lock);
	list_for_each(pos, &srv->durables)
		list_entry(pos, struct srv_open, durable_link)->disconnect_deadline = 0;
	pthread_mutex_unlock(&srv->durable_lock);
	srv_durable_timer(srv);
}

/* ---- reconnect ---- */

#define RECONNECT_WAIT_TRIES 125	/* 2 ms each: a quarter second at most */

/* A disconnected durable open by persistent FileId; a reference. */
static struct srv_open *durable_find(struct srv *srv, uint64_t persistent)
{
	struct srv_open *o = NULL, *x;
	struct list_head *pos;

	pthread_mutex_lock(&srv->durable_lock);
	list_for_each(pos, &srv->durables) {
		x = list_entry(pos, struct srv_open, durable_link);
		if (x->persistent == persistent) {
			o = srv_open_ref(x);
			break;
		}
	}
	pthread_mutex_unlock(&srv->durable_lock);
	return o;
}

/*
 * DHnC / DH2C: give the disconnected open back to this session on this
 * tree. *out is the open (the table's reference stays; the caller gets
 * its own). Refusals answer STATUS_OBJECT_NAME_NOT_FOUND, as Windows
 * and Samba do, so a client cannot learn what exists.
 */
int srv_durable_reconnect(struct srv_req *req, const struct srv_durable_req *d,
			  const struct srv_cache_req *cr, const char *path,
			  struct srv_open **out)
{
	struct srv *srv = req->conn->srv;
	struct srv_tree *t = req->tree;
	struct srv_session *s = req->sess;
	struct srv_open *o;
	char opath[4096];
	int i, ret = -E_SMB_OBJECT_NAME_NOT_FOUND;

	o = durable_find(srv, d->reconnect_fid.persistent);
	/*
	 * The client's old connection dropped but its worker has not torn it
	 * down yet (another thread): wait for that a moment, bounded, as
	 * Samba waits for a previous session to go.
	 */
	for (i = 0; !o && i < RECONNECT_WAIT_TRIES &&
		    srv_open_attached(srv, &d->reconnect_fid, req->conn->client_guid); i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		o = durable_find(srv, d->reconnect_fid.persistent);
	}
	if (!o)
		return ret;
	if (d->v2 && memcmp(o->create_guid, d->create_guid, 16))
		goto out_put;
	if (!o->durable || o->share != t->share || strcmp(o->owner, s->user))
		goto out_put;
	/* the lease must be named again, with its key, by its client */
	if (!!o->lease != cr->lease ||
	    (o->lease && (memcmp(o->lease->key, cr->lc.key, 16) ||
			  memcmp(o->lease->client_guid, req->conn->client_guid, 16))))
		goto out_put;
	/* under a lease the name must be the same ([MS-SMB2] 3.3.5.9.12) */
	if (o->lease && o->file && !srv_file_path(o->file, opath, sizeof(opath)) &&
	    strcmp(opath, path)) {
		ret = -EINVAL;
		goto out_put;
	}
	if (!durable_take(srv, o))
		goto out_put;
	ret = srv_open_reattach(s, t, o);
	if (ret) {
		durable_close(o);
		goto out_put;
	}
	memcpy(o->client_guid, req->conn->client_guid, 16);
	atomic_fetch_add(&srv->cst.durable_reconnects, 1);
	/* a break that went nowhere while it was away goes to it now */
	srv_oplock_reconnected(srv, o);
	pr_notice("%s: durable open of %s reconnected (persistent 0x%llx)", req->conn->x->peer,
		o->file ? o->file->path : "?", (unsigned long long)o->persistent);
	*out = o;
	return 0;
out_put:
	srv_open_put(o);
	return ret;
}

/* ---- persistent handles on continuously available shares ---- */

/* The journal record of o (its file's lock held). */
static void jrec_fill(const struct srv_open *o, struct srv_jrec *r)
{
	struct srv_file *f = o->file;
	struct list_head *pos;

	memset(r, 0, sizeof(*r));
	r->slot = o->jslot;
	r->persistent = o->persistent;
	memcpy(r->create_guid, o->create_guid, 16);
	r->access = o->access;
	r->share_access = o->share_access;
	r->sharing = o->sharing;
	r->timeout = o->durable_timeout;
	r->dev = f->dev;
	r->ino = f->ino;
	r->is_dir = o->is_dir;
	r->oplock = o->oplock;
	memcpy(r->client_guid, o->client_guid, 16);
	if (o->lease) {
		r->has_lease = true;
		memcpy(r->lease_key, o->lease->key, 16);
		r->has_parent = o->lease->has_parent;
		memcpy(r->parent_key, o->lease->parent_key, 16);
		r->lease_version = o->lease->version;
		r->lease_epoch = o->lease->epoch;
		/* a break in flight is kept as its required end */
		r->lease_state = o->lease->breaking ? o->lease->breaking_to_required :
				 o->lease->state;
	}
	memcpy(r->lock_seq, o->lock_seq, 64);
	snprintf(r->owner, sizeof(r->owner), "%s", o->owner);
	snprintf(r->path, sizeof(r->path), "%s", f->path);
	list_for_each(pos, &f->locks) {
		struct srv_brl *l = list_entry(pos, struct srv_brl, link);

		if (l->o != o)
			continue;
		if (r->nlocks == SRV_JREC_MAX_LOCKS) {
			r->nlocks++;	/* too many: the write fails, loudly */
			break;
		}
		r->locks[r->nlocks].offset = l->offset;
		r->locks[r->nlocks].length = l->length;
		r->locks[r->nlocks].exclusive = l->exclusive;
		r->nlocks++;
	}
}

void srv_durable_journal(struct srv_open *o, bool locked)
{
	struct srv_journal *j = o->share->journal;
	struct srv_jrec *r;
	int ret;

	if (!o->persistent_handle || !j || !o->file)
		return;
	r = malloc(sizeof(*r));
	if (!r) {
		log_ratelimited(LOG_ERR, "[%s] ca journal: out of memory", o->share->name);
		return;
	}
	if (!locked)
		pthread_mutex_lock(&o->file->lock);
	jrec_fill(o, r);
	ret = srv_journal_put(j, r);
	if (!ret)
		o->jslot = r->slot;
	if (!locked)
		pthread_mutex_unlock(&o->file->lock);
	if (ret)
		log_ratelimited(LOG_ERR, "[%s] %s: persistent open not journaled: %s",
				o->share->name, r->path, strerror(-ret));
	free(r);
}

void srv_durable_journal_file(struct srv_file *f)
{
	struct list_head *pos;

	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->opens) {
		struct srv_open *o = list_entry(pos, struct srv_open, file_link);

		if (o->persistent_handle)
			srv_durable_journal(o, true);
	}
	pthread_mutex_unlock(&f->lock);
}

void srv_durable_forget(struct srv_open *o)
{
	if (o->jslot < 0 || !o->share->journal)
		return;
	/* a clean stop keeps persistent opens for the next start */
	if (o->srv && atomic_load(&o->srv->stopping))
		return;
	srv_journal_drop(o->share->journal, o->jslot);
	o->jslot = -1;
}

struct restore_call {
	struct srv_share *sh;
	const struct srv_jrec *r;
	int fd;
};

static int restore_open_file(void *arg)
{
	struct restore_call *rc = arg;
	const struct srv_jrec *r = rc->r;
	int flags = r->is_dir ? O_RDONLY | O_DIRECTORY :
		    r->access & (FILE_WRITE_DATA | FILE_APPEND_DATA) ? O_RDWR : O_RDONLY;

	return store_open(&rc->sh->root, r->path, flags | O_NONBLOCK | O_NOCTTY, 0, &rc->fd);
}

/*
 * A journaled persistent open comes back after a restart: opened again
 * as its owner, checked to be the same file, with its lease and locks,
 * disconnected until its client reconnects or its time is up.
 */
static int restore_open(struct srv_share *sh, const struct srv_jrec *r, void *arg)
{
	struct srv *srv = arg;
	struct restore_call rc = { sh, r, -1 };
	struct srv_ident *id = NULL;
	char unix_name[64];
	struct srv_open *o;
	struct srv_file *f;
	struct stat st;
	int i, ret;

	ret = srv_logon_ident(srv, r->owner, false, &id, unix_name, sizeof(unix_name));
	if (ret) {
		pr_warn("[%s] ca journal: %s: owner %s has no account now: not restored",
			sh->name, r->path, r->owner);
		return ret;
	}
	ret = srv_ident_enter(id);
	if (!ret)
		ret = restore_open_file(&rc);
	srv_ident_enter(NULL);
	if (!ret && (fstat(rc.fd, &st) || st.st_dev != r->dev || st.st_ino != r->ino))
		ret = -ESTALE;
	if (ret) {
		pr_warn("[%s] ca journal: %s: %s: not restored", sh->name, r->path,
			ret == -ESTALE ? "not the same file any more" : strerror(-ret));
		goto out_close;
	}
	if (!r->is_dir)
		fcntl(rc.fd, F_SETFL, fcntl(rc.fd, F_GETFL) & ~O_NONBLOCK);
	o = calloc(1, sizeof(*o));
	if (!o) {
		ret = -ENOMEM;
		goto out_close;
	}
	srv_open_store_init(o, rc.fd);
	o->srv = srv;
	o->share = sh;
	o->ident = id;
	id = NULL;
	o->is_dir = r->is_dir;
	o->access = r->access;
	o->share_access = r->share_access;
	o->sharing = r->sharing;
	memcpy(o->client_guid, r->client_guid, 16);
	memcpy(o->lock_seq, r->lock_seq, 64);
	memcpy(o->create_guid, r->create_guid, 16);
	snprintf(o->owner, sizeof(o->owner), "%s", r->owner);
	o->durable = o->durable_v2 = o->persistent_handle = true;
	o->durable_timeout = r->timeout;
	o->jslot = r->slot;
	o->persistent = r->persistent;
	f = srv_file_get(srv, sh, st.st_dev, st.st_ino, r->path, r->is_dir);
	if (!f) {
		ret = -ENOMEM;
		goto out_free;
	}
	o->file = f;
	/* on DAX the open reads and writes through the mapping, as in CREATE */
	if (!r->is_dir) {
		ret = srv_ident_enter(o->ident);
		if (!ret)
			ret = srv_open_bind_store(o);
		srv_ident_enter(NULL);
		if (ret)
			goto out_put_file;
	}
	pthread_mutex_lock(&f->lock);
	ret = srv_oplock_restore_locked(srv, o, r);
	for (i = 0; !ret && i < r->nlocks; i++)
		ret = srv_brl_restore_locked(o, r->locks[i].offset, r->locks[i].length,
					     r->locks[i].exclusive);
	if (!ret) {
		list_add_tail(&o->file_link, &f->opens);
		o->on_file = true;
	}
	pthread_mutex_unlock(&f->lock);
	if (ret)
		goto out_put_file;
	ret = srv_open_restore(srv, o);
	if (ret) {
		srv_open_leave_file(o);
		goto out_put_file;
	}
	srv_durable_disconnect(srv, o);
	pr_notice("[%s] %s: persistent open restored from the journal (persistent 0x%llx), %u s to reconnect",
		  sh->name, r->path, (unsigned long long)r->persistent, r->timeout / 1000);
	return 0;
out_put_file:
	srv_file_put(f);
out_free:
	srv_ident_put(&o->ident);
	free(o);
	return ret;
out_close:
	if (rc.fd >= 0)
		close(rc.fd);
	srv_ident_put(&id);
	return ret;
}

int srv_durable_ca_path(const struct srv_config *cfg, const struct srv_share *sh, char *path,
			size_t cap)
{
	if (sh->ca_journal[0])
		return (size_t)snprintf(path, cap, "%s", sh->ca_journal) >= cap ? -ENAMETOOLONG : 0;
	if ((size_t)snprintf(path, cap, "%s/ca-%s.journal", cfg->state_dir, sh->name) >= cap)
		return -ENAMETOOLONG;
	if (mkdir(cfg->state_dir, 0700) && errno != EEXIST) {
		srv_conf_error("state directory %s: %s\n", cfg->state_dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int srv_durable_ca_open(struct srv *srv, struct srv_share *sh)
{
	char path[4096];
	int ret;

	ret = srv_durable_ca_path(srv->cfg, sh, path, sizeof(path));
	if (!ret)
		ret = srv_journal_open(sh, path, &sh->journal, restore_open, srv);
	return ret;
}

int srv_durable_ca_start(struct srv *srv)
{
	struct srv_config *cfg = srv->cfg;
	int i, ret;

	for (i = 0; i < cfg->nshares; i++) {
		if (!cfg->shares[i]->ca)
			continue;
		ret = srv_durable_ca_open(srv, cfg->shares[i]);
		if (ret)
			return ret;
	}
	return 0;
}

void srv_durable_ca_stop(struct srv *srv)
{
	int i;

	for (i = 0; i < srv->cfg->nshares; i++)
		srv_journal_close(&srv->cfg->shares[i]->journal);
}
