// SPDX-License-Identifier: MIT
/*
 * Durability probe for the power-cut test. Write mode writes chunks of a
 * deterministic pattern through librdax and, after each write returns
 * (the server answered), appends "GEN INDEX" to a log on a medium that
 * survives the cut (the testbed's 9p repository mount), fsync'ed; before
 * each write it logs "sent GEN INDEX". Verify mode reads the file
 * directly (after the reboot, no server) and checks that every chunk the
 * log says was answered holds the latest generation. The one write in
 * flight at the cut was never answered: its chunk may hold the answered
 * generation, the new one, or the new one's first bytes over the old.
 *
 *   ackwrite write [--rdma] [--guest | --user U --password-file F]
 *                  --chunks N --chunk-size S --gen G [--first I] --log LOG URL
 *   ackwrite verify --chunk-size S --log LOG FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdax.h"

static void pattern(uint8_t *p, size_t n, unsigned int gen, unsigned long idx)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 40) ^ idx;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

static int do_write(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rdma", no_argument, NULL, 'r' },
		{ "guest", no_argument, NULL, 'g' },
		{ "user", required_argument, NULL, 'u' },
		{ "password-file", required_argument, NULL, 'p' },
		{ "chunks", required_argument, NULL, 'n' },
		{ "chunk-size", required_argument, NULL, 's' },
		{ "gen", required_argument, NULL, 'G' },
		{ "first", required_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ 0 }
	};
	const char *user = NULL, *pwfile = NULL, *logpath = NULL;
	unsigned long chunks = 0, first = 0, i;
	size_t csize = 1 << 20;
	unsigned int gen = 1;
	bool rdma = false, guest = false;
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	struct rdax_buf *rb = NULL;
	struct rdax_cfg *cfg;
	struct rdax_url u;
	uint8_t *buf;
	int o, ret, logfd;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r': rdma = true; break;
		case 'g': guest = true; break;
		case 'u': user = optarg; break;
		case 'p': pwfile = optarg; break;
		case 'n': chunks = strtoul(optarg, NULL, 0); break;
		case 's': csize = strtoul(optarg, NULL, 0); break;
		case 'G': gen = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': first = strtoul(optarg, NULL, 0); break;
		case 'l': logpath = optarg; break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || !logpath || !chunks || !csize || csize % 8) {
		fprintf(stderr, "ackwrite write: bad arguments\n");
		return 2;
	}
	if (rdax_url_parse(argv[optind], &u)) {
		fprintf(stderr, "ackwrite: bad URL %s\n", argv[optind]);
		return 2;
	}
	logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (logfd < 0) {
		perror(logpath);
		return 1;
	}
	if (posix_memalign((void **)&buf, 4096, csize))
		return 1;
	rdax_cfg_new(&cfg);
	/* a probe of what was answered: after a crash it stops, no reconnect */
	rdax_cfg_set_durable(cfg, false);
	if (rdma)
		rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA);
	if (guest) {
		rdax_cfg_set_guest(cfg, true);
	} else {
		rdax_cfg_set_credentials(cfg, user, NULL);
		rdax_cfg_set_password_file(cfg, pwfile);
	}
	ret = rdax_connect(&c, u.host, u.port, cfg);
	rdax_cfg_delete(&cfg);
	if (!ret)
		ret = rdax_tree_connect(c, u.share, &t);
	if (!ret)
		ret = rdax_open(t, u.path, O_RDWR | O_CREAT, &f);
	if (!ret)
		ret = rdax_buf_reg(c, buf, csize, &rb);
	if (ret) {
		fprintf(stderr, "ackwrite: %s: %s\n", argv[optind],
			rdax_conn_errmsg(c)[0] ? rdax_conn_errmsg(c) : strerror(-ret));
		goto out;
	}
	for (i = first; i < first + chunks; i++) {
		char line[64];
		ssize_t n;
		int len;

		pattern(buf, csize, gen, i);
		len = snprintf(line, sizeof(line), "sent %u %lu\n", gen, i);
		if (write(logfd, line, (size_t)len) != len || fsync(logfd)) {
			perror(logpath);
			ret = -EIO;
			goto out;
		}
		n = rdax_pwrite(f, buf, csize, (uint64_t)i * csize);
		if (n != (ssize_t)csize) {
			fprintf(stderr, "ackwrite: chunk %lu: %s\n", i,
				n < 0 ? rdax_conn_errmsg(c) : "short write");
			ret = -EIO;
			goto out;
		}
		/* answered: record it where the power cut cannot reach */
		len = snprintf(line, sizeof(line), "%u %lu\n", gen, i);
		if (write(logfd, line, (size_t)len) != len || fsync(logfd)) {
			perror(logpath);
			ret = -EIO;
			goto out;
		}
	}
	printf("ackwrite: %lu chunks of %zu bytes (generation %u) answered\n", chunks, csize, gen);
out:
	rdax_buf_dereg(&rb);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	close(logfd);
	free(buf);
	return ret ? 1 : 0;
}

static int do_verify(int argc, char **argv)
{
	size_t csize = 1 << 20;
	const char *logpath = NULL;
	unsigned long nchunk = 0, idx, max = 0, i, bad = 0, checked = 0;
	unsigned int *latest = NULL, *sent = NULL, gen;
	uint8_t *want, *got, *newer;
	char tag[8];
	size_t k;
	FILE *log;
	int o, fd, n;

	static const struct option opts[] = {
		{ "chunk-size", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ 0 }
	};
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 's')
			csize = strtoul(optarg, NULL, 0);
		else if (o == 'l')
			logpath = optarg;
		else
			return 2;
	}
	if (optind + 1 != argc || !logpath) {
		fprintf(stderr, "ackwrite verify: bad arguments\n");
		return 2;
	}
	log = fopen(logpath, "r");
	if (!log) {
		perror(logpath);
		return 1;
	}
	for (;;) {
		/* "GEN INDEX" (answered) or "sent GEN INDEX" (about to write) */
		n = fscanf(log, " %7[a-z]", tag);
		if (n == EOF || (n == 1 && strcmp(tag, "sent")) ||
		    fscanf(log, "%u %lu", &gen, &idx) != 2)
			break;
		if (idx >= nchunk) {
			unsigned long m = idx * 2 + 16;
			unsigned int *v = realloc(latest, m * sizeof(*v));
			unsigned int *w = realloc(sent, m * sizeof(*w));

			if (!v || !w)
				return 1;
			memset(v + nchunk, 0, (m - nchunk) * sizeof(*v));
			memset(w + nchunk, 0, (m - nchunk) * sizeof(*w));
			latest = v;
			sent = w;
			nchunk = m;
		}
		if (n == 1) {
			sent[idx] = gen;
			continue;
		}
		latest[idx] = gen;
		if (sent[idx] == gen)
			sent[idx] = 0;
		if (idx + 1 > max)
			max = idx + 1;
	}
	fclose(log);
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0) {
		perror(argv[optind]);
		return 1;
	}
	want = malloc(csize);
	got = malloc(csize);
	newer = malloc(csize);
	if (!want || !got || !newer)
		return 1;
	for (i = 0; i < max; i++) {
		if (!latest[i])
			continue;
		pattern(want, csize, latest[i], i);
		if (pread(fd, got, csize, (off_t)(i * csize)) != (ssize_t)csize) {
			memset(got, 0, csize);
			got[0] = (uint8_t)~want[0];
		}
		if (sent[i] && sent[i] != latest[i] && memcmp(want, got, csize)) {
			/* the unanswered overwrite: new bytes first, then the old */
			pattern(newer, csize, sent[i], i);
			for (k = 0; k < csize && got[k] == newer[k]; k++)
				;
			if (!memcmp(got + k, want + k, csize - k)) {
				printf("ackwrite: chunk %lu: %zu bytes of the unanswered generation %u over %u\n",
				       i, k, sent[i], latest[i]);
				checked++;
				continue;
			}
		}
		if (memcmp(want, got, csize)) {
			if (bad < 10)
				fprintf(stderr, "ackwrite: chunk %lu (generation %u) was answered but is lost\n",
					i, latest[i]);
			bad++;
		}
		checked++;
	}
	printf("ackwrite: %lu answered chunks checked, %lu lost\n", checked, bad);
	close(fd);
	free(want);
	free(got);
	free(newer);
	free(latest);
	free(sent);
	return bad || !checked ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "write"))
		return do_write(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "verify"))
		return do_verify(argc - 1, argv + 1);
	fprintf(stderr, "usage: ackwrite write|verify ...\n");
	return 2;
}
