// SPDX-License-Identifier: MIT
/*
 * Server lifecycle: one control thread (listeners, signals) and N
 * worker threads, each with its own epoll loop. A connection is handed
 * to a worker once and stays there.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crypto/crypto.h"
#include "crypto/passdb.h"
#include "proto/fscc.h"
#include "server/server.h"
#include "util/log.h"

#define RB_HEADROOM (XPRT_HEADROOM + SMB2_TRANSFORM_SIZE)
#define RB_POOL_MAX 8
#define RB_KEEP_MAX (16u << 20)

static void rbuf_release(struct xbuf *b)
{
	srv_rbuf_put(container_of(b, struct srv_rbuf, xb));
}

struct srv_rbuf *srv_rbuf_get(struct srv_worker *w, size_t want)
{
	struct srv_rbuf *rb = w->rb_free;

	if (rb) {
		w->rb_free = rb->next_free;
		w->rb_free_count--;
	} else {
		rb = calloc(1, sizeof(*rb));
		if (!rb)
			return NULL;
		rb->w = w;
		rb->xb.release = rbuf_release;
	}
	rb->len = 0;
	rb->next_free = NULL;
	if (srv_rbuf_reserve(rb, want)) {
		free(rb->mem);
		free(rb);
		return NULL;
	}
	return rb;
}

int srv_rbuf_reserve(struct srv_rbuf *rb, size_t need)
{
	size_t cap = rb->cap ? rb->cap : 4096;
	uint8_t *p;

	if (need <= rb->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(rb->mem, cap + RB_HEADROOM);
	if (!p)
		return -ENOMEM;
	rb->mem = p;
	rb->cap = cap;
	return 0;
}

void srv_rbuf_put(struct srv_rbuf *rb)
{
	struct srv_worker *w = rb->w;

	if (w->rb_free_count >= RB_POOL_MAX || rb->cap > RB_KEEP_MAX) {
		free(rb->mem);
		free(rb);
		return;
	}
	rb->next_free = w->rb_free;
	w->rb_free = rb;
	w->rb_free_count++;
}

static void rbuf_pool_free(struct srv_worker *w)
{
	struct srv_rbuf *rb;

	while ((rb = w->rb_free)) {
		w->rb_free = rb->next_free;
		free(rb->mem);
		free(rb);
	}
	w->rb_free_count = 0;
}

void srv_worker_adopt(struct srv_worker *w, int fd)
{
	uint64_t one = 1;
	int *q;

	pthread_mutex_lock(&w->q_lock);
	if (w->q_len == w->q_cap) {
		int cap = w->q_cap ? w->q_cap * 2 : 16;

		q = realloc(w->q_fds, sizeof(int) * (size_t)cap);
		if (!q) {
			pthread_mutex_unlock(&w->q_lock);
			close(fd);
			return;
		}
		w->q_fds = q;
		w->q_cap = cap;
	}
	w->q_fds[w->q_len++] = fd;
	pthread_mutex_unlock(&w->q_lock);
	if (write(w->efd, &one, sizeof(one)) < 0)
		pr_warn("worker %d doorbell: %s", w->idx, strerror(errno));
}

static void worker_take_new(struct srv_worker *w)
{
	struct srv_conn *c;
	uint64_t v;
	int i, n, fds[64];

	if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_warn("worker %d doorbell read: %s", w->idx, strerror(errno));
	for (;;) {
		pthread_mutex_lock(&w->q_lock);
		n = w->q_len < 64 ? w->q_len : 64;
		memcpy(fds, w->q_fds, sizeof(int) * (size_t)n);
		memmove(w->q_fds, w->q_fds + n, sizeof(int) * (size_t)(w->q_len - n));
		w->q_len -= n;
		pthread_mutex_unlock(&w->q_lock);
		if (!n)
			return;
		for (i = 0; i < n; i++) {
			if (atomic_load(&w->srv->stopping) ||
			    srv_conn_new(w, fds[i], &c)) {
				close(fds[i]);
				atomic_fetch_sub(&w->srv->nconns, 1);
			}
		}
	}
}

static void conn_drop(struct srv_conn *c, int err)
{
	if (err == -ECONNRESET)
		pr_info("%s: connection closed by peer", c->x->peer);
	else
		pr_notice("%s: dropping connection: %s", c->x->peer,
			  strerror(err < 0 ? -err : err));
	srv_conn_free(c);
}

static void *worker_main(void *arg)
{
	struct srv_worker *w = arg;
	struct epoll_event ev[64];
	int i, n, ret;

	while (!atomic_load(&w->srv->stopping)) {
		n = epoll_wait(w->epfd, ev, 64, 1000);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("worker %d: epoll_wait: %s", w->idx, strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			struct xprt *x = ev[i].data.ptr;
			struct srv_conn *c;

			if (!x) {
				worker_take_new(w);
				continue;
			}
			c = x->upper;
			ret = x->ops->handle_events(x, ev[i].events);
			if (ret < 0 || c->closing) {
				conn_drop(c, ret < 0 ? ret : -ECONNABORTED);
				/* later events may name the freed xprt */
				n = 0;
			}
		}
	}
	/* stopping: close every connection this worker owns */
	while (!list_empty(&w->conns))
		srv_conn_free(list_entry(w->conns.next, struct srv_conn, worker_link));
	return NULL;
}

int srv_worker_start(struct srv *s, struct srv_worker *w, int idx)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int ret;

	w->srv = s;
	w->idx = idx;
	list_init(&w->conns);
	pthread_mutex_init(&w->q_lock, NULL);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		ret = -errno;
		goto out_close_ep;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev)) {
		ret = -errno;
		goto out_close_efd;
	}
	ret = -pthread_create(&w->thread, NULL, worker_main, w);
	if (ret)
		goto out_close_efd;
	return 0;
out_close_efd:
	close(w->efd);
out_close_ep:
	close(w->epfd);
	return ret;
}

void srv_worker_stop(struct srv_worker *w)
{
	uint64_t one = 1;

	if (write(w->efd, &one, sizeof(one)) < 0)
		pr_warn("worker %d doorbell: %s", w->idx, strerror(errno));
	pthread_join(w->thread, NULL);
	close(w->efd);
	close(w->epfd);
	rbuf_pool_free(w);
	free(w->q_fds);
}

int srv_new(struct srv_config *cfg, struct srv **out)
{
	struct srv *s;
	struct timespec ts;
	sigset_t mask;
	uint64_t r;
	int i, ret;

	ret = crypto_init();
	if (ret) {
		pr_err("crypto: cannot load OpenSSL providers: %s", strerror(-ret));
		return ret;
	}
	/* signals go to the control thread's signalfd, never to workers */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	crypto_random(s->guid, sizeof(s->guid));
	crypto_random(&r, sizeof(r));
	/* session ids: random high bits, counter low bits */
	atomic_init(&s->next_session_id, (r & 0xFFFF000000000000ull) | 1);
	atomic_init(&s->next_volatile, r >> 16 | 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->start_time = filetime_from_unix(ts.tv_sec, ts.tv_nsec);
	if (cfg->passdb_path[0]) {
		ret = passdb_load(cfg->passdb_path, &s->passdb);
		if (ret) {
			if (ret == -EPERM)
				pr_err("passdb %s: must not be readable or writable by group or others (chmod 600)",
				       cfg->passdb_path);
			else
				pr_err("passdb %s: %s", cfg->passdb_path, strerror(-ret));
			goto out_free;
		}
	}
	for (i = 0; i < cfg->nlisten; i++) {
		struct srv_listen *l = &cfg->listen[i];
		int fd;

		if (l->rdma) {
			pr_err("listen rdma://%s:%u: SMB-Direct is not built into this rdaxd",
			       l->addr, l->port);
			ret = -EPROTONOSUPPORT;
			goto out_close;
		}
		fd = tcp_listen(l->addr, l->port, 512);
		if (fd < 0) {
			ret = fd;
			pr_err("listen tcp://%s:%u: %s", l->addr, l->port, strerror(-fd));
			goto out_close;
		}
		s->listen_fds[s->nlisten_fds++] = fd;
		pr_notice("listening on tcp://%s:%u", l->addr, l->port);
	}
	s->nworkers = cfg->workers > 0 ? cfg->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (s->nworkers < 1)
		s->nworkers = 1;
	s->workers = calloc((size_t)s->nworkers, sizeof(*s->workers));
	if (!s->workers) {
		ret = -ENOMEM;
		goto out_close;
	}
	for (i = 0; i < s->nworkers; i++) {
		ret = srv_worker_start(s, &s->workers[i], i);
		if (ret) {
			atomic_store(&s->stopping, true);
			while (i--)
				srv_worker_stop(&s->workers[i]);
			goto out_free_workers;
		}
	}
	*out = s;
	return 0;
out_free_workers:
	free(s->workers);
out_close:
	for (i = 0; i < s->nlisten_fds; i++)
		close(s->listen_fds[i]);
	passdb_free(&s->passdb);
out_free:
	free(s);
	return ret;
}

static void srv_accept(struct srv *s, int lfd)
{
	struct srv_worker *w;
	int fd;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_ratelimited(LOG_WARN, "accept: %s", strerror(errno));
			return;
		}
		if (atomic_load(&s->nconns) >= s->cfg->max_connections) {
			log_ratelimited(LOG_WARN, "refusing connection: max connections (%d) reached",
					s->cfg->max_connections);
			close(fd);
			continue;
		}
		atomic_fetch_add(&s->nconns, 1);
		w = &s->workers[s->rr++ % (unsigned int)s->nworkers];
		srv_worker_adopt(w, fd);
	}
}

int srv_run(struct srv *s)
{
	struct epoll_event ev, evs[16];
	struct signalfd_siginfo si;
	sigset_t mask;
	int ep, sfd, i, n, ret = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return -errno;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		ret = -errno;
		goto out_close_sfd;
	}
	ev.events = EPOLLIN;
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	for (i = 0; i < s->nlisten_fds; i++) {
		ev.data.fd = s->listen_fds[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, s->listen_fds[i], &ev);
	}
	pr_notice("rdaxd %s ready: %d worker%s, %d share%s", RDAX_VERSION,
		  s->nworkers, s->nworkers == 1 ? "" : "s", s->cfg->nshares - 1,
		  s->cfg->nshares == 2 ? "" : "s");
	while (!atomic_load(&s->stopping)) {
		n = epoll_wait(ep, evs, 16, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd != sfd) {
				srv_accept(s, evs[i].data.fd);
				continue;
			}
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					pr_notice("signal %u: shutting down", si.ssi_signo);
					atomic_store(&s->stopping, true);
				} else if (si.ssi_signo == SIGHUP) {
					pr_notice("SIGHUP: configuration reload is not supported yet");
				}
			}
		}
	}
	atomic_store(&s->stopping, true);
	for (i = 0; i < s->nworkers; i++)
		srv_worker_stop(&s->workers[i]);
	close(ep);
out_close_sfd:
	close(sfd);
	return ret;
}

void srv_free(struct srv **sp)
{
	struct srv *s = *sp;
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nlisten_fds; i++)
		close(s->listen_fds[i]);
	passdb_free(&s->passdb);
	free(s->workers);
	free(s);
	*sp = NULL;
}
