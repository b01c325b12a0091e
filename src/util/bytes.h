/* SPDX-License-Identifier: MIT */
/* Little-endian accessors and bounds-checked cursors for wire codecs. */
#ifndef RDAX_UTIL_BYTES_H
#define RDAX_UTIL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t get_le16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t get_le32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t get_le64(const void *p)
{
	const uint8_t *b = p;

	return (uint64_t)get_le32(b) | (uint64_t)get_le32(b + 4) << 32;
}

static inline uint32_t get_be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static inline void put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void put_le64(void *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

static inline void put_be32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* True when [off, off + n) lies inside a buffer of size total. */
static inline bool range_ok(uint64_t off, uint64_t n, uint64_t total)
{
	return off <= total && n <= total - off;
}

static inline size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

/*
 * Write cursor over a caller-provided buffer. Writes past the end set
 * err and are dropped, so an encoder can check once at the end.
 */
struct wcur {
	uint8_t *p;
	size_t cap;
	size_t off;
	bool err;
};

static inline void wcur_init(struct wcur *w, void *buf, size_t cap)
{
	w->p = buf;
	w->cap = cap;
	w->off = 0;
	w->err = false;
}

static inline uint8_t *wcur_reserve(struct wcur *w, size_t n)
{
	uint8_t *r;

	if (w->err || !range_ok(w->off, n, w->cap)) {
		w->err = true;
		return NULL;
	}
	r = w->p + w->off;
	w->off += n;
	return r;
}

static inline void wcur_u8(struct wcur *w, uint8_t v)
{
	uint8_t *p = wcur_reserve(w, 1);

	if (p)
		*p = v;
}

static inline void wcur_le16(struct wcur *w, uint16_t v)
{
	uint8_t *p = wcur_reserve(w, 2);

	if (p)
		put_le16(p, v);
}

static inline void wcur_le32(struct wcur *w, uint32_t v)
{
	uint8_t *p = wcur_reserve(w, 4);

	if (p)
		put_le32(p, v);
}

static inline void wcur_le64(struct wcur *w, uint64_t v)
{
	uint8_t *p = wcur_reserve(w, 8);

	if (p)
		put_le64(p, v);
}

static inline void wcur_bytes(struct wcur *w, const void *src, size_t n)
{
	uint8_t *p = wcur_reserve(w, n);

	if (p && n)
		memcpy(p, src, n);
}

static inline void wcur_zero(struct wcur *w, size_t n)
{
	uint8_t *p = wcur_reserve(w, n);

	if (p && n)
		memset(p, 0, n);
}

/* Pad with zeros up to a multiple of a (a power of two). */
static inline void wcur_align(struct wcur *w, size_t a)
{
	size_t pad = ((w->off + a - 1) & ~(a - 1)) - w->off;

	wcur_zero(w, pad);
}

/* Read cursor: every getter checks bounds and latches err. */
struct rcur {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool err;
};

static inline void rcur_init(struct rcur *r, const void *buf, size_t len)
{
	r->p = buf;
	r->len = len;
	r->off = 0;
	r->err = false;
}

static inline const uint8_t *rcur_take(struct rcur *r, size_t n)
{
	const uint8_t *p;

	if (r->err || !range_ok(r->off, n, r->len)) {
		r->err = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static inline uint8_t rcur_u8(struct rcur *r)
{
	const uint8_t *p = rcur_take(r, 1);

	return p ? *p : 0;
}

static inline uint16_t rcur_le16(struct rcur *r)
{
	const uint8_t *p = rcur_take(r, 2);

	return p ? get_le16(p) : 0;
}

static inline uint32_t rcur_le32(struct rcur *r)
{
	const uint8_t *p = rcur_take(r, 4);

	return p ? get_le32(p) : 0;
}

static inline uint64_t rcur_le64(struct rcur *r)
{
	const uint8_t *p = rcur_take(r, 8);

	return p ? get_le64(p) : 0;
}

#endif
