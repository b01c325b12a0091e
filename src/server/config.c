// SPDX-License-Identifier: MIT
/*
 * rdaxd configuration: an smb.conf-syntax file parsed with inih, its
 * parameters (Samba's names) set through the option table (options.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "proto/smb2.h"
#include "server/options.h"
#include "server/server.h"
#include "util/log.h"

int srv_config_init(struct srv_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	smbd_params_default(&cfg->smbd);
	cfg->streams = -1;		/* "vfs objects" not given */
	memset(&cfg->dos, -1, sizeof(cfg->dos));	/* Samba's defaults at start */
	srv_opt_defaults(cfg, NULL);	/* the option table's (options.c) */
	return 0;
}

/* The last configuration error of this thread (a reload reports it). */
static _Thread_local char conf_err[512];

void srv_conf_error(const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(conf_err, sizeof(conf_err), fmt, ap);
	va_end(ap);
	n = strlen(conf_err);
	if (n && conf_err[n - 1] == '\n')
		conf_err[n - 1] = 0;
	if (!n)
		return;			/* srv_conf_error("%s", ""): forget it */
	fprintf(stderr, "rdaxd: %s\n", conf_err);
}

const char *srv_conf_last_error(void)
{
	return conf_err;
}

/*
 * Workers look shares up while a reload appends to the table: the count
 * is published after the slot, and a share once listed stays (removed).
 */
int srv_config_nshares(const struct srv_config *cfg)
{
	return __atomic_load_n(&cfg->nshares, __ATOMIC_ACQUIRE);
}

struct srv_share *srv_share_find(const struct srv_config *cfg, const char *name)
{
	int i, n = srv_config_nshares(cfg);

	for (i = 0; i < n; i++)
		if (!atomic_load(&cfg->shares[i]->removed) &&
		    !strcasecmp(cfg->shares[i]->name, name))
			return cfg->shares[i];
	return NULL;
}

/* Room for every share a running server will list (see srv_reload). */
int srv_config_reserve(struct srv_config *cfg, int cap)
{
	struct srv_share **v;

	if (cap <= cfg->cap)
		return 0;
	v = realloc(cfg->shares, sizeof(*v) * (size_t)cap);
	if (!v)
		return -ENOMEM;
	cfg->shares = v;
	cfg->cap = cap;
	return 0;
}

int srv_config_add_share(struct srv_config *cfg, const char *name,
			 const char *path, struct srv_share **out)
{
	struct srv_share *sh;
	int i;

	if (!*name || strlen(name) >= sizeof(sh->name) ||
	    strpbrk(name, "\\/:*?\"<>|[]"))
		return -EINVAL;
	if (srv_share_find(cfg, name))
		return -EEXIST;
	if (cfg->nshares == cfg->cap && srv_config_reserve(cfg, cfg->cap ? cfg->cap * 2 : 8))
		return -ENOMEM;
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	sh->streams_want = -1;
	strcpy(sh->name, name);
	if (path)
		snprintf(sh->path, sizeof(sh->path), "%s", path);
	sh->root.fd = -1;
	sh->force_gid = (gid_t)-1;
	memset(&sh->dos, -1, sizeof(sh->dos));
	srv_opt_defaults(cfg, sh);
	for (i = 0; i < SRV_FILE_SHARDS; i++) {
		pthread_mutex_init(&sh->shards[i].lock, NULL);
		list_init(&sh->shards[i].files);
	}
	cfg->shares[cfg->nshares] = sh;
	__atomic_store_n(&cfg->nshares, cfg->nshares + 1, __ATOMIC_RELEASE);
	*out = sh;
	return 0;
}

/* tcp://ADDR:PORT, rdma://ADDR:PORT; [v6]:port accepted. */
int srv_config_parse_listen(struct srv_config *cfg, const char *url)
{
	struct srv_listen *l;
	const char *p, *colon;
	char *end;
	unsigned long port;
	size_t n;

	if (cfg->nlisten >= SRV_MAX_LISTEN)
		return -E2BIG;
	l = &cfg->listen[cfg->nlisten];
	memset(l, 0, sizeof(*l));
	if (!strncmp(url, "tcp://", 6)) {
		p = url + 6;
	} else if (!strncmp(url, "rdma://", 7)) {
		p = url + 7;
		l->rdma = true;
	} else {
		return -EINVAL;
	}
	if (*p == '[') {
		colon = strstr(p, "]:");
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - p - 1);
		if (n >= sizeof(l->addr))
			return -EINVAL;
		memcpy(l->addr, p + 1, n);
		colon++;
	} else {
		colon = strrchr(p, ':');
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - p);
		if (n >= sizeof(l->addr))
			return -EINVAL;
		memcpy(l->addr, p, n);
	}
	l->addr[n] = 0;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port == 0 || port > 65535)
		return -EINVAL;
	l->port = (unsigned int)port;
	cfg->nlisten++;
	return 0;
}

struct ini_state {
	struct srv_config *cfg;
	const char *file;
	FILE *fp;
	int lineno;
	struct srv_share *share;
	char section[128];
	bool skip_section;
	char err[256];
};

/* fgets that counts lines and strips leading blanks (smb.conf indents). */
static char *conf_reader(char *buf, int size, void *stream)
{
	struct ini_state *st = stream;
	char *p;

	if (!fgets(buf, size, st->fp))
		return NULL;
	st->lineno++;
	p = buf;
	while (*p == ' ' || *p == '\t')
		p++;
	if (p != buf)
		memmove(buf, p, strlen(p) + 1);
	return buf;
}

static int conf_handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct ini_state *st = user;
	struct srv_opt_ctx c = { .cfg = st->cfg };
	const struct srv_opt *opt;
	int ret;

	if (strcmp(section, st->section)) {
		snprintf(st->section, sizeof(st->section), "%s", section);
		st->share = NULL;
		st->skip_section = false;
		if (strcasecmp(section, "global")) {
			if (!strcasecmp(section, "homes") ||
			    !strcasecmp(section, "printers") ||
			    !strcasecmp(section, "print$")) {
				log_msg(LOG_WARN, "%s:%d: section [%s] is not supported, ignored",
					st->file, st->lineno, section);
				st->skip_section = true;
			} else if (!(st->share = srv_share_find(st->cfg, section))) {
				/* a repeated section adds to the first, as in Samba */
				ret = srv_config_add_share(st->cfg, section, NULL, &st->share);
				if (ret) {
					snprintf(st->err, sizeof(st->err),
						 "invalid share name [%s]", section);
					return 0;
				}
			}
		}
	}
	if (!name)			/* section header only (INI_CALL_HANDLER_ON_NEW_SECTION) */
		return 1;
	if (st->skip_section)
		return 1;
	opt = srv_opt_find(name);
	if (!opt) {
		log_msg(LOG_WARN, "%s:%d: unknown parameter '%s' ignored", st->file,
			st->lineno, name);
		return 1;
	}
	c.share = st->share;
	ret = srv_opt_set(&c, opt, value);
	if (ret == -ENOENT) {
		log_msg(LOG_WARN, "%s:%d: '%s' is a %s parameter, ignored in [%s]", st->file,
			st->lineno, name, st->share ? "[global]" : "share", section);
		return 1;
	}
	if (ret) {
		snprintf(st->err, sizeof(st->err), "invalid value '%s' for '%s'",
			 value, name);
		return 0;
	}
	return 1;
}

int srv_config_load(struct srv_config *cfg, const char *file)
{
	struct ini_state st = { .cfg = cfg, .file = file };
	int line;

	st.fp = fopen(file, "r");
	if (!st.fp) {
		int err = errno;

		srv_conf_error("%s: %s\n", file, strerror(err));
		return -err;
	}
	line = ini_parse_stream(conf_reader, &st, conf_handler, &st);
	fclose(st.fp);
	if (line > 0) {
		srv_conf_error("%s:%d: %s\n", file, line,
			st.err[0] ? st.err : "syntax error");
		return -EINVAL;
	}
	if (line < 0) {
		srv_conf_error("%s: cannot read\n", file);
		return -EIO;
	}
	return 0;
}

/* force user / force group name accounts that exist: checked at start */
static int share_force(struct srv_share *sh)
{
	struct group gr, *res = NULL;
	char buf[16384];
	int ret;

	if (sh->force_user[0]) {
		ret = srv_ident_lookup(sh->force_user, &sh->force_ident);
		if (ret) {
			srv_conf_error("share [%s]: force user = %s: %s\n", sh->name,
				sh->force_user, ret == -ENOENT ? "no such Unix user" : strerror(-ret));
			return -EINVAL;
		}
	}
	if (sh->force_group[0]) {
		if (getgrnam_r(sh->force_group, &gr, buf, sizeof(buf), &res) || !res) {
			srv_conf_error("share [%s]: force group = %s%s: no such Unix group\n",
				sh->name, sh->force_group_member ? "+" : "", sh->force_group);
			return -EINVAL;
		}
		sh->force_gid = res->gr_gid;
	}
	return 0;
}

/* Guests act as "guest account"; it must exist if anyone can be one. */
static int guest_account(struct srv_config *cfg)
{
	bool guests = cfg->map_to_guest;
	int i, ret;

	for (i = 0; i < cfg->nshares; i++)
		guests |= !cfg->shares[i]->ipc && cfg->shares[i]->guest_ok;
	if (!guests)
		return 0;
	ret = srv_ident_lookup(cfg->guest_account, &cfg->guest_ident);
	if (ret) {
		srv_conf_error("guest account = %s: %s (guests act as it)\n",
			cfg->guest_account, ret == -ENOENT ? "no such Unix user" : strerror(-ret));
		return -EINVAL;
	}
	return 0;
}

/* A share's defaults from [global], its accounts, root and store. */
void srv_share_resolve(const struct srv_config *cfg, struct srv_share *sh)
{
	if (!sh->guest_ok_set)
		sh->guest_ok = sh->guest_ok || cfg->guest_ok_default;
	if (!sh->oplocks_set)
		sh->oplocks = cfg->oplocks;
	/* as Samba's vfs_streams_xattr, unless "vfs objects" leaves it out */
	sh->streams = sh->streams_want >= 0 ? sh->streams_want
		      : cfg->streams >= 0 ? cfg->streams : true;
	if (!sh->posix_set)
		sh->posix = cfg->posix;
	if (!sh->use_sendfile_set)
		sh->use_sendfile = cfg->use_sendfile;
	srv_dos_opts_resolve(&sh->dos, &cfg->dos);
}

int srv_share_finish(struct srv_config *cfg, struct srv_share *sh)
{
	int ret;

	srv_share_resolve(cfg, sh);
	ret = share_force(sh);
	if (ret)
		return ret;
	if (sh->dax_device[0]) {
		if (sh->path[0]) {
			srv_conf_error("share [%s]: give path or dax device, not both\n",
				       sh->name);
			return -EINVAL;
		}
		return srv_store_select(sh);
	}
	if (!sh->path[0]) {
		srv_conf_error("share [%s] has no path\n", sh->name);
		return -EINVAL;
	}
	ret = store_root_open(sh->path, &sh->root);
	if (ret) {
		srv_conf_error("share [%s]: %s: %s\n", sh->name, sh->path, strerror(-ret));
		return ret;
	}
	return srv_store_select(sh);
}

int srv_config_finish(struct srv_config *cfg)
{
	struct srv_share *ipc;
	int i, ret;

	if (cfg->min_dialect > cfg->max_dialect) {
		srv_conf_error("server min protocol is above server max protocol\n");
		return -EINVAL;
	}
	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];

		sh->idx = i;
		if (sh->ipc)
			continue;
		ret = srv_share_finish(cfg, sh);
		if (ret)
			return ret;
	}
	if (!srv_share_find(cfg, "IPC$")) {
		ret = srv_config_add_share(cfg, "IPC$", NULL, &ipc);
		if (ret)
			return ret;
		ipc->ipc = true;
		ipc->read_only = true;
		ipc->guest_ok = true;
		/* Samba's remark for it */
		snprintf(ipc->comment, sizeof(ipc->comment), "IPC Service (%.100s)",
			 cfg->server_string);
	}
	if (!cfg->nlisten)
		srv_config_parse_listen(cfg, "tcp://0.0.0.0:445");
	return guest_account(cfg);
}

void srv_config_free(struct srv_config *cfg)
{
	int i, j;

	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];

		srv_store_release(sh);
		store_root_close(&sh->root);
		for (j = 0; j < sh->nvalid; j++)
			free(sh->valid_users[j]);
		free(sh->valid_users);
		srv_ident_put(&sh->force_ident);
		free(sh);
	}
	free(cfg->shares);
	cfg->shares = NULL;
	cfg->nshares = cfg->cap = 0;
	for (i = 0; i < cfg->nretired; i++)
		free(cfg->retired[i]);
	free(cfg->retired);
	cfg->retired = NULL;
	cfg->nretired = 0;
	srv_ident_put(&cfg->guest_ident);
}

bool srv_config_has_ca(const struct srv_config *cfg)
{
	int i;

	for (i = 0; i < cfg->nshares; i++)
		if (cfg->shares[i]->ca)
			return true;
	return false;
}

/* "smb3 unix extensions" anywhere: the POSIX negotiate context is offered. */
bool srv_config_has_posix(const struct srv_config *cfg)
{
	int i;

	if (cfg->posix)
		return true;
	for (i = 0; i < srv_config_nshares(cfg); i++)
		if (cfg->shares[i]->posix && !cfg->shares[i]->removed)
			return true;
	return false;
}
