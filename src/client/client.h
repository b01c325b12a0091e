/* SPDX-License-Identifier: MIT */
/* librdax internals: connection state and the request/response engine. */
#ifndef RDAX_CLIENT_H
#define RDAX_CLIENT_H

#include <stdarg.h>

#include "rdax.h"
#include "client/credits.h"
#include "crypto/crypto.h"
#include "mem/mem.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "transport/transport.h"
#include "util/list.h"

#define CLI_MAX_CHAIN 8
#define CLI_TF_ROOM 64			/* room before tx data for a transform */

struct rdax_cfg {
	enum rdax_transport transport;
	char user[256];
	char domain[256];
	char password[256];
	bool have_password;
	bool guest;
	bool sign_required;
	bool encrypt_required;
	uint16_t min_dialect;
	uint16_t max_dialect;
	int timeout_ms;
	uint32_t rdma_threshold;	/* smaller I/O goes inline */
	size_t mr_cache_bytes;
};

struct cli_rsp {
	struct smb2_hdr hdr;
	const uint8_t *pdu;
	size_t len;
	uint32_t status;
	bool done;
};

struct cli_txbuf;

/*
 * One request chain (compound): built in its own buffer, sent when the
 * credits allow, completed when every response arrived. A chain run with
 * cli_chain_run() keeps copies of its responses (rsp[] stays valid until
 * the next synchronous chain); an async chain handles each response in
 * on_pdu while it is dispatched and gets on_done at the end.
 */
struct cli_chain {
	int n;
	size_t off[CLI_MAX_CHAIN];
	uint16_t charge[CLI_MAX_CHAIN];
	uint64_t mid[CLI_MAX_CHAIN];
	struct cli_txbuf *tb;
	size_t len;
	/* optional data sent after the last PDU without a copy */
	const void *tail;
	size_t tail_len;
	struct cli_rsp rsp[CLI_MAX_CHAIN];
	size_t rsp_off[CLI_MAX_CHAIN];
	/* 3.1.1 preauth hash to extend with the request as sent */
	uint8_t *preauth;
	/* sign even if the session does not require it */
	bool sign;
	/* async completion; NULL for synchronous chains */
	void (*on_pdu)(struct cli_chain *ch, int i, const uint8_t *pdu, size_t len);
	void (*on_done)(struct cli_chain *ch);
	void *arg;
	int pending;
	int err;
	bool done;
	struct list_head link;		/* send queue, then in flight */
};

/* A buffer the application registered with rdax_buf_reg(). */
struct rdax_buf {
	struct rdax_buf *next;
	struct rdax_conn *c;
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr;
};

struct rdax_conn {
	struct rdax_cfg cfg;
	int epfd;			/* the connection's event loop */
	struct xprt *xp;		/* the transport: TCP or SMB-Direct */
	struct xprt *x;			/* SMB-Direct, or NULL for TCP */
	bool broken;			/* transport failed: every call fails */
	struct list_head sendq;		/* chains waiting for credits */
	struct list_head inflight;
	int ninflight;
	struct cli_txbuf *tb_free;
	int tb_free_count;
	uint8_t *sync_rsp;		/* responses of the synchronous chain */
	size_t sync_cap, sync_len;
	struct rdax_buf *bufs;
	struct mr_cache *mrc;
	struct ibv_mw **mw_free;	/* memory windows not bound to an I/O */
	int nmw_free, mw_cap;
	bool use_mw;
	char host[256];
	unsigned int port;
	uint16_t dialect;
	uint16_t cipher;
	uint16_t sign_alg;
	uint16_t server_secmode;
	uint32_t server_caps;
	uint32_t max_read;
	uint32_t max_write;
	uint32_t max_trans;
	uint8_t client_guid[16];
	uint8_t preauth[64];
	struct cli_credits cr;		/* SMB2 credit window */
	uint64_t session_id;
	struct smb3_keys keys;
	bool have_key;
	bool signing;
	bool encrypt;
	bool guest;
	char errmsg[512];
	uint32_t last_status;
	struct rdax_stats stats;
	uint32_t rdma_max;		/* largest RDMA I/O the server takes */
	uint32_t inline_max;		/* largest inline I/O over SMB-Direct */
	uint64_t rdma_bytes;		/* file data moved by RDMA */
	uint64_t inline_bytes;		/* file data in messages */
};

struct rdax_tree {
	struct rdax_conn *c;
	uint32_t id;
	char share[81];
};

struct rdax_file {
	struct rdax_tree *t;
	struct smb2_fid fid;
	bool is_dir;
	bool write_through;
	char path[1024];
};

/*
 * error reporting: sets errmsg, returns -err. Every public call starts
 * with cli_begin() (a call reports its own failure, never an older one)
 * and a failing one leaves a message (cli_done() adds one if none was set).
 */
void cli_begin(struct rdax_conn *c);
int cli_err(struct rdax_conn *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cli_done(struct rdax_conn *c, int ret, const char *op, const char *path);
/* map a response status to -errno and a message naming op and path */
int cli_status(struct rdax_conn *c, uint32_t status, const char *op,
	       const char *path);

/* chain building: returns a cursor positioned after the header */
int cli_chain_init(struct rdax_conn *c, struct cli_chain *ch);
int cli_chain_add(struct rdax_conn *c, struct cli_chain *ch, uint16_t cmd,
		  uint32_t tree_id, bool related, uint16_t charge,
		  size_t body_max, struct wcur *w);
/* finish the body of the last PDU added */
void cli_chain_end(struct rdax_conn *c, struct cli_chain *ch, struct wcur *w);
/* send and wait for every response; rsp pointers valid until next call */
int cli_chain_run(struct rdax_conn *c, struct cli_chain *ch);
/* queue an async chain (on_done set); it is sent as credits allow */
int cli_chain_submit(struct rdax_conn *c, struct cli_chain *ch);
/* run the event loop once: 0, -ETIMEDOUT, or the transport's error */
int cli_progress(struct rdax_conn *c, int timeout_ms);
uint64_t cli_now_ms(void);
/* set up and tear down the engine around a connected transport */
int cli_engine_start(struct rdax_conn *c, struct xprt *x);
void cli_engine_stop(struct rdax_conn *c);
int cli_check_credits(struct rdax_conn *c, uint32_t need);
/* drop a chain that was built but will not be submitted */
void cli_chain_abort(struct rdax_conn *c, struct cli_chain *ch);
/* fail every chain in flight or queued (the connection is unusable) */
void cli_engine_stop_inflight(struct rdax_conn *c, int err);

/* The RDMA side of one READ/WRITE. */
struct cli_rdma {
	uint32_t channel;		/* 0: the data goes inline */
	struct smbd_desc desc;
	struct ibv_mr *cached;		/* MR cache entry to put back */
	struct ibv_mw *mw;		/* window bound for this I/O */
};

/*
 * SMB-Direct I/O: registered memory and one descriptor for buf; sets
 * r->channel to the channel to use, or 0 when the I/O goes inline.
 */
int cli_rdma_prepare(struct rdax_conn *c, void *buf, size_t len, bool server_writes,
		     struct cli_rdma *r);
void cli_rdma_finish(struct rdax_conn *c, struct cli_rdma *r);
/* Largest READ/WRITE the credits, the server and the transport allow. */
uint32_t cli_io_chunk(struct rdax_conn *c, bool write, size_t want);

/* UTF-8 path "a/b" to UTF-16LE "a\b"; returns bytes or -errno */
int cli_path16(const char *path, uint8_t *out, size_t cap);

/*
 * Building blocks of compounds (fs.c). A PDU given cli_related_fid (by
 * address) is related to the one before it and acts on its FileId.
 */
struct cli_create_args {
	const char *path;
	uint32_t access;
	uint32_t disposition;
	uint32_t options;
	uint32_t attributes;
};

extern const struct smb2_fid cli_related_fid;

int cli_add_create(struct rdax_tree *t, struct cli_chain *ch,
		   const struct cli_create_args *a);
int cli_add_close(struct rdax_tree *t, struct cli_chain *ch,
		  const struct smb2_fid *fid, uint16_t flags);
int cli_add_set_info(struct rdax_tree *t, struct cli_chain *ch,
		     const struct smb2_fid *fid, uint8_t cls,
		     const void *data, uint32_t len);
int cli_add_query_info(struct rdax_tree *t, struct cli_chain *ch,
		       const struct smb2_fid *fid, uint8_t type, uint8_t cls,
		       uint32_t out_len);

/* rdax_pread/rdax_pwrite and rdax_ftruncate inside other calls */
ssize_t cli_rw(struct rdax_file *f, bool write, void *buf, size_t len, uint64_t off);
int cli_ftruncate(struct rdax_file *f, uint64_t size);

#endif
