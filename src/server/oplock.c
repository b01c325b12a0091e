// SPDX-License-Identifier: MIT
/*
 * Oplocks and leases ([MS-SMB2] 3.3.4.6, 3.3.4.7, 3.3.5.9.8, 3.3.5.9.11,
 * 3.3.5.22). Both are kept as lease bits: an oplock is R (level II), RW
 * (exclusive) or RWH (batch), so one set of rules decides what a new
 * open breaks and what it is granted, as Samba's smbd does:
 *
 * - a new open breaks W of the others (H too if it would be refused for
 *   sharing, everything but W if it overwrites), and waits while what it
 *   broke needs an acknowledgement;
 * - it is granted what it asked for less W when others have the file
 *   open, less R when byte-range locks exist, less H for a lease when
 *   plain opens exist, and no oplock while a handle lease exists;
 * - a write, truncate or lock breaks the others' read caching to none,
 *   and the writer's own level II oplock.
 *
 * State lives under the file's lock. Notifications are collected while
 * it is held and sent afterwards, on a live channel of the holder's
 * session (srv_notify_session). A break that needs an acknowledgement
 * puts the file on the server's breaking list; the timer ends it after
 * 35 seconds as if the client had acknowledged none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>

#include "proto/lease.h"
#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

#define LEASE_TAB_SIZE 256
#define BREAK_TIMEOUT_MS 35000

#define R SMB2_LEASE_READ
#define H SMB2_LEASE_HANDLE
#define W SMB2_LEASE_WRITE

uint64_t srv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- notifications collected under the file lock ---- */

struct brk_note {
	uint64_t sess_id;		/* an oplock's: its open's session */
	uint8_t client_guid[16];	/* a lease's: the client's oldest connection */
	bool lease;
	struct smb2_oplock_break ob;
	struct smb2_lease_break lb;
};

void srv_breaks_init(struct srv_breaks *b)
{
	memset(b, 0, sizeof(*b));
}

static void note_add(struct srv_breaks *b, const struct brk_note *n)
{
	struct brk_note *v;

	if (b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;

		v = realloc(b->notes, sizeof(*v) * (size_t)cap);
		if (!v) {
			log_ratelimited(LOG_WARN, "out of memory: a break notification is lost");
			return;
		}
		b->notes = v;
		b->cap = cap;
	}
	((struct brk_note *)b->notes)[b->n++] = *n;
}

void srv_breaks_send(struct srv *srv, struct srv_breaks *b)
{
	struct brk_note *notes = b->notes;
	uint8_t body[SMB2_LEASE_BREAK_NOTIFY_SIZE];
	struct srv_session *s;
	struct wcur w;
	int i;

	for (i = 0; i < b->n; i++) {
		struct brk_note *n = &notes[i];

		wcur_init(&w, body, sizeof(body));
		if (n->lease) {
			smb2_lease_break_encode(&w, &n->lb);
			if (!srv_notify_client(srv, n->client_guid, SMB2_OPLOCK_BREAK, body, w.off))
				log_ratelimited(LOG_INFO, "lease break: the client has no connection");
			else
				atomic_fetch_add(&srv->cst.breaks, 1);
			continue;
		}
		s = srv_session_lookup(srv, n->sess_id);
		if (!s)
			continue;
		smb2_oplock_break_encode(&w, &n->ob);
		if (!srv_notify_session(s, s->id, SMB2_OPLOCK_BREAK, body, w.off))
			log_ratelimited(LOG_INFO, "break for session 0x%llx: no live channel",
					(unsigned long long)s->id);
		else
			atomic_fetch_add(&srv->cst.breaks, 1);
		srv_session_put(s);
	}
	free(b->notes);
	srv_breaks_init(b);
}

/* ---- read-cache count (lets WRITE skip the lock when nobody caches) ---- */

static void rcache_adjust(struct srv_file *f, uint32_t from, uint32_t to)
{
	if ((from & R) && !(to & R))
		atomic_fetch_sub(&f->rcache, 1);
	else if (!(from & R) && (to & R))
		atomic_fetch_add(&f->rcache, 1);
}

static void oplock_set(struct srv_open *o, uint32_t bits)
{
	bool changed = o->oplock != bits;

	rcache_adjust(o->file, o->oplock, bits);
	o->oplock = bits;
	if (changed && o->persistent_handle)
		srv_durable_journal(o, true);
}

static void lease_set(struct srv_lease *l, uint32_t bits)
{
	struct list_head *pos;
	bool changed = l->state != bits;

	rcache_adjust(l->file, l->state, bits);
	l->state = bits;
	if (!changed)
		return;
	/* a persistent open's journal holds its lease's state */
	list_for_each(pos, &l->opens) {
		struct srv_open *o = list_entry(pos, struct srv_open, lease_link);

		if (o->persistent_handle)
			srv_durable_journal(o, true);
	}
}

/* ---- the breaking list (the timer's) ---- */

/*
 * Lock order: the file's lock, then brk_lock. The timer takes the list
 * away under brk_lock and looks at each file with brk_lock released;
 * a file stays on_brk_list meanwhile, so an add here is a no-op then.
 */
static void brk_list_add(struct srv *srv, struct srv_file *f)
{
	pthread_mutex_lock(&srv->brk_lock);
	if (!f->on_brk_list) {
		f->on_brk_list = true;
		srv_file_ref(f);
		list_add_tail(&f->brk_link, &srv->breaking);
	}
	pthread_mutex_unlock(&srv->brk_lock);
}

static void breaking_inc(struct srv *srv, struct srv_file *f)
{
	if (!f->nbreaking++)
		brk_list_add(srv, f);
}

/* The timer drops the list's reference once nothing breaks. */
static void breaking_dec(struct srv_file *f)
{
	if (f->nbreaking > 0)
		f->nbreaking--;
}

/* ---- the lease table ---- */

static unsigned int lease_hash(const uint8_t *guid, const uint8_t *key)
{
	uint64_t h = 1469598103934665603ull;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ guid[i]) * 1099511628211ull;
	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	return (unsigned int)(h % LEASE_TAB_SIZE);
}

int srv_lease_table_init(struct srv *srv)
{
	int i;

	srv->lease_tab = calloc(LEASE_TAB_SIZE, sizeof(*srv->lease_tab));
	if (!srv->lease_tab)
		return -ENOMEM;
	for (i = 0; i < LEASE_TAB_SIZE; i++)
		list_init(&srv->lease_tab[i]);
	pthread_mutex_init(&srv->lease_lock, NULL);
	pthread_mutex_init(&srv->brk_lock, NULL);
	list_init(&srv->breaking);
	pthread_mutex_init(&srv->client_lock, NULL);
	list_init(&srv->client_conns);
	return 0;
}

void srv_lease_table_free(struct srv *srv)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &srv->breaking) {
		struct srv_file *f = list_entry(pos, struct srv_file, brk_link);

		list_del(&f->brk_link);
		f->on_brk_list = false;
		srv_file_put(f);
	}
	free(srv->lease_tab);
	srv->lease_tab = NULL;
}

static struct srv_lease *lease_find_locked(struct srv *srv, const uint8_t *guid,
					   const uint8_t *key)
{
	struct list_head *pos, *head = &srv->lease_tab[lease_hash(guid, key)];

	list_for_each(pos, head) {
		struct srv_lease *l = list_entry(pos, struct srv_lease, tab_link);

		if (!memcmp(l->client_guid, guid, 16) && !memcmp(l->key, key, 16))
			return l;
	}
	return NULL;
}

/* The file a client's lease key is on, a reference; NULL if none. */
static struct srv_file *lease_file(struct srv *srv, const uint8_t *guid, const uint8_t *key)
{
	struct srv_lease *l;
	struct srv_file *f = NULL;

	pthread_mutex_lock(&srv->lease_lock);
	l = lease_find_locked(srv, guid, key);
	if (l) {
		f = l->file;
		srv_file_ref(f);
	}
	pthread_mutex_unlock(&srv->lease_lock);
	return f;
}

static bool same_lease(const struct srv_open *e, const uint8_t *guid,
		       const struct smb2_lease_ctx *lc)
{
	return lc && e->lease && !memcmp(e->lease->client_guid, guid, 16) &&
	       !memcmp(e->lease->key, lc->key, 16);
}

/*
 * The lease of (guid, key) on f, made if there is none (*made set; the
 * caller fills in its state); -EINVAL when that key is on another file.
 */
static int lease_get_locked(struct srv *srv, struct srv_file *f, const uint8_t *guid,
			    const uint8_t *key, struct srv_lease **out, bool *made)
{
	struct srv_lease *l = lease_find_locked(srv, guid, key);

	*made = false;
	if (l) {
		*out = l;
		return l->file == f ? 0 : -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->file = f;
	memcpy(l->client_guid, guid, 16);
	memcpy(l->key, key, 16);
	list_init(&l->opens);
	list_add_tail(&l->tab_link, &srv->lease_tab[lease_hash(guid, key)]);
	list_add_tail(&l->file_link, &f->leases);
	if (f->is_dir)
		atomic_fetch_add(&srv->ndir_leases, 1);
	atomic_fetch_add(&srv->cst.nleases, 1);
	*made = true;
	*out = l;
	return 0;
}

static void lease_join(struct srv_open *o, struct srv_lease *l)
{
	o->lease = l;
	list_add_tail(&o->lease_link, &l->opens);
	l->nopens++;
}

/* The lease open o joins (file lock held): found on f, or new. */
static int lease_attach(struct srv *srv, struct srv_file *f, struct srv_open *o,
			const struct smb2_lease_ctx *lc, uint32_t granted)
{
	/* a directory lease is never asked W of */
	uint32_t asked = f->is_dir ? lc->state & (R | H) : lc->state;
	struct srv_lease *l;
	bool made;
	int ret;

	pthread_mutex_lock(&srv->lease_lock);
	ret = lease_get_locked(srv, f, o->client_guid, lc->key, &l, &made);
	if (ret) {
		pthread_mutex_unlock(&srv->lease_lock);
		return ret;
	}
	if (made) {
		l->version = lc->version;
		l->epoch = lc->version == 2 ? lc->epoch : 0;
		if (lc->version == 2 && lc->flags & SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET) {
			l->has_parent = true;
			memcpy(l->parent_key, lc->parent_key, 16);
		}
		lease_set(l, granted);
		l->epoch++;
		atomic_fetch_add(&srv->cst.leases, 1);
	} else if ((l->state & asked) == l->state && granted != l->state &&
		   granted == asked && !l->breaking) {
		/* a strict upgrade nothing else prevents */
		lease_set(l, granted);
		l->epoch++;
	}
	pthread_mutex_unlock(&srv->lease_lock);
	lease_join(o, l);
	return 0;
}

/* o leaves its lease (file lock held); the last open takes it away. */
static void lease_detach(struct srv *srv, struct srv_open *o)
{
	struct srv_lease *l = o->lease;

	if (!l)
		return;
	list_del(&o->lease_link);
	o->lease = NULL;
	if (--l->nopens)
		return;
	if (l->breaking)
		breaking_dec(l->file);
	lease_set(l, 0);
	list_del(&l->file_link);
	pthread_mutex_lock(&srv->lease_lock);
	list_del(&l->tab_link);
	pthread_mutex_unlock(&srv->lease_lock);
	if (l->file->is_dir)
		atomic_fetch_sub(&srv->ndir_leases, 1);
	atomic_fetch_sub(&srv->cst.nleases, 1);
	free(l);
}

/* ---- breaking ---- */

static void lease_notify(struct srv_lease *l, uint32_t from, uint32_t to, uint32_t flags,
			 struct srv_breaks *b)
{
	struct brk_note n = { .lease = true };

	memcpy(n.client_guid, l->client_guid, 16);
	n.lb.new_epoch = l->version > 1 ? l->epoch : 0;
	n.lb.flags = flags;
	memcpy(n.lb.key, l->key, 16);
	n.lb.current = from;
	n.lb.new_state = to;
	note_add(b, &n);
}

/* Break lease l to `to` (or lower, if a break is on already). */
static void lease_break(struct srv *srv, struct srv_lease *l, uint32_t to,
			struct srv_breaks *b)
{
	uint32_t from = l->state;

	to &= from;
	if (l->breaking) {
		/* no second notification: the acknowledgement must go lower */
		to &= l->breaking_to_required;
		l->breaking_to_required = to;
		return;
	}
	if (from == to)
		return;
	l->epoch++;
	if (from == R) {
		/* R to none: no acknowledgement */
		lease_set(l, 0);
		lease_notify(l, from, 0, 0, b);
		return;
	}
	l->breaking = true;
	l->breaking_to_required = to;
	l->breaking_to_requested = to;
	l->deadline = srv_now_ms() + BREAK_TIMEOUT_MS;
	breaking_inc(srv, l->file);
	lease_notify(l, from, to, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, b);
}

static void oplock_break(struct srv *srv, struct srv_open *o, uint32_t to,
			 struct srv_breaks *b)
{
	struct brk_note n = { .lease = false };
	uint32_t from = o->oplock;

	to &= R;		/* oplocks break to level II or none */
	if (o->oplock_breaking || from == to || !from)
		return;
	n.sess_id = o->sess_id;
	n.ob.level = to ? SMB2_OPLOCK_LEVEL_II : SMB2_OPLOCK_LEVEL_NONE;
	n.ob.fid.persistent = o->persistent;
	n.ob.fid.volatile_id = o->volatile_id;
	if (from == R) {
		oplock_set(o, 0);	/* level II to none: no acknowledgement */
	} else {
		o->oplock_breaking = true;
		o->oplock_break_to = to;
		o->oplock_deadline = srv_now_ms() + BREAK_TIMEOUT_MS;
		breaking_inc(srv, o->file);
	}
	if (!o->disconnected)
		note_add(b, &n);
}

static uint32_t open_state(const struct srv_open *o)
{
	return o->lease ? o->lease->state : o->oplock;
}

static bool open_breaking(const struct srv_open *o)
{
	return o->lease ? o->lease->breaking : o->oplock_breaking;
}

static uint32_t oplock_bits(uint8_t level)
{
	switch (level) {
	case SMB2_OPLOCK_LEVEL_BATCH:
		return R | W | H;
	case SMB2_OPLOCK_LEVEL_EXCLUSIVE:
		return R | W;
	case SMB2_OPLOCK_LEVEL_II:
		return R;
	default:
		return 0;
	}
}

uint8_t srv_oplock_level(const struct srv_open *o)
{
	if (o->lease)
		return SMB2_OPLOCK_LEVEL_LEASE;
	switch (o->oplock) {
	case R | W | H:
		return SMB2_OPLOCK_LEVEL_BATCH;
	case R | W:
		return SMB2_OPLOCK_LEVEL_EXCLUSIVE;
	case R:
		return SMB2_OPLOCK_LEVEL_II;
	default:
		return SMB2_OPLOCK_LEVEL_NONE;
	}
}

static bool lease_stat_open(uint32_t access)
{
	const uint32_t bits = SYNCHRONIZE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES |
			      READ_CONTROL;

	return access & bits && !(access & ~bits);
}

/*
 * A rename by an open under a lease waits while other leases hold H:
 * they break to keep the rest ([MS-SMB2] 3.3.5.21.1, as Samba). True if
 * it must wait.
 */
bool srv_oplock_rename_locked(struct srv *srv, struct srv_open *o, struct srv_breaks *b)
{
	struct list_head *pos;
	bool delay = false;

	if (!o->lease)
		return false;
	list_for_each(pos, &o->file->leases) {
		struct srv_lease *l = list_entry(pos, struct srv_lease, file_link);

		if (l == o->lease || !(l->state & H))
			continue;
		lease_break(srv, l, l->state & ~H, b);
		delay = true;
	}
	return delay;
}

/*
 * A disconnected durable open that must give up caching cannot hear a
 * break: it is closed instead ([MS-SMB2] 3.3.4.6).
 */
static void purge_disconnected(struct srv_open *e, struct list_head *purge)
{
	if (!e->purge) {
		e->purge = true;
		list_add_tail(&e->purge_link, purge);
	}
}

int srv_oplock_open_locked(struct srv *srv, struct srv_file *f, struct srv_open *o,
			   const struct srv_cache_req *cr, uint32_t disposition,
			   bool first_attempt, struct srv_breaks *b,
			   struct list_head *purge)
{
	const struct smb2_lease_ctx *lc = cr->lease ? &cr->lc : NULL;
	bool violation, will_overwrite, delay = false;
	bool got_handle_lease = false, got_oplock = false, other = false;
	uint32_t delay_mask, granted;
	struct list_head *pos;
	int ret;

	if (srv_stat_open(o->sharing))
		goto grant;
	violation = srv_file_share_conflict_locked(f, o->sharing, o->share_access);
	delay_mask = violation ? H : W;
	will_overwrite = disposition == FILE_SUPERSEDE || disposition == FILE_OVERWRITE ||
			 disposition == FILE_OVERWRITE_IF;
	list_for_each(pos, &f->opens) {
		struct srv_open *e = list_entry(pos, struct srv_open, file_link);
		uint32_t et, to;

		if (same_lease(e, o->client_guid, lc))
			continue;
		et = open_state(e);
		if (e->disconnected && !e->persistent_handle) {
			/*
			 * It cannot hear a break: closed if it is in the way,
			 * its sharing refusing this open included (the H break
			 * a live one would get).
			 */
			to = et & ~delay_mask;
			if (will_overwrite)
				to &= ~(H | R);
			if ((et & ~to) || open_breaking(e) ||
			    srv_open_share_conflict(e, o->sharing, o->share_access))
				purge_disconnected(e, purge);
			continue;
		}
		if (et & H)
			got_handle_lease = true;
		if (!e->lease)
			got_oplock = true;
		other = true;
		/* an open for attributes and security only breaks no lease */
		if (e->lease && lease_stat_open(o->sharing))
			continue;
		to = et & ~delay_mask;
		if (will_overwrite)
			to &= ~(H | R);
		if (!(et & ~to)) {
			if (open_breaking(e))
				delay = true;
			continue;
		}
		if (will_overwrite)
			to &= ~(R | W);
		if (e->lease) {
			lease_break(srv, e->lease, to, b);
		} else {
			to &= ~(H | W);
			oplock_break(srv, e, to, b);
		}
		if (et & delay_mask)
			delay = true;
		if (open_breaking(e) && !first_attempt)
			delay = true;
	}
	if (delay)
		return SRV_PENDING;
	if (violation)
		return -E_SMB_SHARING_VIOLATION;
grant:
	if (!lc && cr->existed && srv_stat_open(o->sharing)) {
		granted = 0;	/* an attributes-only open of a file gets no oplock */
	} else if (o->is_dir) {
		granted = 0;	/* no oplocks; directory leases: R and H only */
		if (lc && srv->cfg->leases && srv->cfg->dir_leases && f->share->oplocks)
			granted = lc->state & (R | H);
		if (!(granted & R))
			granted = 0;
	} else if (lc) {
		/* as Samba: a share's "oplocks = no" turns its leases off too */
		granted = srv->cfg->leases && f->share->oplocks ? lc->state : 0;
		if (!(granted & (R | W)) || granted == W || granted == (W | H))
			granted = 0;
	} else {
		granted = f->share->oplocks ? oplock_bits(cr->oplock) : 0;
	}
	if (atomic_load(&f->nlocks))
		granted &= ~R;
	if (other)
		granted &= ~W;
	if (lc) {
		if (got_oplock)
			granted &= ~H;
		if (!(granted & R))
			granted = 0;
		ret = lease_attach(srv, f, o, lc, granted);
		if (ret)
			return ret;
	} else {
		if (got_handle_lease)
			granted = 0;
		granted = granted == (R | W | H) || granted == (R | W) ? granted :
			  granted & R;
		oplock_set(o, granted);
		if (granted)
			atomic_fetch_add(&srv->cst.oplocks, 1);
	}
	return 0;
}

/* Before a CREATE looks at the file: a lease key of the client may name one file only. */
int srv_lease_check_key(struct srv *srv, struct srv_file *f, const uint8_t *guid,
			const struct smb2_lease_ctx *lc)
{
	struct srv_file *lf = lease_file(srv, guid, lc->key);
	int ret = 0;

	if (lf && lf != f)
		ret = -EINVAL;
	srv_file_put(lf);
	return ret;
}

/* The lease context of a CREATE response. */
size_t srv_lease_rsp(const struct srv_open *o, uint8_t *buf)
{
	const struct srv_lease *l = o->lease;
	struct smb2_lease_ctx lc = { 0 };

	lc.version = l->version;
	memcpy(lc.key, l->key, 16);
	lc.state = l->state;
	if (l->breaking)
		lc.flags |= SMB2_LEASE_FLAG_BREAK_IN_PROGRESS;
	if (l->version == 2) {
		lc.epoch = l->epoch;
		if (l->has_parent) {
			lc.flags |= SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
			memcpy(lc.parent_key, l->parent_key, 16);
		}
	}
	return smb2_lease_ctx_encode(buf, &lc);
}

/* A journaled persistent open gets its caching back (file lock held). */
int srv_oplock_restore_locked(struct srv *srv, struct srv_open *o, const struct srv_jrec *r)
{
	struct srv_file *f = o->file;
	struct srv_lease *l;
	bool made;
	int ret;

	if (!r->has_lease) {
		rcache_adjust(f, 0, r->oplock);
		o->oplock = r->oplock;
		return 0;
	}
	pthread_mutex_lock(&srv->lease_lock);
	ret = lease_get_locked(srv, f, r->client_guid, r->lease_key, &l, &made);
	if (ret) {
		pthread_mutex_unlock(&srv->lease_lock);
		return ret;
	}
	if (made) {
		memcpy(l->parent_key, r->parent_key, 16);
		l->has_parent = r->has_parent;
		l->version = r->lease_version;
		l->epoch = r->lease_epoch;
		rcache_adjust(f, 0, r->lease_state);
		l->state = r->lease_state;
	}
	pthread_mutex_unlock(&srv->lease_lock);
	lease_join(o, l);
	return 0;
}

/* o leaves the file's caching (file lock held): at close or purge. */
void srv_oplock_close_locked(struct srv *srv, struct srv_open *o)
{
	if (o->oplock_breaking) {
		o->oplock_breaking = false;
		breaking_dec(o->file);
	}
	oplock_set(o, 0);
	lease_detach(srv, o);
}

/*
 * A write, truncate or byte-range lock by o: everyone else's read
 * caching breaks to none. Cheap when nobody else caches reads.
 */
void srv_oplock_contend(struct srv *srv, struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct srv_breaks b;
	struct list_head *pos;
	uint32_t own;
	int others;

	if (!f)
		return;
	own = o->lease ? o->lease->state : o->oplock;
	if (own & W)
		return;
	/* a level II oplock breaks even its own holder's; a lease does not */
	others = atomic_load(&f->rcache) - (o->lease && (own & R));
	if (others <= 0)
		return;
	srv_breaks_init(&b);
	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->leases) {
		struct srv_lease *l = list_entry(pos, struct srv_lease, file_link);

		if (l == o->lease || !(l->state & R))
			continue;
		lease_break(srv, l, 0, &b);
	}
	list_for_each(pos, &f->opens) {
		struct srv_open *e = list_entry(pos, struct srv_open, file_link);

		if (e->lease || !(e->oplock & R))
			continue;
		oplock_break(srv, e, 0, &b);
	}
	pthread_mutex_unlock(&f->lock);
	srv_breaks_send(srv, &b);
}

/*
 * A directory's contents changed (an entry made, removed or renamed, a
 * file closed after a write): its leases break to none, except the one
 * the changing open names as its parent ([MS-SMB2] 3.3.4.7, directory
 * leasing). Cheap while no directory lease exists.
 */
void srv_dir_lease_break(struct srv *srv, struct srv_share *sh, const char *child,
			 const struct srv_open *by)
{
	const struct srv_lease *bl = by ? by->lease : NULL;
	const char *slash;
	char parent[4096];
	struct list_head *pos;
	struct srv_breaks b;
	struct srv_file *f;
	struct stat st;

	if (!atomic_load(&srv->ndir_leases))
		return;
	slash = strrchr(child, '/');
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - child) : 0, child);
	if (store_stat(&sh->root, parent, &st))
		return;
	f = srv_file_find(sh, st.st_dev, st.st_ino);
	if (!f)
		return;
	srv_breaks_init(&b);
	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->leases) {
		struct srv_lease *l = list_entry(pos, struct srv_lease, file_link);

		if (!(l->state & R))
			continue;
		if (bl && bl->has_parent && !memcmp(bl->parent_key, l->key, 16) &&
		    !memcmp(bl->client_guid, l->client_guid, 16))
			continue;	/* the change is its own client's, under it */
		lease_break(srv, l, 0, &b);
	}
	pthread_mutex_unlock(&f->lock);
	srv_file_put(f);
	srv_breaks_send(srv, &b);
}

/*
 * A durable open is back: a break of its caching that was decided while
 * it was away (a persistent open keeps its caching and waits for one) is
 * sent to it now; the break's timeout runs from here.
 */
void srv_oplock_reconnected(struct srv *srv, struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct srv_breaks b;
	struct brk_note n = { 0 };

	if (!f)
		return;
	srv_breaks_init(&b);
	pthread_mutex_lock(&f->lock);
	if (o->lease && o->lease->breaking) {
		o->lease->deadline = srv_now_ms() + BREAK_TIMEOUT_MS;
		lease_notify(o->lease, o->lease->state, o->lease->breaking_to_requested,
			     SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, &b);
	} else if (!o->lease && o->oplock_breaking) {
		o->oplock_deadline = srv_now_ms() + BREAK_TIMEOUT_MS;
		n.sess_id = o->sess_id;
		n.ob.level = o->oplock_break_to & R ? SMB2_OPLOCK_LEVEL_II : SMB2_OPLOCK_LEVEL_NONE;
		n.ob.fid.persistent = o->persistent;
		n.ob.fid.volatile_id = o->volatile_id;
		note_add(&b, &n);
	}
	pthread_mutex_unlock(&f->lock);
	srv_breaks_send(srv, &b);
}

/* ---- OPLOCK_BREAK acknowledgements ---- */

static int oplock_ack(struct srv_req *req)
{
	struct smb2_oplock_break ack, rsp;
	struct srv_open *o;
	struct srv_file *f;
	int ret;

	if (smb2_oplock_break_decode(req->pdu + SMB2_HDR_SIZE, req->len - SMB2_HDR_SIZE, &ack))
		return -EINVAL;
	ret = srv_req_open(req, &ack.fid, &o);
	if (ret)
		return ret;
	f = o->file;
	if (!f)
		return -E_SMB_INVALID_OPLOCK_PROTOCOL;
	pthread_mutex_lock(&f->lock);
	if (!o->oplock_breaking) {
		pthread_mutex_unlock(&f->lock);
		return -E_SMB_INVALID_OPLOCK_PROTOCOL;
	}
	if (ack.level != SMB2_OPLOCK_LEVEL_NONE && ack.level != SMB2_OPLOCK_LEVEL_II) {
		pthread_mutex_unlock(&f->lock);
		return -EINVAL;
	}
	o->oplock_breaking = false;
	breaking_dec(f);
	if (ack.level == SMB2_OPLOCK_LEVEL_NONE || !(o->oplock_break_to & R))
		oplock_set(o, 0);
	else
		oplock_set(o, R);
	rsp.level = srv_oplock_level(o);
	rsp.fid = ack.fid;
	atomic_fetch_add(&req->conn->srv->cst.acks, 1);
	srv_file_wake_locked(f);
	pthread_mutex_unlock(&f->lock);
	if (srv_req_room(req, SMB2_OPLOCK_BREAK_SIZE))
		return -ENOMEM;
	smb2_oplock_break_encode(&req->w, &rsp);
	return 0;
}

/* The client acknowledges a lease break at state `st` (file lock held). */
static int lease_downgrade(struct srv *srv, struct srv_lease *l, uint32_t st,
			   struct srv_breaks *b)
{
	uint32_t to;

	if (!l->breaking)
		return -E_SMB_UNSUCCESSFUL;
	if ((st & l->breaking_to_requested) != st)
		return -E_SMB_REQUEST_NOT_ACCEPTED;
	lease_set(l, st);
	if (st & ~l->breaking_to_required) {
		/* lower still: one more break, in steps as Windows does */
		to = l->breaking_to_required;
		if (st & (W | H))
			to |= R;
		l->breaking_to_requested = to;
		if (st & (W | H)) {
			l->deadline = srv_now_ms() + BREAK_TIMEOUT_MS;
			lease_notify(l, st, to, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, b);
		} else {
			lease_set(l, 0);
			l->breaking = false;
			l->breaking_to_requested = l->breaking_to_required = 0;
			breaking_dec(l->file);
			lease_notify(l, st, to, 0, b);
		}
		return 0;
	}
	l->breaking = false;
	l->breaking_to_requested = l->breaking_to_required = 0;
	breaking_dec(l->file);
	return 0;
}

static int lease_ack(struct srv_req *req)
{
	struct srv *srv = req->conn->srv;
	struct smb2_lease_ack ack, rsp;
	struct srv_breaks b;
	struct srv_lease *l;
	struct srv_file *f;
	int ret;

	if (smb2_lease_ack_decode(req->pdu + SMB2_HDR_SIZE, req->len - SMB2_HDR_SIZE, &ack))
		return -EINVAL;
	if (req->conn->dialect < SMB2_DIALECT_210)
		return -EINVAL;
	f = lease_file(srv, req->conn->client_guid, ack.key);
	if (!f)
		return -E_SMB_OBJECT_NAME_NOT_FOUND;
	srv_breaks_init(&b);
	pthread_mutex_lock(&f->lock);
	pthread_mutex_lock(&srv->lease_lock);
	l = lease_find_locked(srv, req->conn->client_guid, ack.key);
	pthread_mutex_unlock(&srv->lease_lock);
	if (!l || l->file != f) {
		ret = -E_SMB_OBJECT_NAME_NOT_FOUND;
	} else {
		ret = lease_downgrade(srv, l, ack.state, &b);
		if (!ret) {
			atomic_fetch_add(&srv->cst.acks, 1);
			srv_file_wake_locked(f);
		}
	}
	pthread_mutex_unlock(&f->lock);
	srv_file_put(f);
	srv_breaks_send(srv, &b);
	if (ret)
		return ret;
	memset(&rsp, 0, sizeof(rsp));
	memcpy(rsp.key, ack.key, 16);
	rsp.state = ack.state;
	if (srv_req_room(req, SMB2_LEASE_ACK_SIZE))
		return -ENOMEM;
	smb2_lease_ack_encode(&req->w, &rsp);
	return 0;
}

int smb_oplock_break(struct srv_req *req)
{
	uint16_t size;

	if (req->len < SMB2_HDR_SIZE + 2)
		return -EINVAL;
	size = get_le16(req->pdu + SMB2_HDR_SIZE);
	if (size == SMB2_OPLOCK_BREAK_SIZE)
		return oplock_ack(req);
	if (size == SMB2_LEASE_ACK_SIZE)
		return lease_ack(req);
	return -EINVAL;
}

/* ---- the timer: breaks nobody acknowledged in time ---- */

static void expire_file(struct srv *srv, struct srv_file *f, uint64_t now, struct srv_breaks *b)
{
	struct list_head *pos;
	bool woke = false;

	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->opens) {
		struct srv_open *o = list_entry(pos, struct srv_open, file_link);

		if (!o->oplock_breaking || o->oplock_deadline > now)
			continue;
		pr_notice("[%s] %s: oplock break not acknowledged in %d s: broken to none",
			  f->share->name, f->path, BREAK_TIMEOUT_MS / 1000);
		o->oplock_breaking = false;
		breaking_dec(f);
		oplock_set(o, 0);
		atomic_fetch_add(&srv->cst.timeouts, 1);
		woke = true;
	}
	list_for_each(pos, &f->leases) {
		struct srv_lease *l = list_entry(pos, struct srv_lease, file_link);

		if (!l->breaking || l->deadline > now)
			continue;
		pr_notice("[%s] %s: lease break not acknowledged in %d s: broken to none",
			  f->share->name, f->path, BREAK_TIMEOUT_MS / 1000);
		lease_downgrade(srv, l, 0, b);
		atomic_fetch_add(&srv->cst.timeouts, 1);
		woke = true;
	}
	if (woke)
		srv_file_wake_locked(f);
	pthread_mutex_unlock(&f->lock);
}

void srv_oplock_timer(struct srv *srv)
{
	uint64_t now = srv_now_ms();
	struct list_head *pos, *tmp, todo;
	struct srv_breaks b;
	bool still;

	srv_breaks_init(&b);
	list_init(&todo);
	/*
	 * The files stay on_brk_list while the timer holds them on todo:
	 * a break starting meanwhile (brk_list_add) must not link brk_link
	 * into srv->breaking while it is on todo. Each goes back, or off,
	 * under its lock and brk_lock, so such a break is never missed.
	 */
	pthread_mutex_lock(&srv->brk_lock);
	list_for_each_safe(pos, tmp, &srv->breaking) {
		struct srv_file *f = list_entry(pos, struct srv_file, brk_link);

		list_del(&f->brk_link);
		list_add_tail(&f->brk_link, &todo);
	}
	pthread_mutex_unlock(&srv->brk_lock);
	list_for_each_safe(pos, tmp, &todo) {
		struct srv_file *f = list_entry(pos, struct srv_file, brk_link);

		/* the list's reference keeps f */
		expire_file(srv, f, now, &b);
		pthread_mutex_lock(&f->lock);
		pthread_mutex_lock(&srv->brk_lock);
		list_del(&f->brk_link);
		still = f->nbreaking > 0;
		if (still)
			list_add_tail(&f->brk_link, &srv->breaking);
		else
			f->on_brk_list = false;
		pthread_mutex_unlock(&srv->brk_lock);
		pthread_mutex_unlock(&f->lock);
		if (!still)
			srv_file_put(f);
	}
	srv_breaks_send(srv, &b);
}

void srv_caching_dump(struct srv *srv, struct srv_out *o)
{
	struct srv_cache_stats *c = &srv->cst;
	const char *fmt = o->json ?
		"\"caching\": {\"leases\": %d, \"leases_made\": %llu, \"oplocks_granted\": %llu, "
		"\"breaks\": %llu, \"acks\": %llu, \"break_timeouts\": %llu, \"waits\": %llu, "
		"\"durable_disconnected\": %d, \"durable_kept\": %llu, "
		"\"durable_reconnects\": %llu, \"durable_expired\": %llu, "
		"\"durable_purged\": %llu},\n" :
		"stats caching: leases %d (made %llu) oplocks_granted %llu breaks %llu "
		"acks %llu break_timeouts %llu waits %llu durable_disconnected %d "
		"durable_kept %llu durable_reconnects %llu durable_expired %llu "
		"durable_purged %llu\n";

	srv_out_printf(o, fmt, atomic_load(&c->nleases),
		       (unsigned long long)atomic_load(&c->leases),
		       (unsigned long long)atomic_load(&c->oplocks),
		       (unsigned long long)atomic_load(&c->breaks),
		       (unsigned long long)atomic_load(&c->acks),
		       (unsigned long long)atomic_load(&c->timeouts),
		       (unsigned long long)atomic_load(&c->waits),
		       atomic_load(&c->ndisconnected),
		       (unsigned long long)atomic_load(&c->durable_kept),
		       (unsigned long long)atomic_load(&c->durable_reconnects),
		       (unsigned long long)atomic_load(&c->durable_expired),
		       (unsigned long long)atomic_load(&c->durable_purged));
}
