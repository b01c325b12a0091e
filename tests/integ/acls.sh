#!/bin/sh
# SPDX-License-Identifier: MIT
# Security descriptors (docs/identity.md, "Security descriptors"):
# smbcacls shows a file's mode and POSIX ACL as a DACL of S-1-22-1-UID,
# S-1-22-2-GID and Everyone; --add, --set and --delete come back on disk
# (getfacl), a directory's inheritable ACEs as its default ACL; a DENIED
# ACE refuses its user while another still opens; a user cannot give
# her file away (only root may chown), an owner SID without a Unix id is kept as
# sent; MxAc follows the user's access; a kept DACL decides (the owner
# of a read-only DACL may not write); SACLs need SeSecurityPrivilege,
# root's only (tests/integ/sacl.c). smbcacls
# only talks to port 445, so the test runs in a network namespace of its
# own. Malformed descriptors are in tests/integ/badinput.c.
if [ -z "${RDAX_ACLS_NETNS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -n true 2>/dev/null; then
	RDAX_ACLS_NETNS=1 exec unshare -n sh -c 'ip link set lo up && exec sh "$0"' "$0"
fi
. "$(dirname "$0")/lib.sh"
need smbcacls smbclient getfacl setfacl
[ "$(id -u)" = 0 ] || skip "two users and port 445 need root"
[ -n "${RDAX_ACLS_NETNS:-}" ] || skip "no network namespace (unshare -n) for port 445"

ua=rca$$ ub=rcb$$
make_user "$T/passdb" $ua "pw $ua"
make_user "$T/passdb" $ub "pw $ub"
uida=$(id -u $ua) uidb=$(id -u $ub)
share_dir "$T/data"
setfacl -m u::rwx,g::rwx,o::rwx "$T/data" 2>/dev/null ||
	skip "no POSIX ACLs on $T"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/data
[adm]
	path = $T/data
	force user = root
CONF
RDAXD_PORT=445 start_rdaxd srv --config "$T/smb.conf"

printf 'hello\n' >"$T/data/f"
own $ua "$T/data/f"
chmod 0640 "$T/data/f"
mkdir "$T/data/d"
own $ua "$T/data/d"
chmod 0750 "$T/data/d"
gid=$(stat -c %g "$T/data/f")

# cacls USER FILE ARGS...: smbcacls as USER, SIDs as numbers
cacls() {
	_u=$1 _f=$2
	shift 2
	timeout 30 smbcacls "//127.0.0.1/data" "$_f" -U "$_u%pw $_u" --numeric "$@" 2>&1
}
# get USER FILE: smbclient fetches FILE
get() {
	(cd "$T" && timeout 30 smbclient //127.0.0.1/data -U "$1%pw $1" -c "get $2 $T/got" 2>&1)
}

# lacks DESC PATTERN CMD...: the command succeeds, PATTERN not in its output
lacks() {
	desc=$1 pat=$2
	shift 2
	if ! "$@" >"$T/check.out" 2>&1; then
		not_ok "$desc (the command failed)"
		_show
	elif grep -Eq -- "$pat" "$T/check.out"; then
		not_ok "$desc (/$pat/ is there)"
		_show
	else
		ok "$desc"
	fi
}

# has_all DESC LINES CMD...: the command succeeds, every line of LINES in its output
has_all() {
	desc=$1 lines=$2
	shift 2
	if ! "$@" >"$T/check.out" 2>&1; then
		not_ok "$desc (the command failed)"
		_show
		return
	fi
	_miss=$(printf '%s\n' "$lines" | while IFS= read -r l; do
		grep -qxF -- "$l" "$T/check.out" || echo "$l"
	done)
	if [ -n "$_miss" ]; then
		not_ok "$desc (missing: $_miss)"
		_show
	else
		ok "$desc"
	fi
}

has_all "a 0640 file shows owner RW, group R" \
	"OWNER:S-1-22-1-$uida
GROUP:S-1-22-2-$gid
ACL:S-1-22-1-$uida:0/0x0/0x0012019f
ACL:S-1-22-2-$gid:0/0x0/0x00120089" cacls $ua f
check_output "... and Everyone without access (others' 0 bits, as Samba shows them)" \
	"ACL:S-1-1-0:0/0x0/0x00000000" cacls $ua f
check_output "MxAc: the owner's read, write and WRITE_DAC" "Maximum access: 0x1f019f" \
	timeout 30 smbcacls //127.0.0.1/data f -U "$ua%pw $ua" -x
has_all "a 0750 directory: owner full control, group read and traverse" \
	"ACL:S-1-22-1-$uida:0/0x0/0x001f01ff
ACL:S-1-22-2-$gid:0/0x0/0x001200a9" cacls $ua d

check "smbcacls --add: a read ACE for another user" \
	cacls $ua f --add "ACL:S-1-22-1-$uidb:ALLOWED/0x0/R"
check_output "... is a named user entry of the access ACL" "user:$ub:r--" getfacl -p "$T/data/f"
check_output "... and shows again" "ACL:S-1-22-1-$uidb:0/0x0/0x00120089" cacls $ua f
check_output "$ub reads f now" "getting file" get $ub f

# the DACL is kept now and decides: the owner has READ_CONTROL and
# WRITE_DAC, not the WRITE_OWNER smbcacls asks for when it sends the owner
check_fails_output "smbcacls --delete with the owner: WRITE_OWNER is not the owner's" \
	"NT_STATUS_ACCESS_DENIED" cacls $ua f --delete "ACL:S-1-22-1-$uidb:ALLOWED/0x0/R"
check "smbcacls --delete of the DACL alone: the ACE goes" \
	cacls $ua f --set-security-info=4 --delete "ACL:S-1-22-1-$uidb:ALLOWED/0x0/R"
lacks "... and the named entry with it" "user:$ub" getfacl -p "$T/data/f"
check_fails_output "$ub is refused again (the kernel: 0640)" "NT_STATUS_ACCESS_DENIED" get $ub f

check "smbcacls --set: owner full, Everyone read, no ACE for the group" \
	cacls $ua f --set "ACL:S-1-22-1-$uida:ALLOWED/0x0/FULL,ACL:S-1-1-0:ALLOWED/0x0/R"
has_all "... is mode 0744 on disk (Everyone includes the group)" "user::rwx
group::r--
other::r--" getfacl -p -c "$T/data/f"

check "a DENIED read ACE for $ub before Everyone's read" \
	cacls $ua f --set "ACL:S-1-22-1-$uida:ALLOWED/0x0/FULL,ACL:S-1-22-1-$uidb:DENIED/0x0/R,ACL:S-1-1-0:ALLOWED/0x0/R"
check_output "... is kept as set" "ACL:S-1-22-1-$uidb:1/0x0/0x00120089" cacls $ua f
check_fails_output "$ub's open is refused" "NT_STATUS_ACCESS_DENIED" get $ub f
check_output "$ua still reads f" "getting file" get $ua f
chmod 0644 "$T/data/f"
check_output "a chmod on the server makes the kept DACL stale: $ub reads" "getting file" get $ub f
lacks "... and it no longer shows" "S-1-22-1-$uidb" cacls $ua f

check "inheritable ACEs on a directory" \
	cacls $ua d --set "ACL:S-1-22-1-$uida:ALLOWED/0x0/FULL,ACL:S-1-22-1-$uidb:ALLOWED/OI|CI/R,ACL:S-1-3-0:ALLOWED/OI|CI|IO/FULL"
# on a directory the POSIX ACL of a DACL lets read search too (the DACL decides)
check_output "... are its default ACL" "default:user:$ub:r-x" getfacl -p "$T/data/d"
check_output "... with CREATOR OWNER as default:user::" "default:user::rwx" getfacl -p "$T/data/d"
check_output "... and the access ACL has $ub too" "^user:$ub:r-x" getfacl -p "$T/data/d"

# a kept DACL decides: the owner may write g on disk, the DACL says read only
printf 'g\n' >"$T/data/g"
own $ua "$T/data/g"
chmod 0600 "$T/data/g"
check "a DACL granting the owner read only" \
	cacls $ua g --set-security-info=4 --set "ACL:S-1-22-1-$uida:ALLOWED/0x0/R"
check_fails_output "... refuses the owner's write (POSIX would allow it)" "NT_STATUS_ACCESS_DENIED" \
	sh -c "cd '$T' && timeout 30 smbclient //127.0.0.1/data -U '$ua%pw $ua' -c 'put got g'"
check_output "... and lets the owner read" "getting file" get $ua g
check_output "MxAc: the DACL's read, the owner's READ_CONTROL and WRITE_DAC, DELETE by the directory" \
	"Maximum access: 0x170089" timeout 30 smbcacls //127.0.0.1/data g -U "$ua%pw $ua" -x

check_fails_output "$ua cannot give f away (only root may chown)" "NT_STATUS_ACCESS_DENIED" \
	cacls $ua f --chown "S-1-22-1-$uidb"
check "an owner SID that is no Unix user is taken (Samba's acl_xattr)" \
	cacls $ua f --chown "S-1-5-21-1-2-3-500"
check_output "... and shown" "OWNER:S-1-5-21-1-2-3-500" cacls $ua f
check_output "... while $ua still owns f on disk" "^$ua\$" stat -c %U "$T/data/f"
check_fails_output "$ub may not change $ua's DACL" "NT_STATUS_ACCESS_DENIED" \
	cacls $ub f --add "ACL:S-1-22-1-$uidb:ALLOWED/0x0/FULL"
# a directory's kept DACL decides what may be added to it
mkdir "$T/data/d2"
printf 'h\n' >"$T/data/h"
own $ua "$T/data/d2" "$T/data/h"
check "a DACL on a directory granting its owner list and traverse only" \
	cacls $ua d2 --set-security-info=4 --set "ACL:S-1-22-1-$uida:ALLOWED/0x0/0x001200a9"
check_fails_output "... refuses a new file in it (POSIX would allow it)" "NT_STATUS_ACCESS_DENIED" \
	sh -c "cd '$T' && timeout 30 smbclient //127.0.0.1/data -U '$ua%pw $ua' -c 'put got d2\\new'"
check_fails_output "... and a rename into it" "NT_STATUS_ACCESS_DENIED" \
	sh -c "timeout 30 smbclient //127.0.0.1/data -U '$ua%pw $ua' -c 'rename h d2\\h'"
timeout 30 smbclient //127.0.0.1/data -U "$ua%pw $ua" -c 'rename h h2' >/dev/null 2>&1
check "... while a rename beside it works" test -e "$T/data/h2"

# SACLs: SeSecurityPrivilege is root's (the adm share acts as root)
printf 's\n' >"$T/data/s"
own $ua "$T/data/s"
chmod 0666 "$T/data/s"
check_fails_output "smbcacls of the SACL as $ua: the privilege is not held" \
	"NT_STATUS_PRIVILEGE_NOT_HELD" cacls $ua s --query-security-info=8
check "SACLs on the wire: refused without the privilege, kept as root sets them (sacl.c)" \
	"$B/tests/sacl" 127.0.0.1 445 data adm "$T/data" $ua "$T/$ua.pw" s
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
