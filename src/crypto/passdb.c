// SPDX-License-Identifier: MIT
/* Password database: a 0600 text file of "USER:NTHASH" lines. */
#include "crypto/passdb.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "crypto/auth.h"
#include "crypto/ntlm.h"
#include "util/utf16.h"

#define PASSDB_MAX_FILE (64u << 20)
#define KEY_MAX (4 * (AUTH_NAME_MAX + 1))

struct passdb_entry {
	char *key;  /* upper-cased user name */
	uint8_t hash[16];
};

struct passdb {
	struct passdb_entry *e;
	size_t n;
};

/* Case-folded lookup key of a UTF-8 user name. */
static int fold_key(const char *user, char *out, size_t cap)
{
	uint8_t u16[2 * KEY_MAX];
	int n;

	if (strlen(user) > AUTH_NAME_MAX)
		return -EINVAL;
	n = utf8_to_utf16le(user, u16, sizeof(u16));
	if (n <= 0)
		return -EINVAL;
	utf16le_upper(u16, (size_t)n);
	return utf16le_to_utf8(u16, (size_t)n, out, cap) < 0 ? -EINVAL : 0;
}

static int valid_user(const char *user)
{
	size_t i, n = strlen(user);
	char key[KEY_MAX];

	if (!n || n > AUTH_NAME_MAX || user[0] == '#' || user[0] == ' ' ||
	    user[0] == '\t' || user[n - 1] == ' ' || user[n - 1] == '\t')
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)user[i];

		if (c == ':' || c < 0x20 || c == 0x7f)
			return -EINVAL;
	}
	return fold_key(user, key, sizeof(key));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse one line (no '\n', may be modified): 1 = entry (*user points
 * into line), 0 = blank/comment, -EINVAL = malformed.
 */
static int parse_line(char *line, size_t len, char **user, uint8_t hash[16])
{
	char *p = line, *colon, *h;
	size_t i;

	if (memchr(line, 0, len))
		return -EINVAL;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		len--;
	line[len] = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '#')
		return 0;
	colon = strchr(p, ':');
	if (!colon || colon == p)
		return -EINVAL;
	*colon = 0;
	h = colon + 1;
	if (strlen(h) != 32)
		return -EINVAL;
	for (i = 0; i < 16; i++) {
		int hi = hexval((unsigned char)h[2 * i]);
		int lo = hexval((unsigned char)h[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		hash[i] = (uint8_t)(hi << 4 | lo);
	}
	if (valid_user(p))
		return -EINVAL;
	*user = p;
	return 1;
}

/* Whole file into a NUL-terminated buffer. */
static int read_all(int fd, char **out, size_t *outlen)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (cap - len < 2) {
			if (cap >= PASSDB_MAX_FILE) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			OPENSSL_cleanse(buf, len);
			free(buf);
			return (int)r;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	*out = buf;
	*outlen = len;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct passdb_entry *)a)->key,
		      ((const struct passdb_entry *)b)->key);
}

void passdb_free(struct passdb **dbp)
{
	struct passdb *db = dbp ? *dbp : NULL;
	size_t i;

	if (!db)
		return;
	for (i = 0; i < db->n; i++)
		free(db->e[i].key);
	if (db->e)
		OPENSSL_cleanse(db->e, db->n * sizeof(*db->e));
	free(db->e);
	free(db);
	*dbp = NULL;
}

/* Parse the buffer into db; *bad = line of the first error. */
static int parse_db(char *buf, size_t len, struct passdb *db,
		    unsigned int *bad)
{
	size_t cap = 0, off = 0, i;
	unsigned int lineno = 0;
	char key[KEY_MAX];

	while (off < len) {
		char *line = buf + off, *nl, *user;
		size_t ll;
		uint8_t hash[16];
		int rc;

		nl = memchr(line, '\n', len - off);
		ll = nl ? (size_t)(nl - line) : len - off;
		off += ll + (nl ? 1 : 0);
		lineno++;
		rc = parse_line(line, ll, &user, hash);
		if (rc < 0 || (rc && fold_key(user, key, sizeof(key)))) {
			*bad = lineno;
			return -EINVAL;
		}
		if (!rc)
			continue;
		for (i = 0; i < db->n; i++) {
			if (!strcmp(db->e[i].key, key)) {
				*bad = lineno;
				return -EINVAL;
			}
		}
		if (db->n == cap) {
			struct passdb_entry *ne;

			cap = cap ? cap * 2 : 16;
			ne = realloc(db->e, cap * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			db->e = ne;
		}
		db->e[db->n].key = strdup(key);
		if (!db->e[db->n].key)
			return -ENOMEM;
		memcpy(db->e[db->n].hash, hash, 16);
		db->n++;
		OPENSSL_cleanse(hash, sizeof(hash));
	}
	if (db->n)
		qsort(db->e, db->n, sizeof(*db->e), cmp_entry);
	return 0;
}

int passdb_load_ex(const char *path, struct passdb **out,
		   unsigned int *bad_line)
{
	struct passdb *db;
	unsigned int bad = 0;
	struct stat st;
	size_t len;
	char *buf;
	int fd, rc;

	*out = NULL;
	if (bad_line)
		*bad_line = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto out_close;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO) & ~(S_IXGRP | S_IXOTH)) {
		rc = -EPERM;
		goto out_close;
	}
	rc = read_all(fd, &buf, &len);
	if (rc)
		goto out_close;
	db = calloc(1, sizeof(*db));
	if (!db) {
		rc = -ENOMEM;
		goto out_free_buf;
	}
	rc = parse_db(buf, len, db, &bad);
	if (rc) {
		passdb_free(&db);
		if (bad_line)
			*bad_line = bad;
		goto out_free_buf;
	}
	*out = db;
out_free_buf:
	OPENSSL_cleanse(buf, len);
	free(buf);
out_close:
	close(fd);
	return rc;
}

int passdb_load(const char *path, struct passdb **out)
{
	return passdb_load_ex(path, out, NULL);
}

int passdb_lookup(const struct passdb *db, const char *user,
		  uint8_t nt_hash[16])
{
	struct passdb_entry k, *e;
	char key[KEY_MAX];

	if (!db || !db->n || !user || fold_key(user, key, sizeof(key)))
		return -ENOENT;
	k.key = key;
	e = bsearch(&k, db->e, db->n, sizeof(*db->e), cmp_entry);
	if (!e)
		return -ENOENT;
	memcpy(nt_hash, e->hash, 16);
	return 0;
}

int passdb_lookup_cb(void *db, const char *user, uint8_t nt_hash[16])
{
	return passdb_lookup(db, user, nt_hash);
}

size_t passdb_count(const struct passdb *db)
{
	return db ? db->n : 0;
}

/* Growable output buffer. */
struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->cap - b->len < n + 1) {
		size_t nc = (b->cap ? b->cap : 256);
		char *np;

		while (nc - b->len < n + 1)
			nc *= 2;
		np = realloc(b->p, nc);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void sb_free(struct sbuf *b)
{
	if (b->p)
		OPENSSL_cleanse(b->p, b->cap);
	free(b->p);
}

/* Write data to path through a temporary file in the same directory. */
static int write_atomic(const char *path, const char *data, size_t len)
{
	char *d = strdup(path), *f = strdup(path), *tmp = NULL;
	const char *dir, *base;
	int fd = -1, dfd, rc = 0;
	size_t off = 0;

	if (!d || !f) {
		rc = -ENOMEM;
		goto out_free;
	}
	dir = dirname(d);
	base = basename(f);
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0) {
		tmp = NULL;
		rc = -ENOMEM;
		goto out_free;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto out_free;
	}
	if (fchmod(fd, 0600)) {
		rc = -errno;
		goto out_unlink;
	}
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out_unlink;
		}
		off += (size_t)w;
	}
	if (fsync(fd)) {
		rc = -errno;
		goto out_unlink;
	}
	if (close(fd)) {
		fd = -1;
		rc = -errno;
		goto out_unlink;
	}
	fd = -1;
	if (rename(tmp, path)) {
		rc = -errno;
		goto out_unlink;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	goto out_free;
out_unlink:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out_free:
	free(tmp);
	free(d);
	free(f);
	return rc;
}

/*
 * Rewrite the file with user's line replaced by new_line (NULL: removed).
 * Returns 0, or -ENOENT when removing a user that is not there.
 */
static int rewrite(const char *path, const char *user, const char *new_line)
{
	char key[KEY_MAX], k2[KEY_MAX], *old = NULL;
	struct sbuf out = { 0 };
	size_t len = 0, off = 0;
	bool done = false;
	int fd, rc;

	rc = fold_key(user, key, sizeof(key));
	if (rc)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return -EINVAL;
		}
		rc = read_all(fd, &old, &len);
		close(fd);
		if (rc)
			return rc;
	} else if (errno != ENOENT) {
		return -errno;
	}

	while (off < len) {
		char *line = old + off, *nl, *copy, *u;
		size_t ll;
		uint8_t h[16];
		bool match = false;

		nl = memchr(line, '\n', len - off);
		ll = nl ? (size_t)(nl - line) : len - off;
		off += ll + (nl ? 1 : 0);
		copy = malloc(ll + 1);
		if (!copy) {
			rc = -ENOMEM;
			goto out_free;
		}
		memcpy(copy, line, ll);
		if (parse_line(copy, ll, &u, h) == 1 &&
		    !fold_key(u, k2, sizeof(k2)) && !strcmp(k2, key))
			match = true;
		OPENSSL_cleanse(copy, ll + 1);
		free(copy);
		if (match) {
			/* replace the first match, drop later duplicates */
			if (!done && new_line)
				sb_add(&out, new_line, strlen(new_line));
			done = true;
			continue;
		}
		sb_add(&out, line, ll);
		sb_add(&out, "\n", 1);
	}
	if (!done && !new_line) {
		rc = -ENOENT;
		goto out_free;
	}
	if (!done)
		sb_add(&out, new_line, strlen(new_line));
	rc = out.err;
	if (!rc)
		rc = write_atomic(path, out.p ? out.p : "", out.len);
out_free:
	sb_free(&out);
	if (old)
		OPENSSL_cleanse(old, len);
	free(old);
	return rc;
}

int passdb_set_hash(const char *path, const char *user,
		    const uint8_t nt_hash[16])
{
	char line[AUTH_NAME_MAX + 40];
	int i, n, rc;

	rc = valid_user(user);
	if (rc)
		return rc;
	n = snprintf(line, sizeof(line), "%s:", user);
	for (i = 0; i < 16; i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%02X",
			      nt_hash[i]);
	snprintf(line + n, sizeof(line) - (size_t)n, "\n");
	rc = rewrite(path, user, line);
	OPENSSL_cleanse(line, sizeof(line));
	return rc;
}

int passdb_set(const char *path, const char *user, const char *password)
{
	uint8_t h[16];
	int rc;

	rc = valid_user(user);
	if (rc)
		return rc;
	rc = ntlm_nt_hash(password, h);
	if (!rc)
		rc = passdb_set_hash(path, user, h);
	OPENSSL_cleanse(h, sizeof(h));
	return rc;
}

int passdb_remove(const char *path, const char *user)
{
	return rewrite(path, user, NULL);
}
