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

S=$T/smbd
mkdir -p "$S/private" "$S/lock" "$S/state" "$S/cache" "$S/run" "$S/ncalrpc" "$S/share"
PORT=$(free_port)
cat >"$S/smb.conf" <<CONF
[global]
	smb ports = $PORT
	interfaces = 127.0.0.1
	bind interfaces only = yes
	private dir = $S/private
	lock directory = $S/lock
	state directory = $S/state
	cache directory = $S/cache
	pid directory = $S/run
	ncalrpc dir = $S/ncalrpc
	log file = $S/log.%m
	passdb backend = tdbsam:$S/private/passdb.tdb
	server role = standalone server
	load printers = no
	printcap name = /dev/null
	disable spoolss = yes
	server min protocol = SMB2_10
[data]
	path = $S/share
	read only = no
CONF
printf 'sambapw1\nsambapw1\n' | smbpasswd -c "$S/smb.conf" -s -a root >/dev/null ||
	die "smbpasswd -a root failed"
printf 'sambapw1\n' >"$T/root.pw"
chmod 600 "$T/root.pw"
smbd --foreground --no-process-group --configfile="$S/smb.conf" \
	--debug-stdout -d 1 >"$S/smbd.out" 2>&1 &
pids="$pids $!"
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$S/smbd.out"; die "smbd did not start"; }
	sleep 0.1
done

U="smb://127.0.0.1:$PORT"
A="--user root --password-file $T/root.pw"
head -c $((64 << 20)) /dev/urandom >"$S/share/big.bin"

check_output "cp of 64 MiB on smbd is a server-side copy" "cp: server-side copy" \
	$RDAX $A --stats cp "$U/data/big.bin" copy.bin
cp "$T/check.out" "$T/server.stats"
sed 's/^/    | /' "$T/server.stats"
check "smbd's copy is byte-identical" cmp "$S/share/big.bin" "$S/share/copy.bin"
check_output "... in 4 COPYCHUNK round trips plus open, key, close" \
	" 7 round trips" cat "$T/server.stats"
for m in SMB3_00 SMB2_10; do
	check "server-side copy on $m" $RDAX $A --max-protocol $m --server-copy \
		cp "$U/data/big.bin" "copy.$m"
	check "... byte-identical" cmp "$S/share/big.bin" "$S/share/copy.$m"
done
check "server-side copy on an encrypted session" $RDAX $A --encrypt --server-copy \
	cp "$U/data/big.bin" copy.enc
check "... byte-identical" cmp "$S/share/big.bin" "$S/share/copy.enc"
check_output "cp --client-copy on smbd" "cp: data through the client" \
	$RDAX $A --stats --client-copy cp "$U/data/big.bin" copy2.bin
check "... byte-identical" cmp "$S/share/big.bin" "$S/share/copy2.bin"
check_output "cp of a missing file names server, path and status" \
	"smb://127.0.0.1:$PORT/data/nothere.*STATUS_OBJECT_NAME_NOT_FOUND" \
	$RDAX $A cp "$U/data/nothere" x.bin
check "... and creates no destination" test ! -e "$S/share/x.bin"
check "COPYCHUNK cases against smbd (raw client)" "$B/tests/copychunk" --peer \
	-u root -A "$T/root.pw" 127.0.0.1 "$PORT" data
sed 's/^/    | /' "$T/check.out"
finish
