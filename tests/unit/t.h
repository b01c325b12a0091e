/* SPDX-License-Identifier: MIT */
/*
 * Tiny unit-test harness: include once per test program.
 *
 *   T_ASSERT(cond)                 check, report file:line on failure
 *   T_EQ(a, b)                     integer equality, prints both values
 *   T_MEMEQ(got, exp, n)           byte equality, hex dump on mismatch
 *   T_HEXEQ(got, n, "a1b2...")     compare bytes against a hex literal
 *   t_unhex(out, cap, hex)         decode hex (whitespace ignored)
 *   t_section("name")              start a named group (printed)
 *   T_REQUIRE(cond)                check; on failure the test stops (exit 1)
 *   T_SKIP("why")                  exit 77 with a SKIP line
 *   t_skip_case("name", "why")     one part did not run: counted as a skip
 *   return t_done();               0 if everything passed, else 1; a test
 *                                  that ran no checks fails (77 if it
 *                                  skipped every part instead)
 */
#ifndef RDAX_TESTS_T_H
#define RDAX_TESTS_T_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures;
static int t_checks;
static int t_skips;
static const char *t_cur = "";

static inline void t_section(const char *name)
{
	t_cur = name;
	printf("== %s\n", name);
}

static inline void t_hexdump(const char *tag, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	printf("  %s (%zu):", tag, n);
	for (i = 0; i < n; i++)
		printf("%s%02x", i % 32 ? "" : "\n    ", b[i]);
	printf("\n");
}

static inline int t_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode hex into out; aborts the test on bad input or overflow. */
static inline size_t t_unhex(uint8_t *out, size_t cap, const char *hex)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (*hex == ' ' || *hex == '\n' || *hex == '\t' || *hex == ':')
			continue;
		v = t_hexval((unsigned char)*hex);
		if (v < 0 || (hi < 0 && n >= cap)) {
			printf("t_unhex: bad hex or buffer too small\n");
			exit(2);
		}
		if (hi < 0) {
			hi = v;
		} else {
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		printf("t_unhex: odd number of digits\n");
		exit(2);
	}
	return n;
}

static inline void t_fail(const char *file, int line, const char *what)
{
	t_failures++;
	printf("FAIL [%s] %s:%d: %s\n", t_cur, file, line, what);
}

#define T_ASSERT(c)                                                         \
	do {                                                                \
		t_checks++;                                                 \
		if (!(c))                                                   \
			t_fail(__FILE__, __LINE__, #c);                     \
	} while (0)

/* For checks that later code depends on (a mapping, an allocation). */
#define T_REQUIRE(c)                                                        \
	do {                                                                \
		t_checks++;                                                 \
		if (!(c)) {                                                 \
			t_fail(__FILE__, __LINE__, #c);                     \
			printf("stopping: the rest depends on this check\n"); \
			exit(1);                                            \
		}                                                           \
	} while (0)

#define T_EQ(a, b)                                                          \
	do {                                                                \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);     \
		t_checks++;                                                 \
		if (t_a_ != t_b_) {                                         \
			t_fail(__FILE__, __LINE__, #a " == " #b);           \
			printf("  got %lld, expected %lld\n", t_a_, t_b_);  \
		}                                                           \
	} while (0)

#define T_MEMEQ(got, exp, n)                                                \
	do {                                                                \
		size_t t_n_ = (n);                                          \
		t_checks++;                                                 \
		if (memcmp((got), (exp), t_n_)) {                           \
			t_fail(__FILE__, __LINE__, #got " == " #exp);       \
			t_hexdump("got", (got), t_n_);                      \
			t_hexdump("expected", (exp), t_n_);                 \
		}                                                           \
	} while (0)

static inline void t_hexeq(const char *file, int line, const char *what,
			   const void *got, size_t n, const char *hex)
{
	size_t cap = strlen(hex) / 2 + 1, en;
	uint8_t *e = malloc(cap);

	if (!e)
		exit(2);
	en = t_unhex(e, cap, hex);
	t_checks++;
	if (en != n || memcmp(got, e, en)) {
		t_fail(file, line, what);
		t_hexdump("got", got, n);
		t_hexdump("expected", e, en);
	}
	free(e);
}

#define T_HEXEQ(got, n, hex)                                                \
	t_hexeq(__FILE__, __LINE__, #got " == " #hex, (got), (n), (hex))

#define T_SKIP(why)                                                         \
	do {                                                                \
		printf("SKIP: %s\n", (why));                                \
		exit(77);                                                   \
	} while (0)

/*
 * A part of the test that cannot run here. tests/run.sh counts each
 * such line as one skip, with its reason.
 */
static inline void t_skip_case(const char *name, const char *why)
{
	t_skips++;
	printf("SKIP-CASE: %s: %s\n", name, why);
	fflush(stdout);
}

static inline int t_done(void)
{
	if (!t_checks && t_skips) {
		/* every part was skipped: the test is one skip */
		printf("SKIP: none of its %d part(s) could run here\n", t_skips);
		return 77;
	}
	if (!t_checks) {
		printf("FAIL: no checks ran\n");
		return 1;
	}
	if (t_failures) {
		printf("%d of %d checks FAILED\n", t_failures, t_checks);
		return 1;
	}
	printf("all %d checks passed\n", t_checks);
	return 0;
}

#endif
