// SPDX-License-Identifier: MIT
/*
 * Server-wide state: sessions, their channels and their trees.
 *
 * Sessions and trees sit in liburcu lock-free hash tables (srv.sessions,
 * srv.trees): a lookup is an RCU read-side walk and a reference taken
 * only if the object is not already on its way out, so no worker ever
 * waits on another to find one. A session's mutex covers its lists and
 * counters, changed by setup, binding, tree connect and teardown only.
 * An object leaves its table at once when it ends, and is freed after
 * its last reference and a grace period (call_rcu).
 *
 * A connection finds its sessions through its own channel list, which
 * only its worker touches: the data path takes no shared lock at all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/auth.h"
#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

#define SESSION_BUCKETS 4096
#define OPEN_BUCKETS 65536

static unsigned long hash64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	v ^= v >> 33;
	return (unsigned long)v;
}

static bool ref_get_live(atomic_int *refs)
{
	int n = atomic_load(refs);

	while (n > 0)
		if (atomic_compare_exchange_weak(refs, &n, n + 1))
			return true;
	return false;
}

/* ---- tables ---- */

/*
 * Fixed sizes: liburcu's automatic resize runs in a worker thread that
 * unblocks SIGUSR1 (for its signal flavour), and rdaxd's control thread
 * must receive every SIGUSR1 through its signalfd.
 */
int srv_state_init(struct srv *s)
{
	s->sessions = cds_lfht_new(SESSION_BUCKETS, SESSION_BUCKETS, SESSION_BUCKETS, 0, NULL);
	s->trees = cds_lfht_new(SESSION_BUCKETS, SESSION_BUCKETS, SESSION_BUCKETS, 0, NULL);
	s->opens = cds_lfht_new(OPEN_BUCKETS, OPEN_BUCKETS, OPEN_BUCKETS, 0, NULL);
	srv_durable_init(s);
	if (!s->sessions || !s->trees || !s->opens || srv_lease_table_init(s)) {
		srv_state_free(s);
		return -ENOMEM;
	}
	return 0;
}

void srv_state_free(struct srv *s)
{
	/* every object is gone by now: wait for their frees */
	rcu_barrier();
	if (s->sessions)
		cds_lfht_destroy(s->sessions, NULL);
	if (s->trees)
		cds_lfht_destroy(s->trees, NULL);
	if (s->opens)
		cds_lfht_destroy(s->opens, NULL);
	s->sessions = s->trees = s->opens = NULL;
	if (s->lease_tab)
		srv_lease_table_free(s);
}

void srv_state_thread_enter(void)
{
	rcu_register_thread();
}

void srv_state_thread_leave(void)
{
	rcu_unregister_thread();
}

/* ---- sessions ---- */

static void session_free_rcu(struct rcu_head *head)
{
	struct srv_session *s = caa_container_of(head, struct srv_session, rcu);

	explicit_bzero(&s->keys, sizeof(s->keys));
	explicit_bzero(s->session_key, sizeof(s->session_key));
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void srv_session_put(struct srv_session *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	/* out of the table since it ended: only lookups in flight may see it */
	auth_server_delete(&s->auth);
	srv_ident_put(&s->ident);
	call_rcu(&s->rcu, session_free_rcu);
}

static int session_match(struct cds_lfht_node *node, const void *key)
{
	const struct srv_session *s = caa_container_of(node, struct srv_session, node);

	return s->id == *(const uint64_t *)key;
}

static struct srv_channel *channel_new(struct srv_conn *c, struct srv_session *s,
				       enum srv_chan_state state)
{
	struct srv_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->conn = c;
	ch->sess = s;
	ch->state = state;
	list_add_tail(&ch->conn_link, &c->channels);
	c->nchannels++;
	return ch;
}

int srv_session_new(struct srv_conn *c, struct srv_channel **out)
{
	struct srv *srv = c->srv;
	struct srv_channel *ch;
	struct srv_session *s;

	if (c->nchannels >= srv->cfg->max_sessions)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->srv = srv;
	s->id = atomic_fetch_add(&srv->next_session_id, 1);
	atomic_init(&s->state, SESS_IN_PROGRESS);
	atomic_init(&s->refs, 2);	/* the table's and the channel's */
	s->dialect = c->dialect;
	s->cipher = c->cipher;
	s->sign_alg = c->sign_alg;
	if (smb2_nonce_gen_init(&s->xform_nonce)) {
		free(s);
		return -EIO;
	}
	memcpy(s->client_guid, c->client_guid, sizeof(s->client_guid));
	s->next_tree_id = 1;
	s->next_persistent = 1;
	list_init(&s->channels);
	list_init(&s->trees);
	list_init(&s->opens);
	memcpy(s->preauth, c->preauth, sizeof(s->preauth));
	ch = channel_new(c, s, CHAN_VALID);
	if (!ch) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -ENOMEM;
	}
	list_add_tail(&ch->sess_link, &s->channels);
	s->nchannels = 1;
	rcu_read_lock();
	cds_lfht_add(srv->sessions, hash64(s->id), &s->node);
	rcu_read_unlock();
	*out = ch;
	return 0;
}

struct srv_session *srv_session_lookup(struct srv *srv, uint64_t id)
{
	struct srv_session *s = NULL;
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;

	rcu_read_lock();
	cds_lfht_lookup(srv->sessions, hash64(id), session_match, &id, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		s = caa_container_of(node, struct srv_session, node);
		if (atomic_load(&s->state) == SESS_GONE || !ref_get_live(&s->refs))
			s = NULL;
	}
	rcu_read_unlock();
	return s;
}

static void tree_finish(struct srv *srv, struct srv_tree *t);
static void close_opens(struct srv_session *s, bool all, uint32_t tree_id, bool lost);

void srv_session_end(struct srv_session *s, bool lost)
{
	struct srv_tree *t;

	if (atomic_exchange(&s->state, SESS_GONE) == SESS_GONE)
		return;
	rcu_read_lock();
	cds_lfht_del(s->srv->sessions, &s->node);
	rcu_read_unlock();
	close_opens(s, true, 0, lost);
	for (;;) {
		pthread_mutex_lock(&s->lock);
		t = list_empty(&s->trees) ? NULL :
		    list_entry(s->trees.next, struct srv_tree, sess_link);
		if (t) {
			list_del(&t->sess_link);
			s->ntrees--;
			atomic_store(&t->gone, true);
		}
		pthread_mutex_unlock(&s->lock);
		if (!t)
			break;
		tree_finish(s->srv, t);
	}
	srv_session_put(s);		/* the table's */
}

void srv_state_count(struct srv *srv, int *sessions, int *opens)
{
	long split;
	unsigned long ns = 0, no = 0;

	rcu_read_lock();
	cds_lfht_count_nodes(srv->sessions, &split, &ns, &split);
	cds_lfht_count_nodes(srv->opens, &split, &no, &split);
	rcu_read_unlock();
	*sessions = (int)ns;
	*opens = (int)no;
}

/*
 * A signed request for a session this connection does not carry (but
 * another one does) is answered signed with that session's key, as
 * Samba does: clients want the flag on STATUS_USER_SESSION_DELETED.
 */
void srv_req_sign_as_session(struct srv_req *req, uint64_t sid)
{
	struct srv_conn *c = req->conn;
	struct srv_session *s;
	unsigned int i;

	req->chan = NULL;
	if (!(req->hdr.flags & SMB2_FLAGS_SIGNED))
		return;
	/* ended here: as its channel on this connection signed */
	for (i = 0; i < SRV_GONE_SESS; i++) {
		if (c->gone[i].id == sid && sid) {
			req->signer = c->gone[i].sign;
			req->have_signer = true;
			return;
		}
	}
	s = srv_session_lookup(req->conn->srv, sid);
	if (s && s->have_key) {
		req->signer.alg = s->sign_alg;
		memcpy(req->signer.key, s->keys.signing, sizeof(req->signer.key));
		req->have_signer = true;
	}
	srv_session_put(s);
}

/* ---- channels ---- */

void srv_conn_sweep(struct srv_conn *c)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &c->channels) {
		struct srv_channel *ch = list_entry(pos, struct srv_channel, conn_link);

		if (atomic_load(&ch->sess->state) != SESS_GONE)
			continue;
		/* its key signs the STATUS_USER_SESSION_DELETED still to come */
		if (ch->state == CHAN_VALID && ch->sess->have_key) {
			struct srv_gone_sess *g = &c->gone[c->ngone++ % SRV_GONE_SESS];

			g->id = ch->sess->id;
			g->sign = ch->sign;
		}
		srv_channel_drop(ch);
	}
}

struct srv_channel *srv_channel_find(struct srv_conn *c, uint64_t id)
{
	struct list_head *pos, *tmp;

	if (!id)
		return NULL;
	list_for_each_safe(pos, tmp, &c->channels) {
		struct srv_channel *ch = list_entry(pos, struct srv_channel, conn_link);

		if (ch->sess->id != id)
			continue;
		/* ended on another channel (a logoff there): this one goes too */
		if (atomic_load(&ch->sess->state) == SESS_GONE)
			return NULL;
		return ch;
	}
	return NULL;
}

int srv_channel_bind(struct srv_conn *c, struct srv_session *s, struct srv_channel **out)
{
	struct srv_channel *ch;

	if (c->nchannels >= c->srv->cfg->max_sessions)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	ch = channel_new(c, s, CHAN_BINDING);
	if (!ch)
		return -ENOMEM;
	list_init(&ch->sess_link);	/* on the session once it is valid */
	memcpy(ch->preauth, c->preauth, sizeof(ch->preauth));
	*out = ch;
	return 0;
}

void srv_channel_valid(struct srv_channel *ch)
{
	struct srv_session *s = ch->sess;

	pthread_mutex_lock(&s->lock);
	ch->state = CHAN_VALID;
	list_add_tail(&ch->sess_link, &s->channels);
	if (++s->nchannels > 1)
		s->was_multi = true;
	pthread_mutex_unlock(&s->lock);
	auth_server_delete(&ch->auth);
}

void srv_channel_drop(struct srv_channel *ch)
{
	struct srv_session *s = ch->sess;
	bool last = false, multi;
	int left;

	list_del(&ch->conn_link);
	ch->conn->nchannels--;
	if (ch->state == CHAN_VALID) {
		pthread_mutex_lock(&s->lock);
		list_del(&ch->sess_link);
		left = --s->nchannels;
		multi = s->was_multi;
		pthread_mutex_unlock(&s->lock);
		last = !left;
		if (multi)
			pr_notice("%s: %s channel of session 0x%llx closed: requests %llu bytes_in %llu bytes_out %llu",
				  ch->conn->x->peer, ch->conn->x->rdma ? "rdma" : "tcp",
				  (unsigned long long)s->id,
				  (unsigned long long)atomic_load(&ch->st.requests),
				  (unsigned long long)atomic_load(&ch->st.bytes_in),
				  (unsigned long long)atomic_load(&ch->st.bytes_out));
		if (left && atomic_load(&s->state) == SESS_VALID)
			pr_notice("%s: channel of session 0x%llx gone; the session goes on on %d other%s",
				  ch->conn->x->peer, (unsigned long long)s->id, left,
				  left == 1 ? "" : "s");
	}
	if (last)
		srv_session_end(s, true);	/* the connection went: durable opens stay */
	auth_server_delete(&ch->auth);
	explicit_bzero(&ch->sign, sizeof(ch->sign));
	srv_session_put(s);
	free(ch);
}

/* ---- trees ---- */

struct tree_key {
	uint64_t sess_id;
	uint32_t id;
};

static unsigned long tree_hash(uint64_t sess_id, uint32_t id)
{
	return hash64(sess_id ^ ((uint64_t)id << 40) ^ id);
}

static int tree_match(struct cds_lfht_node *node, const void *key)
{
	const struct srv_tree *t = caa_container_of(node, struct srv_tree, node);
	const struct tree_key *k = key;

	return t->sess_id == k->sess_id && t->id == k->id;
}

static void tree_free_rcu(struct rcu_head *head)
{
	free(caa_container_of(head, struct srv_tree, rcu));
}

void srv_tree_put(struct srv_tree *t)
{
	if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	srv_ident_put(&t->ident);
	call_rcu(&t->rcu, tree_free_rcu);
}

int srv_tree_add(struct srv_session *s, struct srv_tree *t)
{
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->state) == SESS_GONE) {
		pthread_mutex_unlock(&s->lock);
		return -E_SMB_USER_SESSION_DELETED;
	}
	t->id = s->next_tree_id++;
	t->sess_id = s->id;
	atomic_init(&t->refs, 1);	/* the table's */
	list_add_tail(&t->sess_link, &s->trees);
	s->ntrees++;
	rcu_read_lock();
	cds_lfht_add(s->srv->trees, tree_hash(s->id, t->id), &t->node);
	rcu_read_unlock();
	pthread_mutex_unlock(&s->lock);
	return 0;
}

struct srv_tree *srv_tree_get(struct srv_session *s, uint32_t id)
{
	struct tree_key k = { s->id, id };
	struct srv_tree *t = NULL;
	struct cds_lfht_node *node;
	struct cds_lfht_iter it;

	rcu_read_lock();
	cds_lfht_lookup(s->srv->trees, tree_hash(s->id, id), tree_match, &k, &it);
	node = cds_lfht_iter_get_node(&it);
	if (node) {
		t = caa_container_of(node, struct srv_tree, node);
		if (atomic_load(&t->gone) || !ref_get_live(&t->refs))
			t = NULL;
	}
	rcu_read_unlock();
	return t;
}

/* Out of the table (it is off the session's list and marked gone). */
static void tree_finish(struct srv *srv, struct srv_tree *t)
{
	rcu_read_lock();
	cds_lfht_del(srv->trees, &t->node);
	rcu_read_unlock();
	srv_tree_put(t);
}

void srv_tree_remove(struct srv_session *s, struct srv_tree *t)
{
	bool mine;

	pthread_mutex_lock(&s->lock);
	mine = !atomic_exchange(&t->gone, true);
	if (mine) {
		list_del(&t->sess_link);
		s->ntrees--;
	}
	pthread_mutex_unlock(&s->lock);
	if (!mine)
		return;
	close_opens(s, false, t->id, false);
	tree_finish(s->srv, t);
}

/* ---- the session's opens (the table itself is opens.c) ---- */

/*
 * Close every open of the session (all) or of one tree. lost: the
 * session went with its connection, and durable opens stay for a
 * reconnect (durable.c).
 */
static void close_opens(struct srv_session *s, bool all, uint32_t tree_id, bool lost)
{
	struct list_head *pos, *tmp, gone, kept;

	list_init(&gone);
	list_init(&kept);
	pthread_mutex_lock(&s->lock);
	list_for_each_safe(pos, tmp, &s->opens) {
		struct srv_open *o = list_entry(pos, struct srv_open, sess_link);

		if (!all && o->tree_id != tree_id)
			continue;
		if (lost && o->durable) {
			list_del(&o->sess_link);
			s->nopens--;
			o->sess = NULL;
			list_add_tail(&o->sess_link, &kept);
			continue;
		}
		if (atomic_exchange(&o->closed, true))
			continue;
		list_del(&o->sess_link);
		s->nopens--;
		o->sess = NULL;
		list_add_tail(&o->sess_link, &gone);
	}
	pthread_mutex_unlock(&s->lock);
	list_for_each_safe(pos, tmp, &gone) {
		struct srv_open *o = list_entry(pos, struct srv_open, sess_link);

		list_del(&o->sess_link);
		srv_open_detached(o);
	}
	list_for_each_safe(pos, tmp, &kept) {
		struct srv_open *o = list_entry(pos, struct srv_open, sess_link);

		list_del(&o->sess_link);
		srv_durable_disconnect(s->srv, o);
	}
}
