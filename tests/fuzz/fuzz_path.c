// SPDX-License-Identifier: MIT
/*
 * SMB names: srv_path_from_utf16 (byte 0 picks the output size) with the
 * shape of a good result checked, the stream part of a name
 * (srv_path_stream_from_utf16: a stream name has no ':', '/' or '\\'), and the UTF-8 <-> UTF-16LE converters
 * on the rest: counting agrees with converting, exact-size buffers are
 * enough and one byte less is not, and conversions round-trip.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "server/server.h"
#include "util/utf16.h"

static void server_path(const uint8_t *p, size_t len, size_t cap)
{
	char *out = malloc(cap);
	size_t n;
	int rc;

	if (!out)
		return;
	rc = srv_path_from_utf16(p, len, out, cap);
	if (rc)
		goto out_free;
	n = strlen(out);
	FUZZ_ASSERT(n < cap);
	FUZZ_ASSERT(!strchr(out, '\\') && !strchr(out, ':'));
	if (n) {
		FUZZ_ASSERT(out[0] != '/' && out[n - 1] != '/');
		FUZZ_ASSERT(!strstr(out, "//") && !strstr(out, "/./"));
		FUZZ_ASSERT(strcmp(out, ".") && strncmp(out, "./", 2));
		FUZZ_ASSERT(n < 2 || strcmp(out + n - 2, "/."));
	}
out_free:
	free(out);
}

static void server_stream_path(const uint8_t *p, size_t len, size_t cap)
{
	char out[4096], stream[256];
	int kind;

	if (srv_path_stream_from_utf16(p, len, out, cap, stream, sizeof(stream), &kind))
		return;
	FUZZ_ASSERT(!strchr(out, ':') && !strpbrk(out, "*?<>\""));
	if (kind == SRV_STREAM_NAMED) {
		FUZZ_ASSERT(*stream && strlen(stream) < sizeof(stream));
		FUZZ_ASSERT(!strpbrk(stream, ":/\\"));
	}
}

static void from_utf16(const uint8_t *p, size_t len, unsigned int flags)
{
	char *s, *t;
	uint8_t *back;
	int n, m;

	n = utf16le_to_utf8_flags(p, len, NULL, 0, flags);
	if (n < 0) {
		FUZZ_ASSERT(n == -EILSEQ || n == -EOVERFLOW);
		return;
	}
	/* worst case 3 UTF-8 bytes per UTF-16 unit */
	FUZZ_ASSERT((size_t)n <= len / 2 * 3);
	s = malloc((size_t)n + 1);
	t = malloc((size_t)n + 1);
	back = malloc(len ? len : 1);
	if (!s || !t || !back)
		goto out_free;
	m = utf16le_to_utf8_flags(p, len, s, (size_t)n + 1, flags);
	FUZZ_ASSERT(m == n && s[n] == 0);
	if (!(flags & UTF16_ALLOW_NUL))
		FUZZ_ASSERT(strlen(s) == (size_t)n);
	/* the terminator needs room too */
	FUZZ_ASSERT(utf16le_to_utf8_flags(p, len, t, (size_t)n, flags) == -E2BIG);
	m = utf8n_to_utf16le(s, (size_t)n, back, len, flags);
	FUZZ_ASSERT(m == (int)len);
	FUZZ_ASSERT(!memcmp(back, p, len));
out_free:
	free(s);
	free(t);
	free(back);
}

static void from_utf8(const uint8_t *p, size_t len, unsigned int flags)
{
	const char *s = (const char *)p;
	uint8_t *u = NULL;
	char *back = NULL;
	int n, m;

	n = utf8n_to_utf16le(s, len, NULL, 0, flags);
	if (n < 0) {
		FUZZ_ASSERT(n == -EILSEQ || n == -EOVERFLOW);
		return;
	}
	FUZZ_ASSERT((size_t)n <= 2 * len && !(n & 1));
	u = malloc(n ? (size_t)n : 1);
	back = malloc(len + 1);
	if (!u || !back)
		goto out_free;
	m = utf8n_to_utf16le(s, len, u, (size_t)n, flags);
	FUZZ_ASSERT(m == n);
	if (n)
		FUZZ_ASSERT(utf8n_to_utf16le(s, len, u, (size_t)n - 1, flags) ==
			    -E2BIG);
	m = utf16le_to_utf8_flags(u, (size_t)n, back, len + 1, flags);
	FUZZ_ASSERT(m == (int)len);
	FUZZ_ASSERT(!memcmp(back, p, len));
out_free:
	free(u);
	free(back);
}

static void upper(const uint8_t *p, size_t len)
{
	uint8_t *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
	size_t i;

	if (!a || !b)
		goto out_free;
	memcpy(a, p, len);
	utf16le_upper(a, len);
	for (i = 0; i + 1 < len; i += 2)
		FUZZ_ASSERT(get_le16(a + i) == utf16_toupper(get_le16(p + i)));
	if (len & 1)
		FUZZ_ASSERT(a[len - 1] == p[len - 1]);
	/* upper-casing is idempotent */
	memcpy(b, a, len);
	utf16le_upper(b, len);
	FUZZ_ASSERT(!memcmp(a, b, len));
out_free:
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 1, 2, 8, 64, 256, 4096 };
	char *z;

	if (!size)
		return 0;
	server_path(data + 1, size - 1, caps[data[0] % 6]);
	server_stream_path(data + 1, size - 1, caps[data[0] % 6]);
	data++;
	size--;
	from_utf16(data, size, 0);
	from_utf16(data, size, UTF16_ALLOW_NUL);
	from_utf8(data, size, 0);
	from_utf8(data, size, UTF16_ALLOW_NUL);
	upper(data, size);
	/* the NUL-terminated entry point */
	z = malloc(size + 1);
	if (z) {
		memcpy(z, data, size);
		z[size] = 0;
		utf8_to_utf16le(z, NULL, 0);
		free(z);
	}
	return 0;
}
