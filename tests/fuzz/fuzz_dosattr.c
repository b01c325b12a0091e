// SPDX-License-Identifier: MIT
/*
 * Samba's user.DOSATTRIB blob as rdaxd reads it from a file's xattr
 * (which anyone who can write the file, or another server, may have
 * written): dosattr_decode on the input; what decodes re-encodes as
 * version 5 and decodes to the same attributes and birth time.
 */
#include <errno.h>

#include "fuzz.h"
#include "proto/dosattr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[DOSATTR_V5_LEN];
	struct dosattr d, d2;
	int rc;

	rc = dosattr_decode(data, size, &d);
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -EPROTONOSUPPORT);
	if (rc)
		return 0;
	FUZZ_ASSERT(memchr(data, 0, size));
	FUZZ_ASSERT((d.version >= 1 && d.version <= 5) || d.version == 0xFFFF);
	FUZZ_ASSERT(!d.create_time || d.version == 1 || (d.version >= 3 && d.version <= 5));
	FUZZ_ASSERT(dosattr_encode(d.attrib, d.create_time, buf, sizeof(buf)) ==
		    DOSATTR_V5_LEN);
	FUZZ_ASSERT(!dosattr_decode(buf, sizeof(buf), &d2));
	FUZZ_ASSERT(d2.version == 5 && d2.attrib == d.attrib &&
		    d2.create_time == d.create_time);
	return 0;
}
