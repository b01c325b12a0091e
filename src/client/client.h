/* SPDX-License-Identifier: MIT */
/* librdax internals: connection state and the request/response engine. */
#ifndef RDAX_CLIENT_H
#define RDAX_CLIENT_H

#include <stdarg.h>

#include <infiniband/verbs.h>

#include "rdax.h"
#include "client/credits.h"
#include "crypto/crypto.h"
#include "mem/mem.h"
#include "proto/posix.h"
#include "proto/rdma_xform.h"
#include "proto/smb2.h"
#include "proto/smbd.h"
#include "transport/transport.h"
#include "util/list.h"
#include "util/log.h"

#define CLI_MAX_CHAIN 8
#define CLI_MAX_CHANNELS 16
#define CLI_MAX_RDEV 4			/* RDMA devices one session uses */
#define CLI_TF_ROOM 64			/* room before tx data for a transform */
#define CLI_LEASE_HASH 64		/* buckets of the path -> lease table */
#define CLI_CACHED_MAX 128		/* handles kept open after a stat */
/*
 * How long a handle a stat keeps, and attributes found by name, last:
 * another client's delete or rename of a file breaks no lease of ours
 * (nothing conflicts with an attributes-only open), so a name is
 * trusted this long, as cifs.ko's closetimeo and actimeo default to.
 */
#define CLI_CACHE_MS 1000
#define CLI_PLACE_MIN (16u * 1024)	/* smaller READ data is copied */

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
	bool rdma_transform;		/* offer the SMB 3.1.1 RDMA transform */
	size_t mr_cache_bytes;
	unsigned int channels;		/* channels wanted, 1..CLI_MAX_CHANNELS */
	/* SMB-Direct channels first: 1 yes, 0 never (TCP only), -1 auto */
	int rdma_channels;
	void (*log)(void *arg, const char *msg);
	void *log_arg;
	bool leases;			/* ask for leases; cache attributes under them */
	bool durable;			/* durable handles; reconnect a dropped session */
	enum rdax_poll poll;		/* how a wait for completions spins */
	unsigned int poll_spin_us;	/* adaptive: the spin before sleeping */
};

struct cli_rsp {
	struct smb2_hdr hdr;
	const uint8_t *pdu;
	size_t len;
	uint32_t status;
	bool done;
};

struct cli_txbuf;
struct cli_chan;

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
	/*
	 * A lone READ over TCP: where its data may be received straight
	 * from the socket (place_len bytes at place); placed: it was.
	 */
	void *place;
	size_t place_len;
	bool placed;
	struct cli_rsp rsp[CLI_MAX_CHAIN];
	size_t rsp_off[CLI_MAX_CHAIN];
	/* 3.1.1 preauth hash to extend with the request as sent */
	uint8_t *preauth;
	/* sign even if the session does not require it */
	bool sign;
	/*
	 * Channel setup (NEGOTIATE, binding SESSION_SETUP): only on pin,
	 * never encrypted nor resent, signed with sign_key if set; the
	 * caller checks the responses' signatures.
	 */
	bool setup;
	const uint8_t *sign_key;
	struct cli_chan *pin;		/* only this channel may carry it */
	struct cli_chan *chan;		/* the channel it is in flight on */
	bool replay;			/* resent after its channel failed */
	bool recon;			/* a step of a reconnect: goes while the rest wait */
	bool keep;			/* tb kept for a resend */
	/* file data that goes by RDMA where an SMB-Direct channel lives */
	bool bulk;
	/*
	 * Built for the channel it goes on, once that is chosen (and again
	 * for the next one when it is resent): encode adds the PDUs to an
	 * empty chain (n, charge[] tell the credits it needs before);
	 * release gives back what the last encode took for its channel.
	 */
	int (*encode)(struct cli_chain *ch, struct cli_chan *chan);
	void (*release)(struct cli_chain *ch);
	uint8_t resends;
	uint16_t seq;			/* ChannelSequence it was sent with */
	uint64_t not_before;		/* delayq: when it may go again (ms) */
	/* async completion; NULL for synchronous chains */
	void (*on_pdu)(struct cli_chain *ch, int i, const uint8_t *pdu, size_t len);
	void (*on_done)(struct cli_chain *ch);
	void *arg;
	int pending;
	int err;
	bool done;
	struct list_head link;		/* send queue, then in flight */
};

/*
 * A buffer the application registered with rdax_buf_reg(): one MR in
 * each RDMA device's protection domain, registered when the buffer is
 * first used with that device (or at rdax_buf_reg for those in use).
 */
struct rdax_buf {
	struct rdax_buf *next;
	struct rdax_conn *c;
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr[CLI_MAX_RDEV];
};

/*
 * An RDMA device the session's SMB-Direct channels use: one protection
 * domain shared by its channels, and the registrations in it (the MR
 * cache; rdax_buf MRs are at the same index in each buffer).
 */
struct cli_rdev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct mr_cache *mrc;
};

/*
 * One channel of the session ([MS-SMB2] 3.2.1.8): a transport
 * connection with its own credit window and signing key. Channel 0 is
 * the connection the session was set up on; the others are bound to it.
 */
struct cli_chan {
	struct rdax_conn *c;
	unsigned int index;
	struct xprt *xp;		/* TCP or SMB-Direct */
	struct xprt *x;			/* SMB-Direct, or NULL for TCP */
	bool rdma;			/* an SMB-Direct channel, even once closed */
	struct cli_rdev *rdev;		/* its device's PD (SMB-Direct) */
	/* memory windows of its QP not bound to an I/O */
	struct ibv_mw **mw_free;
	int nmw_free, mw_cap;
	bool use_mw;
	bool bound;			/* carries the session's requests */
	bool dead;			/* its transport failed */
	bool reap;			/* dead; transport to close, chains to resend */
	struct list_head inflight;
	int ninflight;
	struct cli_credits cr;
	uint8_t signing_key[16];	/* Channel.SigningKey */
	uint8_t preauth[64];		/* 3.1.1: this connection's preauth hash */
	char peer[64];
	char error[96];			/* why it failed */
	uint64_t bytes_sent, bytes_received, requests, replays;
	uint64_t rdma_bytes;		/* file data moved by RDMA on it */
};

struct rdax_conn {
	struct rdax_cfg cfg;
	int epfd;			/* the connection's event loop */
	struct cli_chan chans[CLI_MAX_CHANNELS];
	unsigned int nchan;		/* channels set up (live or dead) */
	unsigned int rr;		/* where the channel choice starts */
	bool dispatching;		/* inside a transport's event handler */
	bool sending;			/* inside send_queued */
	uint64_t next_tick;		/* SMB-Direct keep-alives due (ms) */
	uint16_t channel_seq;		/* Session.ChannelSequence */
	/* RDMA devices of its SMB-Direct channels */
	struct cli_rdev rdevs[CLI_MAX_RDEV];
	unsigned int nrdev;
	bool rdma;			/* it has (had) an SMB-Direct channel */
	bool broken;			/* no channel left: every call fails */
	int broken_err;			/* the failure that broke it */
	struct list_head sendq;		/* chains waiting for credits */
	struct list_head delayq;	/* chains to resend after a pause */
	int ninflight;			/* chains in flight, all channels */
	struct cli_txbuf *tb_free;
	int tb_free_count;
	uint8_t *sync_rsp;		/* responses of the synchronous chain */
	size_t sync_cap, sync_len;
	unsigned int sync_depth;	/* cli_chain_run inside cli_chain_run (a reconnect) */
	struct rdax_buf *bufs;
	char host[256];
	unsigned int port;
	bool posix;			/* SMB3 POSIX extensions negotiated */
	uint16_t dialect;
	uint16_t cipher;
	uint16_t sign_alg;
	uint16_t server_secmode;
	uint32_t server_caps;
	uint8_t server_guid[16];
	uint32_t max_read;
	uint32_t max_write;
	uint32_t max_trans;
	uint8_t client_guid[16];
	uint32_t client_caps;		/* what NEGOTIATE offered */
	uint64_t session_id;
	struct smb3_keys keys;
	/* OpenSSL contexts of its signatures and encryption (one thread at a time) */
	struct crypto_kept kept;
	bool have_key;
	bool signing;
	bool encrypt;
	/*
	 * RDMA transforms the server took (SMB2_RDMA_TRANSFORM_CAPABILITIES):
	 * signed/encrypted I/O moves by RDMA, its payload transformed (xform.c)
	 */
	bool xform_enc;
	bool xform_sign;
	bool xform_logged;		/* the inline fallback was logged */
	struct smb2_nonce_gen xform_nonce;	/* the payloads this client transforms */
	struct smb2_xform_replay xform_seen;	/* the server's nonces */
	/* encrypted WRITEs: registered buffers of the library's, kept to disconnect */
	struct rdax_buf **xbufs;	/* all of them */
	struct rdax_buf **xfree;	/* the free ones */
	unsigned int nxbufs, nxfree;
	bool guest;
	char errmsg[512];
	uint32_t last_status;
	struct rdax_stats stats;
	/* of all its SMB-Direct channels: I/O sized to fit any channel */
	uint32_t rdma_max;		/* largest RDMA I/O the server takes */
	uint32_t inline_max;		/* largest inline I/O over SMB-Direct */
	uint64_t rdma_bytes;		/* file data moved by RDMA */
	uint64_t inline_bytes;		/* file data in messages */
	/* leases and cached handles (lease.c) */
	struct list_head leases;	/* struct cli_lease */
	struct list_head lease_lru;	/* cached handles and no-lease marks, oldest first */
	struct list_head lease_hash[CLI_LEASE_HASH];
	unsigned int ncached;		/* on lease_lru */
	struct list_head trees;		/* rdax_tree the application holds */
	/* reconnect (recon.c) */
	bool established;		/* rdax_connect succeeded */
	bool closing;			/* rdax_disconnect: no reconnect */
	bool need_recon;		/* every channel failed: set the session up again */
	bool reconnecting;
};

struct rdax_tree {
	struct rdax_conn *c;
	uint32_t id;
	char share[81];
	uint32_t share_flags;
	uint32_t caps;			/* SMB2_SHARE_CAP_* */
	bool no_lease;			/* granted no lease on a file: stats go uncached */
	int8_t refcounting;		/* FILE_SUPPORTS_BLOCK_REFCOUNTING: 1, -1 not, 0 unknown */
	uint32_t old_id;		/* its id before a reconnect */
	struct list_head link;		/* c->trees */
	struct list_head files;		/* rdax_files rdax_open made */
};

struct cli_lease;

struct rdax_file {
	struct rdax_tree *t;
	struct smb2_fid fid;
	bool is_dir;
	bool write_through;
	char path[1024];
	/* what rdax_open set up (the temporary handles of other calls have none) */
	struct list_head tlink;		/* t->files; tlink.next NULL: not listed */
	struct cli_lease *lease;	/* its lease, or NULL */
	bool durable;			/* the server keeps it across a reconnect */
	bool persistent;		/* ... and across its own restart (CA share) */
	uint8_t create_guid[16];
	uint32_t access, options;	/* as opened: a reconnect opens it so again */
	struct smb2_fid old_fid;	/* its id before a reconnect */
	bool lost;			/* a reconnect did not get it back */
};

/*
 * A file or directory of a tree the client holds (or asks) a lease on,
 * by path: one lease key for all its opens ([MS-SMB2] 3.2.1.5
 * File.LeaseKey). Its opens are the application's rdax_files and at
 * most one cached handle: an attributes-only open a stat left open
 * while the lease has R and H (a deferred close, as Windows and cifs.ko
 * keep handles). While it holds R its attributes are answered from st.
 */
struct cli_lease {
	struct list_head link;		/* c->leases */
	struct list_head hlink;		/* c->lease_hash[], while it names its path */
	struct list_head lru;		/* c->lease_lru: cached handle or no-lease mark */
	struct rdax_tree *t;
	uint8_t key[16];
	uint32_t state;			/* SMB2_LEASE_* held */
	uint16_t epoch;
	bool granted;			/* the server knows the key (state may be 0) */
	bool nolease;			/* a stat found none granted here: no caching */
	bool is_dir;
	unsigned int nfiles;		/* the application's handles under it */
	bool cached;			/* cfid is open */
	struct smb2_fid cfid;
	bool have_stat;			/* st as the server said, R held since */
	struct rdax_stat st;
	uint64_t st_ms;			/* when the server said it (cli_now_ms) */
	uint64_t cached_ms;		/* when cfid (or the no-lease mark) was made */
	char *path;			/* "a/b" ("" the share's root) */
};

/*
 * error reporting: sets errmsg, returns -err. Every public call starts
 * with cli_begin() (a call reports its own failure, never an older one)
 * and a failing one leaves a message (cli_done() adds one if none was set).
 */
void cli_begin(struct rdax_conn *c);
/* calls without a connection: rdax_errormsg() */
void cli_thread_begin(void);
int cli_thread_err(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
/* a new channel on transport x, not yet bound; NULL when all are taken */
struct cli_chan *cli_chan_add(struct rdax_conn *c, struct xprt *x, const char *peer);
/* close a channel that never got bound (binding failed) */
void cli_chan_drop(struct rdax_conn *c, struct cli_chan *chan);
unsigned int cli_chans_alive(const struct rdax_conn *c);
/* credits held on live channels: the most on one, and the sum */
uint32_t cli_credits_best(const struct rdax_conn *c);
uint32_t cli_credits_total(const struct rdax_conn *c);
int cli_check_credits(struct rdax_conn *c, uint32_t need);
/* a notice for the application's log callback (channels skipped, lost) */
void cli_log(struct rdax_conn *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* drop a chain that was built but will not be submitted */
void cli_chain_abort(struct rdax_conn *c, struct cli_chain *ch);
/* fail every chain in flight or queued (the connection is unusable) */
void cli_engine_stop_inflight(struct rdax_conn *c, int err);

/* The RDMA side of one READ/WRITE, on the channel it was built for. */
struct cli_rdma {
	uint32_t channel;		/* 0: the data goes inline */
	struct smbd_desc desc;
	struct cli_chan *chan;		/* whose QP the window is bound on */
	struct cli_rdev *rdev;		/* whose MR cache holds cached */
	struct ibv_mr *cached;		/* MR cache entry to put back */
	struct ibv_mw *mw;		/* window bound for this I/O */
};

/*
 * SMB-Direct I/O on chan: memory registered in its device's PD and one
 * descriptor for buf; sets r->channel to the SMB2 channel value, or 0
 * when the I/O goes inline (a TCP channel, signing, encryption, small).
 */
/* whether [buf, buf+len) lies in the registered buffer b */
bool cli_buf_holds(const struct rdax_buf *b, const void *buf, size_t len);
int cli_rdma_prepare(struct rdax_conn *c, struct cli_chan *chan, struct rdax_buf *reg,
		     void *buf, size_t len, bool server_writes, struct cli_rdma *r);
void cli_rdma_finish(struct rdax_conn *c, struct cli_rdma *r);
/* Does I/O of len bytes go by RDMA on an SMB-Direct channel? */
bool cli_io_bulk(const struct rdax_conn *c, size_t len);
/*
 * The RDMA transform a READ/WRITE needs on this session: 0 (none: plain
 * session), SMB2_RDMA_XFORM_TYPE_ENCRYPTION or _SIGNING; -1 when the
 * session signs or encrypts and the server took no transform for it
 * (the data goes inline).
 */
int cli_xform_type(const struct rdax_conn *c);
/* Offer the transform in a NEGOTIATE on an SMB-Direct connection. */
void cli_xform_offer(const struct rdax_conn *c, struct smb2_negotiate_req *r);
/* Log once per session that signed/encrypted I/O goes inline, and why. */
void cli_xform_fallback_log(struct rdax_conn *c);
/* A registered buffer of at least len bytes for an encrypted WRITE's payload. */
int cli_xbuf_get(struct rdax_conn *c, size_t len, struct rdax_buf **out);
void cli_xbuf_put(struct rdax_conn *c, struct rdax_buf *b);
/* After cli_rdma_teardown: their memory goes. */
void cli_xbuf_free(struct rdax_conn *c);
/* Largest READ/WRITE the credits, the server and the transport allow. */
uint32_t cli_io_chunk(struct rdax_conn *c, bool write, size_t want);

/*
 * Multichannel (mc.c): after the session is set up, bind up to
 * cfg.channels - 1 more channels. Never fails the connection: what
 * cannot be had is logged and the session goes on with fewer.
 */
void cli_mc_grow(struct rdax_conn *c);

/* A channel to try: interface list entry and transport. */
struct cli_mc_pick {
	unsigned int iface;		/* index in the interface list */
	bool rdma;
};

struct fsctl_netif;
/*
 * Pure: the order in which to try up to want channels over the n
 * interfaces the server listed. With rdma, RDMA_CAPABLE interfaces come
 * first as SMB-Direct channels, then every interface over TCP; without,
 * TCP only; faster links first in each; the connection the first one
 * already is (primary's family and address over its transport; primary
 * may be NULL) after all others. When want exceeds the candidates, the
 * list is walked again (more connections per interface). Returns the
 * picks made.
 */
unsigned int cli_mc_plan(const struct fsctl_netif *ifs, unsigned int n,
			 const struct fsctl_netif *primary, bool primary_rdma,
			 bool rdma, struct cli_mc_pick *out, unsigned int want);
/*
 * Channel.SigningKey of a binding ([MS-SMB2] 3.2.5.3.1): from the session
 * key of the binding's own authentication and, for 3.1.1, the preauth
 * hash of the new channel.
 */
int cli_channel_signing_key(uint16_t dialect, const uint8_t session_key[16],
			    const uint8_t *preauth, uint8_t key[16]);

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
	const uint8_t *ctx;		/* create contexts (cli_ctx), or NULL */
	uint32_t ctx_len;
	uint8_t oplock;			/* RequestedOplockLevel */
};

extern const struct smb2_fid cli_related_fid;

int cli_add_create(struct rdax_tree *t, struct cli_chain *ch,
		   const struct cli_create_args *a);
/* posix.c: the stat of a path or handle as FilePosixInformation */
struct rdax_stat;
int cli_posix_stat_decode(struct rdax_conn *c, const struct cli_rsp *rsp,
			  struct rdax_stat *st);
void cli_posix_stat_fill(const struct fscc_info *fi, const struct posix_info *pi,
			 struct rdax_stat *st);
int cli_add_close(struct rdax_tree *t, struct cli_chain *ch,
		  const struct smb2_fid *fid, uint16_t flags);
int cli_add_set_info(struct rdax_tree *t, struct cli_chain *ch,
		     const struct smb2_fid *fid, uint8_t cls,
		     const void *data, uint32_t len);
int cli_add_query_info(struct rdax_tree *t, struct cli_chain *ch,
		       const struct smb2_fid *fid, uint8_t type, uint8_t cls,
		       uint32_t out_len);
/* an FSCTL */
int cli_add_ioctl(struct rdax_tree *t, struct cli_chain *ch, const struct smb2_fid *fid,
		  uint32_t ctl, const void *in, uint32_t in_len, uint32_t max_out);

/* transports and the NEGOTIATE request (conn.c), for the channels too */
int cli_tcp_open(struct rdax_conn *c, const char *host, unsigned int port,
		 int timeout_ms, struct xprt **out);
int cli_rdma_open(struct rdax_conn *c, const char *host, unsigned int port,
		  int timeout_ms, struct xprt **out);
int cli_rdma_adopt(struct rdax_conn *c, struct cli_chan *chan);
/* deregister the session's RDMA memory (before its transports go) */
void cli_rdma_teardown(struct rdax_conn *c);
/* free the protection domains (after the transports are gone) */
void cli_rdev_free(struct rdax_conn *c);
/* a channel's memory windows (its transport failed or goes) */
void cli_chan_mw_free(struct cli_chan *chan);
/* Should added channels try SMB-Direct first? (cfg, transport, devices) */
bool cli_mc_rdma_first(const struct rdax_conn *c);
void cli_negotiate_req(const struct rdax_conn *c, struct smb2_negotiate_req *r);

/* ---- leases, cached attributes and breaks (lease.c) ---- */

void cli_leases_init(struct rdax_conn *c);
/* the connection ends: every lease entry goes (the server closes the opens) */
void cli_leases_free(struct rdax_conn *c);
/* a tree goes: its entries go, its files lose their lease */
void cli_leases_tree_gone(struct rdax_tree *t);
/* Do opens on t ask for a lease (of a directory: dir set)? */
bool cli_lease_ok(const struct rdax_tree *t, bool dir);
/* The entry that names path on t, or NULL. */
struct cli_lease *cli_lease_find(struct rdax_tree *t, const char *path);
/* ... or a new one with a new key (NULL: out of memory) */
struct cli_lease *cli_lease_get(struct rdax_tree *t, const char *path);
/* freed when it has no open left */
void cli_lease_put(struct rdax_conn *c, struct cli_lease *l);
/* a local change to path: its attributes, and its directory's, are stale */
void cli_lease_changed(struct rdax_tree *t, const char *path);
/* path was renamed to "to": the entries and files under it follow */
void cli_lease_renamed(struct rdax_tree *t, const char *from, const char *to);

/* CREATE contexts of an open: a lease and a durable handle request. */
struct cli_ctx {
	uint8_t buf[192];
	size_t len;
	size_t prev;
};

void cli_ctx_init(struct cli_ctx *x);
/* RqLs for l asking state (v2 on SMB 3, with the parent's key if leased) */
void cli_ctx_lease(struct cli_ctx *x, struct rdax_tree *t, const struct cli_lease *l,
		   uint32_t state);
/* DH2Q with CreateGuid guid (SMB 3) */
void cli_ctx_durable(struct cli_ctx *x, struct rdax_tree *t, const uint8_t *guid);
/* DH2C: the open fid with CreateGuid guid, again */
void cli_ctx_reconnect(struct cli_ctx *x, const struct smb2_fid *fid, const uint8_t *guid,
		       bool persistent);
/* What a CREATE response's contexts granted. */
struct cli_grant {
	bool lease;			/* a lease context came back */
	uint32_t state;
	uint16_t epoch;
	uint32_t flags;
	bool durable;			/* a DH2Q response came back */
	bool persistent;		/* ... and it made the handle persistent */
};

int cli_grant_parse(struct rdax_conn *c, const struct smb2_create_rsp *rsp,
		    const uint8_t *key, struct cli_grant *g);
/* the lease state a CREATE response gave l */
void cli_lease_granted(struct cli_lease *l, const struct cli_grant *g);

/* A lease or oplock break notification (MessageId all ones), on any channel. */
void cli_on_break(struct rdax_conn *c, const uint8_t *pdu, size_t len);
/* A CLOSE nobody waits for (its answer is only counted). */
int cli_close_bg(struct rdax_tree *t, const struct smb2_fid *fid);
/*
 * Before path goes away or changes name: the cached handles of path (and
 * with below, of everything under it) are closed, as CLOSEs first in ch
 * while it has room, else in a round trip of their own before.
 */
int cli_lease_close_cached(struct rdax_tree *t, const char *path, bool below,
			   struct cli_chain *ch);
/* A stat on t through the lease cache: 0 round trips while R is held. */
int cli_lease_stat(struct rdax_tree *t, const char *path, struct rdax_stat *st);
/* fstat of f: from its lease's cache while it holds R */
bool cli_lease_fstat_hit(struct rdax_file *f, struct rdax_stat *st);
void cli_lease_fstat_fill(struct rdax_file *f, const struct rdax_stat *st);
/* the session went (a reconnect): the handles stats kept went with it */
void cli_leases_session_gone(struct rdax_conn *c);
/* cached handles and marks older than CLI_CACHE_MS go (cli_begin) */
void cli_leases_expire(struct rdax_conn *c);

/* f's data or size changed: what its lease caches of it is stale */
void cli_file_changed(struct rdax_file *f);
/* TREE_DISCONNECT of the tree id (share names it in messages) */
int cli_tree_disconnect_req(struct rdax_conn *c, uint32_t id, const char *share);
/* FileAllInformation of a QUERY_INFO response */
int cli_decode_all_info(struct rdax_conn *c, const struct cli_rsp *rsp, struct rdax_stat *st);
/* TREE_CONNECT of share: its id, flags and capabilities */
int cli_tree_connect_req(struct rdax_conn *c, const char *share, uint32_t *id,
			 uint32_t *flags, uint32_t *caps);


/* ---- reconnect (recon.c) ---- */

/* Set the session up again when the last channel fails? */
bool cli_recon_wanted(const struct rdax_conn *c);
/*
 * Set the session up again on a new connection within the request
 * timeout: NEGOTIATE with the same ClientGuid, SESSION_SETUP with
 * PreviousSessionId, the trees, the durable handles (DH2C with their
 * lease); then what was in flight goes again with the replay flag. On
 * failure every waiting request fails and the connection is broken.
 */
void cli_reconnect(struct rdax_conn *c);
/* NEGOTIATE and SESSION_SETUP (conn.c), for rdax_connect and a reconnect */
int cli_session_start(struct rdax_conn *c, uint64_t prev_session_id);
/* a TCP connection to the server as channel 0 (conn.c) */
int cli_tcp_connect(struct rdax_conn *c);
int cli_rdma_connect(struct rdax_conn *c);
/* sockets that fail within seconds on a dead link */
bool cli_fail_fast(const struct rdax_conn *c);
/* every channel failed and was reaped: free their slots for new ones */
void cli_chans_clear(struct rdax_conn *c);
/*
 * The chains waiting to be sent: fix sees each PDU of each (pdu NULL for
 * one built when it goes); a negative return fails that chain.
 */
void cli_chains_fixup(struct rdax_conn *c,
		      int (*fix)(void *arg, struct cli_chain *ch, uint8_t *pdu, size_t len),
		      void *arg);
/* fail every chain waiting to be sent (a reconnect gave up) */
void cli_chains_fail(struct rdax_conn *c, int err);

/* rdax_pread/rdax_pwrite and rdax_ftruncate inside other calls */
ssize_t cli_rw(struct rdax_file *f, bool write, void *buf, size_t len, uint64_t off);
/*
 * Copy len bytes through the client, READs of src and WRITEs to dst in
 * flight (one connection or two). *done: bytes written in order from the
 * start; report(arg, *done) after each piece, non-zero stops the copy
 * with that value. 0 at the end of len or of src, else a negative errno.
 */
int cli_copy_pipe(struct rdax_file *src, uint64_t src_off, struct rdax_file *dst,
		  uint64_t dst_off, uint64_t len, uint64_t *done,
		  int (*report)(void *arg, uint64_t done), void *arg);
int cli_ftruncate(struct rdax_file *f, uint64_t size);

#endif
