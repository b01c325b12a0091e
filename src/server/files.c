// SPDX-License-Identifier: MIT
/*
 * The file table: one srv_file per (dev, ino) of a share, shared by the
 * opens of that inode on every worker. The shard's mutex covers the
 * table and the reference counts; the file's own mutex covers its state:
 * the opens on it (share modes, [MS-FSA] 2.1.5.1.2), delete-pending,
 * byte-range locks (brl.c), oplocks and leases (oplock.c) and the
 * requests waiting on any of these.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

static struct srv_file_shard *shard_of(struct srv_share *sh, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9E3779B97F4A7C15ull;

	return &sh->shards[(h >> 58) % SRV_FILE_SHARDS];
}

/* Base files and each stream of them are files of their own. */
static bool same_stream(const struct srv_file *f, const char *xname)
{
	return !f->stream ? !xname : xname && !strcmp(f->stream, xname);
}

static struct srv_file *file_new(struct srv *srv, struct srv_share *sh, dev_t dev,
				 ino_t ino, const char *path, bool is_dir, const char *xname)
{
	struct srv_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->path = strdup(path);
	f->stream = xname ? strdup(xname) : NULL;
	if (!f->path || (xname && !f->stream)) {
		free(f->path);
		free(f->stream);
		free(f);
		return NULL;
	}
	f->srv = srv;
	f->share = sh;
	f->dev = dev;
	f->ino = ino;
	f->is_dir = is_dir;
	f->refs = 1;
	f->direct_fd[0] = f->direct_fd[1] = -1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->dax_lock, NULL);
	list_init(&f->opens);
	list_init(&f->leases);
	list_init(&f->waiters);
	list_init(&f->locks);
	list_init(&f->brk_link);
	return f;
}

static struct srv_file *file_get(struct srv *srv, struct srv_share *sh, dev_t dev,
				  ino_t ino, const char *path, bool is_dir, const char *xname)
{
	struct srv_file_shard *sd = shard_of(sh, dev, ino);
	struct list_head *pos;
	struct srv_file *f;

	pthread_mutex_lock(&sd->lock);
	list_for_each(pos, &sd->files) {
		f = list_entry(pos, struct srv_file, link);
		if (f->dev == dev && f->ino == ino && same_stream(f, xname)) {
			f->refs++;
			goto out_unlock;
		}
	}
	f = file_new(srv, sh, dev, ino, path, is_dir, xname);
	if (f)
		list_add_tail(&f->link, &sd->files);
out_unlock:
	pthread_mutex_unlock(&sd->lock);
	return f;
}

struct srv_file *srv_file_get(struct srv *srv, struct srv_share *sh, dev_t dev,
			      ino_t ino, const char *path, bool is_dir)
{
	return file_get(srv, sh, dev, ino, path, is_dir, NULL);
}

struct srv_file *srv_file_get_stream(struct srv *srv, struct srv_share *sh, dev_t dev,
				     ino_t ino, const char *path, bool base_dir, const char *xname)
{
	struct srv_file_shard *sd = shard_of(sh, dev, ino);
	struct srv_file *f, *base = NULL, *x;
	struct list_head *pos;

	pthread_mutex_lock(&sd->lock);
	f = NULL;
	list_for_each(pos, &sd->files) {
		x = list_entry(pos, struct srv_file, link);
		if (x->dev != dev || x->ino != ino)
			continue;
		if (!x->stream)
			base = x;
		else if (!strcmp(x->stream, xname))
			f = x;
	}
	if (f) {
		f->refs++;
		goto out_unlock;
	}
	/* a stream holds its base file: delete-pending, the unlink wait for it */
	if (base) {
		base->refs++;
	} else {
		base = file_new(srv, sh, dev, ino, path, base_dir, NULL);
		if (!base)
			goto out_unlock;
		list_add_tail(&base->link, &sd->files);
	}
	f = file_new(srv, sh, dev, ino, path, false, xname);
	if (f) {
		f->base = base;
		list_add_tail(&f->link, &sd->files);
	} else if (!--base->refs) {
		list_del(&base->link);
		free(base->path);
		pthread_mutex_destroy(&base->dax_lock);
		pthread_mutex_destroy(&base->lock);
		free(base);
	}
out_unlock:
	pthread_mutex_unlock(&sd->lock);
	return f;
}

bool srv_file_streams_refuse_delete(struct srv_file *base)
{
	struct srv_file_shard *sd = shard_of(base->share, base->dev, base->ino);
	struct srv_file *v[64];
	struct list_head *pos;
	bool refuse = false;
	int i, n = 0;

	/* references first: the opens are read under each file's own lock */
	pthread_mutex_lock(&sd->lock);
	list_for_each(pos, &sd->files) {
		struct srv_file *x = list_entry(pos, struct srv_file, link);

		if (x->base == base && n < (int)(sizeof(v) / sizeof(v[0]))) {
			x->refs++;
			v[n++] = x;
		}
	}
	pthread_mutex_unlock(&sd->lock);
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&v[i]->lock);
		list_for_each(pos, &v[i]->opens) {
			struct srv_open *e = list_entry(pos, struct srv_open, file_link);

			if ((!e->disconnected || e->persistent_handle) &&
			    !(e->share_access & FILE_SHARE_DELETE))
				refuse = true;
		}
		pthread_mutex_unlock(&v[i]->lock);
		srv_file_put(v[i]);
	}
	return refuse;
}

struct srv_file *srv_file_find(struct srv_share *sh, dev_t dev, ino_t ino)
{
	struct srv_file_shard *sd = shard_of(sh, dev, ino);
	struct list_head *pos;
	struct srv_file *f = NULL;

	pthread_mutex_lock(&sd->lock);
	list_for_each(pos, &sd->files) {
		struct srv_file *x = list_entry(pos, struct srv_file, link);

		if (x->dev == dev && x->ino == ino && !x->stream) {
			x->refs++;
			f = x;
			break;
		}
	}
	pthread_mutex_unlock(&sd->lock);
	return f;
}

/*
 * A rename into a directory that the renaming client holds open with
 * DELETE access is a sharing violation (as smbd's
 * parent_dirname_compatible_open, which sees its own client's opens
 * only: another client's open of the directory does not stop it, as
 * smbtorture's notify-inotify.inotify-rename expects).
 */
int srv_file_rename_target_ok(struct srv_share *sh, const struct srv_open *o, const char *to)
{
	char parent[4096];
	const char *slash = strrchr(to, '/');
	struct list_head *pos;
	struct srv_file *f;
	struct stat st;
	int ret = 0;

	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - to) : 0, to);
	if (store_stat(&sh->root, parent, &st))
		return 0;	/* the rename itself says what is wrong */
	f = srv_file_find(sh, st.st_dev, st.st_ino);
	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->opens) {
		struct srv_open *e = list_entry(pos, struct srv_open, file_link);

		if (!e->disconnected && e->access & DELETE_ACCESS &&
		    !memcmp(e->client_guid, o->client_guid, sizeof(o->client_guid))) {
			ret = -E_SMB_SHARING_VIOLATION;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	srv_file_put(f);
	return ret;
}

/*
 * Is any file beneath directory dir open? A directory with open files
 * below it may not be renamed (ACCESS_DENIED, as Windows and Samba).
 */
bool srv_share_open_below(struct srv_share *sh, const char *dir)
{
	size_t n = strlen(dir);
	struct srv_file **v = NULL;
	int i, k, nv = 0, cap = 0;
	bool found = false;

	for (i = 0; i < SRV_FILE_SHARDS && !found; i++) {
		struct srv_file_shard *sd = &sh->shards[i];
		struct list_head *pos;

		/* references first: a file's path is read under its own lock */
		pthread_mutex_lock(&sd->lock);
		list_for_each(pos, &sd->files) {
			if (nv == cap) {
				struct srv_file **nw;

				cap = cap ? cap * 2 : 16;
				nw = realloc(v, sizeof(*v) * (size_t)cap);
				if (!nw) {
					cap = nv;
					break;
				}
				v = nw;
			}
			v[nv] = list_entry(pos, struct srv_file, link);
			v[nv++]->refs++;
		}
		pthread_mutex_unlock(&sd->lock);
		for (k = 0; k < nv; k++) {
			struct srv_file *f = v[k];

			pthread_mutex_lock(&f->lock);
			if (!found && !strncmp(f->path, dir, n) && f->path[n] == '/' &&
			    !list_empty(&f->opens))
				found = true;
			pthread_mutex_unlock(&f->lock);
			srv_file_put(f);
		}
		nv = 0;
	}
	free(v);
	return found;
}

void srv_file_ref(struct srv_file *f)
{
	struct srv_file_shard *sd = shard_of(f->share, f->dev, f->ino);

	pthread_mutex_lock(&sd->lock);
	f->refs++;
	pthread_mutex_unlock(&sd->lock);
}

struct unlink_call {
	struct srv_share *sh;
	struct srv_file *f;
};

static int unlink_call(void *arg)
{
	struct unlink_call *uc = arg;

	if (uc->f->stream)
		return srv_stream_remove(uc->sh, uc->f->path, uc->f->stream);
	return store_unlink(&uc->sh->root, uc->f->path, uc->f->is_dir);
}

void srv_file_put(struct srv_file *f)
{
	struct srv_file *base;
	struct srv_share *sh;
	struct srv_file_shard *sd;
	bool unlinked = false;
	int ret;

	if (!f)
		return;
	sh = f->share;
	sd = shard_of(sh, f->dev, f->ino);
	pthread_mutex_lock(&sd->lock);
	if (--f->refs) {
		pthread_mutex_unlock(&sd->lock);
		return;
	}
	list_del(&f->link);
	/* no open is left: nobody else reaches the file's state now */
	if (f->delete_pending && !f->unlinked) {
		struct unlink_call uc = { sh, f };

		/* as the user who asked for it; the kernel may still refuse */
		ret = srv_ident_run(f->delete_ident, unlink_call, &uc);
		if (ret)
			pr_warn("[%s] delete on close of %s as %s: %s", sh->name,
				f->path, f->delete_ident ? f->delete_ident->name : "rdaxd",
				strerror(-ret));
		unlinked = !ret;
	}
	pthread_mutex_unlock(&sd->lock);
	if (unlinked && !f->stream)
		srv_dir_lease_break(f->srv, sh, f->path, NULL);
	srv_file_detach_dax(sh, f);
	srv_ident_put(&f->delete_ident);
	pthread_mutex_destroy(&f->dax_lock);
	pthread_mutex_destroy(&f->lock);
	free(f->path);
	free(f->stream);
	base = f->base;
	free(f);
	srv_file_put(base);
}

/* The file's lock is held: its stream's readers hold it too. */
int srv_file_stream_renamed(struct srv_file *f, const char *xname)
{
	struct srv_file_shard *sd = shard_of(f->share, f->dev, f->ino);
	char *nx = strdup(xname), *old;

	if (!nx)
		return -ENOMEM;
	pthread_mutex_lock(&sd->lock);
	old = f->stream;
	f->stream = nx;
	pthread_mutex_unlock(&sd->lock);
	free(old);
	return 0;
}

bool srv_file_delete_pending(struct srv_file *f)
{
	bool v;

	pthread_mutex_lock(&f->lock);
	v = f->delete_pending;
	pthread_mutex_unlock(&f->lock);
	return v;
}

int srv_file_set_delete(struct srv_file *f, bool del, struct srv_ident *id)
{
	struct srv_ident *old;

	pthread_mutex_lock(&f->lock);
	f->delete_pending = del;
	old = f->delete_ident;
	f->delete_ident = del ? srv_ident_get(id) : NULL;
	pthread_mutex_unlock(&f->lock);
	srv_ident_put(&old);
	return 0;
}

/*
 * POSIX delete: the name goes now, as the user who asked; the opens left
 * keep their descriptors, and the path is never used again.
 */
int srv_file_unlink_now_locked(struct srv_file *f, struct srv_ident *id)
{
	struct unlink_call uc = { f->share, f };
	int ret;

	if (f->unlinked)
		return 0;
	ret = srv_ident_run(id, unlink_call, &uc);
	if (ret)
		return ret;
	f->unlinked = true;
	f->delete_pending = false;
	return 0;
}

/* A stream of f is open, or still held: its delete waits for them. */
bool srv_file_has_streams_locked(struct srv_file *f)
{
	struct srv_file_shard *sd = shard_of(f->share, f->dev, f->ino);
	struct list_head *pos;
	bool any = false;

	pthread_mutex_lock(&sd->lock);
	list_for_each(pos, &sd->files) {
		if (list_entry(pos, struct srv_file, link)->base == f) {
			any = true;
			break;
		}
	}
	pthread_mutex_unlock(&sd->lock);
	return any;
}

/*
 * Nameless, with no open left: out of the table now, not at its last
 * reference (the breaking list's, a waiter's), so a new file that gets
 * its inode number never meets its state.
 */
void srv_file_unhash_locked(struct srv_file *f)
{
	struct srv_file_shard *sd = shard_of(f->share, f->dev, f->ino);

	pthread_mutex_lock(&sd->lock);
	list_del(&f->link);
	pthread_mutex_unlock(&sd->lock);
}

/* The file st at name was renamed over: its opens keep it, nameless. */
void srv_file_replaced(struct srv_share *sh, const struct stat *st, const char *name)
{
	struct srv_file *f = srv_file_find(sh, st->st_dev, st->st_ino);

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	if (!strcmp(f->path, name))
		f->unlinked = true;
	pthread_mutex_unlock(&f->lock);
	srv_file_put(f);
}

/* Does anyone hold the file st open (a rename over it replaces it)? */
bool srv_file_open_by_anyone(struct srv_share *sh, const struct stat *st)
{
	struct srv_file *f = srv_file_find(sh, st->st_dev, st->st_ino);
	struct list_head *pos;
	bool found = false;

	if (!f)
		return false;
	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->opens) {
		struct srv_open *e = list_entry(pos, struct srv_open, file_link);

		if (!e->disconnected) {
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	srv_file_put(f);
	return found;
}

int srv_file_rename(struct srv_file *f, const char *to, bool replace)
{
	char *np = strdup(to);
	int ret;

	if (!np)
		return -ENOMEM;
	pthread_mutex_lock(&f->lock);
	ret = f->unlinked ? -ENOENT : store_rename(&f->share->root, f->path, to, replace);
	if (!ret) {
		free(f->path);
		f->path = np;
		np = NULL;
	}
	pthread_mutex_unlock(&f->lock);
	free(np);
	return ret;
}

/* Its name is gone: its path names what came after, if anything */
bool srv_file_unlinked(struct srv_file *f)
{
	bool v;

	pthread_mutex_lock(&f->lock);
	v = f->unlinked;
	pthread_mutex_unlock(&f->lock);
	return v;
}

/* The path it was opened by (or renamed to); stale once unlinked. */
int srv_file_path(struct srv_file *f, char *buf, size_t len)
{
	int ret = 0;

	pthread_mutex_lock(&f->lock);
	if ((size_t)snprintf(buf, len, "%s", f->path) >= len)
		ret = -ENAMETOOLONG;
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* ---- share modes ---- */

#define CONFLICTING_ACCESS (FILE_READ_DATA | FILE_EXECUTE | FILE_WRITE_DATA | \
			    FILE_APPEND_DATA | DELETE_ACCESS)

/* Open with access a and sharing sh next to one with ea and esh. */
static bool share_conflict(uint32_t ea, uint32_t esh, uint32_t a, uint32_t sh)
{
	static const struct {
		uint32_t access;
		uint32_t share;
	} pairs[] = {
		{ FILE_WRITE_DATA | FILE_APPEND_DATA, FILE_SHARE_WRITE },
		{ FILE_READ_DATA | FILE_EXECUTE, FILE_SHARE_READ },
		{ DELETE_ACCESS, FILE_SHARE_DELETE },
	};
	size_t i;

	if (!(ea & CONFLICTING_ACCESS) || !(a & CONFLICTING_ACCESS))
		return false;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if ((a & pairs[i].access && !(esh & pairs[i].share)) ||
		    (ea & pairs[i].access && !(sh & pairs[i].share)))
			return true;
	}
	return false;
}

bool srv_stat_open(uint32_t access)
{
	const uint32_t bits = SYNCHRONIZE | FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES;

	return access & bits && !(access & ~bits);
}

bool srv_open_share_conflict(const struct srv_open *e, uint32_t access, uint32_t share)
{
	return !srv_stat_open(access) &&
	       share_conflict(e->sharing, e->share_access, access, share);
}

bool srv_file_share_conflict_locked(struct srv_file *f, uint32_t access, uint32_t share)
{
	struct list_head *pos;

	if (srv_stat_open(access))
		return false;
	list_for_each(pos, &f->opens) {
		struct srv_open *e = list_entry(pos, struct srv_open, file_link);

		/* a disconnected durable open holds no share mode; a persistent one does */
		if (e->disconnected && !e->persistent_handle)
			continue;
		if (share_conflict(e->sharing, e->share_access, access, share))
			return true;
	}
	return false;
}
