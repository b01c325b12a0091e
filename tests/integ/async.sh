#!/bin/sh
# SPDX-License-Identifier: MIT
# The asynchronous API (rdax_ioq) against rdaxd and Samba smbd over TCP.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/async_io" ] || die "$B/tests/async_io not built (make tests)"
share_dir "$T/share"
make_user "$T/passdb" alice 'async pass'
start_rdaxd srv --share data="$T/share" --guest --passdb "$T/passdb"
for qd in 1 8 32; do
	check "rdax_ioq at depth $qd against rdaxd" \
		"$B/tests/async_io" --guest "smb://127.0.0.1:$PORT/data/async$qd.bin" $qd
	sed 's/^/    /' "$T/check.out" | grep -v '^    ok:' | head -5
done
# signed: the client says so (async_io fails unless rdax_conn_info shows
# signing), and so does rdaxd's log line of the session
n0=$(wc -l <"$T/srv.log")
check_output "rdax_ioq at depth 8 on a signed session" "^session: .*, signing on" \
	"$B/tests/async_io" --sign --user alice --password-file "$T/alice.pw" \
	"smb://127.0.0.1:$PORT/data/signed.bin" 8
sed 's/^/    /' "$T/check.out" | grep -v '^    ok:' | head -5
check_output "... rdaxd logged the session signed" "session .* for alice as alice, SMB 3.1.1, signed" \
	tail -n +$((n0 + 1)) "$T/srv.log"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# the same cases against Samba smbd
need smbd smbpasswd
if [ "$(id -u)" = 0 ]; then
	. "$top/tools/lib/smbd.sh"
	if scratch_smbd "$T/smbd" data; then
		pids="$pids $SMBD_PID"
		SA="--user root --password-file $T/smbd/root.pw"
		for qd in 1 8 32; do
			check "rdax_ioq at depth $qd against smbd" \
				"$B/tests/async_io" $SA "smb://127.0.0.1:$SMBD_PORT/data/async$qd.bin" $qd
			sed 's/^/    /' "$T/check.out" | grep -v '^    ok:' | head -5
		done
		check_output "rdax_ioq at depth 8 on a signed session against smbd" "^session: .*, signing on" \
			"$B/tests/async_io" --sign $SA "smb://127.0.0.1:$SMBD_PORT/data/signed.bin" 8
		sed 's/^/    /' "$T/check.out" | grep -v '^    ok:' | head -5
	else
		not_ok "smbd did not start"
	fi
else
	skip_case smbd "smbd must run as root to switch to the session user"
fi

# a link that stalls or trickles (tests/integ/relay.c), then a server
# that dies: bounded waits, every request reported exactly once
share_dir "$T/share2"
start_rdaxd srv2 --share data="$T/share2" --guest
start_relay
check "reap and delete bounded; requests reported once when the server dies" \
	"$B/tests/async_faults" "smb://127.0.0.1:$RPORT/data" "$RELAY_PID" \
	"smb://127.0.0.1:$PORT/data" "$RDAXD_PID"
sed 's/^/    /' "$T/check.out"
finish
