#!/bin/sh
# SPDX-License-Identifier: MIT
# rdax get, put and cp (the client path) with several requests in flight
# (the async queue, as many as the credits pay for): the data compared
# byte for byte, sizes that are not a multiple of a request, an empty
# file, stdout, a copy across shares; and a request that fails in the
# middle of a put (rdaxd under a file size limit) is reported with the
# file, the server and the reason, the requests behind it still reaped.
. "$(dirname "$0")/lib.sh"

share_dir "$T/share" "$T/other"
make_user "$T/passdb" alice 'pipe pw 1'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
[other]
	path = $T/other
	read only = no
CONF
# rdaxd may write files of up to 8 MiB (SIGXFSZ ignored: EFBIG instead)
cat >"$T/rdaxd-fsize" <<WRAP
#!/bin/sh
trap '' XFSZ
exec prlimit --fsize=$((8 << 20)) -- "$RDAXD" "\$@"
WRAP
chmod +x "$T/rdaxd-fsize"
need prlimit
RDAXD_REAL=$RDAXD
RDAXD=$T/rdaxd-fsize
start_rdaxd srv --config "$T/smb.conf"
RDAXD=$RDAXD_REAL
U="smb://127.0.0.1:$PORT"
A="--user alice --password-file $T/alice.pw"

# 7 MiB + 12345 bytes: several requests, the last one short
head -c $(((7 << 20) + 12345)) /dev/urandom >"$T/mid.bin"
: >"$T/empty.bin"

check_output "put: requests in flight" "pipeline: up to ([2-9]|1[0-9]) requests" \
	$RDAX $A --stats put "$T/mid.bin" "$U/data/mid.bin"
check "... the server has the same bytes" cmp "$T/mid.bin" "$T/share/mid.bin"
check_output "get: requests in flight" "pipeline: up to ([2-9]|1[0-9]) requests" \
	$RDAX $A --stats get "$U/data/mid.bin" "$T/back.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/back.bin"
check "get to stdout" sh -c "$RDAX $A cat '$U/data/mid.bin' >'$T/cat.bin'"
check "... byte-identical" cmp "$T/mid.bin" "$T/cat.bin"
check "put of an empty file" $RDAX $A put "$T/empty.bin" "$U/data/empty.bin"
check "get of an empty file" $RDAX $A get "$U/data/empty.bin" "$T/empty2.bin"
check "... is empty" test -f "$T/empty2.bin" -a ! -s "$T/empty2.bin"
check "cp through the client" $RDAX $A --client-copy cp "$U/data/mid.bin" "$U/data/cp.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/share/cp.bin"
check "cp to another share (through the client)" \
	$RDAX $A cp "$U/data/mid.bin" "$U/other/cp.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/other/cp.bin"

# a WRITE past the limit fails in the middle of the pipeline
head -c $((16 << 20)) /dev/urandom >"$T/big.bin"
check_fails_output "put past the server's file size limit fails" \
	"$U/data/big.bin: write of [0-9]+ bytes at [0-9]+: (STATUS_FILE_TOO_LARGE|STATUS_DISK_FULL|only [0-9]+ bytes written)" \
	timeout 60 $RDAX $A put "$T/big.bin" "$U/data/big.bin"
check "... what was acknowledged is on the server" \
	sh -c "cmp -n \$(stat -c %s '$T/share/big.bin') '$T/big.bin' '$T/share/big.bin'"
check "a 16 MiB file on the other share" cp "$T/big.bin" "$T/other/big.bin"
check_fails_output "cp past the limit names the destination and why" \
	"/data/big2.bin: .*(FILE_TOO_LARGE|DISK_FULL|short write)" \
	timeout 60 $RDAX $A --client-copy cp "$U/other/big.bin" "$U/data/big2.bin"
check "rdaxd is still serving" $RDAX $A get "$U/data/mid.bin" "$T/back2.bin"
check "... byte-identical" cmp "$T/mid.bin" "$T/back2.bin"
finish
