// SPDX-License-Identifier: MIT
/*
 * SMB3 POSIX extensions in the client: symlinks as reparse points
 * (created with FSCTL_SET_REPARSE_POINT on a new empty file, read with
 * FSCTL_GET_REPARSE_POINT on the link opened itself) and chmod as a
 * DACL holding the S-1-5-88-3-MODE ACE (Windows NFS's form, which rdaxd
 * and ksmbd read). One compound round trip each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "proto/ntstatus.h"
#include "proto/posix.h"
#include "proto/secdesc.h"
#include "util/utf16.h"

bool rdax_conn_posix(const struct rdax_conn *c)
{
	return c->posix;
}

/* CREATE, one related request built by add, CLOSE; the first failure. */
static int run3(struct rdax_tree *t, struct cli_chain *ch, const struct cli_create_args *a,
		int (*add)(struct rdax_tree *t, struct cli_chain *ch, const void *arg),
		const void *arg)
{
	int ret, i;

	cli_chain_init(t->c, ch);
	ret = cli_add_create(t, ch, a);
	if (!ret)
		ret = add(t, ch, arg);
	if (!ret)
		ret = cli_add_close(t, ch, &cli_related_fid, 0);
	if (ret) {
		cli_chain_abort(t->c, ch);
		return ret;
	}
	ret = cli_chain_run(t->c, ch);
	if (ret)
		return ret;
	for (i = 0; i < 2; i++)
		if (nt_is_error(ch->rsp[i].status))
			return cli_status(t->c, ch->rsp[i].status, NULL, a->path);
	return 0;
}

struct buf_arg {
	uint32_t ctl;
	const uint8_t *p;
	uint32_t len;
	uint32_t max_out;
};

static int add_fsctl(struct rdax_tree *t, struct cli_chain *ch, const void *arg)
{
	const struct buf_arg *b = arg;

	return cli_add_ioctl(t, ch, &cli_related_fid, b->ctl, b->p, b->len, b->max_out);
}

/* A server without the extensions refuses reparse points one way or another. */
static int not_posix(struct rdax_tree *t, int ret)
{
	uint32_t st = t->c->last_status;

	if (st == STATUS_NOT_SUPPORTED || st == STATUS_INVALID_DEVICE_REQUEST ||
	    st == STATUS_NOT_A_REPARSE_POINT)
		return -EOPNOTSUPP;
	return ret;
}

int rdax_symlink(struct rdax_tree *t, const char *target, const char *path)
{
	struct cli_create_args a = { path, FILE_WRITE_DATA | FILE_WRITE_ATTRIBUTES |
					   FILE_READ_ATTRIBUTES | DELETE_ACCESS,
				 FILE_CREATE, FILE_NON_DIRECTORY_FILE, FILE_ATTRIBUTE_NORMAL };
	uint8_t t16[POSIX_TARGET16_MAX + 2], buf[2 * POSIX_TARGET16_MAX + 32];
	struct buf_arg b = { FSCTL_SET_REPARSE_POINT, buf, 0, 0 };
	struct cli_chain ch;
	struct wcur w;
	int n, i, ret;

	cli_begin(t->c);
	n = utf8_to_utf16le(target, t16, sizeof(t16));
	if (n < 0 || n > POSIX_TARGET16_MAX || !n)
		return cli_done(t->c, n ? -ENAMETOOLONG : -EINVAL, "symlink", path);
	for (i = 0; i < n; i += 2)
		if (t16[i] == '/' && !t16[i + 1])
			t16[i] = '\\';
	wcur_init(&w, buf, sizeof(buf));
	reparse_symlink_encode(&w, t16, (uint32_t)n);
	b.len = (uint32_t)w.off;
	ret = run3(t, &ch, &a, add_fsctl, &b);
	if (ret && !nt_is_error(ch.rsp[0].status)) {
		/* the file was made, the link not: take it away again */
		ret = not_posix(t, ret);
		rdax_unlink(t, path);
	}
	return cli_done(t->c, ret, "symlink", path);
}

ssize_t rdax_readlink(struct rdax_tree *t, const char *path, char *out, size_t len)
{
	struct cli_create_args a = { path, FILE_READ_ATTRIBUTES, FILE_OPEN,
				 FILE_OPEN_REPARSE_POINT, 0 };
	struct buf_arg b = { FSCTL_GET_REPARSE_POINT, NULL, 0, 16384 };
	struct smb2_ioctl_rsp r;
	struct reparse_data rd;
	struct cli_chain ch;
	int n, i, ret;

	cli_begin(t->c);
	ret = run3(t, &ch, &a, add_fsctl, &b);
	if (ret)
		return cli_done(t->c, not_posix(t, ret), "readlink", path);
	if (smb2_ioctl_rsp_decode(ch.rsp[1].pdu, ch.rsp[1].len, &r) ||
	    reparse_decode(r.output.p, r.output.len, &rd))
		return cli_done(t->c, cli_err(t->c, -EPROTO, "malformed reparse point"),
				"readlink", path);
	if (rd.type != NFS_SPECFILE_LNK)
		return cli_done(t->c, -EINVAL, "readlink", path);
	n = utf16le_to_utf8(rd.target, rd.tlen, out, len);
	if (n < 0)
		return cli_done(t->c, n == -E2BIG ? -ENAMETOOLONG : -EPROTO, "readlink", path);
	for (i = 0; i < n; i++)
		if (out[i] == '\\')
			out[i] = '/';
	return n;
}

struct sd_arg {
	const uint8_t *p;
	uint32_t len;
};

static int add_set_dacl(struct rdax_tree *t, struct cli_chain *ch, const void *arg)
{
	const struct sd_arg *sd = arg;
	struct smb2_set_info_req r = {
		.info_type = SMB2_0_INFO_SECURITY,
		.data = { sd->p, sd->len },
		.additional = DACL_SECURITY_INFORMATION,
		.fid = cli_related_fid,
	};
	struct wcur w;
	int ret;

	ret = cli_chain_add(t->c, ch, SMB2_SET_INFO, t->id, true, 1, 40 + sd->len, &w);
	if (ret)
		return ret;
	smb2_set_info_req_encode(&w, &r);
	cli_chain_end(t->c, ch, &w);
	return 0;
}

int rdax_chmod(struct rdax_tree *t, const char *path, uint32_t mode)
{
	struct cli_create_args a = { path, WRITE_DAC | FILE_READ_ATTRIBUTES, FILE_OPEN, 0, 0 };
	struct secdesc *sd;
	uint32_t sub[3] = { 88, 3, mode & POSIX_PERM_MASK };
	uint8_t buf[128];
	struct sd_arg arg = { buf, 0 };
	struct cli_chain ch;
	size_t n;
	int ret;

	cli_begin(t->c);
	if (!t->c->posix)
		return cli_done(t->c, -EOPNOTSUPP, "chmod", path);
	sd = calloc(1, sizeof(*sd));	/* large: its ACE array */
	if (!sd)
		return cli_done(t->c, -ENOMEM, "chmod", path);
	sd->control = SE_SELF_RELATIVE | SE_DACL_PRESENT;
	sd->has_dacl = true;
	sd->dacl.rev = 2;
	sd->dacl.n = 1;
	sd->dacl.ace[0].type = ACCESS_ALLOWED_ACE_TYPE;
	sid_make(&sd->dacl.ace[0].sid, 5, 3, sub);
	n = secdesc_encode(sd, DACL_SECURITY_INFORMATION, buf, sizeof(buf));
	free(sd);
	if (n > sizeof(buf))
		return cli_done(t->c, -EIO, "chmod", path);
	arg.len = (uint32_t)n;
	ret = run3(t, &ch, &a, add_set_dacl, &arg);
	return cli_done(t->c, ret, "chmod", path);
}
