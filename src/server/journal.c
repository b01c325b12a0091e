// SPDX-License-Identifier: MIT
/*
 * The persistent-handle journal of a continuously available share: the
 * state of each persistent open (its FileIds, CreateGuid, owner, name,
 * access and sharing, lease, byte-range locks, LockSequence), kept so
 * that it survives a kill -9 of rdaxd and clients reconnect their
 * handles after a restart ([MS-SMB2] 3.3.5.9.10, 3.3.5.9.12).
 *
 * A file of fixed 4 KiB slots, one per open. A slot has two halves; an
 * update writes the older half whole, with a sequence number and a
 * SHA-512 sum, so a torn write leaves the other half valid. Every update
 * is durable before it returns: through the DAX store (libpmem2, MAP_SYNC)
 * when the journal lies on a DAX file system, else pwritev2 RWF_DSYNC.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "crypto/crypto.h"
#include "server/server.h"
#include "util/bytes.h"
#include "util/log.h"

#define J_SLOT 4096u
#define J_HALF (J_SLOT / 2)
#define J_HDR 32u
#define J_MAGIC 0x4A584452u	/* "RDXJ" */
#define J_VERSION 1
#define J_SLOTS 4096		/* persistent opens a share may have */
#define J_MAX_PATH 1024
#define J_MAX_LOCKS 32

struct srv_journal {
	pthread_mutex_t lock;
	int fd;
	struct dax_file *dax;		/* the journal on a DAX file system */
	uint8_t *used;			/* a byte per slot */
	uint8_t *newest;		/* per slot: the half written last */
	uint64_t seq;
	char path[4096];
};

static int j_write(struct srv_journal *j, uint64_t off, const void *buf, size_t len)
{
	struct iovec iov = { (void *)buf, len };
	ssize_t n;

	if (j->dax)
		n = dax_pwritev(j->dax, &iov, 1, off);
	else
		n = pwritev2(j->fd, &iov, 1, (off_t)off, RWF_DSYNC);
	if (n < 0)
		return (int)(j->dax ? n : -errno);
	return (size_t)n == len ? 0 : -EIO;
}

static void j_sum(const uint8_t *half, uint32_t len, uint8_t out[8])
{
	uint8_t h[64];
	struct iovec iov[2] = {
		{ (void *)(half + 8), 16 },		/* seq and len */
		{ (void *)(half + J_HDR), len },
	};

	crypto_sha512v(iov, 2, h);
	memcpy(out, h, 8);
}

/* ---- the record ---- */

static void put_str(struct wcur *w, const char *s)
{
	size_t n = strlen(s);

	wcur_le16(w, (uint16_t)n);
	wcur_bytes(w, s, n);
}

static size_t rec_encode(uint8_t *buf, size_t cap, const struct srv_jrec *r)
{
	struct wcur w;
	int i;

	wcur_init(&w, buf, cap);
	wcur_le64(&w, r->persistent);
	wcur_bytes(&w, r->create_guid, 16);
	wcur_le32(&w, r->access);
	wcur_le32(&w, r->share_access);
	wcur_le32(&w, r->sharing);
	wcur_le32(&w, r->timeout);
	wcur_le64(&w, r->dev);
	wcur_le64(&w, r->ino);
	wcur_u8(&w, (uint8_t)(r->is_dir | r->has_lease << 1 | r->has_parent << 2));
	wcur_le32(&w, r->oplock);
	wcur_bytes(&w, r->client_guid, 16);
	wcur_bytes(&w, r->lease_key, 16);
	wcur_bytes(&w, r->parent_key, 16);
	wcur_u8(&w, (uint8_t)r->lease_version);
	wcur_le16(&w, r->lease_epoch);
	wcur_le32(&w, r->lease_state);
	wcur_bytes(&w, r->lock_seq, 64);
	put_str(&w, r->owner);
	put_str(&w, r->path);
	wcur_le16(&w, (uint16_t)r->nlocks);
	for (i = 0; i < r->nlocks; i++) {
		wcur_le64(&w, r->locks[i].offset);
		wcur_le64(&w, r->locks[i].length);
		wcur_u8(&w, r->locks[i].exclusive);
	}
	return w.err ? 0 : w.off;
}

static int get_str(struct rcur *r, char *out, size_t cap)
{
	uint16_t n = rcur_le16(r);
	const uint8_t *p = rcur_take(r, n);

	if (!p || n >= cap || memchr(p, 0, n))
		return -EBADMSG;
	memcpy(out, p, n);
	out[n] = 0;
	return 0;
}

int srv_jrec_decode(const uint8_t *buf, size_t len, struct srv_jrec *r)
{
	struct rcur c;
	const uint8_t *p;
	uint8_t flags;
	int i;

	memset(r, 0, sizeof(*r));
	rcur_init(&c, buf, len);
	r->persistent = rcur_le64(&c);
	p = rcur_take(&c, 16);
	if (p)
		memcpy(r->create_guid, p, 16);
	r->access = rcur_le32(&c);
	r->share_access = rcur_le32(&c);
	r->sharing = rcur_le32(&c);
	r->timeout = rcur_le32(&c);
	r->dev = rcur_le64(&c);
	r->ino = rcur_le64(&c);
	flags = rcur_u8(&c);
	r->is_dir = flags & 1;
	r->has_lease = flags & 2;
	r->has_parent = flags & 4;
	r->oplock = rcur_le32(&c);
	if ((p = rcur_take(&c, 16)))
		memcpy(r->client_guid, p, 16);
	if ((p = rcur_take(&c, 16)))
		memcpy(r->lease_key, p, 16);
	if ((p = rcur_take(&c, 16)))
		memcpy(r->parent_key, p, 16);
	r->lease_version = rcur_u8(&c);
	r->lease_epoch = rcur_le16(&c);
	r->lease_state = rcur_le32(&c);
	if ((p = rcur_take(&c, 64)))
		memcpy(r->lock_seq, p, 64);
	if (c.err || get_str(&c, r->owner, sizeof(r->owner)) ||
	    get_str(&c, r->path, sizeof(r->path)))
		return -EBADMSG;
	r->nlocks = rcur_le16(&c);
	if (r->nlocks > J_MAX_LOCKS)
		return -EBADMSG;
	for (i = 0; i < r->nlocks; i++) {
		r->locks[i].offset = rcur_le64(&c);
		r->locks[i].length = rcur_le64(&c);
		r->locks[i].exclusive = rcur_u8(&c);
	}
	if (c.err || !r->persistent || (r->has_lease && r->lease_version != 1 &&
					r->lease_version != 2))
		return -EBADMSG;
	return 0;
}

/* ---- slots ---- */

/* The newer valid half of a slot (a copy of its payload), or -ENOENT. */
static int slot_read(const uint8_t *slot, uint8_t *payload, uint32_t *len, uint64_t *seq,
		     int *half)
{
	uint64_t best = 0;
	int h, which = -1;

	for (h = 0; h < 2; h++) {
		const uint8_t *p = slot + h * J_HALF;
		uint32_t l = get_le32(p + 16);
		uint8_t sum[8];

		if (get_le32(p) != J_MAGIC || get_le16(p + 4) != J_VERSION ||
		    l > J_HALF - J_HDR)
			continue;
		j_sum(p, l, sum);
		if (memcmp(sum, p + 24, 8))
			continue;
		if (which < 0 || get_le64(p + 8) > best) {
			best = get_le64(p + 8);
			which = h;
		}
	}
	if (which < 0)
		return -ENOENT;
	*len = get_le32(slot + which * J_HALF + 16);
	*seq = best;
	*half = which;
	memcpy(payload, slot + which * J_HALF + J_HDR, *len);
	return 0;
}

/*
 * Write payload (len 0: the slot is free) over the older half of slot i:
 * the newer one stays valid until this write is whole.
 */
static int slot_write(struct srv_journal *j, int i, const uint8_t *payload, uint32_t len)
{
	uint8_t half[J_HALF] = { 0 };
	uint64_t seq = ++j->seq;
	int h = !j->newest[i], ret;

	put_le32(half, J_MAGIC);
	put_le16(half + 4, J_VERSION);
	put_le64(half + 8, seq);
	put_le32(half + 16, len);
	if (len)
		memcpy(half + J_HDR, payload, len);
	j_sum(half, len, half + 24);
	ret = j_write(j, (uint64_t)i * J_SLOT + (uint64_t)h * J_HALF, half, J_HALF);
	if (!ret)
		j->newest[i] = (uint8_t)h;
	return ret;
}

int srv_journal_open(struct srv_share *sh, const char *path, struct srv_journal **out,
		     int (*restore)(struct srv_share *sh, const struct srv_jrec *r, void *arg),
		     void *arg)
{
	struct srv_journal *j;
	uint8_t *slot, payload[J_HALF];
	char why[256];
	struct stat st;
	uint32_t len;
	uint64_t seq;
	int i, h, ret, nrec = 0, nbad = 0;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	pthread_mutex_init(&j->lock, NULL);
	snprintf(j->path, sizeof(j->path), "%s", path);
	j->used = calloc(J_SLOTS, 1);
	j->newest = calloc(J_SLOTS, 1);
	slot = malloc(J_SLOT);
	if (!j->used || !j->newest || !slot) {
		ret = -ENOMEM;
		goto out_free;
	}
	j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (j->fd < 0) {
		ret = -errno;
		srv_conf_error("share [%s]: ca journal %s: %s\n", sh->name, path,
			strerror(errno));
		goto out_free;
	}
	if (fstat(j->fd, &st) || (st.st_size != (off_t)J_SLOTS * J_SLOT &&
				  ftruncate(j->fd, (off_t)J_SLOTS * J_SLOT))) {
		ret = -errno;
		srv_conf_error("share [%s]: ca journal %s: %s\n", sh->name, path,
			strerror(errno));
		goto out_close;
	}
	/* durable through libpmem2 where the file system is DAX */
	if (!dax_open(j->fd, &j->dax, why, sizeof(why)))
		pr_notice("share [%s]: ca journal %s: on persistent memory (libpmem2)",
			  sh->name, path);
	else
		pr_notice("share [%s]: ca journal %s: written with RWF_DSYNC (%s)", sh->name,
			  path, why);
	for (i = 0; i < J_SLOTS; i++) {
		if (pread(j->fd, slot, J_SLOT, (off_t)i * J_SLOT) != J_SLOT) {
			ret = -EIO;
			goto out_dax;
		}
		if (slot_read(slot, payload, &len, &seq, &h)) {
			/* never written, or torn or corrupt in both halves */
			if (get_le32(slot) == J_MAGIC || get_le32(slot + J_HALF) == J_MAGIC)
				nbad++;
			continue;
		}
		j->newest[i] = (uint8_t)h;
		if (seq > j->seq)
			j->seq = seq;
		if (!len)
			continue;
		{
			struct srv_jrec *r = malloc(sizeof(*r));

			if (!r) {
				ret = -ENOMEM;
				goto out_dax;
			}
			if (srv_jrec_decode(payload, len, r)) {
				nbad++;
				free(r);
				continue;
			}
			r->slot = i;
			j->used[i] = 1;
			nrec++;
			if (restore && restore(sh, r, arg)) {
				/* it cannot come back: its slot is free again */
				j->used[i] = 0;
				slot_write(j, i, NULL, 0);
			}
			free(r);
		}
	}
	if (nbad)
		pr_warn("share [%s]: ca journal %s: %d slot%s unreadable (torn or corrupt): ignored",
			sh->name, path, nbad, nbad == 1 ? "" : "s");
	if (nrec)
		pr_notice("share [%s]: ca journal: %d persistent open%s to restore", sh->name,
			  nrec, nrec == 1 ? "" : "s");
	free(slot);
	*out = j;
	return 0;
out_dax:
	dax_close(&j->dax);
out_close:
	close(j->fd);
out_free:
	free(slot);
	free(j->used);
	free(j->newest);
	free(j);
	return ret;
}

const char *srv_journal_path(const struct srv_journal *j)
{
	return j->path;
}

void srv_journal_close(struct srv_journal **jp)
{
	struct srv_journal *j = *jp;

	if (!j)
		return;
	dax_close(&j->dax);
	close(j->fd);
	free(j->used);
	free(j->newest);
	pthread_mutex_destroy(&j->lock);
	free(j);
	*jp = NULL;
}

/* Put r in its slot (a new one if r->slot < 0): durable on return. */
int srv_journal_put(struct srv_journal *j, struct srv_jrec *r)
{
	uint8_t payload[J_HALF];
	size_t len;
	int i, ret;

	if (strlen(r->path) > J_MAX_PATH || r->nlocks > J_MAX_LOCKS)
		return -E2BIG;
	len = rec_encode(payload, J_HALF - J_HDR, r);
	if (!len)
		return -E2BIG;
	pthread_mutex_lock(&j->lock);
	if (r->slot < 0) {
		for (i = 0; i < J_SLOTS && j->used[i]; i++)
			;
		if (i == J_SLOTS) {
			pthread_mutex_unlock(&j->lock);
			return -ENOSPC;
		}
		j->used[i] = 1;
		r->slot = i;
	}
	ret = slot_write(j, r->slot, payload, (uint32_t)len);
	pthread_mutex_unlock(&j->lock);
	return ret;
}

void srv_journal_drop(struct srv_journal *j, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&j->lock);
	if (slot_write(j, slot, NULL, 0))
		pr_warn("ca journal %s: slot %d not cleared: %s", j->path, slot,
			strerror(errno));
	else
		j->used[slot] = 0;
	pthread_mutex_unlock(&j->lock);
}
