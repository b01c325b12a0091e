// SPDX-License-Identifier: MIT
/*
 * A badly signed answer fails its request alone: through
 * `relay --spoil-read-errors` (a signed READ error answer with a wrong
 * signature, as ksmbd 6.1 sends them), a READ past the end of a file
 * fails with EBADMSG at once, the connection goes on (a READ after it
 * returns the data, no reconnect), and nothing is replayed into the same
 * answer again.
 *
 * usage: bad_signature --user U --password-file F URL
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rdax.h"

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rdax_stats st;
	struct rdax_cfg *cfg;
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_url u;
	uint8_t a[4096], b[4096];
	ssize_t n;
	double t0;

	if (argc != 6 || strcmp(argv[1], "--user") || strcmp(argv[3], "--password-file") ||
	    rdax_url_parse(argv[5], &u)) {
		fprintf(stderr, "usage: bad_signature --user U --password-file F URL\n");
		return 2;
	}
	if (rdax_cfg_new(&cfg))
		return 99;
	rdax_cfg_set_credentials(cfg, argv[2], NULL);
	rdax_cfg_set_password_file(cfg, argv[4]);
	if (rdax_cfg_set_signing(cfg, true) || rdax_cfg_set_timeout(cfg, 20000))
		return 2;
	if (rdax_connect(&c, u.host, u.port, cfg)) {
		rdax_cfg_delete(&cfg);
		BAD("connect: %s", rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	if (rdax_tree_connect(c, u.share, &t) || rdax_open(t, u.path, O_RDONLY, &f)) {
		BAD("open %s: %s", u.path, rdax_conn_errmsg(c));
		return 1;
	}
	n = rdax_pread(f, a, sizeof(a), 0);
	if (n != (ssize_t)sizeof(a))
		BAD("a READ at 0: %zd", n);
	t0 = now_s();
	n = rdax_pread(f, b, sizeof(b), 1ull << 40);
	if (n == -EBADMSG && strstr(rdax_conn_errmsg(c), "bad signature on READ response"))
		OK("the badly signed answer fails its READ: %s (%.2f s)", rdax_conn_errmsg(c),
		   now_s() - t0);
	else
		BAD("a READ past the end through the relay: %zd (%s)", n, rdax_conn_errmsg(c));
	memset(b, 0, sizeof(b));
	n = rdax_pread(f, b, sizeof(b), 0);
	if (n == (ssize_t)sizeof(b) && !memcmp(a, b, sizeof(a)))
		OK("the connection goes on: the next READ returns the data");
	else
		BAD("the READ after it: %zd (%s)", n, rdax_conn_errmsg(c));
	rdax_conn_stats(c, &st);
	if (!st.reconnects)
		OK("no reconnect, nothing replayed");
	else
		BAD("%llu reconnect(s) after a badly signed answer",
		    (unsigned long long)st.reconnects);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	return nfail ? 1 : 0;
}
