// SPDX-License-Identifier: MIT
/* SMB2 header, compound walk and central request validation. */
#include <errno.h>

#include "proto/smb2.h"

/* [MS-SMB2] 2.2.x StructureSize of each request / response. */
static const uint16_t req_ss[SMB2_NR_COMMANDS] = {
	[SMB2_NEGOTIATE] = 36,	   [SMB2_SESSION_SETUP] = 25,
	[SMB2_LOGOFF] = 4,	   [SMB2_TREE_CONNECT] = 9,
	[SMB2_TREE_DISCONNECT] = 4, [SMB2_CREATE] = 57,
	[SMB2_CLOSE] = 24,	   [SMB2_FLUSH] = 24,
	[SMB2_READ] = 49,	   [SMB2_WRITE] = 49,
	[SMB2_LOCK] = 48,	   [SMB2_IOCTL] = 57,
	[SMB2_CANCEL] = 4,	   [SMB2_ECHO] = 4,
	[SMB2_QUERY_DIRECTORY] = 33, [SMB2_CHANGE_NOTIFY] = 32,
	[SMB2_QUERY_INFO] = 41,	   [SMB2_SET_INFO] = 33,
	[SMB2_OPLOCK_BREAK] = 24,
};

static const uint16_t rsp_ss[SMB2_NR_COMMANDS] = {
	[SMB2_NEGOTIATE] = 65,	   [SMB2_SESSION_SETUP] = 9,
	[SMB2_LOGOFF] = 4,	   [SMB2_TREE_CONNECT] = 16,
	[SMB2_TREE_DISCONNECT] = 4, [SMB2_CREATE] = 89,
	[SMB2_CLOSE] = 60,	   [SMB2_FLUSH] = 4,
	[SMB2_READ] = 17,	   [SMB2_WRITE] = 17,
	[SMB2_LOCK] = 4,	   [SMB2_IOCTL] = 49,
	[SMB2_CANCEL] = 0,	   [SMB2_ECHO] = 4,
	[SMB2_QUERY_DIRECTORY] = 9, [SMB2_CHANGE_NOTIFY] = 9,
	[SMB2_QUERY_INFO] = 9,	   [SMB2_SET_INFO] = 2,
	[SMB2_OPLOCK_BREAK] = 24,
};

static const char *const cmd_names[SMB2_NR_COMMANDS] = {
	"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT",
	"TREE_DISCONNECT", "CREATE", "CLOSE", "FLUSH", "READ", "WRITE",
	"LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
	"CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK",
};

uint16_t smb2_req_structure_size(uint16_t cmd)
{
	return cmd < SMB2_NR_COMMANDS ? req_ss[cmd] : 0;
}

uint16_t smb2_rsp_structure_size(uint16_t cmd)
{
	return cmd < SMB2_NR_COMMANDS ? rsp_ss[cmd] : 0;
}

const char *smb2_cmd_name(uint16_t cmd)
{
	return cmd < SMB2_NR_COMMANDS ? cmd_names[cmd] : "UNKNOWN";
}

int smb2_hdr_decode(const uint8_t *p, size_t len, struct smb2_hdr *h)
{
	if (len < SMB2_HDR_SIZE || get_le32(p) != SMB2_PROTO_ID ||
	    get_le16(p + 4) != SMB2_HDR_SIZE)
		return -EBADMSG;
	h->credit_charge = get_le16(p + 6);
	h->status = get_le32(p + 8);
	h->command = get_le16(p + 12);
	h->credits = get_le16(p + 14);
	h->flags = get_le32(p + 16);
	h->next_command = get_le32(p + 20);
	h->message_id = get_le64(p + 24);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
		h->async_id = get_le64(p + 32);
		h->process_id = 0;
		h->tree_id = 0;
	} else {
		h->async_id = 0;
		h->process_id = get_le32(p + 32);
		h->tree_id = get_le32(p + 36);
	}
	h->session_id = get_le64(p + 40);
	memcpy(h->signature, p + 48, 16);
	return 0;
}

void smb2_hdr_encode(uint8_t *p, const struct smb2_hdr *h)
{
	put_le32(p, SMB2_PROTO_ID);
	put_le16(p + 4, SMB2_HDR_SIZE);
	put_le16(p + 6, h->credit_charge);
	put_le32(p + 8, h->status);
	put_le16(p + 12, h->command);
	put_le16(p + 14, h->credits);
	put_le32(p + 16, h->flags);
	put_le32(p + 20, h->next_command);
	put_le64(p + 24, h->message_id);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
		put_le64(p + 32, h->async_id);
	} else {
		put_le32(p + 32, h->process_id);
		put_le32(p + 36, h->tree_id);
	}
	put_le64(p + 40, h->session_id);
	memcpy(p + 48, h->signature, 16);
}

int smb2_chain_pdu(const uint8_t *msg, size_t len, size_t off,
		   size_t *pdu_len, size_t *next_off)
{
	uint32_t next;

	if (off > len || len - off < SMB2_HDR_SIZE)
		return -EBADMSG;
	if (get_le32(msg + off) != SMB2_PROTO_ID)
		return -EBADMSG;
	next = get_le32(msg + off + 20);
	if (next == 0) {
		*pdu_len = len - off;
		*next_off = 0;
		return 0;
	}
	/* Each PDU is 8-byte aligned and at least a header long. */
	if (next < SMB2_HDR_SIZE || next % 8 || next >= len - off)
		return -EBADMSG;
	*pdu_len = next;
	*next_off = off + next;
	return 0;
}

uint16_t smb2_credit_charge_for(uint64_t bytes)
{
	uint64_t c = (bytes + SMB2_CREDIT_UNIT - 1) / SMB2_CREDIT_UNIT;

	return c ? (uint16_t)(c > 0xFFFF ? 0xFFFF : c) : 1;
}

uint32_t smb2_req_credits_needed(const uint8_t *pdu, size_t len,
				 const struct smb2_hdr *h)
{
	uint64_t a = 0, b = 0;

	switch (h->command) {
	case SMB2_READ:
		a = get_le32(pdu + 68);
		break;
	case SMB2_WRITE:
		a = get_le32(pdu + 68);
		break;
	case SMB2_IOCTL:
		a = (uint64_t)get_le32(pdu + 92) + get_le32(pdu + 104);
		b = get_le32(pdu + 108);
		break;
	case SMB2_QUERY_DIRECTORY:
		a = get_le32(pdu + 92);
		break;
	case SMB2_CHANGE_NOTIFY:
		a = get_le32(pdu + 68);
		break;
	case SMB2_QUERY_INFO:
		a = get_le32(pdu + 68);
		b = get_le32(pdu + 76);
		break;
	case SMB2_SET_INFO:
		a = get_le32(pdu + 68);
		break;
	default:
		return 1;
	}
	return smb2_credit_charge_for(a > b ? a : b);
}

int smb2_req_validate(const uint8_t *pdu, size_t len, const struct smb2_hdr *h)
{
	uint16_t ss;

	if (h->flags & SMB2_FLAGS_SERVER_TO_REDIR)
		return -EBADMSG;
	if (h->command >= SMB2_NR_COMMANDS)
		return -EOPNOTSUPP;
	ss = req_ss[h->command];
	/* Lease break acks are 36 bytes, oplock break acks 24. */
	if (h->command == SMB2_OPLOCK_BREAK && len >= SMB2_HDR_SIZE + 2 &&
	    get_le16(pdu + SMB2_HDR_SIZE) == 36)
		ss = 36;
	if (len < SMB2_HDR_SIZE + 2u ||
	    get_le16(pdu + SMB2_HDR_SIZE) != ss)
		return -EBADMSG;
	/* The fixed part must be present; odd sizes include 1 buffer byte. */
	if (len < (size_t)SMB2_HDR_SIZE + (ss & ~1u))
		return -EBADMSG;
	return 0;
}

void smb2_error_rsp_encode(struct wcur *w, const void *data, uint32_t len)
{
	smb2_error_ctx_rsp_encode(w, 0, data, len);
}

void smb2_error_ctx_rsp_encode(struct wcur *w, uint8_t nctx, const void *data, uint32_t len)
{
	wcur_le16(w, 9);
	wcur_u8(w, nctx);	/* ErrorContextCount */
	wcur_u8(w, 0);
	wcur_le32(w, len);
	if (len)
		wcur_bytes(w, data, len);
	else
		wcur_u8(w, 0);
}
