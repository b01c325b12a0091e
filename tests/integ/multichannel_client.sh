#!/bin/sh
# SPDX-License-Identifier: MIT
# SMB3 multichannel in librdax (rdax --channels, fio channels=) against a
# real server: Samba smbd in a network namespace of its own, reached from
# the client's namespace over two veth links (and listing a third address
# the client cannot reach). Proven from the client's report (--stats, the
# engine's channel lines) and from a capture on the server's side: two
# connections carry the I/O of one session, bound with signed binding
# SESSION_SETUPs; data verifies; a channel whose socket is killed, or
# whose link goes down, in the middle of a fio verify job costs the job
# nothing (its requests are replayed on the other channel with the next
# ChannelSequence); a server with multichannel off leaves one channel.
#
# Another server: MC_SERVER_SH=FILE defines mc_server_start (and may
# define mc_server_nomc_start), which start the server in namespace
# $NS_S listening on $SA, $SB and $SC, and set PORT, AUTH (rdax's
# credential options), FIO_AUTH (the engine's), SHARE, SHARE_DIR (its
# local path) and SRV_PID. See mc_server_start below for smbd.
. "$(dirname "$0")/lib.sh"
need ip ss dumpcap fio python3
[ "$(id -u)" = 0 ] || skip "network namespaces and smbd need root"
ENGINE=$B/fio-rdax.so
[ -f "$ENGINE" ] || die "$ENGINE not built (make)"

id=$$
NS_S=rdaxmc-s.$id
NS_C=rdaxmc-c.$id
SA=192.0.2.1 CA=192.0.2.2		# link A: the first connection
SB=198.51.100.1 CB=198.51.100.2		# link B: the second channel
SC=203.0.113.1				# listed, not reachable from the client
VA=rmA$id VB=rmB$id VC=rmC$id

netns_down() {
	ip netns del "$NS_C" 2>/dev/null
	ip netns del "$NS_S" 2>/dev/null
}
trap 'cleanup; netns_down' EXIT INT TERM

# two namespaces, veth pairs A and B between them; C's client end stays down
netns_up() {
	ip netns add "$NS_S" && ip netns add "$NS_C" || return 1
	ip -n "$NS_S" link set lo up && ip -n "$NS_C" link set lo up || return 1
	for l in A B C; do
		ip -n "$NS_S" link add "rm$l${id}s" type veth peer name "rm$l${id}c" netns "$NS_C" ||
			return 1
	done
	ip -n "$NS_S" addr add $SA/24 dev "${VA}s" &&
	ip -n "$NS_S" addr add $SB/24 dev "${VB}s" &&
	ip -n "$NS_S" addr add $SC/24 dev "${VC}s" &&
	ip -n "$NS_C" addr add $CA/24 dev "${VA}c" &&
	ip -n "$NS_C" addr add $CB/24 dev "${VB}c" || return 1
	for l in A B C; do
		ip -n "$NS_S" link set "rm$l${id}s" up || return 1
	done
	ip -n "$NS_C" link set "${VA}c" up && ip -n "$NS_C" link set "${VB}c" up
}
netns_up || skip "cannot set up network namespaces and veth pairs here"

# ---- the server ----
. "$top/tools/lib/smbd.sh"
need smbd smbpasswd
# Samba 4.17 lists the interfaces of "interfaces" (with speed and
# capability) in FSCTL_QUERY_NETWORK_INTERFACE_INFO
smbd_start() {
	SMBD_NETNS=$NS_S SMBD_ADDRS="$SA $SB $SC" SMBD_GLOBAL="$1" \
		SMBD_IFOPTS=";speed=10000000000,capability=RSS" \
		scratch_smbd "$2" data || die "smbd did not start: $(cat "$2/smbd.out")"
	pids="$pids $SMBD_PID"
	PORT=$SMBD_PORT
	AUTH="--user root --password-file $2/root.pw"
	FIO_AUTH="--user=root --password_file=$2/root.pw"
	SHARE=data
	SHARE_DIR=$2/data
	SRV_PID=$SMBD_PID
}
mc_server_start() { smbd_start "server multi channel support = yes" "$T/smbd"; }
mc_server_nomc_start() { smbd_start "server multi channel support = no" "$T/smbd-nomc"; }
[ -n "${MC_SERVER_SH:-}" ] && . "$MC_SERVER_SH"
mc_server_start

U="smb://$SA:$PORT/$SHARE"
CLI="ip netns exec $NS_C"
RDAXC="$CLI env LD_LIBRARY_PATH=$LD_LIBRARY_PATH $RDAX"

# ---- capture on the server's side, both links ----
cap_start() {
	CAP_FILE=$T/$1.pcap
	ip netns exec "$NS_S" dumpcap -q -B 256 -i any -f "tcp port $PORT" -P \
		-w "$CAP_FILE" >"$T/$1.dumpcap" 2>&1 &
	CAP_PID=$!
	pids="$pids $CAP_PID"
	_i=0
	until [ -s "$CAP_FILE" ] && [ "$(stat -c %s "$CAP_FILE")" -ge 24 ]; do
		kill -0 "$CAP_PID" 2>/dev/null || die "dumpcap did not start: $(cat "$T/$1.dumpcap")"
		_i=$((_i + 1))
		[ $_i -gt 100 ] && die "dumpcap not capturing after 10 s"
		sleep 0.1
	done
	sleep 0.3
}
cap_stop() {
	sleep 0.3
	kill -INT "$CAP_PID"
	wait "$CAP_PID"
	pids=$(echo "$pids" | sed "s/ $CAP_PID//")
}
# check_channels DESC NAME PYEXPR: PYEXPR holds for the per-connection
# summary of capture NAME (smbwire.py channels): conns, a list of dicts,
# and io, those of them that carried READs or WRITEs
check_channels() {
	python3 "$top/tests/vm/smbwire.py" channels "$T/$2.pcap" "$PORT" >"$T/$2.chan" 2>&1
	check_output "$1" '^holds' env W_EXPR="$3" W_FILE="$T/$2.chan" python3 -c '
import json, os
conns = json.load(open(os.environ["W_FILE"]))["conns"]
io = [c for c in conns if c["reads"] + c["writes"] > 0]
print("holds" if eval(os.environ["W_EXPR"]) else "does not hold:", json.dumps(conns, indent=1))'
}
# channel_bytes FILE N WHAT: the WHAT ("sent" or "received") bytes of
# channel N in an --stats or engine report
channel_bytes() {
	sed -n "s/.*channel $2: .* \([0-9]*\) bytes sent, \([0-9]*\) received.*/\1 \2/p" "$1" |
		tail -n 1 | awk -v w="$3" '{ print (w == "sent" ? $1 : $2) }'
}

head -c $((24 << 20)) /dev/urandom >"$T/src.bin"

# ---- two channels carry one session's I/O ----
cap_start put
check_output "rdax --channels 2 put binds a second channel" \
	"channel 1: tcp $SB:$PORT, alive" $RDAXC $AUTH --channels 2 --stats put "$T/src.bin" "$U/mc.bin"
cp "$T/check.out" "$T/put.out"
cap_stop
sed 's/^/    | /' "$T/put.out"
check "... and the file is byte-identical on the server" cmp "$T/src.bin" "$SHARE_DIR/mc.bin"
s0=$(channel_bytes "$T/put.out" 0 sent) s1=$(channel_bytes "$T/put.out" 1 sent)
check "... both channels carried data by the client's count ($s0 + $s1 bytes)" \
	test "${s0:-0}" -gt $((4 << 20)) -a "${s1:-0}" -gt $((4 << 20))
check_channels "capture: two connections, to $SA and $SB, wrote for one session" put \
	'len(io) == 2 and {c["server"].split(":")[0] for c in io} == {"'$SA'", "'$SB'"} and len({s for c in io for s in c["sessions"]}) == 1 and all(c["writes"] > 0 for c in io)'
check_channels "capture: the second was bound (signed SESSION_SETUPs with BINDING), the first not" put \
	'sum(c["bindings"] for c in conns) >= 1 and all(c["binding_signed"] == c["bindings"] for c in conns) and [c["bindings"] for c in conns if c["server"].startswith("'$SA':")] == [0]'

cap_start get
check_output "rdax --channels 2 get" "channel 1: tcp $SB:$PORT, alive" \
	$RDAXC $AUTH --channels 2 --stats get "$U/mc.bin" "$T/back.bin"
cp "$T/check.out" "$T/get.out"
cap_stop
check "... byte-identical" cmp "$T/src.bin" "$T/back.bin"
r0=$(channel_bytes "$T/get.out" 0 received) r1=$(channel_bytes "$T/get.out" 1 received)
check "... both channels received data by the client's count ($r0 + $r1 bytes)" \
	test "${r0:-0}" -gt $((4 << 20)) -a "${r1:-0}" -gt $((4 << 20))
check_channels "capture: READs on both connections, one session" get \
	'len(io) == 2 and all(c["reads"] > 0 for c in io) and len({s for c in io for s in c["sessions"]}) == 1'

# ---- signing, encryption, SMB 3.0 ----
cap_start sign
check_output "--sign --channels 2 get" "channel 1: tcp $SB:$PORT, alive" \
	$RDAXC $AUTH --sign --channels 2 --stats get "$U/mc.bin" "$T/back.sign"
cap_stop
check "... byte-identical" cmp "$T/src.bin" "$T/back.sign"
check_channels "capture: every request on both channels is signed (each with its channel's key, or smbd would refuse it)" sign \
	'len(io) == 2 and all(c["plain"] > 0 and c["signed"] == c["plain"] for c in conns)'
cap_start seal
check_output "--encrypt --channels 2 put" "channel 1: tcp $SB:$PORT, alive" \
	$RDAXC $AUTH --encrypt --channels 2 --stats put "$T/src.bin" "$U/mc.enc"
cap_stop
check "... byte-identical" cmp "$T/src.bin" "$SHARE_DIR/mc.enc"
check_channels "capture: both channels sealed, one session" seal \
	'len([c for c in conns if c["sealed"] > 2]) == 2 and all(c["plain"] == 0 for c in conns) and len({s for c in conns for s in c["sessions"]}) == 1'
check_output "--max-protocol SMB3_00 --sign --channels 2 get" "channel 1: tcp $SB:$PORT, alive" \
	$RDAXC $AUTH --max-protocol SMB3_00 --sign --channels 2 --stats get "$U/mc.bin" "$T/back.30"
check "... byte-identical" cmp "$T/src.bin" "$T/back.30"
check_output "--max-protocol SMB2_10 --channels 2: one channel, said why" "offers no multichannel" \
	$RDAXC $AUTH --max-protocol SMB2_10 --channels 2 --stats get "$U/mc.bin" "$T/back.21"
check "... byte-identical" cmp "$T/src.bin" "$T/back.21"

# ---- more channels than addresses; an address the client cannot reach ----
check_output "--channels 3: the unreachable $SC is skipped with a message" \
	"channel to $SC:$PORT skipped" $RDAXC $AUTH --channels 3 --stats get "$U/mc.bin" "$T/back.3"
cp "$T/check.out" "$T/three.out"
check_output "... and a third channel goes to $SA again" "channel 2: tcp $SA:$PORT, alive" \
	cat "$T/three.out"
check "... byte-identical" cmp "$T/src.bin" "$T/back.3"

# ---- fio through the engine (its verify state files go in $T) ----
cd "$T" || die "cd $T"
fio_job() {
	# NAME ARGS...: a write-then-verify job on two channels in the client's namespace
	_n=$1
	shift
	# as lib.sh's fio(): a sanitizer build needs its runtimes preloaded
	$CLI env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" ${SAN_PRELOAD:+LD_PRELOAD=$SAN_PRELOAD} \
		${SAN_PRELOAD:+ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2} \
		${SAN_PRELOAD:+LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan-fio.supp:print_suppressions=0} \
		timeout 180 fio --name="$_n" --ioengine=external:"$ENGINE" --hostname=$SA --port="$PORT" \
		--share="$SHARE" $FIO_AUTH --channels=2 --filename="$_n.dat" --bs=1m \
		--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 "$@"
}
check_output "fio channels=2, random writes then verify" " err= 0" \
	fio_job plain --rw=randwrite --size=64m
cp "$T/check.out" "$T/fio.out"
c0=$(channel_bytes "$T/fio.out" 0 sent) c1=$(channel_bytes "$T/fio.out" 1 sent)
check "... both channels wrote by the engine's report ($c0 + $c1 bytes)" \
	test "${c0:-0}" -gt $((8 << 20)) -a "${c1:-0}" -gt $((8 << 20))

# wait_written FILE BYTES: until the job has written that far (I/O in
# flight on both channels), at most 20 s
wait_written() {
	_i=0
	while [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -lt "$2" ] && [ $_i -lt 200 ]; do
		_i=$((_i + 1))
		sleep 0.1
	done
}

# the link B channel's socket dies mid-write (the kernel aborts it: ss -K);
# a kill that found no request of the channel in flight, or came after
# the job had written everything, proves no replay: that run is made
# again (up to 3 runs). 768 MiB keeps both channels busy for seconds
# (256 MiB took 0.7 s once and the kill came too late).
for try in 1 2 3; do
	rm -f "$SHARE_DIR/kill.dat"
	cap_start kill
	fio_job kill --rw=write --size=768m >"$T/fio.kill" 2>&1 &
	fpid=$!
	wait_written "$SHARE_DIR/kill.dat" $((64 << 20))
	$CLI ss -K -tn state established dst $SB dport = :"$PORT" >"$T/ssk.out" 2>&1
	wait $fpid
	frc=$?
	cap_stop
	if ! grep -q "channel 1 to .* failed" "$T/fio.kill"; then
		echo "    (run $try: the kill came after channel 1's last request)"
	elif grep -q "failed (.*); 0 requests go again" "$T/fio.kill"; then
		echo "    (run $try: channel 1 had nothing in flight when it was killed)"
	else
		break
	fi
done
if grep -q 'Operation not supported\|Invalid argument' "$T/ssk.out"; then
	skip_case kill-socket "ss -K is refused here (CONFIG_INET_DIAG_DESTROY)"
else
	sed 's/^/    | /' "$T/fio.kill" | grep -i 'fio-rdax\|err=\|DBG'
	check "fio verify job with a channel killed mid-write succeeds (rc=$frc)" \
		sh -c "[ $frc = 0 ] && grep -q ' err= 0' '$T/fio.kill'"
	check_output "... the client saw the channel fail and went on" \
		"channel 1 to $SB:$PORT failed" cat "$T/fio.kill"
	check_output "... and resent its requests on channel 0" \
		"channel 0: tcp $SA:$PORT, alive, .*\([1-9][0-9]* resent\)" cat "$T/fio.kill"
	check_channels "capture: replays (SMB2_FLAGS_REPLAY_OPERATION) on the $SA connection, with ChannelSequence 1 from the failure on" kill \
		'[c["replays"] > 0 and c["replay_seqs"] == [1] and sorted(c["seqs"]) == [0, 1] for c in conns if c["server"].startswith("'$SA':") and c["writes"]] == [True]'
fi

# link B goes down mid-write: TCP_USER_TIMEOUT (and keepalive, when only
# answers are missing) fails the channel within seconds, with the
# timeout or the soft error the kernel kept (unreachable)
fio_job down --rw=write --size=256m >"$T/fio.down" 2>&1 &
fpid=$!
wait_written "$SHARE_DIR/down.dat" $((64 << 20))
ip -n "$NS_C" link set "${VB}c" down
wait $fpid
frc=$?
ip -n "$NS_C" link set "${VB}c" up
sed 's/^/    | /' "$T/fio.down" | grep -i 'fio-rdax\|err=\|DBG'
check "fio verify job whose second link goes down mid-write succeeds (rc=$frc)" \
	sh -c "[ $frc = 0 ] && grep -q ' err= 0' '$T/fio.down'"
check_output "... the channel failed on the dead link, its requests went on channel 0" \
	"channel 1 to $SB:$PORT failed \(.*(timed out|unreachable)\); [1-9][0-9]* requests? go again" cat "$T/fio.down"

# ---- a server with multichannel off: the first channel is all there is ----
if command -v mc_server_nomc_start >/dev/null 2>&1; then
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	pids=$(echo "$pids" | sed "s/ $SRV_PID//")
	mc_server_nomc_start
	U="smb://$SA:$PORT/$SHARE"
	cp "$T/src.bin" "$SHARE_DIR/mc.bin"
	check_output "multichannel off: --channels 2 works on one channel, said why" \
		"offers no multichannel" $RDAXC $AUTH --channels 2 --stats get "$U/mc.bin" "$T/back.nomc"
	cp "$T/check.out" "$T/nomc.out"
	check "... byte-identical" cmp "$T/src.bin" "$T/back.nomc"
	check_fails "... and no second channel" grep -q "channel 1:" "$T/nomc.out"
else
	skip_case multichannel-off "the server under test has no mc_server_nomc_start"
fi
finish
