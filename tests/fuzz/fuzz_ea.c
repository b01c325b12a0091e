// SPDX-License-Identifier: MIT
/*
 * FILE_FULL_EA_INFORMATION chains as the ExtA create context and SET_INFO
 * FileFullEaInformation carry them (fscc_ea_next, fscc_ea_name_ok): every
 * entry lies inside the input with its NUL-terminated name; what decodes
 * re-encodes (fscc_ea_encode) into a chain that decodes to the same
 * entries.
 */
#include <errno.h>

#include "fuzz.h"
#include "proto/fscc.h"

#define MAX_ENTRIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[1 << 17];
	struct fscc_ea e[MAX_ENTRIES], g;
	size_t off = 0, prev = SIZE_MAX;
	struct wcur w;
	int n = 0, rc, i;

	while (n < MAX_ENTRIES && (rc = fscc_ea_next(data, size, &off, &e[n])) == 1) {
		FUZZ_ASSERT(fuzz_inside(e[n].name, e[n].name_len + 1u, data, size));
		FUZZ_ASSERT(fuzz_inside(e[n].value, e[n].value_len, data, size));
		FUZZ_ASSERT(e[n].name_len && !e[n].name[e[n].name_len]);
		FUZZ_ASSERT(strlen(e[n].name) == e[n].name_len);
		(void)fscc_ea_name_ok(e[n].name, e[n].name_len);
		n++;
	}
	if (n < MAX_ENTRIES)
		FUZZ_ASSERT(rc == 0 || rc == -EBADMSG);
	wcur_init(&w, out, sizeof(out));
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(!fscc_ea_encode(&w, &prev, &e[i]));
	off = 0;
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(fscc_ea_next(out, w.off, &off, &g) == 1);
		FUZZ_ASSERT(g.flags == e[i].flags && g.name_len == e[i].name_len &&
			    g.value_len == e[i].value_len);
		FUZZ_ASSERT(!memcmp(g.name, e[i].name, g.name_len));
		FUZZ_ASSERT(!memcmp(g.value, e[i].value, g.value_len));
	}
	FUZZ_ASSERT(fscc_ea_next(out, w.off, &off, &g) == 0);
	return 0;
}
