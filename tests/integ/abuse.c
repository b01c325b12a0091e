// SPDX-License-Identifier: MIT
/*
 * Abuse of a running rdaxd's limits, on the wire (tests/integ/limits.sh),
 * and clients that stop in the middle of a transfer (client_killed.sh).
 * Each case prints "ok: ..." or "FAIL: ..." lines and exits 1 on a
 * failure.
 *
 * usage: abuse [-u USER -A PASSWORD_FILE] HOST PORT SHARE CASE [ARG...]
 *   maxconn N      N connections negotiate, the next is closed at once;
 *                  once one closes a new one is served
 *   sessions N     N sessions on one connection, the next is refused
 *                  (REQUEST_NOT_ACCEPTED); after a LOGOFF one more works
 *   opens N        N opens in one session, the next is refused
 *                  (TOO_MANY_OPENED_FILES); a CLOSE frees one; another
 *                  session has its own N
 *   trees          tree connects per session are bounded (1024)
 *   credits        CreditRequest 65535 on every request: what is granted
 *                  and unused never exceeds 8192; the last granted
 *                  MessageId works, the next one closes the connection
 *   compound N     N ECHOs in one compound are all answered, N+1 close
 *                  the connection
 *   slow MODE SECS one slow client: connect (says nothing), header (2 of
 *                  4 frame bytes), body (a part of a message), trickle
 *                  (a NEGOTIATE a byte every 250 ms); must be closed after
 *                  SECS (the receive timeout), not before
 *   patient SECS   a logged-on client idle for 2 x SECS is not closed, and
 *                  a 1 MiB WRITE sent in pieces with pauses of SECS / 2
 *                  is taken
 *   preauth        message sizes: 64 KiB before a session, more after
 *   preauth-null   a null session without a guest share keeps 64 KiB
 *   stall-read FILE N   log on, open FILE, send N 1 MiB READs and never
 *                  read the answers; print "stalled" and wait to be killed
 *   stall-write FILE    log on, open FILE, send half of an 8 MiB WRITE;
 *                  print "stalled" and wait to be killed
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

#include "rawsmb.h"

static const char *host, *share;
static unsigned int port;
static struct raw_cred cred;
static char password[256];
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); nfail++; } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int full_session(struct raw *r)
{
	return raw_session(r, host, port, SMB2_DIALECT_311,
			   cred.user ? &cred : NULL, share);
}

/* ---- maxconn ---- */

static int case_maxconn(int n)
{
	struct raw *c = calloc((size_t)n + 1, sizeof(*c));
	struct raw extra;
	int i, ok = 0;

	if (!c)
		return 1;
	for (i = 0; i < n; i++)
		if (!raw_connect(&c[i], host, port) && !raw_negotiate(&c[i], SMB2_DIALECT_311))
			ok++;
	if (ok == n)
		OK("%d connections negotiate", n);
	else
		BAD("only %d of %d connections negotiate", ok, n);
	if (raw_connect(&extra, host, port)) {
		OK("connection %d refused at connect", n + 1);
	} else {
		int ret = raw_negotiate(&extra, SMB2_DIALECT_311);

		if (ret == -ECONNRESET || ret == -EPIPE)
			OK("connection %d is closed without an answer", n + 1);
		else
			BAD("connection %d was served (negotiate %d)", n + 1, ret);
		raw_close(&extra);
	}
	for (i = 0; i < n; i++)
		if (raw_echo(&c[i]))
			break;
	if (i == n)
		OK("the %d connections still work", n);
	else
		BAD("connection %d of the first %d stopped working", i + 1, n);
	raw_close(&c[0]);
	/* the server notices the close on its worker, then counts it */
	for (i = 0; i < 50; i++) {
		msleep(100);
		if (!raw_connect(&extra, host, port) &&
		    !raw_negotiate(&extra, SMB2_DIALECT_311))
			break;
		raw_close(&extra);
	}
	if (i < 50)
		OK("after one closes, a new connection is served");
	else
		BAD("no new connection served after one closed");
	raw_close(&extra);
	for (i = 1; i < n; i++)
		raw_close(&c[i]);
	free(c);
	return 0;
}

/* ---- sessions ---- */

static int case_sessions(int n)
{
	struct raw r;
	uint64_t *sids = calloc((size_t)n, sizeof(*sids));
	long st = 0;
	int i;

	if (!sids || raw_connect(&r, host, port) || raw_negotiate(&r, SMB2_DIALECT_311)) {
		BAD("cannot connect");
		return 1;
	}
	for (i = 0; i < n; i++) {
		st = raw_logon(&r, cred.user ? &cred : NULL);
		if (st)
			break;
		sids[i] = r.sid;
	}
	if (i == n)
		OK("%d sessions on one connection", n);
	else
		BAD("session %d of %d failed: %ld", i + 1, n, st);
	st = raw_logon(&r, cred.user ? &cred : NULL);
	if (st == STATUS_REQUEST_NOT_ACCEPTED)
		OK("session %d refused: STATUS_REQUEST_NOT_ACCEPTED", n + 1);
	else
		BAD("session %d: %ld (%s), wanted STATUS_REQUEST_NOT_ACCEPTED", n + 1,
		    st, st > 0 ? raw_sname((uint32_t)st) : strerror((int)-st));
	/* the connection and its sessions are intact */
	r.sid = sids[0];
	r.sign = false;
	if (raw_echo(&r) == 0)
		OK("the connection still answers");
	else
		BAD("the connection stopped answering");
	if (cred.user) {
		/* LOGOFF of a keyed session must be signed on 3.1.1: skip that */
		free(sids);
		raw_close(&r);
		return 0;
	}
	if (raw_logoff(&r) == 0 && raw_logon(&r, NULL) == 0)
		OK("after a LOGOFF a new session is set up");
	else
		BAD("no new session after a LOGOFF (%s)", raw_sname(r.status));
	free(sids);
	raw_close(&r);
	return 0;
}

/* ---- opens ---- */

static int case_opens(int n)
{
	struct smb2_fid *f = calloc((size_t)n + 1, sizeof(*f)), g;
	struct raw r, r2;
	uint32_t st = 0;
	int i;

	if (!f || full_session(&r)) {
		BAD("cannot set up a session");
		return 1;
	}
	for (i = 0; i < n; i++) {
		st = raw_create(&r, "opens.dat", FILE_GENERIC_READ, FILE_OPEN_IF, 0, &f[i]);
		if (st)
			break;
	}
	if (i == n)
		OK("%d opens in one session", n);
	else
		BAD("open %d of %d failed: %s", i + 1, n, raw_sname(st));
	st = raw_create(&r, "opens.dat", FILE_GENERIC_READ, FILE_OPEN_IF, 0, &g);
	if (st == STATUS_TOO_MANY_OPENED_FILES)
		OK("open %d refused: STATUS_TOO_MANY_OPENED_FILES", n + 1);
	else
		BAD("open %d: %s, wanted STATUS_TOO_MANY_OPENED_FILES", n + 1, raw_sname(st));
	if (full_session(&r2) == 0 &&
	    raw_create(&r2, "opens.dat", FILE_GENERIC_READ, FILE_OPEN_IF, 0, &g) == 0)
		OK("another session still opens files");
	else
		BAD("another session cannot open a file (%s)", raw_sname(r2.status));
	raw_close(&r2);
	if (raw_close_fid(&r, &f[0]) == 0 &&
	    raw_create(&r, "opens.dat", FILE_GENERIC_READ, FILE_OPEN_IF, 0, &g) == 0)
		OK("after a CLOSE the session opens one more");
	else
		BAD("no open after a CLOSE (%s)", raw_sname(r.status));
	raw_close(&r);
	free(f);
	return 0;
}

/* ---- trees ---- */

static int case_trees(void)
{
	struct raw r;
	uint32_t st = 0;
	int i;

	if (full_session(&r)) {
		BAD("cannot set up a session");
		return 1;
	}
	/* one tree exists already */
	for (i = 1; i < 1024; i++) {
		st = raw_tcon(&r, share);
		if (st)
			break;
	}
	if (i == 1024)
		OK("1024 tree connects in one session");
	else
		BAD("tree connect %d failed: %s", i + 1, raw_sname(st));
	st = raw_tcon(&r, share);
	if (st == STATUS_REQUEST_NOT_ACCEPTED)
		OK("tree connect 1025 refused: STATUS_REQUEST_NOT_ACCEPTED");
	else
		BAD("tree connect 1025: %s", raw_sname(st));
	if (raw_echo(&r) == 0)
		OK("the session still answers");
	else
		BAD("the session stopped answering");
	raw_close(&r);
	return 0;
}

/* ---- credits ---- */

static int case_credits(void)
{
	struct raw r;
	int64_t avail, max_avail = 0;
	uint64_t used = 0, top;
	uint32_t st;
	int i;

	if (raw_connect(&r, host, port)) {
		BAD("cannot connect");
		return 1;
	}
	r.credit_req = 65535;
	if (raw_negotiate(&r, SMB2_DIALECT_311) ||
	    raw_logon(&r, cred.user ? &cred : NULL) || raw_tcon(&r, share)) {
		BAD("cannot log on asking for 65535 credits");
		return 1;
	}
	/*
	 * The requests so far each used one credit (NEGOTIATE included);
	 * a connection starts with one credit nobody granted.
	 */
	used = r.mid - 1;
	for (i = 0; i < 20; i++) {
		if (raw_echo(&r)) {
			BAD("ECHO %d failed", i);
			return 1;
		}
		used++;
		avail = (int64_t)r.granted_total - (int64_t)used;
		if (avail > max_avail)
			max_avail = avail;
		if (r.granted > 8192)
			BAD("one response granted %u credits", r.granted);
	}
	if (max_avail <= 8192 && max_avail >= 1)
		OK("asking for 65535 credits each time: at most %lld granted and unused (limit 8192)",
		   (long long)max_avail);
	else
		BAD("%lld credits granted and unused, above the 8192 limit",
		    (long long)max_avail);
	/* the window is [r.mid, r.mid + avail): its last MessageId works */
	avail = (int64_t)r.granted_total - (int64_t)used;
	top = r.mid + (uint64_t)avail - 1;
	r.mid = top;
	r.credit_req = 0;
	if (raw_echo(&r) == 0)
		OK("the last granted MessageId (%llu) is served", (unsigned long long)top);
	else
		BAD("the last granted MessageId (%llu) was refused", (unsigned long long)top);
	/* it granted one more (CreditRequest 0 gets 1): the window ends there */
	r.mid = top + 1 + r.granted;
	st = raw_echo(&r);
	if (st == STATUS_CONNECTION_DISCONNECTED)
		OK("a MessageId past the granted window closes the connection");
	else
		BAD("a MessageId past the window was answered (%s)", raw_sname(st));
	raw_close(&r);
	return 0;
}

/* ---- compound ---- */

static int compound(struct raw *r, int n)
{
	uint8_t *b = calloc((size_t)n, 72);
	size_t off;
	int i, got = 0, ret;

	if (!b)
		return -ENOMEM;
	for (i = 0, off = 0; i < n; i++, off += 72) {
		struct smb2_hdr h = { 0 };

		h.command = SMB2_ECHO;
		h.message_id = r->mid++;
		h.session_id = r->sid;
		h.credits = 64;
		h.credit_charge = 1;
		h.next_command = i + 1 < n ? 72 : 0;
		smb2_hdr_encode(b + off, &h);
		put_le16(b + off + 64, 4);
	}
	ret = raw_send(r, b, (size_t)n * 72);
	free(b);
	if (ret)
		return ret;
	ret = raw_recv(r);
	if (ret)
		return ret;
	for (off = 0;;) {
		size_t next = get_le32(r->rx + off + 20);

		if (get_le16(r->rx + off + 12) == SMB2_ECHO && !get_le32(r->rx + off + 8))
			got++;
		if (!next || off + next + SMB2_HDR_SIZE > r->rx_len)
			break;
		off += next;
	}
	return got;
}

static int case_compound(int n)
{
	struct raw r;
	int got, i;

	if (full_session(&r)) {
		BAD("cannot set up a session");
		return 1;
	}
	for (i = 0; i < 4; i++)
		raw_echo(&r);		/* credits for the chains */
	r.sign = false;			/* ECHO needs no signature */
	got = compound(&r, n);
	if (got == n)
		OK("a compound of %d ECHOs: %d answers in one response", n, got);
	else
		BAD("a compound of %d ECHOs: %d answers", n, got);
	got = compound(&r, n + 1);
	if (got == -ECONNRESET)
		OK("a compound of %d ECHOs closes the connection", n + 1);
	else
		BAD("a compound of %d ECHOs: %d", n + 1, got);
	raw_close(&r);
	return 0;
}

/* ---- slow clients ---- */

static int case_slow(const char *mode, int secs)
{
	struct smb2_negotiate_req n = { 0 };
	uint8_t b[1024], fr[4];
	struct raw r;
	struct wcur w;
	double t0, dt;
	size_t len, i;
	char c;

	if (raw_connect(&r, host, port)) {
		BAD("cannot connect");
		return 1;
	}
	t0 = now_s();
	if (!strcmp(mode, "header")) {
		if (write(r.fd, "\0\0", 2) != 2)
			BAD("send failed");
	} else if (!strcmp(mode, "body")) {
		memset(b, 0, sizeof(b));
		put_be32(b, 200);
		memcpy(b + 4, "\xfeSMB", 4);
		if (write(r.fd, b, 54) != 54)
			BAD("send failed");
	} else if (!strcmp(mode, "trickle")) {
		n.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
		n.dialects[n.ndialects++] = SMB2_DIALECT_311;
		crypto_random(n.ctx.salt, 32);
		raw_begin(&w, b, sizeof(b));
		smb2_negotiate_req_encode(&w, &n);
		raw_seal(&r, SMB2_NEGOTIATE, b, w.off);
		len = w.off;
		put_be32(fr, (uint32_t)len);
		if (write(r.fd, fr, 4) != 4)
			BAD("send failed");
		/* a byte every 250 ms: progress, but the message takes minutes */
		for (i = 0; i < len; i++) {
			struct pollfd p = { .fd = r.fd, .events = POLLIN };

			if (poll(&p, 1, 250) > 0)
				break;		/* closed (or answered: checked below) */
			if (send(r.fd, b + i, 1, MSG_NOSIGNAL) != 1)
				break;
		}
	} else if (strcmp(mode, "connect")) {
		BAD("unknown slow mode %s", mode);
		return 1;
	}
	/* wait for the hang-up */
	for (;;) {
		struct pollfd p = { .fd = r.fd, .events = POLLIN };
		ssize_t got;

		if (poll(&p, 1, (secs + 10) * 1000) <= 0) {
			BAD("%s: still open after %d s (receive timeout %d s)", mode,
			    secs + 10, secs);
			raw_close(&r);
			return 1;
		}
		got = recv(r.fd, &c, 1, 0);
		if (got <= 0)
			break;
		BAD("%s: the server answered a message that took too long", mode);
		raw_close(&r);
		return 1;
	}
	dt = now_s() - t0;
	if (dt >= secs - 0.5 && dt <= secs + 3)
		OK("%s: closed after %.1f s (receive timeout %d s)", mode, dt, secs);
	else
		BAD("%s: closed after %.1f s, receive timeout %d s", mode, dt, secs);
	raw_close(&r);
	return 0;
}

/* A logged-on client: idle 2 x SECS, then a WRITE sent with pauses. */
static int case_patient(int secs)
{
	enum { LEN = 1 << 20, PIECES = 4 };
	struct smb2_write_req wr = { 0 };
	struct smb2_fid fid;
	uint8_t fr[4], *b;
	struct raw r;
	struct wcur w;
	size_t len, off, piece;
	int i;

	if (full_session(&r) ||
	    raw_create(&r, "patient.dat", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OVERWRITE_IF, 0, &fid)) {
		BAD("cannot set up a session");
		return 1;
	}
	sleep((unsigned int)secs * 2);
	if (raw_echo(&r) == 0)
		OK("a session idle for %d s is kept (receive timeout %d s)", 2 * secs, secs);
	else
		BAD("a session idle for %d s was closed", 2 * secs);
	b = malloc(SMB2_HDR_SIZE + 64 + LEN);
	if (!b)
		return 1;
	wr.fid = fid;
	wr.length = LEN;
	raw_begin(&w, b, SMB2_HDR_SIZE + 64 + LEN);
	smb2_write_req_encode(&w, &wr);
	for (i = 0; i < LEN; i++)
		wcur_u8(&w, (uint8_t)(i * 7));
	r.charge = smb2_credit_charge_for(LEN);
	raw_seal(&r, SMB2_WRITE, b, w.off);
	len = w.off;
	put_be32(fr, (uint32_t)len);
	if (write(r.fd, fr, 4) != 4)
		BAD("send failed");
	piece = len / PIECES + 1;
	for (off = 0; off < len; off += piece) {
		size_t k = len - off < piece ? len - off : piece;

		if (off)
			msleep(secs * 1000 / 2);
		if (send(r.fd, b + off, k, MSG_NOSIGNAL) != (ssize_t)k)
			break;
	}
	free(b);
	if (raw_recv(&r) == 0 && r.status == 0)
		OK("a 1 MiB WRITE sent in %d pieces %d ms apart (%.1f s) is taken",
		   PIECES, secs * 500, (PIECES - 1) * secs / 2.0);
	else
		BAD("the slow WRITE failed (%s)", raw_sname(r.status));
	raw_close(&r);
	return 0;
}

/* ---- message size before authentication ---- */

/* Send a frame of len bytes: a NEGOTIATE, zero padded. */
static int big_negotiate(struct raw *r, size_t len)
{
	struct smb2_negotiate_req n = { 0 };
	uint8_t *b = calloc(1, len);
	struct wcur w;
	int ret;

	if (!b)
		return -ENOMEM;
	n.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED;
	n.dialects[n.ndialects++] = SMB2_DIALECT_311;
	crypto_random(n.ctx.salt, 32);
	n.ctx.ciphers[n.ctx.ncipher++] = SMB2_CIPHER_AES128_GCM;
	raw_begin(&w, b, len);
	smb2_negotiate_req_encode(&w, &n);
	raw_seal(r, SMB2_NEGOTIATE, b, len);
	ret = raw_send(r, b, len);
	free(b);
	if (ret)
		return ret == -EPIPE ? -ECONNRESET : ret;
	return raw_recv(r);
}

/* SESSION_SETUP carrying a security blob of len bytes of junk. */
static int big_sess_setup(struct raw *r, size_t len)
{
	struct smb2_sess_setup_req s = { 0 };
	uint8_t *blob = calloc(1, len), *b = malloc(len + 256);
	struct wcur w;
	int ret;

	if (!blob || !b)
		return -ENOMEM;
	memcpy(blob, "NTLMSSP", 8);
	s.security.p = blob;
	s.security.len = (uint32_t)len;
	raw_begin(&w, b, len + 256);
	smb2_sess_setup_req_encode(&w, &s);
	ret = raw_xchg(r, SMB2_SESSION_SETUP, b, w.off);
	free(blob);
	free(b);
	return ret == -EPIPE ? -ECONNRESET : ret;
}

static int case_preauth(void)
{
	struct smb2_fid fid;
	struct raw r;
	uint8_t *data;
	int ret;

	/* a NEGOTIATE of exactly 64 KiB is read and answered */
	raw_connect(&r, host, port);
	ret = big_negotiate(&r, 64 * 1024);
	if (!ret && !r.status)
		OK("a 64 KiB NEGOTIATE is answered");
	else
		BAD("a 64 KiB NEGOTIATE: %d %s", ret, raw_sname(r.status));
	raw_close(&r);
	/* one byte more closes the connection unread */
	raw_connect(&r, host, port);
	ret = big_negotiate(&r, 64 * 1024 + 1);
	if (ret == -ECONNRESET)
		OK("a 64 KiB + 1 NEGOTIATE closes the connection");
	else
		BAD("a 64 KiB + 1 NEGOTIATE: %d %s", ret, raw_sname(r.status));
	raw_close(&r);
	/* after NEGOTIATE, before a session: the same */
	raw_connect(&r, host, port);
	raw_negotiate(&r, SMB2_DIALECT_311);
	ret = big_sess_setup(&r, 128 * 1024);
	if (ret == -ECONNRESET)
		OK("a 128 KiB SESSION_SETUP before any session closes the connection");
	else
		BAD("a 128 KiB SESSION_SETUP: %d %s", ret, raw_sname(r.status));
	raw_close(&r);
	/* a session lifts it: a 1 MiB WRITE */
	if (full_session(&r) ||
	    raw_create(&r, "preauth.dat", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OVERWRITE_IF, 0, &fid)) {
		BAD("cannot set up a session");
		return 1;
	}
	data = calloc(1, 1 << 20);
	if (data && raw_write(&r, &fid, 0, data, 1 << 20) == 0)
		OK("after logon a 1 MiB WRITE is taken");
	else
		BAD("after logon a 1 MiB WRITE: %s", raw_sname(r.status));
	free(data);
	raw_close(&r);
	return 0;
}

/* A null session where no share lets guests in keeps the 64 KiB limit. */
static int case_preauth_null(void)
{
	uint8_t b[256];
	struct raw r;
	struct wcur w;
	uint8_t *big;
	long st;
	int ret;

	if (raw_connect(&r, host, port) || raw_negotiate(&r, SMB2_DIALECT_311)) {
		BAD("cannot connect");
		return 1;
	}
	st = raw_logon(&r, NULL);
	if (st) {
		OK("a null session is refused here (%s)", raw_sname((uint32_t)st));
		raw_close(&r);
		return 0;
	}
	OK("a null session is set up");
	/* an ECHO padded to 128 KiB: over the unauthenticated limit */
	big = calloc(1, 128 * 1024);
	if (!big)
		return 1;
	raw_begin(&w, b, sizeof(b));
	smb2_simple_encode(&w);
	memcpy(big, b, w.off);
	raw_seal(&r, SMB2_ECHO, big, 128 * 1024);
	ret = raw_send(&r, big, 128 * 1024);
	if (!ret)
		ret = raw_recv(&r);
	free(big);
	if (ret == -ECONNRESET || ret == -EPIPE)
		OK("a 128 KiB message on a null session closes the connection");
	else
		BAD("a 128 KiB message on a null session: %d %s", ret, raw_sname(r.status));
	raw_close(&r);
	return 0;
}

/* ---- clients that stop mid-transfer ---- */

static void stalled(void)
{
	printf("stalled\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int case_stall_read(const char *file, int n)
{
	struct smb2_read_req rd = { 0 };
	struct smb2_fid fid;
	uint8_t b[256];
	struct raw r;
	struct wcur w;
	int i;

	if (full_session(&r) ||
	    raw_create(&r, file, FILE_GENERIC_READ, FILE_OPEN, 0, &fid)) {
		BAD("cannot open %s", file);
		return 1;
	}
	/* enough credits for n 1 MiB READs (16 each) */
	r.credit_req = 1024;
	for (i = 0; i < 4; i++)
		raw_echo(&r);
	for (i = 0; i < n; i++) {
		rd.fid = fid;
		rd.offset = (uint64_t)i << 20;
		rd.length = 1 << 20;
		raw_begin(&w, b, sizeof(b));
		smb2_read_req_encode(&w, &rd);
		r.charge = 16;
		raw_seal(&r, SMB2_READ, b, w.off);
		if (raw_send(&r, b, w.off)) {
			BAD("send of READ %d failed", i);
			return 1;
		}
	}
	/* answers pile up in the server's socket: nothing is read */
	stalled();
	return 0;
}

static int case_stall_write(const char *file)
{
	enum { LEN = 8 << 20 };
	struct smb2_write_req wr = { 0 };
	struct smb2_fid fid;
	uint8_t *b, fr[4];
	struct raw r;
	struct wcur w;
	int i;

	if (full_session(&r) ||
	    raw_create(&r, file, FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OPEN_IF, 0, &fid)) {
		BAD("cannot open %s", file);
		return 1;
	}
	r.credit_req = 512;
	for (i = 0; i < 4; i++)
		raw_echo(&r);
	b = malloc(SMB2_HDR_SIZE + 64 + LEN);
	if (!b)
		return 1;
	wr.fid = fid;
	wr.length = LEN;
	raw_begin(&w, b, SMB2_HDR_SIZE + 64 + LEN);
	smb2_write_req_encode(&w, &wr);
	for (i = 0; i < LEN / 2; i++)
		wcur_u8(&w, (uint8_t)i);
	r.charge = smb2_credit_charge_for(LEN);
	raw_seal(&r, SMB2_WRITE, b, SMB2_HDR_SIZE + 48 + LEN);
	put_be32(fr, SMB2_HDR_SIZE + 48 + LEN);
	/* the frame says 8 MiB; half of the payload follows */
	if (write(r.fd, fr, 4) != 4 ||
	    send(r.fd, b, w.off, MSG_NOSIGNAL) != (ssize_t)w.off) {
		BAD("send failed");
		return 1;
	}
	free(b);
	stalled();
	return 0;
}

int main(int argc, char **argv)
{
	const char *pwfile = NULL, *cs;
	int o, fd;
	ssize_t n;

	while ((o = getopt(argc, argv, "u:A:")) != -1) {
		if (o == 'u')
			cred.user = optarg;
		else if (o == 'A')
			pwfile = optarg;
		else
			return 2;
	}
	if (argc - optind < 4) {
		fprintf(stderr, "usage: abuse [-u USER -A PASSWORD_FILE] HOST PORT SHARE CASE [ARG...]\n");
		return 2;
	}
	if (pwfile) {
		fd = open(pwfile, O_RDONLY);
		n = fd >= 0 ? read(fd, password, sizeof(password) - 1) : -1;
		if (n <= 0)
			return 2;
		password[n] = 0;
		password[strcspn(password, "\r\n")] = 0;
		cred.password = password;
		close(fd);
	}
	host = argv[optind];
	port = (unsigned int)atoi(argv[optind + 1]);
	share = argv[optind + 2];
	cs = argv[optind + 3];
	argv += optind + 4;
	argc -= optind + 4;
	signal(SIGPIPE, SIG_IGN);
	if (crypto_init())
		return 99;
	if (!strcmp(cs, "maxconn") && argc == 1)
		case_maxconn(atoi(argv[0]));
	else if (!strcmp(cs, "sessions") && argc == 1)
		case_sessions(atoi(argv[0]));
	else if (!strcmp(cs, "opens") && argc == 1)
		case_opens(atoi(argv[0]));
	else if (!strcmp(cs, "trees"))
		case_trees();
	else if (!strcmp(cs, "credits"))
		case_credits();
	else if (!strcmp(cs, "compound") && argc == 1)
		case_compound(atoi(argv[0]));
	else if (!strcmp(cs, "slow") && argc == 2)
		case_slow(argv[0], atoi(argv[1]));
	else if (!strcmp(cs, "patient") && argc == 1)
		case_patient(atoi(argv[0]));
	else if (!strcmp(cs, "preauth"))
		case_preauth();
	else if (!strcmp(cs, "preauth-null"))
		case_preauth_null();
	else if (!strcmp(cs, "stall-read") && argc == 2)
		case_stall_read(argv[0], atoi(argv[1]));
	else if (!strcmp(cs, "stall-write") && argc == 1)
		case_stall_write(argv[0]);
	else {
		fprintf(stderr, "abuse: unknown case or arguments: %s\n", cs);
		return 2;
	}
	return nfail ? 1 : 0;
}
