// SPDX-License-Identifier: MIT
/* Strict UTF-8 <-> UTF-16LE conversion and simple upper-casing. */
#include "util/utf16.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "util/bytes.h"

#define UTF16_MAX_IN ((size_t)INT_MAX / 4)

/*
 * Decode one UTF-8 sequence starting at s[*i] (s[*i] >= 0x80). Returns
 * the code point or -EILSEQ.
 */
static long utf8_decode(const uint8_t *s, size_t len, size_t *i)
{
	uint8_t b = s[*i];
	uint32_t cp, min;
	size_t n, k;

	if (b >= 0xc2 && b <= 0xdf) {
		n = 1;
		cp = b & 0x1f;
		min = 0x80;
	} else if (b >= 0xe0 && b <= 0xef) {
		n = 2;
		cp = b & 0x0f;
		min = 0x800;
	} else if (b >= 0xf0 && b <= 0xf4) {
		n = 3;
		cp = b & 0x07;
		min = 0x10000;
	} else {
		return -EILSEQ;
	}
	if (n > len - *i - 1)
		return -EILSEQ;
	for (k = 1; k <= n; k++) {
		uint8_t c = s[*i + k];

		if ((c & 0xc0) != 0x80)
			return -EILSEQ;
		cp = cp << 6 | (c & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -EILSEQ;
	*i += n + 1;
	return (long)cp;
}

int utf8n_to_utf16le(const char *str, size_t len, uint8_t *out, size_t cap,
		     unsigned int flags)
{
	const uint8_t *s = (const uint8_t *)str;
	size_t i = 0, o = 0;

	if (len > UTF16_MAX_IN)
		return -EOVERFLOW;
	while (i < len) {
		long cp;

		if (s[i] < 0x80) {
			/* ASCII fast path */
			if (!s[i] && !(flags & UTF16_ALLOW_NUL))
				return -EILSEQ;
			if (out) {
				if (cap - o < 2)
					return -E2BIG;
				out[o] = s[i];
				out[o + 1] = 0;
			}
			o += 2;
			i++;
			continue;
		}
		cp = utf8_decode(s, len, &i);
		if (cp < 0)
			return (int)cp;
		if (cp < 0x10000) {
			if (out) {
				if (cap - o < 2)
					return -E2BIG;
				put_le16(out + o, (uint16_t)cp);
			}
			o += 2;
		} else {
			cp -= 0x10000;
			if (out) {
				if (cap - o < 4)
					return -E2BIG;
				put_le16(out + o, (uint16_t)(0xd800 | (cp >> 10)));
				put_le16(out + o + 2,
					 (uint16_t)(0xdc00 | (cp & 0x3ff)));
			}
			o += 4;
		}
	}
	return (int)o;
}

int utf8_to_utf16le(const char *s, uint8_t *out, size_t cap)
{
	return utf8n_to_utf16le(s, strlen(s), out, cap, 0);
}

int utf16le_to_utf8_flags(const uint8_t *in, size_t inlen, char *out,
			  size_t cap, unsigned int flags)
{
	uint8_t *d = (uint8_t *)out;
	size_t i = 0, o = 0;

	if (inlen & 1)
		return -EILSEQ;
	if (inlen > UTF16_MAX_IN)
		return -EOVERFLOW;
	if (out && !cap)
		return -E2BIG;
	while (i < inlen) {
		uint32_t cp = get_le16(in + i);
		size_t n;

		i += 2;
		if (cp < 0x80) {
			if (!cp && !(flags & UTF16_ALLOW_NUL))
				return -EILSEQ;
			if (out) {
				if (cap - o < 2)
					return -E2BIG;
				d[o] = (uint8_t)cp;
			}
			o++;
			continue;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo;

			if (i == inlen)
				return -EILSEQ;
			lo = get_le16(in + i);
			if (lo < 0xdc00 || lo > 0xdfff)
				return -EILSEQ;
			i += 2;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			return -EILSEQ;
		}
		n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		if (out) {
			if (cap - o < n + 1)
				return -E2BIG;
			switch (n) {
			case 2:
				d[o] = (uint8_t)(0xc0 | cp >> 6);
				d[o + 1] = (uint8_t)(0x80 | (cp & 0x3f));
				break;
			case 3:
				d[o] = (uint8_t)(0xe0 | cp >> 12);
				d[o + 1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
				d[o + 2] = (uint8_t)(0x80 | (cp & 0x3f));
				break;
			default:
				d[o] = (uint8_t)(0xf0 | cp >> 18);
				d[o + 1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
				d[o + 2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
				d[o + 3] = (uint8_t)(0x80 | (cp & 0x3f));
				break;
			}
		}
		o += n;
	}
	if (out)
		d[o] = 0;
	return (int)o;
}

int utf16le_to_utf8(const uint8_t *in, size_t inlen, char *out, size_t cap)
{
	return utf16le_to_utf8_flags(in, inlen, out, cap, 0);
}

uint16_t utf16_toupper(uint16_t c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') ? (uint16_t)(c - 0x20) : c;
	if (c < 0x100) {
		if (c >= 0xe0 && c <= 0xfe && c != 0xf7)
			return (uint16_t)(c - 0x20);
		if (c == 0xff)
			return 0x178;
		return c;
	}
	if (c < 0x180) {
		/* Latin Extended-A: alternating upper/lower pairs */
		if ((c <= 0x12f || (c >= 0x132 && c <= 0x137) ||
		     (c >= 0x14a && c <= 0x177)) && (c & 1))
			return (uint16_t)(c - 1);
		if (((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e)) &&
		    !(c & 1))
			return (uint16_t)(c - 1);
		return c;
	}
	if (c >= 0x3ac && c <= 0x3ce) {
		/* Greek */
		if (c == 0x3ac)
			return 0x386;
		if (c <= 0x3af)
			return (uint16_t)(c - 0x25);
		if (c == 0x3b0)
			return c;
		if (c == 0x3c2)
			return 0x3a3;
		if (c <= 0x3cb)
			return (uint16_t)(c - 0x20);
		if (c == 0x3cc)
			return 0x38c;
		return (uint16_t)(c - 0x3f);
	}
	if (c >= 0x430 && c <= 0x44f)
		return (uint16_t)(c - 0x20);
	if (c >= 0x450 && c <= 0x45f)
		return (uint16_t)(c - 0x50);
	return c;
}

void utf16le_upper(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		put_le16(buf + i, utf16_toupper(get_le16(buf + i)));
}
