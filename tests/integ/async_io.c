// SPDX-License-Identifier: MIT
/*
 * The asynchronous API against a real server, through include/rdax.h
 * only: queue-depth random writes and reads with verification, the
 * completion ring's limits, an fd that polls readable, and sync calls
 * interleaved with async ones on the same connection.
 *
 * Then requests of the largest size rdax_ioq_max_io() gives, at depth:
 * they must fit the credit window and, over SMB-Direct with signing or
 * encryption, one inline message. rdax_conn_stats_reset() zeroes every
 * counter, the MR cache's included.
 *
 * With --sign, the session must be signed: rdax_conn_info() says so, and
 * the "session:" line names what was negotiated.
 *
 * usage: async_io [--rdma] [--sign] [--timeout MS] [--guest | --user U --password-file F] URL DEPTH
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdax.h"

#define BS 4096
#define NBLK 1024			/* a 4 MiB file */

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static uint8_t pattern(uint32_t blk, uint32_t i)
{
	return (uint8_t)(blk * 131 + i * 7 + 1);
}

int main(int argc, char **argv)
{
	struct rdax_cfg *cfg;
	struct rdax_conn *c;
	struct rdax_tree *t;
	struct rdax_file *f;
	struct rdax_ioq *q;
	struct rdax_url u;
	struct rdax_cqe cqe[64];
	struct rdax_io io[64];
	struct rdax_buf *rb = NULL;
	struct rdax_conn_info ci;
	unsigned int depth, done, i, b, k;
	uint32_t *order;
	uint8_t *buf, *rbuf;
	bool sign = false;
	int a = 1, n, ret;

	if (rdax_cfg_new(&cfg))
		return 99;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--rdma"))
			rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA);
		else if (!strcmp(argv[a], "--guest"))
			rdax_cfg_set_guest(cfg, true);
		else if (!strcmp(argv[a], "--sign") && rdax_cfg_set_signing(cfg, true))
			return 2;
		else if (!strcmp(argv[a], "--sign"))
			sign = true;
		else if (!strcmp(argv[a], "--timeout") && a + 1 < argc &&
			 rdax_cfg_set_timeout(cfg, atoi(argv[++a])))
			return 2;
		else if (!strcmp(argv[a], "--user") && a + 1 < argc)
			rdax_cfg_set_credentials(cfg, argv[++a], NULL);
		else if (!strcmp(argv[a], "--password-file") && a + 1 < argc)
			rdax_cfg_set_password_file(cfg, argv[++a]);
	}
	if (a + 2 != argc || rdax_url_parse(argv[a], &u)) {
		fprintf(stderr, "usage: async_io [--rdma] [--sign] [--timeout MS] [--guest | --user U --password-file F] URL DEPTH\n");
		return 2;
	}
	depth = (unsigned int)atoi(argv[a + 1]);
	if (!depth || depth > 64)
		return 2;
	ret = rdax_connect(&c, u.host, u.port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret) {
		BAD("connect: %s", rdax_conn_errmsg(NULL));
		return 1;
	}
	rdax_conn_info(c, &ci);
	printf("session: dialect 0x%04x over %s, signing %s, encryption %s\n", ci.dialect,
	       ci.transport, ci.signing ? "on" : "off", ci.encryption ? "on" : "off");
	if (sign && !ci.signing)
		BAD("--sign, but the session is not signed");
	if (rdax_tree_connect(c, u.share, &t) ||
	    rdax_open(t, u.path, O_RDWR | O_CREAT | O_TRUNC, &f)) {
		BAD("open %s: %s", u.path, rdax_conn_errmsg(c));
		return 1;
	}
	buf = aligned_alloc(4096, (size_t)NBLK * BS);
	rbuf = aligned_alloc(4096, (size_t)NBLK * BS);
	order = malloc(sizeof(*order) * NBLK);
	for (b = 0; b < NBLK; b++) {
		for (i = 0; i < BS; i++)
			buf[(size_t)b * BS + i] = pattern(b, i);
		order[b] = b;
	}
	srand(7);
	for (b = NBLK - 1; b > 0; b--) {
		k = (unsigned int)rand() % (b + 1);
		i = order[b];
		order[b] = order[k];
		order[k] = i;
	}
	/* registered once: every I/O inside it needs no registration */
	if (rdax_buf_reg(c, buf, (size_t)NBLK * BS, &rb))
		BAD("rdax_buf_reg: %s", rdax_conn_errmsg(c));
	if (rdax_ioq_new(c, depth, &q)) {
		BAD("rdax_ioq_new");
		return 1;
	}
	/* signed over SMB-Direct the data goes inline: one message (~1 MiB) */
	if (rdax_ioq_max_io(q) < (ci.signing && !strcmp(ci.transport, "smbdirect") ?
				  (256u << 10) : (1u << 20)))
		BAD("max I/O %zu below 1 MiB", rdax_ioq_max_io(q));
	else
		OK("max I/O per request %zu bytes", rdax_ioq_max_io(q));

	/* random 4 KiB writes at queue depth `depth` */
	for (b = 0, done = 0; done < NBLK;) {
		unsigned int room = depth - rdax_ioq_inflight(q), m = 0;

		while (m < room && b < NBLK && m < 64) {
			io[m] = (struct rdax_io){ .opcode = RDAX_OP_WRITE, .file = f,
						  .buf = buf + (size_t)order[b] * BS, .len = BS,
						  .offset = (uint64_t)order[b] * BS,
						  .user_data = order[b] };
			m++;
			b++;
		}
		if (m) {
			n = rdax_ioq_submit(q, io, m);
			if (n < 0 || (unsigned int)n != m) {
				BAD("submit of %u took %d: %s", m, n, rdax_conn_errmsg(c));
				return 1;
			}
			if (rdax_ioq_inflight(q) > depth)
				BAD("%u in flight with depth %u", rdax_ioq_inflight(q), depth);
		}
		n = rdax_ioq_reap(q, cqe, 1, 64, 10000);
		if (n <= 0) {
			BAD("reap returned %d: %s", n, rdax_conn_errmsg(c));
			return 1;
		}
		for (k = 0; k < (unsigned int)n; k++)
			if (cqe[k].res != BS)
				BAD("write of block %llu: %lld", (unsigned long long)cqe[k].user_data,
				    (long long)cqe[k].res);
		done += (unsigned int)n;
	}
	OK("%u random 4 KiB writes at depth %u completed", NBLK, depth);

	/* a full ring refuses more than depth */
	for (k = 0; k < depth + 5 && k < 64; k++)
		io[k] = (struct rdax_io){ .opcode = RDAX_OP_READ, .file = f,
					  .buf = rbuf + (size_t)k * BS, .len = BS,
					  .offset = (uint64_t)k * BS, .user_data = k };
	n = rdax_ioq_submit(q, io, k);
	if (n == (int)depth)
		OK("submit of %u into a depth-%u queue takes %d", k, depth, n);
	else
		BAD("submit of %u into a depth-%u queue took %d", k, depth, n);
	{
		struct pollfd p = { .fd = rdax_ioq_fd(q), .events = POLLIN };

		if (poll(&p, 1, 5000) == 1)
			OK("the queue's fd polls readable while replies are pending");
		else
			BAD("the queue's fd did not become readable");
	}
	for (done = 0; done < (unsigned int)n;) {
		ret = rdax_ioq_reap(q, cqe, 1, 64, 10000);
		if (ret <= 0) {
			BAD("reap: %d", ret);
			return 1;
		}
		done += (unsigned int)ret;
	}

	/* the sync API on the same connection, in between */
	if (rdax_pread(f, rbuf, (size_t)NBLK * BS, 0) != (ssize_t)NBLK * BS ||
	    memcmp(rbuf, buf, (size_t)NBLK * BS))
		BAD("sync read-back differs: %s", rdax_conn_errmsg(c));
	else
		OK("sync rdax_pread of the whole file matches");

	/* random reads at depth, verified */
	memset(rbuf, 0, (size_t)NBLK * BS);
	for (b = 0, done = 0; done < NBLK;) {
		unsigned int room = depth - rdax_ioq_inflight(q), m = 0;

		while (m < room && b < NBLK && m < 64) {
			io[m] = (struct rdax_io){ .opcode = RDAX_OP_READ, .file = f,
						  .buf = rbuf + (size_t)order[b] * BS, .len = BS,
						  .offset = (uint64_t)order[b] * BS,
						  .user_data = order[b] };
			m++;
			b++;
		}
		if (m && rdax_ioq_submit(q, io, m) != (int)m) {
			BAD("submit reads: %s", rdax_conn_errmsg(c));
			return 1;
		}
		n = rdax_ioq_reap(q, cqe, 1, 64, 10000);
		if (n <= 0) {
			BAD("reap reads: %d", n);
			return 1;
		}
		for (k = 0; k < (unsigned int)n; k++)
			if (cqe[k].res != BS)
				BAD("read of block %llu: %lld", (unsigned long long)cqe[k].user_data,
				    (long long)cqe[k].res);
		done += (unsigned int)n;
	}
	if (memcmp(rbuf, buf, (size_t)NBLK * BS))
		BAD("random reads at depth %u returned different data", depth);
	else
		OK("%u random 4 KiB reads at depth %u match what was written", NBLK, depth);

	/* flush, and a read past EOF completes with 0 */
	io[0] = (struct rdax_io){ .opcode = RDAX_OP_FSYNC, .file = f, .user_data = 1 };
	io[1] = (struct rdax_io){ .opcode = RDAX_OP_READ, .file = f, .buf = rbuf,
				  .len = BS, .offset = (uint64_t)NBLK * BS + 4096, .user_data = 2 };
	for (k = 0; k < 2; k++) {
		if (rdax_ioq_submit(q, &io[k], 1) != 1 || rdax_ioq_reap(q, cqe, 1, 1, 10000) != 1 ||
		    cqe[0].res != 0) {
			BAD("%s: %lld", k ? "read past EOF" : "FSYNC", (long long)cqe[0].res);
			break;
		}
	}
	if (k == 2)
		OK("FSYNC completes, a read past EOF returns 0");

	/* the largest requests, depth of them (up to 4): writes, then reads */
	{
		size_t max = rdax_ioq_max_io(q), len;
		unsigned int m = depth < 4 ? depth : 4, bad = 0;
		uint8_t *big = malloc(max * m), *back = malloc(max * m);
		struct rdax_stats st;
		size_t j;

		for (j = 0; big && j < max * m; j++)
			big[j] = (uint8_t)(j * 13 + j / 4096);
		for (k = 0; big && back && k < 2; k++) {
			for (i = 0; i < m; i++)
				io[i] = (struct rdax_io){ .opcode = k ? RDAX_OP_READ : RDAX_OP_WRITE,
							  .file = f, .buf = (k ? back : big) + i * max,
							  .len = max, .offset = (uint64_t)i * max,
							  .user_data = i };
			n = rdax_ioq_submit(q, io, m);
			if (n != (int)m) {
				BAD("submit of %u %s of %zu bytes took %d: %s", m, k ? "reads" : "writes",
				    max, n, rdax_conn_errmsg(c));
				break;
			}
			rdax_conn_stats(c, &st);
			if (st.credits > 65535)
				BAD("%u credits held with %u requests queued", st.credits, m);
			for (done = 0; done < m; done += (unsigned int)n) {
				n = rdax_ioq_reap(q, cqe, 1, 64, 20000);
				if (n <= 0) {
					BAD("reap of the largest requests: %d: %s", n, rdax_conn_errmsg(c));
					break;
				}
				for (i = 0; i < (unsigned int)n; i++)
					if (cqe[i].res != (int64_t)max)
						bad++;
			}
			if (n <= 0)
				break;
		}
		len = max * m;
		if (k == 2 && !bad && !memcmp(big, back, len))
			OK("%u requests of %zu bytes (rdax_ioq_max_io) written and read back", m, max);
		else
			BAD("%u requests of %zu bytes: %u short or failed", m, max, bad);
		free(big);
		free(back);

		rdax_conn_stats(c, &st);
		printf("stats: %llu requests, %llu bytes by RDMA, %llu inline, MR cache %llu/%llu\n",
		       (unsigned long long)st.requests, (unsigned long long)st.rdma_bytes,
		       (unsigned long long)st.inline_bytes, (unsigned long long)st.mr_cache_hits,
		       (unsigned long long)st.mr_cache_misses);
		rdax_conn_stats_reset(c);
		rdax_conn_stats(c, &st);
		if (st.round_trips || st.requests || st.bytes_sent || st.bytes_received ||
		    st.bytes_read || st.bytes_written || st.rdma_bytes || st.inline_bytes ||
		    st.mr_cache_hits || st.mr_cache_misses)
			BAD("after rdax_conn_stats_reset: %llu requests, %llu bytes, MR cache %llu/%llu",
			    (unsigned long long)st.requests, (unsigned long long)st.bytes_sent,
			    (unsigned long long)st.mr_cache_hits,
			    (unsigned long long)st.mr_cache_misses);
		else
			OK("rdax_conn_stats_reset zeroes every counter, the MR cache's too");
	}
	rdax_ioq_delete(&q);
	rdax_buf_dereg(&rb);
	rdax_close(&f);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	free(order);
	free(buf);
	free(rbuf);
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
