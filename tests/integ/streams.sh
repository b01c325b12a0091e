#!/bin/sh
# SPDX-License-Identifier: MIT
# Alternate data streams move with a share between Samba and rdaxd:
# rdaxd keeps "file:NAME" in the xattr user.DosStream.NAME:$DATA (the
# data and one NUL byte, as Samba's vfs_streams_xattr), smbclient puts
# and gets streams through it and allinfo lists them; what a real smbd
# (vfs objects = streams_xattr) wrote on the same directory rdaxd reads,
# and the other way round. Bad stream names are refused with Windows'
# statuses and rdaxd keeps serving.
. "$(dirname "$0")/lib.sh"
need smbd smbclient smbpasswd python3
[ "$(id -u)" = 0 ] || skip "smbd must run as root"

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="vfs objects = acl_xattr streams_xattr"
scratch_smbd "$T/smbd" sam || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")
make_user "$T/passdb" root 'root pw'
# xattrs FILE: the names; xattr FILE NAME: the value as hex
xattrs() { python3 -c 'import os,sys; print("\n".join(os.listxattr(sys.argv[1])))' "$1"; }
xattr() { python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).hex())' "$1" "$2"; }
python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.rdaxprobe", b"1");
os.removexattr(sys.argv[1], "user.rdaxprobe")' "$T/smbd/sam" 2>/dev/null ||
	skip "no user xattrs where \$T is"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[sam]
	path = $T/smbd/sam
	read only = no
[nostreams]
	path = $T/smbd/sam
	read only = no
	vfs objects = acl_xattr
CONF
start_rdaxd srv --config "$T/smb.conf"

smb() {
	if [ "$1" = smbd ]; then
		p=$SMBD_PORT u="root%$SPW"
	else
		p=$PORT u="root%root pw"
	fi
	(cd "$T" && timeout 60 smbclient "//127.0.0.1/$2" -p "$p" -U "$u" -c "$3" 2>&1) |
		grep -vE '^(time|Try "help")|blocks of size|^[[:space:]]*$'
}
D=$T/smbd/sam

printf 'base data\n' >"$T/base.txt"
printf 'stream one\n' >"$T/s1.txt"
head -c 3000 /dev/urandom >"$T/big.bin"

# --- rdaxd writes, the disk and Samba read ---
check "smbclient puts a file and a stream through rdaxd" \
	smb rdaxd sam 'put base.txt r.txt; put s1.txt r.txt:s1'
check_output "the xattr has Samba's name" '^user.DosStream.s1:\$DATA$' xattrs "$D/r.txt"
check_output "its value is the data and one NUL byte" "^$(xxd -p "$T/s1.txt")00\$" \
	xattr "$D/r.txt" 'user.DosStream.s1:$DATA' 
check_output "allinfo through rdaxd lists ::\$DATA and :s1:\$DATA" \
	'stream: \[:s1:\$DATA\], 11 bytes' smb rdaxd sam 'allinfo r.txt'
check_output "the base file keeps its own data stream" \
	'stream: \[::\$DATA\], 10 bytes' smb rdaxd sam 'allinfo r.txt'
rm -f "$T/got.txt"
check "smbclient gets the stream back through rdaxd" \
	sh -c "cd '$T' && timeout 60 smbclient //127.0.0.1/sam -p $PORT -U 'root%root pw' \
		-c 'get r.txt:s1 got.txt' >/dev/null 2>&1 && cmp got.txt s1.txt"
rm -f "$T/got.txt"
check "Samba reads the stream rdaxd wrote" \
	sh -c "cd '$T' && timeout 60 smbclient //127.0.0.1/sam -p $SMBD_PORT -U 'root%$SPW' \
		-c 'get r.txt:s1 got.txt' >/dev/null 2>&1 && cmp got.txt s1.txt"
check "a 3000-byte stream goes through rdaxd and back" \
	sh -c "cd '$T' && timeout 60 smbclient //127.0.0.1/sam -p $PORT -U 'root%root pw' \
		-c 'put big.bin r.txt:big; get r.txt:big big.got' >/dev/null 2>&1 && cmp big.got big.bin"

# beyond what one xattr value may hold (ext4: a block; 64 KiB): Samba's answer
for n in 8000 70000; do
	head -c $n /dev/urandom >"$T/huge.bin"
	smb smbd sam "put huge.bin m.txt:huge$n" | grep -o 'NT_STATUS_[A-Z_]*' | sort -u >"$T/huge.smbd"
	smb rdaxd sam "put huge.bin r.txt:huge$n" | grep -o 'NT_STATUS_[A-Z_]*' | sort -u >"$T/huge.rdaxd"
	check "a $n-byte stream gets Samba's answer ($(cat "$T/huge.smbd"))" \
		sh -c "[ -s '$T/huge.smbd' ] && cmp '$T/huge.smbd' '$T/huge.rdaxd'"
	sed 's/^/    | rdaxd: /' "$T/huge.rdaxd"
done

# --- Samba writes, rdaxd reads ---
check "Samba puts a stream" smb smbd sam 'put base.txt m.txt; put s1.txt m.txt:fromsamba'
rm -f "$T/got.txt"
check "rdaxd reads the stream Samba wrote" \
	sh -c "cd '$T' && timeout 60 smbclient //127.0.0.1/sam -p $PORT -U 'root%root pw' \
		-c 'get m.txt:fromsamba got.txt' >/dev/null 2>&1 && cmp got.txt s1.txt"
check_output "rdaxd lists it, with its size" 'stream: \[:fromsamba:\$DATA\], 11 bytes' \
	smb rdaxd sam 'allinfo m.txt'
check_output "stream names are case-insensitive" 'stream one' \
	smb rdaxd sam 'more m.txt:FROMSAMBA'

# --- a directory has named streams but no data stream ---
check "a stream on a directory" smb rdaxd sam 'mkdir dir; put s1.txt dir:ds'
check_output "the directory lists only it" 'stream: \[:ds:\$DATA\], 11 bytes' \
	smb rdaxd sam 'allinfo dir'
check_output "dir::\$DATA is refused" 'NT_STATUS_FILE_IS_A_DIRECTORY' \
	smb rdaxd sam 'get dir::$DATA x'

# --- delete ---
# (smbclient's rm lists its argument first: it cannot name a stream)
printf 'root pw\n' >"$T/pw"
chmod 600 "$T/pw"
check "rdax rm of a stream (delete on close of its open)" \
	"$RDAX" -u root -A "$T/pw" rm "smb://127.0.0.1:$PORT/sam/r.txt:s1"
check_output "the other stream's xattr stays" '^user.DosStream.big' xattrs "$D/r.txt"
if xattrs "$D/r.txt" | grep -q 'DosStream.s1:'; then
	not_ok "the removed stream's xattr is gone"
else
	ok "the removed stream's xattr is gone"
fi
check "the file is still there" test -s "$D/r.txt"

# --- bad names ---
for n in 'r.txt::$DATA:x' 'r.txt:a:b:c' 'r.txt:' 'dir:x\y'; do
	check_output "'$n' is refused" \
		'NT_STATUS_OBJECT_NAME_INVALID|NT_STATUS_INVALID_PARAMETER' \
		smb rdaxd sam "put s1.txt \"$n\""
done
# smbclient answers Samba's INVALID_PARAMETER so: compare the two
smb smbd sam 'put s1.txt "m.txt:s:$FOO"' | grep NT_STATUS >"$T/foo.smbd"
smb rdaxd sam 'put s1.txt "m.txt:s:$FOO"' | grep NT_STATUS >"$T/foo.rdaxd"
check "a type other than \$DATA gets Samba's answer ($(cat "$T/foo.smbd"))" \
	cmp "$T/foo.smbd" "$T/foo.rdaxd"
long=$(printf '%0300d' 0)
check_output "a 300-character stream name is refused" 'NT_STATUS_OBJECT_NAME_INVALID' \
	smb rdaxd sam "put s1.txt r.txt:$long"
check_output "a share without streams_xattr in vfs objects has no streams" \
	'NT_STATUS_OBJECT_NAME_INVALID' smb rdaxd nostreams 'put s1.txt r.txt:s9'
check "rdaxd keeps serving" smb rdaxd sam 'ls'
finish
