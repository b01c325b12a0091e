#!/bin/sh
# SPDX-License-Identifier: MIT
# librdax's lease cache (tests/integ/leases.c) against rdaxd and Samba
# smbd: a repeated stat under a lease costs no request at all, counted by
# rdaxd (the requests of the sessions, SIGUSR1, before and after), and
# one request chain each without leases; another client's write breaks
# the lease and the next stat sees the new size; the client's own writes,
# rename and unlink stay coherent. A client idle outside librdax hears a
# break only when its poll loop serves rdax_conn_fd (tests/integ/idle_break.c).
. "$(dirname "$0")/lib.sh"
BIN=$B/tests/leases
IDLE=$B/tests/idle_break
[ -x "$BIN" ] && [ -x "$IDLE" ] || die "$BIN or $IDLE not built (make tests)"
REPEAT=50

share_dir "$T/share"
chmod 0777 "$T/share"
make_user "$T/passdb" alice 'lease pw alice'
start_rdaxd srv -v --share data="$T/share" --guest --passdb "$T/passdb"
log=$T/srv.log

# the requests rdaxd counted on every session, now (SIGUSR1)
srv_requests() {
	_n0=$(wc -l <"$log")
	kill -USR1 "$RDAXD_PID"
	sleep 0.5
	tail -n +$((_n0 + 1)) "$log" | grep 'stats session' |
		grep -o ' requests [0-9]*' | awk '{ n += $2 } END { print n + 0 }'
}

# run_hold LABEL ARGS...: leases with --hold; sets DELTA, rdaxd's
# request count across the first stat and the repeated ones
run_hold() {
	_l=$1
	shift
	rm -rf "$T/hold"
	mkdir "$T/hold"
	"$BIN" --hold "$T/hold" "$@" >"$T/$_l.out" 2>&1 &
	_pid=$!
	_i=0
	while [ ! -e "$T/hold/first" ] && [ $_i -lt 200 ] && kill -0 $_pid 2>/dev/null; do
		sleep 0.05
		_i=$((_i + 1))
	done
	_r0=$(srv_requests)
	touch "$T/hold/go1"
	_i=0
	while [ ! -e "$T/hold/second" ] && [ $_i -lt 200 ] && kill -0 $_pid 2>/dev/null; do
		sleep 0.05
		_i=$((_i + 1))
	done
	_r1=$(srv_requests)
	touch "$T/hold/go2"
	wait $_pid
	_rc=$?
	sed 's/^/    /' "$T/$_l.out"
	DELTA=$((_r1 - _r0))
	echo "    rdaxd: $DELTA requests across 1 + $REPEAT stats ($_r0 -> $_r1)"
	[ $_rc = 0 ] && ok "$_l: $(grep -c '^ok:' "$T/$_l.out") checks" ||
		not_ok "$_l (exit $_rc)"
}

run_hold leases --guest "smb://127.0.0.1:$PORT/data" $REPEAT
[ "$DELTA" = 2 ] &&
	ok "rdaxd saw CREATE and QUERY_INFO for the first stat, no request for $REPEAT more" ||
	not_ok "rdaxd saw $DELTA requests for 1 + $REPEAT stats under a lease (2 expected)"
run_hold no-leases --no-leases --guest "smb://127.0.0.1:$PORT/data" $REPEAT
[ "$DELTA" = $((3 * (REPEAT + 1))) ] &&
	ok "without leases rdaxd saw CREATE, QUERY_INFO and CLOSE for each stat: $DELTA requests" ||
	not_ok "without leases rdaxd saw $DELTA requests for 1 + $REPEAT stats ($((3 * (REPEAT + 1))) expected)"
# an idle client hears a break only through its own poll loop
check "a break reaches an idle client through rdax_conn_fd/rdax_conn_service" \
	"$IDLE" --guest "smb://127.0.0.1:$PORT/data"
sed 's/^/    /' "$T/check.out"
grep -q 'stats caching: .*breaks [1-9]' "$log" &&
	ok "rdaxd counted the lease breaks" || not_ok "rdaxd counted no break"
# encrypted: break notifications come in clear (SessionId 0) or encrypted
check "leases on an encrypted session" "$BIN" --encrypt --user alice \
	--password-file "$T/alice.pw" "smb://127.0.0.1:$PORT/data" $REPEAT
sed 's/^/    /' "$T/check.out" | grep -v '^    ok:'
check "nothing is left in the share" sh -c "[ -z \"\$(ls -A '$T/share')\" ]"
rdaxd_idle "$log" && ok "no connection, session or open is left" ||
	not_ok "state left in rdaxd"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# the same against Samba smbd (the client's own counters)
need smbd smbpasswd
if [ "$(id -u)" = 0 ]; then
	. "$top/tools/lib/smbd.sh"
	if scratch_smbd "$T/smbd" data; then
		pids="$pids $SMBD_PID"
		chmod 0777 "$T/smbd/data"
		SA="--user root --password-file $T/smbd/root.pw"
		check "leases against smbd" "$BIN" $SA "smb://127.0.0.1:$SMBD_PORT/data" $REPEAT
		sed 's/^/    /' "$T/check.out"
		check "a break reaches an idle client of smbd through its poll loop" \
			"$IDLE" $SA "smb://127.0.0.1:$SMBD_PORT/data"
		sed 's/^/    /' "$T/check.out"
		check "no leases against smbd" "$BIN" --no-leases $SA \
			"smb://127.0.0.1:$SMBD_PORT/data" $REPEAT
		sed 's/^/    /' "$T/check.out" | grep -v '^    ok:'
		check "leases on an encrypted session against smbd" "$BIN" --encrypt $SA \
			"smb://127.0.0.1:$SMBD_PORT/data" $REPEAT
		sed 's/^/    /' "$T/check.out" | grep -v '^    ok:'
	else
		not_ok "smbd did not start"
	fi
else
	skip_case smbd "smbd must run as root to switch to the session user"
fi
finish
