/* SPDX-License-Identifier: MIT */
/* librdax internals: connection state and the request/response engine. */
#ifndef RDAX_CLIENT_H
#define RDAX_CLIENT_H

#include <stdarg.h>

#include "rdax.h"
#include "crypto/crypto.h"
#include "proto/smb2.h"

#define CLI_MAX_CHAIN 8
#define CLI_TF_ROOM 64			/* room before tx data for a transform */
#define CLI_CREDIT_TARGET 512

struct rdax_cfg {
	enum rdax_transport transport;
	char user[256];
	char domain[256];
	char password[256];
	bool have_password;
	bool guest;
	bool sign_required;
	bool encrypt_required;
	uint16_t min_dialect;
	uint16_t max_dialect;
	int timeout_ms;
};

struct cli_rsp {
	struct smb2_hdr hdr;
	const uint8_t *pdu;
	size_t len;
	uint32_t status;
	bool done;
};

/* One request chain (compound) being built. */
struct cli_chain {
	int n;
	size_t off[CLI_MAX_CHAIN];
	uint16_t charge[CLI_MAX_CHAIN];
	uint64_t mid[CLI_MAX_CHAIN];
	/* optional data sent after the last PDU without a copy */
	const void *tail;
	size_t tail_len;
	struct cli_rsp rsp[CLI_MAX_CHAIN];
	/* 3.1.1 preauth hash to extend with the request as sent */
	uint8_t *preauth;
	/* sign even if the session does not require it */
	bool sign;
};

struct rdax_conn {
	struct rdax_cfg cfg;
	int fd;
	char host[256];
	unsigned int port;
	uint16_t dialect;
	uint16_t cipher;
	uint16_t sign_alg;
	uint16_t server_secmode;
	uint32_t server_caps;
	uint32_t max_read;
	uint32_t max_write;
	uint32_t max_trans;
	uint8_t client_guid[16];
	uint8_t preauth[64];
	uint64_t next_mid;
	uint32_t credits;
	uint64_t session_id;
	struct smb3_keys keys;
	bool have_key;
	bool signing;
	bool encrypt;
	bool guest;
	uint8_t *tx;
	size_t tx_cap;
	size_t tx_len;
	uint8_t *rx[CLI_MAX_CHAIN];
	size_t rx_cap[CLI_MAX_CHAIN];
	char errmsg[512];
	uint32_t last_status;
	struct rdax_stats stats;
};

struct rdax_tree {
	struct rdax_conn *c;
	uint32_t id;
	char share[81];
};

struct rdax_file {
	struct rdax_tree *t;
	struct smb2_fid fid;
	bool is_dir;
	bool write_through;
	char path[1024];
};

/* error reporting: sets errmsg, returns -err */
int cli_err(struct rdax_conn *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* map a response status to -errno and a message naming op and path */
int cli_status(struct rdax_conn *c, uint32_t status, const char *op,
	       const char *path);

/* chain building: returns a cursor positioned after the header */
void cli_chain_init(struct rdax_conn *c, struct cli_chain *ch);
int cli_chain_add(struct rdax_conn *c, struct cli_chain *ch, uint16_t cmd,
		  uint32_t tree_id, bool related, uint16_t charge,
		  size_t body_max, struct wcur *w);
/* finish the body of the last PDU added */
void cli_chain_end(struct rdax_conn *c, struct cli_chain *ch, struct wcur *w);
/* send and wait for every response; rsp pointers valid until next call */
int cli_chain_run(struct rdax_conn *c, struct cli_chain *ch);

/* UTF-8 path "a/b" to UTF-16LE "a\b"; returns bytes or -errno */
int cli_path16(const char *path, uint8_t *out, size_t cap);

#endif
