/* SPDX-License-Identifier: MIT */
/* Strict UTF-8 <-> UTF-16LE conversion and simple upper-casing. */
#ifndef RDAX_UTIL_UTF16_H
#define RDAX_UTIL_UTF16_H

#include <stddef.h>
#include <stdint.h>

/* Accept U+0000 inside explicit-length input (rejected by default). */
#define UTF16_ALLOW_NUL 0x1u

/*
 * UTF-8 (NUL-terminated) to UTF-16LE, no terminator written. Returns the
 * number of bytes written, -EILSEQ for invalid UTF-8 (overlong forms,
 * encoded surrogates, > U+10FFFF, bad or truncated sequences), -E2BIG if
 * cap is too small, -EOVERFLOW for absurd lengths. out == NULL only
 * counts (cap is ignored).
 */
int utf8_to_utf16le(const char *s, uint8_t *out, size_t cap);

/* Same for an explicit-length input; NUL is an error unless allowed. */
int utf8n_to_utf16le(const char *s, size_t len, uint8_t *out, size_t cap,
		     unsigned int flags);

/*
 * UTF-16LE to UTF-8 with a terminating NUL (cap must have room for it).
 * Returns the length without the NUL, -EILSEQ for an odd length, an
 * unpaired surrogate or (unless UTF16_ALLOW_NUL) an embedded U+0000,
 * -E2BIG if cap is too small. out == NULL only counts.
 */
int utf16le_to_utf8(const uint8_t *in, size_t inlen, char *out, size_t cap);
int utf16le_to_utf8_flags(const uint8_t *in, size_t inlen, char *out,
			  size_t cap, unsigned int flags);

/*
 * Simple upper-case mapping of one UTF-16 code unit: ASCII, Latin-1,
 * Latin Extended-A, Greek and Cyrillic; other units are returned as is.
 */
uint16_t utf16_toupper(uint16_t c);

/* Upper-case a UTF-16LE buffer in place (len in bytes, odd byte kept). */
void utf16le_upper(uint8_t *buf, size_t len);

#endif
