// SPDX-License-Identifier: MIT
/*
 * SACLs on the wire (tests/integ/acls.sh runs it). Opening for
 * ACCESS_SYSTEM_SECURITY needs SeSecurityPrivilege, which rdaxd gives
 * root only (a share with force user = root here); as Windows and Samba:
 *
 *   a user's open asking for it: STATUS_PRIVILEGE_NOT_HELD; a QUERY_INFO
 *     or SET_INFO of the SACL on a handle without it: ACCESS_DENIED;
 *   root's open asking for it alone: ACCESS_DENIED (SMB2 refuses that);
 *   root sets a SACL (an audit ACE, generic bits: kept mapped), reads it
 *     back; a user's DACL query does not show it; a SET without WRITE_DAC
 *     is refused; a chmod on the server leaves it (only the DACL goes
 *     stale).
 *
 *   sacl HOST PORT SHARE ROOTSHARE DIR USER PWFILE FILE
 *
 * FILE (in DIR, the share's directory on this host) is the user's, mode
 * 0666 (root, with CAP_DAC_OVERRIDE, writes its xattrs whatever the mode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/secdesc.h"
#include "rawsmb.h"

static int nfail;

#define OK(...) do { printf("ok: "); printf(__VA_ARGS__); printf("\n"); } while (0)
#define BAD(...) do { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); nfail++; } while (0)

static void expect(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		OK("%s: %s", what, raw_sname(got));
	else
		BAD("%s: %s, want %s", what, raw_sname(got), raw_sname(want));
}

/* QUERY_INFO SECURITY: the descriptor decoded into sd */
static uint32_t query_sd(struct raw *r, const struct smb2_fid *fid, uint32_t secinfo,
			 struct secdesc *sd)
{
	struct smb2_query_info_req q = { 0 };
	struct smb2_buf out;
	uint8_t b[256];
	struct wcur w;

	q.info_type = SMB2_0_INFO_SECURITY;
	q.additional = secinfo;
	q.output_len = 4096;
	q.fid = *fid;
	raw_begin(&w, b, sizeof(b));
	smb2_query_info_req_encode(&w, &q);
	if (raw_xchg(r, SMB2_QUERY_INFO, b, w.off))
		return STATUS_CONNECTION_DISCONNECTED;
	if (r->status)
		return r->status;
	if (smb2_out_buf_rsp_decode(r->rx, r->rx_len, &out) || secdesc_decode(out.p, out.len, sd))
		return STATUS_INVALID_NETWORK_RESPONSE;
	return 0;
}

static uint32_t set_sd(struct raw *r, const struct smb2_fid *fid, uint32_t secinfo,
		       const struct secdesc *sd)
{
	uint8_t d[512];

	return raw_set_info(r, fid, SMB2_0_INFO_SECURITY, 0, secinfo, d,
			    (uint32_t)secdesc_encode(sd, secinfo, d, sizeof(d)));
}

static uint32_t open_(struct raw *r, const char *name, uint32_t access, struct smb2_fid *fid)
{
	return raw_create(r, name, access, FILE_OPEN, FILE_NON_DIRECTORY_FILE, fid);
}

static int logon(struct raw *r, const char *host, unsigned int port, const char *share,
		 const char *user, const char *pw)
{
	struct raw_cred c = { user, pw, NULL };
	int ret = raw_session(r, host, port, SMB2_DIALECT_311, &c, share);

	if (ret)
		BAD("%s cannot log on to %s: %d", user, share, ret);
	return ret;
}

static void read_pw(const char *file, char *pw, size_t len)
{
	FILE *f = fopen(file, "r");

	pw[0] = 0;
	if (f) {
		if (fgets(pw, (int)len, f))
			pw[strcspn(pw, "\n")] = 0;
		fclose(f);
	}
}

/* the SACL root sets: audit Everyone's successes and failures, GENERIC_ALL */
static void audit_sacl(struct secdesc *sd)
{
	uint32_t world = 0;

	memset(sd, 0, sizeof(*sd));
	sd->control = SE_SELF_RELATIVE | SE_SACL_PRESENT;
	sd->has_sacl = true;
	sd->sacl.rev = 2;
	sd->sacl.n = 1;
	sd->sacl.ace[0].type = SYSTEM_AUDIT_ACE_TYPE;
	sd->sacl.ace[0].flags = 0xc0;	/* SUCCESSFUL_ACCESS, FAILED_ACCESS */
	sd->sacl.ace[0].mask = GENERIC_ALL;
	sid_make(&sd->sacl.ace[0].sid, 1, 1, &world);
}

static void check_audit(const char *what, const struct secdesc *sd)
{
	const struct ace *e = &sd->sacl.ace[0];

	if (sd->has_sacl && !sd->null_sacl && sd->sacl.n == 1 &&
	    e->type == SYSTEM_AUDIT_ACE_TYPE && e->flags == 0xc0 && e->mask == FILE_ALL_ACCESS &&
	    e->sid.auth == 1 && e->sid.n == 1 && e->sid.sub[0] == 0)
		OK("%s: the audit ACE, GENERIC_ALL kept as FILE_ALL_ACCESS", what);
	else
		BAD("%s: SACL present %d, %u ACEs, first type %u mask %#x", what, sd->has_sacl,
		    sd->sacl.n, e->type, e->mask);
}

int main(int argc, char **argv)
{
	const uint32_t rcwd = READ_CONTROL | WRITE_DAC;
	struct smb2_fid fu, fr;
	struct secdesc sd, got;
	char pw[256], path[4096];
	struct raw u, root;
	unsigned int port;
	const char *file;

	if (argc != 9) {
		fprintf(stderr, "usage: sacl HOST PORT SHARE ROOTSHARE DIR USER PWFILE FILE\n");
		return 2;
	}
	port = (unsigned int)atoi(argv[2]);
	file = argv[8];
	snprintf(path, sizeof(path), "%s/%s", argv[5], file);
	read_pw(argv[7], pw, sizeof(pw));
	if (crypto_init())
		return 1;
	if (logon(&u, argv[1], port, argv[3], argv[6], pw) ||
	    logon(&root, argv[1], port, argv[4], argv[6], pw))
		return 1;
	audit_sacl(&sd);

	expect("a user's open for the SACL", open_(&u, file, READ_CONTROL | ACCESS_SYSTEM_SECURITY, &fu),
	       STATUS_PRIVILEGE_NOT_HELD);
	expect("... for the SACL alone", open_(&u, file, ACCESS_SYSTEM_SECURITY, &fu),
	       STATUS_PRIVILEGE_NOT_HELD);
	expect("a user's open for its DACL", open_(&u, file, rcwd, &fu), 0);
	expect("... QUERY_INFO of the SACL", query_sd(&u, &fu, SACL_SECURITY_INFORMATION, &got),
	       STATUS_ACCESS_DENIED);
	expect("... SET_INFO of a SACL", set_sd(&u, &fu, SACL_SECURITY_INFORMATION, &sd),
	       STATUS_ACCESS_DENIED);

	expect("root's open for the SACL alone (SMB2 refuses it)",
	       open_(&root, file, ACCESS_SYSTEM_SECURITY, &fr), STATUS_ACCESS_DENIED);
	expect("root's open for the SACL without WRITE_DAC",
	       open_(&root, file, READ_CONTROL | ACCESS_SYSTEM_SECURITY, &fr), 0);
	expect("... SET_INFO of a SACL (WRITE_DAC needed too)",
	       set_sd(&root, &fr, SACL_SECURITY_INFORMATION, &sd), STATUS_ACCESS_DENIED);
	raw_close_fid(&root, &fr);
	expect("root's open for the SACL and WRITE_DAC",
	       open_(&root, file, rcwd | ACCESS_SYSTEM_SECURITY, &fr), 0);
	expect("... QUERY_INFO of the SACL (none yet)",
	       query_sd(&root, &fr, SACL_SECURITY_INFORMATION, &got), 0);
	if (got.has_sacl && got.sacl.n)
		BAD("a SACL before one was set: %u ACEs", got.sacl.n);
	expect("... SET_INFO of an audit SACL", set_sd(&root, &fr, SACL_SECURITY_INFORMATION, &sd), 0);
	expect("... QUERY_INFO of it", query_sd(&root, &fr, SACL_SECURITY_INFORMATION, &got), 0);
	check_audit("root reads the SACL", &got);
	expect("the user's DACL query", query_sd(&u, &fu, OWNER_SECURITY_INFORMATION |
					   DACL_SECURITY_INFORMATION, &got), 0);
	if (got.has_sacl)
		BAD("the user's DACL query shows the SACL");
	else
		OK("... shows no SACL");
	if (chmod(path, 0664))
		BAD("chmod %s: %s", path, strerror(errno));
	expect("after a chmod on the server, root's query",
	       query_sd(&root, &fr, SACL_SECURITY_INFORMATION, &got), 0);
	check_audit("... the SACL stays", &got);
	raw_close_fid(&root, &fr);
	raw_close_fid(&u, &fu);
	raw_close(&root);
	raw_close(&u);
	printf("%d failed\n", nfail);
	return nfail ? 1 : 0;
}
