# SPDX-License-Identifier: MIT
# Link-drop checks (issue 14), sourced by tests/vm/check-caching (one
# guest: TCP cut on lo) and tests/vm/check-two (two guests: the cable
# pulled by the host under SMB-Direct). The caller provides: $T (a
# scratch directory), $a1 (rdaxd's address), $tport, $rlog (rdaxd's log,
# read here), $mA (a mount point), $CUT, $FIO_BOUND, $ENGINE,
# caching_stats (rdaxd's SIGUSR1 counters as "key value" pairs), say,
# ok/not_ok (tests/vm/tap.sh), cut_TR and mend_TR for each transport TR
# it uses (mend_TR may set cut_s: how long the link was out), and lay_out_rdax FILE (16 MiB of zeros in the share as FILE,
# writable by the tester).

# stat KEY PAIRS...: the value of KEY
stat_of() {
	k=$1
	shift
	while [ $# -ge 2 ]; do
		[ "$1" = "$k" ] && { echo "$2"; return; }
		shift 2
	done
	echo 0
}
# delta KEY: KEY's growth between $s0 and $s1
delta() {
	# shellcheck disable=SC2086
	echo $(($(stat_of "$1" $s1) - $(stat_of "$1" $s0)))
}

# fio_wait PID: until fio PID ends, FIO_BOUND s of wall time at most
# after the link came back; once, 30 s in, linkdrop_stuck PID (when the
# caller defines it) records why it still waits
fio_wait() {
	_end=$(($(date +%s) + FIO_BOUND))
	_told=$(($(date +%s) + 30))
	while kill -0 "$1" 2>/dev/null && [ "$(date +%s)" -lt $_end ]; do
		if [ -n "$_told" ] && [ "$(date +%s)" -ge $_told ]; then
			_told=
			! command -v linkdrop_stuck >/dev/null || linkdrop_stuck "$1"
		fi
		sleep 0.2
	done
}

# cut_under_fio TR FPID: 3 s into fio, the TR link out for $CUT s; then
# wait for fio (killed after FIO_BOUND s). Sets t0 (the cut), frc (fio's
# status), tfio (seconds from the cut to fio's end) and adds to msg what
# went wrong.
cut_under_fio() {
	sleep 3
	if ! kill -0 "$2" 2>/dev/null; then
		msg="fio ended before the cut;"
	elif ! "cut_$1"; then
		msg="cutting the $1 link failed;"
	fi
	t0=$(date +%s)
	sleep $CUT
	"mend_$1" || msg="$msg restoring the $1 link failed;"
	[ -z "$msg" ] || kill "$2" 2>/dev/null	# the cut failed
	fio_wait "$2"
	if kill -0 "$2" 2>/dev/null; then
		msg="$msg fio still waits ${FIO_BOUND} s after the link came back;"
		kill -KILL "$2" 2>/dev/null
	fi
	wait "$2"
	frc=$?
	tfio=$(($(date +%s) - t0))
}

# linkdrop NAME TR UNC OPTIONS
linkdrop() {
	name=$1 tr=$2 unc=$3 o=$4
	t=
	[ "$tr" = tcp ] && t=--tcp
	msg=
	s0=$(caching_stats) || { not_ok "$name" "no SIGUSR1 stats caching line"; return; }
	n0=$(wc -l <"$rlog")
	d0=$(dmesg | wc -l)
	# shellcheck disable=SC2086
	if ! tests/vm/peer cifs-mount $t "$unc" "$mA" tester pw-tester \
		"hard,cache=strict$o" >"$T/mount.out" 2>&1; then
		not_ok "$name" "mount failed: $(tail -n 3 "$T/mount.out" | tr '\n' ' ')"
		return
	fi
	# The file is laid out first: fio's own layout ends with an fsync, and
	# cifs.ko 6.1 fails a FLUSH in flight at a disconnect with EAGAIN even
	# on a hard mount (only reads and writes are resent). Then 16 MiB,
	# half written, at 1 MiB/s a direction: the cut falls inside.
	f=$mA/linkdrop-$tr.dat
	if ! dd if=/dev/zero of="$f" bs=1M count=16 conv=fsync status=none; then
		tests/vm/peer cifs-umount "$mA" >&2
		not_ok "$name" "laying out $f failed"
		return
	fi
	fio --name="$name" --filename="$f" --rw=randrw --bs=64k --size=16m \
		--rate=1m --ioengine=psync --direct=1 --verify=crc32c \
		--verify_state_save=0 --do_verify=1 >"$T/fio.out" 2>&1 &
	fpid=$!
	# fio has 16 s of I/O left at most; a mount that does not come back
	# leaves it waiting for good (hard)
	cut_under_fio "$tr" $fpid
	s1=$(caching_stats) || s1=
	say "$name: before: $s0"
	say "$name: after:  $s1"
	dmesg | tail -n +$((d0 + 1)) | grep -iE 'cifs|smb|rdma|reconnect' | tail -n 15 >&2
	sed 's/^/  | /' "$T/fio.out" >&2
	# DebugData's "Instance: N" counts the connection's reconnects from 1
	inst=$(sed -n 's/.*TCP status: [0-9]* Instance: \([0-9]*\).*/\1/p' /proc/fs/cifs/DebugData | head -n 1)
	rec=$(tail -n +$((n0 + 1)) "$rlog" | grep -c 'durable open of .* reconnected')
	kept=$(tail -n +$((n0 + 1)) "$rlog" | grep -c 'durable open kept')
	# what rdaxd saw of it: the session, its opens, breaks and reconnects
	tail -n +$((n0 + 1)) "$rlog" |
		grep -iE 'durable|session|break|lease|replaces|closed|gone' | tail -n 20 |
		sed 's/^/  rdaxd| /' >&2
	grep -q " $mA cifs " /proc/mounts && { tests/vm/peer cifs-umount "$mA" >&2 ||
		umount -f -l "$mA"; }
	[ $frc = 0 ] && grep -q 'err= 0' "$T/fio.out" ||
		msg="$msg fio failed (exit $frc): $(grep -m1 -E 'verify|err=|error' "$T/fio.out");"
	[ "$rec" -gt 0 ] || msg="$msg rdaxd did not log a durable reconnect;"
	[ "$(delta durable_reconnects)" -gt 0 ] || msg="$msg SIGUSR1 counts no durable reconnect;"
	[ "${inst:-1}" -gt 1 ] || msg="$msg cifs.ko did not reconnect (DebugData Instance ${inst:-?});"
	facts="link cut ${cut_s:-$CUT} s, fio 16 MiB randrw verified, done ${tfio} s after the cut;"
	facts="$facts cifs.ko reconnects $((${inst:-1} - 1));"
	facts="$facts rdaxd: durable_kept $(delta durable_kept), durable_reconnects $(delta durable_reconnects)"
	facts="$facts ($rec reconnect log lines, $kept kept), durable_expired $(delta durable_expired),"
	facts="$facts leases made $(delta made), breaks $(delta breaks)"
	# Over SMB-Direct the RC QPs' retries can outlast the cut (a 13.3 s
	# one under TCG, once): then neither side saw the connection go, and
	# there was no reconnect to check. fio must still have verified.
	if [ "${inst:-1}" -le 1 ] && [ "$rec" = 0 ] && [ "$kept" = 0 ] &&
		[ "$(delta durable_kept)" = 0 ] && [ $frc = 0 ] &&
		grep -q 'err= 0' "$T/fio.out"; then
		skip "$name" "the connection outlived the cut (neither cifs.ko nor rdaxd saw it go), no reconnect to check: $facts"
	elif [ -z "$msg" ]; then
		ok "$name" "$facts"
	else
		not_ok "$name" "$msg ($facts)"
	fi
}

# linkdrop_rdax NAME TR: linkdrop's cut under fio with the rdax engine,
# over tcp (port $tport) or rdma (445)
linkdrop_rdax() {
	name=$1 tr=$2
	port=$tport
	[ "$tr" = tcp ] || port=445
	msg=
	if [ ! -f "$ENGINE" ]; then
		not_ok "$name" "$ENGINE missing (make fio)"
		return
	fi
	s0=$(caching_stats) || { not_ok "$name" "no SIGUSR1 stats caching line"; return; }
	n0=$(wc -l <"$rlog")
	printf 'pw-tester\n' >"$T/pw"
	chmod 600 "$T/pw"
	if ! lay_out_rdax linkdrop-rdax.dat; then
		not_ok "$name" "laying out linkdrop-rdax.dat failed"
		return
	fi
	fio --name="$name" --ioengine=external:"$ENGINE" --hostname="$a1" \
		--port=$port --transport=$tr --share=c --user=tester --password_file="$T/pw" \
		--filename=linkdrop-rdax.dat --rw=randrw --bs=64k --size=16m \
		--rate=1m --iodepth=4 --verify=crc32c --verify_state_save=0 \
		--do_verify=1 >"$T/fio-rdax.out" 2>&1 &
	fpid=$!
	cut_under_fio "$tr" $fpid
	s1=$(caching_stats) || s1=
	sed 's/^/  | /' "$T/fio-rdax.out" >&2
	rec=$(tail -n +$((n0 + 1)) "$rlog" | grep -c 'durable open of .* reconnected')
	tail -n +$((n0 + 1)) "$rlog" |
		grep -iE 'durable|session|closed|gone' | tail -n 12 | sed 's/^/  rdaxd| /' >&2
	cl=$(sed -n 's/^fio-rdax: \(reconnects .*\)/\1/p' "$T/fio-rdax.out" | tail -n 1)
	[ $frc = 0 ] && grep -q 'err= 0' "$T/fio-rdax.out" ||
		msg="$msg fio failed (exit $frc): $(grep -m1 -E 'verify|err=|error' "$T/fio-rdax.out");"
	[ "$rec" -gt 0 ] || msg="$msg rdaxd did not log a durable reconnect;"
	[ "$(delta durable_reconnects)" -gt 0 ] || msg="$msg SIGUSR1 counts no durable reconnect;"
	facts="link cut ${cut_s:-$CUT} s, fio (rdax engine, QD4) 16 MiB randrw verified, done ${tfio} s after the cut;"
	facts="$facts rdaxd: durable_reconnects $(delta durable_reconnects) ($rec log lines)"
	facts="$facts${cl:+; librdax: $cl}"
	if [ -z "$msg" ]; then
		ok "$name" "$facts"
	else
		not_ok "$name" "$msg ($facts)"
	fi
}

