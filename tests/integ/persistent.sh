#!/bin/sh
# SPDX-License-Identifier: MIT
# Persistent handles on continuously available shares survive kill -9 of
# rdaxd (tests/integ/caching.c "persist" on the wire): a client holds a
# persistent open with an RWH lease and a byte-range lock when rdaxd is
# killed; after the restart the journal brings the open back, another
# client still meets its lock, and the client reconnects its handle with
# its lease, reads what it wrote, unlocks and goes on. Run on a posix
# share (journal with RWF_DSYNC) and on a DAX share (libpmem2's test
# switch PMEM2_FORCE_GRANULARITY maps an ordinary file system), and on a
# CA share a reload added (its journal set up as at start). A
# damaged journal slot is skipped with a log line, and rdaxd still starts.
. "$(dirname "$0")/lib.sh"
BIN=$B/tests/caching
[ -x "$BIN" ] || die "$BIN not built (make tests)"

make_user "$T/passdb" alice 'ca pw alice'
E=$B/fio-rdax.so
need fio
export CACHE_USER=alice CACHE_PW='ca pw alice' CACHE_USER2=alice CACHE_PW2='ca pw alice'

# hold_across_kill NAME CONF OUT: the client opens a persistent handle
# on [ca] at $port and holds it while rdaxd is killed with -9 and started
# again (NAME, CONF) on the same port; the client's exit status, its
# output in OUT
hold_across_kill() {
	rm -rf "$T/hold"
	mkdir "$T/hold"
	CACHE_HOLD=$T/hold "$BIN" 127.0.0.1 "$port" ca persist >"$3" 2>&1 &
	cpid=$!
	i=0
	while [ ! -e "$T/hold/opened" ] && [ $i -lt 200 ] && kill -0 $cpid 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$RDAXD_PID"
	wait "$RDAXD_PID" 2>/dev/null
	# the same port again, so the client reconnects where it was
	RDAXD_PORT=$port start_rdaxd "$1" -v --config "$2"
	touch "$T/hold/restarted"
	wait $cpid
}

for store in posix dax; do
	# the dax run maps ordinary files (the journal too) with libpmem2
	[ $store = dax ] && export PMEM2_FORCE_GRANULARITY=CACHE_LINE
	share_dir "$T/$store"
	chmod 0777 "$T/$store"
	mkdir -p "$T/state-$store"
	cat >"$T/$store.conf" <<CONF
[global]
	passdb file = $T/passdb
	state directory = $T/state-$store
[ca]
	path = $T/$store
	store = $store
	read only = no
	continuous availability = yes
CONF
	start_rdaxd "$store" -v --config "$T/$store.conf"
	log=$T/$store.log
	port=$PORT
	grep -q "ca journal .*: $([ $store = dax ] && echo 'on persistent memory' || echo 'written with RWF_DSYNC')" "$log" &&
		ok "$store: the log says how the journal is kept" ||
		not_ok "$store: no log line for the journal"
	hold_across_kill "$store-2" "$T/$store.conf" "$T/$store.out"
	rc=$?
	sed 's/^/    /' "$T/$store.out"
	[ $rc = 0 ] && ok "$store: the persistent handle survives kill -9: $(grep -c '^ok:' "$T/$store.out") wire checks" ||
		not_ok "$store: the persistent handle did not survive kill -9 (exit $rc)"
	grep -q "persistent open restored from the journal" "$T/$store-2.log" &&
		ok "$store: the restarted rdaxd says it restored the open" ||
		not_ok "$store: no log line for the restored open"
	grep -q "durable open of ca.txt reconnected" "$T/$store-2.log" &&
		ok "$store: ... and that the client reconnected it" ||
		not_ok "$store: no log line for the reconnect"

	# librdax holds its handles across the restart: the fio engine writes
	# and verifies a file while rdaxd is killed and started again
	if [ -f "$E" ]; then
		n0=$(grep -c "persistent open restored" "$T/$store-2.log")
		(cd "$T" && fio --name=ca-$store \
			--ioengine=external:"$E" --hostname=127.0.0.1 --port="$port" \
			--share=ca --user=alice --password_file="$T/alice.pw" \
			--filename=fio-$store.dat --rw=write --bs=64k --size=12m --rate=2m \
			--iodepth=4 --verify=crc32c --verify_state_save=0 --do_verify=1) \
			>"$T/fio-$store.out" 2>&1 &
		fpid=$!
		# until fio has written 1 MiB through its handle
		i=0
		while kill -0 $fpid 2>/dev/null && [ $i -lt 300 ] &&
		      [ "$(stat -c %s "$T/$store/fio-$store.dat" 2>/dev/null || echo 0)" -lt 1048576 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$RDAXD_PID"
		wait "$RDAXD_PID" 2>/dev/null
		RDAXD_PORT=$port start_rdaxd "$store-3" -v --config "$T/$store.conf"
		wait $fpid
		rc=$?
		grep -E "fio-rdax|err=|verify" "$T/fio-$store.out" | sed 's/^/    /'
		[ $rc = 0 ] && ok "$store: fio through librdax writes and verifies across kill -9" ||
			not_ok "$store: fio through librdax across kill -9 (exit $rc)"
		check_output "$store: ... its handle came back persistent, none lost" \
			"fio-rdax: reconnects [1-9][0-9]*: [1-9][0-9]* durable handles? back, 0 lost" \
			cat "$T/fio-$store.out"
		check_output "$store: ... from the restarted rdaxd's journal" \
			"persistent open restored from the journal" cat "$T/$store-3.log"
	else
		skip_case "$store: librdax across kill -9" "$E not built (no fio source)"
	fi
	stop_rdaxd && ok "$store: SIGTERM stops rdaxd cleanly" || not_ok "$store: rdaxd exit status"
done

unset PMEM2_FORCE_GRANULARITY
# a damaged journal: slot 0 with both halves garbage
j=$T/state-posix/ca-ca.journal
printf 'RDXJgarbage' | dd of="$j" bs=1 seek=0 conv=notrunc 2>/dev/null
printf 'RDXJgarbage' | dd of="$j" bs=1 seek=2048 conv=notrunc 2>/dev/null
start_rdaxd damaged -v --config "$T/posix.conf"
grep -q "ca journal .*: 1 slot unreadable (torn or corrupt): ignored" "$T/damaged.log" &&
	ok "a damaged journal slot is skipped, with a log line" ||
	{ not_ok "no log line for the damaged slot"; tail -n 5 "$T/damaged.log" | sed 's/^/    | /'; }
check "rdaxd with a damaged journal still serves" $RDAX --user alice \
	--password-file "$T/alice.pw" ls "smb://127.0.0.1:$PORT/ca"
stop_rdaxd || not_ok "rdaxd exit status (damaged journal)"

# a CA share added by a reload: its journal set up as at start, so a
# persistent handle on it survives kill -9 too; removed and added again
# while the server runs, its journal is still the removed share's: refused
share_dir "$T/rl"
mkdir -p "$T/state-rl"
cat >"$T/rl0.conf" <<CONF
[global]
	passdb file = $T/passdb
	state directory = $T/state-rl
[plain]
	path = $T/rl
	read only = no
CONF
{ cat "$T/rl0.conf"; printf '[ca]\n\tpath = %s/rl\n\tread only = no\n\tcontinuous availability = yes\n' "$T"; } >"$T/rl1.conf"
cp "$T/rl0.conf" "$T/rl.conf"
start_rdaxd rl -v --config "$T/rl.conf"
port=$PORT
cp "$T/rl1.conf" "$T/rl.conf"
check_output "a reload adds a CA share" '1 share added' "$RDAXCTL" -s "$RDAXD_CTL" reload
check_output "... with its journal" "ca journal .*ca-ca.journal" cat "$T/rl.log"
hold_across_kill rl-2 "$T/rl.conf" "$T/rl.out" && ok "a persistent handle on the reloaded CA share survives kill -9" ||
	{ not_ok "the persistent handle on the reloaded CA share did not survive"; sed 's/^/    | /' "$T/rl.out"; }
cp "$T/rl0.conf" "$T/rl.conf"
check_output "a reload removes the CA share" '1 removed' "$RDAXCTL" -s "$RDAXD_CTL" reload
cp "$T/rl1.conf" "$T/rl.conf"
check_fails_output "... adding it back while its journal is the removed share's is refused" \
	'a restart changes it' "$RDAXCTL" -s "$RDAXD_CTL" reload
stop_rdaxd || not_ok "rdaxd exit status (reloaded CA share)"
finish
