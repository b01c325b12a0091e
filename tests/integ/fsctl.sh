#!/bin/sh
# SPDX-License-Identifier: MIT
# FSCTLs on files through rdaxd: sparse files, zero-data and allocated
# ranges round trips and bad input (tests/integ/fsctl.c, a raw client);
# and server-side copy by
# duplicate extents: on an XFS with reflink (a loop device) `rdax cp` of
# 64 MiB shares the extents (FSCTL_DUPLICATE_EXTENTS_TO_FILE, the data
# not copied: the shared flag in the extent map, the free space barely
# moves), on the test directory's file system (no reflink) it falls back
# to COPYCHUNK.
. "$(dirname "$0")/lib.sh"
need filefrag mkfs.xfs
[ -x "$B/tests/fsctl" ] || die "$B/tests/fsctl not built (make tests)"

share_dir "$T/share"
make_user "$T/passdb" fsuser 'fs pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
A="--user fsuser --password-file $T/fsuser.pw"

check "sparse, zero-data, allocated ranges, bad input (raw client)" \
	"$B/tests/fsctl" -u fsuser -A "$T/fsuser.pw" 127.0.0.1 "$PORT" data
sed 's/^/    | /' "$T/check.out"

# server-side copy on a file system without reflink: COPYCHUNK
head -c $((64 << 20)) /dev/urandom >"$T/share/big.bin"
own fsuser "$T/share/big.bin"
check_output "rdax cp without reflink: COPYCHUNK" "server-side copy \(COPYCHUNK\)" \
	$RDAX $A --stats cp "smb://127.0.0.1:$PORT/data/big.bin" copy.bin
check "... byte-identical" cmp "$T/share/big.bin" "$T/share/copy.bin"
check "rdaxd survived" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# reflink: both servers' share on an XFS made here
if reflink_fs "$T/xfs" 300; then
	share_dir "$T/xfs/share"
	cat >"$T/xfs.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/xfs/share
	read only = no
CONF
	start_rdaxd xsrv --config "$T/xfs.conf"
	check "the raw cases on XFS" "$B/tests/fsctl" -u fsuser -A "$T/fsuser.pw" \
		127.0.0.1 "$PORT" data
	head -c $((64 << 20)) /dev/urandom >"$T/xfs/share/big.bin"
	own fsuser "$T/xfs/share/big.bin"
	sync
	free0=$(df -k --output=used "$T/xfs" | tail -n 1)
	check_output "rdax cp of 64 MiB on XFS: duplicate extents" \
		"server-side copy, extents shared \(FSCTL_DUPLICATE_EXTENTS_TO_FILE\)" \
		$RDAX $A --stats cp "smb://127.0.0.1:$PORT/data/big.bin" copy.bin
	sed 's/^/    | /' "$T/check.out"
	check "... byte-identical" cmp "$T/xfs/share/big.bin" "$T/xfs/share/copy.bin"
	sync
	free1=$(df -k --output=used "$T/xfs" | tail -n 1)
	check_output "... the copy's extents are shared (filefrag -v)" "shared" \
		filefrag -v "$T/xfs/share/copy.bin"
	used=$((free1 - free0))
	if [ "$used" -lt 8192 ]; then
		ok "... the file system's used space grew by $used KiB for 64 MiB"
	else
		not_ok "... used space grew by $used KiB for 64 MiB"
	fi
	check_output "rdax cp --client-copy on XFS still reads and writes" \
		"data through the client" \
		$RDAX $A --stats --client-copy cp "smb://127.0.0.1:$PORT/data/big.bin" copy2.bin
	check "... byte-identical" cmp "$T/xfs/share/big.bin" "$T/xfs/share/copy2.bin"
	check_output "rdax cp --copychunk on XFS: COPYCHUNK, no shared extents asked" \
		"server-side copy \(COPYCHUNK\)" \
		$RDAX $A --stats --copychunk cp "smb://127.0.0.1:$PORT/data/big.bin" copy3.bin
	check "... byte-identical" cmp "$T/xfs/share/big.bin" "$T/xfs/share/copy3.bin"
	check "rdaxd on XFS survived" kill -0 "$RDAXD_PID"
	check "SIGTERM stops it cleanly" stop_rdaxd
else
	skip_case "duplicate extents on XFS" "$REFLINK_WHY"
fi
finish
