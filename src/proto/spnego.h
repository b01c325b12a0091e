/* SPDX-License-Identifier: MIT */
/* SPNEGO (RFC 4178, [MS-SPNG]) minimal DER codec. Pure, bounds-checked. */
#ifndef RDAX_PROTO_SPNEGO_H
#define RDAX_PROTO_SPNEGO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

/* An OID as its DER content octets (no 0x06 tag, no length). */
struct spnego_oid {
	const uint8_t *der;
	size_t len;
};

extern const struct spnego_oid spnego_oid_spnego;  /* 1.3.6.1.5.5.2 */
extern const struct spnego_oid spnego_oid_ntlmssp; /* 1.3.6.1.4.1.311.2.2.10 */
extern const struct spnego_oid spnego_oid_krb5;    /* 1.2.840.113554.1.2.2 */
extern const struct spnego_oid spnego_oid_mskrb5;  /* 1.2.840.48018.1.2.2 */

/* negState, RFC 4178 4.2.2; SPNEGO_STATE_NONE = field absent. */
#define SPNEGO_STATE_NONE (-1)
#define SPNEGO_ACCEPT_COMPLETED 0
#define SPNEGO_ACCEPT_INCOMPLETE 1
#define SPNEGO_REJECT 2
#define SPNEGO_REQUEST_MIC 3

/* Hint text Windows and Samba put in NegTokenInit2 ([MS-SPNG] 3.2.5.2). */
#define SPNEGO_HINT_NAME "not_defined_in_RFC4178@please_ignore"

/* Most mechanisms accepted in one mechTypes list. */
#define SPNEGO_MAX_MECHS 32

/*
 * Decoded NegTokenInit / NegTokenInit2. Pointers go into the input.
 * Optional fields are NULL when absent (a present but empty OCTET STRING
 * gives a non-NULL pointer and length 0).
 */
struct spnego_init {
	/* Raw DER of MechTypeList (SEQUENCE tag + length + OIDs): mechListMIC input */
	const uint8_t *mech_types;
	size_t mech_types_len;
	unsigned int n_mechs;
	const uint8_t *req_flags;  /* BIT STRING content */
	size_t req_flags_len;
	const uint8_t *token;      /* mechToken */
	size_t token_len;
	const uint8_t *mic;        /* mechListMIC */
	size_t mic_len;
	bool has_hints;            /* NegTokenInit2 negHints present */
	const uint8_t *hint_name;  /* GeneralString content, not NUL-terminated */
	size_t hint_name_len;
	const uint8_t *hint_addr;
	size_t hint_addr_len;
};

/* Decoded or to-be-encoded NegTokenResp (negTokenTarg). */
struct spnego_resp {
	int neg_state;             /* SPNEGO_STATE_NONE if absent */
	const uint8_t *mech;       /* supportedMech OID content, or NULL */
	size_t mech_len;
	const uint8_t *token;      /* responseToken, or NULL */
	size_t token_len;
	const uint8_t *mic;        /* mechListMIC, or NULL */
	size_t mic_len;
};

enum spnego_type {
	SPNEGO_TOKEN_INIT = 1,
	SPNEGO_TOKEN_RESP = 2,
};

struct spnego_token {
	enum spnego_type type;
	union {
		struct spnego_init init;
		struct spnego_resp resp;
	};
};

/*
 * Decode a token: a GSS InitialContextToken [APPLICATION 0] carrying the
 * SPNEGO OID and a NegTokenInit(2), a bare negTokenInit [0], or a
 * negTokenResp [1]. Strict DER subset: definite lengths only (<= 4 length
 * octets), single-byte tags, no trailing bytes, fixed nesting. Returns 0,
 * -EBADMSG when malformed, -EPROTONOSUPPORT when a GSS token names
 * another mechanism.
 */
int spnego_decode(const uint8_t *p, size_t len, struct spnego_token *out);

/* Index of oid in a decoded mechTypes list, or -ENOENT. */
int spnego_mech_index(const struct spnego_init *init,
		      const struct spnego_oid *oid);

/* True if a supportedMech (content octets) equals oid. */
bool spnego_oid_eq(const uint8_t *der, size_t len,
		   const struct spnego_oid *oid);

/* Append the DER MechTypeList for mechs (the mechListMIC input). */
int spnego_encode_mech_types(struct wcur *w, const struct spnego_oid *mechs,
			     unsigned int n);

/*
 * Append a GSS InitialContextToken with a NegTokenInit: mechTypes, then
 * the optional mechToken (if token != NULL) and mechListMIC (mic !=
 * NULL). With hint_name != NULL it is a NegTokenInit2 with negHints
 * {hintName} and the MIC (if any) at [4]. 0, -ENOSPC or -EINVAL.
 */
int spnego_encode_init(struct wcur *w, const struct spnego_oid *mechs,
		       unsigned int n, const uint8_t *token, size_t token_len,
		       const uint8_t *mic, size_t mic_len,
		       const char *hint_name);

/* Append a negTokenResp [1]; absent fields are skipped. */
int spnego_encode_resp(struct wcur *w, const struct spnego_resp *r);

#endif
