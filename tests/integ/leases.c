// SPDX-License-Identifier: MIT
/*
 * librdax's lease cache against a real server, through include/rdax.h
 * only, with two clients (two connections: two ClientGuids, two lease
 * owners) on one file:
 *
 * - A stats the file once (a round trip), then REPEAT times: with
 *   leases, none of those goes to the wire (A's own counters; the
 *   server's come from the shell while A waits at --hold points);
 *   without (--no-leases) each is a round trip;
 * - B writes to the file: the server breaks A's lease, and A's next
 *   stat goes to the wire and sees the new size; the one after is
 *   cached again;
 * - A's own write through a handle of its own (the same lease key: no
 *   break) is seen by A's next stat at once;
 * - A's rename and unlink close what A kept open: B sees both (B's own
 *   cached name of the file lasts a second at most).
 *
 * usage: leases [--no-leases] [--encrypt] [--hold DIR] [--guest | --user U --password-file F]
 *        URL-of-a-directory REPEAT
 * --hold DIR: before the first stat, create DIR/first and wait for
 * DIR/go1; after the repeated ones, DIR/second and DIR/go2.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdax.h"

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static const char *hold_dir;

static void hold(const char *mark, const char *go)
{
	char p[4096];
	FILE *fp;
	int i;

	if (!hold_dir)
		return;
	snprintf(p, sizeof(p), "%s/%s", hold_dir, mark);
	fp = fopen(p, "w");
	if (fp)
		fclose(fp);
	snprintf(p, sizeof(p), "%s/%s", hold_dir, go);
	for (i = 0; i < 600 && access(p, F_OK); i++)
		usleep(50 * 1000);
	if (access(p, F_OK))
		BAD("nobody said %s within 30 s", go);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static struct rdax_stats stats(struct rdax_conn *c)
{
	struct rdax_stats st;

	rdax_conn_stats(c, &st);
	return st;
}

/* B: write len bytes at off through a handle of its own, then close. */
static int write_at(struct rdax_tree *t, const char *path, uint64_t off, size_t len, int flags)
{
	struct rdax_file *f;
	char buf[8192];

	memset(buf, 'x', sizeof(buf));
	if (len > sizeof(buf) || rdax_open(t, path, O_WRONLY | flags, &f))
		return -1;
	if (rdax_pwrite(f, buf, len, off) != (ssize_t)len) {
		rdax_close(&f);
		return -1;
	}
	rdax_close(&f);
	return 0;
}

int main(int argc, char **argv)
{
	struct rdax_cfg *cfg;
	struct rdax_conn *ca, *cb;
	struct rdax_tree *ta, *tb;
	struct rdax_file *f;
	struct rdax_stats s0, s1;
	struct rdax_stat st;
	struct rdax_url u;
	char path[4200], gone[4200];
	bool leases = true;
	unsigned long repeat, i, wrong = 0;
	int a, ret;

	if (rdax_cfg_new(&cfg))
		return 99;
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-leases"))
			leases = false;
		else if (!strcmp(argv[a], "--hold") && a + 1 < argc)
			hold_dir = argv[++a];
		else if (!strcmp(argv[a], "--encrypt"))
			rdax_cfg_set_encryption(cfg, true);
		else if (!strcmp(argv[a], "--guest"))
			rdax_cfg_set_guest(cfg, true);
		else if (!strcmp(argv[a], "--user") && a + 1 < argc)
			rdax_cfg_set_credentials(cfg, argv[++a], NULL);
		else if (!strcmp(argv[a], "--password-file") && a + 1 < argc)
			rdax_cfg_set_password_file(cfg, argv[++a]);
		else
			return 2;
	}
	if (a + 2 != argc || rdax_url_parse(argv[a], &u)) {
		fprintf(stderr, "usage: leases [--no-leases] [--encrypt] [--hold DIR] [--guest | --user U --password-file F] URL REPEAT\n");
		return 2;
	}
	repeat = strtoul(argv[a + 1], NULL, 10);
	rdax_cfg_set_leases(cfg, leases);
	if (rdax_connect(&ca, u.host, u.port, cfg) || rdax_tree_connect(ca, u.share, &ta)) {
		BAD("client A: %s", rdax_conn_errmsg(NULL));
		return 1;
	}
	/* B is another client; its leases do not matter here */
	if (rdax_connect(&cb, u.host, u.port, cfg) || rdax_tree_connect(cb, u.share, &tb)) {
		BAD("client B: %s", rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	snprintf(path, sizeof(path), "%s/lease-%ld.f", u.path, (long)getpid());
	snprintf(gone, sizeof(gone), "%s/lease-%ld.g", u.path, (long)getpid());

	if (write_at(tb, path, 0, 100, O_CREAT | O_TRUNC))
		BAD("B creates %s with 100 bytes: %s", path, rdax_conn_errmsg(cb));

	/* the first stat goes to the wire; the repeated ones only without a lease */
	hold("first", "go1");
	s0 = stats(ca);
	ret = rdax_stat(ta, path, &st);
	s1 = stats(ca);
	if (ret || st.size != 100)
		BAD("A's first stat: %d, size %llu: %s", ret, (unsigned long long)st.size,
		    rdax_conn_errmsg(ca));
	else if (s1.round_trips - s0.round_trips != 1)
		BAD("A's first stat took %llu round trips",
		    (unsigned long long)(s1.round_trips - s0.round_trips));
	else
		OK("A's first stat: 1 round trip, size 100");
	s0 = stats(ca);
	for (i = 0; i < repeat; i++)
		if (rdax_stat(ta, path, &st) || st.size != 100)
			wrong++;
	s1 = stats(ca);
	printf("repeat: %lu stats, round_trips %llu requests %llu cache_hits %llu leases %u cached_handles %u\n",
	       repeat, (unsigned long long)(s1.round_trips - s0.round_trips),
	       (unsigned long long)(s1.requests - s0.requests),
	       (unsigned long long)(s1.cache_hits - s0.cache_hits), s1.leases, s1.cached_handles);
	if (wrong)
		BAD("%lu of %lu repeated stats failed or saw another size", wrong, repeat);
	if (leases && (s1.round_trips != s0.round_trips || s1.requests != s0.requests ||
		       s1.cache_hits - s0.cache_hits != repeat || s1.leases < 1))
		BAD("with a lease, the repeated stats were not all answered from the cache");
	else if (!leases && (s1.round_trips - s0.round_trips != repeat || s1.cache_hits))
		BAD("without leases, a repeated stat was not a round trip each");
	else
		OK("%lu repeated stats: %llu round trips", repeat,
		   (unsigned long long)(s1.round_trips - s0.round_trips));
	hold("second", "go2");

	/* another client writes: A's lease breaks, A sees the new size */
	s0 = stats(ca);
	if (write_at(tb, path, 100, 4000, 0))
		BAD("B writes 4000 bytes at 100: %s", rdax_conn_errmsg(cb));
	/* the break is on its way to A before B's WRITE is answered; let it land */
	sleep_ms(200);
	ret = rdax_stat(ta, path, &st);
	s1 = stats(ca);
	if (ret || st.size != 4100)
		BAD("A's stat after B's write: %d, size %llu (4100 expected)", ret,
		    (unsigned long long)st.size);
	else if (leases && (s1.breaks == s0.breaks || s1.round_trips == s0.round_trips))
		BAD("A's stat after B's write: breaks %llu -> %llu, round trips %llu -> %llu",
		    (unsigned long long)s0.breaks, (unsigned long long)s1.breaks,
		    (unsigned long long)s0.round_trips, (unsigned long long)s1.round_trips);
	else
		OK("B's write broke A's lease (%llu break); A's next stat went to the wire: size 4100",
		   (unsigned long long)(s1.breaks - s0.breaks));
	s0 = stats(ca);
	ret = rdax_stat(ta, path, &st);
	s1 = stats(ca);
	if (ret || st.size != 4100 || (leases && s1.round_trips != s0.round_trips))
		BAD("A's stat after that: %d, size %llu, %llu round trips", ret,
		    (unsigned long long)st.size,
		    (unsigned long long)(s1.round_trips - s0.round_trips));
	else if (leases)
		OK("... and the one after is answered from the cache again");

	/* A's own write, on the same lease key: no break, A knows by itself */
	if (rdax_open(ta, path, O_RDWR, &f)) {
		BAD("A opens %s: %s", path, rdax_conn_errmsg(ca));
	} else {
		char buf[100];

		memset(buf, 'y', sizeof(buf));
		if (rdax_pwrite(f, buf, sizeof(buf), 4100) != (ssize_t)sizeof(buf))
			BAD("A writes: %s", rdax_conn_errmsg(ca));
		ret = rdax_stat(ta, path, &st);
		if (ret || st.size != 4200)
			BAD("A's stat after its own write: %d, size %llu (4200 expected)", ret,
			    (unsigned long long)st.size);
		else
			OK("A's stat right after its own write: size 4200");
		s0 = stats(ca);
		ret = rdax_fstat(f, &st);
		ret = ret ? ret : rdax_fstat(f, &st);
		s1 = stats(ca);
		if (ret || st.size != 4200 || (leases && s1.round_trips != s0.round_trips))
			BAD("A's fstats: %d, size %llu, %llu round trips", ret,
			    (unsigned long long)st.size,
			    (unsigned long long)(s1.round_trips - s0.round_trips));
		else
			OK("A's fstats: size 4200, %llu round trips",
			   (unsigned long long)(s1.round_trips - s0.round_trips));
		rdax_close(&f);
		if (*rdax_conn_errmsg(ca))
			BAD("A closes: %s", rdax_conn_errmsg(ca));
	}

	/* A renames and removes what it keeps open: B sees both */
	if (rdax_rename(ta, path, gone, 0))
		BAD("A renames %s: %s", path, rdax_conn_errmsg(ca));
	else if (rdax_stat(tb, path, &st) != -ENOENT || rdax_stat(tb, gone, &st) ||
		 st.size != 4200)
		BAD("B does not see A's rename");
	else
		OK("A's rename of the file it cached: B sees it");
	/*
	 * B stat'ed the new name above and keeps it: another client's
	 * unlink breaks no lease (nothing conflicts with an attributes-only
	 * open), so B trusts the name for a second (CLI_CACHE_MS) at most.
	 */
	ret = rdax_unlink(ta, gone);
	if (ret)
		BAD("A unlinks %s: %s", gone, rdax_conn_errmsg(ca));
	else if (rdax_stat(ta, gone, &st) != -ENOENT)
		BAD("A still sees %s after its unlink", gone);
	else
		OK("A's unlink of the file it cached: gone for A");
	sleep_ms(1100);
	ret = rdax_stat(tb, gone, &st);
	if (ret != -ENOENT)
		BAD("B still sees %s a second after A's unlink: %d: %s", gone, ret,
		    rdax_conn_errmsg(cb));
	else
		OK("... and for B a second later");
	s1 = stats(ca);
	printf("stats A: round_trips %llu requests %llu cache_hits %llu breaks %llu leases %u cached_handles %u\n",
	       (unsigned long long)s1.round_trips, (unsigned long long)s1.requests,
	       (unsigned long long)s1.cache_hits, (unsigned long long)s1.breaks, s1.leases,
	       s1.cached_handles);
	rdax_tree_disconnect(&tb);
	if (*rdax_conn_errmsg(cb))
		BAD("tree disconnect: %s", rdax_conn_errmsg(cb));
	rdax_tree_disconnect(&ta);
	if (*rdax_conn_errmsg(ca))
		BAD("tree disconnect: %s", rdax_conn_errmsg(ca));
	rdax_disconnect(&cb);
	rdax_disconnect(&ca);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
