// SPDX-License-Identifier: MIT
/*
 * Connections: one per transport connection, owned by one worker for
 * life. It holds the credit window ([MS-SMB2] 3.3.1.1), what NEGOTIATE
 * settled, its channels (the sessions it carries) and its counters.
 * What a session owns lives on in the server-wide tables when the
 * connection goes, as long as another channel carries the session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"
#include "util/log.h"

/* ---- credits [MS-SMB2] 3.3.1.1, 3.3.5.2.3 ---- */

static bool seq_test(struct srv_conn *c, uint64_t id)
{
	uint32_t b = (uint32_t)(id % SRV_MAX_CREDITS);

	return c->seq_used[b / 8] & (1u << (b % 8));
}

static void seq_set(struct srv_conn *c, uint64_t id, bool v)
{
	uint32_t b = (uint32_t)(id % SRV_MAX_CREDITS);

	if (v)
		c->seq_used[b / 8] |= (uint8_t)(1u << (b % 8));
	else
		c->seq_used[b / 8] &= (uint8_t)~(1u << (b % 8));
}

int srv_conn_credit_consume(struct srv_conn *c, uint64_t mid, uint32_t charge)
{
	uint32_t i;

	if (mid < c->seq_low || mid - c->seq_low >= c->seq_range ||
	    charge > c->seq_range - (mid - c->seq_low))
		return -ERANGE;
	for (i = 0; i < charge; i++)
		if (seq_test(c, mid + i))
			return -EALREADY;
	for (i = 0; i < charge; i++)
		seq_set(c, mid + i, true);
	c->seq_inflight += charge;
	while (c->seq_range && seq_test(c, c->seq_low)) {
		seq_set(c, c->seq_low, false);
		c->seq_low++;
		c->seq_range--;
		c->seq_inflight--;
	}
	return 0;
}

uint16_t srv_conn_credit_grant(struct srv_conn *c, uint16_t requested)
{
	uint32_t avail = c->seq_range - c->seq_inflight;
	uint32_t room = SRV_MAX_CREDITS - c->seq_range;
	uint32_t grant = requested ? requested : 1;

	if (grant > room)
		grant = room;
	if (avail + grant == 0 && room)
		grant = 1;
	c->seq_range += grant;
	return (uint16_t)grant;
}

int srv_conn_attach(struct srv_worker *w, struct xprt *x, struct srv_conn **out)
{
	struct srv_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->x = x;
	x->upper = c;
	x->max_msg = x->rdma ? x->max_msg : SRV_MAX_MSG_PREAUTH;
	/* whole messages in time until a session is set up (slowloris) */
	x->rx_timeout_ms = w->srv->cfg->receive_timeout * 1000;
	x->rx_strict = true;
	c->srv = w->srv;
	c->w = w;
	c->id = atomic_fetch_add(&w->srv->next_conn_id, 1) + 1;
	c->seq_low = 0;
	c->seq_range = 1;
	list_init(&c->channels);
	list_init(&c->asyncs);
	list_init(&c->client_link);
	list_add_tail(&c->worker_link, &w->conns);
	w->nconns++;
	pr_info("%s: connected (worker %d, %s)", x->peer, w->idx, x->ops->name);
	*out = c;
	return 0;
}

int srv_conn_new(struct srv_worker *w, int fd, struct srv_conn **out)
{
	struct xprt *x;
	int ret;

	ret = tcp_xprt_new(fd, w->epfd, &x);
	if (ret)
		return ret;
	ret = srv_conn_attach(w, x, out);
	if (ret) {
		/* the caller closes fd */
		x->fd = -1;
		x->ops->destroy(x);
	}
	return ret;
}

void srv_conn_free(struct srv_conn *c)
{
	/* RDMA I/O in flight completes (flushed) while opens still exist */
	c->closing = true;
	/* requests waiting for breaks or locks end with it */
	srv_async_conn_gone(c);
	srv_rdev_conn_gone(c);
	/* file I/O of its requests on the worker's ring finishes first */
	while (c->store_active > 0 && c->w->ring)
		if (store_ring_wait(c->w->ring) < 0)
			break;
	/* a session lives on while another connection carries it */
	while (!list_empty(&c->channels))
		srv_channel_drop(list_entry(c->channels.next, struct srv_channel,
					    conn_link));
	/*
	 * Its client's lease breaks come here until its durable opens are
	 * disconnected: none goes to another connection in between.
	 */
	srv_client_del(c);
	srv_conn_stats_add(&c->w->gone_tr[c->x->rdma], &c->stats);
	c->x->ops->destroy(c->x);
	srv_rio_pool_free(c);
	crypto_kept_free(&c->kept);
	free(c->rx_spare);
	explicit_bzero(c->gone, sizeof(c->gone));
	srv_conn_stats_add(&c->w->gone, &c->stats);
	list_del(&c->worker_link);
	c->w->nconns--;
	atomic_fetch_sub(&c->srv->nconns, 1);
	free(c);
}

