// SPDX-License-Identifier: MIT
/* UTF-8 <-> UTF-16LE conversion and upper-casing. */
#include <errno.h>
#include <time.h>

#include "util/utf16.h"
#include "t.h"

static void valid(void)
{
	uint8_t u[64];
	char s[64];
	int n;

	t_section("valid conversions both ways");
	n = utf8_to_utf16le("Password", u, sizeof(u));
	T_EQ(n, 16);
	T_HEXEQ(u, 16, "500061007300730077006f0072006400");
	T_EQ(utf16le_to_utf8(u, 16, s, sizeof(s)), 8);
	T_ASSERT(!strcmp(s, "Password"));

	/* 2-, 3- and 4-byte sequences: é, €, U+FFFD, 😀 (surrogate pair) */
	n = utf8_to_utf16le("\xc3\xa9\xe2\x82\xac\xef\xbf\xbd\xf0\x9f\x98\x80",
			    u, sizeof(u));
	T_EQ(n, 10);
	T_HEXEQ(u, 10, "e900ac20fdff3dd800de");
	T_EQ(utf16le_to_utf8(u, 10, s, sizeof(s)), 12);
	T_ASSERT(!strcmp(s, "\xc3\xa9\xe2\x82\xac\xef\xbf\xbd\xf0\x9f\x98\x80"));
	/* U+10FFFF and U+0080 / U+07FF / U+0800 boundaries */
	n = utf8_to_utf16le("\xf4\x8f\xbf\xbf\xc2\x80\xdf\xbf\xe0\xa0\x80", u,
			    sizeof(u));
	T_EQ(n, 10);
	T_HEXEQ(u, 10, "ffdbffdf8000ff070008");
	T_EQ(utf16le_to_utf8(u, 10, s, sizeof(s)), 11);
	T_ASSERT(!strcmp(s, "\xf4\x8f\xbf\xbf\xc2\x80\xdf\xbf\xe0\xa0\x80"));

	/* empty, count-only mode, explicit length */
	T_EQ(utf8_to_utf16le("", u, sizeof(u)), 0);
	T_EQ(utf16le_to_utf8(u, 0, s, sizeof(s)), 0);
	T_EQ(s[0], 0);
	T_EQ(utf8_to_utf16le("a\xf0\x9f\x98\x80", NULL, 0), 6);
	T_EQ(utf16le_to_utf8(u, 10, NULL, 0), 11);
	T_EQ(utf8n_to_utf16le("abc", 2, u, sizeof(u), 0), 4);
}

static void invalid(void)
{
	static const char *bad8[] = {
		"\xc0\x80",             /* overlong NUL */
		"\xc1\xbf",             /* overlong */
		"\xe0\x80\x80",         /* overlong 3-byte */
		"\xe0\x9f\xbf",         /* overlong (< U+0800) */
		"\xf0\x8f\xbf\xbf",     /* overlong 4-byte */
		"\xed\xa0\x80",         /* encoded surrogate D800 */
		"\xed\xbf\xbf",         /* encoded surrogate DFFF */
		"\xf4\x90\x80\x80",     /* > U+10FFFF */
		"\xf5\x80\x80\x80",
		"\xff",
		"\x80",                 /* lone continuation */
		"a\xe2\x82",            /* truncated */
		"\xe2\x28\xa1",         /* bad continuation */
	};
	uint8_t u[64];
	char s[64];
	size_t i;

	t_section("invalid input is rejected");
	for (i = 0; i < sizeof(bad8) / sizeof(bad8[0]); i++)
		T_EQ(utf8_to_utf16le(bad8[i], u, sizeof(u)), -EILSEQ);
	/* embedded NUL in explicit-length UTF-8 */
	T_EQ(utf8n_to_utf16le("a\0b", 3, u, sizeof(u), 0), -EILSEQ);
	T_EQ(utf8n_to_utf16le("a\0b", 3, u, sizeof(u), UTF16_ALLOW_NUL), 6);

	/* UTF-16: odd length, lone high/low surrogates, reversed pair */
	t_unhex(u, sizeof(u), "41004200");
	T_EQ(utf16le_to_utf8(u, 3, s, sizeof(s)), -EILSEQ);
	t_unhex(u, sizeof(u), "4100 00d8");
	T_EQ(utf16le_to_utf8(u, 4, s, sizeof(s)), -EILSEQ);
	t_unhex(u, sizeof(u), "00d8 4100");
	T_EQ(utf16le_to_utf8(u, 4, s, sizeof(s)), -EILSEQ);
	t_unhex(u, sizeof(u), "00dc");
	T_EQ(utf16le_to_utf8(u, 2, s, sizeof(s)), -EILSEQ);
	t_unhex(u, sizeof(u), "00dc 00d8");
	T_EQ(utf16le_to_utf8(u, 4, s, sizeof(s)), -EILSEQ);
	/* embedded NUL: rejected unless allowed */
	t_unhex(u, sizeof(u), "41000000 4200");
	T_EQ(utf16le_to_utf8(u, 6, s, sizeof(s)), -EILSEQ);
	T_EQ(utf16le_to_utf8_flags(u, 6, s, sizeof(s), UTF16_ALLOW_NUL), 3);
	T_ASSERT(s[0] == 'A' && s[1] == 0 && s[2] == 'B' && s[3] == 0);

	/* too small: output never overflows, NUL always fits */
	T_EQ(utf8_to_utf16le("abc", u, 5), -E2BIG);
	T_EQ(utf8_to_utf16le("\xf0\x9f\x98\x80", u, 3), -E2BIG);
	t_unhex(u, sizeof(u), "41004200");
	T_EQ(utf16le_to_utf8(u, 4, s, 2), -E2BIG);
	T_EQ(utf16le_to_utf8(u, 4, s, 3), 2);
	T_EQ(utf16le_to_utf8(u, 4, s, 0), -E2BIG);
	t_unhex(u, sizeof(u), "ac20");
	T_EQ(utf16le_to_utf8(u, 2, s, 3), -E2BIG);
	T_EQ(utf16le_to_utf8(u, 2, s, 4), 3);
}

static void upper(void)
{
	static const struct {
		uint16_t in, out;
	} v[] = {
		{ 'a', 'A' }, { 'z', 'Z' }, { 'A', 'A' }, { '1', '1' },
		{ 0xe9, 0xc9 },   /* é */
		{ 0xf7, 0xf7 },   /* ÷ stays */
		{ 0xfe, 0xde },   /* þ */
		{ 0xff, 0x178 },  /* ÿ */
		{ 0xdf, 0xdf },   /* ß has no single upper case */
		{ 0x101, 0x100 }, /* ā */
		{ 0x105, 0x104 }, /* ą */
		{ 0x142, 0x141 }, /* ł */
		{ 0x17e, 0x17d }, /* ž */
		{ 0x3b1, 0x391 }, /* α */
		{ 0x3c2, 0x3a3 }, /* final ς */
		{ 0x3c3, 0x3a3 }, /* σ */
		{ 0x3ac, 0x386 }, /* ά */
		{ 0x3ce, 0x38f }, /* ώ */
		{ 0x430, 0x410 }, /* а */
		{ 0x44f, 0x42f }, /* я */
		{ 0x451, 0x401 }, /* ё */
		{ 0x4e00, 0x4e00 },
	};
	uint8_t u[64];
	char s[64];
	size_t i;
	int n;

	t_section("simple upper-casing");
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		T_EQ(utf16_toupper(v[i].in), v[i].out);
	n = utf8_to_utf16le("j\xc3\xb6rg-\xd0\xb8\xd0\xb2\xd0\xb0\xd0\xbd", u,
			    sizeof(u));
	utf16le_upper(u, (size_t)n);
	T_EQ(utf16le_to_utf8(u, (size_t)n, s, sizeof(s)), 14);
	T_ASSERT(!strcmp(s, "J\xc3\x96RG-\xd0\x98\xd0\x92\xd0\x90\xd0\x9d"));
}

static void speed(void)
{
	static char in[1 << 20];
	static uint8_t u[2 << 20];
	static char back[(1 << 20) + 1];
	struct timespec a, b;
	double ms;
	size_t i;
	int n;

	t_section("1 MiB mixed text round trip");
	for (i = 0; i + 3 < sizeof(in) - 1; i += 4)
		memcpy(in + i, i % 64 ? "abcd" : "\xc3\xa9xy", 4);
	in[sizeof(in) - 1] = 0;
	clock_gettime(CLOCK_MONOTONIC, &a);
	n = utf8_to_utf16le(in, u, sizeof(u));
	T_ASSERT(n > 0);
	T_EQ(utf16le_to_utf8(u, (size_t)n, back, sizeof(back)),
	     (long long)strlen(in));
	clock_gettime(CLOCK_MONOTONIC, &b);
	T_ASSERT(!strcmp(in, back));
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
	     (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("  %.2f ms\n", ms);
}

int main(void)
{
	valid();
	invalid();
	upper();
	speed();
	return t_done();
}
