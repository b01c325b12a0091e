// SPDX-License-Identifier: MIT
/*
 * Parallel create and close correctness, through include/rdax.h only:
 * CLIENTS processes, each with its own connection, released together at
 * every phase by a process-shared barrier.
 *
 *   A  own files: each client creates FILES files (O_CREAT|O_EXCL) and
 *      holds them all open at once, writes a tag naming client, file and
 *      a random nonce through each handle, reads every tag back through
 *      its handle and checks that fstat through the handle and stat by
 *      path name the same file (IndexNumber); then closes them. Two opens
 *      that got one FileId, or a handle bound to the wrong file, show up
 *      here as a foreign tag or a wrong IndexNumber.
 *   B  contended creates: all clients race O_CREAT|O_EXCL on the same
 *      SHARED names; for each name exactly one create may succeed and
 *      every other must fail with EEXIST (no lost, no duplicated create);
 *      the winner writes its id into the file.
 *   C  verification by path: each client stats its own files again and
 *      reads every shared file: the winner's id is in it.
 *   D  one file, all clients: everybody opens it (open-if) and holds it
 *      open until all have, writes its tag at its own offset, closes;
 *      afterwards every tag is in the file.
 *
 * Afterwards the parent checks that the IndexNumbers of all own files are
 * distinct and prints one "ok:" or "FAIL:" line per property.
 *
 * usage: parallel_creates [--guest | --user U --password-file F]
 *                         smb://HOST[:PORT]/SHARE/DIR CLIENTS FILES SHARED
 *   DIR is created and must not exist. Exit: 0 all held, 1 a check
 *   failed, 2 usage, 99 setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rdax.h"

#define TAG 64				/* bytes of a tag */
#define MAX_CLIENTS 256
#define MAX_FILES 256
#define MAX_SHARED 256

struct client_state {
	int err;			/* first -errno of the client, 0 = fine */
	char msg[300];
};

struct shm {
	pthread_barrier_t bar;
	struct client_state cli[MAX_CLIENTS];
	uint64_t ino[MAX_CLIENTS][MAX_FILES];	/* IndexNumber of each own file */
	int wins[MAX_SHARED];		/* successful O_EXCL creates per name */
	int eexist[MAX_SHARED];		/* EEXIST answers per name */
	int winner[MAX_SHARED];		/* client id of the winner */
	int bad_tags;			/* tags read back wrong (phase A, C, D) */
	int bad_ino;			/* fstat and stat disagreed */
	int bad_winner;			/* shared file without its winner's id */
};

static const char *user, *password_file;
static bool guest;
static struct shm *sh;
static int nclients;
static unsigned int nfiles, nshared;

/* rdax_close, and whether the server's CLOSE failed (its message on c) */
static bool close_failed(struct rdax_conn *c, struct rdax_file **f)
{
	rdax_close(f);
	return *rdax_conn_errmsg(c);
}

/* Record the client's first failure. */
static void cfail(int id, int err, const char *what, const char *path, const char *why)
{
	struct client_state *s = &sh->cli[id];

	if (s->err)
		return;
	s->err = err ? err : -EIO;
	snprintf(s->msg, sizeof(s->msg), "%.40s%s%.100s: %.150s", what, *path ? " " : "",
		 path, why);
}

static int connect_tree(const struct rdax_url *u, struct rdax_conn **c, struct rdax_tree **t,
			char *msg, size_t len)
{
	struct rdax_cfg *cfg;
	int ret;

	ret = rdax_cfg_new(&cfg);
	if (ret)
		return ret;
	/*
	 * No leases: the clients wait at barriers holding their opens, and
	 * librdax answers a lease break only inside a call, so each write to
	 * the common file (an RH -> H break that needs an ack) held the next
	 * open there for rdaxd's 35 s break timeout (rdax_cfg_set_leases(3)).
	 * This suite is about rdaxd's creates; leases.sh is about leases.
	 */
	rdax_cfg_set_leases(cfg, false);
	if (guest || !user) {
		rdax_cfg_set_guest(cfg, true);
	} else {
		rdax_cfg_set_credentials(cfg, user, getenv("RDAX_PASSWORD"));
		if (password_file)
			ret = rdax_cfg_set_password_file(cfg, password_file);
	}
	if (!ret)
		ret = rdax_connect(c, u->host, u->port, cfg);
	rdax_cfg_delete(&cfg);
	if (ret) {
		snprintf(msg, len, "connect: %.220s", rdax_conn_errmsg(NULL));
		return ret;
	}
	ret = rdax_tree_connect(*c, u->share, t);
	if (ret) {
		snprintf(msg, len, "tree connect %.60s: %.170s", u->share, rdax_conn_errmsg(*c));
		rdax_disconnect(c);
	}
	return ret;
}

static void make_tag(char *tag, const char *kind, int id, unsigned int i, uint64_t nonce)
{
	memset(tag, '.', TAG);
	snprintf(tag, TAG, "%s client %03d file %03u nonce %016llx", kind, id, i,
		 (unsigned long long)nonce);
	tag[TAG - 1] = '\n';
}

static void wait_all(void)
{
	pthread_barrier_wait(&sh->bar);
}

static void client(const struct rdax_url *u, int id)
{
	struct rdax_file **f = calloc(nfiles, sizeof(*f));
	uint64_t *nonce = calloc(nfiles, sizeof(*nonce));
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	char path[4300], tag[TAG], got[TAG], msg[256];
	struct rdax_stat st, st2;
	struct timespec ts;
	unsigned int i, j;
	ssize_t n;
	int ret, phase;

	alarm(600);	/* a hung server must not hang the test */
	clock_gettime(CLOCK_REALTIME, &ts);
	srand48((long)ts.tv_nsec ^ (long)getpid() << 16);
	if (!f || !nonce) {
		cfail(id, -ENOMEM, "setup", "", "out of memory");
	} else if (connect_tree(u, &c, &t, msg, sizeof(msg))) {
		cfail(id, -EIO, "setup", "", msg);
	}

	/* A: own files, all held open at once */
	wait_all();
	for (i = 0; !sh->cli[id].err && i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/c%03d_f%03u", u->path, id, i);
		ret = rdax_open(t, path, O_CREAT | O_EXCL | O_RDWR, &f[i]);
		if (ret)
			cfail(id, ret, "create", path, rdax_conn_errmsg(c));
	}
	for (i = 0; !sh->cli[id].err && i < nfiles; i++) {
		nonce[i] = ((uint64_t)mrand48() << 32) ^ (uint64_t)mrand48();
		make_tag(tag, "own", id, i, nonce[i]);
		n = rdax_pwrite(f[i], tag, TAG, 0);
		if (n != TAG)
			cfail(id, n < 0 ? (int)n : -EIO, "write", "own file", rdax_conn_errmsg(c));
	}
	for (i = 0; !sh->cli[id].err && i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/c%03d_f%03u", u->path, id, i);
		make_tag(tag, "own", id, i, nonce[i]);
		n = rdax_pread(f[i], got, TAG, 0);
		if (n != TAG || memcmp(tag, got, TAG)) {
			__atomic_fetch_add(&sh->bad_tags, 1, __ATOMIC_SEQ_CST);
			cfail(id, -EIO, "read back through its handle", path,
			      n == TAG ? "another open's tag" : "short read");
			break;
		}
		ret = rdax_fstat(f[i], &st);
		if (!ret)
			ret = rdax_stat(t, path, &st2);
		if (ret) {
			cfail(id, ret, "stat", path, rdax_conn_errmsg(c));
			break;
		}
		if (st.ino != st2.ino || st.size != TAG) {
			__atomic_fetch_add(&sh->bad_ino, 1, __ATOMIC_SEQ_CST);
			cfail(id, -EIO, "", path,
			      "the handle's file is not the path's (IndexNumber or size)");
			break;
		}
		sh->ino[id][i] = st.ino;
	}
	for (i = 0; i < nfiles; i++)
		if (f && f[i] && close_failed(c, &f[i]))
			cfail(id, -EIO, "close", "own file", rdax_conn_errmsg(c));

	/* B: everybody creates the same names */
	wait_all();
	for (j = 0; !sh->cli[id].err && j < nshared; j++) {
		struct rdax_file *g;

		snprintf(path, sizeof(path), "%s/shared_%03u", u->path, j);
		ret = rdax_open(t, path, O_CREAT | O_EXCL | O_WRONLY, &g);
		if (ret == -EEXIST) {
			__atomic_fetch_add(&sh->eexist[j], 1, __ATOMIC_SEQ_CST);
			continue;
		}
		if (ret) {
			cfail(id, ret, "exclusive create", path, rdax_conn_errmsg(c));
			break;
		}
		__atomic_fetch_add(&sh->wins[j], 1, __ATOMIC_SEQ_CST);
		sh->winner[j] = id;
		make_tag(tag, "winner", id, j, 0);
		n = rdax_pwrite(g, tag, TAG, 0);
		if (n != TAG)
			cfail(id, n < 0 ? (int)n : -EIO, "write", path, rdax_conn_errmsg(c));
		if (close_failed(c, &g))
			cfail(id, -EIO, "close", path, rdax_conn_errmsg(c));
	}

	/* C: by path, after everybody is done with B */
	wait_all();
	for (i = 0; !sh->cli[id].err && i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/c%03d_f%03u", u->path, id, i);
		ret = rdax_stat(t, path, &st);
		if (ret)
			cfail(id, ret, "stat", path, rdax_conn_errmsg(c));
		else if (st.ino != sh->ino[id][i] || st.size != TAG)
			cfail(id, -EIO, "", path, "changed after its close");
	}
	for (j = 0; !sh->cli[id].err && j < nshared; j++) {
		struct rdax_file *g;

		snprintf(path, sizeof(path), "%s/shared_%03u", u->path, j);
		ret = rdax_open(t, path, O_RDONLY, &g);
		if (ret) {
			cfail(id, ret, "open", path, rdax_conn_errmsg(c));
			break;
		}
		n = rdax_pread(g, got, TAG, 0);
		make_tag(tag, "winner", sh->winner[j], j, 0);
		if (n != TAG || memcmp(tag, got, TAG)) {
			__atomic_fetch_add(&sh->bad_winner, 1, __ATOMIC_SEQ_CST);
			cfail(id, -EIO, "", path, "does not hold its winner's tag");
		}
		if (close_failed(c, &g))
			cfail(id, -EIO, "close", path, rdax_conn_errmsg(c));
	}

	/* D: one file, everybody holds it open at once */
	wait_all();
	{
		struct rdax_file *g = NULL;

		snprintf(path, sizeof(path), "%s/common", u->path);
		ret = sh->cli[id].err ? -ECANCELED : rdax_open(t, path, O_CREAT | O_RDWR, &g);
		if (ret && ret != -ECANCELED)
			cfail(id, ret, "open-if", path, rdax_conn_errmsg(c));
		make_tag(tag, "common", id, 0, 0);
		if (g) {
			n = rdax_pwrite(g, tag, TAG, (uint64_t)id * TAG);
			if (n != TAG)
				cfail(id, n < 0 ? (int)n : -EIO, "write", path,
				      rdax_conn_errmsg(c));
		}
		wait_all();	/* all hold it open here */
		if (g && close_failed(c, &g))
			cfail(id, -EIO, "close", path, rdax_conn_errmsg(c));
	}
	phase = sh->cli[id].err ? 1 : 0;
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	_exit(phase);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: parallel_creates [--guest | --user U --password-file F] "
		"smb://HOST[:PORT]/SHARE/DIR CLIENTS FILES SHARED\n");
}

int main(int argc, char **argv)
{
	pthread_barrierattr_t ba;
	struct rdax_conn *c = NULL;
	struct rdax_tree *t = NULL;
	struct rdax_file *g;
	struct rdax_url u;
	pid_t *pids;
	uint64_t *inos, nino = 0, k;
	char path[4300], tag[TAG], *buf, msg[256];
	int a = 1, id, status, nfail = 0, failed_clients = 0, bad_names = 0, dup = 0;
	unsigned int j, i;
	ssize_t n;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--guest"))
			guest = true;
		else if (!strcmp(argv[a], "--user") && a + 1 < argc)
			user = argv[++a];
		else if (!strcmp(argv[a], "--password-file") && a + 1 < argc)
			password_file = argv[++a];
		else {
			usage();
			return 2;
		}
	}
	if (argc - a != 4 || rdax_url_parse(argv[a], &u) || !u.share[0] || !u.path[0]) {
		usage();
		return 2;
	}
	nclients = atoi(argv[a + 1]);
	nfiles = (unsigned int)atoi(argv[a + 2]);
	nshared = (unsigned int)atoi(argv[a + 3]);
	if (nclients < 1 || nclients > MAX_CLIENTS || nfiles < 1 || nfiles > MAX_FILES ||
	    nshared < 1 || nshared > MAX_SHARED) {
		usage();
		return 2;
	}

	if (connect_tree(&u, &c, &t, msg, sizeof(msg))) {
		fprintf(stderr, "parallel_creates: %s\n", msg);
		return 99;
	}
	if (rdax_mkdir(t, u.path)) {
		fprintf(stderr, "parallel_creates: mkdir %s: %s\n", u.path, rdax_conn_errmsg(c));
		return 99;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t)nclients, sizeof(*pids));
	if (sh == MAP_FAILED || !pids || pthread_barrierattr_init(&ba) ||
	    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) ||
	    pthread_barrier_init(&sh->bar, &ba, (unsigned int)nclients)) {
		perror("parallel_creates: setup");
		return 99;
	}
	for (j = 0; j < nshared; j++)
		sh->winner[j] = -1;
	fflush(NULL);
	for (id = 0; id < nclients; id++) {
		pids[id] = fork();
		if (pids[id] < 0) {
			perror("parallel_creates: fork");
			return 99;
		}
		if (!pids[id])
			client(&u, id);
	}
	for (id = 0; id < nclients; id++)
		if (waitpid(pids[id], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed_clients++;

	/* every client finished without an error */
	for (id = 0; id < nclients; id++)
		if (sh->cli[id].err) {
			if (failed_clients <= 10 || id < 10)
				printf("    client %d: %s (%s)\n", id, sh->cli[id].msg,
				       strerror(-sh->cli[id].err));
		}
	if (failed_clients) {
		printf("FAIL: %d of %d clients failed\n", failed_clients, nclients);
		nfail++;
	} else {
		printf("ok: %d clients: %u creates each held open at once, tags read back "
		       "through every handle, fstat = stat\n", nclients, nfiles);
	}
	if (sh->bad_tags || sh->bad_ino) {
		printf("FAIL: %d handles read another open's data, %d named another file\n",
		       sh->bad_tags, sh->bad_ino);
		nfail++;
	}

	/* distinct files: distinct IndexNumbers */
	inos = calloc((size_t)nclients * nfiles, sizeof(*inos));
	if (!inos)
		return 99;
	for (id = 0; id < nclients; id++)
		for (i = 0; i < nfiles; i++)
			if (sh->ino[id][i])
				inos[nino++] = sh->ino[id][i];
	qsort(inos, nino, sizeof(*inos), cmp_u64);
	for (k = 1; k < nino; k++)
		dup += inos[k] == inos[k - 1];
	if (dup || nino != (uint64_t)nclients * nfiles) {
		printf("FAIL: %llu of %llu own files have an IndexNumber, %d duplicated\n",
		       (unsigned long long)nino, (unsigned long long)nclients * nfiles, dup);
		nfail++;
	} else {
		printf("ok: %llu files, %llu distinct IndexNumbers\n", (unsigned long long)nino,
		       (unsigned long long)nino);
	}
	free(inos);

	/* contended names: one winner each, everybody else EEXIST */
	for (j = 0; j < nshared; j++) {
		if (sh->wins[j] != 1 || sh->wins[j] + sh->eexist[j] != nclients) {
			if (bad_names < 10)
				printf("    shared_%03u: %d creates succeeded, %d got EEXIST, of %d\n",
				       j, sh->wins[j], sh->eexist[j], nclients);
			bad_names++;
		}
	}
	if (bad_names || sh->bad_winner) {
		printf("FAIL: exclusive creates raced by %d clients: %d of %u names without "
		       "exactly one winner, %d reads without the winner's tag\n", nclients,
		       bad_names, nshared, sh->bad_winner);
		nfail++;
	} else {
		printf("ok: %u names raced by %d clients with O_EXCL: one create each, %d EEXIST, "
		       "the winner's data in each\n", nshared, nclients,
		       (nclients - 1) * (int)nshared);
	}

	/* one file opened by everybody at once: every client's write landed */
	snprintf(path, sizeof(path), "%s/common", u.path);
	buf = malloc((size_t)nclients * TAG);
	if (!buf)
		return 99;
	if (rdax_open(t, path, O_RDONLY, &g)) {
		printf("FAIL: open %s: %s\n", path, rdax_conn_errmsg(c));
		nfail++;
	} else {
		int bad = 0;

		n = rdax_pread(g, buf, (size_t)nclients * TAG, 0);
		for (id = 0; id < nclients; id++) {
			make_tag(tag, "common", id, 0, 0);
			if (n < (ssize_t)((id + 1) * TAG) || memcmp(buf + (size_t)id * TAG, tag, TAG))
				bad++;
		}
		rdax_close(&g);
		if (bad || n != (ssize_t)nclients * TAG) {
			printf("FAIL: %s: %d of %d clients' writes missing (%zd bytes)\n", path, bad,
			       nclients, n);
			nfail++;
		} else {
			printf("ok: one file held open by %d clients at once: all %d writes landed\n",
			       nclients, nclients);
		}
	}
	free(buf);
	free(pids);
	rdax_tree_disconnect(&t);
	rdax_disconnect(&c);
	return nfail ? 1 : 0;
}
