// SPDX-License-Identifier: MIT
/*
 * A TCP relay between SMB clients and a real server on loopback, to put
 * a link in the states tests need: answers that stop coming on a
 * connection that stays open, answers that trickle in, and a server that
 * looks like one without server-side copy. Everything else passes as is.
 *
 * usage: relay [--no-resume-key | --spoil-read-errors] LISTEN_PORT SERVER_PORT
 *   prints "ready" once it listens on 127.0.0.1:LISTEN_PORT.
 *   SIGUSR1: stop reading the server's answers (they wait in its socket)
 *   SIGUSR2: pass the server's answers on at 256 bytes per 100 ms
 *   SIGHUP:  back to passing everything on at once
 *   --no-resume-key: FSCTL_SRV_REQUEST_RESUME_KEY requests reach the
 *   server as an unknown FSCTL, which it refuses (unsigned sessions only)
 *   as a server without server-side copy would.
 *   --spoil-read-errors: a signed error answer to a READ (END_OF_FILE...)
 *   reaches the client with a wrong signature, as ksmbd 6.1 signs them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 16
#define TRICKLE_BYTES 256
#define TRICKLE_MS 100
#define MAX_MSG (16u << 20)

#define SMB2_READ 0x0008
#define SMB2_IOCTL 0x000B
#define SMB2_FLAGS_SIGNED 0x00000008u
#define STATUS_PENDING 0x00000103u
#define FSCTL_SRV_REQUEST_RESUME_KEY 0x00140078u
#define FSCTL_UNKNOWN 0x0014FFFCu

enum mode { PASS, HOLD, TRICKLE };

struct pair {
	int cli, srv;
	uint8_t *msg;			/* client -> server message being gathered */
	size_t have, need;
	uint8_t *smsg;			/* server -> client, with --spoil-read-errors */
	size_t shave, sneed;
	uint64_t next_ms;		/* trickle: next time the server side is read */
};

static volatile sig_atomic_t mode = PASS;
static bool no_resume_key, spoil_read_errors;
static struct pair pairs[MAX_PAIRS];
static int npairs;

static void on_signal(int sig)
{
	mode = sig == SIGUSR1 ? HOLD : sig == SIGUSR2 ? TRICKLE : PASS;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One client message (after the 4-byte frame): rewrite resume key asks. */
static void rewrite(uint8_t *m, size_t len)
{
	size_t off = 0, next;

	if (!no_resume_key)
		return;
	for (;;) {
		uint8_t *h = m + off;

		if (off + 64 + 8 > len || memcmp(h, "\xfeSMB", 4))
			return;
		next = le32(h + 20);
		if ((h[12] | h[13] << 8) == SMB2_IOCTL &&
		    le32(h + 64 + 4) == FSCTL_SRV_REQUEST_RESUME_KEY) {
			h[68] = FSCTL_UNKNOWN & 0xff;
			h[69] = FSCTL_UNKNOWN >> 8 & 0xff;
			h[70] = FSCTL_UNKNOWN >> 16 & 0xff;
			h[71] = FSCTL_UNKNOWN >> 24 & 0xff;
		}
		if (!next || off + next <= off)
			return;
		off += next;
	}
}

/* One server message: break the signature of signed READ error answers. */
static void spoil(uint8_t *m, size_t len)
{
	size_t off = 0, next;
	uint32_t st;

	for (;;) {
		uint8_t *h = m + off;

		if (off + 64 > len || memcmp(h, "\xfeSMB", 4))
			return;
		next = le32(h + 20);
		st = le32(h + 8);
		if ((h[12] | h[13] << 8) == SMB2_READ && st && st != STATUS_PENDING &&
		    le32(h + 16) & SMB2_FLAGS_SIGNED)
			h[48] ^= 0x5a;
		if (!next || off + next <= off)
			return;
		off += next;
	}
}

static void pair_close(int i)
{
	close(pairs[i].cli);
	close(pairs[i].srv);
	free(pairs[i].msg);
	free(pairs[i].smsg);
	pairs[i] = pairs[--npairs];
}

/* Whole messages from one side to the other, edited on the way. */
static int gather(int from, int to, uint8_t *msg, size_t *have, size_t *need,
		  void (*edit)(uint8_t *m, size_t len))
{
	ssize_t n;

	if (*have < 4)
		n = recv(from, msg + *have, 4 - *have, 0);
	else
		n = recv(from, msg + *have, *need - *have, 0);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	*have += (size_t)n;
	if (*have == 4) {
		*need = 4 + ((size_t)msg[1] << 16 | msg[2] << 8 | msg[3]);
		if (*need > MAX_MSG + 4)
			return -1;
	}
	if (*have < 4 || *have < *need)
		return 0;
	edit(msg + 4, *need - 4);
	if (write_all(to, msg, *need))
		return -1;
	*have = 0;
	*need = 0;
	return 0;
}

static int from_client(struct pair *p)
{
	return gather(p->cli, p->srv, p->msg, &p->have, &p->need, rewrite);
}

static int from_server(struct pair *p)
{
	uint8_t buf[64 * 1024];
	size_t want = mode == TRICKLE ? TRICKLE_BYTES : sizeof(buf);
	ssize_t n;

	if (spoil_read_errors)
		return gather(p->srv, p->cli, p->smsg, &p->shave, &p->sneed, spoil);
	n = recv(p->srv, buf, want, 0);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	p->next_ms = now_ms() + TRICKLE_MS;
	return write_all(p->cli, buf, (size_t)n);
}

static int connect_server(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct pollfd pfd[1 + 2 * MAX_PAIRS];
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned int lport, sport;
	int lfd, one = 1, i, n, timeout;
	uint64_t now;

	if (argc > 1 && !strcmp(argv[1], "--no-resume-key")) {
		no_resume_key = true;
		argv++;
		argc--;
	} else if (argc > 1 && !strcmp(argv[1], "--spoil-read-errors")) {
		spoil_read_errors = true;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: relay [--no-resume-key | --spoil-read-errors] "
			"LISTEN_PORT SERVER_PORT\n");
		return 2;
	}
	lport = (unsigned int)atoi(argv[1]);
	sport = (unsigned int)atoi(argv[2]);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_port = htons(lport);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 16)) {
		perror("relay: listen");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		now = now_ms();
		timeout = -1;
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < npairs; i++) {
			struct pair *p = &pairs[i];
			bool rd = mode == PASS || (mode == TRICKLE && now >= p->next_ms);

			pfd[1 + 2 * i] = (struct pollfd){ .fd = p->cli, .events = POLLIN };
			pfd[2 + 2 * i] = (struct pollfd){ .fd = p->srv, .events = rd ? POLLIN : 0 };
			if (mode == TRICKLE && !rd && (timeout < 0 ||
						       (int)(p->next_ms - now) < timeout))
				timeout = (int)(p->next_ms - now);
		}
		if (mode != PASS && (timeout < 0 || timeout > TRICKLE_MS))
			timeout = TRICKLE_MS;	/* notice a mode change */
		n = poll(pfd, 1 + 2 * (nfds_t)npairs, timeout);
		if (n < 0 && errno != EINTR)
			return 1;
		if (n <= 0)
			continue;
		for (i = npairs - 1; i >= 0; i--) {
			struct pair *p = &pairs[i];
			short rc = pfd[1 + 2 * i].revents, rs = pfd[2 + 2 * i].revents;

			if ((rc && from_client(p)) || (rs && from_server(p)))
				pair_close(i);
		}
		if (pfd[0].revents & POLLIN && npairs < MAX_PAIRS) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), s;

			if (c < 0)
				continue;
			s = connect_server(sport);
			if (s < 0) {
				close(c);
				continue;
			}
			pairs[npairs] = (struct pair){ .cli = c, .srv = s };
			pairs[npairs].msg = malloc(MAX_MSG + 4);
			if (spoil_read_errors)
				pairs[npairs].smsg = malloc(MAX_MSG + 4);
			if (!pairs[npairs].msg || (spoil_read_errors && !pairs[npairs].smsg)) {
				free(pairs[npairs].msg);
				free(pairs[npairs].smsg);
				close(c);
				close(s);
				continue;
			}
			npairs++;
		}
	}
}
