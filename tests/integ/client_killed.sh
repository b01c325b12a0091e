#!/bin/sh
# SPDX-License-Identifier: MIT
# Clients killed (SIGKILL) in the middle of a READ or a WRITE over TCP,
# on a posix share and on a DAX share (where READ answers are sent from
# the file's mapping and large WRITEs land in it straight from the
# socket): rdaxd frees that client's connection, session, opens and
# credits, its counters (SIGUSR1) and descriptors go back to where they
# were, DAX files are no longer mapped, and it keeps serving another
# client throughout. The SMB-Direct twin is tests/vm/check-rdax.
#
#  - raw READs: 64 READs of 1 MiB sent, no answer ever read (the answers
#    pile up in rdaxd's send queue), then kill -9
#  - raw WRITE: an 8 MiB WRITE of which half the payload was sent, kill -9
#  - the rdax CLI through tests/integ/relay holding the server's answers:
#    `rdax get` and `rdax put` blocked mid-transfer, kill -9
. "$(dirname "$0")/lib.sh"
A=$B/tests/abuse
[ -x "$A" ] || die "$A not built (make tests)"

share_dir "$T/px" "$T/dax" "$T/local"
cat >"$T/smb.conf" <<CONF
[global]
	guest ok = yes
[px]
	path = $T/px
	store = posix
	read only = no
[dax]
	path = $T/dax
	store = dax
	read only = no
CONF
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
log=$T/srv.log
head -c $((64 << 20)) /dev/urandom >"$T/local/big.bin"
cp "$T/local/big.bin" "$T/px/big.bin"
cp "$T/local/big.bin" "$T/dax/big.bin"

fds() { ls "/proc/$RDAXD_PID/fd" | wc -l; }
# usr1: the counters of every worker and share, in $T/stats
usr1() {
	n0=$(wc -l <"$log")
	kill -USR1 "$RDAXD_PID"
	i=0
	while [ $i -lt 20 ]; do
		sleep 0.1
		tail -n +$((n0 + 1)) "$log" | grep 'stats ' >"$T/stats"
		[ "$(grep -c 'stats worker' "$T/stats")" -ge 1 ] &&
			grep -q 'stats share \[dax\]' "$T/stats" && return 0
		i=$((i + 1))
	done
	return 1
}
# sum FIELD: the sum over the workers of "FIELD N" in $T/stats
sum() { sed -n "s/.* $1 \([0-9]*\).*/\1/p" "$T/stats" | awk '{ s += $1 } END { print s + 0 }'; }
# baseline: connections, sessions and opens back to 0, DAX files
# unmapped, descriptors back to $fd0 (within 10 s)
baseline() {
	i=0
	while [ $i -lt 50 ]; do
		if usr1 && [ "$(sum connections)" = 0 ] && [ "$(sum sessions)" = 0 ] &&
			[ "$(sum opens)" = 0 ] && [ "$(sum rdma_io)" = 0 ] &&
			grep -q 'stats share \[dax\]: .* dax_files 0 dax_mapped 0 ' "$T/stats" &&
			[ "$(fds)" -le "$fd0" ]; then
			return 0
		fi
		i=$((i + 1))
		sleep 0.2
	done
	echo "connections $(sum connections) sessions $(sum sessions) opens $(sum opens) fds $(fds) (baseline $fd0)"
	cat "$T/stats"
	return 1
}
# wait_for FILE PATTERN: up to 10 s
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}
# open_held: within 20 s a client has an open (and is stuck: the open
# stays for another second)
open_held() {
	i=0
	while [ $i -lt 100 ]; do
		if usr1 && [ "$(sum opens)" = 1 ]; then
			sleep 1
			usr1 && [ "$(sum opens)" = 1 ] && return 0
		fi
		i=$((i + 1))
		sleep 0.2
	done
	cat "$T/stats"
	return 1
}
# serving SHARE: another client gets the 64 MiB file, byte-identical
serving() {
	$RDAX --guest -q get "$U/$1/big.bin" "$T/local/check.bin" &&
		cmp "$T/local/big.bin" "$T/local/check.bin"
}

check "rdaxd serves before" serving px
sleep 0.5
fd0=$(fds)
check "baseline counters: no connection, session or open" baseline

for sh in px dax; do
	# 1. READs whose answers are never read
	"$A" 127.0.0.1 "$PORT" "$sh" stall-read big.bin 64 >"$T/stall.out" 2>&1 &
	cpid=$!
	check "$sh: raw client sent 64 x 1 MiB READs and reads nothing" wait_for "$T/stall.out" stalled
	sleep 1
	usr1
	check "$sh: ... rdaxd holds its connection and open meanwhile" \
		test "$(sum connections)" = 1 -a "$(sum opens)" = 1
	check "$sh: ... and serves another client" serving "$sh"
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	check "$sh: kill -9 mid-READ: connection, session, open, fds released" baseline

	# 2. a WRITE cut off in the middle of its payload
	"$A" 127.0.0.1 "$PORT" "$sh" stall-write cut.bin >"$T/stall.out" 2>&1 &
	cpid=$!
	check "$sh: raw client sent half of an 8 MiB WRITE" wait_for "$T/stall.out" stalled
	sleep 0.5
	usr1
	check "$sh: ... rdaxd holds its connection and open meanwhile" \
		test "$(sum connections)" = 1 -a "$(sum opens)" = 1
	check "$sh: ... and serves another client" serving "$sh"
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	check "$sh: kill -9 mid-WRITE: connection, session, open, fds released" baseline

	# 3. the CLI, its answers trickling through the relay (256 bytes
	# every 100 ms): it logs on, opens, and is then stuck mid-transfer.
	# --no-durable: a durable open outlives its client by design (60 s,
	# tests/integ/reconnect.sh and caching.sh); here it must go at once
	start_relay
	kill -USR2 "$RELAY_PID"
	sleep 0.2
	$RDAX --guest -q --no-durable get "smb://127.0.0.1:$RPORT/$sh/big.bin" "$T/local/got.bin" \
		>/dev/null 2>&1 &
	cpid=$!
	check "$sh: rdax get stuck mid-READ (answers trickle): rdaxd holds its open" \
		open_held
	check "$sh: ... and serves another client" serving "$sh"
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	check "$sh: kill -9 of rdax get: everything released" baseline

	head -c $((256 << 20)) /dev/zero >"$T/local/zero.bin"
	$RDAX --guest -q --no-durable put "$T/local/zero.bin" "smb://127.0.0.1:$RPORT/$sh/put.bin" \
		>/dev/null 2>&1 &
	cpid=$!
	check "$sh: rdax put stuck mid-WRITE (answers trickle): rdaxd holds its open" \
		open_held
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	check "$sh: kill -9 of rdax put: everything released" baseline
	kill "$RELAY_PID"
	wait "$RELAY_PID" 2>/dev/null
	check "$sh: rdaxd serves after the kills" serving "$sh"
done

check "the DAX share's file is intact" cmp "$T/local/big.bin" "$T/dax/big.bin"
check "the posix share's file is intact" cmp "$T/local/big.bin" "$T/px/big.bin"
check "rdaxd is still running" kill -0 "$RDAXD_PID"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd
finish
