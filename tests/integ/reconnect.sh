#!/bin/sh
# SPDX-License-Identifier: MIT
# librdax survives a dropped connection: `rdax put` and `rdax get` of a
# large file, and fio with the rdax engine and verify, go through a TCP
# relay (tests/integ/relay.c) that is killed mid-transfer and started
# again on the same port. The client connects
# again by itself (PreviousSessionId, its durable handle back with DH2C),
# sends again what was in flight with the replay flag, and the transfer
# ends with no error and the data intact; rdax --stats shows the
# reconnect and rdaxd logs the durable reconnect.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/relay" ] || die "$B/tests/relay not built (make tests)"
SIZE_MB=${RDAX_RECON_MB:-128}

share_dir "$T/share"
chmod 0777 "$T/share"
make_user "$T/passdb" alice 'recon pw alice'
start_rdaxd srv -v --share data="$T/share" --guest --passdb "$T/passdb"
log=$T/srv.log
head -c $((SIZE_MB << 20)) /dev/urandom >"$T/src.bin"

RPORT=$(free_port)
relay_up() {
	"$B/tests/relay" "$RPORT" "$PORT" >>"$T/relay.log" 2>&1 &
	RELAY_PID=$!
	pids="$pids $RELAY_PID"
	_i=0
	until python3 -c "import socket; socket.create_connection(('127.0.0.1', $RPORT), 1)" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -gt 100 ] && die "relay not listening after 10 s"
		sleep 0.1
	done
}

# cut_when FILE PID: once FILE holds 4 MiB (the transfer of PID is under
# way), the relay holds the server's answers back (SIGUSR1: the transfer
# stalls with requests in flight), then is killed (every connection
# through it drops at once) and started again on the same port
cut_when() {
	_i=0
	while [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -lt $((4 << 20)) ] &&
		[ $_i -lt 400 ] && kill -0 "$2" 2>/dev/null; do
		sleep 0.02
		_i=$((_i + 1))
	done
	kill -USR1 "$RELAY_PID"
	sleep 0.3
	kill -9 "$RELAY_PID"
	wait "$RELAY_PID" 2>/dev/null
	pids=$(echo "$pids" | sed "s/ $RELAY_PID//")
	relay_up
}

U="smb://127.0.0.1:$RPORT/data"

# put: the relay is killed while the writes go
relay_up
n0=$(wc -l <"$log")
$RDAX --guest --stats -q put "$T/src.bin" "$U/put.bin" >"$T/put.out" 2>&1 &
cpid=$!
cut_when "$T/share/put.bin" $cpid
wait $cpid
rc=$?
sed 's/^/    | /' "$T/put.out"
[ $rc = 0 ] && ok "rdax put through a connection cut mid-transfer: no error" ||
	not_ok "rdax put failed (exit $rc) when the connection was cut"
check "... the data arrived intact" cmp "$T/src.bin" "$T/share/put.bin"
grep -q '^reconnects 1: 1 durable handles back, 0 lost' "$T/put.out" &&
	ok "... rdax_conn_stats shows the reconnect and the handle back" ||
	not_ok "rdax_conn_stats shows no reconnect"
grep -q 'reconnected to 127.0.0.1' "$T/put.out" &&
	ok "... librdax said it reconnected" || not_ok "no reconnect notice"
tail -n +$((n0 + 1)) "$log" | grep -q 'durable open .* reconnected' &&
	ok "... rdaxd logged the durable reconnect" ||
	not_ok "rdaxd logged no durable reconnect"

# the same on an encrypted session: the replayed WRITEs are encrypted
# with the new session's keys
n0=$(wc -l <"$log")
$RDAX --user alice --password-file "$T/alice.pw" --encrypt --stats -q \
	put "$T/src.bin" "$U/enc.bin" >"$T/enc.out" 2>&1 &
cpid=$!
cut_when "$T/share/enc.bin" $cpid
wait $cpid
rc=$?
sed 's/^/    | /' "$T/enc.out"
[ $rc = 0 ] && ok "encrypted rdax put through a cut connection: no error" ||
	not_ok "encrypted rdax put failed (exit $rc) when the connection was cut"
check "... the data arrived intact" cmp "$T/src.bin" "$T/share/enc.bin"
grep -q '^reconnects 1: 1 durable handles back, 0 lost' "$T/enc.out" &&
	ok "... rdax_conn_stats shows the reconnect" || not_ok "no reconnect in the stats"

# get: the relay is killed while the reads go
n0=$(wc -l <"$log")
$RDAX --guest --stats -q get "$U/put.bin" "$T/got.bin" >"$T/get.out" 2>&1 &
cpid=$!
cut_when "$T/got.bin" $cpid
wait $cpid
rc=$?
sed 's/^/    | /' "$T/get.out"
[ $rc = 0 ] && ok "rdax get through a connection cut mid-transfer: no error" ||
	not_ok "rdax get failed (exit $rc) when the connection was cut"
check "... the data read is intact" cmp "$T/src.bin" "$T/got.bin"
grep -q '^reconnects 1: 1 durable handles back, 0 lost' "$T/get.out" &&
	ok "... rdax_conn_stats shows the reconnect" || not_ok "no reconnect in the stats"
tail -n +$((n0 + 1)) "$log" | grep -q 'durable open .* reconnected' &&
	ok "... rdaxd logged the durable reconnect" ||
	not_ok "rdaxd logged no durable reconnect"

# fio with the rdax engine (the asynchronous queue) and verify: the
# connection is cut while writes are queued
E=$B/fio-rdax.so
need fio
[ -f "$E" ] || die "$E not built (make)"
n0=$(wc -l <"$log")
(cd "$T" && fio --output-format=json --output="$T/fio.json" --name=recon \
	--ioengine="external:$E" --hostname=127.0.0.1 --port="$RPORT" --share=data --guest=1 \
	--filename=fio.bin --rw=write --bs=64k --size=256m --iodepth=16 \
	--verify=crc32c --verify_state_save=0 >"$T/fio.out" 2>&1) &
cpid=$!
cut_when "$T/share/fio.bin" $cpid
wait $cpid
rc=$?
sed 's/^/    | /' "$T/fio.out" | tail -n 5
python3 - "$T/fio.json" >"$T/fio.res" 2>&1 <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("error %d, wrote %d B, read %d B (verify)" % (j["error"], j["write"]["io_bytes"],
                                                  j["read"]["io_bytes"]))
sys.exit(1 if j["error"] or j["write"]["io_bytes"] != 256 << 20 or
         j["read"]["io_bytes"] != 256 << 20 else 0)
PY
frc=$?
sed 's/^/    /' "$T/fio.res"
[ $rc = 0 ] && [ $frc = 0 ] &&
	ok "fio (rdax engine, QD16) write + crc32c verify through a cut connection: no error" ||
	not_ok "fio through a cut connection (exit $rc)"
tail -n +$((n0 + 1)) "$log" | grep -q 'durable open .* reconnected' &&
	ok "... rdaxd logged the durable reconnect" ||
	not_ok "rdaxd logged no durable reconnect under fio"

# a drop while the application is idle: its next call finds it
mkdir "$T/idle"
n0=$(wc -l <"$log")
"$B/tests/recon_idle" --guest "$U/idle.bin" "$T/idle" >"$T/idle.out" 2>&1 &
cpid=$!
_i=0
while [ ! -e "$T/idle/idle" ] && [ $_i -lt 400 ] && kill -0 $cpid 2>/dev/null; do
	sleep 0.05
	_i=$((_i + 1))
done
kill -9 "$RELAY_PID"
wait "$RELAY_PID" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $RELAY_PID//")
relay_up
touch "$T/idle/go"
wait $cpid
rc=$?
sed 's/^/    /' "$T/idle.out"
[ $rc = 0 ] && ok "a drop while idle: the next calls go on ($(grep -c '^ok:' "$T/idle.out") checks)" ||
	not_ok "a drop while idle (exit $rc)"
check "... the file on the share is what was written" test "$(stat -c %s "$T/share/idle.bin")" = 2097152

rdaxd_idle "$log" && ok "no connection, session or open is left" ||
	not_ok "state left in rdaxd"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
