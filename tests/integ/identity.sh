#!/bin/sh
# SPDX-License-Identifier: MIT
# Users act as their Unix accounts (rdaxd(8), USERS AND UNIX IDENTITIES):
# ownership of what each creates, permissions between two users (0600
# files, 0700 directories, a sticky directory), force user and force
# group, the guest account, username map, refused logons of users without
# an account, read only and valid users on top, the capabilities rdaxd
# keeps, bad username maps at start and at reload, two users interleaved
# on one worker (tests/integ/identleak.c), and rdaxd run as an ordinary
# user. Through rdax and smbclient.
. "$(dirname "$0")/lib.sh"
need smbclient setpriv
[ "$(id -u)" = 0 ] || skip "switching identities needs root (CAP_SETUID, CAP_SETGID)"
LEAK=$B/tests/identleak
[ -x "$LEAK" ] || die "$LEAK not built (make tests)"

make_user "$T/passdb" alice 'id pw alice'
make_user "$T/passdb" bob 'id pw bob'
unix_user carol
# a passdb entry whose Unix account is made by the username map
printf 'id pw carol\n' | $RDAX passwd --passdb "$T/passdb" smbcarol 2>"$T/passwd.err"
printf 'id pw carol\n' >"$T/smbcarol.pw"
chmod 600 "$T/smbcarol.pw"
check_output "rdax passwd warns when there is no Unix account" \
	"warning: no Unix user 'smbcarol'" cat "$T/passwd.err"
# and one with no account at all
ghost=rdaxghost$$
printf 'id pw ghost\n' | $RDAX passwd --passdb "$T/passdb" "$ghost" 2>/dev/null
printf 'id pw ghost\n' >"$T/ghost.pw"
chmod 600 "$T/ghost.pw"
grp=rdaxtg$$
groupadd "$grp" || die "groupadd $grp"
usermod -a -G "$grp" alice || die "usermod"
trap 'cleanup; groupdel "$grp" 2>/dev/null' EXIT INT TERM

share_dir "$T/data" "$T/forced" "$T/fgroup" "$T/pub" "$T/ro" "$T/vu"
mkdir -p "$T/closed"
chmod 0700 "$T/closed"
mkdir -m 1777 "$T/data/sticky"
printf 'alice owns this\n' >"$T/ro/mine.txt"
own alice "$T/ro/mine.txt"
printf 'carol = smbcarol\n' >"$T/map"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	username map = $T/map
[data]
	path = $T/data
	read only = no
[forced]
	path = $T/forced
	read only = no
	force user = bob
	force group = $grp
[fgroup]
	path = $T/fgroup
	read only = no
	force group = +$grp
[pub]
	path = $T/pub
	read only = no
	guest ok = yes
[ro]
	path = $T/ro
	read only = yes
[vu]
	path = $T/vu
	read only = no
	valid users = bob
[closed]
	path = $T/closed
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
A="--user alice --password-file $T/alice.pw"
Bo="--user bob --password-file $T/bob.pw"
owner() { stat -c '%U:%G' "$1"; }
printf 'some data\n' >"$T/f.txt"

check "alice puts a file" $RDAX $A put "$T/f.txt" "$U/data/a.txt"
check_output "... owned by alice" "^alice:users$" owner "$T/data/a.txt"
check "bob puts a file" $RDAX $Bo put "$T/f.txt" "$U/data/b.txt"
check_output "... owned by bob" "^bob:users$" owner "$T/data/b.txt"
check "alice makes a directory" $RDAX $A mkdir "$U/data/adir"
check_output "... owned by alice" "^alice:users$" owner "$T/data/adir"
check "alice renames her file" $RDAX $A mv "$U/data/a.txt" a2.txt
check_output "... still hers" "^alice:users$" owner "$T/data/a2.txt"

# 0600 and 0700: the kernel decides, for each user
chmod 0600 "$T/data/a2.txt"
check_fails_output "bob cannot read alice's 0600 file" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo cat "$U/data/a2.txt"
check_output "alice can" "^some data$" $RDAX $A cat "$U/data/a2.txt"
check_output "bob may still see its attributes (stat)" "Size: 10 " $RDAX $Bo stat "$U/data/a2.txt"
check_fails_output "bob cannot overwrite it" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo put "$T/f.txt" "$U/data/a2.txt"
printf 'private\n' >"$T/data/adir/in.txt"
own alice "$T/data/adir/in.txt"
chmod 0700 "$T/data/adir"
check_fails_output "bob cannot delete a file in alice's 0700 directory" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo rm "$U/data/adir/in.txt"
check "... it is still there" test -f "$T/data/adir/in.txt"
check_fails_output "bob cannot list alice's 0700 directory" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo ls "$U/data/adir"
check "alice deletes it" $RDAX $A rm "$U/data/adir/in.txt"
check "... it is gone" test ! -e "$T/data/adir/in.txt"
check "alice puts a file in a sticky directory" $RDAX $A put "$T/f.txt" "$U/data/sticky/s.txt"
check_fails_output "bob cannot delete it there (sticky bit)" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo rm "$U/data/sticky/s.txt"
check "... it is still there" test -f "$T/data/sticky/s.txt"
check_fails_output "bob cannot rename alice's file out of the sticky directory" \
	"STATUS_ACCESS_DENIED" $RDAX $Bo mv "$U/data/sticky/s.txt" moved.txt
check "alice deletes it" $RDAX $A rm "$U/data/sticky/s.txt"

# force user and force group decide ownership
check "alice puts onto the force user = bob share" $RDAX $A put "$T/f.txt" "$U/forced/f.txt"
check_output "... owned by bob, group $grp" "^bob:$grp$" owner "$T/forced/f.txt"
check "alice (a member) puts onto force group = +$grp" $RDAX $A put "$T/f.txt" "$U/fgroup/a.txt"
check_output "... group $grp" "^alice:$grp$" owner "$T/fgroup/a.txt"
check "bob (not a member) puts there too" $RDAX $Bo put "$T/f.txt" "$U/fgroup/b.txt"
check_output "... keeps his own group" "^bob:users$" owner "$T/fgroup/b.txt"

# the guest and the username map
check "a guest puts onto the guest ok share" $RDAX --guest put "$T/f.txt" "$U/pub/g.txt"
check_output "... owned by nobody (guest account)" "^nobody:" owner "$T/pub/g.txt"
check "smbcarol logs on (username map: carol = smbcarol)" \
	$RDAX --user smbcarol --password-file "$T/smbcarol.pw" put "$T/f.txt" "$U/data/c.txt"
check_output "... and acts as carol" "^carol:" owner "$T/data/c.txt"
check "rdaxd logged the mapping" grep -q "for smbcarol as carol" "$T/srv.log"
check_fails_output "a passdb user without a Unix account is refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user "$ghost" --password-file "$T/ghost.pw" ls "$U/data"
check "... and rdaxd says why" grep -q "logon refused for '$ghost': no Unix account '$ghost'" "$T/srv.log"

# the share's own rules still apply on top
check_fails_output "read only: alice cannot write her own file" "ACCESS_DENIED|WRITE_PROTECTED" \
	$RDAX $A put "$T/f.txt" "$U/ro/mine.txt"
check_output "... she can read it" "alice owns this" $RDAX $A cat "$U/ro/mine.txt"
check_fails_output "valid users = bob: alice is refused" "STATUS_ACCESS_DENIED" \
	$RDAX $A ls "$U/vu"
check "... bob is let in" $RDAX $Bo ls "$U/vu"
check_fails_output "a share alice cannot enter (0700 root) is refused at tree connect" \
	"STATUS_ACCESS_DENIED" $RDAX $A ls "$U/closed"
check "... and rdaxd says why" grep -q "alice (as alice) may not enter share \[closed\]" "$T/srv.log"

# smbclient, a client that shares no code with rdax
sc() { smbclient -s /dev/null -p "$PORT" "$@"; }
cd "$T" || die "cd $T"
check "smbclient: alice puts a file" sc //127.0.0.1/data -U 'alice%id pw alice' -c "put f.txt sc.txt"
check_output "... owned by alice" "^alice:users$" owner "$T/data/sc.txt"
chmod 0600 "$T/data/sc.txt"
check_fails_output "smbclient: bob cannot get it (0600)" "NT_STATUS_ACCESS_DENIED" \
	sc //127.0.0.1/data -U 'bob%id pw bob' -c "get sc.txt sc.back"
check "... nothing was fetched" test ! -s "$T/sc.back"
check "smbclient: alice can" sc //127.0.0.1/data -U 'alice%id pw alice' -c "get sc.txt sc.back"
check "... byte-identical" cmp "$T/f.txt" "$T/sc.back"
check "smbclient: bob mkdir" sc //127.0.0.1/data -U 'bob%id pw bob' -c "mkdir bdir"
check_output "... owned by bob" "^bob:users$" owner "$T/data/bdir"

# what rdaxd kept: setuid, setgid, net_bind_service, ipc_lock, dac_read_search
kept=$(python3 -c 'print("%016x" % sum(1 << c for c in (2, 6, 7, 10, 14)))')
check_output "capabilities permitted: only what it needs" "^CapPrm:[[:space:]]+$kept$" \
	grep CapPrm "/proc/$RDAXD_PID/status"
check_output "... and the bounding set is the same" "^CapBnd:[[:space:]]+$kept$" \
	grep CapBnd "/proc/$RDAXD_PID/status"
check "the start log says what it keeps" \
	grep -q "capabilities kept: setuid setgid net_bind_service ipc_lock dac_read_search" "$T/srv.log"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# two users interleaved on one worker under load
share_dir "$T/leak"
for u in alice bob; do
	printf '%s secret\n' $u >"$T/leak/${u}_private"
	mkdir "$T/leak/${u}_dir"
	: >"$T/leak/${u}_dir/inside"
	own $u "$T/leak/${u}_private" "$T/leak/${u}_dir"
	chmod 0600 "$T/leak/${u}_private"
	chmod 0700 "$T/leak/${u}_dir"
done
start_rdaxd leak --share leak="$T/leak" --passdb "$T/passdb" --workers 1
check_output "interleaved on one worker: every request ran as its user" " 0 wrong$" \
	"$LEAK" 127.0.0.1 "$PORT" leak 150 alice "$T/alice.pw" bob "$T/bob.pw"
sed 's/^/    | /' "$T/check.out" | tail -n 3
for u in alice bob; do
	o=$([ $u = alice ] && echo bob || echo alice)
	check_output "... all $((3 * 150)) files of $u are $u's" "^$((3 * 150)) 0$" \
		sh -c "echo \$(find '$T/leak' -maxdepth 1 -name '${u}_[0-9]*' -user $u | wc -l) \
			\$(find '$T/leak' -maxdepth 1 -name '${u}_[0-9]*' ! -user $u | wc -l)"
	check_output "... and all $((3 * 150)) of $u's directories" "^$((3 * 150))$" \
		sh -c "find '$T/leak/${u}_dir' -mindepth 1 -type d -user $u | wc -l"
	check "... none of $o's in $u's directory" \
		sh -c "! find '$T/leak/${u}_dir' -mindepth 1 -user $o | grep -q ."
done
check "SIGTERM stops it cleanly" stop_rdaxd

# bad username maps: refused at start and by --test-config, naming the
# file and the line
printf '[global]\n\tusername map = %s/bad.map\n' "$T" >"$T/badmap.conf"
map_case() { # DESC PATTERN MAP-TEXT
	printf '%b' "$3" >"$T/bad.map"
	$RDAXD --config "$T/badmap.conf" --share d="$T/data" --passdb "$T/passdb" --test-config \
		>"$T/bad.out" 2>&1
	check "$1: --test-config fails (status 2)" test $? = 2
	check_output "$1: ... naming file and line" "$2" cat "$T/bad.out"
	timeout 10 $RDAXD --config "$T/badmap.conf" --share d="$T/data" --passdb "$T/passdb" \
		--listen "tcp://127.0.0.1:$(free_port)" >"$T/bad.out" 2>&1
	check "$1: rdaxd refuses to start (status 2)" test $? = 2
	check_output "$1: ... naming file and line" "$2" cat "$T/bad.out"
}
map_case "a loop" "bad.map:2: names map to each other in a loop: bob -> alice \(line 2\) -> bob \(line 3\)" \
	'# comment\nalice = bob\nbob = alice\n'
map_case "a missing Unix user" "bad.map:3: no Unix user 'nosuchuser$$'" \
	'carol = smbcarol\n\nnosuchuser'"$$"' = someone\n'
map_case "a line without =" "bad.map:2: no '='" 'carol = smbcarol\njust words\n'
map_case "no SMB names" "bad.map:1: no SMB names after '=' for 'carol'" 'carol =\n'
map_case "an unclosed quote" "bad.map:1: a quote is not closed" 'carol = "smb carol\n'
map_case "a missing group" "bad.map:1: no Unix group 'nosuchgroup$$'" 'carol = @nosuchgroup'"$$"'\n'
map_case "a netgroup" "bad.map:1: '&ng': NIS netgroups are not supported" 'carol = &ng\n'

# ... and at reload: the map in use stays
cp "$T/map" "$T/live.map"
printf '[global]\n\tusername map = %s/live.map\n' "$T" >"$T/live.conf"
start_rdaxd live --config "$T/live.conf" --share d="$T/data" --passdb "$T/passdb"
U="smb://127.0.0.1:$PORT"
printf 'alice = bob\nbob = alice\n' >"$T/live.map"
n0=$(wc -l <"$T/live.log")
kill -HUP "$RDAXD_PID"
sleep 0.5
check_output "a reload with a looping map is refused, naming file and line" \
	"reload: username map .*live.map:1: names map to each other in a loop" \
	sh -c "tail -n +$((n0 + 1)) '$T/live.log'"
check "... the map in use stays: smbcarol still acts as carol" \
	$RDAX --user smbcarol --password-file "$T/smbcarol.pw" put "$T/f.txt" "$U/d/c2.txt"
check_output "... (owned by carol)" "^carol:" owner "$T/data/c2.txt"
printf '!alice = smbcarol\n' >"$T/live.map"
kill -HUP "$RDAXD_PID"
sleep 0.5
check "a good map reloads" grep -q "reload: passdb .*username map" "$T/live.log"
check "... and new sessions use it: smbcarol acts as alice" \
	$RDAX --user smbcarol --password-file "$T/smbcarol.pw" put "$T/f.txt" "$U/d/c3.txt"
check_output "... (owned by alice)" "^alice:" owner "$T/data/c3.txt"
check "SIGTERM stops it cleanly" stop_rdaxd

# run as an ordinary user: everyone acts as that user, force user ignored
share_dir "$T/solo"
own alice "$T/solo"
cp "$T/passdb" "$T/solo.passdb"
own alice "$T/solo.passdb"
chmod 0600 "$T/solo.passdb"
cat >"$T/solo.conf" <<CONF
[solo]
	path = $T/solo
	read only = no
	force user = bob
CONF
chmod 0644 "$T/solo.conf"
PORT=$(free_port)
setpriv --reuid=alice --regid=users --clear-groups --inh-caps=-all --bounding-set=-all \
	"$RDAXD" --config "$T/solo.conf" --passdb "$T/solo.passdb" \
	--listen "tcp://127.0.0.1:$PORT" >"$T/solo.log" 2>&1 &
RDAXD_PID=$!
pids="$pids $RDAXD_PID"
i=0
while ! grep -q "ready" "$T/solo.log" 2>/dev/null && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.1
done
check "rdaxd starts as an ordinary user on a high port" grep -q ready "$T/solo.log"
check "... and says every session acts as it" \
	grep -q "no CAP_SETUID/CAP_SETGID: every session acts as uid $(id -u alice)" "$T/solo.log"
check "... and that force user is ignored" grep -q "share \[solo\]: force user/group ignored" "$T/solo.log"
check "bob logs on and puts a file" $RDAX $Bo put "$T/f.txt" "smb://127.0.0.1:$PORT/solo/b.txt"
check_output "... owned by alice, the user rdaxd runs as" "^alice:users$" owner "$T/solo/b.txt"
check "the ghost user logs on: no Unix account is needed" \
	$RDAX --user "$ghost" --password-file "$T/ghost.pw" ls "smb://127.0.0.1:$PORT/solo"
check "SIGTERM stops it cleanly" stop_rdaxd
setpriv --reuid=alice --regid=users --clear-groups --inh-caps=-all \
	"$RDAXD" --share s="$T/solo" --guest --listen tcp://127.0.0.1:445 >"$T/solo445.log" 2>&1
check "as an ordinary user, port 445 is refused (status 1)" test $? = 1
check_output "... saying why" "listen tcp://127.0.0.1:445: Permission denied" cat "$T/solo445.log"
finish
