/* SPDX-License-Identifier: MIT */
/*
 * rdaxd's one option table: every smb.conf parameter and command-line
 * option, with its type, range, default, scope and help. config.c parses
 * the file from it, tools/rdaxd.c the command line and --help, and
 * man/rdax.conf.5 is generated from `rdaxd --list-params`.
 */
#ifndef RDAX_SERVER_OPTIONS_H
#define RDAX_SERVER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct srv_config;
struct srv_share;

enum srv_opt_type {
	SRV_OPT_FLAG,		/* command line, no value */
	SRV_OPT_BOOL,
	SRV_OPT_INT,		/* min..max, or one of its words */
	SRV_OPT_SIZE,		/* bytes, K/M/G binary units */
	SRV_OPT_ENUM,		/* one of its words */
	SRV_OPT_STRING,
	SRV_OPT_LIST,		/* separated by commas or blanks */
};

/* where a parameter may be given */
#define SRV_OPT_GLOBAL	0x1	/* [global] */
#define SRV_OPT_SHARE	0x2	/* a share's section; --share shares on the command line */
#define SRV_OPT_CLI	0x4	/* the command line only (no smb.conf name) */

/* checks on a value */
#define SRV_OPT_NONEMPTY 0x1
#define SRV_OPT_ABSPATH	0x2	/* "/..." */
#define SRV_OPT_INVERT	0x4	/* a bool stored negated (writable: !read only) */
#define SRV_OPT_RESTART	0x8	/* a reload logs a change as needing a restart */
#define SRV_OPT_NOONLY	0x10	/* a bool that must be no (what rdaxd does anyway) */

struct srv_opt_word {
	const char *word;
	int value;
};

struct srv_opt_field {
	size_t off, size;	/* size 0: no field (the hook stores it) */
};

struct srv_opt_ctx {
	struct srv_config *cfg;
	struct srv_share *share;	/* NULL: [global] */
	bool dflt;			/* applying the default, not a given value */
};

struct srv_opt;
typedef int (*srv_opt_hook)(struct srv_opt_ctx *c, const struct srv_opt *o,
			    const char *v, int64_t n);

struct srv_opt {
	const char *name;		/* smb.conf; NULL: command line only */
	const char *alias[3];		/* other smb.conf spellings */
	const char *lopt;		/* --LOPT, NULL: smb.conf only */
	int sopt;			/* -X, 0: none */
	const char *arg;		/* the value's name in --help */
	enum srv_opt_type type;
	unsigned int scope, flags;
	int64_t min, max;		/* INT, SIZE */
	const struct srv_opt_word *words;	/* ENUM; INT: besides numbers */
	struct srv_opt_field g, s;	/* in srv_config, in srv_share */
	struct srv_opt_field s_set;	/* a share's bool: "given in its section" */
	srv_opt_hook hook;		/* stores instead of g/s */
	const char *def;		/* default, applied at start; NULL: none */
	const char *def_doc;		/* default as documented, when not a value */
	const char *help;
	const char *peer;		/* the Samba / ksmbd parameter; NULL: rdax only */
};

extern const struct srv_opt srv_opts[];
extern const size_t srv_nopts;

/* by smb.conf name or alias, case-insensitive */
const struct srv_opt *srv_opt_find(const char *name);
/* Parse v and store it: 0, -EINVAL (bad value, too long, out of range). */
int srv_opt_set(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v);
/* every default of the scope (SRV_OPT_GLOBAL: cfg, SRV_OPT_SHARE: sh) */
void srv_opt_defaults(struct srv_config *cfg, struct srv_share *sh);
/* "auto|default|if_required, mandatory|required, disabled|no" */
void srv_opt_words(const struct srv_opt *o, char *buf, size_t len);
/* --help's option lines, from the table */
void srv_opt_usage(FILE *f);
/* one tab-separated line per smb.conf parameter, for rdax.conf.5 */
void srv_opt_list(FILE *f);

#endif
