// SPDX-License-Identifier: MIT
/*
 * LastWriteTime as Windows keeps it and clients test it (smbtorture's
 * smb2.timestamps.delayed-*; Samba implements the same rules):
 *
 * - the first WRITE through a handle does not move the write time at
 *   once: it moves DELAY_MS later, when the handle is flushed, its end of
 *   file or basic information is set, or it is closed, whichever comes
 *   first;
 * - later writes through a handle that has had its update move it only
 *   at close;
 * - a write time a client sets sticks: writes through any handle leave
 *   it until the file's last close.
 *
 * The file system moves st_mtime at every write, so while any open of a
 * file has written, its write time is kept here (srv_file.wt) and put on
 * the file (futimens) each time it moves. Only a handle's first write
 * takes the file's lock; later ones set a flag. Reads by path (directory
 * listings, opens of no handle) see the file system's time.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "server/server.h"

#define DELAY_MS 2000

static void wt_now(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

/* Put f->wt on the file, through the open's descriptor. */
static void wt_store_locked(struct srv_open *o)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, o->file->wt };

	if (o->fd >= 0)
		futimens(o->fd, ts);
}

/* The write time moves now: every handle's writes so far are in it. */
static void wt_move_locked(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct list_head *pos;

	wt_now(&f->wt);
	f->wt_due = 0;
	wt_store_locked(o);
	list_for_each(pos, &f->opens)
		atomic_store(&list_entry(pos, struct srv_open, file_link)->wt_dirty, false);
	atomic_store(&o->wt_dirty, false);
}

/* A due delayed update happens when someone looks. */
static void wt_due_locked(struct srv_open *o)
{
	struct srv_file *f = o->file;

	if (f->wt_due && srv_now_ms() >= f->wt_due)
		wt_move_locked(o);
}

/* Before a WRITE (or a size change) through o. */
void srv_wt_write(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct stat st;

	atomic_store(&o->wt_dirty, true);
	if (o->wt_once || !f || f->stream)
		return;
	pthread_mutex_lock(&f->lock);
	if (!o->wt_once) {
		o->wt_once = true;
		if (!atomic_load(&f->wt_on) && !fstat(o->fd, &st)) {
			f->wt = st.st_mtim;
			atomic_store(&f->wt_on, true);
		}
		if (!f->wt_sticky && !f->wt_due)
			f->wt_due = srv_now_ms() + DELAY_MS;
	}
	pthread_mutex_unlock(&f->lock);
}

/* FLUSH, or SET_INFO of the end of file or basic information. */
void srv_wt_flush(struct srv_open *o)
{
	struct srv_file *f = o->file;

	if (!f || !atomic_load(&f->wt_on))
		return;
	pthread_mutex_lock(&f->lock);
	if (!f->wt_sticky && (f->wt_due || atomic_load(&o->wt_dirty)))
		wt_move_locked(o);
	pthread_mutex_unlock(&f->lock);
}

/* A client set the write time t (already on the file). */
void srv_wt_set(struct srv_open *o, const struct timespec *t)
{
	struct srv_file *f = o->file;
	struct list_head *pos;

	if (!f || f->stream)
		return;
	pthread_mutex_lock(&f->lock);
	f->wt = *t;
	f->wt_sticky = true;
	f->wt_due = 0;
	atomic_store(&f->wt_on, true);
	list_for_each(pos, &f->opens)
		atomic_store(&list_entry(pos, struct srv_open, file_link)->wt_dirty, false);
	pthread_mutex_unlock(&f->lock);
}

/* Before o's close: its writes move the write time; the last close ends it. */
void srv_wt_close_locked(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct list_head *pos;
	bool others = false;

	if (!atomic_load(&f->wt_on))
		return;
	wt_due_locked(o);
	if (f->wt_sticky)
		wt_store_locked(o);	/* over what writes did to it */
	else if (atomic_load(&o->wt_dirty))
		wt_move_locked(o);
	list_for_each(pos, &f->opens)
		if (list_entry(pos, struct srv_open, file_link) != o)
			others = true;
	if (!others) {
		atomic_store(&f->wt_on, false);
		f->wt_sticky = false;
		f->wt_due = 0;
	}
}

void srv_wt_close(struct srv_open *o)
{
	struct srv_file *f = o->file;

	if (!f || !atomic_load(&f->wt_on))
		return;
	pthread_mutex_lock(&f->lock);
	srv_wt_close_locked(o);
	pthread_mutex_unlock(&f->lock);
}

/* The write (and change) time o's file answers with. */
void srv_wt_attr(struct srv_open *o, struct stat *st)
{
	struct srv_file *f = o->file;

	if (!f || !atomic_load(&f->wt_on))
		return;
	pthread_mutex_lock(&f->lock);
	wt_due_locked(o);
	if (atomic_load(&f->wt_on))
		st->st_mtim = f->wt;
	pthread_mutex_unlock(&f->lock);
}
