#!/bin/sh
# SPDX-License-Identifier: MIT
# DOS attributes and birth times move with a share between Samba and
# rdaxd: files whose attributes (READONLY, HIDDEN, SYSTEM, ARCHIVE, a
# directory's) and birth times a real Samba smbd set ("store dos
# attributes = yes", acl_xattr and streams_xattr) look the same through
# rdaxd, and what rdaxd sets looks the same through Samba (smbclient
# allinfo and ls against both). READONLY is enforced as Samba enforces
# it. A share on a file system without user xattrs (ramfs) keeps them
# in mode bits and says so in the log, once.
. "$(dirname "$0")/lib.sh"
need smbd smbclient smbpasswd python3 unshare
[ "$(id -u)" = 0 ] || skip "smbd must run as root, and ramfs needs a mount"

. "$top/tools/lib/smbd.sh"
SMBD_GLOBAL="vfs objects = acl_xattr streams_xattr
	store dos attributes = yes"
scratch_smbd "$T/smbd" sam rdx || die "smbd did not start"
pids="$pids $SMBD_PID"
SPW=$(cat "$T/smbd/root.pw")

# rdaxd serves the same two directories; its user acts as root, as
# Samba's does, so either server may change what the other wrote
make_user "$T/passdb" root 'root pw'
mkdir -p "$T/nox"
chmod 0777 "$T/nox"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[sam]
	path = $T/smbd/sam
	read only = no
[rdx]
	path = $T/smbd/rdx
	read only = no
[nox]
	path = $T/nox
	read only = no
	map readonly = yes
	map hidden = yes
CONF
# [nox] is a ramfs (no user xattrs) mounted in rdaxd's own namespace
cat >"$T/rdaxd-ns" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount -t ramfs none "$T/nox" &&
	chmod 0777 "$T/nox" && exec "\$0" "\$@"' "$RDAXD" "\$@"
EOF
chmod +x "$T/rdaxd-ns"
RDAXD_REAL=$RDAXD
RDAXD=$T/rdaxd-ns
start_rdaxd srv --config "$T/smb.conf"
RDAXD=$RDAXD_REAL

printf 'hello\n' >"$T/f.txt"
printf 'hello again, longer\n' >"$T/g.txt"

# smb SERVER SHARE CMDS: smbclient against smbd or rdaxd, in $T, UTC
smb() {
	if [ "$1" = smbd ]; then
		p=$SMBD_PORT u="root%$SPW"
	else
		p=$PORT u="root%root pw"
	fi
	(cd "$T" && TZ=UTC timeout 60 smbclient "//127.0.0.1/$2" -p "$p" -U "$u" -c "$3" 2>&1) |
		grep -vE '^(time|Try "help")|blocks of size|^[[:space:]]*$'
}

# what a file looks like: attributes and times of allinfo, its ls line
# (name, attributes, size)
view() {
	smb "$1" "$2" "allinfo $3" | grep -E '^(create_time|write_time|change_time|attributes|NT_STATUS)'
	smb "$1" "$2" "ls $3" | awk '{ $NF = $(NF-1) = $(NF-2) = $(NF-3) = $(NF-4) = ""; print }'
}

# write WRITER SHARE: the same files and attributes, made through WRITER
write_set() {
	smb "$1" "$2" 'put f.txt plain.txt; put f.txt h.txt; setmode h.txt +h;
		put f.txt rs.txt; setmode rs.txt +rs; put f.txt n.txt; setmode n.txt -a;
		put f.txt .dot; mkdir hd; setmode hd +h; mkdir rd; setmode rd +r;
		put f.txt t.txt; utimes t.txt 2001:02:03-04:05:06 -1 2002:03:04-05:06:07 -1' \
		>"$T/write.$1.out"
	grep NT_STATUS "$T/write.$1.out" | sed 's/^/    | /'
}

NAMES="plain.txt h.txt rs.txt n.txt .dot hd rd t.txt"

# compare WRITER OTHER SHARE: every file through both servers
compare() {
	bad=0
	for n in $NAMES; do
		view "$1" "$3" "$n" >"$T/view.$1.$n"
		view "$2" "$3" "$n" >"$T/view.$2.$n"
		if ! grep -q '^attributes' "$T/view.$1.$n" || ! cmp -s "$T/view.$1.$n" "$T/view.$2.$n"; then
			bad=1
			echo "    $n through $1:"
			sed 's/^/    | /' "$T/view.$1.$n"
			echo "    $n through $2:"
			sed 's/^/    | /' "$T/view.$2.$n"
		fi
	done
	return $bad
}

# --- Samba writes, rdaxd reads ---
write_set smbd sam
check_output "Samba kept rs.txt as READONLY|SYSTEM|ARCHIVE" 'attributes: RSA \(25\)' \
	smb smbd sam 'allinfo rs.txt'
check_output "Samba kept t.txt's birth time" 'create_time: +Sat Feb  3 04:05:06 2001 UTC' \
	smb smbd sam 'allinfo t.txt'
if compare smbd rdaxd sam; then
	ok "what Samba set ($NAMES) looks the same through rdaxd: attributes, birth and write times, listing"
else
	not_ok "what Samba set looks different through rdaxd"
fi

# --- rdaxd writes, Samba reads ---
write_set rdaxd rdx
check_output "rdaxd kept rs.txt as READONLY|SYSTEM|ARCHIVE" 'attributes: RSA \(25\)' \
	smb rdaxd rdx 'allinfo rs.txt'
check_output "rdaxd kept t.txt's birth time" 'create_time: +Sat Feb  3 04:05:06 2001 UTC' \
	smb rdaxd rdx 'allinfo t.txt'
if compare rdaxd smbd rdx; then
	ok "what rdaxd set ($NAMES) looks the same through Samba"
else
	not_ok "what rdaxd set looks different through Samba"
fi
blob=$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.DOSATTRIB").hex())' \
	"$T/smbd/rdx/rs.txt")
case $blob in
00000500050000001100000025000000????????????????) ok "rdaxd wrote Samba's version 5 blob ($blob)" ;;
*) not_ok "rdaxd's user.DOSATTRIB of rs.txt: $blob" ;;
esac
# as Samba: READONLY lives in the xattr, the mode keeps its write bit
check "READONLY left rs.txt's mode bits alone" test -w "$T/smbd/rdx/rs.txt"

# --- the same answers to what READONLY forbids, and what it allows ---
for s in smbd rdaxd; do
	share=sam
	[ $s = rdaxd ] && share=rdx
	smb $s $share 'put f.txt rs.txt; rm rs.txt; rename rs.txt rs2.txt; allinfo rs2.txt;
		put g.txt rs2.txt; setmode rs2.txt -r; put g.txt rs2.txt; setmode rs2.txt -s;
		put g.txt rs2.txt; allinfo rs2.txt; rm rs2.txt; ls rs*' |
		grep -E 'NT_STATUS|^attributes' >"$T/ro.$s"
done
if cmp -s "$T/ro.smbd" "$T/ro.rdaxd" && grep -q 'NT_STATUS_ACCESS_DENIED opening' "$T/ro.rdaxd" &&
   grep -q 'NT_STATUS_CANNOT_DELETE' "$T/ro.rdaxd"; then
	ok "READONLY: write ACCESS_DENIED, delete CANNOT_DELETE, rename and clearing it allowed; an overwrite that drops SYSTEM ACCESS_DENIED, as Samba"
else
	not_ok "READONLY answers differ from Samba's"
	sed 's/^/    | smbd:  /' "$T/ro.smbd"
	sed 's/^/    | rdaxd: /' "$T/ro.rdaxd"
fi

# --- the birth time stays across opens and an overwrite ---
smb rdaxd rdx 'allinfo plain.txt' | grep create_time >"$T/bt1"
sleep 1.1
smb rdaxd rdx 'put g.txt plain.txt' >/dev/null
smb rdaxd rdx 'allinfo plain.txt' | grep create_time >"$T/bt2"
smb smbd rdx 'allinfo plain.txt' | grep create_time >"$T/bt3"
if [ -s "$T/bt1" ] && cmp -s "$T/bt1" "$T/bt2" && cmp -s "$T/bt1" "$T/bt3"; then
	ok "the birth time stays when the file is overwritten ($(cat "$T/bt1"))"
else
	not_ok "the birth time moved: $(cat "$T/bt1" "$T/bt2" "$T/bt3" | tr -s ' ')"
fi

# --- no user xattrs: mode bits, as "store dos attributes = no", logged once ---
smb rdaxd nox 'put f.txt a.txt; put f.txt b.txt; setmode b.txt +h; put f.txt c.txt;
	setmode c.txt +r; put f.txt d.txt; setmode d.txt -a' >"$T/nox.out"
smb rdaxd nox 'ls' >"$T/nox.ls"
mode() { stat -c %A "/proc/$RDAXD_PID/root$T/nox/$1"; }
if grep -Eq '^ +a\.txt +A ' "$T/nox.ls" && grep -Eq '^ +b\.txt +AH ' "$T/nox.ls" &&
   grep -Eq '^ +c\.txt +AR ' "$T/nox.ls" && grep -Eq '^ +d\.txt +N ' "$T/nox.ls" &&
   [ "$(mode a.txt)" = -rwxr--r-- ] && [ "$(mode b.txt)" = -rwxr--r-x ] &&
   [ "$(mode c.txt)" = -r-xr--r-- ] && [ "$(mode d.txt)" = -rw-r--r-- ]; then
	ok "on ramfs: ARCHIVE u+x, HIDDEN o+x, READONLY no write bits (map archive, map hidden, map readonly = yes)"
else
	not_ok "on ramfs the attributes are not in the mode bits"
	sed 's/^/    | /' "$T/nox.out" "$T/nox.ls"
	for f in a b c d; do echo "    | $f.txt $(mode $f.txt)"; done
fi
n=$(grep -c 'no user extended attributes' "$T/srv.log")
if [ "$n" = 1 ]; then
	ok "rdaxd logged once that [nox] keeps DOS attributes in mode bits"
else
	not_ok "the log says $n times that [nox] has no user xattrs (once expected)"
fi

check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
