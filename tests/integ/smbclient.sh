#!/bin/sh
# SPDX-License-Identifier: MIT
# Samba's smbclient -> rdaxd: data integrity, namespace operations,
# signing and encryption per dialect, authentication rules.
. "$(dirname "$0")/lib.sh"
need smbclient

share_dir "$T/share" "$T/pub"
make_user "$T/passdb" alice 'pa55 word'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
[pub]
	path = $T/pub
	read only = no
	guest ok = yes
CONF
start_rdaxd srv --config "$T/smb.conf"

# -s /dev/null: no system smb.conf; quiet the client's own state dirs
sc() {
	smbclient -s /dev/null -p "$PORT" "$@" 2>&1
}
head -c $((64 << 20)) /dev/urandom >"$T/big.bin"
cd "$T" || exit 1

check "smbclient put 64 MiB" sc //127.0.0.1/data -U 'alice%pa55 word' -c "put big.bin big.bin"
check "server copy is byte-identical" cmp "$T/big.bin" "$T/share/big.bin"
check "smbclient get 64 MiB" sc //127.0.0.1/data -U 'alice%pa55 word' -c "get big.bin back.bin"
check "get is byte-identical" cmp "$T/big.bin" "$T/back.bin"
rm -f "$T/back.bin"

check "mkdir" sc //127.0.0.1/data -U 'alice%pa55 word' -c "mkdir sub"
check "mkdir made a directory" test -d "$T/share/sub"
check "rename" sc //127.0.0.1/data -U 'alice%pa55 word' -c "rename big.bin sub\\moved.bin"
check "rename moved the file" test -f "$T/share/sub/moved.bin"
check_output "ls shows the file" "moved.bin +A +67108864" \
	sc //127.0.0.1/data -U 'alice%pa55 word' -c "ls sub\\*"
check "rm" sc //127.0.0.1/data -U 'alice%pa55 word' -c "rm sub\\moved.bin"
check "rm deleted it" test ! -e "$T/share/sub/moved.bin"
check "rmdir" sc //127.0.0.1/data -U 'alice%pa55 word' -c "rmdir sub"
check "rmdir deleted it" test ! -e "$T/share/sub"

# signing and encryption on each dialect: rdaxd's log names the dialect
# and signing of each session; the capture shows what was signed or sealed
dialect() {
	case $1 in SMB3_11) echo 3.1.1 ;; SMB3_02) echo 3.0.2 ;; SMB3_00) echo 3.0 ;; SMB2_10) echo 2.1 ;; esac
}
echo "signed payload" >"$T/small.txt"
for m in SMB3_11 SMB3_02 SMB3_00 SMB2_10; do
	rm -f "$T/s.out"
	n0=$(wc -l <"$T/srv.log")
	capture_start "sign$m" "$PORT"
	check "signed put+get on $m" sc //127.0.0.1/data -U 'alice%pa55 word' \
		-m "$m" --client-protection=sign -c "put small.txt s_$m.txt; get s_$m.txt s.out"
	capture_stop
	check "signed $m data intact" cmp "$T/small.txt" "$T/s.out"
	check_output "rdaxd logged a signed SMB $(dialect $m) session" \
		"for alice as alice, SMB $(dialect $m), signed" sh -c "tail -n +$((n0 + 1)) '$T/srv.log'"
	check_wire "signed $m on the wire: every READ and WRITE signed" \
		"sign$m" "$PORT" 'w["io_pdus"] >= 2 and w["io_signed"] == w["io_pdus"] and w["sealed"] == 0'
done
# the client asks for encryption of a server that only allows it (smb
# encrypt = auto): rdaxd answers sealed requests sealed, its session log
# line does not say encrypted (the server did not ask), the capture shows
# it; a server that asks (smb encrypt = desired) comes at the end
for m in SMB3_11 SMB3_00; do
	rm -f "$T/e.out"
	n0=$(wc -l <"$T/srv.log")
	capture_start "enc$m" "$PORT"
	check "encrypted put+get on $m" sc //127.0.0.1/data -U 'alice%pa55 word' \
		-m "$m" --client-protection=encrypt -c "put big.bin e.bin; get e.bin e.out"
	capture_stop
	check "encrypted $m data intact" cmp "$T/big.bin" "$T/e.out"
	check_output "rdaxd logged an SMB $(dialect $m) session" \
		"for alice as alice, SMB $(dialect $m)" sh -c "tail -n +$((n0 + 1)) '$T/srv.log'"
	check_wire "encrypted $m on the wire: every message after the setup sealed, no data in clear" \
		"enc$m" "$PORT" 'w["sealed"] > 4 and w["plain_pdus"] == 0 and not w["pattern_seen"]' \
		"$T/big.bin"
done
capture_start plain "$PORT"
check "unprotected put (control)" sc //127.0.0.1/data -U 'alice%pa55 word' -c "put big.bin p.bin"
capture_stop
check_wire "the control: a plain session's data is seen on the wire" \
	plain "$PORT" 'w["pattern_seen"] and w["sealed"] == 0' "$T/big.bin"

# authentication
check_fails_output "wrong password is refused" "NT_STATUS_LOGON_FAILURE" \
	sc //127.0.0.1/data -U 'alice%wrong' -c ls
check_output "guest on a guest ok share works" "small.txt|blocks available" \
	sc //127.0.0.1/pub -N -c "put small.txt small.txt; ls"
check "guest's file arrived" cmp "$T/small.txt" "$T/pub/small.txt"
check_fails_output "guest on a non-guest share is refused" "NT_STATUS_ACCESS_DENIED" \
	sc //127.0.0.1/data -N -c ls
check_fails_output "unknown share" "NT_STATUS_BAD_NETWORK_NAME" \
	sc //127.0.0.1/nosuch -U 'alice%pa55 word' -c ls

check "rdaxd still serves after all that" sc //127.0.0.1/data -U 'alice%pa55 word' -c ls
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# rdaxd with smb encrypt = desired: each session is encrypted, its log
# line says so, and the capture shows every message sealed
sed 's/^\[global\]$/[global]\n\tsmb encrypt = desired/' "$T/smb.conf" >"$T/enc.conf"
start_rdaxd enc --config "$T/enc.conf"
head -c $((4 << 20)) /dev/urandom >"$T/mid.bin"
for m in SMB3_11 SMB3_02 SMB3_00; do
	rm -f "$T/d.out"
	n0=$(wc -l <"$T/enc.log")
	capture_start "des$m" "$PORT"
	check "smb encrypt = desired: put+get on $m" sc //127.0.0.1/data -U 'alice%pa55 word' \
		-m "$m" --client-protection=encrypt -c "put mid.bin d.bin; get d.bin d.out"
	capture_stop
	check "... data intact" cmp "$T/mid.bin" "$T/d.out"
	check_output "... rdaxd logged an encrypted SMB $(dialect $m) session" \
		"for alice as alice, SMB $(dialect $m)(, signed)?, encrypted" \
		sh -c "tail -n +$((n0 + 1)) '$T/enc.log'"
	check_wire "... on the wire: every message after the setup sealed, no data in clear" \
		"des$m" "$PORT" 'w["sealed"] > 4 and w["plain_pdus"] == 0 and not w["pattern_seen"]' \
		"$T/mid.bin"
done
check "SIGTERM stops that rdaxd cleanly" stop_rdaxd
finish
