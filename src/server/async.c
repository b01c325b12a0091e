// SPDX-License-Identifier: MIT
/*
 * Requests answered later, and messages to a session from anywhere.
 *
 * A request that must wait (a CREATE for a break, a blocking LOCK) gets
 * a srv_async: its connection lists it by AsyncId, the file it waits on
 * lists it under the file's lock. Whoever changes that file's state
 * wakes the waiters: each is posted to its own worker (srv_worker_post),
 * where dispatch runs the request again (srv_dispatch_resume). The
 * async's references: the connection's, and one per posted resume.
 *
 * Notifications (oplock and lease breaks) are built by whichever thread
 * decides them and posted to the worker of one of the session's
 * channels, which sends them on that connection if it still exists.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

void srv_async_put(struct srv_async *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	srv_open_put(a->lock_open);
	free(a->msg);
	free(a);
}

int srv_async_wait(struct srv_req *req, struct srv_file *f, enum srv_wait kind)
{
	struct srv_async *a = req->async;

	if (!a) {
		/* a flood of waiting requests is bounded per connection */
		if (req->conn->nasyncs >= SRV_MAX_ASYNC) {
			log_ratelimited(LOG_WARN, "%s: %d requests waiting already: STATUS_INSUFFICIENT_RESOURCES",
					req->conn->x->peer, req->conn->nasyncs);
			return -ENOMEM;
		}
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		atomic_init(&a->refs, 1);	/* the connection's */
		a->w = req->conn->w;
		a->c = req->conn;
		a->message_id = req->hdr.message_id;
		a->async_id = ++req->conn->next_async_id;
		list_init(&a->wait_link);
		list_add_tail(&a->conn_link, &req->conn->asyncs);
		req->conn->nasyncs++;
		req->async = a;
		atomic_fetch_add(&req->conn->srv->cst.waits, 1);
	}
	a->wait = kind;
	if (a->file != f) {
		srv_file_ref(f);	/* a->file is NULL: nothing linked */
		a->file = f;
	}
	list_add_tail(&a->wait_link, &f->waiters);
	return 0;
}

static void async_run(struct srv_worker *w, struct srv_work *wk)
{
	struct srv_async *a = (struct srv_async *)wk;

	(void)w;
	srv_dispatch_resume(a);
	srv_async_put(a);	/* the posted resume's */
}

static void async_post(struct srv_async *a)
{
	if (atomic_exchange(&a->posted, true))
		return;
	atomic_fetch_add(&a->refs, 1);
	a->wk.fn = async_run;
	srv_worker_post(a->w, &a->wk);
}

void srv_file_wake_locked(struct srv_file *f)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->waiters) {
		struct srv_async *a = list_entry(pos, struct srv_async, wait_link);

		if (a->wait == SRV_WAIT_NOTIFY)
			continue;	/* they wait for a change, not for the file's state */
		list_del(&a->wait_link);
		async_post(a);
	}
}

bool srv_file_wake_notify_locked(struct srv_file *f, struct srv_open *o)
{
	struct list_head *pos;

	list_for_each(pos, &f->waiters) {
		struct srv_async *a = list_entry(pos, struct srv_async, wait_link);

		if (a->wait != SRV_WAIT_NOTIFY || a->lock_open != o)
			continue;
		list_del(&a->wait_link);
		async_post(a);
		return true;
	}
	return false;
}

void srv_async_end_notify_locked(struct srv_file *f, int err)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->waiters) {
		struct srv_async *a = list_entry(pos, struct srv_async, wait_link);

		if (a->wait != SRV_WAIT_NOTIFY)
			continue;
		a->end_err = err;
		list_del(&a->wait_link);
		async_post(a);
	}
}

void srv_file_wake(struct srv_file *f)
{
	pthread_mutex_lock(&f->lock);
	srv_file_wake_locked(f);
	pthread_mutex_unlock(&f->lock);
}

void srv_async_unwait(struct srv_async *a)
{
	struct srv_file *f = a->file;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	list_del(&a->wait_link);
	pthread_mutex_unlock(&f->lock);
	a->file = NULL;
	srv_file_put(f);
}

void srv_async_end_locks_locked(struct srv_file *f, struct srv_open *o, int err)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &f->waiters) {
		struct srv_async *a = list_entry(pos, struct srv_async, wait_link);

		if ((a->wait != SRV_WAIT_LOCK && a->wait != SRV_WAIT_NOTIFY) || a->lock_open != o)
			continue;
		a->end_err = a->wait == SRV_WAIT_NOTIFY ? -E_SMB_NOTIFY_CLEANUP : err;
		list_del(&a->wait_link);
		async_post(a);
	}
}

void srv_async_conn_gone(struct srv_conn *c)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &c->asyncs) {
		struct srv_async *a = list_entry(pos, struct srv_async, conn_link);

		list_del(&a->conn_link);
		c->nasyncs--;
		srv_async_unwait(a);
		a->c = NULL;	/* a posted resume finds nobody to answer */
		srv_async_put(a);
	}
}

void srv_async_cancel(struct srv_conn *c, const struct smb2_hdr *h)
{
	bool by_async = h->flags & SMB2_FLAGS_ASYNC_COMMAND;
	struct list_head *pos;

	list_for_each(pos, &c->asyncs) {
		struct srv_async *a = list_entry(pos, struct srv_async, conn_link);

		if (by_async ? a->async_id != h->async_id : a->message_id != h->message_id)
			continue;
		if (!a->end_err)
			a->end_err = -E_SMB_CANCELLED;
		srv_async_unwait(a);
		async_post(a);
		return;
	}
}

/* ---- notifications ---- */

struct notify_work {
	struct srv_work wk;
	struct srv_conn *c;		/* checked against the worker's list */
	uint64_t conn_id;
	uint64_t sess_id;		/* whose channel carries it */
	size_t len;
	uint8_t pdu[];
};

static void notify_run(struct srv_worker *w, struct srv_work *wk)
{
	struct notify_work *nw = (struct notify_work *)wk;
	struct srv_channel *ch = NULL;
	struct list_head *pos;
	struct srv_pdu_out out = { 0 };
	struct srv_rbuf *rb;
	struct srv_conn *c = NULL;

	list_for_each(pos, &w->conns) {
		struct srv_conn *x = list_entry(pos, struct srv_conn, worker_link);

		if (x == nw->c && x->id == nw->conn_id) {
			c = x;
			break;
		}
	}
	if (!c || c->closing)
		goto out;
	/* to a session: on its channel here, sealed if it seals */
	if (nw->sess_id) {
		ch = srv_channel_find(c, nw->sess_id);
		if (!ch)
			goto out;
	}
	rb = srv_rbuf_get(w, nw->len);
	if (!rb)
		goto out;
	memcpy(srv_rbuf_payload(rb), nw->pdu, nw->len);
	rb->len = nw->len;
	if (srv_send_response(c, rb, &out, 1, ch && ch->sess->encrypt ? ch->sess : NULL) < 0)
		c->closing = true;
out:
	free(nw);
}

static struct notify_work *notify_new(uint64_t hdr_session_id, uint16_t command,
				      const uint8_t *body, size_t len)
{
	struct notify_work *nw;
	struct smb2_hdr h = { 0 };

	nw = calloc(1, sizeof(*nw) + SMB2_HDR_SIZE + len);
	if (!nw)
		return NULL;
	h.command = command;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	h.message_id = UINT64_MAX;
	h.session_id = hdr_session_id;
	smb2_hdr_encode(nw->pdu, &h);
	memcpy(nw->pdu + SMB2_HDR_SIZE, body, len);
	nw->len = SMB2_HDR_SIZE + len;
	nw->wk.fn = notify_run;
	return nw;
}

/* ---- the connections of each client (by ClientGuid), oldest first ---- */

void srv_client_add(struct srv_conn *c)
{
	struct srv *srv = c->srv;

	pthread_mutex_lock(&srv->client_lock);
	if (!c->in_clients) {
		list_add_tail(&c->client_link, &srv->client_conns);
		c->in_clients = true;
	}
	pthread_mutex_unlock(&srv->client_lock);
}

void srv_client_del(struct srv_conn *c)
{
	struct srv *srv = c->srv;

	pthread_mutex_lock(&srv->client_lock);
	if (c->in_clients) {
		list_del(&c->client_link);
		c->in_clients = false;
	}
	pthread_mutex_unlock(&srv->client_lock);
}

/* The worker this thread is (NULL elsewhere: identity and control threads). */
static __thread struct srv_worker *cur_worker;

void srv_async_thread_is(struct srv_worker *w)
{
	cur_worker = w;
}

/*
 * On the target's own worker the notification goes out at once, ahead
 * of the responses to what is still being read; elsewhere it is posted.
 */
static void notify_deliver(struct srv_worker *w, struct notify_work *nw)
{
	if (w == cur_worker)
		notify_run(w, &nw->wk);
	else
		srv_worker_post(w, &nw->wk);
}

bool srv_notify_client(struct srv *srv, const uint8_t *guid, uint16_t command,
		       const uint8_t *body, size_t len)
{
	struct notify_work *nw = notify_new(0, command, body, len);
	struct srv_worker *w = NULL;
	struct list_head *pos;

	if (!nw)
		return false;
	pthread_mutex_lock(&srv->client_lock);
	list_for_each(pos, &srv->client_conns) {
		struct srv_conn *c = list_entry(pos, struct srv_conn, client_link);

		if (memcmp(c->client_guid, guid, 16))
			continue;
		nw->c = c;
		nw->conn_id = c->id;
		w = c->w;
		break;
	}
	pthread_mutex_unlock(&srv->client_lock);
	if (!w) {
		free(nw);
		return false;
	}
	notify_deliver(w, nw);
	return true;
}

bool srv_notify_session(struct srv_session *s, uint64_t hdr_session_id,
			uint16_t command, const uint8_t *body, size_t len)
{
	struct notify_work *nw = notify_new(hdr_session_id, command, body, len);
	struct srv_worker *w;
	struct srv_channel *ch;

	if (!nw)
		return false;
	nw->sess_id = s->id;
	pthread_mutex_lock(&s->lock);
	if (list_empty(&s->channels)) {
		pthread_mutex_unlock(&s->lock);
		free(nw);
		return false;
	}
	/* the newest channel: the one most likely alive */
	ch = list_entry(s->channels.prev, struct srv_channel, sess_link);
	nw->c = ch->conn;
	nw->conn_id = ch->conn->id;
	w = ch->conn->w;
	pthread_mutex_unlock(&s->lock);
	notify_deliver(w, nw);
	return true;
}
