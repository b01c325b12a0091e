#!/bin/sh
# SPDX-License-Identifier: MIT
# Reload (rdaxctl reload and SIGHUP) against real smbclient sessions: a
# share added is reachable from a session that was there before (tcon);
# a share removed deletes its connected tree (NT_STATUS_NETWORK_NAME_DELETED)
# while the other shares keep working; "read only" changes for new trees;
# a passdb change lets a new user log on; a broken file fails the reload
# naming the file and line and changes nothing; a large transfer running
# through reloads arrives byte-identical.
. "$(dirname "$0")/lib.sh"
need smbclient python3 cmp stdbuf
[ -x "$RDAXCTL" ] || die "$RDAXCTL not built (make)"
[ "$(id -u)" = 0 ] || skip "the control socket is root's: run as root"

make_user "$T/passdb" alice 'reload pw alice'
share_dir "$T/a" "$T/b" "$T/c"
echo in-a >"$T/a/a.txt"
echo in-b >"$T/b/b.txt"
echo in-c >"$T/c/c.txt"
head -c 64000000 /dev/urandom >"$T/a/big"
chmod 0666 "$T/a/big"
conf() {
	{
		printf '[global]\n\tpassdb file = %s\n' "$T/passdb"
		for s in "$@"; do
			case $s in
			*:ro) printf '[%s]\n\tpath = %s/%s\n\tread only = yes\n' "${s%:ro}" "$T" "${s%:ro}" ;;
			*) printf '[%s]\n\tpath = %s/%s\n\tread only = no\n' "$s" "$T" "$s" ;;
			esac
		done
	} >"$T/smb.conf"
}
conf a b
start_rdaxd srv --config "$T/smb.conf" --workers 2
ctl() { "$RDAXCTL" -s "$RDAXD_CTL" "$@"; }
smb() { _s=$1; shift; stdbuf -o0 smbclient -U "alice%reload pw alice" -p "$PORT" "//127.0.0.1/$_s" "$@"; }

# sessions that stay: one on [a], one on [b], driven through fifos
mkfifo "$T/fa" "$T/fb"
smb a <"$T/fa" >"$T/sa.out" 2>&1 &
pa=$!
smb b <"$T/fb" >"$T/sb.out" 2>&1 &
pb=$!
exec 3>"$T/fa" 4>"$T/fb"
echo "ls" >&3
echo "ls" >&4
wait_for() {	# FILE PATTERN
	i=0
	until grep -Eq "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}
wait_for "$T/sa.out" 'a\.txt' || die "the session on [a] did not start"
wait_for "$T/sb.out" 'b\.txt' || die "the session on [b] did not start"

# add [c], remove [b]
conf a c
check_output "rdaxctl reload: one share added, one removed" '1 share added, 1 removed' ctl reload
echo "tcon c" >&3
check "the session on [a] connects to the new [c] without reconnecting (tcon)" \
	wait_for "$T/sa.out" 'tcon to c successful'
echo "ls" >&4
check "the tree on the removed [b] is deleted (NT_STATUS_NETWORK_NAME_DELETED)" \
	wait_for "$T/sb.out" 'NT_STATUS_NETWORK_NAME_DELETED'
check_fails_output "a new tree connect to [b] fails" 'NT_STATUS_BAD_NETWORK_NAME' smb b -c ls
check_output "[a] keeps working" 'a\.txt' smb a -c ls
check_output "status lists [a] and [c], not [b]" '^\["a", "c"\]$' sh -c \
	"'$RDAXCTL' -s '$RDAXD_CTL' status --json | python3 -c 'import json,sys; print(json.dumps([s[\"name\"] for s in json.load(sys.stdin)[\"shares\"]]))'"

smbclient -U "alice%reload pw alice" -p "$PORT" -L //127.0.0.1 >"$T/list.out" 2>&1
check_output "share enumeration (smbclient -L) lists [c]" '^[[:space:]]+c[[:space:]]+Disk' cat "$T/list.out"
check_fails "share enumeration does not list the removed [b]" grep -Eq '^[[:space:]]+b[[:space:]]+Disk' "$T/list.out"

# read only, by SIGHUP this time
conf a:ro c
n0=$(wc -l <"$T/srv.log")
kill -HUP "$RDAXD_PID"
check "SIGHUP reloads ([a] changed)" wait_for "$T/srv.log" 'reload: reloaded .*: 0 shares added, 0 removed, 1 changed'
echo x >"$T/x.txt"
check_fails_output "[a] read only: a new tree cannot write" 'NT_STATUS_ACCESS_DENIED|NT_STATUS_MEDIA_WRITE_PROTECTED' \
	smb a -c "put $T/x.txt x.txt"
conf a c
check_output "back to writable" '0 removed, 1 changed' ctl reload
check "[a] writable again for a new tree" smb a -c "put $T/x.txt x.txt"

# the passdb: a new user
make_user "$T/passdb" bob 'reload pw bob'
check_fails "bob cannot log on before the reload" \
	smbclient -U "bob%reload pw bob" -p "$PORT" //127.0.0.1/a -c ls
check_output "reload: the passdb has 2 users" 'passdb 2 users' ctl reload
check_output "bob logs on after it" 'a\.txt' smbclient -U "bob%reload pw bob" -p "$PORT" //127.0.0.1/a -c ls

# a broken file changes nothing
cp "$T/smb.conf" "$T/good.conf"
printf '[d]\n\tpath = %s/c\n[broken\n' "$T" >>"$T/smb.conf"
check_fails_output "a broken file: the reload fails naming the file and line" \
	"$T/smb.conf:[0-9]+: " ctl reload
check_fails_output "a share whose path does not exist: the reload fails" 'share \[e\]: .*No such file' \
	sh -c "cp '$T/good.conf' '$T/smb.conf'; printf '[e]\n\tpath = $T/nowhere\n' >>'$T/smb.conf'; '$RDAXCTL' -s '$RDAXD_CTL' reload"
check_fails_output "nothing changed: [d] and [e] are not there" 'BAD_NETWORK_NAME' smb d -c ls
check_output "nothing changed: [c] is still there" 'c\.txt' smb c -c ls
cp "$T/good.conf" "$T/smb.conf"

# a large transfer through reloads
smb a -c "get big $T/big.copy" >"$T/get.out" 2>&1 &
pg=$!
reloads=0
while kill -0 $pg 2>/dev/null; do
	ctl reload >/dev/null 2>&1 && reloads=$((reloads + 1))
	conf a c b
	ctl reload >/dev/null 2>&1 && reloads=$((reloads + 1))
	conf a c
done
wait $pg
check "a 64 MB read through $reloads reloads is byte-identical" cmp "$T/a/big" "$T/big.copy"
[ $reloads -gt 0 ] || not_ok "no reload ran during the transfer"

echo "quit" >&3
echo "quit" >&4
exec 3>&- 4>&-
wait $pa $pb 2>/dev/null
check "rdaxd stops cleanly" stop_rdaxd
finish
