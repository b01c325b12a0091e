// SPDX-License-Identifier: MIT
/*
 * Session binding against a running rdaxd, on the wire (binding.sh): a
 * second connection of the same client joins a session as a channel
 * ([MS-SMB2] 3.3.5.5.2), and every way a bind must be refused is
 * refused with the status Samba's smbd gives, while the session and
 * the server keep serving.
 *
 * usage: binding HOST PORT SHARE CASE
 *   good      bind, do I/O on the new channel with the first one's tree
 *             and file, drop the first connection, keep working; with
 *             BIND_HOLD=DIR it writes DIR/bound once two channels
 *             exist and waits for DIR/go (the caller looks at rdaxd)
 *   refused   wrong user, unsigned, forged signature, unknown session,
 *             another ClientGuid, SMB 2.1, a second bind on one
 *             connection, a guest session
 *   chanseq   a WRITE with a stale ChannelSequence on another channel
 *             gets STATUS_FILE_NOT_AVAILABLE, a current one succeeds
 *   off       the server has multichannel off: REQUEST_NOT_ACCEPTED
 *
 * BIND_USER/BIND_PW log on, BIND_USER2/BIND_PW2 is another valid user.
 */
#include <sys/stat.h>

#include "rawsmb.h"

static const char *host, *share;
static unsigned int port;
static struct raw_cred user1, user2;
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); nfail++; } while (0)
#define EXPECT(cond, ...) do { if (cond) OK(__VA_ARGS__); else BAD(__VA_ARGS__); } while (0)

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "binding: %s is not set\n", name);
		exit(2);
	}
	return v;
}

/* The first channel: a session with a tree connect. */
static int first_channel(struct raw *a, const struct raw_cred *c)
{
	int ret = raw_session(a, host, port, SMB2_DIALECT_311, c, share);

	if (ret)
		BAD("set-up of the first channel failed (%d)", ret);
	return ret;
}

/* A new connection of a's client (its ClientGuid), negotiated to max. */
static int second_conn(struct raw *b, const struct raw *a, uint16_t max)
{
	if (raw_connect(b, host, port)) {
		BAD("connect for the second channel failed");
		return -1;
	}
	memcpy(b->guid, a->guid, sizeof(b->guid));
	b->guid_set = true;
	if (raw_negotiate(b, max)) {
		BAD("negotiate on the second connection failed");
		return -1;
	}
	return 0;
}

/* Bind b to a's session as c; the status (0 on success). */
static long bind_to(struct raw *b, const struct raw *a, const struct raw_cred *c,
		 bool sign)
{
	long st = raw_logon_bind(b, c, a, sign);

	if (!st)
		b->tid = a->tid;
	return st;
}

static void still_serving(const char *after)
{
	struct raw r;

	if (raw_session(&r, host, port, SMB2_DIALECT_311, &user1, share) ||
	    raw_echo(&r))
		BAD("rdaxd no longer serves a new client after: %s", after);
	raw_close(&r);
}

/* The bytes at off are want (and the file ends there if it says so). */
static bool read_is_at(struct raw *r, const struct smb2_fid *fid, uint64_t off,
		       const char *want, bool to_eof)
{
	char buf[128];
	uint32_t got;
	size_t n = strlen(want);

	if (n >= sizeof(buf) ||
	    raw_read(r, fid, off, buf, to_eof ? sizeof(buf) : (uint32_t)n, &got) ||
	    got != n)
		return false;
	return !memcmp(buf, want, n);
}

static bool read_is(struct raw *r, const struct smb2_fid *fid, uint64_t off,
		    const char *want)
{
	return read_is_at(r, fid, off, want, true);
}

static void hold(void)
{
	const char *dir = getenv("BIND_HOLD");
	char path[512];
	struct stat st;
	FILE *f;
	int i;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/bound", dir);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; i < 300 && stat(path, &st); i++)
		usleep(50000);
}

static void case_good(void)
{
	struct raw a = { .fd = -1 }, b = { .fd = -1 };
	struct smb2_fid fid;
	long st;

	if (first_channel(&a, &user1))
		goto out;
	if (raw_create(&a, "bound.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OVERWRITE_IF, 0, &fid)) {
		BAD("create on the first channel: %s", raw_sname(a.status));
		goto out;
	}
	if (raw_write(&a, &fid, 0, "from channel 1\n", 15))
		BAD("write on the first channel: %s", raw_sname(a.status));
	if (second_conn(&b, &a, SMB2_DIALECT_311))
		goto out;
	st = bind_to(&b, &a, &user1, true);
	if (st) {
		BAD("bind: %s", st > 0 ? raw_sname((uint32_t)st) : strerror((int)-st));
		goto out;
	}
	OK("the second connection is bound to session 0x%llx", (unsigned long long)a.sid);
	EXPECT(b.sid == a.sid, "the bind answers with the session's id");
	EXPECT(read_is(&b, &fid, 0, "from channel 1\n"),
	       "channel 2 reads through the file opened on channel 1");
	EXPECT(!raw_write(&b, &fid, 15, "from channel 2\n", 15),
	       "channel 2 writes the same file (%s)", raw_sname(b.status));
	EXPECT(read_is(&a, &fid, 15, "from channel 2\n"),
	       "channel 1 reads what channel 2 wrote");
	hold();
	raw_close(&a);
	usleep(200000);
	EXPECT(raw_echo(&b) == 0, "the session lives on after the first connection is gone");
	EXPECT(read_is(&b, &fid, 0, "from channel 1\nfrom channel 2\n"),
	       "the open survives the loss of the channel it was made on");
	EXPECT(raw_close_fid(&b, &fid) == 0, "the file closes on channel 2");
	EXPECT(raw_logoff(&b) == 0, "logoff on channel 2");
out:
	raw_close(&a);
	raw_close(&b);
}

static void refused(const char *what, long st, uint32_t want)
{
	if (st == (long)want)
		OK("%s: %s", what, raw_sname(want));
	else
		BAD("%s: %s, not %s", what,
		    st > 0 ? raw_sname((uint32_t)st) : st ? strerror((int)-st) : "bound",
		    raw_sname(want));
}

static void case_refused(void)
{
	struct raw a = { .fd = -1 }, b = { .fd = -1 }, g = { .fd = -1 };
	struct raw_cred guest = { 0 };
	long st;

	if (first_channel(&a, &user1))
		return;

	if (!second_conn(&b, &a, SMB2_DIALECT_311))
		refused("bind as another user", bind_to(&b, &a, &user2, true),
			STATUS_ACCESS_DENIED);
	raw_close(&b);

	if (!second_conn(&b, &a, SMB2_DIALECT_311))
		refused("an unsigned bind", bind_to(&b, &a, &user1, false),
			STATUS_INVALID_PARAMETER);
	raw_close(&b);

	if (!second_conn(&b, &a, SMB2_DIALECT_311)) {
		struct raw forged = a;

		crypto_random(forged.keys.signing, sizeof(forged.keys.signing));
		refused("a bind signed with the wrong key", bind_to(&b, &forged, &user1, true),
			STATUS_ACCESS_DENIED);
	}
	raw_close(&b);

	if (!second_conn(&b, &a, SMB2_DIALECT_311)) {
		struct raw none = a;

		none.sid ^= 0x5a5a000000ull;
		refused("a bind to an unknown session", bind_to(&b, &none, &user1, true),
			STATUS_USER_SESSION_DELETED);
	}
	raw_close(&b);

	if (!raw_connect(&b, host, port) && !raw_negotiate(&b, SMB2_DIALECT_311))
		refused("a bind from another ClientGuid", bind_to(&b, &a, &user1, true),
			STATUS_USER_SESSION_DELETED);
	raw_close(&b);

	if (!second_conn(&b, &a, SMB2_DIALECT_210))
		refused("a bind on an SMB 2.1 connection", bind_to(&b, &a, &user1, true),
			STATUS_REQUEST_NOT_ACCEPTED);
	raw_close(&b);

	if (!second_conn(&b, &a, SMB2_DIALECT_311)) {
		st = bind_to(&b, &a, &user1, true);
		EXPECT(!st, "a good bind");
		if (!st) {
			struct raw again = b;

			/*
			 * The second bind signs with the session's key again;
			 * the connection carries the session already and checks
			 * with its channel's key: refused as Samba refuses it.
			 */
			again.keys = a.keys;
			refused("a second bind on the same connection (signed with the session's key)",
				raw_logon_bind(&b, &user1, &again, true),
				STATUS_ACCESS_DENIED);
		}
	}
	raw_close(&b);

	if (!raw_session(&g, host, port, SMB2_DIALECT_311, &guest, NULL)) {
		if (!second_conn(&b, &g, SMB2_DIALECT_311)) {
			/* a guest has no key: forge one, the server must refuse */
			crypto_random(g.keys.signing, sizeof(g.keys.signing));
			g.have_key = true;
			st = bind_to(&b, &g, &guest, true);
			EXPECT(st > 0, "a bind to an anonymous session is refused (%s)",
			       st > 0 ? raw_sname((uint32_t)st) : "bound");
		}
		raw_close(&b);
	}
	raw_close(&g);

	EXPECT(raw_echo(&a) == 0, "the session answers after the refused binds");
	raw_close(&a);
}

static uint32_t write_seq(struct raw *r, const struct smb2_fid *fid, uint16_t seq,
			  const char *data)
{
	r->chanseq = seq;
	return raw_write(r, fid, 0, data, (uint32_t)strlen(data));
}

static void case_chanseq(void)
{
	struct raw a = { .fd = -1 }, b = { .fd = -1 };
	struct smb2_fid fid;

	if (first_channel(&a, &user1))
		return;
	if (raw_create(&a, "seq.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OVERWRITE_IF, 0, &fid)) {
		BAD("create: %s", raw_sname(a.status));
		goto out;
	}
	if (second_conn(&b, &a, SMB2_DIALECT_311) || bind_to(&b, &a, &user1, true)) {
		BAD("bind for the ChannelSequence case");
		goto out;
	}
	EXPECT(write_seq(&a, &fid, 0, "seq 0\n") == 0, "a WRITE with ChannelSequence 0");
	EXPECT(write_seq(&b, &fid, 1, "seq 1\n") == 0,
	       "a WRITE with ChannelSequence 1 on channel 2 advances the open");
	EXPECT(write_seq(&a, &fid, 0, "stale\n") == STATUS_FILE_NOT_AVAILABLE,
	       "a WRITE with the stale ChannelSequence 0: %s", raw_sname(a.status));
	EXPECT(read_is(&b, &fid, 0, "seq 1\n"), "the stale WRITE changed nothing");
	EXPECT(write_seq(&a, &fid, 1, "seq 1a\n") == 0,
	       "a WRITE with the current ChannelSequence on channel 1");
	EXPECT(write_seq(&a, &fid, 0x8001, "wrap\n") == STATUS_FILE_NOT_AVAILABLE,
	       "a ChannelSequence more than 0x7fff ahead is stale: %s",
	       raw_sname(a.status));
	a.chanseq = 1;
	EXPECT(raw_close_fid(&a, &fid) == 0, "close");
out:
	raw_close(&a);
	raw_close(&b);
}

/*
 * A DAX share over TCP receives a large unsigned WRITE straight into the
 * file's mapping. A stale one must not land there: the file keeps what
 * the current ChannelSequence wrote.
 */
static void case_chanseq_dax(void)
{
	struct raw a = { .fd = -1 };
	struct smb2_fid fid;
	static char blk[128 << 10];
	char want[101];
	int i;

	/* SMB 3.0: no signing, so the WRITE qualifies for placement */
	if (raw_session(&a, host, port, SMB2_DIALECT_300, &user1, share)) {
		BAD("set-up of an SMB 3.0 session failed");
		return;
	}
	EXPECT(!a.sign, "the 3.0 session does not sign");
	if (raw_create(&a, "seqdax.bin", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
		       FILE_OVERWRITE_IF, 0, &fid)) {
		BAD("create: %s", raw_sname(a.status));
		goto out;
	}
	memset(blk, 'A', sizeof(blk));
	a.chanseq = 1;
	/* the DAX store maps growth in steps of 1 MiB */
	for (i = 0; i < 8; i++)
		if (raw_write(&a, &fid, (uint64_t)i * sizeof(blk), blk, sizeof(blk)))
			break;
	EXPECT(i == 8, "1 MiB with ChannelSequence 1 (the file grows, then is mapped)");
	EXPECT(raw_write(&a, &fid, 0, blk, 64 << 10) == 0,
	       "64 KiB more over the mapped range (placed in the mapping)");
	memset(blk, 'B', sizeof(blk));
	a.chanseq = 0;
	EXPECT(raw_write(&a, &fid, 0, blk, 64 << 10) == STATUS_FILE_NOT_AVAILABLE,
	       "a 64 KiB WRITE with the stale ChannelSequence 0: %s",
	       raw_sname(a.status));
	a.chanseq = 1;
	memset(want, 'A', 100);
	want[100] = 0;
	EXPECT(read_is_at(&a, &fid, 0, want, false) &&
	       read_is_at(&a, &fid, (64 << 10) - 100, want, false),
	       "the stale WRITE left the file as it was");
	a.replay = true;
	EXPECT(raw_write(&a, &fid, 0, blk, 64 << 10) == 0,
	       "the same WRITE replayed with the current ChannelSequence goes");
	a.replay = false;
	memset(want, 'B', 100);
	EXPECT(read_is_at(&a, &fid, 0, want, false), "... and lands");
	EXPECT(raw_close_fid(&a, &fid) == 0, "close");
out:
	raw_close(&a);
}

static void case_off(void)
{
	struct raw a = { .fd = -1 }, b = { .fd = -1 };

	if (first_channel(&a, &user1))
		return;
	if (!second_conn(&b, &a, SMB2_DIALECT_311))
		refused("a bind with multichannel off", bind_to(&b, &a, &user1, true),
			STATUS_REQUEST_NOT_ACCEPTED);
	raw_close(&b);
	EXPECT(raw_echo(&a) == 0, "the session answers after the refused bind");
	raw_close(&a);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "good", case_good },
	{ "refused", case_refused },
	{ "chanseq", case_chanseq },
	{ "chanseq-dax", case_chanseq_dax },
	{ "off", case_off },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 5) {
		fprintf(stderr, "usage: binding HOST PORT SHARE good|refused|chanseq|chanseq-dax|off\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	share = argv[3];
	user1.user = env("BIND_USER");
	user1.password = env("BIND_PW");
	user2.user = env("BIND_USER2");
	user2.password = env("BIND_PW2");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[4], cases[i].name))
			break;
	if (i == sizeof(cases) / sizeof(cases[0])) {
		fprintf(stderr, "binding: unknown case %s\n", argv[4]);
		return 2;
	}
	cases[i].run();
	still_serving(argv[4]);
	return nfail ? 1 : 0;
}
