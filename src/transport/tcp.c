// SPDX-License-Identifier: MIT
/*
 * Direct TCP transport: a 4-byte header (zero byte + 24-bit big-endian
 * length) in front of each SMB2 message, [MS-SMB2] 2.1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "transport/transport.h"
#include "util/bytes.h"
#include "util/log.h"

#define TCP_FRAME 4
#define TCP_RX_INITIAL (64 * 1024)
#define TCP_TX_HIGH_WATER (32u << 20)	/* pause reading above this */
#define TCP_RX_BUDGET (16u << 20)	/* bytes per event before yielding */

struct tcp_xprt {
	struct xprt x;
	struct xprt_ev ev_ref;
	uint8_t hdr[TCP_FRAME];
	size_t hdr_have;
	uint8_t *rx;
	size_t rx_cap;
	size_t rx_len;			/* message length being received */
	size_t rx_have;
	bool pl_asked;			/* placement decided for this message */
	struct xprt_place pl;
	bool rx_in_msg;			/* a message (or the first) is due */
	bool held;			/* on_msg said XPRT_HOLD: rx holds it */
	bool timed_out;			/* the receive timeout struck */
	uint64_t rx_start_ms;		/* its first byte (or the connect) */
	uint64_t rx_last_ms;		/* the last byte received */
	struct xbuf *tx_head, *tx_tail;
	size_t tx_queued;
	uint32_t ev;
};

/*
 * writev() for sockets without SIGPIPE: a peer that went away is an
 * EPIPE for the caller, not a signal that kills a library's host process.
 */
static ssize_t send_iov(int fd, struct iovec *iov, int cnt, int flags)
{
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };

	return sendmsg(fd, &m, MSG_NOSIGNAL | flags);
}

static int tcp_set_events(struct tcp_xprt *t)
{
	struct epoll_event ev = { .data.ptr = &t->ev_ref };
	uint32_t want = 0;

	if (!t->x.rx_paused && !t->held)
		want |= EPOLLIN;
	if (t->tx_head)
		want |= EPOLLOUT;
	if (want == t->ev || t->x.epfd < 0)
		return 0;
	ev.events = want | EPOLLRDHUP;
	if (epoll_ctl(t->x.epfd, EPOLL_CTL_MOD, t->x.fd, &ev))
		return -errno;
	t->ev = want;
	return 0;
}

/*
 * The file part of a buffer at the head, from the page cache with no
 * copy: bytes sent, 0 when the socket is full, or a negative errno. A
 * file cut short meanwhile is padded with zeros (the length is on the
 * wire already), as a READ racing a truncate may see.
 */
static ssize_t send_file_tail(struct tcp_xprt *t, struct xbuf *b, size_t head)
{
	static const uint8_t zeros[4096];
	size_t done = b->off - head, left = b->tail_len - done;
	off_t pos = (off_t)(b->tail_off + done);
	ssize_t n;

	n = sendfile(t->x.fd, b->tail_fd, &pos, left);
	if (n == 0)	/* the file ended */
		n = send(t->x.fd, zeros, left < sizeof(zeros) ? left : sizeof(zeros),
			 MSG_NOSIGNAL);
	/* a read error of the file too: the connection goes, no data is made up */
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return n;
}

static int tcp_flush(struct tcp_xprt *t)
{
	struct iovec iov[64];
	struct xbuf *b;
	ssize_t n;
	int cnt;

	while (t->tx_head) {
		b = t->tx_head;
		if (b->tail_file && b->off >= b->len + TCP_FRAME) {
			n = send_file_tail(t, b, b->len + TCP_FRAME);
			if (n < 0)
				return n;
			if (n == 0)
				break;
			goto sent;
		}
		cnt = 0;
		for (; b && cnt < 63; b = b->next) {
			size_t head = b->len + TCP_FRAME;

			if (b->off < head) {
				iov[cnt].iov_base = b->data - TCP_FRAME + b->off;
				iov[cnt].iov_len = head - b->off;
				cnt++;
			}
			/* a file's part goes by itself, after the head */
			if (b->tail_file)
				break;
			if (b->tail_len) {
				size_t t0 = b->off > head ? b->off - head : 0;

				iov[cnt].iov_base = (void *)(b->tail + t0);
				iov[cnt].iov_len = b->tail_len - t0;
				cnt++;
			}
		}
		n = send_iov(t->x.fd, iov, cnt, b && b->tail_file ? MSG_MORE : 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
sent:
		t->x.stats.bytes_out += (uint64_t)n;
		t->tx_queued -= (size_t)n;
		while (n > 0) {
			b = t->tx_head;
			size_t left = b->len + TCP_FRAME + b->tail_len - b->off;

			if ((size_t)n < left) {
				b->off += (size_t)n;
				break;
			}
			n -= (ssize_t)left;
			t->tx_head = b->next;
			if (!t->tx_head)
				t->tx_tail = NULL;
			t->x.stats.msgs_out++;
			b->release(b);
		}
	}
	/* Resume reading once the peer has drained its responses. */
	if (t->x.rx_paused && t->tx_queued < TCP_TX_HIGH_WATER / 2)
		t->x.rx_paused = false;
	return tcp_set_events(t);
}

static int tcp_send(struct xprt *x, struct xbuf *b)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	uint8_t *h = b->data - TCP_FRAME;

	if (x->dead || b->len + b->tail_len > 0xFFFFFF) {
		b->release(b);
		return x->dead ? -ENOTCONN : -EMSGSIZE;
	}
	put_be32(h, (uint32_t)(b->len + b->tail_len));	/* top byte: type 0 */
	b->off = 0;
	b->next = NULL;
	if (t->tx_tail)
		t->tx_tail->next = b;
	else
		t->tx_head = b;
	t->tx_tail = b;
	t->tx_queued += b->len + b->tail_len + TCP_FRAME;
	if (t->tx_queued > TCP_TX_HIGH_WATER)
		x->rx_paused = true;
	return tcp_flush(t);
}

static int tcp_rx_grow(struct tcp_xprt *t, size_t need)
{
	size_t cap = t->rx_cap ? t->rx_cap : TCP_RX_INITIAL;
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	p = realloc(t->rx, cap);
	if (!p)
		return -ENOMEM;
	t->rx = p;
	t->rx_cap = cap;
	return 0;
}

/*
 * Where the next bytes of the message go: the message buffer, or the
 * placement target for its payload range; up to the next boundary (the
 * peek point, the start or the end of the placed range).
 */
static uint8_t *rx_target(struct tcp_xprt *t)
{
	if (t->pl.len && t->rx_have >= t->pl.off && t->rx_have < t->pl.off + t->pl.len)
		return t->pl.dst + (t->rx_have - t->pl.off);
	return t->rx + t->rx_have;
}

static size_t rx_want(struct tcp_xprt *t)
{
	size_t end = t->rx_len;

	if (!t->pl_asked && t->x.place && t->rx_len >= t->x.place_min &&
	    t->rx_have < t->x.place_peek)
		end = t->x.place_peek;
	else if (t->pl.len && t->rx_have < t->pl.off)
		end = t->pl.off;
	else if (t->pl.len && t->rx_have < t->pl.off + t->pl.len)
		end = t->pl.off + t->pl.len;
	return end - t->rx_have;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The message in rx to the upper layer: 1 read on, 0 held, or -errno. */
static int rx_deliver(struct tcp_xprt *t)
{
	int ret;

	ret = t->x.on_msg(t->x.upper, t->rx, t->rx_len);
	memset(&t->x.placed, 0, sizeof(t->x.placed));
	if (ret == XPRT_HOLD) {
		t->held = true;
		return 0;
	}
	if (ret < 0)
		return ret;
	/* Do not keep a huge buffer around after one big message. */
	if (t->rx_cap > (1u << 20) && t->rx_len <= TCP_RX_INITIAL) {
		free(t->rx);
		t->rx = NULL;
		t->rx_cap = 0;
	}
	return 1;
}

static int tcp_read_some(struct tcp_xprt *t, size_t *budget)
{
	ssize_t n;
	int ret;

	if (t->hdr_have < TCP_FRAME) {
		n = read(t->x.fd, t->hdr + t->hdr_have, TCP_FRAME - t->hdr_have);
		if (n <= 0)
			goto out_err;
		t->rx_last_ms = mono_ms();
		if (!t->hdr_have && !t->rx_in_msg) {
			t->rx_in_msg = true;
			t->rx_start_ms = t->rx_last_ms;
		}
		t->hdr_have += (size_t)n;
		if (t->hdr_have < TCP_FRAME)
			return 1;
		if (t->hdr[0] != 0)
			return -EPROTO;	/* only session messages, no NetBIOS */
		t->rx_len = get_be32(t->hdr) & 0xFFFFFF;
		if (t->rx_len > t->x.max_msg || t->rx_len < 4)
			return -EMSGSIZE;
		if (t->rx_len > t->rx_cap) {
			ret = tcp_rx_grow(t, t->rx_len);
			if (ret)
				return ret;
		}
		t->rx_have = 0;
	}
	n = read(t->x.fd, rx_target(t), rx_want(t));
	if (n <= 0)
		goto out_err;
	t->rx_last_ms = mono_ms();
	t->rx_have += (size_t)n;
	t->x.stats.bytes_in += (uint64_t)n;
	*budget = *budget > (size_t)n ? *budget - (size_t)n : 0;
	if (!t->pl_asked && t->x.place && t->rx_len >= t->x.place_min &&
	    t->rx_have >= t->x.place_peek) {
		t->pl_asked = true;
		memset(&t->pl, 0, sizeof(t->pl));
		if (t->x.place(t->x.upper, t->rx, t->rx_have, t->rx_len, &t->pl) ||
		    t->pl.off < t->rx_have || t->pl.off > t->rx_len ||
		    t->pl.len > t->rx_len - t->pl.off)
			t->pl.len = 0;
	}
	if (t->rx_have < t->rx_len)
		return 1;
	t->hdr_have = 0;
	t->rx_in_msg = false;
	t->pl_asked = false;
	t->x.stats.msgs_in++;
	t->x.placed = t->pl;
	memset(&t->pl, 0, sizeof(t->pl));
	return rx_deliver(t);
out_err:
	if (n == 0)
		return -ECONNRESET;
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	return -errno;
}

static int tcp_handle_events(struct xprt *x, uint32_t events, int src)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	size_t budget = TCP_RX_BUDGET;
	int ret;

	if (t->timed_out)
		return -ETIMEDOUT;
	if (events & EPOLLOUT) {
		ret = tcp_flush(t);
		if (ret)
			return ret;
	}
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		while (!x->rx_paused && !t->held && !x->dead && budget) {
			ret = tcp_read_some(t, &budget);
			if (ret < 0)
				return ret;
			if (ret == 0)
				break;
		}
	}
	return tcp_set_events(t);
}

/*
 * Receive timeout (slow or stalled senders): once a second. While the
 * server itself does not read (rx_paused) the clock does not run. The
 * connection is shut down here and fails with -ETIMEDOUT in the event
 * that follows: the worker may still hold events of this connection
 * from the epoll_wait() that preceded the tick, so it must not go away
 * in the tick.
 */
static int tcp_tick(struct xprt *x, uint64_t now)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	uint64_t since;

	if (!x->rx_timeout_ms || !t->rx_in_msg || x->dead || t->timed_out)
		return 0;
	now = mono_ms();
	if (x->rx_paused) {
		t->rx_start_ms = now;
		t->rx_last_ms = now;
		return 0;
	}
	since = x->rx_strict ? t->rx_start_ms : t->rx_last_ms;
	if (now - since < x->rx_timeout_ms)
		return 0;
	log_ratelimited(LOG_NOTICE, "%s: receive timeout: %s%zu of %zu%s bytes of a message after %llu s",
			x->peer, x->rx_strict ? "" : "no progress, ",
			t->hdr_have < TCP_FRAME ? t->hdr_have : t->rx_have,
			t->hdr_have < TCP_FRAME ? (size_t)TCP_FRAME : t->rx_len,
			t->hdr_have < TCP_FRAME ? " header" : "",
			(unsigned long long)((now - t->rx_start_ms) / 1000));
	t->timed_out = true;
	shutdown(x->fd, SHUT_RDWR);
	return 0;
}

static void tcp_rx_swap(struct xprt *x, uint8_t **buf, size_t *cap)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	uint8_t *b = t->rx;
	size_t c = t->rx_cap;

	t->rx = *buf;
	t->rx_cap = *cap;
	*buf = b;
	*cap = c;
}

static int tcp_resume(struct xprt *x)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	int ret;

	if (!t->held || x->dead)
		return 0;
	t->held = false;
	ret = rx_deliver(t);
	if (ret < 0)
		return ret;
	return tcp_set_events(t);
}

static size_t tcp_queued(const struct xprt *x)
{
	return ((const struct tcp_xprt *)x)->tx_queued;
}

static void tcp_destroy(struct xprt *x)
{
	struct tcp_xprt *t = (struct tcp_xprt *)x;
	struct xbuf *b;

	while ((b = t->tx_head)) {
		t->tx_head = b->next;
		b->release(b);
	}
	/* a message cut off while its payload went to the upper layer */
	if (t->pl.len && x->place_abort)
		x->place_abort(x->upper, &t->pl);
	if (x->epfd >= 0)
		epoll_ctl(x->epfd, EPOLL_CTL_DEL, x->fd, NULL);
	close(x->fd);
	free(t->rx);
	free(t);
}

static const struct xprt_ops tcp_ops = {
	.name = "tcp",
	.send = tcp_send,
	.handle_events = tcp_handle_events,
	.tick = tcp_tick,
	.queued = tcp_queued,
	.destroy = tcp_destroy,
	.rx_swap = tcp_rx_swap,
	.resume = tcp_resume,
};

void tcp_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";

	if (!getpeername(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port,
			    sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
}

int tcp_xprt_new(int fd, int epfd, struct xprt **out)
{
	struct tcp_xprt *t = calloc(1, sizeof(*t));
	struct epoll_event ev;
	int one = 1;

	if (!t)
		return -ENOMEM;
	t->x.ops = &tcp_ops;
	t->x.fd = fd;
	t->x.epfd = epfd;
	t->x.max_msg = 0xFFFFFF;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcp_peer_name(fd, t->x.peer, sizeof(t->x.peer));
	/* the receive timeout, if set, counts for the first message from now */
	t->rx_in_msg = true;
	t->rx_start_ms = mono_ms();
	t->rx_last_ms = t->rx_start_ms;
	t->ev_ref.x = &t->x;
	if (epfd >= 0) {
		ev.events = EPOLLIN | EPOLLRDHUP;
		ev.data.ptr = &t->ev_ref;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			int ret = -errno;

			free(t);
			return ret;
		}
		t->ev = EPOLLIN;
	}
	*out = &t->x;
	return 0;
}

int tcp_listen(const char *addr, unsigned int port, int backlog)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char portstr[8];
	int fd = -1, one = 1, ret;

	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(addr && *addr ? addr : NULL, portstr, &hints, &res);
	if (ret)
		return ret == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
				   SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, backlog))
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : ret;
}

static int poll_fd(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do {
		n = poll(&pfd, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

int xprt_resolve_errno(int eai)
{
	switch (eai) {
	case 0:
		return 0;
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_AGAIN:
		return -EAGAIN;
	default:
		return -ENXIO;
	}
}

int xprt_resolve_check(const char *host, unsigned int port, const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res;
	char portstr[8];
	int ret;

	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(host, portstr, &hints, &res);
	if (!ret) {
		freeaddrinfo(res);
		return 0;
	}
	if (why)
		*why = gai_strerror(ret);
	return xprt_resolve_errno(ret);
}

int tcp_connect(const char *host, unsigned int port, int timeout_ms,
		const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char portstr[8];
	int fd = -1, ret, one = 1, err;
	socklen_t el = sizeof(err);

	snprintf(portstr, sizeof(portstr), "%u", port);
	ret = getaddrinfo(host, portstr, &hints, &res);
	if (ret) {
		if (why)
			*why = gai_strerror(ret);
		return xprt_resolve_errno(ret);
	}
	ret = -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
				   SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
			ret = -errno;
			goto next;
		}
		ret = poll_fd(fd, POLLOUT, timeout_ms);
		if (ret)
			goto next;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
			ret = -(err ? err : errno);
			goto next;
		}
		/* Blocking from here on; timeouts come from poll. */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		break;
next:
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : ret;
}

int tcp_send_msg(int fd, const struct iovec *iov, int iovcnt)
{
	struct iovec v[1 + 64];
	uint8_t hdr[TCP_FRAME];
	size_t total = 0;
	int i, cnt;

	if (iovcnt > 64)
		return -EINVAL;
	for (i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total > 0xFFFFFF)
		return -EMSGSIZE;
	put_be32(hdr, (uint32_t)total);
	v[0].iov_base = hdr;
	v[0].iov_len = TCP_FRAME;
	memcpy(v + 1, iov, sizeof(*iov) * (size_t)iovcnt);
	cnt = iovcnt + 1;
	i = 0;
	while (i < cnt) {
		ssize_t n = send_iov(fd, v + i, cnt - i, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (i < cnt && (size_t)n >= v[i].iov_len) {
			n -= (ssize_t)v[i].iov_len;
			i++;
		}
		if (i < cnt) {
			v[i].iov_base = (uint8_t *)v[i].iov_base + n;
			v[i].iov_len -= (size_t)n;
		}
	}
	return 0;
}

static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	size_t have = 0;
	ssize_t n;
	int ret;

	while (have < len) {
		if (timeout_ms >= 0) {
			ret = poll_fd(fd, POLLIN, timeout_ms);
			if (ret)
				return ret;
		}
		n = read(fd, (uint8_t *)buf + have, len - have);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		have += (size_t)n;
	}
	return 0;
}

long tcp_recv_msg(int fd, uint8_t **buf, size_t *cap, size_t max_msg,
		  int timeout_ms)
{
	uint8_t hdr[TCP_FRAME];
	size_t len;
	int ret;

	ret = read_full(fd, hdr, TCP_FRAME, timeout_ms);
	if (ret)
		return ret;
	if (hdr[0] != 0)
		return -EPROTO;
	len = get_be32(hdr) & 0xFFFFFF;
	if (len > max_msg)
		return -EMSGSIZE;
	if (len > *cap) {
		uint8_t *p = realloc(*buf, len);

		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = len;
	}
	ret = read_full(fd, *buf, len, timeout_ms);
	if (ret)
		return ret;
	return (long)len;
}
