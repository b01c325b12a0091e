#!/bin/sh
# SPDX-License-Identifier: MIT
# Security cases against rdaxd (tests/integ/security.c on the wire, and
# the rdax CLI and smbclient where they can say it):
#  - names that leave the share: "..\..\", ".." components, absolute
#    names (leading "\", drive letters), a NUL inside a name, symlinks in
#    the share that point out of it, renames and hard links to outside;
#  - a guest on a share without guest access, a user the share does not
#    list;
#  - wrong, empty and unknown passwords;
#  - unsigned and forged requests where signing is mandatory;
#  - a replayed and a duplicated MessageId;
#  - another session's SessionId, TreeId and FileId, on the same
#    connection and across connections.
# After each case the files outside the share are unchanged (nothing new
# either) and rdaxd still serves a new client.
. "$(dirname "$0")/lib.sh"
need smbclient
S=$B/tests/security
[ -x "$S" ] || die "$S not built (make tests)"

share_dir "$T/share" "$T/share/sub" "$T/share/etc" "$T/pub" "$T/outside" "$T/local"
printf 'outside secret\n' >"$T/outside/secret.txt"
printf 'canary: never touched\n' >"$T/outside/canary.txt"
printf 'inside the share\n' >"$T/share/inside.txt"
printf 'inside the share\n' >"$T/share/etc/passwd"
ln -s "$T/outside" "$T/share/link"			# a directory outside
ln -s "$T/outside/secret.txt" "$T/share/flink"		# a file outside
ln -s ../outside/secret.txt "$T/share/rlink"		# relative, outside
# the outside world as it is: names, sizes, contents, times
snapshot() {
	(cd "$T/outside" && find . -printf '%p %s %T@ %m\n' | sort && cat ./*) 2>&1
}
snapshot >"$T/outside.before"
untouched() {
	snapshot >"$T/outside.now"
	diff "$T/outside.before" "$T/outside.now"
}

make_user "$T/passdb" alice 'sec pw alice'
make_user "$T/passdb" bob 'sec pw bob'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[priv]
	path = $T/share
	read only = no
	valid users = alice
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
log=$T/srv.log
export SEC_SHARE=priv SEC_GSHARE=pub SEC_USER=alice SEC_PW='sec pw alice' \
	SEC_USER2=bob SEC_PW2='sec pw bob'
AL="--user alice --password-file $T/alice.pw"
U="smb://127.0.0.1:$PORT"
serving() {
	$RDAX $AL -q get "$U/priv/inside.txt" "$T/local/serving.txt" &&
		cmp "$T/share/inside.txt" "$T/local/serving.txt"
}
# after CASE: the outside is untouched and rdaxd serves
after() {
	check "$1: nothing outside the share changed" untouched
	check "$1: rdaxd still serves" serving
}
# sec CASE DESC: one case of security.c, its lines shown
sec() {
	check "$2" "$S" 127.0.0.1 "$PORT" "$1"
	sed 's/^/    /' "$T/check.out"
	after "$1"
}

check "control: alice reads a file of the share" serving

sec paths "names that leave the share are refused (wire)"
check "no file was created by a refused name" \
	test ! -e "$T/share/nul.txt" -a ! -e "$T/share/ids-1.txt" -a ! -e "$T/outside/new.txt"
check "the inside file is unchanged" test "$(cat "$T/share/inside.txt")" = "inside the share"

# the same through the CLI
check_fails "rdax get through a file symlink to outside fails" \
	$RDAX $AL -q get "$U/priv/flink" "$T/local/flink"
check "... and wrote nothing with the outside bytes" \
	sh -c "! grep -qs 'outside secret' '$T/local/flink'"
check_fails "rdax cat through a relative symlink to outside fails" \
	$RDAX $AL cat "$U/priv/rlink"
check_fails "rdax cat through a directory symlink to outside fails" \
	$RDAX $AL cat "$U/priv/link/secret.txt"
printf 'overwrite attempt\n' >"$T/local/evil.txt"
check_fails "rdax put through a file symlink to outside fails" \
	$RDAX $AL -q put "$T/local/evil.txt" "$U/priv/flink"
check_fails "rdax put into a directory symlink to outside fails" \
	$RDAX $AL -q put "$T/local/evil.txt" "$U/priv/link/evil.txt"
check_fails "rdax rm through a directory symlink fails" \
	$RDAX $AL rm "$U/priv/link/canary.txt"
check_fails "rdax mv of an inside file to ../outside fails" \
	$RDAX $AL mv "$U/priv/inside.txt" "$U/priv/../outside/moved.txt"
after "CLI through symlinks"
sc() { smbclient -s /dev/null -p "$PORT" //127.0.0.1/priv -U 'alice%sec pw alice' "$@"; }
check_fails_output "smbclient: get through a directory symlink to outside fails" \
	"NT_STATUS_(ACCESS_DENIED|OBJECT_NAME_NOT_FOUND|OBJECT_PATH_NOT_FOUND|OBJECT_PATH_INVALID|OBJECT_NAME_INVALID)" \
	sc -c "get link\\secret.txt $T/local/sc.txt"
check "... and nothing was fetched" test ! -e "$T/local/sc.txt"
check_fails_output "smbclient: get ..\\outside\\secret.txt fails" \
	"NT_STATUS_(ACCESS_DENIED|OBJECT_NAME_NOT_FOUND|OBJECT_PATH_NOT_FOUND|OBJECT_PATH_INVALID|OBJECT_NAME_INVALID|OBJECT_PATH_SYNTAX_BAD)" \
	sc -c "get ..\\outside\\secret.txt $T/local/sc2.txt"
check "... and nothing was fetched" test ! -e "$T/local/sc2.txt"
after "smbclient"

sec guest "a guest is refused a share without guest access (wire)"
check_fails_output "rdax --guest on the non-guest share: STATUS_ACCESS_DENIED" \
	"STATUS_ACCESS_DENIED|STATUS_LOGON_FAILURE" $RDAX --guest ls "$U/priv"
after "guest CLI"

sec logon "wrong, empty and unknown passwords fail with LOGON_FAILURE (wire)"
printf 'not it\n' >"$T/bad.pw"
chmod 600 "$T/bad.pw"
check_fails_output "rdax with a wrong password: STATUS_LOGON_FAILURE" "STATUS_LOGON_FAILURE" \
	$RDAX --user alice --password-file "$T/bad.pw" ls "$U/priv"
check_fails_output "rdax with an empty password: STATUS_LOGON_FAILURE" "STATUS_LOGON_FAILURE" \
	env RDAX_PASSWORD= $RDAX --user alice ls "$U/priv"
check "failed logons are logged" grep -q "logon failure for user 'alice'" "$log"
after "logon CLI"

sec mid "a replayed or duplicated MessageId is not executed (wire)"
sec ids "another session's SessionId, TreeId or FileId is refused (wire)"
check "no file was created with a foreign id" \
	sh -c "! ls '$T/share' '$T/pub' | grep -q '^ids-'"

check "no connection, session or open is left (SIGUSR1)" rdaxd_idle "$log"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# signing required by the server
cat >"$T/sign.conf" <<CONF
[global]
	passdb file = $T/passdb
	server signing = mandatory
[priv]
	path = $T/share
	read only = no
	valid users = alice
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
CONF
start_rdaxd sign --config "$T/sign.conf"
log=$T/sign.log
U="smb://127.0.0.1:$PORT"
sec signing "unsigned and forged requests are refused where signing is mandatory (wire)"
check "no file was created by an unsigned or forged request" \
	sh -c "! ls '$T/share' | grep -q '^signing-[0-9.]*-'"
check "a forged signature is logged" grep -q "bad signature on CREATE" "$log"
check "rdax (which signs) is served" serving
check "SIGTERM stops it cleanly" stop_rdaxd
check "the canary outside the share is untouched" untouched
finish
