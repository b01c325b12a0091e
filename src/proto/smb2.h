/* SPDX-License-Identifier: MIT */
/*
 * SMB2/3 wire codec ([MS-SMB2], [MS-FSCC]). Pure: no I/O, no allocation.
 * Decoders take one PDU (64-byte header + body, bounded by NextCommand),
 * check every offset and length against it, and return pointers into it.
 * Encoders write through a struct wcur whose buffer starts at the PDU
 * header, so buffer offsets equal w->off.
 */
#ifndef RDAX_PROTO_SMB2_H
#define RDAX_PROTO_SMB2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define SMB2_HDR_SIZE 64
#define SMB2_PROTO_ID 0x424D53FEu	/* 0xFE 'S' 'M' 'B' */
#define SMB2_TRANSFORM_ID 0x424D53FDu	/* 0xFD 'S' 'M' 'B' */
#define SMB2_COMPRESS_ID 0x424D53FCu
#define SMB1_PROTO_ID 0x424D53FFu
#define SMB2_TRANSFORM_SIZE 52

/* [MS-SMB2] 2.2.1 commands */
enum smb2_cmd {
	SMB2_NEGOTIATE = 0x00,
	SMB2_SESSION_SETUP = 0x01,
	SMB2_LOGOFF = 0x02,
	SMB2_TREE_CONNECT = 0x03,
	SMB2_TREE_DISCONNECT = 0x04,
	SMB2_CREATE = 0x05,
	SMB2_CLOSE = 0x06,
	SMB2_FLUSH = 0x07,
	SMB2_READ = 0x08,
	SMB2_WRITE = 0x09,
	SMB2_LOCK = 0x0A,
	SMB2_IOCTL = 0x0B,
	SMB2_CANCEL = 0x0C,
	SMB2_ECHO = 0x0D,
	SMB2_QUERY_DIRECTORY = 0x0E,
	SMB2_CHANGE_NOTIFY = 0x0F,
	SMB2_QUERY_INFO = 0x10,
	SMB2_SET_INFO = 0x11,
	SMB2_OPLOCK_BREAK = 0x12,
	SMB2_NR_COMMANDS
};

/* [MS-SMB2] 2.2.1.2 header flags */
#define SMB2_FLAGS_SERVER_TO_REDIR 0x00000001u
#define SMB2_FLAGS_ASYNC_COMMAND 0x00000002u
#define SMB2_FLAGS_RELATED_OPERATIONS 0x00000004u
#define SMB2_FLAGS_SIGNED 0x00000008u
#define SMB2_FLAGS_PRIORITY_MASK 0x00000070u
#define SMB2_FLAGS_DFS_OPERATIONS 0x10000000u
#define SMB2_FLAGS_REPLAY_OPERATION 0x20000000u

/* dialects */
#define SMB2_DIALECT_202 0x0202
#define SMB2_DIALECT_210 0x0210
#define SMB2_DIALECT_300 0x0300
#define SMB2_DIALECT_302 0x0302
#define SMB2_DIALECT_311 0x0311
#define SMB2_DIALECT_WILDCARD 0x02FF

/* [MS-SMB2] 2.2.3 security mode and capabilities */
#define SMB2_NEGOTIATE_SIGNING_ENABLED 0x0001
#define SMB2_NEGOTIATE_SIGNING_REQUIRED 0x0002
#define SMB2_GLOBAL_CAP_DFS 0x00000001u
#define SMB2_GLOBAL_CAP_LEASING 0x00000002u
#define SMB2_GLOBAL_CAP_LARGE_MTU 0x00000004u
#define SMB2_GLOBAL_CAP_MULTI_CHANNEL 0x00000008u
/* NETWORK_INTERFACE_INFO Capability ([MS-SMB2] 2.2.32.5) */
#define SMB2_IFACE_RSS_CAPABLE 0x00000001u
#define SMB2_IFACE_RDMA_CAPABLE 0x00000002u
#define SMB2_GLOBAL_CAP_PERSISTENT_HANDLES 0x00000010u
#define SMB2_GLOBAL_CAP_DIRECTORY_LEASING 0x00000020u
#define SMB2_GLOBAL_CAP_ENCRYPTION 0x00000040u

/* [MS-SMB2] 2.2.3.1 negotiate contexts */
#define SMB2_PREAUTH_INTEGRITY_CAPABILITIES 0x0001
#define SMB2_ENCRYPTION_CAPABILITIES 0x0002
#define SMB2_COMPRESSION_CAPABILITIES 0x0003
#define SMB2_NETNAME_NEGOTIATE_CONTEXT_ID 0x0005
#define SMB2_TRANSPORT_CAPABILITIES 0x0006
#define SMB2_RDMA_TRANSFORM_CAPABILITIES 0x0007
#define SMB2_SIGNING_CAPABILITIES 0x0008
#define SMB2_POSIX_EXTENSIONS_AVAILABLE 0x0100
#define SMB2_PREAUTH_SHA512 0x0001
#define SMB2_CIPHER_AES128_CCM 1
#define SMB2_CIPHER_AES128_GCM 2
#define SMB2_CIPHER_AES256_CCM 3
#define SMB2_CIPHER_AES256_GCM 4
#define SMB2_SIGNING_HMAC_SHA256 0x0000
#define SMB2_SIGNING_AES_CMAC 0x0001
#define SMB2_SIGNING_AES_GMAC 0x0002

/* [MS-SMB2] 2.2.5/2.2.6 session setup */
#define SMB2_SESSION_FLAG_BINDING 0x01
#define SMB2_SESSION_FLAG_IS_GUEST 0x0001
#define SMB2_SESSION_FLAG_IS_NULL 0x0002
#define SMB2_SESSION_FLAG_ENCRYPT_DATA 0x0004

/* [MS-SMB2] 2.2.10 tree connect response */
#define SMB2_SHARE_TYPE_DISK 0x01
#define SMB2_SHARE_TYPE_PIPE 0x02
#define SMB2_SHAREFLAG_MANUAL_CACHING 0x00000000u
#define SMB2_SHAREFLAG_NO_CACHING 0x00000030u
#define SMB2_SHAREFLAG_ENCRYPT_DATA 0x00008000u
#define SMB2_SHARE_CAP_DFS 0x00000008u
#define SMB2_SHARE_CAP_CONTINUOUS_AVAILABILITY 0x00000010u
#define SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT 0x0004

/* [MS-SMB2] 2.2.13.1 access mask */
#define FILE_READ_DATA 0x00000001u
#define FILE_LIST_DIRECTORY 0x00000001u
#define FILE_WRITE_DATA 0x00000002u
#define FILE_ADD_FILE 0x00000002u
#define FILE_APPEND_DATA 0x00000004u
#define FILE_ADD_SUBDIRECTORY 0x00000004u
#define FILE_READ_EA 0x00000008u
#define FILE_WRITE_EA 0x00000010u
#define FILE_EXECUTE 0x00000020u
#define FILE_TRAVERSE 0x00000020u
#define FILE_DELETE_CHILD 0x00000040u
#define FILE_READ_ATTRIBUTES 0x00000080u
#define FILE_WRITE_ATTRIBUTES 0x00000100u
#define DELETE_ACCESS 0x00010000u
#define READ_CONTROL 0x00020000u
#define WRITE_DAC 0x00040000u
#define WRITE_OWNER 0x00080000u
#define SYNCHRONIZE 0x00100000u
#define ACCESS_SYSTEM_SECURITY 0x01000000u
#define MAXIMUM_ALLOWED 0x02000000u
#define GENERIC_ALL 0x10000000u
#define GENERIC_EXECUTE 0x20000000u
#define GENERIC_WRITE 0x40000000u
#define GENERIC_READ 0x80000000u
#define FILE_ALL_ACCESS 0x001F01FFu
#define FILE_GENERIC_READ 0x00120089u
#define FILE_GENERIC_WRITE 0x00120116u
#define FILE_GENERIC_EXECUTE 0x001200A0u

/* [MS-FSCC] 2.6 file attributes */
#define FILE_ATTRIBUTE_READONLY 0x00000001u
#define FILE_ATTRIBUTE_HIDDEN 0x00000002u
#define FILE_ATTRIBUTE_SYSTEM 0x00000004u
#define FILE_ATTRIBUTE_DIRECTORY 0x00000010u
#define FILE_ATTRIBUTE_ARCHIVE 0x00000020u
#define FILE_ATTRIBUTE_NORMAL 0x00000080u
#define FILE_ATTRIBUTE_TEMPORARY 0x00000100u
#define FILE_ATTRIBUTE_SPARSE_FILE 0x00000200u
#define FILE_ATTRIBUTE_REPARSE_POINT 0x00000400u
#define FILE_ATTRIBUTE_OFFLINE 0x00001000u

/* [MS-SMB2] 2.2.13 create */
#define FILE_SHARE_READ 0x1u
#define FILE_SHARE_WRITE 0x2u
#define FILE_SHARE_DELETE 0x4u
enum smb2_disposition {
	FILE_SUPERSEDE = 0,
	FILE_OPEN = 1,
	FILE_CREATE = 2,
	FILE_OPEN_IF = 3,
	FILE_OVERWRITE = 4,
	FILE_OVERWRITE_IF = 5,
};
#define FILE_DIRECTORY_FILE 0x00000001u
#define FILE_WRITE_THROUGH 0x00000002u
#define FILE_SEQUENTIAL_ONLY 0x00000004u
#define FILE_NO_INTERMEDIATE_BUFFERING 0x00000008u
#define FILE_NON_DIRECTORY_FILE 0x00000040u
#define FILE_NO_EA_KNOWLEDGE 0x00000200u
#define FILE_RANDOM_ACCESS 0x00000800u
#define FILE_DELETE_ON_CLOSE 0x00001000u
#define FILE_OPEN_BY_FILE_ID 0x00002000u
#define FILE_OPEN_FOR_BACKUP_INTENT 0x00004000u
#define FILE_OPEN_REPARSE_POINT 0x00200000u
#define FILE_CREATE_OPTIONS_VALID 0x00FFFFFFu
enum smb2_create_action {
	FILE_SUPERSEDED = 0,
	FILE_OPENED = 1,
	FILE_CREATED = 2,
	FILE_OVERWRITTEN = 3,
};
#define SMB2_OPLOCK_LEVEL_NONE 0x00
#define SMB2_OPLOCK_LEVEL_LEASE 0xFF
#define SMB2_IMPERSONATION_MAX 3

/* [MS-SMB2] 2.2.15 close */
#define SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB 0x0001

/* [MS-SMB2] 2.2.19/2.2.21 read/write */
#define SMB2_CHANNEL_NONE 0x00000000u
#define SMB2_CHANNEL_RDMA_V1 0x00000001u
#define SMB2_CHANNEL_RDMA_V1_INVALIDATE 0x00000002u
#define SMB2_CHANNEL_RDMA_TRANSFORM 0x00000003u
#define SMB2_READFLAG_READ_UNBUFFERED 0x01
#define SMB2_WRITEFLAG_WRITE_THROUGH 0x00000001u
#define SMB2_WRITEFLAG_WRITE_UNBUFFERED 0x00000002u

/* [MS-SMB2] 2.2.33 query directory */
#define SMB2_RESTART_SCANS 0x01
#define SMB2_RETURN_SINGLE_ENTRY 0x02
#define SMB2_INDEX_SPECIFIED 0x04
#define SMB2_REOPEN 0x10

/* [MS-SMB2] 2.2.37 query info */
#define SMB2_0_INFO_FILE 0x01
#define SMB2_0_INFO_FILESYSTEM 0x02
#define SMB2_0_INFO_SECURITY 0x03
#define SMB2_0_INFO_QUOTA 0x04

/* [MS-FSCC] 2.4 file information classes */
enum fscc_file_class {
	FileDirectoryInformation = 1,
	FileFullDirectoryInformation = 2,
	FileBothDirectoryInformation = 3,
	FileBasicInformation = 4,
	FileStandardInformation = 5,
	FileInternalInformation = 6,
	FileEaInformation = 7,
	FileAccessInformation = 8,
	FileNameInformation = 9,
	FileRenameInformation = 10,
	FileLinkInformation = 11,
	FileNamesInformation = 12,
	FileDispositionInformation = 13,
	FilePositionInformation = 14,
	FileFullEaInformation = 15,
	FileModeInformation = 16,
	FileAlignmentInformation = 17,
	FileAllInformation = 18,
	FileAllocationInformation = 19,
	FileEndOfFileInformation = 20,
	FileAlternateNameInformation = 21,
	FileStreamInformation = 22,
	FileCompressionInformation = 28,
	FileNetworkOpenInformation = 34,
	FileAttributeTagInformation = 35,
	FileIdBothDirectoryInformation = 37,
	FileIdFullDirectoryInformation = 38,
	FileValidDataLengthInformation = 39,
	FileNormalizedNameInformation = 48,
	FileIdInformation = 59,
	FileDispositionInformationEx = 64,
	FileRenameInformationEx = 65,
};

/* [MS-FSCC] 2.5 file system information classes */
enum fscc_fs_class {
	FileFsVolumeInformation = 1,
	FileFsLabelInformation = 2,
	FileFsSizeInformation = 3,
	FileFsDeviceInformation = 4,
	FileFsAttributeInformation = 5,
	FileFsControlInformation = 6,
	FileFsFullSizeInformation = 7,
	FileFsObjectIdInformation = 8,
	FileFsSectorSizeInformation = 11,
};

/* [MS-FSCC] 2.3 FSCTL codes */
#define FSCTL_DFS_GET_REFERRALS 0x00060194u
#define FSCTL_DFS_GET_REFERRALS_EX 0x000601B0u
#define FSCTL_SET_REPARSE_POINT 0x000900A4u
#define FSCTL_GET_REPARSE_POINT 0x000900A8u
#define FSCTL_CREATE_OR_GET_OBJECT_ID 0x000900C0u
#define FSCTL_SET_SPARSE 0x000900C4u
#define FSCTL_SRV_REQUEST_RESUME_KEY 0x00140078u
#define FSCTL_QUERY_NETWORK_INTERFACE_INFO 0x001401FCu
#define FSCTL_VALIDATE_NEGOTIATE_INFO 0x00140204u
#define FSCTL_SRV_COPYCHUNK 0x001440F2u
#define FSCTL_SRV_COPYCHUNK_WRITE 0x001480F2u
#define FSCTL_PIPE_TRANSCEIVE 0x0011C017u
#define FSCTL_QUERY_ALLOCATED_RANGES 0x000940CFu
#define FSCTL_SET_ZERO_DATA 0x000980C8u
#define FSCTL_DUPLICATE_EXTENTS_TO_FILE 0x00098344u
#define SMB2_0_IOCTL_IS_FSCTL 0x00000001u
#define SMB2_NI_CAP_RSS 0x00000001u
#define SMB2_NI_CAP_RDMA 0x00000002u

/* create context tags, [MS-SMB2] 2.2.13.2 */
#define SMB2_CTX_MXAC "MxAc"
#define SMB2_CTX_QFID "QFid"
#define SMB2_CTX_LEASE "RqLs"
#define SMB2_CTX_ALSI "AlSi"		/* AllocationSize: 8 bytes */
#define SMB2_CTX_EXTA "ExtA"		/* FILE_FULL_EA_INFORMATION: the new file's EAs */
#define SMB2_CTX_SECD "SecD"		/* a self-relative security descriptor */

/* Limits */
#define SMB2_MAX_DIALECTS 16
#define SMB2_MAX_IO_SIZE (8u << 20)		/* 8 MiB read/write/transact */
#define SMB2_CREDIT_UNIT 65536u
#define SMB2_MAX_COMPOUND 32			/* PDUs per chain we accept */
#define SMB2_FID_COMPOUND UINT64_MAX		/* related-chain FileId */

/* [MS-SMB2] 2.2.1.1/2.2.1.2 header */
struct smb2_hdr {
	uint16_t credit_charge;
	uint32_t status;		/* response; ChannelSequence in requests */
	uint16_t command;
	uint16_t credits;		/* CreditRequest / CreditResponse */
	uint32_t flags;
	uint32_t next_command;
	uint64_t message_id;
	uint64_t async_id;		/* when SMB2_FLAGS_ASYNC_COMMAND */
	uint32_t process_id;
	uint32_t tree_id;
	uint64_t session_id;
	uint8_t signature[16];
};

int smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h);
void smb2_hdr_encode(uint8_t *p, const struct smb2_hdr *h);

/* A file id: persistent + volatile. */
struct smb2_fid {
	uint64_t persistent;
	uint64_t volatile_id;
};

static inline bool smb2_fid_is_compound(const struct smb2_fid *f)
{
	return f->persistent == SMB2_FID_COMPOUND &&
	       f->volatile_id == SMB2_FID_COMPOUND;
}

/* Byte range of the message: pointer + length, NULL/0 when absent. */
struct smb2_buf {
	const uint8_t *p;
	uint32_t len;
};

/*
 * Compound walk. smb2_chain_next() returns the length of the PDU at
 * msg[off] (bounded by NextCommand) and stores the next offset (0 at
 * the end). -EBADMSG on a malformed chain.
 */
int smb2_chain_pdu(const uint8_t *msg, size_t len, size_t off,
		   size_t *pdu_len, size_t *next_off);

/* Validation of a request PDU before dispatch, [MS-SMB2] 3.3.5.2.6. */
int smb2_req_validate(const uint8_t *pdu, size_t len, const struct smb2_hdr *h);
/* Credits a request needs for its payload, [MS-SMB2] 3.1.5.2. */
uint32_t smb2_req_credits_needed(const uint8_t *pdu, size_t len,
				 const struct smb2_hdr *h);
uint16_t smb2_credit_charge_for(uint64_t bytes);

/* Generic error response, [MS-SMB2] 2.2.2. */
void smb2_error_rsp_encode(struct wcur *w, const void *data, uint32_t len);
/* The same with nctx SMB 3.1.1 error contexts in data (2.2.2.1). */
void smb2_error_ctx_rsp_encode(struct wcur *w, uint8_t nctx, const void *data, uint32_t len);
/* StructureSize of each request and response, 0 if unknown. */
uint16_t smb2_req_structure_size(uint16_t cmd);
uint16_t smb2_rsp_structure_size(uint16_t cmd);
const char *smb2_cmd_name(uint16_t cmd);

/* ---- NEGOTIATE [MS-SMB2] 2.2.3 / 2.2.4 ---- */

struct smb2_negctx {
	bool preauth;			/* context present */
	bool preauth_sha512;
	uint8_t salt[32];
	uint16_t salt_len;
	uint16_t ciphers[8];
	uint16_t ncipher;
	uint16_t signs[8];
	uint16_t nsign;
	/* SMB2_RDMA_TRANSFORM_CAPABILITIES (2.2.3.1.6): ids, 0 = absent */
	uint16_t xforms[4];
	uint16_t nxform;
	bool posix;
	bool has_netname;
};

struct smb2_negotiate_req {
	uint16_t security_mode;
	uint32_t capabilities;
	uint8_t client_guid[16];
	uint16_t ndialects;
	uint16_t dialects[SMB2_MAX_DIALECTS];
	struct smb2_negctx ctx;
	uint16_t ctx_count;
};

struct smb2_negotiate_rsp {
	uint16_t security_mode;
	uint16_t dialect;
	uint8_t server_guid[16];
	uint32_t capabilities;
	uint32_t max_transact;
	uint32_t max_read;
	uint32_t max_write;
	uint64_t system_time;
	uint64_t start_time;
	struct smb2_buf security;
	/* 3.1.1 contexts chosen */
	uint16_t cipher;		/* 0 = none */
	uint16_t signing;		/* SMB2_SIGNING_*; only if sign_ctx */
	bool sign_ctx;
	bool preauth;
	bool posix;			/* SMB2_POSIX_EXTENSIONS_AVAILABLE */
	uint8_t salt[32];
	/* RDMA transforms the server takes (2.2.3.1.6), nxform 0: none */
	uint16_t xforms[4];
	uint16_t nxform;
};

int smb2_negotiate_req_decode(const uint8_t *p, size_t len,
			      struct smb2_negotiate_req *r);
void smb2_negotiate_req_encode(struct wcur *w, const struct smb2_negotiate_req *r);
int smb2_negotiate_rsp_decode(const uint8_t *p, size_t len,
			      struct smb2_negotiate_rsp *r);
void smb2_negotiate_rsp_encode(struct wcur *w, const struct smb2_negotiate_rsp *r);

/* ---- SESSION_SETUP [MS-SMB2] 2.2.5 / 2.2.6 ---- */

struct smb2_sess_setup_req {
	uint8_t flags;
	uint8_t security_mode;
	uint32_t capabilities;
	uint64_t prev_session_id;
	struct smb2_buf security;
};

struct smb2_sess_setup_rsp {
	uint16_t session_flags;
	struct smb2_buf security;
};

int smb2_sess_setup_req_decode(const uint8_t *p, size_t len,
			       struct smb2_sess_setup_req *r);
void smb2_sess_setup_req_encode(struct wcur *w, const struct smb2_sess_setup_req *r);
int smb2_sess_setup_rsp_decode(const uint8_t *p, size_t len,
			       struct smb2_sess_setup_rsp *r);
void smb2_sess_setup_rsp_encode(struct wcur *w, const struct smb2_sess_setup_rsp *r);

/* LOGOFF, TREE_DISCONNECT, ECHO, CANCEL: 4-byte bodies. */
void smb2_simple_encode(struct wcur *w);

/* ---- TREE_CONNECT [MS-SMB2] 2.2.9 / 2.2.10 ---- */

struct smb2_tree_connect_req {
	uint16_t flags;
	struct smb2_buf path;		/* UTF-16LE "\\server\share" */
};

struct smb2_tree_connect_rsp {
	uint8_t share_type;
	uint32_t share_flags;
	uint32_t capabilities;
	uint32_t maximal_access;
};

int smb2_tree_connect_req_decode(const uint8_t *p, size_t len,
				 struct smb2_tree_connect_req *r);
void smb2_tree_connect_req_encode(struct wcur *w, const struct smb2_tree_connect_req *r);
int smb2_tree_connect_rsp_decode(const uint8_t *p, size_t len,
				 struct smb2_tree_connect_rsp *r);
void smb2_tree_connect_rsp_encode(struct wcur *w, const struct smb2_tree_connect_rsp *r);

/* ---- CREATE [MS-SMB2] 2.2.13 / 2.2.14 ---- */

struct smb2_create_ctx {
	struct smb2_buf name;
	struct smb2_buf data;
};

#define SMB2_MAX_CREATE_CTX 16

struct smb2_create_req {
	uint8_t oplock;
	uint32_t impersonation;
	uint32_t desired_access;
	uint32_t file_attributes;
	uint32_t share_access;
	uint32_t disposition;
	uint32_t options;
	struct smb2_buf name;		/* UTF-16LE */
	struct smb2_buf contexts;	/* raw chain */
};

struct smb2_file_times {
	uint64_t creation;
	uint64_t last_access;
	uint64_t last_write;
	uint64_t change;
};

struct smb2_create_rsp {
	uint8_t oplock;
	uint8_t flags;
	uint32_t action;
	struct smb2_file_times t;
	uint64_t allocation_size;
	uint64_t end_of_file;
	uint32_t attributes;
	struct smb2_fid fid;
	struct smb2_buf contexts;	/* pre-encoded chain */
};

int smb2_create_req_decode(const uint8_t *p, size_t len, struct smb2_create_req *r);
void smb2_create_req_encode(struct wcur *w, const struct smb2_create_req *r);
int smb2_create_rsp_decode(const uint8_t *p, size_t len, struct smb2_create_rsp *r);
void smb2_create_rsp_encode(struct wcur *w, const struct smb2_create_rsp *r);

/*
 * Walk a create-context chain ([MS-SMB2] 2.2.13.2): returns the number
 * of contexts stored in out (up to max), or -EBADMSG.
 */
int smb2_create_ctx_parse(const uint8_t *p, size_t len,
			  struct smb2_create_ctx *out, int max);
/* Append one context to a chain being built in w (start = chain start). */
void smb2_create_ctx_add(struct wcur *w, size_t *prev_off, const char *tag,
			 const void *data, uint32_t len);
/* The same with a name of nlen bytes (a 16-byte GUID: the POSIX context). */
void smb2_create_ctx_add_name(struct wcur *w, size_t *prev_off, const char *name,
			      uint16_t nlen, const void *data, uint32_t len);

/* ---- CLOSE [MS-SMB2] 2.2.15 / 2.2.16 ---- */

struct smb2_close_req {
	uint16_t flags;
	struct smb2_fid fid;
};

struct smb2_close_rsp {
	uint16_t flags;
	struct smb2_file_times t;
	uint64_t allocation_size;
	uint64_t end_of_file;
	uint32_t attributes;
};

int smb2_close_req_decode(const uint8_t *p, size_t len, struct smb2_close_req *r);
void smb2_close_req_encode(struct wcur *w, const struct smb2_close_req *r);
int smb2_close_rsp_decode(const uint8_t *p, size_t len, struct smb2_close_rsp *r);
void smb2_close_rsp_encode(struct wcur *w, const struct smb2_close_rsp *r);

/* ---- FLUSH [MS-SMB2] 2.2.17 ---- */

int smb2_flush_req_decode(const uint8_t *p, size_t len, struct smb2_fid *fid);
void smb2_flush_req_encode(struct wcur *w, const struct smb2_fid *fid);

/* ---- READ / WRITE [MS-SMB2] 2.2.19 - 2.2.22 ---- */

struct smb2_read_req {
	uint8_t padding;
	uint8_t flags;
	uint32_t length;
	uint64_t offset;
	struct smb2_fid fid;
	uint32_t minimum;
	uint32_t channel;
	uint32_t remaining;
	struct smb2_buf channel_info;
};

struct smb2_read_rsp {
	uint8_t data_offset;
	uint32_t data_length;
	uint32_t data_remaining;
	uint32_t flags;			/* SMB2_READFLAG_RESPONSE_RDMA_TRANSFORM */
	struct smb2_buf data;		/* decode only */
};

struct smb2_write_req {
	uint16_t data_offset;
	uint32_t length;
	uint64_t offset;
	struct smb2_fid fid;
	uint32_t channel;
	uint32_t remaining;
	uint32_t flags;
	struct smb2_buf channel_info;
	struct smb2_buf data;
};

struct smb2_write_rsp {
	uint32_t count;
	uint32_t remaining;
};

#define SMB2_READ_RSP_DATA_OFF 80	/* header + 16-byte fixed body */
#define SMB2_WRITE_REQ_DATA_OFF 112	/* header + 48-byte fixed body */

int smb2_read_req_decode(const uint8_t *p, size_t len, struct smb2_read_req *r);
void smb2_read_req_encode(struct wcur *w, const struct smb2_read_req *r);
int smb2_read_rsp_decode(const uint8_t *p, size_t len, struct smb2_read_rsp *r);
/* Writes the fixed part; the caller appends data_length bytes. */
void smb2_read_rsp_encode(struct wcur *w, const struct smb2_read_rsp *r);
int smb2_write_req_decode(const uint8_t *p, size_t len, struct smb2_write_req *r);
/* Writes the fixed part; the caller appends length bytes of data. */
void smb2_write_req_encode(struct wcur *w, const struct smb2_write_req *r);
int smb2_write_rsp_decode(const uint8_t *p, size_t len, struct smb2_write_rsp *r);
void smb2_write_rsp_encode(struct wcur *w, const struct smb2_write_rsp *r);

/* ---- LOCK [MS-SMB2] 2.2.26 ---- */

#define SMB2_LOCKFLAG_SHARED 0x1u
#define SMB2_LOCKFLAG_EXCLUSIVE 0x2u
#define SMB2_LOCKFLAG_UNLOCK 0x4u
#define SMB2_LOCKFLAG_FAIL_IMMEDIATELY 0x10u

struct smb2_lock_elem {
	uint64_t offset;
	uint64_t length;
	uint32_t flags;
};

struct smb2_lock_req {
	uint16_t count;
	struct smb2_fid fid;
	const uint8_t *locks;		/* count * 24 bytes */
};

int smb2_lock_req_decode(const uint8_t *p, size_t len, struct smb2_lock_req *r);
void smb2_lock_elem_get(const struct smb2_lock_req *r, int i, struct smb2_lock_elem *e);

/* ---- IOCTL [MS-SMB2] 2.2.31 / 2.2.32 ---- */

struct smb2_ioctl_req {
	uint32_t ctl_code;
	struct smb2_fid fid;
	struct smb2_buf input;
	uint32_t max_input_response;
	uint32_t max_output_response;
	uint32_t flags;
};

struct smb2_ioctl_rsp {
	uint32_t ctl_code;
	struct smb2_fid fid;
	struct smb2_buf output;
};

int smb2_ioctl_req_decode(const uint8_t *p, size_t len, struct smb2_ioctl_req *r);
void smb2_ioctl_req_encode(struct wcur *w, const struct smb2_ioctl_req *r);
int smb2_ioctl_rsp_decode(const uint8_t *p, size_t len, struct smb2_ioctl_rsp *r);
/* Fixed part with OutputOffset at 112; the caller appends output. */
void smb2_ioctl_rsp_encode(struct wcur *w, const struct smb2_ioctl_rsp *r,
			   uint32_t output_len);

/* ---- QUERY_DIRECTORY [MS-SMB2] 2.2.33 / 2.2.34 ---- */

struct smb2_query_dir_req {
	uint8_t info_class;
	uint8_t flags;
	uint32_t file_index;
	struct smb2_fid fid;
	struct smb2_buf pattern;	/* UTF-16LE */
	uint32_t output_len;
};

int smb2_query_dir_req_decode(const uint8_t *p, size_t len, struct smb2_query_dir_req *r);
void smb2_query_dir_req_encode(struct wcur *w, const struct smb2_query_dir_req *r);
/* QUERY_DIRECTORY and QUERY_INFO responses: offset at 72, then data. */
int smb2_out_buf_rsp_decode(const uint8_t *p, size_t len, struct smb2_buf *out);
void smb2_out_buf_rsp_encode(struct wcur *w, uint32_t out_len);

/* ---- CHANGE_NOTIFY [MS-SMB2] 2.2.35 / 2.2.36 ---- */

#define SMB2_WATCH_TREE 0x0001u

struct smb2_notify_req {
	uint16_t flags;			/* SMB2_WATCH_TREE */
	uint32_t output_len;
	struct smb2_fid fid;
	uint32_t filter;		/* FILE_NOTIFY_CHANGE_* */
};

void smb2_notify_req_decode(const uint8_t *p, size_t len, struct smb2_notify_req *r);
void smb2_notify_req_encode(struct wcur *w, const struct smb2_notify_req *r);
/* The response is smb2_out_buf_rsp_*: the same layout as QUERY_DIRECTORY's. */

/* ---- QUERY_INFO / SET_INFO [MS-SMB2] 2.2.37 - 2.2.40 ---- */

struct smb2_query_info_req {
	uint8_t info_type;
	uint8_t info_class;
	uint32_t output_len;
	struct smb2_buf input;
	uint32_t additional;
	uint32_t flags;
	struct smb2_fid fid;
};

struct smb2_set_info_req {
	uint8_t info_type;
	uint8_t info_class;
	struct smb2_buf data;
	uint32_t additional;
	struct smb2_fid fid;
};

int smb2_query_info_req_decode(const uint8_t *p, size_t len, struct smb2_query_info_req *r);
void smb2_query_info_req_encode(struct wcur *w, const struct smb2_query_info_req *r);
int smb2_set_info_req_decode(const uint8_t *p, size_t len, struct smb2_set_info_req *r);
void smb2_set_info_req_encode(struct wcur *w, const struct smb2_set_info_req *r);

/* ---- transport framing ---- */

/* Direct TCP [MS-SMB2] 2.1: 1 zero byte + 24-bit big-endian length. */
#define SMB2_TCP_MAX_MSG 0x00FFFFFFu

#endif
