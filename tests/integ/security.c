// SPDX-License-Identifier: MIT
/*
 * Security cases against a running rdaxd, on the wire (security.sh):
 * names that try to leave the share, logons that must fail, unsigned or
 * forged requests where signing is required, replayed MessageIds, and
 * requests on another session's SessionId, TreeId or FileId. Each case
 * prints "ok: ..." or "FAIL: ..." lines, then checks that a new client
 * still logs on; exits 1 on a failure.
 *
 * usage: security HOST PORT CASE
 *   paths    traversal, absolute names, NUL in names, symlinks, renames
 *   guest    a guest tree connect to a share without guest access
 *   logon    wrong, empty and unknown passwords
 *   signing  unsigned and forged requests (server signing = mandatory)
 *   mid      a replayed and a duplicated MessageId
 *   ids      another session's SessionId, TreeId and FileId, on the same
 *            connection and across connections
 *
 * The environment names who and where: SEC_USER/SEC_PW (valid on
 * SEC_SHARE), SEC_USER2/SEC_PW2 (valid on SEC_GSHARE only), SEC_GSHARE
 * (guest ok).
 */
#include <stdarg.h>

#include "rawsmb.h"

static const char *host, *share, *gshare;
static unsigned int port;
static struct raw_cred user1, user2;
static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); nfail++; } while (0)

/* The content of the files security.sh puts in place. */
#define INSIDE_TEXT "inside the share\n"
#define SECRET_TEXT "outside secret\n"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v) {
		fprintf(stderr, "security: %s is not set\n", name);
		exit(2);
	}
	return v;
}

/* Is st one of the statuses in the 0-terminated list? */
static bool one_of(uint32_t st, const uint32_t *list)
{
	for (; *list; list++)
		if (st == *list)
			return true;
	return false;
}

/* A new connection logs on and answers an ECHO. */
static void still_serving(const char *after)
{
	struct raw r;

	if (raw_session(&r, host, port, SMB2_DIALECT_311, &user1, share) ||
	    raw_echo(&r)) {
		BAD("rdaxd no longer serves a new client after: %s", after);
	}
	raw_close(&r);
}

static int session(struct raw *r, uint16_t dialect, const struct raw_cred *c,
		   const char *sh)
{
	int ret = raw_session(r, host, port, dialect, c, sh);

	if (ret)
		BAD("set-up of a session to %s failed (%d)", sh ? sh : "-", ret);
	return ret;
}

/* ---- paths ---- */

static const uint32_t refused_name[] = {
	STATUS_OBJECT_NAME_INVALID, STATUS_OBJECT_PATH_SYNTAX_BAD,
	STATUS_ACCESS_DENIED, STATUS_OBJECT_NAME_NOT_FOUND,
	STATUS_OBJECT_PATH_NOT_FOUND, STATUS_OBJECT_PATH_INVALID,
	STATUS_NOT_A_DIRECTORY, STATUS_INVALID_PARAMETER, 0
};

/* An open of name (for read, or to create/overwrite) must be refused. */
static void must_refuse(struct raw *r, const char *what, const uint8_t *n16,
			size_t nlen, bool write)
{
	struct smb2_fid fid;
	uint32_t st;

	st = raw_create16(r, n16, nlen,
			  write ? FILE_GENERIC_READ | FILE_GENERIC_WRITE : FILE_GENERIC_READ,
			  write ? FILE_OVERWRITE_IF : FILE_OPEN, 0, &fid);
	if (!st) {
		BAD("%s (%s): opened", what, write ? "create" : "read");
		raw_close_fid(r, &fid);
	} else if (one_of(st, refused_name)) {
		OK("%s (%s): %s", what, write ? "create" : "read", raw_sname(st));
	} else {
		BAD("%s (%s): unexpected %s", what, write ? "create" : "read",
		    raw_sname(st));
	}
}

static void refuse_name(struct raw *r, const char *name)
{
	uint8_t n16[1024];
	int n = utf8_to_utf16le(name, n16, sizeof(n16));
	char what[300];

	snprintf(what, sizeof(what), "'%s'", name);
	must_refuse(r, what, n16, (size_t)n, false);
	must_refuse(r, what, n16, (size_t)n, true);
}

/*
 * An absolute-looking name is either refused or taken relative to the
 * share: what it reads is the share's own etc/passwd.
 */
static void inside_or_refused(struct raw *r, const char *name)
{
	struct smb2_fid fid;
	char buf[256];
	uint32_t st, got;

	st = raw_create(r, name, FILE_GENERIC_READ, FILE_OPEN, 0, &fid);
	if (st) {
		if (one_of(st, refused_name))
			OK("absolute '%s': %s", name, raw_sname(st));
		else
			BAD("absolute '%s': unexpected %s", name, raw_sname(st));
		return;
	}
	st = raw_read(r, &fid, 0, buf, sizeof(buf) - 1, &got);
	buf[got] = 0;
	if (!st && !strcmp(buf, INSIDE_TEXT))
		OK("absolute '%s': taken inside the share (reads the share's etc/passwd)",
		   name);
	else
		BAD("absolute '%s': opened something else: %s '%.40s'", name,
		    raw_sname(st), buf);
	raw_close_fid(r, &fid);
}

/* A name with a NUL at byte nul of its UTF-16 form: refused, never cut. */
static void refuse_nul(struct raw *r, const char *before, const char *after)
{
	uint8_t n16[512];
	int a = utf8_to_utf16le(before, n16, sizeof(n16));
	int b;
	char what[200];

	n16[a] = 0;
	n16[a + 1] = 0;
	b = utf8_to_utf16le(after, n16 + a + 2, sizeof(n16) - (size_t)a - 2);
	snprintf(what, sizeof(what), "'%s<NUL>%s'", before, after);
	must_refuse(r, what, n16, (size_t)(a + 2 + b), false);
	must_refuse(r, what, n16, (size_t)(a + 2 + b), true);
}

/* A symlink to outside data: refused, or never the outside file's bytes. */
static void symlink_read(struct raw *r, const char *name)
{
	struct smb2_fid fid;
	char buf[256];
	uint32_t st, got = 0;

	st = raw_create(r, name, FILE_GENERIC_READ, FILE_OPEN, 0, &fid);
	if (st) {
		OK("symlink '%s' (read): %s", name, raw_sname(st));
		return;
	}
	st = raw_read(r, &fid, 0, buf, sizeof(buf) - 1, &got);
	buf[got] = 0;
	if (!st && strstr(buf, "outside"))
		BAD("symlink '%s': read the outside file", name);
	else
		OK("symlink '%s': opened, but no outside data (%s)", name, raw_sname(st));
	raw_close_fid(r, &fid);
}

/* Renames and hard links of an inside file to outside names fail. */
static void refuse_rename(struct raw *r, const char *to, bool link)
{
	struct smb2_fid fid;
	uint32_t st;

	st = raw_create(r, "victim.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE | DELETE_ACCESS,
			FILE_OPEN_IF, FILE_NON_DIRECTORY_FILE, &fid);
	if (st) {
		BAD("cannot open victim.txt: %s", raw_sname(st));
		return;
	}
	st = raw_rename(r, &fid, to, link);
	if (!st)
		BAD("%s to '%s': done", link ? "hard link" : "rename", to);
	else if (one_of(st, refused_name))
		OK("%s to '%s': %s", link ? "hard link" : "rename", to, raw_sname(st));
	else
		BAD("%s to '%s': unexpected %s", link ? "hard link" : "rename", to,
		    raw_sname(st));
	raw_close_fid(r, &fid);
}

static void case_paths(void)
{
	static const char *const escape[] = {
		"..\\outside\\secret.txt", "..\\..\\..\\..\\..\\etc\\passwd",
		"sub\\..\\..\\outside\\secret.txt", "..", "..\\", ".\\..\\outside",
		"\\..\\outside\\secret.txt", "/../outside/secret.txt",
		"sub/../../outside/secret.txt", "C:..\\outside\\secret.txt",
		"C:\\..\\outside\\secret.txt", "..\\outside\\new.txt",
		"link\\secret.txt", "link\\new.txt", "sub\\..\\link\\secret.txt",
		"link\\..\\share\\inside.txt",
	};
	static const char *const absolute[] = {
		"\\etc\\passwd", "/etc/passwd", "\\\\etc\\passwd", "C:\\etc\\passwd",
		"C:etc\\passwd", "\\\\?\\C:\\etc\\passwd", "\\\\localhost\\c$\\etc\\passwd",
	};
	struct smb2_fid fid;
	struct raw r;
	size_t i;
	uint32_t st;

	if (session(&r, SMB2_DIALECT_311, &user1, share))
		return;
	st = raw_create(&r, "inside.txt", FILE_GENERIC_READ, FILE_OPEN, 0, &fid);
	if (st)
		BAD("control: inside.txt cannot be opened: %s", raw_sname(st));
	else
		raw_close_fid(&r, &fid);
	for (i = 0; i < sizeof(escape) / sizeof(escape[0]); i++)
		refuse_name(&r, escape[i]);
	for (i = 0; i < sizeof(absolute) / sizeof(absolute[0]); i++)
		inside_or_refused(&r, absolute[i]);
	refuse_nul(&r, "inside.txt", "");
	refuse_nul(&r, "inside.txt", ".hidden");
	refuse_nul(&r, "nul.txt", "x");
	refuse_nul(&r, "..", "\\outside\\secret.txt");
	refuse_nul(&r, "", "inside.txt");
	symlink_read(&r, "flink");
	symlink_read(&r, "link\\secret.txt");
	refuse_name(&r, "flink");
	refuse_rename(&r, "..\\outside\\moved.txt", false);
	refuse_rename(&r, "\\..\\outside\\moved.txt", false);
	refuse_rename(&r, "link\\moved.txt", false);
	refuse_rename(&r, "..\\outside\\linked.txt", true);
	refuse_rename(&r, "link\\linked.txt", true);
	refuse_rename(&r, "victim.txt\\..\\..\\outside\\moved.txt", false);
	if (raw_echo(&r))
		BAD("the session stopped working after the path cases");
	else
		OK("the session still works after every refused name");
	raw_close(&r);
}

/* ---- guest, logon ---- */

static void case_guest(void)
{
	struct raw r;
	uint32_t st;

	if (session(&r, SMB2_DIALECT_311, NULL, NULL))
		return;
	OK("a guest (anonymous) session is set up%s", r.guest ? " (IS_GUEST/IS_NULL)" : "");
	st = raw_tcon(&r, share);
	if (st == STATUS_ACCESS_DENIED || st == STATUS_LOGON_FAILURE)
		OK("guest tree connect to '%s' (not guest ok): %s", share, raw_sname(st));
	else
		BAD("guest tree connect to '%s': %s", share, raw_sname(st));
	st = raw_tcon(&r, gshare);
	if (st)
		BAD("guest tree connect to '%s' (guest ok): %s", gshare, raw_sname(st));
	else
		OK("the same guest session connects to '%s' (guest ok)", gshare);
	raw_close(&r);

	/* a user the share does not list is refused the same way */
	if (session(&r, SMB2_DIALECT_311, &user2, NULL))
		return;
	st = raw_tcon(&r, share);
	if (st == STATUS_ACCESS_DENIED)
		OK("'%s' (not a valid user of '%s'): %s", user2.user, share, raw_sname(st));
	else
		BAD("'%s' tree connect to '%s': %s", user2.user, share, raw_sname(st));
	raw_close(&r);
}

static void logon_fails(const char *what, const struct raw_cred *c, uint16_t dialect)
{
	struct raw r;
	long st;

	if (raw_connect(&r, host, port) || raw_negotiate(&r, dialect)) {
		BAD("%s: cannot negotiate", what);
		raw_close(&r);
		return;
	}
	st = raw_logon(&r, c);
	if (st == STATUS_LOGON_FAILURE)
		OK("%s: STATUS_LOGON_FAILURE", what);
	else if (st > 0)
		BAD("%s: %s", what, raw_sname((uint32_t)st));
	else
		BAD("%s: %s", what, st ? strerror((int)-st) : "logged on");
	/* the failed session is gone: its SessionId is not usable */
	if (r.sid && raw_echo(&r) == STATUS_SUCCESS && raw_tcon(&r, share) == 0)
		BAD("%s: the failed session's SessionId still connects a tree", what);
	raw_close(&r);
}

static void case_logon(void)
{
	struct raw_cred c = user1;
	char longpw[300];

	c.password = "not the password";
	logon_fails("wrong password", &c, SMB2_DIALECT_311);
	logon_fails("wrong password (SMB 2.1)", &c, SMB2_DIALECT_210);
	c.password = "";
	logon_fails("empty password", &c, SMB2_DIALECT_311);
	memset(longpw, 'x', sizeof(longpw) - 1);
	longpw[sizeof(longpw) - 1] = 0;
	c.password = longpw;
	logon_fails("299-character password", &c, SMB2_DIALECT_311);
	c.password = user2.password;
	logon_fails("another user's password", &c, SMB2_DIALECT_311);
	c = user1;
	c.user = "nosuchuser";
	logon_fails("unknown user", &c, SMB2_DIALECT_311);
	c.password = "";
	logon_fails("unknown user, empty password", &c, SMB2_DIALECT_311);
	still_serving("failed logons");
	OK("the right password still logs on after the failures");
}

/* ---- signing ---- */

/* A CREATE of name on r, signed or not, with the signature spoiled. */
static uint32_t create_signed(struct raw *r, const char *name, bool sign, bool spoil)
{
	struct smb2_create_req c = { 0 };
	uint8_t n16[256], b[1024];
	struct wcur w;
	int n = utf8_to_utf16le(name, n16, sizeof(n16));
	bool was = r->sign;

	c.impersonation = 2;
	c.desired_access = FILE_GENERIC_READ | FILE_GENERIC_WRITE;
	c.share_access = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
	c.disposition = FILE_CREATE;
	c.name.p = n16;
	c.name.len = (uint32_t)n;
	raw_begin(&w, b, sizeof(b));
	smb2_create_req_encode(&w, &c);
	r->sign = sign;
	raw_seal(r, SMB2_CREATE, b, w.off);
	r->sign = was;
	if (spoil)
		b[w.off - 1] ^= 0x55;	/* a byte of the name, after signing */
	if (raw_send(r, b, w.off) || raw_recv(r))
		return STATUS_CONNECTION_DISCONNECTED;
	return r->status;
}

static void case_signing(void)
{
	static const uint16_t dialects[] = { SMB2_DIALECT_210, SMB2_DIALECT_302,
					     SMB2_DIALECT_311 };
	static const char *const dname[] = { "2.1", "3.0.2", "3.1.1" };
	struct raw r;
	uint32_t st;
	char name[64];
	size_t i;
	int k;

	for (i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
		for (k = 0; k < 2; k++) {
			bool spoil = k == 1;

			if (raw_connect(&r, host, port) || raw_negotiate(&r, dialects[i]) ||
			    raw_logon(&r, &user1)) {
				BAD("SMB %s: logon failed", dname[i]);
				raw_close(&r);
				continue;
			}
			r.sign = true;
			if (raw_tcon(&r, share)) {
				BAD("SMB %s: signed tree connect failed: %s", dname[i],
				    raw_sname(r.status));
				raw_close(&r);
				continue;
			}
			snprintf(name, sizeof(name), "signing-%s-%d.txt", dname[i], k);
			st = create_signed(&r, name, spoil, spoil);
			if (st == STATUS_ACCESS_DENIED || st == STATUS_CONNECTION_DISCONNECTED)
				OK("SMB %s: %s CREATE: %s", dname[i],
				   spoil ? "forged (bad signature)" : "unsigned",
				   st == STATUS_ACCESS_DENIED ? "STATUS_ACCESS_DENIED" :
				   "connection dropped");
			else
				BAD("SMB %s: %s CREATE: %s", dname[i],
				    spoil ? "forged" : "unsigned", raw_sname(st));
			if (st != STATUS_CONNECTION_DISCONNECTED) {
				/* the same session, signed, is still served */
				st = create_signed(&r, "signing-ok.txt", true, false);
				if (st && st != STATUS_OBJECT_NAME_COLLISION)
					BAD("SMB %s: a signed CREATE after it: %s", dname[i],
					    raw_sname(st));
			}
			raw_close(&r);
		}
	}
	still_serving("unsigned requests");
}

/* ---- MessageId ---- */

/* A signed WRITE at offset 0 with MessageId mid (the next one: 0). */
static int send_write(struct raw *r, const struct smb2_fid *fid, uint64_t mid,
		      const char *data)
{
	struct smb2_write_req wr = { 0 };
	uint8_t b[256];
	struct wcur w;
	uint64_t next = r->mid;

	wr.fid = *fid;
	wr.length = (uint32_t)strlen(data);
	raw_begin(&w, b, sizeof(b));
	smb2_write_req_encode(&w, &wr);
	wcur_bytes(&w, data, strlen(data));
	if (mid)
		r->mid = mid;
	raw_seal(r, SMB2_WRITE, b, w.off);
	if (mid)
		r->mid = next;
	return raw_send(r, b, w.off);
}

static void read_back(const char *name, const char *want, const char *what)
{
	struct raw q;
	struct smb2_fid fid;
	char buf[64];
	uint32_t got = 0, st;

	if (session(&q, SMB2_DIALECT_311, &user1, share))
		return;
	st = raw_create(&q, name, FILE_GENERIC_READ, FILE_OPEN, 0, &fid);
	if (!st)
		st = raw_read(&q, &fid, 0, buf, sizeof(buf) - 1, &got);
	buf[got] = 0;
	if (!st && !strcmp(buf, want))
		OK("%s: the file holds only the first WRITE ('%s')", what, want);
	else
		BAD("%s: the file holds '%s' (%s)", what, buf, raw_sname(st));
	raw_close(&q);
}

static void case_mid(void)
{
	struct smb2_fid fid;
	struct raw r;
	uint64_t used;
	uint32_t st;
	int ret;

	/* 1. replay: a WRITE with the MessageId of one already answered */
	if (session(&r, SMB2_DIALECT_311, &user1, share))
		return;
	st = raw_create(&r, "mid1.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
			FILE_OVERWRITE_IF, 0, &fid);
	if (st) {
		BAD("cannot create mid1.txt: %s", raw_sname(st));
		raw_close(&r);
		return;
	}
	used = r.mid;
	if (send_write(&r, &fid, 0, "first") || raw_recv(&r) || r.status)
		BAD("the first WRITE failed: %s", raw_sname(r.status));
	ret = send_write(&r, &fid, used, "REPLAY");
	if (!ret)
		ret = raw_recv(&r);
	if (ret == -ECONNRESET || ret == -EPIPE)
		OK("replayed MessageId %llu (a WRITE): connection dropped",
		   (unsigned long long)used);
	else if (!ret && nt_is_error(r.status))
		OK("replayed MessageId %llu (a WRITE): %s", (unsigned long long)used,
		   raw_sname(r.status));
	else
		BAD("replayed MessageId %llu: %s (ret %d)", (unsigned long long)used,
		    raw_sname(r.status), ret);
	raw_close(&r);
	read_back("mid1.txt", "first", "replayed MessageId");

	/* 2. duplicate: two WRITEs with one MessageId, back to back */
	if (session(&r, SMB2_DIALECT_311, &user1, share))
		return;
	st = raw_create(&r, "mid2.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
			FILE_OVERWRITE_IF, 0, &fid);
	if (st) {
		BAD("cannot create mid2.txt: %s", raw_sname(st));
		raw_close(&r);
		return;
	}
	used = r.mid;
	ret = send_write(&r, &fid, 0, "first");
	if (!ret)
		ret = send_write(&r, &fid, used, "DUPLICATE");
	if (!ret)
		ret = raw_recv(&r);
	if (ret || r.status)
		BAD("the first of the two WRITEs failed: %s (ret %d)", raw_sname(r.status), ret);
	ret = raw_recv(&r);
	if (ret == -ECONNRESET || ret == -EPIPE)
		OK("duplicate MessageId %llu (two WRITEs at once): connection dropped",
		   (unsigned long long)used);
	else if (!ret && nt_is_error(r.status))
		OK("duplicate MessageId %llu: %s", (unsigned long long)used,
		   raw_sname(r.status));
	else
		BAD("duplicate MessageId %llu: %s (ret %d)", (unsigned long long)used,
		    raw_sname(r.status), ret);
	raw_close(&r);
	read_back("mid2.txt", "first", "duplicate MessageId");

	/* 3. MessageId 0xFFFFFFFFFFFFFFFF (only for oplock breaks) */
	if (session(&r, SMB2_DIALECT_311, &user1, share))
		return;
	r.mid = ~0ull;
	st = raw_echo(&r);
	if (st == STATUS_CONNECTION_DISCONNECTED || nt_is_error(st))
		OK("MessageId 0xFFFFFFFFFFFFFFFF: %s", st == STATUS_CONNECTION_DISCONNECTED ?
		   "connection dropped" : raw_sname(st));
	else
		BAD("MessageId 0xFFFFFFFFFFFFFFFF: %s", raw_sname(st));
	raw_close(&r);
	still_serving("MessageId cases");
}

/* ---- SessionId, TreeId, FileId ---- */

struct who {
	uint64_t sid;
	uint32_t tid;
	struct smb3_keys keys;
	bool have_key;
};

static void who_save(struct who *o, const struct raw *r)
{
	o->sid = r->sid;
	o->tid = r->tid;
	o->keys = r->keys;
	o->have_key = r->have_key;
}

/* Send as (sid, tid), signed with the keys of as (or unsigned: NULL). */
static void as_who(struct raw *r, uint64_t sid, uint32_t tid, const struct who *as)
{
	r->sid = sid;
	r->tid = tid;
	r->sign = as != NULL;
	if (as) {
		r->keys = as->keys;
		r->have_key = as->have_key;
	}
}

static const uint32_t refused_id[] = {
	STATUS_USER_SESSION_DELETED, STATUS_NETWORK_NAME_DELETED,
	STATUS_ACCESS_DENIED, STATUS_FILE_CLOSED, STATUS_INVALID_HANDLE,
	STATUS_INVALID_PARAMETER, 0
};

static void id_refused(const char *what, uint32_t st)
{
	if (st == STATUS_CONNECTION_DISCONNECTED)
		OK("%s: connection dropped", what);
	else if (one_of(st, refused_id))
		OK("%s: %s", what, raw_sname(st));
	else
		BAD("%s: %s", what, raw_sname(st));
}

/*
 * On r, as (sid, tid) signed by as: a CREATE of a new file name (when
 * given) must be refused (the file must not appear: security.sh checks),
 * and a READ of the victim's FileId (when given) must return nothing.
 */
static void foreign(struct raw *r, const char *where, uint64_t sid, uint32_t tid,
		    const struct who *as, const struct smb2_fid *vfid,
		    const char *name)
{
	char what[200], buf[64];
	uint32_t st, got = 0;

	if (name) {
		as_who(r, sid, tid, as);
		snprintf(what, sizeof(what), "%s: CREATE %s", where, name);
		st = raw_create(r, name, FILE_GENERIC_READ | FILE_GENERIC_WRITE,
				FILE_CREATE, 0, NULL);
		id_refused(what, st);
		if (st == STATUS_CONNECTION_DISCONNECTED)
			raw_close(r);
	}
	if (r->fd < 0 || !vfid)
		return;
	as_who(r, sid, tid, as);
	st = raw_read(r, vfid, 0, buf, sizeof(buf), &got);
	snprintf(what, sizeof(what), "%s: READ of the victim's FileId", where);
	if (!st && got)
		BAD("%s: read %u bytes", what, got);
	else
		id_refused(what, st);
	if (st == STATUS_CONNECTION_DISCONNECTED)
		raw_close(r);
}

/* A new session of user2 on the guest share when r was dropped. */
static int reconnect(struct raw *r, struct who *w)
{
	if (r->fd >= 0)
		return 0;
	if (session(r, SMB2_DIALECT_311, &user2, gshare))
		return -1;
	who_save(w, r);
	return 0;
}

static void case_ids(void)
{
	struct raw a, b;
	struct who va, vb;
	struct smb2_fid fid, bfid;
	uint32_t st, got;
	char buf[64];

	/*
	 * The victim: user1 on share, a file open. TreeIds count from 1 in
	 * each session, so the victim's first tree (the guest share) makes
	 * its tree of share one that the other sessions do not have.
	 */
	if (session(&a, SMB2_DIALECT_311, &user1, gshare))
		return;
	st = raw_tcon(&a, share);
	if (st || a.tid == 1) {
		BAD("victim's second tree connect: %s (TreeId %u)", raw_sname(st), a.tid);
		goto out_a;
	}
	st = raw_create(&a, "inside.txt", FILE_GENERIC_READ, FILE_OPEN, 0, &fid);
	if (st) {
		BAD("victim cannot open inside.txt: %s", raw_sname(st));
		goto out_a;
	}
	who_save(&va, &a);

	/* same connection: a second session (user2 on the guest share) */
	a.sign = false;
	a.have_key = false;
	if (raw_logon(&a, &user2) || raw_tcon(&a, gshare)) {
		BAD("second session on the connection failed: %s", raw_sname(a.status));
		goto out_a;
	}
	who_save(&vb, &a);
	st = raw_create(&a, "b-own.txt", FILE_GENERIC_READ | FILE_GENERIC_WRITE,
			FILE_OVERWRITE_IF, 0, &bfid);
	if (st)
		BAD("second session cannot use its own tree: %s", raw_sname(st));
	foreign(&a, "same connection, own SessionId, victim's TreeId",
		vb.sid, va.tid, &vb, NULL, "ids-1.txt");
	foreign(&a, "same connection, own SessionId and TreeId, victim's FileId",
		vb.sid, vb.tid, &vb, &fid, NULL);
	foreign(&a, "same connection, unknown SessionId",
		va.sid ^ 0x5a5a0000ull, va.tid, NULL, NULL, "ids-3.txt");
	/* the victim's own session is untouched */
	as_who(&a, va.sid, va.tid, &va);
	st = raw_read(&a, &fid, 0, buf, sizeof(buf) - 1, &got);
	if (!st && got == strlen(INSIDE_TEXT))
		OK("the victim's session still reads its open file");
	else
		BAD("the victim's session after the foreign requests: %s", raw_sname(st));

	/* across connections: user2 on its own connection */
	if (session(&b, SMB2_DIALECT_311, &user2, gshare))
		goto out_a;
	who_save(&vb, &b);
	foreign(&b, "other connection, victim's SessionId, unsigned",
		va.sid, va.tid, NULL, &fid, "ids-4.txt");
	if (reconnect(&b, &vb))
		goto out_a;
	foreign(&b, "other connection, victim's SessionId, signed with own key",
		va.sid, va.tid, &vb, &fid, "ids-5.txt");
	if (reconnect(&b, &vb))
		goto out_a;
	foreign(&b, "other connection, victim's SessionId, own TreeId",
		va.sid, vb.tid, &vb, &fid, "ids-6.txt");
	if (reconnect(&b, &vb))
		goto out_a;
	foreign(&b, "other connection, own SessionId, victim's TreeId",
		vb.sid, va.tid, &vb, &fid, "ids-7.txt");
	if (reconnect(&b, &vb))
		goto out_a;
	foreign(&b, "other connection, own SessionId and TreeId, victim's FileId",
		vb.sid, vb.tid, &vb, &fid, NULL);
	raw_close(&b);

	as_who(&a, va.sid, va.tid, &va);
	st = raw_read(&a, &fid, 0, buf, sizeof(buf) - 1, &got);
	if (!st && got == strlen(INSIDE_TEXT))
		OK("the victim's session still reads its open file at the end");
	else
		BAD("the victim's session at the end: %s", raw_sname(st));
out_a:
	raw_close(&a);
	still_serving("foreign ids");
}

int main(int argc, char **argv)
{
	const char *c;

	if (argc != 4) {
		fprintf(stderr, "usage: security HOST PORT CASE\n");
		return 2;
	}
	host = argv[1];
	port = (unsigned int)atoi(argv[2]);
	c = argv[3];
	share = env("SEC_SHARE");
	gshare = env("SEC_GSHARE");
	user1.user = env("SEC_USER");
	user1.password = env("SEC_PW");
	user2.user = env("SEC_USER2");
	user2.password = env("SEC_PW2");
	if (crypto_init())
		return 99;
	if (!strcmp(c, "paths"))
		case_paths();
	else if (!strcmp(c, "guest"))
		case_guest();
	else if (!strcmp(c, "logon"))
		case_logon();
	else if (!strcmp(c, "signing"))
		case_signing();
	else if (!strcmp(c, "mid"))
		case_mid();
	else if (!strcmp(c, "ids"))
		case_ids();
	else {
		fprintf(stderr, "security: unknown case %s\n", c);
		return 2;
	}
	printf("%d failure(s)\n", nfail);
	return nfail ? 1 : 0;
}
