// SPDX-License-Identifier: MIT
/*
 * Unix identities (src/server/ident.c) against the real kernel: what
 * "force user" and "force group = +group" give (Samba's rule: the forced
 * user's membership decides), and, as root, the per-thread switch as
 * rdaxd runs it with an RDMA listener: a thread without an identity
 * thread of its own (the control thread) still acts as the user it asks
 * for, and a call inside another gives the outer one its identity back.
 * The kernel's view of each thread (/proc/thread-self/status) is the
 * judge.
 */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/ident.h"
#include "t.h"

static struct srv_ident *root_id, *nobody_id;

/* field n (0-based) of the "Uid:" or "Gid:" line of this thread */
static long status_field(const char *key, int n)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[512];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strlen(key);
		int i;

		if (strncmp(line, key, strlen(key)))
			continue;
		for (i = 0; i <= n; i++)
			v = strtol(p, &p, 10);
		break;
	}
	fclose(f);
	return v;
}

static long fsuid(void)
{
	return status_field("Uid:", 3);
}

static long fsgid(void)
{
	return status_field("Gid:", 3);
}

static void force_group(void)
{
	struct srv_ident *id = NULL;

	t_section("force user, force group = +group");
	/* root is in group 0, nobody is not */
	T_ASSERT(srv_ident_in_group(root_id, 0));
	T_ASSERT(!srv_ident_in_group(nobody_id, 0));
	/* without force user: the session's user must be a member */
	T_EQ(srv_ident_force(root_id, NULL, 0, true, &id), 0);
	T_EQ(id->uid, 0);
	T_EQ(id->gid, 0);
	srv_ident_put(&id);
	T_EQ(srv_ident_force(nobody_id, NULL, 0, true, &id), 0);
	T_EQ(id->uid, nobody_id->uid);
	T_EQ(id->gid, nobody_id->gid);
	srv_ident_put(&id);
	/* force user = nobody: nobody's membership decides, not root's */
	T_EQ(srv_ident_force(root_id, nobody_id, 0, true, &id), 0);
	T_EQ(id->uid, nobody_id->uid);
	T_EQ(id->gid, nobody_id->gid);
	srv_ident_put(&id);
	/* ... and the other way round: a member forced for a non-member */
	T_EQ(srv_ident_force(nobody_id, root_id, 0, true, &id), 0);
	T_EQ(id->uid, 0);
	T_EQ(id->gid, 0);
	srv_ident_put(&id);
	/* force group without '+': always, and it joins the groups */
	T_EQ(srv_ident_force(root_id, nobody_id, 0, false, &id), 0);
	T_EQ(id->uid, nobody_id->uid);
	T_EQ(id->gid, 0);
	T_ASSERT(srv_ident_in_group(id, 0));
	srv_ident_put(&id);
}

struct probe {
	long fsuid, fsgid, tid;
	long inner_fsuid, after_fsuid;
	const struct srv_ident *inner;
};

static int look(void *arg)
{
	struct probe *p = arg;

	p->fsuid = fsuid();
	p->fsgid = fsgid();
	p->tid = syscall(SYS_gettid);
	return 0;
}

static int look_inner(void *arg)
{
	struct probe *p = arg;

	p->inner_fsuid = fsuid();
	return 0;
}

/* as one user, call as another, then look again */
static int nest(void *arg)
{
	struct probe *p = arg;

	p->fsuid = fsuid();
	if (srv_ident_run(p->inner, look_inner, p))
		return -1;
	p->after_fsuid = fsuid();
	return 0;
}

static void *with_own_thread(void *arg)
{
	struct srv_ident_thread *t = NULL;
	struct probe *p = arg;

	if (srv_ident_thread_start(&t)) {
		p->fsuid = -2;
		return NULL;
	}
	if (srv_ident_run(nobody_id, look, p))
		p->fsuid = -3;
	srv_ident_thread_stop(&t);
	return NULL;
}

static void switching(void)
{
	struct probe p = { 0 };
	long me = syscall(SYS_gettid);
	pthread_t th;
	char why[300];

	t_section("the switch, with identity threads (rdma)");
	if (geteuid()) {
		t_skip_case("switch", "switching identities needs root");
		return;
	}
	T_EQ(srv_ident_setup(SRV_IDENT_RDMA, why, sizeof(why)), 0);
	printf("  %s\n", why);
	T_ASSERT(srv_ident_switching());
	/* the control thread has no identity thread of its own */
	T_EQ(srv_ident_run(nobody_id, look, &p), 0);
	T_EQ(p.fsuid, (long)nobody_id->uid);
	T_EQ(p.fsgid, (long)nobody_id->gid);
	T_ASSERT(p.tid != me);		/* it ran elsewhere ... */
	T_EQ(fsuid(), 0);		/* ... and this thread is untouched */
	/* a worker's own identity thread */
	memset(&p, 0, sizeof(p));
	pthread_create(&th, NULL, with_own_thread, &p);
	pthread_join(th, NULL);
	T_EQ(p.fsuid, (long)nobody_id->uid);
	/* nested: root inside nobody, and nobody again after */
	memset(&p, 0, sizeof(p));
	p.inner = root_id;
	T_EQ(srv_ident_run(nobody_id, nest, &p), 0);
	T_EQ(p.fsuid, (long)nobody_id->uid);
	T_EQ(p.inner_fsuid, 0);
	T_EQ(p.after_fsuid, (long)nobody_id->uid);
	/* and the next call starts from what it asks for */
	memset(&p, 0, sizeof(p));
	T_EQ(srv_ident_run(root_id, look, &p), 0);
	T_EQ(p.fsuid, 0);
	srv_ident_cleanup();
}

int main(void)
{
	if (srv_ident_lookup("root", &root_id) || srv_ident_lookup("nobody", &nobody_id))
		T_SKIP("no root or nobody account");
	force_group();
	switching();
	srv_ident_put(&root_id);
	srv_ident_put(&nobody_id);
	return t_done();
}
