#!/bin/sh
# SPDX-License-Identifier: MIT
# A badly signed answer fails its request, not the connection: rdaxd with
# signing mandatory behind tests/integ/relay.c --spoil-read-errors, which
# breaks the signature of signed READ error answers as ksmbd 6.1 does
# (docs/rdma-transform.md). librdax fails that READ with EBADMSG and goes
# on (tests/integ/bad_signature.c); `rdax get` and `rdax cat` never ask
# for such an answer (they ask the file's size again at its end), so they
# copy the file byte for byte through the same relay.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/bad_signature" ] || die "$B/tests/bad_signature not built (make tests)"

share_dir "$T/share"
make_user "$T/passdb" alice 'sig pass'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	server signing = mandatory
[data]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
head -c $((3 << 20 | 12345)) /dev/urandom >"$T/share/f.bin"
own alice "$T/share/f.bin"
start_relay --spoil-read-errors
U="smb://127.0.0.1:$RPORT/data"
A="--user alice --password-file $T/alice.pw"

"$B/tests/bad_signature" $A "$U/f.bin" >"$T/bs.out" 2>&1
rc=$?
sed 's/^/  /' "$T/bs.out"
[ $rc = 0 ] && ok "librdax: the badly signed READ answer fails that READ alone" ||
	not_ok "librdax and a badly signed READ answer (rc $rc)"

check "rdax --sign get through the relay" timeout 60 $RDAX $A --sign get "$U/f.bin" "$T/got.bin"
check "... byte-identical" cmp "$T/share/f.bin" "$T/got.bin"
timeout 60 $RDAX $A --sign cat "$U/f.bin" >"$T/cat.bin" 2>"$T/cat.err"
check "rdax --sign cat through the relay, byte-identical" cmp "$T/share/f.bin" "$T/cat.bin"
finish
