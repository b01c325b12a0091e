/* SPDX-License-Identifier: MIT */
/* NTLMSSP message codec, [MS-NLMP] 2.2. Pure: no allocation, no I/O. */
#ifndef RDAX_PROTO_NTLMSSP_H
#define RDAX_PROTO_NTLMSSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define NTLMSSP_SIGNATURE "NTLMSSP\0"
#define NTLMSSP_SIG_LEN 8

/* MessageType */
#define NTLMSSP_NEGOTIATE 1
#define NTLMSSP_CHALLENGE 2
#define NTLMSSP_AUTH 3

/* NegotiateFlags, [MS-NLMP] 2.2.2.5 */
#define NTLMSSP_NEGOTIATE_UNICODE 0x00000001u
#define NTLMSSP_NEGOTIATE_OEM 0x00000002u
#define NTLMSSP_REQUEST_TARGET 0x00000004u
#define NTLMSSP_NEGOTIATE_SIGN 0x00000010u
#define NTLMSSP_NEGOTIATE_SEAL 0x00000020u
#define NTLMSSP_NEGOTIATE_DATAGRAM 0x00000040u
#define NTLMSSP_NEGOTIATE_LM_KEY 0x00000080u
#define NTLMSSP_NEGOTIATE_NTLM 0x00000200u
#define NTLMSSP_NEGOTIATE_ANONYMOUS 0x00000800u
#define NTLMSSP_NEGOTIATE_OEM_DOMAIN_SUPPLIED 0x00001000u
#define NTLMSSP_NEGOTIATE_OEM_WORKSTATION_SUPPLIED 0x00002000u
#define NTLMSSP_NEGOTIATE_ALWAYS_SIGN 0x00008000u
#define NTLMSSP_TARGET_TYPE_DOMAIN 0x00010000u
#define NTLMSSP_TARGET_TYPE_SERVER 0x00020000u
#define NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY 0x00080000u
#define NTLMSSP_NEGOTIATE_IDENTIFY 0x00100000u
#define NTLMSSP_REQUEST_NON_NT_SESSION_KEY 0x00400000u
#define NTLMSSP_NEGOTIATE_TARGET_INFO 0x00800000u
#define NTLMSSP_NEGOTIATE_VERSION 0x02000000u
#define NTLMSSP_NEGOTIATE_128 0x20000000u
#define NTLMSSP_NEGOTIATE_KEY_EXCH 0x40000000u
#define NTLMSSP_NEGOTIATE_56 0x80000000u

/* AV_PAIR AvId, [MS-NLMP] 2.2.2.1 */
#define MSV_AV_EOL 0
#define MSV_AV_NB_COMPUTER_NAME 1
#define MSV_AV_NB_DOMAIN_NAME 2
#define MSV_AV_DNS_COMPUTER_NAME 3
#define MSV_AV_DNS_DOMAIN_NAME 4
#define MSV_AV_DNS_TREE_NAME 5
#define MSV_AV_FLAGS 6
#define MSV_AV_TIMESTAMP 7
#define MSV_AV_SINGLE_HOST 8
#define MSV_AV_TARGET_NAME 9
#define MSV_AV_CHANNEL_BINDINGS 10

/* MsvAvFlags bits */
#define MSV_AV_FLAG_CONSTRAINED 0x1u
#define MSV_AV_FLAG_MIC_PRESENT 0x2u
#define MSV_AV_FLAG_UNTRUSTED_SPN 0x4u

/* Fixed part sizes; the MIC sits after the Version in AUTHENTICATE. */
#define NTLMSSP_NEGOTIATE_HDR 32
#define NTLMSSP_CHALLENGE_HDR 48
#define NTLMSSP_AUTH_HDR 64
#define NTLMSSP_VERSION_LEN 8
#define NTLMSSP_AUTH_MIC_OFF 72
#define NTLMSSP_AUTH_MIC_LEN 16

/* NTLMRevisionCurrent */
#define NTLMSSP_REVISION_W2K3 0x0f

/* [MS-NLMP] 2.2.2.10 VERSION */
struct ntlmssp_version {
	uint8_t major;
	uint8_t minor;
	uint16_t build;
	uint8_t revision;
};

/*
 * A variable field. Decoders point p into the message (NULL when the
 * length is 0); encoders copy len bytes from p.
 */
struct ntlmssp_buf {
	const uint8_t *p;
	uint16_t len;
};

struct ntlmssp_negotiate {
	uint32_t flags;
	struct ntlmssp_buf domain;      /* OEM */
	struct ntlmssp_buf workstation; /* OEM */
	bool has_version;
	struct ntlmssp_version version;
};

struct ntlmssp_challenge {
	uint32_t flags;
	struct ntlmssp_buf target_name;
	uint8_t challenge[8];
	struct ntlmssp_buf target_info; /* AV pairs */
	bool has_version;
	struct ntlmssp_version version;
};

struct ntlmssp_auth {
	uint32_t flags;
	struct ntlmssp_buf lm;          /* LmChallengeResponse */
	struct ntlmssp_buf nt;          /* NtChallengeResponse */
	struct ntlmssp_buf domain;
	struct ntlmssp_buf user;
	struct ntlmssp_buf workstation;
	struct ntlmssp_buf session_key; /* EncryptedRandomSessionKey */
	bool has_version;
	struct ntlmssp_version version;
	/*
	 * Decode: true when the layout leaves room for the MIC field at
	 * NTLMSSP_AUTH_MIC_OFF (payload starts at >= 88); mic points at it.
	 * Encode: write a MIC field (copied from mic, zeros if mic is NULL).
	 */
	bool has_mic;
	const uint8_t *mic;
};

/* MessageType of a message with a valid signature, or -EBADMSG. */
int ntlmssp_msg_type(const uint8_t *msg, size_t len);

/* True if the buffer starts with the NTLMSSP signature. */
bool ntlmssp_is_ntlmssp(const uint8_t *msg, size_t len);

/*
 * Decoders: -EBADMSG for a wrong signature/type, truncation, or any
 * variable field (with non-zero length) outside the message or inside
 * its fixed header. All arithmetic is 64-bit.
 */
int ntlmssp_decode_negotiate(const uint8_t *msg, size_t len,
			     struct ntlmssp_negotiate *out);
int ntlmssp_decode_challenge(const uint8_t *msg, size_t len,
			     struct ntlmssp_challenge *out);
int ntlmssp_decode_auth(const uint8_t *msg, size_t len,
			struct ntlmssp_auth *out);

/*
 * Encoders append one message at the cursor: fixed part, Version (always
 * written; zero when has_version is false), then the payload in field
 * order. 0, -ENOSPC (cursor overflow) or -EINVAL.
 */
int ntlmssp_encode_negotiate(struct wcur *w, const struct ntlmssp_negotiate *m);
int ntlmssp_encode_challenge(struct wcur *w, const struct ntlmssp_challenge *m);
int ntlmssp_encode_auth(struct wcur *w, const struct ntlmssp_auth *m);

/* AV pairs, [MS-NLMP] 2.2.2.1. */
struct ntlmssp_av {
	uint16_t id;
	uint16_t len;
	const uint8_t *val;
};

/*
 * Next pair from a cursor over an AV list: 1 = pair in *av, 0 = MsvAvEOL
 * reached, -EBADMSG = truncated (a list must end with MsvAvEOL).
 */
int ntlmssp_av_next(struct rcur *r, struct ntlmssp_av *av);

/* Validate a whole list; *used (may be NULL) = bytes up to EOL incl. */
int ntlmssp_av_validate(const uint8_t *list, size_t len, size_t *used);

/* Find the first pair with id: 0, -ENOENT, or -EBADMSG. */
int ntlmssp_av_find(const uint8_t *list, size_t len, uint16_t id,
		    struct ntlmssp_av *av);

/* Append one pair / the terminator. */
void ntlmssp_av_put(struct wcur *w, uint16_t id, const void *val,
		    size_t len);
void ntlmssp_av_put_eol(struct wcur *w);

#endif
