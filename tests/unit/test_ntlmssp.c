// SPDX-License-Identifier: MIT
/* NTLMSSP codec: round trips, layout, and malformed input rejection. */
#include <errno.h>

#include "proto/ntlmssp.h"
#include "t.h"

/* [MS-NLMP] 4.2.4 TargetInfo: NbDomainName "Domain", NbComputerName "Server" */
static const char kat2_ti[] =
	"02000C0044006F006D00610069006E0001000C00530065007200760065007200"
	"00000000";

static uint8_t msg[4096];

static void negotiate(void)
{
	struct ntlmssp_negotiate n = { 0 }, d;
	struct wcur w;

	t_section("NEGOTIATE round trip and layout");
	n.flags = 0xe2088297;
	n.domain.p = (const uint8_t *)"DOM";
	n.domain.len = 3;
	n.workstation.p = (const uint8_t *)"WS1";
	n.workstation.len = 3;
	n.has_version = true;
	n.version = (struct ntlmssp_version){ 10, 0, 19041, 15 };
	wcur_init(&w, msg, sizeof(msg));
	T_EQ(ntlmssp_encode_negotiate(&w, &n), 0);
	T_EQ(w.off, 46);
	T_HEXEQ(msg, 16, "4e544c4d5353500001000000978208e2");
	T_HEXEQ(msg + 16, 16, "0300030028000000030003002b000000");
	T_HEXEQ(msg + 32, 8, "0a00614a0000000f");
	T_EQ(ntlmssp_msg_type(msg, w.off), NTLMSSP_NEGOTIATE);
	T_EQ(ntlmssp_decode_negotiate(msg, w.off, &d), 0);
	T_EQ(d.flags, n.flags);
	T_ASSERT(d.domain.len == 3 && !memcmp(d.domain.p, "DOM", 3));
	T_ASSERT(d.workstation.len == 3 && !memcmp(d.workstation.p, "WS1", 3));
	T_ASSERT(d.has_version && d.version.build == 19041 &&
		 d.version.revision == 15 && d.version.major == 10);
	/* 16-byte NEGOTIATE of old clients */
	T_EQ(ntlmssp_decode_negotiate(msg, 16, &d), 0);
	T_EQ(d.flags, n.flags);
	T_ASSERT(!d.domain.p && !d.has_version);
	/* no room */
	wcur_init(&w, msg, 45);
	T_EQ(ntlmssp_encode_negotiate(&w, &n), -ENOSPC);
}

static void challenge(void)
{
	struct ntlmssp_challenge c = { 0 }, d;
	uint8_t ti[64], name[12];
	struct ntlmssp_av av;
	size_t til, used;
	struct wcur w;

	t_section("CHALLENGE round trip, AV pairs ([MS-NLMP] 4.2.4 values)");
	til = t_unhex(ti, sizeof(ti), kat2_ti);
	t_unhex(name, sizeof(name), "530065007200760065007200");
	c.flags = 0xe28a8233;
	t_unhex(c.challenge, 8, "0123456789abcdef");
	c.target_name.p = name;
	c.target_name.len = 12;
	c.target_info.p = ti;
	c.target_info.len = (uint16_t)til;
	c.has_version = true;
	c.version = (struct ntlmssp_version){ 6, 0, 6000, 15 };
	wcur_init(&w, msg, sizeof(msg));
	T_EQ(ntlmssp_encode_challenge(&w, &c), 0);
	T_EQ(w.off, 56 + 12 + til);
	/* TargetNameFields: len 12 at 56; TargetInfoFields: len 36 at 68 */
	T_HEXEQ(msg + 12, 8, "0c000c0038000000");
	T_HEXEQ(msg + 20, 12, "33828ae20123456789abcdef");
	T_HEXEQ(msg + 40, 8, "2400240044000000");
	T_EQ(ntlmssp_decode_challenge(msg, w.off, &d), 0);
	T_EQ(d.flags, c.flags);
	T_MEMEQ(d.challenge, c.challenge, 8);
	T_EQ(d.target_name.len, 12);
	T_MEMEQ(d.target_name.p, name, 12);
	T_EQ(d.target_info.len, til);
	T_MEMEQ(d.target_info.p, ti, til);
	T_ASSERT(d.has_version && d.version.build == 6000);

	T_EQ(ntlmssp_av_validate(d.target_info.p, d.target_info.len, &used),
	     0);
	T_EQ(used, til);
	T_EQ(ntlmssp_av_find(d.target_info.p, d.target_info.len,
			     MSV_AV_NB_COMPUTER_NAME, &av), 0);
	T_EQ(av.len, 12);
	T_MEMEQ(av.val, name, 12);
	T_EQ(ntlmssp_av_find(d.target_info.p, d.target_info.len,
			     MSV_AV_TIMESTAMP, &av), -ENOENT);

	/* AV list faults */
	T_EQ(ntlmssp_av_validate(ti, til - 4, NULL), -EBADMSG); /* no EOL */
	T_EQ(ntlmssp_av_validate(ti, til - 6, NULL), -EBADMSG);
	T_EQ(ntlmssp_av_validate(ti, 3, NULL), -EBADMSG);
	T_EQ(ntlmssp_av_validate(ti, 0, NULL), -EBADMSG);
	ti[2] = 0xff; /* first pair's length runs off the end */
	T_EQ(ntlmssp_av_validate(ti, til, NULL), -EBADMSG);
	T_EQ(ntlmssp_av_find(ti, til, MSV_AV_NB_DOMAIN_NAME, &av), -EBADMSG);
	ti[2] = 0x0c;
	{
		uint8_t b[32];

		wcur_init(&w, b, sizeof(b));
		ntlmssp_av_put(&w, MSV_AV_FLAGS, "\x02\0\0\0", 4);
		ntlmssp_av_put_eol(&w);
		T_ASSERT(!w.err && w.off == 12);
		T_HEXEQ(b, 12, "060004000200000000000000");
	}
}

static size_t build_auth(bool mic)
{
	static const uint8_t lm[24] = { 1 }, nt[60] = { 2 }, key[16] = { 3 };
	static const uint8_t m16[16] = { 0xaa, 0xbb };
	struct ntlmssp_auth a = { 0 };
	struct wcur w;

	a.flags = 0xe2888215;
	a.lm = (struct ntlmssp_buf){ lm, 24 };
	a.nt = (struct ntlmssp_buf){ nt, 60 };
	a.domain = (struct ntlmssp_buf){ (const uint8_t *)"D\0O\0", 4 };
	a.user = (struct ntlmssp_buf){ (const uint8_t *)"U\0", 2 };
	a.workstation = (struct ntlmssp_buf){ (const uint8_t *)"W\0S\0", 4 };
	a.session_key = (struct ntlmssp_buf){ key, 16 };
	a.has_version = true;
	a.version.major = 10;
	a.version.revision = 15;
	a.has_mic = mic;
	a.mic = m16;
	wcur_init(&w, msg, sizeof(msg));
	T_EQ(ntlmssp_encode_auth(&w, &a), 0);
	return w.off;
}

static void auth(void)
{
	struct ntlmssp_auth d;
	size_t n, i;

	t_section("AUTHENTICATE round trip, MIC field detection");
	n = build_auth(true);
	T_EQ(n, 88 + 4 + 2 + 4 + 24 + 60 + 16);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), 0);
	T_EQ(d.flags, 0xe2888215);
	T_EQ(d.lm.len, 24);
	T_EQ(d.nt.len, 60);
	T_EQ(d.nt.p[0], 2);
	T_EQ(d.user.len, 2);
	T_EQ(d.domain.len, 4);
	T_EQ(d.workstation.len, 4);
	T_EQ(d.session_key.len, 16);
	T_ASSERT(d.has_version && d.version.major == 10);
	T_ASSERT(d.has_mic && d.mic == msg + 72 && d.mic[0] == 0xaa);
	/* payload order as Windows: domain at 88, user, workstation, lm... */
	T_EQ(get_le32(msg + 32), 88);
	T_EQ(get_le32(msg + 40), 92);

	n = build_auth(false);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), 0);
	T_ASSERT(!d.has_mic && d.has_version);
	T_EQ(get_le32(msg + 32), 72);

	t_section("AUTHENTICATE malformed fields");
	n = build_auth(true);
	/* every truncation is rejected, never read past the end */
	for (i = 0; i < n; i++)
		T_EQ(ntlmssp_decode_auth(msg, i, &d), -EBADMSG);
	/* offset past end */
	put_le32(msg + 24, (uint32_t)n);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	/* offset + len overflow (32-bit wrap) */
	put_le32(msg + 24, 0xfffffff0u);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	/* huge length */
	n = build_auth(true);
	put_le16(msg + 20, 0xffff);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	/* a field pointing into the fixed header */
	n = build_auth(true);
	put_le32(msg + 24, 8);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	/* zero-length fields may carry any offset */
	n = build_auth(true);
	put_le16(msg + 44, 0);
	put_le32(msg + 48, 0xffffffffu);
	T_EQ(ntlmssp_decode_auth(msg, n, &d), 0);
	T_ASSERT(d.workstation.p == NULL && d.workstation.len == 0);
	/* wrong signature / type */
	n = build_auth(true);
	msg[0] = 'n';
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	T_EQ(ntlmssp_msg_type(msg, n), -EBADMSG);
	msg[0] = 'N';
	msg[8] = 2;
	T_EQ(ntlmssp_decode_auth(msg, n, &d), -EBADMSG);
	T_EQ(ntlmssp_msg_type(msg, n), NTLMSSP_CHALLENGE);
	{
		struct ntlmssp_challenge c;

		msg[8] = 3;
		T_EQ(ntlmssp_decode_challenge(msg, n, &c), -EBADMSG);
	}
	msg[8] = 9;
	T_EQ(ntlmssp_msg_type(msg, n), -EBADMSG);
}

static void truncations(void)
{
	struct ntlmssp_negotiate n;
	struct ntlmssp_challenge c = { 0 }, cd;
	uint8_t ti[64];
	size_t til, len, i;
	struct wcur w;

	t_section("NEGOTIATE/CHALLENGE truncations and bad offsets");
	til = t_unhex(ti, sizeof(ti), kat2_ti);
	c.flags = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_TARGET_INFO;
	c.target_info.p = ti;
	c.target_info.len = (uint16_t)til;
	c.target_name.p = ti;
	c.target_name.len = 6;
	wcur_init(&w, msg, sizeof(msg));
	T_EQ(ntlmssp_encode_challenge(&w, &c), 0);
	len = w.off;
	for (i = 0; i < len; i++) {
		int rc = ntlmssp_decode_challenge(msg, i, &cd);

		/* < 32: too short; later: a field crosses the end */
		T_EQ(rc, -EBADMSG);
	}
	T_EQ(ntlmssp_decode_challenge(msg, len, &cd), 0);
	put_le32(msg + 44, 0xffffffffu);
	T_EQ(ntlmssp_decode_challenge(msg, len, &cd), -EBADMSG);

	for (i = 0; i < 16; i++)
		T_EQ(ntlmssp_decode_negotiate(msg, i, &n), -EBADMSG);
}

/* Cheap deterministic fuzzing: decoders must never crash (run with ASan). */
static void fuzz(void)
{
	uint32_t x = 12345;
	size_t base, i, k;
	int it;

	t_section("mutation fuzz of all decoders (no crash)");
	base = build_auth(true);
	for (it = 0; it < 20000; it++) {
		struct ntlmssp_auth a;
		struct ntlmssp_challenge c;
		struct ntlmssp_negotiate n;
		struct ntlmssp_av av;
		static uint8_t m[512];
		size_t len;

		memcpy(m, msg, base);
		for (k = 0; k < 4; k++) {
			x = x * 1103515245 + 12345;
			i = (x >> 8) % base;
			m[i] = (uint8_t)(x >> 20);
		}
		len = (x >> 3) % (base + 1);
		m[8] = (uint8_t)(1 + it % 3);
		(void)ntlmssp_decode_auth(m, len, &a);
		(void)ntlmssp_decode_challenge(m, len, &c);
		(void)ntlmssp_decode_negotiate(m, len, &n);
		(void)ntlmssp_av_find(m + 12, len > 12 ? len - 12 : 0, 7, &av);
	}
	T_ASSERT(1);
}

int main(void)
{
	negotiate();
	challenge();
	auth();
	truncations();
	fuzz();
	return t_done();
}
