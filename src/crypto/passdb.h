/* SPDX-License-Identifier: MIT */
/* Password database: a 0600 text file of "USER:NTHASH" lines. */
#ifndef RDAX_CRYPTO_PASSDB_H
#define RDAX_CRYPTO_PASSDB_H

#include <stddef.h>
#include <stdint.h>

/*
 * File format: one "user:32 hex digits" (the NT hash) per line; blank
 * lines and lines starting with '#' (after optional blanks) are ignored;
 * trailing blanks and CR are ignored. User names are UTF-8, at most 255
 * bytes, and match case-insensitively (simple Unicode upper-casing, see
 * util/utf16.h). Nothing here prints; all errors are return codes.
 */

struct passdb;

/*
 * Add or replace user's line (case-insensitive match; other lines are
 * kept verbatim). Creates the file with mode 0600 if missing; writes a
 * temporary file in the same directory, fsyncs and renames it, so the
 * file is always complete and stays 0600. -EINVAL for an empty user name
 * or one containing ':', control characters (newline, ...), a leading
 * '#' or leading/trailing blanks, or invalid UTF-8.
 */
int passdb_set(const char *path, const char *user, const char *password);
int passdb_set_hash(const char *path, const char *user,
		    const uint8_t nt_hash[16]);

/* Remove user's line: 0 or -ENOENT. */
int passdb_remove(const char *path, const char *user);

/*
 * Load the file. -EPERM if it is group/world readable or writable,
 * -EINVAL if it is not a regular file or has a malformed line or a
 * duplicate user (the 1-based line number goes to *bad_line when not
 * NULL; 0 otherwise), -ENOENT etc. from open().
 */
int passdb_load(const char *path, struct passdb **out);
int passdb_load_ex(const char *path, struct passdb **out,
		   unsigned int *bad_line);

/* Case-insensitive lookup: 0 and the hash, or -ENOENT. */
int passdb_lookup(const struct passdb *db, const char *user,
		  uint8_t nt_hash[16]);

/* Adapter for auth_server_cfg.lookup with lookup_arg = the passdb. */
int passdb_lookup_cb(void *db, const char *user, uint8_t nt_hash[16]);

size_t passdb_count(const struct passdb *db);

/* Frees and wipes; *db = NULL; NULL is a no-op. */
void passdb_free(struct passdb **db);

#endif
