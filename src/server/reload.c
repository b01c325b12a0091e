// SPDX-License-Identifier: MIT
/*
 * Reload (SIGHUP, rdaxctl reload): the configuration is built again the
 * way it was at start (the file, then the command line), checked whole,
 * and only then applied; a broken file changes nothing.
 *
 * Workers keep using the live srv_config while this runs, without a
 * lock, so it changes only in ways they may see at any moment:
 * - the share table never moves (room for SRV_MAX_SHARES is reserved at
 *   start) and never shrinks: a new share is written to its slot before
 *   the count that lists it is published (release/acquire);
 * - a removed share stays where it is, marked removed: lookups skip it,
 *   its trees answer STATUS_NETWORK_NAME_DELETED, its opens and file
 *   table stay valid until they close, and it is freed at exit;
 * - a share whose path, store, rung, CA or force user/group changed is
 *   removed and added again (a new file table for a new root);
 * - otherwise the share object stays (its file table, leases, opens) and
 *   its flags change in place; "valid users" is a NULL-terminated array
 *   swapped by one pointer, the old one kept until exit;
 * - a continuously available share added (or made anew) opens its
 *   journal as at start, before it is published; one whose journal a
 *   share of this server's life holds is refused (a restart changes it);
 * - the passdb and username map are swapped under the logon lock.
 * Global parameters that the running server cannot change (SRV_OPT_RESTART
 * in the option table) are logged as needing a restart; the live ones keep
 * their values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "crypto/passdb.h"
#include "server/options.h"
#include "server/server.h"
#include "server/usermap.h"
#include "util/log.h"

#include <systemd/sd-daemon.h>

void srv_set_config_build(struct srv *s, srv_config_build_fn fn, void *arg,
			  const char *file)
{
	s->build = fn;
	s->build_arg = arg;
	snprintf(s->conf_file, sizeof(s->conf_file), "%s", file ? file : "");
}

/* What makes a share the same share (else: removed and added again). */
static bool same_share(const struct srv_share *a, const struct srv_share *b)
{
	return !strcmp(a->path, b->path) && !strcmp(a->dax_device, b->dax_device) &&
	       a->store_want == b->store_want && a->rung_want == b->rung_want &&
	       a->ca == b->ca && !strcmp(a->ca_journal, b->ca_journal) &&
	       !strcmp(a->force_user, b->force_user) &&
	       !strcmp(a->force_group, b->force_group) &&
	       a->force_group_member == b->force_group_member;
}

static bool same_users(char **a, char **b)
{
	int i;

	if (!a || !b)
		return (!a || !a[0]) && (!b || !b[0]);
	for (i = 0; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return !a[i] && !b[i];
}

static bool share_settings_differ(const struct srv_share *a, const struct srv_share *b)
{
	return a->read_only != b->read_only || a->guest_ok != b->guest_ok ||
	       a->browseable != b->browseable || a->streams != b->streams ||
	       a->oplocks != b->oplocks || strcmp(a->comment, b->comment) ||
	       a->posix != b->posix || a->special_files != b->special_files ||
	       memcmp(&a->dos, &b->dos, sizeof(a->dos)) ||
	       !same_users(a->valid_users, b->valid_users);
}

static int retire(struct srv_config *cfg, void *p)
{
	void **v;

	if (!p)
		return 0;
	v = realloc(cfg->retired, sizeof(*v) * (size_t)(cfg->nretired + 1));
	if (!v)
		return -ENOMEM;
	cfg->retired = v;
	cfg->retired[cfg->nretired++] = p;
	return 0;
}

/* The kept share takes the new settings; workers may be reading it. */
static void share_update(struct srv_config *live, struct srv_share *old,
			 struct srv_share *nw)
{
	char **users = old->valid_users;
	int i;

	old->read_only = nw->read_only;
	old->guest_ok = nw->guest_ok;
	old->oplocks = nw->oplocks;
	old->browseable = nw->browseable;
	old->streams = nw->streams;
	old->posix = nw->posix;
	old->special_files = nw->special_files;
	old->dos = nw->dos;
	snprintf(old->comment, sizeof(old->comment), "%s", nw->comment);
	if (same_users(users, nw->valid_users))
		return;
	__atomic_store_n(&old->valid_users, nw->valid_users, __ATOMIC_RELEASE);
	old->nvalid = nw->nvalid;
	nw->valid_users = NULL;
	nw->nvalid = 0;
	/* a tree connect may still walk the old list: it stays until exit */
	for (i = 0; users && users[i]; i++)
		if (retire(live, users[i]))
			return;		/* leaked, not freed under a reader */
	retire(live, users);
}

/* An added share's rung: the ladder ran at start; a new one bounces. */
static void share_rung(struct srv *s, struct srv_share *sh)
{
	if (!s->nrdma_listen) {
		sh->rung = MEM_RUNG_NONE;
		return;
	}
	sh->rung = MEM_RUNG_BOUNCE;
	snprintf(sh->rung_why, sizeof(sh->rung_why),
		 "added by a reload: registered bounce pool (direct and odp are chosen at start)");
}

/*
 * A CA share a reload adds (or makes anew): its journal must be one no
 * share of this server's life holds (a removed share keeps its journal
 * while its persistent opens live), and it must open.
 */
static int ca_check(struct srv *s, const struct srv_share *sh, char *msg, size_t len)
{
	struct srv_config *live = s->cfg;
	char path[4096];
	int i, n = srv_config_nshares(live), fd, ret;

	ret = srv_durable_ca_path(live, sh, path, sizeof(path));
	if (ret) {
		snprintf(msg, len, "share [%s]: ca journal: %s", sh->name, strerror(-ret));
		return ret;
	}
	for (i = 0; i < n; i++) {
		const struct srv_journal *j = live->shares[i]->journal;

		if (j && !strcmp(srv_journal_path(j), path)) {
			snprintf(msg, len, "share [%s]: its ca journal %s is share [%s]'s while "
				 "this server runs: a restart changes it", sh->name, path,
				 live->shares[i]->name);
			return -EBUSY;
		}
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(msg, len, "share [%s]: ca journal %s: %s", sh->name, path, strerror(errno));
		return ret;
	}
	close(fd);
	return 0;
}

enum plan { PLAN_KEEP, PLAN_ADD, PLAN_REPLACE, PLAN_SKIP };

int srv_reload(struct srv *s, char *msg, size_t len)
{
	struct srv_config *live = s->cfg, *nw;
	struct passdb *db = NULL, *old_db;
	struct usermap *map = NULL, *old_map;
	enum plan *plan = NULL;
	struct timespec ts;
	int i, n, nnew = 0, nadd = 0, nrm = 0, nchg = 0, nlive, ret;
	char err[700];
	size_t k;

	msg[0] = 0;
	if (!s->build) {
		snprintf(msg, len, "this server has no configuration to reload");
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&s->reload_lock);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nSTATUS=reloading %s\nMONOTONIC_USEC=%llu",
		   s->conf_file[0] ? s->conf_file : "the configuration",
		   (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	nw = calloc(1, sizeof(*nw));
	if (!nw) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	srv_config_init(nw);
	srv_conf_error("%s", "");
	ret = s->build(nw, s->build_arg);
	if (ret) {
		snprintf(msg, len, "%s", srv_conf_last_error()[0] ? srv_conf_last_error() :
			 strerror(-ret));
		goto out_free;
	}
	if (!nw->nlisten)
		srv_config_parse_listen(nw, "tcp://0.0.0.0:445");
	n = nw->nshares;
	plan = calloc((size_t)(n ? n : 1), sizeof(*plan));
	if (!plan) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* check everything first: roots open, stores, accounts, the passdb */
	for (i = 0; i < n; i++) {
		struct srv_share *sh = nw->shares[i], *old = srv_share_find(live, sh->name);

		if (sh->ipc) {
			plan[i] = PLAN_SKIP;
			continue;
		}
		if (old && same_share(old, sh)) {
			plan[i] = PLAN_KEEP;
			srv_share_resolve(nw, sh);
			continue;
		}
		if (sh->ca) {
			ret = ca_check(s, sh, msg, len);
			if (ret)
				goto out_free;
		}
		plan[i] = old ? PLAN_REPLACE : PLAN_ADD;
		nnew++;
		ret = srv_share_finish(nw, sh);
		if (ret) {
			snprintf(msg, len, "%s", srv_conf_last_error());
			goto out_free;
		}
	}
	nlive = srv_config_nshares(live);
	if (nlive + nnew > live->cap) {
		snprintf(msg, len, "too many shares over this server's life (%d): restart it",
			 live->cap);
		ret = -E2BIG;
		goto out_free;
	}
	ret = srv_logon_load(nw, &db, &map, err, sizeof(err));
	if (ret) {
		snprintf(msg, len, "%s", err);
		goto out_free;
	}

	/* apply: nothing below fails */
	for (k = 0; k < srv_nopts; k++) {
		const struct srv_opt *o = &srv_opts[k];

		if ((o->flags & SRV_OPT_RESTART) && o->g.size &&
		    memcmp((char *)live + o->g.off, (char *)nw + o->g.off, o->g.size))
			pr_warn("reload: '%s' changed: it takes effect at a restart", o->name);
	}
	for (i = 0; i < nlive; i++) {
		struct srv_share *old = live->shares[i], *sh;

		if (old->ipc || atomic_load(&old->removed))
			continue;
		sh = srv_share_find(nw, old->name);
		if (sh && same_share(old, sh))
			continue;
		atomic_store(&old->removed, true);
		if (!sh) {
			nrm++;
			pr_notice("reload: share [%s] removed; its trees are deleted", old->name);
		}
	}
	for (i = 0; i < n; i++) {
		struct srv_share *sh = nw->shares[i], *old;

		switch (plan[i]) {
		case PLAN_KEEP:
			old = srv_share_find(live, sh->name);
			if (old && share_settings_differ(old, sh)) {
				share_update(live, old, sh);
				nchg++;
				pr_notice("reload: share [%s] changed%s%s", old->name,
					  old->read_only ? " (read only)" : "",
					  old->guest_ok ? " (guest ok)" : "");
			}
			break;
		case PLAN_ADD:
		case PLAN_REPLACE:
			share_rung(s, sh);
			sh->idx = live->nshares;
			/* its persistent opens come back before it is seen */
			if (sh->ca && srv_durable_ca_open(s, sh))
				pr_err("reload: share [%s]: ca journal: %s; persistent handles are "
				       "not granted on it until a restart", sh->name,
				       srv_conf_last_error());
			live->shares[live->nshares] = sh;
			__atomic_store_n(&live->nshares, live->nshares + 1, __ATOMIC_RELEASE);
			nw->shares[i] = NULL;	/* the live table's now */
			pr_notice("reload: share [%s] %s: %s, store %s (%s)", sh->name,
				  plan[i] == PLAN_ADD ? "added" : "changed (a new root)",
				  sh->dax_device[0] ? sh->dax_device : sh->path,
				  sh->store == SRV_STORE_DAX ? "dax" : "posix", sh->store_why);
			if (plan[i] == PLAN_REPLACE)
				nchg++;
			else
				nadd++;
			break;
		case PLAN_SKIP:
			break;
		}
	}
	/* the logon data, and where it comes from */
	pthread_rwlock_wrlock(&s->logon_lock);
	old_db = s->passdb;
	old_map = s->usermap;
	s->passdb = db;
	s->usermap = map;
	memcpy(live->passdb_path, nw->passdb_path, sizeof(live->passdb_path));
	memcpy(live->usermap_path, nw->usermap_path, sizeof(live->usermap_path));
	pthread_rwlock_unlock(&s->logon_lock);
	passdb_free(&old_db);
	usermap_free(&old_map);
	if (live->log_level != nw->log_level && !getenv("RDAX_LOG_LEVEL")) {
		live->log_level = nw->log_level;
		log_threshold = nw->log_level;
	}
	snprintf(msg, len, "reloaded %s: %d share%s added, %d removed, %d changed; "
		 "passdb %zu user%s%s%s", s->conf_file[0] ? s->conf_file : "the configuration",
		 nadd, nadd == 1 ? "" : "s", nrm, nchg, db ? passdb_count(db) : 0,
		 db && passdb_count(db) == 1 ? "" : "s", map ? ", username map " : "",
		 map ? live->usermap_path : "");
	pr_notice("reload: %s", msg);
	ret = 0;
out_free:
	/* compact: shares moved to the live table are NULL here */
	for (i = k = 0; i < nw->nshares; i++)
		if (nw->shares[i])
			nw->shares[k++] = nw->shares[i];
	nw->nshares = (int)k;
	srv_config_free(nw);
	free(nw);
	free(plan);
out_unlock:
	if (ret)
		pr_err("reload failed, nothing changed: %s", msg[0] ? msg : strerror(-ret));
	sd_notifyf(0, "READY=1\nSTATUS=%s", ret ? "reload failed; serving the previous "
		   "configuration" : "serving");
	pthread_mutex_unlock(&s->reload_lock);
	return ret;
}
