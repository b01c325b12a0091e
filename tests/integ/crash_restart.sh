#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxd killed with SIGKILL while a client writes, then restarted on the
# same port: every WRITE rdaxd answered before the kill is in the file
# (tests/integ/ackwrite logs each answered chunk and checks them after),
# on a posix share and on a DAX share, for a first write and for an
# overwrite in place; the restarted rdaxd serves the file at once.
# (A power cut, where the page cache is lost too, is tests/vm/powercut.)
. "$(dirname "$0")/lib.sh"
AW=$B/tests/ackwrite
[ -x "$AW" ] || die "$AW not built (make tests)"

CS=262144 N=400
share_dir "$T/px" "$T/dax"
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
export PMEM2_FORCE_GRANULARITY=CACHE_LINE
start_rdaxd srv0 --config "$T/smb.conf"
RDAXD_PORT=$PORT
U="smb://127.0.0.1:$PORT"
run=0

# lines FILE: its line count (0 if missing)
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

# crash SHARE GEN: ackwrite writes generation GEN of N chunks; once at
# least 40 more are answered, rdaxd gets SIGKILL; it is restarted.
crash() {
	sh=$1 gen=$2
	log=$T/$sh.acks
	before=$(lines "$log")
	"$AW" write --guest --chunks $N --chunk-size $CS --gen "$gen" --log "$log" \
		"$U/$sh/ack.bin" >"$T/aw.out" 2>&1 &
	awpid=$!
	i=0
	while [ "$(lines "$log")" -lt $((before + 40)) ] && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -9 "$RDAXD_PID"
	wait "$RDAXD_PID" 2>/dev/null
	pids=$(echo "$pids" | sed "s/ $RDAXD_PID//")
	wait "$awpid"
	awrc=$?
	got=$(($(lines "$log") - before))
	check "$sh gen $gen: rdaxd killed after $got answered chunks, mid-write" \
		test "$awrc" != 0 -a "$got" -ge 40 -a "$got" -lt $N
	tail -n 1 "$T/aw.out" | sed 's/^/    /'
	run=$((run + 1))
	start_rdaxd "srv$run" --config "$T/smb.conf"
	check "$sh gen $gen: rdaxd restarts on the same port" test "$PORT" = "$RDAXD_PORT"
	check "$sh gen $gen: every answered chunk is in the file" \
		"$AW" verify --chunk-size $CS --log "$log" "$T/$sh/ack.bin"
	sed 's/^/    /' "$T/check.out"
	check "$sh gen $gen: the restarted rdaxd serves the file as it is on disk" \
		sh -c "$RDAX --guest -q get '$U/$sh/ack.bin' '$T/back.bin' && cmp '$T/back.bin' '$T/$sh/ack.bin'"
}

for sh in px dax; do
	crash $sh 1
	crash $sh 2
done
check "the last rdaxd stops cleanly" stop_rdaxd
finish
