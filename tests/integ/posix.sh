#!/bin/sh
# SPDX-License-Identifier: MIT
# SMB3 POSIX extensions against a real rdaxd (docs/posix.md): rdax
# negotiates them where "smb3 unix extensions = yes", sees modes, owners
# and symlinks (FilePosixInformation), makes symlinks kept as real ones
# on disk, chmods; names differing only in case are two files. Symlink
# targets leaving the share (absolute, "..", over-long) are refused and
# rdaxd keeps serving. A share without the extensions refuses all this.
# POSIX unlink and rename semantics (FileDispositionInformationEx,
# FileRenameInformationEx; cifs.ko 6.1 sends neither): a raw client,
# tests/integ/posix_sem.c.
# Special files from NFS reparse buffers (tests/integ/specfile.c, as
# cifs.ko after 6.1 sends them): only on a share with "rdax special
# files"; devices only for a root session (CAP_MKNOD), not for a user.
# Samba 4.17's smbd and smbclient have no SMB3 POSIX extensions
# (lp_smb2_unix_extensions() is hard-wired off): no calibration here.
. "$(dirname "$0")/lib.sh"

S=$T/share
share_dir "$S" "$T/plain" "$T/sp"
chmod 0777 "$T/sp"
printf 'pw\n' >"$T/pw"
chmod 600 "$T/pw"
"$RDAX" passwd --passdb "$T/passdb" "$(id -un)" <"$T/pw" || die "rdax passwd"
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	smb3 unix extensions = yes
[px]
	path = $S
	read only = no
[plain]
	path = $T/plain
	read only = no
	smb3 unix extensions = no
[sp]
	path = $T/sp
	read only = no
	rdax special files = yes
CONF
start_rdaxd srv --config "$T/smb.conf"
R() { "$RDAX" --user "$(id -un)" --password-file "$T/pw" "$@"; }
U=smb://127.0.0.1:$PORT/px
P=smb://127.0.0.1:$PORT/plain

printf 'data\n' >"$S/f.txt"
chmod 0640 "$S/f.txt"
check_output "stat shows the POSIX mode and owner" \
	"Mode: 0640  Uid: $(id -u)  Gid: $(id -g)" R stat "$U/f.txt"
check "chmod 0604 through rdax" R chmod 604 "$U/f.txt"
check_output "the mode on the server's disk" '^604$' stat -c %a "$S/f.txt"
check "ln -s f.txt link" R ln -s f.txt "$U/link"
check_output "a real symlink on disk" '^f.txt$' readlink "$S/link"
check_output "readlink through rdax" '^f.txt$' R readlink "$U/link"
check_output "ls -l shows it as a link with its target" '^lrwxrwxrwx .* link -> f.txt$' \
	R ls -l "$U/"
check_output "ls -l shows the mode of the file" '^-rw----r-- .* f.txt$' R ls -l "$U/"
check_output "cat through the link reads the file" '^data$' R cat "$U/link"
mkdir -p "$S/d/e"
chmod 0777 "$S/d" "$S/d/e"
check "a link with .. staying inside the share" R ln -s ../f.txt "$U/d/up"
check_output "  is made" '^../f.txt$' readlink "$S/d/up"
check_fails_output "an absolute target is refused" 'denied' R ln -s /etc/passwd "$U/abs"
check_fails_output "a target climbing out of the share is refused" 'denied' \
	R ln -s ../../etc/passwd "$U/d/out"
check_fails_output "  from deeper too" 'denied' R ln -s ../../../x "$U/d/e/out"
long=$(head -c 5000 /dev/zero | tr '\0' a)
check_fails "an over-long target is refused" R ln -s "$long" "$U/long"
check_output "nothing refused left a file behind" '^d f.txt link$' \
	sh -c "cd '$S' && echo *"
# a symlink made on the server that points out: rdaxd never follows it
ln -s /etc/hostname "$S/escape"
check_fails "reading a link that leaves the share fails" R cat "$U/escape"
check_output "  but readlink shows it" '^/etc/hostname$' R readlink "$U/escape"
printf 'one\n' >"$S/Case"
printf 'two\n' >"$S/case"
check_output "names differing in case are two files" '^one$' R cat "$U/Case"
check_output "  and the other" '^two$' R cat "$U/case"
check "rm of the link removes the link only" R rm "$U/link"
check "  the file is still there" test -f "$S/f.txt"
check_fails "  the link is gone" test -L "$S/link"
# the share without the extensions
printf 'x\n' >"$T/plain/g"
check_fails_output "a share without them: no symlink" 'not supported' R ln -s g "$P/l"
check_output "  stat still works there" 'Mode: 0' R stat "$P/g"
check_output "  and ls" ' g$' R ls "$P/"
check_output "  and nothing made" '^g$' sh -c "cd '$T/plain' && echo *"
[ -x "$B/tests/posix_sem" ] || die "$B/tests/posix_sem not built (make tests)"
mkdir -p "$S/sem"
chmod 0777 "$S/sem"
check "POSIX unlink and rename semantics, bad input (raw client)" \
	"$B/tests/posix_sem" -u "$(id -un)" -A "$T/pw" 127.0.0.1 "$PORT" px "$S"
sed 's/^/    | /' "$T/check.out"
# special files: SPEC SHARE USER PWFILE NAME KIND [MAJOR MINOR]
SPEC=$B/tests/specfile
[ -x "$SPEC" ] || die "$SPEC not built (make tests)"
spec() { "$SPEC" 127.0.0.1 "$PORT" "$@"; }
me=$(id -un)
check_fails_output "a FIFO where the share does not allow special files: refused" \
	STATUS_ACCESS_DENIED spec px "$me" "$T/pw" nofifo fifo
check "$me makes a FIFO on [sp]" spec sp "$me" "$T/pw" fifo fifo
check "  a FIFO on disk" test -p "$T/sp/fifo"
if [ "$(id -u)" = 0 ]; then
	check "a root session makes a character device (1,3) on [sp]" \
		spec sp "$me" "$T/pw" null chr 1 3
	check_output "  on disk" "^character special file 1 3$" stat -c '%F %t %T' "$T/sp/null"
	pu=rxp$$
	make_user "$T/passdb" $pu "pw $pu"
	kill -HUP "$RDAXD_PID"
	sleep 0.5
	check "$pu (ordinary user) makes a FIFO on [sp]" spec sp $pu "$T/$pu.pw" ufifo fifo
	check_output "  $pu's" "^$pu fifo$" stat -c '%U %F' "$T/sp/ufifo"
	check_fails_output "  but not a device (no CAP_MKNOD for a user)" STATUS_ACCESS_DENIED \
		spec sp $pu "$T/$pu.pw" unull chr 1 3
	check_fails "  no device on disk" test -c "$T/sp/unull"
else
	skip_case "devices on [sp]" "a root session and a second user need root"
fi
check_output "rdaxd keeps serving" '^data$' R cat "$U/f.txt"
finish
