#!/bin/sh
# SPDX-License-Identifier: MIT
# Multichannel conformance, calibrated: smbtorture's session binding,
# multichannel and channel-sequence tests run against Samba smbd and
# rdaxd side by side, each with multichannel on and one loopback
# interface. Every test Samba passes here must pass against rdaxd. A
# test Samba itself fails or skips is no bar: it counts as a skip, with
# both results. A test listed in NEEDS below counts as a skip naming what
# rdaxd lacks (none is listed now: oplocks and share modes landed); any
# other failure against rdaxd fails here.
. "$(dirname "$0")/lib.sh"
need smbtorture smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

TESTS="smb2.session.bind1 smb2.session.bind2 smb2.session.bind_invalid_auth
smb2.session.bind_negative_smb202 smb2.session.bind_negative_smb210s
smb2.session.bind_negative_smb210d smb2.session.bind_negative_smb2to3s
smb2.session.bind_negative_smb2to3d smb2.session.bind_negative_smb3to2s
smb2.session.bind_negative_smb3to2d smb2.session.bind_negative_smb3to3s
smb2.session.bind_negative_smb3to3d smb2.session.bind_negative_smb3encGtoCs
smb2.session.bind_negative_smb3encGtoCd smb2.session.bind_negative_smb3signCtoHs
smb2.session.bind_negative_smb3signCtoHd smb2.session.bind_negative_smb3signCtoGs
smb2.session.bind_negative_smb3signCtoGd smb2.session.bind_negative_smb3signHtoCs
smb2.session.bind_negative_smb3signHtoCd smb2.session.bind_negative_smb3signHtoGs
smb2.session.bind_negative_smb3signHtoGd smb2.session.bind_negative_smb3signGtoCs
smb2.session.bind_negative_smb3signGtoCd smb2.session.bind_negative_smb3signGtoHs
smb2.session.bind_negative_smb3signGtoHd smb2.session.bind_negative_smb3sneGtoCs
smb2.session.bind_negative_smb3sneGtoCd smb2.session.bind_negative_smb3sneGtoHs
smb2.session.bind_negative_smb3sneGtoHd smb2.session.bind_negative_smb3sneCtoGs
smb2.session.bind_negative_smb3sneCtoGd smb2.session.bind_negative_smb3sneHtoGs
smb2.session.bind_negative_smb3sneHtoGd smb2.session.bind_negative_smb3signC30toGs
smb2.session.bind_negative_smb3signC30toGd smb2.session.bind_negative_smb3signH2XtoGs
smb2.session.bind_negative_smb3signH2XtoGd smb2.session.bind_negative_smb3signGtoC30s
smb2.session.bind_negative_smb3signGtoC30d smb2.session.bind_negative_smb3signGtoH2Xs
smb2.session.bind_negative_smb3signGtoH2Xd smb2.session.two_logoff
smb2.multichannel.generic.interface_info smb2.multichannel.generic.num_channels
smb2.replay.channel-sequence"

# What rdaxd does not do yet, by test: the test's first step needs it, so
# its failure against rdaxd is a skip naming the feature. A listed test
# that passes against rdaxd fails here: delete its line. When a feature
# lands, delete its lines (and its entry in needs_why).
NEEDS="
"
needs_why() {
	case $1 in
	batch-oplock) echo "needs batch oplocks: it opens its file with SMB2_OPLOCK_LEVEL_BATCH before binding and checks the grant; rdaxd grants no oplocks yet" ;;
	share-modes) echo "needs share modes: after binding, a second open must fail with STATUS_SHARING_VIOLATION; rdaxd does not enforce share access yet" ;;
	*) echo "needs $1" ;;
	esac
}

# Samba: its own smbd, multichannel on its loopback interface
. "$top/tools/lib/smbd.sh"
scratch_smbd "$T/smbd" tort || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

# rdaxd: the same share layout, a user of its own
. "$top/tools/lib/torture.sh"
torture_rdaxd "server multi channel support = yes
	server min protocol = SMB2_10"

torture_tests "$SMBD_PORT" "root%$SPW" "$PORT" "$RCRED" $TESTS
torture_summary
torture_end
finish
