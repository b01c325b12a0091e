// SPDX-License-Identifier: MIT
/*
 * Self-relative security descriptors ([MS-DTYP] 2.4.6): a descriptor
 * laid out by hand from the spec decodes and encodes to the same bytes;
 * each part alone; what is malformed is refused.
 */
#include <errno.h>

#include "proto/secdesc.h"
#include "t.h"

/* owner S-1-22-1-1000, group S-1-22-2-1000, DACL: owner full, Everyone read */
static const char sd_hex[] =
	"01000480 14000000 24000000 00000000 34000000"
	"0102000000000016 01000000 e8030000"
	"0102000000000016 02000000 e8030000"
	"02003400 02000000"
	"00001800 ff011f00 0102000000000016 01000000 e8030000"
	"00001400 89001200 0101000000000001 00000000";

static void round_trip(void)
{
	uint8_t b[256], out[256];
	struct secdesc sd;
	char s[64];
	size_t n;

	t_section("a descriptor decodes and encodes to the same bytes");
	n = t_unhex(b, sizeof(b), sd_hex);
	T_EQ(n, 104);
	T_EQ(secdesc_decode(b, n, &sd), 0);
	T_ASSERT(sd.has_owner && sd.has_group && sd.has_dacl && !sd.has_sacl);
	sid_to_string(&sd.owner, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-22-1-1000"));
	sid_to_string(&sd.group, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-22-2-1000"));
	T_EQ(sd.dacl.n, 2);
	T_EQ(sd.dacl.ace[0].mask, 0x001f01ff);
	T_EQ(sd.dacl.ace[1].mask, 0x00120089);
	sid_to_string(&sd.dacl.ace[1].sid, s, sizeof(s));
	T_ASSERT(!strcmp(s, "S-1-1-0"));
	T_EQ(secdesc_encode(&sd, 0xf, out, sizeof(out)), n);
	T_MEMEQ(out, b, n);
	T_EQ(secdesc_encode(&sd, 0xf, out, n - 1), n);	/* the size needed */

	t_section("one part alone");
	T_EQ(secdesc_encode(&sd, OWNER_SECURITY_INFORMATION, out, sizeof(out)), 36);
	T_EQ(secdesc_decode(out, 36, &sd), 0);
	T_ASSERT(sd.has_owner && !sd.has_group && !sd.has_dacl);
	T_EQ(out[2] | out[3] << 8, SE_SELF_RELATIVE);
}

static void malformed(void)
{
	uint8_t b[256];
	struct secdesc sd;
	size_t n;

	t_section("malformed descriptors are refused");
	n = t_unhex(b, sizeof(b), sd_hex);
	T_EQ(secdesc_decode(b, 19, &sd), -EBADMSG);
	T_EQ(secdesc_decode(b, n - 1, &sd), -EBADMSG);	/* ACE past the end */
	b[0] = 2;
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0] = 1;
	b[0x15] = 16;				/* owner: 16 sub-authorities */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x15] = 2;
	b[0x10] = 0xf0;				/* DACL offset outside */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x10] = 0x34;
	b[0x3c] = 0x11;				/* an object ACE type */
	T_EQ(secdesc_decode(b, n, &sd), -EOPNOTSUPP);
	b[0x3c] = 0;
	b[0x38] = 65;				/* AceCount above the limit */
	T_EQ(secdesc_decode(b, n, &sd), -E2BIG);
	b[0x38] = 3;				/* one ACE more than there is */
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
	b[0x38] = 2;
	b[2] = 0x04;				/* not self-relative */
	b[3] = 0;
	T_EQ(secdesc_decode(b, n, &sd), -EBADMSG);
}

static void null_dacl(void)
{
	uint8_t b[64], out[64];
	struct secdesc sd;
	size_t n;

	t_section("a NULL DACL: present, without an offset");
	n = t_unhex(b, sizeof(b), "01000480 00000000 00000000 00000000 00000000");
	T_EQ(secdesc_decode(b, n, &sd), 0);
	T_ASSERT(sd.has_dacl && sd.null_dacl);
	T_EQ(secdesc_encode(&sd, DACL_SECURITY_INFORMATION, out, sizeof(out)), n);
	T_MEMEQ(out, b, n);
}

int main(void)
{
	round_trip();
	malformed();
	null_dacl();
	return t_done();
}
