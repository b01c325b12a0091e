#!/bin/sh
# SPDX-License-Identifier: MIT
# The rdax CLI (librdax) -> Samba smbd, started here on a loopback port
# with its own temporary smb.conf: the same operations as against rdaxd.
. "$(dirname "$0")/lib.sh"
need smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"

. "$top/tools/lib/smbd.sh"
S=$T/smbd
scratch_smbd "$S" data pub:guest || die "smbd did not start"
pids="$pids $SMBD_PID"
PORT=$SMBD_PORT

U="smb://127.0.0.1:$PORT"
A="--user root --password-file $S/root.pw"
head -c $((64 << 20)) /dev/urandom >"$T/big.bin"

check "put 64 MiB to smbd" $RDAX $A put "$T/big.bin" "$U/data/big.bin"
check "smbd's copy is byte-identical" cmp "$T/big.bin" "$S/data/big.bin"
check "get 64 MiB from smbd" $RDAX $A get "$U/data/big.bin" "$T/back.bin"
check "get is byte-identical" cmp "$T/big.bin" "$T/back.bin"
check "mkdir" $RDAX $A mkdir "$U/data/d"
check "mkdir made a directory" test -d "$S/data/d"
check "touch" $RDAX $A touch "$U/data/d/t"
check "mv" $RDAX $A mv "$U/data/big.bin" d/moved.bin
check "mv moved it" test -f "$S/data/d/moved.bin"
check_output "ls" "moved.bin" $RDAX $A ls "$U/data/d"
check_output "stat" "Size: 67108864" $RDAX $A stat "$U/data/d/moved.bin"
check_fails_output "rmdir of a non-empty dir fails with the status" \
	"STATUS_DIRECTORY_NOT_EMPTY" $RDAX $A rmdir "$U/data/d"
check "rm" $RDAX $A rm "$U/data/d/moved.bin"
check "rm" $RDAX $A rm "$U/data/d/t"
check "rmdir" $RDAX $A rmdir "$U/data/d"
check "rmdir removed it" test ! -e "$S/data/d"

# many entries: QUERY_DIRECTORY continuation
mkdir "$S/data/many"
i=0
while [ $i -lt 2000 ]; do
	: >"$S/data/many/entry_with_a_reasonably_long_name_$i"
	i=$((i + 1))
done
check_output "ls of 2000 entries" "^2000$" sh -c "$RDAX $A ls $U/data/many | wc -l"

# signing and encryption: the client's own report, and the capture shows
# what was negotiated (signed READs and WRITEs; sealed messages with no
# file data in clear)
head -c 65536 /dev/urandom >"$T/sig.bin"
for m in SMB3_11 SMB3_02 SMB3_00 SMB2_10; do
	capture_start "sign$m" "$PORT"
	check_output "signed put+get on $m (client report)" \
		"^session: SMB [0-9.]+ over tcp, signing on, encryption off" \
		sh -c "$RDAX $A --stats --sign --max-protocol $m put '$T/sig.bin' '$U/data/s$m.bin' &&
		       $RDAX $A --stats --sign --max-protocol $m get '$U/data/s$m.bin' '$T/s$m.back'"
	capture_stop
	check "signed $m data intact" cmp "$T/sig.bin" "$T/s$m.back"
	check_wire "signed $m on the wire: every READ and WRITE signed, nothing sealed" \
		"sign$m" "$PORT" 'w["io_pdus"] >= 2 and w["io_signed"] == w["io_pdus"] and w["sealed"] == 0'
done
for m in SMB3_11 SMB3_00; do
	capture_start "enc$m" "$PORT"
	check_output "encrypted put on $m (client report)" \
		"^session: SMB [0-9.]+ over tcp, signing (on|off), encryption on" \
		$RDAX $A --stats --encrypt --max-protocol $m put "$T/big.bin" "$U/data/enc$m.bin"
	check_output "encrypted get on $m (client report)" \
		"^session: SMB [0-9.]+ over tcp, signing (on|off), encryption on" \
		$RDAX $A --stats --encrypt --max-protocol $m get "$U/data/enc$m.bin" "$T/enc$m.back"
	capture_stop
	check "encrypted $m: smbd's copy is intact" cmp "$T/big.bin" "$S/data/enc$m.bin"
	check "encrypted $m: what came back is intact" cmp "$T/big.bin" "$T/enc$m.back"
	check_wire "encrypted $m on the wire: every message after the setup sealed, no data in clear" \
		"enc$m" "$PORT" 'w["sealed"] > 4 and w["plain_pdus"] == 0 and not w["pattern_seen"]' \
		"$T/big.bin"
done
# the control: the same capture of a plain session sees the data
capture_start plain "$PORT"
check "unprotected put (control)" $RDAX $A put "$T/big.bin" "$U/data/plain.bin"
capture_stop
check_wire "the control: a plain session's data is seen on the wire" \
	plain "$PORT" 'w["pattern_seen"] and w["sealed"] == 0' "$T/big.bin"

printf 'wrong\n' >"$T/bad.pw"
chmod 600 "$T/bad.pw"
check_fails_output "wrong password is refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user root --password-file "$T/bad.pw" ls "$U/data"
check "guest works on a guest ok share" $RDAX --guest ls "$U/pub"
check_fails_output "missing file names path and status" \
	"nothere.txt.*STATUS_OBJECT_NAME_NOT_FOUND" $RDAX $A cat "$U/data/nothere.txt"
finish
