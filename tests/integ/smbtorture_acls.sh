#!/bin/sh
# SPDX-License-Identifier: MIT
# Security descriptors, calibrated: smbtorture's smb2.acls family against
# Samba smbd (vfs objects acl_xattr streams_xattr, as Samba keeps NT ACLs)
# and rdaxd side by side, on the same file system. Every test Samba
# passes here must pass against rdaxd (access decided by the kept DACL:
# CREATOR, GENERIC, OWNER, INHERITANCE, DYNAMIC). A test Samba itself
# fails or skips is no bar: it counts as a skip, with both results.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

# smb2.acls, test by test (smbtorture --list): what one leaves behind
# where its user may not delete it is removed before the next
TESTS="smb2.acls.INHERITFLAGS smb2.acls.SDFLAGSVSCHOWN smb2.acls.CREATOR
smb2.acls.GENERIC smb2.acls.OWNER smb2.acls.INHERITANCE smb2.acls.DYNAMIC
smb2.acls.ACCESSBASED smb2.acls.OWNER-RIGHTS smb2.acls.OWNER-RIGHTS-DENY
smb2.acls.OWNER-RIGHTS-DENY1 smb2.acls.DENY1 smb2.acls.MXAC-NOT-GRANTED
smb2.acls.OVERWRITE_READ_ONLY_FILE smb2.acls_non_canonical.flags"

# Nothing is left for a NEEDS table: every test Samba passes must pass.
NEEDS=""

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="vfs objects = acl_xattr streams_xattr
	store dos attributes = yes"
scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"

# the same ordinary user on both: as root, Samba grants whatever an ACL says
share_dir "$T/share" "$T/smbd/tort"
make_user "$T/passdb" torture 'torture pw'
printf 'torture pw\ntorture pw\n' | smbpasswd -c "$T/smbd/smb.conf" -s -a torture >/dev/null ||
	die "smbpasswd -a torture failed"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server min protocol = SMB2_10
[tort]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"

. "$top/tools/lib/torture.sh"
for t in $TESTS; do
	torture_tests "$SMBD_PORT" "torture%torture pw" "$PORT" "torture%torture pw" "$t"
	rm -rf "${T:?}/share/"* "$T/smbd/tort/"* 2>/dev/null
done
torture_summary
check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
