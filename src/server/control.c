// SPDX-License-Identifier: MIT
/*
 * The control socket (rdaxctl) and the status it answers.
 *
 * A unix stream socket, mode 0600 in a root-owned directory, served by
 * its own thread: one request line per connection ("status", "status
 * json", "metrics", "reload", "close-session ID"), then the answer: a
 * first line "ok" or "error: why", the body, and the socket closes. The
 * peer must be uid 0 (SO_PEERCRED), whatever the file mode says.
 *
 * What a worker owns (its connections, its counters) is read by the
 * worker itself: the control thread posts a snapshot request to each and
 * waits (a bounded time) for the copies. Sessions and opens are read
 * from the server-wide tables under RCU, each under its own lock.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "util/log.h"

#define CTL_MAX_REQ 256
#define CTL_SNAP_WAIT_MS 2000

/* ---- output ---- */

void srv_out_printf(struct srv_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->err)
		return;
	for (;;) {
		size_t room = o->cap - o->len;

		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = o->cap ? o->cap * 2 : 4096;
		char *b;

		while (cap - o->len <= (size_t)n)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (!b) {
			o->err = -ENOMEM;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
}

void srv_out_free(struct srv_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

/* A JSON string (quoted, escaped). */
static void out_jstr(struct srv_out *o, const char *s)
{
	srv_out_printf(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			srv_out_printf(o, "\\%c", c);
		else if (c < 0x20)
			srv_out_printf(o, "\\u%04x", c);
		else
			srv_out_printf(o, "%c", c);
	}
	srv_out_printf(o, "\"");
}

/* Drop a trailing ",\n" before a closing bracket. */
static void out_close(struct srv_out *o, const char *closing)
{
	if (!o->err && o->len >= 2 && o->buf[o->len - 2] == ',')
		o->len -= 2;
	srv_out_printf(o, "%s", closing);
}

static const char *dialect_name(uint16_t d)
{
	static const struct { uint16_t d; const char *n; } tab[] = {
		{ SMB2_DIALECT_202, "2.0.2" }, { SMB2_DIALECT_210, "2.1" },
		{ SMB2_DIALECT_300, "3.0" }, { SMB2_DIALECT_302, "3.0.2" },
		{ SMB2_DIALECT_311, "3.1.1" },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].d == d)
			return tab[i].n;
	return "-";
}

static const char *transport_name(bool rdma)
{
	return rdma ? "rdma" : "tcp";
}

/* ---- worker snapshots ---- */

struct conn_snap {
	uint64_t id;
	bool rdma;
	char peer[64];
	uint16_t dialect;
	int nchannels;
	uint32_t credits;
	struct srv_conn_stats st;
};

struct worker_snap {
	bool done;
	int nconns, rdma, sessions, opens, rio;
	int nsnap;			/* conns[] */
	size_t bfree, btotal;
	struct srv_conn_stats total;	/* closed connections included */
	struct srv_conn_stats tr[2];
	uint64_t credits[2];
	uint64_t uring_ops, uring_direct;
	uint64_t poll_hits, poll_sleeps, cpu_us;	/* cpu_us: the worker thread's */
	int node, cpu;
	struct conn_snap *conns;
	int nio;
	struct srv_share_io *io;
};

struct gather;

struct gather_work {
	struct srv_work wk;
	struct gather *g;
	int idx;
};

struct gather {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int pending;
	int refs;
	bool abandoned;
	int n;
	struct worker_snap *snaps;
	struct gather_work *works;
};

void srv_conn_stats_add(struct srv_conn_stats *d, const struct srv_conn_stats *s)
{
	d->requests += s->requests;
	d->bytes_read += s->bytes_read;
	d->bytes_written += s->bytes_written;
	d->errors += s->errors;
	d->rdma_reads += s->rdma_reads;
	d->rdma_writes += s->rdma_writes;
	d->rdma_bytes += s->rdma_bytes;
	d->zero_copy_bytes += s->zero_copy_bytes;
	d->bounce_bytes += s->bounce_bytes;
	d->xform_bytes += s->xform_bytes;
	d->xform_bad += s->xform_bad;
	d->tcp_zero_copy_bytes += s->tcp_zero_copy_bytes;
	d->tcp_async_writes += s->tcp_async_writes;
	d->inline_io_bytes += s->inline_io_bytes;
}

static void gather_free(struct gather *g)
{
	int i;

	for (i = 0; i < g->n; i++) {
		free(g->snaps[i].conns);
		free(g->snaps[i].io);
	}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g->snaps);
	free(g->works);
	free(g);
}

static void gather_put(struct gather *g)
{
	bool last;

	pthread_mutex_lock(&g->lock);
	last = !--g->refs;
	pthread_mutex_unlock(&g->lock);
	if (last)
		gather_free(g);
}

/* On the worker: copy what it owns. */
static void worker_snap_fill(struct srv_worker *w, struct worker_snap *ws)
{
	struct list_head *pos, *tmp, *sp, *st;
	int i, n = 0, nshares = srv_config_nshares(w->srv->cfg);
	struct timespec ts;

	ws->total = w->gone;
	ws->tr[0] = w->gone_tr[0];
	ws->tr[1] = w->gone_tr[1];
	ws->conns = calloc((size_t)(w->nconns ? w->nconns : 1), sizeof(*ws->conns));
	list_for_each_safe(pos, tmp, &w->conns) {
		struct srv_conn *c = list_entry(pos, struct srv_conn, worker_link);
		bool rdma = c->x->rdma;

		ws->nconns++;
		ws->rdma += rdma;
		ws->rio += c->x->rdma ? c->rio_active : 0;
		srv_conn_stats_add(&ws->total, &c->stats);
		srv_conn_stats_add(&ws->tr[rdma], &c->stats);
		ws->credits[rdma] += c->seq_range;
		list_for_each_safe(sp, st, &c->channels) {
			ws->sessions++;
			ws->opens += list_entry(sp, struct srv_channel, conn_link)->sess->nopens;
		}
		if (ws->conns && n < w->nconns) {
			struct conn_snap *cs = &ws->conns[n++];

			cs->id = c->id;
			cs->rdma = rdma;
			snprintf(cs->peer, sizeof(cs->peer), "%s", c->x->peer);
			cs->dialect = c->dialect;
			cs->nchannels = c->nchannels;
			cs->credits = c->seq_range;
			cs->st = c->stats;
		}
	}
	ws->nsnap = n;
	for (i = 0; i < w->nrdev; i++) {
		if (!w->rdev[i].bounce)
			continue;
		ws->bfree += mem_pool_free_bytes(w->rdev[i].bounce);
		ws->btotal += mem_pool_size(w->rdev[i].bounce);
	}
	ws->uring_ops = w->uring_ops;
	ws->uring_direct = w->uring_direct_ops;
	ws->poll_hits = w->poll_hits;
	ws->poll_sleeps = w->poll_sleeps;
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		ws->cpu_us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	ws->node = w->node;
	ws->cpu = sched_getcpu();
	if (w->share_io && nshares) {
		ws->io = malloc(sizeof(*ws->io) * (size_t)nshares);
		if (ws->io) {
			memcpy(ws->io, w->share_io, sizeof(*ws->io) * (size_t)nshares);
			ws->nio = nshares;
		}
	}
}

static void worker_snap_work(struct srv_worker *w, struct srv_work *wk)
{
	struct gather_work *gw = (struct gather_work *)wk;
	struct gather *g = gw->g;
	struct worker_snap ws = { 0 };

	worker_snap_fill(w, &ws);
	ws.done = true;
	pthread_mutex_lock(&g->lock);
	if (!g->abandoned) {
		g->snaps[gw->idx] = ws;
		ws.conns = NULL;
		ws.io = NULL;
	}
	g->pending--;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	free(ws.conns);
	free(ws.io);
	gather_put(g);
}

/*
 * Ask every worker for its snapshot; the ones that answer in time are in
 * the result (a worker stuck in a long call is left out, not waited for).
 */
static struct gather *gather_workers(struct srv *s)
{
	struct gather *g = calloc(1, sizeof(*g));
	struct timespec ts;
	int i;

	if (!g)
		return NULL;
	g->n = s->nworkers;
	g->snaps = calloc((size_t)g->n, sizeof(*g->snaps));
	g->works = calloc((size_t)g->n, sizeof(*g->works));
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	if (!g->snaps || !g->works) {
		gather_free(g);
		return NULL;
	}
	g->pending = g->n;
	g->refs = g->n + 1;
	for (i = 0; i < g->n; i++) {
		g->works[i].wk.fn = worker_snap_work;
		g->works[i].g = g;
		g->works[i].idx = i;
		srv_worker_post(&s->workers[i], &g->works[i].wk);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += CTL_SNAP_WAIT_MS / 1000;
	pthread_mutex_lock(&g->lock);
	while (g->pending && !atomic_load(&s->stopping))
		if (pthread_cond_timedwait(&g->cond, &g->lock, &ts) == ETIMEDOUT)
			break;
	g->abandoned = true;
	pthread_mutex_unlock(&g->lock);
	return g;
}

/* ---- status ---- */

static void status_sessions(struct srv *srv, struct srv_out *o)
{
	struct srv_session *s;
	struct cds_lfht_iter it;
	struct list_head *pos, *tmp;

	if (o->json)
		srv_out_printf(o, "\"sessions\": [\n");
	rcu_read_lock();
	cds_lfht_for_each_entry(srv->sessions, &it, s, node) {
		pthread_mutex_lock(&s->lock);
		if (o->json) {
			srv_out_printf(o, "  {\"id\": \"0x%llx\", \"user\": ", (unsigned long long)s->id);
			out_jstr(o, s->user);
			srv_out_printf(o, ", \"unix_user\": ");
			out_jstr(o, s->ident ? s->ident->name : "");
			srv_out_printf(o, ", \"dialect\": \"%s\", \"state\": \"%s\", \"guest\": %s, "
				       "\"signing\": %s, \"encrypted\": %s, \"opens\": %d, \"channels\": [",
				       dialect_name(s->dialect),
				       atomic_load(&s->state) == SESS_VALID ? "valid" : "in progress",
				       s->guest ? "true" : "false",
				       s->signing_required ? "true" : "false",
				       s->encrypt ? "true" : "false", s->nopens);
		} else {
			srv_out_printf(o, "stats session 0x%llx %s as %s: %d channel%s, "
				       "%d tree%s, %d open%s", (unsigned long long)s->id, s->user,
				       s->ident ? s->ident->name : "-", s->nchannels,
				       s->nchannels == 1 ? "" : "s", s->ntrees, s->ntrees == 1 ? "" : "s",
				       s->nopens, s->nopens == 1 ? "" : "s");
		}
		list_for_each_safe(pos, tmp, &s->channels) {
			struct srv_channel *ch = list_entry(pos, struct srv_channel, sess_link);

			if (o->json) {
				srv_out_printf(o, "{\"connection\": %llu, \"transport\": \"%s\", \"peer\": ",
					       (unsigned long long)ch->conn->id,
					       transport_name(ch->conn->x->rdma));
				out_jstr(o, ch->conn->x->peer);
				srv_out_printf(o, ", \"binding\": %s, \"requests\": %llu, "
					       "\"bytes_in\": %llu, \"bytes_out\": %llu}, ",
					       ch->state == CHAN_BINDING ? "true" : "false",
					       (unsigned long long)atomic_load(&ch->st.requests),
					       (unsigned long long)atomic_load(&ch->st.bytes_in),
					       (unsigned long long)atomic_load(&ch->st.bytes_out));
				continue;
			}
			srv_out_printf(o, "; %s %s%s requests %llu bytes_in %llu bytes_out %llu",
				       transport_name(ch->conn->x->rdma), ch->conn->x->peer,
				       ch->state == CHAN_BINDING ? " (binding)" : "",
				       (unsigned long long)atomic_load(&ch->st.requests),
				       (unsigned long long)atomic_load(&ch->st.bytes_in),
				       (unsigned long long)atomic_load(&ch->st.bytes_out));
		}
		if (o->json) {
			if (!o->err && o->buf[o->len - 1] == ' ')
				o->len -= 2;
			srv_out_printf(o, "], \"trees\": [");
		} else {
			srv_out_printf(o, "; dialect %s trees", dialect_name(s->dialect));
		}
		list_for_each_safe(pos, tmp, &s->trees) {
			struct srv_tree *t = list_entry(pos, struct srv_tree, sess_link);

			if (o->json) {
				srv_out_printf(o, "{\"id\": %u, \"share\": ", t->id);
				out_jstr(o, t->share->name);
				srv_out_printf(o, ", \"read_only\": %s}, ", t->read_only ? "true" : "false");
			} else {
				srv_out_printf(o, " %u:[%s]", t->id, t->share->name);
			}
		}
		if (o->json) {
			if (!o->err && o->buf[o->len - 1] == ' ')
				o->len -= 2;
			srv_out_printf(o, "]},\n");
		} else {
			srv_out_printf(o, "\n");
		}
		pthread_mutex_unlock(&s->lock);
	}
	rcu_read_unlock();
	if (o->json)
		out_close(o, "\n],\n");
}

static bool open_get_live(struct srv_open *op)
{
	int n = atomic_load(&op->refs);

	while (n > 0)
		if (atomic_compare_exchange_weak(&op->refs, &n, n + 1))
			return true;
	return false;
}

static void lease_bits(uint32_t st, char *buf)
{
	int n = 0;

	if (st & SMB2_LEASE_READ)
		buf[n++] = 'R';
	if (st & SMB2_LEASE_WRITE)
		buf[n++] = 'W';
	if (st & SMB2_LEASE_HANDLE)
		buf[n++] = 'H';
	if (!n)
		buf[n++] = '-';
	buf[n] = 0;
}

static void status_open(struct srv_out *o, struct srv_open *op)
{
	char path[1100] = "", cache[8], lease[8] = "";
	const char *durable;
	bool has_lease = false;

	if (op->file) {
		pthread_mutex_lock(&op->file->lock);
		snprintf(path, sizeof(path), "%s", op->file->path ? op->file->path : "");
		lease_bits(op->oplock, cache);
		if (op->lease) {
			has_lease = true;
			lease_bits(op->lease->state, lease);
		}
		pthread_mutex_unlock(&op->file->lock);
	} else {
		lease_bits(0, cache);
	}
	durable = op->persistent_handle ? "persistent" : op->durable ? "durable" : "no";
	if (o->json) {
		srv_out_printf(o, "  {\"id\": \"0x%llx\", \"persistent_id\": \"0x%llx\", "
			       "\"session\": \"0x%llx\", \"tree\": %u, \"share\": ",
			       (unsigned long long)op->volatile_id,
			       (unsigned long long)op->persistent,
			       (unsigned long long)op->sess_id, op->tree_id);
		out_jstr(o, op->share ? op->share->name : "");
		srv_out_printf(o, ", \"path\": ");
		out_jstr(o, path);
		srv_out_printf(o, ", \"owner\": ");
		out_jstr(o, op->owner);
		srv_out_printf(o, ", \"directory\": %s, \"access\": \"0x%x\", \"share_access\": \"0x%x\", "
			       "\"oplock\": \"%s\", \"lease\": %s%s%s, \"durable\": \"%s\", "
			       "\"disconnected\": %s},\n", op->is_dir ? "true" : "false",
			       op->access, op->share_access, op->lease ? "-" : cache,
			       has_lease ? "\"" : "", has_lease ? lease : "null",
			       has_lease ? "\"" : "", durable,
			       op->disconnected ? "true" : "false");
		return;
	}
	srv_out_printf(o, "stats open 0x%llx session 0x%llx [%s] \"%s\" owner %s access 0x%x "
		       "caching %s%s durable %s%s\n", (unsigned long long)op->volatile_id,
		       (unsigned long long)op->sess_id, op->share ? op->share->name : "-",
		       path, op->owner[0] ? op->owner : "-", op->access,
		       has_lease ? "lease " : "oplock ", has_lease ? lease : cache, durable,
		       op->disconnected ? " (disconnected)" : "");
}

static void status_opens(struct srv *srv, struct srv_out *o)
{
	struct cds_lfht_iter it;
	struct srv_open *op;

	if (o->json)
		srv_out_printf(o, "\"opens\": [\n");
	rcu_read_lock();
	cds_lfht_for_each_entry(srv->opens, &it, op, node) {
		if (atomic_load(&op->closed) || !open_get_live(op))
			continue;
		status_open(o, op);
		/* the last one if it closed meanwhile: then it goes here */
		srv_open_put(op);
	}
	rcu_read_unlock();
	if (o->json)
		out_close(o, "\n],\n");
}

struct share_totals {
	uint64_t ops[2], bytes[2];
};

static void share_io_totals(struct gather *g, int idx, struct share_totals *t)
{
	int i, tr, op;

	memset(t, 0, sizeof(*t));
	for (i = 0; g && i < g->n; i++) {
		if (!g->snaps[i].done || idx >= g->snaps[i].nio)
			continue;
		for (tr = 0; tr < 2; tr++)
			for (op = 0; op < 2; op++) {
				t->ops[op] += g->snaps[i].io[idx].ops[tr][op];
				t->bytes[op] += g->snaps[i].io[idx].bytes[tr][op];
			}
	}
}

static void status_shares(struct srv *s, struct gather *g, struct srv_out *o)
{
	int i, j, n = srv_config_nshares(s->cfg);

	if (o->json)
		srv_out_printf(o, "\"shares\": [\n");
	for (i = 0; i < n; i++) {
		struct srv_share *sh = s->cfg->shares[i];
		uint64_t mapped = 0, mw, tw;
		struct share_totals t;
		int files = 0;

		if (sh->ipc || atomic_load(&sh->removed))
			continue;
		mw = atomic_load(&sh->dax_gone_mapped_written);
		tw = atomic_load(&sh->dax_gone_fd_written);
		if (sh->devdax) {
			struct dax_stats st;

			dax_get_stats(sh->devdax, &st);
			mw += st.mapped_bytes_written;
			tw += st.tail_bytes_written;
		}
		for (j = 0; j < SRV_FILE_SHARDS; j++) {
			struct srv_file_shard *sd = &sh->shards[j];
			struct list_head *pos, *tmp;

			pthread_mutex_lock(&sd->lock);
			list_for_each_safe(pos, tmp, &sd->files) {
				struct srv_file *f = list_entry(pos, struct srv_file, link);
				struct dax_stats st;

				if (!f->dax || f->dax == sh->devdax)
					continue;
				dax_get_stats(f->dax, &st);
				files++;
				mapped += st.mapped;
				mw += st.mapped_bytes_written;
				tw += st.tail_bytes_written;
			}
			pthread_mutex_unlock(&sd->lock);
		}
		share_io_totals(g, i, &t);
		if (o->json) {
			srv_out_printf(o, "  {\"name\": ");
			out_jstr(o, sh->name);
			srv_out_printf(o, ", \"path\": ");
			out_jstr(o, sh->dax_device[0] ? sh->dax_device : sh->path);
			srv_out_printf(o, ", \"read_only\": %s, \"guest_ok\": %s, \"store\": \"%s\", "
				       "\"rung\": \"%s\", \"dax_files\": %d, \"dax_mapped\": %llu, "
				       "\"dax_mapped_writes\": %llu, \"dax_fd_writes\": %llu, "
				       "\"reads\": %llu, \"writes\": %llu, \"bytes_read\": %llu, "
				       "\"bytes_written\": %llu},\n",
				       sh->read_only ? "true" : "false", sh->guest_ok ? "true" : "false",
				       sh->store == SRV_STORE_DAX ? "dax" : "posix", mem_rung_name(sh->rung),
				       files, (unsigned long long)mapped, (unsigned long long)mw,
				       (unsigned long long)tw, (unsigned long long)t.ops[0],
				       (unsigned long long)t.ops[1], (unsigned long long)t.bytes[0],
				       (unsigned long long)t.bytes[1]);
			continue;
		}
		srv_out_printf(o, "stats share [%s]: store %s rung %s dax_files %d dax_mapped %llu "
			       "dax_mapped_writes %llu dax_fd_writes %llu reads %llu writes %llu "
			       "bytes_read %llu bytes_written %llu\n", sh->name,
			       sh->store == SRV_STORE_DAX ? "dax" : "posix", mem_rung_name(sh->rung),
			       files, (unsigned long long)mapped, (unsigned long long)mw,
			       (unsigned long long)tw, (unsigned long long)t.ops[0],
			       (unsigned long long)t.ops[1], (unsigned long long)t.bytes[0],
			       (unsigned long long)t.bytes[1]);
	}
	if (o->json)
		out_close(o, "\n],\n");
}

static void status_workers(struct gather *g, struct srv_out *o)
{
	int i;

	if (o->json)
		srv_out_printf(o, "\"workers\": [\n");
	for (i = 0; g && i < g->n; i++) {
		struct worker_snap *ws = &g->snaps[i];
		const char *fmt = o->json ?
			"  {\"id\": %d, \"connections\": %d, \"rdma_connections\": %d, "
			"\"sessions\": %d, \"opens\": %d, \"rdma_io\": %d, \"bounce_free\": %zu, "
			"\"bounce_size\": %zu, \"rdma_reads\": %llu, \"rdma_writes\": %llu, "
			"\"rdma_bytes\": %llu, \"zero_copy_bytes\": %llu, \"bounce_bytes\": %llu, "
			"\"xform_bytes\": %llu, \"tcp_zero_copy_bytes\": %llu, \"tcp_async_writes\": %llu, "
			"\"uring_ops\": %llu, \"uring_direct\": %llu, \"poll_hits\": %llu, "
			"\"poll_sleeps\": %llu, \"cpu_us\": %llu, \"node\": %d, \"cpu\": %d},\n" :
			"stats worker %d: connections %d (rdma %d) sessions %d opens %d "
			"rdma_io %d bounce_free %zu/%zu rdma_reads %llu rdma_writes %llu "
			"rdma_bytes %llu zero_copy_bytes %llu bounce_bytes %llu xform_bytes %llu "
			"tcp_zero_copy_bytes %llu tcp_async_writes %llu uring_ops %llu "
			"uring_direct %llu poll_hits %llu poll_sleeps %llu cpu_us %llu node %d cpu %d\n";

		if (!ws->done) {
			if (!o->json)
				srv_out_printf(o, "stats worker %d: busy (no answer in %d ms)\n", i,
					       CTL_SNAP_WAIT_MS);
			continue;
		}
		srv_out_printf(o, fmt, i, ws->nconns, ws->rdma, ws->sessions, ws->opens, ws->rio,
			       ws->bfree, ws->btotal, (unsigned long long)ws->total.rdma_reads,
			       (unsigned long long)ws->total.rdma_writes,
			       (unsigned long long)ws->total.rdma_bytes,
			       (unsigned long long)ws->total.zero_copy_bytes,
			       (unsigned long long)ws->total.bounce_bytes,
			       (unsigned long long)ws->total.xform_bytes,
			       (unsigned long long)ws->total.tcp_zero_copy_bytes,
			       (unsigned long long)ws->total.tcp_async_writes,
			       (unsigned long long)ws->uring_ops, (unsigned long long)ws->uring_direct,
			       (unsigned long long)ws->poll_hits, (unsigned long long)ws->poll_sleeps,
			       (unsigned long long)ws->cpu_us, ws->node, ws->cpu);
	}
	if (o->json)
		out_close(o, "\n],\n");
}

static void status_connections(struct gather *g, struct srv_out *o)
{
	int i, j;

	if (o->json)
		srv_out_printf(o, "\"connections\": [\n");
	for (i = 0; g && i < g->n; i++) {
		for (j = 0; g->snaps[i].done && j < g->snaps[i].nsnap; j++) {
			struct conn_snap *c = &g->snaps[i].conns[j];

			if (o->json) {
				srv_out_printf(o, "  {\"id\": %llu, \"worker\": %d, \"transport\": \"%s\", "
					       "\"peer\": ", (unsigned long long)c->id, i,
					       transport_name(c->rdma));
				out_jstr(o, c->peer);
				srv_out_printf(o, ", \"dialect\": \"%s\", \"channels\": %d, "
					       "\"credits\": %u, \"requests\": %llu, \"errors\": %llu},\n",
					       dialect_name(c->dialect), c->nchannels, c->credits,
					       (unsigned long long)c->st.requests,
					       (unsigned long long)c->st.errors);
				continue;
			}
			srv_out_printf(o, "stats connection %llu worker %d %s %s dialect %s channels %d "
				       "credits %u requests %llu errors %llu\n",
				       (unsigned long long)c->id, i, transport_name(c->rdma), c->peer,
				       dialect_name(c->dialect), c->nchannels, c->credits,
				       (unsigned long long)c->st.requests,
				       (unsigned long long)c->st.errors);
		}
	}
	if (o->json)
		out_close(o, "\n],\n");
}

int srv_status(struct srv *s, struct srv_out *o)
{
	struct gather *g = gather_workers(s);
	int nsess, nopen;

	srv_state_count(s, &nsess, &nopen);
	if (o->json)
		srv_out_printf(o, "{\"version\": \"%s\", \"summary\": {\"connections\": %d, "
			       "\"sessions\": %d, \"opens\": %d},\n", RDAX_VERSION,
			       atomic_load(&s->nconns), nsess, nopen);
	else
		srv_out_printf(o, "stats: %d connections, %d sessions, %d opens\n",
			       atomic_load(&s->nconns), nsess, nopen);
	status_connections(g, o);
	status_sessions(s, o);
	status_opens(s, o);
	srv_caching_dump(s, o);
	status_shares(s, g, o);
	status_workers(g, o);
	if (o->json)
		out_close(o, "\n}\n");
	if (g)
		gather_put(g);
	return o->err;
}

void srv_status_log(struct srv *s)
{
	struct srv_out o = { 0 };
	char *line, *save = NULL;

	if (srv_status(s, &o) || !o.buf) {
		pr_warn("status: %s", strerror(ENOMEM));
		srv_out_free(&o);
		return;
	}
	for (line = strtok_r(o.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		pr_notice("%s", line);
	srv_out_free(&o);
}

/* ---- metrics (Prometheus text format 0.0.4) ---- */

static const unsigned int lat_bounds_us[SRV_LAT_BUCKETS - 1] = {
	50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000, 1000000,
};

uint64_t srv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void srv_io_account(struct srv_worker *w, const struct srv_share *sh, bool rdma,
		    bool write, uint64_t bytes, uint64_t start_ns)
{
	struct srv_share_io *io;
	uint64_t us;
	int b;

	if (!w || !w->share_io || !sh || sh->idx < 0 || sh->idx >= SRV_MAX_SHARES)
		return;
	io = &w->share_io[sh->idx];
	us = start_ns ? (srv_now_ns() - start_ns) / 1000 : 0;
	for (b = 0; b < SRV_LAT_BUCKETS - 1 && us > lat_bounds_us[b]; b++)
		;
	io->ops[rdma][write]++;
	io->bytes[rdma][write] += bytes;
	io->lat_sum_us[rdma][write] += us;
	io->lat[rdma][write][b]++;
}

static void metric_head(struct srv_out *o, const char *name, const char *type,
			const char *help)
{
	srv_out_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

#define CONN_COUNTER(field) offsetof(struct srv_conn_stats, field)

static const struct {
	const char *name;
	const char *help;
	size_t off;
} conn_counters[] = {
	{ "rdax_requests_total", "SMB2 requests received.", CONN_COUNTER(requests) },
	{ "rdax_errors_total", "SMB2 requests answered with an error.", CONN_COUNTER(errors) },
	{ "rdax_rdma_reads_total", "SMB2 READs answered by RDMA Write.", CONN_COUNTER(rdma_reads) },
	{ "rdax_rdma_writes_total", "SMB2 WRITEs fetched by RDMA Read.", CONN_COUNTER(rdma_writes) },
	{ "rdax_rdma_bytes_total", "Bytes moved by RDMA.", CONN_COUNTER(rdma_bytes) },
	{ "rdax_zero_copy_bytes_total", "RDMA bytes between the NIC and a file mapping.",
	  CONN_COUNTER(zero_copy_bytes) },
	{ "rdax_tcp_zero_copy_bytes_total", "TCP bytes between the socket and a file mapping.",
	  CONN_COUNTER(tcp_zero_copy_bytes) },
	{ "rdax_tcp_async_writes_total", "TCP WRITEs stored by io_uring workers (tcp async write).",
	  CONN_COUNTER(tcp_async_writes) },
	{ "rdax_rdma_transform_bytes_total", "RDMA bytes encrypted or signed (RDMA transform).",
	  CONN_COUNTER(xform_bytes) },
	{ "rdax_rdma_transform_refused_total",
	  "RDMA transforms refused: malformed, replayed, or failing their check.",
	  CONN_COUNTER(xform_bad) },
};

static uint64_t stat_at(const struct srv_conn_stats *st, size_t off)
{
	return *(const uint64_t *)((const char *)st + off);
}

static void metrics_transport(struct gather *g, struct srv_out *o)
{
	uint64_t conns[2] = { 0 }, credits[2] = { 0 }, bfree = 0, btotal = 0;
	struct srv_conn_stats tr[2] = { 0 };
	size_t k;
	int i, t;

	for (i = 0; g && i < g->n; i++) {
		struct worker_snap *ws = &g->snaps[i];

		if (!ws->done)
			continue;
		conns[0] += (uint64_t)(ws->nconns - ws->rdma);
		conns[1] += (uint64_t)ws->rdma;
		for (t = 0; t < 2; t++) {
			srv_conn_stats_add(&tr[t], &ws->tr[t]);
			credits[t] += ws->credits[t];
		}
		bfree += ws->bfree;
		btotal += ws->btotal;
	}
	metric_head(o, "rdax_connections", "gauge", "Connections open.");
	for (t = 0; t < 2; t++)
		srv_out_printf(o, "rdax_connections{transport=\"%s\"} %llu\n", transport_name(t),
			       (unsigned long long)conns[t]);
	metric_head(o, "rdax_credits_granted", "gauge", "SMB2 credits granted and not yet used.");
	for (t = 0; t < 2; t++)
		srv_out_printf(o, "rdax_credits_granted{transport=\"%s\"} %llu\n", transport_name(t),
			       (unsigned long long)credits[t]);
	for (k = 0; k < sizeof(conn_counters) / sizeof(conn_counters[0]); k++) {
		metric_head(o, conn_counters[k].name, "counter", conn_counters[k].help);
		for (t = 0; t < 2; t++)
			srv_out_printf(o, "%s{transport=\"%s\"} %llu\n", conn_counters[k].name,
				       transport_name(t),
				       (unsigned long long)stat_at(&tr[t], conn_counters[k].off));
	}
	/* what RDMA moved through the bounce pools (a CPU copy or cipher pass) */
	metric_head(o, "rdax_bounce_bytes_total", "counter",
		    "RDMA bytes copied through a registered bounce pool.");
	srv_out_printf(o, "rdax_bounce_bytes_total %llu\n",
		       (unsigned long long)tr[1].bounce_bytes);
	metric_head(o, "rdax_bounce_pool_bytes", "gauge", "Registered bounce pool size.");
	srv_out_printf(o, "rdax_bounce_pool_bytes %llu\n", (unsigned long long)btotal);
	metric_head(o, "rdax_bounce_pool_free_bytes", "gauge", "Bounce pool bytes free.");
	srv_out_printf(o, "rdax_bounce_pool_free_bytes %llu\n", (unsigned long long)bfree);
}

static void metrics_shares(struct srv *s, struct gather *g, struct srv_out *o)
{
	static const char *const opname[2] = { "read", "write" };
	int n = srv_config_nshares(s->cfg), i, w, t, op, b;
	struct srv_share_io *sum = calloc((size_t)(n ? n : 1), sizeof(*sum));

	if (!sum) {
		o->err = -ENOMEM;
		return;
	}
	for (w = 0; g && w < g->n; w++) {
		struct worker_snap *ws = &g->snaps[w];

		for (i = 0; ws->done && i < ws->nio && i < n; i++)
			for (t = 0; t < 2; t++)
				for (op = 0; op < 2; op++) {
					sum[i].ops[t][op] += ws->io[i].ops[t][op];
					sum[i].bytes[t][op] += ws->io[i].bytes[t][op];
					sum[i].lat_sum_us[t][op] += ws->io[i].lat_sum_us[t][op];
					for (b = 0; b < SRV_LAT_BUCKETS; b++)
						sum[i].lat[t][op][b] += ws->io[i].lat[t][op][b];
				}
	}
	metric_head(o, "rdax_share_io_total", "counter", "READs and WRITEs of a share.");
	for (i = 0; i < n; i++)
		for (t = 0; t < 2; t++)
			for (op = 0; op < 2; op++)
				if (!s->cfg->shares[i]->ipc)
					srv_out_printf(o, "rdax_share_io_total{share=\"%s\",transport=\"%s\","
						       "op=\"%s\"} %llu\n", s->cfg->shares[i]->name,
						       transport_name(t), opname[op],
						       (unsigned long long)sum[i].ops[t][op]);
	metric_head(o, "rdax_share_bytes_total", "counter", "Bytes read and written on a share.");
	for (i = 0; i < n; i++)
		for (t = 0; t < 2; t++)
			for (op = 0; op < 2; op++)
				if (!s->cfg->shares[i]->ipc)
					srv_out_printf(o, "rdax_share_bytes_total{share=\"%s\",transport=\"%s\","
						       "op=\"%s\"} %llu\n", s->cfg->shares[i]->name,
						       transport_name(t), opname[op],
						       (unsigned long long)sum[i].bytes[t][op]);
	metric_head(o, "rdax_share_io_latency_seconds", "histogram",
		    "Time from a READ or WRITE request to its answer.");
	for (i = 0; i < n; i++) {
		const char *name = s->cfg->shares[i]->name;

		if (s->cfg->shares[i]->ipc)
			continue;
		for (t = 0; t < 2; t++)
			for (op = 0; op < 2; op++) {
				uint64_t cum = 0;

				for (b = 0; b < SRV_LAT_BUCKETS; b++) {
					cum += sum[i].lat[t][op][b];
					if (b < SRV_LAT_BUCKETS - 1)
						srv_out_printf(o, "rdax_share_io_latency_seconds_bucket{share=\"%s\","
							       "transport=\"%s\",op=\"%s\",le=\"%g\"} %llu\n",
							       name, transport_name(t), opname[op],
							       lat_bounds_us[b] / 1e6, (unsigned long long)cum);
					else
						srv_out_printf(o, "rdax_share_io_latency_seconds_bucket{share=\"%s\","
							       "transport=\"%s\",op=\"%s\",le=\"+Inf\"} %llu\n",
							       name, transport_name(t), opname[op],
							       (unsigned long long)cum);
				}
				srv_out_printf(o, "rdax_share_io_latency_seconds_sum{share=\"%s\","
					       "transport=\"%s\",op=\"%s\"} %.6f\n", name,
					       transport_name(t), opname[op],
					       sum[i].lat_sum_us[t][op] / 1e6);
				srv_out_printf(o, "rdax_share_io_latency_seconds_count{share=\"%s\","
					       "transport=\"%s\",op=\"%s\"} %llu\n", name,
					       transport_name(t), opname[op],
					       (unsigned long long)cum);
			}
	}
	free(sum);
}

static void metrics_caching(struct srv *s, struct srv_out *o)
{
	static const struct {
		const char *name;
		const char *help;
		size_t off;
	} tab[] = {
		{ "rdax_oplocks_granted_total", "Oplocks granted.",
		  offsetof(struct srv_cache_stats, oplocks) },
		{ "rdax_leases_made_total", "Leases made.", offsetof(struct srv_cache_stats, leases) },
		{ "rdax_breaks_total", "Break notifications sent.",
		  offsetof(struct srv_cache_stats, breaks) },
		{ "rdax_break_acks_total", "Break acknowledgements.",
		  offsetof(struct srv_cache_stats, acks) },
		{ "rdax_break_timeouts_total", "Breaks not acknowledged in time.",
		  offsetof(struct srv_cache_stats, timeouts) },
		{ "rdax_durable_reconnects_total", "Durable handles reconnected.",
		  offsetof(struct srv_cache_stats, durable_reconnects) },
	};
	size_t k;

	for (k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
		metric_head(o, tab[k].name, "counter", tab[k].help);
		srv_out_printf(o, "%s %llu\n", tab[k].name, (unsigned long long)atomic_load(
			       (atomic_uint_fast64_t *)((char *)&s->cst + tab[k].off)));
	}
	metric_head(o, "rdax_leases", "gauge", "Leases held.");
	srv_out_printf(o, "rdax_leases %d\n", atomic_load(&s->cst.nleases));
}

int srv_metrics(struct srv *s, struct srv_out *o)
{
	struct gather *g = gather_workers(s);
	int nsess, nopen;

	srv_state_count(s, &nsess, &nopen);
	metric_head(o, "rdax_sessions", "gauge", "SMB sessions.");
	srv_out_printf(o, "rdax_sessions %d\n", nsess);
	metric_head(o, "rdax_opens", "gauge", "Open files and directories.");
	srv_out_printf(o, "rdax_opens %d\n", nopen);
	metrics_transport(g, o);
	metrics_shares(s, g, o);
	metrics_caching(s, o);
	if (g)
		gather_put(g);
	return o->err;
}

/* ---- the socket ---- */

static int close_session(struct srv *s, const char *arg, char *msg, size_t len)
{
	struct srv_session *sess;
	unsigned long long id;
	char *end;

	errno = 0;
	id = strtoull(arg, &end, 0);
	if (errno || end == arg || *end) {
		snprintf(msg, len, "close-session: '%s' is not a session id", arg);
		return -EINVAL;
	}
	sess = srv_session_lookup(s, id);
	if (!sess) {
		snprintf(msg, len, "close-session: no session 0x%llx", id);
		return -ENOENT;
	}
	pr_notice("control: closing session 0x%llx (%s)", id, sess->user);
	srv_session_end(sess, false);
	srv_session_put(sess);
	snprintf(msg, len, "session 0x%llx closed", id);
	return 0;
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void reply(int fd, int ret, const char *msg, const struct srv_out *body)
{
	char head[1200];
	int n;

	if (ret)
		n = snprintf(head, sizeof(head), "error: %s\n", msg[0] ? msg : strerror(-ret));
	else if (msg[0])
		n = snprintf(head, sizeof(head), "ok: %s\n", msg);
	else
		n = snprintf(head, sizeof(head), "ok\n");
	send_all(fd, head, (size_t)n < sizeof(head) ? (size_t)n : sizeof(head) - 1);
	if (!ret && body && body->buf)
		send_all(fd, body->buf, body->len);
}

static void control_serve(struct srv *s, int fd)
{
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	struct srv_out o = { 0 };
	char req[CTL_MAX_REQ + 1], msg[1024] = "", *nl;
	size_t have = 0;
	int ret;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (have < CTL_MAX_REQ) {
		ssize_t n = recv(fd, req + have, CTL_MAX_REQ - have, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		req[have] = 0;
		if (memchr(req, '\n', have))
			break;
	}
	req[have] = 0;
	/* after the read: closing on unread data would reset the peer */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.uid != 0) {
		log_ratelimited(LOG_WARN, "control: refused a client (uid %d): root only",
				crlen == sizeof(cr) ? (int)cr.uid : -1);
		reply(fd, -EPERM, "permission denied: the control socket is for root only", NULL);
		return;
	}
	nl = strchr(req, '\n');
	if (!nl) {
		reply(fd, -EINVAL, "a request is one line", NULL);
		return;
	}
	*nl = 0;
	if (!strcmp(req, "status") || !strcmp(req, "status json")) {
		o.json = req[6] == ' ';
		ret = srv_status(s, &o);
	} else if (!strcmp(req, "metrics")) {
		ret = srv_metrics(s, &o);
	} else if (!strcmp(req, "reload")) {
		ret = srv_reload(s, msg, sizeof(msg));
	} else if (!strncmp(req, "close-session ", 14)) {
		ret = close_session(s, req + 14, msg, sizeof(msg));
	} else {
		snprintf(msg, sizeof(msg), "unknown request '%.64s'", req);
		ret = -EINVAL;
	}
	reply(fd, ret, msg, &o);
	srv_out_free(&o);
}

static void *control_main(void *arg)
{
	struct srv *s = arg;
	int fd;

	srv_state_thread_enter();
	for (;;) {
		fd = accept4(s->control_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (atomic_load(&s->stopping) || errno == EINVAL || errno == EBADF)
				break;
			continue;
		}
		control_serve(s, fd);
		close(fd);
	}
	srv_state_thread_leave();
	return NULL;
}

/* A socket already at path: another rdaxd's (refuse), or stale (remove). */
static int control_path_free(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (!ret)
		return -EADDRINUSE;
	return unlink(sa->sun_path) ? -errno : 0;
}

int srv_control_start(struct srv *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = s->cfg->control_path;
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat st;
	int ret;

	s->control_fd = -1;
	if (!path[0])
		return 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		pr_err("control socket %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	/* its directory: made root-only if missing; it must be root's */
	memcpy(dir, sa.sun_path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0700) && errno != EEXIST) {
			ret = -errno;
			pr_err("control socket directory %s: %s", dir, strerror(-ret));
			return ret;
		}
		if (stat(dir, &st) || st.st_uid != 0 || (st.st_mode & 0022)) {
			pr_err("control socket directory %s: not root's or writable by others", dir);
			return -EPERM;
		}
	}
	ret = control_path_free(&sa);
	if (ret) {
		pr_err("control socket %s: %s", path, ret == -EADDRINUSE ?
		       "another rdaxd is listening there" : strerror(-ret));
		return ret;
	}
	s->control_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->control_fd < 0)
		return -errno;
	if (bind(s->control_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    chmod(path, 0600) || listen(s->control_fd, 16)) {
		ret = -errno;
		pr_err("control socket %s: %s", path, strerror(-ret));
		goto out_close;
	}
	pr_notice("control socket %s", path);
	return 0;
out_close:
	close(s->control_fd);
	s->control_fd = -1;
	unlink(path);
	return ret;
}

/* After the workers exist: the thread that serves it. */
int srv_control_run(struct srv *s)
{
	int ret;

	if (s->control_fd < 0)
		return 0;
	ret = -pthread_create(&s->control_thread, NULL, control_main, s);
	if (ret) {
		pr_err("control thread: %s", strerror(-ret));
		return ret;
	}
	s->control_running = true;
	return 0;
}

void srv_control_stop(struct srv *s)
{
	if (s->control_fd < 0)
		return;
	/* wakes the accept with EINVAL */
	shutdown(s->control_fd, SHUT_RDWR);
	if (s->control_running)
		pthread_join(s->control_thread, NULL);
	s->control_running = false;
	close(s->control_fd);
	s->control_fd = -1;
	unlink(s->cfg->control_path);
}
