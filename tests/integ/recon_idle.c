// SPDX-License-Identifier: MIT
/*
 * A connection that drops while the application is idle, through
 * include/rdax.h only: open a file, write 1 MiB, then wait (DIR/idle
 * made, DIR/go awaited) while the test cuts the connection; then write
 * the next MiB on the same handle, read both back and compare, stat,
 * close. The first call after the drop finds the connection gone and
 * librdax sets it up again under it: no call fails.
 *
 * usage: recon_idle [--guest | --user U --password-file F] URL-of-a-file DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdax.h"

#define MIB (1u << 20)

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

int main(int argc, char **argv)
{
	struct rdax_cfg *cfg;
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_stats st;
	struct rdax_stat sb;
	struct rdax_url u;
	uint8_t *buf, *back;
	char p[4200];
	unsigned int i;
	int a, k;

	if (rdax_cfg_new(&cfg))
		return 99;
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--guest"))
			rdax_cfg_set_guest(cfg, true);
		else if (!strcmp(argv[a], "--user") && a + 1 < argc)
			rdax_cfg_set_credentials(cfg, argv[++a], NULL);
		else if (!strcmp(argv[a], "--password-file") && a + 1 < argc)
			rdax_cfg_set_password_file(cfg, argv[++a]);
		else
			return 2;
	}
	if (a + 2 != argc || rdax_url_parse(argv[a], &u)) {
		fprintf(stderr, "usage: recon_idle [--guest | --user U --password-file F] URL DIR\n");
		return 2;
	}
	buf = malloc(2 * MIB);
	back = malloc(2 * MIB);
	if (!buf || !back)
		return 99;
	for (i = 0; i < 2 * MIB; i++)
		buf[i] = (uint8_t)(i * 7 + i / 4096);
	if (rdax_connect(&c, u.host, u.port, cfg) || rdax_tree_connect(c, u.share, &t) ||
	    rdax_open(t, u.path, O_RDWR | O_CREAT | O_TRUNC, &f)) {
		BAD("connect and open: %s", rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_cfg_delete(&cfg);
	if (rdax_pwrite(f, buf, MIB, 0) != (ssize_t)MIB)
		BAD("first write: %s", rdax_conn_errmsg(c));

	/* idle while the connection is cut */
	snprintf(p, sizeof(p), "%s/idle", argv[a + 1]);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/go", argv[a + 1]);
	for (k = 0; k < 600 && access(p, F_OK); k++)
		usleep(50 * 1000);

	if (rdax_pwrite(f, buf + MIB, MIB, MIB) != (ssize_t)MIB)
		BAD("write after the drop: %s", rdax_conn_errmsg(c));
	else
		OK("the write after the drop went through");
	if (rdax_pread(f, back, 2 * MIB, 0) != (ssize_t)(2 * MIB) || memcmp(buf, back, 2 * MIB))
		BAD("read back: %s", rdax_conn_errmsg(c));
	else
		OK("both MiB read back as written");
	if (rdax_fstat(f, &sb) || sb.size != 2 * MIB)
		BAD("fstat: %s, size %llu", rdax_conn_errmsg(c), (unsigned long long)sb.size);
	else
		OK("fstat: 2 MiB");
	rdax_close(&f);
	if (*rdax_conn_errmsg(c))
		BAD("close: %s", rdax_conn_errmsg(c));
	rdax_conn_stats(c, &st);
	printf("reconnects %llu durable_reopens %llu handles_lost %llu\n",
	       (unsigned long long)st.reconnects, (unsigned long long)st.durable_reopens,
	       (unsigned long long)st.handles_lost);
	if (st.reconnects != 1 || st.durable_reopens != 1 || st.handles_lost)
		BAD("rdax_conn_stats: not one reconnect with the handle back");
	else
		OK("rdax_conn_stats: 1 reconnect, the handle back");
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	free(buf);
	free(back);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
