// SPDX-License-Identifier: MIT
/*
 * WRITEs that "tcp async write" must and must not take, raw (rawsmb.h),
 * as a guest; each mode reads its bytes back and compares them. The
 * caller (tcp_async_write.sh) checks rdaxd's counter around each run.
 *
 * usage: async_write HOST PORT SHARE FILE MODE
 *   lone      one 1 MiB WRITE alone in its message (may go async)
 *   compound  two 128 KiB WRITEs in one compound (never async)
 */
#include "rawsmb.h"

#define LONE_LEN (1u << 20)
#define PART_LEN (128u << 10)

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static void pattern(uint8_t *p, size_t n, uint64_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((off + i) * 131 >> 3) ^ 0x5a;
}

/* One WRITE PDU at b (header included), padded to 8 bytes; its length. */
static size_t write_pdu(struct raw *r, uint8_t *b, size_t cap, const struct smb2_fid *fid,
			uint64_t off, uint32_t len, bool last)
{
	struct smb2_write_req wr = { .fid = *fid, .offset = off, .length = len };
	struct smb2_hdr h = { 0 };
	struct wcur w;
	size_t n;

	raw_begin(&w, b, cap);
	smb2_write_req_encode(&w, &wr);
	pattern(b + w.off, len, off);
	n = (w.off + len + 7) & ~(size_t)7;
	h.command = SMB2_WRITE;
	h.message_id = r->mid;
	h.session_id = r->sid;
	h.tree_id = r->tid;
	h.credits = r->credit_req;
	h.credit_charge = smb2_credit_charge_for(len);
	h.next_command = last ? 0 : (uint32_t)n;
	smb2_hdr_encode(b, &h);
	r->mid += h.credit_charge;
	return last ? w.off + len : n;
}

/* The answers of a compound: how many say STATUS_SUCCESS. */
static int compound_ok(struct raw *r)
{
	size_t off = 0, next;
	int got = 0;

	for (;;) {
		if (get_le16(r->rx + off + 12) == SMB2_WRITE && !get_le32(r->rx + off + 8))
			got++;
		next = get_le32(r->rx + off + 20);
		if (!next || off + next + SMB2_HDR_SIZE > r->rx_len)
			return got;
		off += next;
	}
}

static void check_back(struct raw *r, const struct smb2_fid *fid, uint64_t off, uint32_t len)
{
	uint8_t *want = malloc(len), *got = malloc(len);
	uint32_t n = 0;

	if (!want || !got) {
		BAD("out of memory");
		goto out;
	}
	pattern(want, len, off);
	r->credit_req = 64;
	if (raw_read(r, fid, off, got, len, &n) || n != len || memcmp(want, got, len))
		BAD("%u bytes at %llu read back differ (%s, %u read)", len,
		    (unsigned long long)off, raw_sname(r->status), n);
	else
		OK("%u bytes at %llu read back as written", len, (unsigned long long)off);
out:
	free(want);
	free(got);
}

int main(int argc, char **argv)
{
	struct smb2_fid fid;
	struct raw r;
	uint8_t *b;
	size_t n;
	int i;

	if (argc != 6) {
		fprintf(stderr, "usage: async_write HOST PORT SHARE FILE lone|compound\n");
		return 2;
	}
	if (raw_session(&r, argv[1], (unsigned int)atoi(argv[2]), SMB2_DIALECT_311, NULL,
			argv[3]) ||
	    raw_create(&r, argv[4], FILE_GENERIC_READ | FILE_GENERIC_WRITE, FILE_OVERWRITE_IF, 0,
		       &fid)) {
		printf("FAIL: no session or no file\n");
		return 1;
	}
	for (i = 0; i < 8; i++)
		raw_echo(&r);			/* credits for 1 MiB */
	b = malloc(SMB2_HDR_SIZE + 64 + LONE_LEN + 8);
	if (!b)
		return 1;
	if (!strcmp(argv[5], "lone")) {
		pattern(b, LONE_LEN, 0);
		if (raw_write(&r, &fid, 0, b, LONE_LEN))
			BAD("a lone 1 MiB WRITE: %s", raw_sname(r.status));
		else
			OK("a lone 1 MiB WRITE");
		check_back(&r, &fid, 0, LONE_LEN);
	} else if (!strcmp(argv[5], "compound")) {
		n = write_pdu(&r, b, SMB2_HDR_SIZE + 64 + LONE_LEN, &fid, 0, PART_LEN, false);
		n += write_pdu(&r, b + n, SMB2_HDR_SIZE + 64 + LONE_LEN - n, &fid, PART_LEN,
			       PART_LEN, true);
		if (raw_send(&r, b, n) || raw_recv(&r) || compound_ok(&r) != 2)
			BAD("a compound of two 128 KiB WRITEs was not answered twice with success");
		else
			OK("a compound of two 128 KiB WRITEs");
		check_back(&r, &fid, 0, 2 * PART_LEN);
	} else {
		fprintf(stderr, "async_write: unknown mode %s\n", argv[5]);
		return 2;
	}
	free(b);
	raw_close_fid(&r, &fid);
	raw_close(&r);
	return nfail ? 1 : 0;
}
