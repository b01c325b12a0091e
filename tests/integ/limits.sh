#!/bin/sh
# SPDX-License-Identifier: MIT
# Abuse limits of rdaxd, on the wire (tests/integ/abuse.c): max
# connections, sessions per connection, opens per session, tree connects
# per session, a credit flood, an oversized compound, slow clients
# (slowloris) against the receive timeout, and message sizes before
# authentication. Each limit answers with a status or closes only the
# abusing connection, logs a line that says which limit, and rdaxd keeps
# serving everyone else.
. "$(dirname "$0")/lib.sh"
A=$B/tests/abuse
[ -x "$A" ] || die "$A not built (make tests)"

TMO=3
share_dir "$T/pub" "$T/priv"
make_user "$T/passdb" alice 'limits pw'
cat >"$T/smb.conf" <<CONF
[global]
	passdb file = $T/passdb
	max connections = 8
	max sessions per connection = 4
	max open files = 8
	receive timeout = $TMO
[pub]
	path = $T/pub
	guest ok = yes
	read only = no
CONF
start_rdaxd srv --config "$T/smb.conf"
U="smb://127.0.0.1:$PORT"
log=$T/srv.log
# logged NAME PATTERN: the server's log has a line for it
logged() { check "$1 is logged" grep -Eq "$2" "$log"; }

check "max connections = 8: the 9th is refused, the others keep working" \
	"$A" 127.0.0.1 "$PORT" pub maxconn 8
sed 's/^/    /' "$T/check.out"
logged "the refused connection" 'refusing connection: max connections \(8\) reached'

check "max sessions per connection = 4: the 5th SESSION_SETUP is refused" \
	"$A" 127.0.0.1 "$PORT" pub sessions 4
sed 's/^/    /' "$T/check.out"
logged "the refused session" 'session refused: 4 sessions on the connection \(max sessions per connection\)'

check "max open files = 8: the 9th CREATE of a session is refused" \
	"$A" 127.0.0.1 "$PORT" pub opens 8
sed 's/^/    /' "$T/check.out"
logged "the refused open" 'open refused: 8 files open in session 0x[0-9a-f]+ \(max open files\)'

check "tree connects per session are bounded" "$A" 127.0.0.1 "$PORT" pub trees
sed 's/^/    /' "$T/check.out"
logged "the refused tree connect" 'tree connect refused: 1024 trees in session'

check "a credit flood (65535 asked each time) is granted at most 8192" \
	"$A" 127.0.0.1 "$PORT" pub credits
sed 's/^/    /' "$T/check.out"
logged "the MessageId outside the window" 'is outside the credit window'

check "a compound of 32 is served, of 33 closes the connection" \
	"$A" 127.0.0.1 "$PORT" pub compound 32
sed 's/^/    /' "$T/check.out"
logged "the oversized compound" 'compound of more than 32 requests'

# slowloris: four slow clients at once, while others are served
n0=$(wc -l <"$log")
for m in connect header body trickle; do
	"$A" 127.0.0.1 "$PORT" pub slow $m $TMO >"$T/slow.$m" 2>&1 &
	eval "pid_$m=\$!"
done
served=0 tries=0
while [ $tries -lt 6 ]; do
	$RDAX --guest -q ls "$U/pub" >/dev/null 2>&1 && served=$((served + 1))
	tries=$((tries + 1))
	sleep 0.4
done
check "others are served while slow clients hold connections ($served of $tries)" \
	test "$served" = "$tries"
for m in connect header body trickle; do
	eval "wait \$pid_$m"
	rc=$?
	check "slowloris '$m' is closed after the receive timeout ($TMO s)" test "$rc" = 0
	sed 's/^/    /' "$T/slow.$m"
done
check_output "each slow client's timeout is logged" "^4$" \
	sh -c "tail -n +$((n0 + 1)) '$log' | grep -c 'receive timeout:'"
tail -n +$((n0 + 1)) "$log" | grep 'receive timeout:' | sed 's/^/    /'

check "a logged-on client may idle, and send a message slowly but steadily" \
	"$A" 127.0.0.1 "$PORT" pub patient $TMO
sed 's/^/    /' "$T/check.out"

check "message sizes before and after authentication" "$A" 127.0.0.1 "$PORT" pub preauth
sed 's/^/    /' "$T/check.out"
logged "the oversized pre-auth message" 'dropping connection: Message too long'

check "rdaxd still serves" $RDAX --guest ls "$U/pub"
check "no connection, session or open is left (SIGUSR1)" rdaxd_idle "$log"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# no share lets guests in: a null session stays at the pre-auth size limit
cat >"$T/priv.conf" <<CONF
[global]
	passdb file = $T/passdb
[priv]
	path = $T/priv
	read only = no
CONF
start_rdaxd priv --config "$T/priv.conf"
U="smb://127.0.0.1:$PORT"
check "a null session where no share is guest ok keeps the 64 KiB limit" \
	"$A" 127.0.0.1 "$PORT" priv preauth-null
sed 's/^/    /' "$T/check.out"
check "... while a user session takes 1 MiB messages" \
	"$A" -u alice -A "$T/alice.pw" 127.0.0.1 "$PORT" priv preauth
sed 's/^/    /' "$T/check.out"
check "rdaxd (no guest share) still serves alice" \
	$RDAX --user alice --password-file "$T/alice.pw" ls "$U/priv"
check "SIGTERM stops it cleanly" stop_rdaxd

# the parameters are checked
for bad in "receive timeout = -1" "receive timeout = x" "max sessions per connection = 0" \
	"max sessions per connection = 70000"; do
	printf '[global]\n\t%s\n[x]\n\tpath = %s\n' "$bad" "$T/pub" >"$T/bad.conf"
	check_fails "'$bad' is refused" "$RDAXD" --config "$T/bad.conf" --guest --test-config
done
printf '[global]\n\treceive timeout = 0\n[x]\n\tpath = %s\n' "$T/pub" >"$T/ok.conf"
check "'receive timeout = 0' (off) is taken" "$RDAXD" --config "$T/ok.conf" --guest --test-config
finish
