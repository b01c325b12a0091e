#!/bin/sh
# SPDX-License-Identifier: MIT
# rdaxd under systemd: the notify protocol on a test NOTIFY_SOCKET (a
# python3 datagram listener): READY=1 at start, RELOADING=1 then READY=1
# on a reload (a failed one too), STOPPING=1 at SIGTERM; under journald
# (JOURNAL_STREAM names its stderr) the log has syslog priorities and no
# timestamps of its own; `systemd-analyze verify` passes on the unit.
. "$(dirname "$0")/lib.sh"
need python3
[ -x "$RDAXCTL" ] || die "$RDAXCTL not built (make)"
[ "$(id -u)" = 0 ] || skip "the control socket is root's: run as root"

share_dir "$T/share"
printf '[global]\n\tmap to guest = bad user\n[data]\n\tpath = %s/share\n\tguest ok = yes\n' "$T" >"$T/smb.conf"

python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".bound", "w").close()
with open(sys.argv[2], "a") as f:
    while True:
        m = s.recv(4096).decode()
        f.write(m.replace("\n", " | ") + "\n")
        f.flush()
' "$T/notify" "$T/notify.log" &
pids="$pids $!"
i=0
while [ ! -e "$T/notify.bound" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
wait_for() {	# FILE PATTERN
	i=0
	until grep -Eq "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}

NOTIFY_SOCKET=$T/notify start_rdaxd srv --config "$T/smb.conf"
check_output "READY=1 with a STATUS and MAINPID" "READY=1 \\| STATUS=serving 1 share.*MAINPID=$RDAXD_PID" \
	sh -c "sleep 0.2; cat '$T/notify.log'"
check "rdaxctl reload" "$RDAXCTL" -s "$RDAXD_CTL" reload
check_output "RELOADING=1 (with MONOTONIC_USEC), then READY=1" \
	'^RELOADING=1 \| STATUS=reloading .*MONOTONIC_USEC=[0-9]+' sh -c "cat '$T/notify.log'"
check "READY=1 after the reload" wait_for "$T/notify.log" '^READY=1 \| STATUS=serving$'
echo "[broken" >>"$T/smb.conf"
check_fails "a broken file fails the reload" "$RDAXCTL" -s "$RDAXD_CTL" reload
check "READY=1 after a failed reload, saying it failed" \
	wait_for "$T/notify.log" '^READY=1 \| STATUS=reload failed'
kill -TERM "$RDAXD_PID"
wait "$RDAXD_PID"
pids=$(echo "$pids" | sed "s/ $RDAXD_PID//")
check "STOPPING=1 at SIGTERM" wait_for "$T/notify.log" '^STOPPING=1'
sed 's/^/    /' "$T/notify.log"

# journald: JOURNAL_STREAM is stderr's device and inode
: >"$T/journal.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/journal.log") \
	"$RDAXD" --listen "tcp://127.0.0.1:$(free_port)" --share "data=$T/share" --guest \
	--control "$T/j.ctl" 2>>"$T/journal.log" &
jp=$!
pids="$pids $jp"
check "rdaxd starts with JOURNAL_STREAM set" wait_for "$T/journal.log" 'ready'
check_output "under journald: '<5>rdaxd[notice]: ...', no timestamp" '^<5>rdaxd\[notice\]: rdaxd .* ready' \
	cat "$T/journal.log"
check_fails "under journald: no line starts with a time" \
	grep -E '^[0-9]{2}:[0-9]{2}:[0-9]{2}' "$T/journal.log"
kill -TERM $jp
wait $jp

# the unit
if command -v systemd-analyze >/dev/null 2>&1; then
	sed "s|@sbindir@|$B|g" "$top/tools/rdaxd.service.in" >"$T/rdaxd.service"
	check "systemd-analyze verify rdaxd.service" systemd-analyze verify --man=no "$T/rdaxd.service"
	check_output "the unit: Type=notify, LimitMEMLOCK=infinity, ExecReload" \
		'^Type=notify' grep -E '^(Type=notify|LimitMEMLOCK=infinity|ExecReload=.*rdaxctl reload)$' \
		"$T/rdaxd.service"
else
	skip_case "systemd-analyze verify" "systemd-analyze is not installed"
fi
finish
