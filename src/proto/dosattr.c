// SPDX-License-Identifier: MIT
/* Samba's user.DOSATTRIB blob (dosattr.h has the layout). */
#include <errno.h>
#include <string.h>

#include "proto/dosattr.h"
#include "util/bytes.h"

#define HEX_ONLY 0xFFFFu

/* Fixed part of each version's struct, after the 4-byte alignment. */
static const struct {
	uint16_t version;
	uint8_t len;
	uint8_t attrib_off;
	int8_t create_off;		/* -1: none */
	bool flagged;			/* create_time only if valid_flags say so */
} layouts[] = {
	{ 1, 40, 0, 24, false },
	{ 2, 52, 4, -1, false },	/* then a NUL-terminated name */
	{ 3, 44, 4, 28, true },
	{ 4, 24, 4, 16, true },
	{ 5, 16, 4, 8, true },
};

static size_t align(size_t off, size_t n)
{
	return (off + n - 1) & ~(n - 1);
}

/* sscanf("%x") as Samba applies it to the oldest form: "0x20". */
static int parse_hex(const uint8_t *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	size_t i = 0, digits = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i + 1 < len && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	for (; i < len; i++, digits++) {
		uint8_t c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		v = v << 4 | d;
		if (v > UINT32_MAX)
			return -EBADMSG;
	}
	if (!digits)
		return -EBADMSG;
	*out = (uint32_t)v;
	return 0;
}

int dosattr_decode(const uint8_t *p, size_t len, struct dosattr *out)
{
	const uint8_t *nul;
	size_t off, i;
	uint16_t version;

	memset(out, 0, sizeof(*out));
	nul = len ? memchr(p, 0, len) : NULL;
	if (!nul)
		return -EBADMSG;
	off = (size_t)(nul - p) + 1;
	if (off >= len) {
		out->version = HEX_ONLY;
		return parse_hex(p, off - 1, &out->attrib);
	}
	off = align(off, 2);
	if (!range_ok(off, 4, len))
		return -EBADMSG;
	version = get_le16(p + off);
	/* the union's discriminant must name the same arm */
	if (version == HEX_ONLY || get_le16(p + off + 2) != version)
		return -EBADMSG;
	off = align(off + 4, 4);
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			break;
	if (i == sizeof(layouts) / sizeof(layouts[0]))
		return -EPROTONOSUPPORT;
	if (!range_ok(off, layouts[i].len, len))
		return -EBADMSG;
	if (version == 2 && !memchr(p + off + layouts[i].len, 0, len - off - layouts[i].len))
		return -EBADMSG;
	out->version = version;
	out->attrib = get_le32(p + off + layouts[i].attrib_off);
	if (layouts[i].create_off < 0)
		return 0;
	if (layouts[i].flagged && !(get_le32(p + off) & DOSATTR_VALID_CREATE_TIME))
		return 0;
	out->create_time = get_le64(p + off + layouts[i].create_off);
	return 0;
}

int dosattr_encode(uint32_t attrib, uint64_t create_time, uint8_t *buf, size_t cap)
{
	if (cap < DOSATTR_V5_LEN)
		return -E2BIG;
	memset(buf, 0, 8);		/* "", its pad; version, level; pad */
	put_le16(buf + 2, 5);
	put_le16(buf + 4, 5);
	put_le32(buf + 8, DOSATTR_VALID_ATTRIB | DOSATTR_VALID_CREATE_TIME);
	put_le32(buf + 12, attrib);
	put_le64(buf + 16, create_time);
	return DOSATTR_V5_LEN;
}
