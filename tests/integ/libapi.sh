#!/bin/sh
# SPDX-License-Identifier: MIT
# librdax's contract at its edges against rdaxd (tests/integ/libapi.c):
# error messages and statuses per call, errnos of long names and unknown
# hosts, request timeout values, no SIGPIPE when the server dies, the
# rules of the 1.0 API (EINVAL for flags and reserved fields, min before
# max, the thread's message, silence without a log callback), and the
# ABI: soname librdax.so.1, exports exactly rdax.h's functions at RDAX_1.N
# (src/librdax.map: a new symbol goes in a new node that inherits the last).
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/libapi" ] || die "$B/tests/libapi not built (make tests)"
share_dir "$T/share"
start_rdaxd srv --share data="$T/share" --guest
closed=$(free_port)
"$B/tests/libapi" "smb://127.0.0.1:$PORT/data" "$closed" "$RDAXD_PID" >"$T/libapi.out" 2>"$T/libapi.err"
rc=$?
cat "$T/libapi.out"
case $rc in
0) ok "librdax edge cases" ;;
141) not_ok "libapi was killed by SIGPIPE" ;;
*) not_ok "libapi exited with $rc" ;;
esac
# the library prints nothing of its own (libapi itself writes to stdout)
check "nothing on stderr" test ! -s "$T/libapi.err"
[ -s "$T/libapi.err" ] && sed 's/^/    | /' "$T/libapi.err" | head -n 10

# --- the ABI librdax.so exports: what rdax.h declares, at RDAX_1.N ---
so=$B/librdax.so
check_output "soname librdax.so.1" "SONAME.*\[librdax\.so\.1\]" readelf -d "$so"
objdump -T "$so" | awk '$4 == ".text" || $4 == ".data" || $4 == ".bss" { print $(NF-1), $NF }' |
	sort >"$T/exports"
sed -n 's/^RDAX_API[^(]*[ *]\(rdax_[a-z0-9_]*\)(.*/\1/p' "$top/include/rdax.h" | sort >"$T/declared"
check "every export is rdax_* at RDAX_1.N" sh -c "! grep -v '^RDAX_1\.[0-9][0-9]* rdax_' '$T/exports'"
# rdax_cfg_set_rdma_transform came in RDAX_1.1; what was there stays at 1.0
check "rdax_cfg_set_rdma_transform is at RDAX_1.1, the rest at RDAX_1.0" sh -c \
	"grep -qx 'RDAX_1.1 rdax_cfg_set_rdma_transform' '$T/exports' && ! grep -v -e '^RDAX_1\.0 ' -e '^RDAX_1\.1 rdax_cfg_set_rdma_transform\$' '$T/exports'"
awk '{ print $2 }' "$T/exports" | sort >"$T/exported"
check "exported symbols are exactly rdax.h's RDAX_API functions" cmp -s "$T/declared" "$T/exported"
cmp -s "$T/declared" "$T/exported" || diff "$T/declared" "$T/exported" | sed 's/^/    | /'
check "rdax_passdb_set is not exported" sh -c "! nm -D '$so' | grep -q passdb"
check "... nor declared" sh -c "! grep -q passdb '$top/include/rdax.h'"
finish
