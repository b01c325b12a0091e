// SPDX-License-Identifier: MIT
/*
 * Extended attributes as Samba keeps them ("ea support"): EA NAME is the
 * xattr "user.NAME" of its file. The ExtA create context and SET_INFO
 * FileFullEaInformation write them (an empty value removes one);
 * QUERY_INFO FileFullEaInformation lists them. The xattrs rdaxd and
 * Samba keep for themselves (DOS attributes, streams, ACLs) are never
 * EAs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/fscc.h"
#include "proto/ntstatus.h"
#include "server/server.h"

#define EA_PREFIX "user."
#define EA_PFX_LEN (sizeof(EA_PREFIX) - 1)
#define EA_VALUE_MAX 65535
#define EA_LIST_MAX (64 << 10)

/* Names after "user." that are not EAs (Samba's private ones and rdaxd's). */
static bool ea_private(const char *name, size_t len)
{
	static const struct { const char *s; bool prefix; } priv[] = {
		{ "DOSATTRIB", false }, { "DosStream.", true }, { "rdax.", true },
		{ "SAMBA_PAI", false }, { "SAMBA_STREAMS", false },
	};
	size_t i, n;

	for (i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
		n = strlen(priv[i].s);
		if ((priv[i].prefix ? len >= n : len == n) && !strncasecmp(name, priv[i].s, n))
			return true;
	}
	return false;
}

int srv_ea_check(const uint8_t *p, size_t len)
{
	struct fscc_ea e;
	size_t off = 0;
	int ret;

	while ((ret = fscc_ea_next(p, len, &off, &e)) == 1)
		if (!fscc_ea_name_ok(e.name, e.name_len) || ea_private(e.name, e.name_len))
			return -E_SMB_INVALID_EA_NAME;
	return ret ? -EINVAL : 0;
}

int srv_ea_set(int fd, const uint8_t *p, size_t len)
{
	char key[EA_PFX_LEN + 256];
	struct fscc_ea e;
	size_t off = 0;
	int ret;

	ret = srv_ea_check(p, len);
	if (ret)
		return ret;
	while (fscc_ea_next(p, len, &off, &e) == 1) {
		snprintf(key, sizeof(key), EA_PREFIX "%s", e.name);
		if (e.value_len)
			ret = store_setxattr(fd, key, e.value, e.value_len);
		else
			ret = store_removexattr(fd, key);
		if (ret == -ENODATA)
			ret = 0;
		if (ret == -EOPNOTSUPP)
			return -E_SMB_EAS_NOT_SUPPORTED;
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * fn(fd, its xattr name, the EA name's length, arg) for each EA of fd, until fn
 * returns nonzero (that is returned); -E_SMB_EAS_NOT_SUPPORTED where
 * the file system has no xattrs.
 */
static int ea_each(int fd, int (*fn)(int fd, const char *xname, size_t len, void *arg),
		   void *arg)
{
	char *names;
	const char *x;
	ssize_t n;
	int ret = 0;

	n = store_listxattr(fd, NULL, 0);
	if (n == -EOPNOTSUPP)
		return -E_SMB_EAS_NOT_SUPPORTED;
	if (n <= 0)
		return (int)n;
	if (n > EA_LIST_MAX)
		n = EA_LIST_MAX;
	names = malloc((size_t)n + 1);
	if (!names)
		return -ENOMEM;
	n = store_listxattr(fd, names, (size_t)n);
	if (n < 0) {
		ret = n == -ERANGE ? -EAGAIN : (int)n;
		goto out;
	}
	names[n] = 0;
	for (x = names; x < names + n && !ret; x += strlen(x) + 1) {
		size_t len = strlen(x);

		if (strncmp(x, EA_PREFIX, EA_PFX_LEN) || len - EA_PFX_LEN > 255 ||
		    !fscc_ea_name_ok(x + EA_PFX_LEN, len - EA_PFX_LEN) ||
		    ea_private(x + EA_PFX_LEN, len - EA_PFX_LEN))
			continue;
		ret = fn(fd, x, len - EA_PFX_LEN, arg);
	}
out:
	free(names);
	return ret;
}

struct ea_out {
	struct wcur *d;
	uint32_t limit;
	uint8_t *value;
	size_t prev;
	int count;
};

static int ea_put(int fd, const char *xname, size_t len, void *arg)
{
	struct ea_out *eo = arg;
	struct fscc_ea e = { 0 };
	ssize_t vn;

	vn = store_getxattr(fd, NULL, xname, eo->value, EA_VALUE_MAX);
	if (vn <= 0)
		return 0;	/* gone, or empty: no EA */
	e.name = xname + EA_PFX_LEN;
	e.name_len = (uint8_t)len;
	e.value = eo->value;
	e.value_len = (uint16_t)vn;
	if (eo->d->off + 8 + e.name_len + 1 + e.value_len + 3 > eo->limit ||
	    fscc_ea_encode(eo->d, &eo->prev, &e))
		return eo->count ? 1 : -E_SMB_BUFFER_TOO_SMALL;	/* whole entries only */
	eo->count++;
	return 0;
}

int srv_ea_query(struct wcur *d, uint32_t limit, int fd)
{
	struct ea_out eo = { .d = d, .limit = limit, .prev = SIZE_MAX };
	int ret;

	eo.value = malloc(EA_VALUE_MAX);
	if (!eo.value)
		return -ENOMEM;
	ret = ea_each(fd, ea_put, &eo);
	free(eo.value);
	if (!ret && !eo.count)
		return -E_SMB_NO_EAS_ON_FILE;
	return ret;
}

static int ea_add_size(int fd, const char *xname, size_t len, void *arg)
{
	uint32_t *size = arg;
	ssize_t vn = store_getxattr(fd, NULL, xname, NULL, 0);

	if (vn > 0 && vn <= EA_VALUE_MAX)
		*size = ((*size + 3) & ~3u) + 8 + (uint32_t)len + 1 + (uint32_t)vn;
	return 0;
}

uint32_t srv_ea_size(int fd)
{
	uint32_t size = 0;

	return ea_each(fd, ea_add_size, &size) ? 0 : size;
}
