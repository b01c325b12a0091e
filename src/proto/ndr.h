/* SPDX-License-Identifier: MIT */
/*
 * NDR 2.0 marshalling helpers (C706 chapter 14, little-endian, 32-bit
 * pointers): aligned integers, unique pointers with referent ids,
 * conformant varying UTF-16 strings. Offsets and alignment are those of
 * the stub data stream the cursor starts at. Pure, bounds-checked.
 */
#ifndef RDAX_PROTO_NDR_H
#define RDAX_PROTO_NDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

/* Longest string a decoder takes, in UTF-16 code units (NUL included). */
#define NDR_STRING_MAX 1024u

/* An encoder: the cursor and the next unique pointer's referent id. */
struct ndr_w {
	struct wcur w;
	uint32_t next_ref;
};

void ndr_w_init(struct ndr_w *n, void *buf, size_t cap);
void ndr_u16(struct ndr_w *n, uint16_t v);
void ndr_u32(struct ndr_w *n, uint32_t v);
/* A unique pointer: a fresh referent id when present, else 0. */
void ndr_ptr(struct ndr_w *n, bool present);
/* Conformant varying string of UTF-16LE with its NUL; bad UTF-8: err. */
void ndr_string(struct ndr_w *n, const char *s);

/* Decoders latch r->err on a short buffer, as the rcur getters do. */
uint16_t ndr_get_u16(struct rcur *r);
uint32_t ndr_get_u32(struct rcur *r);
/*
 * A conformant varying string into out (UTF-8, NUL-terminated): offset
 * 0, actual count <= max count <= NDR_STRING_MAX, valid UTF-16, the
 * terminating NUL (if any) last. -EBADMSG otherwise, or -E2BIG when
 * out is too small.
 */
int ndr_get_string(struct rcur *r, char *out, size_t cap);
/* A [unique] string pointer and its string: out is "" when null. */
int ndr_get_unique_string(struct rcur *r, char *out, size_t cap);

#endif
