// SPDX-License-Identifier: MIT
/* srvsvc / wkssvc stub data (srvsvc.h). */
#include <errno.h>

#include "proto/srvsvc.h"

/*
 * Levels with an arm (a pointer) in the IDL's unions; any other level
 * takes the empty default arm.
 */
static const uint32_t share_arms[] = { 0, 1, 2, 501, 502, 503, 1004, 1005, 1006, 1007, 1501 };
static const uint32_t srv_arms[] = { 100, 101, 102, 402, 403, 502, 503, 599 };
static const uint32_t wksta_arms[] = { 100, 101, 102, 502 };

#define IN(v, tab) in_table(v, tab, sizeof(tab) / sizeof(tab[0]))

static bool in_table(uint32_t v, const uint32_t *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i] == v)
			return true;
	return false;
}

bool srvsvc_share_level_ok(uint32_t level)
{
	return level == 0 || level == 1 || level == 2 || level == 501 || level == 502;
}

/* ---- requests ---- */

int srvsvc_enum_req_decode(const uint8_t *p, size_t len, struct srvsvc_enum_req *r)
{
	char server[256];
	struct rcur c;
	uint32_t disc;

	rcur_init(&c, p, len);
	if (ndr_get_unique_string(&c, server, sizeof(server)))
		return -EBADMSG;
	r->level = ndr_get_u32(&c);
	disc = ndr_get_u32(&c);
	if (disc != r->level)
		return -EBADMSG;
	/* a container the client sends empty: count 0, no array */
	if (IN(r->level, share_arms) && ndr_get_u32(&c)) {
		ndr_get_u32(&c);		/* count */
		if (ndr_get_u32(&c))
			return -EBADMSG;
	}
	r->max_buffer = ndr_get_u32(&c);
	r->has_resume = ndr_get_u32(&c);
	r->resume = r->has_resume ? ndr_get_u32(&c) : 0;
	return c.err ? -EBADMSG : 0;
}

int srvsvc_getinfo_req_decode(const uint8_t *p, size_t len, struct srvsvc_getinfo_req *r)
{
	char server[256];
	struct rcur c;

	rcur_init(&c, p, len);
	if (ndr_get_unique_string(&c, server, sizeof(server)) ||
	    ndr_get_string(&c, r->name, sizeof(r->name)))
		return -EBADMSG;
	r->level = ndr_get_u32(&c);
	return c.err ? -EBADMSG : 0;
}

int srvsvc_level_req_decode(const uint8_t *p, size_t len, uint32_t *level)
{
	char server[256];
	struct rcur c;

	rcur_init(&c, p, len);
	if (ndr_get_unique_string(&c, server, sizeof(server)))
		return -EBADMSG;
	*level = ndr_get_u32(&c);
	return c.err ? -EBADMSG : 0;
}

/* ---- share info ([MS-SRVS] 2.2.4.22 ff.) ---- */

/* The fixed part of SHARE_INFO_<level>: pointers and numbers. */
static void share_fixed(struct ndr_w *n, uint32_t level, const struct srvsvc_share *s)
{
	ndr_ptr(n, true);		/* netname */
	if (level == 0)
		return;
	ndr_u32(n, s->type);
	ndr_ptr(n, true);		/* remark */
	if (level == 501) {
		ndr_u32(n, 0);		/* flags: manual caching */
	} else if (level == 2 || level == 502) {
		ndr_u32(n, 0);		/* permissions */
		ndr_u32(n, UINT32_MAX);	/* max uses: unlimited */
		ndr_u32(n, s->users);
		ndr_ptr(n, true);	/* path */
		ndr_ptr(n, false);	/* password */
	}
	if (level == 502) {
		ndr_u32(n, 0);		/* no security descriptor */
		ndr_ptr(n, false);
	}
}

/* What its pointers point to, in the same order. */
static void share_deferred(struct ndr_w *n, uint32_t level, const struct srvsvc_share *s)
{
	ndr_string(n, s->name);
	if (level == 0)
		return;
	ndr_string(n, s->comment);
	if (level == 2 || level == 502)
		ndr_string(n, s->path);
}

void srvsvc_enum_rsp_encode(struct ndr_w *n, const struct srvsvc_enum_req *r,
			    const struct srvsvc_share *shares, uint32_t count)
{
	bool ok = srvsvc_share_level_ok(r->level);
	uint32_t i;

	ndr_u32(n, r->level);
	ndr_u32(n, r->level);		/* union discriminant */
	if (IN(r->level, share_arms)) {
		ndr_ptr(n, ok);
		if (ok) {
			ndr_u32(n, count);
			ndr_ptr(n, true);
			ndr_u32(n, count);	/* conformance */
			for (i = 0; i < count; i++)
				share_fixed(n, r->level, &shares[i]);
			for (i = 0; i < count; i++)
				share_deferred(n, r->level, &shares[i]);
		}
	}
	ndr_u32(n, ok ? count : 0);	/* total entries */
	ndr_ptr(n, r->has_resume);
	if (r->has_resume)
		ndr_u32(n, 0);
	ndr_u32(n, ok ? WERR_OK : WERR_INVALID_LEVEL);
}

void srvsvc_getinfo_rsp_encode(struct ndr_w *n, uint32_t level,
			       const struct srvsvc_share *share, uint32_t werr)
{
	bool ok = share && srvsvc_share_level_ok(level);

	ndr_u32(n, level);
	if (IN(level, share_arms)) {
		ndr_ptr(n, ok);
		if (ok) {
			share_fixed(n, level, share);
			share_deferred(n, level, share);
		}
	}
	ndr_u32(n, ok ? WERR_OK : werr ? werr : WERR_INVALID_LEVEL);
}

/* ---- server and workstation info ---- */

void srvsvc_srvinfo_rsp_encode(struct ndr_w *n, uint32_t level,
			       const struct srvsvc_server *s)
{
	bool ok = level == 100 || level == 101;

	ndr_u32(n, level);
	if (IN(level, srv_arms)) {
		ndr_ptr(n, ok);
		if (ok) {
			ndr_u32(n, PLATFORM_ID_NT);
			ndr_ptr(n, true);
			if (level == 101) {
				ndr_u32(n, s->major);
				ndr_u32(n, s->minor);
				ndr_u32(n, s->type);
				ndr_ptr(n, true);
			}
			ndr_string(n, s->name);
			if (level == 101)
				ndr_string(n, s->comment);
		}
	}
	ndr_u32(n, ok ? WERR_OK : WERR_INVALID_LEVEL);
}

void wkssvc_info_rsp_encode(struct ndr_w *n, uint32_t level,
			    const struct srvsvc_server *s)
{
	bool ok = level == 100;

	ndr_u32(n, level);
	if (IN(level, wksta_arms)) {
		ndr_ptr(n, ok);
		if (ok) {
			ndr_u32(n, PLATFORM_ID_NT);
			ndr_ptr(n, true);
			ndr_ptr(n, true);
			ndr_u32(n, s->major);
			ndr_u32(n, s->minor);
			ndr_string(n, s->name);
			ndr_string(n, s->domain);
		}
	}
	ndr_u32(n, ok ? WERR_OK : WERR_INVALID_LEVEL);
}
