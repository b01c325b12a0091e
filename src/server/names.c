// SPDX-License-Identifier: MIT
/*
 * Names as Windows clients expect them: case-insensitive lookup of a path
 * the file system does not have as given ("case sensitive = auto|no"),
 * and 8.3 short names ("mangled names").
 *
 * A lookup costs one lstat when the name exists as given. Only a miss
 * walks the path: each component that is missing is matched ignoring
 * case against its directory's entries. A scanned directory is kept in a
 * small per-thread cache (NC_SLOTS directories, at most NC_MAX_NAMES
 * names and NC_MAX_BLOB bytes each), valid while the directory's mtime
 * and ctime stay as they were. A directory changed within NC_RACY_NS of
 * its scan may have changed unseen (coarse file system clocks): a miss
 * there scans again, a hit is checked with a stat. Every directory is opened beneath the share root as
 * the request's identity, so the walk sees what the user may list and
 * never leaves the share.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "util/utf16.h"

#define NC_SLOTS 4
#define NC_MAX_NAMES 65536
#define NC_MAX_BLOB (4u << 20)
#define NC_RACY_NS 50000000ll

/* ---- case folding ---- */

/* An invalid byte: itself, outside Unicode, never folded. */
#define RAW_BYTE(b) (0x110000u | (b))

/* The next code point of s, upper-cased. */
static uint32_t fold_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t c = p[0];
	int n, i;

	if (c < 0x80) {
		*s = p + 1;
		return c >= 'a' && c <= 'z' ? c - 32 : c;
	}
	if (c >= 0xc2 && c < 0xe0)
		n = 1, c &= 0x1f;
	else if (c >= 0xe0 && c < 0xf0)
		n = 2, c &= 0x0f;
	else if (c >= 0xf0 && c < 0xf5)
		n = 3, c &= 0x07;
	else
		n = 0;
	if (!n) {
		*s = p + 1;
		return RAW_BYTE(p[0]);
	}
	for (i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			*s = p + 1;
			return RAW_BYTE(p[0]);
		}
		c = c << 6 | (p[i] & 0x3f);
	}
	*s = p + 1 + n;
	return c < 0x10000 ? utf16_toupper((uint16_t)c) : c;
}

static uint32_t fold_hash(const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ fold_next(&s)) * 16777619u;
	return h;
}

bool srv_name_fold_eq(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

	while (*x && *y)
		if (fold_next(&x) != fold_next(&y))
			return false;
	return !*x && !*y;
}

/* ---- 8.3 short names ---- */

static bool char_8_3(unsigned char c)
{
	return c > 0x20 && c < 0x7f && !strchr("*\\/?<>|\":+,[];=.", c);
}

/*
 * A name that is its own 8.3 name: at most 8 characters, a dot and 1 to
 * 3 more; printable ASCII but " *+,/:;<=>?[\]|".
 */
bool srv_name_is_8_3(const char *name)
{
	const char *dot = strchr(name, '.');
	size_t len = strlen(name), i;

	if (!len || len > 12 || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	if (!dot ? len > 8 : dot == name || dot - name > 8 ||
			      len - (size_t)(dot - name) - 1 > 3 || !dot[1] || strchr(dot + 1, '.'))
		return false;
	for (i = 0; i < len; i++)
		if (name + i != dot && !char_8_3((unsigned char)name[i]))
			return false;
	return true;
}

static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/*
 * name's 8.3 name in out: the name itself when it is one (0), else (1)
 * its first valid character upper-cased ('_' if none), six base-36
 * characters of a hash of the whole name ignoring case with '~' before
 * the last ("T5K2QD~M"), and the upper-cased extension when it is 1 to
 * 3 valid characters. Deterministic: the same name, the same short name,
 * on every server start.
 */
int srv_name_short(const char *name, char out[13])
{
	const char *dot, *p;
	uint32_t h;
	size_t i, n = 0;

	if (srv_name_is_8_3(name)) {
		snprintf(out, 13, "%s", name);
		return 0;
	}
	for (p = name; *p && !char_8_3((unsigned char)*p); p++)
		;
	out[n++] = *p ? (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p) : '_';
	h = fold_hash(name);
	for (i = 0; i < 6; i++, h /= 36) {
		if (i == 5)
			out[n++] = '~';
		out[n++] = b36[h % 36];
	}
	dot = strrchr(name, '.');
	if (dot && dot != name && dot[1] && strlen(dot + 1) <= 3) {
		for (p = dot + 1; *p && char_8_3((unsigned char)*p); p++)
			;
		if (!*p) {
			out[n++] = '.';
			for (p = dot + 1; *p; p++)
				out[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		}
	}
	out[n] = 0;
	return 1;
}

/* What a short name of ours looks like: 7th character '~'. */
static bool looks_short(const char *name)
{
	size_t len = strlen(name);

	return len >= 8 && len <= 12 && name[6] == '~' && (len == 8 || name[8] == '.');
}

/* ---- the per-thread directory cache ---- */

struct nc_dir {
	dev_t dev;
	ino_t ino;
	struct timespec mtime, ctime;
	int64_t scanned;		/* CLOCK_REALTIME ns at the scan */
	uint64_t used;			/* LRU tick */
	uint32_t n, mask;
	uint32_t *tab;			/* open addressing: index + 1, 0 empty */
	uint32_t *off;			/* each name's offset in blob */
	char *blob;
	size_t blen;
};

struct nc_cache {
	struct nc_dir dirs[NC_SLOTS];
	uint64_t tick;
};

static pthread_key_t nc_key;
static pthread_once_t nc_once = PTHREAD_ONCE_INIT;
static bool nc_key_ok;

static void nc_clear(struct nc_dir *d)
{
	free(d->tab);
	free(d->off);
	free(d->blob);
	memset(d, 0, sizeof(*d));
}

/* A thread's cache goes with it. */
static void nc_free(void *arg)
{
	struct nc_cache *c = arg;
	int i;

	for (i = 0; i < NC_SLOTS; i++)
		nc_clear(&c->dirs[i]);
	free(c);
}

static void nc_key_init(void)
{
	nc_key_ok = !pthread_key_create(&nc_key, nc_free);
}

/* The calling thread's cache, made on first use; NULL: none (scan only). */
static struct nc_cache *nc_get(void)
{
	struct nc_cache *c;

	pthread_once(&nc_once, nc_key_init);
	if (!nc_key_ok)
		return NULL;
	c = pthread_getspecific(nc_key);
	if (!c && (c = calloc(1, sizeof(*c))) && pthread_setspecific(nc_key, c)) {
		free(c);
		c = NULL;
	}
	return c;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000ll + t->tv_nsec;
}

static bool nc_fresh(const struct nc_dir *d, const struct stat *st)
{
	return d->tab && d->dev == st->st_dev && d->ino == st->st_ino &&
	       ts_ns(&d->mtime) == ts_ns(&st->st_mtim) && ts_ns(&d->ctime) == ts_ns(&st->st_ctim);
}

static bool nc_racy(const struct nc_dir *d)
{
	return d->scanned - ts_ns(&d->mtime) < NC_RACY_NS ||
	       d->scanned - ts_ns(&d->ctime) < NC_RACY_NS;
}

static const char *nc_find(const struct nc_dir *d, const char *want)
{
	uint32_t i = fold_hash(want) & d->mask;
	const char *name;

	for (; d->tab[i]; i = (i + 1) & d->mask) {
		name = d->blob + d->off[d->tab[i] - 1];
		if (srv_name_fold_eq(name, want))
			return name;
	}
	return NULL;
}

static const char *nc_find_short(const struct nc_dir *d, const char *want)
{
	char sn[13];
	uint32_t i;

	for (i = 0; i < d->n; i++) {
		const char *name = d->blob + d->off[i];

		if (srv_name_short(name, sn) && srv_name_fold_eq(sn, want))
			return name;
	}
	return NULL;
}

/* Read every name of the open directory fd into d; -E2BIG: too big to keep. */
static int nc_fill(struct nc_dir *d, int fd, const struct stat *st)
{
	struct store_dir *sd;
	const char *name;
	struct timespec now;
	size_t cap = 0, ncap = 0, len;
	uint32_t tsize, i, j;
	int ret;

	nc_clear(d);
	ret = store_dir_open(fd, &sd);
	if (ret)
		return ret;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((ret = store_dir_next(sd, &name)) == 1) {
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		len = strlen(name) + 1;
		if (d->n >= NC_MAX_NAMES || d->blen + len > NC_MAX_BLOB) {
			ret = -E2BIG;
			break;
		}
		if (d->blen + len > cap) {
			char *b = realloc(d->blob, cap = (cap ? cap * 2 : 4096) + len);

			if (!b) {
				ret = -ENOMEM;
				break;
			}
			d->blob = b;
		}
		if (d->n == ncap) {
			uint32_t *o = realloc(d->off, (ncap = ncap ? ncap * 2 : 64) * sizeof(*o));

			if (!o) {
				ret = -ENOMEM;
				break;
			}
			d->off = o;
		}
		memcpy(d->blob + d->blen, name, len);
		d->off[d->n++] = (uint32_t)d->blen;
		d->blen += len;
	}
	store_dir_close(&sd);
	for (tsize = 16; tsize < 2 * d->n; tsize *= 2)
		;
	if (!ret)
		d->tab = calloc(tsize, sizeof(*d->tab));
	if (ret || !d->tab) {
		nc_clear(d);
		return ret ? ret : -ENOMEM;
	}
	d->mask = tsize - 1;
	for (i = 0; i < d->n; i++) {
		for (j = fold_hash(d->blob + d->off[i]) & d->mask; d->tab[j]; j = (j + 1) & d->mask)
			;
		d->tab[j] = i + 1;
	}
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->mtime = st->st_mtim;
	d->ctime = st->st_ctim;
	d->scanned = ts_ns(&now);
	return 0;
}

/* The cache's slot for this directory, or the least recently used one. */
static struct nc_dir *nc_slot(struct nc_cache *c, const struct stat *st)
{
	struct nc_dir *lru = &c->dirs[0];
	int i;

	for (i = 0; i < NC_SLOTS; i++) {
		if (c->dirs[i].tab && c->dirs[i].dev == st->st_dev && c->dirs[i].ino == st->st_ino)
			return &c->dirs[i];
		if (c->dirs[i].used < lru->used)
			lru = &c->dirs[i];
	}
	return lru;
}

/* Without the cache: the first entry of fd that matches, read as we go. */
static int scan_match(int fd, const char *want, bool shorts, char *real, size_t cap)
{
	struct store_dir *sd;
	const char *name;
	char sn[13];
	int ret;

	ret = store_dir_open(fd, &sd);
	if (ret)
		return ret;
	while ((ret = store_dir_next(sd, &name)) == 1) {
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (srv_name_fold_eq(name, want) ||
		    (shorts && srv_name_short(name, sn) && srv_name_fold_eq(sn, want))) {
			ret = snprintf(real, cap, "%s", name) < (int)cap ? 1 : -ENAMETOOLONG;
			break;
		}
	}
	store_dir_close(&sd);
	return ret;
}

/*
 * The entry of directory dir (share-relative) that is want ignoring case,
 * or whose short name is want, copied into real: 1 found, 0 none, -errno.
 */
static int dir_match(const struct store_root *root, const char *dir, const char *want,
		     bool shorts, char *real, size_t cap)
{
	struct nc_cache *c = nc_get();
	const char *hit = NULL;
	struct nc_dir *d;
	struct stat st, lst;
	int fd, ret;

	ret = store_open(root, dir, O_RDONLY | O_DIRECTORY, 0, &fd);
	if (ret)
		return ret;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (!c) {
		ret = scan_match(fd, want, shorts, real, cap);
		goto out_close;
	}
	d = nc_slot(c, &st);
	if (nc_fresh(d, &st)) {
		hit = nc_find(d, want);
		if (!hit && shorts)
			hit = nc_find_short(d, want);
		/* a racy entry's hit is checked: it may have gone unseen */
		if (!nc_racy(d) || (hit && !fstatat(fd, hit, &lst, AT_SYMLINK_NOFOLLOW)))
			goto found;
	}
	ret = nc_fill(d, fd, &st);
	if (ret == -E2BIG) {
		/* too big to keep: matched as it is read */
		ret = scan_match(fd, want, shorts, real, cap);
		goto out_close;
	}
	if (ret)
		goto out_close;
	hit = nc_find(d, want);
	if (!hit && shorts)
		hit = nc_find_short(d, want);
found:
	d->used = ++c->tick;
	ret = 0;
	if (hit)
		ret = snprintf(real, cap, "%s", hit) < (int)cap ? 1 : -ENAMETOOLONG;
out_close:
	close(fd);
	return ret;
}

/* ---- path lookup ---- */

int srv_name_match(const struct srv_share *sh, const char *dir, const char *want,
		   char *real, size_t cap)
{
	if (sh->dos.case_sensitive == SRV_CASE_YES)
		return 0;
	return dir_match(&sh->root, dir, want, sh->dos.mangled_names && looks_short(want),
			 real, cap);
}

int srv_name_resolve(const struct srv_share *sh, char *path, size_t cap)
{
	char out[4096], cand[4096], want[256], real[256];
	const char *p = path;
	size_t olen = 0, n;
	struct stat st;
	int ret;

	if (!*path || sh->dos.case_sensitive == SRV_CASE_YES)
		return 0;
	if (store_lstat(&sh->root, path, &st) != -ENOENT)
		return 0;		/* there as given, or not a matter of case */
	out[0] = 0;
	for (;;) {
		n = strcspn(p, "/");
		if (n >= sizeof(want))
			return 0;	/* the open will refuse it */
		memcpy(want, p, n);
		want[n] = 0;
		if (snprintf(cand, sizeof(cand), "%s%s%s", out, olen ? "/" : "", want) >=
		    (int)sizeof(cand))
			return -ENAMETOOLONG;
		ret = store_lstat(&sh->root, cand, &st);
		if (ret == -ENOENT) {
			ret = dir_match(&sh->root, out, want,
					sh->dos.mangled_names && looks_short(want), real,
					sizeof(real));
			if (ret <= 0)
				break;	/* in no case: it and the rest as given */
			if (snprintf(cand, sizeof(cand), "%s%s%s", out, olen ? "/" : "", real) >=
			    (int)sizeof(cand))
				return -ENAMETOOLONG;
		} else if (ret) {
			break;
		}
		strcpy(out, cand);
		olen = strlen(out);
		p += n;
		if (!*p)
			break;
		p++;
	}
	if (*p && snprintf(cand, sizeof(cand), "%s%s%s", out, olen ? "/" : "", p) >=
		  (int)sizeof(cand))
		return -ENAMETOOLONG;
	if (!*p)
		strcpy(cand, out);
	if (strlen(cand) >= cap)
		return -ENAMETOOLONG;
	strcpy(path, cand);
	return 0;
}
