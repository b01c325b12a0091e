#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxd + the rdax CLI over loopback TCP: data integrity, namespace
# operations, one round trip per metadata operation (issue 7), errors,
# authentication rules, clean shutdown.
. "$(dirname "$0")/lib.sh"

share_dir "$T/share" "$T/pub" "$T/ro"
echo hello >"$T/ro/readme.txt"
make_user "$T/passdb" alice 's3cret pass'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server signing = auto
[data]
	path = $T/share
	read only = no
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
[ro]
	path = $T/ro
	read only = yes
	valid users = alice
CONF
start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
A="--user alice --password-file $T/alice.pw"

head -c $((64 << 20)) /dev/urandom >"$T/big.bin"
check "put 64 MiB" $RDAX $A put "$T/big.bin" "$U/data/big.bin"
check "file landed in the share" cmp "$T/big.bin" "$T/share/big.bin"
check "get 64 MiB" $RDAX $A get "$U/data/big.bin" "$T/back.bin"
check "get is byte-identical" cmp "$T/big.bin" "$T/back.bin"
check "mkdir" $RDAX $A mkdir "$U/data/dir1"
check "mkdir made a directory" test -d "$T/share/dir1"
check "touch" $RDAX $A touch "$U/data/dir1/empty"
check "touch created the file" test -f "$T/share/dir1/empty"
check "mv into dir" $RDAX $A mv "$U/data/big.bin" dir1/moved.bin
check "mv moved it" test -f "$T/share/dir1/moved.bin"
check_output "ls lists the directory" "moved.bin" $RDAX $A ls "$U/data/dir1"
check_output "stat shows the size" "Size: 67108864" $RDAX $A stat "$U/data/dir1/moved.bin"
check_output "cat prints a file" "^hello$" $RDAX $A cat "$U/ro/readme.txt"
check_fails "rmdir of a non-empty dir fails" $RDAX $A rmdir "$U/data/dir1"
check_fails_output "... and says why" "DIRECTORY_NOT_EMPTY" $RDAX $A rmdir "$U/data/dir1"
check "rm" $RDAX $A rm "$U/data/dir1/moved.bin"
check "rm" $RDAX $A rm "$U/data/dir1/empty"
check "rmdir" $RDAX $A rmdir "$U/data/dir1"
check "rmdir removed it" test ! -e "$T/share/dir1"

# touch, stat, mv, rm, mkdir, rmdir: one round trip each; rdax bench meta
check_meta_round_trips rdaxd "$U/data" "$T/share" $A
check_fails_output "bench meta: --count 0 is a usage error" "--count wants a number" \
	$RDAX $A bench meta --count 0 "$U/data"
check_fails_output "bench meta in a missing directory fails with the status" \
	"STATUS_OBJECT_PATH_NOT_FOUND" $RDAX $A bench meta --count 2 "$U/data/nodir"

# errors name the server, the path and the NTSTATUS in words
check_fails_output "missing file: server, path and status" \
	"smb://127.0.0.1:$PORT.*missing.txt.*STATUS_OBJECT_NAME_NOT_FOUND \(object name not found\)" \
	$RDAX $A get "$U/data/missing.txt" "$T/x"
check_fails_output "missing share is named" "STATUS_BAD_NETWORK_NAME" \
	$RDAX $A ls "$U/nosuchshare"
check_fails_output "missing local file is named" "nofile.bin: No such file" \
	$RDAX $A put "$T/nofile.bin" "$U/data/x"

# authentication
printf 'wrong\n' >"$T/bad.pw"
chmod 600 "$T/bad.pw"
check_fails_output "wrong password refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user alice --password-file "$T/bad.pw" ls "$U/data"
check_fails_output "unknown user refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user mallory --password-file "$T/bad.pw" ls "$U/data"
chmod 644 "$T/bad.pw"
check_fails_output "world-readable password file refused" "chmod 600" \
	$RDAX --user alice --password-file "$T/bad.pw" ls "$U/data"
check_fails_output "password is never an argument" "never taken on the command line" \
	$RDAX --password secret ls "$U/data"
check "RDAX_PASSWORD works" env RDAX_PASSWORD='s3cret pass' $RDAX --user alice ls "$U/data"
check "guest on a guest ok share" $RDAX --guest put "$T/alice.pw" "$U/pub/g.txt"
check_fails_output "guest refused on a non-guest share" "STATUS_ACCESS_DENIED" \
	$RDAX --guest ls "$U/data"
check_fails_output "valid users keeps others out" "STATUS_ACCESS_DENIED" \
	$RDAX --guest ls "$U/ro"
check_fails_output "read-only share refuses writes" "ACCESS_DENIED|WRITE_PROTECTED" \
	$RDAX $A put "$T/alice.pw" "$U/ro/new.txt"
check "read-only share is untouched" test ! -e "$T/ro/new.txt"

# signing and encryption from our own client: rdax --stats reports what
# was negotiated, rdaxd logs each session's dialect and whether it is
# signed, and the capture shows encrypted data sealed
# srv_log_since N: rdaxd's log after its first N lines
srv_log_since() { tail -n +$(($1 + 1)) "$T/srv.log"; }
n0=$(wc -l <"$T/srv.log")
check_output "signed session (client report)" "^session: SMB 3.1.1 over tcp, signing on, encryption off" \
	$RDAX $A --stats --sign get "$U/ro/readme.txt" "$T/r1"
check "... data intact" cmp "$T/ro/readme.txt" "$T/r1"
check_output "... rdaxd logged it signed" "for alice as alice, SMB 3.1.1, signed" srv_log_since "$n0"
head -c 65536 /dev/urandom >"$T/enc.bin"
capture_start enc "$PORT"
check_output "encrypted session (client report)" "^session: SMB 3.1.1 over tcp, signing off, encryption on" \
	$RDAX $A --stats --encrypt put "$T/enc.bin" "$U/data/enc.bin"
capture_stop
check "... data intact" cmp "$T/enc.bin" "$T/share/enc.bin"
check_wire "... on the wire: every message after the setup sealed, no data in clear" \
	enc "$PORT" 'w["sealed"] > 4 and w["plain_pdus"] == 0 and not w["pattern_seen"]' "$T/enc.bin"
for m in SMB3_00:3.0 SMB2_10:2.1; do
	n0=$(wc -l <"$T/srv.log")
	check_output "SMB ${m#*:} signed (client report)" "^session: SMB ${m#*:} over tcp, signing on, encryption off" \
		$RDAX $A --stats --sign --max-protocol ${m%:*} ls "$U/data"
	check_output "... rdaxd logged it signed" "for alice as alice, SMB ${m#*:}, signed" srv_log_since "$n0"
done

# get and put into directories, like cp: DIR/NAME
mkdir "$T/dl"
check "get into a local directory" $RDAX $A get "$U/ro/readme.txt" "$T/dl"
check "... writes DIR/NAME" cmp "$T/ro/readme.txt" "$T/dl/readme.txt"
rm -f "$T/dl/readme.txt"
check "get into DIR/" $RDAX $A get "$U/ro/readme.txt" "$T/dl/"
check "... writes DIR/NAME" cmp "$T/ro/readme.txt" "$T/dl/readme.txt"
share_dir "$T/share/up"
check "put into a remote directory" $RDAX $A put "$T/ro/readme.txt" "$U/data/up"
check "... writes DIR/NAME" cmp "$T/ro/readme.txt" "$T/share/up/readme.txt"
check "put into a URL ending in /" $RDAX $A put "$T/alice.pw" "$U/data/up/"
check "... writes DIR/NAME" cmp "$T/alice.pw" "$T/share/up/alice.pw"
check "put into the share itself" $RDAX $A put "$T/alice.pw" "$U/data"
check "... writes SHARE/NAME" cmp "$T/alice.pw" "$T/share/alice.pw"
check_fails "put into a missing DIR/ fails" $RDAX $A put "$T/alice.pw" "$U/data/nodir/"
check "... and creates nothing" test ! -e "$T/share/nodir"

# options anywhere on the line; "--" ends them
check "options after the URL" $RDAX ls "$U/data" --user alice --password-file "$T/alice.pw"
check "--guest after the command" $RDAX put "$T/alice.pw" "$U/pub/g2.txt" --guest
check "--transport --sign --max-protocol --encrypt after the command" \
	$RDAX ls "$U/data" $A --transport tcp --sign --max-protocol SMB3_11 --encrypt
check_fails_output "a bad option after the command is still an option error" "unrecognized option" \
	$RDAX ls "$U/data" $A --no-such-option
check "-- ends the options" sh -c "cd '$T' && $RDAX $A get '$U/ro/readme.txt' -- -dash.txt"
check "... a file named -dash.txt" cmp "$T/ro/readme.txt" "$T/-dash.txt"

# a host name that does not resolve says so
check_fails_output "unknown host: cannot resolve" \
	"smb://nosuch.invalid.*cannot resolve host nosuch.invalid: .*(not known|name resolution)" \
	$RDAX --guest ls smb://nosuch.invalid/pub

# mv: one share means the same host in any case and the same port
$RDAX $A touch "$U/data/m1"
check "mv between URLs naming the host in other cases" \
	$RDAX $A mv "smb://localhost:$PORT/data/m1" "smb://LocalHost:$PORT/data/m2"
check "... renamed it" test -f "$T/share/m2"
check_fails_output "mv to the same host on another port is refused" "not on the same share" \
	$RDAX $A mv "$U/data/m2" "smb://127.0.0.1:1/data/m3"
check "... and renames nothing" test -f "$T/share/m2" -a ! -e "$T/share/m3"

# a user name with '@' in a URL: the last '@' ends it
check "URL user alice@EXAMPLE (user@domain)" \
	env RDAX_PASSWORD='s3cret pass' $RDAX ls "smb://alice@EXAMPLE@127.0.0.1:$PORT/data"

# passwd never cuts a password short
long=$(head -c 300 /dev/zero | tr '\0' x)
check_fails_output "passwd refuses a password over 255 bytes" "password too long" \
	sh -c "printf '%s\n' $long | $RDAX passwd --passdb '$T/passdb2' carol"
check "... and writes nothing" test ! -e "$T/passdb2"
max=$(head -c 255 /dev/zero | tr '\0' y)
printf '%s\n' "$max" >"$T/carol.pw"
chmod 600 "$T/carol.pw"
check "a 255-byte password is taken" sh -c "printf '%s\n' $max | $RDAX passwd --passdb '$T/passdb' carol"

check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
