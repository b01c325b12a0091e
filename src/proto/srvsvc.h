/* SPDX-License-Identifier: MIT */
/*
 * The srvsvc and wkssvc calls rdaxd answers ([MS-SRVS] 3.1.4, [MS-WKST]
 * 3.2.4): NetShareEnumAll, NetShareGetInfo, NetServerGetInfo,
 * NetWkstaGetInfo. Requests decoded and responses encoded as NDR 2.0
 * stub data. Pure, bounds-checked codec.
 */
#ifndef RDAX_PROTO_SRVSVC_H
#define RDAX_PROTO_SRVSVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ndr.h"

/* opnums */
#define SRVSVC_NET_SHARE_ENUM_ALL 15
#define SRVSVC_NET_SHARE_GET_INFO 16
#define SRVSVC_NET_SERVER_GET_INFO 21
#define SRVSVC_NET_SHARE_ENUM 36
#define WKSSVC_NET_WKSTA_GET_INFO 0

/* share types ([MS-SRVS] 2.2.2.4) */
#define STYPE_DISKTREE 0x00000000u
#define STYPE_IPC 0x00000003u
#define STYPE_SPECIAL 0x80000000u

#define PLATFORM_ID_NT 500u
/* [MS-SRVS] 2.2.2.7 SV_TYPE_*: workstation, server, Unix, NT, server NT */
#define SV_TYPE_RDAX 0x00009803u

/* WERROR values */
#define WERR_OK 0u
#define WERR_INVALID_NAME 123u
#define WERR_INVALID_LEVEL 124u

struct srvsvc_share {
	const char *name;
	uint32_t type;
	const char *comment;
	const char *path;		/* "C:\..." */
	uint32_t users;			/* current uses */
};

struct srvsvc_enum_req {
	uint32_t level;
	uint32_t max_buffer;
	bool has_resume;
	uint32_t resume;
};

struct srvsvc_getinfo_req {
	char name[256];
	uint32_t level;
};

struct srvsvc_server {
	const char *name;
	const char *domain;		/* wkssvc */
	const char *comment;
	uint32_t major, minor;
	uint32_t type;
};

/* Stub data decoders: -EBADMSG for truncated or malformed NDR. */
int srvsvc_enum_req_decode(const uint8_t *p, size_t len, struct srvsvc_enum_req *r);
int srvsvc_getinfo_req_decode(const uint8_t *p, size_t len, struct srvsvc_getinfo_req *r);
/* NetServerGetInfo and NetWkstaGetInfo: [unique] server name, level. */
int srvsvc_level_req_decode(const uint8_t *p, size_t len, uint32_t *level);

/* Is a share info level one the encoders know (0, 1, 2, 501, 502)? */
bool srvsvc_share_level_ok(uint32_t level);
/* NetShareEnumAll: shares[0, n) of total; an unknown level: WERR_INVALID_LEVEL. */
void srvsvc_enum_rsp_encode(struct ndr_w *n, const struct srvsvc_enum_req *r,
			    const struct srvsvc_share *shares, uint32_t count);
/* NetShareGetInfo: share NULL answers werr with an empty union. */
void srvsvc_getinfo_rsp_encode(struct ndr_w *n, uint32_t level,
			       const struct srvsvc_share *share, uint32_t werr);
/* NetServerGetInfo levels 100, 101. */
void srvsvc_srvinfo_rsp_encode(struct ndr_w *n, uint32_t level,
			       const struct srvsvc_server *s);
/* NetWkstaGetInfo level 100. */
void wkssvc_info_rsp_encode(struct ndr_w *n, uint32_t level,
			    const struct srvsvc_server *s);

#endif
