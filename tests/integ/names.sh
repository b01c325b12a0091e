#!/bin/sh
# SPDX-License-Identifier: MIT
# Names as Windows clients expect them (docs/names.md), through smbclient
# against a real rdaxd: a path in another case opens the file
# (a directory's too), a create of a case variant opens the existing file
# and makes no second one, a rename that changes only case renames;
# 8.3 short names (allinfo's altname) open their file;
# "case sensitive = yes" keeps the file system's names; a wrong-case
# name never leads out of the share through a symlink pointing out.
. "$(dirname "$0")/lib.sh"
need smbclient

S=$T/share
share_dir "$S" "$T/cs" "$T/outside"
printf 'secret\n' >"$T/outside/SECRET.txt"
make_user "$T/passdb" nameuser 'name pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[ci]
	path = $S
	read only = no
[cs]
	path = $T/cs
	read only = no
	case sensitive = yes
CONF
start_rdaxd srv --config "$T/smb.conf"
smb() {
	(cd "$T" && timeout 60 smbclient "//127.0.0.1/$1" -p "$PORT" -U 'nameuser%name pw' \
		-c "$2" 2>&1)
}

mkdir "$S/CamelDir" "$T/cs/CamelDir"
printf 'one\n' >"$S/CamelDir/MixedCase.txt"
printf 'one\n' >"$T/cs/CamelDir/MixedCase.txt"
chmod -R a+rwX "$S" "$T/cs"
ln -s "$T/outside" "$S/Link"

rm -f "$T/got"
check_output "a path in another case opens the file" '^one$' \
	sh -c "cd '$T' && smbclient //127.0.0.1/ci -p $PORT -U 'nameuser%name pw' \
		-c 'get CAMELDIR\\mixedcase.TXT got' >/dev/null 2>&1; cat got"
printf 'two\n' >"$T/new.txt"
check_output "a create of a case variant (put) succeeds" 'putting file' \
	smb ci 'put new.txt cameldir\MIXEDCASE.txt'
check_output "  and wrote the existing file" '^two$' cat "$S/CamelDir/MixedCase.txt"
check_output "  no second file" '^MixedCase.txt$' ls "$S/CamelDir"
check_output "mkdir of a case variant is a collision" 'NT_STATUS_OBJECT_NAME_COLLISION' \
	smb ci 'mkdir CAMELDIR'
check_output "ls of a wrong-case name lists the entry as it is" 'MixedCase.txt' \
	smb ci 'ls cameldir\MIXEDCASE.TXT'
check_output "allinfo shows an 8.3 altname" '^altname: M[0-9A-Z]{5}~[0-9A-Z]\.TXT$' \
	smb ci 'allinfo CamelDir\MixedCase.txt'
alt=$(sed -n 's/^altname: //p' "$T/check.out")
rm -f "$T/got"
check_output "the short name $alt opens the file" '^two$' \
	sh -c "cd '$T' && smbclient //127.0.0.1/ci -p $PORT -U 'nameuser%name pw' \
		-c 'get CamelDir\\$alt got' >/dev/null 2>&1; cat got"
check_output "  the same short name on every query" "^altname: $alt\$" \
	smb ci 'allinfo cameldir\mixedcase.txt'
check_output "an 8.3 name is its own altname" '^altname: short.txt$' \
	sh -c "touch '$S/short.txt' && chmod a+rw '$S/short.txt' && cd '$T' && \
		smbclient //127.0.0.1/ci -p $PORT -U 'nameuser%name pw' -c 'allinfo SHORT.TXT' 2>&1"
check "a rename that changes only case" smb ci 'rename CamelDir\MixedCase.txt cameldir\MIXEDCASE.TXT'
check_output "  renames on disk" '^MIXEDCASE.TXT$' ls "$S/CamelDir"
check_fails_output "a rename onto another file's case variant is a collision" \
	'NT_STATUS_OBJECT_NAME_COLLISION' smb ci 'rename short.txt CAMELDIR\mixedcase.txt'

# confinement: a wrong-case name through a symlink pointing out of the
# share is refused as the exact one is; one pointing inside is followed
check_fails_output "a wrong-case path through a symlink out of the share is refused" \
	'NT_STATUS_' smb ci 'get link\secret.TXT got2'
check_fails_output "  in the exact case too" 'NT_STATUS_' smb ci 'get Link\SECRET.txt got2'
check_fails "nothing was fetched" test -e "$T/got2"
ln -s CamelDir "$S/Inside"
check_output "a wrong-case path through a symlink inside the share opens the file" \
	'getting file' smb ci 'get inside\mixedcase.txt got4'

# case sensitive = yes: the file system's names only
check_fails_output "case sensitive = yes: another case is not found" \
	'NT_STATUS_OBJECT_(NAME|PATH)_NOT_FOUND' smb cs 'get cameldir\mixedcase.txt got3'
check_output "  the exact name is" 'getting file' smb cs 'get CamelDir\MixedCase.txt got3'

check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
