// SPDX-License-Identifier: MIT
/*
 * The whole rdaxd request path: the input is what a client writes to its
 * TCP connection (4-byte framing + SMB2 messages). Each input gets a new
 * connection on a private worker (no thread, no epoll loop) of a server
 * with a guest share in a temporary directory, reset before every input;
 * srv_process_msg() handles the messages one by one as the transport
 * would. Every response rdaxd writes back must be well formed, and
 * nothing may appear or change outside the share.
 *
 * Session ids and volatile FileIds are reset to SID_BASE and VOL_BASE
 * for each input, so recorded sessions replay (capture.sh rewrites the
 * ids of its seeds to these values). Only anonymous and guest sessions
 * get past SESSION_SETUP: challenges are random.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "proto/smb2.h"
#include "server/server.h"
#include "util/log.h"

#define SID_BASE 0x4000000000000001ull	/* keep in sync with capture.sh */
#define VOL_BASE 0x0000000010000001ull
#define MAX_MSGS 64

static struct srv_config cfg;
static struct srv *srv;
static struct srv_worker w;
static char root[64], share[96], outside[96];
static int debug;		/* FUZZ_DEBUG=1: print each response */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *f)
{
	if (f->level == 0)
		return 0;
	return remove(path) ? -1 : 0;
}

static void write_file(const char *dir, const char *name, const char *data,
		       size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0 || fchmod(fd, 0666) || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

/* The share as every input finds it. */
static void reset_share(void)
{
	char path[256];

	/*
	 * rdaxd dropped the capabilities that would let root delete what
	 * the guest made in the guest's directories: the guest cleans up
	 * after itself, then root.
	 */
	if (srv) {
		if (srv_ident_enter(cfg.guest_ident))
			abort();
		nftw(share, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (srv_ident_enter(NULL))
			abort();
	}
	if (nftw(share, rm_entry, 16, FTW_DEPTH | FTW_PHYS))
		abort();
	write_file(share, "hello.txt", "hello from rdax\n", 16);
	/* rdaxd acts as the guest account: everything is theirs to change */
	snprintf(path, sizeof(path), "%s/dir", share);
	mkdir(path, 0777);
	chmod(path, 0777);
	snprintf(path, sizeof(path), "%s/dir/sub", share);
	mkdir(path, 0777);
	chmod(path, 0777);
	write_file(path, "small.bin", "0123456789abcdef", 16);
	snprintf(path, sizeof(path), "%s/dir", share);
	write_file(path, "caf\xc3\xa9.txt", "n\xc3\xa4me\n", 6);
}

/* Nothing but share/ and the untouched canary may exist in root. */
static void check_outside(void)
{
	struct dirent *de;
	char buf[16];
	struct stat st;
	int fd, n;
	DIR *d;

	fd = open(outside, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FUZZ_ASSERT(fd >= 0);
	n = (int)read(fd, buf, sizeof(buf));
	close(fd);
	FUZZ_ASSERT(n == 7 && !memcmp(buf, "canary\n", 7));
	FUZZ_ASSERT(!lstat(share, &st) && S_ISDIR(st.st_mode));
	d = opendir(root);
	FUZZ_ASSERT(d);
	while ((de = readdir(d)))
		FUZZ_ASSERT(!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    !strcmp(de->d_name, "share") ||
			    !strcmp(de->d_name, "outside"));
	closedir(d);
}

static void cleanup(void)
{
	if (root[0]) {
		if (srv && !srv_ident_enter(cfg.guest_ident))
			nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		srv_ident_enter(NULL);
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		rmdir(root);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct srv_share *sh;

	debug = getenv("FUZZ_DEBUG") != NULL;
	log_threshold = debug ? LOG_DEBUG : -1;
	snprintf(root, sizeof(root), "/tmp/rdax-fuzz-server.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	snprintf(share, sizeof(share), "%s/share", root);
	snprintf(outside, sizeof(outside), "%s/outside", root);
	/* the guest account must reach the share */
	if (chmod(root, 0711) || mkdir(share, 0777) || chmod(share, 0777))
		abort();
	write_file(root, "outside", "canary\n", 7);
	reset_share();

	srv_config_init(&cfg);
	cfg.workers = 1;
	if (srv_config_add_share(&cfg, "pub", share, &sh))
		abort();
	sh->guest_ok = true;
	if (srv_config_add_share(&cfg, "data", share, &sh))
		abort();
	if (srv_config_add_share(&cfg, "ro", share, &sh))
		abort();
	sh->guest_ok = true;
	sh->read_only = true;
	if (srv_config_finish(&cfg))
		abort();
	cfg.nlisten = 0;		/* no sockets: connections come from here */
	if (srv_new(&cfg, &srv))
		abort();
	/* our own worker: its thread never runs, we call in directly */
	w.srv = srv;
	w.idx = 99;
	list_init(&w.conns);
	w.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w.epfd < 0)
		abort();
	return 0;
}

/* A response message from rdaxd: framing and every PDU well formed. */
static void check_response(const uint8_t *m, size_t len)
{
	size_t off = 0, plen, next;
	int n = 0;

	FUZZ_ASSERT(len >= 4);
	if (get_le32(m) == SMB2_TRANSFORM_ID) {
		FUZZ_ASSERT(len > SMB2_TRANSFORM_SIZE);
		return;
	}
	FUZZ_ASSERT(get_le32(m) == SMB2_PROTO_ID);
	do {
		struct smb2_hdr h;
		uint16_t ss;

		FUZZ_ASSERT(!smb2_chain_pdu(m, len, off, &plen, &next));
		FUZZ_ASSERT(!smb2_hdr_decode(m + off, plen, &h));
		FUZZ_ASSERT(h.flags & SMB2_FLAGS_SERVER_TO_REDIR);
		FUZZ_ASSERT(h.command < SMB2_NR_COMMANDS);
		if (debug)
			fprintf(stderr, "  <- %s 0x%08x\n", smb2_cmd_name(h.command),
				h.status);
		FUZZ_ASSERT(plen >= SMB2_HDR_SIZE + 2);
		ss = get_le16(m + off + SMB2_HDR_SIZE);
		FUZZ_ASSERT(ss == smb2_rsp_structure_size(h.command) || ss == 9 ||
			    (h.command == SMB2_OPLOCK_BREAK && ss == 44));
		/* the fixed part is there (odd sizes include one byte) */
		FUZZ_ASSERT(plen >= SMB2_HDR_SIZE + (size_t)(ss & ~1u));
		off = next;
	} while (off && ++n < 2 * SMB2_MAX_COMPOUND);
	FUZZ_ASSERT(!off);
}

struct rx {
	uint8_t *buf;
	size_t len, cap;
};

/* Read what rdaxd sent so far and check each complete message. */
static void drain(int fd, struct rx *r)
{
	size_t off = 0;
	ssize_t n;

	for (;;) {
		if (r->cap - r->len < 65536) {
			uint8_t *nb = realloc(r->buf, r->cap + (1 << 20));

			if (!nb)
				abort();
			r->buf = nb;
			r->cap += 1 << 20;
		}
		n = read(fd, r->buf + r->len, r->cap - r->len);
		if (n <= 0)
			break;
		r->len += (size_t)n;
	}
	while (r->len - off >= 4) {
		size_t mlen = get_be32(r->buf + off) & 0xFFFFFF;

		FUZZ_ASSERT(r->buf[off] == 0);
		if (r->len - off - 4 < mlen)
			break;
		check_response(r->buf + off + 4, mlen);
		off += 4 + mlen;
	}
	memmove(r->buf, r->buf + off, r->len - off);
	r->len -= off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rx rx = { 0 };
	struct srv_conn *c;
	size_t off = 0;
	int sv[2], i, ret;

	atomic_store(&srv->next_session_id, SID_BASE);
	atomic_store(&srv->next_volatile, VOL_BASE);
	reset_share();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		abort();
	if (srv_conn_new(&w, sv[0], &c))
		abort();
	for (i = 0; i < MAX_MSGS && size - off >= 4; i++) {
		size_t n = get_be32(data + off) & 0xFFFFFF;
		uint8_t *msg;

		/* what the TCP transport accepts */
		if (data[off] || n > size - off - 4 || n > c->x->max_msg || !n)
			break;
		msg = malloc(n);
		if (!msg)
			break;
		memcpy(msg, data + off + 4, n);
		ret = srv_process_msg(c, msg, n);
		free(msg);
		drain(sv[1], &rx);
		off += 4 + n;
		if (ret < 0 || c->closing)
			break;
	}
	srv_conn_free(c);
	drain(sv[1], &rx);
	close(sv[1]);
	free(rx.buf);
	/* requests left this thread acting as the guest: be rdaxd again */
	if (srv_ident_enter(NULL))
		abort();
	check_outside();
	return 0;
}
