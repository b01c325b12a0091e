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
	int cap;
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
	if (m->nlines == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;

		v = realloc(m->lines, sizeof(*v) * (size_t)cap);
		if (!v)
			return -ENOMEM;
		m->lines = v;
		m->cap = cap;
	}
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

/* A name to look up, and the first line that uses it. */
struct lookup {
	const char *name;
	int lineno;
	struct map_name *group;		/* a group name, else a Unix user */
};

static int lookup_cmp(const void *a, const void *b)
{
	const struct lookup *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->lineno - y->lineno;
}

/*
 * Every Unix name and group must exist, now rather than at a logon. Each
 * distinct name is asked of the system once (a large map repeats a few
 * accounts), and the first line with one that does not exist is named.
 */
static int check_names(struct usermap *m, const char *path, char *err, size_t errlen)
{
	struct lookup *u = NULL, *g = NULL;
	int nu = 0, ng = 0, i, j, k, bad_line = 0, ret = 0;
	const char *bad = NULL, *what = NULL;

	u = calloc((size_t)m->nlines + 1, sizeof(*u));
	for (i = 0; i < m->nlines; i++)
		ng += m->lines[i].nnames;
	g = calloc((size_t)ng + 1, sizeof(*g));
	if (!u || !g) {
		ret = -ENOMEM;
		goto out;
	}
	ng = 0;
	for (i = 0; i < m->nlines; i++) {
		u[nu++] = (struct lookup){ m->lines[i].unix_name, m->lines[i].lineno, NULL };
		for (j = 0; j < m->lines[i].nnames; j++)
			if (m->lines[i].names[j].kind == MAP_GROUP)
				g[ng++] = (struct lookup){ m->lines[i].names[j].s,
							   m->lines[i].lineno,
							   &m->lines[i].names[j] };
	}
	qsort(u, (size_t)nu, sizeof(*u), lookup_cmp);
	qsort(g, (size_t)ng, sizeof(*g), lookup_cmp);
	for (i = 0; i < nu; i = j) {
		struct srv_ident *id = NULL;

		for (j = i + 1; j < nu && !strcmp(u[j].name, u[i].name); j++)
			;
		ret = srv_ident_lookup(u[i].name, &id);
		srv_ident_put(&id);
		if (ret == -ENOENT) {
			if (!bad || u[i].lineno < bad_line) {
				bad = u[i].name;
				bad_line = u[i].lineno;
				what = "no Unix user '%s'%s";
			}
			ret = 0;
		} else if (ret) {
			goto out;
		}
	}
	for (i = 0; i < ng; i = j) {
		struct group gr, *res = NULL;
		char buf[16384];

		for (j = i + 1; j < ng && !strcmp(g[j].name, g[i].name); j++)
			;
		if (getgrnam_r(g[i].name, &gr, buf, sizeof(buf), &res) || !res) {
			if (!bad || g[i].lineno < bad_line) {
				bad = g[i].name;
				bad_line = g[i].lineno;
				what = "no Unix group '%s'%s";
			}
			continue;
		}
		for (k = i; k < j; k++)
			g[k].group->gid = res->gr_gid;
	}
	if (bad) {
		set_err(err, errlen, path, bad_line, what, bad, "");
		ret = -EINVAL;
	}
out:
	free(g);
	free(u);
	return ret;
}

/*
 * Names that map to each other in a loop (explicit names only): a cycle
 * in the graph with an edge smbname -> unixname per name of each line.
 * Names become node numbers by sorting; one depth-first walk with three
 * colours finds a cycle in time linear in the edges (after the sort),
 * however long the map, with its own stack (no recursion).
 */
struct edge {
	int from, to;			/* node numbers */
	int lineno;
};

enum { WHITE, GREY, BLACK };

struct graph {
	const char **names;		/* sorted, unique (case-insensitive) */
	int nnodes;
	struct edge *e;			/* by from, in file order within a node */
	int ne;
	int *first;			/* e[first[n] .. first[n + 1]) leave n */
};

static int name_cmp(const void *a, const void *b)
{
	return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

static int node_of(const struct graph *g, const char *name)
{
	const char **p = bsearch(&name, g->names, (size_t)g->nnodes, sizeof(*g->names), name_cmp);

	return (int)(p - g->names);
}

/* the cycle closed by edge e: from node e->to, round to e->to again */
static void say_loop(const struct graph *g, const int *via, const struct edge *e,
		     const char *path, char *err, size_t errlen)
{
	int chain[64], n = 0, k, off;
	const struct edge *x = e;
	char what[512];

	/* walk back from the edge that closed it, along the edges taken */
	while (n < 64) {
		chain[n++] = (int)(x - g->e);
		if (x->from == e->to)
			break;
		x = &g->e[via[x->from]];
	}
	off = snprintf(what, sizeof(what), "%s", g->names[e->to]);
	for (k = n - 1; k >= 0 && off > 0 && (size_t)off < sizeof(what); k--)
		off += snprintf(what + off, sizeof(what) - (size_t)off, " -> %s (line %d)",
				g->names[g->e[chain[k]].to], g->e[chain[k]].lineno);
	set_err(err, errlen, path, g->e[chain[n - 1]].lineno,
		"names map to each other in a loop: %s%s", what, n == 64 ? " ..." : "");
}

/* One walk from start; -ELOOP (err set) when it finds a cycle. */
static int walk(const struct graph *g, int start, char *colour, int *via, int *stack,
		int *next, const char *path, char *err, size_t errlen)
{
	int sp = 0;

	stack[sp++] = start;
	colour[start] = GREY;
	next[start] = g->first[start];
	while (sp) {
		int u = stack[sp - 1];

		if (next[u] == g->first[u + 1]) {
			colour[u] = BLACK;
			sp--;
			continue;
		}
		{
			const struct edge *e = &g->e[next[u]++];
			int v = e->to;

			if (colour[v] == GREY) {
				say_loop(g, via, e, path, err, errlen);
				return -ELOOP;
			}
			if (colour[v] == WHITE) {
				colour[v] = GREY;
				via[v] = (int)(e - g->e);
				next[v] = g->first[v];
				stack[sp++] = v;
			}
		}
	}
	return 0;
}

static int check_loops(const struct usermap *m, const char *path, char *err, size_t errlen)
{
	struct graph g = { 0 };
	struct edge *raw = NULL;
	const char **from = NULL, **to = NULL;
	int *via = NULL, *stack = NULL, *next = NULL, *fill = NULL;
	char *colour = NULL;
	int i, j, n = 0, ret = 0;

	for (i = 0; i < m->nlines; i++)
		n += m->lines[i].nnames;
	if (!n)
		return 0;
	raw = calloc((size_t)n, sizeof(*raw));
	from = calloc((size_t)n, sizeof(*from));
	to = calloc((size_t)n, sizeof(*to));
	g.names = calloc(2 * (size_t)n, sizeof(*g.names));
	if (!raw || !from || !to || !g.names) {
		ret = -ENOMEM;
		goto out;
	}
	/* the edges in file order, and every name they use */
	for (i = 0; i < m->nlines; i++) {
		for (j = 0; j < m->lines[i].nnames; j++) {
			const struct map_name *nm = &m->lines[i].names[j];

			if (nm->kind != MAP_NAME || !strcasecmp(nm->s, m->lines[i].unix_name))
				continue;
			from[g.ne] = nm->s;
			to[g.ne] = m->lines[i].unix_name;
			raw[g.ne].lineno = m->lines[i].lineno;
			g.names[g.nnodes++] = nm->s;
			g.names[g.nnodes++] = m->lines[i].unix_name;
			g.ne++;
		}
	}
	if (!g.ne)
		goto out;
	qsort(g.names, (size_t)g.nnodes, sizeof(*g.names), name_cmp);
	for (i = 1, j = 1; i < g.nnodes; i++)
		if (strcasecmp(g.names[i], g.names[j - 1]))
			g.names[j++] = g.names[i];
	g.nnodes = j;
	g.e = calloc((size_t)g.ne, sizeof(*g.e));
	g.first = calloc((size_t)g.nnodes + 1, sizeof(*g.first));
	fill = calloc((size_t)g.nnodes + 1, sizeof(*fill));
	colour = calloc((size_t)g.nnodes, 1);
	via = calloc((size_t)g.nnodes, sizeof(*via));
	next = calloc((size_t)g.nnodes, sizeof(*next));
	stack = calloc((size_t)g.nnodes, sizeof(*stack));
	if (!g.e || !g.first || !fill || !colour || !via || !next || !stack) {
		ret = -ENOMEM;
		goto out;
	}
	/* group the edges by their from node, keeping file order */
	for (i = 0; i < g.ne; i++) {
		raw[i].from = node_of(&g, from[i]);
		raw[i].to = node_of(&g, to[i]);
		g.first[raw[i].from + 1]++;
	}
	for (i = 0; i < g.nnodes; i++)
		g.first[i + 1] += g.first[i];
	memcpy(fill, g.first, sizeof(*fill) * ((size_t)g.nnodes + 1));
	for (i = 0; i < g.ne; i++)
		g.e[fill[raw[i].from]++] = raw[i];
	/* walks start where the file's edges start, so the report reads in order */
	for (i = 0; i < g.ne && !ret; i++)
		if (colour[raw[i].from] == WHITE)
			ret = walk(&g, raw[i].from, colour, via, stack, next, path, err, errlen);
out:
	free(stack);
	free(next);
	free(via);
	free(colour);
	free(fill);
	free(g.first);
	free(g.e);
	free(g.names);
	free(to);
	free(from);
	free(raw);
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
