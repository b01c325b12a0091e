// SPDX-License-Identifier: MIT
/*
 * Who may log on, and as whom: the password database, the username map
 * and the guest account, read at start and again on SIGHUP, and the Unix
 * identity a session gets at logon.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/passdb.h"
#include "server/ident.h"
#include "server/server.h"
#include "server/usermap.h"
#include "util/log.h"

static int load_passdb(const char *path, struct passdb **out, char *err, size_t len)
{
	unsigned int line = 0;
	int ret;

	*out = NULL;
	if (!path[0])
		return 0;
	ret = passdb_load_ex(path, out, &line);
	if (ret == -EPERM)
		snprintf(err, len, "passdb %s: must not be readable or writable by group "
			 "or others (chmod 600)", path);
	else if (ret == -EINVAL && line)
		snprintf(err, len, "passdb %s:%u: malformed line or duplicate user", path, line);
	else if (ret)
		snprintf(err, len, "passdb %s: %s", path, strerror(-ret));
	return ret;
}

int srv_logon_load(const struct srv_config *cfg, struct passdb **db,
		   struct usermap **map, char *err, size_t len)
{
	char why[600];
	int ret;

	*map = NULL;
	ret = load_passdb(cfg->passdb_path, db, err, len);
	if (ret)
		return ret;
	if (cfg->usermap_path[0]) {
		ret = usermap_load(cfg->usermap_path, map, why, sizeof(why));
		if (ret) {
			snprintf(err, len, "username map %s", why);
			passdb_free(db);
			return ret;
		}
	}
	return 0;
}

int srv_logon_init(struct srv *s)
{
	char err[700];
	int ret;

	pthread_rwlock_init(&s->logon_lock, NULL);
	ret = srv_logon_load(s->cfg, &s->passdb, &s->usermap, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		return ret == -EPERM ? ret : -EINVAL;
	}
	if (s->usermap)
		pr_notice("username map %s: %d line%s", s->cfg->usermap_path,
			  usermap_lines(s->usermap), usermap_lines(s->usermap) == 1 ? "" : "s");
	return 0;
}

void srv_logon_reload(struct srv *s)
{
	struct passdb *db, *old_db;
	struct usermap *map, *old_map;
	char err[700];

	if (srv_logon_load(s->cfg, &db, &map, err, sizeof(err))) {
		pr_err("reload: %s; the passdb and username map in use are kept", err);
		return;
	}
	pthread_rwlock_wrlock(&s->logon_lock);
	old_db = s->passdb;
	old_map = s->usermap;
	s->passdb = db;
	s->usermap = map;
	pthread_rwlock_unlock(&s->logon_lock);
	passdb_free(&old_db);
	usermap_free(&old_map);
	pr_notice("reload: passdb %s (%zu user%s)%s%s", s->cfg->passdb_path[0] ?
		  s->cfg->passdb_path : "none", db ? passdb_count(db) : 0,
		  db && passdb_count(db) == 1 ? "" : "s",
		  map ? ", username map " : "", map ? s->cfg->usermap_path : "");
}

void srv_logon_free(struct srv *s)
{
	passdb_free(&s->passdb);
	usermap_free(&s->usermap);
	pthread_rwlock_destroy(&s->logon_lock);
}

int srv_logon_hash(struct srv *s, const char *user, uint8_t nt_hash[16])
{
	int ret = -ENOENT;

	pthread_rwlock_rdlock(&s->logon_lock);
	if (s->passdb)
		ret = passdb_lookup(s->passdb, user, nt_hash);
	pthread_rwlock_unlock(&s->logon_lock);
	return ret;
}

int srv_logon_ident(struct srv *s, const char *user, bool guest,
		    struct srv_ident **out, char *unix_name, size_t len)
{
	int ret;

	if (!srv_ident_switching()) {
		*out = srv_ident_get(s->self_ident);
		snprintf(unix_name, len, "%s", s->self_ident->name);
		return 0;
	}
	if (guest) {
		/* none when no share lets guests in: IPC$ only */
		*out = srv_ident_get(s->cfg->guest_ident);
		snprintf(unix_name, len, "%s", *out ? (*out)->name : "(no guest account)");
		return 0;
	}
	pthread_rwlock_rdlock(&s->logon_lock);
	ret = usermap_apply(s->usermap, user, unix_name, len);
	pthread_rwlock_unlock(&s->logon_lock);
	if (ret)
		return ret;
	return srv_ident_lookup(unix_name, out);
}
