#!/bin/sh
# SPDX-License-Identifier: MIT
# The asynchronous API (rdax_ioq) against rdaxd and Samba smbd over TCP.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/async_io" ] || die "$B/tests/async_io not built (make tests)"
mkdir -p "$T/share"
start_rdaxd srv --share data="$T/share" --guest
for qd in 1 8 32; do
	check "rdax_ioq at depth $qd against rdaxd" \
		"$B/tests/async_io" --guest "smb://127.0.0.1:$PORT/data/async$qd.bin" $qd
	sed 's/^/    /' "$T/check.out" | grep -v '^    ok:' | head -5
done
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
