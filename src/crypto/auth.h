/* SPDX-License-Identifier: MIT */
/* NTLMv2 authentication over SPNEGO or raw NTLMSSP (server and client). */
#ifndef RDAX_CRYPTO_AUTH_H
#define RDAX_CRYPTO_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Output buffer size that always suffices for auth_server_step() and
 * auth_negotiate_hint() (names in the cfg are limited to 255 bytes), and
 * for auth_client_step() when the server's CHALLENGE is at most 2 KiB.
 * Every step returns -ENOSPC instead of overflowing outcap.
 */
#define AUTH_TOKEN_MAX 8192

/* Limit for each configured or received name, in UTF-8 bytes. */
#define AUTH_NAME_MAX 255

struct auth_server_cfg {
	const char *netbios_name;   /* e.g. "RDAX" (required) */
	const char *domain_name;    /* e.g. "WORKGROUP" (NULL: "WORKGROUP") */
	const char *dns_domain;     /* optional, default lower-case domain */
	const char *dns_name;       /* optional, default lower-case netbios */
	/* fills nt_hash for a user; 0 or -ENOENT */
	int (*lookup)(void *arg, const char *user_utf8, uint8_t nt_hash[16]);
	void *lookup_arg;
};

struct auth_server;

int auth_server_new(struct auth_server **out, const struct auth_server_cfg *cfg);
void auth_server_delete(struct auth_server **a);

/*
 * One step. Returns 1 = continue (send out with
 * STATUS_MORE_PROCESSING_REQUIRED), 0 = done/accepted (out may hold a
 * final SPNEGO token, or be empty for raw NTLMSSP), -EACCES = bad user or
 * password (logon failure), -EBADMSG/-EINVAL = malformed or unexpected
 * (-EINVAL also after the exchange finished), -ENOSPC = outcap too
 * small. Raw NTLMSSP input (cifs.ko) is answered raw, SPNEGO in SPNEGO.
 * After an error the object only fails.
 */
int auth_server_step(struct auth_server *a, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t outcap, size_t *outlen);

struct auth_result {
	char user[256];
	char domain[256];
	bool anonymous;
	bool have_key;
	uint8_t session_key[16];
};

/*
 * 0 after a successful exchange, else -EAGAIN. *r is always filled: after
 * a failure user/domain hold what the client sent (for logging) and
 * have_key is false.
 */
int auth_server_result(const struct auth_server *a, struct auth_result *r);

/* SPNEGO NegTokenInit2 hint for the SMB2 NEGOTIATE response buffer. */
int auth_negotiate_hint(uint8_t *out, size_t cap, size_t *outlen);

struct auth_client_cfg {
	const char *user;
	const char *domain;      /* NULL: the server's NetBIOS domain */
	const char *password;    /* NULL+anonymous for null session */
	bool anonymous;
	const char *workstation; /* NULL: none */
	bool spnego;             /* wrap in SPNEGO */
};

struct auth_client;

int auth_client_new(struct auth_client **out, const struct auth_client_cfg *cfg);
void auth_client_delete(struct auth_client **c);

/*
 * in = server blob (NULL/0 on the first call, or the NEGOTIATE hint);
 * returns 1 = send out and expect more, 0 = out (maybe empty) is the last
 * token, -errno on error (-EACCES if the server rejected, -EPROTONOSUPPORT
 * if it offers no NTLMSSP).
 */
int auth_client_step(struct auth_client *c, const uint8_t *in, size_t inlen,
		     uint8_t *out, size_t outcap, size_t *outlen);

/* ExportedSessionKey; -ENOKEY for anonymous or before the last step. */
int auth_client_session_key(const struct auth_client *c, uint8_t key[16]);

/*
 * Verify the server's final SPNEGO token (accept-completed + mechListMIC)
 * if any (in may be empty); 0 ok, -EACCES on reject or a bad MIC.
 */
int auth_client_finish(struct auth_client *c, const uint8_t *in, size_t inlen);

#endif
