#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad input to caching and durable handles (tests/integ/caching.c on the
# wire): acknowledgements for breaks never sent and for leases not held,
# durable reconnects with a wrong CreateGuid, a forged lease key or by
# another user, a v1 reconnect as Linux cifs.ko sends it (with a QFid),
# a disconnected durable open in the way of a new open by its share mode,
# and a flood of opens that each wait for a break, bounded per connection.
# rdaxd keeps serving, and afterwards holds nothing: no connection,
# session, open, lease or disconnected durable open. A share with
# "oplocks = no" grants neither leases nor oplocks, as in Samba.
. "$(dirname "$0")/lib.sh"
BIN=$B/tests/caching
[ -x "$BIN" ] || die "$BIN not built (make tests)"

make_user "$T/passdb" alice 'cache pw alice'
make_user "$T/passdb" bob 'cache pw bob'
share_dir "$T/share"
chmod 0777 "$T/share"
export CACHE_USER=alice CACHE_PW='cache pw alice' CACHE_USER2=bob CACHE_PW2='cache pw bob'
share_dir "$T/nolease"
cat >"$T/srv.conf" <<CONF
[global]
	passdb file = $T/passdb
[data]
	path = $T/share
	read only = no
[nolease]
	path = $T/nolease
	read only = no
	oplocks = no
CONF
start_rdaxd srv -v --config "$T/srv.conf"
log=$T/srv.log

"$BIN" 127.0.0.1 "$PORT" nolease nolease >"$T/nolease.out" 2>&1
rc=$?
sed 's/^/    /' "$T/nolease.out"
[ $rc = 0 ] && ok "oplocks = no on a share: no lease, no oplock there" ||
	not_ok "a share with oplocks = no (exit $rc)"

for c in acks reconnect cifs purge flood unlink; do
	"$BIN" 127.0.0.1 "$PORT" data "$c" >"$T/$c.out" 2>&1
	rc=$?
	sed 's/^/    /' "$T/$c.out"
	[ $rc = 0 ] && ok "caching $c: $(grep -c '^ok:' "$T/$c.out") wire checks" ||
		not_ok "caching $c (exit $rc)"
	check "rdaxd still serves a new client after '$c'" $RDAX --user alice \
		--password-file "$T/alice.pw" ls "smb://127.0.0.1:$PORT/data"
done
grep -q 'requests waiting already: STATUS_INSUFFICIENT_RESOURCES' "$log" &&
	ok "the log says why opens of the flood were refused" ||
	not_ok "no log line for the refused opens"
[ "$(grep -c 'durable open .* reconnected' "$log")" = 2 ] &&
	ok "the log names the two durable reconnects" || not_ok "no log lines for the reconnects"
rdaxd_idle "$log" && ok "no connection, session or open is left" ||
	not_ok "state left in rdaxd"
n0=$(wc -l <"$log")
kill -USR1 "$RDAXD_PID"
sleep 0.5
tail -n +$((n0 + 1)) "$log" | grep 'stats caching' >"$T/cst"
grep -q 'leases 0 .* durable_disconnected 0 ' "$T/cst" &&
	ok "SIGUSR1: no lease and no disconnected durable open is left" ||
	{ not_ok "SIGUSR1 shows caching state left"; sed 's/^/    | /' "$T/cst"; }
grep -q 'durable_reconnects 2 ' "$T/cst" && ok "SIGUSR1 counts the two durable reconnects" ||
	not_ok "SIGUSR1 does not count the reconnects"
check "SIGTERM stops rdaxd cleanly" stop_rdaxd

# the calibration: Samba smbd frees the name by the delete's CLOSE too
if [ "$(id -u)" = 0 ] && command -v smbd >/dev/null; then
	. "$top/tools/lib/smbd.sh"
	if scratch_smbd "$T/smbd" data; then
		pids="$pids $SMBD_PID"
		chmod 0777 "$T/smbd/data"
		CACHE_USER=root CACHE_PW=$(cat "$T/smbd/root.pw") \
			"$BIN" 127.0.0.1 "$SMBD_PORT" data unlink >"$T/smbd-unlink.out" 2>&1
		rc=$?
		sed 's/^/    /' "$T/smbd-unlink.out"
		[ $rc = 0 ] && ok "caching unlink against Samba smbd (the calibration)" ||
			not_ok "caching unlink against Samba smbd (exit $rc)"
	else
		not_ok "smbd did not start"
	fi
else
	skip_case smbd "smbd (tools/deps.sh installs samba) must run as root"
fi
finish
