#!/bin/sh
# SPDX-License-Identifier: MIT
# Caching and surviving, calibrated: smbtorture's smb2.oplock, smb2.lease,
# smb2.durable-open, smb2.durable-v2-open, smb2.sharemode, smb2.lock and
# smb2.rename families run against Samba smbd (leases and durable handles
# on: kernel oplocks, kernel share modes and posix locking off) and
# against rdaxd at the same time, one family after the other. Every test Samba passes here
# must pass against rdaxd. A test Samba itself fails or skips is no bar:
# it counts as a skip, with both results. A test listed in NEEDS counts as
# a skip naming what rdaxd lacks; any other failure fails here.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

FAMILIES=${CACHING_FAMILIES:-"smb2.oplock smb2.lease smb2.durable-open
smb2.durable-v2-open smb2.sharemode smb2.lock smb2.rename"}

# What rdaxd does not do yet, by test. A listed test that passes against
# rdaxd fails here: delete its line.
NEEDS=""
needs_why() {
	case $1 in
	*) echo "needs $1" ;;
	esac
}

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="kernel oplocks = no
	kernel share modes = no
	posix locking = no
	smb2 leases = yes" scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

. "$top/tools/lib/torture.sh"
torture_rdaxd "smb2 leases = yes
	oplocks = yes"

torture_families "$SMBD_PORT" "root%$SPW" "$PORT" "$RCRED" $FAMILIES
torture_summary
torture_end
finish
