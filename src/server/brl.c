// SPDX-License-Identifier: MIT
/*
 * Byte-range locks with Windows semantics ([MS-FSA] 2.1.4.10, 2.1.5.7;
 * [MS-SMB2] 3.3.5.14), kept by rdaxd itself across all opens of a file:
 * shared locks stack, a shared lock stacks on the same open's exclusive
 * one, unlock names exactly one lock, a zero-length lock at offset 0
 * conflicts with nothing. READ and WRITE are refused where another open
 * holds a conflicting lock (mandatory, as on Windows). A blocking LOCK
 * waits on the file (an interim response; CANCEL ends it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/ntstatus.h"
#include "server/server.h"
#include "util/log.h"

/* [MS-FSA]: (offset + length - 1) must not wrap, unless length is 0. */
static bool range_valid(uint64_t off, uint64_t len)
{
	return !len || len - 1 <= UINT64_MAX - off;
}

static uint64_t range_last(uint64_t off, uint64_t len)
{
	return range_valid(off, len) ? off + len - 1 : UINT64_MAX;
}

static bool overlap(uint64_t o1, uint64_t l1, uint64_t o2, uint64_t l2)
{
	if ((!o1 && !l1) || (!o2 && !l2))
		return false;
	/* a zero-length range is the point at its offset */
	if (!l1 || !l2) {
		uint64_t p = !l1 ? o1 : o2, o = !l1 ? o2 : o1, l = !l1 ? l2 : l1;

		if (!l)
			return false;
		return p > o && p <= range_last(o, l);
	}
	return !(o1 > range_last(o2, l2) || o2 > range_last(o1, l1));
}

/* Can a lock (o, off, len, excl) be added next to e? */
static bool lock_conflict(const struct srv_brl *e, const struct srv_open *o,
			  uint64_t off, uint64_t len, bool excl)
{
	if (!e->exclusive && !excl)
		return false;
	/* a shared lock stacks on the same open's exclusive one */
	if (e->exclusive && !excl && e->o == o)
		return false;
	return overlap(e->offset, e->length, off, len);
}

/* Does I/O by o (write: for writing) meet e? */
static bool io_conflict(const struct srv_brl *e, const struct srv_open *o,
			uint64_t off, uint64_t len, bool write)
{
	if (!e->exclusive && !write)
		return false;
	if (!overlap(e->offset, e->length, off, len))
		return false;
	if (e->o != o)
		return true;
	/* one's own shared lock still refuses one's own write */
	return !e->exclusive && write;
}

int srv_brl_check_io(struct srv_open *o, uint64_t off, uint64_t len, bool write)
{
	struct srv_file *f = o->file;
	struct list_head *pos;
	int ret = 0;

	if (!f || !atomic_load(&f->nlocks) || !len)
		return 0;
	pthread_mutex_lock(&f->lock);
	list_for_each(pos, &f->locks) {
		struct srv_brl *e = list_entry(pos, struct srv_brl, link);

		if (io_conflict(e, o, off, len, write)) {
			ret = -E_SMB_FILE_LOCK_CONFLICT;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int srv_brl_restore_locked(struct srv_open *o, uint64_t off, uint64_t len, bool excl)
{
	struct srv_brl *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->o = o;
	l->offset = off;
	l->length = len;
	l->exclusive = excl;
	list_add_tail(&l->link, &o->file->locks);
	atomic_fetch_add(&o->file->nlocks, 1);
	return 0;
}

static void brl_del(struct srv_file *f, struct srv_brl *e)
{
	list_del(&e->link);
	atomic_fetch_sub(&f->nlocks, 1);
	free(e);
}

/* The open closes: its locks go (file lock held). True if any did. */
bool srv_brl_close_locked(struct srv_open *o)
{
	struct srv_file *f = o->file;
	struct list_head *pos, *tmp;
	bool any = false;

	list_for_each_safe(pos, tmp, &f->locks) {
		struct srv_brl *e = list_entry(pos, struct srv_brl, link);

		if (e->o == o) {
			brl_del(f, e);
			any = true;
		}
	}
	return any;
}

static int brl_unlock(struct srv_open *o, const struct smb2_lock_req *r)
{
	struct srv_file *f = o->file;
	struct smb2_lock_elem e;
	struct list_head *pos;
	int i, ret = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < r->count && !ret; i++) {
		smb2_lock_elem_get(r, i, &e);
		if (e.flags != SMB2_LOCKFLAG_UNLOCK) {
			ret = -EINVAL;
			break;
		}
		ret = -E_SMB_RANGE_NOT_LOCKED;
		list_for_each(pos, &f->locks) {
			struct srv_brl *l = list_entry(pos, struct srv_brl, link);

			if (l->o == o && l->offset == e.offset && l->length == e.length) {
				brl_del(f, l);
				ret = 0;
				break;
			}
		}
	}
	/* what was unlocked may let waiting locks and opens go on */
	srv_file_wake_locked(f);
	srv_durable_journal(o, true);
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/*
 * Take every lock of the request or none. A single blocking lock that
 * conflicts waits (SRV_PENDING) on the file.
 */
static int brl_lock(struct srv_req *req, struct srv_open *o, const struct smb2_lock_req *r,
		    bool blocking)
{
	struct srv_file *f = o->file;
	struct srv_brl *added[64];
	struct smb2_lock_elem e;
	struct list_head *pos;
	int i, n = 0, ret = 0;

	pthread_mutex_lock(&f->lock);
	if (req->async && req->async->end_err) {
		ret = req->async->end_err;
		goto out_unlock;
	}
	for (i = 0; i < r->count; i++) {
		struct srv_brl *l;
		bool excl;

		smb2_lock_elem_get(r, i, &e);
		excl = e.flags & SMB2_LOCKFLAG_EXCLUSIVE;
		if (!range_valid(e.offset, e.length)) {
			ret = -E_SMB_INVALID_LOCK_RANGE;
			break;
		}
		list_for_each(pos, &f->locks) {
			l = list_entry(pos, struct srv_brl, link);
			if (lock_conflict(l, o, e.offset, e.length, excl)) {
				ret = -E_SMB_LOCK_NOT_GRANTED;
				break;
			}
		}
		if (ret)
			break;
		l = calloc(1, sizeof(*l));
		if (!l) {
			ret = -ENOMEM;
			break;
		}
		l->o = o;
		l->offset = e.offset;
		l->length = e.length;
		l->exclusive = excl;
		list_add_tail(&l->link, &f->locks);
		atomic_fetch_add(&f->nlocks, 1);
		added[n++] = l;
	}
	if (ret == -E_SMB_LOCK_NOT_GRANTED && blocking) {
		ret = srv_async_wait(req, f, SRV_WAIT_LOCK);
		if (!ret) {
			if (!req->async->lock_open)
				req->async->lock_open = srv_open_ref(o);
			ret = SRV_PENDING;
		}
	}
	if (ret)
		while (n)
			brl_del(f, added[--n]);
	else
		srv_durable_journal(o, true);
out_unlock:
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int smb_lock(struct srv_req *req)
{
	struct smb2_lock_req r;
	struct smb2_lock_elem e;
	struct srv_open *o;
	uint32_t seq, bucket = 0;
	bool unlock, blocking = false, check_seq;
	int i, ret;

	if (smb2_lock_req_decode(req->pdu, req->len, &r) || !r.count)
		return -EINVAL;
	ret = srv_req_open(req, &r.fid, &o);
	if (ret)
		return ret;
	if (r.count > 64 || o->is_dir || !o->file)
		return -EINVAL;
	/* LockSequence ([MS-SMB2] 3.3.5.14): a replay of a lock that was done */
	check_seq = req->conn->dialect >= SMB2_DIALECT_210 &&
		    (o->durable || req->conn->server_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL);
	seq = get_le32(req->pdu + SMB2_HDR_SIZE + 4);
	if (check_seq)
		bucket = seq >> 4;
	if (bucket >= 1 && bucket <= 64 && !(req->async && req->async->resumed)) {
		if (o->lock_seq[bucket - 1] == (seq & 0xF))
			goto done;
		o->lock_seq[bucket - 1] = 0xFF;
	}
	smb2_lock_elem_get(&r, 0, &e);
	switch (e.flags) {
	case SMB2_LOCKFLAG_SHARED:
	case SMB2_LOCKFLAG_EXCLUSIVE:
		if (r.count > 1)
			return -EINVAL;
		blocking = true;
		break;
	case SMB2_LOCKFLAG_SHARED | SMB2_LOCKFLAG_FAIL_IMMEDIATELY:
	case SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY:
	case SMB2_LOCKFLAG_UNLOCK:
		break;
	default:
		return -EINVAL;
	}
	unlock = e.flags == SMB2_LOCKFLAG_UNLOCK;
	if (unlock) {
		ret = brl_unlock(o, &r);
	} else {
		for (i = 1; i < r.count; i++) {
			smb2_lock_elem_get(&r, i, &e);
			if (e.flags != (SMB2_LOCKFLAG_SHARED | SMB2_LOCKFLAG_FAIL_IMMEDIATELY) &&
			    e.flags != (SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY))
				return -EINVAL;
		}
		ret = brl_lock(req, o, &r, blocking);
		if (!ret)
			srv_oplock_contend(req->conn->srv, o);
	}
	if (ret)
		return ret;
	if (bucket >= 1 && bucket <= 64)
		o->lock_seq[bucket - 1] = seq & 0xF;
done:
	if (srv_req_room(req, 8))
		return -ENOMEM;
	smb2_simple_encode(&req->w);
	return 0;
}
