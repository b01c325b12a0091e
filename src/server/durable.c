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
#include <stdio.h>
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

/* After the open was granted its caching: does it become durable? */
void srv_durable_grant(struct srv_open *o, const struct srv_durable_req *d)
{
	uint32_t state;

	if (!d->want || o->is_dir || o->path_only || !o->file)
		return;
	pthread_mutex_lock(&o->file->lock);
	state = o->lease ? o->lease->state : o->oplock;
	pthread_mutex_unlock(&o->file->lock);
	if (!(state & SMB2_LEASE_HANDLE))
		return;
	o->durable = true;
	o->durable_v2 = d->v2;
	o->durable_timeout = srv_durable_timeout(d);
	memcpy(o->create_guid, d->create_guid, 16);
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
	int ret = -E_SMB_OBJECT_NAME_NOT_FOUND;

	o = durable_find(srv, d->reconnect_fid.persistent);
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
	pr_notice("%s: durable open of %s reconnected (persistent 0x%llx)", req->conn->x->peer,
		o->file ? o->file->path : "?", (unsigned long long)o->persistent);
	*out = o;
	return 0;
out_put:
	srv_open_put(o);
	return ret;
}
