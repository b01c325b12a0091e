// SPDX-License-Identifier: MIT
/*
 * librdax's contract at its edges, through include/rdax.h only, against
 * a real rdaxd: every failing call leaves a message about its own
 * failure and a new call never reports an older one; the errno of an
 * over-long rename target and of a host name that does not resolve; the
 * request timeout's valid values; and a server that dies under a writer
 * gives that writer an error, not SIGPIPE. The rules of the 1.0 API:
 * nonzero flags and reserved fields refused with -EINVAL, reap's min
 * before max, reserved output fields zeroed, a request naming its
 * registered buffer, the thread's own rdax_errormsg, and a library that
 * writes nothing to stderr without a log callback.
 *
 * usage: libapi URL REFUSED_PORT RDAXD_PID
 *   URL: a guest share on rdaxd; REFUSED_PORT: a port nobody listens on.
 *   The server is killed by the last case.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	EXPECT(ret == -ECONNREFUSED && strstr(rdax_conn_errmsg(NULL), "refused"),
	       "connect to a closed port: %d, '%s'", ret, rdax_conn_errmsg(NULL));
	rdax_cfg_delete(&cfg);

	/* missing credentials: its own message, not the older one */
	rdax_cfg_new(&cfg);
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(ret == -EINVAL && *rdax_conn_errmsg(NULL) && !strstr(rdax_conn_errmsg(NULL), "refused") &&
	       strstr(rdax_conn_errmsg(NULL), "user"),
	       "connect without a user: %d, '%s'", ret, rdax_conn_errmsg(NULL));
	rdax_cfg_set_credentials(cfg, "alice", NULL);
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(ret == -EINVAL && strstr(rdax_conn_errmsg(NULL), "password"),
	       "connect without a password: %d, '%s'", ret, rdax_conn_errmsg(NULL));
	rdax_cfg_delete(&cfg);

	/* a host name that does not resolve: said so, with the resolver's words */
	guest_cfg(&cfg);
	ret = rdax_connect(&c, "nosuch.invalid", url.port, cfg);
	EXPECT(ret == -ENXIO &&
	       strstr(rdax_conn_errmsg(NULL), "cannot resolve host nosuch.invalid: "),
	       "unknown host: %d (%s), '%s'", ret, strerror(-ret), rdax_conn_errmsg(NULL));

	/* success clears what the failures left */
	ret = rdax_connect(&c, url.host, url.port, cfg);
	EXPECT(!ret && !*rdax_conn_errmsg(NULL) && !rdax_conn_last_status(NULL),
	       "a connect that works leaves no message: %d, '%s'", ret, rdax_conn_errmsg(NULL));
	rdax_cfg_delete(&cfg);
	rdax_disconnect(&c);
}

/* Every reserved field the library filled is zero. */
static bool zeroed(const uint64_t *r, size_t n)
{
	while (n--)
		if (r[n])
			return false;
	return true;
}

#define ZEROED(a) zeroed(a, sizeof(a) / sizeof((a)[0]))

static void *other_thread(void *arg)
{
	struct rdax_url u;

	*(int *)arg = rdax_url_parse("http://elsewhere/", &u);
	return NULL;
}

/* Calls without a connection: the message is the thread's own. */
static void thread_messages(void)
{
	struct rdax_cfg *cfg;
	struct rdax_url u;
	pthread_t th;
	int ret, other = 0;

	rdax_cfg_new(&cfg);
	ret = rdax_cfg_set_timeout(cfg, 0);
	EXPECT(ret == -EINVAL && strstr(rdax_errormsg(), "rdax_cfg_set_timeout"),
	       "rdax_cfg_set_timeout(0): %d, rdax_errormsg '%s'", ret, rdax_errormsg());
	EXPECT(!strcmp(rdax_conn_errmsg(NULL), rdax_errormsg()),
	       "rdax_conn_errmsg(NULL) is rdax_errormsg()");
	pthread_create(&th, NULL, other_thread, &other);
	pthread_join(th, NULL);
	EXPECT(other == -EINVAL && strstr(rdax_errormsg(), "rdax_cfg_set_timeout"),
	       "another thread's failure (%d) leaves this thread's message: '%s'", other,
	       rdax_errormsg());
	ret = rdax_cfg_set_channels(cfg, 99);
	EXPECT(ret == -EINVAL && strstr(rdax_errormsg(), "99"),
	       "rdax_cfg_set_channels(99): %d, '%s'", ret, rdax_errormsg());
	ret = rdax_url_parse("smb://host:99999/s", &u);
	EXPECT(ret == -EINVAL && strstr(rdax_errormsg(), "host:99999"),
	       "rdax_url_parse of a bad port: %d, '%s'", ret, rdax_errormsg());
	ret = rdax_cfg_set_timeout(cfg, 1000);
	EXPECT(!ret && !*rdax_errormsg(), "a call that works clears it: '%s'", rdax_errormsg());
	EXPECT(rdax_cfg_set_mr_cache(cfg, 0) == 0 && rdax_cfg_set_mr_cache(cfg, 64 << 20) == 0,
	       "rdax_cfg_set_mr_cache takes 0 (off) and 64 MiB");
	memset(&u, 0xff, sizeof(u));
	ret = rdax_url_parse("smb://h/s/p", &u);
	EXPECT(!ret && ZEROED(u.reserved), "rdax_url_parse zeroes rdax_url.reserved");
	rdax_cfg_delete(&cfg);
}

static void count_notice(void *arg, const char *msg)
{
	(*(int *)arg)++;
}

/*
 * Without a log callback nothing reaches stderr: a refused connect, and
 * a guest connect asking for 2 channels (the notice that a guest binds
 * none goes to the callback when there is one).
 */
static void silence(unsigned int refused_port)
{
	char path[] = "/tmp/libapi-stderr.XXXXXX";
	struct rdax_conn *c = NULL;
	struct rdax_cfg *cfg;
	int fd, saved, notices = 0;
	struct stat st;

	fd = mkstemp(path);
	saved = dup(2);
	if (fd < 0 || saved < 0) {
		BAD("silence: no temporary file");
		return;
	}
	fflush(stderr);
	dup2(fd, 2);
	guest_cfg(&cfg);
	rdax_connect(&c, url.host, refused_port, cfg);
	rdax_cfg_set_channels(cfg, 2);
	if (!rdax_connect(&c, url.host, url.port, cfg))
		rdax_disconnect(&c);
	rdax_cfg_set_log(cfg, count_notice, &notices);
	if (!rdax_connect(&c, url.host, url.port, cfg))
		rdax_disconnect(&c);
	rdax_cfg_delete(&cfg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	EXPECT(!fstat(fd, &st) && st.st_size == 0,
	       "a failing connect and a channel notice without a callback write nothing to stderr (%lld bytes)",
	       (long long)st.st_size);
	EXPECT(notices > 0, "with a callback the notice arrives there (%d)", notices);
	close(fd);
	unlink(path);
}

/* The 1.0 rules of the queue: flags, reserved fields, min and max, rdax_io.reg. */
static void ioq_rules(struct rdax_conn *c, struct rdax_tree *t)
{
	static char data[8192], back[8192];
	struct rdax_buf *reg = NULL, *other = NULL;
	struct rdax_cqe cqe[4];
	struct rdax_ioq *q;
	struct rdax_file *f = NULL;
	struct rdax_io io;
	struct rdax_stat st;
	struct rdax_conn_info ci;
	struct rdax_channel_info chi;
	struct rdax_stats sts;
	int ret;

	ret = rdax_open(t, "ioq.bin", O_RDWR | O_CREAT | O_APPEND, &f);
	EXPECT(ret == -EINVAL && !f && strstr(rdax_conn_errmsg(c), "flags"),
	       "rdax_open with O_APPEND (a flag it does not know): %d, '%s'", ret,
	       rdax_conn_errmsg(c));
	if (rdax_open(t, "ioq.bin", O_RDWR | O_CREAT, &f) || rdax_ioq_new(c, 4, &q)) {
		BAD("ioq rules: open and queue: %s", rdax_conn_errmsg(c));
		return;
	}
	memset(data, 'd', sizeof(data));
	io = (struct rdax_io){ .opcode = RDAX_OP_WRITE, .file = f, .buf = data,
			       .len = sizeof(data), .user_data = 7 };
	io.flags = 1;
	ret = rdax_ioq_submit(q, &io, 1);
	EXPECT(ret == -EINVAL && rdax_ioq_inflight(q) == 0 && strstr(rdax_conn_errmsg(c), "flags"),
	       "a request with flags 1: %d, none taken, '%s'", ret, rdax_conn_errmsg(c));
	io.flags = 0;
	io.reserved[3] = 1;
	ret = rdax_ioq_submit(q, &io, 1);
	EXPECT(ret == -EINVAL && rdax_ioq_inflight(q) == 0 && strstr(rdax_conn_errmsg(c), "reserved"),
	       "a request with reserved[3] set: %d, none taken, '%s'", ret, rdax_conn_errmsg(c));
	io.reserved[3] = 0;
	ret = rdax_ioq_reap(q, cqe, 2, 1, 0);
	EXPECT(ret == -EINVAL, "rdax_ioq_reap with min 2 > max 1: %d", ret);

	/* a registered buffer named by the request (TCP: registration is a no-op) */
	ret = rdax_buf_reg(c, data, sizeof(data), &reg);
	if (!ret)
		ret = rdax_buf_reg(c, back, sizeof(back) / 2, &other);
	EXPECT(!ret, "rdax_buf_reg: %s", ret ? rdax_conn_errmsg(c) : "ok");
	io.reg = other;
	ret = rdax_ioq_submit(q, &io, 1);
	EXPECT(ret == -EINVAL && rdax_ioq_inflight(q) == 0,
	       "a request naming a registered buffer that does not hold it: %d, '%s'", ret,
	       rdax_conn_errmsg(c));
	io.reg = reg;
	ret = rdax_ioq_submit(q, &io, 1);
	if (ret == 1)
		ret = rdax_ioq_reap(q, cqe, 1, 4, 10000);
	EXPECT(ret == 1 && cqe[0].user_data == 7 && cqe[0].res == (int64_t)sizeof(data) &&
	       !cqe[0].flags && ZEROED(cqe[0].reserved),
	       "a write naming its registered buffer: %d, res %lld", ret, (long long)cqe[0].res);
	io = (struct rdax_io){ .opcode = RDAX_OP_READ, .file = f, .buf = back,
			       .len = sizeof(back), .user_data = 8 };
	ret = rdax_ioq_submit(q, &io, 1);
	if (ret == 1)
		ret = rdax_ioq_reap(q, cqe, 1, 1, 10000);
	EXPECT(ret == 1 && cqe[0].res == (int64_t)sizeof(back) && !memcmp(back, data, sizeof(back)),
	       "read back by address (reg NULL): %d, res %lld", ret, (long long)cqe[0].res);
	rdax_buf_dereg(&reg);
	rdax_buf_dereg(&other);
	rdax_buf_dereg(&other);
	EXPECT(!reg && !other, "rdax_buf_dereg sets the handle to NULL and takes NULL");
	rdax_ioq_delete(&q);

	/* reserved output fields come back zero */
	memset(&st, 0xff, sizeof(st));
	ret = rdax_fstat(f, &st);
	EXPECT(!ret && ZEROED(st.reserved), "rdax_fstat zeroes rdax_stat.reserved");
	memset(&ci, 0xff, sizeof(ci));
	memset(&chi, 0xff, sizeof(chi));
	memset(&sts, 0xff, sizeof(sts));
	EXPECT(!rdax_conn_info(c, &ci) && ZEROED(ci.reserved) &&
	       !rdax_conn_channel_info(c, 0, &chi) && ZEROED(chi.reserved) &&
	       !rdax_conn_stats(c, &sts) && ZEROED(sts.reserved),
	       "rdax_conn_info, rdax_conn_channel_info and rdax_conn_stats zero their reserved fields");
	{
		static struct rdax_dirent ent;
		struct rdax_dir *d = NULL;

		memset(&ent, 0xff, sizeof(ent));
		ret = rdax_opendir(t, "", &d);
		if (!ret)
			ret = rdax_readdir(d, &ent);
		EXPECT(ret == 1 && ZEROED(ent.reserved) && ZEROED(ent.st.reserved),
		       "rdax_readdir zeroes rdax_dirent.reserved: %d", ret);
		if (ret >= 0)
			rdax_closedir(&d);
		rdax_closedir(&d);
		EXPECT(!d, "rdax_closedir sets the handle to NULL and takes NULL");
	}
	rdax_close(&f);
	EXPECT(!f && !*rdax_conn_errmsg(c), "rdax_close: handle NULL, no message");
	rdax_close(&f);
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
	       ret ? (c ? rdax_conn_errmsg(c) : rdax_conn_errmsg(NULL)) : "ok");
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
	EXPECT(ret == -ENOENT && strstr(rdax_conn_errmsg(c), "no-such-file") && rdax_conn_last_status(c),
	       "stat of a missing file: %d, '%s'", ret, rdax_conn_errmsg(c));
	ret = rdax_stat(t, "", &st);
	EXPECT(!ret && !*rdax_conn_errmsg(c) && !rdax_conn_last_status(c),
	       "the next call that works leaves no message: '%s', status 0x%08x",
	       rdax_conn_errmsg(c), rdax_conn_last_status(c));

	/* failures that were silent */
	rdax_stat(t, "no-such-file", &st);
	ret = rdax_ioq_new(c, 0, &q);
	EXPECT(ret == -EINVAL && *rdax_conn_errmsg(c) && !strstr(rdax_conn_errmsg(c), "no-such-file") &&
	       !rdax_conn_last_status(c),
	       "rdax_ioq_new(depth 0): %d, its own message '%s'", ret, rdax_conn_errmsg(c));

	/* an over-long rename target: ENAMETOOLONG, as for every other path */
	if (!rdax_open(t, "short.txt", O_WRONLY | O_CREAT, &f))
		rdax_close(&f);
	memset(longname, 'n', 3000);
	longname[3000] = 0;
	ret = rdax_rename(t, "short.txt", longname, 0);
	EXPECT(ret == -ENAMETOOLONG && *rdax_conn_errmsg(c),
	       "rename to a 3000-byte name: %d (%s), '%s'", ret, strerror(-ret), rdax_conn_errmsg(c));
	ret = rdax_stat(t, longname, &st);
	EXPECT(ret == -ENAMETOOLONG, "stat of a 3000-byte name: %d (%s)", ret, strerror(-ret));
	free(longname);

	/* "a//b" is "a/b" */
	ret = rdax_mkdir(t, "d1");
	if (!ret || ret == -EEXIST)
		ret = rdax_touch(t, "d1//f1");
	if (!ret)
		ret = rdax_stat(t, "d1/f1", &st);
	EXPECT(!ret, "a path with '//' names the same file: %s", ret ? rdax_conn_errmsg(c) : "ok");
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
		BAD("open pipe.bin: %s", rdax_conn_errmsg(c));
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
	       n, n < 0 ? strerror((int)-n) : "no error", rdax_conn_errmsg(c));
	free(buf);
	/* a destructor's failure: the handle is gone, the message stays */
	rdax_close(&f);
	EXPECT(!f && *rdax_conn_errmsg(c),
	       "rdax_close on the dead connection frees the file, its failure in rdax_conn_errmsg: '%s'",
	       rdax_conn_errmsg(c));
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
	thread_messages();
	silence((unsigned int)atoi(argv[2]));
	timeouts();
	guest_cfg(&cfg);
	/* the dead server: reconnect attempts end with the request timeout */
	rdax_cfg_set_timeout(cfg, 5000);
	if (rdax_connect(&c, url.host, url.port, cfg) ||
	    rdax_tree_connect(c, url.share, &t)) {
		BAD("connect: %s", c ? rdax_conn_errmsg(c) : rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	call_messages(c, t);
	ioq_rules(c, t);
	no_sigpipe(c, t, (pid_t)atoi(argv[3]));
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
