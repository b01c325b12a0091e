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
needs() { echo "$NEEDS" | awk -v t="$1" '$1 == t { print $2 }'; }
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
share_dir "$T/share"
make_user "$T/passdb" torture 'torture pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server multi channel support = yes
	server min protocol = SMB2_10
[tort]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"

# run SERVER PORT USER%PW TEST: success, failure, error or skip
run() {
	timeout 120 smbtorture -s /dev/null //127.0.0.1/tort -p "$2" -U "$3" "$4" \
		>"$T/$1.$4.out" 2>&1
	r=$(sed -n 's/^\(success\|failure\|error\|skip\): .*/\1/p' "$T/$1.$4.out" | head -n 1)
	echo "${r:-error}"
}

samba_fails=""
for t in $TESTS; do
	s=$(run smbd "$SMBD_PORT" "root%$SPW" "$t")
	r=$(run rdaxd "$PORT" "torture%torture pw" "$t")
	need=$(needs "$t")
	if [ "$s" != success ]; then
		samba_fails="$samba_fails $t($s)"
		skip_case "$t" "Samba itself fails it: $s (rdaxd: $r); no bar"
	elif [ "$r" = success ]; then
		if [ -n "$need" ]; then
			not_ok "$t: passes against rdaxd but NEEDS lists it ($need): delete its line"
		else
			ok "$t: passes, as against Samba"
		fi
	elif [ -n "$need" ]; then
		skip_case "$t" "$(needs_why "$need")"
	else
		not_ok "$t: Samba passes it, rdaxd: $r"
		grep -E "failure|error|Expected|Failed|assert" "$T/rdaxd.$t.out" | head -n 5 |
			sed 's/^/    | /'
	fi
done
echo "Samba does not pass:${samba_fails:- none}"
check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
