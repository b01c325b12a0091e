#!/bin/sh
# SPDX-License-Identifier: MIT
# Server-side copy on rdaxd: `rdax cp` on one share moves 64 MiB without
# the data crossing the wire (round trips and wire bytes from --stats);
# the FSCTL limits, resume-key rules, partial results and access rules on
# the wire (tests/integ/copychunk.c); smbtorture's copy-chunk tests.
. "$(dirname "$0")/lib.sh"
need smbtorture
[ -x "$B/tests/copychunk" ] || die "$B/tests/copychunk not built (make tests)"

share_dir "$T/share" "$T/other" "$T/pub" "$T/ro"
make_user "$T/passdb" alice 'copy pass'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
[other]
	path = $T/other
	read only = no
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
[ro]
	path = $T/ro
	read only = yes
CONF
start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
A="--user alice --password-file $T/alice.pw"
head -c $((64 << 20)) /dev/urandom >"$T/share/big.bin"
own alice "$T/share/big.bin"

# round_trips FILE / wire_bytes FILE: figures of `rdax --stats` output
round_trips() { sed -n 's/.* \([0-9][0-9]*\) round trips* (+.*/\1/p' "$1" | tail -n 1; }
wire_bytes() { sed -n 's/.*on the wire \([0-9]*\) bytes sent, \([0-9]*\) received.*/\1 \2/p' "$1" | head -n 1; }
# check_range DESC VALUE MIN MAX
check_range() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		ok "$1 ($2)"
	else
		not_ok "$1: '$2' not in [$3, $4]"
	fi
}

check_output "cp of 64 MiB on one share is a server-side copy" "cp: server-side copy" \
	$RDAX $A --stats cp "$U/data/big.bin" copy.bin
cp "$T/check.out" "$T/server.stats"
sed 's/^/    | /' "$T/server.stats"
check "the copy is byte-identical" cmp "$T/share/big.bin" "$T/share/copy.bin"
rt=$(round_trips "$T/server.stats")
set -- $(wire_bytes "$T/server.stats")
# open, resume key, 4 x 16 MiB COPYCHUNK, close
check_range "server-side: round trips (4 COPYCHUNK + open, key, close)" "$rt" 5 8
check_range "server-side: bytes sent on the wire" "${1:-}" 1 65536
check_range "server-side: bytes received on the wire" "${2:-}" 1 65536

check_output "cp --client-copy reads and writes through the client" \
	"cp: data through the client" \
	$RDAX $A --stats --client-copy cp "$U/data/big.bin" copy2.bin
cp "$T/check.out" "$T/client.stats"
sed 's/^/    | /' "$T/client.stats"
check "the client copy is byte-identical" cmp "$T/share/big.bin" "$T/share/copy2.bin"
rt=$(round_trips "$T/client.stats")
set -- $(wire_bytes "$T/client.stats")
check_range "client path: round trips (8 READ + 8 WRITE + setup)" "$rt" 16 64
check_range "client path: bytes sent (the data)" "${1:-}" $((64 << 20)) $((80 << 20))
check_range "client path: bytes received (the data)" "${2:-}" $((64 << 20)) $((80 << 20))

# destinations
head -c $((80 << 20)) /dev/urandom >"$T/share/longer.bin"
own alice "$T/share/longer.bin"
check "cp over a longer file" $RDAX $A cp "$U/data/big.bin" longer.bin
check "... truncates it to the source" cmp "$T/share/big.bin" "$T/share/longer.bin"
share_dir "$T/share/dir1"
check "cp into a directory" $RDAX $A cp "$U/data/big.bin" dir1
check "... keeps the source's name" cmp "$T/share/big.bin" "$T/share/dir1/big.bin"
check "cp to a URL on the same share" $RDAX $A cp "$U/data/big.bin" "$U/data/dir1/u.bin"
check "... is byte-identical" cmp "$T/share/big.bin" "$T/share/dir1/u.bin"
printf 'slash\n' >"$T/share/t.txt"
own alice "$T/share/t.txt"
check "cp into a directory given as dir1/" $RDAX $A cp "$U/data/t.txt" dir1/
check "... lands in dir1/t.txt" cmp "$T/share/t.txt" "$T/share/dir1/t.txt"
share_dir "$T/share/dir2"
check "cp into a directory given as a URL ending in /" $RDAX $A cp "$U/data/t.txt" "$U/data/dir2/"
check "... lands in dir2/t.txt" cmp "$T/share/t.txt" "$T/share/dir2/t.txt"
check_fails "cp into a missing dir9/ fails" $RDAX $A cp "$U/data/t.txt" dir9/
check "... and creates nothing" test ! -e "$T/share/dir9"
: >"$T/share/empty"
own alice "$T/share/empty"
check "cp of an empty file" $RDAX $A cp "$U/data/empty" copy.bin
check "... empties the destination" test ! -s "$T/share/copy.bin"
printf 'small\n' >"$T/share/small.txt"
own alice "$T/share/small.txt"
check "cp of a 6-byte file" $RDAX $A --server-copy cp "$U/data/small.txt" s2.txt
check "... is byte-identical" cmp "$T/share/small.txt" "$T/share/s2.txt"

# errors name the server, the path and the NTSTATUS
check_fails_output "cp of a missing file names server, path and status" \
	"smb://127.0.0.1:$PORT/data/nothere.bin.*nothere.bin.*STATUS_OBJECT_NAME_NOT_FOUND" \
	$RDAX $A cp "$U/data/nothere.bin" created.bin
check "... and creates no destination" test ! -e "$T/share/created.bin"
check_fails_output "cp onto itself is refused" "same file" \
	$RDAX $A cp "$U/data/big.bin" big.bin
check "... and leaves the file alone" cmp "$T/share/big.bin" "$T/share/copy2.bin"
echo hello >"$T/ro/r.txt"
check_fails_output "cp within a read-only share fails" "ACCESS_DENIED|WRITE_PROTECTED" \
	$RDAX $A cp "$U/ro/r.txt" r2.txt
check "... and writes nothing" test ! -e "$T/ro/r2.txt"

# across shares: through the client
check_output "cp to another share goes through the client" \
	"destination: data through the client" \
	$RDAX $A --stats cp "$U/data/big.bin" "$U/other/x.bin"
check "... byte-identical" cmp "$T/share/big.bin" "$T/other/x.bin"
check "cp from a read-only share to another" $RDAX $A cp "$U/ro/r.txt" "$U/data/r.txt"
check "... byte-identical" cmp "$T/ro/r.txt" "$T/share/r.txt"
check_fails_output "--server-copy across shares is refused" "not on one share" \
	$RDAX $A --server-copy cp "$U/data/big.bin" "$U/other/y.bin"

# a server without server-side copy (the relay turns resume key requests
# into an FSCTL rdaxd does not know): --server-copy fails before it
# touches the destination; without it the copy goes through the client
start_relay --no-resume-key
R="smb://127.0.0.1:$RPORT"
printf 'keep me\n' >"$T/pub/keep.txt"
printf 'the source\n' >"$T/pub/src.txt"
own nobody "$T/pub/src.txt" "$T/pub/keep.txt"
check_fails_output "--server-copy on a server without server-side copy fails" \
	"no server-side copy.*resume key refused" \
	$RDAX --guest --server-copy cp "$R/pub/src.txt" keep.txt
check "... and leaves the existing destination as it was" grep -qx "keep me" "$T/pub/keep.txt"
check_fails "--server-copy to a new destination fails too" \
	$RDAX --guest --server-copy cp "$R/pub/src.txt" new.txt
check "... and creates none" test ! -e "$T/pub/new.txt"
check_output "without --server-copy the copy goes through the client" \
	"cp: data through the client" $RDAX --guest --stats cp "$R/pub/src.txt" keep.txt
check "... and replaces the destination" cmp "$T/pub/src.txt" "$T/pub/keep.txt"

# the protocol, raw
check "COPYCHUNK limits, keys, partial results, access (raw client)" \
	"$B/tests/copychunk" 127.0.0.1 "$PORT" pub
sed 's/^/    | /' "$T/check.out"

for t in req_resume_key req_two_resume_keys copy_chunk_simple \
	copy_chunk_multi copy_chunk_tiny copy_chunk_overwrite \
	copy_chunk_append copy_chunk_limits copy_chunk_src_lock \
	copy_chunk_dest_lock copy_chunk_bad_key copy_chunk_src_is_dest \
	copy_chunk_src_is_dest_overlap copy_chunk_bad_access \
	copy_chunk_write_access copy_chunk_src_exceed \
	copy_chunk_src_exceed_multi copy_chunk_sparse_dest \
	copy_chunk_max_output_sz copy_chunk_zero_length \
	copy_chunk_across_shares copy_chunk_across_shares2 \
	copy_chunk_across_shares3; do
	check_output "smbtorture smb2.ioctl.$t" "^success: " \
		timeout 120 smbtorture -s /dev/null //127.0.0.1/data -p "$PORT" \
		-U 'alice%copy pass' "smb2.ioctl.$t"
done

check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
