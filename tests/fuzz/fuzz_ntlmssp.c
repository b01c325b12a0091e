// SPDX-License-Identifier: MIT
/*
 * NTLMSSP messages ([MS-NLMP] 2.2): all three decoders on every input,
 * the AV-pair walkers on every TargetInfo and NTLMv2 blob, and a
 * re-encode/decode round trip of whatever decoded.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/ntlmssp.h"

#define BUF_INSIDE(b, msg, len)                                             \
	do {                                                                \
		FUZZ_ASSERT_INSIDE((b).p, (b).len, msg, len);               \
		FUZZ_ASSERT(!(b).len == !(b).p);                            \
		fuzz_touch((b).p, (b).len);                                 \
	} while (0)

static void same_buf(const struct ntlmssp_buf *a, const struct ntlmssp_buf *b)
{
	FUZZ_ASSERT(a->len == b->len);
	FUZZ_ASSERT(!a->len || !memcmp(a->p, b->p, a->len));
}

/* Walk an AV list three ways and check they agree. */
static void av_list(const uint8_t *p, size_t len)
{
	static const uint16_t ids[] = {
		MSV_AV_NB_COMPUTER_NAME, MSV_AV_NB_DOMAIN_NAME,
		MSV_AV_DNS_COMPUTER_NAME, MSV_AV_FLAGS, MSV_AV_TIMESTAMP,
		MSV_AV_TARGET_NAME, 0x1234,
	};
	struct ntlmssp_av av;
	struct rcur r;
	size_t used = 0, i;
	int rc, valid, n = 0;

	valid = ntlmssp_av_validate(p, len, &used);
	FUZZ_ASSERT(valid == 0 || valid == -EBADMSG);
	if (!valid)
		FUZZ_ASSERT(used >= 4 && used <= len);
	rcur_init(&r, p, len);
	while ((rc = ntlmssp_av_next(&r, &av)) > 0) {
		FUZZ_ASSERT(av.id != MSV_AV_EOL);
		FUZZ_ASSERT_INSIDE(av.val, av.len, p, len);
		fuzz_touch(av.val, av.len);
		FUZZ_ASSERT(++n <= (int)(len / 4));
	}
	FUZZ_ASSERT(rc == (valid ? -EBADMSG : 0));
	if (!valid)
		FUZZ_ASSERT(r.off == used);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		rc = ntlmssp_av_find(p, len, ids[i], &av);
		if (valid)
			FUZZ_ASSERT(rc == -EBADMSG);
		else
			FUZZ_ASSERT(rc == 0 || rc == -ENOENT);
		if (!rc) {
			FUZZ_ASSERT(av.id == ids[i]);
			FUZZ_ASSERT_INSIDE(av.val, av.len, p, len);
		}
	}
}

static void negotiate(const uint8_t *msg, size_t len, uint8_t *buf, size_t cap)
{
	struct ntlmssp_negotiate m, m2;
	struct wcur w;

	if (ntlmssp_decode_negotiate(msg, len, &m))
		return;
	BUF_INSIDE(m.domain, msg, len);
	BUF_INSIDE(m.workstation, msg, len);
	wcur_init(&w, buf, cap);
	if (ntlmssp_encode_negotiate(&w, &m))
		return;
	FUZZ_ASSERT(!ntlmssp_decode_negotiate(buf, w.off, &m2));
	FUZZ_ASSERT(m2.flags == m.flags);
	same_buf(&m.domain, &m2.domain);
	same_buf(&m.workstation, &m2.workstation);
}

static void challenge(const uint8_t *msg, size_t len, uint8_t *buf, size_t cap)
{
	struct ntlmssp_challenge m, m2;
	struct wcur w;

	if (ntlmssp_decode_challenge(msg, len, &m))
		return;
	BUF_INSIDE(m.target_name, msg, len);
	BUF_INSIDE(m.target_info, msg, len);
	if (m.target_info.len)
		av_list(m.target_info.p, m.target_info.len);
	wcur_init(&w, buf, cap);
	if (ntlmssp_encode_challenge(&w, &m))
		return;
	FUZZ_ASSERT(!ntlmssp_decode_challenge(buf, w.off, &m2));
	FUZZ_ASSERT(m2.flags == m.flags);
	FUZZ_ASSERT(!memcmp(m2.challenge, m.challenge, 8));
	same_buf(&m.target_name, &m2.target_name);
	same_buf(&m.target_info, &m2.target_info);
}

static void auth(const uint8_t *msg, size_t len, uint8_t *buf, size_t cap)
{
	struct ntlmssp_auth m, m2;
	struct wcur w;

	if (ntlmssp_decode_auth(msg, len, &m))
		return;
	BUF_INSIDE(m.lm, msg, len);
	BUF_INSIDE(m.nt, msg, len);
	BUF_INSIDE(m.domain, msg, len);
	BUF_INSIDE(m.user, msg, len);
	BUF_INSIDE(m.workstation, msg, len);
	BUF_INSIDE(m.session_key, msg, len);
	if (m.has_mic)
		FUZZ_ASSERT_INSIDE(m.mic, NTLMSSP_AUTH_MIC_LEN, msg, len);
	/* the NTLMv2 blob: 16-byte proof, 28-byte header, AV pairs */
	if (m.nt.len > 16 + 28)
		av_list(m.nt.p + 44, m.nt.len - 44u);
	wcur_init(&w, buf, cap);
	if (ntlmssp_encode_auth(&w, &m))
		return;
	FUZZ_ASSERT(!ntlmssp_decode_auth(buf, w.off, &m2));
	FUZZ_ASSERT(m2.flags == m.flags);
	FUZZ_ASSERT(m2.has_mic == m.has_mic);
	if (m.has_mic)
		FUZZ_ASSERT(!memcmp(m2.mic, m.mic, NTLMSSP_AUTH_MIC_LEN));
	same_buf(&m.lm, &m2.lm);
	same_buf(&m.nt, &m2.nt);
	same_buf(&m.domain, &m2.domain);
	same_buf(&m.user, &m2.user);
	same_buf(&m.workstation, &m2.workstation);
	same_buf(&m.session_key, &m2.session_key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a re-encoded message is at most the fixed part + six fields */
	static uint8_t buf[128 + 6 * 65536];
	int t;

	t = ntlmssp_msg_type(data, size);
	FUZZ_ASSERT(t == -EBADMSG || (t >= NTLMSSP_NEGOTIATE && t <= NTLMSSP_AUTH));
	negotiate(data, size, buf, sizeof(buf));
	challenge(data, size, buf, sizeof(buf));
	auth(data, size, buf, sizeof(buf));
	/* the input itself as an AV list */
	av_list(data, size);
	return 0;
}
