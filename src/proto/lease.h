/* SPDX-License-Identifier: MIT */
/*
 * Oplocks, leases and durable handles on the wire ([MS-SMB2] 2.2.13.2.*,
 * 2.2.14.2.*, 2.2.23-2.2.26): break notifications, acknowledgements and
 * their responses, and the CREATE contexts that ask for and grant them.
 * Pure codecs: bounds-checked, no allocation.
 */
#ifndef RDAX_PROTO_LEASE_H
#define RDAX_PROTO_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/smb2.h"

#define SMB2_OPLOCK_LEVEL_II 0x01
#define SMB2_OPLOCK_LEVEL_EXCLUSIVE 0x08
#define SMB2_OPLOCK_LEVEL_BATCH 0x09

#define SMB2_LEASE_NONE 0x00u
#define SMB2_LEASE_READ 0x01u
#define SMB2_LEASE_HANDLE 0x02u
#define SMB2_LEASE_WRITE 0x04u
#define SMB2_LEASE_RWH (SMB2_LEASE_READ | SMB2_LEASE_HANDLE | SMB2_LEASE_WRITE)

/* lease context Flags */
#define SMB2_LEASE_FLAG_BREAK_IN_PROGRESS 0x02u
#define SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET 0x04u
/* lease break notification Flags */
#define SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED 0x01u

/* DH2Q/DH2C Flags */
#define SMB2_DHANDLE_FLAG_PERSISTENT 0x02u

#define SMB2_CTX_DHNQ "DHnQ"
#define SMB2_CTX_DHNC "DHnC"
#define SMB2_CTX_DH2Q "DH2Q"
#define SMB2_CTX_DH2C "DH2C"
#define SMB2_CTX_APP_INSTANCE_ID_TAG "\x45\xBC\xA6\x6A"	/* 16-byte GUID name */

#define SMB2_OPLOCK_BREAK_SIZE 24
#define SMB2_LEASE_BREAK_NOTIFY_SIZE 44
#define SMB2_LEASE_ACK_SIZE 36
#define SMB2_LEASE_CTX_V1_SIZE 32
#define SMB2_LEASE_CTX_V2_SIZE 52

/* OPLOCK_BREAK notification, acknowledgement and response: one shape. */
struct smb2_oplock_break {
	uint8_t level;
	struct smb2_fid fid;
};

/* LEASE_BREAK notification. */
struct smb2_lease_break {
	uint16_t new_epoch;
	uint32_t flags;
	uint8_t key[16];
	uint32_t current;
	uint32_t new_state;
};

/* LEASE_BREAK acknowledgement and response. */
struct smb2_lease_ack {
	uint32_t flags;
	uint8_t key[16];
	uint32_t state;
	uint64_t duration;
};

/* RqLs, request and response; version 2 has the parent key and epoch. */
struct smb2_lease_ctx {
	int version;			/* 1 or 2 */
	uint8_t key[16];
	uint32_t state;
	uint32_t flags;
	uint64_t duration;
	uint8_t parent_key[16];
	uint16_t epoch;
};

/* DH2Q / DH2C */
struct smb2_durable_v2 {
	uint32_t timeout;		/* ms; 0: the server's choice */
	uint32_t flags;
	uint8_t create_guid[16];
	struct smb2_fid fid;		/* DH2C */
};

/* The OPLOCK_BREAK body at p (after the header): notification, ack or
 * response by its StructureSize; -EBADMSG if neither fits. */
int smb2_oplock_break_decode(const uint8_t *p, size_t len, struct smb2_oplock_break *b);
void smb2_oplock_break_encode(struct wcur *w, const struct smb2_oplock_break *b);
void smb2_lease_break_encode(struct wcur *w, const struct smb2_lease_break *b);
int smb2_lease_break_decode(const uint8_t *p, size_t len, struct smb2_lease_break *b);
int smb2_lease_ack_decode(const uint8_t *p, size_t len, struct smb2_lease_ack *a);
void smb2_lease_ack_encode(struct wcur *w, const struct smb2_lease_ack *a);

/* The data of an RqLs context: 32 bytes (v1) or 52 (v2). */
int smb2_lease_ctx_decode(const uint8_t *p, size_t len, struct smb2_lease_ctx *l);
/* Into buf (52 bytes at least); returns the length. */
size_t smb2_lease_ctx_encode(uint8_t *buf, const struct smb2_lease_ctx *l);

/* DHnC: a FileId. DH2Q: timeout, flags, CreateGuid. DH2C: FileId,
 * CreateGuid, flags. */
int smb2_dhnc_decode(const uint8_t *p, size_t len, struct smb2_fid *fid);
int smb2_dh2q_decode(const uint8_t *p, size_t len, struct smb2_durable_v2 *d);
int smb2_dh2c_decode(const uint8_t *p, size_t len, struct smb2_durable_v2 *d);
/* Request data, for clients: DHnQ 16, DHnC 16, DH2Q 32, DH2C 36 bytes. */
size_t smb2_dhnq_encode(uint8_t *buf);
size_t smb2_dhnc_encode(uint8_t *buf, const struct smb2_fid *fid);
size_t smb2_dh2q_encode(uint8_t *buf, const struct smb2_durable_v2 *d);
size_t smb2_dh2c_encode(uint8_t *buf, const struct smb2_durable_v2 *d);
/* Response data: DHnQ 8 bytes (reserved), DH2Q 8 (timeout, flags). */
size_t smb2_dh2q_rsp_encode(uint8_t *buf, uint32_t timeout, uint32_t flags);
int smb2_dh2q_rsp_decode(const uint8_t *p, size_t len, uint32_t *timeout, uint32_t *flags);

#endif
