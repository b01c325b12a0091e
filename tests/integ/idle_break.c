// SPDX-License-Identifier: MIT
/*
 * A lease break reaching a client that is not calling librdax: client A
 * opens a file and keeps it open (a lease with read and handle caching),
 * then sits in its own poll loop. Client B, in another process, opens the
 * file sharing nothing; the server breaks A's handle caching and holds
 * B's open until A acknowledges (B then gets the sharing violation A's
 * handle still causes, as from Windows and Samba).
 *
 * - A first stays idle IDLE_MS without servicing: B's answer must wait
 *   at least that long (the break reached nobody);
 * - then A polls rdax_conn_fd() and calls rdax_conn_service(): B is
 *   answered soon after, far below the server's 35 s break timeout;
 * - a second round where A services from the start: B is answered
 *   within a second;
 * - A's counters show both breaks.
 *
 * usage: idle_break [--guest | --user U --password-file F] URL-of-a-directory
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rawsmb.h"
#include "rdax.h"

#define IDLE_MS 1500
#define SERVE_MS 10000

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_to(struct rdax_cfg *cfg, const struct rdax_url *u, struct rdax_conn **c,
		      struct rdax_tree **t)
{
	if (rdax_connect(c, u->host, u->port, cfg))
		return -1;
	if (rdax_tree_connect(*c, u->share, t)) {
		rdax_disconnect(c);
		return -1;
	}
	return 0;
}

static struct raw_cred cred_b;

/* B: connect, say so, open path sharing nothing, report status and ms. */
static void client_b(const struct rdax_url *u, const char *path, int out)
{
	struct smb2_fid fid;
	struct raw r = { .fd = -1 };
	uint32_t st;
	long t0;

	if (raw_session(&r, u->host, u->port, SMB2_DIALECT_311, &cred_b, u->share)) {
		dprintf(out, "no session\n");
		_exit(1);
	}
	r.share_set = true;
	r.share = 0;
	dprintf(out, "ready\n");
	t0 = now_ms();
	st = raw_create(&r, path, FILE_READ_DATA | FILE_WRITE_DATA, FILE_OPEN, 0, &fid);
	dprintf(out, "answered %ld %s\n", now_ms() - t0, raw_sname(st));
	if (!st)
		raw_close_fid(&r, &fid);
	raw_close(&r);
	_exit(0);
}

/* Read one line from B within ms; "" on timeout. */
static void read_line(int fd, char *buf, size_t cap, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;
	ssize_t r;

	buf[0] = 0;
	while (n + 1 < cap && poll(&p, 1, ms) > 0) {
		r = read(fd, buf + n, 1);
		if (r <= 0 || buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
}

/*
 * One round: A holds path open under a lease; B opens it sharing nothing
 * while A is idle for idle_ms, then A serves its connection. The ms B
 * waited for its answer, or -1.
 */
static long one_round(const struct rdax_url *u, struct rdax_conn *ca, const char *path,
		      int idle_ms)
{
	struct pollfd p[2];
	char line[128], st[64];
	long t0, ms = -1;
	int pfd[2], status;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pfd[0]);
		client_b(u, path, pfd[1]);
	}
	close(pfd[1]);
	read_line(pfd[0], line, sizeof(line), 10000);
	if (strcmp(line, "ready")) {
		BAD("client B did not connect: %s", line[0] ? line : "(nothing within 10 s)");
		goto out;
	}
	t0 = now_ms();
	/* idle: not in librdax at all */
	p[0] = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	if (idle_ms && poll(p, 1, idle_ms) > 0) {
		read_line(pfd[0], line, sizeof(line), 0);
		BAD("B was answered while A was idle and had acknowledged nothing: %s", line);
		goto out;
	}
	/* serving: the application's own poll loop */
	p[1] = (struct pollfd){ .fd = rdax_conn_fd(ca), .events = POLLIN };
	while (now_ms() - t0 < SERVE_MS) {
		if (poll(p, 2, 100) < 0)
			break;
		if ((p[1].revents & POLLIN) && rdax_conn_service(ca)) {
			BAD("rdax_conn_service: %s", rdax_conn_errmsg(ca));
			break;
		}
		if (p[0].revents & POLLIN)
			break;
	}
	read_line(pfd[0], line, sizeof(line), 0);
	if (sscanf(line, "answered %ld %63s", &ms, st) != 2) {
		BAD("B's open of %s: %s", path, line[0] ? line : "no answer within 10 s of A serving");
		ms = -1;
	} else if (strcmp(st, "STATUS_SHARING_VIOLATION")) {
		BAD("B's open sharing nothing got %s while A holds the file open", st);
	}
out:
	close(pfd[0]);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return ms;
}

/* The password B logs on with: the file's first line. */
static int read_password(const char *file, char *pw, size_t cap)
{
	FILE *fp = fopen(file, "r");

	if (!fp || !fgets(pw, (int)cap, fp)) {
		if (fp)
			fclose(fp);
		return -1;
	}
	fclose(fp);
	pw[strcspn(pw, "\n")] = 0;
	return 0;
}

int main(int argc, char **argv)
{
	struct rdax_conn *ca;
	struct rdax_tree *ta;
	struct rdax_file *f, *f2 = NULL;
	struct rdax_stats s;
	struct rdax_cfg *cfg;
	struct rdax_url u;
	static char pw[256];
	char a[4200];
	long ms;
	int i = 1;

	if (rdax_cfg_new(&cfg))
		return 2;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--guest")) {
			rdax_cfg_set_guest(cfg, true);
		} else if (!strcmp(argv[i], "--user") && i + 1 < argc) {
			cred_b.user = argv[++i];
			rdax_cfg_set_credentials(cfg, cred_b.user, NULL);
		} else if (!strcmp(argv[i], "--password-file") && i + 1 < argc) {
			if (read_password(argv[++i], pw, sizeof(pw)))
				return 2;
			cred_b.password = pw;
			rdax_cfg_set_password_file(cfg, argv[i]);
		} else {
			break;
		}
	}
	if (i + 1 != argc || rdax_url_parse(argv[i], &u)) {
		fprintf(stderr, "usage: idle_break [--guest | --user U --password-file F] URL\n");
		return 2;
	}
	if (!u.port)
		u.port = 445;
	rdax_cfg_set_leases(cfg, true);
	if (connect_to(cfg, &u, &ca, &ta)) {
		printf("FAIL: client A: %s\n", rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	snprintf(a, sizeof(a), "%s%sidle-%d", u.path, u.path[0] ? "/" : "", (int)getpid());
	if (rdax_open(ta, a, O_CREAT | O_RDWR, &f) || rdax_pwrite(f, "idle", 4, 0) != 4) {
		printf("FAIL: A creates %s: %s\n", a, rdax_conn_errmsg(ca));
		return 1;
	}
	rdax_conn_stats(ca, &s);
	if (s.leases < 1)
		BAD("A holds no lease on %s", a);

	ms = one_round(&u, ca, a, IDLE_MS);
	if (ms >= IDLE_MS - 100 && ms < IDLE_MS + 3000)
		OK("B's open waited for idle A (%d ms idle), A's service answered the break: %ld ms",
		   IDLE_MS, ms);
	else if (ms >= 0)
		BAD("B's open took %ld ms with A idle for %d ms, then serving", ms, IDLE_MS);

	/* a second open under the same lease takes handle caching back */
	if (rdax_open(ta, a, O_RDONLY, &f2))
		BAD("A opens %s again: %s", a, rdax_conn_errmsg(ca));
	ms = one_round(&u, ca, a, 0);
	if (ms >= 0 && ms < 1000)
		OK("with A serving from the start, B was answered in %ld ms", ms);
	else if (ms >= 0)
		BAD("with A serving from the start, B was answered in %ld ms", ms);

	rdax_conn_stats(ca, &s);
	if (s.breaks >= 2)
		OK("A counted %llu breaks", (unsigned long long)s.breaks);
	else
		BAD("A counted %llu breaks, 2 expected", (unsigned long long)s.breaks);
	if (f2) {
		rdax_close(&f2);
		if (*rdax_conn_errmsg(ca))
			BAD("A closes its second handle: %s", rdax_conn_errmsg(ca));
	}
	rdax_close(&f);
	if (*rdax_conn_errmsg(ca))
		BAD("A closes %s: %s", a, rdax_conn_errmsg(ca));
	if (rdax_unlink(ta, a))
		BAD("A removes %s: %s", a, rdax_conn_errmsg(ca));
	rdax_tree_disconnect(&ta);
	rdax_disconnect(&ca);
	return nfail ? 1 : 0;
}
