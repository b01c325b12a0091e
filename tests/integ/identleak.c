// SPDX-License-Identifier: MIT
/*
 * Identity leaks between users on one worker: threads of two users, each
 * with its own connection, interleave creates, reads, mkdirs and
 * refused opens against an rdaxd with one worker thread. Every request
 * must run as its own session's user: a create must succeed (its owner
 * is checked afterwards by the caller), the other user's private file
 * and directory must stay refused, one's own must open.
 *
 *   identleak [--rdma] HOST PORT SHARE ROUNDS USER_A PWFILE_A USER_B PWFILE_B
 *
 * --rdma: over SMB-Direct (PORT is the rdma:// listener's), where rdaxd
 * runs what needs an identity on each worker's identity thread.
 *
 * The share holds, made by the caller: USER_private (mode 0600) with the
 * contents "USER secret\n" and USER_dir/ (0700) for both users.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdax.h"

#define THREADS_PER_USER 3

struct user {
	const char *name;
	const char *pwfile;
	const struct user *other;
};

struct worker {
	const struct user *u;
	int id;
	int failures;
	int ops;
	pthread_t thread;
};

static const char *host, *share;
static unsigned int port;
static int rounds;
static bool rdma;

static void bad(struct worker *w, const char *what, int ret, struct rdax_conn *c)
{
	w->failures++;
	if (w->failures <= 5)
		printf("FAIL: %s thread %d: %s: %d (%s)\n", w->u->name, w->id, what, ret,
		       c ? rdax_conn_errmsg(c) : "");
}

static int expect_refused(struct worker *w, struct rdax_tree *t, struct rdax_conn *c,
			  const char *path)
{
	struct rdax_file *f = NULL;
	int ret = rdax_open(t, path, O_RDONLY, &f);

	w->ops++;
	if (!ret) {
		bad(w, path, 0, c);
		rdax_close(&f);
		return -1;
	}
	if (ret != -EACCES) {
		bad(w, path, ret, c);
		return -1;
	}
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	const struct user *u = w->u;
	char name[256], buf[64], want[64];
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	struct rdax_file *f = NULL;
	struct rdax_cfg *cfg = NULL;
	struct rdax_stat st;
	ssize_t n;
	int i, ret;

	if (rdax_cfg_new(&cfg) || rdax_cfg_set_password_file(cfg, u->pwfile) ||
	    rdax_cfg_set_credentials(cfg, u->name, NULL) ||
	    (rdma && rdax_cfg_set_transport(cfg, RDAX_TRANSPORT_RDMA))) {
		bad(w, "config", -EINVAL, NULL);
		goto out;
	}
	ret = rdax_connect(&c, host, port, cfg);
	if (ret) {
		bad(w, "connect", ret, NULL);
		goto out;
	}
	ret = rdax_tree_connect(c, share, &t);
	if (ret) {
		bad(w, "tree connect", ret, c);
		goto out;
	}
	snprintf(want, sizeof(want), "%s secret\n", u->name);
	for (i = 0; i < rounds; i++) {
		/* a new file: it must be ours (the caller checks the owner) */
		snprintf(name, sizeof(name), "%s_%d_%d", u->name, w->id, i);
		ret = rdax_open(t, name, O_WRONLY | O_CREAT | O_EXCL, &f);
		w->ops++;
		if (ret) {
			bad(w, name, ret, c);
		} else {
			if (rdax_pwrite(f, name, strlen(name), 0) != (ssize_t)strlen(name))
				bad(w, "write", -EIO, c);
			rdax_close(&f);
		}
		/* the other user's private file and directory: refused */
		snprintf(name, sizeof(name), "%s_private", u->other->name);
		expect_refused(w, t, c, name);
		snprintf(name, sizeof(name), "%s_dir/inside", u->other->name);
		ret = rdax_stat(t, name, &st);
		w->ops++;
		if (ret != -EACCES)
			bad(w, name, ret, c);
		/* our own: readable */
		snprintf(name, sizeof(name), "%s_private", u->name);
		ret = rdax_open(t, name, O_RDONLY, &f);
		w->ops++;
		if (ret) {
			bad(w, name, ret, c);
		} else {
			n = rdax_pread(f, buf, sizeof(buf) - 1, 0);
			if (n != (ssize_t)strlen(want) || memcmp(buf, want, (size_t)n))
				bad(w, "own private file's contents", (int)n, c);
			rdax_close(&f);
		}
		snprintf(name, sizeof(name), "%s_dir/%s_%d_%d", u->name, u->name, w->id, i);
		ret = rdax_mkdir(t, name);
		w->ops++;
		if (ret)
			bad(w, name, ret, c);
	}
out:
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	rdax_cfg_delete(&cfg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[2 * THREADS_PER_USER];
	struct user ua, ub;
	int i, failures = 0, ops = 0;

	if (argc > 1 && !strcmp(argv[1], "--rdma")) {
		rdma = true;
		argv++;
		argc--;
	}
	if (argc != 9) {
		fprintf(stderr, "usage: identleak [--rdma] HOST PORT SHARE ROUNDS USER_A PWFILE_A "
			"USER_B PWFILE_B\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	rounds = atoi(argv[4]);
	ua = (struct user){ argv[5], argv[6], &ub };
	ub = (struct user){ argv[7], argv[8], &ua };
	memset(w, 0, sizeof(w));
	for (i = 0; i < 2 * THREADS_PER_USER; i++) {
		w[i].u = i % 2 ? &ub : &ua;
		w[i].id = i / 2;
		if (pthread_create(&w[i].thread, NULL, run, &w[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < 2 * THREADS_PER_USER; i++) {
		pthread_join(w[i].thread, NULL);
		failures += w[i].failures;
		ops += w[i].ops;
	}
	printf("%d requests by %d threads of 2 users over %s, %d wrong\n", ops,
	       2 * THREADS_PER_USER, rdma ? "SMB-Direct" : "TCP", failures);
	return failures ? 1 : 0;
}
