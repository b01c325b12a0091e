/* SPDX-License-Identifier: MIT */
/*
 * "username map": SMB user names to Unix accounts, in Samba's file
 * syntax. Each line is "unixname = smbname ...": a name may be quoted
 * ("Fred Smith"), "*" matches every user and "@group" (or "+group") a
 * member of that Unix group. Lines apply in order, each to the result of
 * the lines before it; a matching line whose unixname starts with '!'
 * ends the mapping. '#' and ';' start comments; a trailing '\' joins
 * the next line.
 *
 * Loading checks more than Samba does, so that a broken map is found at
 * start (and at reload), not at someone's logon: every line parses,
 * every Unix name and group exists, and no names map to each other in
 * a loop.
 */
#ifndef RDAX_SERVER_USERMAP_H
#define RDAX_SERVER_USERMAP_H

#include <stddef.h>

struct usermap;

/* 0, or a negative errno and err = "FILE:LINE: reason". */
int usermap_load(const char *path, struct usermap **out, char *err, size_t errlen);
/* The Unix name for SMB user name user (user itself when no line maps it). */
int usermap_apply(const struct usermap *m, const char *user, char *out, size_t len);
int usermap_lines(const struct usermap *m);
void usermap_free(struct usermap **m);

#endif
