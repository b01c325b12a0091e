// SPDX-License-Identifier: MIT
/*
 * DCE/RPC on a named pipe: the input, cut at FUZZ_SEP into up to eight
 * parts, is what a client WRITEs to an srvsvc pipe (bytes 0-1 of the
 * first part pick the pipe: even srvsvc, odd wkssvc; the rest is the
 * stream). Each part goes through the codecs alone (the common header,
 * BIND contexts, REQUEST, and its stub through the srvsvc request
 * decoders) and then into rdaxd's pipe (rpc_srv.c: reassembly, binds,
 * the opnum handlers, fragmentation), whose every output fragment must
 * be a well-formed PDU no longer than the negotiated size.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/dcerpc.h"
#include "proto/ntstatus.h"
#include "proto/ndr.h"
#include "proto/srvsvc.h"
#include "server/server.h"

static struct srv_config cfg;
static struct srv srv;
static uint8_t out[65536], enc[1 << 16];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct srv_share *sh;

	srv_config_init(&cfg);
	if (srv_config_add_share(&cfg, "data", "/srv/data", &sh))
		abort();
	snprintf(sh->comment, sizeof(sh->comment), "the data share");
	if (srv_config_add_share(&cfg, "hidden", "/srv/hidden", &sh))
		abort();
	sh->browseable = false;
	if (srv_config_add_share(&cfg, "IPC$", NULL, &sh))
		abort();
	sh->ipc = true;
	srv.cfg = &cfg;
	return 0;
}

/* The stub through every request decoder; what decodes re-encodes. */
static void stub_decoders(const uint8_t *p, size_t n)
{
	static const struct srvsvc_share share = { "data", STYPE_DISKTREE, "c", "C:\\d", 0 };
	static const struct srvsvc_server server = { "RDAX", "WG", "x", 6, 1, SV_TYPE_RDAX };
	struct srvsvc_getinfo_req g;
	struct srvsvc_enum_req e;
	struct ndr_w w;
	uint32_t level;
	char s[64];
	struct rcur c;

	if (!srvsvc_enum_req_decode(p, n, &e)) {
		ndr_w_init(&w, enc, sizeof(enc));
		srvsvc_enum_rsp_encode(&w, &e, &share, 1);
		FUZZ_ASSERT(!w.w.err && w.w.off % 4 == 0);
	}
	if (!srvsvc_getinfo_req_decode(p, n, &g)) {
		FUZZ_ASSERT(strlen(g.name) < sizeof(g.name));
		ndr_w_init(&w, enc, sizeof(enc));
		srvsvc_getinfo_rsp_encode(&w, g.level, &share, WERR_OK);
		FUZZ_ASSERT(!w.w.err);
	}
	if (!srvsvc_level_req_decode(p, n, &level)) {
		ndr_w_init(&w, enc, sizeof(enc));
		srvsvc_srvinfo_rsp_encode(&w, level, &server);
		wkssvc_info_rsp_encode(&w, level, &server);
		FUZZ_ASSERT(!w.w.err);
	}
	rcur_init(&c, p, n);
	if (!ndr_get_string(&c, s, sizeof(s)))
		FUZZ_ASSERT(strlen(s) < sizeof(s) && c.off <= n);
}

/* Every PDU in the buffer, one after another. */
static void codecs(const uint8_t *p, size_t n)
{
	struct dcerpc_request r;
	struct dcerpc_syntax x;
	struct dcerpc_bind b;
	struct dcerpc_ctx c;
	struct dcerpc_hdr h;
	uint16_t feat;
	unsigned int i, j;

	while (!dcerpc_hdr_decode(p, n, &h)) {
		FUZZ_ASSERT(h.frag_len >= DCERPC_HDR_LEN && h.frag_len <= n);
		if ((h.ptype == DCERPC_BIND || h.ptype == DCERPC_ALTER) &&
		    !dcerpc_bind_decode(p, &h, &b)) {
			FUZZ_ASSERT(b.n_ctx > 0);
			for (i = 0; i < b.n_ctx; i++) {
				dcerpc_bind_ctx(&b, i, &c);
				FUZZ_ASSERT_INSIDE(c.xfer, (size_t)c.n_xfer * DCERPC_SYNTAX_LEN,
						   p, h.frag_len);
				for (j = 0; j < c.n_xfer; j++) {
					dcerpc_ctx_xfer(&c, j, &x);
					dcerpc_is_btfn(&x, &feat);
				}
			}
		}
		if (h.ptype == DCERPC_REQUEST && !dcerpc_request_decode(p, &h, &r)) {
			FUZZ_ASSERT_INSIDE(r.stub, r.stub_len, p, h.frag_len);
			stub_decoders(r.stub, r.stub_len);
		}
		p += h.frag_len;
		n -= h.frag_len;
	}
}

/* What the pipe answers: whole PDUs, one per read, in its limits. */
static void drain(struct srv_pipe *pp)
{
	struct dcerpc_hdr h;
	size_t n;
	int ret, reads = 0;

	for (;;) {
		ret = srv_pipe_read(pp, out, sizeof(out), &n);
		if (ret)
			break;
		FUZZ_ASSERT(!dcerpc_hdr_decode(out, n, &h) && h.frag_len == n);
		FUZZ_ASSERT(h.ptype == DCERPC_RESPONSE || h.ptype == DCERPC_FAULT ||
			    h.ptype == DCERPC_BIND_ACK || h.ptype == DCERPC_BIND_NAK ||
			    h.ptype == DCERPC_ALTER_RESP);
		if (h.ptype == DCERPC_RESPONSE)
			FUZZ_ASSERT(n <= 4280);
		FUZZ_ASSERT(++reads < 100000);
	}
	FUZZ_ASSERT(ret == -E_SMB_PIPE_EMPTY || ret == -E_SMB_PIPE_DISCONNECTED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part parts[8];
	struct srv_pipe *pp, *none = NULL;
	int i, n, ret;

	if (size < 1)
		return 0;
	FUZZ_ASSERT(srv_pipe_open(&srv, "\\PIPE\\lsarpc", &none) ==
		    -E_SMB_OBJECT_NAME_NOT_FOUND && !none);
	if (srv_pipe_open(&srv, data[0] & 1 ? "\\PIPE\\wkssvc" : "srvsvc", &pp))
		abort();
	n = fuzz_split(data + 1, size - 1, parts, 8);
	for (i = 0; i < n; i++) {
		codecs(parts[i].p, parts[i].len);
		stub_decoders(parts[i].p, parts[i].len);
		ret = srv_pipe_write(pp, parts[i].p, parts[i].len);
		FUZZ_ASSERT(!ret || ret == -E_SMB_PIPE_DISCONNECTED);
		drain(pp);
	}
	srv_pipe_free(pp);
	return 0;
}
