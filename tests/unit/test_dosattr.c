// SPDX-License-Identifier: MIT
/*
 * Samba's user.DOSATTRIB blob. The version 5 vectors were written by
 * Samba 4.17.12's smbd (store dos attributes = yes; smbclient put and
 * setmode, then read with getxattr); the older versions are laid out by
 * hand from librpc/idl/xattr.idl, as Samba's NDR pulls them.
 */
#include <errno.h>

#include "proto/dosattr.h"
#include "proto/smb2.h"
#include "t.h"

static void samba_written(void)
{
	static const struct {
		const char *what, *hex;
		uint32_t attrib;
		uint64_t create;
	} v[] = {
		{ "a.txt: put", "00000500050000001100000020000000abd804f41882dd01",
		  FILE_ATTRIBUTE_ARCHIVE, 0x01dd8218f404d8abull },
		{ "h.txt: setmode +h", "00000500050000001100000022000000c73106f41882dd01",
		  FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_HIDDEN, 0x01dd8218f40631c7ull },
		{ "r.txt: setmode +rs", "00000500050000001100000025000000a55507f41882dd01",
		  FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_SYSTEM,
		  0x01dd8218f40755a5ull },
		{ "d: mkdir, setmode +h", "00000500050000001100000012000000081608f41882dd01",
		  FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_HIDDEN, 0x01dd8218f4081608ull },
	};
	uint8_t blob[64], out[64];
	struct dosattr d;
	size_t i, n;

	t_section("blobs Samba 4.17 wrote: decode, and encode to the same bytes");
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		printf("  %s\n", v[i].what);
		n = t_unhex(blob, sizeof(blob), v[i].hex);
		T_EQ(n, DOSATTR_V5_LEN);
		T_EQ(dosattr_decode(blob, n, &d), 0);
		T_EQ(d.version, 5);
		T_EQ(d.attrib, v[i].attrib);
		T_EQ(d.create_time, v[i].create);
		T_EQ(dosattr_encode(d.attrib, d.create_time, out, sizeof(out)), DOSATTR_V5_LEN);
		T_MEMEQ(out, blob, DOSATTR_V5_LEN);
	}
	T_EQ(dosattr_encode(0x20, 1, out, DOSATTR_V5_LEN - 1), -E2BIG);
}

static void older_versions(void)
{
	uint8_t b[128];
	struct dosattr d;
	size_t n;

	t_section("the hex string alone (the oldest form)");
	T_EQ(dosattr_decode((const uint8_t *)"0x21", 5, &d), 0);
	T_EQ(d.version, 0xFFFF);
	T_EQ(d.attrib, 0x21);
	T_EQ(d.create_time, 0);
	T_EQ(dosattr_decode((const uint8_t *)"12", 3, &d), 0);
	T_EQ(d.attrib, 0x12);
	T_EQ(dosattr_decode((const uint8_t *)"0x", 3, &d), -EBADMSG);
	T_EQ(dosattr_decode((const uint8_t *)"", 1, &d), -EBADMSG);
	T_EQ(dosattr_decode((const uint8_t *)"0x123456789", 12, &d), -EBADMSG);
	T_EQ(dosattr_decode((const uint8_t *)"0x20", 4, &d), -EBADMSG);	/* no NUL */

	t_section("version 1: the birth time whenever it is not 0");
	/* "0x20\0", pad, version 1, level 1, pad to 8: attrib, ea_size,
	 * size, alloc_size, create_time, change_time */
	n = t_unhex(b, sizeof(b), "3078323000 00 0100 0100 0000"
			"20000000 00000000 0000000000000000 0000000000000000"
			"0807060504030201 1111111111111111");
	T_EQ(n, 52);
	T_EQ(dosattr_decode(b, n, &d), 0);
	T_EQ(d.version, 1);
	T_EQ(d.attrib, 0x20);
	T_EQ(d.create_time, 0x0102030405060708ull);
	T_EQ(dosattr_decode(b, n - 1, &d), -EBADMSG);

	t_section("version 2: attributes only; its name must end");
	n = t_unhex(b, sizeof(b), "3078323200 00 0200 0200 0000"
			"01000000 22000000 00000000"
			"0000000000000000 0000000000000000 0807060504030201"
			"0000000000000000 0000000000000000 6100");
	T_EQ(n, 66);
	T_EQ(dosattr_decode(b, n, &d), 0);
	T_EQ(d.version, 2);
	T_EQ(d.attrib, 0x22);
	T_EQ(d.create_time, 0);
	T_EQ(dosattr_decode(b, n - 1, &d), -EBADMSG);

	t_section("version 3: the birth time only if valid_flags say so");
	n = t_unhex(b, sizeof(b), "3078323100 00 0300 0300 0000"
			"11000000 21000000 00000000 0000000000000000 0000000000000000"
			"0807060504030201 0000000000000000");
	T_EQ(n, 56);
	T_EQ(dosattr_decode(b, n, &d), 0);
	T_EQ(d.version, 3);
	T_EQ(d.attrib, 0x21);
	T_EQ(d.create_time, 0x0102030405060708ull);
	b[12] = 0x01;			/* ATTRIB only */
	T_EQ(dosattr_decode(b, n, &d), 0);
	T_EQ(d.attrib, 0x21);
	T_EQ(d.create_time, 0);

	t_section("version 4 (itime) and an empty attrib_hex");
	n = t_unhex(b, sizeof(b), "00 00 0400 0400 0000"
			"11000000 24000000 ffffffffffffffff 0807060504030201");
	T_EQ(n, 32);
	T_EQ(dosattr_decode(b, n, &d), 0);
	T_EQ(d.version, 4);
	T_EQ(d.attrib, 0x24);
	T_EQ(d.create_time, 0x0102030405060708ull);

	t_section("malformed and unknown");
	n = t_unhex(b, sizeof(b), "00000500050000001100000020000000abd804f41882dd01");
	T_EQ(dosattr_decode(b, n - 1, &d), -EBADMSG);	/* short */
	T_EQ(dosattr_decode(b, 3, &d), -EBADMSG);	/* no version */
	b[4] = 4;					/* level != version */
	T_EQ(dosattr_decode(b, n, &d), -EBADMSG);
	b[2] = b[4] = 6;
	T_EQ(dosattr_decode(b, n, &d), -EPROTONOSUPPORT);
	b[2] = b[3] = b[4] = b[5] = 0xFF;		/* 0xFFFF is no arm */
	T_EQ(dosattr_decode(b, n, &d), -EBADMSG);
	T_EQ(dosattr_decode(b, 0, &d), -EBADMSG);
}

int main(void)
{
	samba_written();
	older_versions();
	return t_done();
}
