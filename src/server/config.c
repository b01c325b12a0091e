// SPDX-License-Identifier: MIT
/*
 * rdaxd configuration: --share/--listen from the command line or an
 * smb.conf-syntax file parsed with inih, using Samba's parameter names.
 */
#include <ctype.h>
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
#include "server/server.h"
#include "util/log.h"

int srv_config_init(struct srv_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_dialect = SMB2_DIALECT_210;
	cfg->max_dialect = SMB2_DIALECT_311;
	cfg->signing = SRV_SIGN_AUTO;
	cfg->encrypt = SRV_ENC_AUTO;
	cfg->workers = 0;		/* one per online CPU */
	cfg->max_connections = 1024;
	cfg->max_sessions = 64;
	cfg->max_opens = 16384;
	cfg->receive_timeout = 30;
	cfg->log_level = LOG_NOTICE;
	smbd_params_default(&cfg->smbd);
	cfg->bounce_size = 64u << 20;
	cfg->io_uring = true;
	cfg->multichannel = true;	/* Samba's default on Linux, ksmbd's too */
	cfg->leases = true;		/* Samba: smb2 leases = yes */
	cfg->oplocks = true;		/* Samba: oplocks = yes */
	cfg->streams = -1;
	cfg->dir_leases = true;
	cfg->numa_node = SRV_NUMA_AUTO;
	memset(&cfg->dos, -1, sizeof(cfg->dos));	/* Samba's defaults at start */
	strcpy(cfg->guest_account, "nobody");	/* Samba's default */
	strcpy(cfg->state_dir, "/var/lib/rdax");
	strcpy(cfg->control_path, SRV_CONTROL_DEFAULT);
	strcpy(cfg->netbios_name, "RDAX");
	strcpy(cfg->workgroup, "WORKGROUP");
	strcpy(cfg->server_string, "rdax " RDAX_VERSION);
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
	sh->browseable = true;
	sh->force_gid = (gid_t)-1;
	memset(&sh->dos, -1, sizeof(sh->dos));
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

/* "vfs objects": rdaxd has none, but streams_xattr's streams it keeps. */
static int8_t vfs_has_streams(const char *v)
{
	const char *p = v;
	size_t n = strlen("streams_xattr");

	while ((p = strcasestr(p, "streams_xattr"))) {
		if ((p == v || strchr(" ,\t", p[-1])) && (!p[n] || strchr(" ,\t", p[n])))
			return 1;
		p += n;
	}
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "1", "on" };
	static const char *const no[] = { "no", "false", "0", "off" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* 123, 64K, 8M, 2G (binary units, as smb.conf and ksmbd take them). */
static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_protocol(const char *v, uint16_t *out)
{
	static const struct { const char *name; uint16_t d; } t[] = {
		{ "SMB2_02", SMB2_DIALECT_202 }, { "SMB2_10", SMB2_DIALECT_210 },
		{ "SMB2", SMB2_DIALECT_210 },	 { "SMB3_00", SMB2_DIALECT_300 },
		{ "SMB3_02", SMB2_DIALECT_302 }, { "SMB3_11", SMB2_DIALECT_311 },
		{ "SMB3", SMB2_DIALECT_311 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcasecmp(v, t[i].name)) {
			*out = t[i].d;
			return 0;
		}
	return -EINVAL;
}

/* DOS attribute parameters: in [global] (every share's default) or a share. */
static int dos_param(struct srv_dos_opts *d, const char *name, const char *v)
{
	int8_t *f;
	bool b;

	if (!strcasecmp(name, "map readonly")) {
		if (!strcasecmp(v, "permissions"))
			d->map_readonly = SRV_MAP_RO_PERMS;
		else if (!parse_bool(v, &b))
			d->map_readonly = b ? SRV_MAP_RO_YES : SRV_MAP_RO_NO;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "store dos attributes"))
		f = &d->store;
	else if (!strcasecmp(name, "map archive"))
		f = &d->map_archive;
	else if (!strcasecmp(name, "map hidden"))
		f = &d->map_hidden;
	else if (!strcasecmp(name, "map system"))
		f = &d->map_system;
	else if (!strcasecmp(name, "hide dot files"))
		f = &d->hide_dot;
	else if (!strcasecmp(name, "delete readonly"))
		f = &d->delete_readonly;
	else
		return -ENOENT;
	if (parse_bool(v, &b))
		return -EINVAL;
	*f = b;
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

static void split_users(struct srv_share *sh, const char *v)
{
	char *dup = strdup(v), *tok, *save = NULL;

	if (!dup)
		return;
	for (tok = strtok_r(dup, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		/* NULL-terminated: a reload swaps the whole array */
		char **nv = realloc(sh->valid_users,
				    sizeof(char *) * (size_t)(sh->nvalid + 2));

		if (!nv)
			break;
		sh->valid_users = nv;
		sh->valid_users[sh->nvalid] = strdup(tok);
		if (sh->valid_users[sh->nvalid])
			sh->nvalid++;
		sh->valid_users[sh->nvalid] = NULL;
	}
	free(dup);
}

static int global_param(struct ini_state *st, const char *name, const char *v)
{
	struct srv_config *cfg = st->cfg;
	bool b;

	if (!strcasecmp(name, "server min protocol"))
		return parse_protocol(v, &cfg->min_dialect);
	if (!strcasecmp(name, "server max protocol"))
		return parse_protocol(v, &cfg->max_dialect);
	if (!strcasecmp(name, "server signing")) {
		if (!strcasecmp(v, "auto") || !strcasecmp(v, "default") ||
		    !strcasecmp(v, "if_required"))
			cfg->signing = SRV_SIGN_AUTO;
		else if (!strcasecmp(v, "mandatory") || !strcasecmp(v, "required"))
			cfg->signing = SRV_SIGN_MANDATORY;
		else if (!strcasecmp(v, "disabled") || !strcasecmp(v, "no"))
			cfg->signing = SRV_SIGN_DISABLED;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "smb encrypt") ||
	    !strcasecmp(name, "server smb encrypt")) {
		if (!strcasecmp(v, "off") || !strcasecmp(v, "no") ||
		    !strcasecmp(v, "disabled"))
			cfg->encrypt = SRV_ENC_OFF;
		else if (!strcasecmp(v, "auto") || !strcasecmp(v, "default") ||
			 !strcasecmp(v, "if_required"))
			cfg->encrypt = SRV_ENC_AUTO;
		else if (!strcasecmp(v, "desired"))
			cfg->encrypt = SRV_ENC_DESIRED;
		else if (!strcasecmp(v, "required") || !strcasecmp(v, "mandatory"))
			cfg->encrypt = SRV_ENC_REQUIRED;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "listen")) {
		char *dup = strdup(v), *tok, *save = NULL;
		int ret = 0;

		if (!dup)
			return -ENOMEM;
		for (tok = strtok_r(dup, ", \t", &save); tok && !ret;
		     tok = strtok_r(NULL, ", \t", &save))
			ret = srv_config_parse_listen(cfg, tok);
		free(dup);
		return ret;
	}
	if (!strcasecmp(name, "smb ports")) {
		char *dup = strdup(v), *tok, *save = NULL, url[64];
		int ret = 0;

		if (!dup)
			return -ENOMEM;
		for (tok = strtok_r(dup, ", \t", &save); tok && !ret;
		     tok = strtok_r(NULL, ", \t", &save)) {
			snprintf(url, sizeof(url), "tcp://0.0.0.0:%s", tok);
			ret = srv_config_parse_listen(cfg, url);
		}
		free(dup);
		return ret;
	}
	if (!strcasecmp(name, "passdb file")) {
		snprintf(cfg->passdb_path, sizeof(cfg->passdb_path), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "username map")) {
		if ((size_t)snprintf(cfg->usermap_path, sizeof(cfg->usermap_path), "%s", v) >=
		    sizeof(cfg->usermap_path))
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "guest account")) {
		if (!*v || (size_t)snprintf(cfg->guest_account, sizeof(cfg->guest_account),
					    "%s", v) >= sizeof(cfg->guest_account))
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "numa node")) {
		char *end;
		long n;

		if (!strcasecmp(v, "auto")) {
			cfg->numa_node = SRV_NUMA_AUTO;
		} else if (!strcasecmp(v, "off") || !strcasecmp(v, "no")) {
			cfg->numa_node = SRV_NUMA_OFF;
		} else {
			n = strtol(v, &end, 10);
			if (*end || end == v || n < 0 || n > 1023)
				return -EINVAL;
			cfg->numa_node = (int)n;
		}
		return 0;
	}
	if (!strcasecmp(name, "interfaces")) {
		if ((size_t)snprintf(cfg->interfaces, sizeof(cfg->interfaces), "%s", v) >=
		    sizeof(cfg->interfaces))
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "rdax control socket")) {
		/* "" or "none": no control socket */
		if (!strcasecmp(v, "none"))
			v = "";
		if ((*v && *v != '/') || strlen(v) >= 108)
			return -EINVAL;
		snprintf(cfg->control_path, sizeof(cfg->control_path), "%s", v);
		cfg->control_set = true;
		return 0;
	}
	if (!strcasecmp(name, "state directory")) {
		if (*v != '/' || strlen(v) >= sizeof(cfg->state_dir))
			return -EINVAL;
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "bind interfaces only"))
		return parse_bool(v, &b);	/* listeners are explicit already */
	if (!strcasecmp(name, "server multi channel support")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		cfg->multichannel = b;
		return 0;
	}
	if (!strcasecmp(name, "smb2 leases") || !strcasecmp(name, "smb3 directory leases") ||
	    !strcasecmp(name, "oplocks")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		if (!strcasecmp(name, "smb2 leases"))
			cfg->leases = b;
		else if (!strcasecmp(name, "oplocks"))
			cfg->oplocks = b;
		else
			cfg->dir_leases = b;
		return 0;
	}
	if (!strcasecmp(name, "vfs objects")) {
		cfg->streams = vfs_has_streams(v);
		return 0;
	}
	if (!strcasecmp(name, "kernel oplocks") || !strcasecmp(name, "kernel share modes") ||
	    !strcasecmp(name, "posix locking")) {
		/* rdaxd keeps these itself: only "no" is what it does */
		if (parse_bool(v, &b) || b)
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "io uring")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		cfg->io_uring = b;
		return 0;
	}
	if (!strcasecmp(name, "map to guest")) {
		if (!strcasecmp(v, "never"))
			cfg->map_to_guest = false;
		else if (!strcasecmp(v, "bad user"))
			cfg->map_to_guest = true;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "netbios name")) {
		snprintf(cfg->netbios_name, sizeof(cfg->netbios_name), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "server string")) {
		snprintf(cfg->server_string, sizeof(cfg->server_string), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "workgroup")) {
		snprintf(cfg->workgroup, sizeof(cfg->workgroup), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "workers") || !strcasecmp(name, "max connections") ||
	    !strcasecmp(name, "log level") ||
	    !strcasecmp(name, "max open files")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end || n < 0 || n > 1000000)
			return -EINVAL;
		/* the same ranges as the command line; 0 would refuse everyone */
		if ((!strcasecmp(name, "workers") && n > 256) ||
		    (strcasecmp(name, "log level") && strcasecmp(name, "workers") && n < 1))
			return -EINVAL;
		if (!strcasecmp(name, "workers"))
			cfg->workers = (int)n;
		else if (!strcasecmp(name, "max connections"))
			cfg->max_connections = (int)n;
		else if (!strcasecmp(name, "max open files"))
			cfg->max_opens = (int)n;
		else
			cfg->log_level = n >= 3 ? LOG_DEBUG : n >= 1 ? LOG_INFO : LOG_NOTICE;
		return 0;
	}
	if (!strcasecmp(name, "max sessions per connection") ||
	    !strcasecmp(name, "receive timeout")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (end == v || *end || n < 0 || n > 65535)
			return -EINVAL;
		if (!strcasecmp(name, "receive timeout")) {
			cfg->receive_timeout = (unsigned int)n;	/* seconds, 0: none */
		} else {
			if (n < 1)
				return -EINVAL;
			cfg->max_sessions = (int)n;
		}
		return 0;
	}
	if (!strcasecmp(name, "guest ok") || !strcasecmp(name, "public")) {
		/* as in Samba: the default of every share; guests must also
		 * be able to log on, so unknown users map to guest */
		if (parse_bool(v, &b))
			return -EINVAL;
		cfg->guest_ok_default = b;
		if (b)
			cfg->map_to_guest = true;
		return 0;
	}
	if (!strcasecmp(name, "smbd max io size") || !strcasecmp(name, "rdma bounce size")) {
		uint64_t n;

		if (parse_size(v, &n))
			return -EINVAL;
		if (!strcasecmp(name, "rdma bounce size")) {
			if (n < (1u << 20) || n > (16ull << 30))
				return -EINVAL;
			cfg->bounce_size = (size_t)n;
		} else {
			/* ksmbd's clamp: 512 KiB .. 16 MiB */
			if (n < (512u << 10) || n > (16u << 20))
				return -EINVAL;
			cfg->smbd.max_read_write_size = (uint32_t)n;
		}
		return 0;
	}
	return -ENOENT;
}

static int share_param(struct ini_state *st, const char *name, const char *v)
{
	struct srv_share *sh = st->share;
	bool b;

	if (!strcasecmp(name, "vfs objects")) {
		sh->streams_want = vfs_has_streams(v);
		return 0;
	}
	if (!strcasecmp(name, "path")) {
		if (!*v)
			return -EINVAL;
		snprintf(sh->path, sizeof(sh->path), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "read only")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		sh->read_only = b;
		return 0;
	}
	if (!strcasecmp(name, "oplocks")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		sh->oplocks = b;
		sh->oplocks_set = true;
		return 0;
	}
	if (!strcasecmp(name, "continuous availability")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		sh->ca = b;
		return 0;
	}
	if (!strcasecmp(name, "ca journal")) {
		if (*v != '/' || strlen(v) >= sizeof(sh->ca_journal))
			return -EINVAL;
		snprintf(sh->ca_journal, sizeof(sh->ca_journal), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "writable") || !strcasecmp(name, "writeable") ||
	    !strcasecmp(name, "write ok")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		sh->read_only = !b;
		return 0;
	}
	if (!strcasecmp(name, "guest ok") || !strcasecmp(name, "public")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		sh->guest_ok = b;
		sh->guest_ok_set = true;
		return 0;
	}
	if (!strcasecmp(name, "valid users")) {
		split_users(sh, v);
		return 0;
	}
	if (!strcasecmp(name, "comment")) {
		snprintf(sh->comment, sizeof(sh->comment), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "force user")) {
		if (!*v || (size_t)snprintf(sh->force_user, sizeof(sh->force_user), "%s", v) >=
		    sizeof(sh->force_user))
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "force group") || !strcasecmp(name, "group")) {
		sh->force_group_member = *v == '+';
		v += sh->force_group_member;
		if (!*v || (size_t)snprintf(sh->force_group, sizeof(sh->force_group), "%s", v) >=
		    sizeof(sh->force_group))
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "store")) {
		if (!strcasecmp(v, "auto"))
			sh->store_want = SRV_STORE_AUTO;
		else if (!strcasecmp(v, "dax"))
			sh->store_want = SRV_STORE_DAX;
		else if (!strcasecmp(v, "posix"))
			sh->store_want = SRV_STORE_POSIX;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "dax device")) {
		if (*v != '/' || strlen(v) >= sizeof(sh->dax_device))
			return -EINVAL;
		snprintf(sh->dax_device, sizeof(sh->dax_device), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "dax file name")) {
		if (!*v || strpbrk(v, "/\\:*?\"<>|") || strlen(v) >= sizeof(sh->dax_name) ||
		    !strcmp(v, ".") || !strcmp(v, ".."))
			return -EINVAL;
		snprintf(sh->dax_name, sizeof(sh->dax_name), "%s", v);
		return 0;
	}
	if (!strcasecmp(name, "rdma registration")) {
		if (!strcasecmp(v, "auto"))
			sh->rung_want = SRV_RUNG_AUTO;
		else if (!strcasecmp(v, "direct"))
			sh->rung_want = SRV_RUNG_DIRECT;
		else if (!strcasecmp(v, "odp"))
			sh->rung_want = SRV_RUNG_ODP;
		else if (!strcasecmp(v, "bounce"))
			sh->rung_want = SRV_RUNG_BOUNCE;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcasecmp(name, "browseable") || !strcasecmp(name, "browsable") ||
	    !strcasecmp(name, "available")) {
		if (parse_bool(v, &b))
			return -EINVAL;
		if (tolower((unsigned char)name[0]) == 'b')
			sh->browseable = b;
		return 0;
	}
	return -ENOENT;
}

static int conf_handler(void *user, const char *section, const char *name,
		       const char *value)
{
	struct ini_state *st = user;
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
	ret = dos_param(st->share ? &st->share->dos : &st->cfg->dos, name, value);
	if (ret == -ENOENT)
		ret = st->share ? share_param(st, name, value) : global_param(st, name, value);
	if (ret == -ENOENT) {
		log_msg(LOG_WARN, "%s:%d: unknown parameter '%s' ignored", st->file,
			st->lineno, name);
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
