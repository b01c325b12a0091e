// SPDX-License-Identifier: MIT
/*
 * librdax's contract at its edges, through include/rdax.h only, against
 * a real rdaxd: every failing call leaves a message about its own
 * failure and a new call never reports an older one; the errno of an
 * over-long rename target and of a host name that does not resolve; the
 * request timeout's valid values; and a server that dies under a writer
 * gives that writer an error, not SIGPIPE.
 *
 * usage: libapi URL REFUSED_PORT RDAXD_PID
 *   URL: a guest share on rdaxd; REFUSED_PORT: a port nobody listens on.
 *   The server is killed by the last case.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdax.h"

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); nfail++; } while (0)
#define EXPECT(cond, ...) do { if (cond) OK(__VA_ARGS__); else BAD(__VA_ARGS__); } while (0)

static struct rdax_url url;

static int guest_cfg(struct rdax_cfg **cfg)
{
	int ret = rdax_cfg_new(cfg);

	if (!ret)
		ret = rdax_cfg_set_guest(*cfg, true);
	return ret;
}

static void connect_messages(unsigned int refused_port)
{
	struct rdax_conn *c = NULL;
	struct rdax_cfg *cfg;
	int ret;

	/* an earlier failure with a message of its own */
	guest_cfg(&cfg);
	ret = rdax_connect(&c, url.host, refused_port, cfg);
	EXPECT(ret == -ECONNREFUSED && strstr(rdax_errmsg(NULL), "refused"),
	       "connect to a closed port: %d, '%s'", ret, rdax_errmsg(NULL));
	rdax_cfg_delete(&cfg);

	/* missing credentials: its own message, not the older one */
	rdax_cfg_new(&cfg);
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(ret == -EINVAL && *rdax_errmsg(NULL) && !strstr(rdax_errmsg(NULL), "refused") &&
	       strstr(rdax_errmsg(NULL), "user"),
	       "connect without a user: %d, '%s'", ret, rdax_errmsg(NULL));
	rdax_cfg_set_credentials(cfg, "alice", NULL);
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(ret == -EINVAL && strstr(rdax_errmsg(NULL), "password"),
	       "connect without a password: %d, '%s'", ret, rdax_errmsg(NULL));
	rdax_cfg_delete(&cfg);

	/* a host name that does not resolve: said so, with the resolver's words */
	guest_cfg(&cfg);
	ret = rdax_connect(&c, "nosuch.invalid", url.port, cfg);
	EXPECT(ret == -ENXIO &&
	       strstr(rdax_errmsg(NULL), "cannot resolve host nosuch.invalid: "),
	       "unknown host: %d (%s), '%s'", ret, strerror(-ret), rdax_errmsg(NULL));

	/* success clears what the failures left */
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(!ret && !*rdax_errmsg(NULL) && !rdax_last_status(NULL),
	       "a connect that works leaves no message: %d, '%s'", ret, rdax_errmsg(NULL));
	rdax_cfg_delete(&cfg);
	rdax_disconnect(&c);
}

static void timeouts(void)
{
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	struct rdax_cfg *cfg;
	struct rdax_stat st;
	int ret;

	guest_cfg(&cfg);
	EXPECT(rdax_cfg_set_timeout(cfg, 0) == -EINVAL, "rdax_cfg_set_timeout(0) is refused");
	EXPECT(rdax_cfg_set_timeout(cfg, -2) == -EINVAL, "rdax_cfg_set_timeout(-2) is refused");
	EXPECT(rdax_cfg_set_timeout(cfg, 1) == 0, "rdax_cfg_set_timeout(1) is taken");
	EXPECT(rdax_cfg_set_timeout(cfg, -1) == 0, "rdax_cfg_set_timeout(-1) (none) is taken");
	ret = rdax_connect(&c, url.host, url.port, cfg);
	if (!ret)
		ret = rdax_tree_connect(c, url.share, &t);
	if (!ret)
		ret = rdax_stat(t, "", &st);
	EXPECT(!ret, "with no timeout, connect, tree connect and stat work: %s",
	       ret ? (c ? rdax_errmsg(c) : rdax_errmsg(NULL)) : "ok");
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	rdax_cfg_delete(&cfg);
}

static void call_messages(struct rdax_conn *c, struct rdax_tree *t)
{
	char *longname = malloc(3001);
	struct rdax_stat st;
	struct rdax_ioq *q;
	struct rdax_file *f;
	int ret;

	/* a failure, then a call that works: no message, no status */
	ret = rdax_stat(t, "no-such-file", &st);
	EXPECT(ret == -ENOENT && strstr(rdax_errmsg(c), "no-such-file") && rdax_last_status(c),
	       "stat of a missing file: %d, '%s'", ret, rdax_errmsg(c));
	ret = rdax_stat(t, "", &st);
	EXPECT(!ret && !*rdax_errmsg(c) && !rdax_last_status(c),
	       "the next call that works leaves no message: '%s', status 0x%08x",
	       rdax_errmsg(c), rdax_last_status(c));

	/* failures that were silent */
	rdax_stat(t, "no-such-file", &st);
	ret = rdax_ioq_new(c, 0, &q);
	EXPECT(ret == -EINVAL && *rdax_errmsg(c) && !strstr(rdax_errmsg(c), "no-such-file") &&
	       !rdax_last_status(c),
	       "rdax_ioq_new(depth 0): %d, its own message '%s'", ret, rdax_errmsg(c));

	/* an over-long rename target: ENAMETOOLONG, as for every other path */
	if (!rdax_open(t, "short.txt", O_WRONLY | O_CREAT, &f))
		rdax_close(&f);
	memset(longname, 'n', 3000);
	longname[3000] = 0;
	ret = rdax_rename(t, "short.txt", longname, 0);
	EXPECT(ret == -ENAMETOOLONG && *rdax_errmsg(c),
	       "rename to a 3000-byte name: %d (%s), '%s'", ret, strerror(-ret), rdax_errmsg(c));
	ret = rdax_stat(t, longname, &st);
	EXPECT(ret == -ENAMETOOLONG, "stat of a 3000-byte name: %d (%s)", ret, strerror(-ret));
	free(longname);

	/* "a//b" is "a/b" */
	ret = rdax_mkdir(t, "d1");
	if (!ret || ret == -EEXIST)
		ret = rdax_touch(t, "d1//f1");
	if (!ret)
		ret = rdax_stat(t, "d1/f1", &st);
	EXPECT(!ret, "a path with '//' names the same file: %s", ret ? rdax_errmsg(c) : "ok");
}

/* The server dies under a writer: errors, no SIGPIPE (default disposition). */
static void no_sigpipe(struct rdax_conn *c, struct rdax_tree *t, pid_t server)
{
	size_t len = 4u << 20;
	uint8_t *buf = calloc(1, len);
	struct rdax_file *f;
	ssize_t n = 0;
	int i;

	signal(SIGPIPE, SIG_DFL);
	if (!buf || rdax_open(t, "pipe.bin", O_WRONLY | O_CREAT, &f)) {
		BAD("open pipe.bin: %s", rdax_errmsg(c));
		return;
	}
	kill(server, SIGKILL);
	usleep(300 * 1000);
	for (i = 0; i < 20; i++) {
		n = rdax_pwrite(f, buf, len, (uint64_t)i * len);
		if (n < 0)
			break;
	}
	EXPECT(n == -EPIPE || n == -ECONNRESET || n == -ENOTCONN,
	       "writes after the server was killed fail with %zd (%s): '%s'",
	       n, n < 0 ? strerror((int)-n) : "no error", rdax_errmsg(c));
	free(buf);
	rdax_close(&f);
}

int main(int argc, char **argv)
{
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	struct rdax_cfg *cfg;

	if (argc != 4 || rdax_url_parse(argv[1], &url)) {
		fprintf(stderr, "usage: libapi URL REFUSED_PORT RDAXD_PID\n");
		return 2;
	}
	connect_messages((unsigned int)atoi(argv[2]));
	timeouts();
	guest_cfg(&cfg);
	/* the dead server: reconnect attempts end with the request timeout */
	rdax_cfg_set_timeout(cfg, 5000);
	if (rdax_connect(&c, url.host, url.port, cfg) ||
	    rdax_tree_connect(c, url.share, &t)) {
		BAD("connect: %s", c ? rdax_errmsg(c) : rdax_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	call_messages(c, t);
	no_sigpipe(c, t, (pid_t)atoi(argv[3]));
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
