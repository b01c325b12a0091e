/* SPDX-License-Identifier: MIT */
/*
 * FSCTL payloads of server-side copy: SRV_REQUEST_RESUME_KEY response
 * ([MS-SMB2] 2.2.32.3), SRV_COPYCHUNK_COPY (2.2.31.1) and
 * SRV_COPYCHUNK_RESPONSE (2.2.32.1); and the NETWORK_INTERFACE_INFO
 * list of FSCTL_QUERY_NETWORK_INTERFACE_INFO (2.2.32.5). Pure,
 * bounds-checked codec.
 */
#ifndef RDAX_PROTO_FSCTL_H
#define RDAX_PROTO_FSCTL_H

#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

#define FSCTL_RESUME_KEY_LEN 24
#define FSCTL_RESUME_KEY_RSP_MIN 28	/* key + ContextLength */
#define FSCTL_RESUME_KEY_RSP_LEN 32	/* what Windows sends ([MS-SMB2] 3.3.5.15.5) */
#define FSCTL_COPYCHUNK_HDR_LEN 32	/* SourceKey, ChunkCount, Reserved */
#define FSCTL_COPYCHUNK_CHUNK_LEN 24	/* SRV_COPYCHUNK */
#define FSCTL_COPYCHUNK_RSP_LEN 12

/*
 * Server-side copy limits of Windows Server 2008 R2 / 2012 and Samba
 * ([MS-SMB2] 3.3.3 ServerSideCopyMax*): chunks per request, bytes per
 * chunk, bytes per request.
 */
#define FSCTL_COPYCHUNK_MAX_CHUNKS 256u
#define FSCTL_COPYCHUNK_MAX_CHUNK_LEN (1u << 20)
#define FSCTL_COPYCHUNK_MAX_TOTAL (16u << 20)

/* TargetOffset meaning "the current end of the destination". */
#define FSCTL_COPYCHUNK_OFF_EOF UINT64_MAX

struct fsctl_chunk {
	uint64_t src_off;
	uint64_t dst_off;
	uint32_t len;
};

struct fsctl_copychunk {
	const uint8_t *key;		/* FSCTL_RESUME_KEY_LEN bytes */
	uint32_t count;
	const uint8_t *chunks;		/* count * FSCTL_COPYCHUNK_CHUNK_LEN */
};

struct fsctl_copychunk_rsp {
	uint32_t chunks_written;
	uint32_t chunk_bytes_written;
	uint32_t total_bytes_written;
};

/* Resume key response: the key, ContextLength 0, 4 reserved bytes. */
void fsctl_resume_key_rsp_encode(struct wcur *w, const uint8_t *key, size_t len);
int fsctl_resume_key_rsp_decode(const uint8_t *p, size_t len, uint8_t *key);

/*
 * SRV_COPYCHUNK_COPY. Decoding fails with -EBADMSG when the buffer is
 * shorter than the header or than ChunkCount chunks; c->key is set as
 * soon as the buffer holds a key, even then.
 */
int fsctl_copychunk_decode(const uint8_t *p, size_t len, struct fsctl_copychunk *c);
/* Chunk i of a decoded request (i < c->count). */
void fsctl_copychunk_get(const struct fsctl_copychunk *c, uint32_t i,
			 struct fsctl_chunk *ch);
void fsctl_copychunk_encode(struct wcur *w, const uint8_t *key,
			    const struct fsctl_chunk *chunks, uint32_t count);

void fsctl_copychunk_rsp_encode(struct wcur *w, const struct fsctl_copychunk_rsp *r);
int fsctl_copychunk_rsp_decode(const uint8_t *p, size_t len,
			       struct fsctl_copychunk_rsp *r);

/* ---- NETWORK_INTERFACE_INFO [MS-SMB2] 2.2.32.5 ---- */

#define FSCTL_NETIF_ENTRY_LEN 152	/* fixed part + SOCKADDR_STORAGE */
#define FSCTL_NETIF_RSS_CAPABLE 0x1u
#define FSCTL_NETIF_RDMA_CAPABLE 0x2u
#define FSCTL_NETIF_FAMILY_INET 0x0002
#define FSCTL_NETIF_FAMILY_INET6 0x0017

struct fsctl_netif {
	uint32_t if_index;
	uint32_t caps;			/* FSCTL_NETIF_*_CAPABLE */
	uint64_t link_speed;		/* bits per second */
	int family;			/* AF_INET or AF_INET6 */
	uint8_t addr[16];		/* network order; IPv4 in the first 4 */
	uint32_t scope_id;		/* IPv6 */
};

/*
 * Walk the Next chain into out[] (at most max entries kept; entries of
 * other address families are skipped). Returns the number kept, or
 * -EBADMSG for an entry that does not fit, a Next that does not move
 * past its entry, or a list longer than FSCTL_NETIF_MAX_WALK entries.
 */
#define FSCTL_NETIF_MAX_WALK 256
int fsctl_netif_decode(const uint8_t *p, size_t len, struct fsctl_netif *out,
		       unsigned int max);
/* One entry as a server sends it (tests); next 0 ends the list. */
void fsctl_netif_encode(struct wcur *w, const struct fsctl_netif *n, uint32_t next);

/* ---- sparse files and extents [MS-FSCC] 2.3.33, 2.3.34, 2.3.67, 2.3.8 ---- */

#define FSCTL_RANGE_LEN 16		/* FILE_ALLOCATED_RANGE_BUFFER */
#define FSCTL_ZERO_DATA_LEN 16		/* FILE_ZERO_DATA_INFORMATION */
#define FSCTL_DUP_EXTENTS_LEN 40	/* DUPLICATE_EXTENTS_DATA */

/* An offset and a length (QUERY_ALLOCATED_RANGES in and out). */
struct fsctl_range {
	uint64_t off;
	uint64_t len;
};

struct fsctl_dup_extents {
	uint64_t src_persistent;	/* the source's FileId */
	uint64_t src_volatile;
	uint64_t src_off;
	uint64_t dst_off;
	uint64_t len;
};

/*
 * Decoders fail with -EBADMSG for a buffer shorter than the structure
 * (more is allowed, as Windows does) and take values as they are:
 * offsets beyond INT64_MAX ("negative") are the caller's to refuse.
 */
int fsctl_range_decode(const uint8_t *p, size_t len, struct fsctl_range *r);
void fsctl_range_encode(struct wcur *w, const struct fsctl_range *r);
/* FILE_ZERO_DATA_INFORMATION: FileOffset, BeyondFinalZero */
int fsctl_zero_data_decode(const uint8_t *p, size_t len, uint64_t *off, uint64_t *beyond);
void fsctl_zero_data_encode(struct wcur *w, uint64_t off, uint64_t beyond);
int fsctl_dup_extents_decode(const uint8_t *p, size_t len, struct fsctl_dup_extents *d);
void fsctl_dup_extents_encode(struct wcur *w, const struct fsctl_dup_extents *d);

#endif
