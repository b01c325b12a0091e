/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the libFuzzer targets in tests/fuzz/. Each target is
 * one fuzz_<name>.c defining LLVMFuzzerTestOneInput(); the same file links
 * either with libFuzzer (make fuzz) or with replay_main.c (make
 * fuzz-replay). A broken invariant aborts, which both drivers report.
 */
#ifndef RDAX_TESTS_FUZZ_H
#define RDAX_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(cond)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",    \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

/* [p, p + n) lies inside [base, base + total); n == 0 always does. */
static inline int fuzz_inside(const void *p, size_t n, const void *base,
			      size_t total)
{
	const uint8_t *q = p, *b = base;

	if (!n)
		return 1;
	return q && q >= b && (size_t)(q - b) <= total &&
	       n <= total - (size_t)(q - b);
}

#define FUZZ_ASSERT_INSIDE(p, n, base, total)                               \
	FUZZ_ASSERT(fuzz_inside((p), (n), (base), (total)))

/* Touch every byte so ASan checks the range (and the loop is not elided). */
static inline uint8_t fuzz_touch(const void *p, size_t n)
{
	const volatile uint8_t *q = p;
	uint8_t x = 0;
	size_t i;

	for (i = 0; i < n; i++)
		x ^= q[i];
	return x;
}

/*
 * Multi-token inputs (auth exchanges): tokens are separated by the four
 * bytes FUZZ_SEP. Returns the number of parts (at most max); the last
 * part runs to the end of the input.
 */
#define FUZZ_SEP "\xf0SEP"
#define FUZZ_SEP_LEN 4

struct fuzz_part {
	const uint8_t *p;
	size_t len;
};

static inline int fuzz_split(const uint8_t *d, size_t n,
			     struct fuzz_part *parts, int max)
{
	size_t start = 0, i = 0;
	int k = 0;

	while (k < max - 1 && i + FUZZ_SEP_LEN <= n) {
		if (!memcmp(d + i, FUZZ_SEP, FUZZ_SEP_LEN)) {
			parts[k].p = d + start;
			parts[k++].len = i - start;
			i += FUZZ_SEP_LEN;
			start = i;
		} else {
			i++;
		}
	}
	parts[k].p = d + start;
	parts[k++].len = n - start;
	return k;
}

#endif
