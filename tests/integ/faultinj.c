// SPDX-License-Identifier: MIT
/*
 * Fault injection for a real process (LD_PRELOAD): allocations that fail
 * and socket calls that fail or come up short, switched on and off while
 * the process runs. Built as build/tests/faultinj.so.
 *
 * The control file named by FAULTINJ_CTL is read every 50 ms when it
 * changes; its words (anything else turns everything off):
 *
 *   malloc=N       every Nth allocation fails (malloc, calloc, realloc,
 *                  posix_memalign, aligned_alloc: ENOMEM, NULL)
 *   malloc_p=P     or each one with probability P per million
 *   net=N          every Nth socket call fails (read, write, readv,
 *                  writev, recv, recvfrom, recvmsg, send, sendto, sendmsg
 *                  on a socket)
 *   net_p=P        or each one with probability P per million
 *   errors=LIST    what a failing socket call does, in turn: EIO,
 *                  ECONNRESET, EAGAIN, EPIPE, EINTR, or "short" (the
 *                  call moves only part of its bytes); default all of them
 *   threads=all    where faults happen: every thread (default), or
 *   threads=workers   every thread but the process's first (a server's
 *                  control thread: start-up, accept, signals)
 *   seed=S         random seed (default 1)
 *
 * Every 50 ms, when they changed, the counts go to FAULTINJ_CTL.stats:
 * "malloc_calls N malloc_failed N net_calls N net_failed N net_short N".
 * The shim's own thread blocks every signal, so the host's signal
 * handling (signalfd) is unchanged.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum fault { F_EIO, F_ECONNRESET, F_EAGAIN, F_EPIPE, F_EINTR, F_SHORT, F_N };

static const struct { const char *name; int err; } fault_names[F_N] = {
	[F_EIO] = { "EIO", EIO },
	[F_ECONNRESET] = { "ECONNRESET", ECONNRESET },
	[F_EAGAIN] = { "EAGAIN", EAGAIN },
	[F_EPIPE] = { "EPIPE", EPIPE },
	[F_EINTR] = { "EINTR", EINTR },
	[F_SHORT] = { "short", 0 },
};

/* the active settings; written by the control thread only */
static atomic_uint malloc_every, malloc_ppm, net_every, net_ppm;
static atomic_bool workers_only;
static atomic_uint fault_mask = (1u << F_N) - 1;
static atomic_uint_fast64_t rnd_state = 1;

static atomic_uint_fast64_t n_malloc, n_malloc_failed, n_net, n_net_failed,
	n_net_short;
static atomic_uint fault_turn;
static pid_t main_tid;
static pthread_t ctl_thread;
static __thread bool in_shim;	/* our own calls and the control thread */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);

/*
 * dlsym() may allocate before real_malloc is known: those requests come
 * from a static arena and are never freed.
 */
static _Alignas(16) uint8_t boot_arena[64 * 1024];
static atomic_size_t boot_used;
static atomic_bool resolving;

static void *boot_alloc(size_t n)
{
	size_t off = atomic_fetch_add(&boot_used, (n + 15) & ~(size_t)15);

	if (off + n > sizeof(boot_arena))
		return NULL;
	return boot_arena + off;
}

static bool is_boot(const void *p)
{
	return (const uint8_t *)p >= boot_arena &&
	       (const uint8_t *)p < boot_arena + sizeof(boot_arena);
}

static void resolve(void)
{
	if (real_malloc || atomic_exchange(&resolving, true))
		return;
#define R(name) real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name)
	R(calloc);
	R(realloc);
	R(free);
	R(posix_memalign);
	R(aligned_alloc);
	R(read);
	R(write);
	R(readv);
	R(writev);
	R(recv);
	R(recvfrom);
	R(recvmsg);
	R(send);
	R(sendto);
	R(sendmsg);
	R(malloc);
#undef R
}

static uint64_t rnd(void)
{
	uint64_t x = atomic_load(&rnd_state), y;

	do {
		y = x;
		y ^= y << 13;
		y ^= y >> 7;
		y ^= y << 17;
	} while (!atomic_compare_exchange_weak(&rnd_state, &x, y));
	return y;
}

static bool target_thread(void)
{
	if (in_shim)
		return false;
	if (atomic_load(&workers_only) && syscall(SYS_gettid) == main_tid)
		return false;
	return true;
}

static bool decide(atomic_uint_fast64_t *calls, unsigned int every,
		   unsigned int ppm)
{
	uint64_t n = atomic_fetch_add(calls, 1) + 1;

	if (every)
		return n % every == 0;
	return ppm && rnd() % 1000000 < ppm;
}

static bool malloc_fails(void)
{
	unsigned int every = atomic_load(&malloc_every), ppm = atomic_load(&malloc_ppm);

	if ((!every && !ppm) || !target_thread())
		return false;
	if (!decide(&n_malloc, every, ppm))
		return false;
	atomic_fetch_add(&n_malloc_failed, 1);
	return true;
}

API void *malloc(size_t n)
{
	if (!real_malloc) {
		resolve();
		if (!real_malloc)
			return boot_alloc(n);
	}
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_malloc(n);
}

API void *calloc(size_t a, size_t b)
{
	if (!real_calloc) {
		resolve();
		if (!real_calloc)
			return boot_alloc(a * b);	/* zeroed: static */
	}
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_calloc(a, b);
}

API void *realloc(void *p, size_t n)
{
	if (!real_realloc)
		resolve();
	if (is_boot(p)) {
		void *q = malloc(n);

		if (q)
			memcpy(q, p, n);	/* the arena outlives any read */
		return q;
	}
	if (n && malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_realloc(p, n);
}

API void free(void *p)
{
	if (!p || is_boot(p))
		return;
	if (!real_free)
		resolve();
	real_free(p);
}

API int posix_memalign(void **out, size_t align, size_t n)
{
	if (!real_posix_memalign)
		resolve();
	if (malloc_fails())
		return ENOMEM;
	return real_posix_memalign(out, align, n);
}

API void *aligned_alloc(size_t align, size_t n)
{
	if (!real_aligned_alloc)
		resolve();
	if (malloc_fails()) {
		errno = ENOMEM;
		return NULL;
	}
	return real_aligned_alloc(align, n);
}

/* ---- sockets ---- */

static bool is_socket(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISSOCK(st.st_mode);
}

/* F_N: no fault; else the fault to inject now */
static enum fault net_fault(int fd)
{
	unsigned int every = atomic_load(&net_every), ppm = atomic_load(&net_ppm);
	unsigned int mask = atomic_load(&fault_mask), i;
	enum fault f;

	if ((!every && !ppm) || !mask || !target_thread() || !is_socket(fd))
		return F_N;
	if (!decide(&n_net, every, ppm))
		return F_N;
	/* the next fault kind of the list, in turn */
	for (i = 0; i < F_N; i++) {
		f = (enum fault)(atomic_fetch_add(&fault_turn, 1) % F_N);
		if (mask & (1u << f))
			break;
	}
	if (f == F_SHORT)
		atomic_fetch_add(&n_net_short, 1);
	else
		atomic_fetch_add(&n_net_failed, 1);
	return f;
}

/* For a short transfer: how many of n bytes go (1 .. n-1), or n. */
static size_t short_len(size_t n)
{
	return n > 1 ? 1 + (size_t)(rnd() % (n - 1)) : n;
}

/* Cut an iovec array down to at most len bytes (into v, at most 64). */
static int cut_iov(const struct iovec *iov, int cnt, size_t len,
		   struct iovec *v)
{
	int i, n = 0;

	for (i = 0; i < cnt && n < 64 && len; i++) {
		v[n] = iov[i];
		if (v[n].iov_len > len)
			v[n].iov_len = len;
		len -= v[n].iov_len;
		n++;
	}
	return n;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	int i;

	for (i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

#define FAIL_OR(f)						\
	do {							\
		if ((f) != F_N && (f) != F_SHORT) {		\
			errno = fault_names[f].err;		\
			return -1;				\
		}						\
	} while (0)

API ssize_t read(int fd, void *buf, size_t n)
{
	enum fault f;

	if (!real_read)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_read(fd, buf, f == F_SHORT ? short_len(n) : n);
}

API ssize_t write(int fd, const void *buf, size_t n)
{
	enum fault f;

	if (!real_write)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_write(fd, buf, f == F_SHORT ? short_len(n) : n);
}

API ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	enum fault f;

	if (!real_recv)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_recv(fd, buf, f == F_SHORT ? short_len(n) : n, flags);
}

API ssize_t recvfrom(int fd, void *buf, size_t n, int flags,
		     struct sockaddr *a, socklen_t *al)
{
	enum fault f;

	if (!real_recvfrom)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_recvfrom(fd, buf, f == F_SHORT ? short_len(n) : n, flags, a, al);
}

API ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	enum fault f;

	if (!real_send)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_send(fd, buf, f == F_SHORT ? short_len(n) : n, flags);
}

API ssize_t sendto(int fd, const void *buf, size_t n, int flags,
		   const struct sockaddr *a, socklen_t al)
{
	enum fault f;

	if (!real_sendto)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	return real_sendto(fd, buf, f == F_SHORT ? short_len(n) : n, flags, a, al);
}

API ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct iovec v[64];
	enum fault f;

	if (!real_readv)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	if (f == F_SHORT)
		return real_readv(fd, v, cut_iov(iov, cnt, short_len(iov_total(iov, cnt)), v));
	return real_readv(fd, iov, cnt);
}

API ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct iovec v[64];
	enum fault f;

	if (!real_writev)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	if (f == F_SHORT)
		return real_writev(fd, v, cut_iov(iov, cnt, short_len(iov_total(iov, cnt)), v));
	return real_writev(fd, iov, cnt);
}

API ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	struct msghdr c;
	struct iovec v[64];
	enum fault f;

	if (!real_recvmsg)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	if (f == F_SHORT) {
		c = *m;
		c.msg_iov = v;
		c.msg_iovlen = (size_t)cut_iov(m->msg_iov, (int)m->msg_iovlen,
					       short_len(iov_total(m->msg_iov,
								   (int)m->msg_iovlen)), v);
		return real_recvmsg(fd, &c, flags);
	}
	return real_recvmsg(fd, m, flags);
}

API ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct msghdr c;
	struct iovec v[64];
	enum fault f;

	if (!real_sendmsg)
		resolve();
	f = net_fault(fd);
	FAIL_OR(f);
	if (f == F_SHORT) {
		c = *m;
		c.msg_iov = v;
		c.msg_iovlen = (size_t)cut_iov(m->msg_iov, (int)m->msg_iovlen,
					       short_len(iov_total(m->msg_iov,
								   (int)m->msg_iovlen)), v);
		return real_sendmsg(fd, &c, flags);
	}
	return real_sendmsg(fd, m, flags);
}

/* ---- control ---- */

static void apply(char *text)
{
	unsigned int me = 0, mp = 0, ne = 0, np = 0, mask = (1u << F_N) - 1;
	bool workers = false;
	char *tok, *save = NULL;

	for (tok = strtok_r(text, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *v = strchr(tok, '=');
		unsigned long n;

		if (!v)
			continue;
		*v++ = 0;
		n = strtoul(v, NULL, 0);
		if (!strcmp(tok, "malloc"))
			me = (unsigned int)n;
		else if (!strcmp(tok, "malloc_p"))
			mp = (unsigned int)n;
		else if (!strcmp(tok, "net"))
			ne = (unsigned int)n;
		else if (!strcmp(tok, "net_p"))
			np = (unsigned int)n;
		else if (!strcmp(tok, "threads"))
			workers = !strcmp(v, "workers");
		else if (!strcmp(tok, "seed"))
			atomic_store(&rnd_state, n ? n : 1);
		else if (!strcmp(tok, "errors")) {
			char *e, *s2 = NULL;
			int i;

			mask = 0;
			for (e = strtok_r(v, ",", &s2); e; e = strtok_r(NULL, ",", &s2))
				for (i = 0; i < F_N; i++)
					if (!strcmp(e, fault_names[i].name))
						mask |= 1u << i;
		}
	}
	atomic_store(&workers_only, workers);
	atomic_store(&fault_mask, mask);
	atomic_store(&malloc_every, me);
	atomic_store(&malloc_ppm, mp);
	atomic_store(&net_every, ne);
	atomic_store(&net_ppm, np);
}

static void *ctl_main(void *arg)
{
	const char *ctl = arg;
	struct timespec last = { 0 }, tick = { 0, 50 * 1000 * 1000 };
	uint64_t prev[5] = { ~0ull }, cur[5];
	char stats[4096], text[1024];
	struct stat st;

	in_shim = true;
	snprintf(stats, sizeof(stats), "%s.stats", ctl);
	for (;;) {
		if (!stat(ctl, &st) && (st.st_mtim.tv_sec != last.tv_sec ||
					st.st_mtim.tv_nsec != last.tv_nsec)) {
			int fd = open(ctl, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? real_read(fd, text, sizeof(text) - 1) : -1;

			if (fd >= 0)
				close(fd);
			text[n > 0 ? n : 0] = 0;
			last = st.st_mtim;
			apply(text);
		}
		cur[0] = atomic_load(&n_malloc);
		cur[1] = atomic_load(&n_malloc_failed);
		cur[2] = atomic_load(&n_net);
		cur[3] = atomic_load(&n_net_failed);
		cur[4] = atomic_load(&n_net_short);
		if (memcmp(cur, prev, sizeof(cur))) {
			char line[256], tmp[4200];
			int fd, len;

			len = snprintf(line, sizeof(line),
				       "malloc_calls %llu malloc_failed %llu net_calls %llu net_failed %llu net_short %llu\n",
				       (unsigned long long)cur[0], (unsigned long long)cur[1],
				       (unsigned long long)cur[2], (unsigned long long)cur[3],
				       (unsigned long long)cur[4]);
			snprintf(tmp, sizeof(tmp), "%s.tmp", stats);
			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0) {
				if (real_write(fd, line, (size_t)len) == len)
					rename(tmp, stats);
				close(fd);
			}
			memcpy(prev, cur, sizeof(prev));
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

__attribute__((constructor)) static void faultinj_init(void)
{
	const char *ctl = getenv("FAULTINJ_CTL");
	sigset_t all, old;

	resolve();
	main_tid = (pid_t)syscall(SYS_gettid);
	if (!ctl || !*ctl)
		return;
	in_shim = true;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&ctl_thread, NULL, ctl_main, (void *)ctl) == 0)
		pthread_detach(ctl_thread);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	in_shim = false;
}
