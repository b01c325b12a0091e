// SPDX-License-Identifier: MIT
/*
 * SMB3 POSIX extension payloads as a peer sends them: the create
 * context and its response, FilePosixInformation and a POSIX directory
 * listing, reparse buffers (FSCTL_SET_REPARSE_POINT) and the
 * STOPPED_ON_SYMLINK error data, FileFsPosixInformation; what decodes re-encodes and decodes the
 * same. Byte 0 picks the link depth for posix_target_check of the rest.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "proto/posix.h"

static uint8_t buf[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct posix_info pi, pb;
	struct posix_fsinfo fs;
	struct fscc_info fi, fb;
	struct reparse_data rd;
	const uint8_t *name, *t16;
	uint32_t mode, nlen, tlen;
	char link[64], target[256];
	struct wcur w;
	size_t off = 0;
	int rc, n = 0, i;

	if (!posix_cc_decode(data, size, &mode))
		FUZZ_ASSERT(size == 4 && mode <= POSIX_PERM_MASK);
	if (!posix_cc_rsp_decode(data, size, &pi)) {
		wcur_init(&w, buf, sizeof(buf));
		posix_cc_rsp_encode(&w, &pi);
		FUZZ_ASSERT(!w.err && !posix_cc_rsp_decode(buf, w.off, &pb));
		FUZZ_ASSERT(sid_equal(&pi.owner, &pb.owner) && sid_equal(&pi.group, &pb.group));
	}
	if (!posix_fs_info_decode(data, size, &fs)) {
		wcur_init(&w, buf, sizeof(buf));
		posix_fs_info_encode(&w, &fs);
		FUZZ_ASSERT(w.off == POSIX_FS_INFO_LEN && !memcmp(buf, data, w.off));
	}
	if (!posix_info_decode(data, size, &fi, &pi)) {
		wcur_init(&w, buf, sizeof(buf));
		posix_info_encode(&w, &fi, &pi);
		FUZZ_ASSERT(!posix_info_decode(buf, w.off, &fb, &pb));
		FUZZ_ASSERT(fb.end_of_file == fi.end_of_file && pb.ino == pi.ino);
	}
	while ((rc = posix_dirent_next(data, size, &off, &fi, &pi, &name, &nlen)) == 1 &&
	       n++ < 1000)
		FUZZ_ASSERT_INSIDE(name, nlen, data, size);
	FUZZ_ASSERT(rc >= 0 || rc == -EBADMSG);
	rc = reparse_decode(data, size, &rd);
	FUZZ_ASSERT(rc == 0 || rc == -EBADMSG || rc == -EOPNOTSUPP);
	if (!rc && rd.target)
		FUZZ_ASSERT_INSIDE(rd.target, rd.tlen, data, size);
	if (!rc && rd.target && rd.tlen < 4096) {
		wcur_init(&w, buf, sizeof(buf));
		reparse_symlink_encode(&w, rd.target, rd.tlen);
		FUZZ_ASSERT(!reparse_decode(buf, w.off, &rd) && rd.type == NFS_SPECFILE_LNK);
	}
	for (i = 0; i < 2; i++)
		if (!symlink_err_decode(data, size, i, &t16, &tlen))
			FUZZ_ASSERT_INSIDE(t16, tlen, data, size);
	if (size) {
		n = data[0] % 8;
		for (i = 0; i < n; i++)
			memcpy(link + 2 * i, "d/", 2);
		memcpy(link + 2 * n, "l", 2);
		n = (int)(size - 1 < sizeof(target) - 1 ? size - 1 : sizeof(target) - 1);
		memcpy(target, data + 1, (size_t)n);
		target[n] = 0;
		rc = posix_target_check(link, target);
		FUZZ_ASSERT(rc == 0 || rc == -EINVAL);
		FUZZ_ASSERT(rc || (target[0] && target[0] != '/'));
	}
	return 0;
}
