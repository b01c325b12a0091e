// SPDX-License-Identifier: MIT
/* Unix identities and their per-thread switch (see ident.h). */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <urcu.h>

#include "server/ident.h"
#include "util/log.h"

#define SERIAL_SELF 0			/* the process's own identity */
#define SERIAL_UNKNOWN UINT64_MAX	/* a switch failed half-way */

/*
 * What rdaxd keeps, and when; everything else leaves the bounding set
 * too. The file-system capabilities only as root: the kernel lowers them
 * while a thread's fsuid is a user's and raises them again at fsuid 0
 * (capabilities(7)), so a session of root ("force user = root" too) acts
 * as root, a user's as that user, and rdaxd itself works beneath the
 * share as uid 0 (every path is resolved beneath the share root); a
 * non-root process would hold them while acting as anyone. CAP_FSETID is
 * effective only while a thread acts as a root session (self_off): a
 * write on a handle clears set-user-ID bits unless root opened it. TCP
 * listeners are bound before the drop, so binding port 445 needs
 * CAP_NET_BIND_SERVICE after it only for an rdma:// listener (rdma_cm
 * checks it too, and RDMA descriptors must be opened after the drop).
 * CAP_IPC_LOCK is for registered (pinned) RDMA memory.
 */
static const struct {
	int cap;
	unsigned int need;		/* SRV_IDENT_*, 0: always */
	bool self_off;			/* not effective while acting as rdaxd */
	const char *name;
} kept_caps[] = {
	{ CAP_SETUID, 0, false, "setuid" },		/* fsuid of a session's user */
	{ CAP_SETGID, 0, false, "setgid" },		/* its fsgid and groups */
	{ CAP_CHOWN, SRV_IDENT_ROOT, false, "chown" },	/* root gives files away */
	{ CAP_DAC_OVERRIDE, SRV_IDENT_ROOT, false, "dac_override" },
	{ CAP_DAC_READ_SEARCH, SRV_IDENT_ROOT, false, "dac_read_search" },
	{ CAP_FOWNER, SRV_IDENT_ROOT, false, "fowner" },	/* chmod, times, ACLs of any file */
	{ CAP_FSETID, SRV_IDENT_ROOT, true, "fsetid" },	/* set-ID bits kept */
	{ CAP_MKNOD, SRV_IDENT_ROOT, false, "mknod" },	/* devices, with "rdax special files" */
	{ CAP_IPC_LOCK, SRV_IDENT_RDMA, false, "ipc_lock" },
	{ CAP_NET_BIND_SERVICE, SRV_IDENT_RDMA_LOW_PORT, false, "net_bind_service" },
};

static bool switching;
static bool delegate;		/* RDMA: workers keep their credentials */

/* A worker's identity thread: one call at a time, the worker waits. */
struct srv_ident_thread {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const struct srv_ident *id;
	int (*fn)(void *);
	void *arg;
	int ret;
	bool pending, stop;
};

static __thread struct srv_ident_thread *my_ident_thread;
static __thread bool is_ident_thread;
/*
 * With RDMA: the identity thread of threads that have none of their own
 * (the control thread at shutdown, a worker whose own did not start),
 * one caller at a time.
 */
static struct srv_ident_thread *shared_thread;
static pthread_mutex_t shared_call = PTHREAD_MUTEX_INITIALIZER;
/* srv_ident_run calls in progress on this thread, and the innermost's id */
static __thread int run_depth;
static __thread const struct srv_ident *run_id;
static atomic_uint_fast64_t next_serial = 1;
static __thread uint64_t cur_serial = SERIAL_SELF;
/* the process's own identity, as it started */
static uid_t self_uid;
static gid_t self_gid;
/* what a thread acting as uid 0 holds: as a root session, as rdaxd */
static struct __user_cap_data_struct caps_root[2], caps_self[2];
static bool root_caps;		/* the file-system capabilities are kept */
static __thread bool has_fsetid;	/* this thread acts as a root session */
static gid_t *self_groups;
static int self_ngroups;

static int ident_thread_new(struct srv_ident_thread **out);

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int caps_set(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static bool cap_permitted(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].permitted & (1u << (cap % 32));
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int n = 40;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 40;
		fclose(f);
	}
	return n;
}

int srv_ident_setup(unsigned int needs, char *why, size_t len)
{
	struct __user_cap_data_struct d[2], keep[2] = { { 0 } };
	bool rdma = needs & SRV_IDENT_RDMA;
	char kept[160] = "";
	size_t off = 0;
	int i, n, ret;

	self_uid = geteuid();
	self_gid = getegid();
	n = getgroups(0, NULL);
	if (n > 0) {
		self_groups = calloc((size_t)n, sizeof(gid_t));
		if (!self_groups)
			return -ENOMEM;
		self_ngroups = getgroups(n, self_groups);
		if (self_ngroups < 0)
			self_ngroups = 0;
	}
	if (!self_uid)
		needs |= SRV_IDENT_ROOT;
	ret = caps_get(d);
	if (ret)
		return ret;
	for (i = 0; i < (int)(sizeof(kept_caps) / sizeof(kept_caps[0])); i++) {
		int c = kept_caps[i].cap;

		if ((kept_caps[i].need & needs) != kept_caps[i].need || !cap_permitted(d, c))
			continue;
		keep[c / 32].permitted |= 1u << (c % 32);
		if (!kept_caps[i].self_off)
			keep[c / 32].effective |= 1u << (c % 32);
		off += (size_t)snprintf(kept + off, off < sizeof(kept) ? sizeof(kept) - off : 0,
					" %s", kept_caps[i].name);
	}
	/* the bounding set first: dropping needs CAP_SETPCAP, still held */
	n = last_cap();
	for (i = 0; i <= n; i++)
		if (!cap_permitted(keep, i) && prctl(PR_CAPBSET_READ, i, 0, 0, 0) == 1)
			prctl(PR_CAPBSET_DROP, i, 0, 0, 0);	/* EPERM without CAP_SETPCAP */
	ret = caps_set(keep);
	if (ret)
		return ret;
	memcpy(caps_self, keep, sizeof(keep));
	memcpy(caps_root, keep, sizeof(keep));
	for (i = 0; i < 2; i++)
		caps_root[i].effective = caps_root[i].permitted;
	root_caps = cap_permitted(keep, CAP_CHOWN);
	switching = cap_permitted(keep, CAP_SETUID) &&
		    cap_permitted(keep, CAP_SETGID);
	delegate = rdma;
	if (switching && delegate && !shared_thread) {
		ret = ident_thread_new(&shared_thread);
		if (ret)
			return ret;
	}
	if (switching)
		snprintf(why, len, "each session acts as its Unix user (fsuid, fsgid, groups "
			 "per %s thread); capabilities kept:%s",
			 rdma ? "worker's identity" : "worker", kept);
	else
		snprintf(why, len, "no CAP_SETUID/CAP_SETGID: every session acts as uid %u "
			 "gid %u, the user rdaxd runs as; capabilities kept:%s",
			 (unsigned int)self_uid, (unsigned int)self_gid, kept[0] ? kept : " none");
	return 0;
}

bool srv_ident_switching(void)
{
	return switching;
}

static int ident_alloc(const char *name, uid_t uid, gid_t gid, int ngroups,
		       const gid_t *groups, struct srv_ident **out)
{
	struct srv_ident *id = calloc(1, sizeof(*id) + sizeof(gid_t) * (size_t)ngroups);

	if (!id)
		return -ENOMEM;
	atomic_init(&id->refs, 1);
	id->serial = atomic_fetch_add(&next_serial, 1);
	id->uid = uid;
	id->gid = gid;
	snprintf(id->name, sizeof(id->name), "%s", name);
	id->ngroups = ngroups;
	if (ngroups)
		memcpy(id->groups, groups, sizeof(gid_t) * (size_t)ngroups);
	*out = id;
	return 0;
}

/* getpwnam_r with a buffer that grows; -ENOENT: no such account */
static int pw_lookup(const char *name, struct passwd *pw, char **buf)
{
	size_t len = 4096;
	struct passwd *res;
	int err;

	for (;;) {
		char *b = realloc(*buf, len);

		if (!b)
			return -ENOMEM;
		*buf = b;
		err = getpwnam_r(name, pw, b, len, &res);
		if (err != ERANGE)
			break;
		if (len >= (1u << 20))
			return -ERANGE;
		len *= 2;
	}
	if (err)
		return -err;
	return res ? 0 : -ENOENT;
}

int srv_ident_lookup(const char *name, struct srv_ident **out)
{
	struct passwd pw;
	char *buf = NULL, lower[256];
	gid_t *groups = NULL;
	int n = 32, ret;
	size_t i;

	if (!*name || strlen(name) >= sizeof(lower))
		return -ENOENT;
	ret = pw_lookup(name, &pw, &buf);
	if (ret == -ENOENT) {
		/* Windows clients may send any case: try the usual Unix one */
		for (i = 0; name[i]; i++)
			lower[i] = (char)tolower((unsigned char)name[i]);
		lower[i] = 0;
		if (strcmp(lower, name))
			ret = pw_lookup(lower, &pw, &buf);
	}
	if (ret)
		goto out_free;
	for (;;) {
		gid_t *g = realloc(groups, sizeof(gid_t) * (size_t)n);
		int have = n;

		if (!g) {
			ret = -ENOMEM;
			goto out_free;
		}
		groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &have) >= 0) {
			n = have;
			break;
		}
		if (have <= n || have > 65536) {
			ret = -E2BIG;
			goto out_free;
		}
		n = have;
	}
	ret = ident_alloc(pw.pw_name, pw.pw_uid, pw.pw_gid, n, groups, out);
out_free:
	free(groups);
	free(buf);
	return ret;
}

int srv_ident_self(struct srv_ident **out)
{
	struct passwd pw, *res = NULL;
	char buf[4096], name[64];

	if (!getpwuid_r(self_uid, &pw, buf, sizeof(buf), &res) && res)
		snprintf(name, sizeof(name), "%s", pw.pw_name);
	else
		snprintf(name, sizeof(name), "uid %u", (unsigned int)self_uid);
	return ident_alloc(name, self_uid, self_gid, self_ngroups, self_groups, out);
}

bool srv_ident_in_group(const struct srv_ident *id, gid_t gid)
{
	int i;

	if (id->gid == gid)
		return true;
	for (i = 0; i < id->ngroups; i++)
		if (id->groups[i] == gid)
			return true;
	return false;
}

int srv_ident_force(const struct srv_ident *base, const struct srv_ident *user,
		    gid_t gid, bool only_member, struct srv_ident **out)
{
	const struct srv_ident *who = user ? user : base;
	struct srv_ident *id;
	bool add;
	int ret;

	/* Samba's rule: "+group" asks the user the share acts as, forced or not */
	if (gid == (gid_t)-1 || (only_member && !srv_ident_in_group(who, gid)))
		gid = who->gid;
	add = !srv_ident_in_group(who, gid);
	ret = ident_alloc(who->name, who->uid, gid, who->ngroups + add, who->groups, &id);
	if (ret)
		return ret;
	if (add)
		id->groups[who->ngroups] = gid;
	*out = id;
	return 0;
}

void srv_ident_put(struct srv_ident **idp)
{
	struct srv_ident *id = *idp;

	*idp = NULL;
	if (id && atomic_fetch_sub(&id->refs, 1) == 1)
		free(id);
}

/* root_session: uid 0 as a session's user, with every kept capability */
static int set_ids(uid_t uid, gid_t gid, int ngroups, const gid_t *groups, bool root_session)
{
	int ret;

	/* groups and fsgid while CAP_SETGID is surely effective, fsuid last */
	if (syscall(SYS_setgroups, (size_t)ngroups, groups))
		return -errno;
	syscall(SYS_setfsgid, gid);
	if ((gid_t)syscall(SYS_setfsgid, (gid_t)-1) != gid)
		return -EPERM;
	syscall(SYS_setfsuid, uid);
	if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != uid)
		return -EPERM;
	/*
	 * At a user's fsuid the kernel has lowered the file-system
	 * capabilities; at fsuid 0 it raised all of them (from a user's) or
	 * none (from uid 0): set what this uid 0 holds.
	 */
	has_fsetid = false;
	if (uid || !root_caps)
		return 0;
	ret = caps_set(root_session ? caps_root : caps_self);
	if (!ret)
		has_fsetid = root_session;
	return ret;
}

int srv_ident_enter(const struct srv_ident *id)
{
	uint64_t want = id ? id->serial : SERIAL_SELF;
	int ret;

	if (!switching || cur_serial == want)
		return 0;
	if (id)
		ret = set_ids(id->uid, id->gid, id->ngroups, id->groups, true);
	else
		ret = set_ids(self_uid, self_gid, self_ngroups, self_groups, false);
	/* half-switched: never trust this thread's identity until the next switch */
	cur_serial = ret ? SERIAL_UNKNOWN : want;
	if (ret)
		log_ratelimited(LOG_ERR, "cannot act as %s (uid %u): %s", id ? id->name : "rdaxd",
				(unsigned int)(id ? id->uid : self_uid), strerror(-ret));
	return ret;
}

int srv_ident_io(const struct srv_ident *opener)
{
	if (!switching || delegate || !opener || has_fsetid == (root_caps && !opener->uid))
		return 0;
	return srv_ident_enter(opener);
}

int srv_ident_run_self(const struct srv_ident *back, int (*fn)(void *), void *arg)
{
	int ret;

	if (!switching || cur_serial == SERIAL_SELF || (delegate && !is_ident_thread))
		return 1;
	if (srv_ident_enter(NULL)) {
		ret = back ? srv_ident_enter(back) : 0;
		return ret ? ret : 1;
	}
	fn(arg);
	return back ? srv_ident_enter(back) : 0;
}

/*
 * fn(arg) as id on this thread. A call inside another (a handler that
 * drops the last reference to a delete-pending file unlinks it as the
 * user who asked) gives the outer call its identity back afterwards.
 */
static int run_here(const struct srv_ident *id, int (*fn)(void *), void *arg)
{
	const struct srv_ident *outer = run_id;
	bool nested = run_depth > 0;
	int ret;

	ret = srv_ident_enter(id);
	if (ret)
		return ret;
	run_id = id;
	run_depth++;
	ret = fn(arg);
	run_depth--;
	run_id = outer;
	if (nested && srv_ident_enter(outer))
		log_ratelimited(LOG_ERR, "cannot act as %s again after %s", outer ? outer->name : "rdaxd",
				id ? id->name : "rdaxd");
	return ret;
}

static int hand_over(struct srv_ident_thread *t, const struct srv_ident *id,
		     int (*fn)(void *), void *arg)
{
	int ret;

	pthread_mutex_lock(&t->lock);
	t->id = id;
	t->fn = fn;
	t->arg = arg;
	t->pending = true;
	pthread_cond_broadcast(&t->cond);
	while (t->pending)
		pthread_cond_wait(&t->cond, &t->lock);
	ret = t->ret;
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int srv_ident_run(const struct srv_ident *id, int (*fn)(void *), void *arg)
{
	int ret;

	if (!switching)
		return fn(arg);
	if (!delegate || is_ident_thread)
		return run_here(id, fn, arg);
	if (my_ident_thread)
		return hand_over(my_ident_thread, id, fn, arg);
	if (!shared_thread) {
		log_ratelimited(LOG_ERR, "no identity thread to act as %s", id ? id->name : "rdaxd");
		return -EPERM;
	}
	pthread_mutex_lock(&shared_call);
	ret = hand_over(shared_thread, id, fn, arg);
	pthread_mutex_unlock(&shared_call);
	return ret;
}

static void *ident_thread_main(void *arg)
{
	struct srv_ident_thread *t = arg;

	is_ident_thread = true;
	/* the handlers it runs look up the state tables (RCU readers) */
	rcu_register_thread();
	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!t->pending && !t->stop)
			pthread_cond_wait(&t->cond, &t->lock);
		if (t->stop)
			break;
		/* the worker waits: what fn touches is ours until we answer */
		t->ret = run_here(t->id, t->fn, t->arg);
		t->pending = false;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	rcu_unregister_thread();
	return NULL;
}

static int ident_thread_new(struct srv_ident_thread **out)
{
	struct srv_ident_thread *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	ret = -pthread_create(&t->thread, NULL, ident_thread_main, t);
	if (ret) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int srv_ident_thread_start(struct srv_ident_thread **out)
{
	int ret;

	*out = NULL;
	if (!switching || !delegate)
		return 0;
	ret = ident_thread_new(out);
	if (!ret)
		my_ident_thread = *out;
	return ret;
}

void srv_ident_thread_stop(struct srv_ident_thread **tp)
{
	struct srv_ident_thread *t = *tp;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	if (my_ident_thread == t)
		my_ident_thread = NULL;
	free(t);
	*tp = NULL;
}

void srv_ident_cleanup(void)
{
	srv_ident_thread_stop(&shared_thread);
	free(self_groups);
	self_groups = NULL;
	self_ngroups = 0;
}
