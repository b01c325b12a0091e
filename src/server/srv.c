// SPDX-License-Identifier: MIT
/*
 * Server lifecycle: one control thread (listeners, signals) and N
 * worker threads, each with its own epoll loop. A connection is handed
 * to a worker once and stays there.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "crypto/crypto.h"
#include "crypto/passdb.h"
#include "proto/fscc.h"
#include "server/server.h"
#include "util/log.h"

#include <systemd/sd-daemon.h>


static void worker_enqueue(struct srv_worker *w, struct srv_adopt a)
{
	uint64_t one = 1;
	struct srv_adopt *q;

	pthread_mutex_lock(&w->q_lock);
	if (w->q_len == w->q_cap) {
		int cap = w->q_cap ? w->q_cap * 2 : 16;

		q = realloc(w->q, sizeof(*q) * (size_t)cap);
		if (!q) {
			pthread_mutex_unlock(&w->q_lock);
			if (a.fd >= 0)
				close(a.fd);
			if (a.pending)
				smbd_pending_reject(a.pending);
			atomic_fetch_sub(&w->srv->nconns, 1);
			return;
		}
		w->q = q;
		w->q_cap = cap;
	}
	w->q[w->q_len++] = a;
	pthread_mutex_unlock(&w->q_lock);
	if (write(w->efd, &one, sizeof(one)) < 0)
		pr_warn("worker %d doorbell: %s", w->idx, strerror(errno));
}

void srv_worker_adopt(struct srv_worker *w, int fd)
{
	worker_enqueue(w, (struct srv_adopt){ .fd = fd });
}

void srv_worker_adopt_rdma(struct srv_worker *w, struct smbd_pending *p)
{
	worker_enqueue(w, (struct srv_adopt){ .fd = -1, .pending = p });
}

void srv_worker_post(struct srv_worker *w, struct srv_work *wk)
{
	uint64_t one = 1;

	wk->next = NULL;
	pthread_mutex_lock(&w->q_lock);
	*w->work_tail = wk;
	w->work_tail = &wk->next;
	pthread_mutex_unlock(&w->q_lock);
	if (write(w->efd, &one, sizeof(one)) < 0)
		pr_warn("worker %d doorbell: %s", w->idx, strerror(errno));
}

/* Work other threads posted: run it here, in order. */
static void worker_run_work(struct srv_worker *w)
{
	struct srv_work *wk, *next;

	pthread_mutex_lock(&w->q_lock);
	wk = w->work;
	w->work = NULL;
	w->work_tail = &w->work;
	pthread_mutex_unlock(&w->q_lock);
	for (; wk; wk = next) {
		next = wk->next;
		wk->fn(w, wk);
	}
}

static void worker_take_new(struct srv_worker *w)
{
	struct srv_adopt a[64];
	struct srv_conn *c;
	uint64_t v;
	int i, n, ret;

	if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_warn("worker %d doorbell read: %s", w->idx, strerror(errno));
	worker_run_work(w);
	for (;;) {
		pthread_mutex_lock(&w->q_lock);
		n = w->q_len < 64 ? w->q_len : 64;
		if (!n) {
			pthread_mutex_unlock(&w->q_lock);
			return;
		}
		memcpy(a, w->q, sizeof(*a) * (size_t)n);
		memmove(w->q, w->q + n, sizeof(*a) * (size_t)(w->q_len - n));
		w->q_len -= n;
		pthread_mutex_unlock(&w->q_lock);
		for (i = 0; i < n; i++) {
			if (atomic_load(&w->srv->stopping)) {
				ret = -ESHUTDOWN;
				if (a[i].fd >= 0)
					close(a[i].fd);
				else
					smbd_pending_reject(a[i].pending);
			} else if (a[i].fd >= 0) {
				ret = srv_conn_new(w, a[i].fd, &c);
				if (ret)
					close(a[i].fd);
			} else {
				/* smbd_accept consumes the pending request */
				ret = srv_conn_new_rdma(w, a[i].pending, &c);
			}
			if (!ret)
				srv_dispatch_attach(c);
			if (ret)
				atomic_fetch_sub(&w->srv->nconns, 1);
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Keep-alives and timeouts of every connection this worker owns. */
static void worker_tick(struct srv_worker *w, uint64_t now)
{
	struct list_head *pos, *tmp;
	int ret;

	list_for_each_safe(pos, tmp, &w->conns) {
		struct srv_conn *c = list_entry(pos, struct srv_conn, worker_link);

		if (!c->x->ops->tick)
			continue;
		ret = c->x->ops->tick(c->x, now);
		if (ret < 0 || c->closing)
			conn_drop(c, ret < 0 ? ret : -ECONNABORTED);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Poll the completion queues of this worker's spinning connections
 * (arm: ask for events first, before a sleep). Returns the completions.
 */
static int worker_poll(struct srv_worker *w, bool arm)
{
	struct list_head *pos, *tmp;
	int ret, got = 0;

	list_for_each_safe(pos, tmp, &w->conns) {
		struct srv_conn *c = list_entry(pos, struct srv_conn, worker_link);

		if (!c->x->spin)
			continue;
		ret = c->x->ops->poll(c->x, arm);
		if (ret < 0 || c->closing)
			conn_drop(c, ret < 0 ? ret : -ECONNABORTED);
		else
			got += ret;
	}
	return got;
}

/*
 * After the events: spin on (epoll with no timeout, and the CQs) while
 * work came less than the budget ago, or always (busy); else arm every
 * CQ and sleep. Returns epoll's timeout for the next round.
 */
static int worker_spin(struct srv_worker *w, bool had_events, uint64_t *last_work)
{
	const struct srv_config *cfg = w->srv->cfg;
	uint64_t now;

	if (cfg->poll_mode == SRV_POLL_EVENT)
		return 1000;
	if (worker_poll(w, false) > 0 || had_events) {
		*last_work = now_ns();
		w->poll_hits++;
		return 0;
	}
	now = now_ns();
	if (cfg->poll_mode == SRV_POLL_BUSY ||
	    now - *last_work < (uint64_t)cfg->poll_spin_us * 1000)
		return 0;
	/* completions that came while arming are work: spin on */
	if (worker_poll(w, true) > 0) {
		*last_work = now;
		w->poll_hits++;
		return 0;
	}
	w->poll_sleeps++;
	return 1000;
}

static void *worker_main(void *arg)
{
	struct srv_worker *w = arg;
	struct epoll_event ev[64];
	uint64_t last_work = 0, last_tick = 0;
	int i, n, ret, timeout = 1000;

	srv_numa_enter(w);
	srv_state_thread_enter();
	srv_async_thread_is(w);
	/* with RDMA, what needs an identity runs there (ident.h) */
	ret = srv_ident_thread_start(&w->ident_thread);
	if (ret) {
		pr_err("worker %d: identity thread: %s", w->idx, strerror(-ret));
		atomic_store(&w->srv->stopping, true);
	}

	while (!atomic_load(&w->srv->stopping)) {
		n = epoll_wait(w->epfd, ev, 64, timeout);
		if (now_ms() - last_tick >= 1000) {
			last_tick = now_ms();
			worker_tick(w, last_tick);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pr_err("worker %d: epoll_wait: %s", w->idx, strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			struct xprt_ev *e = ev[i].data.ptr;
			struct srv_conn *c;
			struct xprt *x;

			if (!e) {
				worker_take_new(w);
				continue;
			}
			if (e == &w->ring_ev) {
				store_ring_reap(w->ring);
				continue;
			}
			if (e == &w->ino_ev) {
				srv_inotify_run(w, true);
				continue;
			}
			x = e->x;
			c = x->upper;
			ret = x->ops->handle_events(x, ev[i].events, e->src);
			if (ret < 0 || c->closing) {
				conn_drop(c, ret < 0 ? ret : -ECONNABORTED);
				/* later events may name the freed xprt */
				n = 0;
			}
		}
		timeout = worker_spin(w, n > 0, &last_work);
	}
	/* stopping: close every connection this worker owns */
	while (!list_empty(&w->conns))
		srv_conn_free(list_entry(w->conns.next, struct srv_conn, worker_link));
	srv_ident_thread_stop(&w->ident_thread);
	srv_state_thread_leave();
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
	w->work = NULL;
	w->work_tail = &w->work;
	/* by share index; pages are touched only by the shares used */
	w->share_io = calloc(SRV_MAX_SHARES, sizeof(*w->share_io));
	if (!w->share_io)
		return -ENOMEM;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0) {
		ret = -errno;
		goto out_io;
	}
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->efd < 0) {
		ret = -errno;
		goto out_close_ep;
	}
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->efd, &ev)) {
		ret = -errno;
		goto out_close_efd;
	}
	if (s->cfg->io_uring) {
		ret = store_ring_new(512, &w->ring);
		if (ret) {
			if (!idx)
				pr_warn("io_uring unavailable (%s): the posix store uses plain syscalls",
					strerror(-ret));
		} else {
			ev.data.ptr = &w->ring_ev;
			if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, store_ring_fd(w->ring), &ev)) {
				ret = -errno;
				goto out_ring;
			}
		}
	}
	ret = srv_inotify_start(w);
	if (ret && !idx)
		pr_warn("inotify unavailable (%s): CHANGE_NOTIFY is not supported",
			strerror(-ret));
	ret = -pthread_create(&w->thread, NULL, worker_main, w);
	if (ret)
		goto out_ino;
	return 0;
out_ino:
	srv_inotify_stop(w);
out_ring:
	store_ring_free(&w->ring);
out_close_efd:
	close(w->efd);
out_close_ep:
	close(w->epfd);
out_io:
	free(w->share_io);
	w->share_io = NULL;
	return ret;
}

void srv_worker_stop(struct srv_worker *w)
{
	uint64_t one = 1;

	if (write(w->efd, &one, sizeof(one)) < 0)
		pr_warn("worker %d doorbell: %s", w->idx, strerror(errno));
	pthread_join(w->thread, NULL);
	/* what was posted after the last loop: its connections are gone */
	worker_run_work(w);
	/* the ring's fixed buffers are the bounce pools: it goes first */
	store_ring_free(&w->ring);
	srv_inotify_stop(w);
	close(w->efd);
	close(w->epfd);
	srv_rbuf_pool_free(w);
	srv_rdev_cleanup(w);
	free(w->q);
	free(w->share_io);
}

/* Decide how sessions act on files; say so, and what a share cannot do. */
static int srv_identities(struct srv *s)
{
	unsigned int needs = 0;
	char why[300];
	int i, ret;

	for (i = 0; i < s->cfg->nlisten; i++) {
		if (!s->cfg->listen[i].rdma)
			continue;
		needs |= SRV_IDENT_RDMA;
		if (s->cfg->listen[i].port < 1024)
			needs |= SRV_IDENT_RDMA_LOW_PORT;
	}
	ret = srv_ident_setup(needs, why, sizeof(why));
	if (ret) {
		pr_err("capabilities: %s", strerror(-ret));
		return ret;
	}
	ret = srv_ident_self(&s->self_ident);
	if (ret)
		return ret;
	pr_notice("identities: %s", why);
	if (srv_ident_switching())
		return 0;
	for (i = 0; i < s->cfg->nshares; i++)
		if (s->cfg->shares[i]->force_ident || s->cfg->shares[i]->force_gid != (gid_t)-1)
			pr_warn("share [%s]: force user/group ignored: rdaxd cannot switch identities",
				s->cfg->shares[i]->name);
	return 0;
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
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	s->control_fd = -1;
	pthread_mutex_init(&s->reload_lock, NULL);
	crypto_random(s->guid, sizeof(s->guid));
	crypto_random(&r, sizeof(r));
	/* session ids: random high bits, counter low bits */
	atomic_init(&s->next_session_id, (r & 0xFFFF000000000000ull) | 1);
	atomic_init(&s->next_volatile, r >> 16 | 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	s->start_time = filetime_from_unix(ts.tv_sec, ts.tv_nsec);
	ret = srv_state_init(s);
	if (ret)
		goto out_free;
	srv_state_thread_enter();
	ret = srv_logon_init(s);
	if (ret)
		goto out_state;
	/* TCP sockets do not mind the capability drop: bind them first */
	for (i = 0; i < cfg->nlisten; i++) {
		struct srv_listen *l = &cfg->listen[i];
		int fd;

		if (l->rdma)
			continue;
		fd = tcp_listen(l->addr, l->port, 512);
		if (fd < 0) {
			ret = fd;
			pr_err("listen tcp://%s:%u: %s", l->addr, l->port, strerror(-fd));
			goto out_close;
		}
		s->listen_fds[s->nlisten_fds++] = fd;
		pr_notice("listening on tcp://%s:%u", l->addr, l->port);
	}
	/* a reload appends shares: the table does not move under workers */
	ret = srv_config_reserve(cfg, SRV_MAX_SHARES);
	if (ret)
		goto out_close;
	if (cfg->nshares > SRV_MAX_SHARES) {
		ret = -E2BIG;
		goto out_close;
	}
	ret = srv_control_start(s);
	if (ret && cfg->control_set)
		goto out_close;
	if (ret)
		pr_warn("no control socket: rdaxctl cannot reach this server");
	/* a file in a share root that may be a user's: while rdaxd may */
	srv_ladder_prepare(s);
	/*
	 * Then the capabilities: RDMA descriptors work only with the
	 * credentials they were opened with, and dropping capabilities
	 * makes new ones. Before any worker: capabilities are per thread.
	 */
	ret = srv_identities(s);
	if (ret)
		goto out_close;
	/* persistent opens of CA shares come back before anyone connects */
	ret = srv_durable_ca_start(s);
	if (ret)
		goto out_close;
	for (i = 0; i < cfg->nlisten; i++) {
		struct srv_listen *l = &cfg->listen[i];

		if (!l->rdma)
			continue;
		ret = smbd_listen(l->addr, l->port, 512, &s->rdma_listen[s->nrdma_listen]);
		if (ret) {
			pr_err("listen rdma://%s:%u: %s%s", l->addr, l->port,
			       strerror(-ret), ret == -ENODEV || ret == -EADDRNOTAVAIL ?
			       " (no RDMA device on that address?)" : "");
			goto out_close;
		}
		s->nrdma_listen++;
		pr_notice("listening on rdma://%s:%u (SMB-Direct)", l->addr, l->port);
	}
	ret = srv_ladder_select(s);
	srv_ladder_done(s);
	if (ret)
		goto out_close;
	for (i = 0; i < cfg->nshares; i++) {
		struct srv_share *sh = cfg->shares[i];

		if (sh->ipc)
			continue;
		pr_notice("share [%s]: store %s (%s)", sh->name,
			  sh->store == SRV_STORE_DAX ? "dax" : "posix", sh->store_why);
		if (sh->rung != MEM_RUNG_NONE)
			pr_notice("share [%s]: rdma registration %s (%s)", sh->name,
				  mem_rung_name(sh->rung), sh->rung_why);
	}
	ret = srv_numa_plan(s);
	if (ret)
		goto out_close;
	s->nworkers = cfg->workers;
	if (s->nworkers <= 0 && s->numa_node >= 0) {
		s->nworkers = s->numa_cpus;
	} else if (s->nworkers <= 0) {
		/* one per CPU this process may run on (numactl, taskset) */
		cpu_set_t set;

		s->nworkers = sched_getaffinity(0, sizeof(set), &set) ? (int)sysconf(_SC_NPROCESSORS_ONLN) :
			      CPU_COUNT(&set);
	}
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
	srv_control_stop(s);
	for (i = 0; i < s->nlisten_fds; i++)
		close(s->listen_fds[i]);
	for (i = 0; i < s->nrdma_listen; i++)
		smbd_listener_close(&s->rdma_listen[i]);
	srv_ladder_done(s);
	srv_durable_ca_stop(s);
	srv_ident_put(&s->self_ident);
	srv_ident_cleanup();
	srv_logon_free(s);
out_state:
	srv_state_thread_leave();
	srv_state_free(s);
out_free:
	free(s);
	return ret;
}

/* An SMB-Direct connection request: hand it to a worker to accept. */
static void rdma_request(void *arg, struct smbd_pending *p)
{
	struct srv *s = arg;

	if (atomic_load(&s->nconns) >= s->cfg->max_connections) {
		log_ratelimited(LOG_WARN, "refusing %s: max connections (%d) reached",
				smbd_pending_peer(p), s->cfg->max_connections);
		smbd_pending_reject(p);
		return;
	}
	atomic_fetch_add(&s->nconns, 1);
	srv_worker_adopt_rdma(&s->workers[s->rr++ % (unsigned int)s->nworkers], p);
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
	struct itimerspec tick = { { 0, 250000000 }, { 0, 250000000 } };
	struct epoll_event ev, evs[16];
	struct signalfd_siginfo si;
	sigset_t mask;
	int ep, sfd, tfd, i, n, ret = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
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
	for (i = 0; i < s->nrdma_listen; i++) {
		ev.data.fd = smbd_listener_fd(s->rdma_listen[i]);
		epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	}
	/* break timeouts (and durable handle expiry): a tick every 250 ms */
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (tfd < 0) {
		ret = -errno;
		goto out_close_ep;
	}
	timerfd_settime(tfd, 0, &tick, NULL);
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ret = srv_control_run(s);
	if (ret)
		goto out_close_tfd;
	pr_notice("rdaxd %s ready: %d worker%s, %d share%s", RDAX_VERSION,
		  s->nworkers, s->nworkers == 1 ? "" : "s", s->cfg->nshares - 1,
		  s->cfg->nshares == 2 ? "" : "s");
	sd_notifyf(0, "READY=1\nSTATUS=serving %d share%s, %d worker%s\nMAINPID=%d",
		   s->cfg->nshares - 1, s->cfg->nshares == 2 ? "" : "s",
		   s->nworkers, s->nworkers == 1 ? "" : "s", (int)getpid());
	while (!atomic_load(&s->stopping)) {
		n = epoll_wait(ep, evs, 16, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		for (i = 0; i < n; i++) {
			int k, fd = evs[i].data.fd;

			for (k = 0; k < s->nrdma_listen; k++)
				if (fd == smbd_listener_fd(s->rdma_listen[k]))
					break;
			if (k < s->nrdma_listen) {
				smbd_listener_process(s->rdma_listen[k], rdma_request, s);
				continue;
			}
			if (fd == tfd) {
				uint64_t ticks;

				if (read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					pr_warn("timer: %s", strerror(errno));
				srv_oplock_timer(s);
				srv_durable_timer(s);
				continue;
			}
			if (fd != sfd) {
				srv_accept(s, fd);
				continue;
			}
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					pr_notice("signal %u: shutting down", si.ssi_signo);
					atomic_store(&s->stopping, true);
				} else if (si.ssi_signo == SIGUSR1) {
					srv_status_log(s);
				} else if (si.ssi_signo == SIGHUP) {
					char msg[1024];

					pr_notice("SIGHUP: reloading the configuration");
					srv_reload(s, msg, sizeof(msg));
				}
			}
		}
	}
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	atomic_store(&s->stopping, true);
	srv_control_stop(s);
out_close_tfd:
	atomic_store(&s->stopping, true);
	for (i = 0; i < s->nworkers; i++)
		srv_worker_stop(&s->workers[i]);
	close(tfd);
out_close_ep:
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
	srv_control_stop(s);
	pthread_mutex_destroy(&s->reload_lock);
	for (i = 0; i < s->nlisten_fds; i++)
		close(s->listen_fds[i]);
	for (i = 0; i < s->nrdma_listen; i++)
		smbd_listener_close(&s->rdma_listen[i]);
	srv_ident_put(&s->self_ident);
	srv_ident_cleanup();
	srv_logon_free(s);
	srv_durable_free(s);
	srv_durable_ca_stop(s);
	srv_state_thread_leave();
	srv_state_free(s);
	free(s->workers);
	free(s);
	*sp = NULL;
}
