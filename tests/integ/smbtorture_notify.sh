#!/bin/sh
# SPDX-License-Identifier: MIT
# CHANGE_NOTIFY, calibrated: smbtorture's smb2.notify and
# smb2.notify-inotify families against Samba smbd and rdaxd at the same
# time. Every test Samba passes here must pass against rdaxd. A test
# Samba itself fails or skips is no bar: it counts as a skip, with both
# results. A test listed in NEEDS counts as a skip naming what rdaxd
# lacks; any other failure fails here.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

FAMILIES=${NOTIFY_FAMILIES:-"smb2.notify smb2.notify-inotify"}

# What rdaxd does not do yet, by test. A listed test that passes against
# rdaxd fails here: delete its line.
NEEDS=""
needs_why() {
	case $1 in
	*) echo "needs $1" ;;
	esac
}

. "$top/tools/lib/smbd.sh"
scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

. "$top/tools/lib/torture.sh"
torture_rdaxd

# a test that waits for a change that never comes would hang for long
TORTURE_FAMILY_TIMEOUT=${TORTURE_FAMILY_TIMEOUT:-300}
torture_families "$SMBD_PORT" "root%$SPW" "$PORT" "$RCRED" $FAMILIES
torture_summary
torture_end
finish
