// SPDX-License-Identifier: MIT
/* "username map" files (see usermap.h). */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/ident.h"
#include "server/usermap.h"

#define MAP_MAX_BYTES (1u << 20)

enum map_kind { MAP_NAME, MAP_ANY, MAP_GROUP };

struct map_name {
	enum map_kind kind;
	char *s;
	gid_t gid;			/* MAP_GROUP */
};

struct map_line {
	char *unix_name;
	bool stop;			/* '!': a match ends the mapping */
	int lineno;
	int nnames;
	struct map_name *names;
};

struct usermap {
	struct map_line *lines;
	int nlines;
};

static void set_err(char *err, size_t len, const char *path, int line,
		    const char *fmt, const char *arg, const char *arg2)
{
	int n = snprintf(err, len, "%s:%d: ", path, line);

	if (n > 0 && (size_t)n < len)
		snprintf(err + n, len - (size_t)n, fmt, arg, arg2);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Next name of a list: blank- or comma-separated, "quoted" if need be. */
static int next_token(char **p, char **tok)
{
	char *s = *p, *q;

	while (*s && (isspace((unsigned char)*s) || *s == ','))
		s++;
	if (!*s)
		return 0;
	if (*s == '"') {
		q = strchr(s + 1, '"');
		if (!q)
			return -EINVAL;
		*q = 0;
		*tok = s + 1;
		*p = q + 1;
		return 1;
	}
	for (q = s; *q && !isspace((unsigned char)*q) && *q != ','; q++)
		;
	if (*q)
		*q++ = 0;
	*tok = s;
	*p = q;
	return 1;
}

static int parse_line(struct usermap *m, char *text, int lineno, const char *path,
		      char *err, size_t errlen)
{
	struct map_line *l, *v;
	char *eq, *left, *right, *tok;
	int ret;

	eq = strchr(text, '=');
	if (!eq) {
		set_err(err, errlen, path, lineno, "no '=' (want 'unixname = smbname ...')%s%s", "", "");
		return -EINVAL;
	}
	*eq = 0;
	left = trim(text);
	right = eq + 1;
	v = realloc(m->lines, sizeof(*v) * (size_t)(m->nlines + 1));
	if (!v)
		return -ENOMEM;
	m->lines = v;
	l = &m->lines[m->nlines];
	memset(l, 0, sizeof(*l));
	l->lineno = lineno;
	if (*left == '!') {
		l->stop = true;
		left = trim(left + 1);
	}
	if (*left == '"' && left[1] && left[strlen(left) - 1] == '"') {
		left[strlen(left) - 1] = 0;
		left++;
	}
	if (!*left) {
		set_err(err, errlen, path, lineno, "no Unix name before '='%s%s", "", "");
		return -EINVAL;
	}
	l->unix_name = strdup(left);
	if (!l->unix_name)
		return -ENOMEM;
	m->nlines++;
	while ((ret = next_token(&right, &tok)) == 1) {
		struct map_name *nv = realloc(l->names, sizeof(*nv) * (size_t)(l->nnames + 1));
		struct map_name *n;

		if (!nv)
			return -ENOMEM;
		l->names = nv;
		n = &l->names[l->nnames];
		memset(n, 0, sizeof(*n));
		if (!strcmp(tok, "*")) {
			n->kind = MAP_ANY;
		} else if (*tok == '@' || *tok == '+') {
			n->kind = MAP_GROUP;
			tok++;
		} else if (*tok == '&') {
			set_err(err, errlen, path, lineno, "'%s': NIS netgroups are not supported%s", tok, "");
			return -EINVAL;
		}
		if (n->kind != MAP_ANY && !*tok) {
			set_err(err, errlen, path, lineno, "an empty group name%s%s", "", "");
			return -EINVAL;
		}
		n->s = strdup(tok);
		if (!n->s)
			return -ENOMEM;
		l->nnames++;
	}
	if (ret < 0) {
		set_err(err, errlen, path, lineno, "a quote is not closed%s%s", "", "");
		return -EINVAL;
	}
	if (!l->nnames) {
		set_err(err, errlen, path, lineno, "no SMB names after '=' for '%s'%s", l->unix_name, "");
		return -EINVAL;
	}
	return 0;
}

/* Every Unix name and group must exist, now rather than at a logon. */
static int check_names(struct usermap *m, const char *path, char *err, size_t errlen)
{
	int i, j, ret;

	for (i = 0; i < m->nlines; i++) {
		struct map_line *l = &m->lines[i];
		struct srv_ident *id = NULL;

		ret = srv_ident_lookup(l->unix_name, &id);
		srv_ident_put(&id);
		if (ret == -ENOENT) {
			set_err(err, errlen, path, l->lineno, "no Unix user '%s'%s", l->unix_name, "");
			return -EINVAL;
		}
		if (ret)
			return ret;
		for (j = 0; j < l->nnames; j++) {
			struct map_name *n = &l->names[j];
			struct group gr, *res = NULL;
			char buf[16384];

			if (n->kind != MAP_GROUP)
				continue;
			if (getgrnam_r(n->s, &gr, buf, sizeof(buf), &res) || !res) {
				set_err(err, errlen, path, l->lineno, "no Unix group '%s'%s", n->s, "");
				return -EINVAL;
			}
			n->gid = res->gr_gid;
		}
	}
	return 0;
}

/* A name maps to another that maps back (explicit names only). */
struct edge {
	const char *from, *to;
	int lineno;
};

static int find_loop(const struct edge *e, int ne, int at, int *path, int depth,
		     int maxdepth)
{
	int i, k;

	for (i = 0; i < ne; i++) {
		if (strcasecmp(e[i].from, e[at].to))
			continue;
		for (k = 0; k < depth; k++)
			if (path[k] == i)
				goto next;
		path[depth] = i;
		if (!strcasecmp(e[i].to, e[path[0]].from))
			return depth + 1;
		if (depth + 1 < maxdepth) {
			int n = find_loop(e, ne, i, path, depth + 1, maxdepth);

			if (n)
				return n;
		}
next:
		;
	}
	return 0;
}

static int check_loops(const struct usermap *m, const char *path, char *err, size_t errlen)
{
	struct edge *e = NULL;
	int ne = 0, i, j, n, *chain, ret = 0;

	for (i = 0; i < m->nlines; i++)
		ne += m->lines[i].nnames;
	if (!ne)
		return 0;
	e = calloc((size_t)ne, sizeof(*e));
	chain = calloc((size_t)ne + 1, sizeof(*chain));
	if (!e || !chain) {
		ret = -ENOMEM;
		goto out;
	}
	ne = 0;
	for (i = 0; i < m->nlines; i++)
		for (j = 0; j < m->lines[i].nnames; j++) {
			const struct map_name *nm = &m->lines[i].names[j];

			if (nm->kind == MAP_NAME && strcasecmp(nm->s, m->lines[i].unix_name))
				e[ne++] = (struct edge){ nm->s, m->lines[i].unix_name,
							 m->lines[i].lineno };
		}
	for (i = 0; i < ne; i++) {
		chain[0] = i;
		n = find_loop(e, ne, i, chain, 1, ne);
		if (n) {
			char what[512];
			int k, off;

			off = snprintf(what, sizeof(what), "%s", e[chain[0]].from);
			for (k = 0; k < n && off > 0 && (size_t)off < sizeof(what); k++)
				off += snprintf(what + off, sizeof(what) - (size_t)off,
						" -> %s (line %d)", e[chain[k]].to, e[chain[k]].lineno);
			set_err(err, errlen, path, e[chain[0]].lineno,
				"names map to each other in a loop: %s%s", what, "");
			ret = -ELOOP;
			goto out;
		}
	}
out:
	free(chain);
	free(e);
	return ret;
}

int usermap_load(const char *path, struct usermap **out, char *err, size_t errlen)
{
	struct usermap *m;
	char *buf = NULL, *line;
	size_t len = 0, cap = 0;
	int c, lineno = 0, start = 1, ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		ret = -ENOMEM;
		goto out_close;
	}
	/* logical lines: a '\' before the newline joins the next one */
	for (;;) {
		c = fgetc(f);
		if (len + 2 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 256;
			if (cap > MAP_MAX_BYTES) {
				snprintf(err, errlen, "%s:%d: line too long", path, lineno + 1);
				ret = -E2BIG;
				goto out_free;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				ret = -ENOMEM;
				goto out_free;
			}
			buf = nb;
		}
		if (c == '\n')
			lineno++;
		if (c == '\n' && len && buf[len - 1] == '\\') {
			buf[--len] = ' ';
			len++;
			continue;
		}
		if (c != '\n' && c != EOF) {
			buf[len++] = (char)c;
			continue;
		}
		buf[len] = 0;
		line = trim(buf);
		if (*line && *line != '#' && *line != ';') {
			/* report the line the entry started on */
			ret = parse_line(m, line, start, path, err, errlen);
			if (ret)
				goto out_free;
		}
		len = 0;
		start = lineno + 1;
		if (c == EOF)
			break;
	}
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
		goto out_free;
	}
	ret = check_names(m, path, err, errlen);
	if (!ret)
		ret = check_loops(m, path, err, errlen);
	if (ret)
		goto out_free;
	*out = m;
	m = NULL;
out_free:
	usermap_free(&m);
	free(buf);
out_close:
	fclose(f);
	return ret;
}

static bool in_group(const char *name, gid_t gid)
{
	struct srv_ident *id = NULL;
	bool in;

	if (srv_ident_lookup(name, &id))
		return false;
	in = srv_ident_in_group(id, gid);
	srv_ident_put(&id);
	return in;
}

static bool line_matches(const struct map_line *l, const char *cur)
{
	int i;

	for (i = 0; i < l->nnames; i++) {
		const struct map_name *n = &l->names[i];

		if (n->kind == MAP_ANY ||
		    (n->kind == MAP_NAME && !strcasecmp(n->s, cur)) ||
		    (n->kind == MAP_GROUP && in_group(cur, n->gid)))
			return true;
	}
	return false;
}

int usermap_apply(const struct usermap *m, const char *user, char *out, size_t len)
{
	const char *cur = user;
	int i;

	for (i = 0; m && i < m->nlines; i++) {
		if (!line_matches(&m->lines[i], cur))
			continue;
		cur = m->lines[i].unix_name;
		if (m->lines[i].stop)
			break;
	}
	if ((size_t)snprintf(out, len, "%s", cur) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int usermap_lines(const struct usermap *m)
{
	return m ? m->nlines : 0;
}

void usermap_free(struct usermap **mp)
{
	struct usermap *m = *mp;
	int i, j;

	if (!m)
		return;
	for (i = 0; i < m->nlines; i++) {
		for (j = 0; j < m->lines[i].nnames; j++)
			free(m->lines[i].names[j].s);
		free(m->lines[i].names);
		free(m->lines[i].unix_name);
	}
	free(m->lines);
	free(m);
	*mp = NULL;
}
