/* SPDX-License-Identifier: MIT */
/*
 * Unix identities: the account a session acts as on the file system.
 *
 * An identity is resolved once (a session's user at logon, a share's
 * "force user"/"force group" at tree connect) and shared by reference.
 * Before a path operation a worker thread enters the identity of the
 * request: fsuid, fsgid and the supplementary groups of that thread only
 * (raw syscalls: glibc's wrappers would change every thread). Entering
 * the identity the thread already has costs a compare. The kernel then
 * checks permissions and sets ownership as it would for that user.
 *
 * Without CAP_SETUID and CAP_SETGID (rdaxd started as an ordinary user)
 * nothing is switched: every session acts as the process's own user.
 *
 * A thread that drives RDMA must never change its credentials: the
 * kernel refuses the write() commands of rdma_cm and uverbs (rxe posts
 * its sends that way) unless the caller's credentials are the very ones
 * the descriptor was opened with. So with an rdma:// listener, a worker
 * runs what needs an identity on its own identity thread, and waits for
 * it (srv_ident_run); without one, it switches in place.
 */
#ifndef RDAX_SERVER_IDENT_H
#define RDAX_SERVER_IDENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct srv_ident {
	atomic_int refs;
	uint64_t serial;		/* unique per object: what a thread holds */
	uid_t uid;
	gid_t gid;
	char name[64];			/* the Unix account, for logs */
	int ngroups;
	gid_t groups[];			/* supplementary groups, gid included */
};

/* What the server needs, for srv_ident_setup (ROOT is found by itself). */
#define SRV_IDENT_RDMA		0x1	/* an rdma:// listener: identity threads, CAP_IPC_LOCK */
#define SRV_IDENT_RDMA_LOW_PORT	0x2	/* one on a port below 1024: CAP_NET_BIND_SERVICE */
#define SRV_IDENT_ROOT		0x4	/* started as root: the file-system capabilities */

/*
 * Once, on the main thread before any worker starts and before any RDMA
 * descriptor is opened, after the TCP listeners are bound: keep only the
 * capabilities rdaxd needs (CAP_SETUID, CAP_SETGID; as root CAP_CHOWN,
 * CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID and
 * CAP_MKNOD, effective only while a thread acts as uid 0; CAP_IPC_LOCK
 * with RDMA; CAP_NET_BIND_SERVICE for an rdma:// listener below port
 * 1024) and decide whether identities are switched.
 * why says what was decided, for the log.
 */
int srv_ident_setup(unsigned int needs, char *why, size_t len);
/* Identities are switched (rdaxd holds CAP_SETUID and CAP_SETGID). */
bool srv_ident_switching(void);

/*
 * The identity of Unix account name (exact, else lower-cased): its uid,
 * primary gid and groups. -ENOENT when there is no such account.
 */
int srv_ident_lookup(const char *name, struct srv_ident **out);
/* The process's own identity (every session's, when not switching). */
int srv_ident_self(struct srv_ident **out);
/*
 * base as seen on a share with "force user" (user, may be NULL: base's
 * uid and groups stay) and "force group" (gid, or (gid_t)-1: none). With
 * only_member ("force group = +name"), the group is forced only when
 * the user the share acts as (user if forced, else base) is already a
 * member of it, as in Samba.
 */
int srv_ident_force(const struct srv_ident *base, const struct srv_ident *user,
		    gid_t gid, bool only_member, struct srv_ident **out);
bool srv_ident_in_group(const struct srv_ident *id, gid_t gid);

static inline struct srv_ident *srv_ident_get(struct srv_ident *id)
{
	if (id)
		atomic_fetch_add(&id->refs, 1);
	return id;
}

void srv_ident_put(struct srv_ident **id);

/*
 * The calling thread acts as id from now on (NULL: as the process
 * itself). 0, or a negative errno when the kernel refused the switch.
 * Only for threads that drive no RDMA; srv_ident_run is for everyone.
 */
int srv_ident_enter(const struct srv_ident *id);

/*
 * Before a write on an open handle (which otherwise runs as whoever the
 * thread last acted as): the thread holds CAP_FSETID exactly when opener
 * is root, so the kernel clears set-user-ID and set-group-ID bits as it
 * would for the opener. A compare when it does already; a switch to
 * opener when not. Nothing on a worker of an RDMA server (it never
 * switches and acts as rdaxd, without CAP_FSETID: every write clears).
 */
int srv_ident_io(const struct srv_ident *opener);

/*
 * fn(arg) acting as id: in this thread, or on its identity thread (a
 * thread without one, such as the control thread: on a shared one). A
 * call inside another's fn gives the outer its identity back after.
 */
int srv_ident_run(const struct srv_ident *id, int (*fn)(void *), void *arg);

/*
 * fn(arg) acting as rdaxd itself, from a thread that may switch (one
 * running a handler through srv_ident_run, or a worker that switches in
 * place), then as back again (NULL: stay). What Samba does as root:
 * reading metadata of a file the user may see but not read. 0: fn ran
 * (its result is the caller's, through arg); 1: nothing ran, as it would
 * change nothing (acting as rdaxd already, no switching) or may not on
 * this thread; a negative errno: the thread could not act as back again,
 * and the request must fail.
 */
int srv_ident_run_self(const struct srv_ident *back, int (*fn)(void *), void *arg);

/*
 * The calling thread's identity thread (a worker's, before it serves
 * anything); stopped and joined with srv_ident_thread_stop.
 */
struct srv_ident_thread;
int srv_ident_thread_start(struct srv_ident_thread **out);
void srv_ident_thread_stop(struct srv_ident_thread **t);

/* At the end, after the workers: the shared identity thread goes. */
void srv_ident_cleanup(void);

#endif
