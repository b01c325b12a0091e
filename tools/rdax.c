// SPDX-License-Identifier: MIT
/* rdax: command-line client for SMB3 servers (librdax). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "rdax.h"
#include "crypto/passdb.h"

#define PIPE_CHUNK (1u << 20)	/* bytes per request, at most */
#define PIPE_MIN 2		/* requests in flight, at least */
#define PIPE_MAX 16		/* ... and at most */
#define CREDIT_BYTES 65536u	/* [MS-SMB2] 3.1.5.2: one credit per 64 KiB */

struct opts {
	enum rdax_transport transport;
	const char *user;
	const char *password_file;
	bool guest;
	bool sign;
	bool encrypt;
	bool rdma_transform;		/* offer the SMB 3.1.1 RDMA transform */
	bool stats;
	bool quiet;
	const char *passdb;
	uint16_t max_dialect;
	unsigned int copy_flags;	/* RDAX_COPY_* for cp */
	unsigned long count;		/* bench: operations of each kind */
	bool json;			/* bench: one JSON document on stdout */
	bool no_leases;			/* ask for no lease, cache nothing */
	bool no_durable;		/* no durable handle, no reconnect */
	unsigned int channels;		/* SMB3 multichannel: channels wanted */
	int rdma_channels;		/* SMB-Direct channels first: 1, 0 never, -1 auto */
	bool symbolic;			/* ln -s */
	bool long_list;			/* ls -l */
};

struct session {
	struct rdax_url url;
	char urlstr[4400];
	struct rdax_conn *conn;
	struct rdax_tree *tree;
	struct timespec t0;
	uint64_t setup_trips;		/* round trips before the operation */
};

static const char *prog = "rdax";

/* librdax's notices (channels skipped or lost): not errors, but said */
static void lib_notice(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s: %s\n", prog, msg);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rdax [--transport tcp|rdma] [--channels N] [--user U --password-file F | --guest]\n"
"            CMD smb://HOST[:PORT]/SHARE/PATH ...\n"
"\n"
"commands:\n"
"  ls [-l] URL          list a directory (-l: modes, owners, links; with the\n"
"                       SMB3 POSIX extensions)\n"
"  get URL [LOCAL]      download a file (LOCAL '-' is stdout)\n"
"  put LOCAL URL        upload a file\n"
"  cat URL              print a file\n"
"  stat URL             show file attributes\n"
"  touch URL            create a file or update its time\n"
"  rm URL               delete a file\n"
"  mkdir URL            create a directory\n"
"  rmdir URL            delete an empty directory\n"
"  mv URL NEWPATH       rename within the share (NEWPATH or a URL)\n"
"  ln -s TARGET URL     make a symlink (SMB3 POSIX extensions)\n"
"  readlink URL         print a symlink's target\n"
"  chmod MODE URL       set the permission bits (octal)\n"
"  cp URL DEST          copy a file (DEST a URL or a path on the same share);\n"
"                       server-side on one share, else through this client\n"
"  bench meta URL       time touch, stat, restat (stat again), truncate, mv, rm,\n"
"                       mkdir, rmdir in the directory URL; round trips per\n"
"                       operation and ops/s\n"
"  passwd --passdb FILE USER   set USER's password (read from stdin)\n"
"\n"
"options:\n"
"  -u, --user USER          user name (or smb://USER@HOST/...)\n"
"  -A, --password-file F    file whose first line is the password (mode 0600);\n"
"                           otherwise RDAX_PASSWORD is used\n"
"  -g, --guest              anonymous guest logon\n"
"  -t, --transport T        tcp (default) or rdma\n"
"      --sign               require signing\n"
"      --encrypt            require encryption\n"
"      --rdma-transform     over SMB-Direct, move signed/encrypted I/O by RDMA\n"
"                           where the server takes the SMB 3.1.1 RDMA transform\n"
"      --max-protocol P     highest dialect: SMB2_10 SMB3_00 SMB3_02 SMB3_11\n"
"      --channels N         SMB3 multichannel: up to N channels (1-16, default 1)\n"
"      --rdma-channels      with --channels: try SMB-Direct channels first (the\n"
"                           default when this machine has an RDMA device)\n"
"      --tcp-channels       with --channels: every added channel is TCP\n"
"      --no-leases          ask for no lease: every stat goes to the server\n"
"      --no-durable         no durable handles: a dropped connection is an error\n"
"      --stats              print throughput, round trips and the channels\n"
"      --server-copy        cp: fail rather than copy through the client\n"
"      --client-copy        cp: read and write through the client\n"
"      --copychunk          cp: server-side by copychunk, never sharing extents\n"
"      --count N            bench: operations of each kind (default 100)\n"
"      --json               bench: print one JSON document (fio's field names)\n"
"  -q, --quiet              no progress bar\n"
"  -V, --version, -h, --help\n"
"The password is never taken from the command line.\n");
}

static int usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\n", prog, msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'rdax --help' for more information.\n");
	return 2;
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* "rdax: smb://host/share/path: message" */
static int fail(struct session *s, int ret, const char *what)
{
	const char *msg = rdax_conn_errmsg(s ? s->conn : NULL);

	if (!msg || !*msg)
		msg = strerror(-ret);
	fprintf(stderr, "%s: %s%s%s\n", prog, what ? what : "", what ? ": " : "", msg);
	return 1;
}

/* rdax_close, and whether the server's CLOSE failed (-EIO: its message is kept) */
static int close_file(struct session *s, struct rdax_file **f)
{
	if (!*f)
		return 0;
	rdax_close(f);
	return *rdax_conn_errmsg(s->conn) ? -EIO : 0;
}

/* The last component of a path ("" for none). */
static const char *path_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/*
 * dir + "/" + name into buf, without doubled or trailing slashes in dir;
 * -ENAMETOOLONG if it does not fit.
 */
static int path_join(char *buf, size_t len, const char *dir, const char *name)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		n = 0;
	if ((size_t)snprintf(buf, len, "%.*s%s%s", (int)n, dir,
			     n || dir[0] == '/' ? "/" : "", name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Does a URL or path name a directory by its trailing '/'? */
static bool ends_with_slash(const char *s)
{
	size_t n = strlen(s);

	return n && s[n - 1] == '/';
}

static int session_open(struct session *s, const struct opts *o, const char *url,
			bool need_share)
{
	struct rdax_cfg *cfg;
	const char *user, *pw;
	int ret;

	memset(s, 0, sizeof(*s));
	snprintf(s->urlstr, sizeof(s->urlstr), "%s", url);
	ret = rdax_url_parse(url, &s->url);
	if (ret) {
		fprintf(stderr, "%s: %s: not a valid smb://HOST[:PORT]/SHARE/PATH URL\n",
			prog, url);
		return 2;
	}
	if (need_share && !s->url.share[0]) {
		fprintf(stderr, "%s: %s: no share in the URL\n", prog, url);
		return 2;
	}
	ret = rdax_cfg_new(&cfg);
	if (ret)
		return fail(NULL, ret, url);
	rdax_cfg_set_transport(cfg, o->transport);
	rdax_cfg_set_channels(cfg, o->channels ? o->channels : 1);
	if (o->rdma_channels >= 0)
		rdax_cfg_set_rdma_channels(cfg, o->rdma_channels);
	rdax_cfg_set_log(cfg, lib_notice, NULL);
	rdax_cfg_set_signing(cfg, o->sign);
	rdax_cfg_set_leases(cfg, !o->no_leases);
	rdax_cfg_set_durable(cfg, !o->no_durable);
	rdax_cfg_set_encryption(cfg, o->encrypt);
	rdax_cfg_set_rdma_transform(cfg, o->rdma_transform);
	if (o->max_dialect)
		rdax_cfg_set_dialects(cfg, RDAX_SMB_2_1, o->max_dialect);
	user = o->user ? o->user : s->url.user[0] ? s->url.user : NULL;
	if (o->guest || !user) {
		if (!o->guest) {
			fprintf(stderr, "%s: %s: give --user (with --password-file or RDAX_PASSWORD) or --guest\n",
				prog, url);
			rdax_cfg_delete(&cfg);
			return 2;
		}
		rdax_cfg_set_guest(cfg, true);
	} else {
		rdax_cfg_set_credentials(cfg, user, NULL);
		if (o->password_file) {
			ret = rdax_cfg_set_password_file(cfg, o->password_file);
			if (ret) {
				fprintf(stderr, "%s: password file %s: %s\n", prog,
					o->password_file,
					ret == -EPERM ? "readable by group or others (chmod 600)" :
					strerror(-ret));
				rdax_cfg_delete(&cfg);
				return 2;
			}
		} else if ((pw = getenv("RDAX_PASSWORD"))) {
			rdax_cfg_set_credentials(cfg, user, pw);
		} else {
			fprintf(stderr, "%s: %s: no password: use --password-file or RDAX_PASSWORD\n",
				prog, url);
			rdax_cfg_delete(&cfg);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	ret = rdax_connect(&s->conn, s->url.host, s->url.port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret) {
		fprintf(stderr, "%s: smb://%s%s%.0u: %s\n", prog, s->url.host,
			s->url.port ? ":" : "", s->url.port, rdax_errormsg());
		return 1;
	}
	if (!need_share)
		return 0;
	ret = rdax_tree_connect(s->conn, s->url.share, &s->tree);
	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", prog, url, rdax_conn_errmsg(s->conn));
		rdax_disconnect(&s->conn);
		return 1;
	}
	{
		struct rdax_stats st;

		rdax_conn_stats(s->conn, &st);
		s->setup_trips = st.round_trips;
	}
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	return 0;
}

static const char *dialect_name(uint16_t d)
{
	switch (d) {
	case RDAX_SMB_2_1: return "2.1";
	case RDAX_SMB_3_0: return "3.0";
	case RDAX_SMB_3_0_2: return "3.0.2";
	case RDAX_SMB_3_1_1: return "3.1.1";
	default: return "?";
	}
}

/* one line per channel: transport, peer, bytes, requests */
static void print_channels(struct rdax_conn *c)
{
	struct rdax_channel_info ch;
	unsigned int i;

	for (i = 0; rdax_conn_channel_info(c, i, &ch) == 0; i++) {
		fprintf(stderr, "channel %u: %s %s, %s, %llu bytes sent, %llu received, "
			"%llu by RDMA, %llu requests (%llu resent)%s%s\n", ch.index,
			ch.transport, ch.peer, ch.alive ? "alive" : "failed",
			(unsigned long long)ch.bytes_sent,
			(unsigned long long)ch.bytes_received,
			(unsigned long long)ch.rdma_bytes,
			(unsigned long long)ch.requests, (unsigned long long)ch.replays,
			ch.error[0] ? ": " : "", ch.error);
	}
}

static void session_close(struct session *s, const struct opts *o,
			  uint64_t bytes)
{
	struct rdax_stats st;
	double t = elapsed(&s->t0);

	if (o->stats && s->conn) {
		struct rdax_conn_info ci;

		/* what protected the session, as negotiated */
		rdax_conn_info(s->conn, &ci);
		fprintf(stderr, "session: SMB %s over %s, signing %s, encryption %s%s\n",
			dialect_name(ci.dialect), ci.transport, ci.signing ? "on" : "off",
			ci.encryption ? "on" : "off", ci.guest ? ", guest" : "");
		rdax_conn_stats(s->conn, &st);
		if (bytes)
			fprintf(stderr, "%llu bytes in %.3f s (%.1f MiB/s), ",
				(unsigned long long)bytes, t,
				t > 0 ? (double)bytes / t / 1048576 : 0.0);
		fprintf(stderr, "%llu round trip%s (+%llu to set up the session)",
			(unsigned long long)(st.round_trips - s->setup_trips),
			st.round_trips - s->setup_trips == 1 ? "" : "s",
			(unsigned long long)s->setup_trips);
		if (o->transport == RDAX_TRANSPORT_RDMA)
			fprintf(stderr, ", SMB-Direct: %llu bytes by RDMA, %llu inline, "
				"MR cache %llu hits %llu misses",
				(unsigned long long)st.rdma_bytes,
				(unsigned long long)st.inline_bytes,
				(unsigned long long)st.mr_cache_hits,
				(unsigned long long)st.mr_cache_misses);
		fputc('\n', stderr);
		if (st.reconnects)
			fprintf(stderr, "reconnects %llu: %llu durable handles back, %llu lost\n",
				(unsigned long long)st.reconnects,
				(unsigned long long)st.durable_reopens,
				(unsigned long long)st.handles_lost);
		if (st.breaks || st.cache_hits)
			fprintf(stderr, "leases: %llu breaks, %llu stats from the cache\n",
				(unsigned long long)st.breaks, (unsigned long long)st.cache_hits);
		print_channels(s->conn);
	}
	rdax_tree_disconnect(&s->tree);
	rdax_disconnect(&s->conn);
}

struct progress {
	bool on;
	uint64_t total;
	struct timespec t0;
	double last;
};

static void progress_init(struct progress *p, const struct opts *o, uint64_t total)
{
	p->on = !o->quiet && isatty(STDERR_FILENO) && total >= (4u << 20);
	p->total = total;
	p->last = 0;
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
}

static void progress_show(struct progress *p, uint64_t done, bool end)
{
	double t = elapsed(&p->t0), pct;
	int i, bar;

	if (!p->on || (!end && t - p->last < 0.2))
		return;
	p->last = t;
	pct = p->total ? 100.0 * (double)done / (double)p->total : 100.0;
	bar = (int)(pct / 5);
	fputs("\r[", stderr);
	for (i = 0; i < 20; i++)
		fputc(i < bar ? '#' : ' ', stderr);
	fprintf(stderr, "] %5.1f%% %8.1f MiB %7.1f MiB/s", pct,
		(double)done / 1048576, t > 0 ? (double)done / t / 1048576 : 0.0);
	if (end)
		fputc('\n', stderr);
}

static void fmt_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	time_t t = ts->tv_sec;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/* "drwxr-xr-x": the type and permission bits of a POSIX mode */
static void fmt_mode(uint32_t mode, char *out)
{
	static const char rwx[] = "rwxrwxrwx";
	int i;

	out[0] = S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : '-';
	for (i = 0; i < 9; i++)
		out[1 + i] = mode & (0400u >> i) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = mode & S_IXUSR ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = mode & S_IXGRP ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = mode & S_IXOTH ? 't' : 'T';
	out[10] = 0;
}

static void print_long(struct session *s, const struct rdax_dirent *ent, const char *tbuf)
{
	char mbuf[12], target[4096], path[5200];
	ssize_t n;

	if (!ent->st.posix) {
		printf("%s %3u %5s %5s %12llu  %s  %s%s\n", ent->st.is_dir ? "d?????????" :
		       "-?????????", ent->st.nlink, "?", "?", (unsigned long long)ent->st.size,
		       tbuf, ent->name, ent->st.is_dir ? "/" : "");
		return;
	}
	fmt_mode(ent->st.mode, mbuf);
	printf("%s %3u %5u %5u %12llu  %s  %s", mbuf, ent->st.nlink, ent->st.uid, ent->st.gid,
	       (unsigned long long)ent->st.size, tbuf, ent->name);
	if (S_ISLNK(ent->st.mode)) {
		snprintf(path, sizeof(path), "%s%s%s", s->url.path, *s->url.path ? "/" : "",
			 ent->name);
		n = rdax_readlink(s->tree, path, target, sizeof(target));
		if (n >= 0)
			printf(" -> %s", target);
	}
	printf("%s\n", ent->st.is_dir ? "/" : "");
}

static int cmd_ls(const struct opts *o, const char *url, bool lng)
{
	struct session s;
	struct rdax_dirent ent;
	struct rdax_dir *d;
	char tbuf[32];
	int ret;

	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	ret = rdax_opendir(s.tree, s.url.path, &d);
	if (ret) {
		fail(&s, ret, url);
		session_close(&s, o, 0);
		return 1;
	}
	while ((ret = rdax_readdir(d, &ent)) == 1) {
		fmt_time(&ent.st.mtime, tbuf, sizeof(tbuf));
		if (lng) {
			print_long(&s, &ent, tbuf);
			continue;
		}
		printf("%c %12llu  %s  %s%s\n", ent.st.is_dir ? 'd' : '-',
		       (unsigned long long)ent.st.size, tbuf, ent.name,
		       ent.st.is_dir ? "/" : "");
	}
	if (ret < 0)
		fail(&s, ret, url);
	rdax_closedir(&d);
	session_close(&s, o, 0);
	return ret < 0 ? 1 : 0;
}

/* ---- pipelined transfers: several READs or WRITEs in flight ---- */

/*
 * One request slot of a transfer, in file order in a ring: a READ whose
 * data goes out to the local file in order, or a WRITE of what was read
 * from it.
 */
struct pipe_slot {
	uint8_t *buf;
	uint64_t off;
	size_t len;
	int64_t res;
	uint32_t status;
	bool done;
};

struct pipe {
	struct session *s;
	struct rdax_ioq *q;
	struct rdax_file *f;
	uint32_t op;			/* RDAX_OP_READ or RDAX_OP_WRITE */
	size_t chunk;
	unsigned int depth;
	unsigned int head, n;		/* slots in flight or waiting, from head */
	uint8_t *mem;
	struct rdax_buf *reg;		/* mem, registered (SMB-Direct), or NULL */
	struct pipe_slot slot[PIPE_MAX];
	/* librdax's message of the first error: the next call clears it */
	char why[256];
};

static void pipe_note(struct pipe *p)
{
	const char *m = rdax_conn_errmsg(p->s->conn);

	if (!p->why[0] && m && *m)
		snprintf(p->why, sizeof(p->why), "%s", m);
}

/*
 * As many requests in flight as the credits the server granted pay for
 * (each costs one per 64 KiB), within PIPE_MIN..PIPE_MAX, each as large
 * as the connection carries up to PIPE_CHUNK.
 */
static int pipe_open(struct pipe *p, struct session *s, struct rdax_file *f, uint32_t op)
{
	struct rdax_stats st;
	unsigned int i, per;
	size_t max;
	int ret;

	memset(p, 0, sizeof(*p));
	p->s = s;
	p->f = f;
	p->op = op;
	ret = rdax_ioq_new(s->conn, PIPE_MAX, &p->q);
	if (ret)
		return ret;
	max = rdax_ioq_max_io(p->q);
	p->chunk = max < PIPE_CHUNK ? max : PIPE_CHUNK;
	per = (unsigned int)((p->chunk + CREDIT_BYTES - 1) / CREDIT_BYTES);
	rdax_conn_stats(s->conn, &st);
	p->depth = st.credits / per;
	if (p->depth < PIPE_MIN)
		p->depth = PIPE_MIN;
	if (p->depth > PIPE_MAX)
		p->depth = PIPE_MAX;
	p->mem = malloc(p->chunk * p->depth);
	if (!p->mem) {
		rdax_ioq_delete(&p->q);
		return -ENOMEM;
	}
	/* pinned once and named by each request; without it, the MR cache */
	if (rdax_buf_reg(s->conn, p->mem, p->chunk * p->depth, &p->reg))
		p->reg = NULL;
	for (i = 0; i < p->depth; i++)
		p->slot[i].buf = p->mem + i * p->chunk;
	return 0;
}

/* Waits for what is still in flight (after an error too), then frees. */
static void pipe_close(struct pipe *p, const struct opts *o)
{
	if (o->stats && p->q)
		fprintf(stderr, "pipeline: up to %u requests of %zu bytes in flight\n",
			p->depth, p->chunk);
	rdax_ioq_delete(&p->q);
	rdax_buf_dereg(&p->reg);
	free(p->mem);
	p->mem = NULL;
}

static struct pipe_slot *pipe_tail(struct pipe *p)
{
	return &p->slot[(p->head + p->n) % p->depth];
}

static int pipe_submit(struct pipe *p, struct pipe_slot *sl, uint64_t off, size_t len)
{
	struct rdax_io io = {
		.opcode = p->op, .file = p->f, .buf = sl->buf, .len = len,
		.offset = off, .user_data = (uint64_t)(sl - p->slot), .reg = p->reg,
	};
	int ret;

	sl->off = off;
	sl->len = len;
	sl->done = false;
	ret = rdax_ioq_submit(p->q, &io, 1);
	pipe_note(p);
	if (ret < 0)
		return ret;
	if (ret != 1)
		return -EAGAIN;	/* cannot happen: the queue is deeper than the ring */
	p->n++;
	return 0;
}

/* Wait for the slot at the head; completions of later ones are noted. */
static int pipe_wait_head(struct pipe *p)
{
	struct rdax_cqe cqe[PIPE_MAX];
	int i, n;

	while (!p->slot[p->head].done) {
		n = rdax_ioq_reap(p->q, cqe, 1, PIPE_MAX, -1);
		pipe_note(p);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			struct pipe_slot *sl = &p->slot[cqe[i].user_data];

			sl->res = cqe[i].res;
			sl->status = cqe[i].status;
			sl->done = true;
		}
	}
	return 0;
}

/*
 * "rdax: smb://host/share/path: write of 1048576 bytes at 5242880:
 * STATUS_DISK_FULL (...)": the file, the server and why, for a request
 * that failed in the middle of a transfer.
 */
static int pipe_fail(struct pipe *p, const struct pipe_slot *sl, int err)
{
	const char *why = p->why;
	char shortw[64];

	if (sl && sl->status) {
		why = rdax_status_str(sl->status);
	} else if (sl && sl->res >= 0) {
		snprintf(shortw, sizeof(shortw), "only %lld bytes written", (long long)sl->res);
		why = shortw;
	} else if (!why || !*why) {
		why = strerror(-err);
	}
	fprintf(stderr, "%s: %s: %s", prog, p->s->urlstr, p->op == RDAX_OP_READ ? "read" : "write");
	if (sl)
		fprintf(stderr, " of %zu bytes at %llu", sl->len, (unsigned long long)sl->off);
	fprintf(stderr, ": %s\n", why);
	return 1;
}

/* full reads of a local file or pipe: fewer only at its end */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t have = 0;
	ssize_t n;

	while (have < len) {
		n = read(fd, buf + have, len - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

/*
 * READs of size bytes in flight, written to fd in order. At size the
 * file is asked its size again, so one that grew is read to its new end
 * (a READ past the end would do, but its error answer is the one ksmbd
 * signs wrongly: docs/rdma-transform.md).
 */
static int pipe_get(struct pipe *p, uint64_t size, int fd, const char *local,
		    struct progress *pr, uint64_t *done)
{
	struct rdax_stat st;
	uint64_t next = 0;
	bool end = false;
	int ret;

	for (;;) {
		while (!end && p->n < p->depth && next < size) {
			size_t len = p->chunk;

			if (size - next < len)
				len = (size_t)(size - next);
			ret = pipe_submit(p, pipe_tail(p), next, len);
			if (ret)
				return pipe_fail(p, NULL, ret);
			next += len;
		}
		if (!p->n) {
			if (end)
				return 0;
			ret = rdax_fstat(p->f, &st);
			if (ret)
				return pipe_fail(p, NULL, ret);
			if (st.size <= size)
				return 0;
			size = st.size;
			continue;
		}
		ret = pipe_wait_head(p);
		if (ret)
			return pipe_fail(p, NULL, ret);
		while (p->n && p->slot[p->head].done) {
			struct pipe_slot *sl = &p->slot[p->head];

			if (sl->res < 0)
				return pipe_fail(p, sl, (int)sl->res);
			if (!end && sl->res && write(fd, sl->buf, (size_t)sl->res) != sl->res) {
				fprintf(stderr, "%s: %s: %s\n", prog, local ? local : "stdout",
					strerror(errno));
				return 1;
			}
			if (!end)
				*done += (uint64_t)sl->res;
			/* the end of the file: what follows is dropped */
			if ((size_t)sl->res < sl->len)
				end = true;
			p->head = (p->head + 1) % p->depth;
			p->n--;
		}
		progress_show(pr, *done, false);
	}
}

/* The local file read in order, its pieces written with WRITEs in flight. */
static int pipe_put(struct pipe *p, int fd, const char *local, struct progress *pr,
		    uint64_t *done)
{
	uint64_t next = 0;
	bool end = false;
	ssize_t n;
	int ret;

	for (;;) {
		while (!end && p->n < p->depth) {
			struct pipe_slot *sl = pipe_tail(p);

			n = read_full(fd, sl->buf, p->chunk);
			if (n < 0) {
				fprintf(stderr, "%s: %s: %s\n", prog, local, strerror(errno));
				return 1;
			}
			if ((size_t)n < p->chunk)
				end = true;
			if (!n)
				break;
			ret = pipe_submit(p, sl, next, (size_t)n);
			if (ret)
				return pipe_fail(p, NULL, ret);
			next += (uint64_t)n;
		}
		if (!p->n)
			return 0;
		ret = pipe_wait_head(p);
		if (ret)
			return pipe_fail(p, NULL, ret);
		while (p->n && p->slot[p->head].done) {
			struct pipe_slot *sl = &p->slot[p->head];

			if (sl->res < 0)
				return pipe_fail(p, sl, (int)sl->res);
			if ((size_t)sl->res < sl->len)
				return pipe_fail(p, sl, -ENOSPC);
			*done += (uint64_t)sl->res;
			p->head = (p->head + 1) % p->depth;
			p->n--;
		}
		progress_show(pr, *done, false);
	}
}

static int cmd_get(const struct opts *o, const char *url, const char *local, bool cat)
{
	struct rdax_file *f = NULL;
	struct rdax_stat st;
	struct progress pr;
	struct session s;
	struct pipe p = { 0 };
	struct stat lst;
	uint64_t off = 0;
	char *into = NULL;
	int fd = -1, ret, rc = 1;

	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	ret = rdax_open(s.tree, s.url.path, O_RDONLY, &f);
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	ret = rdax_fstat(f, &st);
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	if (st.is_dir) {
		fprintf(stderr, "%s: %s: is a directory\n", prog, url);
		goto out_close;
	}
	if (cat || (local && !strcmp(local, "-"))) {
		fd = STDOUT_FILENO;
	} else {
		if (!local) {
			local = path_base(s.url.path);
		} else if (!stat(local, &lst) && S_ISDIR(lst.st_mode)) {
			/* into a directory, like cp: DIR/NAME */
			size_t len = strlen(local) + strlen(path_base(s.url.path)) + 2;

			into = malloc(len);
			if (!into || path_join(into, len, local, path_base(s.url.path))) {
				fprintf(stderr, "%s: %s: %s\n", prog, local, strerror(ENOMEM));
				goto out_close;
			}
			local = into;
		}
		fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, local, strerror(errno));
			goto out_close;
		}
	}
	ret = pipe_open(&p, &s, f, RDAX_OP_READ);
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	progress_init(&pr, o, st.size);
	rc = pipe_get(&p, st.size, fd, local, &pr, &off);
	pipe_close(&p, o);
	if (!rc)
		progress_show(&pr, off, true);
out_close:
	if (fd > STDOUT_FILENO && close(fd)) {
		fprintf(stderr, "%s: %s: %s\n", prog, local, strerror(errno));
		rc = 1;
	}
	if (close_file(&s, &f) && !rc)
		rc = fail(&s, -EIO, url);
	session_close(&s, o, off);
	free(into);
	return rc;
}

static int cmd_put(const struct opts *o, const char *local, const char *url)
{
	char to[sizeof(((struct rdax_url *)0)->path) + 256];
	struct rdax_file *f = NULL;
	struct progress pr;
	struct session s;
	struct pipe p = { 0 };
	struct stat st;
	uint64_t off = 0;
	int fd, ret, rc = 1;

	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: %s: %s\n", prog, local, strerror(errno));
		return 1;
	}
	ret = session_open(&s, o, url, true);
	if (ret) {
		close(fd);
		return ret;
	}
	/* a URL ending in '/', or a directory: DIR/NAME, like cp */
	snprintf(to, sizeof(to), "%s", s.url.path);
	ret = ends_with_slash(url) ? -EISDIR :
	      rdax_open(s.tree, to, O_WRONLY | O_CREAT | O_TRUNC, &f);
	if (ret == -EISDIR) {
		ret = path_join(to, sizeof(to), s.url.path, path_base(local));
		if (!ret)
			ret = rdax_open(s.tree, to, O_WRONLY | O_CREAT | O_TRUNC, &f);
	}
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	ret = pipe_open(&p, &s, f, RDAX_OP_WRITE);
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	progress_init(&pr, o, (uint64_t)st.st_size);
	rc = pipe_put(&p, fd, local, &pr, &off);
	pipe_close(&p, o);
	if (!rc)
		progress_show(&pr, off, true);
out_close:
	close(fd);
	if (close_file(&s, &f) && !rc)
		rc = fail(&s, -EIO, url);
	session_close(&s, o, off);
	return rc;
}

/* One share: host names compare without case, ports with 445 for none. */
static bool same_share(const struct rdax_url *a, const struct rdax_url *b)
{
	return !strcasecmp(a->host, b->host) && !strcasecmp(a->share, b->share) &&
	       (a->port ? a->port : 445) == (b->port ? b->port : 445);
}

static int cmd_path_op(const struct opts *o, const char *cmd, const char *url,
		       const char *arg)
{
	struct rdax_url u2;
	struct rdax_stat st;
	struct session s;
	const char *to;
	char tbuf[32];
	int ret;

	if (!strcmp(cmd, "mv") && !strncmp(arg, "smb://", 6)) {
		/* checked before connecting: a rename never crosses shares */
		if (rdax_url_parse(url, &s.url) || rdax_url_parse(arg, &u2) ||
		    !same_share(&s.url, &u2)) {
			fprintf(stderr, "%s: mv: %s is not on the same share as %s\n",
				prog, arg, url);
			return 2;
		}
	}
	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	if (!strcmp(cmd, "stat")) {
		ret = rdax_stat(s.tree, s.url.path, &st);
		if (!ret) {
			printf("  File: %s\n", s.url.path[0] ? s.url.path : "/");
			printf("  Type: %s\n", st.is_dir ? "directory" : "regular file");
			printf("  Size: %llu  Allocated: %llu  Links: %u  Inode: %llu\n",
			       (unsigned long long)st.size,
			       (unsigned long long)st.alloc_size, st.nlink,
			       (unsigned long long)st.ino);
			printf("  Attributes: 0x%08x\n", st.attributes);
			if (st.posix)
				printf("  Mode: %04o  Uid: %u  Gid: %u\n", st.mode & 07777u, st.uid,
				       st.gid);
			fmt_time(&st.mtime, tbuf, sizeof(tbuf));
			printf("  Modify: %s\n", tbuf);
			fmt_time(&st.atime, tbuf, sizeof(tbuf));
			printf("  Access: %s\n", tbuf);
			fmt_time(&st.ctime, tbuf, sizeof(tbuf));
			printf("  Change: %s\n", tbuf);
		}
	} else if (!strcmp(cmd, "ln")) {
		ret = rdax_symlink(s.tree, arg, s.url.path);
	} else if (!strcmp(cmd, "readlink")) {
		char target[4096];
		ssize_t n = rdax_readlink(s.tree, s.url.path, target, sizeof(target));

		ret = n < 0 ? (int)n : 0;
		if (!ret)
			printf("%s\n", target);
	} else if (!strcmp(cmd, "chmod")) {
		char *end;
		unsigned long m = strtoul(arg, &end, 8);

		ret = *arg && !*end && m <= 07777 ? rdax_chmod(s.tree, s.url.path, (uint32_t)m)
						 : -EINVAL;
	} else if (!strcmp(cmd, "rm")) {
		ret = rdax_unlink(s.tree, s.url.path);
	} else if (!strcmp(cmd, "mkdir")) {
		ret = rdax_mkdir(s.tree, s.url.path);
	} else if (!strcmp(cmd, "rmdir")) {
		ret = rdax_rmdir(s.tree, s.url.path);
	} else if (!strcmp(cmd, "touch")) {
		ret = rdax_touch(s.tree, s.url.path);
	} else {	/* mv */
		to = arg;
		if (!strncmp(arg, "smb://", 6))
			to = u2.path;
		ret = rdax_rename(s.tree, s.url.path, to, 0);
	}
	if (ret)
		fail(&s, ret, url);
	session_close(&s, o, 0);
	return ret ? 1 : 0;
}

struct cp_progress {
	const struct opts *o;
	struct progress pr;
	bool started;
};

static int cp_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cp_progress *p = arg;

	if (!p->started) {
		progress_init(&p->pr, p->o, total);
		p->started = true;
	}
	progress_show(&p->pr, done, false);
	return 0;
}

static void cp_stats(const struct opts *o, struct session *s, const char *label)
{
	struct rdax_stats st;

	if (!o->stats || !s->conn)
		return;
	rdax_conn_stats(s->conn, &st);
	fprintf(stderr, "%s: %s; on the wire %llu bytes sent, %llu received\n", label,
		st.bytes_read || st.bytes_written ? "data through the client" :
		st.cloned_bytes ? "server-side copy, extents shared (FSCTL_DUPLICATE_EXTENTS_TO_FILE)" :
		"server-side copy (COPYCHUNK)",
		(unsigned long long)st.bytes_sent,
		(unsigned long long)st.bytes_received);
	print_channels(s->conn);
}

/* Between shares or servers: stream through this client. */
static int cp_across(const struct opts *o, const char *url, const char *dst_url)
{
	struct rdax_file *fs = NULL, *fd = NULL;
	struct session s, d;
	struct rdax_stat st;
	struct cp_progress cp = { .o = o };
	uint64_t off = 0, step;
	int64_t n;
	int ret, rc = 1;

	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	ret = session_open(&d, o, dst_url, true);
	if (ret) {
		session_close(&s, o, 0);
		return ret;
	}
	if (o->copy_flags & RDAX_COPY_SERVER_ONLY) {
		fprintf(stderr, "%s: cp: %s and %s are not on one share: no server-side copy\n",
			prog, url, dst_url);
		goto out_close;
	}
	ret = rdax_open(s.tree, s.url.path, O_RDONLY, &fs);
	if (!ret)
		ret = rdax_fstat(fs, &st);
	if (ret) {
		fail(&s, ret, url);
		goto out_close;
	}
	ret = rdax_open(d.tree, d.url.path, O_WRONLY | O_CREAT | O_TRUNC, &fd);
	if (ret) {
		fail(&d, ret, dst_url);
		goto out_close;
	}
	while (off < st.size) {
		step = st.size - off < (64u << 20) ? st.size - off : (64u << 20);
		n = rdax_copy_range(fs, off, fd, off, step, RDAX_COPY_CLIENT);
		if (n <= 0) {
			if (n == 0)
				fprintf(stderr, "%s: %s: file shrank during the copy\n", prog, url);
			else if (rdax_conn_last_status(d.conn))
				fail(&d, (int)n, dst_url);	/* the destination refused */
			else
				fail(&s, (int)n, url);
			goto out_close;
		}
		off += (uint64_t)n;
		cp_progress(&cp, off, st.size);
	}
	if (cp.started)
		progress_show(&cp.pr, off, true);
	rc = 0;
out_close:
	if (close_file(&s, &fs) && !rc)
		rc = fail(&s, -EIO, url);
	if (close_file(&d, &fd) && !rc)
		rc = fail(&d, -EIO, dst_url);
	cp_stats(o, &s, "source");
	cp_stats(o, &d, "destination");
	session_close(&s, o, off);
	session_close(&d, o, 0);
	return rc;
}

static int cmd_cp(const struct opts *o, const char *url, const char *dst)
{
	struct cp_progress cp = { .o = o };
	char to[sizeof(((struct rdax_url *)0)->path) + 256];
	bool into_dir = ends_with_slash(dst);
	struct rdax_url u2;
	struct session s;
	int64_t n;
	int ret;

	if ((o->copy_flags & RDAX_COPY_CLIENT) && (o->copy_flags & RDAX_COPY_SERVER_ONLY))
		return usage_err("--client-copy and --server-copy exclude each other", NULL);
	if (!strncmp(dst, "smb://", 6)) {
		if (rdax_url_parse(dst, &u2)) {
			fprintf(stderr, "%s: %s: not a valid smb://HOST[:PORT]/SHARE/PATH URL\n",
				prog, dst);
			return 2;
		}
		if (rdax_url_parse(url, &s.url) || !same_share(&s.url, &u2))
			return cp_across(o, url, dst);
		dst = u2.path;
	}
	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	snprintf(to, sizeof(to), "%s", dst);
	/* DEST/ names a directory: straight to DEST/NAME */
	n = into_dir ? -EISDIR :
	    rdax_copy(s.tree, s.url.path, to, o->copy_flags, cp_progress, &cp);
	if (n == -EISDIR) {
		/* into a directory: keep the source's name */
		if (path_join(to, sizeof(to), dst, path_base(s.url.path)))
			n = -ENAMETOOLONG;
		else
			n = rdax_copy(s.tree, s.url.path, to, o->copy_flags,
				      cp_progress, &cp);
	}
	if (cp.started)
		progress_show(&cp.pr, n > 0 ? (uint64_t)n : 0, true);
	if (n < 0)
		fail(&s, (int)n, url);
	cp_stats(o, &s, "cp");
	session_close(&s, o, n > 0 ? (uint64_t)n : 0);
	return n < 0 ? 1 : 0;
}

/* ---- rdax bench meta ---- */

/* restat: each file stat'ed again (the lease cache answers, if any) */
enum meta_op { M_TOUCH, M_STAT, M_RESTAT, M_TRUNCATE, M_MV, M_RM, M_MKDIR, M_RMDIR, M_NOPS };

static const char *const meta_names[M_NOPS] = {
	"touch", "stat", "restat", "truncate", "mv", "rm", "mkdir", "rmdir",
};

#define META_TRUNCATE_SIZE 4096u

struct meta_result {
	uint64_t round_trips;
	uint64_t requests;
	uint64_t done;
	double secs;
	double *lat_ns;			/* one per operation done */
	double mean, stddev;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Square root by Newton's method: the CLI links no libm. */
static double root2(double v)
{
	double r = v > 1 ? v : 1;
	int i;

	if (v <= 0)
		return 0;
	for (i = 0; i < 100; i++) {
		double n = (r + v / r) / 2;

		if (n == r)
			break;
		r = n;
	}
	return r;
}

/* Nearest-rank percentile of sorted v[0..n) (as bench/opentest). */
static double pctl(const double *v, uint64_t n, double p)
{
	return n ? v[(uint64_t)((double)(n - 1) * p / 100.0)] : 0.0;
}

/* DIR/.rdax-meta-PID-KIND-I */
static int meta_path(char *buf, size_t len, const char *dir, char kind, unsigned long i)
{
	char name[64];

	snprintf(name, sizeof(name), ".rdax-meta-%ld-%c%lu", (long)getpid(), kind, i);
	return path_join(buf, len, dir, name);
}

/* One operation of kind op on object i. */
static int meta_one(struct rdax_tree *t, enum meta_op op, const char *dir, unsigned long i,
		    char *path, size_t len)
{
	char to[sizeof(((struct rdax_url *)0)->path) + 64];
	struct rdax_stat st;
	int ret;

	ret = meta_path(path, len, dir, op == M_RM ? 'm' : op >= M_MKDIR ? 'd' : 'f', i);
	if (ret)
		return ret;
	switch (op) {
	case M_TOUCH:
		return rdax_touch(t, path);
	case M_STAT:
	case M_RESTAT:
		ret = rdax_stat(t, path, &st);
		if (!ret && (st.is_dir || st.size))
			return -EPROTO;	/* not the empty file touch made */
		return ret;
	case M_TRUNCATE:
		return rdax_truncate(t, path, META_TRUNCATE_SIZE);
	case M_MV:
		ret = meta_path(to, sizeof(to), dir, 'm', i);
		return ret ? ret : rdax_rename(t, path, to, 0);
	case M_RM:
		return rdax_unlink(t, path);
	case M_MKDIR:
		return rdax_mkdir(t, path);
	case M_RMDIR:
		return rdax_rmdir(t, path);
	default:
		return -EINVAL;
	}
}

/* After a failure: remove what the run made, quietly. */
static void meta_cleanup(struct rdax_tree *t, const char *dir, unsigned long count)
{
	char path[sizeof(((struct rdax_url *)0)->path) + 64];
	unsigned long i;

	for (i = 0; i < count; i++) {
		if (!meta_path(path, sizeof(path), dir, 'f', i))
			rdax_unlink(t, path);
		if (!meta_path(path, sizeof(path), dir, 'm', i))
			rdax_unlink(t, path);
		if (!meta_path(path, sizeof(path), dir, 'd', i))
			rdax_rmdir(t, path);
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void meta_print_json(const struct opts *o, const char *url, struct session *s,
			    const struct rdax_conn_info *ci, const struct meta_result *r)
{
	static const double pcts[] = { 1, 5, 10, 50, 90, 95, 99, 99.9 };
	char tbuf[40];
	struct tm tm;
	time_t now = time(NULL);
	int k;
	size_t p;

	gmtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("{\n  \"rdax version\": ");
	json_str(rdax_version());
	printf(",\n  \"schema_version\": 1,\n  \"bench\": \"meta\",\n");
	printf("  \"timestamp\": %lld,\n  \"time\": \"%s\",\n", (long long)now, tbuf);
	printf("  \"config\": {\"url\": ");
	json_str(url);
	printf(", \"directory\": ");
	json_str(s->url.path);
	printf(", \"count\": %lu, \"truncate_size\": %u, \"transport\": ", o->count,
	       META_TRUNCATE_SIZE);
	json_str(ci->transport);
	printf(", \"dialect\": \"%s\", \"signing\": %s, \"encryption\": %s, \"guest\": %s},\n",
	       dialect_name(ci->dialect), ci->signing ? "true" : "false",
	       ci->encryption ? "true" : "false", ci->guest ? "true" : "false");
	printf("  \"session_setup\": {\"round_trips\": %llu},\n",
	       (unsigned long long)s->setup_trips);
	printf("  \"errors\": 0,\n  \"jobs\": [\n");
	for (k = 0; k < M_NOPS; k++) {
		const struct meta_result *x = &r[k];
		uint64_t n = x->done;

		printf("    {\"jobname\": \"%s\", \"op\": \"%s\", \"error\": 0, "
		       "\"total_ios\": %llu, \"round_trips\": %llu, \"requests\": %llu, "
		       "\"round_trips_per_op\": %.3f, \"requests_per_op\": %.3f, "
		       "\"runtime_ms\": %.3f, \"iops\": %.1f, \"lat_ns\": {\"min\": %.0f, "
		       "\"max\": %.0f, \"mean\": %.0f, \"stddev\": %.0f, \"percentile\": {",
		       meta_names[k], meta_names[k], (unsigned long long)n,
		       (unsigned long long)x->round_trips, (unsigned long long)x->requests,
		       n ? (double)x->round_trips / (double)n : 0.0,
		       n ? (double)x->requests / (double)n : 0.0, x->secs * 1000,
		       x->secs > 0 ? (double)n / x->secs : 0.0,
		       n ? x->lat_ns[0] : 0.0, n ? x->lat_ns[n - 1] : 0.0, x->mean, x->stddev);
		for (p = 0; p < sizeof(pcts) / sizeof(pcts[0]); p++)
			printf("%s\"%f\": %.0f", p ? ", " : "", pcts[p], pctl(x->lat_ns, n, pcts[p]));
		printf("}}}%s\n", k + 1 < M_NOPS ? "," : "");
	}
	printf("  ]\n}\n");
}

/*
 * rdax bench meta URL: count of each operation in the directory URL, each
 * kind in turn, timed one by one; the connection's counters give the round
 * trips and SMB2 requests each kind cost.
 */
static int cmd_bench_meta(const struct opts *o, const char *url)
{
	char path[sizeof(((struct rdax_url *)0)->path) + 64];
	struct meta_result r[M_NOPS] = { 0 };
	struct rdax_conn_info ci;
	struct rdax_stats st0, st1;
	struct timespec t0, ta, tb;
	struct session s;
	unsigned long i;
	int k, ret, rc = 1;

	ret = session_open(&s, o, url, true);
	if (ret)
		return ret;
	rdax_conn_info(s.conn, &ci);
	for (k = 0; k < M_NOPS; k++) {
		r[k].lat_ns = calloc(o->count, sizeof(double));
		if (!r[k].lat_ns) {
			fprintf(stderr, "%s: %s\n", prog, strerror(ENOMEM));
			goto out;
		}
	}
	for (k = 0; k < M_NOPS; k++) {
		struct meta_result *x = &r[k];
		double sum = 0, sq = 0;

		rdax_conn_stats(s.conn, &st0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < o->count; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ta);
			ret = meta_one(s.tree, (enum meta_op)k, s.url.path, i, path, sizeof(path));
			clock_gettime(CLOCK_MONOTONIC, &tb);
			if (ret) {
				if (ret == -EPROTO && (k == M_STAT || k == M_RESTAT))
					fprintf(stderr, "%s: bench meta: stat %s: not the empty file touch made\n",
						prog, path);
				else
					fail(&s, ret, url);
				meta_cleanup(s.tree, s.url.path, o->count);
				goto out;
			}
			x->lat_ns[i] = (double)(tb.tv_sec - ta.tv_sec) * 1e9 +
				       (double)(tb.tv_nsec - ta.tv_nsec);
		}
		x->secs = elapsed(&t0);
		rdax_conn_stats(s.conn, &st1);
		x->done = o->count;
		x->round_trips = st1.round_trips - st0.round_trips;
		x->requests = st1.requests - st0.requests;
		for (i = 0; i < o->count; i++) {
			sum += x->lat_ns[i];
			sq += x->lat_ns[i] * x->lat_ns[i];
		}
		x->mean = sum / (double)o->count;
		x->stddev = o->count > 1 ?
			root2((sq - sum * x->mean) / (double)(o->count - 1)) : 0.0;
		qsort(x->lat_ns, o->count, sizeof(double), cmp_double);
	}
	if (o->json) {
		meta_print_json(o, url, &s, &ci, r);
	} else {
		printf("rdax bench meta %s: %lu of each, SMB %s over %s; session setup %llu round trips\n",
		       url, o->count, dialect_name(ci.dialect), ci.transport,
		       (unsigned long long)s.setup_trips);
		printf("%-9s %8s %15s %12s %10s %9s %9s %9s\n", "op", "ops", "round trips/op",
		       "requests/op", "ops/s", "mean us", "p50 us", "p99 us");
		for (k = 0; k < M_NOPS; k++) {
			const struct meta_result *x = &r[k];

			printf("%-9s %8llu %15.2f %12.2f %10.1f %9.1f %9.1f %9.1f\n",
			       meta_names[k], (unsigned long long)x->done,
			       (double)x->round_trips / (double)x->done,
			       (double)x->requests / (double)x->done,
			       x->secs > 0 ? (double)x->done / x->secs : 0.0, x->mean / 1000,
			       pctl(x->lat_ns, x->done, 50) / 1000,
			       pctl(x->lat_ns, x->done, 99) / 1000);
		}
	}
	rc = 0;
out:
	for (k = 0; k < M_NOPS; k++)
		free(r[k].lat_ns);
	session_close(&s, o, 0);
	return rc;
}

static int cmd_bench(const struct opts *o, int nargs, char **args)
{
	if (nargs == 2 && !strcmp(args[0], "meta"))
		return cmd_bench_meta(o, args[1]);
	return usage_err("bench wants: bench meta URL", nargs ? args[0] : NULL);
}

/* What librdax takes (rdax_cfg_set_credentials, a password file). */
#define PASSWORD_MAX 255

/* One line; -EINVAL if empty, -ENAMETOOLONG past PASSWORD_MAX bytes. */
static int read_password(char *buf, size_t len)
{
	struct termios t, old;
	bool tty = isatty(STDIN_FILENO);
	bool whole;
	char *nl;
	int ch;

	if (tty) {
		fprintf(stderr, "New password: ");
		tcgetattr(STDIN_FILENO, &old);
		t = old;
		t.c_lflag &= (tcflag_t)~ECHO;
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	if (!fgets(buf, (int)len, stdin))
		buf[0] = 0;
	/* a line longer than buf: never cut it short, refuse it */
	whole = strchr(buf, '\n') || feof(stdin) || strlen(buf) < len - 1;
	if (!whole)
		while ((ch = getchar()) != EOF && ch != '\n')
			;
	if (tty) {
		tcsetattr(STDIN_FILENO, TCSANOW, &old);
		fputc('\n', stderr);
	}
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = 0;
	if (!whole || strlen(buf) > PASSWORD_MAX)
		return -ENAMETOOLONG;
	return buf[0] ? 0 : -EINVAL;
}

static int cmd_passwd(const struct opts *o, const char *user)
{
	char pw[PASSWORD_MAX + 3];	/* the password, "\r\n" and the NUL */
	int ret;

	if (!o->passdb)
		return usage_err("passwd needs --passdb FILE", NULL);
	ret = read_password(pw, sizeof(pw));
	if (ret) {
		explicit_bzero(pw, sizeof(pw));
		if (ret == -ENAMETOOLONG)
			fprintf(stderr, "%s: passwd: password too long (at most %d bytes): nothing changed\n",
				prog, PASSWORD_MAX);
		else
			fprintf(stderr, "%s: passwd: empty password read from stdin\n", prog);
		return 1;
	}
	ret = passdb_set(o->passdb, user, pw);
	explicit_bzero(pw, sizeof(pw));
	if (ret) {
		fprintf(stderr, "%s: passwd: %s: %s\n", prog, o->passdb,
			ret == -EINVAL ? "invalid user name" : strerror(-ret));
		return 1;
	}
	/* rdaxd acts as the Unix account of the same name (or mapped) */
	if (!getpwnam(user))
		fprintf(stderr, "%s: passwd: warning: no Unix user '%s' on this machine: "
			"rdaxd refuses its logons unless a 'username map' maps it to one\n",
			prog, user);
	return 0;
}

/* long options without a short form */
enum {
	OPT_SIGN = 256,
	OPT_ENCRYPT,
	OPT_RDMA_TRANSFORM,
	OPT_STATS,
	OPT_PASSDB,
	OPT_MAX_PROTOCOL,
	OPT_PASSWORD,
	OPT_SERVER_COPY,
	OPT_CLIENT_COPY,
	OPT_COPYCHUNK,
	OPT_COUNT,
	OPT_JSON,
	OPT_CHANNELS,
	OPT_RDMA_CHANNELS,
	OPT_TCP_CHANNELS,
	OPT_NO_LEASES,
	OPT_NO_DURABLE,
};

/* args: room for argc words */
static int run(int argc, char **argv, char **args)
{
	static const struct option lopts[] = {
		{ "user", required_argument, NULL, 'u' },
		{ "password-file", required_argument, NULL, 'A' },
		{ "guest", no_argument, NULL, 'g' },
		{ "transport", required_argument, NULL, 't' },
		{ "sign", no_argument, NULL, OPT_SIGN },
		{ "encrypt", no_argument, NULL, OPT_ENCRYPT },
		{ "rdma-transform", no_argument, NULL, OPT_RDMA_TRANSFORM },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "passdb", required_argument, NULL, OPT_PASSDB },
		{ "max-protocol", required_argument, NULL, OPT_MAX_PROTOCOL },
		{ "password", required_argument, NULL, OPT_PASSWORD },
		{ "server-copy", no_argument, NULL, OPT_SERVER_COPY },
		{ "client-copy", no_argument, NULL, OPT_CLIENT_COPY },
		{ "copychunk", no_argument, NULL, OPT_COPYCHUNK },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "rdma-channels", no_argument, NULL, OPT_RDMA_CHANNELS },
		{ "tcp-channels", no_argument, NULL, OPT_TCP_CHANNELS },
		{ "no-leases", no_argument, NULL, OPT_NO_LEASES },
		{ "no-durable", no_argument, NULL, OPT_NO_DURABLE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct opts o = { .transport = RDAX_TRANSPORT_TCP, .count = 100, .rdma_channels = -1 };
	char *end;
	const char *cmd;
	int c, nargs = 0;

	/*
	 * Options anywhere on the line, GNU style ("rdax ls URL --guest"):
	 * with the leading '-' getopt hands the words that are not options
	 * over in order (code 1), whatever POSIXLY_CORRECT says; "--" ends
	 * the options.
	 */
	while ((c = getopt_long(argc, argv, "-u:A:gt:qVhsl", lopts, NULL)) != -1) {
		switch (c) {
		case 1:
			args[nargs++] = optarg;
			break;
		case 'u':
			o.user = optarg;
			break;
		case 'A':
			o.password_file = optarg;
			break;
		case 'g':
			o.guest = true;
			break;
		case 't':
			if (!strcmp(optarg, "tcp"))
				o.transport = RDAX_TRANSPORT_TCP;
			else if (!strcmp(optarg, "rdma"))
				o.transport = RDAX_TRANSPORT_RDMA;
			else
				return usage_err("--transport wants tcp or rdma", optarg);
			break;
		case OPT_SIGN:
			o.sign = true;
			break;
		case OPT_NO_LEASES:
			o.no_leases = true;
			break;
		case OPT_NO_DURABLE:
			o.no_durable = true;
			break;
		case OPT_ENCRYPT:
			o.encrypt = true;
			break;
		case OPT_RDMA_TRANSFORM:
			o.rdma_transform = true;
			break;
		case OPT_STATS:
			o.stats = true;
			break;
		case OPT_PASSDB:
			o.passdb = optarg;
			break;
		case OPT_MAX_PROTOCOL:
			if (!strcasecmp(optarg, "SMB2_10"))
				o.max_dialect = RDAX_SMB_2_1;
			else if (!strcasecmp(optarg, "SMB3_00"))
				o.max_dialect = RDAX_SMB_3_0;
			else if (!strcasecmp(optarg, "SMB3_02"))
				o.max_dialect = RDAX_SMB_3_0_2;
			else if (!strcasecmp(optarg, "SMB3_11"))
				o.max_dialect = RDAX_SMB_3_1_1;
			else
				return usage_err("unknown protocol", optarg);
			break;
		case OPT_PASSWORD:
			return usage_err("passwords are never taken on the command line; use --password-file or RDAX_PASSWORD", NULL);
		case OPT_SERVER_COPY:
			o.copy_flags |= RDAX_COPY_SERVER_ONLY;
			break;
		case OPT_CLIENT_COPY:
			o.copy_flags |= RDAX_COPY_CLIENT;
			break;
		case OPT_COPYCHUNK:
			o.copy_flags |= RDAX_COPY_SERVER_ONLY | RDAX_COPY_NO_CLONE;
			break;
		case OPT_COUNT:
			errno = 0;
			o.count = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || !o.count ||
			    o.count > 1000000)
				return usage_err("--count wants a number from 1 to 1000000", optarg);
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_CHANNELS:
			errno = 0;
			o.channels = (unsigned int)strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || !o.channels ||
			    o.channels > 16)
				return usage_err("--channels wants a number from 1 to 16", optarg);
			break;
		case OPT_RDMA_CHANNELS:
			o.rdma_channels = 1;
			break;
		case OPT_TCP_CHANNELS:
			o.rdma_channels = 0;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 's':
			o.symbolic = true;
			break;
		case 'l':
			o.long_list = true;
			break;
		case 'V':
			printf("rdax %s\n", rdax_version());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'rdax --help' for more information.\n");
			return 2;
		}
	}
	/* after "--": everything is an argument */
	while (optind < argc)
		args[nargs++] = argv[optind++];
	if (!nargs)
		return usage_err("no command", NULL);
	cmd = args[0];
	args++;
	nargs--;

	if (!strcmp(cmd, "ls") && nargs == 1)
		return cmd_ls(&o, args[0], o.long_list);
	if (!strcmp(cmd, "ln") && nargs == 2 && o.symbolic)
		return cmd_path_op(&o, "ln", args[1], args[0]);
	if (!strcmp(cmd, "chmod") && nargs == 2)
		return cmd_path_op(&o, "chmod", args[1], args[0]);
	if (!strcmp(cmd, "readlink") && nargs == 1)
		return cmd_path_op(&o, "readlink", args[0], NULL);
	if (!strcmp(cmd, "get") && (nargs == 1 || nargs == 2))
		return cmd_get(&o, args[0], nargs == 2 ? args[1] : NULL, false);
	if (!strcmp(cmd, "cat") && nargs == 1)
		return cmd_get(&o, args[0], NULL, true);
	if (!strcmp(cmd, "put") && nargs == 2)
		return cmd_put(&o, args[0], args[1]);
	if ((!strcmp(cmd, "stat") || !strcmp(cmd, "rm") || !strcmp(cmd, "mkdir") ||
	     !strcmp(cmd, "rmdir") || !strcmp(cmd, "touch")) && nargs == 1)
		return cmd_path_op(&o, cmd, args[0], NULL);
	if (!strcmp(cmd, "mv") && nargs == 2)
		return cmd_path_op(&o, cmd, args[0], args[1]);
	if (!strcmp(cmd, "cp") && nargs == 2)
		return cmd_cp(&o, args[0], args[1]);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(&o, nargs, args);
	if (!strcmp(cmd, "passwd") && nargs == 1)
		return cmd_passwd(&o, args[0]);
	return usage_err("bad command or arguments", cmd);
}

int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc;

	if (!args) {
		fprintf(stderr, "%s: %s\n", prog, strerror(ENOMEM));
		return 1;
	}
	rc = run(argc, argv, args);
	free(args);
	return rc;
}
