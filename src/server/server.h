/* SPDX-License-Identifier: MIT */
/*
 * rdaxd internals. Object model: a connection (and its channels, its
 * credit window, its SMB-Direct state) belongs to one worker for life.
 * Sessions, trees and opens are server-wide (sessions.c, opens.c): a
 * session has a channel on each connection bound to it, on any worker,
 * so they are found through lock-free tables and held by references.
 * The per-share file table is sharded under mutexes.
 */
#ifndef RDAX_SERVER_H
#define RDAX_SERVER_H

#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "crypto/crypto.h"
#include "mem/mem.h"
#include "server/ident.h"
#include "proto/lease.h"
#include "proto/rdma_xform.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "store/dax.h"
#include "store/store.h"
#include "store/uring.h"
#include "transport/smbdirect.h"
#include "transport/transport.h"
#include "util/list.h"

#include <urcu.h>
#include <urcu/rculfhash.h>

#define SRV_MAX_CREDITS 8192
#define SRV_MAX_LISTEN 8
#define SRV_FILE_SHARDS 64
#define SRV_MAX_MSG_PREAUTH (64u * 1024)	/* before a session exists */
#define SRV_MAX_MSG (SMB2_MAX_IO_SIZE + (1u << 20))
#define SRV_MAX_DESC 64			/* buffer descriptors per request */
#define SRV_MAX_SEG 16			/* bounce segments per request */
#define SRV_RIO_PIECES 8		/* pipelined READ: Writes in flight per request */
#define SRV_MAX_RDEV 4			/* RDMA devices per worker */
#define SRV_MAX_CHANNELS 32		/* channels a session may have */
#define SRV_GONE_SESS 4			/* ended sessions a connection remembers */
#define SRV_MAX_ASYNC 512		/* requests waiting per connection */
#define SRV_ASYNC 1			/* handler: the response comes later */
#define SRV_NOTIFY_MAX_EVENTS 1024	/* changes queued per watching handle */
#define SRV_NOTIFY_MAX_BYTES (64u * 1024)	/* their names */
#define SRV_NOTIFY_MAX_OUTPUT (64u * 1024)	/* a CHANGE_NOTIFY answer */
#define SRV_NOTIFY_WATCHES_SESS 4096	/* inotify watches per session */
#define SRV_NOTIFY_WATCHES_SRV 32768	/* ... and in the server */
#define SRV_ZC_READ_MIN (16u * 1024)	/* smaller READs are copied */
#define SRV_ZC_WRITE_MIN (64u * 1024)	/* smaller WRITEs are copied */
/*
 * With "tcp async write", a lone clear TCP WRITE of at least
 * SRV_ASYNC_WRITE_MIN bytes is stored by the io_uring workers while the
 * worker reads on (smb_rdma.c).
 */
#define SRV_ASYNC_WRITE_MIN (64u * 1024)
#define SRV_NUMA_AUTO (-1)		/* the node of the listener devices */
#define SRV_NUMA_OFF (-2)
#define SRV_CONTROL_DEFAULT "/run/rdaxd/control"	/* "rdax control socket" */

enum srv_signing { SRV_SIGN_AUTO, SRV_SIGN_MANDATORY, SRV_SIGN_DISABLED };
/* share option "store": auto picks dax when the share is on a DAX mount */
enum srv_store { SRV_STORE_AUTO, SRV_STORE_POSIX, SRV_STORE_DAX };
/*
 * The registration ladder (where the NIC may touch file memory: enum
 * mem_rung, mem/mem.h) is chosen per share at start (ladder.c);
 * "rdma registration" = auto picks the best one that works.
 */
/* off: no cipher; auto: clients may encrypt; desired: ask capable
 * clients to; required: refuse unencrypted sessions (Samba's values). */
enum srv_encrypt { SRV_ENC_OFF, SRV_ENC_AUTO, SRV_ENC_DESIRED, SRV_ENC_REQUIRED };

/*
 * How DOS attributes and the birth time are kept (dosattr.c), with
 * Samba's parameters and defaults. -1: not given (the [global] value,
 * else Samba's default, is taken at start).
 */
enum srv_map_ro { SRV_MAP_RO_NO, SRV_MAP_RO_YES, SRV_MAP_RO_PERMS };
/* "case sensitive": auto is no for SMB2 opens (names.c), yes for POSIX ones */
enum srv_case { SRV_CASE_AUTO, SRV_CASE_YES, SRV_CASE_NO };

struct srv_dos_opts {
	int8_t store;			/* "store dos attributes": user.DOSATTRIB */
	int8_t map_archive;		/* else: ARCHIVE is u+x */
	int8_t map_hidden;		/* HIDDEN is o+x */
	int8_t map_system;		/* SYSTEM is g+x */
	int8_t map_readonly;		/* enum srv_map_ro */
	int8_t hide_dot;		/* "hide dot files": HIDDEN */
	int8_t delete_readonly;		/* READONLY files may be deleted */
	/* names (names.c) */
	int8_t case_sensitive;		/* enum srv_case */
	int8_t mangled_names;		/* 8.3 short names for long names */
};

struct srv_file_shard {
	pthread_mutex_t lock;
	struct list_head files;
};

struct srv_share {
	char name[81];
	atomic_bool removed;		/* by a reload: its trees are deleted */
	char path[4096];
	char comment[128];
	bool browseable;		/* listed by NetShareEnumAll */
	bool read_only;
	bool guest_ok;
	bool guest_ok_set;		/* given in its section */
	bool oplocks;			/* "oplocks" (Samba's: per share) */
	bool oplocks_set;
	/* "continuous availability": persistent handles, kept in a journal */
	bool ca;
	char ca_journal[4096];		/* "ca journal", default in the state directory */
	struct srv_journal *journal;
	bool from_cli;			/* --share */
	/* alternate data streams in xattrs (streams.c): "vfs objects" names
	 * streams_xattr, or is not given; -1 until resolved */
	int8_t streams_want;
	bool streams;
	/* "smb3 unix extensions" (else as [global]); "rdax special files" */
	bool posix;
	bool posix_set;
	bool special_files;
	/* "use sendfile": TCP READs from the page cache by sendfile(2) */
	bool use_sendfile;
	bool use_sendfile_set;
	bool ipc;
	struct srv_dos_opts dos;
	atomic_bool dos_noxattr_logged;	/* a file system without user xattrs, once */
	atomic_int reflink;		/* its file system shares extents: 1 yes, -1 no, 0 unknown */
	char **valid_users;		/* NULL-terminated; a reload swaps it */
	int nvalid;
	/* "force user" / "force group" ('+': only for members), resolved at start */
	char force_user[64];
	char force_group[64];
	bool force_group_member;
	struct srv_ident *force_ident;
	gid_t force_gid;		/* (gid_t)-1: none */
	struct store_root root;
	struct srv_file_shard shards[SRV_FILE_SHARDS];
	int idx;			/* in srv_config.shares */
	enum srv_store store_want, store;
	char store_why[640];
	enum mem_rung rung_want, rung;
	char rung_why[700];
	/* made before the capability drop, for the ladder's direct probe */
	struct dax_file *rung_probe;
	/* "dax device": a device-DAX namespace served as one file */
	char dax_device[256];
	char dax_name[256];		/* its name in the share ("dax0.1") */
	struct dax_file *devdax;
	dev_t devdax_dev;		/* the placeholder that names it */
	ino_t devdax_ino;
	bool devdax_rundir;		/* path is a directory we made */
	/* DAX writes of files no longer open (SIGUSR1 totals) */
	atomic_uint_fast64_t dax_gone_mapped_written;
	atomic_uint_fast64_t dax_gone_fd_written;
};

/* How a worker waits for completions ("rdma poll"). */
enum srv_poll {
	SRV_POLL_EVENT,			/* sleep in epoll at once */
	SRV_POLL_ADAPTIVE,		/* spin up to poll_spin_us after the last work */
	SRV_POLL_BUSY,			/* never sleep */
};

struct srv_listen {
	char addr[128];
	unsigned int port;
	bool rdma;
};

struct srv_config {
	struct srv_listen listen[SRV_MAX_LISTEN];
	int nlisten;
	struct srv_share **shares;	/* a reload appends; see srv_reload */
	int nshares;			/* srv_config_nshares() outside the reload */
	int cap;
	void **retired;			/* replaced by a reload, freed at exit */
	int nretired;
	char control_path[4096];	/* "rdax control socket", "" : none */
	bool control_set;		/* given: failing to serve it is fatal */
	char passdb_path[4096];
	char usermap_path[4096];	/* "username map" */
	char guest_account[64];		/* "guest account": guests act as it */
	struct srv_ident *guest_ident;	/* resolved when guests can log on */
	bool map_to_guest;		/* unknown users become guests */
	bool multichannel;		/* "server multi channel support" */
	bool rdma_transform;		/* "server smb3 encryption over rdma" */
	bool leases;			/* "smb2 leases" */
	bool oplocks;			/* "oplocks": every share's default */
	bool dir_leases;		/* "smb3 directory leases" */
	bool posix;			/* "smb3 unix extensions": every share's default */
	bool use_sendfile;		/* "use sendfile": every share's default */
	char interfaces[1024];		/* "interfaces": what interface info names */
	char state_dir[4096];		/* "state directory": CA journals */
	bool guest_ok_default;		/* [global] guest ok */
	int8_t streams;			/* [global] "vfs objects": -1 not given */
	struct srv_dos_opts dos;	/* [global]: every share's default */
	uint16_t min_dialect;
	uint16_t max_dialect;
	enum srv_signing signing;
	enum srv_encrypt encrypt;
	int workers;
	int max_connections;
	int max_sessions;		/* per connection */
	int max_opens;			/* per session */
	unsigned int receive_timeout;	/* seconds (TCP), 0: none */
	struct smbd_params smbd;	/* SMB-Direct sizes and credits */
	size_t bounce_size;		/* registered pool per device per worker */
	bool io_uring;			/* posix store I/O on io_uring */
	bool tcp_async_write;		/* "tcp async write": large TCP WRITEs overlap */
	int poll_mode;			/* "rdma poll": enum srv_poll */
	int poll_spin_us;		/* "rdma poll spin": adaptive's budget */
	int numa_node;			/* >= 0, or SRV_NUMA_AUTO / SRV_NUMA_OFF */
	char netbios_name[16];
	char workgroup[16];
	char server_string[128];	/* "server string": the server's comment */
	int log_level;
};

int srv_config_init(struct srv_config *cfg);
/* A configuration error: to stderr, and kept for the reload's answer. */
void srv_conf_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *srv_conf_last_error(void);
int srv_config_nshares(const struct srv_config *cfg);
int srv_config_reserve(struct srv_config *cfg, int cap);
/* One share's defaults, accounts, root and store (srv_config_finish's part). */
int srv_share_finish(struct srv_config *cfg, struct srv_share *sh);
/* Its defaults from [global] (guest ok, oplocks, DOS attributes). */
void srv_share_resolve(const struct srv_config *cfg, struct srv_share *sh);
/* smb.conf syntax; on error prints "FILE:LINE: reason" and returns -EINVAL. */
int srv_config_load(struct srv_config *cfg, const char *file);
int srv_config_add_share(struct srv_config *cfg, const char *name,
			 const char *path, struct srv_share **out);
int srv_config_parse_listen(struct srv_config *cfg, const char *url);
/* Open share roots and check the configuration; prints what is wrong. */
int srv_config_finish(struct srv_config *cfg);
void srv_config_free(struct srv_config *cfg);
struct srv_share *srv_share_find(const struct srv_config *cfg, const char *name);

/* rpc_srv.c: named pipes on IPC$ (srvsvc, wkssvc) */
struct srv;
struct srv_pipe;
/* -E_SMB_OBJECT_NAME_NOT_FOUND for a pipe we do not serve */
int srv_pipe_open(struct srv *srv, const char *name, struct srv_pipe **out);
void srv_pipe_free(struct srv_pipe *p);
int srv_pipe_write(struct srv_pipe *p, const uint8_t *data, size_t len);
/* One fragment's bytes; -E_SMB_BUFFER_OVERFLOW: more of it remains (n set). */
int srv_pipe_read(struct srv_pipe *p, uint8_t *dst, size_t cap, size_t *n);
bool srv_config_has_ca(const struct srv_config *cfg);
bool srv_config_has_posix(const struct srv_config *cfg);

struct srv;
struct srv_worker;

/*
 * How a running server rebuilds its configuration on a reload: as it was
 * built at start (the file, then the command line). 0 or -errno, the
 * message in srv_conf_last_error().
 */
typedef int (*srv_config_build_fn)(struct srv_config *cfg, void *arg);

/* Shares a server lists over its life (added by reloads included). */
#define SRV_MAX_SHARES 1024
/* Latency histogram buckets (upper bounds, microseconds; last: +Inf). */
#define SRV_LAT_BUCKETS 12

/* I/O of one share on one worker (only that worker writes it), by
 * transport ([0] tcp, [1] rdma) and operation ([0] read, [1] write). */
struct srv_share_io {
	uint64_t ops[2][2];
	uint64_t bytes[2][2];
	uint64_t lat_sum_us[2][2];
	uint64_t lat[2][2][SRV_LAT_BUCKETS];
};

/* An upper-layer response under construction; see srv_rbuf_*. */
struct srv_rbuf {
	struct xbuf xb;
	uint8_t *mem;
	size_t cap;			/* bytes after the headroom */
	size_t len;			/* payload bytes used */
	struct srv_worker *w;
	struct srv_rbuf *next_free;
	/* xb.tail points into this open's DAX mapping until sent */
	struct srv_open *hold_open;
	bool hold_window;		/* hold_open's store window is the tail */
};

/*
 * File object shared by all opens of one inode within a share (files.c):
 * share modes, byte-range locks, oplocks and leases, delete-pending, the
 * DAX mapping. The shard's mutex covers the table (link, refs); the
 * file's own mutex covers its state.
 */
struct srv_file {
	struct list_head link;		/* shard */
	struct srv *srv;
	struct srv_share *share;
	dev_t dev;
	ino_t ino;
	int refs;			/* shard lock: opens, waiters */
	bool is_dir;
	pthread_mutex_t lock;		/* everything below */
	char *path;			/* current path, relative to the root */
	struct list_head opens;		/* srv_open.file_link */
	struct list_head leases;	/* srv_lease.file_link */
	struct list_head waiters;	/* srv_async.wait_link: creates and locks */
	struct list_head locks;		/* srv_brl.link */
	atomic_int nlocks;		/* READ/WRITE look at locks only if set */
	bool delete_pending;
	struct srv_ident *delete_ident;	/* who set delete-pending: unlinks as them */
	bool unlinked;			/* its name is gone (a POSIX delete, renamed
					 * over): path is stale, never used again */
	atomic_int rcache;		/* opens and leases holding R */
	int nbreaking;			/* oplocks and leases breaking */
	struct list_head brk_link;	/* srv.breaking (brk_lock) */
	bool on_brk_list;		/* brk_lock */
	/*
	 * DAX store: the file's mapping, made by the first open that is not
	 * attributes-only and made writable by the first writer (dax_lock,
	 * this file's own; dax_done once the first attempt is over).
	 */
	pthread_mutex_t dax_lock;
	struct dax_file *dax;
	atomic_bool dax_done;
	/*
	 * O_DIRECT twins for aligned async I/O, read-only [0] and read-write
	 * [1], opened by the first open that wants one (dax_lock; done once
	 * the attempt is over).
	 */
	int direct_fd[2];		/* or -1 */
	atomic_bool direct_done[2];
	/* an alternate data stream: its xattr (file and shard locks to change) */
	char *stream;
	struct srv_file *base;		/* a stream's: its file (a reference) */
	/* Windows' write-time rules (writetime.c), lock */
	atomic_bool wt_on;		/* wt is the write time while opens last */
	bool wt_sticky;			/* set by a client: writes leave it */
	struct timespec wt;
	uint64_t wt_due;		/* ms: the delayed update, 0 none */
};

/*
 * The state that SMB3 lets outlive a connection or span several lives in
 * server-wide tables (sessions.c, opens.c): liburcu lock-free hash
 * tables, so lookups take no lock any worker shares; objects are
 * reference counted and freed after an RCU grace period. A session's
 * mutex covers its lists (channels, trees, opens) and counters, for
 * the rare changes: setup, binding, tree connect, create, close.
 */
/*
 * What an open is (opens.c, srv_open_kinds): a file or directory; a named
 * pipe of IPC$; the quota fake file ($Extend\$Quota:$Q:$INDEX_ALLOCATION),
 * a directory with no file behind it. srv_req_open refuses the commands
 * and QUERY_INFO types a kind does not take, so no handler sees them.
 */
enum srv_open_kind { SRV_OPEN_FILE, SRV_OPEN_PIPE, SRV_OPEN_QUOTA, SRV_OPEN_KINDS };

struct srv_open {
	struct cds_lfht_node node;	/* srv.opens, by volatile id */
	struct rcu_head rcu;
	atomic_int refs;		/* the table's, and each user's */
	atomic_bool closed;
	struct list_head sess_link;	/* session lock */
	struct srv *srv;
	struct srv_share *share;
	uint64_t persistent;
	uint64_t volatile_id;
	uint64_t sess_id;
	uint32_t tree_id;
	struct srv_session *sess;	/* while open (not a reference) */
	struct srv_file *file;
	struct srv_ident *ident;	/* who opened it */
	int fd;
	struct store_file sf;		/* its data: store ops bound at open (fileio.c) */
	enum srv_open_kind kind;
	struct srv_pipe *pipe;		/* a named pipe on IPC$ (rpc_srv.c) */
	bool is_dir;
	bool path_only;			/* O_PATH: attributes only */
	bool posix;			/* made with the POSIX create context */
	bool symlink;			/* a symlink itself (FILE_OPEN_REPARSE_POINT) */
	bool delete_on_close;
	bool posix_delete;		/* its close unlinks the name (POSIX semantics) */
	bool write_through;
	bool modified;			/* written: its close changes the directory */
	bool wt_once;			/* wrote: its one delayed update is set */
	atomic_bool wt_dirty;		/* wrote since the write time last moved */
	uint32_t access;
	uint32_t share_access;
	uint32_t sharing;		/* access as share modes see it ([MS-FSA]) */
	uint32_t mode;
	uint64_t position;
	/* file lock: the file's opens, and the open's caching state */
	struct list_head file_link;
	uint32_t oplock;		/* as lease bits: R (II), RW (excl), RWH (batch) */
	uint32_t oplock_break_to;	/* breaking (oplock_breaking) to this */
	bool oplock_breaking;
	uint64_t oplock_deadline;	/* ms, monotonic */
	struct srv_lease *lease;	/* the lease it is under, or NULL */
	struct list_head lease_link;	/* lease->opens */
	uint8_t client_guid[16];	/* of the connection that opened it */
	bool on_file;			/* on file->opens */
	/* LockSequence replay detection ([MS-SMB2] 3.3.5.14): 0xFF unset */
	uint8_t lock_seq[64];
	/* durable ([MS-SMB2] 3.3.1.10) */
	bool durable;
	bool durable_v2;
	bool persistent_handle;		/* on a CA share: in its journal */
	int jslot;			/* its journal slot, -1: none */
	uint64_t initial_alloc;		/* AllocationSize asked at create ([MS-SMB2] AlSi) */
	uint32_t durable_timeout;	/* ms it may stay disconnected */
	uint8_t create_guid[16];	/* v2 */
	char owner[256];		/* the user who opened it */
	bool disconnected;		/* durable_lock: its session is gone */
	struct list_head durable_link;	/* srv.durables, while disconnected */
	uint64_t disconnect_deadline;	/* ms, monotonic */
	bool purge;			/* on a purge list */
	struct list_head purge_link;
	/*
	 * [MS-SMB2] 3.3.5.2.10 ChannelSequence, packed for lock-free updates:
	 * sequence (16 bits), its wrap generation (8), requests outstanding
	 * on it (20) and on the ones before it (20).
	 */
	atomic_uint_fast64_t chanseq;
	/* directory enumeration (one request at a time: the client's order) */
	pthread_mutex_t dir_lock;
	struct store_dir *dir;
	char *pattern;
	char *pending_name;		/* entry that did not fit last time */
	bool enum_started;
	bool enum_done;
	/* CHANGE_NOTIFY (notify.c): made under dir_lock, set and cleared under the file lock */
	struct srv_notify *notify;
};

/*
 * A lease ([MS-SMB2] 3.3.1.13): by ClientGuid and LeaseKey, on one file,
 * shared by the opens made under it (oplock.c). The file's lock covers
 * its state; the lease table's mutex its place in the table.
 */
struct srv_lease {
	struct list_head tab_link;	/* srv.lease_tab bucket */
	struct list_head file_link;	/* file->leases */
	struct list_head opens;		/* srv_open.lease_link */
	int nopens;
	struct srv_file *file;
	uint8_t client_guid[16];
	uint8_t key[16];
	uint8_t parent_key[16];
	bool has_parent;
	int version;			/* 1 or 2 */
	uint16_t epoch;
	uint32_t state;			/* SMB2_LEASE_* */
	bool breaking;
	uint32_t breaking_to_requested;
	uint32_t breaking_to_required;
	uint64_t deadline;		/* ms, monotonic: the break times out */
};

/* A byte-range lock (brl.c), on its file's list under the file lock. */
struct srv_brl {
	struct list_head link;
	struct srv_open *o;		/* the owner (not a reference) */
	uint64_t offset;
	uint64_t length;
	bool exclusive;
};

/* A request counted against an open's ChannelSequence, until answered. */
struct srv_chanseq {
	struct srv_open *o;		/* a reference, or NULL: nothing counted */
	uint16_t seq;
	uint8_t gen;
};

struct srv_tree {
	struct cds_lfht_node node;	/* srv.trees, by (session, tree id) */
	struct rcu_head rcu;
	atomic_int refs;
	atomic_bool gone;
	struct list_head sess_link;	/* session lock */
	uint64_t sess_id;
	uint32_t id;
	struct srv_share *share;
	struct srv_ident *ident;	/* the session's, with force user/group */
	bool read_only;
	uint32_t maximal_access;
};

enum srv_sess_state { SESS_IN_PROGRESS, SESS_VALID, SESS_GONE };

/* How a PDU of a session is signed on one channel. */
struct srv_signer {
	uint16_t alg;
	uint8_t key[16];
};

/* How an answer given later is encrypted: its session's cipher and s2c key. */
struct srv_sealer {
	uint16_t cipher;
	uint8_t key[32];
};

/*
 * A channel: one connection's part in a session. The connection's worker
 * owns it (srv_conn.channels); the session lists it under its lock.
 */
enum srv_chan_state { CHAN_BINDING, CHAN_VALID };

struct srv_channel_stats {
	atomic_uint_fast64_t requests;
	atomic_uint_fast64_t bytes_in;	/* file data: WRITE */
	atomic_uint_fast64_t bytes_out;	/* file data: READ */
};

struct srv_channel {
	struct list_head conn_link;	/* the connection's worker only */
	struct list_head sess_link;	/* session lock */
	struct srv_conn *conn;
	struct srv_session *sess;	/* a reference */
	enum srv_chan_state state;
	struct srv_signer sign;		/* this channel's signing key */
	/* binding in progress: its own authentication and preauth hash */
	struct auth_server *auth;
	uint8_t preauth[64];
	struct srv_channel_stats st;
};

struct srv_session {
	struct cds_lfht_node node;	/* srv.sessions, by id */
	struct rcu_head rcu;
	atomic_int refs;		/* the table's, each channel's, lookups' */
	_Atomic int state;		/* enum srv_sess_state */
	pthread_mutex_t lock;
	struct srv *srv;
	uint64_t id;
	/* from the connection that made it; a binding must match */
	uint16_t dialect;
	uint16_t cipher;
	uint16_t sign_alg;
	uint8_t client_guid[16];
	struct auth_server *auth;	/* first setup, on its first channel */
	uint8_t preauth[64];
	char user[256];
	char unix_name[64];		/* the account it acts as */
	struct srv_ident *ident;
	bool guest;
	bool anonymous;
	bool user_unknown;		/* set by the passdb lookup */
	bool signing_required;
	bool encrypt;
	bool have_key;
	atomic_bool xform_noted;	/* its fallback from the RDMA transform logged */
	struct smb3_keys keys;		/* signing: the first channel's */
	struct smb2_nonce_gen xform_nonce;	/* READ payloads it transforms */
	uint8_t session_key[16];
	/* session lock */
	struct list_head channels;
	int nchannels;
	bool was_multi;			/* has had two channels or more */
	struct list_head trees;
	int ntrees;
	uint32_t next_tree_id;
	struct list_head opens;
	int nopens;
	uint64_t next_persistent;
	atomic_int nwatches;		/* inotify watches of its handles */
};

struct srv_conn_stats {
	uint64_t requests;
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t errors;
	uint64_t rdma_reads;		/* SMB2 READs answered by RDMA Write */
	uint64_t rdma_writes;		/* SMB2 WRITEs fetched by RDMA Read */
	uint64_t rdma_bytes;
	uint64_t zero_copy_bytes;	/* NIC <-> file mapping, no bounce */
	uint64_t bounce_bytes;		/* RDMA bytes through bounce space */
	uint64_t xform_bytes;		/* RDMA bytes under the RDMA transform */
	uint64_t xform_bad;		/* transforms refused (bad, replayed, failed check) */
	uint64_t tcp_zero_copy_bytes;	/* socket <-> file mapping, one copy */
	uint64_t tcp_async_writes;	/* TCP WRITEs stored by io_uring workers */
	uint64_t inline_io_bytes;
};

struct srv_conn {
	struct list_head worker_link;
	uint64_t id;			/* server-wide, never reused */
	struct list_head asyncs;	/* srv_async.conn_link: answered later */
	int nasyncs;
	struct list_head client_link;	/* srv.client_conns (client_lock) */
	bool in_clients;
	/* sessions that ended on it lately, to sign what answers them */
	struct srv_gone_sess {
		uint64_t id;
		struct srv_signer sign;
	} gone[SRV_GONE_SESS];
	unsigned int ngone;
	uint64_t next_async_id;
	struct srv *srv;
	struct srv_worker *w;
	struct xprt *x;
	bool negotiated;
	bool closing;
	bool posix;			/* SMB3 POSIX extensions negotiated */
	uint16_t dialect;
	uint16_t client_secmode;
	uint32_t client_caps;
	uint8_t client_guid[16];
	uint16_t client_dialects[SMB2_MAX_DIALECTS];
	uint16_t nclient_dialects;
	uint16_t cipher;
	uint16_t sign_alg;
	uint32_t server_caps;
	uint16_t server_secmode;
	uint8_t preauth[64];
	/* the RDMA transforms negotiated (SMB 3.1.1 over SMB-Direct) */
	bool xform_enc;
	bool xform_sign;
	struct smb2_xform_replay xform_seen;	/* the client's WRITE nonces */
	/* credit window [MS-SMB2] 3.3.1.1 */
	uint64_t seq_low;
	uint32_t seq_range;
	uint32_t seq_inflight;
	uint8_t seq_used[SRV_MAX_CREDITS / 8];
	struct list_head channels;	/* sessions this connection carries */
	int nchannels;
	struct srv_conn_stats stats;
	struct srv_rdev *rdev;		/* SMB-Direct device state */
	/* TCP: the WRITE payload being received into a DAX mapping */
	struct srv_placement {
		struct srv_open *o;	/* a reference */
		struct srv_chanseq cseq;	/* counted before a byte lands */
	} place;
	int rio_active;			/* READ/WRITE transfers in flight */
	int store_active;		/* of those, waiting for io_uring */
	struct srv_rio *rio_pool;	/* free transfers, at most seq_range */
	uint32_t rio_pooled;
	/* OpenSSL contexts of its messages' signatures and encryption */
	struct crypto_kept kept;
	/*
	 * TCP: WRITEs whose store runs on the ring keep their message's
	 * buffer (the transport reads on into rx_spare); a message that
	 * comes meanwhile is held (XPRT_HOLD) until they end.
	 */
	int tcp_writes;
	bool held;
	uint8_t *rx_spare;
	size_t rx_spare_cap;
};

/* Per worker and RDMA device: one PD and one registered bounce pool. */
struct srv_rdev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct mem_pool *bounce;
	struct list_head waiters;	/* rios waiting for bounce space */
	struct ibv_mr **share_mr;	/* direct rung: a device share's mapping */
	int nshare_mr;
};

/*
 * An SMB2 READ or WRITE of a file, from request to response, on either
 * transport: one state machine, moved on only by rio_advance
 * (smb_rdma.c). TCP skips FETCH and PUSH: its data is in the message.
 */
enum srv_rio_state {
	RIO_NEW,		/* checked; holds the open and the request's count */
	RIO_BUFFER,		/* the file's window or bounce space (may wait) */
	RIO_FETCH,		/* WRITE: RDMA Read from the client in flight */
	RIO_STORE,		/* bounce <-> file: inline, or submitted */
	RIO_STORED,		/* the store's result is in res */
	RIO_PUSH,		/* READ: RDMA Write to the client */
	RIO_RESPOND,		/* the answer; then waits for the RDMA Write */
	RIO_DONE,		/* gives back what it holds, back to the pool */
};

struct srv_rio {
	/* reset when taken from the pool: everything up to desc */
	struct smbd_rw rw;
	struct list_head wait_link;
	struct srv_rio *pool_next;	/* its connection's free list */
	struct srv_conn *c;
	struct srv_open *o;		/* a reference */
	enum srv_rio_state state;
	int err;			/* the answer's status */
	bool write;
	bool invalidate;
	bool sign;
	bool write_through;
	bool responded;
	bool posting;			/* in smbd_rw_post: a failure's done() waits */
	int inflight;			/* RDMA ops and store transfers */
	bool waiting;			/* on the device's waiters */
	bool woken;
	uint64_t offset;
	uint32_t length;
	uint32_t done;
	ssize_t res;			/* the store's */
	int ndesc;
	int nseg;
	int nsge;
	void *win;			/* zero-copy: the file mapping's range */
	/*
	 * tcp: the data is in the messages (TCP, or an SMB-Direct READ or
	 * WRITE without an RDMA channel). req while answered inline (its handler's *ret gets the
	 * status); NULL once the store went async (answered later). buf:
	 * a WRITE's payload in the message, a READ's room in the response;
	 * sendfile: a READ goes from the descriptor; rxbuf: the message
	 * buffer an async WRITE keeps.
	 */
	bool tcp;
	bool may_submit;		/* the store may go async */
	bool sendfile;
	struct srv_req *req;
	int *ret;
	uint8_t *buf;
	uint8_t *rxbuf;
	size_t rxcap;
	uint32_t minimum;		/* READ: fewer bytes is END_OF_FILE */
	/*
	 * Pipelined bounce (rio_pipe_ok): pieces of piece bytes. WRITE: the
	 * RDMA Read of one overlaps the CPU copy of the last; pos is the
	 * piece whose Read is posted last, plen its length. READ: each
	 * piece's RDMA Write (prw[k]) is posted once it is copied, several
	 * in flight.
	 */
	bool pipe;
	uint32_t piece;
	uint32_t pos, plen;
	int npdesc, npsge;
	struct srv_chanseq cseq;
	void (*cancel)(struct srv_rio *io);	/* dropped while it waits */
	uint64_t start_ns;		/* its request's dispatch (metrics) */
	struct smb2_hdr hdr;
	struct srv_signer signer;	/* of the channel it came on */
	/*
	 * The RDMA transform (Channel SMB2_CHANNEL_RDMA_TRANSFORM): 0 or
	 * SMB2_RDMA_XFORM_TYPE_*. WRITE: the payload goes through bounce
	 * space and is checked before anything is stored. READ: transformed
	 * before its RDMA Write, in bounce space; a signed one where the
	 * file's memory is registered is signed there (io->win, no copy).
	 * key: the cipher's key for this direction.
	 */
	bool seal;			/* answer encrypted, with sealer */
	struct srv_sealer sealer;
	uint16_t xform;
	uint16_t xcipher;
	uint16_t xnonce_len;
	uint8_t xkey[32];
	uint8_t xsig[16];
	uint8_t xnonce[16];
	/*
	 * xsteps: the algorithm goes in steps (not AES-CCM), so the cipher
	 * pass is pipelined with the RDMA of the pieces (xpass, begun at the
	 * first piece, ended after the last).
	 */
	bool xsteps;
	struct smb2_xpass xpass;
	/* filled before use */
	struct smbd_desc desc[SRV_MAX_DESC];
	struct mem_seg seg[SRV_MAX_SEG];
	struct smbd_sge sge[SRV_MAX_SEG];
	struct store_rw srw;		/* io_uring transfer to/from the bounce */
	/*
	 * The pieces in flight: their descriptors and bounce segments, one
	 * after the other (slices of contiguous ranges: at most one more
	 * entry per piece than the whole), and a READ's Writes.
	 */
	struct smbd_desc pdesc[SRV_MAX_DESC + SRV_RIO_PIECES];
	struct smbd_sge psge[SRV_MAX_SEG + SRV_RIO_PIECES];
	struct smbd_rw prw[SRV_RIO_PIECES];
	/* the transform's OpenSSL contexts, kept while pooled (xpass runs on them) */
	struct crypto_kept kept;
};


/* A connection handed from the control thread to a worker. */
struct srv_adopt {
	int fd;				/* TCP socket, or -1 */
	struct smbd_pending *pending;	/* SMB-Direct request, or NULL */
};

struct srv_worker {
	struct srv *srv;
	int idx;
	pthread_t thread;
	int epfd;
	int efd;			/* doorbell */
	pthread_mutex_t q_lock;
	struct srv_adopt *q;		/* connections to adopt */
	int q_len, q_cap;
	struct srv_work *work, **work_tail;	/* posted by other threads */
	struct list_head conns;
	int nconns;
	struct srv_rbuf *rb_free;
	int rb_free_count;
	struct srv_rdev rdev[SRV_MAX_RDEV];
	int nrdev;
	atomic_bool dump_stats;		/* SIGUSR1: log counters */
	struct store_ring *ring;	/* io_uring for the POSIX store, or NULL */
	struct srv_ident_thread *ident_thread;	/* with RDMA: acts as users for it */
	int cpu, node;			/* where it runs (stats) */
	struct xprt_ev ring_ev;
	struct srv_inotify *ino;	/* CHANGE_NOTIFY's inotify (notify.c) */
	struct xprt_ev ino_ev;
	uint64_t uring_ops, uring_direct_ops;
	/* completion polling: rounds that found work, sleeps after the budget */
	uint64_t poll_hits, poll_sleeps;
	struct srv_conn_stats gone;	/* totals of connections closed */
	struct srv_conn_stats gone_tr[2];	/* the same, [0] tcp, [1] rdma */
	struct srv_share_io *share_io;	/* [SRV_MAX_SHARES], by share idx */
};

struct usermap;

struct srv {
	struct srv_config *cfg;
	/* who may log on: swapped by a reload (SIGHUP) under logon_lock */
	pthread_rwlock_t logon_lock;
	struct passdb *passdb;
	struct usermap *usermap;
	struct srv_ident *self_ident;	/* the process's own */
	uint8_t guid[16];
	uint64_t start_time;
	struct srv_worker *workers;
	int nworkers;
	int numa_node;			/* workers bound here, or -1 */
	int numa_cpus;
	int listen_fds[SRV_MAX_LISTEN];
	int nlisten_fds;
	struct smbd_listener *rdma_listen[SRV_MAX_LISTEN];
	int nrdma_listen;
	atomic_int nconns;
	/* server-wide state (sessions.c, opens.c) */
	struct cds_lfht *sessions;
	struct cds_lfht *trees;
	struct cds_lfht *opens;
	atomic_uint_fast64_t next_session_id;
	atomic_uint_fast64_t next_volatile;
	atomic_uint_fast64_t next_persistent;
	atomic_uint_fast64_t next_conn_id;
	/* leases by ClientGuid and key (oplock.c) */
	pthread_mutex_t lease_lock;
	struct list_head *lease_tab;
	atomic_int ndir_leases;		/* directory leases granted */
	struct srv_cache_stats {	/* SIGUSR1 "stats caching" */
		atomic_uint_fast64_t oplocks;	/* granted */
		atomic_uint_fast64_t leases;	/* made */
		atomic_uint_fast64_t breaks;	/* notifications sent */
		atomic_uint_fast64_t acks;
		atomic_uint_fast64_t timeouts;
		atomic_uint_fast64_t waits;	/* requests that waited */
		atomic_uint_fast64_t durable_kept;
		atomic_uint_fast64_t durable_reconnects;
		atomic_uint_fast64_t durable_expired;
		atomic_uint_fast64_t durable_purged;
		atomic_int nleases;		/* now */
		atomic_int ndisconnected;	/* now */
	} cst;
	/* negotiated connections, oldest first: lease breaks find a client's */
	pthread_mutex_t client_lock;
	struct list_head client_conns;
	/* disconnected durable opens (durable.c) */
	pthread_mutex_t durable_lock;
	struct list_head durables;
	/* files with an oplock or lease break in flight: the timer's */
	pthread_mutex_t brk_lock;
	struct list_head breaking;
	int timer_fd;
	atomic_int nwatches;		/* inotify watches (CHANGE_NOTIFY) */
	atomic_bool stopping;
	unsigned int rr;
	/* control socket (control.c) and reload (reload.c) */
	int control_fd;
	pthread_t control_thread;
	bool control_running;
	pthread_mutex_t reload_lock;
	srv_config_build_fn build;
	void *build_arg;
	char conf_file[4096];		/* named in reload messages */
};

int srv_new(struct srv_config *cfg, struct srv **out);
/* Before srv_run: how a reload rebuilds the configuration. */
void srv_set_config_build(struct srv *s, srv_config_build_fn fn, void *arg,
			  const char *file);
/* Runs until SIGTERM/SIGINT; returns 0 on a clean stop. */
int srv_run(struct srv *s);
void srv_free(struct srv **s);

/* worker / connection plumbing */
int srv_worker_start(struct srv *s, struct srv_worker *w, int idx);
void srv_worker_adopt(struct srv_worker *w, int fd);
void srv_worker_adopt_rdma(struct srv_worker *w, struct smbd_pending *p);
void srv_worker_stop(struct srv_worker *w);
int srv_conn_new(struct srv_worker *w, int fd, struct srv_conn **out);
int srv_conn_new_rdma(struct srv_worker *w, struct smbd_pending *p,
		      struct srv_conn **out);
void srv_conn_free(struct srv_conn *c);
/* connection objects (conn.c): credits [MS-SMB2] 3.3.1.1, 3.3.5.2.3 */
int srv_conn_credit_consume(struct srv_conn *c, uint64_t mid, uint32_t charge);
uint16_t srv_conn_credit_grant(struct srv_conn *c, uint16_t requested);

/* ---- answering (respond.c) ---- */
struct srv_rbuf *srv_rbuf_get(struct srv_worker *w, size_t want);
int srv_rbuf_reserve(struct srv_rbuf *rb, size_t need);
void srv_rbuf_put(struct srv_rbuf *rb);
void srv_rbuf_pool_free(struct srv_worker *w);
uint8_t *srv_rbuf_payload(struct srv_rbuf *rb);

/* One PDU of a response chain: where it is, how it is signed. */
struct srv_pdu_out {
	size_t off;
	size_t len;
	bool sign;
	struct srv_signer signer;
	uint8_t *hash;			/* preauth hash to update with it */
};

/* Sign (or seal, with enc_sess) the PDUs of rb and send them as one. */
int srv_send_response(struct srv_conn *c, struct srv_rbuf *rb,
		      struct srv_pdu_out *outs, int nout,
		      struct srv_session *enc_sess);

/* ---- request processing ---- */

/* Related-chain state carried from one PDU to the next. */
struct srv_chain {
	bool have_prev;
	uint64_t session_id;
	uint32_t tree_id;
	bool have_fid;
	struct smb2_fid fid;
	bool create_failed;
	uint32_t create_status;
	bool invalid;			/* first PDU was marked related */
};

#define SRV_REQ_HELD 2


struct srv_req {
	struct srv_conn *conn;
	const uint8_t *pdu;
	size_t len;
	struct smb2_hdr hdr;
	struct srv_channel *chan;	/* the session's channel on this connection */
	struct srv_session *sess;	/* chan->sess */
	struct srv_tree *tree;		/* a reference, dropped after the PDU */
	struct srv_open *held[SRV_REQ_HELD];	/* opens it resolved: references */
	int nheld;
	struct srv_chanseq cseq;	/* handed to an RDMA transfer when async */
	struct srv_chain *chain;
	bool encrypted;
	bool related;
	/* response */
	struct srv_rbuf *rb;
	size_t rsp_off;			/* header offset in rb payload */
	struct wcur w;			/* positioned in the body */
	bool keep_body;			/* error status with a normal body */
	bool force_sign;
	bool no_response;
	bool hash_rsp;			/* update preauth hash with response */
	uint8_t *hash_target;
	struct srv_signer signer;	/* how the response is signed ... */
	bool have_signer;		/* ... when it is */
	uint64_t new_session_id;	/* SESSION_SETUP assigns one */
	uint32_t new_tree_id;
	bool single;			/* the only PDU of its message */
	/* answered later: the waiting request (async.c), if it waits */
	struct srv_async *async;
	bool pending;			/* it waits (SRV_PENDING) */
	bool interim;			/* its response is the interim one */
	uint64_t start_ns;		/* dispatched (metrics latency) */
};

#define SRV_PENDING 2			/* handler: waits on req->async */

/* Work for one worker, posted from any thread (srv.c); fn runs there. */
struct srv_work {
	struct srv_work *next;
	void (*fn)(struct srv_worker *w, struct srv_work *wk);
};

void srv_worker_post(struct srv_worker *w, struct srv_work *wk);

enum srv_wait { SRV_WAIT_NONE, SRV_WAIT_BREAK, SRV_WAIT_LOCK, SRV_WAIT_NOTIFY };

/*
 * A request answered later ([MS-SMB2] 3.3.4.2): a CREATE waiting for an
 * oplock or lease break, a blocking LOCK. Its connection's worker owns
 * it; the file it waits on lists it (under the file lock) and wakes it
 * by posting it back to that worker, where the request runs again. The
 * rest of its compound waits with it.
 */
struct srv_async {
	struct srv_work wk;		/* the resume */
	struct list_head conn_link;	/* conn->asyncs (its worker only) */
	struct list_head wait_link;	/* file->waiters (file lock) */
	atomic_int refs;		/* the connection's, a posted resume's */
	atomic_bool posted;
	struct srv_worker *w;
	struct srv_conn *c;		/* NULL once the connection is gone */
	uint64_t async_id;
	uint64_t message_id;
	enum srv_wait wait;
	struct srv_file *file;		/* waited on, a reference, while linked */
	struct srv_open *lock_open;	/* a LOCK's open (a reference): its close ends the wait */
	int end_err;			/* cancelled or its open closed: answer so */
	bool resumed;			/* running again: no second interim */
	/* the chain from the waiting PDU on, decrypted */
	uint8_t *msg;
	size_t len;
	struct srv_chain chain;
	uint64_t enc_sess;		/* the chain came encrypted for this session */
};

/* Make req wait on f (its lock held): creates req->async on first use. */
int srv_async_wait(struct srv_req *req, struct srv_file *f, enum srv_wait kind);
/* Under f's lock: post every waiter of f back to its worker (not CHANGE_NOTIFYs). */
void srv_file_wake_locked(struct srv_file *f);
/* Under f's lock: post the oldest CHANGE_NOTIFY waiting on handle o (false: none). */
bool srv_file_wake_notify_locked(struct srv_file *f, struct srv_open *o);
void srv_file_wake(struct srv_file *f);
/* Unlink a from what it waits on (any thread; takes the file lock). */
void srv_async_unwait(struct srv_async *a);
void srv_async_put(struct srv_async *a);
/* A connection goes: its waiting requests end, unanswered. */
void srv_async_conn_gone(struct srv_conn *c);
/* CANCEL ([MS-SMB2] 3.3.5.16): by AsyncId or MessageId. */
void srv_async_cancel(struct srv_conn *c, const struct smb2_hdr *h);
/* A closing open ends the LOCKs (err) and CHANGE_NOTIFYs (STATUS_NOTIFY_CLEANUP)
 * that wait on it (its file lock held). */
void srv_async_end_locks_locked(struct srv_file *f, struct srv_open *o, int err);
/* Every CHANGE_NOTIFY waiting on f ends with err (its file lock held). */
void srv_async_end_notify_locked(struct srv_file *f, int err);

/* Resume a waiting request's chain on its worker (dispatch.c). */
void srv_dispatch_resume(struct srv_async *a);

/* Send a notification PDU (header + body) to a session on any live
 * channel; false if it has none. Unsolicited: MessageId -1, unsigned. */
bool srv_notify_session(struct srv_session *s, uint64_t hdr_session_id,
			uint16_t command, const uint8_t *body, size_t len);
/* ... or to a client (by ClientGuid) on its oldest connection (leases). */
bool srv_notify_client(struct srv *srv, const uint8_t *guid, uint16_t command,
		       const uint8_t *body, size_t len);
/* A worker thread says which it is (notifications to it go at once). */
void srv_async_thread_is(struct srv_worker *w);
/* Connections by client, for srv_notify_client: from NEGOTIATE to close. */
void srv_client_add(struct srv_conn *c);
void srv_client_del(struct srv_conn *c);

void srv_io_account(struct srv_worker *w, const struct srv_share *sh, bool rdma,
		    bool write, uint64_t bytes, uint64_t start_ns);

/* File data moved by a READ or WRITE: the connection's, the channel's and
 * the share's (this worker's) counters. */
static inline void srv_req_count_io(struct srv_req *req, bool write, uint64_t n)
{
	if (write)
		req->conn->stats.bytes_written += n;
	else
		req->conn->stats.bytes_read += n;
	if (req->chan)
		atomic_fetch_add_explicit(write ? &req->chan->st.bytes_in : &req->chan->st.bytes_out,
					  n, memory_order_relaxed);
	if (req->tree)
		srv_io_account(req->conn->w, req->tree->share, false, write, n, req->start_ns);
}

/* Make room for n more body bytes; re-points req->w. */
int srv_req_room(struct srv_req *req, size_t n);
int srv_process_msg(void *conn, uint8_t *msg, size_t len);

/* Command handlers: 0 or a negative errno / E_SMB_* code. */
int smb_negotiate(struct srv_req *req);
int smb_session_setup(struct srv_req *req);
int smb_logoff(struct srv_req *req);
void srv_xform_fallback_note(const struct srv_conn *c, struct srv_session *s, bool enc);
int smb_tree_connect(struct srv_req *req);
int smb_tree_disconnect(struct srv_req *req);
int smb_echo(struct srv_req *req);
int smb_create(struct srv_req *req);
int smb_close(struct srv_req *req);
int smb_flush(struct srv_req *req);
int smb_read(struct srv_req *req);
int smb_write(struct srv_req *req);
/* RDMA channel READ/WRITE (smb_rdma.c); SRV_ASYNC or an error. */
int srv_rdma_read(struct srv_req *req, struct srv_open *o,
		  const struct smb2_read_req *r);
int srv_rdma_write(struct srv_req *req, struct srv_open *o,
		   const struct smb2_write_req *r);
/*
 * TCP READ/WRITE of a file (smb_rdma.c), on the same state machine: 0 or
 * an error (answered in req), SRV_ASYNC (answered later). win: a WRITE
 * received into the store's window (srv_write_place_take) or NULL.
 */
int srv_tcp_read(struct srv_req *req, struct srv_open *o, const struct smb2_read_req *r);
int srv_tcp_write(struct srv_req *req, struct srv_open *o, uint64_t off,
		  const uint8_t *data, uint32_t len, bool write_through, void *win);
/* The connection's pooled transfers go (none in flight any more). */
void srv_rio_pool_free(struct srv_conn *c);
/* per-worker RDMA device state (rdev.c) */
void srv_rdev_cleanup(struct srv_worker *w);
/* A connection goes: its RDMA requests still waiting for bounce space too. */
void srv_rdev_conn_gone(struct srv_conn *c);
/* The transport delivers c's messages to dispatch (dispatch.c). */
void srv_dispatch_attach(struct srv_conn *c);
/* Wrap a connected transport in a connection owned by worker w. */
int srv_conn_attach(struct srv_worker *w, struct xprt *x, struct srv_conn **out);
/* Send a response to a request that completed after do_pdu returned. */
/* seal: encrypted (an encrypted request's answer), else signed with sign if set */
int srv_respond_async(struct srv_conn *c, const struct smb2_hdr *req_hdr,
		      uint64_t sess_id, uint32_t tree_id, const struct srv_signer *sign,
		      const struct srv_sealer *seal, int err,
		      void (*body)(struct wcur *w, void *arg), void *arg,
		      bool invalidate, uint32_t rkey);
int smb_lock(struct srv_req *req);
int smb_ioctl(struct srv_req *req);
int smb_query_directory(struct srv_req *req);
int smb_query_info(struct srv_req *req);
int smb_set_info(struct srv_req *req);
int smb_change_notify(struct srv_req *req);
/* CHANGE_NOTIFY's inotify (notify.c): each worker's, its events, a handle's end. */
int srv_inotify_start(struct srv_worker *w);
void srv_inotify_stop(struct srv_worker *w);
void srv_inotify_run(struct srv_worker *w, bool owner);
void srv_notify_end(struct srv_open *o);
int smb_oplock_break(struct srv_req *req);
/* SMB1 NEGOTIATE carrying "SMB 2.???": answer with the 0x02FF wildcard. */
int smb1_negotiate(struct srv_conn *c, const uint8_t *msg, size_t len);

/* logon: passdb, username map, guest account (logon.c) */
int srv_logon_load(const struct srv_config *cfg, struct passdb **db,
		   struct usermap **map, char *err, size_t len);
int srv_logon_init(struct srv *s);
void srv_logon_reload(struct srv *s);
void srv_logon_free(struct srv *s);
int srv_logon_hash(struct srv *s, const char *user, uint8_t nt_hash[16]);
/* The identity of an authenticated user (or the guest); -ENOENT: none. */
int srv_logon_ident(struct srv *s, const char *user, bool guest,
		    struct srv_ident **out, char *unix_name, size_t len);

/* ---- state tables: sessions.c (sessions, channels, trees), opens.c ---- */

int srv_state_init(struct srv *s);
void srv_state_free(struct srv *s);
/* Every thread that looks anything up is an RCU reader (liburcu). */
void srv_state_thread_enter(void);
void srv_state_thread_leave(void);

/* A new session, in progress, and its first channel on c. */
int srv_session_new(struct srv_conn *c, struct srv_channel **out);
/* Any session not gone, by id (for binding); a reference. */
struct srv_session *srv_session_lookup(struct srv *s, uint64_t id);
void srv_session_put(struct srv_session *s);
/* Logoff, a failed setup, or its last channel gone (lost: durable opens
 * stay for a reconnect): opens and trees close. */
void srv_session_end(struct srv_session *s, bool lost);
/* Sessions and opens in the table (stats). */
void srv_state_count(struct srv *s, int *sessions, int *opens);
/* ---- the control socket and status (control.c) ---- */

/* A growing text answer (status, metrics). */
struct srv_out {
	char *buf;
	size_t len, cap;
	bool json;
	int err;			/* -ENOMEM once it failed */
};

void srv_out_printf(struct srv_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void srv_out_free(struct srv_out *o);
void srv_conn_stats_add(struct srv_conn_stats *d, const struct srv_conn_stats *s);
/* status: text (the SIGUSR1 lines) or JSON; metrics: Prometheus text. */
int srv_status(struct srv *s, struct srv_out *o);
int srv_metrics(struct srv *s, struct srv_out *o);
/* SIGUSR1: the status text, one log line each. */
void srv_status_log(struct srv *s);
/* Bind the socket (srv_new), serve it (srv_run), close it. */
int srv_control_start(struct srv *s);
int srv_control_run(struct srv *s);
void srv_control_stop(struct srv *s);
/* Reload the configuration (reload.c): 0, or -errno and why in msg. */
int srv_reload(struct srv *s, char *msg, size_t len);
/* I/O of a share, counted on the worker that did it. */
void srv_io_account(struct srv_worker *w, const struct srv_share *sh, bool rdma,
		    bool write, uint64_t bytes, uint64_t start_ns);
uint64_t srv_now_ns(void);

/* A signed request for a session this connection does not carry: its
 * error is signed with that session's key, if it exists (as Samba). */
void srv_req_sign_as_session(struct srv_req *req, uint64_t sid);
/* Between messages: drop the channels whose session ended elsewhere. */
void srv_conn_sweep(struct srv_conn *c);
/* The channel of session id on c; NULL if none or the session is gone. */
struct srv_channel *srv_channel_find(struct srv_conn *c, uint64_t id);
/* A binding channel of s on c (the session reference is taken). */
int srv_channel_bind(struct srv_conn *c, struct srv_session *s,
		     struct srv_channel **out);
/* The channel's binding succeeded: it carries the session. */
void srv_channel_valid(struct srv_channel *ch);
/* Off the connection and the session; the session ends with its last. */
void srv_channel_drop(struct srv_channel *ch);

int srv_tree_add(struct srv_session *s, struct srv_tree *t);
/* The tree id of session s; a reference. */
struct srv_tree *srv_tree_get(struct srv_session *s, uint32_t id);
void srv_tree_put(struct srv_tree *t);
/* Tree disconnect: its opens close. */
void srv_tree_remove(struct srv_session *s, struct srv_tree *t);

/* The table takes the reference o was made with. */
int srv_open_insert(struct srv_session *s, struct srv_tree *t, struct srv_open *o);
/* A journaled open comes back: into the table, off any session. */
int srv_open_restore(struct srv *srv, struct srv_open *o);
/* A reconnected durable open joins session s on tree t, a new volatile id. */
int srv_open_reattach(struct srv_session *s, struct srv_tree *t, struct srv_open *o);
/* Closed and off its session: out of the table, then its last reference. */
void srv_open_detached(struct srv_open *o);
/* An open of session s by FileId, not closed; a reference. */
struct srv_open *srv_open_get(struct srv_session *s, const struct smb2_fid *fid);
bool srv_open_attached(struct srv *srv, const struct smb2_fid *fid, const uint8_t *client_guid);
static inline struct srv_open *srv_open_ref(struct srv_open *o)
{
	atomic_fetch_add(&o->refs, 1);
	return o;
}
/* At the last reference the file goes (fd, file table, delete on close). */
void srv_open_put(struct srv_open *o);
/* Close: out of the tables at once; -E_SMB_FILE_CLOSED if it was. */
int srv_open_close(struct srv_open *o);
/* Resolve a request FileId (compound-aware) to an open on its tree; the
 * request holds the reference until its PDU is answered. */
/* The open has a file behind it (not a pipe, not a fake file). */
bool srv_open_has_file(const struct srv_open *o);
/* A QUERY_INFO of this type (SMB2_0_INFO_*) is for this kind of open. */
bool srv_open_takes_info(const struct srv_open *o, uint8_t info_type);
int srv_req_open(struct srv_req *req, const struct smb2_fid *fid,
		 struct srv_open **out);
/* Hold o (a reference taken) until the PDU is answered. */
int srv_req_hold(struct srv_req *req, struct srv_open *o);
/*
 * Count a request against o's ChannelSequence ([MS-SMB2] 3.3.5.2.10) in
 * *out (nothing if *out holds a count already); a stale or replayed
 * modifying request fails with E_SMB_FILE_NOT_AVAILABLE.
 */
int srv_chanseq_count(struct srv_open *o, const struct srv_conn *c,
		      const struct smb2_hdr *h, struct srv_chanseq *out);
/* The request is answered: its ChannelSequence count goes. */
void srv_chanseq_done(struct srv_chanseq *cs);

/* File table (files.c): one srv_file per (dev, ino) in a share. */
struct srv_file *srv_file_get(struct srv *srv, struct srv_share *sh, dev_t dev,
			      ino_t ino, const char *path, bool is_dir);
/*
 * The file of one stream (its xattr name) of the inode: its own share
 * modes; it holds its base file (made if need be: base_dir says what it is).
 */
struct srv_file *srv_file_get_stream(struct srv *srv, struct srv_share *sh, dev_t dev,
				     ino_t ino, const char *path, bool base_dir, const char *xname);
/* A stream of base is open without FILE_SHARE_DELETE: base may not be deleted. */
bool srv_file_streams_refuse_delete(struct srv_file *base);
/* The stream's xattr was renamed (the file's lock held). */
int srv_file_stream_renamed(struct srv_file *f, const char *xname);
void srv_file_ref(struct srv_file *f);
/* The file if it is open (a reference), else NULL. */
struct srv_file *srv_file_find(struct srv_share *sh, dev_t dev, ino_t ino);
int srv_file_rename_target_ok(struct srv_share *sh, const struct srv_open *o, const char *to);
bool srv_share_open_below(struct srv_share *sh, const char *dir);
/* The last reference unlinks a delete-pending file. */
void srv_file_put(struct srv_file *f);
bool srv_file_delete_pending(struct srv_file *f);
/* del: unlinked at the last close, as id (a reference is taken) */
int srv_file_set_delete(struct srv_file *f, bool del, struct srv_ident *id);
int srv_file_rename(struct srv_file *f, const char *to, bool replace);
int srv_file_unlink_now_locked(struct srv_file *f, struct srv_ident *id);
bool srv_file_has_streams_locked(struct srv_file *f);
void srv_file_unhash_locked(struct srv_file *f);
void srv_file_replaced(struct srv_share *sh, const struct stat *st, const char *name);
bool srv_file_open_by_anyone(struct srv_share *sh, const struct stat *st);
bool srv_file_unlinked(struct srv_file *f);
int srv_file_path(struct srv_file *f, char *buf, size_t len);
/* Only attributes: no share mode, breaks nothing ([MS-FSA] stat open). */
bool srv_stat_open(uint32_t access);
/* Does open e's share mode refuse an open (access, share)? */
bool srv_open_share_conflict(const struct srv_open *e, uint32_t access, uint32_t share);
/* Would an open (access, share) be refused for sharing? File lock held. */
bool srv_file_share_conflict_locked(struct srv_file *f, uint32_t access, uint32_t share);
/* The open leaves its file at close: share mode, locks, caching go. */
void srv_open_leave_file(struct srv_open *o);

/* ---- oplocks and leases (oplock.c) ---- */

/* What a CREATE asks for. */
struct srv_cache_req {
	uint8_t oplock;			/* RequestedOplockLevel */
	bool existed;			/* the open did not create the file */
	bool lease;			/* an RqLs context came */
	struct smb2_lease_ctx lc;
};

/* Break notifications collected under a file lock, sent after it. */
struct srv_breaks {
	void *notes;
	int n, cap;
};

uint64_t srv_now_ms(void);

/* writetime.c: LastWriteTime as Windows and Samba keep it */
void srv_wt_write(struct srv_open *o);
void srv_wt_flush(struct srv_open *o);
void srv_wt_set(struct srv_open *o, const struct timespec *t);
void srv_wt_close(struct srv_open *o);
void srv_wt_close_locked(struct srv_open *o);
void srv_wt_attr(struct srv_open *o, struct stat *st);
int srv_lease_table_init(struct srv *srv);
void srv_lease_table_free(struct srv *srv);
void srv_breaks_init(struct srv_breaks *b);
void srv_breaks_send(struct srv *srv, struct srv_breaks *b);
/*
 * Under f's lock, for a new open o not yet on f: share modes, breaks of
 * the others' caching, and what o is granted. 0: o may join; SRV_PENDING:
 * breaks are on their way (wait); -E_SMB_SHARING_VIOLATION. Disconnected
 * durable opens in the way go on purge.
 */
int srv_oplock_open_locked(struct srv *srv, struct srv_file *f, struct srv_open *o,
			   const struct srv_cache_req *cr, uint32_t disposition,
			   bool first_attempt, struct srv_breaks *b,
			   struct list_head *purge);
int srv_lease_check_key(struct srv *srv, struct srv_file *f, const uint8_t *guid,
			const struct smb2_lease_ctx *lc);
size_t srv_lease_rsp(const struct srv_open *o, uint8_t *buf);
uint8_t srv_oplock_level(const struct srv_open *o);
void srv_oplock_close_locked(struct srv *srv, struct srv_open *o);
bool srv_oplock_rename_locked(struct srv *srv, struct srv_open *o, struct srv_breaks *b);
void srv_oplock_reconnected(struct srv *srv, struct srv_open *o);
struct srv_jrec;
int srv_oplock_restore_locked(struct srv *srv, struct srv_open *o, const struct srv_jrec *r);
/* A write, truncate or lock by o breaks the others' read caching. */
void srv_oplock_contend(struct srv *srv, struct srv_open *o);
/* A directory's entries changed: its leases break (but by's parent's). */
void srv_dir_lease_break(struct srv *srv, struct srv_share *sh, const char *child,
			 const struct srv_open *by);
/* status: the caching counters. */
void srv_caching_dump(struct srv *srv, struct srv_out *o);
/* Breaks not acknowledged in time (the control thread's timer). */
void srv_oplock_timer(struct srv *srv);

/* ---- byte-range locks (brl.c) ---- */
int srv_brl_check_io(struct srv_open *o, uint64_t off, uint64_t len, bool write);
bool srv_brl_close_locked(struct srv_open *o);
int srv_brl_restore_locked(struct srv_open *o, uint64_t off, uint64_t len, bool excl);

/* ---- the persistent-handle journal of a CA share (journal.c) ---- */

#define SRV_JREC_MAX_LOCKS 32

/* What a persistent open's journal slot holds. */
struct srv_jrec {
	int slot;			/* -1: not written yet */
	uint64_t persistent;
	uint8_t create_guid[16];
	uint32_t access, share_access, sharing;
	uint32_t timeout;
	uint64_t dev, ino;
	bool is_dir, has_lease, has_parent;
	uint32_t oplock;
	uint8_t client_guid[16];
	uint8_t lease_key[16], parent_key[16];
	int lease_version;
	uint16_t lease_epoch;
	uint32_t lease_state;
	uint8_t lock_seq[64];
	char owner[256];
	char path[1100];
	int nlocks;
	struct {
		uint64_t offset, length;
		uint8_t exclusive;
	} locks[SRV_JREC_MAX_LOCKS];
};

struct srv_journal;
/* Open (or make) the journal; restore() is called for each record in it. */
int srv_journal_open(struct srv_share *sh, const char *path, struct srv_journal **out,
		     int (*restore)(struct srv_share *sh, const struct srv_jrec *r, void *arg),
		     void *arg);
void srv_journal_close(struct srv_journal **j);
const char *srv_journal_path(const struct srv_journal *j);
int srv_journal_put(struct srv_journal *j, struct srv_jrec *r);
void srv_journal_drop(struct srv_journal *j, int slot);
int srv_jrec_decode(const uint8_t *buf, size_t len, struct srv_jrec *r);

/* ---- durable handles (durable.c) ---- */

/* What a CREATE asks for: DHnQ/DH2Q, or a reconnect with DHnC/DH2C. */
struct srv_durable_req {
	bool want;			/* DHnQ or DH2Q */
	bool v2;
	bool reconnect;			/* DHnC or DH2C */
	bool persistent;		/* DH2Q flag */
	uint32_t timeout;		/* DH2Q, ms */
	uint8_t create_guid[16];
	struct smb2_fid reconnect_fid;
};

void srv_durable_init(struct srv *srv);
/* CA shares: open their journals and bring their persistent opens back. */
int srv_durable_ca_start(struct srv *srv);
/* One CA share's journal (at start, or a share a reload adds), and its path. */
int srv_durable_ca_open(struct srv *srv, struct srv_share *sh);
int srv_durable_ca_path(const struct srv_config *cfg, const struct srv_share *sh, char *path,
			size_t cap);
void srv_durable_ca_stop(struct srv *srv);
/* A persistent open's state changed (lease, locks, name): journal it.
 * File lock held or not, as locked says. */
void srv_durable_journal(struct srv_open *o, bool locked);
/* Every persistent open of f again (its name changed). */
void srv_durable_journal_file(struct srv_file *f);
/* A persistent open is closed for good: its slot goes. */
void srv_durable_forget(struct srv_open *o);
void srv_durable_free(struct srv *srv);
uint32_t srv_durable_timeout(const struct srv_durable_req *d);
void srv_durable_grant(struct srv_req *req, struct srv_open *o, const struct srv_durable_req *d);
void srv_durable_disconnect(struct srv *srv, struct srv_open *o);
void srv_durable_purge(struct srv *srv, struct list_head *purge);
void srv_durable_timer(struct srv *srv);
int srv_durable_reconnect(struct srv_req *req, const struct srv_durable_req *d,
			  const struct srv_cache_req *cr, const char *path,
			  struct srv_open **out);

/*
 * SMB path (UTF-16LE, '\' separated) to a share-relative UTF-8 path.
 * Rejects NUL and malformed names with E_SMB_OBJECT_NAME_INVALID; a named
 * stream with -ENOENT.
 */
int srv_path_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap);
/* The same with a stream part (fscc_stream_parse): its name and kind. */
enum { SRV_STREAM_NONE, SRV_STREAM_DEFAULT, SRV_STREAM_NAMED };
int srv_path_tidy(char *out, bool refuse_dotdot);
int srv_path_stream_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap,
			       char *stream, size_t scap, int *kind);
/* The inverse, with a leading '\' when lead is set. */
int srv_path_to_utf16(const char *path, bool lead, uint8_t *out, size_t cap);
/*
 * SMB3 POSIX extensions (posix.c): negotiated and on for the request's
 * share; a POSIX open's path; the POSIX view of a stat (and the
 * attributes of a symlink or special file); STATUS_STOPPED_ON_SYMLINK
 * with its error data for the symlink at path; FSCTL_GET/SET_REPARSE_POINT.
 */
struct posix_info;
struct fscc_info;
struct wcur;
bool srv_posix_on(const struct srv_req *req);
int srv_path_posix_from_utf16(const uint8_t *name, size_t len, char *out, size_t cap);

/*
 * names.c: on a share that is not "case sensitive = yes", path's
 * components that are not found as given become the names a directory
 * has ignoring case, or whose 8.3 short name they are (in place; a
 * component found in no case and the rest stay as given). Never for
 * POSIX opens.
 */
int srv_name_resolve(const struct srv_share *sh, char *path, size_t cap);
/* The entry of directory dir that is want ignoring case (or by its short name): 1, 0 none */
int srv_name_match(const struct srv_share *sh, const char *dir, const char *want,
		   char *real, size_t cap);
bool srv_name_fold_eq(const char *a, const char *b);
bool srv_name_is_8_3(const char *name);
/* name's 8.3 name: 0 it is one (copied), 1 a short name made of it */
int srv_name_short(const char *name, char out[13]);
void srv_posix_info(const struct stat *st, struct posix_info *pi);
void srv_posix_attrs(const struct stat *st, struct fscc_info *fi);
int srv_posix_stopped_on_symlink(struct srv_req *req, const char *path);
int srv_reparse_get(struct srv_open *o, struct wcur *d);
int srv_reparse_set(struct srv_req *req, struct srv_open *o, const uint8_t *p, size_t len);

/*
 * An open's data goes through the store ops it was bound to when it was
 * opened (srv_open.sf): the file's store or, for an alternate data
 * stream, srv_stream_ops (streams.c).
 */
/*
 * ---- alternate data streams (streams.c) ----
 *
 * Kept as Samba's vfs_streams_xattr keeps them, so a share moves between
 * the two with its streams: stream NAME of a file or directory is the
 * xattr "user.DosStream.NAME:$DATA", its value the data and one NUL.
 */
#define SRV_STREAM_PREFIX "user.DosStream."
#define SRV_STREAM_SUFFIX ":$DATA"
#define SRV_STREAM_XNAME_MAX 256	/* XATTR_NAME_MAX + 1 */
extern const struct store_ops srv_stream_ops;
/* The xattr of stream name on fd: 1 it exists (any case), 0 not; -errno. */
int srv_stream_lookup(int fd, const char *name, char *xname, size_t cap);
/* Make it empty (excl: only if it is not there). */
int srv_stream_make(int fd, const char *xname, bool excl);
int srv_stream_size(int fd, const char *xname, uint64_t *size);
/*
 * FILE_STREAM_INFORMATION of fd: ::$DATA (not for a directory), then
 * each stream; whole entries up to limit. 1: some did not fit.
 */
/*
 * eas.c: extended attributes in "user.NAME" xattrs, as Samba keeps them.
 * srv_ea_check: a FILE_FULL_EA_INFORMATION chain is well formed and names
 * no private xattr; srv_ea_set: applies it (an empty value removes);
 * srv_ea_query: the file's EAs as a chain within limit bytes of d:
 * 0, 1 (some did not fit), -E_SMB_NO_EAS_ON_FILE.
 */
int srv_ea_check(const uint8_t *p, size_t len);
int srv_ea_set(int fd, const uint8_t *p, size_t len);
int srv_ea_query(struct wcur *d, uint32_t limit, int fd);
/* The size of the file's EA chain (FileEaInformation's EaSize), 0: none */
uint32_t srv_ea_size(int fd);

int srv_stream_list(struct wcur *w, size_t limit, int fd, bool is_dir, uint64_t size,
		    uint64_t alloc);
/* FileRenameInformation ":NEW[:$DATA]" on a stream open. */
int srv_stream_rename(struct srv_open *o, const char *target, bool replace);
/* The stream's sizes in an open's wire view. */
struct fscc_info;
void srv_stream_info(struct srv_open *o, struct fscc_info *fi);
/* Delete on close: the xattr goes (as the calling thread's identity). */
int srv_stream_remove(struct srv_share *sh, const char *path, const char *xname);

/*
 * File data and metadata of an open, through the store ops bound to it:
 * srv_open_store_init at its creation (posix on its descriptor), then
 * srv_open_bind_store once it has joined its file (as its user: maps a
 * DAX file, opens the O_DIRECT twin where async transfers will use it).
 */
void srv_open_store_init(struct srv_open *o, int fd);
int srv_open_bind_store(struct srv_open *o);
/*
 * Zero copy of data carried in messages (TCP, SMB-Direct inline),
 * decided here only, for *len bytes at off: SRV_ZC_WINDOW, *win is the
 * store's memory for a READ sent from it or a WRITE received into it
 * (given back with o->sf.ops->window_put); SRV_ZC_FILE, a READ goes
 * from the descriptor's page cache (sendfile), *len trimmed to the
 * file's end and at least min; SRV_ZC_NONE: copy. allow: the most the
 * message can take (NONE: signed, sealed or compounded; WINDOW: a
 * transport that sends memory only; FILE: TCP).
 */
enum srv_zc { SRV_ZC_NONE, SRV_ZC_WINDOW, SRV_ZC_FILE };
enum srv_zc srv_tcp_zc(struct srv_open *o, enum srv_zc allow, uint64_t off, uint32_t *len,
		       uint32_t min, bool write, void **win);
int srv_fstat(struct srv_open *o, struct stat *st);
ssize_t srv_preadv(struct srv_open *o, const struct iovec *iov, int n, uint64_t off);
/* sync: WRITE_THROUGH (a DAX store is always durable on return) */
ssize_t srv_pwritev(struct srv_open *o, const struct iovec *iov, int n,
		    uint64_t off, bool sync);
int srv_fflush(struct srv_open *o);
int srv_ftruncate(struct srv_open *o, uint64_t size);
int srv_fallocate(struct srv_open *o, uint64_t size);
/*
 * Holes and extents (store.h: store_punch, store_data_range, store_clone);
 * a device-DAX share is all data and cannot punch or clone.
 */
int srv_punch(struct srv_open *o, uint64_t off, uint64_t len);
int srv_data_range(struct srv_open *o, uint64_t off, uint64_t *data, uint64_t *hole);
int srv_clone(struct srv_open *src, uint64_t src_off, struct srv_open *dst,
	      uint64_t dst_off, uint64_t len);
/* Its file system shares extents (probed once, as rdaxd; back: see srv_attr_get). */
bool srv_share_reflinks(struct srv_share *sh, const struct srv_ident *back);
int srv_copy_range(struct srv_open *src, uint64_t src_off, struct srv_open *dst,
		   uint64_t dst_off, uint64_t len, uint64_t *copied);
/* The file's last reference: its mapping and O_DIRECT twins go. */
void srv_file_detach_dax(struct srv_share *sh, struct srv_file *f);
/* Choose a share's store at start; errors go to stderr. */
int srv_store_select(struct srv_share *sh);
void srv_store_release(struct srv_share *sh);
/*
 * The registration ladder. Before the capability drop (as root, any
 * share root), a probe file per DAX share; once RDMA listeners exist,
 * each share's rung; the probes go with srv_ladder_done.
 */
void srv_ladder_prepare(struct srv *s);
int srv_ladder_select(struct srv *s);
void srv_ladder_done(struct srv *s);
/* NUMA: choose the workers' node (before they start); bind a worker. */
int srv_numa_plan(struct srv *s);
void srv_numa_enter(struct srv_worker *w);

/* TCP: receive a DAX WRITE's payload straight into the mapping. */
int srv_write_place(void *conn, const uint8_t *msg, size_t have, size_t total,
		    struct xprt_place *p);
void srv_write_place_release(void *conn, struct xprt_place *p);
/* The WRITE takes the placement's window (its to give back); the rest goes. */
void *srv_write_place_take(struct xprt_place *p);

/* An interface FSCTL_QUERY_NETWORK_INTERFACE_INFO names (ifaces.c). */
struct srv_iface {
	char name[IF_NAMESIZE];
	uint32_t if_index;
	uint32_t caps;			/* SMB2_IFACE_* */
	uint64_t speed;			/* bits/s */
	struct sockaddr_storage addr;
};

#define SRV_MAX_IFACES 32
/* The addresses the listeners serve, as "interfaces" allows: count. */
int srv_ifaces(const struct srv_config *cfg, struct srv_iface *out, int max);

/*
 * ---- DOS attributes and birth time (dosattr.c) ----
 *
 * What rdaxd answers about a file: its stat, its FILE_ATTRIBUTE_* and
 * CreationTime. With "store dos attributes" (Samba's default) they are
 * kept in user.DOSATTRIB, Samba's format; where that is off, or the file
 * system has no user xattrs, they are mapped from the mode bits as Samba
 * maps them ("map archive", ...). A file without the xattr is NORMAL, as
 * in Samba; its birth time is the file system's, else Samba's guess.
 */
struct srv_attr {
	struct stat st;
	uint32_t attrib;		/* as answered (never 0) */
	uint32_t stored;		/* as kept in the xattr (0: none) */
	uint64_t btime;			/* CreationTime, FILETIME */
	bool xattr;			/* kept in the xattr (else mode bits) */
	bool dot_hidden;		/* HIDDEN only for its name */
};

/*
 * Read the attributes of the open file fd (entry NULL) or of entry in the
 * open directory fd, as the calling thread's identity; what the user may
 * see but not read is read as rdaxd, then the thread acts as back again
 * (NULL: outside a handler that runs as the user). name: the file's name
 * (its last component, for "hide dot files"; NULL: entry). 0 or -errno.
 */
int srv_attr_get(struct srv_share *sh, int fd, const char *entry, const char *name,
		 const struct srv_ident *back, struct srv_attr *a);
/*
 * Keep attrib (0: as they are) and btime (0: as it is) on the open file
 * fd whose attributes a holds. -EINVAL: TEMPORARY on a directory.
 */
int srv_attr_set(struct srv_share *sh, int fd, const struct srv_attr *a, uint32_t attrib,
		 uint64_t btime);
/*
 * Security descriptors (secdesc.c): the parts secinfo asks for, encoded
 * into buf (*len: the size, larger than cap when it did not fit); a
 * descriptor a client sets; the maximal access of id on the file (MxAc).
 */
int srv_sd_query(struct srv_req *req, struct srv_open *o, uint32_t secinfo,
		 uint8_t *buf, size_t cap, size_t *len);
int srv_sd_set(struct srv_req *req, struct srv_open *o, uint32_t secinfo,
	       const uint8_t *p, size_t len);
/*
 * The access check of a file with a kept descriptor ([MS-DTYP] 2.5.3.2
 * as id, generic bits mapped, MAXIMUM_ALLOWED computed): 1 and *granted
 * when it grants desired; -EACCES (-EPERM: ACCESS_SYSTEM_SECURITY without
 * the privilege) and *granted = the bits refused; 0 when the file has no
 * kept descriptor or id is root: the POSIX ACL decides alone.
 */
int srv_sd_access(int fd, const struct srv_ident *id, uint32_t desired, uint32_t *granted);
/*
 * What the kept DACL of path's directory says of right (FILE_ADD_FILE,
 * FILE_ADD_SUBDIRECTORY, FILE_DELETE_CHILD) for id, as srv_sd_access;
 * and that directory, opened O_PATH (the share's root for a top-level name).
 */
int srv_sd_parent_access(struct srv_share *sh, const char *path, uint32_t right,
			 const struct srv_ident *id);
int srv_share_open_parent(struct srv_share *sh, const char *path, int *fd);
/* SeSecurityPrivilege (the SACL): held by root only. */
bool srv_sd_privileged(const struct srv_ident *id);
/* The SecD create context: well formed (0), then applied to a new file. */
int srv_sd_check(const uint8_t *p, size_t len);
int srv_sd_create(int fd, const uint8_t *p, size_t len, const struct srv_ident *id);
/* A new file inherits from its parent's kept DACL (parent: its directory). */
int srv_sd_inherit(int parent, int fd, const struct srv_ident *id);
uint32_t srv_sd_maximal(int fd, const struct stat *st, const struct srv_ident *id);
/*
 * FSCTL_SET_SPARSE: keep FILE_ATTRIBUTE_SPARSE_FILE in user.DOSATTRIB or
 * clear it, as Samba (a SET_INFO of the attributes drops it). -EOPNOTSUPP
 * where the attributes are mode bits.
 */
int srv_attr_set_sparse(struct srv_share *sh, int fd, const struct srv_attr *a, bool sparse);
/* The wire view; initial_alloc: an open's AllocationSize (0: none). */
struct fscc_info;
void srv_attr_to_info(const struct srv_attr *a, uint64_t initial_alloc, struct fscc_info *fi);
/* The DOS options of a share: its own, the [global] ones, Samba's defaults. */
void srv_dos_opts_resolve(struct srv_dos_opts *share, const struct srv_dos_opts *global);

#endif
