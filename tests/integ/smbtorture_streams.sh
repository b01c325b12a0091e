#!/bin/sh
# SPDX-License-Identifier: MIT
# Alternate data streams, calibrated: smbtorture's smb2.streams family
# against Samba smbd (vfs objects = acl_xattr streams_xattr) and rdaxd
# (streams in the same xattrs, its default) side by side, on the same
# file system. Every test Samba passes here must pass against rdaxd. A
# test Samba itself fails or skips is no bar: it counts as a skip, with
# both results. A test listed in NEEDS counts as a skip naming what
# rdaxd lacks; any other failure against rdaxd fails here.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

FAMILIES=${STREAMS_FAMILIES:-"smb2.streams"}

# What rdaxd does not do yet, by test. A listed test that passes against
# rdaxd fails here: delete its line.
NEEDS="
"
needs_why() {
	case $1 in
	case-insensitive-paths) echo "needs case-insensitive file names (it opens TESTSTREAMS\\STREAM_NAMES3.TXT:STREAMNAME); rdaxd's paths are the file system's, case-sensitive; stream names are matched case-insensitively" ;;
	*) echo "needs $1" ;;
	esac
}

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="vfs objects = acl_xattr streams_xattr
	store dos attributes = yes" scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

. "$top/tools/lib/torture.sh"
torture_rdaxd

torture_families "$SMBD_PORT" "root%$SPW" "$PORT" "$RCRED" $FAMILIES
torture_summary
torture_end
finish
