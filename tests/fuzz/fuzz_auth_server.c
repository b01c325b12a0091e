// SPDX-License-Identifier: MIT
/*
 * The server authentication state machine (SPNEGO / raw NTLMSSP, NTLMv2,
 * MIC and mechListMIC checks). The first input byte picks the mode:
 *
 *   even: the rest is up to four client tokens separated by FUZZ_SEP,
 *         fed in order to auth_server_step() (captured SESSION_SETUP
 *         security buffers make the seeds);
 *   odd:  a real exchange with auth_client, so the success paths run
 *         too. Byte 1 picks the client settings, then up to two 4-byte
 *         edits (leg, offset LE16, xor) corrupt tokens in flight. With
 *         no effective edit the outcome must be exactly what the
 *         settings predict, and both sides must agree on the key.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "crypto/auth.h"
#include "crypto/ntlm.h"
#include "fuzz.h"

static int lookup(void *arg, const char *user, uint8_t h[16])
{
	(void)arg;
	FUZZ_ASSERT(strlen(user) <= AUTH_NAME_MAX);
	if (!strcasecmp(user, "alice"))
		return ntlm_nt_hash("Secret1", h);
	return -ENOENT;
}

static const struct auth_server_cfg scfg = {
	.netbios_name = "RDAX",
	.domain_name = "WORKGROUP",
	.lookup = lookup,
};

static uint8_t out[AUTH_TOKEN_MAX], tok[AUTH_TOKEN_MAX];

static void check_result(struct auth_server *s, int rc)
{
	struct auth_result r;

	FUZZ_ASSERT(rc >= -4095 && rc <= 1);
	FUZZ_ASSERT(auth_server_result(s, &r) == (rc == 0 ? 0 : -EAGAIN));
	FUZZ_ASSERT(memchr(r.user, 0, sizeof(r.user)));
	FUZZ_ASSERT(memchr(r.domain, 0, sizeof(r.domain)));
	if (rc)
		FUZZ_ASSERT(!r.have_key);
	if (r.have_key)
		FUZZ_ASSERT(!r.anonymous);
}

static void raw_tokens(const uint8_t *data, size_t size)
{
	struct fuzz_part parts[4];
	struct auth_server *s;
	size_t outlen;
	int i, n, rc = 1;

	if (auth_server_new(&s, &scfg))
		return;
	n = fuzz_split(data, size, parts, 4);
	for (i = 0; i < n && rc == 1; i++) {
		rc = auth_server_step(s, parts[i].p, parts[i].len, out,
				      sizeof(out), &outlen);
		FUZZ_ASSERT(outlen <= sizeof(out));
		FUZZ_ASSERT(rc != 1 || outlen > 0);
		fuzz_touch(out, outlen);
		check_result(s, rc);
	}
	/* a finished or failed exchange takes nothing more */
	if (rc != 1)
		FUZZ_ASSERT(auth_server_step(s, out, 1, out, sizeof(out),
					     &outlen) == -EINVAL);
	auth_server_delete(&s);
	FUZZ_ASSERT(!s);
}

struct edit {
	uint8_t leg;
	uint16_t off;
	uint8_t xor;
};

/* Apply the edits for one leg; true if a byte really changed. */
static bool apply(const struct edit *e, int ne, int leg, uint8_t *p, size_t len)
{
	bool changed = false;
	int i;

	for (i = 0; i < ne; i++) {
		if (e[i].leg != leg || !e[i].xor || !len)
			continue;
		p[e[i].off % len] ^= e[i].xor;
		changed = true;
	}
	return changed;
}

static void exchange(const uint8_t *data, size_t size)
{
	struct auth_client_cfg ccfg = { 0 };
	struct auth_client *c;
	struct auth_server *s;
	struct auth_result r;
	struct edit e[2];
	uint8_t opt, ckey[16];
	size_t tl = 0, ol = 0;
	bool tampered = false, expect_ok;
	int ne = 0, rc, leg;

	if (size < 1)
		return;
	opt = data[0];
	data++;
	size--;
	while (ne < 2 && size >= 4) {
		e[ne].leg = data[0] & 3;
		e[ne].off = get_le16(data + 1);
		e[ne].xor = data[3];
		ne++;
		data += 4;
		size -= 4;
	}
	ccfg.spnego = opt & 1;
	ccfg.anonymous = opt & 2;
	ccfg.user = opt & 4 ? "bob" : "alice";
	ccfg.password = opt & 8 ? "wrong" : "Secret1";
	ccfg.domain = opt & 16 ? "WORKGROUP" : NULL;
	ccfg.workstation = opt & 32 ? "WS1" : NULL;
	expect_ok = ccfg.anonymous || !(opt & (4 | 8));

	if (auth_server_new(&s, &scfg))
		return;
	if (auth_client_new(&c, &ccfg)) {
		auth_server_delete(&s);
		return;
	}
	/* leg 0: NEGOTIATE (hint in, first token out) */
	if (ccfg.spnego && opt & 64)
		FUZZ_ASSERT(!auth_negotiate_hint(out, sizeof(out), &ol));
	rc = auth_client_step(c, ol ? out : NULL, ol, tok, sizeof(tok), &tl);
	FUZZ_ASSERT(rc == 1);
	for (leg = 0; leg < 2; leg++) {
		tampered |= apply(e, ne, 2 * leg, tok, tl);
		rc = auth_server_step(s, tok, tl, out, sizeof(out), &ol);
		check_result(s, rc);
		if (rc < 0)
			break;
		tampered |= apply(e, ne, 2 * leg + 1, out, ol);
		if (leg == 0) {
			FUZZ_ASSERT(rc == 1 || tampered);
			if (rc != 1)
				break;
			rc = auth_client_step(c, out, ol, tok, sizeof(tok), &tl);
			if (rc < 0)
				break;
			FUZZ_ASSERT(rc == 0);
		} else {
			FUZZ_ASSERT(rc == 0);
			rc = auth_client_finish(c, out, ol);
		}
	}
	if (!tampered) {
		FUZZ_ASSERT(expect_ok ? rc == 0 : rc == -EACCES);
		FUZZ_ASSERT(auth_server_result(s, &r) == (expect_ok ? 0 : -EAGAIN));
		if (expect_ok && !ccfg.anonymous) {
			FUZZ_ASSERT(r.have_key);
			FUZZ_ASSERT(!auth_client_session_key(c, ckey));
			FUZZ_ASSERT(!memcmp(ckey, r.session_key, 16));
		}
		if (expect_ok && ccfg.anonymous)
			FUZZ_ASSERT(r.anonymous && !r.have_key);
	}
	auth_client_delete(&c);
	auth_server_delete(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		exchange(data + 1, size - 1);
	else
		raw_tokens(data + 1, size - 1);
	return 0;
}
