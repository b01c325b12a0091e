// SPDX-License-Identifier: MIT
/*
 * The client side of authentication against a hostile server: byte 0
 * picks the client settings, the rest is up to three server tokens
 * separated by FUZZ_SEP: the NEGOTIATE response hint (may be empty), the
 * CHALLENGE (raw or in SPNEGO) and the final SPNEGO token.
 */
#include <errno.h>
#include <string.h>

#include "crypto/auth.h"
#include "fuzz.h"

static uint8_t out[AUTH_TOKEN_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auth_client_cfg cfg = { 0 };
	struct fuzz_part parts[3];
	struct auth_client *c;
	uint8_t key[16];
	size_t outlen;
	int n, rc;

	if (!size)
		return 0;
	cfg.spnego = data[0] & 1;
	cfg.anonymous = data[0] & 2;
	cfg.user = "alice";
	cfg.password = "Secret1";
	cfg.domain = data[0] & 4 ? "WORKGROUP" : NULL;
	n = fuzz_split(data + 1, size - 1, parts, 3);
	if (auth_client_new(&c, &cfg))
		return 0;
	rc = auth_client_step(c, parts[0].p, parts[0].len, out, sizeof(out),
			      &outlen);
	FUZZ_ASSERT(rc == 1 || rc < 0);
	if (rc != 1 || n < 2)
		goto out_delete;
	rc = auth_client_step(c, parts[1].p, parts[1].len, out, sizeof(out),
			      &outlen);
	FUZZ_ASSERT(rc <= 0 && outlen <= sizeof(out));
	fuzz_touch(out, outlen);
	if (rc)
		FUZZ_ASSERT(auth_client_session_key(c, key) == -ENOKEY);
	if (rc || n < 3)
		goto out_delete;
	rc = auth_client_finish(c, parts[2].p, parts[2].len);
	FUZZ_ASSERT(rc <= 0);
	if (rc)
		FUZZ_ASSERT(auth_client_session_key(c, key) == -ENOKEY);
	FUZZ_ASSERT(auth_client_finish(c, out, 0) == -EINVAL);
out_delete:
	auth_client_delete(&c);
	return 0;
}
