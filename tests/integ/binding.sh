#!/bin/sh
# SPDX-License-Identifier: MIT
# Multichannel session binding on rdaxd (tests/integ/binding.c on the
# wire): a bound second channel carries I/O on the first one's tree and
# file, rdaxd reports both channels of the session (SIGUSR1), the
# session outlives its first connection; every refused bind gets Samba's
# status and harms nothing; a stale ChannelSequence is refused with
# STATUS_FILE_NOT_AVAILABLE, also for a WRITE a DAX share would receive
# straight into the file's mapping; `server multi channel support = no` refuses
# binds. After each case rdaxd serves a new client and ends idle.
. "$(dirname "$0")/lib.sh"
BIN=$B/tests/binding
[ -x "$BIN" ] || die "$BIN not built (make tests)"

make_user "$T/passdb" alice 'bind pw alice'
make_user "$T/passdb" bob 'bind pw bob'
share_dir "$T/share" "$T/dax"
conf() {
	cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	map to guest = bad user
	server multi channel support = $1
[data]
	path = $T/share
	read only = no
	guest ok = yes
[dax]
	path = $T/dax
	store = dax
	read only = no
CONF
}
export BIND_USER=alice BIND_PW='bind pw alice' BIND_USER2=bob BIND_PW2='bind pw bob'

run_case() {
	_c=$1
	shift
	"$@" "$BIN" 127.0.0.1 "$PORT" "${BIND_SHARE:-data}" "$_c" >"$T/$_c.out" 2>&1
	_rc=$?
	sed 's/^/    /' "$T/$_c.out"
	if [ $_rc = 0 ]; then
		ok "binding $_c: $(grep -c '^ok:' "$T/$_c.out") wire checks"
	else
		not_ok "binding $_c (exit $_rc)"
	fi
}

conf yes
# the DAX store on an ordinary file system (see dax_store.sh)
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd srv --config "$T/smb.conf"
log=$T/srv.log

# good, held while rdaxd is asked what it holds
mkdir "$T/hold"
BIND_HOLD=$T/hold "$BIN" 127.0.0.1 "$PORT" data good >"$T/good.out" 2>&1 &
bpid=$!
i=0
while [ ! -e "$T/hold/bound" ] && [ $i -lt 100 ] && kill -0 $bpid 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
n0=$(wc -l <"$log")
kill -USR1 "$RDAXD_PID"
sleep 0.5
tail -n +$((n0 + 1)) "$log" >"$T/usr1"
touch "$T/hold/go"
wait $bpid
rc=$?
sed 's/^/    /' "$T/good.out"
[ $rc = 0 ] && ok "binding good: $(grep -c '^ok:' "$T/good.out") wire checks" ||
	not_ok "binding good (exit $rc)"
if grep -Eq 'stats session 0x[0-9a-f]+ alice as alice: 2 channels, 1 tree, 1 open; tcp [^;]* requests [1-9][0-9]* bytes_in [1-9][0-9]* bytes_out [1-9][0-9]*; tcp [^;]* requests [1-9][0-9]* bytes_in [1-9][0-9]* bytes_out [1-9]' "$T/usr1"; then
	ok "SIGUSR1: the session has two TCP channels, each with requests and file data both ways"
else
	not_ok "SIGUSR1 does not show the session's two channels"
	sed 's/^/    | /' "$T/usr1"
fi
grep -q 'channel 2 of session 0x[0-9a-f]* for alice (TCP)' "$log" &&
	ok "rdaxd logs the new channel" || not_ok "no log line for the new channel"

run_case refused
grep -q 'binding to session 0x[0-9a-f]* of alice refused: logged on as bob' "$log" &&
	ok "the log names who tried to bind as whom" ||
	not_ok "no log line for the bind as another user"
grep -q 'binding to session 0x[0-9a-f]* refused: unsigned' "$log" &&
	ok "the log says an unsigned bind was refused" ||
	not_ok "no log line for the unsigned bind"
run_case chanseq
n0=$(wc -l <"$log")
BIND_SHARE=dax run_case chanseq-dax
kill -USR1 "$RDAXD_PID"
sleep 0.5
tail -n +$((n0 + 1)) "$log" | grep -Eq 'tcp_zero_copy_bytes ([1-9][0-9]{4,})' &&
	ok "the DAX case's current WRITEs were received into the mapping" ||
	not_ok "no WRITE was received into the mapping (tcp_zero_copy_bytes)"
rdaxd_idle "$log" && ok "rdaxd holds no connection, session or open afterwards" ||
	not_ok "state left in rdaxd after the binding cases"
stop_rdaxd && ok "rdaxd exits cleanly" || not_ok "rdaxd exit status"

conf no
PMEM2_FORCE_GRANULARITY=CACHE_LINE start_rdaxd off --config "$T/smb.conf"
log=$T/off.log
run_case off
grep -q 'server multi channel support = no' "$log" &&
	ok "the log says why the bind was refused" || not_ok "no log line for the refusal"
stop_rdaxd || not_ok "rdaxd exit status (multichannel off)"
finish
