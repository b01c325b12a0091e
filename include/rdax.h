/* SPDX-License-Identifier: MIT */
/*
 * librdax: an SMB3 client over TCP (and SMB-Direct) with registered
 * buffers. Every call returns 0 or a non-negative count on success and
 * a negative errno on failure; the NTSTATUS the server sent and a
 * message are kept per connection (rdax_last_status, rdax_errmsg).
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
/* Per-request timeout in milliseconds (default 60000). */
RDAX_API int rdax_cfg_set_timeout(struct rdax_cfg *cfg, int ms);

/* ---- connection and session ---- */

struct rdax_conn;

/* Connect, NEGOTIATE and SESSION_SETUP. port 0 = 445. */
RDAX_API int rdax_connect(struct rdax_conn **out, const char *host,
			  unsigned int port, const struct rdax_cfg *cfg);
/* LOGOFF and close; *c becomes NULL. NULL is a no-op. */
RDAX_API void rdax_disconnect(struct rdax_conn **c);

/*
 * Message about the last failure on this connection ("" if none). With
 * c == NULL: the calling thread's last failed rdax_connect.
 */
RDAX_API const char *rdax_errmsg(const struct rdax_conn *c);
/* NTSTATUS of the last response that failed (0 if none). */
RDAX_API uint32_t rdax_last_status(const struct rdax_conn *c);
/* "STATUS_OBJECT_NAME_NOT_FOUND (object name not found)" */
RDAX_API const char *rdax_status_str(uint32_t status);

struct rdax_conn_info {
	uint16_t dialect;
	bool signing;
	bool encryption;
	bool guest;
	uint32_t max_read;
	uint32_t max_write;
	char transport[16];
};

RDAX_API int rdax_conn_info(const struct rdax_conn *c, struct rdax_conn_info *info);

struct rdax_stats {
	uint64_t round_trips;		/* request sends that waited for replies */
	uint64_t requests;		/* SMB2 PDUs sent */
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t bytes_read;		/* file data read */
	uint64_t bytes_written;		/* file data written */
	uint32_t credits;		/* SMB2 credits currently held */
};

RDAX_API int rdax_conn_stats(const struct rdax_conn *c, struct rdax_stats *st);
RDAX_API void rdax_conn_stats_reset(struct rdax_conn *c);

/* ---- shares ---- */

struct rdax_tree;

RDAX_API int rdax_tree_connect(struct rdax_conn *c, const char *share,
			       struct rdax_tree **out);
RDAX_API int rdax_tree_disconnect(struct rdax_tree **t);

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
};

/*
 * flags: O_RDONLY, O_WRONLY or O_RDWR, plus O_CREAT, O_EXCL, O_TRUNC,
 * O_DIRECTORY and O_SYNC (write-through), as in open(2).
 */
RDAX_API int rdax_open(struct rdax_tree *t, const char *path, int flags,
		       struct rdax_file **out);
RDAX_API int rdax_close(struct rdax_file **f);
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

struct rdax_dir;

struct rdax_dirent {
	char name[1024];
	struct rdax_stat st;
};

RDAX_API int rdax_opendir(struct rdax_tree *t, const char *path, struct rdax_dir **out);
/* 1 = *ent filled, 0 = end, negative errno on error. */
RDAX_API int rdax_readdir(struct rdax_dir *d, struct rdax_dirent *ent);
RDAX_API int rdax_closedir(struct rdax_dir **d);

/* ---- helpers ---- */

/* smb://[user@]host[:port]/share[/path] */
struct rdax_url {
	char user[256];
	char host[256];
	unsigned int port;		/* 0 if not given */
	char share[81];
	char path[4096];		/* without leading '/' */
};

RDAX_API int rdax_url_parse(const char *url, struct rdax_url *out);

/* Add or replace USER in an rdaxd password database (mode 0600). */
RDAX_API int rdax_passdb_set(const char *file, const char *user, const char *password);

#ifdef __cplusplus
}
#endif

#endif
