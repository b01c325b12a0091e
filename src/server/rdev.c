// SPDX-License-Identifier: MIT
/*
 * Per worker and RDMA device: one protection domain, the registered
 * bounce pool (and its place in the worker's io_uring as fixed buffers),
 * the MRs of the zero-copy rungs, and the requests waiting for bounce
 * space. smbd_accept asks for the PD of the device a connection came on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "util/log.h"

#define BOUNCE_UNIT (64u * 1024)

static struct srv_rdev *rdev_find(struct srv_worker *w, struct ibv_context *verbs)
{
	int i;

	for (i = 0; i < w->nrdev; i++)
		if (w->rdev[i].verbs == verbs)
			return &w->rdev[i];
	return NULL;
}

/*
 * The zero-copy rungs: a device share's whole mapping is one MR per
 * worker PD (direct); an on-demand-paging MR over the address space
 * covers file mappings as they come and go (odp). Failures leave the
 * share on the bounce path for this worker, with a warning.
 */
static void rdev_share_mrs(struct srv_worker *w, struct srv_rdev *d)
{
	struct srv_config *cfg = w->srv->cfg;
	struct ibv_mr *odp = NULL;
	char msg[256] = "";
	int i, ret;

	d->share_mr = calloc((size_t)cfg->nshares, sizeof(*d->share_mr));
	if (!d->share_mr)
		return;
	d->nshare_mr = cfg->nshares;
	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];
		size_t len;
		void *base;

		if (sh->rung == MEM_RUNG_DIRECT && sh->devdax) {
			base = dax_base(sh->devdax, &len);
			ret = mem_reg(d->pd, base, len, MEM_ACCESS_LOCAL_WRITE, &d->share_mr[i],
				      msg, sizeof(msg));
			if (ret)
				pr_warn("worker %d: [%s] registering the device mapping: %s; using the bounce pool",
					w->idx, sh->name, msg[0] ? msg : strerror(-ret));
		} else if (sh->rung == MEM_RUNG_ODP) {
			ret = odp ? 0 : mem_reg_odp(d->pd, &odp);
			if (ret)
				pr_warn("worker %d: [%s] implicit ODP MR: %s; using the bounce pool",
					w->idx, sh->name, strerror(-ret));
			d->share_mr[i] = odp;
		}
	}
}

/* smbd_accept asks for the PD of a device: one per worker and device. */
static struct ibv_pd *pd_for(void *arg, struct ibv_context *verbs)
{
	struct srv_worker *w = arg;
	struct srv_rdev *d = rdev_find(w, verbs);
	char msg[256] = "";
	int ret;

	if (d)
		return d->pd;
	if (w->nrdev == SRV_MAX_RDEV)
		return NULL;
	d = &w->rdev[w->nrdev];
	d->pd = smbd_pd_alloc(verbs);
	if (!d->pd)
		return NULL;
	d->verbs = verbs;
	list_init(&d->waiters);
	ret = mem_pool_new(d->pd, w->srv->cfg->bounce_size, BOUNCE_UNIT,
			   MEM_ACCESS_LOCAL_WRITE, &d->bounce, msg, sizeof(msg));
	if (ret)
		pr_err("worker %d: RDMA bounce pool of %zu MiB on %s: %s", w->idx,
		       w->srv->cfg->bounce_size >> 20,
		       smbd_dev_name(verbs), msg[0] ? msg : strerror(-ret));
	else
		pr_info("worker %d: %zu MiB bounce pool registered on %s", w->idx,
			w->srv->cfg->bounce_size >> 20,
			smbd_dev_name(verbs));
	rdev_share_mrs(w, d);
	if (d->bounce && w->ring) {
		ret = store_ring_set_buffer(w->ring, w->nrdev, mem_pool_base(d->bounce),
					    mem_pool_size(d->bounce));
		if (ret)
			pr_warn("worker %d: io_uring fixed buffer: %s", w->idx, strerror(-ret));
	}
	w->nrdev++;
	return d->pd;
}

void srv_rdev_cleanup(struct srv_worker *w)
{
	int i;

	for (i = 0; i < w->nrdev; i++) {
		struct srv_rdev *d = &w->rdev[i];
		struct ibv_mr *odp = NULL;
		int j;

		for (j = 0; j < d->nshare_mr; j++) {
			struct ibv_mr *mr = d->share_mr[j];

			if (!mr || mr == odp)
				continue;
			if (w->srv->cfg->shares[j]->rung == MEM_RUNG_ODP)
				odp = mr;
			mem_dereg(mr);
		}
		free(d->share_mr);
		mem_pool_free(&d->bounce);
		smbd_pd_free(d->pd);
	}
	w->nrdev = 0;
}

int srv_conn_new_rdma(struct srv_worker *w, struct smbd_pending *p,
		      struct srv_conn **out)
{
	char peer[64];
	struct xprt *x;
	int ret;

	snprintf(peer, sizeof(peer), "%s", smbd_pending_peer(p));
	ret = smbd_accept(p, w->epfd, &w->srv->cfg->smbd, pd_for, w, &x);
	if (ret) {
		log_ratelimited(LOG_WARN, "%s: SMB-Direct accept failed: %s", peer,
				strerror(-ret));
		return ret;
	}
	ret = srv_conn_attach(w, x, out);
	if (ret) {
		x->ops->destroy(x);
		return ret;
	}
	(*out)->rdev = rdev_find(w, smbd_verbs(x));
	/* the worker polls its completion queue (worker_spin) */
	x->spin = w->srv->cfg->poll_mode != SRV_POLL_EVENT;
	return 0;
}

/* A connection is going away: drop its requests still waiting for space. */
void srv_rdev_conn_gone(struct srv_conn *c)
{
	struct list_head *pos, *tmp;

	if (!c->rdev)
		return;
	list_for_each_safe(pos, tmp, &c->rdev->waiters) {
		struct srv_rio *io = list_entry(pos, struct srv_rio, wait_link);

		if (io->c != c)
			continue;
		list_del(&io->wait_link);
		io->cancel(io);
	}
}

