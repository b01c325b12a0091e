// SPDX-License-Identifier: MIT
/*
 * Multichannel's pure parts: the channel signing key of a binding
 * against the published binding examples (protocol-facts KAT-4, KAT-6),
 * the NETWORK_INTERFACE_INFO decoder on good and malformed lists, and
 * the order in which the client tries channels.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "t.h"
#include "client/client.h"
#include "crypto/crypto.h"
#include "proto/fsctl.h"

/* ---- channel signing keys ---- */

static void kat4_binding(void)
{
	uint8_t sk[16], key[16];

	t_section("KAT-4: SMB 3.0 channel signing key of a binding");
	/* the first channel: the session's own signing key */
	t_unhex(sk, 16, "7CD451825D0450D235424E44BA6E78CC");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_300, sk, NULL, key), 0);
	T_HEXEQ(key, 16, "0B7E9C5CAC36C0F6EA9AB275298CEDCE");
	/* the second channel's binding authentication gave another session key */
	t_unhex(sk, 16, "4E01A2B313BCF660CC250BEF021AEDE6");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_300, sk, NULL, key), 0);
	T_HEXEQ(key, 16, "BA1A17DBBFEC349BCA105563D598952F");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_302, sk, NULL, key), 0);
	T_HEXEQ(key, 16, "BA1A17DBBFEC349BCA105563D598952F");
	/* no channels before 3.0, no 3.1.1 key without the preauth hash */
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_210, sk, NULL, key), -EINVAL);
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_311, sk, NULL, key), -EINVAL);
}

/* final SESSION_SETUP responses of KAT-6, as sent (signature at 48) */
static const char kat6_first_rsp[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000"
	"FFFE0000000000001900000000100000EBE146DA120BA25FC3376A49DFE31BC1"
	"0900000048001D00A11B3019A0030A0100A3120410010000003B453CDC352416"
	"4200000000";
static const char kat6_bind_rsp[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000"
	"FFFE00000000000019000000001000008D604217FFBACF40635BF9D872992150"
	"0900000048001D00A11B3019A0030A0100A312041001000000CFB046FC5D368E"
	"2200000000";

static void kat6_binding(void)
{
	uint8_t sk[16], h[64], key[16], first[16], rsp[101];
	size_t n;

	t_section("KAT-6: SMB 3.1.1 channel signing key from the channel's preauth hash");
	t_unhex(sk, 16, "270E1BA896585EEB7AF3472D3B4C75A7");
	t_unhex(h, 64, "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F3"
		       "6909DB7928622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BD"
		       "ADEF5D5BCE3C6C01");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_311, sk, h, first), 0);
	T_HEXEQ(first, 16, "73FE7A9A77BEF0BDE49C650D8CCB5F76");
	n = t_unhex(rsp, sizeof(rsp), kat6_first_rsp);
	T_EQ(n, 101);
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, first, rsp, n), 0);

	t_section("KAT-6: the binding's final response verifies with the new channel's key only");
	t_unhex(sk, 16, "84B9DBB730116A8FA6E9889555C265F9");
	t_unhex(h, 64, "EA3BF912B11CBFEC5B1889E8209614218687F82FA5294521AD306342"
		       "5E49E88A10BD022124CE25123BC9111F52D9566BA88BF46344E6063D"
		       "C5E3FF0389026F6C");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_311, sk, h, key), 0);
	T_HEXEQ(key, 16, "C962BCA1A9DD1697B030644199705431");
	n = t_unhex(rsp, sizeof(rsp), kat6_bind_rsp);
	T_EQ(n, 101);
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, key, rsp, n), 0);
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, first, rsp, n), -EBADMSG);
	/* the first channel's hash would give another key */
	t_unhex(h, 64, "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F3"
		       "6909DB7928622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BD"
		       "ADEF5D5BCE3C6C01");
	T_EQ(cli_channel_signing_key(SMB2_DIALECT_311, sk, h, key), 0);
	T_EQ(smb2_sign_verify(NULL, SMB2_SIGN_AES_CMAC, key, rsp, n), -EBADMSG);
}

/* ---- the interface list ---- */

static struct fsctl_netif v4(const char *a, uint32_t caps, uint64_t speed)
{
	struct fsctl_netif n = { .family = AF_INET, .caps = caps, .link_speed = speed };

	inet_pton(AF_INET, a, n.addr);
	return n;
}

static struct fsctl_netif v6(const char *a, uint32_t caps, uint64_t speed)
{
	struct fsctl_netif n = { .family = AF_INET6, .caps = caps, .link_speed = speed };

	inet_pton(AF_INET6, a, n.addr);
	return n;
}

/* a list of n entries, each Next pointing at the following one */
static size_t build(uint8_t *buf, size_t cap, const struct fsctl_netif *ifs, unsigned int n)
{
	struct wcur w;
	unsigned int i;

	wcur_init(&w, buf, cap);
	for (i = 0; i < n; i++)
		fsctl_netif_encode(&w, &ifs[i], i + 1 < n ? FSCTL_NETIF_ENTRY_LEN : 0);
	T_ASSERT(!w.err);
	return w.off;
}

static void decode_good(void)
{
	struct fsctl_netif in[3], out[8];
	uint8_t buf[4096];
	char text[64];
	size_t len;

	t_section("interface list: IPv4 and IPv6 entries, in order");
	in[0] = v4("192.0.2.7", FSCTL_NETIF_RSS_CAPABLE, 10000000000ull);
	in[0].if_index = 3;
	in[1] = v6("2001:db8::1", FSCTL_NETIF_RDMA_CAPABLE, 25000000000ull);
	in[1].scope_id = 9;
	in[2] = v4("198.51.100.1", 0, 1000000000ull);
	len = build(buf, sizeof(buf), in, 3);
	T_EQ(len, 3 * FSCTL_NETIF_ENTRY_LEN);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), 3);
	T_EQ(out[0].family, AF_INET);
	T_EQ(out[0].if_index, 3);
	T_EQ(out[0].caps, FSCTL_NETIF_RSS_CAPABLE);
	T_EQ(out[0].link_speed, 10000000000ull);
	inet_ntop(AF_INET, out[0].addr, text, sizeof(text));
	T_ASSERT(!strcmp(text, "192.0.2.7"));
	T_EQ(out[1].family, AF_INET6);
	T_EQ(out[1].caps, FSCTL_NETIF_RDMA_CAPABLE);
	T_EQ(out[1].scope_id, 9);
	inet_ntop(AF_INET6, out[1].addr, text, sizeof(text));
	T_ASSERT(!strcmp(text, "2001:db8::1"));
	T_EQ(out[2].link_speed, 1000000000ull);

	t_section("interface list: more entries than room keeps the first, walks the rest");
	T_EQ(fsctl_netif_decode(buf, len, out, 2), 2);
	T_EQ(out[1].family, AF_INET6);

	t_section("interface list: empty output is no interface");
	T_EQ(fsctl_netif_decode(buf, 0, out, 8), 0);

	t_section("interface list: an unknown family is skipped");
	put_le16(buf + FSCTL_NETIF_ENTRY_LEN + 24, 0x0011);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), 2);
	T_EQ(out[1].family, AF_INET);

	t_section("interface list: Next may leave room between entries");
	len = build(buf, sizeof(buf), in, 1);
	put_le32(buf, FSCTL_NETIF_ENTRY_LEN + 8);
	memset(buf + len, 0, 8);
	{
		struct wcur w;

		wcur_init(&w, buf + len + 8, sizeof(buf) - len - 8);
		fsctl_netif_encode(&w, &in[2], 0);
		len += 8 + w.off;
	}
	T_EQ(fsctl_netif_decode(buf, len, out, 8), 2);
	T_EQ(out[1].link_speed, 1000000000ull);
}

static void decode_bad(void)
{
	struct fsctl_netif in[2], out[8];
	static uint8_t buf[FSCTL_NETIF_ENTRY_LEN * (FSCTL_NETIF_MAX_WALK + 2)];
	size_t len;
	unsigned int i;

	in[0] = v4("192.0.2.7", 0, 1);
	in[1] = v4("192.0.2.8", 0, 1);
	len = build(buf, sizeof(buf), in, 2);

	t_section("malformed interface list: truncated entries");
	T_EQ(fsctl_netif_decode(buf, 1, out, 8), -EBADMSG);
	T_EQ(fsctl_netif_decode(buf, FSCTL_NETIF_ENTRY_LEN - 1, out, 8), -EBADMSG);
	T_EQ(fsctl_netif_decode(buf, len - 1, out, 8), -EBADMSG);

	t_section("malformed interface list: Next inside its own entry");
	put_le32(buf, 0x10);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), -EBADMSG);
	put_le32(buf, FSCTL_NETIF_ENTRY_LEN - 1);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), -EBADMSG);

	t_section("malformed interface list: Next past the end");
	put_le32(buf, FSCTL_NETIF_ENTRY_LEN * 2);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), -EBADMSG);
	put_le32(buf, 0xFFFFFFF0u);
	T_EQ(fsctl_netif_decode(buf, len, out, 8), -EBADMSG);

	t_section("malformed interface list: a chain longer than any server's");
	for (i = 0; i < FSCTL_NETIF_MAX_WALK + 2; i++) {
		struct wcur w;

		wcur_init(&w, buf + i * FSCTL_NETIF_ENTRY_LEN, FSCTL_NETIF_ENTRY_LEN);
		fsctl_netif_encode(&w, &in[0], i + 1 < FSCTL_NETIF_MAX_WALK + 2 ?
				   FSCTL_NETIF_ENTRY_LEN : 0);
	}
	T_EQ(fsctl_netif_decode(buf, sizeof(buf), out, 8), -EBADMSG);
	/* a list of exactly the walk limit is fine */
	put_le32(buf + (FSCTL_NETIF_MAX_WALK - 1) * FSCTL_NETIF_ENTRY_LEN, 0);
	T_EQ(fsctl_netif_decode(buf, sizeof(buf), out, 8), 8);
}

/* ---- the order of the channels ---- */

static void plan(void)
{
	struct fsctl_netif ifs[5], primary;
	struct cli_mc_pick p[16];
	unsigned int n;

	ifs[0] = v4("192.0.2.1", FSCTL_NETIF_RSS_CAPABLE, 1000000000ull);	/* the first's */
	ifs[1] = v4("192.0.2.2", FSCTL_NETIF_RSS_CAPABLE, 1000000000ull);
	ifs[2] = v4("192.0.2.3", FSCTL_NETIF_RDMA_CAPABLE, 25000000000ull);
	ifs[3] = v4("192.0.2.4", 0, 10000000000ull);
	ifs[4] = v4("192.0.2.2", 0, 1000000000ull);				/* listed twice */
	primary = v4("192.0.2.1", 0, 0);

	t_section("channel order over TCP: faster first, the first connection's own last");
	n = cli_mc_plan(ifs, 5, &primary, false, false, p, 4);
	T_EQ(n, 4);
	T_EQ(p[0].iface, 2);
	T_EQ(p[1].iface, 3);
	T_EQ(p[2].iface, 1);
	T_EQ(p[3].iface, 0);
	T_ASSERT(!p[0].rdma && !p[1].rdma && !p[2].rdma && !p[3].rdma);

	t_section("channel order with SMB-Direct allowed: RDMA-capable interfaces first");
	n = cli_mc_plan(ifs, 5, &primary, false, true, p, 6);
	T_EQ(n, 6);
	T_EQ(p[0].iface, 2);
	T_ASSERT(p[0].rdma);
	T_EQ(p[1].iface, 2);
	T_ASSERT(!p[1].rdma);
	T_EQ(p[2].iface, 3);
	T_EQ(p[3].iface, 1);
	T_EQ(p[4].iface, 0);
	T_ASSERT(!p[4].rdma);
	/* walked again: a second connection to the best */
	T_EQ(p[5].iface, 2);
	T_ASSERT(p[5].rdma);

	t_section("channel order: an SMB-Direct first connection is in use as RDMA only");
	primary = v4("192.0.2.3", 0, 0);
	n = cli_mc_plan(ifs, 5, &primary, true, true, p, 2);
	T_EQ(n, 2);
	T_EQ(p[0].iface, 2);
	T_ASSERT(!p[0].rdma);
	T_EQ(p[1].iface, 3);

	t_section("channel order: no interfaces, no picks; no primary known");
	T_EQ(cli_mc_plan(ifs, 0, &primary, false, true, p, 4), 0);
	n = cli_mc_plan(ifs, 2, NULL, false, false, p, 3);
	T_EQ(n, 3);
	T_EQ(p[0].iface, 0);
	T_EQ(p[1].iface, 1);
	T_EQ(p[2].iface, 0);

	t_section("channel order: families are told apart");
	ifs[0] = v6("::ffff:192.0.2.1", 0, 1);
	ifs[1] = v4("192.0.2.1", 0, 1);
	primary = v4("192.0.2.1", 0, 0);
	n = cli_mc_plan(ifs, 2, &primary, false, false, p, 2);
	T_EQ(n, 2);
	T_EQ(p[0].iface, 0);
	T_EQ(p[1].iface, 1);
}

static void rdma_first(void)
{
	struct rdax_conn c;

	t_section("SMB-Direct channels first: what the application said wins");
	memset(&c, 0, sizeof(c));
	c.cfg.transport = RDAX_TRANSPORT_TCP;
	c.cfg.rdma_channels = 1;
	T_ASSERT(cli_mc_rdma_first(&c));
	c.cfg.transport = RDAX_TRANSPORT_RDMA;
	c.cfg.rdma_channels = 0;
	T_ASSERT(!cli_mc_rdma_first(&c));

	t_section("SMB-Direct channels first: unsaid, an SMB-Direct session wants more");
	c.cfg.rdma_channels = -1;
	T_ASSERT(cli_mc_rdma_first(&c));
}

int main(void)
{
	/* OpenSSL, its legacy provider (MD4, RC4) included, is a build dependency */
	T_REQUIRE(crypto_init() == 0);
	kat4_binding();
	kat6_binding();
	decode_good();
	decode_bad();
	plan();
	rdma_first();
	return t_done();
}
