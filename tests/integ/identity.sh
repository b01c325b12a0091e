#!/bin/sh
# SPDX-License-Identifier: MIT
# Users act as their Unix accounts (rdaxd(8), USERS AND UNIX IDENTITIES):
# ownership of what each creates, permissions between two users (0600
# files, 0700 directories, a sticky directory), what the kernel refuses
# a user on the wire (tests/integ/identdeny.c: set-info, rename,
# server-side copy), force user and force group (Samba's rules, "+group"
# asks the forced user), the guest account, username map, refused logons
# of users without an account, read only and valid users on top, the
# capabilities of every rdaxd thread, bad username maps at start and at
# reload (the map in use stays), two users interleaved on one worker
# (tests/integ/identleak.c), users on the DAX store (a reader of another
# user's file maps it too), and rdaxd run as an ordinary user. Through
# rdax, smbclient and fio (the rdax engine).
#
# The Unix accounts are made for this run (rxa<pid>, ...): other tests on
# the machine make and remove accounts of their own, with other names.
. "$(dirname "$0")/lib.sh"
need smbclient setpriv python3
[ "$(id -u)" = 0 ] || skip "switching identities needs root (CAP_SETUID, CAP_SETGID)"
LEAK=$B/tests/identleak
DENY=$B/tests/identdeny
CHOWN=$B/tests/identchown
SUID=$B/tests/identsuid
[ -x "$LEAK" ] || die "$LEAK not built (make tests)"
[ -x "$DENY" ] || die "$DENY not built (make tests)"
[ -x "$CHOWN" ] || die "$CHOWN not built (make tests)"
[ -x "$SUID" ] || die "$SUID not built (make tests)"

ua=rxa$$ ub=rxb$$ uc=rxc$$ ud=rxd$$
make_user "$T/passdb" $ua "id pw $ua"
make_user "$T/passdb" $ub "id pw $ub"
make_user "$T/passdb" $ud "id pw $ud"
unix_user $uc
# a passdb entry whose Unix account is made by the username map
smbc=smb$uc
printf 'id pw carol\n' | $RDAX passwd --passdb "$T/passdb" $smbc 2>"$T/passwd.err"
printf 'id pw carol\n' >"$T/$smbc.pw"
chmod 600 "$T/$smbc.pw"
check_output "rdax passwd warns when there is no Unix account" \
	"warning: no Unix user '$smbc'" cat "$T/passwd.err"
# and one with no account at all
ghost=rxghost$$
printf 'id pw ghost\n' | $RDAX passwd --passdb "$T/passdb" "$ghost" 2>/dev/null
printf 'id pw ghost\n' >"$T/ghost.pw"
chmod 600 "$T/ghost.pw"
grp=rxg$$
groupadd "$grp" || die "groupadd $grp"
usermod -a -G "$grp" $ua || die "usermod"
usermod -a -G "$grp" $ud || die "usermod"
trap 'cleanup; groupdel "$grp" 2>/dev/null' EXIT INT TERM

share_dir "$T/data" "$T/forced" "$T/fgroup" "$T/fmember" "$T/fnonmember" "$T/pub" "$T/ro" \
	"$T/vu" "$T/deny"
mkdir -p "$T/closed"
chmod 0700 "$T/closed"
mkdir -m 1777 "$T/data/sticky"
printf '%s owns this\n' $ua >"$T/ro/mine.txt"
own $ua "$T/ro/mine.txt"
printf '%s = %s\n' $uc $smbc >"$T/map"
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
	force user = $ub
	force group = $grp
[fgroup]
	path = $T/fgroup
	read only = no
	force group = +$grp
[fmember]
	path = $T/fmember
	read only = no
	force user = $ud
	force group = +$grp
[fnonmember]
	path = $T/fnonmember
	read only = no
	force user = $ub
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
	valid users = $ub
[closed]
	path = $T/closed
	read only = no
[deny]
	path = $T/deny
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
A="--user $ua --password-file $T/$ua.pw"
Bo="--user $ub --password-file $T/$ub.pw"
D="--user $ud --password-file $T/$ud.pw"
owner() { stat -c '%U:%G' "$1"; }
printf 'some data\n' >"$T/f.txt"

check "$ua puts a file" $RDAX $A put "$T/f.txt" "$U/data/a.txt"
check_output "... owned by $ua" "^$ua:users$" owner "$T/data/a.txt"
check "$ub puts a file" $RDAX $Bo put "$T/f.txt" "$U/data/b.txt"
check_output "... owned by $ub" "^$ub:users$" owner "$T/data/b.txt"
check "$ua makes a directory" $RDAX $A mkdir "$U/data/adir"
check_output "... owned by $ua" "^$ua:users$" owner "$T/data/adir"
check "$ua renames her file" $RDAX $A mv "$U/data/a.txt" a2.txt
check_output "... still hers" "^$ua:users$" owner "$T/data/a2.txt"

# 0600 and 0700: the kernel decides, for each user
chmod 0600 "$T/data/a2.txt"
check_fails_output "$ub cannot read $ua's 0600 file" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo cat "$U/data/a2.txt"
check_output "$ua can" "^some data$" $RDAX $A cat "$U/data/a2.txt"
check_output "$ub may still see its attributes (stat)" "Size: 10 " $RDAX $Bo stat "$U/data/a2.txt"
check_fails_output "$ub cannot overwrite it" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo put "$T/f.txt" "$U/data/a2.txt"
printf 'private\n' >"$T/data/adir/in.txt"
own $ua "$T/data/adir/in.txt"
chmod 0700 "$T/data/adir"
check_fails_output "$ub cannot delete a file in $ua's 0700 directory" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo rm "$U/data/adir/in.txt"
check "... it is still there" test -f "$T/data/adir/in.txt"
check_fails_output "$ub cannot list $ua's 0700 directory" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo ls "$U/data/adir"
check "$ua deletes it" $RDAX $A rm "$U/data/adir/in.txt"
check "... it is gone" test ! -e "$T/data/adir/in.txt"
check "$ua puts a file in a sticky directory" $RDAX $A put "$T/f.txt" "$U/data/sticky/s.txt"
check_fails_output "$ub cannot delete it there (sticky bit)" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo rm "$U/data/sticky/s.txt"
check "... it is still there" test -f "$T/data/sticky/s.txt"
check_fails_output "$ub cannot rename $ua's file out of the sticky directory" \
	"STATUS_ACCESS_DENIED" $RDAX $Bo mv "$U/data/sticky/s.txt" moved.txt
check "$ua deletes it" $RDAX $A rm "$U/data/sticky/s.txt"

# what the kernel refuses, request by request (identdeny.c)
printf 'alpha' >"$T/deny/a.txt"
printf 'secret' >"$T/deny/a600.txt"
mkdir "$T/deny/adir"
printf 'b' >"$T/deny/b.txt"
printf 'bravo' >"$T/deny/bsrc.txt"
own $ua "$T/deny/a.txt" "$T/deny/a600.txt" "$T/deny/adir"
own $ub "$T/deny/b.txt" "$T/deny/bsrc.txt"
chmod 0644 "$T/deny/a.txt" "$T/deny/b.txt" "$T/deny/bsrc.txt"
chmod 0600 "$T/deny/a600.txt"
chmod 0755 "$T/deny/adir"
check_output "set-info, rename and server-side copy: what the kernel refuses $ub is ACCESS_DENIED" \
	"^0 failed$" "$DENY" 127.0.0.1 "$PORT" deny "$T/deny" $ua "$T/$ua.pw" $ub "$T/$ub.pw"
grep -c '^ok:' "$T/check.out" | sed 's/^/    | ok lines: /'
grep '^FAIL' "$T/check.out" | sed 's/^/    | /'

# force user and force group decide ownership
check "$ua puts onto the force user = $ub share" $RDAX $A put "$T/f.txt" "$U/forced/f.txt"
check_output "... owned by $ub, group $grp" "^$ub:$grp$" owner "$T/forced/f.txt"
check "$ua makes a directory there" $RDAX $A mkdir "$U/forced/fdir"
check_output "... also $ub's, group $grp" "^$ub:$grp$" owner "$T/forced/fdir"
check "$ua (a member) puts onto force group = +$grp" $RDAX $A put "$T/f.txt" "$U/fgroup/a.txt"
check_output "... group $grp" "^$ua:$grp$" owner "$T/fgroup/a.txt"
check "$ub (not a member) puts there too" $RDAX $Bo put "$T/f.txt" "$U/fgroup/b.txt"
check_output "... keeps his own group" "^$ub:users$" owner "$T/fgroup/b.txt"
# with force user, the forced user's membership decides (Samba's rule)
check "$ub (not a member) puts onto force user = $ud (a member), +$grp" \
	$RDAX $Bo put "$T/f.txt" "$U/fmember/b.txt"
check_output "... $ud's, group $grp" "^$ud:$grp$" owner "$T/fmember/b.txt"
check "$ua (a member) puts onto force user = $ub (not one), +$grp" \
	$RDAX $A put "$T/f.txt" "$U/fnonmember/a.txt"
check_output "... $ub's, his own group" "^$ub:users$" owner "$T/fnonmember/a.txt"

# the guest and the username map
check "a guest puts onto the guest ok share" $RDAX --guest put "$T/f.txt" "$U/pub/g.txt"
check_output "... owned by nobody (guest account)" "^nobody:" owner "$T/pub/g.txt"
check "$smbc logs on (username map: $uc = $smbc)" \
	$RDAX --user $smbc --password-file "$T/$smbc.pw" put "$T/f.txt" "$U/data/c.txt"
check_output "... and acts as $uc" "^$uc:" owner "$T/data/c.txt"
check "rdaxd logged the mapping" grep -q "for $smbc as $uc" "$T/srv.log"
check_fails_output "a passdb user without a Unix account is refused" "STATUS_LOGON_FAILURE" \
	$RDAX --user "$ghost" --password-file "$T/ghost.pw" ls "$U/data"
check "... and rdaxd says why" grep -q "logon refused for '$ghost': no Unix account '$ghost'" "$T/srv.log"

# the share's own rules still apply on top
check_fails_output "read only: $ua cannot write her own file" "ACCESS_DENIED|WRITE_PROTECTED" \
	$RDAX $A put "$T/f.txt" "$U/ro/mine.txt"
check_output "... she can read it" "$ua owns this" $RDAX $A cat "$U/ro/mine.txt"
check_fails_output "valid users = $ub: $ua is refused" "STATUS_ACCESS_DENIED" \
	$RDAX $A ls "$U/vu"
check "... $ub is let in" $RDAX $Bo ls "$U/vu"
check_fails_output "a share $ua cannot enter (0700 root) is refused at tree connect" \
	"STATUS_ACCESS_DENIED" $RDAX $A ls "$U/closed"
check "... and rdaxd says why" grep -q "$ua (as $ua) may not enter share \[closed\]" "$T/srv.log"

# smbclient, a client that shares no code with rdax
sc() { smbclient -s /dev/null -p "$PORT" "$@"; }
cd "$T" || die "cd $T"
check "smbclient: $ua puts a file" sc //127.0.0.1/data -U "$ua%id pw $ua" -c "put f.txt sc.txt"
check_output "... owned by $ua" "^$ua:users$" owner "$T/data/sc.txt"
chmod 0600 "$T/data/sc.txt"
check_fails_output "smbclient: $ub cannot get it (0600)" "NT_STATUS_ACCESS_DENIED" \
	sc //127.0.0.1/data -U "$ub%id pw $ub" -c "get sc.txt sc.back"
check "... nothing was fetched" test ! -s "$T/sc.back"
check "smbclient: $ua can" sc //127.0.0.1/data -U "$ua%id pw $ua" -c "get sc.txt sc.back"
check "... byte-identical" cmp "$T/f.txt" "$T/sc.back"
check "smbclient: $ub mkdir" sc //127.0.0.1/data -U "$ub%id pw $ub" -c "mkdir bdir"
check_output "... owned by $ub" "^$ub:users$" owner "$T/data/bdir"
printf 'private\n' >"$T/data/adir/sc.txt"
own $ua "$T/data/adir/sc.txt"
check_fails_output "smbclient: $ub cannot delete from $ua's 0700 directory" "NT_STATUS_ACCESS_DENIED" \
	sc //127.0.0.1/data -U "$ub%id pw $ub" -c "del adir\\sc.txt"
check "... it is still there" test -f "$T/data/adir/sc.txt"
check "smbclient: $ua can" sc //127.0.0.1/data -U "$ua%id pw $ua" -c "del adir\\sc.txt"
check "... it is gone" test ! -e "$T/data/adir/sc.txt"
check "smbclient: $ua puts onto force user = $ub, force group = $grp" \
	sc //127.0.0.1/forced -U "$ua%id pw $ua" -c "put f.txt scf.txt"
check_output "... owned by $ub, group $grp" "^$ub:$grp$" owner "$T/forced/scf.txt"
check "smbclient: $ub puts onto force user = $ud, +$grp" \
	sc //127.0.0.1/fmember -U "$ub%id pw $ub" -c "put f.txt scm.txt"
check_output "... $ud's, group $grp" "^$ud:$grp$" owner "$T/fmember/scm.txt"
check "smbclient: anonymous (-N) puts onto the guest ok share" \
	sc //127.0.0.1/pub -N -c "put f.txt scg.txt"
check_output "... owned by nobody (guest account)" "^nobody:" owner "$T/pub/scg.txt"
check_fails_output "smbclient: a passdb user without a Unix account is refused" \
	"NT_STATUS_LOGON_FAILURE" sc //127.0.0.1/data -U "$ghost%id pw ghost" -c "ls"

# the capabilities: every thread of rdaxd (workers, identity threads,
# liburcu's) holds at most setuid setgid and, effective only at fsuid 0,
# the file-system capabilities root needs (chown dac_override
# dac_read_search fowner fsetid mknod; no rdma:// listener: no ipc_lock;
# the TCP port is bound before the drop: no net_bind_service), nothing
# else in any set, and a thread acting as a user (fsuid not 0) has no
# file-system capability in its effective set
# caps_check PID KEPT-HEX EXACT(0|1): EXACT: the main thread's permitted
# set is KEPT itself
caps_check() {
	python3 - "$@" <<'PY'
import glob, sys
pid, kept, exact = sys.argv[1], int(sys.argv[2], 16), sys.argv[3] == "1"
fs = sum(1 << c for c in (0, 1, 2, 3, 4, 9, 27, 32))	# capabilities(7): follow fsuid
bad, n, users = [], 0, 0
for st in sorted(glob.glob("/proc/%s/task/*/status" % pid)):
    try:
        f = dict(l.split(":", 1) for l in open(st).read().splitlines() if ":" in l)
    except OSError:
        continue
    n += 1
    tid = st.split("/")[4]
    fsuid = int(f["Uid"].split()[3])
    users += fsuid != 0
    c = {k: int(f[k].strip(), 16) for k in ("CapPrm", "CapEff", "CapBnd", "CapInh", "CapAmb")}
    if (c["CapPrm"] & ~kept or c["CapEff"] & ~kept or c["CapBnd"] != kept or c["CapInh"]
            or c["CapAmb"] or (exact and tid == pid and c["CapPrm"] != kept)
            or (fsuid and c["CapEff"] & fs)):
        bad.append("thread %s (%s, fsuid %d): %s" % (tid, f["Name"].strip(), fsuid,
                   " ".join("%s=%x" % kv for kv in c.items())))
print("%d threads, kept %x, %d acting as users" % (n, kept, users))
for b in bad:
    print("BAD " + b)
sys.exit(1 if bad or n < 3 else 0)
PY
}
kept=$(python3 -c 'print("%x" % sum(1 << c for c in (0, 1, 2, 3, 4, 6, 7, 27)))')
check_output "capabilities of every thread: at most setuid setgid and root's file-system ones" \
	"threads, kept $kept" caps_check "$RDAXD_PID" "$kept" 1
sed 's/^/    | /' "$T/check.out" | head -n 3
check "the start log says what it keeps" \
	grep -q "capabilities kept: setuid setgid chown dac_override dac_read_search fowner fsetid mknod$" "$T/srv.log"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# root acts as root: a session of root (force user = root) gives files
# away, changes their group and writes through mode bits; an ordinary
# user may not, and one worker serving both leaves the user none of
# root's powers (its fsuid lowers them). One worker: every request meets
# the thread the other left.
share_dir "$T/rt"
uidb=$(id -u $ub)
gidg=$(getent group "$grp" | cut -d: -f3)
cat >"$T/rt.conf" <<CONF
[global]
	passdb file = $T/passdb
[rt]
	path = $T/rt
	read only = no
	force user = root
[ut]
	path = $T/rt
	read only = no
CONF
start_rdaxd rt --config "$T/rt.conf" --workers 1
U="smb://127.0.0.1:$PORT"
# chown SHARE USER FILE owner|group ID: SET_INFO of the owner or group
chown_smb() {
	"$CHOWN" 127.0.0.1 "$PORT" "$1" "$2" "$T/$2.pw" "$3" "$4" "$5"
}
for f in gift own secret ro; do
	printf '%s\n' "$f" >"$T/rt/$f"
done
chown $ua:users "$T/rt/gift" "$T/rt/own" "$T/rt/secret" "$T/rt/ro"
chmod 0600 "$T/rt/gift" "$T/rt/own" "$T/rt/secret"
chmod 0444 "$T/rt/ro"
check "root session: chown $ua's file to $ub (SET_INFO owner)" \
	chown_smb rt $ua gift owner "$uidb"
check_output "... $ub's on disk" "^$ub:users$" owner "$T/rt/gift"
check "root session: chgrp it to $grp (SET_INFO group)" \
	chown_smb rt $ua gift group "$gidg"
check_output "... $grp on disk" "^$ub:$grp$" owner "$T/rt/gift"
check "root session: overwrites $ua's 0444 file (mode bits overridden)" \
	$RDAX $A put "$T/f.txt" "$U/rt/ro"
check_output "... the data is there" "^some data$" cat "$T/rt/ro"
check_fails_output "$ua (ordinary session) may not give her file to $ub" "STATUS_ACCESS_DENIED" \
	chown_smb ut $ua own owner "$uidb"
check_output "... still hers" "^$ua:users$" owner "$T/rt/own"
check_fails_output "... nor chgrp it to a group she is not in" "STATUS_ACCESS_DENIED" \
	chown_smb ut $ua own group 0
check_output "root session reads $ua's 0600 file" "^secret$" $RDAX $A cat "$U/rt/secret"
check_fails_output "... $ub (ordinary session, the same worker) may not" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo cat "$U/ut/secret"
check_fails_output "... nor overwrite $ua's 0444 file" "STATUS_ACCESS_DENIED" \
	$RDAX $Bo put "$T/f.txt" "$U/ut/ro"
check_output "the worker, acting as $ub: no file-system capability effective" \
	"threads, kept $kept, 1 acting as users" caps_check "$RDAXD_PID" "$kept" 1
sed 's/^/    | /' "$T/check.out" | head -n 3
# a write on a handle runs as whoever the worker last acted as; it must
# clear set-user-ID and set-group-ID bits unless root opened the file,
# as the kernel does (the root session holds CAP_FSETID)
for f in usuid rsuid; do
	head -c 4096 /dev/zero >"$T/rt/$f"
	chown $ua:users "$T/rt/$f"
	chmod 06777 "$T/rt/$f"
done
check "$ub writes into $ua's 06777 file right after a root session's request" \
	"$SUID" 127.0.0.1 "$PORT" ut $ub "$T/$ub.pw" rt $ua "$T/$ua.pw" usuid
check_output "... its set-ID bits are gone" "^777$" stat -c %a "$T/rt/usuid"
check "a root session writes into one right after $ub's request" \
	"$SUID" 127.0.0.1 "$PORT" rt $ua "$T/$ua.pw" ut $ub "$T/$ub.pw" rsuid
check_output "... its set-ID bits stay" "^6777$" stat -c %a "$T/rt/rsuid"
check "SIGTERM stops it cleanly" stop_rdaxd

# two users interleaved on one worker under load
share_dir "$T/leak"
for u in $ua $ub; do
	printf '%s secret\n' $u >"$T/leak/${u}_private"
	mkdir "$T/leak/${u}_dir"
	: >"$T/leak/${u}_dir/inside"
	own $u "$T/leak/${u}_private" "$T/leak/${u}_dir"
	chmod 0600 "$T/leak/${u}_private"
	chmod 0700 "$T/leak/${u}_dir"
done
start_rdaxd leak --share leak="$T/leak" --passdb "$T/passdb" --workers 1
check_output "interleaved on one worker: every request ran as its user" " 0 wrong$" \
	"$LEAK" 127.0.0.1 "$PORT" leak 150 $ua "$T/$ua.pw" $ub "$T/$ub.pw"
sed 's/^/    | /' "$T/check.out" | tail -n 3
for u in $ua $ub; do
	o=$([ $u = $ua ] && echo $ub || echo $ua)
	check_output "... all $((3 * 150)) files of $u are $u's" "^$((3 * 150)) 0$" \
		sh -c "echo \$(find '$T/leak' -maxdepth 1 -name '${u}_[0-9]*' -user $u | wc -l) \
			\$(find '$T/leak' -maxdepth 1 -name '${u}_[0-9]*' ! -user $u | wc -l)"
	check_output "... and all $((3 * 150)) of $u's directories" "^$((3 * 150))$" \
		sh -c "find '$T/leak/${u}_dir' -mindepth 1 -type d -user $u | wc -l"
	check "... none of $o's in $u's directory" \
		sh -c "! find '$T/leak/${u}_dir' -mindepth 1 -user $o | grep -q ."
done
check "SIGTERM stops it cleanly" stop_rdaxd

# the DAX store (libpmem2 on this file system, cache-line persistence
# forced, as dax_store.sh does): each user's opens map files with that
# user's access; a reader of another user's 0644 file maps it read-only
# (it used to fall back to the posix store: "no DAX mapping"), and a
# writer arriving while the reader has it makes the mapping writable
E=$B/fio-rdax.so
[ -f "$E" ] || die "$E not built (make fio)"
need fio
share_dir "$T/dx"
export PMEM2_FORCE_GRANULARITY=CACHE_LINE
start_rdaxd dx --share dx="$T/dx" --store dax --passdb "$T/passdb"
unset PMEM2_FORCE_GRANULARITY
U="smb://127.0.0.1:$PORT"
check "[dx] is on the DAX store" grep -q "share \[dx\]: store dax" "$T/dx.log"
F="--ioengine=external:$E --hostname=127.0.0.1 --port=$PORT --share=dx --filename=w.bin"
Fa="$F --user=$ua --password_file=$T/$ua.pw"
Fb="$F --user=$ub --password_file=$T/$ub.pw"
check "$ub writes an 8 MiB file" fio --name=lay $Fb --rw=write --bs=1m --size=8m
check "... and overwrites it in place (through the mapping)" \
	fio --name=over $Fb --rw=randwrite --bs=64k --size=8m --iodepth=4
check_output "... it is $ub's, 0644" "^$ub:users 644$" stat -c '%U:%G %a' "$T/dx/w.bin"
# zero-copy bytes sent and received by all workers since start
zc_total() { worker_stat "$T/dx.log" tcp_zero_copy_bytes; }
zc0=$(zc_total)
check "$ua (not the owner) reads it" fio --name=rd $Fa --rw=read --bs=1m --size=8m
zc1=$(zc_total)
check "... sent from the mapping ($((zc1 - zc0)) bytes zero-copy)" test $((zc1 - zc0)) -ge $((8 << 20))
# fio runs as a function (lib.sh: a sanitizer build preloads its runtimes)
read_while_written() {
	fio --name=rd2 $Fa --rw=randread --bs=64k --size=8m --time_based=1 --runtime=3 \
		>"$T/fio-rd.out" 2>&1 &
	r=$!
	sleep 1
	fio --name=wr2 $Fb --rw=randwrite --bs=64k --size=8m --time_based=1 --runtime=1 \
		>"$T/fio-wr.out" 2>&1 || { wait $r; return 1; }
	wait $r
}
check "$ua reads it while $ub writes it: the reader opens first" read_while_written
check_output "$ua fetches it: the same bytes as on disk" "^ok$" \
	sh -c "$RDAX $A get '$U/dx/w.bin' '$T/w.back' 2>&1 && cmp '$T/dx/w.bin' '$T/w.back' && echo ok"
kill -USR1 "$RDAXD_PID"
sleep 0.5
check "no open of a user fell back to the posix store" sh -c "! grep -E 'no DAX mapping|not made writable' '$T/dx.log'"
check_output "SIGUSR1: the users' writes went through the mapping" "dax_mapped_writes [1-9]" \
	sh -c "grep 'stats share \[dx\]' '$T/dx.log' | tail -n 1"
sed 's/^/    | /' "$T/check.out"
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
map_case "a loop" "bad.map:2: names map to each other in a loop: $ub -> $ua \(line 2\) -> $ub \(line 3\)" \
	"# comment\n$ua = $ub\n$ub = $ua\n"
map_case "a missing Unix user" "bad.map:3: no Unix user 'nosuchuser$$'" \
	"$uc = $smbc\n\nnosuchuser$$ = someone\n"
map_case "a line without =" "bad.map:2: no '='" "$uc = $smbc\njust words\n"
map_case "no SMB names" "bad.map:1: no SMB names after '=' for '$uc'" "$uc =\n"
map_case "an unclosed quote" "bad.map:1: a quote is not closed" "$uc = \"smb carol\n"
map_case "a missing group" "bad.map:1: no Unix group 'nosuchgroup$$'" "$uc = @nosuchgroup$$\n"
map_case "a netgroup" "bad.map:1: '&ng': NIS netgroups are not supported" "$uc = &ng\n"

# ... and at reload: each bad map is refused with its file and line, the
# map in use stays, and rdaxd keeps serving
cp "$T/map" "$T/live.map"
printf '[global]\n\tusername map = %s/live.map\n' "$T" >"$T/live.conf"
start_rdaxd live --config "$T/live.conf" --share d="$T/data" --passdb "$T/passdb"
U="smb://127.0.0.1:$PORT"
n=0
reload_case() { # DESC PATTERN MAP-TEXT
	printf '%b' "$3" >"$T/live.map"
	n0=$(wc -l <"$T/live.log")
	kill -HUP "$RDAXD_PID"
	i=0
	until tail -n +$((n0 + 1)) "$T/live.log" | grep -q "reload: "; do
		i=$((i + 1))
		[ $i -gt 50 ] && break
		sleep 0.1
	done
	check_output "reload, $1: refused, naming file and line" \
		"reload failed, nothing changed: username map .*live.map:$2" \
		sh -c "tail -n +$((n0 + 1)) '$T/live.log'"
	n=$((n + 1))
	check "... rdaxd serves: $smbc logs on and puts a file" \
		$RDAX --user $smbc --password-file "$T/$smbc.pw" put "$T/f.txt" "$U/d/r$n.txt"
	check_output "... still as $uc (the map in use)" "^$uc:" owner "$T/data/r$n.txt"
	check "... and $ua too" $RDAX $A put "$T/f.txt" "$U/d/ra$n.txt"
}
reload_case "a loop" "1: names map to each other in a loop: $ub -> $ua \(line 1\) -> $ub \(line 2\)" \
	"$ua = $ub\n$ub = $ua\n"
reload_case "a missing Unix user" "2: no Unix user 'nosuchuser$$'" \
	"!$ua = $smbc\nnosuchuser$$ = x\n"
reload_case "a bad line" "3: no '='" "# a comment\n!$ua = $smbc\nbad line here\n"
check "... the ratelimit did not hide any of them" \
	test "$(grep -c 'reload failed, nothing changed: username map' "$T/live.log")" = 3
printf '!%s = %s\n' $ua $smbc >"$T/live.map"
kill -HUP "$RDAXD_PID"
sleep 0.5
check "a good map reloads" grep -q "reload: reloaded .*passdb .*username map" "$T/live.log"
check "... and new sessions use it: $smbc acts as $ua" \
	$RDAX --user $smbc --password-file "$T/$smbc.pw" put "$T/f.txt" "$U/d/c3.txt"
check_output "... (owned by $ua)" "^$ua:" owner "$T/data/c3.txt"
check "SIGTERM stops it cleanly" stop_rdaxd

# run as an ordinary user: everyone acts as that user, force user
# ignored, no capability at all in any thread
share_dir "$T/solo"
own $ua "$T/solo"
cp "$T/passdb" "$T/solo.passdb"
own $ua "$T/solo.passdb"
chmod 0600 "$T/solo.passdb"
cat >"$T/solo.conf" <<CONF
[solo]
	path = $T/solo
	read only = no
	force user = $ub
CONF
chmod 0644 "$T/solo.conf"
PORT=$(free_port)
setpriv --reuid=$ua --regid=users --clear-groups --inh-caps=-all --bounding-set=-all \
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
	grep -q "no CAP_SETUID/CAP_SETGID: every session acts as uid $(id -u $ua).*capabilities kept: none" \
	"$T/solo.log"
check "... and that force user is ignored" grep -q "share \[solo\]: force user/group ignored" "$T/solo.log"
check_output "... every thread: no capability (CapPrm=0)" "threads, kept 0," caps_check "$RDAXD_PID" 0 1
check "$ub logs on and puts a file" $RDAX $Bo put "$T/f.txt" "smb://127.0.0.1:$PORT/solo/b.txt"
check_output "... owned by $ua, the user rdaxd runs as" "^$ua:users$" owner "$T/solo/b.txt"
check "the ghost user logs on: no Unix account is needed" \
	$RDAX --user "$ghost" --password-file "$T/ghost.pw" ls "smb://127.0.0.1:$PORT/solo"
check "SIGTERM stops it cleanly" stop_rdaxd
setpriv --reuid=$ua --regid=users --clear-groups --inh-caps=-all \
	"$RDAXD" --share s="$T/solo" --guest --listen tcp://127.0.0.1:445 >"$T/solo445.log" 2>&1
check "as an ordinary user, port 445 is refused (status 1)" test $? = 1
check_output "... saying why" "listen tcp://127.0.0.1:445: Permission denied" cat "$T/solo445.log"
finish
