// SPDX-License-Identifier: MIT
/* rdaxd: SMB3 server for directories and DAX persistent memory. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <systemd/sd-daemon.h>

#include "crypto/passdb.h"
#include "server/server.h"
#include "server/usermap.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rdaxd --share NAME=PATH [--share ...] [--listen tcp://ADDR:PORT]\n"
"             [--listen rdma://ADDR:PORT] [--guest | --passdb FILE]\n"
"       rdaxd --config FILE\n"
"\n"
"  -s, --share NAME=PATH   export PATH as share NAME (read-write)\n"
"  -l, --listen URL        listen on tcp://ADDR:PORT (default tcp://0.0.0.0:445)\n"
"  -g, --guest             shares allow guests; unknown users become guests\n"
"  -p, --passdb FILE       NT-hash password file (see 'rdax passwd')\n"
"      --username-map FILE SMB user names to Unix accounts (smb.conf's\n"
"                          'username map')\n"
"  -C, --config FILE       smb.conf-syntax configuration\n"
"      --store S           store of --share shares: auto (default: dax on a\n"
"                          DAX mount), dax or posix\n"
"      --signing MODE      auto (default), mandatory or disabled\n"
"      --encrypt MODE      off, auto (default: clients may encrypt),\n"
"                          desired or required\n"
"      --max-protocol P    SMB2_02, SMB2_10, SMB3_00, SMB3_02 or SMB3_11\n"
"      --min-protocol P    lowest dialect accepted (default SMB2_10)\n"
"  -w, --workers N         worker threads (default: one per CPU)\n"
"      --control PATH      control socket for rdaxctl (default " SRV_CONTROL_DEFAULT ",\n"
"                          smb.conf's 'rdax control socket'; none: no socket)\n"
"  -t, --test-config       check the configuration and exit\n"
"  -v, --verbose           more logging (repeat for debug)\n"
"  -V, --version           print the version\n"
"  -h, --help              this help\n");
}

static int bad_usage(const char *msg, const char *arg)
{
	srv_conf_error("%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'rdaxd --help' for more information.\n");
	return 2;
}


static const struct option opts[] = {
	{ "share", required_argument, NULL, 's' },
	{ "listen", required_argument, NULL, 'l' },
	{ "guest", no_argument, NULL, 'g' },
	{ "passdb", required_argument, NULL, 'p' },
	{ "config", required_argument, NULL, 'C' },
	{ "signing", required_argument, NULL, 1 },
	{ "encrypt", required_argument, NULL, 2 },
	{ "max-protocol", required_argument, NULL, 3 },
	{ "min-protocol", required_argument, NULL, 4 },
	{ "workers", required_argument, NULL, 'w' },
	{ "test-config", no_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ "store", required_argument, NULL, 5 },
	{ "username-map", required_argument, NULL, 6 },
	{ "control", required_argument, NULL, 7 },
	{ 0 }
};

/* The command line, kept: a reload builds the configuration again. */
struct args {
	int argc;
	char **argv;
	const char *config;
	bool test;
	int verbose;
	int exit_now;			/* -1: run; else the exit status */
};

/*
 * The configuration: the file, then the command line over it. 0, or the
 * exit status (2) with the reason on stderr and in srv_conf_last_error.
 */
static int build_config(struct srv_config *cfg, struct args *a)
{
	struct srv_share *sh;
	bool guest = false;
	enum srv_store store = SRV_STORE_AUTO;
	int c, i, ret;
	char *eq, *arg;

	a->config = NULL;
	a->test = false;
	a->verbose = 0;
	a->exit_now = -1;
	/* the file first: options on the command line override it */
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(a->argc, a->argv, "s:l:gp:C:w:tvVh", opts, NULL)) != -1)
		if (c == 'C')
			a->config = optarg;
	opterr = 1;
	if (a->config && srv_config_load(cfg, a->config))
		return 2;
	optind = 0;
	while ((c = getopt_long(a->argc, a->argv, "s:l:gp:C:w:tvVh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			/* a reload parses it again: work on a copy */
			arg = strdup(optarg);
			if (!arg)
				return bad_usage("out of memory", NULL);
			eq = strchr(arg, '=');
			if (!eq || eq == arg || !eq[1]) {
				free(arg);
				return bad_usage("--share wants NAME=PATH", optarg);
			}
			*eq = 0;
			sh = srv_share_find(cfg, arg);
			if (sh && !sh->from_cli && !sh->ipc) {
				/* a section of the file: the command line sets its path */
				snprintf(sh->path, sizeof(sh->path), "%s", eq + 1);
				ret = 0;
			} else {
				ret = srv_config_add_share(cfg, arg, eq + 1, &sh);
			}
			free(arg);
			if (ret)
				return bad_usage(ret == -EEXIST ? "share given twice" :
						 "invalid share name", optarg);
			sh->from_cli = true;
			break;
		case 'l':
			if (srv_config_parse_listen(cfg, optarg))
				return bad_usage("--listen wants tcp://ADDR:PORT or rdma://ADDR:PORT",
						 optarg);
			break;
		case 'g':
			guest = true;
			break;
		case 'p':
			snprintf(cfg->passdb_path, sizeof(cfg->passdb_path), "%s", optarg);
			break;
		case 'C':
			break;		/* loaded above */
		case 1:
			if (!strcmp(optarg, "auto"))
				cfg->signing = SRV_SIGN_AUTO;
			else if (!strcmp(optarg, "mandatory"))
				cfg->signing = SRV_SIGN_MANDATORY;
			else if (!strcmp(optarg, "disabled"))
				cfg->signing = SRV_SIGN_DISABLED;
			else
				return bad_usage("--signing wants auto, mandatory or disabled", optarg);
			break;
		case 2:
			if (!strcmp(optarg, "off"))
				cfg->encrypt = SRV_ENC_OFF;
			else if (!strcmp(optarg, "auto"))
				cfg->encrypt = SRV_ENC_AUTO;
			else if (!strcmp(optarg, "desired"))
				cfg->encrypt = SRV_ENC_DESIRED;
			else if (!strcmp(optarg, "required"))
				cfg->encrypt = SRV_ENC_REQUIRED;
			else
				return bad_usage("--encrypt wants off, auto, desired or required", optarg);
			break;
		case 3:
		case 4: {
			static const struct { const char *n; uint16_t d; } p[] = {
				{ "SMB2_02", SMB2_DIALECT_202 }, { "SMB2_10", SMB2_DIALECT_210 },
				{ "SMB3_00", SMB2_DIALECT_300 }, { "SMB3_02", SMB2_DIALECT_302 },
				{ "SMB3_11", SMB2_DIALECT_311 },
			};
			size_t k;

			for (k = 0; k < 5; k++)
				if (!strcasecmp(optarg, p[k].n))
					break;
			if (k == 5)
				return bad_usage("unknown protocol", optarg);
			if (c == 3)
				cfg->max_dialect = p[k].d;
			else
				cfg->min_dialect = p[k].d;
			break;
		}
		case 5:
			if (!strcmp(optarg, "auto"))
				store = SRV_STORE_AUTO;
			else if (!strcmp(optarg, "dax"))
				store = SRV_STORE_DAX;
			else if (!strcmp(optarg, "posix"))
				store = SRV_STORE_POSIX;
			else
				return bad_usage("--store wants auto, dax or posix", optarg);
			break;
		case 6:
			if ((size_t)snprintf(cfg->usermap_path, sizeof(cfg->usermap_path), "%s",
					     optarg) >= sizeof(cfg->usermap_path))
				return bad_usage("--username-map: path too long", NULL);
			break;
		case 7:
			if (!strcmp(optarg, "none"))
				optarg = "";
			if ((*optarg && *optarg != '/') || strlen(optarg) >= 108)
				return bad_usage("--control wants an absolute path (< 108 bytes) or none",
						 optarg);
			snprintf(cfg->control_path, sizeof(cfg->control_path), "%s", optarg);
			cfg->control_set = true;
			break;
		case 'w':
			cfg->workers = atoi(optarg);
			if (cfg->workers < 1 || cfg->workers > 256)
				return bad_usage("--workers wants 1..256", optarg);
			break;
		case 't':
			a->test = true;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'V':
			printf("rdaxd %s\n", RDAX_VERSION);
			a->exit_now = 0;
			return 0;
		case 'h':
			usage(stdout);
			a->exit_now = 0;
			return 0;
		default:
			srv_conf_error("unknown option");
			fprintf(stderr, "Try 'rdaxd --help' for more information.\n");
			return 2;
		}
	}
	if (optind < a->argc)
		return bad_usage("unexpected argument", a->argv[optind]);
	for (i = 0; i < cfg->nshares; i++)
		if (cfg->shares[i]->from_cli)
			cfg->shares[i]->store_want = store;
	if (!cfg->nshares)
		return bad_usage("no shares: give --share NAME=PATH or --config FILE", NULL);
	if (guest) {
		cfg->map_to_guest = true;
		for (i = 0; i < cfg->nshares; i++)
			cfg->shares[i]->guest_ok = true;
	} else if (!cfg->passdb_path[0] && !cfg->map_to_guest) {
		int g = 0;

		for (i = 0; i < cfg->nshares; i++)
			g += cfg->shares[i]->guest_ok;
		if (!g)
			return bad_usage("nobody could log on: give --passdb FILE or --guest", NULL);
	}
	return 0;
}

static int rebuild(struct srv_config *cfg, void *arg)
{
	return build_config(cfg, arg) ? -EINVAL : 0;
}

/* Under journald (stderr is its stream): no timestamps of our own. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st))
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int main(int argc, char **argv)
{
	struct args a = { .argc = argc, .argv = argv };
	struct srv_config cfg;
	struct srv *s = NULL;
	int i, ret, rc;

	srv_config_init(&cfg);
	rc = build_config(&cfg, &a);
	if (rc || a.exit_now >= 0) {
		rc = rc ? rc : a.exit_now;
		goto out;
	}
	log_init("rdaxd", a.verbose >= 2 ? LOG_DEBUG : a.verbose ? LOG_INFO :
		 cfg.log_level);
	if (stderr_is_journal())
		log_set_journal(true);
	if (srv_config_finish(&cfg)) {
		rc = 2;
		goto out;
	}
	if (a.test) {
		struct passdb *db = NULL;
		struct usermap *map = NULL;
		char err[700];

		if (srv_logon_load(&cfg, &db, &map, err, sizeof(err))) {
			fprintf(stderr, "rdaxd: %s\n", err);
			rc = 2;
			goto out;
		}
		passdb_free(&db);
		usermap_free(&map);
		printf("configuration OK: %d share%s\n", cfg.nshares - 1,
		       cfg.nshares == 2 ? "" : "s");
		for (i = 0; i < cfg.nshares; i++)
			if (!cfg.shares[i]->ipc)
				printf("  [%s] %s%s%s store %s\n", cfg.shares[i]->name,
				       cfg.shares[i]->dax_device[0] ? cfg.shares[i]->dax_device :
				       cfg.shares[i]->path,
				       cfg.shares[i]->read_only ? " read-only" : "",
				       cfg.shares[i]->guest_ok ? " guest-ok" : "",
				       cfg.shares[i]->store == SRV_STORE_DAX ? "dax" : "posix");
		rc = 0;
		goto out;
	}
	ret = srv_new(&cfg, &s);
	if (ret) {
		sd_notifyf(0, "STATUS=failed to start: %s\nERRNO=%d", strerror(-ret), -ret);
		rc = ret == -EPERM || ret == -EINVAL ? 2 : 1;
		goto out;
	}
	srv_set_config_build(s, rebuild, &a, a.config);
	ret = srv_run(s);
	srv_free(&s);
	pr_notice("stopped");
	rc = ret ? 1 : 0;
out:
	srv_config_free(&cfg);
	return rc;
}
