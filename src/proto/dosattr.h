/* SPDX-License-Identifier: MIT */
/*
 * Samba's "user.DOSATTRIB" extended attribute: a file's DOS attributes
 * and birth time, as the NDR blob xattr_DOSATTRIB (librpc/idl/xattr.idl).
 * Layout, offsets from the start, NDR alignment from the start too:
 *
 *   attrib_hex   ASCII, NUL-terminated ("0x20" up to version 3, "" after)
 *   (pad to 2)   version u16, then the union's level u16 (= version)
 *   (pad to 4)   version 1: attrib, ea_size u32; size, alloc_size,
 *                           create_time, change_time u64
 *                version 2: flags, attrib, ea_size u32; size, alloc_size,
 *                           create_time, change_time, write_time u64;
 *                           name (UTF-8, NUL-terminated)
 *                version 3: valid_flags, attrib, ea_size u32; size,
 *                           alloc_size, create_time, change_time u64
 *                version 4: valid_flags, attrib u32; itime, create_time u64
 *                version 5: valid_flags, attrib u32; create_time u64
 *
 * A blob that is only the string is the oldest form: the attributes in
 * hex. Samba 4.17 writes version 5 (24 bytes). Pure codec: no I/O.
 */
#ifndef RDAX_PROTO_DOSATTR_H
#define RDAX_PROTO_DOSATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DOSATTR_XATTR "user.DOSATTRIB"
#define DOSATTR_READ_MAX 256		/* Samba reads at most an fstring */
#define DOSATTR_V5_LEN 24

/* xattr_DosInfoValidFlags */
#define DOSATTR_VALID_ATTRIB 0x01u
#define DOSATTR_VALID_CREATE_TIME 0x10u

struct dosattr {
	uint16_t version;		/* as found; 0xFFFF: the hex string only */
	uint32_t attrib;		/* FILE_ATTRIBUTE_*, as stored */
	uint64_t create_time;		/* FILETIME; 0: the blob has none */
};

/*
 * Decode a blob as Samba reads it: the attributes of every version, the
 * birth time where the version has one (and, from version 3, flags it
 * valid). 0, or -EBADMSG when malformed, -EPROTONOSUPPORT for an
 * unknown version.
 */
int dosattr_decode(const uint8_t *p, size_t len, struct dosattr *out);

/* Version 5, as Samba 4.17 writes it: DOSATTR_V5_LEN bytes, or -E2BIG. */
int dosattr_encode(uint32_t attrib, uint64_t create_time, uint8_t *buf, size_t cap);

#endif
