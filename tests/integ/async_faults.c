// SPDX-License-Identifier: MIT
/*
 * The asynchronous API when the link or the server misbehaves, through
 * include/rdax.h only, against a real rdaxd (behind tests/integ/relay.c
 * where the link must stall or trickle):
 *   - rdax_ioq_reap's timeout bounds the whole call while answers trickle in
 *   - rdax_ioq_delete gives up after the request timeout when answers
 *     stop coming on an open connection
 *   - with the server gone, every request is reported exactly once:
 *     refused by rdax_ioq_submit, or completed with an error, never both
 *
 * usage: async_faults [--only trickle|stall|once] RELAY_URL RELAY_PID DIRECT_URL RDAXD_PID
 *   (guest logon; the server is killed by the last case, "once")
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdax.h"

#define IO_LEN (64 * 1024)
#define NREQ 24

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); nfail++; } while (0)

static const char *stage = "";

static void on_alarm(int sig)
{
	printf("FAIL: %s: still waiting after the test's own limit\n", stage);
	fflush(stdout);
	_exit(1);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int open_url(const char *url, int timeout_ms, struct rdax_conn **c,
		    struct rdax_tree **t, struct rdax_file **f, const char *name)
{
	struct rdax_cfg *cfg;
	struct rdax_url u;
	int ret;

	if (rdax_url_parse(url, &u) || rdax_cfg_new(&cfg))
		return -EINVAL;
	rdax_cfg_set_guest(cfg, true);
	if (timeout_ms)
		rdax_cfg_set_timeout(cfg, timeout_ms);
	ret = rdax_connect(c, u.host, u.port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret) {
		BAD("connect %s: %s", url, rdax_conn_errmsg(NULL));
		return ret;
	}
	ret = rdax_tree_connect(*c, u.share, t);
	if (!ret)
		ret = rdax_open(*t, name, O_RDWR | O_CREAT, f);
	if (ret)
		BAD("open %s: %s", name, rdax_conn_errmsg(*c));
	return ret;
}

/* Answers trickle in: reap(min 1, 1000 ms) must return in about 1 s. */
static void reap_bounded(const char *url, pid_t relay, uint8_t *buf)
{
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_ioq *q;
	struct rdax_cqe cqe;
	struct rdax_io io = { .opcode = RDAX_OP_READ, .buf = buf, .len = IO_LEN,
			      .user_data = 7 };
	struct timespec t0;
	long ms;
	int n;

	stage = "rdax_ioq_reap while answers trickle in";
	if (open_url(url, 0, &c, &t, &f, "trickle.bin"))
		return;
	memset(buf, 0x5a, IO_LEN);
	if (rdax_pwrite(f, buf, IO_LEN, 0) != IO_LEN || rdax_ioq_new(c, 4, &q)) {
		BAD("setup: %s", rdax_conn_errmsg(c));
		return;
	}
	io.file = f;
	kill(relay, SIGUSR2);
	usleep(200 * 1000);
	if (rdax_ioq_submit(q, &io, 1) != 1) {
		BAD("submit: %s", rdax_conn_errmsg(c));
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = rdax_ioq_reap(q, &cqe, 1, 1, 1000);
	ms = ms_since(&t0);
	if (n == 0 && ms < 2500)
		OK("rdax_ioq_reap(min 1, 1000 ms) with answers trickling in returned 0 after %ld ms", ms);
	else
		BAD("rdax_ioq_reap(min 1, 1000 ms) with answers trickling in returned %d after %ld ms",
		    n, ms);
	kill(relay, SIGHUP);
	if (n == 0)
		n = rdax_ioq_reap(q, &cqe, 1, 1, 20000);
	if (n == 1 && cqe.user_data == 7 && cqe.res == IO_LEN)
		OK("the read completes once the link passes everything again");
	else
		BAD("the read: reap %d, res %lld", n, n == 1 ? (long long)cqe.res : 0LL);
	rdax_ioq_delete(&q);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
}

/* Answers stop on an open connection: delete gives up after the timeout. */
static void delete_bounded(const char *url, pid_t relay, uint8_t *buf)
{
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_ioq *q;
	struct rdax_io io = { .opcode = RDAX_OP_READ, .buf = buf, .len = IO_LEN };
	struct timespec t0;
	long ms;

	stage = "rdax_ioq_delete with a server that stopped answering";
	if (open_url(url, 1500, &c, &t, &f, "stall.bin"))
		return;
	if (rdax_ioq_new(c, 4, &q)) {
		BAD("rdax_ioq_new: %s", rdax_conn_errmsg(c));
		return;
	}
	io.file = f;
	kill(relay, SIGUSR1);
	usleep(200 * 1000);
	if (rdax_ioq_submit(q, &io, 1) != 1) {
		BAD("submit: %s", rdax_conn_errmsg(c));
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	alarm(30);
	rdax_ioq_delete(&q);
	alarm(0);
	ms = ms_since(&t0);
	if (ms >= 1000 && ms < 6000)
		OK("rdax_ioq_delete gave up after %ld ms (request timeout 1500 ms): %s",
		   ms, rdax_conn_errmsg(c));
	else
		BAD("rdax_ioq_delete returned after %ld ms (request timeout 1500 ms)", ms);
	if (!strstr(rdax_conn_errmsg(c), "did not answer"))
		BAD("message after the timeout: '%s'", rdax_conn_errmsg(c));
	kill(relay, SIGHUP);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
}

/* The server is killed: each request is reported once, and only once. */
static void reported_once(const char *url, pid_t server, uint8_t *buf)
{
	int refused[NREQ], seen[NREQ], got, k, n, errors = 0, accepted = 0;
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_ioq *q;
	struct rdax_cqe cqe[NREQ];
	struct rdax_io io;

	stage = "requests after the server died";
	/* SIGPIPE has its own test (libapi): here only the reporting counts */
	signal(SIGPIPE, SIG_IGN);
	if (open_url(url, 5000, &c, &t, &f, "gone.bin"))
		return;
	if (rdax_ioq_new(c, NREQ, &q)) {
		BAD("rdax_ioq_new: %s", rdax_conn_errmsg(c));
		return;
	}
	kill(server, SIGKILL);
	usleep(300 * 1000);
	/* one at a time, no reaping in between: the sends meet a dead peer */
	for (k = 0; k < NREQ; k++) {
		io = (struct rdax_io){ .opcode = k % 2 ? RDAX_OP_FSYNC : RDAX_OP_WRITE,
				       .file = f, .user_data = (uint64_t)k };
		if (io.opcode == RDAX_OP_WRITE) {
			io.buf = buf;
			io.len = IO_LEN;
			io.offset = (uint64_t)k * IO_LEN;
		}
		n = rdax_ioq_submit(q, &io, 1);
		refused[k] = n < 0;
		seen[k] = 0;
		if (n < 0)
			errors++;
		else if (n == 1)
			accepted++;
		else
			BAD("submit %d returned %d", k, n);
	}
	alarm(30);
	while (rdax_ioq_inflight(q)) {
		got = rdax_ioq_reap(q, cqe, 1, NREQ, 10000);
		if (got <= 0) {
			BAD("reap: %d with %u in flight", got, rdax_ioq_inflight(q));
			break;
		}
		for (n = 0; n < got; n++) {
			if (cqe[n].user_data < NREQ)
				seen[cqe[n].user_data]++;
			if (cqe[n].res < 0)
				errors++;
		}
	}
	got = rdax_ioq_reap(q, cqe, 0, NREQ, 0);
	for (n = 0; n < got; n++)
		if (cqe[n].user_data < NREQ)
			seen[cqe[n].user_data]++;
	alarm(0);
	n = nfail;
	for (k = 0; k < NREQ; k++) {
		if (refused[k] && seen[k])
			BAD("request %d: refused by rdax_ioq_submit and completed %d time(s) too", k, seen[k]);
		else if (!refused[k] && seen[k] != 1)
			BAD("request %d: taken by rdax_ioq_submit, completed %d times", k, seen[k]);
	}
	if (!errors)
		BAD("no request failed after the server was killed");
	else if (n == nfail)
		OK("%d requests after the server died: %d taken, each reported exactly once (%d errors)",
		   NREQ, accepted, errors);
	rdax_ioq_delete(&q);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	uint8_t *buf;

	if (argc > 2 && !strcmp(argv[1], "--only")) {
		only = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: async_faults [--only trickle|stall|once] RELAY_URL RELAY_PID DIRECT_URL RDAXD_PID\n");
		return 2;
	}
	signal(SIGALRM, on_alarm);
	buf = malloc(IO_LEN);
	if (!buf)
		return 99;
	if (!only || !strcmp(only, "trickle"))
		reap_bounded(argv[1], (pid_t)atoi(argv[2]), buf);
	if (!only || !strcmp(only, "stall"))
		delete_bounded(argv[1], (pid_t)atoi(argv[2]), buf);
	if (!only || !strcmp(only, "once"))
		reported_once(argv[3], (pid_t)atoi(argv[4]), buf);
	free(buf);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
