/* SPDX-License-Identifier: MIT */
/*
 * Transports move whole upper-layer messages (and, on RDMA, data by
 * buffer descriptor). They know nothing of SMB2. A server transport is
 * driven by its worker's epoll loop; the client side uses the blocking
 * helpers.
 */
#ifndef RDAX_TRANSPORT_H
#define RDAX_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Bytes a transport may prepend in front of xbuf data (TCP framing). */
#define XPRT_HEADROOM 8

/*
 * An outgoing message. data points XPRT_HEADROOM bytes into a larger
 * allocation so the transport can frame it without a copy. The
 * transport owns it from send() until it calls release().
 */
struct xbuf {
	struct xbuf *next;
	uint8_t *data;
	size_t len;
	size_t off;			/* transport progress */
	void (*release)(struct xbuf *b);
	void *owner;
	/* SMB-Direct: send the last fragment with Send-With-Invalidate */
	bool invalidate;
	uint32_t invalidate_rkey;
	/* optional second segment, sent after data without a copy */
	const uint8_t *tail;
	size_t tail_len;
	/*
	 * TCP only: the second segment is tail_len bytes of file tail_fd at
	 * tail_off instead (tail NULL), sent from the page cache (sendfile);
	 * what the file no longer has when it goes is sent as zeros.
	 */
	bool tail_file;
	int tail_fd;
	uint64_t tail_off;
};

struct xprt;

struct xprt_stats {
	uint64_t msgs_in, msgs_out;
	uint64_t bytes_in, bytes_out;
};

/*
 * What a worker's epoll entry points to: one transport may own several
 * descriptors (SMB-Direct: the CM channel and the completion channel).
 */
struct xprt_ev {
	struct xprt *x;
	int src;
};

struct xprt_ops {
	const char *name;
	/* Queue one message; takes ownership of b. */
	int (*send)(struct xprt *x, struct xbuf *b);
	/* React to epoll events on source src; delivers messages to on_msg. */
	int (*handle_events)(struct xprt *x, uint32_t events, int src);
	/* Called about once a second (keep-alive); may be NULL. */
	int (*tick)(struct xprt *x, uint64_t now_ms);
	/* Bytes queued but not yet on the wire. */
	size_t (*queued)(const struct xprt *x);
	void (*destroy)(struct xprt *x);
	/*
	 * Completion polling (SMB-Direct; NULL elsewhere): handle what has
	 * completed without waiting for the event, and with arm ask for the
	 * event first so a sleeper hears the next one. Returns the
	 * completions handled, or a negative errno as handle_events.
	 */
	int (*poll)(struct xprt *x, bool arm);
	/*
	 * TCP (NULL elsewhere). rx_swap, from on_msg: the message's buffer
	 * becomes the caller's and stays valid after on_msg returns; in
	 * exchange the transport takes *buf (*cap bytes; NULL, 0: none).
	 * resume: delivers again the message on_msg held (XPRT_HOLD), then
	 * reads on; a negative errno as handle_events.
	 */
	void (*rx_swap)(struct xprt *x, uint8_t **buf, size_t *cap);
	int (*resume)(struct xprt *x);
};

/*
 * on_msg's "not now": the transport keeps the message, reads nothing
 * more and delivers it again at resume().
 */
#define XPRT_HOLD 1

/*
 * Payload placement (TCP): the upper layer may have part of a large
 * incoming message received straight into its own memory (a file's DAX
 * mapping) instead of the message buffer. Those bytes of the buffer are
 * then not filled in.
 */
struct xprt_place {
	size_t off;			/* payload offset in the message */
	size_t len;			/* bytes to place at dst; 0: none */
	uint8_t *dst;
	void *cookie;			/* the upper layer's */
};

struct xprt {
	const struct xprt_ops *ops;
	int fd;
	int epfd;			/* worker epoll, -1 if unmanaged */
	void *upper;
	/*
	 * One complete message, valid until return; the callee may modify
	 * it in place. A negative return closes the connection; XPRT_HOLD
	 * (TCP) holds it.
	 */
	int (*on_msg)(void *upper, uint8_t *msg, size_t len);
	size_t max_msg;			/* larger messages drop the connection */
	bool rx_paused;
	bool dead;
	char peer[64];			/* "addr:port" for logs */
	struct xprt_stats stats;
	bool rdma;			/* SMB-Direct: RDMA read/write available */
	/*
	 * The owner polls (ops->poll) while it spins: an event does not
	 * ask for the next one, the owner arms before it sleeps.
	 */
	bool spin;
	/*
	 * Once the first place_peek bytes of a message of at least
	 * place_min bytes are in: may fill *p. placed describes it while
	 * on_msg runs; place_abort hands back one never delivered.
	 */
	int (*place)(void *upper, const uint8_t *msg, size_t have, size_t total,
		     struct xprt_place *p);
	void (*place_abort)(void *upper, struct xprt_place *p);
	size_t place_peek, place_min;
	struct xprt_place placed;
	/*
	 * TCP receive timeout, 0 = none: the first message must be in
	 * rx_timeout_ms after the connection is made; then a message begun
	 * must be whole rx_timeout_ms after its first byte (rx_strict) or
	 * must not stall that long (the next event fails with -ETIMEDOUT).
	 */
	unsigned int rx_timeout_ms;
	bool rx_strict;
};

/* ---- Direct TCP ([MS-SMB2] 2.1) ---- */

int tcp_listen(const char *addr, unsigned int port, int backlog);
/* Wrap an accepted, non-blocking socket. */
int tcp_xprt_new(int fd, int epfd, struct xprt **out);
/* "host:port" text of a socket peer. */
void tcp_peer_name(int fd, char *buf, size_t len);

/*
 * Client side, blocking with a timeout (ms, <0 = forever). A host name
 * that does not resolve gives -ENXIO (-EAGAIN: temporary resolver
 * failure) and, if why is set, the resolver's text (gai_strerror).
 */
int tcp_connect(const char *host, unsigned int port, int timeout_ms,
		const char **why);
/* getaddrinfo() result (EAI_*) as a negative errno, as tcp_connect. */
int xprt_resolve_errno(int eai);
/* Does host resolve? 0, or as tcp_connect's resolver failures. */
int xprt_resolve_check(const char *host, unsigned int port, const char **why);
int tcp_send_msg(int fd, const struct iovec *iov, int iovcnt);
/*
 * Receive one framed message into *buf (grown with realloc as needed).
 * Returns the message length or -errno (-ECONNRESET on EOF).
 */
long tcp_recv_msg(int fd, uint8_t **buf, size_t *cap, size_t max_msg,
		  int timeout_ms);

#endif
