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
check_output "rmdir of a non-empty dir fails with the status" \
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

for m in SMB3_11 SMB3_02 SMB3_00 SMB2_10; do
	check "signed get on $m" $RDAX $A --sign --max-protocol $m \
		get "$U/data/many/entry_with_a_reasonably_long_name_1" "$T/x"
done
check "encrypted get on SMB3_11" $RDAX $A --encrypt put "$T/big.bin" "$U/data/enc.bin"
check "encrypted copy is intact" cmp "$T/big.bin" "$S/data/enc.bin"
check "encrypted get on SMB3_00" $RDAX $A --encrypt --max-protocol SMB3_00 \
	get "$U/data/enc.bin" "$T/enc.back"
check "encrypted 3.0 data is intact" cmp "$T/big.bin" "$T/enc.back"

printf 'wrong\n' >"$T/bad.pw"
chmod 600 "$T/bad.pw"
check_output "wrong password is refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user root --password-file "$T/bad.pw" ls "$U/data"
check "guest works on a guest ok share" $RDAX --guest ls "$U/pub"
check_output "missing file names path and status" \
	"nothere.txt.*STATUS_OBJECT_NAME_NOT_FOUND" $RDAX $A cat "$U/data/nothere.txt"
finish
