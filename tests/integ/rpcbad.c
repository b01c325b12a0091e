// SPDX-License-Identifier: MIT
/*
 * DCE/RPC on rdaxd's IPC$ pipes, by hand: binds that are accepted,
 * negotiated or refused, requests in fragments, and malformed PDUs
 * (bad versions and data representations, short frag_length, unknown
 * ptypes and opnums, truncated NDR, bogus strings, too many fragments).
 * Each bad PDU must get a FAULT or break its pipe only; a fresh pipe on
 * the same session must keep working. Ends with "all ok".
 *
 * usage: rpcbad HOST PORT USER PASSWORD_FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dcerpc.h"
#include "proto/ndr.h"
#include "proto/srvsvc.h"
#include "rawsmb.h"

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

/* 4b324fc8-1670-01d3-1278-5a47bf6ee188 v3 */
static const struct dcerpc_syntax srvsvc = {
	{ 0xc8, 0x4f, 0x32, 0x4b, 0x70, 0x16, 0xd3, 0x01,
	  0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88 }, 3
};
/* the bind time feature negotiation syntax, both features asked */
static const struct dcerpc_syntax btfn = {
	{ 0x2c, 0x1c, 0xb7, 0x6c, 0x12, 0x98, 0x40, 0x45,
	  0x03, 0, 0, 0, 0, 0, 0, 0 }, 1
};

static struct raw r;
static uint8_t rx[65536];
static size_t rx_len;

static void expect(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		OK("%s: %s", what, raw_sname(got));
	else
		BAD("%s: %s, want %s", what, raw_sname(got), raw_sname(want));
}

static uint32_t pipe_open(const char *name, struct smb2_fid *fid)
{
	return raw_create(&r, name, GENERIC_READ | GENERIC_WRITE, FILE_OPEN, 0, fid);
}

/* WRITE the bytes, READ one fragment back into rx. */
static uint32_t xchg(const struct smb2_fid *fid, const uint8_t *p, size_t n)
{
	uint32_t st, got;

	rx_len = 0;
	st = raw_write(&r, fid, 0, p, (uint32_t)n);
	if (st)
		return st;
	st = raw_read(&r, fid, 0, rx, sizeof(rx), &got);
	rx_len = got;
	return st;
}

static void syntax(struct wcur *w, const struct dcerpc_syntax *s)
{
	wcur_bytes(w, s->uuid, 16);
	wcur_le32(w, s->version);
}

/* BIND with one context per transfer syntax given, all for abstract. */
static size_t bind_pdu(uint8_t *b, size_t cap, const struct dcerpc_syntax *abstract,
		       const struct dcerpc_syntax *const *xfer, unsigned int n,
		       uint16_t max_recv)
{
	struct dcerpc_hdr h = { .ptype = DCERPC_BIND, .flags = 3, .call_id = 1 };
	unsigned int i;
	struct wcur w;

	wcur_init(&w, b, cap);
	dcerpc_hdr_encode(&w, &h);
	wcur_le16(&w, 4280);
	wcur_le16(&w, max_recv);
	wcur_le32(&w, 0);
	wcur_u8(&w, (uint8_t)n);
	wcur_zero(&w, 3);
	for (i = 0; i < n; i++) {
		wcur_le16(&w, (uint16_t)i);
		wcur_u8(&w, 1);
		wcur_u8(&w, 0);
		syntax(&w, abstract);
		syntax(&w, xfer[i]);
	}
	dcerpc_set_frag_len(b, w.off);
	return w.off;
}

static size_t req_pdu(uint8_t *b, size_t cap, uint32_t call_id, uint8_t flags,
		      uint16_t opnum, const void *stub, size_t n)
{
	struct dcerpc_hdr h = { .ptype = DCERPC_REQUEST, .flags = flags, .call_id = call_id };
	struct wcur w;

	wcur_init(&w, b, cap);
	dcerpc_hdr_encode(&w, &h);
	wcur_le32(&w, 0xFFFFFFFFu);	/* an absurd alloc_hint: only a hint */
	wcur_le16(&w, 0);
	wcur_le16(&w, opnum);
	wcur_bytes(&w, stub, n);
	dcerpc_set_frag_len(b, w.off);
	return w.off;
}

/* The NetShareEnumAll level-1 request stub, as rpcclient sends it. */
static size_t enum_stub(uint8_t *b, size_t cap)
{
	struct ndr_w n;

	ndr_w_init(&n, b, cap);
	ndr_ptr(&n, true);
	ndr_string(&n, "\\\\127.0.0.1");
	ndr_u32(&n, 1);
	ndr_u32(&n, 1);
	ndr_ptr(&n, true);
	ndr_u32(&n, 0);
	ndr_ptr(&n, false);
	ndr_u32(&n, UINT32_MAX);
	ndr_ptr(&n, true);
	ndr_u32(&n, 0);
	return n.w.off;
}

static uint8_t rx_ptype(void)
{
	return rx_len >= DCERPC_HDR_LEN ? rx[2] : 0xFF;
}

static uint32_t rx_fault(void)
{
	return rx_len >= DCERPC_FAULT_LEN && rx[2] == DCERPC_FAULT ? get_le32(rx + 24) : 0;
}

static void expect_fault(const char *what, uint32_t st, uint32_t want)
{
	if (st)
		BAD("%s: %s, want a FAULT", what, raw_sname(st));
	else if (rx_fault() != want)
		BAD("%s: ptype %u status 0x%08x, want FAULT 0x%08x", what, rx_ptype(),
		    rx_fault(), want);
	else
		OK("%s: FAULT 0x%08x", what, want);
}

/* Open srvsvc and bind it with NDR 2.0. */
static int bound_pipe(struct smb2_fid *fid, uint16_t max_recv)
{
	const struct dcerpc_syntax *x[] = { &dcerpc_ndr20 };
	uint8_t b[512];
	size_t n;

	if (pipe_open("srvsvc", fid))
		return -1;
	n = bind_pdu(b, sizeof(b), &srvsvc, x, 1, max_recv);
	if (xchg(fid, b, n) || rx_ptype() != DCERPC_BIND_ACK)
		return -1;
	return 0;
}

/* A whole NetShareEnumAll response names share "data"? */
static bool has_data_share(const uint8_t *stub, size_t n)
{
	static const uint8_t data16[] = { 'd', 0, 'a', 0, 't', 0, 'a', 0, 0, 0 };

	return memmem(stub, n, data16, sizeof(data16)) != NULL;
}

/* Read every RESPONSE fragment of a call into stub; the count of them. */
static int read_response(const struct smb2_fid *fid, uint8_t *stub, size_t cap, size_t *n)
{
	uint32_t st, got;
	int frags = 0;

	*n = 0;
	for (;;) {
		st = raw_read(&r, fid, 0, rx, sizeof(rx), &got);
		if (st || got < DCERPC_REQ_HDR_LEN || rx[2] != DCERPC_RESPONSE ||
		    get_le16(rx + 8) != got || *n + got - DCERPC_REQ_HDR_LEN > cap)
			return -1;
		memcpy(stub + *n, rx + DCERPC_REQ_HDR_LEN, got - DCERPC_REQ_HDR_LEN);
		*n += got - DCERPC_REQ_HDR_LEN;
		frags++;
		if (rx[3] & DCERPC_PFC_LAST_FRAG)
			return frags;
	}
}

static void binds(void)
{
	const struct dcerpc_syntax *ndr64[] = { &dcerpc_ndr64 };
	const struct dcerpc_syntax *both[] = { &dcerpc_ndr64, &dcerpc_ndr20, &btfn };
	struct smb2_fid fid;
	uint8_t b[512];
	size_t n;
	uint32_t st;

	expect("CREATE \\PIPE\\srvsvc", pipe_open("\\PIPE\\srvsvc", &fid), 0);
	raw_close_fid(&r, &fid);
	expect("CREATE wkssvc", pipe_open("wkssvc", &fid), 0);
	raw_close_fid(&r, &fid);
	expect("CREATE of a pipe rdaxd does not serve", pipe_open("lsarpc", &fid),
	       STATUS_OBJECT_NAME_NOT_FOUND);

	pipe_open("srvsvc", &fid);
	n = bind_pdu(b, sizeof(b), &srvsvc, ndr64, 1, 4280);
	st = xchg(&fid, b, n);
	if (st || rx_ptype() != DCERPC_BIND_ACK || rx_len < 48)
		BAD("NDR64-only bind: %s, ptype %u", raw_sname(st), rx_ptype());
	else if (get_le16(rx + rx_len - 24) != DCERPC_PROVIDER_REJECT ||
		 get_le16(rx + rx_len - 22) != DCERPC_REASON_TRANSFER)
		BAD("NDR64-only bind: result %u reason %u", get_le16(rx + rx_len - 24),
		    get_le16(rx + rx_len - 22));
	else
		OK("NDR64-only bind: provider rejection, transfer syntaxes not supported");
	raw_close_fid(&r, &fid);

	pipe_open("srvsvc", &fid);
	n = bind_pdu(b, sizeof(b), &srvsvc, both, 3, 4280);
	st = xchg(&fid, b, n);
	if (st || rx_ptype() != DCERPC_BIND_ACK || rx_len < 24 + 3 * 24)
		BAD("NDR64 + NDR + feature negotiation bind: %s, ptype %u", raw_sname(st),
		    rx_ptype());
	else if (get_le16(rx + rx_len - 72) != DCERPC_PROVIDER_REJECT ||
		 get_le16(rx + rx_len - 48) != DCERPC_ACCEPT ||
		 get_le16(rx + rx_len - 24) != DCERPC_NEGOTIATE_ACK)
		BAD("three-context bind: results %u %u %u", get_le16(rx + rx_len - 72),
		    get_le16(rx + rx_len - 48), get_le16(rx + rx_len - 24));
	else
		OK("three-context bind: NDR64 rejected, NDR accepted, features negotiated");
	raw_close_fid(&r, &fid);
}

static void requests(void)
{
	static uint8_t b[1100 * DCERPC_REQ_HDR_LEN + 4096], stub[512], out[65536];
	struct smb2_fid fid;
	size_t n, sn, i, third, got;
	uint32_t st;
	int frags;

	if (bound_pipe(&fid, 4280)) {
		BAD("bind srvsvc");
		return;
	}
	OK("bind srvsvc (NDR 2.0)");
	sn = enum_stub(stub, sizeof(stub));

	/* one request in three fragments, then the answer */
	third = (sn / 3) & ~(size_t)7;
	n = req_pdu(b, sizeof(b), 2, DCERPC_PFC_FIRST_FRAG, 15, stub, third);
	n += req_pdu(b + n, sizeof(b) - n, 2, 0, 15, stub + third, third);
	st = raw_write(&r, &fid, 0, b, (uint32_t)n);
	n = req_pdu(b, sizeof(b), 2, DCERPC_PFC_LAST_FRAG, 15, stub + 2 * third, sn - 2 * third);
	st = st ? st : raw_write(&r, &fid, 0, b, (uint32_t)n);
	frags = st ? -1 : read_response(&fid, out, sizeof(out), &got);
	if (frags > 0 && has_data_share(out, got))
		OK("NetShareEnumAll in three request fragments: %d response fragment(s)", frags);
	else
		BAD("NetShareEnumAll in three fragments: %s, %d", raw_sname(st), frags);

	n = req_pdu(b, sizeof(b), 3, 3, 99, stub, sn);
	expect_fault("unknown opnum 99", xchg(&fid, b, n), DCERPC_NCA_OP_RNG_ERROR);
	n = req_pdu(b, sizeof(b), 4, 3, 15, stub, sn - 6);
	expect_fault("truncated NDR", xchg(&fid, b, n), DCERPC_FAULT_NDR);
	/* a string whose actual count exceeds its maximum count */
	memcpy(b + 512, stub, sn);
	put_le32(b + 512 + 12, 200);
	n = req_pdu(b, sizeof(b), 5, 3, 15, b + 512, sn);
	expect_fault("string with actual count > maximum", xchg(&fid, b, n), DCERPC_FAULT_NDR);
	/* a non-null array pointer in the container rdaxd fills in */
	memcpy(b + 512, stub, sn);
	put_le32(b + 512 + sn - 16, 0x20008);
	n = req_pdu(b, sizeof(b), 6, 3, 15, b + 512, sn);
	expect_fault("bogus referent for the share array", xchg(&fid, b, n), DCERPC_FAULT_NDR);
	n = req_pdu(b, sizeof(b), 7, 3, 15, stub, sn);
	b[2] = 77;
	expect_fault("unknown ptype 77", xchg(&fid, b, n), DCERPC_NCA_PROTO_ERROR);
	n = req_pdu(b, sizeof(b), 8, DCERPC_PFC_LAST_FRAG, 15, stub, sn);
	expect_fault("a middle fragment with no first one", xchg(&fid, b, n),
		     DCERPC_NCA_PROTO_ERROR);

	/* 1100 empty fragments of one call in one WRITE: refused after 1024 */
	for (n = 0, i = 0; i < 1100; i++)
		n += req_pdu(b + n, sizeof(b) - n, 9, i ? 0 : DCERPC_PFC_FIRST_FRAG, 15, NULL, 0);
	expect_fault("1100 fragments of one request", xchg(&fid, b, n), DCERPC_FAULT_NO_MEMORY);
	/* the pipe still answers */
	n = req_pdu(b, sizeof(b), 10, 3, 15, stub, sn);
	st = raw_write(&r, &fid, 0, b, (uint32_t)n);
	frags = st ? -1 : read_response(&fid, out, sizeof(out), &got);
	if (frags > 0 && has_data_share(out, got))
		OK("the same pipe answers NetShareEnumAll after the faults");
	else
		BAD("the pipe after the faults: %s, ptype %u", raw_sname(st), rx_ptype());

	/* a PDU that says it is longer than what came: the pipe waits */
	n = req_pdu(b, sizeof(b), 11, 3, 15, stub, sn);
	expect("half a PDU, then a READ", xchg(&fid, b, n / 2), STATUS_PIPE_EMPTY);
	st = raw_write(&r, &fid, 0, b + n / 2, (uint32_t)(n - n / 2));
	frags = st ? -1 : read_response(&fid, out, sizeof(out), &got);
	if (frags > 0 && has_data_share(out, got))
		OK("the rest of it: answered");
	else
		BAD("the rest of the PDU: %s, %d", raw_sname(st), frags);
	raw_close_fid(&r, &fid);

	/* a request before any bind */
	pipe_open("srvsvc", &fid);
	n = req_pdu(b, sizeof(b), 1, 3, 15, stub, sn);
	expect_fault("request before bind", xchg(&fid, b, n), DCERPC_NCA_PROTO_ERROR);
	raw_close_fid(&r, &fid);

	/* responses split at a small max_recv_frag */
	if (!bound_pipe(&fid, 1432)) {
		n = req_pdu(b, sizeof(b), 2, 3, 15, stub, sn);
		st = raw_write(&r, &fid, 0, b, (uint32_t)n);
		frags = st ? -1 : read_response(&fid, out, sizeof(out), &got);
		if (frags > 0 && has_data_share(out, got))
			OK("max_recv_frag 1432: NetShareEnumAll in %d fragment(s)", frags);
		else
			BAD("max_recv_frag 1432: %s, %d", raw_sname(st), frags);
		raw_close_fid(&r, &fid);
	} else {
		BAD("bind with max_recv_frag 1432");
	}
}

static uint32_t query_standard(const struct smb2_fid *fid, uint8_t *delete_pending)
{
	struct smb2_query_info_req q = { 0 };
	uint8_t b[256];
	struct wcur w;

	q.info_type = SMB2_0_INFO_FILE;
	q.info_class = FileStandardInformation;
	q.output_len = 1024;
	q.fid = *fid;
	raw_begin(&w, b, sizeof(b));
	smb2_query_info_req_encode(&w, &q);
	if (raw_xchg(&r, SMB2_QUERY_INFO, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	/* the 8-byte body, then 24 bytes: sizes, links, DeletePending */
	if (!r.status && r.rx_len >= SMB2_HDR_SIZE + 8 + 24)
		*delete_pending = r.rx[SMB2_HDR_SIZE + 8 + 20];
	return r.status;
}

/* IOCTL FSCTL_PIPE_TRANSCEIVE with an output limit; rx gets the output. */
static uint32_t transceive(const struct smb2_fid *fid, const uint8_t *in, size_t n,
			   uint32_t max_out)
{
	struct smb2_ioctl_req q = { 0 };
	struct smb2_ioctl_rsp rsp;
	uint8_t b[1024];
	struct wcur w;

	q.ctl_code = FSCTL_PIPE_TRANSCEIVE;
	q.fid = *fid;
	q.input.p = in;
	q.input.len = (uint32_t)n;
	q.max_output_response = max_out;
	q.flags = SMB2_0_IOCTL_IS_FSCTL;
	raw_begin(&w, b, sizeof(b));
	smb2_ioctl_req_encode(&w, &q);
	rx_len = 0;
	if (raw_xchg(&r, SMB2_IOCTL, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if ((!r.status || r.status == STATUS_BUFFER_OVERFLOW) &&
	    !smb2_ioctl_rsp_decode(r.rx, r.rx_len, &rsp) && rsp.output.len <= sizeof(rx)) {
		memcpy(rx, rsp.output.p, rsp.output.len);
		rx_len = rsp.output.len;
	}
	return r.status;
}

/* What else a pipe handle answers. */
static void handle(void)
{
	uint8_t b[512], stub[512], dp = 0;
	struct smb2_fid fid;
	uint32_t st, got, frag;
	size_t n, sn;

	if (bound_pipe(&fid, 4280)) {
		BAD("bind srvsvc");
		return;
	}
	expect("QUERY_INFO FileStandardInformation on a pipe", query_standard(&fid, &dp), 0);
	if (dp == 1)
		OK("... DeletePending set, as Samba shows a pipe");
	else
		BAD("... DeletePending %u", dp);
	expect("SET_INFO (rename) on a pipe", raw_rename(&r, &fid, "x", false),
	       STATUS_INVALID_DEVICE_REQUEST);
	sn = enum_stub(stub, sizeof(stub));
	n = req_pdu(b, sizeof(b), 2, 3, 15, stub, sn);
	st = transceive(&fid, b, n, 100);
	if (st == STATUS_BUFFER_OVERFLOW && rx_len == 100 && rx_ptype() == DCERPC_RESPONSE)
		OK("TRANSCEIVE with 100 bytes of output: the first 100, STATUS_BUFFER_OVERFLOW");
	else
		BAD("short TRANSCEIVE: %s, %zu bytes", raw_sname(st), rx_len);
	frag = rx_len >= 10 ? get_le16(rx + 8) : 0;
	st = raw_read(&r, &fid, 0, rx, sizeof(rx), &got);
	if (!st && frag > 100 && got == frag - 100u)
		OK("the rest of that fragment by READ (%u bytes)", got);
	else
		BAD("READ of the rest: %s, %u bytes of a %u-byte fragment", raw_sname(st), got,
		    frag);
	/* the other fragments of the answer, if any */
	while (!st && raw_read(&r, &fid, 0, rx, sizeof(rx), &got) == 0)
		;
	expect("CLOSE of the pipe", raw_close_fid(&r, &fid), 0);
}

/* Framing errors: the pipe breaks, the next pipe works. */
static void broken(void)
{
	static const struct {
		const char *what;
		unsigned int off;
		uint8_t val;
	} cases[] = {
		{ "RPC version 4", 0, 4 },
		{ "minor version 7", 1, 7 },
		{ "big-endian data representation", 4, 0x00 },
		{ "frag_length 8", 8, 8 },
	};
	const struct dcerpc_syntax *x[] = { &dcerpc_ndr20 };
	struct smb2_fid fid;
	uint8_t b[512];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pipe_open("srvsvc", &fid);
		n = bind_pdu(b, sizeof(b), &srvsvc, x, 1, 4280);
		b[cases[i].off] = cases[i].val;
		if (cases[i].off == 8)
			b[9] = 0;
		expect(cases[i].what, xchg(&fid, b, n), STATUS_PIPE_DISCONNECTED);
		expect("the broken pipe closes", raw_close_fid(&r, &fid), 0);
	}
	if (bound_pipe(&fid, 4280))
		BAD("a fresh pipe after the broken ones");
	else
		OK("a fresh pipe binds after the broken ones");
	raw_close_fid(&r, &fid);
}

int main(int argc, char **argv)
{
	struct raw_cred c = { 0 };
	char pw[256] = "";
	FILE *f;

	if (argc != 5) {
		fprintf(stderr, "usage: rpcbad HOST PORT USER PASSWORD_FILE\n");
		return 2;
	}
	f = fopen(argv[4], "r");
	if (f) {
		if (fgets(pw, sizeof(pw), f))
			pw[strcspn(pw, "\n")] = 0;
		fclose(f);
	}
	c.user = argv[3];
	c.password = pw;
	if (crypto_init())
		return 1;
	if (raw_session(&r, argv[1], (unsigned int)atoi(argv[2]), SMB2_DIALECT_311, &c, "IPC$")) {
		printf("FAIL: cannot log on and connect to IPC$\n");
		return 1;
	}
	binds();
	requests();
	handle();
	broken();
	raw_close(&r);
	if (nfail)
		return 1;
	printf("all ok\n");
	return 0;
}
