#!/bin/sh
# SPDX-License-Identifier: MIT
# librdax's contract at its edges against rdaxd (tests/integ/libapi.c):
# error messages and statuses per call, errnos of long names and unknown
# hosts, request timeout values, and no SIGPIPE when the server dies.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/libapi" ] || die "$B/tests/libapi not built (make tests)"
share_dir "$T/share"
start_rdaxd srv --share data="$T/share" --guest
closed=$(free_port)
"$B/tests/libapi" "smb://127.0.0.1:$PORT/data" "$closed" "$RDAXD_PID" >"$T/libapi.out" 2>&1
rc=$?
cat "$T/libapi.out"
case $rc in
0) ok "librdax edge cases" ;;
141) not_ok "libapi was killed by SIGPIPE" ;;
*) not_ok "libapi exited with $rc" ;;
esac
finish
