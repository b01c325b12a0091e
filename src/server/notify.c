// SPDX-License-Identifier: MIT
/*
 * CHANGE_NOTIFY ([MS-SMB2] 3.3.5.19) on inotify.
 *
 * Each worker has one inotify descriptor in its epoll loop. A directory
 * handle's first CHANGE_NOTIFY gives it a srv_notify on the worker of the
 * connection it came on: a watch on the directory, and with
 * SMB2_WATCH_TREE one on every directory below (inotify is not
 * recursive), added as the handle's user. Watches of several handles on
 * one inode share the inotify watch (one wd per inode and descriptor).
 *
 * The worker reads the events, turns them into FILE_ACTION_* entries the
 * handle's CompletionFilter wants and queues them on the handle (bounded;
 * past the bound, or on IN_Q_OVERFLOW, the next answer is
 * STATUS_NOTIFY_ENUM_DIR). A CHANGE_NOTIFY with nothing queued waits on
 * the directory's srv_file (SRV_WAIT_NOTIFY, async.c) and is posted back
 * to its worker when something is queued. The file's lock covers the
 * queue; the worker's inotify lock covers its watch table and comes
 * first. The handle's close ends the watch (STATUS_NOTIFY_CLEANUP).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"
#include "util/utf16.h"

#define INO_BUCKETS 256
/*
 * IN_OPEN and IN_CLOSE report nothing; they sit between a create's own
 * IN_ATTRIB and a later change of the file's attributes, which the
 * kernel would otherwise merge into one event.
 */
#define INO_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | \
		  IN_MODIFY | IN_OPEN | IN_CLOSE | IN_ONLYDIR | IN_EXCL_UNLINK)
#define NOTIFY_MAX_DEPTH 64

/* One inotify watch of a worker: an inode, and the handles watching it. */
struct ino_wd {
	struct list_head link;		/* bucket */
	int wd;
	struct list_head watchers;	/* nwatch.wd_link */
	char created[NAME_MAX + 1];	/* a file being created: its name */
	bool created_attr;		/* and its create set its attributes */
};

/* A handle's interest in one directory. */
struct nwatch {
	struct list_head wd_link;	/* ino_wd.watchers */
	struct list_head n_link;	/* srv_notify.watches */
	struct ino_wd *iw;
	struct srv_notify *n;
	char *rel;			/* below the handle's directory, "" itself */
};

struct srv_inotify {
	int fd;
	pthread_mutex_t lock;		/* everything here, before any file lock */
	struct list_head tab[INO_BUCKETS];
	struct list_head notifies;	/* srv_notify.w_link */
	struct list_head grows;		/* struct grow: directories to watch */
	struct srv_work wk;		/* the worker grows them */
	atomic_bool wk_posted;
};

/* A directory made (or moved) in a watched tree, to be watched by the worker. */
struct grow {
	struct list_head link;
	struct srv_notify *n;
	char rel[];
};

struct nevent {
	struct list_head link;
	uint32_t action;
	char name[];			/* relative, '/' separated */
};

struct srv_notify {
	struct list_head w_link;	/* srv_inotify.notifies */
	struct srv_worker *w;
	struct srv_open *o;		/* not a reference: the close ends this first */
	struct srv_file *f;
	struct srv_session *sess;	/* a reference: its watch count */
	uint32_t filter;		/* the first request's: it stays (as Windows) */
	bool tree;
	uint32_t max_out;		/* the first request's OutputBufferLength caps later ones */
	struct list_head watches;	/* nwatch.n_link (inotify lock) */
	int nwatches;
	/* the file's lock */
	struct list_head events;
	int nevents;
	size_t bytes;
	int cut;			/* what the woken request answers (0: all) */
	bool overflow;			/* the next answer is STATUS_NOTIFY_ENUM_DIR */
};

/* ---- the worker's descriptor ---- */

int srv_inotify_start(struct srv_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &w->ino_ev };
	struct srv_inotify *in;
	int i, ret;

	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in->fd < 0) {
		ret = -errno;
		goto out_free;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, in->fd, &ev)) {
		ret = -errno;
		goto out_close;
	}
	pthread_mutex_init(&in->lock, NULL);
	for (i = 0; i < INO_BUCKETS; i++)
		list_init(&in->tab[i]);
	list_init(&in->notifies);
	list_init(&in->grows);
	w->ino = in;
	return 0;
out_close:
	close(in->fd);
out_free:
	free(in);
	return ret;
}

void srv_inotify_stop(struct srv_worker *w)
{
	struct srv_inotify *in = w->ino;

	if (!in)
		return;
	/* a handle of a session still on another worker keeps it until exit */
	if (!list_empty(&in->notifies))
		return;
	while (!list_empty(&in->grows)) {
		struct grow *g = list_entry(in->grows.next, struct grow, link);

		list_del(&g->link);
		free(g);
	}
	close(in->fd);
	pthread_mutex_destroy(&in->lock);
	free(in);
	w->ino = NULL;
}

static struct ino_wd *wd_find(struct srv_inotify *in, int wd)
{
	struct list_head *pos;

	list_for_each(pos, &in->tab[(unsigned int)wd % INO_BUCKETS]) {
		struct ino_wd *iw = list_entry(pos, struct ino_wd, link);

		if (iw->wd == wd)
			return iw;
	}
	return NULL;
}

/* A watcher goes; the inotify watch with its last (rm: still in the kernel). */
static void watch_del(struct srv_inotify *in, struct nwatch *nw, bool rm)
{
	struct ino_wd *iw = nw->iw;
	struct srv_notify *n = nw->n;

	list_del(&nw->wd_link);
	list_del(&nw->n_link);
	n->nwatches--;
	atomic_fetch_sub(&n->sess->nwatches, 1);
	atomic_fetch_sub(&n->w->srv->nwatches, 1);
	free(nw->rel);
	free(nw);
	if (!list_empty(&iw->watchers))
		return;
	if (rm)
		inotify_rm_watch(in->fd, iw->wd);
	list_del(&iw->link);
	free(iw);
}

/* ---- adding watches, as the handle's user ---- */

struct added {
	int wd;
	char *rel;
};

struct walk {
	struct srv_notify *n;
	int dirfd;			/* the handle's directory */
	const char *start;		/* rel of the first directory */
	bool recurse;
	int room;			/* watches the bounds still allow */
	struct added *out;
	int nout, cap;
	bool full;			/* a bound was hit */
};

static int add_one(struct walk *wk, int fd, const char *rel)
{
	char proc[64];
	struct added *a;
	int wd;

	if (wk->room <= 0) {
		wk->full = true;
		return -ENOSPC;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(wk->n->w->ino->fd, proc, INO_MASK);
	if (wd < 0) {
		if (errno == ENOSPC)
			wk->full = true;
		return -errno;
	}
	if (wk->nout == wk->cap) {
		int cap = wk->cap ? wk->cap * 2 : 16;

		a = realloc(wk->out, (size_t)cap * sizeof(*a));
		if (!a)
			goto out_rm;
		wk->out = a;
		wk->cap = cap;
	}
	a = &wk->out[wk->nout];
	a->rel = strdup(rel);
	if (!a->rel)
		goto out_rm;
	a->wd = wd;
	wk->nout++;
	wk->room--;
	return 0;
out_rm:
	/* another handle may share this wd: it stays; a stray one is harmless */
	wk->full = true;
	return -ENOMEM;
}

static void walk_dir(struct walk *wk, int fd, const char *rel, int depth)
{
	struct dirent *de;
	char sub[PATH_MAX];
	DIR *d;
	int dfd, cfd;

	if (add_one(wk, fd, rel) || !wk->recurse)
		return;
	if (depth >= NOTIFY_MAX_DEPTH) {
		wk->full = true;
		return;
	}
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;		/* may not be listed: nothing below is watched */
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) && !wk->full) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		cfd = openat(dirfd(d), de->d_name,
			     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "",
				     de->d_name) < sizeof(sub))
			walk_dir(wk, cfd, sub, depth + 1);
		close(cfd);
	}
	closedir(d);
}

static int walk_run(void *arg)
{
	struct walk *wk = arg;
	int fd = wk->dirfd;
	bool own = false;

	if (*wk->start) {
		fd = openat(wk->dirfd, wk->start, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		own = true;
	}
	walk_dir(wk, fd, wk->start, 0);
	if (own)
		close(fd);
	return 0;
}

/* Bounds: the session's and the server's watches. */
static int watch_room(struct srv_notify *n)
{
	int s = SRV_NOTIFY_WATCHES_SESS - atomic_load(&n->sess->nwatches);
	int v = SRV_NOTIFY_WATCHES_SRV - atomic_load(&n->w->srv->nwatches);

	return s < v ? s : v;
}

/* Under the inotify lock: the watchers a walk found join their wds. */
static void walk_install(struct srv_inotify *in, struct walk *wk)
{
	struct list_head *pos;
	int i;

	for (i = 0; i < wk->nout; i++) {
		struct added *a = &wk->out[i];
		struct ino_wd *iw = wd_find(in, a->wd);
		struct nwatch *nw = NULL;

		if (iw) {
			/* the handle watches it already (a directory moved): new name */
			list_for_each(pos, &iw->watchers) {
				struct nwatch *x = list_entry(pos, struct nwatch, wd_link);

				if (x->n == wk->n) {
					nw = x;
					break;
				}
			}
			if (nw) {
				free(nw->rel);
				nw->rel = a->rel;
				a->rel = NULL;
				continue;
			}
		} else {
			iw = calloc(1, sizeof(*iw));
			if (!iw)
				goto full;
			iw->wd = a->wd;
			list_init(&iw->watchers);
			list_add_tail(&iw->link, &in->tab[(unsigned int)a->wd % INO_BUCKETS]);
		}
		nw = calloc(1, sizeof(*nw));
		if (!nw) {
			if (list_empty(&iw->watchers)) {
				inotify_rm_watch(in->fd, iw->wd);
				list_del(&iw->link);
				free(iw);
			}
			goto full;
		}
		nw->iw = iw;
		nw->n = wk->n;
		nw->rel = a->rel;
		a->rel = NULL;
		list_add_tail(&nw->wd_link, &iw->watchers);
		list_add_tail(&nw->n_link, &wk->n->watches);
		wk->n->nwatches++;
		atomic_fetch_add(&wk->n->sess->nwatches, 1);
		atomic_fetch_add(&wk->n->w->srv->nwatches, 1);
		continue;
full:
		wk->full = true;
	}
	for (i = 0; i < wk->nout; i++)
		free(wk->out[i].rel);
	free(wk->out);
	wk->out = NULL;
	wk->nout = wk->cap = 0;
}

/* ---- the queue (file lock) ---- */

static void queue_clear(struct srv_notify *n)
{
	while (!list_empty(&n->events)) {
		struct nevent *e = list_entry(n->events.next, struct nevent, link);

		list_del(&e->link);
		free(e);
	}
	n->nevents = 0;
	n->bytes = 0;
	n->cut = 0;
}

/*
 * A change wakes one waiting request, which answers with what is queued
 * up to it (as Windows and Samba: each change completes one request;
 * later ones wait for the next).
 */
static void queue_wake(struct srv_notify *n)
{
	if (srv_file_wake_notify_locked(n->f, n->o) && !n->cut)
		n->cut = n->nevents;
}

static void queue_overflow(struct srv_notify *n)
{
	queue_clear(n);
	n->overflow = true;
}

static void queue_add(struct srv_notify *n, uint32_t action, const char *rel,
		      const char *name)
{
	char full[PATH_MAX];
	struct nevent *e, *last;
	size_t len;

	if (n->overflow)
		return;
	len = (size_t)snprintf(full, sizeof(full), "%s%s%s", rel, *rel ? "/" : "", name) + 1;
	if (len > sizeof(full))
		return;
	if (!list_empty(&n->events)) {
		/* a burst of writes to one file is one change */
		last = list_entry(n->events.prev, struct nevent, link);
		if (action == FILE_ACTION_MODIFIED && last->action == action &&
		    !strcmp(last->name, full))
			return;
	}
	if (n->nevents >= SRV_NOTIFY_MAX_EVENTS || n->bytes + len > SRV_NOTIFY_MAX_BYTES) {
		queue_overflow(n);
		return;
	}
	e = malloc(sizeof(*e) + len);
	if (!e) {
		queue_overflow(n);
		return;
	}
	e->action = action;
	memcpy(e->name, full, len);
	list_add_tail(&e->link, &n->events);
	n->nevents++;
	n->bytes += len;
}

/* ---- inotify events to FILE_ACTION_* ---- */

#define NAME_CHANGE (FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME)
#define META_CHANGE (FILE_NOTIFY_CHANGE_ATTRIBUTES | FILE_NOTIFY_CHANGE_LAST_WRITE | \
		     FILE_NOTIFY_CHANGE_LAST_ACCESS | FILE_NOTIFY_CHANGE_CREATION | \
		     FILE_NOTIFY_CHANGE_EA | FILE_NOTIFY_CHANGE_SECURITY)

static const struct {
	uint32_t mask;			/* IN_* */
	uint32_t action;
	uint32_t filter;		/* any of these; NAME_CHANGE: by file or dir */
} ino_map[] = {
	{ IN_CREATE, FILE_ACTION_ADDED, NAME_CHANGE },
	{ IN_DELETE, FILE_ACTION_REMOVED, NAME_CHANGE },
	{ IN_MOVED_FROM, FILE_ACTION_RENAMED_OLD_NAME, NAME_CHANGE },
	{ IN_MOVED_TO, FILE_ACTION_RENAMED_NEW_NAME, NAME_CHANGE },
	{ IN_ATTRIB, FILE_ACTION_MODIFIED, META_CHANGE },
	{ IN_MODIFY, FILE_ACTION_MODIFIED, FILE_NOTIFY_CHANGE_SIZE |
					   FILE_NOTIFY_CHANGE_LAST_WRITE },
};

static bool wants(const struct srv_notify *n, uint32_t filter, bool is_dir)
{
	if (filter == NAME_CHANGE)
		filter = is_dir ? FILE_NOTIFY_CHANGE_DIR_NAME : FILE_NOTIFY_CHANGE_FILE_NAME;
	return n->filter & filter;
}

/* A rename's halves pair up by cookie in one read; a lone half is a move in or out. */
static bool has_pair(const char *buf, size_t len, const struct inotify_event *ev)
{
	uint32_t other = ev->mask & IN_MOVED_FROM ? IN_MOVED_TO : IN_MOVED_FROM;
	size_t off = 0;

	while (off + sizeof(struct inotify_event) <= len) {
		const struct inotify_event *x = (const void *)(buf + off);

		if (x != ev && x->mask & other && x->cookie == ev->cookie)
			return true;
		off += sizeof(*x) + x->len;
	}
	return false;
}

/* A moved or deleted directory: the handle's watches of it and below go. */
static void drop_below(struct srv_inotify *in, struct srv_notify *n, const char *rel)
{
	struct list_head *pos, *tmp;
	size_t len = strlen(rel);

	list_for_each_safe(pos, tmp, &n->watches) {
		struct nwatch *nw = list_entry(pos, struct nwatch, n_link);

		if (!*nw->rel || strncmp(nw->rel, rel, len) ||
		    (nw->rel[len] && nw->rel[len] != '/'))
			continue;
		watch_del(in, nw, true);
	}
}

static void grow_tree(struct srv_inotify *in, struct srv_notify *n, const char *rel)
{
	struct walk wk = { .n = n, .dirfd = n->o->fd, .start = rel, .recurse = true };
	int ret;

	wk.room = watch_room(n);
	ret = srv_ident_run(n->o->ident, walk_run, &wk);
	walk_install(in, &wk);
	if (ret == -ENOENT)
		return;		/* gone again already */
	if (wk.full) {
		pthread_mutex_lock(&n->f->lock);
		queue_overflow(n);
		queue_wake(n);
		pthread_mutex_unlock(&n->f->lock);
	}
}

static void grow_later(struct srv_inotify *in, struct srv_notify *n, const char *rel)
{
	size_t len = strlen(rel) + 1;
	struct grow *g = malloc(sizeof(*g) + len);

	if (!g) {
		pthread_mutex_lock(&n->f->lock);
		queue_overflow(n);
		queue_wake(n);
		pthread_mutex_unlock(&n->f->lock);
		return;
	}
	g->n = n;
	memcpy(g->rel, rel, len);
	list_add_tail(&g->link, &in->grows);
}

static void deliver(struct srv_inotify *in, struct nwatch *nw, const char *buf, size_t len,
		    const struct inotify_event *ev, char *grow, size_t grow_len)
{
	struct srv_notify *n = nw->n;
	bool is_dir = ev->mask & IN_ISDIR;
	uint32_t action = 0;
	size_t i;

	*grow = 0;
	for (i = 0; i < sizeof(ino_map) / sizeof(ino_map[0]); i++) {
		if (!(ev->mask & ino_map[i].mask) || !wants(n, ino_map[i].filter, is_dir))
			continue;
		action = ino_map[i].action;
		break;
	}
	if (ev->mask & (IN_MOVED_FROM | IN_MOVED_TO) && !has_pair(buf, len, ev))
		action = ev->mask & IN_MOVED_FROM ? FILE_ACTION_REMOVED : FILE_ACTION_ADDED;
	if (action && ev->len) {
		pthread_mutex_lock(&n->f->lock);
		queue_add(n, action, nw->rel, ev->name);
		queue_wake(n);
		pthread_mutex_unlock(&n->f->lock);
	}
	/* a file renamed in place: its attributes and creation changed too (Samba's way) */
	if (ev->mask & IN_MOVED_TO && !is_dir && ev->len && has_pair(buf, len, ev) &&
	    n->filter & (FILE_NOTIFY_CHANGE_ATTRIBUTES | FILE_NOTIFY_CHANGE_CREATION)) {
		pthread_mutex_lock(&n->f->lock);
		queue_add(n, FILE_ACTION_MODIFIED, nw->rel, ev->name);
		queue_wake(n);
		pthread_mutex_unlock(&n->f->lock);
	}
	if (!n->tree || !is_dir || !ev->len)
		return;
	/* the tree changed shape: new directories are watched, gone ones not */
	if ((size_t)snprintf(grow, grow_len, "%s%s%s", nw->rel, *nw->rel ? "/" : "",
			     ev->name) >= grow_len) {
		*grow = 0;
		return;
	}
	if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
		drop_below(in, n, grow);
		*grow = 0;
	} else if (!(ev->mask & (IN_CREATE | IN_MOVED_TO))) {
		*grow = 0;
	}
}

static void all_overflow(struct srv_inotify *in)
{
	struct list_head *pos;

	list_for_each(pos, &in->notifies) {
		struct srv_notify *n = list_entry(pos, struct srv_notify, w_link);

		pthread_mutex_lock(&n->f->lock);
		queue_overflow(n);
		queue_wake(n);
		pthread_mutex_unlock(&n->f->lock);
	}
}

/*
 * A create sets the new file's attributes at once (rdaxd's
 * user.DOSATTRIB, a local touch's times): its IN_ATTRIB events, until the
 * creating open closes or the file is opened again, are part of the
 * create, as on Windows. Opens and closes only mark that end. False: the
 * event reports nothing.
 */
static bool created_part(struct ino_wd *iw, const struct inotify_event *ev)
{
	bool mine = ev->len && iw->created[0] && !strcmp(iw->created, ev->name);

	if (ev->mask & (IN_OPEN | IN_CLOSE)) {
		if (mine && (ev->mask & IN_CLOSE || iw->created_attr))
			iw->created[0] = 0;
		return false;
	}
	if (ev->mask & IN_ATTRIB && mine) {
		iw->created_attr = true;
		return false;
	}
	iw->created[0] = 0;
	if (ev->mask & IN_CREATE && ev->len && ev->len <= sizeof(iw->created)) {
		snprintf(iw->created, sizeof(iw->created), "%s", ev->name);
		iw->created_attr = false;
	}
	return true;
}

static void handle_event(struct srv_inotify *in, const char *buf, size_t len,
			 const struct inotify_event *ev)
{
	struct list_head *pos, *tmp;
	struct ino_wd *iw;
	char grow[PATH_MAX];

	if (ev->mask & IN_Q_OVERFLOW) {
		all_overflow(in);
		return;
	}
	iw = wd_find(in, ev->wd);
	if (!iw)
		return;
	if (ev->mask & IN_IGNORED) {
		/* the directory went (or was unwatched): so do its watchers (iw with the last) */
		for (;;) {
			bool last = iw->watchers.next->next == &iw->watchers;

			watch_del(in, list_entry(iw->watchers.next, struct nwatch, wd_link), false);
			if (last)
				return;
		}
	}
	if (!created_part(iw, ev))
		return;
	list_for_each_safe(pos, tmp, &iw->watchers) {
		struct nwatch *nw = list_entry(pos, struct nwatch, wd_link);
		struct srv_notify *n = nw->n;
		bool last = tmp == &iw->watchers;

		deliver(in, nw, buf, len, ev, grow, sizeof(grow));
		if (*grow)
			grow_later(in, n, grow);
		/* grow_tree may have added watchers to iw; drop_below removed some */
		if (last || !wd_find(in, ev->wd))
			break;
	}
}

static void grow_run(struct srv_worker *w, struct srv_work *wk)
{
	(void)wk;
	atomic_store(&w->ino->wk_posted, false);
	srv_inotify_run(w, true);
}

/*
 * Read what the kernel has queued. The worker (owner) also watches the
 * directories a tree grew, as their handles' users; anyone else (a
 * CHANGE_NOTIFY catching up before it decides to wait) leaves that to it.
 */
void srv_inotify_run(struct srv_worker *w, bool owner)
{
	struct srv_inotify *in = w->ino;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	size_t off;

	pthread_mutex_lock(&in->lock);
	for (;;) {
		n = read(in->fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (off = 0; off + sizeof(struct inotify_event) <= (size_t)n;) {
			const struct inotify_event *ev = (const void *)(buf + off);

			handle_event(in, buf, (size_t)n, ev);
			off += sizeof(*ev) + ev->len;
		}
	}
	while (owner && !list_empty(&in->grows)) {
		struct grow *g = list_entry(in->grows.next, struct grow, link);

		list_del(&g->link);
		grow_tree(in, g->n, g->rel);
		free(g);
	}
	if (!list_empty(&in->grows) && !atomic_exchange(&in->wk_posted, true)) {
		in->wk.fn = grow_run;
		srv_worker_post(w, &in->wk);
	}
	pthread_mutex_unlock(&in->lock);
}

/* ---- the handle's side ---- */

static int notify_new(struct srv_req *req, struct srv_open *o, const struct smb2_notify_req *r,
		      struct srv_notify **out)
{
	struct srv_worker *w = req->conn->w;
	struct srv_inotify *in = w->ino;
	struct walk wk = { .dirfd = o->fd, .start = "" };
	struct srv_notify *n;

	if (!in)
		return -E_SMB_NOT_IMPLEMENTED;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->w = w;
	n->o = o;
	n->f = o->file;
	n->sess = req->sess;
	atomic_fetch_add(&req->sess->refs, 1);
	n->filter = r->filter;
	n->max_out = r->output_len;
	n->tree = r->flags & SMB2_WATCH_TREE;
	list_init(&n->watches);
	list_init(&n->events);
	wk.n = n;
	wk.recurse = n->tree;
	wk.room = watch_room(n);
	/* the handler runs as the tree's user: so do the watches */
	walk_run(&wk);
	pthread_mutex_lock(&in->lock);
	walk_install(in, &wk);
	if (!n->nwatches) {
		pthread_mutex_unlock(&in->lock);
		srv_session_put(n->sess);
		free(n);
		return wk.full ? -ENOMEM : -EACCES;	/* bounds: INSUFFICIENT_RESOURCES */
	}
	list_add_tail(&n->w_link, &in->notifies);
	pthread_mutex_unlock(&in->lock);
	if (wk.full)
		n->overflow = true;	/* the tree is larger than the bounds */
	*out = n;
	return 0;
}

static void notify_free(struct srv_notify *n)
{
	struct srv_inotify *in = n->w->ino;

	struct list_head *pos, *tmp;

	pthread_mutex_lock(&in->lock);
	list_for_each_safe(pos, tmp, &in->grows) {
		struct grow *g = list_entry(pos, struct grow, link);

		if (g->n != n)
			continue;
		list_del(&g->link);
		free(g);
	}
	while (!list_empty(&n->watches))
		watch_del(in, list_entry(n->watches.next, struct nwatch, n_link), true);
	list_del(&n->w_link);
	pthread_mutex_unlock(&in->lock);
	queue_clear(n);
	srv_session_put(n->sess);
	free(n);
}

void srv_notify_end(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct srv_notify *n;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	n = o->notify;
	o->notify = NULL;
	pthread_mutex_unlock(&f->lock);
	if (n)
		notify_free(n);
}

/* Under f's lock: the queued changes as FILE_NOTIFY_INFORMATION, or ENUM_DIR. */
static int notify_answer(struct srv_req *req, struct srv_notify *n, uint32_t output_len)
{
	size_t limit = output_len < SRV_NOTIFY_MAX_OUTPUT ? output_len : SRV_NOTIFY_MAX_OUTPUT;
	uint8_t name16[2 * PATH_MAX];
	struct list_head *pos, *tmp;
	int prev = -1, ret, len, take = n->cut ? n->cut : n->nevents;
	struct wcur d;
	char *s;

	if (n->overflow) {
		n->overflow = false;
		return -E_SMB_NOTIFY_ENUM_DIR;
	}
	ret = srv_req_room(req, 8 + limit);
	if (ret)
		return ret;
	wcur_init(&d, req->w.p + req->w.off + 8, limit);
	list_for_each_safe(pos, tmp, &n->events) {
		struct nevent *e = list_entry(pos, struct nevent, link);

		if (take-- <= 0)
			break;
		for (s = e->name; *s; s++)
			if (*s == '/')
				*s = '\\';
		len = utf8_to_utf16le(e->name, name16, sizeof(name16));
		if (len >= 0 && fscc_notify_encode(&d, limit, &prev, e->action, name16,
						   (uint32_t)len)) {
			/* the client's buffer cannot hold what happened */
			queue_clear(n);
			return -E_SMB_NOTIFY_ENUM_DIR;
		}
		list_del(&e->link);
		n->nevents--;
		n->bytes -= strlen(e->name) + 1;
		free(e);
	}
	n->cut = 0;
	smb2_out_buf_rsp_encode(&req->w, (uint32_t)d.off);
	req->w.off += d.off;
	return 0;
}

int smb_change_notify(struct srv_req *req)
{
	struct smb2_notify_req r;
	struct srv_notify *n = NULL;
	struct srv_worker *w;
	struct srv_open *o;
	struct srv_file *f;
	int ret;

	smb2_notify_req_decode(req->pdu, req->len, &r);
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (!o->is_dir || !o->file)
		return -EINVAL;
	if (!(o->access & FILE_LIST_DIRECTORY))
		return -EACCES;
	if (r.output_len > SMB2_MAX_IO_SIZE)
		return -EINVAL;
	f = o->file;
	pthread_mutex_lock(&o->dir_lock);
	/*
	 * What already happened is queued before the request decides to
	 * wait; a handle's first request drains the worker it will watch
	 * from, so changes made before it go only to the handles that
	 * watched then.
	 */
	pthread_mutex_lock(&f->lock);
	w = o->notify ? o->notify->w : req->conn->w;
	pthread_mutex_unlock(&f->lock);
	if (w->ino)
		srv_inotify_run(w, false);
	if (!o->notify) {
		ret = notify_new(req, o, &r, &n);
		if (ret) {
			pthread_mutex_unlock(&o->dir_lock);
			return ret;
		}
	}
	pthread_mutex_lock(&f->lock);
	if (n) {
		if (atomic_load(&o->closed)) {
			pthread_mutex_unlock(&f->lock);
			pthread_mutex_unlock(&o->dir_lock);
			notify_free(n);
			return -E_SMB_NOTIFY_CLEANUP;
		}
		o->notify = n;
	}
	n = o->notify;
	pthread_mutex_unlock(&o->dir_lock);
	if (!n) {
		ret = -E_SMB_NOTIFY_CLEANUP;	/* closed meanwhile */
	} else if (f->delete_pending) {
		ret = -E_SMB_DELETE_PENDING;
	} else if (n->overflow || n->nevents) {
		ret = notify_answer(req, n, r.output_len < n->max_out ? r.output_len : n->max_out);
	} else {
		ret = srv_async_wait(req, f, SRV_WAIT_NOTIFY);
		if (!ret) {
			if (!req->async->lock_open)
				req->async->lock_open = srv_open_ref(o);
			ret = SRV_PENDING;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}
