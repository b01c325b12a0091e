// SPDX-License-Identifier: MIT
/*
 * CHANGE_NOTIFY on the wire (tests/integ/notify.sh): the interim
 * response and its completion, changes queued between two requests,
 * SMB2_WATCH_TREE (directories there before and made after), CANCEL,
 * the close of the handle (STATUS_NOTIFY_CLEANUP), a buffer too small
 * and a flood (STATUS_NOTIFY_ENUM_DIR), tree disconnect.
 *
 * usage: notify_raw HOST PORT SHARE LOCALDIR
 * LOCALDIR is the share's directory: changes are made there by this
 * process, as a local program would, and the server must see them.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "rawsmb.h"

static int fails;
static const char *root;
static const char *never;		/* a name no answer may carry */
static bool never_seen;

#define CHECK(cond, ...) do { \
	if (cond) { \
		printf("ok: "); printf(__VA_ARGS__); printf("\n"); \
	} else { \
		fails++; printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); \
	} \
	fflush(stdout); \
} while (0)

#define ALL_NAMES (FILE_NOTIFY_CHANGE_FILE_NAME | FILE_NOTIFY_CHANGE_DIR_NAME)

static void local_file(const char *rel)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
}

static void local_dir(const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	mkdir(p, 0777);
	chmod(p, 0777);
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Send a CHANGE_NOTIFY; its MessageId in *mid. */
static int notify_send(struct raw *r, const struct smb2_fid *fid, uint16_t flags,
		       uint32_t filter, uint32_t out_len, uint64_t *mid)
{
	struct smb2_notify_req n = { .flags = flags, .output_len = out_len,
				     .fid = *fid, .filter = filter };
	uint8_t b[256];
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	smb2_notify_req_encode(&w, &n);
	*mid = r->mid;
	raw_seal(r, SMB2_CHANGE_NOTIFY, b, w.off);
	return raw_send(r, b, w.off);
}

/* The next message as it comes (interim ones too): its status, or -1. */
static long recv_any(struct raw *r, int ms, uint64_t *async_id, uint16_t *cmd)
{
	long n = tcp_recv_msg(r->fd, &r->rx, &r->rx_cap, 32u << 20, ms);

	if (n < SMB2_HDR_SIZE)
		return -1;
	r->rx_len = (size_t)n;
	r->status = get_le32(r->rx + 8);
	if (cmd)
		*cmd = get_le16(r->rx + 12);
	if (async_id)
		*async_id = get_le32(r->rx + 16) & SMB2_FLAGS_ASYNC_COMMAND ?
			    get_le64(r->rx + 32) : 0;
	return r->status;
}

/* Does the last response list action on name (ASCII, '\' separated)? */
static bool lists(struct raw *r, uint32_t want_action, const char *want)
{
	struct smb2_buf out;
	const uint8_t *name;
	uint32_t action, n;
	size_t off = 0;
	char u8[1024];

	if (r->status || smb2_out_buf_rsp_decode(r->rx, r->rx_len, &out))
		return false;
	do {
		if (fscc_notify_decode(out.p, out.len, &off, &action, &name, &n))
			return false;
		if (utf16le_to_utf8(name, n, u8, sizeof(u8)) < 0)
			return false;
		if (never && !strcmp(u8, never))
			never_seen = true;
		if (action == want_action && !strcmp(u8, want))
			return true;
	} while (off);
	return false;
}

/* Requests on fid until one lists (action, name) or time runs out. */
static bool sees(struct raw *r, const struct smb2_fid *fid, uint16_t flags, uint32_t filter,
		 uint32_t action, const char *name)
{
	uint64_t mid, aid;
	int i;

	for (i = 0; i < 20; i++) {
		if (notify_send(r, fid, flags, filter, 65536, &mid))
			return false;
		do {
			if (recv_any(r, 3000, &aid, NULL) < 0)
				return false;
		} while (r->status == STATUS_PENDING);
		if (lists(r, action, name))
			return true;
	}
	return false;
}

static void send_cancel(struct raw *r, uint64_t mid, uint64_t async_id)
{
	uint8_t b[SMB2_HDR_SIZE + 4];
	uint64_t next = r->mid;
	struct wcur w;

	raw_begin(&w, b, sizeof(b));
	wcur_le16(&w, 4);
	wcur_le16(&w, 0);
	raw_seal(r, SMB2_CANCEL, b, w.off);
	r->mid = next;			/* a CANCEL takes no MessageId of its own */
	put_le64(b + 24, mid);
	put_le32(b + 16, get_le32(b + 16) | SMB2_FLAGS_ASYNC_COMMAND);
	put_le64(b + 32, async_id);
	raw_send(r, b, w.off);
}

static void open_dir(struct raw *r, const char *name, struct smb2_fid *fid)
{
	uint32_t st = raw_create(r, name, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES, 3 /* open_if */,
				 1 /* FILE_DIRECTORY_FILE */, fid);

	if (st) {
		printf("FAIL: open %s: %s\n", name, raw_sname(st));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct raw_cred anon = { 0 };
	struct smb2_fid fid, tfid, sfid;
	struct raw r;
	uint64_t mid, aid = 0;
	uint16_t cmd;
	long st;
	int i, got_cleanup = 0, got_close = 0;
	char name[64];

	if (argc != 5) {
		fprintf(stderr, "usage: notify_raw HOST PORT SHARE LOCALDIR\n");
		return 2;
	}
	root = argv[4];
	if (raw_session(&r, argv[1], (unsigned int)atoi(argv[2]), SMB2_DIALECT_311, &anon, argv[3])) {
		printf("FAIL: no session\n");
		return 1;
	}
	local_dir("w");
	local_dir("w/a");
	open_dir(&r, "w", &fid);

	/* an interim response, then the change a local process made */
	notify_send(&r, &fid, 0, ALL_NAMES, 4096, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	CHECK(st == STATUS_PENDING && aid, "CHANGE_NOTIFY goes async (interim %s, AsyncId %llu)",
	      st < 0 ? "none" : raw_sname((uint32_t)st), (unsigned long long)aid);
	local_file("w/f1");
	st = recv_any(&r, 3000, &aid, NULL);
	CHECK(st == 0 && aid && lists(&r, FILE_ACTION_ADDED, "f1"),
	      "... completes with FILE_ACTION_ADDED f1 (%s)", st < 0 ? "nothing" : raw_sname((uint32_t)st));

	/* changes between two requests wait for the next one */
	local_file("w/f2");
	local_file("w/f3");
	pause_ms(300);
	notify_send(&r, &fid, 0, ALL_NAMES, 4096, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	CHECK(st == 0 && lists(&r, FILE_ACTION_ADDED, "f2") && lists(&r, FILE_ACTION_ADDED, "f3"),
	      "changes queued between requests come at once (%s)",
	      st < 0 ? "nothing" : raw_sname((uint32_t)st));

	/* a rename is an old and a new name */
	{
		char a[4096], b[4096];

		snprintf(a, sizeof(a), "%s/w/f3", root);
		snprintf(b, sizeof(b), "%s/w/f4", root);
		rename(a, b);
	}
	CHECK(sees(&r, &fid, 0, ALL_NAMES, FILE_ACTION_RENAMED_OLD_NAME, "f3") &&
	      lists(&r, FILE_ACTION_RENAMED_NEW_NAME, "f4"), "a rename: RENAMED_OLD_NAME f3, NEW_NAME f4");

	/* CANCEL */
	notify_send(&r, &fid, 0, ALL_NAMES, 4096, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	send_cancel(&r, mid, aid);
	st = recv_any(&r, 3000, NULL, NULL);
	CHECK(st == (long)STATUS_CANCELLED, "CANCEL by AsyncId: %s", st < 0 ? "nothing" : raw_sname((uint32_t)st));

	/* a buffer too small for what happened */
	notify_send(&r, &fid, 0, ALL_NAMES, 8, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	local_file("w/a-name-longer-than-the-buffer");
	st = recv_any(&r, 3000, NULL, NULL);
	CHECK(st == (long)STATUS_NOTIFY_ENUM_DIR, "OutputBufferLength 8: %s",
	      st < 0 ? "nothing" : raw_sname((uint32_t)st));

	/* a flood: the queue is bounded, the answer is "enumerate" */
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "w/flood%04d", i);
		local_file(name);
	}
	pause_ms(500);
	notify_send(&r, &fid, 0, ALL_NAMES, 65536, &mid);
	st = recv_any(&r, 3000, NULL, NULL);
	CHECK(st == (long)STATUS_NOTIFY_ENUM_DIR, "3000 creates queued: %s",
	      st < 0 ? "nothing" : raw_sname((uint32_t)st));
	local_file("w/after-flood");
	CHECK(sees(&r, &fid, 0, ALL_NAMES, FILE_ACTION_ADDED, "after-flood"),
	      "... and the next change is reported again");

	/* SMB2_WATCH_TREE: a directory there before, one made after, deeper */
	open_dir(&r, "w", &tfid);
	notify_send(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, 65536, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	local_file("w/a/in-a");
	st = recv_any(&r, 3000, &aid, NULL);
	CHECK(lists(&r, FILE_ACTION_ADDED, "a\\in-a") ||
	      sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "a\\in-a"),
	      "WATCH_TREE: a file made in a subdirectory (a\\in-a)");
	local_dir("w/b");
	CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "b"),
	      "WATCH_TREE: a new subdirectory (b)");
	local_dir("w/b/c");
	CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "b\\c"),
	      "WATCH_TREE: in the new subdirectory (b\\c)");
	pause_ms(200);
	local_file("w/b/c/deep");
	CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "b\\c\\deep"),
	      "WATCH_TREE: two levels down in what was made after (b\\c\\deep)");
	/* a directory the session's user may not list is not watched */
	{
		char p[4096];

		snprintf(p, sizeof(p), "%s/w/secret", root);
		mkdir(p, 0700);
		chmod(p, 0700);
	}
	pause_ms(300);
	never = "secret\\hidden";
	local_file("w/secret/hidden");
	pause_ms(200);
	local_file("w/visible");
	CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "visible") &&
	      (getuid() != 0 || !never_seen),
	      "WATCH_TREE as the session's user: nothing from a 0700 directory of root's%s",
	      getuid() ? " (not root: not checked)" : "");
	never = NULL;

	/* a watched subtree goes while two handles watch it (IN_IGNORED, shared wds) */
	{
		struct smb2_fid t2;
		char p[4096];

		open_dir(&r, "w", &t2);
		notify_send(&r, &t2, SMB2_WATCH_TREE, ALL_NAMES, 65536, &mid);
		st = recv_any(&r, 3000, &aid, NULL);
		snprintf(p, sizeof(p), "%s/w/b/c/deep", root);
		unlink(p);
		snprintf(p, sizeof(p), "%s/w/b/c", root);
		rmdir(p);
		snprintf(p, sizeof(p), "%s/w/b", root);
		rmdir(p);
		st = recv_any(&r, 3000, &aid, NULL);
		CHECK(st == 0 && lists(&r, FILE_ACTION_REMOVED, "b\\c\\deep"),
		      "a second WATCH_TREE handle sees a deletion deep down (%s)",
		      st < 0 ? "nothing" : raw_sname((uint32_t)st));
		CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_REMOVED, "b"),
		      "... and so does the first: the subtree's removal (b)");
		local_dir("w/b");
		CHECK(sees(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, FILE_ACTION_ADDED, "b"),
		      "... and a directory of the same name made again");
		CHECK(raw_close_fid(&r, &t2) == 0, "... its close");
	}

	/* the first handle does not watch the tree */
	local_file("w/top");
	CHECK(sees(&r, &fid, 0, ALL_NAMES, FILE_ACTION_ADDED, "top") &&
	      !lists(&r, FILE_ACTION_ADDED, "b\\c\\deep"),
	      "a handle without WATCH_TREE sees only its directory");

	/* the handle's close ends its waiting request: NOTIFY_CLEANUP */
	notify_send(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, 65536, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	/* what the tree queued meanwhile may answer first */
	while (st == 0) {
		notify_send(&r, &tfid, SMB2_WATCH_TREE, ALL_NAMES, 65536, &mid);
		st = recv_any(&r, 3000, &aid, NULL);
	}
	{
		struct smb2_close_req c = { .fid = tfid };
		uint8_t b[128];
		struct wcur w;

		raw_begin(&w, b, sizeof(b));
		smb2_close_req_encode(&w, &c);
		raw_seal(&r, SMB2_CLOSE, b, w.off);
		raw_send(&r, b, w.off);
	}
	for (i = 0; i < 2; i++) {
		st = recv_any(&r, 3000, NULL, &cmd);
		if (cmd == SMB2_CHANGE_NOTIFY && st == (long)STATUS_NOTIFY_CLEANUP)
			got_cleanup = 1;
		if (cmd == SMB2_CLOSE && st == 0)
			got_close = 1;
	}
	CHECK(got_cleanup && got_close, "CLOSE of the handle: the waiting CHANGE_NOTIFY ends with STATUS_NOTIFY_CLEANUP");

	/* a CHANGE_NOTIFY on a file is refused */
	CHECK(raw_create(&r, "w/f1", FILE_READ_DATA, 1, 0, &sfid) == 0, "open a file");
	notify_send(&r, &sfid, 0, ALL_NAMES, 4096, &mid);
	st = recv_any(&r, 3000, NULL, NULL);
	CHECK(st == (long)STATUS_INVALID_PARAMETER, "CHANGE_NOTIFY on a file: %s",
	      st < 0 ? "nothing" : raw_sname((uint32_t)st));
	raw_close_fid(&r, &sfid);

	/* tree disconnect with a request waiting */
	notify_send(&r, &fid, 0, ALL_NAMES, 4096, &mid);
	st = recv_any(&r, 3000, &aid, NULL);
	{
		uint8_t b[SMB2_HDR_SIZE + 4];
		struct wcur w;

		raw_begin(&w, b, sizeof(b));
		wcur_le16(&w, 4);
		wcur_le16(&w, 0);
		raw_seal(&r, SMB2_TREE_DISCONNECT, b, w.off);
		raw_send(&r, b, w.off);
	}
	got_cleanup = got_close = 0;
	for (i = 0; i < 2; i++) {
		st = recv_any(&r, 3000, NULL, &cmd);
		if (cmd == SMB2_CHANGE_NOTIFY && st == (long)STATUS_NOTIFY_CLEANUP)
			got_cleanup = 1;
		if (cmd == SMB2_TREE_DISCONNECT && st == 0)
			got_close = 1;
	}
	CHECK(got_cleanup && got_close, "TREE_DISCONNECT: the waiting CHANGE_NOTIFY ends with STATUS_NOTIFY_CLEANUP");
	CHECK(raw_echo(&r) == 0, "the connection still serves");
	raw_close(&r);
	return fails ? 1 : 0;
}
