// SPDX-License-Identifier: MIT
/*
 * Leases on the client side ([MS-SMB2] 3.2.4.3.8, 3.2.5.7, 3.2.5.19):
 *
 * - One lease key per file (and tree), by path, shared by every open of
 *   it: the application's handles and at most one cached handle, the
 *   attributes-only open a stat leaves open while its lease has read and
 *   handle caching (a deferred close, as Windows and cifs.ko keep
 *   handles). The client caches no data, so it asks for RH: write caching
 *   would give it nothing and make every other opener wait for an
 *   acknowledgement.
 * - While an entry holds R and H, a stat or fstat of it is answered
 *   from its last attributes, with no round trip; a stat by name only
 *   for CLI_CACHE_MS after the server said them (another client's unlink
 *   or rename breaks no lease). A break that takes R or H, a change this
 *   client makes (a write, truncate, rename, a new entry in a directory)
 *   and the loss of the session drop them; cached handles older than
 *   CLI_CACHE_MS are closed by the next call.
 * - A break is handled as it arrives, in the event loop: the cache is
 *   dropped, a cached handle the lease no longer covers is closed, and
 *   when the server asks, the new state is acknowledged (in the
 *   background: nothing waits for it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "proto/lease.h"
#include "proto/ntstatus.h"

#define R SMB2_LEASE_READ
#define H SMB2_LEASE_HANDLE

/* May attributes found by name be answered from the cache? (R and H) */
static bool covered(uint32_t state)
{
	return (state & (R | H)) == (R | H);
}

/* ---- the table ---- */

void cli_leases_init(struct rdax_conn *c)
{
	unsigned int i;

	list_init(&c->leases);
	list_init(&c->lease_lru);
	for (i = 0; i < CLI_LEASE_HASH; i++)
		list_init(&c->lease_hash[i]);
	c->ncached = 0;
}

/* "/a//b/" and "a\\b" are "a/b": the server's name for it. */
static int path_norm(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	for (; *in; in++) {
		char ch = *in == '\\' ? '/' : *in;

		if (ch == '/' && (!o || out[o - 1] == '/'))
			continue;
		if (o + 1 >= cap)
			return -ENAMETOOLONG;
		out[o++] = ch;
	}
	while (o && out[o - 1] == '/')
		o--;
	out[o] = 0;
	return 0;
}

static unsigned int bucket(const struct rdax_tree *t, const char *norm)
{
	uint32_t h = 2166136261u ^ (uint32_t)(uintptr_t)t;

	for (; *norm; norm++) {
		h ^= (uint8_t)*norm;
		h *= 16777619u;
	}
	return h % CLI_LEASE_HASH;
}

static struct cli_lease *find_norm(struct rdax_tree *t, const char *norm)
{
	struct list_head *head = &t->c->lease_hash[bucket(t, norm)], *pos;

	list_for_each(pos, head) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, hlink);

		if (l->t == t && !strcmp(l->path, norm))
			return l;
	}
	return NULL;
}

struct cli_lease *cli_lease_find(struct rdax_tree *t, const char *path)
{
	char norm[1024];

	if (path_norm(path, norm, sizeof(norm)))
		return NULL;
	return find_norm(t, norm);
}

struct cli_lease *cli_lease_get(struct rdax_tree *t, const char *path)
{
	struct rdax_conn *c = t->c;
	struct cli_lease *l;
	char norm[1024];

	if (path_norm(path, norm, sizeof(norm)))
		return NULL;
	l = find_norm(t, norm);
	if (l)
		return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->path = strdup(norm);
	if (!l->path || crypto_random(l->key, sizeof(l->key))) {
		free(l->path);
		free(l);
		return NULL;
	}
	l->t = t;
	list_init(&l->lru);
	list_add(&l->link, &c->leases);
	list_add(&l->hlink, &c->lease_hash[bucket(t, norm)]);
	return l;
}

static void lru_del(struct rdax_conn *c, struct cli_lease *l)
{
	if (list_empty(&l->lru))
		return;
	list_del(&l->lru);
	c->ncached--;
}

/* most recently used at the tail */
static void lru_touch(struct rdax_conn *c, struct cli_lease *l)
{
	lru_del(c, l);
	list_add_tail(&l->lru, &c->lease_lru);
	c->ncached++;
}

/* no file may point at it (put: none has it; the others clear them) */
static void lease_free(struct rdax_conn *c, struct cli_lease *l)
{
	list_del(&l->link);
	list_del(&l->hlink);
	lru_del(c, l);
	free(l->path);
	free(l);
}

void cli_lease_put(struct rdax_conn *c, struct cli_lease *l)
{
	if (!l || l->nfiles || l->cached || l->nolease)
		return;
	lease_free(c, l);
}

/* It may change name under us: new opens of its path get another key. */
static void lease_detach(struct cli_lease *l)
{
	list_del(&l->hlink);
}

void cli_leases_free(struct rdax_conn *c)
{
	while (!list_empty(&c->leases)) {
		struct cli_lease *l = list_entry(c->leases.next, struct cli_lease, link);

		l->nfiles = 0;
		lease_free(c, l);
	}
}

void cli_leases_tree_gone(struct rdax_tree *t)
{
	struct rdax_conn *c = t->c;
	struct list_head *pos, *tmp;

	list_for_each(pos, &t->files)
		list_entry(pos, struct rdax_file, tlink)->lease = NULL;
	list_for_each_safe(pos, tmp, &c->leases) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, link);

		if (l->t != t)
			continue;
		l->nfiles = 0;
		lease_free(c, l);
	}
}

void cli_leases_session_gone(struct rdax_conn *c)
{
	struct list_head *pos, *tmp;

	list_for_each_safe(pos, tmp, &c->leases) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, link);

		/* the handles went with the session; a lease comes back with a reopen */
		l->cached = false;
		l->have_stat = false;
		l->nolease = false;
		l->granted = false;
		l->state = 0;
		lru_del(c, l);
		if (!l->nfiles)
			lease_free(c, l);
	}
}

bool cli_lease_ok(const struct rdax_tree *t, bool dir)
{
	const struct rdax_conn *c = t->c;

	if (!c->cfg.leases || c->dialect < SMB2_DIALECT_210 ||
	    !(c->server_caps & SMB2_GLOBAL_CAP_LEASING))
		return false;
	return !dir || c->server_caps & SMB2_GLOBAL_CAP_DIRECTORY_LEASING;
}

/* The entry of the directory path is in (NULL for the root's entries). */
static struct cli_lease *parent_of(struct rdax_tree *t, const char *norm)
{
	const char *slash = strrchr(norm, '/');
	char dir[1024];

	if (!*norm)
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - norm) : 0, norm);
	return find_norm(t, dir);
}

void cli_lease_changed(struct rdax_tree *t, const char *path)
{
	struct cli_lease *l;
	char norm[1024];

	if (list_empty(&t->c->leases) || path_norm(path, norm, sizeof(norm)))
		return;
	l = find_norm(t, norm);
	if (l)
		l->have_stat = false;
	l = parent_of(t, norm);
	if (l)
		l->have_stat = false;
}

/* Is p the path "base" or one under it? */
static bool under(const char *p, const char *base, bool below)
{
	size_t n = strlen(base);

	if (!strcmp(p, base))
		return true;
	if (!below)
		return false;
	return !n || (!strncmp(p, base, n) && p[n] == '/');
}

void cli_lease_renamed(struct rdax_tree *t, const char *from, const char *to)
{
	struct rdax_conn *c = t->c;
	char nf[1024], nt[1024], np[2048];
	struct list_head *pos, *tmp;
	size_t n;

	if (path_norm(from, nf, sizeof(nf)) || path_norm(to, nt, sizeof(nt)))
		return;
	n = strlen(nf);
	list_for_each_safe(pos, tmp, &c->leases) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, link);
		char *p;

		if (l->t != t || list_empty(&l->hlink) || !under(l->path, nf, true))
			continue;
		snprintf(np, sizeof(np), "%s%s", nt, l->path + n);
		p = strdup(np);
		list_del(&l->hlink);
		l->have_stat = false;	/* its change time moved */
		if (!p)
			continue;	/* detached: new opens of the name get another key */
		free(l->path);
		l->path = p;
		list_add(&l->hlink, &c->lease_hash[bucket(t, p)]);
	}
	/* the application's handles follow the name (their messages name it) */
	list_for_each(pos, &t->files) {
		struct rdax_file *f = list_entry(pos, struct rdax_file, tlink);
		char fp[1024];
		size_t len;

		if (path_norm(f->path, fp, sizeof(fp)) || !under(fp, nf, true))
			continue;
		len = (size_t)snprintf(np, sizeof(np), "%s%s", nt, fp + n);
		if (len < sizeof(f->path))
			memcpy(f->path, np, len + 1);
	}
	cli_lease_changed(t, from);
	cli_lease_changed(t, to);
}

/* ---- CREATE contexts ---- */

void cli_ctx_init(struct cli_ctx *x)
{
	x->len = 0;
	x->prev = SIZE_MAX;
}

static void ctx_add(struct cli_ctx *x, const char *tag, const void *data, uint32_t len)
{
	struct wcur w;

	wcur_init(&w, x->buf, sizeof(x->buf));
	w.off = x->len;
	smb2_create_ctx_add(&w, &x->prev, tag, data, len);
	if (!w.err)
		x->len = w.off;
}

void cli_ctx_lease(struct cli_ctx *x, struct rdax_tree *t, const struct cli_lease *l,
		   uint32_t state)
{
	struct smb2_lease_ctx lc = { .version = 1, .state = state };
	const struct cli_lease *p;
	uint8_t d[SMB2_LEASE_CTX_V2_SIZE];
	size_t n;

	memcpy(lc.key, l->key, 16);
	if (t->c->dialect >= SMB2_DIALECT_300) {
		lc.version = 2;
		/* our own changes under a leased directory do not break its lease */
		p = parent_of(t, l->path);
		if (p && p->state) {
			lc.flags = SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET;
			memcpy(lc.parent_key, p->key, 16);
		}
	}
	n = smb2_lease_ctx_encode(d, &lc);
	ctx_add(x, SMB2_CTX_LEASE, d, (uint32_t)n);
}

/*
 * How long the server keeps a durable handle after a drop: what a
 * reconnect may take (the request timeout), at least the 60 s servers
 * give by default; 0 lets the server choose when there is no timeout.
 */
static uint32_t durable_timeout(const struct rdax_conn *c)
{
	if (c->cfg.timeout_ms < 0)
		return 0;
	return c->cfg.timeout_ms > 60000 ? (uint32_t)c->cfg.timeout_ms : 60000;
}

void cli_ctx_durable(struct cli_ctx *x, struct rdax_tree *t, const uint8_t *guid)
{
	struct smb2_durable_v2 d = { .timeout = durable_timeout(t->c) };
	uint8_t b[36];

	/* on a continuously available share the handle outlives a restart */
	if (t->caps & SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY &&
	    t->c->server_caps & SMB2_GLOBAL_CAP_PERSISTENT_HANDLES)
		d.flags = SMB2_DHANDLE_FLAG_PERSISTENT;
	memcpy(d.create_guid, guid, 16);
	ctx_add(x, SMB2_CTX_DH2Q, b, (uint32_t)smb2_dh2q_encode(b, &d));
}

void cli_ctx_reconnect(struct cli_ctx *x, const struct smb2_fid *fid, const uint8_t *guid,
		       bool persistent)
{
	struct smb2_durable_v2 d = { .fid = *fid };

	if (persistent)
		d.flags = SMB2_DHANDLE_FLAG_PERSISTENT;
	uint8_t b[36];

	memcpy(d.create_guid, guid, 16);
	ctx_add(x, SMB2_CTX_DH2C, b, (uint32_t)smb2_dh2c_encode(b, &d));
}

int cli_grant_parse(struct rdax_conn *c, const struct smb2_create_rsp *rsp,
		    const uint8_t *key, struct cli_grant *g)
{
	struct smb2_create_ctx ctx[SMB2_MAX_CREATE_CTX];
	struct smb2_lease_ctx lc;
	uint32_t tmo, flags;
	int i, n;

	memset(g, 0, sizeof(*g));
	n = smb2_create_ctx_parse(rsp->contexts.p, rsp->contexts.len, ctx,
				  SMB2_MAX_CREATE_CTX);
	if (n < 0)
		return cli_err(c, -EPROTO, "malformed create contexts from %s", c->host);
	for (i = 0; i < n; i++) {
		const uint8_t *tag = ctx[i].name.p;

		if (ctx[i].name.len != 4)
			continue;
		if (!memcmp(tag, SMB2_CTX_LEASE, 4)) {
			if (smb2_lease_ctx_decode(ctx[i].data.p, ctx[i].data.len, &lc) ||
			    (key && memcmp(lc.key, key, 16)))
				return cli_err(c, -EPROTO, "%s granted a lease on another key",
					       c->host);
			g->lease = true;
			g->state = lc.state & SMB2_LEASE_RWH;
			g->epoch = lc.epoch;
			g->flags = lc.flags;
		} else if (!memcmp(tag, SMB2_CTX_DH2Q, 4)) {
			if (smb2_dh2q_rsp_decode(ctx[i].data.p, ctx[i].data.len, &tmo, &flags))
				return cli_err(c, -EPROTO, "malformed DH2Q response from %s",
					       c->host);
			g->durable = true;
			g->persistent = flags & SMB2_DHANDLE_FLAG_PERSISTENT;
		}
	}
	/* a lease is granted by the oplock level too */
	if (rsp->oplock != SMB2_OPLOCK_LEVEL_LEASE)
		g->state = 0;
	return 0;
}

void cli_lease_granted(struct cli_lease *l, const struct cli_grant *g)
{
	/* v2: an older state than one a break already told is stale */
	if (l->granted && l->t->c->dialect >= SMB2_DIALECT_300 &&
	    (int16_t)(g->epoch - l->epoch) < 0)
		return;
	l->granted = true;
	l->state = g->state;
	l->epoch = g->epoch;
	if (!covered(l->state))
		l->have_stat = false;
}

/* ---- requests nobody waits for: acknowledgements, closes ---- */

struct cli_bg {
	struct cli_chain ch;
};

static void bg_on_pdu(struct cli_chain *ch, int i, const uint8_t *pdu, size_t len)
{
	/* the outcome changes nothing here: a break is over either way */
}

static void bg_on_done(struct cli_chain *ch)
{
	free(container_of(ch, struct cli_bg, ch));
}

static struct cli_bg *bg_new(struct rdax_conn *c)
{
	struct cli_bg *bg;

	if (c->broken)
		return NULL;
	bg = calloc(1, sizeof(*bg));
	if (!bg)
		return NULL;
	if (cli_chain_init(c, &bg->ch)) {
		free(bg);
		return NULL;
	}
	bg->ch.on_pdu = bg_on_pdu;
	bg->ch.on_done = bg_on_done;
	return bg;
}

/* Submit (ret 0) or drop (ret < 0) what bg_new began. */
static int bg_go(struct rdax_conn *c, struct cli_bg *bg, int ret)
{
	if (!ret && (c->broken || bg->ch.err))
		ret = -ENOTCONN;
	if (!ret)
		ret = cli_chain_submit(c, &bg->ch);
	if (ret) {
		cli_chain_abort(c, &bg->ch);
		free(bg);
	}
	return ret;
}

int cli_close_bg(struct rdax_tree *t, const struct smb2_fid *fid)
{
	struct cli_bg *bg = bg_new(t->c);

	if (!bg)
		return -ENOMEM;
	return bg_go(t->c, bg, cli_add_close(t, &bg->ch, fid, 0));
}

static int lease_ack(struct rdax_tree *t, const uint8_t *key, uint32_t state)
{
	struct rdax_conn *c = t->c;
	struct smb2_lease_ack a = { .state = state };
	struct cli_bg *bg = bg_new(c);
	struct wcur w;
	int ret;

	if (!bg)
		return -ENOMEM;
	memcpy(a.key, key, 16);
	ret = cli_chain_add(c, &bg->ch, SMB2_OPLOCK_BREAK, t->id, false, 0,
			    SMB2_LEASE_ACK_SIZE, &w);
	if (!ret) {
		smb2_lease_ack_encode(&w, &a);
		cli_chain_end(c, &bg->ch, &w);
	}
	return bg_go(c, bg, ret);
}

/* ---- breaks ([MS-SMB2] 3.2.5.19) ---- */

static struct cli_lease *lease_by_key(struct rdax_conn *c, const uint8_t *key)
{
	struct list_head *pos;

	list_for_each(pos, &c->leases) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, link);

		if (!memcmp(l->key, key, 16))
			return l;
	}
	return NULL;
}

/* The cached handle goes: the application closed it long ago. */
static void drop_cached(struct rdax_conn *c, struct cli_lease *l)
{
	if (!l->cached)
		return;
	l->cached = false;
	lru_del(c, l);
	cli_close_bg(l->t, &l->cfid);
}

static void lease_break(struct rdax_conn *c, const uint8_t *body, size_t len)
{
	struct smb2_lease_break b;
	struct cli_lease *l;
	uint32_t to;

	if (smb2_lease_break_decode(body, len, &b))
		return;
	c->stats.breaks++;
	/* a key no open of ours has any more: its last close ends the break */
	l = lease_by_key(c, b.key);
	if (!l)
		return;
	to = b.new_state & l->state;
	l->state = to;
	if (c->dialect >= SMB2_DIALECT_300)
		l->epoch = b.new_epoch;
	/*
	 * Cached attributes need R; and H, as they are found by name: without
	 * it the server no longer tells us before the name goes or moves.
	 */
	if (!covered(to)) {
		l->have_stat = false;
		/* a cached handle lives only under R and H */
		drop_cached(c, l);
	}
	/* without H others may rename or delete it: its name is no longer ours */
	if (!(to & H))
		lease_detach(l);
	/* nothing to flush: librdax caches no data and takes no locks */
	if (b.flags & SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED && l->nfiles)
		lease_ack(l->t, l->key, to);
	cli_lease_put(c, l);
}

/*
 * An oplock break: librdax asks for no oplock (where a server has no
 * leasing it caches nothing), so none is for a handle of its own.
 */
static void oplock_break(struct rdax_conn *c)
{
	c->stats.breaks++;
}

void cli_on_break(struct rdax_conn *c, const uint8_t *pdu, size_t len)
{
	const uint8_t *body = pdu + SMB2_HDR_SIZE;
	size_t blen = len - SMB2_HDR_SIZE;

	if (len < SMB2_HDR_SIZE + 2)
		return;
	if (get_le16(body) == SMB2_LEASE_BREAK_NOTIFY_SIZE && c->dialect >= SMB2_DIALECT_210)
		lease_break(c, body, blen);
	else if (get_le16(body) == SMB2_OPLOCK_BREAK_SIZE)
		oplock_break(c);
}

/* ---- cached handles and attributes ---- */

int cli_lease_close_cached(struct rdax_tree *t, const char *path, bool below,
			   struct cli_chain *ch)
{
	struct rdax_conn *c = t->c;
	struct list_head *pos, *tmp;
	struct cli_chain pre;
	char norm[1024];
	int n = 0, ret = 0;
	bool have_pre = false;

	if (list_empty(&c->leases) || path_norm(path, norm, sizeof(norm)))
		return 0;
	list_for_each_safe(pos, tmp, &c->leases) {
		struct cli_lease *l = list_entry(pos, struct cli_lease, link);

		if (l->t != t || !l->cached || !under(l->path, norm, below))
			continue;
		l->cached = false;
		lru_del(c, l);
		/* three slots stay for the operation itself */
		if (ch->n + 4 <= CLI_MAX_CHAIN) {
			ret = cli_add_close(t, ch, &l->cfid, 0);
			n += !ret;
		} else {
			/* more than fit: round trips of their own first */
			if (have_pre && pre.n == CLI_MAX_CHAIN) {
				cli_chain_run(c, &pre);
				have_pre = false;
			}
			if (!have_pre) {
				cli_chain_init(c, &pre);
				have_pre = true;
			}
			cli_add_close(t, &pre, &l->cfid, 0);
		}
		cli_lease_put(c, l);
		if (ret)
			break;
	}
	if (have_pre)
		cli_chain_run(c, &pre);
	return ret ? ret : n;
}

bool cli_lease_fstat_hit(struct rdax_file *f, struct rdax_stat *st)
{
	struct rdax_conn *c = f->t->c;
	struct cli_lease *l = f->lease;

	if (!l)
		return false;
	/* a break that already came in is heard first */
	cli_progress(c, 0);
	l = f->lease;
	if (!l || !l->have_stat || !covered(l->state))
		return false;
	*st = l->st;
	c->stats.cache_hits++;
	return true;
}

void cli_lease_fstat_fill(struct rdax_file *f, const struct rdax_stat *st)
{
	struct cli_lease *l = f->lease;

	if (l && covered(l->state)) {
		l->st = *st;
		l->st_ms = cli_now_ms();
		l->have_stat = true;
	}
}

void cli_leases_expire(struct rdax_conn *c)
{
	uint64_t now = cli_now_ms();

	while (!list_empty(&c->lease_lru)) {
		struct cli_lease *l = list_entry(c->lease_lru.next, struct cli_lease, lru);

		if (now - l->cached_ms < CLI_CACHE_MS)
			break;
		drop_cached(c, l);
		l->nolease = false;
		lru_del(c, l);
		cli_lease_put(c, l);
	}
}

/*
 * The first stat of a path: CREATE with a lease and QUERY_INFO in one
 * compound, the handle kept while the lease has R and H; the oldest
 * cached handle beyond CLI_CACHED_MAX is closed in the same compound.
 */
static int stat_open(struct rdax_tree *t, struct cli_lease *l, const char *path,
		     struct rdax_stat *st)
{
	struct cli_create_args a = { path, FILE_READ_ATTRIBUTES, FILE_OPEN, 0, 0 };
	struct rdax_conn *c = t->c;
	struct cli_lease *victim = NULL;
	struct smb2_create_rsp rsp;
	struct cli_grant g;
	struct cli_ctx x;
	struct cli_chain ch;
	int ret, i = 0;

	if (c->ncached >= CLI_CACHED_MAX && !list_empty(&c->lease_lru))
		victim = list_entry(c->lease_lru.next, struct cli_lease, lru);
	if (victim == l)
		victim = NULL;
	cli_ctx_init(&x);
	cli_ctx_lease(&x, t, l, R | H);
	a.ctx = x.buf;
	a.ctx_len = (uint32_t)x.len;
	a.oplock = SMB2_OPLOCK_LEVEL_LEASE;
	cli_chain_init(c, &ch);
	ret = 0;
	if (victim) {
		if (victim->cached) {
			ret = cli_add_close(victim->t, &ch, &victim->cfid, 0);
			i = 1;
		}
		victim->cached = false;
		victim->nolease = false;
		lru_del(c, victim);
		cli_lease_put(c, victim);
	}
	if (!ret)
		ret = cli_add_create(t, &ch, &a);
	if (!ret)
		ret = cli_add_query_info(t, &ch, &cli_related_fid, SMB2_0_INFO_FILE,
					 FileAllInformation, 4096);
	if (ret) {
		cli_chain_abort(c, &ch);
		return ret;
	}
	ret = cli_chain_run(c, &ch);
	if (ret)
		return ret;
	if (ch.rsp[i].status)
		return cli_status(c, ch.rsp[i].status, "stat", path);
	if (smb2_create_rsp_decode(ch.rsp[i].pdu, ch.rsp[i].len, &rsp))
		return cli_err(c, -EPROTO, "malformed CREATE response from %s", c->host);
	ret = cli_grant_parse(c, &rsp, l->key, &g);
	if (!ret && ch.rsp[i + 1].status)
		ret = cli_status(c, ch.rsp[i + 1].status, "stat", path);
	if (!ret)
		ret = cli_decode_all_info(c, &ch.rsp[i + 1], st);
	if (!ret && g.lease)
		cli_lease_granted(l, &g);
	l->is_dir = rsp.attributes & FILE_ATTRIBUTE_DIRECTORY;
	if (ret || !g.lease || (g.state & (R | H)) != (R | H) || l->cached) {
		/* not covered (or covered already): the handle goes, in the background */
		cli_close_bg(t, &rsp.fid);
		if (!ret && !g.lease && !l->is_dir)
			t->no_lease = true;	/* the share leases no file */
		else if (!ret && !l->cached && !l->nfiles) {
			/* ask no more here while this mark lasts */
			l->nolease = true;
			l->cached_ms = cli_now_ms();
			lru_touch(c, l);
		}
		if (!ret && covered(l->state)) {
			l->st = *st;
			l->st_ms = cli_now_ms();
			l->have_stat = true;
		}
		return ret;
	}
	l->cached = true;
	l->cfid = rsp.fid;
	l->st = *st;
	l->st_ms = l->cached_ms = cli_now_ms();
	l->have_stat = true;
	lru_touch(c, l);
	return 0;
}

int cli_lease_stat(struct rdax_tree *t, const char *path, struct rdax_stat *st)
{
	struct rdax_conn *c = t->c;
	struct cli_lease *l;
	int ret;

	/* a break that already came in is heard first */
	cli_progress(c, 0);
	l = cli_lease_find(t, path);
	if (l && l->have_stat && covered(l->state) && cli_now_ms() - l->st_ms < CLI_CACHE_MS) {
		*st = l->st;
		c->stats.cache_hits++;
		return 0;
	}
	if (l && l->nolease)
		return -EAGAIN;		/* the plain way (the caller) */
	if (!l)
		l = cli_lease_get(t, path);
	if (!l)
		return -EAGAIN;
	ret = stat_open(t, l, path, st);
	cli_lease_put(c, l);
	return ret;
}
