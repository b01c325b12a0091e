#!/bin/sh
# SPDX-License-Identifier: MIT
# FSCTLs on files, calibrated: smbtorture's sparse, zero-data (punch),
# query-allocated-ranges and duplicate-extents IOCTL tests, smb2.fileid
# and smb2.delete-on-close-perms, against Samba smbd and rdaxd side by
# side on the same file system: an XFS with reflink on a loop device
# where the machine can make one (duplicate extents need it), the test
# directory's otherwise. Every test Samba passes must pass against rdaxd
# (tools/lib/torture.sh); NEEDS names what rdaxd lacks.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd mkfs.xfs
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

TESTS="smb2.ioctl.sparse_file_flag smb2.ioctl.sparse_file_attr smb2.ioctl.sparse_dir_flag
smb2.ioctl.sparse_set_nobuf smb2.ioctl.sparse_set_oversize smb2.ioctl.sparse_qar
smb2.ioctl.sparse_qar_malformed smb2.ioctl.sparse_punch smb2.ioctl.sparse_hole_dealloc
smb2.ioctl.sparse_compressed smb2.ioctl.sparse_copy_chunk smb2.ioctl.sparse_punch_invalid
smb2.ioctl.sparse_perms smb2.ioctl.sparse_lock smb2.ioctl.sparse_qar_ob1
smb2.ioctl.sparse_qar_multi smb2.ioctl.sparse_qar_overflow
smb2.ioctl.dup_extents_simple smb2.ioctl.dup_extents_len_beyond_dest
smb2.ioctl.dup_extents_len_beyond_src smb2.ioctl.dup_extents_len_zero
smb2.ioctl.dup_extents_sparse_src smb2.ioctl.dup_extents_sparse_dest
smb2.ioctl.dup_extents_sparse_both smb2.ioctl.dup_extents_src_is_dest
smb2.ioctl.dup_extents_src_is_dest_overlap smb2.ioctl.dup_extents_compressed_src
smb2.ioctl.dup_extents_compressed_dest smb2.ioctl.dup_extents_bad_handle
smb2.ioctl.dup_extents_src_lock smb2.ioctl.dup_extents_dest_lock"
FAMILIES="smb2.fileid smb2.delete-on-close-perms"

# What rdaxd does not do yet, by test (see tools/lib/torture.sh)
NEEDS=""

if reflink_fs "$T/xfs" 400; then
	D=$T/xfs
	echo "both servers on an XFS with reflink (loop device)"
else
	D=$T
	skip_case "reflink file system" "$REFLINK_WHY; both servers on $(stat -f -c %T "$T")"
fi

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="vfs objects = streams_xattr
	store dos attributes = yes"
scratch_smbd "$D/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$D/smbd/root.pw")

share_dir "$D/share"
make_user "$T/passdb" torture 'torture pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server min protocol = SMB2_10
[tort]
	path = $D/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"

. "$top/tools/lib/torture.sh"
torture_tests "$SMBD_PORT" "root%$SPW" "$PORT" "torture%torture pw" $TESTS
torture_families "$SMBD_PORT" "root%$SPW" "$PORT" "torture%torture pw" $FAMILIES
torture_summary
check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
