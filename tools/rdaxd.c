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
#include "server/options.h"
#include "server/server.h"
#include "server/usermap.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rdaxd --share NAME=PATH [--share ...] [--listen tcp://ADDR:PORT]\n"
"             [--listen rdma://ADDR:PORT] [--guest | --passdb FILE] [OPTION...]\n"
"       rdaxd --config FILE [OPTION...]\n"
"\n");
	srv_opt_usage(f);
	fprintf(f, "\nThe file is read first and the options override it. Every smb.conf\n"
		"parameter (rdax.conf(5), rdaxd --list-params) can be given with --option.\n");
}

static int bad_usage(const char *msg, const char *arg)
{
	srv_conf_error("%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'rdaxd --help' for more information.\n");
	return 2;
}

/* getopt_long's tables, from the option table: val is -X or 256 + row */
static struct option opts[64];
static char shortopts[64];

static void getopt_tables(void)
{
	size_t i, n = 0, k = 0;

	if (opts[0].name)
		return;
	for (i = 0; i < srv_nopts && n + 1 < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct srv_opt *o = &srv_opts[i];
		int has_arg = o->type == SRV_OPT_FLAG ? no_argument : required_argument;

		if (!o->lopt)
			continue;
		opts[n++] = (struct option){ o->lopt, has_arg, NULL,
					     o->sopt ? o->sopt : 256 + (int)i };
		if (o->sopt && k + 3 < sizeof(shortopts)) {
			shortopts[k++] = (char)o->sopt;
			if (has_arg == required_argument)
				shortopts[k++] = ':';
		}
	}
}

static const struct srv_opt *opt_of(int c)
{
	size_t i;

	if (c >= 256)
		return &srv_opts[c - 256];
	for (i = 0; i < srv_nopts; i++)
		if (srv_opts[i].sopt == c)
			return &srv_opts[i];
	return NULL;
}

/* The command line, kept: a reload builds the configuration again. */
struct args {
	int argc;
	char **argv;
	const char *config;
	bool test;
	int verbose;
	int exit_now;			/* -1: run; else the exit status */
};

/* a share parameter of the command line, for every --share share */
struct share_set {
	const struct srv_opt *o;
	const char *v;
	const char *given;		/* for the error */
};

static int bad_value(const struct srv_opt *o, const char *given)
{
	char words[256], msg[400];

	srv_opt_words(o, words, sizeof(words));
	if (o->type == SRV_OPT_INT || o->type == SRV_OPT_SIZE)
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%lld..%lld",
			 words[0] ? ", " : "", (long long)o->min, (long long)o->max);
	snprintf(msg, sizeof(msg), "invalid value for %s%s%s%s%s", o->lopt ? "--" : "'",
		 o->lopt ? o->lopt : o->name, o->lopt ? "" : "'", words[0] ? " wants " : "",
		 words);
	return bad_usage(msg, given);
}

/* --option 'NAME = VALUE': the parameter and where the value starts */
static const struct srv_opt *option_arg(const char *arg, const char **v)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	size_t n;

	if (!eq)
		return NULL;
	n = (size_t)(eq - arg);
	while (n && (arg[n - 1] == ' ' || arg[n - 1] == '\t'))
		n--;
	while (n && (*arg == ' ' || *arg == '\t')) {
		arg++;
		n--;
	}
	if (!n || n >= sizeof(name))
		return NULL;
	memcpy(name, arg, n);
	name[n] = 0;
	for (eq++; *eq == ' ' || *eq == '\t'; eq++)
		;
	*v = eq;
	return srv_opt_find(name);
}

static int share_opt(struct srv_config *cfg, struct args *a, const char *optarg)
{
	struct srv_share *sh;
	char *eq, *arg;
	int ret;

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
		return bad_usage(ret == -EEXIST ? "share given twice" : "invalid share name",
				 optarg);
	sh->from_cli = true;
	return 0;
}

/*
 * The configuration: the file, then the command line over it. 0, or the
 * exit status (2) with the reason on stderr and in srv_conf_last_error.
 */
static int build_config(struct srv_config *cfg, struct args *a)
{
	struct srv_opt_ctx ctx = { .cfg = cfg };
	struct share_set *sset;
	const struct srv_opt *o;
	const char *v;
	bool guest = false;
	int c, i, j, nset = 0, rc = 0;

	a->config = NULL;
	a->test = false;
	a->verbose = 0;
	a->exit_now = -1;
	getopt_tables();
	/* the file first: options on the command line override it */
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(a->argc, a->argv, shortopts, opts, NULL)) != -1)
		if (c == 'C')
			a->config = optarg;
	opterr = 1;
	if (a->config && srv_config_load(cfg, a->config))
		return 2;
	sset = calloc((size_t)a->argc + 1, sizeof(*sset));
	if (!sset)
		return bad_usage("out of memory", NULL);
	optind = 0;
	while (!rc && (c = getopt_long(a->argc, a->argv, shortopts, opts, NULL)) != -1) {
		switch (c) {
		case 's':
			rc = share_opt(cfg, a, optarg);
			continue;
		case 'C':
			continue;	/* loaded above */
		case 'g':
			guest = true;
			continue;
		case 't':
			a->test = true;
			continue;
		case 'v':
			a->verbose++;
			continue;
		case 'V':
			printf("rdaxd %s\n", RDAX_VERSION);
			a->exit_now = 0;
			goto out;
		case 'h':
			usage(stdout);
			a->exit_now = 0;
			goto out;
		case 'o':
			o = option_arg(optarg, &v);
			if (!o) {
				rc = bad_usage("--option wants 'NAME=VALUE' of a known parameter",
					       optarg);
				continue;
			}
			break;
		case '?':
		case ':':
			srv_conf_error("unknown option");
			fprintf(stderr, "Try 'rdaxd --help' for more information.\n");
			rc = 2;
			continue;
		default:
			o = opt_of(c);
			v = optarg;
			if (o && !o->name) {	/* --list-params */
				srv_opt_list(stdout);
				a->exit_now = 0;
				goto out;
			}
			break;
		}
		if (o->scope & SRV_OPT_SHARE) {
			sset[nset++] = (struct share_set){ o, v, optarg };
		} else if (srv_opt_set(&ctx, o, v)) {
			rc = bad_value(o, optarg);
		}
	}
	if (rc)
		goto out;
	if (optind < a->argc) {
		rc = bad_usage("unexpected argument", a->argv[optind]);
		goto out;
	}
	for (i = 0; i < cfg->nshares; i++) {
		ctx.share = cfg->shares[i];
		for (j = 0; j < nset && ctx.share->from_cli; j++)
			if (srv_opt_set(&ctx, sset[j].o, sset[j].v)) {
				rc = bad_value(sset[j].o, sset[j].given);
				goto out;
			}
	}
	if (!cfg->nshares) {
		rc = bad_usage("no shares: give --share NAME=PATH or --config FILE", NULL);
		goto out;
	}
	if (guest) {
		cfg->map_to_guest = true;
		for (i = 0; i < cfg->nshares; i++)
			cfg->shares[i]->guest_ok = true;
	} else if (!cfg->passdb_path[0] && !cfg->map_to_guest) {
		int g = 0;

		for (i = 0; i < cfg->nshares; i++)
			g += cfg->shares[i]->guest_ok;
		if (!g)
			rc = bad_usage("nobody could log on: give --passdb FILE or --guest", NULL);
	}
out:
	free(sset);
	return rc;
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
