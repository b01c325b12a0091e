# SPDX-License-Identifier: MIT
# Two cifs.ko mounts of one share, rdaxd's counters and the wire: the
# coherence runs of the caching checks, sourced by tests/vm/check-caching
# (the default kernel, Linux 6.1) and tests/vm/check-caching612 (Linux
# 6.12, where ksmbd runs with leases). The caller sets $prog and $checks
# and sources tests/vm/tap.sh first; this sets up $T (a scratch directory
# with rdaxd's passdb and share) and defines start_rdaxd, stop_rdaxd,
# coherence, coherence_rdaxd and ksmbd_run.
a1=${RDAX_VM_ADDR:-}
B=${B:-build}
RDAXD=$B/rdaxd
RDAX=$B/rdax
export LD_LIBRARY_PATH=$B
. "$(dirname "$0")/linkdrop.sh"	# stat_of, delta; the link-drop checks
T=$(mktemp -d /tmp/rdax-caching.XXXXXX)
tport=4456
mA=/mnt/rdax-cache-a
mB=/mnt/rdax-cache-b
ROUNDS=${RDAX_VM_CACHING_ROUNDS:-16}
# how long a stale read is retried: 5 s with leases; with oplocks (the
# calibration and the comparison), where cifs.ko stays stale, 2 s
cbound=5

say() { echo "$prog: $*" >&2; }
wait_log() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 200 ] || return 1
		sleep 0.1
	done
}

[ -x "$RDAXD" ] && [ -x "$RDAX" ] && [ -n "$a1" ] ||
	give_up "build/rdaxd, build/rdax or RDAX_VM_ADDR missing"
printf 'pw-tester\n' | $RDAX passwd --passdb "$T/passdb" tester
mkdir -p "$T/share"
chmod 0711 "$T"
chmod 0777 "$T/share"

# start_rdaxd LEASES: rdaxd with `smb2 leases = LEASES`, its pid in $srv
# (empty when it did not start)
start_rdaxd() {
	cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	listen = tcp://$a1:$tport rdma://$a1:445
	smb2 leases = $1
[c]
	path = $T/share
	store = posix
	read only = no
CONF
	: >"$T/rdaxd.log"
	$RDAXD --config "$T/smb.conf" >"$T/rdaxd.log" 2>&1 &
	srv=$!
	if ! wait_log "$T/rdaxd.log" ready; then
		cat "$T/rdaxd.log" >&2
		srv=
	fi
}
# stop_rdaxd NAME
stop_rdaxd() {
	umount_all
	if kill -TERM $srv && wait $srv; then
		ok "$1" "SIGTERM: clean exit"
	else
		tail -n 20 "$T/rdaxd.log" >&2
		not_ok "$1" "rdaxd did not exit cleanly"
	fi
}

# caching_stats: rdaxd's SIGUSR1 "stats caching" line as "key value" pairs
# on one line ("made" is the leases made, "leases" those held now)
caching_stats() {
	n0=$(wc -l <"$T/rdaxd.log")
	kill -USR1 $srv
	i=0
	until tail -n +$((n0 + 1)) "$T/rdaxd.log" | grep -q 'stats caching:'; do
		i=$((i + 1))
		[ $i -le 50 ] || return 1
		sleep 0.1
	done
	tail -n +$((n0 + 1)) "$T/rdaxd.log" | grep -m1 'stats caching:' |
		sed 's/.*stats caching: //; s/(made \([0-9]*\))/made \1/'
}
# cifs_acks: lease/oplock break acknowledgements cifs.ko sent, all mounts
# (/proc/fs/cifs/Stats "OplockBreaks: N sent", per tree connect)
cifs_acks() {
	awk '/^OplockBreaks:/ { n += $2 } END { print n + 0 }' /proc/fs/cifs/Stats 2>/dev/null
}
# cifs_ack_fails: those of them that failed
cifs_ack_fails() {
	awk '/^OplockBreaks:/ { n += $4 } END { print n + 0 }' /proc/fs/cifs/Stats 2>/dev/null
}
# cifs_conns: connections cifs.ko has open (DebugData "N) ConnectionId")
cifs_conns() {
	grep -Ec '^[0-9]+\) ConnectionId' /proc/fs/cifs/DebugData 2>/dev/null
}

umount_all() {
	for mp in "$mA" "$mB"; do
		grep -q " $mp cifs " /proc/mounts && tests/vm/peer cifs-umount "$mp" >&2
	done
	return 0
}

# mount_pair TR UNC OPTIONS: two mounts of UNC on two connections, as
# $muser with $mpass
muser=tester
mpass=pw-tester
mount_pair() {
	tr=$1 unc=$2 o=$3
	t=
	[ "$tr" = tcp ] && t=--tcp
	for mp in "$mA" "$mB"; do
		# shellcheck disable=SC2086
		if ! tests/vm/peer cifs-mount $t "$unc" "$mp" "$muser" "$mpass" \
			"nosharesock,cache=strict$o" >"$T/mount.out" 2>&1; then
			cat "$T/mount.out" >&2
			umount_all
			return 1
		fi
		if [ "$(tests/vm/peer transport "$mp" 2>&1)" != "$tr" ]; then
			say "$mp: not a $tr mount: $(tests/vm/peer transport "$mp" 2>&1)"
			umount_all
			return 1
		fi
	done
}

# wire_start PORT / wire_stop: a capture of TCP port PORT on lo while the
# mounts run; $wire is then smbwire.py's lease counts (JSON), empty when
# nothing was captured. Only TCP: rxe hands a packet for its own MAC
# address straight to its receive path, no netdev sees SMB-Direct here
wire_start() {
	wire=
	rm -f "$T/wire.ready" "$T/wire.stop"
	python3 tests/vm/smbwire.py capture "$T/wire.pcap" "$1" --ready "$T/wire.ready" \
		--stop "$T/wire.stop" >/dev/null 2>"$T/wire.err" &
	wpid=$!
	wport=$1
	i=0
	until [ -e "$T/wire.ready" ] || [ $i -gt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	[ -e "$T/wire.ready" ] || { cat "$T/wire.err" >&2; kill $wpid; wpid=; }
}
wire_stop() {
	[ -n "$wpid" ] || return 0
	: >"$T/wire.stop"
	wait $wpid
	wpid=
	wire=$(python3 tests/vm/smbwire.py leases "$T/wire.pcap" "$wport" 2>"$T/wire.err")
	[ -n "$wire" ] || cat "$T/wire.err" >&2
}
# wire_get KEY: a number from $wire
wire_get() {
	printf '%s' "$wire" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" 2>/dev/null || echo "?"
}
wire_says() {
	if [ -z "$wire" ]; then
		echo "the wire: not captured"
	else
		echo "the wire: $(wire_get granted) CREATE responses granting a lease $(printf '%s' "$wire" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["granted_states"])' 2>/dev/null),\
 $(wire_get breaks) lease breaks ($(wire_get breaks_ack_required) to acknowledge), $(wire_get acks) acks,\
 $(wire_get oplocks_granted) oplocks granted, $(wire_get oplock_breaks) oplock breaks,\
 $(wire_get oplock_acks) acks, $(wire_get acks_refused) acks refused"
	fi
}

# coherence TR UNC OPTIONS [PORT]: $cmsg is the result, 0 when every read
# was fresh; the details go to stderr. PORT: TCP, captured on lo ($wire)
coherence() {
	cmsg=
	wire=
	wpid=
	[ -z "${4:-}" ] || wire_start "$4"
	if ! mount_pair "$1" "$2" "$3"; then
		wire_stop
		cmsg="mounting //$a1 twice ($1) failed: $(grep -m1 -i 'failed\|error' "$T/mount.out")"
		return 2
	fi
	conns=$(cifs_conns)
	k0=$(cifs_acks)
	f0=$(cifs_ack_fails)
	COHERENCE_BOUND_S=$cbound python3 tests/vm/coherence.py "$mA" "$mB" "$ROUNDS" \
		"$cmode-$1-" >"$T/coh.out" 2>"$T/coh.err"
	crc=$?
	sed 's/^/  | /' "$T/coh.err" >&2
	# the rounds that stayed stale, " 4 5 ", for the calibration
	stale_rounds=" $(awk '/STALE/ { printf "%s ", $2 }' "$T/coh.err")"
	acks=$(($(cifs_acks) - k0))
	afail=$(($(cifs_ack_fails) - f0))
	grep -E '^(OplockBreaks|Open files)' /proc/fs/cifs/Stats >&2
	umount_all
	wire_stop
	cmsg="$(cat "$T/coh.out"); cifs.ko: $conns connections, $acks break acks sent ($afail failed)"
	[ -z "${4:-}" ] || cmsg="$cmsg; $(wire_says)"
	[ "$conns" = 2 ] || { cmsg="$cmsg; expected 2 connections (nosharesock)"; crc=1; }
	[ $crc = 0 ] || { [ -s "$T/coh.out" ] || cmsg="$cmsg $(tail -n 1 "$T/coh.err")"; }
	return $crc
}

# coherence_rdaxd NAME TR UNC OPTIONS [PORT]: rdaxd must count leases
# made ($cmode lease) or oplocks granted ($cmode oplock), breaks and acks;
# over TCP (PORT) the grants, breaks and acks on the wire must agree
cmode=lease
coherence_rdaxd() {
	name=$1
	shift
	s0=$(caching_stats) || { not_ok "$name" "no SIGUSR1 stats caching line"; return; }
	coherence "$@"
	rc=$?
	s1=$(caching_stats) || { not_ok "$name" "no SIGUSR1 stats caching line"; return; }
	say "$name: before: $s0"
	say "$name: after:  $s1"
	msg="$cmsg; rdaxd: leases made $(delta made), oplocks granted $(delta oplocks_granted),"
	# shellcheck disable=SC2086
	msg="$msg breaks $(delta breaks), acks $(delta acks), waits $(delta waits), break_timeouts $(delta break_timeouts), leases held now $(stat_of leases $s1)"
	if [ $cmode = lease ]; then
		made=$(delta made) wgrant=granted wbreak=breaks wack=acks
	else
		made=$(delta oplocks_granted) wgrant=oplocks_granted wbreak=oplock_breaks wack=oplock_acks
	fi
	if [ $rc = 1 ] && [ $cmode = oplock ] && [ -n "$smbd_stale" ]; then
		# with oplocks cifs.ko itself misses writes (Samba's run shows
		# which): only a round that was fresh against Samba counts
		worse=
		for r in $stale_rounds; do
			case $smbd_stale in
			*" $r "*) ;;
			*) worse="$worse $r" ;;
			esac
		done
		if [ -n "$worse" ]; then
			msg="$msg; stale in rounds$worse, which Samba smbd kept fresh"
		else
			rc=0
			msg="$msg; the same rounds stale as against Samba smbd (cifs.ko's)"
		fi
	fi
	if [ $rc != 0 ]; then
		not_ok "$name" "$msg"
	elif [ "$made" -le 0 ] || [ "$(delta breaks)" -le 0 ] || [ "$(delta acks)" -le 0 ]; then
		not_ok "$name" "$msg: no $cmode granted, broken and acknowledged"
	elif [ "$(delta break_timeouts)" != 0 ]; then
		not_ok "$name" "$msg: breaks timed out"
	elif [ -n "${4:-}" ] && { [ "$(wire_get $wgrant)" = "?" ] ||
		[ "$(wire_get $wgrant)" -le 0 ] || [ "$(wire_get $wbreak)" != "$(delta breaks)" ] ||
		[ $(($(wire_get $wack) - $(wire_get acks_refused))) != "$(delta acks)" ]; }; then
		not_ok "$name" "$msg: the wire does not agree with rdaxd's counters"
	else
		ok "$name" "$msg"
	fi
}

# ---- ksmbd, the comparison: passes when it ran, the message says what
# ksmbd did (it keeps no counters: over TCP the wire, and cifs.ko's acks,
# stand for them) ----
ksmbd_coherence() { # NAME TR UNC OPTIONS [PORT]
	name=$1
	shift
	coherence "$@"
	case $? in
	0) ok "$name" "ksmbd coherent: $cmsg" ;;
	1) ok "$name" "ksmbd NOT coherent (a comparison, not rdaxd's): $cmsg" ;;
	*) not_ok "$name" "the comparison did not run: $cmsg" ;;
	esac
}
# ksmbd_run LEASES NAME TR [NAME TR]...: ksmbd with `smb2 leases = LEASES`
ksmbd_run() {
	leases=$1
	shift
	if ! RDAX_KSMBD_GLOBAL="smb2 leases = $leases" tests/vm/peer ksmbd-start \
		"$T/kshare-$leases" ks tester pw-tester >"$T/ksmbd.out" 2>&1; then
		cat "$T/ksmbd.out" >&2
		while [ $# -ge 2 ]; do
			not_ok "$1" "ksmbd did not start: $(head -n 1 "$T/ksmbd.out")"
			shift 2
		done
		return
	fi
	while [ $# -ge 2 ]; do
		if [ "$2" = tcp ]; then
			ksmbd_coherence "$1" tcp "//$a1/ks" "" 445
		else
			ksmbd_coherence "$1" rdma "//$a1/ks" ""
		fi
		shift 2
	done
	umount_all
	tests/vm/peer ksmbd-stop >&2
}
