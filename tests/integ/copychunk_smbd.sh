#!/bin/sh
# SPDX-License-Identifier: MIT
# Server-side copy against Samba smbd (started here on a loopback port with
# a temporary smb.conf): `rdax cp` on one share is a COPYCHUNK copy and
# byte-identical; the raw COPYCHUNK cases hold (with the answers [MS-SMB2]
# leaves to the server accepted from Samba: --peer).
. "$(dirname "$0")/lib.sh"
need smbd smbpasswd
[ "$(id -u)" = 0 ] || skip "smbd needs root to switch to the session user"
[ -x "$B/tests/copychunk" ] || die "$B/tests/copychunk not built (make tests)"

. "$top/tools/lib/smbd.sh"
S=$T/smbd
scratch_smbd "$S" data || die "smbd did not start"
pids="$pids $SMBD_PID"
PORT=$SMBD_PORT

U="smb://127.0.0.1:$PORT"
A="--user root --password-file $S/root.pw"
head -c $((64 << 20)) /dev/urandom >"$S/data/big.bin"

check_output "cp of 64 MiB on smbd is a server-side copy" "cp: server-side copy" \
	$RDAX $A --stats cp "$U/data/big.bin" copy.bin
cp "$T/check.out" "$T/server.stats"
sed 's/^/    | /' "$T/server.stats"
check "smbd's copy is byte-identical" cmp "$S/data/big.bin" "$S/data/copy.bin"
check_output "... in 4 COPYCHUNK round trips plus open, key, close" \
	" 7 round trips" cat "$T/server.stats"
for m in SMB3_00 SMB2_10; do
	check "server-side copy on $m" $RDAX $A --max-protocol $m --server-copy \
		cp "$U/data/big.bin" "copy.$m"
	check "... byte-identical" cmp "$S/data/big.bin" "$S/data/copy.$m"
done
check "server-side copy on an encrypted session" $RDAX $A --encrypt --server-copy \
	cp "$U/data/big.bin" copy.enc
check "... byte-identical" cmp "$S/data/big.bin" "$S/data/copy.enc"
check_output "cp --client-copy on smbd" "cp: data through the client" \
	$RDAX $A --stats --client-copy cp "$U/data/big.bin" copy2.bin
check "... byte-identical" cmp "$S/data/big.bin" "$S/data/copy2.bin"
check_fails_output "cp of a missing file names server, path and status" \
	"smb://127.0.0.1:$PORT/data/nothere.*STATUS_OBJECT_NAME_NOT_FOUND" \
	$RDAX $A cp "$U/data/nothere" x.bin
check "... and creates no destination" test ! -e "$S/data/x.bin"
check "COPYCHUNK cases against smbd (raw client)" "$B/tests/copychunk" --peer \
	-u root -A "$S/root.pw" 127.0.0.1 "$PORT" data
sed 's/^/    | /' "$T/check.out"
finish
