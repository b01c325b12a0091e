/* SPDX-License-Identifier: MIT */
/*
 * librdax: an SMB3 client over TCP (and SMB-Direct) with registered
 * buffers. Every call returns 0 or a non-negative count on success and
 * a negative errno on failure; the NTSTATUS the server sent and a
 * message are kept per connection (rdax_conn_last_status,
 * rdax_conn_errmsg) and describe the last call only; calls without a
 * connection leave theirs per thread (rdax_errormsg). Sockets are written
 * with MSG_NOSIGNAL: a server that goes away is an error (-EPIPE), never
 * SIGPIPE. The library prints nothing: notices go to the log callback
 * (rdax_cfg_set_log) or nowhere.
 *
 * ABI (librdax.so.1, symbol version RDAX_1.0): structs the caller
 * allocates end in reserved fields. Input structs must have flags and
 * reserved fields zero (-EINVAL otherwise); the library zeroes them in
 * the structs it fills. Destructors take the handle's address, set it
 * to NULL, accept NULL, and return nothing.
 *
 * Threading: a connection and everything opened through it belong to
 * one thread at a time; different connections may be used in parallel.
 */
#ifndef RDAX_H
#define RDAX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RDAX_API __attribute__((visibility("default")))
#else
#define RDAX_API
#endif

RDAX_API const char *rdax_version(void);

/* ---- configuration ---- */

enum rdax_transport {
	RDAX_TRANSPORT_TCP = 0,
	RDAX_TRANSPORT_RDMA = 1,
};

/* SMB dialects, as on the wire. */
#define RDAX_SMB_2_1 0x0210
#define RDAX_SMB_3_0 0x0300
#define RDAX_SMB_3_0_2 0x0302
#define RDAX_SMB_3_1_1 0x0311

struct rdax_cfg;

/*
 * The calling thread's message about the last failure of a call that
 * has no connection to keep it on (rdax_connect, rdax_cfg_*,
 * rdax_url_parse, ...): "" after one that worked. Valid until the
 * thread's next such call.
 */
RDAX_API const char *rdax_errormsg(void);

RDAX_API int rdax_cfg_new(struct rdax_cfg **out);
RDAX_API void rdax_cfg_delete(struct rdax_cfg **cfg);
RDAX_API int rdax_cfg_set_transport(struct rdax_cfg *cfg, enum rdax_transport t);
/* user may be "DOMAIN\user" or "user@domain"; the password is copied. */
RDAX_API int rdax_cfg_set_credentials(struct rdax_cfg *cfg, const char *user,
				      const char *password);
/* First line of a file; refused if group/other may read it. */
RDAX_API int rdax_cfg_set_password_file(struct rdax_cfg *cfg, const char *path);
/* Anonymous (guest) logon instead of a user. */
RDAX_API int rdax_cfg_set_guest(struct rdax_cfg *cfg, bool guest);
/* Require message signing / encryption from the session on. */
RDAX_API int rdax_cfg_set_signing(struct rdax_cfg *cfg, bool required);
RDAX_API int rdax_cfg_set_encryption(struct rdax_cfg *cfg, bool required);
RDAX_API int rdax_cfg_set_dialects(struct rdax_cfg *cfg, uint16_t min, uint16_t max);
/*
 * Per-request timeout in milliseconds (default 60000); it also bounds
 * connecting and rdax_ioq_delete(). -1: no timeout (TCP and SMB-Direct).
 * 0 and other negative values: -EINVAL.
 */
RDAX_API int rdax_cfg_set_timeout(struct rdax_cfg *cfg, int ms);
/* SMB-Direct: I/O of at least this many bytes moves by RDMA (default 4096). */
RDAX_API int rdax_cfg_set_rdma_threshold(struct rdax_cfg *cfg, uint32_t bytes);
/*
 * SMB-Direct, SMB 3.1.1: offer the RDMA transform (default off). When
 * the server takes it, a signed or encrypted session moves large I/O by
 * RDMA with its payload signed or encrypted; else, as without it, such
 * I/O goes inline (logged once per session).
 */
RDAX_API int rdax_cfg_set_rdma_transform(struct rdax_cfg *cfg, bool on);
/*
 * SMB-Direct: bytes of unregistered application memory kept registered
 * (pinned) per RDMA device after their I/O, for the next (default 1 GiB).
 * 0: no cache; each RDMA I/O of unregistered memory registers it and
 * deregisters it when done.
 */
RDAX_API int rdax_cfg_set_mr_cache(struct rdax_cfg *cfg, size_t bytes);
/*
 * SMB3 multichannel: up to n channels (1..16; 1, the default, is one
 * connection). With n > 1 and a 3.x server that offers multichannel,
 * rdax_connect binds more connections to the session, to the addresses
 * the server lists (FSCTL_QUERY_NETWORK_INTERFACE_INFO), on the port of
 * the first. Fewer than n is not an error; what was skipped goes to the
 * log callback. I/O spreads over the channels; requests of a channel
 * that fails go again on another.
 */
RDAX_API int rdax_cfg_set_channels(struct rdax_cfg *cfg, unsigned int n);
/*
 * SMB-Direct channels on the server's RDMA-capable interfaces are tried
 * before TCP ones (as Windows does) by default when the first
 * connection is SMB-Direct or this machine has an RDMA device with a
 * port up, so a TCP session grows SMB-Direct channels. on: always try
 * them first; off: every added channel is TCP. While an SMB-Direct
 * channel lives, reads and writes that go by RDMA use only those.
 */
RDAX_API int rdax_cfg_set_rdma_channels(struct rdax_cfg *cfg, bool on);
/*
 * Leases (on by default, where the server offers leasing): opens and the
 * first stat of a path ask for a lease (RH: read and handle caching),
 * and a stat keeps its handle open while the lease covers it, so a
 * repeated stat, or an fstat, is answered from the client's cache with
 * no round trip until the server breaks the lease, this client changes
 * the file, or a second has passed (another client's unlink or rename
 * breaks no lease). Breaks are handled while the application is inside
 * a call on the connection. off: no lease is asked for, nothing cached.
 */
RDAX_API int rdax_cfg_set_leases(struct rdax_cfg *cfg, bool on);
/*
 * Durable handles (on by default, SMB 3 over TCP, with leases): rdax_open
 * asks for a durable handle (v2), and when the connection drops the
 * client connects again by itself within the request timeout (a new
 * session with PreviousSessionId, its trees, its durable handles with
 * their leases) and sends again what was in flight, with the replay
 * flag: the application sees no error. off: a dropped connection fails
 * every call (-ENOTCONN).
 */
RDAX_API int rdax_cfg_set_durable(struct rdax_cfg *cfg, bool on);
/*
 * How a wait for SMB-Direct completions behaves. EVENT: sleep on the
 * completion channel at once. ADAPTIVE (the default): poll the
 * completion queues and the connection's descriptors for spin_us
 * microseconds (0: RDAX_POLL_SPIN_DEFAULT) before sleeping, which saves
 * the wake-up of a reply that comes soon; idle, the CPU cost is one
 * spin per wait. BUSY: poll for the whole wait, one CPU at 100%.
 * spin_us above 100000: -EINVAL. TCP waits always sleep.
 */
enum rdax_poll {
	RDAX_POLL_EVENT = 0,
	RDAX_POLL_ADAPTIVE = 1,
	RDAX_POLL_BUSY = 2,
};
#define RDAX_POLL_SPIN_DEFAULT 50
RDAX_API int rdax_cfg_set_poll(struct rdax_cfg *cfg, enum rdax_poll mode,
			       unsigned int spin_us);
/*
 * Notices that are no call's failure (a channel skipped or lost, a
 * transport's warning), one line each without a newline, from the thread
 * using the connection. Without a callback the library prints nothing.
 */
RDAX_API int rdax_cfg_set_log(struct rdax_cfg *cfg,
			      void (*fn)(void *arg, const char *msg), void *arg);

/* ---- connection and session ---- */

struct rdax_conn;

/*
 * Connect, NEGOTIATE and SESSION_SETUP. port 0 = 445. A host name that
 * does not resolve: -ENXIO ("cannot resolve host H: <resolver's text>").
 */
RDAX_API int rdax_connect(struct rdax_conn **out, const char *host,
			  unsigned int port, const struct rdax_cfg *cfg);
/* LOGOFF and close; *c becomes NULL. NULL is a no-op. */
RDAX_API void rdax_disconnect(struct rdax_conn **c);

/*
 * Message about the failure of the last call on this connection ("" if
 * it succeeded); every call clears it first. With c == NULL: the same as
 * rdax_errormsg().
 */
RDAX_API const char *rdax_conn_errmsg(const struct rdax_conn *c);
/*
 * NTSTATUS of the failed response behind the last call's failure (or 0),
 * also of a destructor's (rdax_close: the server's CLOSE answer). With
 * c == NULL: the calling thread's last rdax_connect.
 */
RDAX_API uint32_t rdax_conn_last_status(const struct rdax_conn *c);
/* "STATUS_OBJECT_NAME_NOT_FOUND (object name not found)" */
RDAX_API const char *rdax_status_str(uint32_t status);

struct rdax_conn_info {
	uint16_t dialect;
	bool signing;
	bool encryption;
	bool guest;
	uint8_t channels;		/* channels alive */
	uint8_t channels_total;		/* channels set up, alive or failed */
	uint32_t max_read;
	uint32_t max_write;
	char transport[16];
	uint64_t reserved[8];		/* zero */
};

RDAX_API int rdax_conn_info(const struct rdax_conn *c, struct rdax_conn_info *info);

struct rdax_channel_info {
	uint32_t index;
	bool alive;			/* bound and its transport up */
	char transport[16];		/* "tcp" or "smbdirect" */
	char peer[64];			/* "address:port" */
	uint64_t bytes_sent;		/* transport bytes */
	uint64_t bytes_received;
	uint64_t requests;		/* SMB2 PDUs sent on it */
	uint64_t replays;		/* of them, resent from a failed channel */
	uint32_t credits;		/* SMB2 credits held */
	char error[96];			/* why it failed ("" while alive) */
	uint64_t rdma_bytes;		/* file data moved by RDMA on it */
	uint64_t reserved[8];		/* zero */
};

/* Channel index (0 .. channels_total - 1; 0 is the first). -ENOENT past the end. */
RDAX_API int rdax_conn_channel_info(const struct rdax_conn *c, unsigned int index,
				    struct rdax_channel_info *info);

struct rdax_stats {
	uint64_t round_trips;		/* request sends that waited for replies */
	uint64_t requests;		/* SMB2 PDUs sent */
	uint64_t bytes_sent;		/* transport bytes */
	uint64_t bytes_received;
	uint64_t bytes_read;		/* file data read */
	uint64_t bytes_written;		/* file data written */
	uint64_t rdma_bytes;		/* file data the server moved by RDMA */
	uint64_t inline_bytes;		/* file data carried in messages */
	uint64_t mr_cache_hits;		/* unregistered buffers found registered */
	uint64_t mr_cache_misses;
	uint32_t credits;		/* SMB2 credits currently held */
	uint32_t smbd_send_credits;	/* SMB-Direct credits held (0 on TCP) */
	uint64_t breaks;		/* lease and oplock breaks received */
	uint64_t cache_hits;		/* stats answered from the lease cache */
	uint32_t leases;		/* files and directories leased now */
	uint32_t cached_handles;	/* handles a stat keeps open under a lease */
	uint64_t reconnects;		/* sessions set up again after a drop */
	uint64_t durable_reopens;	/* handles the server gave back then */
	uint64_t handles_lost;		/* handles it did not give back */
	uint64_t cloned_bytes;		/* copied by FSCTL_DUPLICATE_EXTENTS_TO_FILE */
	uint64_t reserved[8];		/* zero */
};

RDAX_API int rdax_conn_stats(const struct rdax_conn *c, struct rdax_stats *st);
RDAX_API void rdax_conn_stats_reset(struct rdax_conn *c);

/*
 * Lease breaks arrive while the application is not calling librdax. One
 * that keeps files open while idle polls this descriptor (readable:
 * something arrived) and calls rdax_conn_service(), which acknowledges
 * breaks and closes handles their lease no longer covers, and never
 * blocks. Otherwise another client's open, rename or delete of such a
 * file waits for the server's break timeout (35 s on rdaxd and Windows).
 */
RDAX_API int rdax_conn_fd(const struct rdax_conn *c);
RDAX_API int rdax_conn_service(struct rdax_conn *c);

/* ---- shares ---- */

struct rdax_tree;

RDAX_API int rdax_tree_connect(struct rdax_conn *c, const char *share,
			       struct rdax_tree **out);
/* TREE_DISCONNECT; *t becomes NULL. Its failure: rdax_conn_errmsg(c). */
RDAX_API void rdax_tree_disconnect(struct rdax_tree **t);

/* ---- files ---- */

struct rdax_file;

struct rdax_stat {
	uint64_t size;
	uint64_t alloc_size;
	uint64_t ino;
	uint32_t attributes;		/* FILE_ATTRIBUTE_* */
	uint32_t nlink;
	bool is_dir;
	struct timespec atime;
	struct timespec mtime;
	struct timespec ctime;
	struct timespec btime;
	/* with the SMB3 POSIX extensions (posix true): st_mode-style type and
	 * permission bits, the Unix owner and group */
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	bool posix;
	uint64_t reserved[4];		/* zero */
};

/*
 * flags: O_RDONLY, O_WRONLY or O_RDWR, plus O_CREAT, O_EXCL, O_TRUNC,
 * O_DIRECTORY and O_SYNC (write-through), as in open(2).
 */
RDAX_API int rdax_open(struct rdax_tree *t, const char *path, int flags,
		       struct rdax_file **out);
/*
 * CLOSE; *f becomes NULL and the handle is gone whatever the server
 * answers. A failed CLOSE is in rdax_conn_errmsg and
 * rdax_conn_last_status of the file's connection; data that must be on
 * stable storage: rdax_fsync before.
 */
RDAX_API void rdax_close(struct rdax_file **f);
RDAX_API ssize_t rdax_pread(struct rdax_file *f, void *buf, size_t len,
			    uint64_t off);
RDAX_API ssize_t rdax_pwrite(struct rdax_file *f, const void *buf, size_t len,
			     uint64_t off);
RDAX_API int rdax_fsync(struct rdax_file *f);
RDAX_API int rdax_fstat(struct rdax_file *f, struct rdax_stat *st);
RDAX_API int rdax_ftruncate(struct rdax_file *f, uint64_t size);

/* Path operations; each is one compound round trip. */
RDAX_API int rdax_stat(struct rdax_tree *t, const char *path, struct rdax_stat *st);
RDAX_API int rdax_unlink(struct rdax_tree *t, const char *path);
RDAX_API int rdax_mkdir(struct rdax_tree *t, const char *path);
RDAX_API int rdax_rmdir(struct rdax_tree *t, const char *path);
#define RDAX_RENAME_NOREPLACE 0x1
RDAX_API int rdax_rename(struct rdax_tree *t, const char *from, const char *to,
			 unsigned int flags);
RDAX_API int rdax_truncate(struct rdax_tree *t, const char *path, uint64_t size);
/* Create if missing, else update the modification time. */
RDAX_API int rdax_touch(struct rdax_tree *t, const char *path);

/*
 * SMB3 POSIX extensions (rdax_posix(3)): a symlink at path pointing to
 * target (relative, beneath the share); its target read back into buf
 * (NUL-terminated; the length); the permission bits of path set to mode.
 * -EOPNOTSUPP where the server has no POSIX extensions for the share.
 */
RDAX_API int rdax_symlink(struct rdax_tree *t, const char *target, const char *path);
RDAX_API ssize_t rdax_readlink(struct rdax_tree *t, const char *path, char *buf, size_t len);
RDAX_API int rdax_chmod(struct rdax_tree *t, const char *path, uint32_t mode);
/* Whether the connection negotiated the SMB3 POSIX extensions. */
RDAX_API bool rdax_conn_posix(const struct rdax_conn *c);

struct rdax_dir;

struct rdax_dirent {
	char name[1024];
	struct rdax_stat st;
	uint64_t reserved[4];		/* zero */
};

RDAX_API int rdax_opendir(struct rdax_tree *t, const char *path, struct rdax_dir **out);
/* 1 = *ent filled, 0 = end, negative errno on error. */
RDAX_API int rdax_readdir(struct rdax_dir *d, struct rdax_dirent *ent);
/* As rdax_close: *d becomes NULL; a failed CLOSE is in rdax_conn_errmsg. */
RDAX_API void rdax_closedir(struct rdax_dir **d);

/* ---- asynchronous I/O ---- */

/*
 * A submission/completion queue on a connection, liburing-style: submit
 * many reads and writes, then reap completions with a minimum count and
 * a timeout. Requests are pipelined up to the SMB2 credit window; each
 * may be as large as rdax_ioq_max_io(). The sync calls above run on the
 * same engine. Buffers stay owned by the caller and must not be touched
 * until their completion is reaped.
 */
struct rdax_ioq;

enum rdax_opcode {
	RDAX_OP_READ = 1,
	RDAX_OP_WRITE = 2,
	RDAX_OP_FSYNC = 3,
};

struct rdax_buf;

struct rdax_io {
	uint32_t opcode;		/* enum rdax_opcode */
	uint32_t flags;			/* 0 (-EINVAL otherwise) */
	struct rdax_file *file;
	void *buf;
	size_t len;
	uint64_t offset;
	uint64_t user_data;
	/*
	 * The registered buffer [buf, buf+len) lies in (rdax_buf_reg), or
	 * NULL: registered buffers are then looked up by address.
	 */
	struct rdax_buf *reg;
	uint64_t reserved[4];		/* 0 (-EINVAL otherwise) */
};

struct rdax_cqe {
	uint64_t user_data;
	int64_t res;			/* bytes done, or a negative errno */
	uint32_t status;		/* the server's NTSTATUS on failure */
	uint32_t flags;			/* 0 */
	uint64_t reserved[2];		/* zero */
};

RDAX_API int rdax_ioq_new(struct rdax_conn *c, unsigned int depth,
			  struct rdax_ioq **out);
/*
 * Waits for requests still in flight, then frees the queue. If none
 * completes for the request timeout, those left fail with -ETIMEDOUT and
 * the connection is broken.
 */
RDAX_API void rdax_ioq_delete(struct rdax_ioq **q);
/*
 * Queue up to n requests; returns how many were taken (the free slots).
 * A request taken is reported exactly once, by its completion (also when
 * it could not be sent); one not taken gets no completion. A request
 * with nonzero flags or reserved fields, or a reg that does not hold its
 * buffer: -EINVAL and none of the n is taken.
 */
RDAX_API int rdax_ioq_submit(struct rdax_ioq *q, const struct rdax_io *ios,
			     unsigned int n);
/*
 * Wait until at least min completions are ready (or timeout_ms passes
 * from the call's start, -1 = forever), then return up to max of them.
 * min > max: -EINVAL.
 */
RDAX_API int rdax_ioq_reap(struct rdax_ioq *q, struct rdax_cqe *cqes,
			   unsigned int min, unsigned int max, int timeout_ms);
RDAX_API unsigned int rdax_ioq_inflight(const struct rdax_ioq *q);
/* Largest read/write: server limits, RDMA or (signed, encrypted) inline size. */
RDAX_API size_t rdax_ioq_max_io(const struct rdax_ioq *q);
/* A descriptor for poll/epoll: readable when rdax_ioq_reap(.., 0, 0, 0) has work. */
RDAX_API int rdax_ioq_fd(const struct rdax_ioq *q);

/* ---- registered buffers (SMB-Direct) ---- */

/*
 * Pin and register [addr, addr+len) once; reads and writes that fall
 * inside it then move by RDMA with no registration on the data path.
 * Buffers used without registration are registered on first use and
 * kept in a cache (rdax_cfg_set_mr_cache): call rdax_mem_forget() before
 * freeing such memory. A request may name its buffer (rdax_io.reg): no
 * lookup. On TCP connections these calls succeed and do nothing.
 */
RDAX_API int rdax_buf_reg(struct rdax_conn *c, void *addr, size_t len,
			  struct rdax_buf **out);
/* Deregister and free; *b becomes NULL. No I/O on it may be in flight. */
RDAX_API void rdax_buf_dereg(struct rdax_buf **b);
RDAX_API void rdax_mem_forget(struct rdax_conn *c, void *addr, size_t len);

/* ---- helpers ---- */

/* smb://[user@]host[:port]/share[/path]; user ends at the last '@' */
struct rdax_url {
	char user[256];
	char host[256];
	unsigned int port;		/* 0 if not given */
	char share[81];
	char path[4096];		/* without leading '/' */
	uint64_t reserved[4];		/* zero */
};

/* Failures: -EINVAL or -ENAMETOOLONG, and why in rdax_errormsg(). */
RDAX_API int rdax_url_parse(const char *url, struct rdax_url *out);

/* ---- copying files ---- */

/*
 * Copies are server-side when the server supports it ([MS-SMB2]
 * FSCTL_SRV_COPYCHUNK: the data does not cross the network; rdaxd,
 * Samba, Windows), else read and written through the client.
 */
/* -EOPNOTSUPP instead of the client path, dst untouched */
#define RDAX_COPY_SERVER_ONLY 0x1
#define RDAX_COPY_CLIENT 0x2		/* always read+write through the client */
/* server-side by FSCTL_SRV_COPYCHUNK only, never sharing extents */
#define RDAX_COPY_NO_CLONE 0x4

/*
 * Copy file src to dst (created, or replaced if it exists) on one share.
 * progress, if set, is called after each step with the bytes done and
 * the total; a non-zero return stops the copy with -ECANCELED.
 * Returns the bytes copied or a negative errno (-EINVAL for src == dst).
 */
RDAX_API int64_t rdax_copy(struct rdax_tree *t, const char *src, const char *dst,
			   unsigned int flags,
			   int (*progress)(void *arg, uint64_t done, uint64_t total),
			   void *arg);
/*
 * copy_file_range(2) for open files: len bytes from src at src_off to
 * dst at dst_off. Server-side when both are on one connection (src
 * needs read access, dst write access). Returns the bytes copied, short
 * only at the end of src, or a negative errno when nothing was copied.
 */
RDAX_API int64_t rdax_copy_range(struct rdax_file *src, uint64_t src_off,
				 struct rdax_file *dst, uint64_t dst_off,
				 uint64_t len, unsigned int flags);

#ifdef __cplusplus
}
#endif

#endif
